//! Small helpers for drawing static SVG by hand (the game pictures of the
//! bot disciplines): escaping, numbers without float noise, the colours and
//! marks of the two seats, the legend naming the bots, thinning of long
//! strips and the strip of small pictures itself.
//!
//! What it does not do: lay out a whole picture, read a transcript or know
//! any game's rules (that is each discipline's `picture` module), and it
//! emits no script, no style sheet and no reference to anything outside the
//! fragment. Everything here is deterministic: the same input gives the same
//! bytes.

use std::fmt::Write;

/// Text for HTML and SVG (XML), the crate's one escape: `&`, `<`, `>`,
/// `"`, `'`, `` ` `` and `=` as character references, exactly what
/// handlebars' default escape function escapes (the site's templates use
/// this function, registered as theirs, so pages written directly equal
/// the templates' output). Safe in text and in quoted attribute values of
/// both HTML and XML (numeric references only, besides XML's own four).
/// Every character that [`hides`] text is written as its visible escape
/// (as [`visible`] writes it): whatever a bot printed, a page shows it
/// and never hides or reorders what stands beside it. So are U+FFFE and
/// U+FFFF, the two characters of a `&str` besides C0 controls that XML
/// forbids ([`xml_forbids`]): an SVG with one of them is not XML, and a
/// browser shows none of it.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    escape_into(&mut out, s);
    out
}

/// [`escape`] appended to `out`.
pub fn escape_into(out: &mut String, s: &str) {
    shown_into(out, s, ShownIn::Html);
}

/// Whether `c`, shown as it is, could hide or reorder text: a control
/// character (C0 but tab and line feed, DEL, C1: U+0080 to U+009F; a
/// carriage return too, unless a line feed follows it, which
/// [`visible_into`] and [`escape_into`] leave as they are), a
/// bidirectional mark, embedding, override or isolate (U+061C, U+200E,
/// U+200F, U+202A to U+202E, U+2066 to U+2069), a character that is
/// there without showing (zero-width space U+200B, word joiner U+2060,
/// byte order mark U+FEFF), or a line or paragraph separator (U+2028,
/// U+2029: a line break where plain text has none). The zero-width
/// joiner and non-joiner stay (several scripts and emoji need them).
pub fn hides(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// Whether XML 1.0 forbids `c` and [`hides`] does not name it: U+FFFE
/// and U+FFFF (surrogates cannot be in a `&str`).
pub fn xml_forbids(c: char) -> bool {
    matches!(c, '\u{fffe}' | '\u{ffff}')
}

/// Text a bot wrote, for people (a page, a plain-text mail, a report):
/// every character that [`hides`] text written as its Rust escape
/// (`\u{202e}`, `\u{1b}`, `\r`), the rest as it is. The crate's one such
/// function: [`escape`] does the same for HTML.
pub fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(hides) {
        let mut out = String::with_capacity(s.len() + 16);
        visible_into(&mut out, s);
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// [`visible`] appended to `out`.
pub fn visible_into(out: &mut String, s: &str) {
    shown_into(out, s, ShownIn::PlainText);
}

/// What a byte of a text may need when shown: nothing (0), an HTML
/// reference (1: `&<>"'` `` ` `` `=`), or a look at the character it
/// starts (2: a C0 control but tab and line feed, DEL, and the lead bytes
/// of the characters [`hides`] names beyond ASCII: 0xC2 for C1, 0xD8 for
/// U+061C, 0xE2 for the marks, isolates, separators and U+200B, U+2060;
/// 0xEF for U+FEFF and those [`xml_forbids`]).
const BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = 2;
        b += 1;
    }
    t[b'\t' as usize] = 0;
    t[b'\n' as usize] = 0;
    t[0x7f] = 2;
    t[0xc2] = 2;
    t[0xd8] = 2;
    t[0xe2] = 2;
    t[0xef] = 2;
    let html = b"&<>\"'`=";
    let mut i = 0;
    while i < html.len() {
        t[html[i] as usize] = 1;
        i += 1;
    }
    t
};

/// Where a text is shown: in HTML (its special characters written as
/// references, and what XML forbids escaped too) or as plain text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ShownIn {
    Html,
    PlainText,
}

