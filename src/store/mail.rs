//! The mail front end's tables: registrations, inbox, outbox, compile
//! requests and the IMAP position. Functions take a `Connection` (a
//! `Transaction` derefs to one) so that callers can put a state change and
//! the mails it causes into one transaction.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use super::{timestamp, Result, StoreError};
use crate::tournament::TeamId;

/// A stored incoming mail waiting for processing.
#[derive(Debug, Clone)]
pub struct InboxRow {
    pub id: i64,
    pub origin: String,
    pub raw: Vec<u8>,
    pub attempts: u32,
    /// The real size of a mail too large to keep: `raw` holds only its
    /// header part. `None`: `raw` is the whole mail.
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
pub fn dedupe_key(message_id: Option<&str>, content_sha256: &str) -> String {
    match message_id {
        Some(id) if !id.trim().is_empty() => {
            format!("mid:{} sha256:{content_sha256}", id.trim())
        }
        _ => format!("sha256:{content_sha256}"),
    }
}

/// Stores a raw incoming mail. Returns its id, or `None` when the same mail
/// (same Message-ID or bytes, or same IMAP UID) was stored before.
pub fn insert_inbox(conn: &Connection, a: &Arrival<'_>, now: DateTime<Utc>) -> Result<Option<i64>> {
    let key = dedupe_key(a.message_id, a.content_sha256);
    let n = conn.execute(
        "INSERT OR IGNORE INTO inbox (origin, uidvalidity, uid, message_id, dedupe_key, raw, received_at, state,
                                      full_size)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'new', ?8)",
        params![
            a.origin,
            a.imap.map(|x| x.0),
            a.imap.map(|x| x.1),
            a.message_id,
            key,
            a.raw,
            timestamp(now),
            a.full_size.map(|n| n as i64)
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
    /// request that keeps a pending one: bounded by `max_participants` and
    /// the confirmation caps, never by a cap on replies.
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
    pub raw: &'a [u8],
    /// The contest event this mail belongs to (at most one mail per key).
    pub event_key: Option<&'a str>,
}

/// Queues a mail. A mail that belongs to a contest event carries an
/// `event_key`; a second mail with the same key is ignored (returns
/// `false`), so an event announced again after a resume queues nothing.
/// Whether a mail of contest event `key` is queued (or sent) already.
pub fn event_queued(conn: &Connection, key: &str) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM outbox WHERE event_key = ?1)",
        [key],
        |r| r.get(0),
    )?)
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
    let n = conn.execute(
        "INSERT OR IGNORE INTO outbox (inbox_id, kind, recipients, sender_key, subject, message_id, raw, state,
                             next_attempt_at, created_at, event_key, sender_domain, budget, team_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8, ?8, ?9, ?10, ?11, ?12)",
        params![
            m.inbox_id,
            m.kind,
            serde_json::to_string(m.recipients).expect("json"),
            m.sender_key,
            m.subject,
            m.message_id,
            m.raw,
            timestamp(now),
            m.event_key,
            sender_domain,
            m.budget.column(),
            team_id
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

/// Queued mails whose time has come, oldest first.
pub fn due_outgoing(conn: &Connection, now: DateTime<Utc>, limit: usize) -> Result<Vec<OutRow>> {
    let mut st = conn.prepare(
        "SELECT id, kind, recipients, message_id, raw, attempts FROM outbox
         WHERE state = 'queued' AND next_attempt_at <= ?1 ORDER BY id LIMIT ?2",
    )?;
    let rows = st.query_map(params![timestamp(now), limit as i64], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Vec<u8>>(4)?,
            r.get::<_, u32>(5)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, kind, recipients, message_id, raw, attempts) = row?;
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
        "UPDATE outbox SET state = 'sent', sent_at = ?2, attempts = attempts + 1 WHERE id = ?1",
        params![id, timestamp(now)],
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
        "UPDATE outbox SET state = 'failed', attempts = attempts + 1, last_error = ?2 WHERE id = ?1",
        params![id, error],
    )?;
    Ok(())
}

/// Replies queued to `sender_key` since `since` (the per-sender daily cap).
pub fn replies_since(conn: &Connection, sender_key: &str, since: DateTime<Utc>) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM outbox WHERE sender_key = ?1 AND created_at >= ?2
         AND budget IN ('strangers', 'confirmed')",
        params![sender_key, timestamp(since)],
        |r| r.get(0),
    )?)
}

