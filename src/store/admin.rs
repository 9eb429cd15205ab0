//! The organizer's tables and queries: the audit log of admin actions, the
//! contest lease (one holder of the contest at a time), withdrawn teams,
//! failed outgoing and set-aside incoming mail, the teams as the organizer
//! sees them, and the progress figures of a running contest.
//!
//! Like the rest of the store it decides nothing and reads no clock: `now`
//! is passed in, and callers group a change with its audit entry and the
//! mails it causes in one transaction.

use chrono::{DateTime, Utc};
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension};

use super::mail::state::OutState;
use super::{timestamp, Result, StoreError};
use crate::tournament::TeamId;

/// Parses a stored timestamp.
pub fn parse_timestamp(s: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|d| d.with_timezone(&Utc))
        .map_err(|e| StoreError::Corrupt(format!("timestamp {s:?}: {e}")))
}

// ---- the audit log ----

/// One admin action as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRow {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub details: String,
}

/// Logs an admin action (in the caller's transaction, with the change).
pub fn log_action(
    conn: &Connection,
    now: DateTime<Utc>,
    actor: &str,
    action: &str,
    target: &str,
    details: &serde_json::Value,
) -> Result<()> {
    conn.execute(
        "INSERT INTO admin_log (at, actor, action, target, details) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![timestamp(now), actor, action, target, details.to_string()],
    )?;
    Ok(())
}

/// The latest `limit` log entries, oldest first.
pub fn admin_log(conn: &Connection, limit: usize) -> Result<Vec<LogRow>> {
    let mut st = conn.prepare(
        "SELECT id, at, actor, action, target, details FROM
           (SELECT * FROM admin_log ORDER BY id DESC LIMIT ?1) ORDER BY id",
    )?;
    let rows = st.query_map([limit as i64], |r| {
        Ok(LogRow {
            id: r.get(0)?,
            at: r.get(1)?,
            actor: r.get(2)?,
            action: r.get(3)?,
            target: r.get(4)?,
            details: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

// ---- the contest lease ----

/// Who holds the contest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRow {
    pub holder: String,
    pub description: String,
    /// The holder process's identity (`boot_id pid start_time`).
    pub process: String,
    pub acquired_at: DateTime<Utc>,
    pub renewed_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// The outcome of trying to take the lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseClaim {
    /// Ours now (new, renewed, or taken over from an expired holder).
    Acquired,
    /// Someone else's, and not expired.
    Held(LeaseRow),
}

/// The lease as stored (expired or not).
pub fn lease(conn: &Connection) -> Result<Option<LeaseRow>> {
    let row = conn
        .query_row(
            "SELECT holder, description, process, acquired_at, renewed_at, expires_at
             FROM contest_lease WHERE id = 1",
            [],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            },
        )
        .optional()?;
    row.map(|(holder, description, process, a, r, e)| {
        Ok(LeaseRow {
            holder,
            description,
            process,
            acquired_at: parse_timestamp(&a)?,
            renewed_at: parse_timestamp(&r)?,
            expires_at: parse_timestamp(&e)?,
        })
    })
    .transpose()
}

/// Who asks for the lease.
#[derive(Debug, Clone, Copy)]
pub struct Claimant<'a> {
    /// A token unique to this claim.
    pub holder: &'a str,
    /// For people.
    pub description: &'a str,
    /// The process's identity (`boot_id pid start_time`).
    pub process: &'a str,
}

/// Takes the lease for `c` until `expires`, if it is free, expired at
/// `now`, or already `c`'s. One statement, so two processes trying at
/// once cannot both win.
pub fn acquire_lease(
    conn: &Connection,
    c: Claimant<'_>,
    now: DateTime<Utc>,
    expires: DateTime<Utc>,
) -> Result<LeaseClaim> {
    let n = conn.execute(
        "INSERT INTO contest_lease (id, holder, description, process, acquired_at, renewed_at, expires_at)
         VALUES (1, ?1, ?2, ?5, ?3, ?3, ?4)
         ON CONFLICT(id) DO UPDATE SET
             holder = excluded.holder,
             description = excluded.description,
             process = excluded.process,
             acquired_at = CASE WHEN contest_lease.holder = excluded.holder
                                THEN contest_lease.acquired_at ELSE excluded.acquired_at END,
             renewed_at = excluded.renewed_at,
             expires_at = excluded.expires_at
         WHERE contest_lease.holder = excluded.holder OR contest_lease.expires_at <= excluded.renewed_at",
        params![c.holder, c.description, timestamp(now), timestamp(expires), c.process],
    )?;
    if n == 1 {
        return Ok(LeaseClaim::Acquired);
    }
    match lease(conn)? {
        Some(row) => Ok(LeaseClaim::Held(row)),
        // Released between the two statements: try once more.
        None => acquire_lease(conn, c, now, expires),
    }
}

/// Takes the lease over from `dead_holder` (whose process is known to be
/// gone), if it is still that holder's. `false`: someone else was faster.
pub fn take_over_lease(
    conn: &Connection,
    dead_holder: &str,
    c: Claimant<'_>,
    now: DateTime<Utc>,
    expires: DateTime<Utc>,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE contest_lease SET holder = ?2, description = ?3, process = ?4, acquired_at = ?5,
                renewed_at = ?5, expires_at = ?6
         WHERE id = 1 AND holder = ?1",
        params![
            dead_holder,
            c.holder,
            c.description,
            c.process,
            timestamp(now),
            timestamp(expires)
        ],
    )?;
    Ok(n == 1)
}

/// Extends `holder`'s lease. `false`: it is not `holder`'s any more.
pub fn renew_lease(
    conn: &Connection,
    holder: &str,
    now: DateTime<Utc>,
    expires: DateTime<Utc>,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE contest_lease SET renewed_at = ?2, expires_at = ?3 WHERE id = 1 AND holder = ?1",
        params![holder, timestamp(now), timestamp(expires)],
    )?;
    Ok(n == 1)
}

