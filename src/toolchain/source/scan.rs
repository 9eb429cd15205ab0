//! How gcc's preprocessor sees a source's lines, without preprocessing
//! it: physical and logical lines, directives (with odd names noted), the
//! literal `#if 0` blocks, and the active code between them. The source
//! checks ([`super`]) read a [`Scan`] of the tokens.
//!
//! It does not judge anything (no diagnostics) and does not expand macros;
//! every conditional group but a literal `#if 0` counts as active.

use crate::toolchain::lex::{self, Token, TokenKind};

/// The physical lines of `src`, without their line ends.
pub(super) fn physical_lines(src: &str) -> Vec<&str> {
    let b = src.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                lines.push(&src[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&src[start..i]);
                if b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    lines.push(&src[start..]);
    lines
}

/// A preprocessing directive.
pub(super) struct Directive<'t, 'a> {
    /// Line of the `#`.
    pub(super) line: u32,
    /// The directive name (`None` for the null directive).
    pub(super) name: Option<&'t Token<'a>>,
    /// The non-comment tokens after the name.
    pub(super) args: Vec<&'t Token<'a>>,
    /// The name is not a plain ASCII identifier: it holds `$` or non-ASCII
    /// characters, is a backslash or is glued to one (a universal character
    /// name). gcc dialects disagree on where such a name ends.
    pub(super) odd_name: bool,
}

impl Directive<'_, '_> {
    pub(super) fn name_is(&self, n: &str) -> bool {
        self.name.is_some_and(|t| t.is_identifier(n))
    }

    pub(super) fn name(&self) -> Option<String> {
        self.name
            .filter(|t| t.kind == TokenKind::Identifier)
            .map(|t| t.unspliced().into_owned())
    }
}

/// An `#if 0` block: lines `first_line..=last_line` (empty if
/// `last_line < first_line`).
pub(super) struct Block {
    pub(super) if_line: u32,
    pub(super) first_line: u32,
    pub(super) last_line: u32,
}

/// The source split into what the preprocessor would see as active.
pub(super) struct Scan<'t, 'a> {
    /// Non-comment tokens of the active lines that are not directives.
    pub(super) code: Vec<&'t Token<'a>>,
    /// Active directives (including an `#elif` ending an `#if 0` block).
    pub(super) directives: Vec<Directive<'t, 'a>>,
    /// The `#if 0` blocks.
    pub(super) blocks: Vec<Block>,
    /// Lines of directives, skipped or not, whose name is odd.
    pub(super) odd_names: Vec<(u32, String)>,
}

pub(super) fn offset(src: &str, t: &Token<'_>) -> usize {
    t.text.as_ptr() as usize - src.as_ptr() as usize
}

/// The text between two tokens.
pub(super) fn gap<'a>(src: &'a str, a: &Token<'_>, b: &Token<'_>) -> &'a str {
    let from = offset(src, a) + a.text.len();
    let to = offset(src, b).max(from);
    &src[from..to]
}

/// Splits tokens into logical lines (a block comment spanning lines does not
/// end a logical line; a splice does not either).
pub(super) fn logical_lines<'t, 'a>(src: &str, tokens: &'t [Token<'a>]) -> Vec<&'t [Token<'a>]> {
    let mut lines = Vec::new();
    let mut begin = 0;
    for i in 1..tokens.len() {
        let (p, t) = (&tokens[i - 1], &tokens[i]);
        if t.at_line_start
            && (!p.at_line_start || lex::remove_splices(gap(src, p, t)).contains(['\n', '\r']))
        {
            lines.push(&tokens[begin..i]);
            begin = i;
        }
    }
    if begin < tokens.len() {
        lines.push(&tokens[begin..]);
    }
    lines
}