/// Replies queued to senders of `domain` since `since` (the per-domain
/// daily cap, against floods with forged senders).
pub fn replies_to_domain_since(
    conn: &Connection,
    domain: &str,
    since: DateTime<Utc>,
) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM outbox WHERE sender_domain = ?1 AND created_at >= ?2
         AND budget = 'strangers'",
        params![domain.to_ascii_lowercase(), timestamp(since)],
        |r| r.get(0),
    )?)
}

/// Replies queued to strangers since `since`, all together (the global
/// budget strangers share: `stranger_replies_per_day`).
pub fn stranger_replies_since(conn: &Connection, since: DateTime<Utc>) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM outbox WHERE budget = 'strangers' AND created_at >= ?1",
        params![timestamp(since)],
        |r| r.get(0),
    )?)
}

/// Mails of `kind` queued to strangers since `since`, all together.
pub fn stranger_replies_of_kind_since(
    conn: &Connection,
    kind: &str,
    since: DateTime<Utc>,
) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM outbox WHERE budget = 'strangers' AND kind = ?1 AND created_at >= ?2",
        params![kind, timestamp(since)],
        |r| r.get(0),
    )?)
}

/// Replies queued to team `team` (proven by its authentification
/// string) since `since` (`replies_per_team_per_day`).
pub fn team_replies_since(conn: &Connection, team: TeamId, since: DateTime<Utc>) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM outbox WHERE team_id = ?1 AND created_at >= ?2",
        params![i64::from(team.0), timestamp(since)],
        |r| r.get(0),
    )?)
}

/// Replies of `kind` queued since `since`, to `sender_key` (`Some`) or to
/// anyone of `domain`.
pub fn replies_of_kind_since(
    conn: &Connection,
    kind: &str,
    to: ReplyTarget<'_>,
    since: DateTime<Utc>,
) -> Result<u32> {
    let (column, value) = match to {
        ReplyTarget::Sender(k) => ("sender_key", k.to_string()),
        ReplyTarget::Domain(d) => ("sender_domain", d.to_ascii_lowercase()),
        ReplyTarget::Everyone => ("kind", kind.to_string()),
    };
    Ok(conn.query_row(
        &format!(
            "SELECT COUNT(*) FROM outbox WHERE kind = ?1 AND {column} = ?2 AND created_at >= ?3"
        ),
        params![kind, value, timestamp(since)],
        |r| r.get(0),
    )?)
}

/// Whom a reply cap counts.
#[derive(Debug, Clone, Copy)]
pub enum ReplyTarget<'a> {
    Sender(&'a str),
    Domain(&'a str),
    /// All senders together (a global budget).
    Everyone,
}

/// A stored registration.
#[derive(Debug, Clone)]
pub struct RegistrationRow {
    pub team: TeamId,
    pub team_name: String,
    pub mail_address: String,
    pub preferences: String,
    pub organization: String,
    pub record: String,
    pub auth_salt: Vec<u8>,
    pub auth_hash: Vec<u8>,
}

const REG_SELECT: &str =
    "SELECT r.team_id, t.name, r.mail_address, r.preferences, r.organization, r.record,
        r.auth_salt, r.auth_hash FROM registrations r JOIN teams t ON t.id = r.team_id";

fn reg_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RegistrationRow> {
    Ok(RegistrationRow {
        team: TeamId(r.get::<_, i64>(0)? as u32),
        team_name: r.get(1)?,
        mail_address: r.get(2)?,
        preferences: r.get(3)?,
        organization: r.get(4)?,
        record: r.get(5)?,
        auth_salt: r.get(6)?,
        auth_hash: r.get(7)?,
    })
}

pub fn registration_by_address(
    conn: &Connection,
    address: &str,
) -> Result<Option<RegistrationRow>> {
    Ok(conn
        .query_row(
            &format!("{REG_SELECT} WHERE r.mail_address = ?1 COLLATE NOCASE"),
            [address],
            reg_row,
        )
        .optional()?)
}

pub fn registration_by_team(conn: &Connection, team_name: &str) -> Result<Option<RegistrationRow>> {
    Ok(conn
        .query_row(
            &format!("{REG_SELECT} WHERE t.name = ?1"),
            [team_name],
            reg_row,
        )
        .optional()?)
}

pub fn all_registrations(conn: &Connection) -> Result<Vec<RegistrationRow>> {
    let mut st = conn.prepare(&format!("{REG_SELECT} ORDER BY r.team_id"))?;
    let rows = st.query_map([], reg_row)?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub fn count_registrations(conn: &Connection) -> Result<u32> {
    Ok(conn.query_row("SELECT COUNT(*) FROM registrations", [], |r| r.get(0))?)
}

pub fn count_registrations_of_organization(conn: &Connection, organization: &str) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM registrations WHERE lower(trim(organization)) = lower(trim(?1))",
        [organization],
        |r| r.get(0),
    )?)
}

