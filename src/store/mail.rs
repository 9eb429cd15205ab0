//! The mail front end's tables: registrations, inbox, outbox, compile
//! requests and the IMAP position. Functions take a `Connection` (a
//! `Transaction` derefs to one) so that callers can put a state change and
//! the mails it causes into one transaction.
//!
//! This file has the inbox, the outbox and its reply caps, the contest row,
//! the IMAP position and the secrets' look-up; `registrations.rs`,
//! `digest.rs` (what the organizer's digest reports), `sealing.rs` (the
//! backlog's sealing), `sent_bodies.rs` (a sent mail's bytes kept
//! `keep_sent_days`), `processed_rows.rs` (a processed mail's row kept
//! `keep_inbox_days`), `strangers.rs` (the strangers' daily budget's rows), `state.rs` (an outgoing mail's state) and `bodies.rs` (the bodies many outgoing mails share,
//! stored once) the rest; `tests.rs` the unit tests.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use super::{timestamp, Result, StoreError};
use crate::discipline::family::Family;
use crate::discipline::Discipline;
use crate::tournament::TeamId;

mod bodies;
mod digest;
#[cfg(test)]
mod due_scan;
mod processed_rows;
mod registrations;
mod sealing;
mod sent_bodies;
pub(crate) mod state;
mod strangers;

// Every function of these files stays at `store::mail::NAME`.
pub use bodies::*;
pub use digest::*;
pub use processed_rows::*;
pub use registrations::*;
pub use sealing::*;
pub use sent_bodies::*;
pub use state::OutState;
pub use strangers::*;

/// A stored incoming mail waiting for processing.
#[derive(Debug, Clone)]
pub struct InboxRow {
    pub id: i64,
    pub origin: String,
    pub raw: Vec<u8>,
    pub attempts: u32,
    /// The real size of a mail too large to keep: `raw` holds only its
    /// header part (or, once processed, its first
    /// [`PROCESSED_KEPT_BYTES`]). `None`: `raw` is the whole mail.
    pub full_size: Option<u64>,
}

/// Where an incoming mail came from, for de-duplication.
#[derive(Debug, Clone)]
pub struct Arrival<'a> {
    pub origin: &'a str,
    /// IMAP (UIDVALIDITY, UID), when fetched over IMAP.
    pub imap: Option<(u32, u32)>,
    pub message_id: Option<&'a str>,
    /// What is kept: the whole mail, or the header part of one too large.
    pub raw: &'a [u8],
    /// The SHA-256 (hex) of the mail's content: the mail without the trace
    /// header fields that each delivery adds (`Received`, `Return-Path`, ...).
    pub content_sha256: &'a str,
    /// The real size when `raw` is only the header part.
    pub full_size: Option<u64>,
}

/// The de-duplication key of a mail: its Message-ID *and* its content, so
/// the same mail delivered twice is one mail, and two different mails that
/// share a Message-ID (a broken or hostile mailer) are two.
/// A Message-ID longer than this many bytes is kept as its SHA-256 (the
/// de-duplication key) and cut at this length (the `message_id` column):
/// a header of 64 kB is not kept three times over (column, key, index).
pub const MAX_KEPT_MESSAGE_ID: usize = 256;

pub fn dedupe_key(message_id: Option<&str>, content_sha256: &str) -> String {
    match message_id.map(str::trim) {
        Some(id) if id.len() > MAX_KEPT_MESSAGE_ID => {
            format!(
                "mid-sha256:{} sha256:{content_sha256}",
                crate::hash::sha256_hex(id.as_bytes())
            )
        }
        Some(id) if !id.is_empty() => format!("mid:{id} sha256:{content_sha256}"),
        _ => format!("sha256:{content_sha256}"),
    }
}

/// A Message-ID as the `message_id` column keeps it: whole up to
/// [`MAX_KEPT_MESSAGE_ID`] bytes, else cut there (at a character's edge).
fn kept_message_id(id: &str) -> &str {
    let id = id.trim();
    let mut end = id.len().min(MAX_KEPT_MESSAGE_ID);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    &id[..end]
}

/// How much of a processed mail is kept: its first 4 KiB, enough for its
/// header's beginning. What it caused is kept on its own (its outcome, its
/// replies, a registration's record or a pending one's form, a compiled
/// source), so nothing reads the rest again; a mail set aside stays whole
/// (the organizer may process it again), and so does a mail passed on to
/// the organizer (the forward, cut at 16 KiB, names its inbox id for the
/// whole; `forwards_per_day` bounds them). Without this cut, mails of just
/// under `max_mail_bytes` grew the database by that much each, at
/// whatever rate the mail server took them: a stranger's flood charged to
/// nobody, a team's to nothing that bounds it.
pub const PROCESSED_KEPT_BYTES: usize = 4096;

