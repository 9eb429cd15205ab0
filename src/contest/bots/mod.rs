//! The contest run of a bot discipline (the seeds' four and any
//! registered one; it names none): at the start the entries are fixed (every
//! registered team's latest accepted bot of the contest's discipline), the
//! discipline's planner says which games to play, the games are played in
//! the bot sandbox (on local threads, or by workers on other machines when
//! the config has `[engine] nats`: same games, same results), each result
//! is stored as it comes in (in batches of at most 50 ms: so a run killed
//! midway resumes with the games still missing), and at the end the
//! discipline's own table goes to every participant by mail, in the same
//! transaction that marks the contest finished.
//!
//! Here: the contest's entries and materials ([`start`]; the flooding
//! island's islands), the run as one call ([`run_contest`]) and what
//! `status` says. Its parts: `jobs` (the planner's games, checked, played
//! and stored) and `finish` (the results from the stored games, the final
//! mails). The stored contest and its games as the site and the mails read
//! them ([`Tally`]: per-opponent rows counted from the same stored results
//! as the table and by its rules) are `crate::store::bots`, re-exported.
//!
//! What it does not do: the rules, planners and tables of a discipline
//! (its seam, `crate::discipline::seam`), how a bot runs
//! (`crate::sandbox::bot`).
//! KNOBELN's own contest is [`super::run`].

use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension};

use crate::config::Config;
pub use crate::discipline::results::{results_text, Results};
use crate::discipline::Discipline;

use crate::store::bots::Result;
use crate::store::mail::all_registrations;
use crate::store::Store;

mod finish;
mod jobs;

pub use crate::store::bots::*;
pub use finish::*;
pub use jobs::*;

impl From<crate::contest::lease::LeaseError> for BotContestError {
    fn from(e: crate::contest::lease::LeaseError) -> Self {
        match e {
            crate::contest::lease::LeaseError::Held(who) => BotContestError::Held(who),
            crate::contest::lease::LeaseError::Store(e) => BotContestError::Store(e),
        }
    }
}

/// Starts the contest once: fixes the entries and the islands. Returns the
/// contest (the one already started, if any).
pub fn start(
    store: &mut Store,
    config: &Config,
    seed: u64,
    now: DateTime<Utc>,
) -> Result<BotContest> {
    if let Some(c) = contest(store.conn(), config.contest.discipline)? {
        return Ok(c);
    }
    let d = config.contest.discipline;
    let mut entries = Vec::new();
    for reg in all_registrations(store.conn())? {
        let version: Option<i64> = store
            .conn()
            .query_row(
                "SELECT v.id FROM strategy_versions v JOIN bot_programs b ON b.version_id = v.id \
                 WHERE v.team_id = ?1 AND v.accepted = 1 AND b.discipline = ?2 \
                 ORDER BY v.id DESC LIMIT 1",
                params![reg.team.0, d.name()],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(version) = version {
            entries.push(Entry {
                team: reg.team,
                version,
                name: reg.team_name,
            });
        }
    }
    if entries.is_empty() {
        return Err(BotContestError::NoBots(d.title()));
    }
    let seam = crate::discipline::registry::of(d).ok_or(BotContestError::NoBots("KNOBELN"))?;
    // What the teams sent for the contest (the flooding island's islands),
    // of the teams with a bot, named after the team.
    let sent: Vec<(String, String)> = {
        let mut st = store.conn().prepare(
            "SELECT t.name, i.island FROM bot_islands i JOIN teams t ON t.id = i.team_id \
             ORDER BY i.team_id",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<std::result::Result<Vec<(String, String)>, _>>()?
            .into_iter()
            .filter(|(team, _)| entries.iter().any(|e| &e.name == team))
            .collect()
    };
    let materials = seam
        .materials(&config.sections(), seed, &sent)
        .map_err(BotContestError::Materials)?;
    let section = seam.section(&config.sections());
    store.conn().execute(
        "INSERT INTO bot_contests (discipline, seed, config, entries, islands, state, started_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6)",
        params![
            d.name(),
            seed as i64,
            section.to_string(),
            serde_json::to_string(&entries).expect("json"),
            serde_json::to_string(&materials).expect("json"),
            now.to_rfc3339()
        ],
    )?;
    contest(store.conn(), config.contest.discipline)?.ok_or(BotContestError::NotStarted)
}

/// Starts (if needed), plays and finishes the contest of a bot discipline.
pub fn run_contest(
    store: &mut Store,
    config: &Config,
    seed: u64,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Results> {
    // One process plays the contest at a time, as KNOBELN's (a game is
    // stored once whoever plays it; the lease keeps a second process from
    // playing them all again). Taken before the contest is created, so
    // that a `serve` seeing it created cannot take it in between.
    let lease = super::run::take_lease(store, config)?;
    let c = start(store, config, seed, now())?;
    let results = play_all(store, &c, config, now)?;
    if lease.lost() {
        return Err(BotContestError::Held(
            "another process took the contest over (this one stalled past its lease)".into(),
        ));
    }
    if !c.finished {
        finish(store, &c, config, &results, now())?;
    }
    drop(lease);
    Ok(results)
}

/// The results article of a bot contest (plain text, 72 columns).
pub fn article(contest_name: &str, d: Discipline, results: &Results, games: u64) -> String {
    format!(
        "Results of the {contest_name}: {}\n\n{games} games were played.\n\n{}",
        d.title(),
        results_text(results)
    )
}

/// What `knobeln status` says about a bot contest.
pub fn status_text(store: &Store, config: &Config) -> Result<Option<String>> {
    let Some(c) = contest(store.conn(), config.contest.discipline)? else {
        return Ok(None);
    };
    let mut t = format!(
        "The contest ({}) {}: {} bot(s), {} game(s) played.\n",
        c.discipline.title(),
        if c.finished {
            "is finished"
        } else {
            "is running"
        },
        c.entries.len(),
        games_played(store.conn(), &c)?
    );
    for e in &c.entries {
        t.push_str(&format!("  {} (bot version {})\n", e.name, e.version));
    }
    if let Some(r) = results(store, &c, config)? {
        t.push('\n');
        t.push_str(&results_text(&r));
    }
    Ok(Some(t))
}

#[cfg(test)]
mod tests;