/// The team names (folded to ASCII lower case) that start with `prefix`
/// (compared folded): one range read of the folded-name index.
pub fn team_names_starting_with(
    conn: &Connection,
    prefix: &str,
) -> Result<std::collections::HashSet<String>> {
    let low = prefix.to_ascii_lowercase();
    let mut high = low.clone();
    high.push(char::MAX);
    let mut st =
        conn.prepare("SELECT lower(name) FROM teams WHERE lower(name) >= ?1 AND lower(name) < ?2")?;
    let names = st
        .query_map(params![low, high], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(names)
}

pub fn team_name_taken(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM teams WHERE lower(name) = lower(?1)",
            [name],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// What to store about a new registration.
pub struct NewRegistration<'a> {
    pub team_name: &'a str,
    pub requested_name: &'a str,
    pub mail_address: &'a str,
    pub preferences: &'a str,
    pub organization: &'a str,
    pub members_json: &'a str,
    pub record: &'a str,
    pub auth_salt: &'a [u8],
    pub auth_hash: &'a [u8],
    /// The auth string's index digest (`mail::auth::index`).
    pub auth_index: &'a [u8],
    /// The address case-folded without a `+tag` (`process::sender_key`).
    pub mailbox: &'a str,
    pub inbox_id: Option<i64>,
}

pub fn insert_registration(
    conn: &Connection,
    r: &NewRegistration<'_>,
    now: DateTime<Utc>,
) -> Result<TeamId> {
    conn.execute(
        "INSERT INTO teams (name, created_at) VALUES (?1, ?2)",
        params![r.team_name, timestamp(now)],
    )?;
    let team = conn.last_insert_rowid();
    conn.execute(
        "INSERT INTO registrations (team_id, mail_address, requested_name, preferences, organization, members,
            record, auth_salt, auth_hash, registered_at, inbox_id, auth_index, mailbox)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            team,
            r.mail_address,
            r.requested_name,
            r.preferences,
            r.organization,
            r.members_json,
            r.record,
            r.auth_salt,
            r.auth_hash,
            timestamp(now),
            r.inbox_id,
            r.auth_index,
            r.mailbox
        ],
    )?;
    Ok(TeamId(team as u32))
}

/// How many teams are registered with an address of `mailbox` (an address
/// case-folded without a `+tag`).
pub fn count_registrations_of_mailbox(conn: &Connection, mailbox: &str) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM registrations WHERE mailbox = ?1",
        [mailbox],
        |r| r.get(0),
    )?)
}

pub fn compile_requests_since(
    conn: &Connection,
    team: TeamId,
    since: DateTime<Utc>,
) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM compile_requests WHERE team_id = ?1 AND at >= ?2",
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

// ---- the organizer's digest ----

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

/// Replaces the stored bytes of an incoming mail (its sealed form).
pub fn set_inbox_raw(conn: &Connection, id: i64, raw: &[u8]) -> Result<()> {
    conn.execute("UPDATE inbox SET raw = ?2 WHERE id = ?1", params![id, raw])?;
    Ok(())
}

/// Replaces the stored bytes of an outgoing mail (its sealed form).
pub fn set_outbox_raw(conn: &Connection, id: i64, raw: &[u8]) -> Result<()> {
    conn.execute("UPDATE outbox SET raw = ?2 WHERE id = ?1", params![id, raw])?;
    Ok(())
}