/// Gives the lease up (if it is still `holder`'s).
pub fn release_lease(conn: &Connection, holder: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM contest_lease WHERE id = 1 AND holder = ?1",
        [holder],
    )?;
    Ok(())
}

// ---- starting the contest once ----

/// Records tournament `tournament_id` as the contest, unless another
/// process recorded one first. `false`: someone else's start won.
pub fn claim_contest(conn: &Connection, tournament_id: i64, now: DateTime<Utc>) -> Result<bool> {
    let n = conn.execute(
        "INSERT OR IGNORE INTO contest (id, tournament_id, state, started_at)
         VALUES (1, ?1, 'running', ?2)",
        params![tournament_id, timestamp(now)],
    )?;
    Ok(n == 1)
}

/// Removes a tournament that never played (the loser of two starts at once).
pub fn discard_unplayed_tournament(conn: &Connection, tournament_id: i64) -> Result<()> {
    let played: i64 = conn.query_row(
        "SELECT COUNT(*) FROM rounds WHERE tournament_id = ?1",
        [tournament_id],
        |r| r.get(0),
    )?;
    if played > 0 {
        return Err(StoreError::Corrupt(format!(
            "tournament {tournament_id} has rounds; not discarding it"
        )));
    }
    conn.execute(
        "DELETE FROM tournament_entries WHERE tournament_id = ?1",
        [tournament_id],
    )?;
    conn.execute("DELETE FROM tournaments WHERE id = ?1", [tournament_id])?;
    Ok(())
}

// ---- teams ----

/// A team as the organizer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamRow {
    pub team: TeamId,
    pub name: String,
    pub mail_address: String,
    pub organization: String,
    pub preferences: String,
    pub registered_at: String,
    pub n_versions: u32,
    /// The latest accepted version's id.
    pub current_version: Option<i64>,
    /// When and why, for a withdrawn team.
    pub withdrawn: Option<(String, String)>,
}

