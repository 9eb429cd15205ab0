//! The texts of the mails, rendered from the handlebars templates in
//! `templates/mail/` (strict mode: a missing value is an error, not an empty
//! string; no HTML escaping). One template per kind of mail.
//!
//! Every rendered text is made fit for the mail readers of the
//! announcement's world ([`mail_text`]): 7-bit ASCII (curly quotes, dashes,
//! gcc's `‘’` quotes and accented letters transliterated), no trailing
//! blanks, and no line longer than [`MAIL_WIDTH`] (72) columns: a longer
//! line is wrapped at blanks; a paragraph continues at the margin, an
//! indented line (a gcc message, a failure reason, a table row) continues
//! indented deeper, so quoted-printable stays the exception. The one text passed on unchanged is the `forward` to the
//! organizer: a stranger's mail, shown as it came.
//!
//! This module only renders text; it decides nothing about what a mail says.

use std::sync::OnceLock;

use handlebars::Handlebars;
use serde::Serialize;

/// Every mail template: (name, text).
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "check_report",
        include_str!("../../templates/compile_report.hbs"),
    ),
    (
        "registration_accepted",
        include_str!("../../templates/mail/registration_accepted.hbs"),
    ),
    (
        "automatic_note",
        include_str!("../../templates/mail/automatic_note.hbs"),
    ),
    (
        "kit_refused",
        include_str!("../../templates/mail/kit_refused.hbs"),
    ),
    (
        "registration_accepted_bot",
        include_str!("../../templates/mail/registration_accepted_bot.hbs"),
    ),
    (
        "registration_rejected",
        include_str!("../../templates/mail/registration_rejected.hbs"),
    ),
    (
        "registration_exists",
        include_str!("../../templates/mail/registration_exists.hbs"),
    ),
    (
        "confirm_address",
        include_str!("../../templates/mail/confirm_address.hbs"),
    ),
    (
        "registration_confirm_sent",
        include_str!("../../templates/mail/registration_confirm_sent.hbs"),
    ),
    (
        "registration_confirm_refused",
        include_str!("../../templates/mail/registration_confirm_refused.hbs"),
    ),
    (
        "confirm_unknown",
        include_str!("../../templates/mail/confirm_unknown.hbs"),
    ),
    (
        "compile_report",
        include_str!("../../templates/mail/compile_report.hbs"),
    ),
    (
        "bot_results",
        include_str!("../../templates/mail/bot_results.hbs"),
    ),
    (
        "bot_summary",
        include_str!("../../templates/mail/bot_summary.hbs"),
    ),
    (
        "bot_transcripts",
        include_str!("../../templates/mail/bot_transcripts.hbs"),
    ),
    (
        "compile_refused",
        include_str!("../../templates/mail/compile_refused.hbs"),
    ),
    (
        "submission_refused",
        include_str!("../../templates/mail/submission_refused.hbs"),
    ),
    (
        "software",
        include_str!("../../templates/mail/software.hbs"),
    ),
    ("help", include_str!("../../templates/mail/help.hbs")),
    (
        "too_large",
        include_str!("../../templates/mail/too_large.hbs"),
    ),
    (
        "organizer_digest",
        include_str!("../../templates/mail/organizer_digest.hbs"),
    ),
    ("lap", include_str!("../../templates/mail/lap.hbs")),
    ("lgp", include_str!("../../templates/mail/lgp.hbs")),
    ("dgp", include_str!("../../templates/mail/dgp.hbs")),
    ("grp", include_str!("../../templates/mail/grp.hbs")),
    ("grg", include_str!("../../templates/mail/grg.hbs")),
    ("grr", include_str!("../../templates/mail/grr.hbs")),
    ("rsm", include_str!("../../templates/mail/rsm.hbs")),
    (
        "rsm_pause",
        include_str!("../../templates/mail/rsm_pause.hbs"),
    ),
    (
        "rsm_accepted",
        include_str!("../../templates/mail/rsm_accepted.hbs"),
    ),
    (
        "disqualified",
        include_str!("../../templates/mail/disqualified.hbs"),
    ),
    ("final", include_str!("../../templates/mail/final.hbs")),
    (
        "kit_rules",
        include_str!("../../templates/kit/RULES.txt.hbs"),
    ),
    (
        "kit_rules_ultimatum",
        include_str!("../../templates/kit/rules_ultimatum.txt.hbs"),
    ),
    (
        "kit_rules_flooding",
        include_str!("../../templates/kit/rules_flooding.txt.hbs"),
    ),
    (
        "kit_rules_footsteps",
        include_str!("../../templates/kit/rules_footsteps.txt.hbs"),
    ),
    (
        "kit_rules_morabaraba",
        include_str!("../../templates/kit/rules_morabaraba.txt.hbs"),
    ),
    (
        "kit_bot_readme",
        include_str!("../../templates/kit/bot_README.txt.hbs"),
    ),
    (
        "no_strategy",
        include_str!("../../templates/mail/no_strategy.hbs"),
    ),
    (
        "organizer_start",
        include_str!("../../templates/mail/organizer_start.hbs"),
    ),
    ("refused", include_str!("../../templates/mail/refused.hbs")),
    ("status", include_str!("../../templates/mail/status.hbs")),
    (
        "preference",
        include_str!("../../templates/mail/preference.hbs"),
    ),
    ("forward", include_str!("../../templates/mail/forward.hbs")),
    (
        "auth_reset",
        include_str!("../../templates/mail/auth_reset.hbs"),
    ),
    (
        "address_changed",
        include_str!("../../templates/mail/address_changed.hbs"),
    ),
    (
        "withdrawn",
        include_str!("../../templates/mail/withdrawn.hbs"),
    ),
    (
        "registration_lapsed",
        include_str!("../../templates/mail/registration_lapsed.hbs"),
    ),
];