/// The directive a logical line is, if it is one.
pub(super) fn parse_directive<'t, 'a>(
    src: &str,
    line: &'t [Token<'a>],
) -> Option<Directive<'t, 'a>> {
    let code: Vec<&'t Token<'a>> = line.iter().filter(|t| !t.is_comment()).collect();
    let first = *code.first()?;
    if !first.at_line_start {
        return None;
    }
    let skip = if first.is_punct(b'#') {
        1
    } else if first.is_punct(b'%')
        && code
            .get(1)
            .is_some_and(|c| c.is_punct(b':') && lex::remove_splices(gap(src, first, c)).is_empty())
    {
        2
    } else {
        return None;
    };
    let name = code.get(skip).copied();
    let odd_name = name.is_some_and(|n| match n.kind {
        TokenKind::Identifier => {
            let next = line.iter().find(|t| offset(src, t) > offset(src, n));
            n.unspliced().bytes().any(|c| c == b'$' || c >= 0x80)
                || next.is_some_and(|t| {
                    t.is_punct(b'\\') && lex::remove_splices(gap(src, n, t)).is_empty()
                })
        }
        _ => n.is_punct(b'\\'),
    });
    Some(Directive {
        line: first.line,
        name,
        args: code.get(skip + 1..).unwrap_or(&[]).to_vec(),
        odd_name,
    })
}

/// Is this `#if` condition a literal zero (`0`, `0L`, `0x0`, `(0)`)?
pub(super) fn is_zero(args: &[&Token<'_>]) -> bool {
    let mut a = args;
    while a.len() >= 3 && a[0].is_punct(b'(') && a[a.len() - 1].is_punct(b')') {
        a = &a[1..a.len() - 1];
    }
    let [t] = a else { return false };
    if t.kind != TokenKind::Number {
        return false;
    }
    let text = t.unspliced();
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    let digits = ["0x", "0X", "0b", "0B"]
        .iter()
        .find_map(|p| digits.strip_prefix(p))
        .unwrap_or(digits);
    !digits.is_empty() && digits.bytes().all(|c| c == b'0')
}

/// The line a token group ends on.
pub(super) fn end_line(line: &[Token<'_>]) -> u32 {
    line.last()
        .map_or(0, |t| t.line.saturating_add(lex::count_line_ends(t.text)))
}

/// Walks the logical lines, skipping `#if 0` blocks as the preprocessor does.
pub(super) fn scan<'t, 'a>(src: &str, tokens: &'t [Token<'a>]) -> Scan<'t, 'a> {
    struct Skip {
        depth: u32,
        if_line: u32,
        first_line: u32,
    }
    let mut out = Scan {
        code: Vec::new(),
        directives: Vec::new(),
        blocks: Vec::new(),
        odd_names: Vec::new(),
    };
    let mut skip: Option<Skip> = None;
    for line in logical_lines(src, tokens) {
        let directive = parse_directive(src, line);
        if let Some(d) = directive.as_ref().filter(|d| d.odd_name) {
            let text = d.name.map_or(String::new(), |n| n.unspliced().into_owned());
            out.odd_names.push((d.line, text));
        }
        if let Some(s) = skip.as_mut() {
            let Some(d) = directive else { continue };
            match d.name().as_deref() {
                Some("if" | "ifdef" | "ifndef") => s.depth += 1,
                Some("endif") if s.depth > 0 => s.depth -= 1,
                Some(n @ ("endif" | "else" | "elif" | "elifdef" | "elifndef")) if s.depth == 0 => {
                    out.blocks.push(Block {
                        if_line: s.if_line,
                        first_line: s.first_line,
                        last_line: line[0].line.saturating_sub(1),
                    });
                    skip = None;
                    if n.starts_with("elif") {
                        // Its condition is evaluated: active.
                        out.directives.push(d);
                    }
                }
                _ => {}
            }
            continue;
        }
        match directive {
            Some(d) => {
                if d.name_is("if") && is_zero(&d.args) {
                    skip = Some(Skip {
                        depth: 0,
                        if_line: d.line,
                        first_line: end_line(line).saturating_add(1),
                    });
                }
                out.directives.push(d);
            }
            None => out.code.extend(line.iter().filter(|t| !t.is_comment())),
        }
    }
    if let Some(s) = skip {
        out.blocks.push(Block {
            if_line: s.if_line,
            first_line: s.first_line,
            last_line: lex::count_line_ends(src).saturating_add(1),
        });
    }
    out
}