/// Keeps only the first [`PROCESSED_KEPT_BYTES`] of a processed mail,
/// with its real size in `full_size` (which was `NULL` while `raw` was the
/// whole mail). Runs on the transaction that sets the mail's final state,
/// after it is sealed.
///
/// The cut counts bytes, never characters, and falls exactly at byte 4096
/// wherever that is: inside a multi-byte character or between a CR and its
/// LF alike. A mail is bytes (often not UTF-8 at all); the head is kept
/// for a person to look at (read as lossy text, a cut character shows as
/// one U+FFFD) and nothing parses it again. A mail of exactly 4096 bytes
/// is kept whole, with `full_size` still `NULL`. A row whose `raw` SQLite
/// holds as text (written by hand, or by a tool) is cut by its bytes too:
/// `length` and `substr` count characters on text, so both read it as a
/// blob.
pub fn keep_head_of_processed(conn: &Connection, id: i64) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET full_size = coalesce(full_size, length(CAST(raw AS BLOB))),
                          raw = substr(CAST(raw AS BLOB), 1, ?2)
         WHERE id = ?1 AND length(CAST(raw AS BLOB)) > ?2",
        params![id, PROCESSED_KEPT_BYTES as i64],
    )?;
    Ok(())
}

/// The key a mail with a Message-ID over [`MAX_KEPT_MESSAGE_ID`] bytes had
/// before such ids were keyed by their SHA-256 (a version of 2026-11-29):
/// the id whole. `None` for a shorter id, whose key never changed.
fn dedupe_key_before_hashing(message_id: Option<&str>, content_sha256: &str) -> Option<String> {
    match message_id.map(str::trim) {
        Some(id) if id.len() > MAX_KEPT_MESSAGE_ID => {
            Some(format!("mid:{id} sha256:{content_sha256}"))
        }
        _ => None,
    }
}

/// How long a stranger's processed mail keeps its head
/// ([`PROCESSED_KEPT_BYTES`]): as long as a pending registration waits for
/// its confirmation (`register::CONFIRM_DAYS`). After that only its row
/// stays, with what de-duplication needs ([`dedupe_key`]: its Message-ID,
/// or that id's SHA-256, and its content's SHA-256), its state, outcome,
/// times and real size, until the row goes (`keep_inbox_days` after its
/// processing, [`forget_processed_due`]): the same mail delivered again
/// meanwhile is still one mail, and the organizer still sees what was
/// done with it.
pub const STRANGERS_HEADS_KEPT_DAYS: i64 = 7;

/// Says that the head of processed mail `id` is forgotten at `at` (its
/// processing's time plus [`STRANGERS_HEADS_KEPT_DAYS`]): set for a mail
/// that proved nobody, on the transaction that sets its final state.
pub fn forget_head_at(conn: &Connection, id: i64, at: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET forget_head_at = ?2 WHERE id = ?1",
        params![id, timestamp(at)],
    )?;
    Ok(())
}

/// Forgets the heads that are due at `now` ([`forget_head_at`]): each
/// such row keeps its key, state, outcome, times and real size, and an
/// empty `raw`. Reads only the rows due (an index of them). Returns how
/// many heads were forgotten.
pub fn forget_heads_due(conn: &Connection, now: DateTime<Utc>) -> Result<usize> {
    Ok(conn.execute(
        "UPDATE inbox SET full_size = coalesce(full_size, length(CAST(raw AS BLOB))),
                          raw = X'', forget_head_at = NULL
          WHERE forget_head_at IS NOT NULL AND forget_head_at <= ?1",
        [timestamp(now)],
    )?)
}

/// Stores a raw incoming mail. Returns its id, or `None` when the same mail
/// (same Message-ID or bytes, or same IMAP UID) was stored before.
///
/// A mail whose long Message-ID a version before the hashed keys stored
/// under its whole id is found under that key too: the same mail
/// delivered again after the upgrade is still one mail (answered once).
pub fn insert_inbox(conn: &Connection, a: &Arrival<'_>, now: DateTime<Utc>) -> Result<Option<i64>> {
    if let Some(old) = dedupe_key_before_hashing(a.message_id, a.content_sha256) {
        let stored = conn
            .query_row("SELECT 1 FROM inbox WHERE dedupe_key = ?1", [old], |_| {
                Ok(())
            })
            .optional()?;
        if stored.is_some() {
            return Ok(None);
        }
    }
    let key = dedupe_key(a.message_id, a.content_sha256);
    let n = conn.execute(
        "INSERT OR IGNORE INTO inbox (origin, uidvalidity, uid, message_id, dedupe_key, raw, received_at, state,
                                      full_size)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'new', ?8)",
        params![
            a.origin,
            a.imap.map(|x| x.0),
            a.imap.map(|x| x.1),
            a.message_id.map(kept_message_id),
            key,
            a.raw,
            timestamp(now),
            a.full_size.map(|n| n as i64)
        ],
    )?;
    Ok((n == 1).then(|| conn.last_insert_rowid()))
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
                                      state, outcome, processed_at, full_size, kept_as_key)
         VALUES (?1, ?2, ?3, ?4, ?5, x'', ?6, 'ignored', ?7, ?6, ?8, 1)",
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

