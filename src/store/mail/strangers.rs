//! The strangers' daily budget's rows (schema 0031): a stranger's mail
//! taken in whole is charged to its folded sender and domain; past the
//! budget a stranger's mail is kept as its de-duplication key only
//! (`insert_inbox_key_only`, beside `insert_inbox` in `store/mail.rs`).
//! A mail that only claims a registered team's mailbox is charged to that
//! mailbox's share instead (`claimed_mailbox`), and a mail proven by a
//! team's string to that team's share (`proven_team`, schema 0033); the
//! mail proven by a one-time secret (a confirmation code, a pause token)
//! is marked with it (`proven_once`, schema 0034): no other mail is proven
//! by it while that one waits. The
//! key rows themselves are marked (`kept_as_key`, schema 0032) and
//! bounded: counted over 24 hours, deleted [`KEY_ROW_DAYS`] after they
//! came; past their bound a mail is only counted, one row a day
//! (`inbox_unkept`).
//! Which mail is a stranger's and what the budget is: `mail::admission`.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};

use crate::store::{timestamp, Result};
use crate::tournament::TeamId;

/// Whose share of the strangers' budget a count reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrangerShare<'a> {
    /// Every stranger's mail.
    Everyone,
    /// The mails of one folded sender address.
    Sender(&'a str),
    /// The mails of every sender at one domain.
    Domain(&'a str),
    /// The mails that only claim one registered team's mailbox (a share
    /// of its own, apart from the strangers': neither uses up the other).
    ClaimedMailbox(&'a str),
    /// The mails proven by one team's string (a share of the team's own,
    /// which only the string spends).
    Team(TeamId),
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
    // Each filter names its partial index's condition, so that the count
    // reads only the charged rows of that index.
    let (filter, key): (_, Option<&dyn rusqlite::ToSql>) = match &share {
        StrangerShare::Everyone => ("stranger_sender IS NOT NULL", None),
        StrangerShare::Sender(s) => (
            "stranger_sender IS NOT NULL AND stranger_sender = ?2",
            Some(s),
        ),
        StrangerShare::Domain(d) => (
            "stranger_sender IS NOT NULL AND stranger_domain = ?2",
            Some(d),
        ),
        StrangerShare::ClaimedMailbox(m) => (
            "claimed_mailbox IS NOT NULL AND claimed_mailbox = ?2",
            Some(m),
        ),
        StrangerShare::Team(t) => ("proven_team IS NOT NULL AND proven_team = ?2", Some(&t.0)),
    };
    let sql = format!("SELECT COUNT(*) FROM inbox WHERE {filter} AND received_at >= ?1");
    let mut st = conn.prepare_cached(&sql)?;
    let n = match key {
        None => st.query_row([&since], |r| r.get(0))?,
        Some(k) => st.query_row(params![since, k], |r| r.get(0))?,
    };
    Ok(n)
}

/// Charges the stored mail `id`, which only claims the registered mailbox
/// `mailbox`, to that mailbox's share (on the transaction that stored it).
pub fn charge_claimed(conn: &Connection, id: i64, mailbox: &str) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET claimed_mailbox = ?2 WHERE id = ?1",
        params![id, mailbox],
    )?;
    Ok(())
}

/// Charges the stored mail `id`, proven by the string of `team`, to that
/// team's share (on the transaction that stored it).
pub fn charge_team(conn: &Connection, id: i64, team: TeamId) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET proven_team = ?2 WHERE id = ?1",
        params![id, team.0],
    )?;
    Ok(())
}

/// Marks the stored mail `id` as proven by the one-time secret `key` (a
/// confirmation code's SHA-256, or a round's pause token: `rsm:T:R`), on
/// the transaction that stored it.
pub fn mark_one_time(conn: &Connection, id: i64, key: &str) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET proven_once = ?2 WHERE id = ?1",
        params![id, key],
    )?;
    Ok(())
}

