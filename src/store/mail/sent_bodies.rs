//! How long a sent mail keeps its bytes (schema 0029): `keep_sent_days`
//! (30) days after it was sent, then only its row. The row keeps what
//! the reply caps count (its budget, sender, domain, team, kind and
//! creation time: [`super::replies`]), its keys (Message-ID, event key:
//! a contest event's mail is never queued twice), its state, recipients,
//! subject, times and whole size (`full_size`); its own bytes
//! are emptied, its shared parts forgotten, and a shared body no row
//! refers to any more deleted (`secure_delete` zeroes the pages).
//!
//! Only a sent mail: a queued one still goes out whole, a failed one
//! waits whole for `admin resend`. Nothing reads a sent mail's bytes
//! again but the one-time sealing of an older database's backlog, which
//! finds nothing to seal in an emptied row.
//!
//! Not here: when a pass runs and its transactions
//! (`mail::delivery::forget_sent_bodies`).

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};

use crate::store::{timestamp, Result};

/// The most rows one batch of [`forget_sent_bodies_due`] empties (one
/// transaction of the pass).
pub const SENT_BODIES_BATCH: usize = 500;

/// The query of the rows due: the sent rows whose bytes are still kept
/// (the partial index `outbox_sent_bodies`, whose condition it repeats;
/// `'sent'` is `OutState::Sent`),
/// sent at or before `?1`, oldest sent first. The index is named: left
/// to itself, SQLite takes the queue's index by state (`state = 'sent'`,
/// every mail sent) and sorts them all.
pub(crate) const SENT_BODIES_DUE_SQL: &str = "SELECT id FROM outbox INDEXED BY outbox_sent_bodies
     WHERE state = 'sent' AND body_removed_at IS NULL AND sent_at <= ?1
     ORDER BY sent_at LIMIT ?2";

/// Empties the bytes of at most `limit` sent mails sent at or before
/// `due` (the pass's clock less `keep_sent_days`), oldest sent first:
/// each keeps its row with its whole size in `full_size`, and
/// `body_removed_at` = `now`. Reads only the rows due (an index of the
/// sent rows whose bytes are kept, by `sent_at`). Returns how many were
/// emptied: fewer than `limit` when no more are due. The caller's
/// transaction makes a batch whole or nothing.
pub fn forget_sent_bodies_due(
    conn: &Connection,
    due: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: usize,
) -> Result<usize> {
    let ids: Vec<i64> = conn
        .prepare_cached(SENT_BODIES_DUE_SQL)?
        .query_map(params![timestamp(due), limit as i64], |r| r.get(0))?
        .collect::<std::result::Result<_, _>>()?;
    let now = timestamp(now);
    for &id in &ids {
        let shared: i64 = conn
            .prepare_cached(
                "SELECT coalesce(sum(length(CAST(b.bytes AS BLOB))), 0)
                   FROM outbox_parts p JOIN outbox_bodies b ON b.id = p.body_id
                  WHERE p.outbox_id = ?1",
            )?
            .query_row([id], |r| r.get(0))?;
        let bodies: Vec<i64> = conn
            .prepare_cached("SELECT DISTINCT body_id FROM outbox_parts WHERE outbox_id = ?1")?
            .query_map([id], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        conn.prepare_cached("DELETE FROM outbox_parts WHERE outbox_id = ?1")?
            .execute([id])?;
        for body in bodies {
            conn.prepare_cached(
                "DELETE FROM outbox_bodies WHERE id = ?1
                 AND NOT EXISTS (SELECT 1 FROM outbox_parts WHERE body_id = ?1)",
            )?
            .execute([body])?;
        }
        conn.prepare_cached(
            "UPDATE outbox SET full_size = length(CAST(raw AS BLOB)) + ?2,
                               raw = X'', body_removed_at = ?3
              WHERE id = ?1",
        )?
        .execute(params![id, shared, now])?;
    }
    Ok(ids.len())
}

#[cfg(test)]
mod tests;