/// Every registered team (and, with `Withdrawn::Included`, the withdrawn
/// ones), by team id.
pub fn teams(conn: &Connection, withdrawn: Withdrawn) -> Result<Vec<TeamRow>> {
    let versions = "(SELECT COUNT(*) FROM strategy_versions v WHERE v.team_id = t.id),
         (SELECT v.id FROM strategy_versions v WHERE v.team_id = t.id AND v.accepted = 1
          ORDER BY v.id DESC LIMIT 1)";
    let mut out = Vec::new();
    let mut st = conn.prepare(&format!(
        "SELECT r.team_id, t.name, r.mail_address, r.organization, r.preferences, r.registered_at,
                {versions}
         FROM registrations r JOIN teams t ON t.id = r.team_id ORDER BY r.team_id"
    ))?;
    let rows = st.query_map([], |r| {
        Ok(TeamRow {
            team: TeamId(r.get::<_, i64>(0)? as u32),
            name: r.get(1)?,
            mail_address: r.get(2)?,
            organization: r.get(3)?,
            preferences: r.get(4)?,
            registered_at: r.get(5)?,
            n_versions: r.get(6)?,
            current_version: r.get(7)?,
            withdrawn: None,
        })
    })?;
    for row in rows {
        out.push(row?);
    }
    if withdrawn == Withdrawn::Included {
        let mut st = conn.prepare(&format!(
            "SELECT w.team_id, t.name, w.mail_address, w.registration, w.withdrawn_at, w.reason,
                    {versions}
             FROM withdrawals w JOIN teams t ON t.id = w.team_id ORDER BY w.team_id"
        ))?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, u32>(6)?,
                r.get::<_, Option<i64>>(7)?,
            ))
        })?;
        for row in rows {
            let (team, name, address, reg, at, reason, n_versions, current) = row?;
            let reg: serde_json::Value = serde_json::from_str(&reg)
                .map_err(|e| StoreError::Corrupt(format!("withdrawal of team {team}: {e}")))?;
            let field = |k: &str| reg[k].as_str().unwrap_or("").to_string();
            out.push(TeamRow {
                team: TeamId(team as u32),
                name,
                mail_address: address,
                organization: field("organization"),
                preferences: field("preferences"),
                registered_at: field("registered_at"),
                n_versions,
                current_version: current,
                withdrawn: Some((at, reason)),
            });
        }
        out.sort_by_key(|t| t.team.0);
    }
    Ok(out)
}

/// Whether a listing includes withdrawn teams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Withdrawn {
    Excluded,
    Included,
}

/// A registered (not withdrawn) team by name, exactly or else
/// case-insensitively.
pub fn team_by_name(conn: &Connection, name: &str) -> Result<Option<TeamRow>> {
    let all = teams(conn, Withdrawn::Excluded)?;
    Ok(all
        .iter()
        .find(|t| t.name == name)
        .or_else(|| all.iter().find(|t| t.name.eq_ignore_ascii_case(name)))
        .cloned())
}

/// A withdrawn team by name (case-insensitively).
pub fn withdrawn_team(conn: &Connection, name: &str) -> Result<Option<TeamRow>> {
    Ok(teams(conn, Withdrawn::Included)?
        .into_iter()
        .find(|t| t.withdrawn.is_some() && t.name.eq_ignore_ascii_case(name)))
}