/// [`escape_into`] (in HTML) or [`visible_into`]: one pass over the bytes,
/// a table look-up each ([`BYTE_CLASS`]); a lead byte it names is judged
/// by the bytes after it ([`shown_len`]), and only a character to escape
/// is decoded.
fn shown_into(out: &mut String, s: &str, shown_in: ShownIn) {
    let bytes = s.as_bytes();
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match BYTE_CLASS[b as usize] {
            0 => {}
            1 => {
                if shown_in == ShownIn::Html {
                    let rep = match b {
                        b'<' => "&lt;",
                        b'>' => "&gt;",
                        b'"' => "&quot;",
                        b'&' => "&amp;",
                        b'\'' => "&#x27;",
                        b'`' => "&#x60;",
                        _ => "&#x3D;",
                    };
                    // Every escaped character is ASCII: `i` is a character
                    // boundary.
                    out.push_str(&s[last..i]);
                    out.push_str(rep);
                    last = i + 1;
                }
            }
            _ => {
                let n = shown_len(bytes, i, shown_in);
                if n > 0 {
                    // `i` is a character boundary: the byte is ASCII or a
                    // lead byte (continuation bytes are 0x80 to 0xBF).
                    let c = s[i..].chars().next().expect("a character");
                    out.push_str(&s[last..i]);
                    out.extend(c.escape_default());
                    i += n;
                    last = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push_str(&s[last..]);
}

/// The length of the character at `bytes[i]` (a byte of class 2 in
/// [`BYTE_CLASS`]) if it is to be escaped ([`hides`], or in HTML
/// [`xml_forbids`]), else 0: judged by its UTF-8 bytes, without decoding
/// it (`the_byte_class_escape_equals_the_escape_character_by_character`).
fn shown_len(bytes: &[u8], i: usize, shown_in: ShownIn) -> usize {
    let at = |k: usize| bytes.get(i + k).copied().unwrap_or(0);
    match bytes[i] {
        // C0 but tab and line feed, DEL; a carriage return before a line
        // feed stays.
        b @ 0x00..=0x7f => usize::from(!(b == b'\r' && at(1) == b'\n')),
        // C1: U+0080 to U+009F.
        0xc2 => 2 * usize::from((0x80..=0x9f).contains(&at(1))),
        // U+061C.
        0xd8 => 2 * usize::from(at(1) == 0x9c),
        // U+200B, U+200E, U+200F, U+2028 to U+202E, U+2060, U+2066 to
        // U+2069.
        0xe2 => match (at(1), at(2)) {
            (0x80, 0x8b | 0x8e | 0x8f | 0xa8..=0xae) | (0x81, 0xa0 | 0xa6..=0xa9) => 3,
            _ => 0,
        },
        // 0xEF: U+FEFF; in HTML U+FFFE, U+FFFF.
        _ => match (at(1), at(2)) {
            (0xbb, 0xbf) => 3,
            (0xbf, 0xbe | 0xbf) => 3 * usize::from(shown_in == ShownIn::Html),
            _ => 0,
        },
    }
}

/// The colour of each seat, the same in every picture and as in the site's
/// plots (Okabe–Ito blue for seat 0, vermillion for seat 1).
pub const SEAT_COLOURS: [&str; 2] = ["#0072B2", "#D55E00"];

/// The colour of `seat` (seats beyond 1 get grey).
pub fn seat_colour(seat: usize) -> &'static str {
    SEAT_COLOURS.get(seat).copied().unwrap_or("#777777")
}

/// A number for SVG: at most two decimals, no trailing zeros, no `-0`, no
/// exponent; anything not finite is `0`.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "0".into();
    }
    let hundredths = (x.clamp(-1e12, 1e12) * 100.0).round() as i64;
    let sign = if hundredths < 0 { "-" } else { "" };
    let a = hundredths.unsigned_abs();
    let (int, frac) = (a / 100, a % 100);
    if frac == 0 {
        format!("{sign}{int}")
    } else if frac % 10 == 0 {
        format!("{sign}{int}.{}", frac / 10)
    } else {
        format!("{sign}{int}.{frac:02}")
    }
}