/// Whether a one-time maintenance task (see `schema/0008_seal_backlog.sql`)
/// is still to be done.
pub fn task_pending(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM maintenance_tasks WHERE name = ?1",
            [name],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

pub fn task_done(conn: &Connection, name: &str) -> Result<()> {
    conn.execute("DELETE FROM maintenance_tasks WHERE name = ?1", [name])?;
    Ok(())
}

/// Stored raw mails in the given states: (id, raw), for sealing a backlog.
pub fn raw_mails(
    conn: &Connection,
    table: MailTable,
    states: &[&str],
) -> Result<Vec<(i64, Vec<u8>)>> {
    let table = match table {
        MailTable::Inbox => "inbox",
        MailTable::Outbox => "outbox",
    };
    let list = states
        .iter()
        .map(|s| format!("'{}'", s.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ");
    let mut st = conn.prepare(&format!(
        "SELECT id, raw FROM {table} WHERE state IN ({list}) ORDER BY id"
    ))?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The two tables of raw mails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailTable {
    Inbox,
    Outbox,
}

/// What a strategy version stores of its source: (id, source, report
/// JSON, description).
pub type StoredSource = (i64, Vec<u8>, Option<String>, Option<String>);

pub fn stored_sources(conn: &Connection) -> Result<Vec<StoredSource>> {
    let mut st =
        conn.prepare("SELECT id, source, report, description FROM strategy_versions ORDER BY id")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The built programs of bots (JSON): (version id, program).
pub fn bot_program_binaries(conn: &Connection) -> Result<Vec<(i64, Vec<u8>)>> {
    let mut st = conn.prepare(
        "SELECT v.id, v.binary FROM strategy_versions v JOIN bot_programs b \
         ON b.version_id = v.id WHERE v.binary IS NOT NULL ORDER BY v.id",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub fn set_version_binary(conn: &Connection, id: i64, binary: &[u8]) -> Result<()> {
    conn.execute(
        "UPDATE strategy_versions SET binary = ?2 WHERE id = ?1",
        params![id, binary],
    )?;
    Ok(())
}

pub fn set_stored_source(conn: &Connection, v: &StoredSource) -> Result<()> {
    conn.execute(
        "UPDATE strategy_versions SET source = ?2, report = ?3, description = ?4 WHERE id = ?1",
        params![v.0, v.1, v.2, v.3],
    )?;
    Ok(())
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
        "SELECT max(created_at) FROM outbox WHERE kind = ?1",
        [kind],
        |r| r.get(0),
    )?;
    s.map(|s| super::admin::parse_timestamp(&s)).transpose()
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

/// A registration waiting for its address to confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub id: i64,
    pub mail_address: String,
    pub body: String,
}

/// What [`insert_pending_registration`] stores.
pub struct NewPending<'a> {
    pub mail_address: &'a str,
    pub domain: &'a str,
    pub requested_by: &'a str,
    pub body: &'a str,
    pub code_hash: &'a str,
}

pub fn insert_pending_registration(
    conn: &Connection,
    p: &NewPending<'_>,
    now: DateTime<Utc>,
) -> Result<()> {
    conn.execute(
        "INSERT INTO pending_registrations
           (mail_address, domain, requested_by, body, code_hash, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            p.mail_address,
            p.domain,
            p.requested_by,
            p.body,
            p.code_hash,
            timestamp(now)
        ],
    )?;
    Ok(())
}

/// The waiting registration whose request carried the code with this hash,
/// if it was made at `since` or later.
pub fn pending_by_code(
    conn: &Connection,
    code_hash: &str,
    since: DateTime<Utc>,
) -> Result<Option<Pending>> {
    Ok(conn
        .query_row(
            "SELECT id, mail_address, body FROM pending_registrations
              WHERE code_hash = ?1 AND created_at >= ?2",
            params![code_hash, timestamp(since)],
            |r| {
                Ok(Pending {
                    id: r.get(0)?,
                    mail_address: r.get(1)?,
                    body: r.get(2)?,
                })
            },
        )
        .optional()?)
}

pub fn delete_pending(conn: &Connection, id: i64) -> Result<()> {
    conn.execute("DELETE FROM pending_registrations WHERE id = ?1", [id])?;
    Ok(())
}

/// Forgets the requests made before `before`.
pub fn forget_pending_registrations(conn: &Connection, before: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "DELETE FROM pending_registrations WHERE created_at < ?1",
        [timestamp(before)],
    )?;
    Ok(())
}

/// Confirmation requests to `address` made at `since` or later.
pub fn pending_to_address_since(
    conn: &Connection,
    address: &str,
    since: DateTime<Utc>,
) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM pending_registrations WHERE mail_address = ?1 AND created_at >= ?2",
        params![address, timestamp(since)],
        |r| r.get::<_, i64>(0),
    )? as u64)
}

/// Confirmation requests to addresses at `domain` made at `since` or later.
pub fn pending_to_domain_since(
    conn: &Connection,
    domain: &str,
    since: DateTime<Utc>,
) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM pending_registrations WHERE domain = ?1 AND created_at >= ?2",
        params![domain, timestamp(since)],
        |r| r.get::<_, i64>(0),
    )? as u64)
}

