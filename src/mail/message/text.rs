//! Plain-text helpers for mail bodies: LF line ends, `format=flowed`
//! undone ([`unflow`]), a signature cut off ([`cut_signature`]).
//!
//! Not here: anything about MIME or headers (`parse.rs`, `headers.rs`).

/// LF line ends (CRLF and lone CR become LF), no byte order mark.
pub(super) fn normalize_newlines(s: &str) -> String {
    let s = s.strip_prefix('\u{feff}').unwrap_or(s);
    s.replace("\r\n", "\n").replace('\r', "\n")
}

/// A `format=flowed` text (RFC 3676, what Thunderbird and Apple Mail send
/// by default) as its writer wrote it: a line ending in a space is
/// joined with the next (without that space with `delsp=yes`), a line's
/// stuffed leading space is removed; quoted lines and the signature line
/// stay as they are. A long registration line or source line the client
/// wrapped reaches the checks whole (issue 36). `text` has LF line ends.
pub fn unflow(text: &str, delsp: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split('\n').peekable();
    while let Some(raw) = lines.next() {
        if raw.starts_with('>') {
            out.push_str(raw);
        } else {
            let line = raw.strip_prefix(' ').unwrap_or(raw);
            let soft = line.ends_with(' ') && line != "-- " && lines.peek().is_some();
            if soft {
                out.push_str(if delsp { &line[..line.len() - 1] } else { line });
                continue;
            }
            out.push_str(line);
        }
        if lines.peek().is_some() {
            out.push('\n');
        }
    }
    out
}

/// Everything before the first line that is exactly `-- ` or `--` (the
/// signature delimiter). Expects LF line ends.
pub fn cut_signature(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        if bare == "-- " || bare == "--" {
            break;
        }
        out.push_str(line);
    }
    out
}