/// Withdraws a team: its registration row moves, whole, into
/// `withdrawals`, so it no longer enters the contest, gets no contest mail
/// and cannot authenticate; its versions and its name stay.
pub fn withdraw_team(
    conn: &Connection,
    team: TeamId,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    let mut st = conn.prepare("SELECT * FROM registrations WHERE team_id = ?1")?;
    let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let row = st
        .query_row([team.0], |r| {
            let mut obj = serde_json::Map::new();
            for (i, name) in names.iter().enumerate() {
                let v = match r.get_ref(i)? {
                    ValueRef::Null => serde_json::Value::Null,
                    ValueRef::Integer(n) => n.into(),
                    ValueRef::Real(x) => x.into(),
                    ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
                    ValueRef::Blob(b) => {
                        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                        serde_json::json!({ "hex": hex })
                    }
                };
                obj.insert(name.clone(), v);
            }
            Ok(obj)
        })
        .optional()?
        .ok_or_else(|| StoreError::Corrupt(format!("team {} is not registered", team.0)))?;
    let address = row
        .get("mail_address")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    conn.execute(
        "INSERT INTO withdrawals (team_id, mail_address, registration, reason, withdrawn_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            team.0,
            address,
            serde_json::Value::Object(row).to_string(),
            reason,
            timestamp(now)
        ],
    )?;
    conn.execute("DELETE FROM registrations WHERE team_id = ?1", [team.0])?;
    Ok(())
}

/// Sets a team's address, its mailbox (the address in lower case without
/// its `+tag`, `mail::sender::sender_key`) and its registration record.
pub fn set_address(
    conn: &Connection,
    team: TeamId,
    address: &str,
    mailbox: &str,
    record: &str,
) -> Result<()> {
    conn.execute(
        "UPDATE registrations SET mail_address = ?2, record = ?3, mailbox = ?4 WHERE team_id = ?1",
        params![team.0, address, record, mailbox],
    )?;
    Ok(())
}

/// Sets a team's mail preferences and its registration record.
pub fn set_preferences(
    conn: &Connection,
    team: TeamId,
    preferences: &str,
    record: &str,
) -> Result<()> {
    conn.execute(
        "UPDATE registrations SET preferences = ?2, record = ?3 WHERE team_id = ?1",
        params![team.0, preferences, record],
    )?;
    Ok(())
}

/// Replaces a team's salted auth hash and its index digest.
pub fn set_auth(conn: &Connection, team: TeamId, secret: &crate::auth::StoredSecret) -> Result<()> {
    conn.execute(
        "UPDATE registrations SET auth_salt = ?2, auth_hash = ?3, auth_index = ?4
         WHERE team_id = ?1",
        params![
            team.0,
            &secret.salt[..],
            &secret.hash[..],
            &secret.index[..]
        ],
    )?;
    Ok(())
}

/// When a team registered.
pub fn registered_at(conn: &Connection, team: TeamId) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT registered_at FROM registrations WHERE team_id = ?1",
            [team.0],
            |r| r.get(0),
        )
        .optional()?)
}

/// A strategy version as a team's status shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionInfo {
    pub id: i64,
    pub accepted: bool,
    pub lexical_elements: Option<u64>,
    pub compiled_at: String,
    /// The compile report, JSON.
    pub report: String,
}

fn version_info(
    conn: &Connection,
    team: TeamId,
    accepted_only: bool,
) -> Result<Option<VersionInfo>> {
    Ok(conn
        .query_row(
            &format!(
                "SELECT id, accepted, lexical_elements, compiled_at, report FROM strategy_versions
                 WHERE team_id = ?1 {} ORDER BY id DESC LIMIT 1",
                if accepted_only {
                    "AND accepted = 1"
                } else {
                    ""
                }
            ),
            [team.0],
            |r| {
                Ok(VersionInfo {
                    id: r.get(0)?,
                    accepted: r.get(1)?,
                    lexical_elements: r.get::<_, Option<i64>>(2)?.map(|n| n as u64),
                    compiled_at: r.get(3)?,
                    report: r.get(4)?,
                })
            },
        )
        .optional()?)
}

/// A team's latest accepted version and its latest version of all.
pub fn latest_versions(
    conn: &Connection,
    team: TeamId,
) -> Result<(Option<VersionInfo>, Option<VersionInfo>)> {
    Ok((
        version_info(conn, team, true)?,
        version_info(conn, team, false)?,
    ))
}

