//! What the organizer's digest reads and marks: outgoing mails given up on,
//! set-aside incoming mails, dropped mails, the transport sides' outages
//! and the causes that stopped the contest.
//!
//! Not here: composing the digest or deciding when it is due
//! (`mail::digest`).

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};

use crate::store::{timestamp, Result, StoreError};

/// An outgoing mail given up on and not yet in a digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreportedFailure {
    pub id: i64,
    pub kind: String,
    pub recipients: Vec<String>,
    pub subject: String,
    pub last_error: Option<String>,
}

/// Failed outgoing mails not reported in a digest yet, oldest first;
/// never mails of `except_kind` (a failed digest is not reported in the
/// next one: no loop).
pub fn unreported_failures(conn: &Connection, except_kind: &str) -> Result<Vec<UnreportedFailure>> {
    let mut st = conn.prepare(
        "SELECT id, kind, recipients, subject, last_error FROM outbox
         WHERE state = 'failed' AND reported_at IS NULL AND kind != ?1 ORDER BY id",
    )?;
    let rows = st.query_map([except_kind], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<String>>(4)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, kind, recipients, subject, last_error) = row?;
        out.push(UnreportedFailure {
            id,
            kind,
            recipients: serde_json::from_str(&recipients)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            subject,
            last_error,
        });
    }
    Ok(out)
}

/// A set-aside incoming mail not yet in a digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreportedSetAside {
    pub id: i64,
    pub origin: String,
    /// Why it was set aside (its outcome, else its last error).
    pub why: String,
    /// The mail's header part (at most 64 kB).
    pub head: Vec<u8>,
}

/// Set-aside incoming mails not reported in a digest yet, oldest first.
pub fn unreported_set_aside(conn: &Connection) -> Result<Vec<UnreportedSetAside>> {
    let mut st = conn.prepare(
        "SELECT id, origin, coalesce(outcome, last_error, ''), substr(raw, 1, 65536) FROM inbox
         WHERE state = 'failed' AND reported_at IS NULL ORDER BY id",
    )?;
    let rows = st.query_map([], |r| {
        Ok(UnreportedSetAside {
            id: r.get(0)?,
            origin: r.get(1)?,
            why: r.get(2)?,
            head: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Incoming mails dropped with an outcome starting with `outcome_prefix`
/// and not yet counted in a digest.
pub fn count_unreported_dropped(conn: &Connection, outcome_prefix: &str) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM inbox WHERE state = 'ignored' AND reported_at IS NULL
         AND substr(outcome, 1, length(?1)) = ?1",
        [outcome_prefix],
        |r| r.get(0),
    )?)
}

/// Marks what a digest reported (on the digest's transaction).
pub fn mark_reported(
    conn: &Connection,
    outbox_ids: &[i64],
    inbox_ids: &[i64],
    dropped_outcome_prefix: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    let at = timestamp(now);
    for id in outbox_ids {
        conn.execute(
            "UPDATE outbox SET reported_at = ?2 WHERE id = ?1",
            params![id, at],
        )?;
    }
    for id in inbox_ids {
        conn.execute(
            "UPDATE inbox SET reported_at = ?2 WHERE id = ?1",
            params![id, at],
        )?;
    }
    conn.execute(
        "UPDATE inbox SET reported_at = ?2 WHERE state = 'ignored' AND reported_at IS NULL
         AND substr(outcome, 1, length(?1)) = ?1",
        params![dropped_outcome_prefix, at],
    )?;
    Ok(())
}

/// When the last mail of `kind` was queued (the last digest).
pub fn last_queued_at(conn: &Connection, kind: &str) -> Result<Option<DateTime<Utc>>> {
    let s: Option<String> = conn.query_row(
        "SELECT max(created_at) FROM outbox WHERE kind = ?1 AND event_key IS NULL",
        [kind],
        |r| r.get(0),
    )?;
    s.map(|s| crate::store::admin::parse_timestamp(&s))
        .transpose()
}

/// A mail transport's outage as `serve` records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    pub side: String,
    pub since: String,
    pub cause: String,
    pub tries: i64,
}

/// Records that `side` failed with `cause` at `now` (the first failure
/// sets `since`; later ones update the cause and count).
pub fn record_outage(conn: &Connection, side: &str, cause: &str, now: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "INSERT INTO transport_outages (side, since, cause, tries) VALUES (?1, ?2, ?3, 1)
         ON CONFLICT(side) DO UPDATE SET cause = excluded.cause, tries = tries + 1",
        rusqlite::params![side, crate::store::timestamp(now), cause],
    )?;
    Ok(())
}

/// Records that `side` works.
pub fn record_side_works(conn: &Connection, side: &str) -> Result<()> {
    conn.execute("DELETE FROM transport_outages WHERE side = ?1", [side])?;
    Ok(())
}

/// The sides that are down, oldest outage first.
pub fn outages(conn: &Connection) -> Result<Vec<Outage>> {
    let mut st =
        conn.prepare("SELECT side, since, cause, tries FROM transport_outages ORDER BY since")?;
    let rows = st.query_map([], |r| {
        Ok(Outage {
            side: r.get(0)?,
            since: r.get(1)?,
            cause: r.get(2)?,
            tries: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// A cause that stopped the contest before its end, as `serve` records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContestStop {
    pub cause: String,
    pub since: String,
    pub last: String,
    pub times: i64,
}

/// Records that the contest run stopped with `cause` at `now` (the same
/// cause again counts; it is reported again only if it was reported
/// before and comes back after the contest finished).
pub fn record_contest_stop(conn: &Connection, cause: &str, now: DateTime<Utc>) -> Result<()> {
    let at = crate::store::timestamp(now);
    conn.execute(
        "INSERT INTO contest_stops (cause, since, last, times) VALUES (?1, ?2, ?2, 1)
         ON CONFLICT(cause) DO UPDATE SET last = excluded.last, times = times + 1",
        rusqlite::params![cause, at],
    )?;
    Ok(())
}

/// The contest finished: its stops are history.
pub fn clear_contest_stops(conn: &Connection) -> Result<()> {
    conn.execute("DELETE FROM contest_stops", [])?;
    Ok(())
}

/// The causes that stopped the contest (`unreported`: only those no
/// digest has reported yet), oldest first.
pub fn contest_stops(conn: &Connection, which: StopsWanted) -> Result<Vec<ContestStop>> {
    let sql = match which {
        StopsWanted::All => "SELECT cause, since, last, times FROM contest_stops ORDER BY since",
        StopsWanted::Unreported => {
            "SELECT cause, since, last, times FROM contest_stops WHERE reported = 0 ORDER BY since"
        }
    };
    let mut st = conn.prepare(sql)?;
    let rows = st.query_map([], |r| {
        Ok(ContestStop {
            cause: r.get(0)?,
            since: r.get(1)?,
            last: r.get(2)?,
            times: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Which contest stops [`contest_stops`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopsWanted {
    All,
    Unreported,
}

/// Marks every contest stop as reported (in the digest's transaction).
pub fn mark_contest_stops_reported(conn: &Connection) -> Result<()> {
    conn.execute("UPDATE contest_stops SET reported = 1", [])?;
    Ok(())
}