/// The ids of all pending mails, oldest first.
pub fn pending_inbox_ids(conn: &Connection) -> Result<Vec<i64>> {
    let mut st = conn.prepare("SELECT id FROM inbox WHERE state = 'new' ORDER BY id")?;
    let rows = st.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The pending mails the queue has not classified yet, oldest first.
pub fn unclassified_inbox_ids(conn: &Connection) -> Result<Vec<i64>> {
    let mut st =
        conn.prepare("SELECT id FROM inbox WHERE state = 'new' AND queue_key IS NULL ORDER BY id")?;
    let rows = st.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// At most `limit` classified pending mails whose key does not start with
/// `except`, by lane (the key's order) and then oldest first.
pub fn pending_by_lane(conn: &Connection, except: &str, limit: usize) -> Result<Vec<i64>> {
    let mut st = conn.prepare(
        "SELECT id FROM inbox WHERE state = 'new' AND queue_key IS NOT NULL
         AND substr(queue_key, 1, length(?1)) <> ?1 ORDER BY queue_key, id LIMIT ?2",
    )?;
    let rows = st.query_map(params![except, limit as i64], |r| r.get(0))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Records how the compile queue classified a pending mail.
pub fn set_queue_key(conn: &Connection, id: i64, key: &str) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET queue_key = ?2 WHERE id = ?1",
        params![id, key],
    )?;
    Ok(())
}

/// The pending mails classified with a key starting with `prefix`, oldest
/// first: (id, key).
pub fn pending_with_queue_key(conn: &Connection, prefix: &str) -> Result<Vec<(i64, String)>> {
    let mut st = conn.prepare(
        "SELECT id, queue_key FROM inbox
         WHERE state = 'new' AND substr(queue_key, 1, length(?1)) = ?1 ORDER BY id",
    )?;
    let rows = st.query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// One mail, if it is still pending.
pub fn pending_inbox_row(conn: &Connection, id: i64) -> Result<Option<InboxRow>> {
    Ok(conn
        .query_row(
            "SELECT id, origin, raw, attempts, full_size FROM inbox WHERE id = ?1 AND state = 'new'",
            [id],
            |r| {
                Ok(InboxRow {
                    id: r.get(0)?,
                    origin: r.get(1)?,
                    raw: r.get(2)?,
                    attempts: r.get(3)?,
                    full_size: r.get::<_, Option<i64>>(4)?.map(|n| n as u64),
                })
            },
        )
        .optional()?)
}

/// Counts a processing attempt (committed before processing, so a mail that
/// crashes the server is not retried forever).
pub fn bump_attempt(conn: &Connection, id: i64) -> Result<u32> {
    conn.execute(
        "UPDATE inbox SET attempts = attempts + 1 WHERE id = ?1",
        [id],
    )?;
    Ok(
        conn.query_row("SELECT attempts FROM inbox WHERE id = ?1", [id], |r| {
            r.get(0)
        })?,
    )
}

/// Sets a processed mail's final state: `done`, `ignored` or `failed`.
pub fn finish_inbox(
    conn: &Connection,
    id: i64,
    state: &str,
    outcome: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET state = ?2, outcome = ?3, processed_at = ?4 WHERE id = ?1",
        params![id, state, outcome, timestamp(now)],
    )?;
    Ok(())
}

pub fn record_inbox_error(conn: &Connection, id: i64, error: &str) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET last_error = ?2 WHERE id = ?1",
        params![id, error],
    )?;
    Ok(())
}

/// The state and outcome of an inbox row (tests, status).
pub fn inbox_state(conn: &Connection, id: i64) -> Result<(String, Option<String>, u32)> {
    Ok(conn.query_row(
        "SELECT state, outcome, attempts FROM inbox WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?)
}

/// The budget a queued mail draws from (issue 35: the From line is a
/// claim, not an identity; docs/src/security.md, "Mail from strangers"). Strangers'
/// traffic never uses up what a participant needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Budget {
    /// Contest mails and the organizer's own: bounded by the contest (the
    /// teams that took part), never by a cap on replies.
    #[default]
    Contest,
    /// A reply to a stranger's claim: capped per sender (`sender_key`),
    /// per sender domain and in all (`stranger_replies_per_day`).
    Strangers,
    /// A reply to a mail whose From is a registered team's mailbox (still a
    /// claim): capped per address only, never by strangers' domain or
    /// global caps.
    Confirmed,
    /// A reply to a team proven by its authentification string: the
    /// team's own daily budget (`replies_per_team_per_day`).
    Team(TeamId),
    /// The answer to a registration that is kept, or the confirmation
    /// request that keeps a pending one: bounded by `max_participants`
    /// (proven registrations, and as many waiting) and the confirmation
    /// caps, never by a cap on replies.
    Registration,
}

impl Budget {
    /// Its name in the `outbox.budget` column.
    pub fn column(self) -> &'static str {
        match self {
            Budget::Contest => "contest",
            Budget::Strangers => "strangers",
            Budget::Confirmed => "confirmed",
            Budget::Team(_) => "team",
            Budget::Registration => "registration",
        }
    }
}

