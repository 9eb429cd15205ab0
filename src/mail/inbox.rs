//! Taking mail in: the raw bytes are stored in the inbox table before
//! anything else happens (with their origin, IMAP UIDVALIDITY/UID and
//! Message-ID). The same mail delivered twice, or fetched again after a
//! crash, is stored once (same Message-ID *and* same content, or same UID),
//! so it is answered once; two different mails that share a Message-ID are
//! two mails. The content is the mail without the trace header fields each
//! delivery adds (`Received`, `Return-Path`, `Delivered-To`, ...), so a
//! mail that reaches us twice by different paths is still one.
//!
//! A mail larger than the configured cap is never kept whole: files are
//! read at most cap + 1 bytes far (the rest is only counted), and what is
//! stored is the mail's header part with its real size, enough to answer
//! its sender. Deliberately not here: deciding what a mail is or whether to
//! answer it (see `process`).

use std::io::{self, Read};
use std::path::Path;

use chrono::{DateTime, Utc};
use mail_parser::MessageParser;

use crate::store::mail::{insert_inbox, Arrival};
use crate::store::StoreError;

/// The header part of a mail is looked for within this many bytes.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// A mail as read from its source, within the size cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// The whole mail, or only its header part when it is too large.
    pub bytes: Vec<u8>,
    /// `Some(size)`: the mail had `size` bytes, more than the cap, and
    /// `bytes` is its header part.
    pub full_size: Option<u64>,
}

impl Capped {
    /// Caps a mail already in memory (IMAP, tests).
    pub fn from_bytes(raw: &[u8], cap: usize) -> Capped {
        if raw.len() <= cap {
            Capped {
                bytes: raw.to_vec(),
                full_size: None,
            }
        } else {
            Capped {
                bytes: header_part(raw).to_vec(),
                full_size: Some(raw.len() as u64),
            }
        }
    }

    /// The mail's real size, whole or not.
    pub fn size(&self) -> u64 {
        self.full_size.unwrap_or(self.bytes.len() as u64)
    }
}

/// Reads a mail file, keeping at most `cap` bytes: a larger file is read
/// only cap + 1 bytes far into memory (the rest is counted, not kept) and
/// comes back as its header part with its size.
pub fn read_capped(path: &Path, cap: usize) -> io::Result<Capped> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    (&mut file).take(cap as u64 + 1).read_to_end(&mut buf)?;
    if buf.len() <= cap {
        return Ok(Capped {
            bytes: buf,
            full_size: None,
        });
    }
    let rest = io::copy(&mut file, &mut io::sink())?;
    Ok(Capped {
        bytes: header_part(&buf).to_vec(),
        full_size: Some(buf.len() as u64 + rest),
    })
}

/// The header part of a raw mail, up to and including the blank line that
/// ends it (at most [`MAX_HEADER_BYTES`]).
pub fn header_part(raw: &[u8]) -> &[u8] {
    let cap = raw.len().min(MAX_HEADER_BYTES);
    let head = &raw[..cap];
    let end = head
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
        .into_iter()
        .chain(head.windows(2).position(|w| w == b"\n\n").map(|p| p + 2))
        .min()
        .unwrap_or(cap);
    &raw[..end]
}

/// The Message-ID of a raw mail, from its header (bounded work).
pub fn message_id_of(raw: &[u8]) -> Option<String> {
    let msg = MessageParser::new().parse_headers(header_part(raw))?;
    msg.message_id()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Header fields added on the way (by each delivery), not part of what the
/// sender wrote: left out of [`content_sha256`].
pub const TRACE_FIELDS: &[&str] = &[
    "received",
    "return-path",
    "delivered-to",
    "x-original-to",
    "envelope-to",
    "x-envelope-from",
    "x-envelope-to",
    "x-delivered-to",
    "x-rcpt-to",
    "received-spf",
    "authentication-results",
    "arc-seal",
    "arc-message-signature",
    "arc-authentication-results",
    "x-uid",
    "status",
    "x-status",
    "x-keywords",
];

fn is_trace_field(line: &[u8]) -> bool {
    if line.starts_with(b"From ") {
        return true; // an mbox separator line
    }
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return false;
    };
    let name = String::from_utf8_lossy(&line[..colon])
        .trim()
        .to_ascii_lowercase();
    TRACE_FIELDS.contains(&name.as_str()) || name.starts_with("x-spam-")
}

