//! Source-level compile checks, run on the raw submitted source before gcc
//! ever sees it: the header (check 1), the single-file rule (check 2) and the
//! verbal description (check 4). Pure functions of the text, no I/O; line
//! numbers are 1-based in the submitted text and count line ends the way gcc
//! does (`\n`, `\r\n`, lone `\r`), so they agree with gcc's messages.
//!
//! Everything is built on the tokenizer in [`super::lex`] and on `scan.rs`
//! (the lines, directives and `#if 0` blocks), the same way gcc's
//! preprocessor sees the text: directives are logical lines (after line
//! splices) whose first token is `#` or `%:`; comments and literals are
//! lexed even inside skipped `#if 0` blocks, so a `/*` or a `"` there hides
//! an `#endif` exactly as it does for gcc, while an apostrophe in "don't"
//! only runs to the end of its line.
//!
//! The single-file check lexes the source once per dialect variant
//! ([`LexOptions::ALL`]: with and without raw strings and digit separators)
//! and reports the union, so a construct that only some gcc dialect reads as
//! a string or a comment cannot hide a directive. For the same reason it
//! rejects, anywhere (even in comments and descriptions), the trigraphs `??=`
//! and `??/` (under ISO modes gcc would see a `#` or a backslash there) and
//! directive names that are not plain ASCII (`#if\u00e9`, `#endif$`: dialects
//! disagree on where such a name ends, hence on `#if` nesting). String
//! literals are checked by their decoded value, concatenated over adjacent
//! literals (identifiers between them allowed, as they may be macros that
//! expand to nothing), case-insensitively for `.incbin`/`.include`.
//!
//! What these checks deliberately do not do: they do not preprocess. Only a
//! literal `#if 0` (possibly `0L`, `0x0`, in parentheses) is known to be
//! skipped; every other conditional group counts as active code, which is the
//! safe side for the single-file check. Macro expansion is not simulated, so
//! a forbidden name, pragma or string assembled by `#` or `##`, or an
//! assembler directive produced through asm operands or assembler macros, is
//! not found here: these checks give participants clear early messages; the
//! jail around gcc and the assembler is what actually keeps them from reading
//! files.

use serde::Serialize;

mod scan;

use self::scan::{physical_lines, scan, Directive};
use super::diagnostic::{Check, Diagnostic};
use super::lex::{self, LexOptions, Token, TokenKind};

/// The marker of the header line.
const FROM: &str = "<<FROM>>";

/// The header: who submitted the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    pub team: String,
    pub auth: String,
    /// Line of `<<FROM>>`.
    pub line: u32,
}

/// Check 1: the first comment of the file holds `<<FROM>> team_name
/// auth_string`. Only whitespace may precede that comment. Any text may
/// precede `<<FROM>>` inside the comment; the team name and the
/// authentification string are the next two whitespace-separated words
/// (further words are ignored).
pub fn parse_header(src: &str) -> Result<Header, Diagnostic> {
    let template = "/* <<FROM>> team_name auth_string */";
    let mut tokens = lex::Lexer::new(src, LexOptions::PLAIN);
    let Some(first) = tokens.next() else {
        return Err(Diagnostic::error(
            Check::Header,
            None,
            format!("the source is empty: it must start with a comment {template}"),
        ));
    };
    if !first.is_comment() {
        return Err(Diagnostic::error(
            Check::Header,
            Some(first.line),
            format!(
                "the source must start with a comment {template} \
                 (found code at line {} before any comment)",
                first.line
            ),
        ));
    }
    let body = comment_body(&first);
    let Some(at) = body.find(FROM) else {
        let last = first.line.saturating_add(lex::count_line_ends(first.text));
        let lines = if last == first.line {
            format!("line {last}")
        } else {
            format!("lines {}-{last}", first.line)
        };
        let later = tokens
            .filter(|t| t.is_comment() && comment_body(t).contains(FROM))
            .map(|t| t.line)
            .next();
        let hint = match later {
            Some(l) => format!(
                "; the comment at line {l} has one, but the header must be in the \
                 first comment: move it there"
            ),
            None => format!(
                "; put {FROM} team_name auth_string into that comment, or start the \
                 file with {template}"
            ),
        };
        return Err(Diagnostic::error(
            Check::Header,
            Some(first.line),
            format!("found no {FROM} in the first comment ({lines}){hint}"),
        ));
    };
    let line = match first.text.find(FROM) {
        Some(raw) => first
            .line
            .saturating_add(lex::count_line_ends(&first.text[..raw])),
        None => first.line,
    };
    let mut words = body[at + FROM.len()..].split_whitespace();
    match (words.next(), words.next()) {
        (Some(team), Some(auth)) => Ok(Header {
            team: team.to_string(),
            auth: auth.to_string(),
            line,
        }),
        (Some(team), None) => Err(Diagnostic::error(
            Check::Header,
            Some(line),
            format!(
                "after {FROM} {team} the authentification string is missing: \
                 write {FROM} {team} auth_string"
            ),
        )),
        _ => Err(Diagnostic::error(
            Check::Header,
            Some(line),
            format!(
                "after {FROM} the team name and the authentification string are \
                 missing: write {FROM} team_name auth_string"
            ),
        )),
    }
}