/// A mail to queue.
#[derive(Debug, Clone)]
pub struct NewOutgoing<'a> {
    pub inbox_id: Option<i64>,
    pub kind: &'a str,
    pub recipients: &'a [String],
    /// The budget it draws from.
    pub budget: Budget,
    /// The sender (`process::sender_key`) a per-sender cap counts it for
    /// (strangers' and confirmed addresses' replies only).
    pub sender_key: Option<&'a str>,
    pub subject: &'a str,
    pub message_id: &'a str,
    /// The whole mail, as it is to be sent; or, with `text_at`, the mail
    /// without the first of `shared`.
    pub raw: &'a [u8],
    /// Where the first of `shared` (the mail's text, left out when it was
    /// built) goes back in `raw`: cut there by construction, not searched
    /// for (`None`: `raw` is whole).
    pub text_at: Option<usize>,
    /// Parts of `raw` (its text, attachments) that many mails may carry:
    /// each of at least [`MIN_SHARED_BYTES`] is stored once
    /// (`bodies.rs`) and cut out of the row.
    pub shared: &'a [SharedPart<'a>],
    /// The contest event this mail belongs to (at most one mail per key).
    pub event_key: Option<&'a str>,
}

#[cfg(test)]
impl<'a> NewOutgoing<'a> {
    /// The tests' mail: a stranger's help reply to `recipients`, subject
    /// `s`, of the default budget, belonging to no event, `raw` whole and
    /// carrying `shared`.
    pub fn help_for_tests(
        recipients: &'a [String],
        message_id: &'a str,
        raw: &'a [u8],
        shared: &'a [SharedPart<'a>],
    ) -> NewOutgoing<'a> {
        NewOutgoing {
            inbox_id: None,
            kind: "help",
            recipients,
            budget: Budget::default(),
            sender_key: None,
            subject: "s",
            message_id,
            raw,
            text_at: None,
            shared,
            event_key: None,
        }
    }
}

/// Queues a mail. A mail that belongs to a contest event carries an
/// `event_key`; a second mail with the same key is ignored (returns
/// `false`), so an event announced again after a resume queues nothing.
/// Whether a mail of contest event `key` is queued (or sent) already.
pub fn event_queued(conn: &Connection, key: &str) -> Result<bool> {
    // Prepared once per connection: asked for every mail queued.
    Ok(conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM outbox WHERE event_key = ?1)")?
        .query_row([key], |r| r.get(0))?)
}

/// The contest event keys queued (or sent) that begin with `prefix`: one
/// look-up for all the mails of an event whose keys share it, instead of
/// one per mail ([`event_queued`]). `prefix` ends in an ASCII character
/// other than DEL (the keys' `:`); it is searched for as a range of the
/// unique index on `event_key`.
pub fn events_queued_under(
    conn: &Connection,
    prefix: &str,
) -> Result<std::collections::HashSet<String>> {
    let mut end = prefix.as_bytes().to_vec();
    match end.last_mut() {
        Some(b) if *b < 0x7f => *b += 1,
        _ => {
            return Err(StoreError::Corrupt(format!(
                "an event key prefix must end in ASCII: {prefix:.40?}"
            )))
        }
    }
    let end = String::from_utf8(end).expect("an ASCII byte raised by one stays UTF-8");
    // Prepared once per connection: asked once per event.
    let mut st = conn
        .prepare_cached("SELECT event_key FROM outbox WHERE event_key >= ?1 AND event_key < ?2")?;
    let keys = st
        .query_map([prefix, end.as_str()], |r| r.get(0))?
        .collect::<std::result::Result<_, _>>()?;
    Ok(keys)
}

