//! Taking mail in: the raw bytes are stored in the inbox table before
//! anything else happens (with their origin, IMAP UIDVALIDITY/UID and
//! Message-ID). The same mail delivered twice, or fetched again after a
//! crash, is stored once (same Message-ID, same bytes, or same UID), so it
//! is answered once.

use chrono::{DateTime, Utc};
use mail_parser::MessageParser;

use crate::store::mail::{insert_inbox, Arrival};
use crate::store::StoreError;

/// The Message-ID of a raw mail, from its header (bounded work).
pub fn message_id_of(raw: &[u8]) -> Option<String> {
    let cap = raw.len().min(256 * 1024);
    let msg = MessageParser::new().parse_headers(&raw[..cap])?;
    msg.message_id()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Stores one raw mail. `Ok(None)`: it was stored before (a duplicate).
pub fn take_in(
    conn: &rusqlite::Connection,
    origin: &str,
    imap: Option<(u32, u32)>,
    raw: &[u8],
    now: DateTime<Utc>,
) -> Result<Option<i64>, StoreError> {
    let message_id = message_id_of(raw);
    insert_inbox(
        conn,
        &Arrival {
            origin,
            imap,
            message_id: message_id.as_deref(),
            raw,
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
}
