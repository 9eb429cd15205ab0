//! The lanes of pending mails (issue 35): each pending mail is read and
//! authenticated once, when first seen, and its lane stored with it (a
//! proven team's compile request, a proven team's other mail, a
//! registration, a stranger's), so a cycle reads keys only; and the proven
//! teams' compile requests waiting in the inbox ([`pending_compiles`]).
//!
//! Not here: choosing which waiting compile request starts next
//! (`compile_queue`), and processing a mail (`one.rs`).

use crate::config::Config;
use crate::mail::commands::{self, classify, Command};
use crate::mail::message::{self, Limits};
use crate::store::mail::{self as db, InboxRow};
use crate::store::{Store, StoreError};
use crate::tournament::TeamId;

/// A compile request of a proven team waiting in the inbox: its mail and
/// its team (the queue takes turns by team).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedCompile {
    pub inbox_id: i64,
    pub team: TeamId,
}

/// Whether [`classify_pending`] records what it classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classified {
    /// Stored with the mail: it is never read for this again (`serve`).
    Stored,
    /// Kept in memory only (`status`, which writes nothing).
    Counted,
}

/// The key of a proven team's compile request: this and the team's id.
pub(super) const COMPILE_KEY: &str = "c:t";
/// The key of a proven team's other mail (the first lane).
const TEAM_LANE: &str = "q1:";
/// The key of a registration or a confirmation (the second lane: what a
/// newcomer needs, bounded by the registration's budget).
const REGISTRATION_LANE: &str = "q2:";
/// The key of any other mail: a stranger's claim (the last lane).
const STRANGER_LANE: &str = "q3:";

/// The lane of a pending mail, from its stored bytes: a compile request
/// or another mail of a team proven by its authentification string, a
/// registration (or confirmation), or a stranger's other mail. Costs one parse of a mail of at most `max_mail_bytes` and
/// one look-up by team name, whatever the field.
fn lane_key(
    conn: &rusqlite::Connection,
    config: &Config,
    row: &InboxRow,
) -> Result<String, StoreError> {
    if row.full_size.is_some() {
        return Ok(STRANGER_LANE.into());
    }
    let Ok(mail) = message::parse(&row.raw, config.contest.loop_id.as_str(), &limits(config))
    else {
        return Ok(STRANGER_LANE.into());
    };
    if mail.answerable_address().is_err() {
        return Ok(STRANGER_LANE.into());
    }
    let command = classify(&mail.subject);
    // A fault of the store is the caller's, never a stranger's lane.
    let team = commands::proving_team(conn, config, &mail, command)?;
    // A machine's mail is never answered unless its team's program sent
    // it (`proving_team`).
    if mail.automatic.is_some() && team.is_none() {
        return Ok(STRANGER_LANE.into());
    }
    Ok(match (team, command) {
        (Some(team), Command::Compile) => format!("{COMPILE_KEY}{}", team.0),
        (Some(_), _) => TEAM_LANE.into(),
        (None, Command::Register | Command::Confirm) => REGISTRATION_LANE.into(),
        (None, _) => STRANGER_LANE.into(),
    })
}

/// Gives every pending mail not seen yet its lane ([`lane_key`]), once:
/// stored with it ([`Classified::Stored`]) or only returned
/// ([`Classified::Counted`]). Returns the (id, key) of what it classified.
pub(super) fn classify_pending(
    store: &Store,
    config: &Config,
    classified: Classified,
) -> Result<Vec<(i64, String)>, StoreError> {
    let conn = store.conn();
    let fresh = db::unclassified_inbox_ids(conn)?;
    let mut keys = Vec::with_capacity(fresh.len());
    // Read and classify first, then write every key in one short
    // transaction: the compile workers' commits never wait for the
    // parsing of a flood.
    for id in fresh {
        let Some(row) = db::pending_inbox_row(conn, id)? else {
            continue;
        };
        keys.push((id, lane_key(conn, config, &row)?));
    }
    if classified == Classified::Stored && !keys.is_empty() {
        let tx = conn.unchecked_transaction()?;
        for (id, key) in &keys {
            db::set_queue_key(&tx, *id, key)?;
        }
        tx.commit()?;
    }
    Ok(keys)
}

/// The compile requests of proven teams waiting in the inbox, oldest
/// first. A pending mail is read and authenticated once, when first seen,
/// and its lane stored with it: each later call reads only keys from an
/// index, so a cycle costs the same whatever waits (issue 35: 2000
/// waiting 58 kB heads were all parsed again every cycle). A stranger's
/// "please compile" (no valid `<<FROM>>` line) never queues: the quick
/// pass answers it.
pub fn pending_compiles(
    store: &Store,
    config: &Config,
    classified: Classified,
) -> Result<Vec<QueuedCompile>, StoreError> {
    let counted = classify_pending(store, config, classified)?;
    let mut queued = db::pending_with_queue_key(store.conn(), COMPILE_KEY)?;
    if classified == Classified::Counted {
        queued.extend(counted);
    }
    queued.sort_by_key(|(id, _)| *id);
    Ok(queued
        .into_iter()
        .filter_map(|(inbox_id, key)| {
            let team = key.strip_prefix(COMPILE_KEY)?.parse().ok()?;
            Some(QueuedCompile {
                inbox_id,
                team: TeamId(team),
            })
        })
        .collect())
}

pub(super) fn limits(config: &Config) -> Limits {
    Limits {
        max_mail_bytes: config.limits.max_mail_bytes,
        ..Limits::default()
    }
}