pub fn queue_outgoing(conn: &Connection, m: &NewOutgoing<'_>, now: DateTime<Utc>) -> Result<bool> {
    let sender_domain = m
        .sender_key
        .and_then(|k| k.rsplit_once('@'))
        .map(|(_, d)| d.to_ascii_lowercase());
    let team_id = match m.budget {
        Budget::Team(t) => Some(i64::from(t.0)),
        _ => None,
    };
    let (rest, cuts) = match m.text_at {
        Some(at) if !m.shared.is_empty() => split_after(m.raw, at, m.shared),
        _ => split(m.raw, m.shared),
    };
    if cuts.is_empty() {
        return insert_outgoing(conn, m, &rest, sender_domain, team_id, now);
    }
    // The row and its parts together or not at all, whether or not the
    // caller has a transaction open: a row cut of its body would be sent
    // without it.
    if !conn.is_autocommit() {
        // Inside the caller's transaction no savepoint: one makes SQLite
        // copy every page the mail touches aside first (a group's mails,
        // thousands a round). What a failed mail stored is deleted again
        // instead; the caller's transaction goes on.
        if !insert_outgoing(conn, m, &rest, sender_domain, team_id, now)? {
            return Ok(false);
        }
        let id = conn.last_insert_rowid();
        let mut new_bodies = Vec::new();
        return match store_parts_noting(conn, id, m.shared, &cuts, &mut new_bodies) {
            Ok(()) => Ok(true),
            Err(e) => {
                // (A full disk may have ended the transaction already: the
                // fault to report is the first.)
                let _ = unstore(conn, id, &new_bodies);
                Err(e)
            }
        };
    }
    // Prepared once per connection.
    conn.prepare_cached("SAVEPOINT queue_outgoing")?
        .execute([])?;
    let queued = insert_outgoing(conn, m, &rest, sender_domain, team_id, now).and_then(|n| {
        if n {
            store_parts(conn, conn.last_insert_rowid(), m.shared, &cuts)?;
        }
        Ok(n)
    });
    match queued {
        Ok(n) => {
            conn.prepare_cached("RELEASE queue_outgoing")?.execute([])?;
            Ok(n)
        }
        Err(e) => {
            // (A full disk may have ended the transaction already: the
            // fault to report is the first.)
            let _ = conn.execute_batch("ROLLBACK TO queue_outgoing; RELEASE queue_outgoing");
            Err(e)
        }
    }
}

/// Deletes outbox row `id` again, with its parts and the bodies
/// `new_bodies` its queuing stored (no other row refers to them yet).
fn unstore(conn: &Connection, id: i64, new_bodies: &[i64]) -> Result<()> {
    conn.execute("DELETE FROM outbox_parts WHERE outbox_id = ?1", [id])?;
    conn.execute("DELETE FROM outbox WHERE id = ?1", [id])?;
    for b in new_bodies {
        conn.execute(
            "DELETE FROM outbox_bodies WHERE id = ?1
             AND NOT EXISTS (SELECT 1 FROM outbox_parts WHERE body_id = ?1)",
            [b],
        )?;
    }
    Ok(())
}

/// The outbox row of `m`, with `rest` as its raw (`INSERT OR IGNORE`):
/// whether it was inserted.
fn insert_outgoing(
    conn: &Connection,
    m: &NewOutgoing<'_>,
    rest: &[u8],
    sender_domain: Option<String>,
    team_id: Option<i64>,
    now: DateTime<Utc>,
) -> Result<bool> {
    // Prepared once per connection (a contest queues mails by the thousand).
    let n = conn.prepare_cached(
        "INSERT OR IGNORE INTO outbox (inbox_id, kind, recipients, sender_key, subject, message_id, raw, state,
                             next_attempt_at, created_at, event_key, sender_domain, budget, team_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?13, ?8, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
            m.inbox_id,
            m.kind,
            serde_json::to_string(m.recipients).expect("json"),
            m.sender_key,
            m.subject,
            m.message_id,
            rest,
            timestamp(now),
            m.event_key,
            sender_domain,
            m.budget.column(),
            team_id,
            OutState::Queued.as_str()
        ],
    )?;
    Ok(n == 1)
}

/// The contest run by the server: its tournament and state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContestRow {
    pub tournament_id: i64,
    pub finished: bool,
}

pub fn contest(conn: &Connection) -> Result<Option<ContestRow>> {
    Ok(conn
        .query_row(
            "SELECT tournament_id, state FROM contest WHERE id = 1",
            [],
            |r| {
                Ok(ContestRow {
                    tournament_id: r.get(0)?,
                    finished: r.get::<_, String>(1)? == "finished",
                })
            },
        )
        .optional()?)
}

pub fn insert_contest(conn: &Connection, tournament_id: i64, now: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "INSERT INTO contest (id, tournament_id, state, started_at) VALUES (1, ?1, 'running', ?2)",
        params![tournament_id, timestamp(now)],
    )?;
    Ok(())
}

pub fn finish_contest(conn: &Connection, now: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "UPDATE contest SET state = 'finished', finished_at = ?1 WHERE id = 1",
        params![timestamp(now)],
    )?;
    Ok(())
}

/// Registered teams with their current (latest accepted) version.
pub fn teams_with_current_version(conn: &Connection) -> Result<Vec<(TeamId, i64)>> {
    let mut st = conn.prepare(
        "SELECT r.team_id, (SELECT v.id FROM strategy_versions v WHERE v.team_id = r.team_id AND v.accepted = 1
                            ORDER BY v.id DESC LIMIT 1) AS version
         FROM registrations r ORDER BY r.team_id",
    )?;
    let rows = st.query_map([], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (team, version) = row?;
        if let Some(v) = version {
            out.push((TeamId(team as u32), v));
        }
    }
    Ok(out)
}

