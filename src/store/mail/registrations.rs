//! The registrations' tables: registered teams as their forms gave them
//! (`registrations`), and registrations waiting for their address to
//! confirm (`pending_registrations`).
//!
//! Not here: whether a team may register (`mail::commands::register`).

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use crate::store::{timestamp, Result, StoreError};
use crate::tournament::TeamId;

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
    // Prepared once per connection: asked for every member of every group
    // that finishes.
    Ok(conn
        .prepare_cached(&format!("{REG_SELECT} WHERE t.name = ?1"))?
        .query_row([team_name], reg_row)
        .optional()?)
}

/// A registration as the contest's mails need it: where to and what the
/// team asked for (not its record or its secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailingRow {
    pub team_name: String,
    pub mail_address: String,
    pub preferences: String,
}

/// The most names one query of [`mailing_of`] asks for (below SQLite's
/// smallest limit of parameters, 999).
const MAILING_CHUNK: usize = 500;

/// The numbers of names the statements of [`mailing_of`] take: a chunk of
/// names is padded with NULLs (which match no name) up to the next of
/// them, so a connection prepares at most this many statements, whatever
/// sizes its groups have (one per size, as before, made a field of
/// groups of 1 to 500 teams keep up to 500 statements).
pub const MAILING_SIZES: [usize; 5] = [8, 16, 32, 64, MAILING_CHUNK];

/// The number of names the statement for a chunk of `n` names (1 to
/// [`MAILING_CHUNK`]) takes: the smallest of [`MAILING_SIZES`] that holds
/// them.
pub fn mailing_size(n: usize) -> usize {
    MAILING_SIZES
        .into_iter()
        .find(|&size| size >= n)
        .unwrap_or(MAILING_CHUNK)
}

/// The statement of [`mailing_of`] for `size` names (one of
/// [`MAILING_SIZES`]): written once per process and size, not per call
/// (the statement cache finds a statement by its text, so each group's
/// event asked for it anew).
fn mailing_sql(size: usize) -> &'static str {
    static SQL: std::sync::OnceLock<[String; 5]> = std::sync::OnceLock::new();
    let all = SQL.get_or_init(|| {
        MAILING_SIZES.map(|size| {
            let marks = vec!["?"; size].join(",");
            format!(
                "SELECT t.name, r.mail_address, r.preferences FROM registrations r \
                 JOIN teams t ON t.id = r.team_id WHERE t.name IN ({marks})"
            )
        })
    });
    let i = MAILING_SIZES
        .iter()
        .position(|&s| s == size)
        .expect("a size of MAILING_SIZES");
    &all[i]
}