/// The inside of a comment token, splices removed, without `/*`, `*/`, `//`.
fn comment_body(t: &Token<'_>) -> String {
    let text = t.unspliced();
    let inner = match t.kind {
        TokenKind::Comment { block: true } => {
            let rest = text.strip_prefix("/*").unwrap_or(&text);
            rest.strip_suffix("*/").unwrap_or(rest)
        }
        _ => text.strip_prefix("//").unwrap_or(&text),
    };
    inner.to_string()
}

/// Check 2: the source is a single file; nothing in it reads another file.
/// Returns every problem found (errors of [`Check::SingleFile`], one per
/// problem and line, sorted by line); empty means the check passed.
pub fn check_single_file(src: &str) -> Vec<Diagnostic> {
    let mut found: Vec<(u32, String)> = Vec::new();
    check_trigraphs(src, &mut found);
    for options in LexOptions::ALL {
        let tokens = lex::tokenize_with(src, options);
        let scan = scan(src, &tokens);
        for (line, name) in &scan.odd_names {
            found.push((
                *line,
                format!(
                    "the directive name \"{name}\" is not allowed, not even in the \
                     description: write directive names in plain ASCII letters"
                ),
            ));
        }
        for d in &scan.directives {
            check_directive(d, &mut found);
            check_tokens(&d.args, &mut found);
            super::purec::check_tokens(&d.args, &mut found);
        }
        check_tokens(&scan.code, &mut found);
        super::purec::check_tokens(&scan.code, &mut found);
    }
    found.sort();
    found.dedup();
    found
        .into_iter()
        .map(|(line, message)| Diagnostic::error(Check::SingleFile, Some(line), message))
        .collect()
}

/// Identifiers that look for other files.
const FILE_PROBES: &[&str] = &[
    "__has_include",
    "__has_include_next",
    "__has_include__",
    "__has_include_next__",
    "__has_embed",
];

/// Pragma words that make gcc open another file.
const FILE_PRAGMAS: &[&str] = &["dependency", "pch_preprocess"];

/// Assembler directives that read files (gas folds their case).
const FILE_ASM: &[&str] = &[".incbin", ".include"];