/// A queued outgoing mail.
#[derive(Debug, Clone)]
pub struct OutRow {
    pub id: i64,
    pub kind: String,
    pub recipients: Vec<String>,
    pub message_id: String,
    pub raw: Vec<u8>,
    pub attempts: u32,
}

/// The state of outgoing mail `id` (`None`: no such mail).
pub fn outgoing_state(conn: &Connection, id: i64) -> Result<Option<OutState>> {
    conn.query_row("SELECT state FROM outbox WHERE id = ?1", [id], |r| {
        r.get::<_, String>(0)
    })
    .optional()?
    .map(|s| OutState::parse(&s))
    .transpose()
}

/// Queued mails whose time has come, oldest first.
pub fn due_outgoing(conn: &Connection, now: DateTime<Utc>, limit: usize) -> Result<Vec<OutRow>> {
    let mut st = conn.prepare(
        "SELECT id, kind, recipients, message_id, raw, attempts FROM outbox
         WHERE state = ?3 AND next_attempt_at <= ?1 ORDER BY id LIMIT ?2",
    )?;
    let rows = st.query_map(
        params![timestamp(now), limit as i64, OutState::Queued.as_str()],
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Vec<u8>>(4)?,
                r.get::<_, u32>(5)?,
            ))
        },
    )?;
    let mut out = Vec::new();
    for row in rows {
        let (id, kind, recipients, message_id, raw, attempts) = row?;
        let raw = assemble(conn, id, raw)?;
        out.push(OutRow {
            id,
            kind,
            recipients: serde_json::from_str(&recipients)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            message_id,
            raw,
            attempts,
        });
    }
    Ok(out)
}

pub fn mark_sent(conn: &Connection, id: i64, now: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "UPDATE outbox SET state = ?3, sent_at = ?2, attempts = attempts + 1 WHERE id = ?1",
        params![id, timestamp(now), OutState::Sent.as_str()],
    )?;
    Ok(())
}

pub fn mark_retry(conn: &Connection, id: i64, error: &str, next: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "UPDATE outbox SET attempts = attempts + 1, last_error = ?2, next_attempt_at = ?3 WHERE id = ?1",
        params![id, error, timestamp(next)],
    )?;
    Ok(())
}

pub fn mark_failed(conn: &Connection, id: i64, error: &str) -> Result<()> {
    conn.execute(
        "UPDATE outbox SET state = ?3, attempts = attempts + 1, last_error = ?2 WHERE id = ?1",
        params![id, error, OutState::Failed.as_str()],
    )?;
    Ok(())
}

/// Whose replies a reply cap counts.
#[derive(Debug, Clone, Copy)]
pub enum ReplyTarget<'a> {
    /// Replies to one sender (`sender_key`, `+tag` and case folded).
    Sender(&'a str),
    /// Replies to any sender at one domain (compared in lower case).
    Domain(&'a str),
    /// Replies to one team proven by its authentification string.
    Team(TeamId),
    /// All senders together (a global budget).
    Everyone,
}

/// The replies one cap counts: whose, on which budgets (lanes) and of
/// which kind. Every reply cap is one such count over the outbox, built
/// by [`replies`] and read by [`Replies::since`], as in
/// `replies(ReplyTarget::Domain(d)).on(&[Budget::Strangers]).since(conn, day_ago)`
/// (strangers' replies to senders at `d` in the last day). Unnarrowed, a count takes every budget and every kind.
#[derive(Debug, Clone, Copy)]
#[must_use = "a count is made by `since`"]
pub struct Replies<'a> {
    to: ReplyTarget<'a>,
    budgets: &'a [Budget],
    kind: Option<&'a str>,
}