/// A whole number with thousands separated by commas: `2,500,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// At most `max_chars` characters of `text`, with `…` when cut (not
/// escaped).
pub fn short(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// A line a bot printed, for display: cut to `max_chars`, control
/// characters shown as `?`, escaped.
pub fn quote_line(line: &str, max_chars: usize) -> String {
    let visible: String = line
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    escape(&short(&visible, max_chars))
}

/// The name of `seat` for display, escaped and cut to `max_chars`;
/// `player N` (from 1, as every text numbers players) when the name is
/// missing or empty.
pub fn seat_name(names: &[String], seat: usize, max_chars: usize) -> String {
    match names.get(seat).filter(|n| !n.trim().is_empty()) {
        Some(n) => quote_line(n, max_chars),
        None => crate::words::player(seat),
    }
}

/// The mark of `seat` in charts and on boards: a circle for seat 0, a
/// square for seat 1 (so that colour is never the only cue), centred on
/// (`cx`, `cy`) with "radius" `r`. `fill` `None` draws it hollow (white).
pub fn seat_mark(seat: usize, cx: f64, cy: f64, r: f64, fill: bool) -> String {
    let colour = seat_colour(seat);
    let inside = if fill { colour } else { "#fff" };
    if seat == 0 {
        format!(
            r#"<circle cx="{}" cy="{}" r="{}" fill="{inside}" stroke="{colour}"/>"#,
            num(cx),
            num(cy),
            num(r)
        )
    } else {
        let side = 1.8 * r;
        format!(
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{inside}" stroke="{colour}"/>"#,
            num(cx - side / 2.0),
            num(cy - side / 2.0),
            num(side),
            num(side)
        )
    }
}

/// A small inline swatch (14×14) with `body` drawn in a 14×14 box, for
/// legends.
pub fn swatch(body: &str) -> String {
    format!(
        r#"<svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true" style="vertical-align:middle">{body}</svg>"#
    )
}

/// The legend naming the bots of `seats` seats with their colour and mark,
/// followed by `extra` entries (a swatch and a label, both HTML).
pub fn legend(names: &[String], seats: usize, extra: &[(String, String)]) -> String {
    let mut out = String::from(r#"<p class="legend">"#);
    let mut first = true;
    for seat in 0..seats {
        if !first {
            out.push_str(" &nbsp; ");
        }
        first = false;
        // One bot (the flooding island) needs no number.
        let number = if seats > 1 {
            format!(" ({})", crate::words::player(seat))
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "{} {}{number}",
            swatch(&seat_mark(seat, 7.0, 7.0, 5.0, true)),
            seat_name(names, seat, 60)
        );
    }
    for (mark, label) in extra {
        if !first {
            out.push_str(" &nbsp; ");
        }
        first = false;
        let _ = write!(out, "{} {label}", swatch(mark));
    }
    out.push_str("</p>\n");
    out
}

/// The opening tag of an SVG picture with an explicit size, a view box and
/// a title, e.g. `svg_open("final", 400, 300, "0 0 400 300", "…")`. The
/// title is HTML text: whatever in it comes from a bot or a name must be
/// escaped by the caller (e.g. through [`seat_name`]). An empty `id` gives
/// none.
pub fn svg_open(id: &str, width: u32, height: u32, view_box: &str, title: &str) -> String {
    let id = if id.is_empty() {
        String::new()
    } else {
        format!(r#" id="{}""#, escape(id))
    };
    format!(
        r#"<svg{id} xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="{view_box}" role="img"><title>{title}</title>"#
    )
}

/// The step `k ≥ 1` so that every `k`-th of `n` items makes at most `max`
/// items (`max` at least 1).
pub fn thin_step(n: usize, max: usize) -> usize {
    let max = max.max(1);
    n.div_ceil(max).max(1)
}

/// Whether the items of a strip alternate between two seats (a board
/// game's moves): then a thinned strip takes an odd step, so that it shows
/// both players' moves, never only one's (issue 36: Morabaraba's strip
/// showed "every 2nd move", always seat 0's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Items {
    /// Rounds or turns: any step.
    Plain,
    /// Moves taken in turn by two seats.
    Alternating,
}

/// [`thin_step`], odd for [`Items::Alternating`] (when it thins at all).
pub fn thin_step_of(n: usize, max: usize, items: Items) -> usize {
    let k = thin_step(n, max);
    if items == Items::Alternating && k > 1 && k.is_multiple_of(2) {
        k + 1
    } else {
        k
    }
}

/// The indices of `n` items to show when at most `max` may be shown: every
/// `k`-th ([`thin_step`]) from the first, and always the last (so at most
/// `max + 1`).
pub fn shown(n: usize, max: usize) -> Vec<usize> {
    shown_of(n, max, Items::Plain)
}

/// [`shown`] for `items` ([`thin_step_of`]).
pub fn shown_of(n: usize, max: usize, items: Items) -> Vec<usize> {
    let k = thin_step_of(n, max, items);
    let mut out: Vec<usize> = (0..n).step_by(k).collect();
    if n > 0 && out.last() != Some(&(n - 1)) {
        out.push(n - 1);
    }
    out
}

/// `1st`, `2nd`, `3rd`, `4th`, … `11th`, `12th`, `21st`.
pub fn ordinal(k: usize) -> String {
    let suffix = match (k % 10, k % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

/// The sentence for a thinned strip: empty when nothing was left out,
/// otherwise e.g. ` (every 5th round shown, and the last)`.
pub fn thinning_note(n: usize, max: usize, what: &str) -> String {
    thinning_note_of(n, max, what, Items::Plain)
}

/// [`thinning_note`] for `items` ([`thin_step_of`]).
pub fn thinning_note_of(n: usize, max: usize, what: &str, items: Items) -> String {
    let k = thin_step_of(n, max, items);
    if k == 1 {
        String::new()
    } else {
        format!(" (every {} {what} shown, and the last)", ordinal(k))
    }
}

/// A strip of small pictures (each a whole `<figure>`), wrapping.
pub fn strip(items: &[String]) -> String {
    let mut out = String::from(
        r#"<div class="strip" style="display:flex;flex-wrap:wrap;gap:6px;align-items:flex-start">"#,
    );
    out.push('\n');
    for item in items {
        out.push_str(item);
        out.push('\n');
    }
    out.push_str("</div>");
    out
}

/// One small picture of a strip: `svg` with its caption (HTML).
pub fn small_figure(svg: &str, caption: &str) -> String {
    format!(
        r#"<figure style="margin:0;max-width:min-content">{svg}<figcaption style="font-size:smaller">{caption}</figcaption></figure>"#
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Hostile review (F5): a zero-width space, word joiner or byte order
    /// mark hides that text is there ("o\u{200b}k" looks like "ok"), a line
    /// or paragraph separator breaks a line where plain text has none:
    /// each shows as its escape. A zero-width joiner or non-joiner stays
    /// (letters of several scripts and emoji are written with them).
    #[test]
    fn zero_width_characters_and_line_separators_show_as_their_escapes() {
        let s = "a\u{200b}b\u{2028}c\u{2029}d\u{2060}e\u{feff}f";
        let shown = "a\\u{200b}b\\u{2028}c\\u{2029}d\\u{2060}e\\u{feff}f";
        assert_eq!(visible(s), shown);
        assert_eq!(escape(s), shown);
        let joined = "\u{1f469}\u{200d}\u{1f4bb} \u{645}\u{200c}\u{6cc}";
        assert!(matches!(visible(joined), std::borrow::Cow::Borrowed(_)));
    }

    /// What a hostile bot prints to hide or reorder text: bidi overrides,
    /// isolates and marks, C1 and C0 controls, an ANSI colour escape.
    pub(crate) const HIDING: &str = "ok\u{202e}txt.exe\u{202c} \u{2066}a\u{2069}\u{200e}\u{200f}\
         \u{061c}\u{85}\u{9b}31m\u{1b}[2J\u{7}\u{0}\u{7f}\rX\tY\r\nZ";

    /// Hostile review (issue 38's leftovers): every character that could
    /// hide or reorder text is a visible escape, in plain text and in
    /// HTML; tab, line feed and a CR before a line feed stay as they are.
    #[test]
    fn text_a_bot_wrote_shows_every_hiding_character_as_its_escape() {
        let shown = visible(HIDING);
        assert_eq!(
            shown,
            "ok\\u{202e}txt.exe\\u{202c} \\u{2066}a\\u{2069}\\u{200e}\\u{200f}\\u{61c}\
             \\u{85}\\u{9b}31m\\u{1b}[2J\\u{7}\\u{0}\\u{7f}\\rX\tY\r\nZ"
        );
        assert_eq!(visible(&shown), shown);
        let html = escape(HIDING);
        assert_eq!(visible(&html), html);
        assert!(html.contains("\\u{202e}txt.exe") && html.contains("\\u{1b}[2J"));
        assert_eq!(escape("a<b>\u{202e}\r\n"), "a&lt;b&gt;\\u{202e}\r\n");
        // Text with nothing to hide is not copied; other letters, marks
        // and symbols of any script stay as they are.
        let plain = "Grüße, שלום, مرحبا, 日本 — ← ✓ \u{a0}";
        assert!(matches!(visible(plain), std::borrow::Cow::Borrowed(_)));
        assert_eq!(escape(plain), plain);
    }

    /// Issue 36: a thinned strip of alternating moves shows both seats'.
    #[test]
    fn a_thinned_strip_of_moves_shows_both_players() {
        let plain = shown(248, 124);
        assert!(plain.iter().take(plain.len() - 1).all(|i| i % 2 == 0));
        let both = shown_of(248, 124, Items::Alternating);
        assert!(both.iter().any(|i| i % 2 == 1) && both.iter().any(|i| i % 2 == 0));
        assert_eq!(
            thinning_note_of(248, 124, "move", Items::Alternating),
            " (every 3rd move shown, and the last)"
        );
        assert_eq!(thin_step_of(100, 124, Items::Alternating), 1);
    }

    #[test]
    fn numbers_have_no_float_noise() {
        assert_eq!(num(0.1 + 0.2), "0.3");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(1.0 / 3.0), "0.33");
        assert_eq!(num(-1.25), "-1.25");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(1e300), "1000000000000");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(2_500_000), "2,500,000");
    }

    #[test]
    fn thinning_keeps_the_last_and_says_so() {
        assert_eq!(shown(5, 10), vec![0, 1, 2, 3, 4]);
        assert_eq!(shown(10, 4), vec![0, 3, 6, 9]);
        assert_eq!(shown(11, 4), vec![0, 3, 6, 9, 10]);
        assert!(shown(0, 4).is_empty());
        assert_eq!(thinning_note(5, 10, "round"), "");
        assert_eq!(
            thinning_note(2500, 500, "round"),
            " (every 5th round shown, and the last)"
        );
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(12), "12th");
        assert_eq!(ordinal(23), "23rd");
    }

    /// Hostile texts: markup, quotes of every kind, entities already
    /// escaped, template braces, multi-byte characters around the
    /// escaped ones, and control characters.
    const HOSTILE: &[&str] = &[
        "",
        "plain",
        "<script>alert(1)</script>",
        "\"><img src=x onerror=alert(1)>",
        "' onmouseover='x' a=`b`",
        "&amp; &lt; &#x27; &#39; &",
        "{{name}}</h1><h1>",
        "ü<—>ü&€\"𝄞'",
        "<<<>>>&&&===```'''\"\"\"",
        "\u{0}\u{1b}[0m\t\r\n<",
        "]]><!--<![CDATA[",
    ];

    #[test]
    fn the_escape_is_handlebars_own_on_hostile_texts() {
        let refs = [
            ("&lt;", "<"),
            ("&gt;", ">"),
            ("&quot;", "\""),
            ("&#x27;", "'"),
            ("&#x60;", "`"),
            ("&#x3D;", "="),
        ];
        for s in HOSTILE {
            let e = escape(s);
            // Handlebars' own escape, of the text made visible first (its
            // escapes are letters, digits, `\`, `{` and `}`: none of them
            // escaped in HTML).
            assert_eq!(e, handlebars::html_escape(&visible(s)), "{s:?}");
            let mut into = String::from("kept ");
            escape_into(&mut into, s);
            assert_eq!(into, format!("kept {e}"));
            // Nothing that opens or closes markup, an attribute or an
            // entity is left raw: every `&` starts one of ours.
            for raw in ['<', '>', '"', '\'', '`', '='] {
                assert!(!e.contains(raw), "{s:?}: {raw} raw in {e:?}");
            }
            for (i, _) in e.match_indices('&') {
                assert!(
                    e[i..].starts_with("&amp;") || refs.iter().any(|(r, _)| e[i..].starts_with(r)),
                    "{s:?}: a bare & in {e:?}"
                );
            }
            // Decoding gives the text back.
            let mut back = String::new();
            let mut rest = e.as_str();
            while let Some(i) = rest.find('&') {
                back.push_str(&rest[..i]);
                let (r, c) = refs
                    .iter()
                    .chain(&[("&amp;", "&")])
                    .find(|(r, _)| rest[i..].starts_with(r))
                    .expect("checked above");
                back.push_str(c);
                rest = &rest[i + r.len()..];
            }
            back.push_str(rest);
            assert_eq!(back, visible(s));
        }
    }

    #[test]
    fn names_and_lines_are_escaped_and_cut() {
        let names = vec!["<script>x</script>".to_string(), "  ".to_string()];
        assert_eq!(seat_name(&names, 0, 60), "&lt;script&gt;x&lt;/script&gt;");
        assert_eq!(seat_name(&names, 1, 60), "player 2");
        assert_eq!(seat_name(&names, 7, 60), "player 8");
        assert_eq!(quote_line("abcdef", 3), "abc…");
        assert_eq!(quote_line("a\u{1b}b", 9), "a?b");
        assert!(!legend(&names, 2, &[]).contains("<script>"));
    }

    /// The escape as it is specified, one character at a time: a hiding
    /// character as its Rust escape (a carriage return before a line
    /// feed kept), the seven HTML characters as references, the rest as
    /// it is.
    fn escape_by_characters(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '"' => out.push_str("&quot;"),
                '&' => out.push_str("&amp;"),
                '\'' => out.push_str("&#x27;"),
                '`' => out.push_str("&#x60;"),
                '=' => out.push_str("&#x3D;"),
                '\r' if chars.peek() == Some(&'\n') => out.push('\r'),
                c if hides(c) || xml_forbids(c) => out.extend(c.escape_default()),
                c => out.push(c),
            }
        }
        out
    }

    /// Hostile review (F6): every Unicode scalar value, alone and at the
    /// first and last byte, after and before multi-byte characters (among
    /// them the 0xC2, 0xD8 and 0xE2 lead bytes of characters that must
    /// not be escaped) and HTML characters, is escaped exactly as the
    /// specification one character at a time (U+FFFE and U+FFFF, which
    /// XML forbids, escaped too: they broke an SVG); a text without hiding
    /// characters exactly as before the byte-class table.
    #[test]
    fn the_byte_class_escape_equals_the_escape_character_by_character() {
        let frames = [
            ("", ""),
            ("a", "b"),
            ("\u{a0}", "\u{a9}"),
            ("\u{600}", "\u{61b}"),
            ("\u{2014}", "\u{2026}"),
            ("\u{1f600}", "<"),
            ("&", "\r"),
            ("\r", "\n"),
            ("\u{202e}", "\u{85}"),
            ("\u{feff}", "\u{ffff}"),
            ("\u{fffe}", "\u{ff01}"),
        ];
        let mut hiding = 0;
        let mut s = String::new();
        let mut out = String::new();
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            hiding += usize::from(hides(c));
            for (before, after) in frames {
                s.clear();
                s.push_str(before);
                s.push(c);
                s.push_str(after);
                out.clear();
                escape_into(&mut out, &s);
                let want = escape_by_characters(&s);
                assert_eq!(out, want, "{s:?}");
                if !s.chars().any(|c| hides(c) || xml_forbids(c)) {
                    assert_eq!(out, handlebars::html_escape(&s), "{s:?}");
                    assert!(matches!(visible(&s), std::borrow::Cow::Borrowed(_)));
                }
            }
        }
        // C0 but tab and line feed (30), DEL, C1 (32), the 12 bidi marks,
        // U+200B, U+2060, U+FEFF and the two separators.
        assert_eq!(hiding, 30 + 1 + 32 + 12 + 5);
    }
}