/// The registrations of `team_names` (those registered, in no particular
/// order) as the mails need them: one query for a group's members, not one
/// per member. Read when asked, so a registration changed during a contest
/// (a new address, other preferences, a withdrawal) counts from the next
/// event on.
pub fn mailing_of(conn: &Connection, team_names: &[String]) -> Result<Vec<MailingRow>> {
    let mut out = Vec::with_capacity(team_names.len());
    for chunk in team_names.chunks(MAILING_CHUNK) {
        let size = mailing_size(chunk.len());
        // Prepared once per connection and size ([`MAILING_SIZES`]).
        let mut st = conn.prepare_cached(mailing_sql(size))?;
        let padded = chunk
            .iter()
            .map(Some)
            .chain(std::iter::repeat_n(None, size - chunk.len()));
        let rows = st.query_map(rusqlite::params_from_iter(padded), |r| {
            Ok(MailingRow {
                team_name: r.get(0)?,
                mail_address: r.get(1)?,
                preferences: r.get(2)?,
            })
        })?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

pub fn all_registrations(conn: &Connection) -> Result<Vec<RegistrationRow>> {
    let mut st = conn.prepare(&format!("{REG_SELECT} ORDER BY r.team_id"))?;
    let rows = st.query_map([], reg_row)?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Whether a registration's address is proven: by a confirmed address, or
/// by the team's first mail with its authentification string. A
/// registration whose From line only claimed its address waits; in a full
/// contest it may give its place to a newcomer (`mail::commands::register`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressProof {
    /// The address answered a confirmation request.
    Confirmed,
    /// Only the From line said so (a claim): waiting for the team's first
    /// authenticated mail.
    Claimed,
}

/// Registrations by whether their address is proven.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegistrationCount {
    /// Proven: their places are safe.
    pub proven: u32,
    /// Claimed only, waiting for their proof.
    pub waiting: u32,
}

/// The registrations, proven and waiting; of one organization (compared
/// trimmed and case-folded) when `organization` is given.
pub fn count_registrations(
    conn: &Connection,
    organization: Option<&str>,
) -> Result<RegistrationCount> {
    let (proven, waiting) = conn.query_row(
        "SELECT COUNT(proven_at), COUNT(*) - COUNT(proven_at) FROM registrations \
         WHERE ?1 IS NULL OR lower(trim(organization)) = lower(trim(?1))",
        [organization],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(RegistrationCount { proven, waiting })
}

/// The registration that waits longest for its address's proof, if it
/// was registered before `before`; of one organization (compared as
/// [`count_registrations`] compares) when given.
pub fn oldest_waiting_registration(
    conn: &Connection,
    organization: Option<&str>,
    before: DateTime<Utc>,
) -> Result<Option<RegistrationRow>> {
    Ok(conn
        .query_row(
            &format!(
                "{REG_SELECT} WHERE r.proven_at IS NULL AND r.registered_at < ?2 \
                   AND (?1 IS NULL OR lower(trim(r.organization)) = lower(trim(?1))) \
                 ORDER BY r.registered_at, r.team_id LIMIT 1"
            ),
            params![organization, timestamp(before)],
            reg_row,
        )
        .optional()?)
}

/// A withdrawn registration: its team's name, its authentification
/// string's salt and hash, when and why it was withdrawn.
#[derive(Debug, Clone)]
pub struct WithdrawnRegistration {
    pub team_name: String,
    pub auth_salt: Vec<u8>,
    pub auth_hash: Vec<u8>,
    pub reason: String,
    pub withdrawn_at: String,
}

/// The withdrawn registrations of the team named `team` (exactly, as
/// [`registration_by_team`] finds a registered one; names of withdrawn
/// teams stay taken, so there is at most one).
pub fn withdrawn_registrations(
    conn: &Connection,
    team: &str,
) -> Result<Vec<WithdrawnRegistration>> {
    let mut st = conn.prepare_cached(
        "SELECT t.name, w.registration, w.reason, w.withdrawn_at FROM withdrawals w \
         JOIN teams t ON t.id = w.team_id WHERE t.name = ?1",
    )?;
    let rows = st.query_map([team], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    let mut found = Vec::new();
    for row in rows {
        let (team_name, registration, reason, withdrawn_at) = row?;
        // The row as it was, blobs as `{"hex": ...}` (`withdraw_team`).
        let blob = |v: &serde_json::Value, key: &str| -> Option<Vec<u8>> {
            let hex = v.get(key)?.get("hex")?.as_str()?;
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect()
        };
        let v: serde_json::Value = serde_json::from_str(&registration)
            .map_err(|e| StoreError::Corrupt(format!("withdrawal of {team_name}: {e}")))?;
        let (Some(auth_salt), Some(auth_hash)) = (blob(&v, "auth_salt"), blob(&v, "auth_hash"))
        else {
            continue;
        };
        found.push(WithdrawnRegistration {
            team_name,
            auth_salt,
            auth_hash,
            reason,
            withdrawn_at,
        });
    }
    Ok(found)
}

/// Marks team `team`'s address proven (its mail carried its
/// authentification string), if it was not already.
pub fn mark_proven(conn: &Connection, team: TeamId, now: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "UPDATE registrations SET proven_at = ?2 WHERE team_id = ?1 AND proven_at IS NULL",
        params![team.0, timestamp(now)],
    )?;
    Ok(())
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
    /// The auth string's index digest (`crate::auth::index`).
    pub auth_index: &'a [u8],
    /// The address case-folded without a `+tag` (`process::sender_key`).
    pub mailbox: &'a str,
    pub inbox_id: Option<i64>,
    /// Whether the address is proven already.
    pub proof: AddressProof,
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
            record, auth_salt, auth_hash, registered_at, inbox_id, auth_index, mailbox, proven_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
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
            r.mailbox,
            match r.proof {
                AddressProof::Confirmed => Some(timestamp(now)),
                AddressProof::Claimed => None,
            }
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

/// The registrations with an address of `mailbox` (folded as above),
/// proven and waiting for their proof, in one look-up: a mail naming the
/// mailbox draws on the proven mailboxes' kits only if one proved itself.
pub fn registrations_of_mailbox(conn: &Connection, mailbox: &str) -> Result<RegistrationCount> {
    let (proven, waiting) = conn.query_row(
        "SELECT COUNT(proven_at), COUNT(*) - COUNT(proven_at) FROM registrations WHERE mailbox = ?1",
        [mailbox],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(RegistrationCount { proven, waiting })
}

/// When the server answered a mail of team `team` that the team's program
/// sent (`Auto-Submitted: auto-generated`), if it did at `since` or later
/// (schema 0036): such mails get one answer in 24 hours.
pub fn automatic_answered_since(
    conn: &Connection,
    team: TeamId,
    since: DateTime<Utc>,
) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT automatic_answered_at FROM registrations \
             WHERE team_id = ?1 AND automatic_answered_at >= ?2",
            params![team.0, timestamp(since)],
            |r| r.get(0),
        )
        .optional()?)
}

/// Records that a mail of team `team`'s program was answered at `now`.
pub fn set_automatic_answered(conn: &Connection, team: TeamId, now: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "UPDATE registrations SET automatic_answered_at = ?2 WHERE team_id = ?1",
        params![team.0, timestamp(now)],
    )?;
    Ok(())
}

