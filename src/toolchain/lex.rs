//! A tolerant C tokenizer for hostile input.
//!
//! It splits C source (C89 … C23 and the GNU dialects) into identifiers,
//! pp-numbers, string and character literals, one-character punctuators and
//! comments. It is used on raw submitted sources (for the source checks in
//! [`super::source`]) and on gcc's preprocessed output (`gcc -E -P`) to count
//! the contest's "lexical elements".
//!
//! What it does, beyond the textbook rules:
//! - Line splices are invisible everywhere, with gcc's rules: a backslash,
//!   then optional blanks (space, tab, form feed, vertical tab, NUL), then a
//!   line end. Line ends are `\n`, `\r\n` and a lone `\r` (gcc treats a lone
//!   carriage return as a line end too), and line numbers count them the way
//!   gcc does, so they agree with the compiler's messages.
//! - NUL bytes are blanks (gcc ignores them), and a UTF-8 byte order mark at
//!   the very start is skipped (gcc does too).
//! - Unterminated literals end at the end of their logical line, an
//!   unterminated block comment at the end of the text. Nothing ever panics;
//!   every token's `text` is an exact slice of the input.
//! - Two dialect features that move the borders between code, literals and
//!   comments are switchable through [`LexOptions`]: GNU raw strings
//!   (`R"x(...)x"`, on in gcc's `-std=gnu99` … `gnu23`; as in gcc, one
//!   that starts in a directive line ends with that line) and C23 digit
//!   separators (`1'000`). The security checks lex the source in every
//!   combination, so no dialect can hide a directive from them.
//! - Identifiers and pp-numbers take `$` and any non-ASCII character, as gcc
//!   does by default.
//!
//! What it deliberately does not do: it does not preprocess (no macro
//! expansion, no conditional inclusion, no directives), it does not combine
//! punctuators (`+=`, `->`, `...` and the digraphs are several one-character
//! tokens, because that is how the contest counts them), it does not
//! recognise keywords (they are identifiers), it does not process trigraphs
//! (the source checks reject the two that matter), and it does not validate
//! anything (a malformed number is still one pp-number).

use std::borrow::Cow;

/// What kind of token a [`Token`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// An identifier or keyword (`$` and non-ASCII characters included).
    Identifier,
    /// A preprocessing number (`1`, `0x1p-3f`, `1.2.3`, `.5e+`).
    Number,
    /// A string literal, prefix included. `chars` is the number of characters
    /// it denotes (each escape sequence counts 1, the quotes and the prefix
    /// count 0); `terminated` is false when the line (or, for a raw string,
    /// the text) ended before the closing quote.
    String { chars: usize, terminated: bool },
    /// A character constant, prefix included; fields as for `String`.
    Char { chars: usize, terminated: bool },
    /// Any other single non-blank character, including `#`.
    Punct,
    /// A comment: `/* ... */` (`block`, possibly unterminated) or `// ...`.
    Comment { block: bool },
}

/// One token: its kind, its exact text and where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: TokenKind,
    /// The exact source slice, including any line splices inside the token
    /// (but never a splice after its last character).
    pub text: &'a str,
    /// 1-based line of the token's first character, in the original text.
    pub line: u32,
    /// The token is the first non-comment token of its logical line (only
    /// blanks and comments precede it on that line). Comments that precede
    /// the first non-comment token have it set as well. A line end inside a
    /// block comment does not start a new logical line (as in gcc).
    pub at_line_start: bool,
}