/// Registered teams without an accepted version that have no outbox mail
/// with the event key `key_prefix` + team id yet: (team, name, address).
pub fn teams_without_strategy_not_told(
    conn: &Connection,
    key_prefix: &str,
) -> Result<Vec<(TeamId, String, String)>> {
    let mut st = conn.prepare(
        "SELECT r.team_id, t.name, r.mail_address FROM registrations r JOIN teams t ON t.id = r.team_id
         WHERE NOT EXISTS (SELECT 1 FROM strategy_versions v WHERE v.team_id = r.team_id AND v.accepted = 1)
           AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_key = ?1 || r.team_id)
         ORDER BY r.team_id",
    )?;
    let rows = st.query_map([key_prefix], |r| {
        Ok((TeamId(r.get::<_, i64>(0)? as u32), r.get(1)?, r.get(2)?))
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Registered teams without an accepted version: (name, address).
pub fn teams_without_strategy(conn: &Connection) -> Result<Vec<(String, String)>> {
    let mut st = conn.prepare(
        "SELECT t.name, r.mail_address FROM registrations r JOIN teams t ON t.id = r.team_id
         WHERE NOT EXISTS (SELECT 1 FROM strategy_versions v WHERE v.team_id = r.team_id AND v.accepted = 1)
         ORDER BY r.team_id",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

// ---- mail the organizer looks after ----

/// How many outbox mails are in `state`.
pub fn count_outbox(conn: &Connection, state: OutState) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM outbox WHERE state = ?1",
        [state.as_str()],
        |r| r.get(0),
    )?)
}

/// How many inbox mails are in `state` (`new`, `done`, `ignored`, `failed`).
pub fn count_inbox(conn: &Connection, state: &str) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM inbox WHERE state = ?1",
        [state],
        |r| r.get(0),
    )?)
}

/// An outgoing mail given up on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedOut {
    pub id: i64,
    pub kind: String,
    pub recipients: Vec<String>,
    pub subject: String,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub created_at: String,
}

/// Every failed outgoing mail, oldest first.
pub fn failed_outgoing(conn: &Connection) -> Result<Vec<FailedOut>> {
    let mut st = conn.prepare(
        "SELECT id, kind, recipients, subject, attempts, last_error, created_at FROM outbox
         WHERE state = ?1 ORDER BY id",
    )?;
    let rows = st.query_map([OutState::Failed.as_str()], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, u32>(4)?,
            r.get::<_, Option<String>>(5)?,
            r.get::<_, String>(6)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, kind, recipients, subject, attempts, last_error, created_at) = row?;
        out.push(FailedOut {
            id,
            kind,
            recipients: serde_json::from_str(&recipients)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            subject,
            attempts,
            last_error,
            created_at,
        });
    }
    Ok(out)
}

/// Puts a failed outgoing mail back into the queue, due now, with a fresh
/// count of attempts. `false`: no failed mail with that id.
pub fn requeue_outgoing(conn: &Connection, id: i64, now: DateTime<Utc>) -> Result<bool> {
    let n = conn.execute(
        "UPDATE outbox SET state = ?3, attempts = 0, next_attempt_at = ?2, reported_at = NULL
         WHERE id = ?1 AND state = ?4",
        params![
            id,
            timestamp(now),
            OutState::Queued.as_str(),
            OutState::Failed.as_str()
        ],
    )?;
    Ok(n == 1)
}

/// An incoming mail set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    pub id: i64,
    pub origin: String,
    pub received_at: String,
    pub attempts: u32,
    pub outcome: Option<String>,
    pub last_error: Option<String>,
    /// The mail's first 64 kB (enough for its headers).
    pub head: Vec<u8>,
}

