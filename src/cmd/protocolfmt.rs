//! `knobeln protocolfmt [FILE]`: reads compact game protocols (a protocol
//! alone, or a whole mail as received, headers and all, with any number of
//! protocols, quoted or quoted-printable encoded) from FILE or stdin and
//! prints them in the full, one-line-per-throw format, as the kit's
//! `protocolfmt.c` does.
//!
//! The input is read in up to three ways, in this order: the decoded text
//! parts of the mail (when the input starts like a mail: MIME, base64 and
//! quoted-printable are undone by `mail-parser`), the whole text with
//! quoted-printable undone (when it says `Content-Transfer-Encoding:
//! quoted-printable`), and the whole text as it is. The first reading that
//! holds protocols, none of them damaged, is printed. Exit 1 with the
//! reason when no reading does: no protocol at all, or the first reading's
//! error (a truncated protocol, a wrong checksum, …).

use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use mail_parser::{Message, MessageParser, PartType};

use knobeln::protocol::{decode_all, format_all, GameProtocol, ProtocolError};

#[derive(Args, Debug)]
pub struct Protocolfmt {
    /// A protocol, or a whole mail with protocols (default: stdin).
    pub file: Option<PathBuf>,
}

impl Protocolfmt {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let (raw, name) = match &self.file {
            Some(f) => (
                std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?,
                f.display().to_string(),
            ),
            None => {
                let mut buf = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut buf)
                    .context("cannot read stdin")?;
                (buf, "stdin".to_string())
            }
        };
        match find_protocols(&raw) {
            Ok(ps) => {
                out!("{}", format_all(&ps));
                Ok(ExitCode::SUCCESS)
            }
            Err(ProtocolError::NotFound) => {
                eprintln!("knobeln protocolfmt: {name}: {}", ProtocolError::NotFound);
                Ok(ExitCode::from(1))
            }
            Err(e) => {
                eprintln!("knobeln protocolfmt: {name}: damaged protocol: {e}");
                Ok(ExitCode::from(1))
            }
        }
    }
}

/// Every protocol of the input (see the module documentation for the
/// readings tried); never an empty list.
pub fn find_protocols(raw: &[u8]) -> Result<Vec<GameProtocol>, ProtocolError> {
    let text = String::from_utf8_lossy(raw);
    let mut readings: Vec<String> = Vec::new();
    if looks_like_mail(&text) {
        if let Some(body) = mail_text(raw) {
            readings.push(body);
        }
    }
    if text
        .to_ascii_lowercase()
        .contains("content-transfer-encoding: quoted-printable")
    {
        readings.push(String::from_utf8_lossy(&qp_decode(raw)).into_owned());
    }
    readings.push(text.into_owned());
    let mut first_error = None;
    for r in &readings {
        match decode_all(r) {
            Ok(ps) if !ps.is_empty() => return Ok(ps),
            Ok(_) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or(ProtocolError::NotFound))
}

/// The first line is a header (`Name: value`) or an mbox `From ` line.
fn looks_like_mail(text: &str) -> bool {
    let Some(first) = text.lines().next() else {
        return false;
    };
    if first.starts_with("From ") {
        return true;
    }
    match first.split_once(':') {
        Some((name, _)) => {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        }
        None => false,
    }
}

/// The decoded text parts of a mail (nested mails included), one after the
/// other; `None` if the mail parser finds none (or gives up).
fn mail_text(raw: &[u8]) -> Option<String> {
    let msg = catch_unwind(AssertUnwindSafe(|| MessageParser::default().parse(raw))).ok()??;
    let mut out = String::new();
    collect_text(&msg, &mut out, 0);
    (!out.is_empty()).then_some(out)
}

fn collect_text(msg: &Message<'_>, out: &mut String, depth: usize) {
    for part in &msg.parts {
        match &part.body {
            PartType::Text(t) => {
                out.push_str(t);
                out.push('\n');
            }
            PartType::Message(m) if depth < 8 => collect_text(m, out, depth + 1),
            _ => {}
        }
    }
}

/// Undoes quoted-printable on a whole text: `=HH` is a byte, `=` at the end
/// of a line a soft line break; anything else stays as it is. Quoting is
/// understood: when a soft break is followed by a line with the same quote
/// prefix (`> `, `| `), the prefix is dropped with the break.
pub fn qp_decode(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let lines: Vec<&[u8]> = raw.split(|&b| b == b'\n').collect();
    let mut prefix: &[u8] = &[];
    let mut continued = false;
    for (i, &line) in lines.iter().enumerate() {
        let mut line = line;
        if continued {
            if !prefix.is_empty() && line.starts_with(prefix) {
                line = &line[prefix.len()..];
            }
        } else {
            prefix = quote_prefix(line);
        }
        let mut end = line.len();
        while end > 0 && matches!(line[end - 1], b' ' | b'\t' | b'\r') {
            end -= 1;
        }
        continued = end > 0 && line[end - 1] == b'=';
        if continued {
            unescape(&line[..end - 1], &mut out);
        } else {
            unescape(line, &mut out);
            if i + 1 < lines.len() {
                out.push(b'\n');
            }
        }
    }
    out
}

/// The quoting in front of a line (`>`, `|` and the blanks among them);
/// empty for a line that is not quoted.
fn quote_prefix(line: &[u8]) -> &[u8] {
    let n = line
        .iter()
        .take_while(|&&b| matches!(b, b'>' | b'|' | b' ' | b'\t'))
        .count();
    let p = &line[..n];
    if p.iter().any(|&b| b == b'>' || b == b'|') {
        p
    } else {
        &[]
    }
}

/// `=HH` as a byte; any other `=` as it is.
fn unescape(s: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < s.len() {
        let hex = (s[i] == b'=')
            .then(|| s.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) => {
                out.push(v);
                i += 3;
            }
            None => {
                out.push(s[i]);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qp_decodes_escapes_and_soft_breaks() {
        assert_eq!(qp_decode(b"a=3Db=\r\nc=\nd =x=4"), b"a=bcd =x=4");
        assert_eq!(qp_decode(b"caf=C3=A9  =  \n!"), "café  !".as_bytes());
        assert_eq!(
            qp_decode(b"> ab=\n> cd\n> e=\r\n>  f\n"),
            b"> abcd\n> e f\n"
        );
        assert_eq!(qp_decode(b"x=\n"), b"x");
    }

    #[test]
    fn mail_detection() {
        assert!(looks_like_mail("From: a@b\n\nhi"));
        assert!(looks_like_mail("From a@b Sat May 14 1994\n"));
        assert!(looks_like_mail("Return-Path: <a@b>\n"));
        assert!(!looks_like_mail("KNOBELN-PROTOCOL 1\n"));
        assert!(!looks_like_mail("a b: c\n"));
        assert!(!looks_like_mail(""));
    }
}