/// A handlebars registry with the texts' settings and helpers, no
/// templates.
fn bare_registry() -> Handlebars<'static> {
    let mut h = Handlebars::new();
    h.set_strict_mode(true);
    h.register_escape_fn(handlebars::no_escape);
    h.register_helper("fill", Box::new(Fill));
    h
}

/// Compiles the mail templates now (about 20 ms, once per process), so
/// that the first reply after a start does not wait for it: `serve` calls
/// it before its first cycle. Any later call costs nothing.
pub fn prepare() {
    registry();
}

fn registry() -> &'static Handlebars<'static> {
    static REG: OnceLock<Handlebars<'static>> = OnceLock::new();
    REG.get_or_init(|| {
        let mut h = bare_registry();
        for (name, text) in TEMPLATES {
            h.register_template_string(name, *text)
                .unwrap_or_else(|e| panic!("template {name}: {e}"));
        }
        h
    })
}

/// The block helper `{{#fill}}…{{/fill}}` ([`Fill`]): the paragraphs inside (split at
/// blank lines) each on one line, so that [`mail_text`] breaks them at 72
/// columns wherever the values put in make them longer or shorter. A
/// paragraph with a value of unknown length is written inside it, never
/// broken by hand.
struct Fill;

impl handlebars::HelperDef for Fill {
    fn call<'reg: 'rc, 'rc>(
        &self,
        h: &handlebars::Helper<'rc>,
        r: &'reg Handlebars<'reg>,
        ctx: &'rc handlebars::Context,
        rc: &mut handlebars::RenderContext<'reg, 'rc>,
        out: &mut dyn handlebars::Output,
    ) -> handlebars::HelperResult {
        use handlebars::Renderable;
        let Some(t) = h.template() else {
            return Ok(());
        };
        let mut inner = handlebars::StringOutput::new();
        t.render(r, ctx, rc, &mut inner)?;
        let text = inner
            .into_string()
            .map_err(|e| handlebars::RenderErrorReason::Other(e.to_string()))?;
        out.write(&filled(&text))?;
        Ok(())
    }
}