/// Every set-aside incoming mail, oldest first.
pub fn set_aside_inbox(conn: &Connection) -> Result<Vec<SetAside>> {
    let mut st = conn.prepare(
        "SELECT id, origin, received_at, attempts, outcome, last_error, substr(raw, 1, 65536)
         FROM inbox WHERE state = 'failed' ORDER BY id",
    )?;
    let rows = st.query_map([], |r| {
        Ok(SetAside {
            id: r.get(0)?,
            origin: r.get(1)?,
            received_at: r.get(2)?,
            attempts: r.get(3)?,
            outcome: r.get(4)?,
            last_error: r.get(5)?,
            head: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Puts a set-aside incoming mail back into processing, with a fresh count
/// of attempts. `false`: no set-aside mail with that id.
pub fn requeue_inbox(conn: &Connection, id: i64) -> Result<bool> {
    let n = conn.execute(
        "UPDATE inbox SET state = 'new', attempts = 0, reported_at = NULL
         WHERE id = ?1 AND state = 'failed'",
        [id],
    )?;
    Ok(n == 1)
}

// ---- progress of the contest ----

/// One group of a round, as far as it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupProgress {
    pub number: u32,
    pub n_members: u32,
    pub finished: bool,
    /// Game attempts stored.
    pub n_played: u32,
}

/// One round, as far as it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundProgress {
    pub number: u32,
    pub n_field: u32,
    pub is_final: bool,
    pub finished: bool,
    pub groups: Vec<GroupProgress>,
}

/// Every round of a tournament with its groups and games played.
pub fn rounds_progress(conn: &Connection, tournament: i64) -> Result<Vec<RoundProgress>> {
    let mut st = conn.prepare(
        "SELECT number, field, is_final, finished_at IS NOT NULL FROM rounds
         WHERE tournament_id = ?1 ORDER BY number",
    )?;
    let rounds = st
        .query_map([tournament], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, bool>(3)?,
            ))
        })?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut gst = conn.prepare(
        "SELECT g.number, g.members, g.finished_at IS NOT NULL,
                (SELECT COUNT(*) FROM games x WHERE x.tournament_id = g.tournament_id
                   AND x.round = g.round AND x.grp = g.number)
         FROM groups g WHERE g.tournament_id = ?1 AND g.round = ?2 ORDER BY g.number",
    )?;
    let mut out = Vec::new();
    for (number, field, is_final, finished) in rounds {
        let groups = gst
            .query_map(params![tournament, number], |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                    r.get::<_, u32>(3)?,
                ))
            })?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let count = |json: &str| -> Result<u32> {
            serde_json::from_str::<Vec<serde_json::Value>>(json)
                .map(|v| v.len() as u32)
                .map_err(|e| StoreError::Corrupt(format!("team list: {e}")))
        };
        let mut gs = Vec::new();
        for (g, members, done, played) in groups {
            gs.push(GroupProgress {
                number: g,
                n_members: count(&members)?,
                finished: done,
                n_played: played,
            });
        }
        out.push(RoundProgress {
            number,
            n_field: count(&field)?,
            is_final,
            finished,
            groups: gs,
        });
    }
    Ok(out)
}

/// Games of a tournament stored since `since`.
pub fn games_since(conn: &Connection, tournament: i64, since: DateTime<Utc>) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM games WHERE tournament_id = ?1 AND finished_at >= ?2",
        params![tournament, super::game_time(since)],
        |r| r.get(0),
    )?)
}

/// When the tournament's first game was stored.
pub fn first_game_at(conn: &Connection, tournament: i64) -> Result<Option<DateTime<Utc>>> {
    let ms: Option<i64> = conn.query_row(
        "SELECT MIN(finished_at) FROM games WHERE tournament_id = ?1",
        [tournament],
        |r| r.get(0),
    )?;
    ms.map(|ms| {
        super::game_time_from_sql(ms)
            .ok_or_else(|| StoreError::Corrupt(format!("a game's time of {ms} ms")))
    })
    .transpose()
}

#[cfg(test)]
mod tests;