/// Whether a contest of a bot discipline has started (running or finished).
pub fn bot_contest_started(conn: &Connection) -> Result<bool> {
    let n: i64 = conn.query_row("SELECT COUNT(*) FROM bot_contests", [], |r| r.get(0))?;
    Ok(n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{self, StoredSecret};
    use crate::mail::secrets::{seal_with, Look};

    fn register(conn: &Connection, i: usize, secret: &StoredSecret) {
        let address = format!("team{i}@x.example");
        insert_registration(
            conn,
            &NewRegistration {
                team_name: &format!("team_{i}"),
                requested_name: &format!("team_{i}"),
                mail_address: &address,
                preferences: "",
                organization: "Org",
                members_json: "[]",
                record: "",
                auth_salt: &secret.salt,
                auth_hash: &secret.hash,
                auth_index: &secret.index,
                mailbox: &address,
                inbox_id: None,
            },
            Utc::now(),
        )
        .unwrap();
    }

    /// Issue 35: the cost of a mail does not grow with the field. A mail
    /// with 256 auth-shaped words is sealed against 3000 teams with one
    /// indexed lookup per word and no salted hash computed; the one real
    /// string among the words is masked. A team stored before the index
    /// (no digest) is still found, by its salted hash.
    #[test]
    fn a_mails_words_are_looked_up_by_index_whatever_the_field() {
        let store = crate::store::Store::open_in_memory().unwrap();
        let conn = store.conn();
        conn.execute_batch("BEGIN").unwrap();
        let mut real = String::new();
        for i in 0..3000 {
            let secret = auth::new_auth_string();
            register(conn, i, &StoredSecret::of(&secret));
            if i == 1234 {
                real = secret;
            }
        }
        conn.execute_batch("COMMIT").unwrap();
        let mut words: Vec<String> = (0..255).map(|_| auth::new_auth_string()).collect();
        words.push(real.to_ascii_uppercase());
        let mail = format!(
            "From: x@y.example\r\nSubject: words\r\n\r\n{}\r\n",
            words.join(" ")
        );
        let mut lookup = StoredSecrets::new(conn);
        let sealed = seal_with(mail.as_bytes(), Look::Outbound, usize::MAX, &mut lookup).unwrap();
        assert_eq!(sealed.masked, 1);
        assert!(!String::from_utf8_lossy(&sealed.raw).contains(&real.to_ascii_uppercase()));
        assert_eq!(lookup.lookups, 256);
        assert_eq!(lookup.unindexed_checks, 0);

        // A secret of an older version: no index digest.
        let old = auth::new_auth_string();
        register(conn, 5000, &StoredSecret::of(&old));
        conn.execute(
            "UPDATE registrations SET auth_index = NULL WHERE mail_address = 'team5000@x.example'",
            [],
        )
        .unwrap();
        let mut lookup = StoredSecrets::new(conn);
        let mail = format!("From: x@y.example\r\n\r\nmine: {old}\r\n");
        let sealed = seal_with(mail.as_bytes(), Look::Outbound, usize::MAX, &mut lookup).unwrap();
        assert_eq!(sealed.masked, 1);
        assert_eq!(lookup.unindexed_checks, 1);
    }
}