fn check_directive(d: &Directive<'_, '_>, found: &mut Vec<(u32, String)>) {
    let Some(name) = d.name else { return };
    match name.kind {
        TokenKind::Number => found.push((
            d.line,
            format!(
                "a line marker \"# {} ...\" is not allowed: it would make the compiler's \
                 messages point into another file; remove it",
                name.unspliced()
            ),
        )),
        TokenKind::Identifier => match &*name.unspliced() {
            n @ ("include" | "include_next" | "import" | "embed") => found.push((
                d.line,
                format!(
                    "#{n} is not allowed: a strategy must be a single file; remove the \
                     #{n}: no library headers are available or needed — declare the five \
                     routines yourself or rely on implicit declarations"
                ),
            )),
            "line" => found.push((
                d.line,
                "#line is not allowed: it would make the compiler's messages point into \
                 another file or line; remove it"
                    .to_string(),
            )),
            "pragma" => {
                let words: Vec<String> = d
                    .args
                    .iter()
                    .filter(|t| t.kind == TokenKind::Identifier)
                    .map(|t| t.unspliced().into_owned())
                    .collect();
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                super::purec::check_pragma_words(d.line, &words, found);
                if let Some(w) = d.args.iter().find_map(|t| {
                    let s = t.unspliced();
                    FILE_PRAGMAS
                        .iter()
                        .find(|&&p| t.kind == TokenKind::Identifier && s == p)
                }) {
                    found.push((
                        d.line,
                        format!(
                            "#pragma ... {w} is not allowed: it makes the compiler read \
                             another file; remove the #pragma"
                        ),
                    ));
                }
            }
            _ => {}
        },
        _ => {}
    }
}

