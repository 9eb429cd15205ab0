//! The strangers' daily budget's rows (schema 0031): a stranger's mail
//! taken in whole is charged to its folded sender and domain; past the
//! budget a stranger's mail is kept as its de-duplication key only.
//! Which mail is a stranger's and what the budget is: `mail::admission`.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};

use super::{dedupe_key, kept_message_id, Arrival};
use crate::store::{timestamp, Result};

/// Whose share of the strangers' budget a count reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrangerShare<'a> {
    /// Every stranger's mail.
    Everyone,
    /// The mails of one folded sender address.
    Sender(&'a str),
    /// The mails of every sender at one domain.
    Domain(&'a str),
}

/// How many strangers' mails were taken in whole, charged to `share`,
/// since `since` (one of the partial indexes of 0031: only charged rows
/// of that window are read).
pub fn strangers_taken_since(
    conn: &Connection,
    share: StrangerShare<'_>,
    since: DateTime<Utc>,
) -> Result<u32> {
    let since = timestamp(since);
    let n = match share {
        StrangerShare::Everyone => conn.query_row(
            "SELECT COUNT(*) FROM inbox WHERE stranger_sender IS NOT NULL AND received_at >= ?1",
            [since],
            |r| r.get(0),
        )?,
        StrangerShare::Sender(s) => conn.query_row(
            "SELECT COUNT(*) FROM inbox
              WHERE stranger_sender IS NOT NULL AND stranger_sender = ?1 AND received_at >= ?2",
            params![s, since],
            |r| r.get(0),
        )?,
        StrangerShare::Domain(d) => conn.query_row(
            "SELECT COUNT(*) FROM inbox
              WHERE stranger_sender IS NOT NULL AND stranger_domain = ?1 AND received_at >= ?2",
            params![d, since],
            |r| r.get(0),
        )?,
    };
    Ok(n)
}

/// Charges the stored mail `id` to the strangers' budget of `sender` and
/// `domain` (on the transaction that stored it).
pub fn charge_stranger(conn: &Connection, id: i64, sender: &str, domain: &str) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET stranger_sender = ?2, stranger_domain = ?3 WHERE id = ?1",
        params![id, sender, domain],
    )?;
    Ok(())
}

/// Stores a mail as its de-duplication key only: no bytes of it, its real
/// size, `ignored` with `outcome` and processed at `now` (so its row goes
/// `keep_inbox_days` later, as every processed mail's). Returns its id, or
/// `None` when the same mail (or UID) was stored before, whole or not.
pub fn insert_inbox_key_only(
    conn: &Connection,
    a: &Arrival<'_>,
    size: u64,
    outcome: &str,
    now: DateTime<Utc>,
) -> Result<Option<i64>> {
    let at = timestamp(now);
    let n = conn.execute(
        "INSERT OR IGNORE INTO inbox (origin, uidvalidity, uid, message_id, dedupe_key, raw, received_at,
                                      state, outcome, processed_at, full_size)
         VALUES (?1, ?2, ?3, ?4, ?5, x'', ?6, 'ignored', ?7, ?6, ?8)",
        params![
            a.origin,
            a.imap.map(|x| x.0),
            a.imap.map(|x| x.1),
            a.message_id.map(kept_message_id),
            dedupe_key(a.message_id, a.content_sha256),
            at,
            outcome,
            i64::try_from(size).unwrap_or(i64::MAX),
        ],
    )?;
    Ok((n == 1).then(|| conn.last_insert_rowid()))
}