/// Whether a mail proven by the one-time secret `key` waits to be
/// processed (its secret not spent yet): then no other mail is proven by
/// it. One look-up of the partial index of 0034.
pub fn one_time_waiting(conn: &Connection, key: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM inbox
              WHERE proven_once IS NOT NULL AND proven_once = ?1 AND state = 'new')",
        )?
        .query_row([key], |r| r.get(0))?)
}

/// Whether a mail proven by the one-time secret `key` was ever taken in
/// (whatever became of it): a confirmation code proves no second mail
/// (red team E13). One look-up of the partial index of 0034.
pub fn one_time_ever_proven(conn: &Connection, key: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM inbox
              WHERE proven_once IS NOT NULL AND proven_once = ?1)",
        )?
        .query_row([key], |r| r.get(0))?)
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

/// How many days a key row of a mail past its budget is kept (less than
/// `keep_inbox_days`): it only has to outlive a mailer's retries of the
/// same mail (Postfix's `maximal_queue_lifetime`, 5 days). The mail was
/// never processed, so the same mail taken again after its key is gone is
/// processed at most once: nothing twice.
pub const KEY_ROW_DAYS: i64 = 7;

/// How many mails were kept as their keys only since `since` (the partial
/// index of 0032: only key rows of that window are read).
pub fn keys_kept_since(conn: &Connection, since: DateTime<Utc>) -> Result<u32> {
    Ok(conn
        .prepare_cached(
            "SELECT COUNT(*) FROM inbox INDEXED BY inbox_keys
             WHERE kept_as_key IS NOT NULL AND received_at >= ?1",
        )?
        .query_row([timestamp(since)], |r| r.get(0))?)
}

/// Counts a mail of `bytes` that was not stored at all (past the key
/// rows' bound) on the UTC day of `now`. Returns whether it was the first
/// such mail of that day.
pub fn count_unkept(conn: &Connection, bytes: u64, now: DateTime<Utc>) -> Result<bool> {
    let day = now.format("%Y-%m-%d").to_string();
    let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
    let first = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO inbox_unkept (day, mails, bytes) VALUES (?1, 1, ?2)",
        )?
        .execute(params![day, bytes])?
        == 1;
    if !first {
        conn.prepare_cached(
            "UPDATE inbox_unkept SET mails = mails + 1, bytes = min(bytes + ?2, 9223372036854775807)
             WHERE day = ?1",
        )?
        .execute(params![day, bytes])?;
    }
    Ok(first)
}

/// The mails not stored at all since the UTC day of `since`: (mails,
/// bytes).
pub fn unkept_since(conn: &Connection, since: DateTime<Utc>) -> Result<(u64, u64)> {
    let day = since.format("%Y-%m-%d").to_string();
    Ok(conn
        .prepare_cached(
            "SELECT COALESCE(SUM(mails), 0), COALESCE(SUM(bytes), 0) FROM inbox_unkept WHERE day >= ?1",
        )?
        .query_row([day], |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)))?)
}

/// Deletes at most `limit` key rows that came at or before `due` (the
/// pass's clock less [`KEY_ROW_DAYS`]), oldest first, and the unkept
/// counts of the days before `due`'s. A key row names no reply and no
/// registration (its mail was never processed). Returns how many key rows
/// were deleted: fewer than `limit` when no more are due.
pub fn forget_key_rows_due(conn: &Connection, due: DateTime<Utc>, limit: usize) -> Result<usize> {
    let n = conn
        .prepare_cached(
            "DELETE FROM inbox WHERE id IN (
                 SELECT id FROM inbox INDEXED BY inbox_keys
                 WHERE kept_as_key IS NOT NULL AND received_at <= ?1
                 ORDER BY received_at LIMIT ?2)",
        )?
        .execute(params![timestamp(due), limit as i64])?;
    conn.prepare_cached("DELETE FROM inbox_unkept WHERE day < ?1")?
        .execute([due.format("%Y-%m-%d").to_string()])?;
    Ok(n)
}