/// The SHA-256 (hex) of what the sender wrote: every header field except
/// the [`TRACE_FIELDS`], and the body, with line ends taken as LF. One
/// linear pass.
pub fn content_sha256(raw: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut in_header = true;
    let mut skipping = false;
    for line in raw.split_inclusive(|&b| b == b'\n') {
        let bare = line.strip_suffix(b"\n").unwrap_or(line);
        let bare = bare.strip_suffix(b"\r").unwrap_or(bare);
        if in_header {
            if bare.is_empty() {
                in_header = false;
            } else if bare[0] == b' ' || bare[0] == b'\t' {
                // A continuation line belongs to the field before it.
                if skipping {
                    continue;
                }
            } else {
                skipping = is_trace_field(bare);
                if skipping {
                    continue;
                }
            }
        }
        h.update(bare);
        if line.ends_with(b"\n") {
            h.update(b"\n");
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Stores one raw mail, keeping at most `cap` bytes of it (a larger mail is
/// stored as its header part and its size). `Ok(None)`: it was stored
/// before (a duplicate).
pub fn take_in(
    conn: &rusqlite::Connection,
    origin: &str,
    imap: Option<(u32, u32)>,
    raw: &[u8],
    cap: usize,
    now: DateTime<Utc>,
) -> Result<Option<i64>, StoreError> {
    take_in_capped(conn, origin, imap, &Capped::from_bytes(raw, cap), now)
}

/// The keys a mail is known by: its Message-ID and its content's SHA-256
/// (with its real size, for a mail over the cap).
pub fn arrival_keys(mail: &Capped) -> (Option<String>, String) {
    (message_id_of(&mail.bytes), content_key(mail))
}

/// A mail's content key: its content's SHA-256 (with its real size, for a
/// mail over the cap). Reads the bytes as lines, never parses them: the
/// key of a mail the server does not parse (`mail::probe`).
pub fn content_key(mail: &Capped) -> String {
    let content = content_sha256(&mail.bytes);
    match mail.full_size {
        Some(size) => format!("{content}+{size}"),
        None => content,
    }
}

/// Stores one mail read within its cap ([`read_capped`]), whoever sent it
/// (`knobeln ingest`, tests; the transports take mail in within the
/// strangers' budget, `admission`).
pub fn take_in_capped(
    conn: &rusqlite::Connection,
    origin: &str,
    imap: Option<(u32, u32)>,
    mail: &Capped,
    now: DateTime<Utc>,
) -> Result<Option<i64>, StoreError> {
    let (message_id, content) = arrival_keys(mail);
    insert_inbox(
        conn,
        &Arrival {
            origin,
            imap,
            message_id: message_id.as_deref(),
            raw: &mail.bytes,
            content_sha256: &content,
            full_size: mail.full_size,
        },
        now,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_are_read_from_the_header() {
        let raw = b"From: a@b.example\r\nMessage-ID: <x1@b.example>\r\nSubject: s\r\n\r\nbody\r\n";
        assert_eq!(message_id_of(raw).as_deref(), Some("x1@b.example"));
        assert_eq!(message_id_of(b"From: a@b.example\r\n\r\nno id\r\n"), None);
        assert_eq!(message_id_of(b""), None);
    }

    #[test]
    fn the_content_leaves_out_what_each_delivery_adds() {
        let a = b"Return-Path: <joe@x.example>\r\nReceived: from a\r\n  by b; Mon\r\nFrom: joe@x.example\r\nSubject: s\r\n\r\nbody\r\n";
        let b = b"Delivered-To: k@c.example\nReceived: from c\n\tby d; Tue\nFrom: joe@x.example\nSubject: s\n\nbody\n";
        assert_eq!(content_sha256(a), content_sha256(b));
        let c = b"From: joe@x.example\r\nSubject: s\r\n\r\nbody!\r\n";
        assert_ne!(content_sha256(a), content_sha256(c));
        // A trace-like line in the body counts.
        let d = b"From: joe@x.example\r\nSubject: s\r\n\r\nReceived: x\r\n";
        let e = b"From: joe@x.example\r\nSubject: s\r\n\r\n";
        assert_ne!(content_sha256(d), content_sha256(e));
    }

    #[test]
    fn a_mail_over_the_cap_keeps_only_its_header_part() {
        let mut raw = b"From: a@b.example\r\nSubject: big\r\n\r\n".to_vec();
        raw.extend(std::iter::repeat_n(b'x', 1000));
        let c = Capped::from_bytes(&raw, 100);
        assert_eq!(c.bytes, b"From: a@b.example\r\nSubject: big\r\n\r\n");
        assert_eq!(c.full_size, Some(raw.len() as u64));
        let c = Capped::from_bytes(&raw, 2000);
        assert_eq!((c.bytes.len(), c.full_size), (raw.len(), None));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.eml");
        std::fs::write(&p, &raw).unwrap();
        assert_eq!(read_capped(&p, 100).unwrap(), Capped::from_bytes(&raw, 100));
        assert_eq!(read_capped(&p, 5000).unwrap().bytes, raw);
    }
}