/// `text` with each paragraph's lines joined by one blank (see [`fill`]);
/// the line breaks at its start and end are kept.
fn filled(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let lead = text.len() - text.trim_start_matches('\n').len();
    out.push_str(&text[..lead]);
    let body = text.trim_matches('\n');
    let paragraphs: Vec<String> = body
        .split("\n\n")
        .map(|p| {
            p.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    out.push_str(&paragraphs.join("\n\n"));
    let trail = text.len() - text.trim_end_matches('\n').len();
    if trail > 0 && !body.is_empty() {
        out.push_str(&text[text.len() - trail..]);
    }
    out
}

/// Templates whose text is passed on as it is (see the module documentation).
const VERBATIM: &[&str] = &["forward"];

/// Renders mail template `name` with `data`, as [`mail_text`].
pub fn render<T: Serialize>(name: &str, data: &T) -> Result<String, handlebars::RenderError> {
    let text = registry().render(name, data)?;
    Ok(if VERBATIM.contains(&name) {
        text
    } else {
        mail_text(&text)
    })
}

/// [`render`] of data already in JSON's form (a contest's mails build
/// theirs with `json!`): the value becomes the template's context as it
/// is, not serialized into a copy of itself first (a GRG's table is tens
/// of kB).
pub fn render_value(
    name: &str,
    data: serde_json::Value,
) -> Result<String, handlebars::RenderError> {
    let text = registry().render_with_context(name, &handlebars::Context::from(data))?;
    Ok(if VERBATIM.contains(&name) {
        text
    } else {
        mail_text(&text)
    })
}

/// Renders the template `text` itself (a discipline's own, outside the
/// product's templates) with `data`, as [`render`] renders a named one.
pub fn render_text<T: Serialize>(text: &str, data: &T) -> Result<String, handlebars::RenderError> {
    Ok(mail_text(&bare_registry().render_template(text, data)?))
}

/// No line of a mail the server writes is wider than this.
pub const MAIL_WIDTH: usize = 72;

/// A continuation line is indented this much more than the line it continues.
const CONTINUATION_INDENT: usize = 4;

/// `text` as 7-bit ASCII, without trailing blanks, every line at most
/// [`MAIL_WIDTH`] columns (tabs expanded). Idempotent; linear in the text.
pub fn mail_text(text: &str) -> String {
    let ascii = ascii_of(text);
    let mut out = String::with_capacity(ascii.len() + ascii.len() / 16);
    for (i, line) in ascii.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        wrap_line(&expand_tabs(line), MAIL_WIDTH, &mut out);
    }
    out
}

/// Transliterates `text` into printable 7-bit ASCII (newlines and tabs
/// kept): typographic punctuation into its typewriter form, German letters
/// the German way (`ä` as `ae`), everything else by [`deunicode`], control
/// characters as `?`.
pub fn to_ascii(text: &str) -> String {
    ascii_of(text).into_owned()
}

/// [`to_ascii`], borrowing a text that is printable ASCII already (every
/// text the contest renders from its own tables): not copied only to be
/// read.
fn ascii_of(text: &str) -> std::borrow::Cow<'_, str> {
    let printable = |c: char| c == '\n' || c == '\t' || (' '..='~').contains(&c);
    if text
        .bytes()
        .all(|b| b == b'\n' || b == b'\t' || (b' '..=b'~').contains(&b))
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if printable(c) {
            out.push(c);
            continue;
        }
        let s: &str = match c {
            '\r' => "",
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{b4}' => "'",
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{ab}'
            | '\u{bb}' => "\"",
            '\u{2014}' | '\u{2015}' => "--",
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2212}' => "-",
            '\u{2026}' => "...",
            '\u{a0}' | '\u{2002}'..='\u{200a}' | '\u{202f}' => " ",
            '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{feff}' | '\u{ad}' => "",
            '\u{d7}' => "x",
            '\u{2264}' => "<=",
            '\u{2265}' => ">=",
            '\u{2260}' => "!=",
            '\u{2192}' => "->",
            '\u{2190}' => "<-",
            '\u{b7}' | '\u{2022}' => "*",
            '\u{e4}' => "ae",
            '\u{f6}' => "oe",
            '\u{fc}' => "ue",
            '\u{c4}' => "Ae",
            '\u{d6}' => "Oe",
            '\u{dc}' => "Ue",
            '\u{df}' => "ss",
            c if c.is_control() => "?",
            c => deunicode::deunicode_char(c)
                .filter(|s| s.chars().all(|c| (' '..='~').contains(&c)))
                .unwrap_or("?"),
        };
        out.push_str(s);
    }
    std::borrow::Cow::Owned(out)
}