/// The replies to `to`, on every budget and of every kind until narrowed.
pub fn replies(to: ReplyTarget<'_>) -> Replies<'_> {
    Replies {
        to,
        budgets: &[],
        kind: None,
    }
}

impl<'a> Replies<'a> {
    /// Only the replies drawn from one of `budgets`.
    pub fn on(self, budgets: &'a [Budget]) -> Self {
        Replies { budgets, ..self }
    }

    /// Only the mails of `kind` (`"software"` for kits, and so on).
    pub fn of_kind(self, kind: &'a str) -> Self {
        Replies {
            kind: Some(kind),
            ..self
        }
    }

    /// How many of them were queued since `since`.
    pub fn since(self, conn: &Connection, since: DateTime<Utc>) -> Result<u32> {
        let (sql, values) = self.query(since);
        Ok(conn.query_row(&sql, rusqlite::params_from_iter(values), |r| r.get(0))?)
    }

    /// How many of them were queued since `since`, and how many of those
    /// are of `kind` (counted as [`Replies::of_kind`] counts): two caps'
    /// counts in one look-up (a team's kit to another address meets that
    /// address's replies and its kits).
    pub fn since_with_kind(
        self,
        conn: &Connection,
        since: DateTime<Utc>,
        kind: &str,
    ) -> Result<(u32, u32)> {
        let (filters, values) = self.filters(since);
        // The kind's `?` comes first in the text: its value first.
        let values = std::iter::once(rusqlite::types::Value::Text(kind.to_string())).chain(values);
        Ok(conn.query_row(
            &format!(
                "SELECT COUNT(*), COALESCE(SUM(kind = ? AND event_key IS NULL), 0) \
                 FROM outbox WHERE {filters}"
            ),
            rusqlite::params_from_iter(values),
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// The count's SQL and its parameters. The budgets are written as
    /// literals (fixed names, never input) so that SQLite can use the
    /// partial index on the strangers' lane.
    fn query(self, since: DateTime<Utc>) -> (String, Vec<rusqlite::types::Value>) {
        let (filters, values) = self.filters(since);
        (
            format!("SELECT COUNT(*) FROM outbox WHERE {filters}"),
            values,
        )
    }

    /// The count's filters (joined by `AND`) and their parameters.
    fn filters(self, since: DateTime<Utc>) -> (String, Vec<rusqlite::types::Value>) {
        use rusqlite::types::Value;
        let mut filters = Vec::new();
        let mut values = Vec::new();
        match self.to {
            ReplyTarget::Sender(key) => {
                filters.push("sender_key = ?".to_string());
                values.push(Value::Text(key.to_string()));
            }
            ReplyTarget::Domain(domain) => {
                filters.push("sender_domain = ?".to_string());
                values.push(Value::Text(domain.to_ascii_lowercase()));
            }
            ReplyTarget::Team(team) => {
                filters.push("team_id = ?".to_string());
                values.push(Value::Integer(i64::from(team.0)));
            }
            ReplyTarget::Everyone => {}
        }
        match self.budgets {
            [] => {}
            [one] => filters.push(format!("budget = '{}'", one.column())),
            several => filters.push(format!(
                "budget IN ({})",
                several
                    .iter()
                    .map(|b| format!("'{}'", b.column()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
        if let Some(kind) = self.kind {
            // Replies and digests have no event key; contest mails do, and
            // the index by kind holds only the former (schema 0026).
            filters.push("kind = ?".to_string());
            filters.push("event_key IS NULL".to_string());
            values.push(Value::Text(kind.to_string()));
        }
        filters.push("created_at >= ?".to_string());
        values.push(Value::Text(timestamp(since)));
        (filters.join(" AND "), values)
    }
}

/// Which of a team's compile requests a count takes: each request that
/// was compiled is a row naming its version, each the server could not
/// process (its problem, not the program's) a row naming none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileCount {
    /// Those that ended in a verdict (accepted or rejected: a version):
    /// `compiles_per_team_per_hour` counts them.
    Verdicts,
    /// Those answered "not compiled (server problem)":
    /// `server_problems_per_team_per_hour` counts them, apart.
    ServerProblems,
}

/// How many of `team`'s compile requests of kind `count` came at or after
/// `since` (one range read of the index by team and time).
pub fn compile_requests_since(
    conn: &Connection,
    team: TeamId,
    since: DateTime<Utc>,
    count: CompileCount,
) -> Result<u32> {
    let which = match count {
        CompileCount::Verdicts => "version_id IS NOT NULL",
        CompileCount::ServerProblems => "version_id IS NULL",
    };
    Ok(conn.query_row(
        &format!(
            "SELECT COUNT(*) FROM compile_requests WHERE team_id = ?1 AND at >= ?2 AND {which}"
        ),
        params![team.0, timestamp(since)],
        |r| r.get(0),
    )?)
}

pub fn insert_compile_request(
    conn: &Connection,
    team: TeamId,
    version: Option<i64>,
    now: DateTime<Utc>,
) -> Result<()> {
    conn.execute(
        "INSERT INTO compile_requests (team_id, at, version_id) VALUES (?1, ?2, ?3)",
        params![team.0, timestamp(now), version],
    )?;
    Ok(())
}

/// The latest accepted strategy version of a team.
pub fn current_version(conn: &Connection, team: TeamId) -> Result<Option<i64>> {
    Ok(conn
        .query_row(
            "SELECT id FROM strategy_versions WHERE team_id = ?1 AND accepted = 1 ORDER BY id DESC LIMIT 1",
            [team.0],
            |r| r.get(0),
        )
        .optional()?)
}

/// The IMAP position of a mailbox: (UIDVALIDITY, last stored UID).
pub fn imap_position(conn: &Connection, mailbox: &str) -> Result<Option<(u32, u32)>> {
    Ok(conn
        .query_row(
            "SELECT uidvalidity, last_uid FROM imap_state WHERE mailbox = ?1",
            [mailbox],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

pub fn set_imap_position(
    conn: &Connection,
    mailbox: &str,
    uidvalidity: u32,
    last_uid: u32,
) -> Result<()> {
    conn.execute(
        "INSERT INTO imap_state (mailbox, uidvalidity, last_uid) VALUES (?1, ?2, ?3)
         ON CONFLICT(mailbox) DO UPDATE SET uidvalidity = ?2, last_uid = ?3",
        params![mailbox, uidvalidity, last_uid],
    )?;
    Ok(())
}

/// Every stored salted hash of a secret a mail may carry: the teams'
/// authentification strings and the RSM pauses' one-time tokens.
/// The stored secrets (auth strings, RSM tokens) as a mail's words are
/// looked up in them: one indexed read of the index digest per word, the
/// same cost whatever the number of teams. A secret stored by a version
/// before the index (no digest) is still found by its salted hash: those
/// few rows are read once per lookup session and checked one by one.
pub struct StoredSecrets<'c> {
    conn: &'c Connection,
    unindexed: Option<Vec<crate::auth::KnownSecret>>,
    /// Words looked up (for tests and `bench`).
    pub lookups: usize,
    /// Salted hashes computed for unindexed secrets (for tests).
    pub unindexed_checks: usize,
}

impl<'c> StoredSecrets<'c> {
    pub fn new(conn: &'c Connection) -> StoredSecrets<'c> {
        StoredSecrets {
            conn,
            unindexed: None,
            lookups: 0,
            unindexed_checks: 0,
        }
    }
}

impl crate::auth::SecretLookup for StoredSecrets<'_> {
    type Error = StoreError;

    fn is_secret(&mut self, word: &str) -> Result<bool> {
        self.lookups += 1;
        let index = crate::auth::index(word);
        let found: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM registrations WHERE auth_index = ?1)
                 OR EXISTS (SELECT 1 FROM rsm_rounds WHERE token_index = ?1)",
            [&index[..]],
            |r| r.get(0),
        )?;
        if found {
            return Ok(true);
        }
        if self.unindexed.is_none() {
            let mut st = self.conn.prepare(
                "SELECT auth_salt, auth_hash FROM registrations WHERE auth_index IS NULL
                 UNION ALL
                 SELECT token_salt, token_hash FROM rsm_rounds
                 WHERE token_salt IS NOT NULL AND token_hash IS NOT NULL
                   AND token_index IS NULL",
            )?;
            let rows = st.query_map([], |r| {
                Ok(crate::auth::KnownSecret {
                    salt: r.get(0)?,
                    hash: r.get(1)?,
                })
            })?;
            self.unindexed = Some(rows.collect::<std::result::Result<_, _>>()?);
        }
        let old = self.unindexed.as_deref().unwrap_or_default();
        self.unindexed_checks += old.len();
        Ok(old.iter().any(|k| k.matches(word)))
    }
}

/// Every stored secret as salt and hash (the one-time sealing of an older
/// database's backlog; a mail's words use [`StoredSecrets`]).
pub fn known_secrets(conn: &Connection) -> Result<Vec<crate::auth::KnownSecret>> {
    let mut st = conn.prepare(
        "SELECT auth_salt, auth_hash FROM registrations
         UNION ALL
         SELECT token_salt, token_hash FROM rsm_rounds
         WHERE token_salt IS NOT NULL AND token_hash IS NOT NULL",
    )?;
    let rows = st.query_map([], |r| {
        Ok(crate::auth::KnownSecret {
            salt: r.get(0)?,
            hash: r.get(1)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The contest of `discipline` (the one the server runs), if it has
/// started: whether it has finished. KNOBELN keeps its contest in its
/// `contest` row, a bot discipline in a `bot_contests` row of that
/// discipline. A contest of another discipline in the same database (one
/// used before for another contest) is not this server's contest: it
/// neither closes the registration nor tells the phase. A finished
/// contest of the same discipline does: the database is that contest's,
/// its entries fixed (the next contest takes a new database).
pub fn contest_state(conn: &Connection, discipline: Discipline) -> Result<Option<ContestState>> {
    let finished = match discipline.family() {
        Family::Strategies(_) => contest(conn)?.map(|c| c.finished),
        Family::Bots(_) => conn
            .query_row(
                "SELECT state FROM bot_contests WHERE discipline = ?1 ORDER BY id LIMIT 1",
                [discipline.name()],
                |r| Ok(r.get::<_, String>(0)? == "finished"),
            )
            .optional()?,
    };
    Ok(finished.map(|f| {
        if f {
            ContestState::Finished
        } else {
            ContestState::Running
        }
    }))
}

/// A started contest: running, or finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContestState {
    Running,
    Finished,
}

/// Whether the contest of `discipline` (the one the server runs) has
/// started, running or finished ([`contest_state`]): what closes the
/// registration and the compilation service of a bot discipline, and
/// fixes the entries.
pub fn contest_started(conn: &Connection, discipline: Discipline) -> Result<bool> {
    Ok(contest_state(conn, discipline)?.is_some())
}

#[cfg(test)]
mod tests;