impl<'a> Token<'a> {
    /// The token's text with line splices removed.
    pub fn unspliced(&self) -> Cow<'a, str> {
        remove_splices(self.text)
    }

    /// Is this a comment?
    pub fn is_comment(&self) -> bool {
        matches!(self.kind, TokenKind::Comment { .. })
    }

    /// Is this the punctuator `c`?
    pub fn is_punct(&self, c: u8) -> bool {
        self.kind == TokenKind::Punct && self.text.as_bytes() == [c]
    }

    /// Is this an identifier spelled `name` (after removing splices)?
    pub fn is_identifier(&self, name: &str) -> bool {
        self.kind == TokenKind::Identifier && self.unspliced() == name
    }

    /// How many lexical elements the token is worth under the contest's
    /// definition: 1 for identifiers, keywords, numbers and special
    /// characters, one per denoted character for literals, 0 for comments.
    pub fn lexical_elements(&self) -> u64 {
        match self.kind {
            TokenKind::Identifier | TokenKind::Number | TokenKind::Punct => 1,
            TokenKind::String { chars, .. } | TokenKind::Char { chars, .. } => chars as u64,
            TokenKind::Comment { .. } => 0,
        }
    }

    /// The value a string or character literal denotes, escapes decoded
    /// (octal, hex and universal character names become the corresponding
    /// Unicode scalar, U+FFFD when there is none). The content of a raw
    /// string is returned as written, delimiters included. `None` for other
    /// tokens.
    pub fn literal_value(&self) -> Option<String> {
        if !matches!(self.kind, TokenKind::String { .. } | TokenKind::Char { .. }) {
            return None;
        }
        let text = self.unspliced();
        let quote = text.find(['"', '\''])?;
        let (prefix, rest) = text.split_at(quote);
        let q = rest.as_bytes()[0];
        let body = &rest[1..];
        if prefix.ends_with('R') {
            // Raw string: phase 2 does not apply inside; use the raw text.
            let raw = self.text;
            let start = raw.find('"').map_or(raw.len(), |i| i + 1);
            return Some(raw[start..].to_string());
        }
        let body = match self.kind {
            TokenKind::String {
                terminated: true, ..
            }
            | TokenKind::Char {
                terminated: true, ..
            } if body.as_bytes().last() == Some(&q) => &body[..body.len() - 1],
            _ => body,
        };
        Some(decode_escapes(body))
    }
}

/// Dialect switches that change where literals and comments end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LexOptions {
    /// Lex `R"delim( ... )delim"` (also `LR`, `uR`, `UR`, `u8R`) as one raw
    /// string literal that may span lines, like gcc in `-std=gnu99` … `gnu23`.
    pub raw_strings: bool,
    /// Allow C23 digit separators inside pp-numbers (`1'000'000`).
    pub digit_separators: bool,
}

impl LexOptions {
    /// The plain rules: no raw strings, no digit separators (ISO C up to C17,
    /// gnu89). This is what [`tokenize`] and [`count_lexical_elements`] use.
    pub const PLAIN: LexOptions = LexOptions {
        raw_strings: false,
        digit_separators: false,
    };
    /// gcc's `-std=gnu99` … `gnu17` (and gcc's default before gcc 15).
    pub const GNU: LexOptions = LexOptions {
        raw_strings: true,
        digit_separators: false,
    };
    /// gcc's `-std=gnu23` (gcc 15's default).
    pub const GNU23: LexOptions = LexOptions {
        raw_strings: true,
        digit_separators: true,
    };
    /// ISO `-std=c23`.
    pub const C23: LexOptions = LexOptions {
        raw_strings: false,
        digit_separators: true,
    };
    /// Every combination, for checks that must hold whatever the dialect.
    pub const ALL: [LexOptions; 4] = [Self::PLAIN, Self::GNU, Self::GNU23, Self::C23];
}

/// Tokenizes `src` with the plain rules ([`LexOptions::PLAIN`]); comments
/// are included as tokens.
pub fn tokenize(src: &str) -> Vec<Token<'_>> {
    tokenize_with(src, LexOptions::PLAIN)
}

/// Tokenizes `src` with the given dialect options.
pub fn tokenize_with(src: &str, options: LexOptions) -> Vec<Token<'_>> {
    Lexer::new(src, options).collect()
}

/// How many bytes the lexer looks at to tokenize `src` (see
/// [`Lexer::work`]).
pub fn lex_work(src: &str, options: LexOptions) -> u64 {
    let mut lexer = Lexer::new(src, options);
    for _ in lexer.by_ref() {}
    lexer.work()
}

/// The number of lexical elements of `src` under the contest's definition
/// (see [`Token::lexical_elements`]), with the plain rules.
pub fn count_lexical_elements(src: &str) -> u64 {
    count_lexical_elements_with(src, LexOptions::PLAIN)
}

/// [`count_lexical_elements`] with the given dialect options.
pub fn count_lexical_elements_with(src: &str, options: LexOptions) -> u64 {
    Lexer::new(src, options).map(|t| t.lexical_elements()).sum()
}

