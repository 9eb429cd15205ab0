//! How long a processed mail keeps its row (schema 0030):
//! `limits.keep_inbox_days` (90) days after its processing, then the row
//! is deleted, key and all. Until then it is what exactly-once needs: its
//! de-duplication key ([`super::dedupe_key`]) makes the same mail
//! delivered again one mail (a mailer's retry, a second path, the IMAP
//! mailbox read again after its UIDVALIDITY changed, which holds a mail
//! at most `imap.keep_days` + 1 days: the config refuses a
//! `keep_inbox_days` not longer than that, and one under 7 days:
//! `config::MIN_KEEP_INBOX_DAYS`). After, what delivers it again (a
//! sender sending the same bytes again, a mailbox kept longer by hand and
//! read again from its start) brings a new mail, processed as one.
//!
//! Only a mail done or ignored: a mail waiting (`new`) is still to be
//! processed, a mail set aside (`failed`) waits whole for the organizer.
//! The replies that named the mail (`outbox.inbox_id`) and a registration
//! it made (`registrations.inbox_id`) keep their rows, naming no mail.
//!
//! Not here: when a pass runs and its transactions
//! (`mail::process::forget_processed_mails`).

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};

use crate::store::{timestamp, Result};

/// The most rows one batch of [`forget_processed_due`] deletes (one
/// transaction of the pass).
pub const PROCESSED_ROWS_BATCH: usize = 500;

/// The query of the rows due: mails done or ignored (the partial index
/// `inbox_processed`, whose condition it repeats) processed at or before
/// `?1`, oldest processed first.
pub(crate) const PROCESSED_DUE_SQL: &str = "SELECT id FROM inbox INDEXED BY inbox_processed
     WHERE state IN ('done', 'ignored') AND processed_at <= ?1
     ORDER BY processed_at LIMIT ?2";

/// Deletes at most `limit` mails done or ignored at or before `due` (the
/// pass's clock less `keep_inbox_days`), oldest processed first; the
/// replies and the registration that named one keep their rows with
/// `inbox_id` NULL. Reads only the rows due (an index of the processed
/// rows, by `processed_at`; the replies by an index of `inbox_id`).
/// Returns how many were deleted: fewer than `limit` when no more are
/// due. The caller's transaction makes a batch whole or nothing.
pub fn forget_processed_due(conn: &Connection, due: DateTime<Utc>, limit: usize) -> Result<usize> {
    let ids: Vec<i64> = conn
        .prepare_cached(PROCESSED_DUE_SQL)?
        .query_map(params![timestamp(due), limit as i64], |r| r.get(0))?
        .collect::<std::result::Result<_, _>>()?;
    if ids.is_empty() {
        return Ok(0);
    }
    let list = serde_json::to_string(&ids).expect("a list of integers");
    // The registrations are one per team (no index of `inbox_id`): one
    // scan of them a batch.
    conn.prepare_cached(
        "UPDATE registrations SET inbox_id = NULL
          WHERE inbox_id IN (SELECT value FROM json_each(?1))",
    )?
    .execute([&list])?;
    for &id in &ids {
        conn.prepare_cached(
            "UPDATE outbox INDEXED BY outbox_inbox SET inbox_id = NULL WHERE inbox_id = ?1",
        )?
        .execute([id])?;
        conn.prepare_cached("DELETE FROM inbox WHERE id = ?1")?
            .execute([id])?;
    }
    Ok(ids.len())
}

#[cfg(test)]
mod tests;
