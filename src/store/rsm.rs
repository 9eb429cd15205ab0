//! The round summaries (RSM) written by the organizer and the contest's
//! pause after a round (table `rsm_rounds`, migration 0007): when the pause
//! started and ends, the salted hash of the pause mail's one-time token,
//! the organizer's text, and whether the RSM mails went out.
//!
//! Decides nothing and reads no clock: `now` is passed in; callers group a
//! change and the mails it causes in one transaction.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use super::{timestamp, Result, StoreError};

/// One round's summary state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RsmRound {
    pub tournament_id: i64,
    pub round: u32,
    pub pause_started_at: Option<DateTime<Utc>>,
    pub pause_ends_at: Option<DateTime<Utc>>,
    pub token_salt: Option<Vec<u8>>,
    pub token_hash: Option<Vec<u8>>,
    pub summary: Option<String>,
    /// `cli` or `mail`.
    pub summary_source: Option<String>,
    pub sent_at: Option<DateTime<Utc>>,
    /// `organizer` or `automatic`.
    pub sent_kind: Option<String>,
}

fn time(s: Option<String>) -> Result<Option<DateTime<Utc>>> {
    s.map(|s| {
        DateTime::parse_from_rfc3339(&s)
            .map(|d| d.with_timezone(&Utc))
            .map_err(|e| StoreError::Corrupt(format!("rsm_rounds time {s:?}: {e}")))
    })
    .transpose()
}

/// The round after which `tournament` waits for the organizer's summary
/// now (a pause started, its RSM not sent), and when the pause ends.
pub fn open_pause(
    conn: &Connection,
    tournament: i64,
) -> Result<Option<(u32, Option<DateTime<Utc>>)>> {
    let row: Option<(u32, Option<String>)> = conn
        .query_row(
            "SELECT round, pause_ends_at FROM rsm_rounds
             WHERE tournament_id = ?1 AND pause_started_at IS NOT NULL AND sent_at IS NULL
             ORDER BY round DESC LIMIT 1",
            params![tournament],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    row.map(|(round, ends)| Ok((round, time(ends)?)))
        .transpose()
}

/// The state of `round` of `tournament`, if anything is recorded.
pub fn rsm_round(conn: &Connection, tournament: i64, round: u32) -> Result<Option<RsmRound>> {
    let row = conn
        .query_row(
            "SELECT pause_started_at, pause_ends_at, token_salt, token_hash, summary,
                    summary_source, sent_at, sent_kind
             FROM rsm_rounds WHERE tournament_id = ?1 AND round = ?2",
            params![tournament, round],
            |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<Vec<u8>>>(2)?,
                    r.get::<_, Option<Vec<u8>>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, Option<String>>(7)?,
                ))
            },
        )
        .optional()?;
    let Some((started, ends, salt, hash, summary, source, sent, kind)) = row else {
        return Ok(None);
    };
    Ok(Some(RsmRound {
        tournament_id: tournament,
        round,
        pause_started_at: time(started)?,
        pause_ends_at: time(ends)?,
        token_salt: salt,
        token_hash: hash,
        summary,
        summary_source: source,
        sent_at: time(sent)?,
        sent_kind: kind,
    }))
}

/// Starts the pause after `round` (once): from `now` until `ends`, with the
/// token's salt and hash. Returns false if a pause was already started.
pub fn start_pause(
    conn: &Connection,
    tournament: i64,
    round: u32,
    now: DateTime<Utc>,
    ends: DateTime<Utc>,
    token: &crate::auth::StoredSecret,
) -> Result<bool> {
    conn.execute(
        "INSERT OR IGNORE INTO rsm_rounds (tournament_id, round) VALUES (?1, ?2)",
        params![tournament, round],
    )?;
    let n = conn.execute(
        "UPDATE rsm_rounds SET pause_started_at = ?3, pause_ends_at = ?4, token_salt = ?5,
                token_hash = ?6, token_index = ?7
         WHERE tournament_id = ?1 AND round = ?2 AND pause_started_at IS NULL",
        params![
            tournament,
            round,
            timestamp(now),
            timestamp(ends),
            &token.salt[..],
            &token.hash[..],
            &token.index[..]
        ],
    )?;
    Ok(n == 1)
}

/// Why an organizer's summary was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryRefused {
    /// The round's RSM has already gone out.
    AlreadySent,
}

/// Stores the organizer's summary of `round` (replacing an earlier one)
/// unless the round's RSM has gone out.
pub fn set_summary(
    conn: &Connection,
    tournament: i64,
    round: u32,
    text: &str,
    source: &str,
    now: DateTime<Utc>,
) -> Result<std::result::Result<(), SummaryRefused>> {
    conn.execute(
        "INSERT OR IGNORE INTO rsm_rounds (tournament_id, round) VALUES (?1, ?2)",
        params![tournament, round],
    )?;
    let n = conn.execute(
        "UPDATE rsm_rounds SET summary = ?3, summary_source = ?4, summary_at = ?5
         WHERE tournament_id = ?1 AND round = ?2 AND sent_at IS NULL",
        params![tournament, round, text, source, timestamp(now)],
    )?;
    Ok(if n == 1 {
        Ok(())
    } else {
        Err(SummaryRefused::AlreadySent)
    })
}

/// Marks the RSM of `round` as sent (`organizer` or `automatic`).
pub fn mark_sent(
    conn: &Connection,
    tournament: i64,
    round: u32,
    kind: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO rsm_rounds (tournament_id, round) VALUES (?1, ?2)",
        params![tournament, round],
    )?;
    conn.execute(
        "UPDATE rsm_rounds SET sent_at = ?3, sent_kind = ?4
         WHERE tournament_id = ?1 AND round = ?2 AND sent_at IS NULL",
        params![tournament, round, timestamp(now), kind],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn a_pause_starts_once_and_a_summary_is_refused_after_sending() {
        let store = Store::open_in_memory().unwrap();
        let c = store.conn();
        c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        let t0 = DateTime::parse_from_rfc3339("1994-05-14T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let t1 = t0 + chrono::Duration::minutes(30);
        assert!(rsm_round(c, 1, 2).unwrap().is_none());
        let token = crate::auth::StoredSecret::of("token");
        assert!(start_pause(c, 1, 2, t0, t1, &token).unwrap());
        let other = crate::auth::StoredSecret::of("other");
        assert!(!start_pause(c, 1, 2, t1, t1, &other).unwrap());
        let r = rsm_round(c, 1, 2).unwrap().unwrap();
        assert_eq!((r.pause_started_at, r.pause_ends_at), (Some(t0), Some(t1)));
        assert_eq!(r.token_hash.as_deref(), Some(&token.hash[..]));
        assert_eq!(set_summary(c, 1, 2, "first", "cli", t0).unwrap(), Ok(()));
        assert_eq!(set_summary(c, 1, 2, "second", "mail", t0).unwrap(), Ok(()));
        mark_sent(c, 1, 2, "organizer", t1).unwrap();
        assert_eq!(
            set_summary(c, 1, 2, "late", "cli", t1).unwrap(),
            Err(SummaryRefused::AlreadySent)
        );
        let r = rsm_round(c, 1, 2).unwrap().unwrap();
        assert_eq!(r.summary.as_deref(), Some("second"));
        assert_eq!(r.sent_kind.as_deref(), Some("organizer"));
        // A summary given before its round finished waits for it.
        assert_eq!(set_summary(c, 1, 3, "early", "cli", t0).unwrap(), Ok(()));
        assert!(rsm_round(c, 1, 3)
            .unwrap()
            .unwrap()
            .pause_started_at
            .is_none());
    }
}