/// Tabs to blanks, to the next multiple of 8 columns.
fn expand_tabs(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\t') {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if c == '\t' {
            let n = 8 - out.len() % 8;
            out.push_str(&" ".repeat(n));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Appends `line` (ASCII, no newline) to `out` without trailing blanks,
/// wrapped at `width`: breaks at blanks where possible (a word wider than
/// the room is cut). A paragraph line (at the margin) continues at the
/// margin; an indented line (an item, a table row, a gcc message) continues
/// [`CONTINUATION_INDENT`] deeper than its own indentation (at most half
/// the width). The signature separator `-- ` keeps its blank.
fn wrap_line(line: &str, width: usize, out: &mut String) {
    if line == "-- " {
        out.push_str(line);
        return;
    }
    let line = line.trim_end();
    if line.len() <= width {
        out.push_str(line);
        return;
    }
    let indent = line.len() - line.trim_start().len();
    let cont = if indent == 0 {
        0
    } else {
        (indent + CONTINUATION_INDENT).min(width / 2)
    };
    let mut rest = line;
    let mut first = true;
    while !rest.is_empty() {
        let lead = if first { 0 } else { cont };
        let room = width - lead;
        if !first {
            out.push('\n');
            out.push_str(&" ".repeat(lead));
        }
        if rest.len() <= room {
            out.push_str(rest);
            break;
        }
        // The last blank within the room (after the indentation), else a cut.
        let head = &rest.as_bytes()[..=room];
        let start = if first { indent } else { 0 };
        let cut = head[start..]
            .iter()
            .rposition(|&b| b == b' ')
            .map(|p| p + start)
            .filter(|&p| rest[..p].trim_end().len() > start);
        let (piece, next) = match cut {
            Some(p) => (rest[..p].trim_end(), rest[p..].trim_start()),
            None => (&rest[..room], &rest[room..]),
        };
        out.push_str(piece);
        rest = next;
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_paragraph_is_broken_at_the_margin_not_where_the_template_broke_it() {
        let data = serde_json::json!({
            "contest_name": "freiesMagazin flooding island demo contest",
            "discipline": "the flooding island",
            "bots": true,
            "files": [{"name": "README"}],
        });
        let text = render("software", &data).unwrap();
        assert!(
            text.starts_with(
                "Here is the participant kit of the freiesMagazin flooding island demo\n\
                 contest (the flooding island), as attachments:\n\n  README\n"
            ),
            "{text}"
        );
        assert_eq!(filled("\na\n b\n\nc\nd\n"), "\na b\n\nc d\n");
        assert_eq!(filled(""), "");
    }

    #[test]
    fn gcc_quotes_dashes_and_umlauts_become_ascii() {
        assert_eq!(
            to_ascii(
                "error: \u{2018}x\u{2019} undeclared \u{2014} \u{201c}M\u{fc}ller\u{201d}\u{2026}"
            ),
            "error: 'x' undeclared -- \"Mueller\"..."
        );
        assert_eq!(
            to_ascii("Universit\u{e9} Paris, \u{41c}\u{43e}\u{441}\u{43a}\u{432}\u{430}"),
            "Universite Paris, Moskva"
        );
        assert_eq!(to_ascii("a\u{7}b\r\n"), "a?b\n");
        assert!(to_ascii("\u{1f600}\u{4e2d}").is_ascii());
    }

    #[test]
    fn long_lines_wrap_at_blanks_with_an_indented_continuation() {
        let long = format!("  - line 3: {}", "word ".repeat(40));
        let text = mail_text(&format!("{long}\nshort line   \n"));
        let lines: Vec<&str> = text.split('\n').collect();
        assert!(lines.iter().all(|l| l.len() <= MAIL_WIDTH), "{text}");
        assert!(lines[0].starts_with("  - line 3: word"));
        assert!(lines[1].starts_with("      word"), "{text}");
        assert!(text.contains("\nshort line\n"));
        // A paragraph continues at the margin.
        let prose = mail_text(&"one sentence ".repeat(12));
        let second = prose.split('\n').nth(1).unwrap();
        assert!(!second.is_empty() && !second.starts_with(' '), "{prose}");
        assert_eq!(text.matches("word").count(), 40);
        // Idempotent.
        assert_eq!(mail_text(&text), text);
    }

    #[test]
    fn a_word_wider_than_a_line_is_cut() {
        let text = mail_text(&"x".repeat(200));
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0].len(), MAIL_WIDTH);
        assert!(lines.iter().all(|l| l.len() <= MAIL_WIDTH));
        assert_eq!(text.replace(['\n', ' '], ""), "x".repeat(200));
    }

    #[test]
    fn tabs_expand_and_the_signature_separator_keeps_its_blank() {
        assert_eq!(mail_text("a\tb\n-- \nme"), "a       b\n-- \nme");
    }
}