/// `s` with every line splice (backslash, optional blanks, line end) removed.
pub fn remove_splices(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    if !b.contains(&b'\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut from = 0;
    let mut i = 0;
    while i < b.len() {
        let n = splice_len(b, i);
        if n > 0 {
            out.push_str(&s[from..i]);
            i += n;
            from = i;
        } else {
            i += 1;
        }
    }
    if from == 0 {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[from..]);
    Cow::Owned(out)
}

/// The number of line ends in `s` (`\n`, `\r\n` and lone `\r` count 1 each),
/// i.e. how many lines further the end of `s` is than its start.
pub fn count_line_ends(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut n: u32 = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')) {
            n = n.saturating_add(1);
        }
    }
    n
}

/// Decodes the escape sequences of a literal's body (between the quotes).
fn decode_escapes(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let decoded = match e {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'v' => '\u{b}',
            'e' | 'E' => '\u{1b}',
            '0'..='7' => {
                let mut v = e as u32 - '0' as u32;
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&d @ '0'..='7') => {
                            v = v * 8 + (d as u32 - '0' as u32);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                char::from_u32(v).unwrap_or('\u{fffd}')
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'u' => 4,
                    'U' => 8,
                    _ => usize::MAX,
                };
                let mut v: u32 = 0;
                let mut n = 0;
                while n < max {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            v = v.saturating_mul(16).saturating_add(d);
                            chars.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                char::from_u32(v).unwrap_or('\u{fffd}')
            }
            other => other,
        };
        out.push(decoded);
    }
    out
}

/// Blanks that may stand between a backslash and the line end of a splice.
fn is_splice_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | 0x0b | 0x0c | 0)
}

/// Length of the line splice starting at `p`, 0 if there is none.
pub(crate) fn splice_len(b: &[u8], p: usize) -> usize {
    if b.get(p) != Some(&b'\\') {
        return 0;
    }
    let mut q = p + 1;
    while b.get(q).is_some_and(|&c| is_splice_blank(c)) {
        q += 1;
    }
    match b.get(q) {
        Some(b'\n') => q + 1 - p,
        Some(b'\r') if b.get(q + 1) == Some(&b'\n') => q + 2 - p,
        Some(b'\r') => q + 1 - p,
        _ => 0,
    }
}

/// The position of the first line end at or after `p` that is not part of
/// a line splice (or the end of `b`).
fn line_end_from(b: &[u8], p: usize) -> usize {
    let mut i = p;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' || c == b'\r' {
            // A `\n` after `\r` was judged with the `\r`.
            if !(c == b'\n' && i > 0 && b[i - 1] == b'\r') {
                let mut k = i;
                while k > p && is_splice_blank(b[k - 1]) {
                    k -= 1;
                }
                if !(k > p && b[k - 1] == b'\\') {
                    return i;
                }
            }
        }
        i += 1;
    }
    b.len()
}