/// Checks a stream of non-comment tokens of active code (or of one directive
/// line): file probes, `_Pragma` and file-reading assembler directives.
fn check_tokens(tokens: &[&Token<'_>], found: &mut Vec<(u32, String)>) {
    for (i, t) in tokens.iter().enumerate() {
        if t.kind != TokenKind::Identifier {
            continue;
        }
        let name = t.unspliced();
        if FILE_PROBES.contains(&&*name) {
            found.push((
                t.line,
                format!(
                    "{name} is not allowed: it looks for other files, and a strategy must \
                     be a single file; remove it"
                ),
            ));
        } else if name == "_Pragma" {
            check_pragma_operator(t.line, &tokens[i + 1..], found);
        }
    }
    // Runs of string literals, which the compiler concatenates (identifiers
    // between them are allowed, as they may be macros expanding to nothing).
    let mut i = 0;
    while i < tokens.len() {
        if !matches!(tokens[i].kind, TokenKind::String { .. }) {
            i += 1;
            continue;
        }
        let mut run: Vec<&Token<'_>> = Vec::new();
        while let Some(t) = tokens.get(i) {
            match t.kind {
                TokenKind::String { .. } => run.push(t),
                TokenKind::Identifier => {}
                _ => break,
            }
            i += 1;
        }
        check_string_run(&run, found);
    }
}

fn check_string_run(run: &[&Token<'_>], found: &mut Vec<(u32, String)>) {
    let mut text = String::new();
    let mut starts: Vec<(usize, u32)> = Vec::with_capacity(run.len());
    for t in run {
        starts.push((text.len(), t.line));
        text.push_str(&t.literal_value().unwrap_or_default());
    }
    let lower = text.to_ascii_lowercase();
    for needle in FILE_ASM {
        if let Some(at) = lower.find(needle) {
            let line = starts
                .iter()
                .take_while(|(s, _)| *s <= at)
                .last()
                .map_or(run[0].line, |&(_, l)| l);
            found.push((
                line,
                format!(
                    "a string containing the assembler directive {needle} is not allowed: \
                     inline assembly must not read files; remove it"
                ),
            ));
        }
    }
}

/// `_Pragma` must be followed by `(`, string literals and `)`, and the pragma
/// must not read a file.
fn check_pragma_operator(line: u32, after: &[&Token<'_>], found: &mut Vec<(u32, String)>) {
    let strings: Vec<&Token<'_>> = after
        .iter()
        .skip(1)
        .take_while(|t| matches!(t.kind, TokenKind::String { .. }))
        .copied()
        .collect();
    let well_formed = after.first().is_some_and(|t| t.is_punct(b'('))
        && !strings.is_empty()
        && after
            .get(1 + strings.len())
            .is_some_and(|t| t.is_punct(b')'));
    if !well_formed {
        found.push((
            line,
            "_Pragma must be followed by a string literal in parentheses, as in \
             _Pragma(\"once\"); pragmas computed by macros are not allowed"
                .to_string(),
        ));
        return;
    }
    let value: String = strings
        .iter()
        .map(|t| t.literal_value().unwrap_or_default())
        .collect();
    let words: Vec<&str> = value.split_whitespace().collect();
    super::purec::check_pragma_words(line, &words, found);
    if let Some(w) = FILE_PRAGMAS.iter().find(|w| value.contains(*w)) {
        found.push((
            line,
            format!(
                "_Pragma(\"... {w} ...\") is not allowed: it makes the compiler read \
                 another file; remove it"
            ),
        ));
    }
}

/// The trigraphs `??=` (`#`) and `??/` (backslash) are rejected anywhere.
fn check_trigraphs(src: &str, found: &mut Vec<(u32, String)>) {
    let b = src.as_bytes();
    let mut line: u32 = 1;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => line = line.saturating_add(1),
            b'\r' if b.get(i + 1) != Some(&b'\n') => line = line.saturating_add(1),
            b'?' if b.get(i + 1) == Some(&b'?') && matches!(b.get(i + 2), Some(b'=' | b'/')) => {
                let (tri, means) = if b[i + 2] == b'=' {
                    ("??=", "#")
                } else {
                    ("??/", "a backslash")
                };
                found.push((
                    line,
                    format!(
                        "the trigraph {tri} is not allowed anywhere, not even in comments, \
                         strings or the description: some C dialects read it as {means}; \
                         write {} instead, or separate the question marks",
                        if tri == "??=" { "#" } else { "\\" }
                    ),
                ));
                i += 3;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The verbal description: the text of an `#if 0` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Description {
    /// The lines between `#if 0` and its `#endif` (or its `#else`/`#elif`),
    /// as written, joined with `\n` (line ends normalised).
    pub text: String,
    /// Line of the first line of `text` (the line after the `#if 0`).
    pub first_line: u32,
    /// Lines of `text` that are not blank.
    pub n_nonblank_lines: u32,
    /// Line of the `#if 0` directive.
    pub if_line: u32,
}

/// Check 4, the finding part: the `#if 0 ... #endif` blocks of the source
/// (an `#if 0` outside any other `#if 0` block; inner `#if`/`#ifdef`/
/// `#ifndef` nest; an `#else` or `#elif` of the `#if 0` ends the text).
/// Returns the block with the most non-blank lines (the first of equals), or
/// `None` if there is none.
pub fn find_description(src: &str) -> Option<Description> {
    let tokens = lex::tokenize(src);
    let scan = scan(src, &tokens);
    let lines = physical_lines(src);
    let mut best: Option<Description> = None;
    for b in &scan.blocks {
        let first = b.first_line as usize;
        let last = (b.last_line as usize).min(lines.len());
        let chosen: &[&str] = if first >= 1 && first <= last {
            &lines[first - 1..last]
        } else {
            &[]
        };
        let n = chosen.iter().filter(|l| !l.trim().is_empty()).count();
        let d = Description {
            text: chosen.join("\n"),
            first_line: b.first_line,
            n_nonblank_lines: u32::try_from(n).unwrap_or(u32::MAX),
            if_line: b.if_line,
        };
        if best
            .as_ref()
            .is_none_or(|x| d.n_nonblank_lines > x.n_nonblank_lines)
        {
            best = Some(d);
        }
    }
    best
}

/// Requirement 7 asks for a description "at least about 15 lines long": a
/// description of at least this many non-blank lines passes (below
/// `min_lines` with a warning). Four fifths of `min_lines`, rounded up:
/// 12 of 15.
pub fn tolerated_description_lines(min_lines: u32) -> u32 {
    min_lines.saturating_mul(4).div_ceil(5).max(1)
}

/// The longest comment of the source taken as a description: a block
/// comment, or a run of line comments on consecutive lines. Its lines count
/// when they hold a letter or digit (the `<<FROM>>` header line does not
/// count); `if_line` and `first_line` are the comment's first line.
pub fn find_comment_description(src: &str) -> Option<Description> {
    let tokens = lex::tokenize(src);
    let mut best: Option<Description> = None;
    let mut consider = |first_line: u32, text: String| {
        let n = text
            .lines()
            .filter(|l| l.chars().any(|c| c.is_ascii_alphanumeric()) && !l.contains("<<FROM>>"))
            .count();
        let d = Description {
            text,
            first_line,
            n_nonblank_lines: u32::try_from(n).unwrap_or(u32::MAX),
            if_line: first_line,
        };
        if best
            .as_ref()
            .is_none_or(|x| d.n_nonblank_lines > x.n_nonblank_lines)
        {
            best = Some(d);
        }
    };
    // A run of line comments: (first line, last line, text).
    let mut run: Option<(u32, u32, String)> = None;
    for t in tokens.iter().filter(|t| t.is_comment()) {
        match t.kind {
            TokenKind::Comment { block: true } => consider(t.line, t.unspliced().into_owned()),
            _ => {
                let text = t.unspliced();
                match run.as_mut() {
                    Some((_, last, acc)) if t.line == *last + 1 => {
                        acc.push('\n');
                        acc.push_str(&text);
                        *last = t.line;
                    }
                    _ => {
                        if let Some((first, _, acc)) = run.take() {
                            consider(first, acc);
                        }
                        run = Some((t.line, t.line, text.into_owned()));
                    }
                }
            }
        }
    }
    if let Some((first, _, acc)) = run {
        consider(first, acc);
    }
    best
}

/// Check 4: the description exists and is about `min_lines` non-blank lines
/// long. The announcement's wording is kept where it is generous: a
/// description in `#if 0 ... #endif` of at least
/// [`tolerated_description_lines`] passes (with a warning below
/// `min_lines`); without one long enough, the longest comment long enough
/// passes with a warning naming the requested form. The count of lexical
/// elements is the same either way (comments and `#if 0` blocks count 0).
/// Returns the description and the warning, if any.
pub fn check_description(
    src: &str,
    min_lines: u32,
) -> Result<(Description, Option<Diagnostic>), Diagnostic> {
    let tolerated = tolerated_description_lines(min_lines);
    let short = |d: &Description| d.n_nonblank_lines < min_lines;
    let lines = |n: u32| format!("{n} non-blank line{}", if n == 1 { "" } else { "s" });
    let block = find_description(src);
    if let Some(d) = block.clone().filter(|d| d.n_nonblank_lines >= tolerated) {
        let warning = short(&d).then(|| {
            Diagnostic::warning(
                Check::Description,
                Some(d.if_line),
                format!(
                    "the description in #if 0 ... #endif (line {}) has {}; the announcement \
                     asks for \"at least about {min_lines} lines\" (at least {tolerated} are \
                     accepted): please describe your strategy a little more",
                    d.if_line,
                    lines(d.n_nonblank_lines)
                ),
            )
        });
        return Ok((d, warning));
    }
    if let Some(c) = find_comment_description(src).filter(|c| c.n_nonblank_lines >= tolerated) {
        let warning = Diagnostic::warning(
            Check::Description,
            Some(c.if_line),
            format!(
                "no description in #if 0 ... #endif{}: the comment at line {} ({}) is taken as \
                 the description; the announcement asks: \"Please enclose the description in \
                 #if 0 ..... #endif\"{}",
                match &block {
                    Some(b) => format!(
                        " long enough (the one at line {} has {})",
                        b.if_line,
                        lines(b.n_nonblank_lines)
                    ),
                    None => String::new(),
                },
                c.if_line,
                lines(c.n_nonblank_lines),
                if short(&c) {
                    format!(", and for \"at least about {min_lines} lines\"")
                } else {
                    String::new()
                }
            ),
        );
        return Ok((c, Some(warning)));
    }
    Err(match block {
        None => Diagnostic::error(
            Check::Description,
            None,
            format!(
                "no description found: put at least {min_lines} lines describing your \
                 strategy between #if 0 and #endif"
            ),
        ),
        Some(d) => Diagnostic::error(
            Check::Description,
            Some(d.if_line),
            format!(
                "the description in #if 0 ... #endif (line {}) has {}; at least about \
                 {min_lines} are required (at least {tolerated}): describe the main ideas of \
                 your strategy (exploit and/or cooperate, and how)",
                d.if_line,
                lines(d.n_nonblank_lines)
            ),
        ),
    })
}

#[cfg(test)]
mod tests;