/// The mailbox (its address case-folded without a `+tag`) team `team` is
/// registered with, if it is registered: the one address its
/// authentification string proves (its acknowledgement went there).
pub fn mailbox_of_team(conn: &Connection, team: TeamId) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT mailbox FROM registrations WHERE team_id = ?1",
            [team.0],
            |r| r.get::<_, Option<String>>(0),
        )
        .optional()?
        .flatten())
}

/// How many teams are registered with an address of `mailbox` (folded as
/// above) that proved itself: confirmed by answering a request, or by the
/// team's first mail with its string (`proven_at`). A registration only a
/// From line claimed is not counted: a stranger makes those at will (red
/// team F11), so intake gives no share of its own to their mailboxes.
pub fn count_proven_registrations_of_mailbox(conn: &Connection, mailbox: &str) -> Result<u32> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM registrations WHERE mailbox = ?1 AND proven_at IS NOT NULL",
        [mailbox],
        |r| r.get(0),
    )?)
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
    /// The address in lower case without its `+tag` (`sender_key`).
    pub mailbox: &'a str,
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
           (mail_address, domain, requested_by, body, code_hash, created_at, mailbox)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            p.mail_address,
            p.domain,
            p.requested_by,
            p.body,
            p.code_hash,
            timestamp(now),
            p.mailbox
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

/// Confirmation requests to `address`'s mailbox (`mailbox`, its
/// `sender_key`) made at `since` or later.
pub fn pending_to_address_since(
    conn: &Connection,
    address: &str,
    mailbox: &str,
    since: DateTime<Utc>,
) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM pending_registrations \
         WHERE (mailbox = ?1 OR (mailbox IS NULL AND mail_address = ?2 COLLATE NOCASE)) \
           AND created_at >= ?3",
        params![mailbox, address, timestamp(since)],
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