/// `p` moved past any line splices.
fn skip_splices_from(b: &[u8], mut p: usize) -> usize {
    loop {
        let n = splice_len(b, p);
        if n == 0 {
            return p;
        }
        p += n;
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_ident_char(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

/// A character allowed in a raw string delimiter (the basic source
/// character set except space, parentheses, backslash and control chars).
fn is_raw_delimiter_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_{}[]#<>%:;.?*+-/^&|~!=,\"'".contains(&c)
}

/// The tokenizer as an iterator; [`tokenize_with`] collects it.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    /// Current position; always past any line splices.
    pos: usize,
    /// End of the last consumed character (before any splice after it).
    end: usize,
    line: u32,
    line_start: bool,
    /// Inside a directive line (a raw string cannot span lines there).
    in_directive: bool,
    /// The end of the current directive line, once looked for (valid for
    /// positions up to it): found once per line, not once per raw string.
    directive_end: Option<usize>,
    options: LexOptions,
    /// Bytes looked at so far (for the linear-cost tests).
    work: u64,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str, options: LexOptions) -> Self {
        let b = src.as_bytes();
        let start = if b.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        let mut lexer = Lexer {
            src,
            b,
            pos: start,
            end: start,
            line: 1,
            line_start: true,
            in_directive: false,
            directive_end: None,
            options,
            work: 0,
        };
        lexer.skip_splices();
        lexer
    }

    fn skip_splices(&mut self) {
        loop {
            let n = splice_len(self.b, self.pos);
            if n == 0 {
                return;
            }
            self.pos += n;
            self.line = self.line.saturating_add(1);
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// The byte after the current one (one ASCII character further),
    /// looking through splices.
    fn peek_next(&self) -> Option<u8> {
        let p = skip_splices_from(self.b, self.pos + 1);
        self.b.get(p).copied()
    }

    /// Bytes looked at so far by this lexer: stays within a small multiple
    /// of the input's length whatever the input (tested).
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Consumes one byte (and any splices after it).
    fn bump(&mut self) {
        self.work += 1;
        let b = self.b;
        let c = b[self.pos];
        if c == b'\n' || (c == b'\r' && b.get(self.pos + 1) != Some(&b'\n')) {
            self.line = self.line.saturating_add(1);
        }
        self.pos += 1;
        self.end = self.pos;
        self.skip_splices();
    }

    fn block_comment(&mut self) {
        self.bump();
        self.bump();
        while let Some(c) = self.peek() {
            if c == b'*' && self.peek_next() == Some(b'/') {
                self.bump();
                self.bump();
                return;
            }
            self.bump();
        }
    }

    fn line_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'\n' || c == b'\r' {
                return;
            }
            self.bump();
        }
    }

    fn number(&mut self) {
        self.bump();
        while let Some(c) = self.peek() {
            if matches!(c, b'e' | b'E' | b'p' | b'P')
                && matches!(self.peek_next(), Some(b'+' | b'-'))
            {
                self.bump();
                self.bump();
            } else if is_ident_char(c) || c == b'.' {
                self.bump();
            } else if c == b'\'' && self.options.digit_separators {
                // gcc takes any run of separators, then gives back those not
                // followed by a digit, letter or underscore.
                let mut p = self.pos;
                while self.b.get(p) == Some(&b'\'') {
                    p = skip_splices_from(self.b, p + 1);
                }
                if !self
                    .b
                    .get(p)
                    .is_some_and(|&d| d.is_ascii_alphanumeric() || d == b'_')
                {
                    return;
                }
                while self.pos < p {
                    self.bump();
                }
            } else {
                return;
            }
        }
    }

    /// An ordinary string or character literal; the current byte is the
    /// opening quote.
    fn literal(&mut self) -> TokenKind {
        let quote = self.b[self.pos];
        self.bump();
        let mut chars = 0usize;
        let mut terminated = false;
        while let Some(c) = self.peek() {
            if c == quote {
                self.bump();
                terminated = true;
                break;
            }
            if c == b'\n' || c == b'\r' {
                break;
            }
            self.bump();
            if c == b'\\' {
                chars += 1;
                match self.peek() {
                    None | Some(b'\n' | b'\r') => {}
                    Some(b'0'..=b'7') => {
                        self.bump();
                        for _ in 0..2 {
                            if matches!(self.peek(), Some(b'0'..=b'7')) {
                                self.bump();
                            } else {
                                break;
                            }
                        }
                    }
                    Some(e @ (b'x' | b'u' | b'U')) => {
                        self.bump();
                        let max = match e {
                            b'u' => 4,
                            b'U' => 8,
                            _ => usize::MAX,
                        };
                        let mut n = 0;
                        while n < max && self.peek().is_some_and(|d| d.is_ascii_hexdigit()) {
                            self.bump();
                            n += 1;
                        }
                    }
                    // Any other escaped character (a multi-byte one leaves
                    // its continuation bytes, which are not counted).
                    Some(_) => self.bump(),
                }
            } else if c & 0xC0 != 0x80 {
                chars += 1;
            }
        }
        if quote == b'"' {
            TokenKind::String { chars, terminated }
        } else {
            TokenKind::Char { chars, terminated }
        }
    }

    /// A raw string literal as gcc lexes it; the current byte is the opening
    /// quote. Splices are not undone inside (gcc reverts them there).
    fn raw_string(&mut self) -> TokenKind {
        let open = self.pos;
        // In a directive line, gcc ends a raw string at the line end.
        let b = if self.in_directive {
            let end = match self.directive_end {
                Some(end) if open <= end => end,
                _ => {
                    let end = line_end_from(self.b, open);
                    self.work += (end - open) as u64;
                    self.directive_end = Some(end);
                    end
                }
            };
            &self.b[..end]
        } else {
            self.b
        };
        let delim_start = open + 1;
        let mut i = delim_start;
        let (end, content, terminated) = loop {
            match b.get(i) {
                None => break (b.len(), delim_start..b.len(), false),
                Some(b'(') => {
                    // Valid delimiter: look for `)delim"`.
                    let delim = &b[delim_start..i];
                    let body = i + 1;
                    let mut j = body;
                    break loop {
                        match b[j..].iter().position(|&c| c == b')') {
                            None => break (b.len(), body..b.len(), false),
                            Some(k) => {
                                self.work += k as u64 + delim.len() as u64 + 1;
                                let close = j + k;
                                let after = &b[close + 1..];
                                if after.starts_with(delim) && after.get(delim.len()) == Some(&b'"')
                                {
                                    break (close + delim.len() + 2, body..close, true);
                                }
                                j = close + 1;
                            }
                        }
                    };
                }
                Some(&c) if i - delim_start < 16 && is_raw_delimiter_char(c) => i += 1,
                Some(_) => {
                    // Invalid delimiter: gcc goes on to the next quote.
                    self.work += (i - delim_start) as u64;
                    match b[i + 1..].iter().position(|&c| c == b'"') {
                        None => break (b.len(), delim_start..b.len(), false),
                        Some(k) => break (i + 1 + k + 1, delim_start..i + 1 + k, true),
                    }
                }
            }
        };
        self.work += (end - open) as u64;
        let chars = b[content].iter().filter(|&&c| c & 0xC0 != 0x80).count();
        self.line = self
            .line
            .saturating_add(count_line_ends(&self.src[open..end]));
        self.pos = end;
        self.end = end;
        self.skip_splices();
        TokenKind::String { chars, terminated }
    }

    /// An identifier, or a prefixed literal if the identifier is a prefix
    /// directly followed by a quote.
    fn identifier(&mut self, start: usize) -> TokenKind {
        while self.peek().is_some_and(is_ident_char) {
            self.bump();
        }
        let quote = self.peek();
        if matches!(quote, Some(b'"' | b'\'')) {
            let prefix = remove_splices(&self.src[start..self.end]);
            match &*prefix {
                "L" | "u" | "U" | "u8" => return self.literal(),
                "R" | "LR" | "uR" | "UR" | "u8R"
                    if self.options.raw_strings && quote == Some(b'"') =>
                {
                    return self.raw_string()
                }
                _ => {}
            }
        }
        TokenKind::Identifier
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            match self.peek()? {
                b' ' | b'\t' | 0x0b | 0x0c | 0 => self.bump(),
                b'\n' | b'\r' => {
                    self.bump();
                    self.line_start = true;
                    self.in_directive = false;
                    self.directive_end = None;
                }
                _ => break,
            }
        }
        let start = self.pos;
        let line = self.line;
        let c = self.b[start];
        let kind = match c {
            b'/' if self.peek_next() == Some(b'*') => {
                self.block_comment();
                TokenKind::Comment { block: true }
            }
            b'/' if self.peek_next() == Some(b'/') => {
                self.line_comment();
                TokenKind::Comment { block: false }
            }
            b'0'..=b'9' => {
                self.number();
                TokenKind::Number
            }
            b'.' if self.peek_next().is_some_and(|d| d.is_ascii_digit()) => {
                self.number();
                TokenKind::Number
            }
            b'"' | b'\'' => self.literal(),
            c if is_ident_start(c) => self.identifier(start),
            _ => {
                self.bump();
                TokenKind::Punct
            }
        };
        let at_line_start = self.line_start;
        if !matches!(kind, TokenKind::Comment { .. }) {
            self.line_start = false;
        }
        if at_line_start
            && kind == TokenKind::Punct
            && (c == b'#' || (c == b'%' && self.peek() == Some(b':')))
        {
            self.in_directive = true;
        }
        Some(Token {
            kind,
            text: &self.src[start..self.end],
            line,
            at_line_start,
        })
    }
}

#[cfg(test)]
mod tests;
