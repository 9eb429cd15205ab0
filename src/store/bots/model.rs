//! What a started bot contest is, as the store keeps it ([`BotContest`],
//! its [`Entry`]s, its materials), reading it back ([`contest`], its
//! stored results row by row, its teams and names, its discipline's seam and
//! the [`ContestView`] its planner reads), its errors, and the heading of
//! its mails. Its stored games are the sibling `games.rs`, which imports
//! this file, never the other way.

use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::discipline::seam::{BotDiscipline, ContestView};
use crate::discipline::Discipline;
use crate::store::StoreError;
use crate::tournament::TeamId;

/// Why a bot contest could not go on (the server's trouble, or no bots).
#[derive(Debug, thiserror::Error)]
pub enum BotContestError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("no team has an accepted bot for {0}")]
    NoBots(&'static str),
    #[error("the contest is not started")]
    NotStarted,
    #[error("the {0} toolchain is missing on this machine: {1}")]
    Toolchain(String, String),
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    #[error("a game could not be refereed: {0}")]
    Match(String),
    /// The NATS queue of `[engine] nats` could not be used.
    #[error("the queue of games: {0}")]
    Queue(String),
    #[error("the planner: {0}")]
    Plan(String),
    #[error("mail: {0}")]
    Mail(String),
    /// What the discipline takes at the start could not be had (the
    /// flooding island's islands), in its words.
    #[error("{0}")]
    Materials(String),
    /// Another process plays the contest (who, and until when).
    #[error("{0}")]
    Held(String),
}

pub(crate) type Result<T> = std::result::Result<T, BotContestError>;

/// An entry: the team, its bot version, its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub team: TeamId,
    pub version: i64,
    pub name: String,
}

/// A started contest as stored.
#[derive(Debug, Clone)]
pub struct BotContest {
    pub id: i64,
    pub discipline: Discipline,
    pub seed: u64,
    pub entries: Vec<Entry>,
    /// The named texts the discipline took at the start (name, text: the
    /// flooding island's islands), stored in the column `islands`.
    pub materials: Vec<(String, String)>,
    pub finished: bool,
}

/// The contest of `discipline` (the one the server runs), if started. A
/// contest of another discipline in the same database (one used before
/// for another contest) is not it (`store::mail::contest_state`).
pub fn contest(conn: &Connection, discipline: Discipline) -> Result<Option<BotContest>> {
    let row = conn
        .query_row(
            "SELECT id, discipline, seed, entries, islands, state FROM bot_contests \
             WHERE discipline = ?1 ORDER BY id LIMIT 1",
            [discipline.name()],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            },
        )
        .optional()?;
    let Some((id, d, seed, entries, islands, state)) = row else {
        return Ok(None);
    };
    let corrupt = |e: String| BotContestError::Corrupt(e);
    Ok(Some(BotContest {
        id,
        discipline: d.parse().map_err(corrupt)?,
        seed: seed as u64,
        entries: serde_json::from_str(&entries).map_err(|e| corrupt(e.to_string()))?,
        materials: serde_json::from_str(&islands).map_err(|e| corrupt(e.to_string()))?,
        finished: state == "finished",
    }))
}

/// The heading of a bot contest's mails: the contest's name, and the
/// discipline's title only where the name does not already say it.
pub fn contest_heading(contest_name: &str, d: Discipline) -> String {
    let name = contest_name.to_lowercase();
    let title = d.title().trim_start_matches("the ").to_lowercase();
    if name.contains(&title) || name.contains(d.name()) {
        contest_name.to_string()
    } else {
        format!("{contest_name} ({})", d.title())
    }
}

/// The seam of the contest's discipline.
pub(crate) fn seam_of(c: &BotContest) -> Result<&'static dyn BotDiscipline> {
    crate::discipline::registry::of(c.discipline).ok_or(BotContestError::NoBots("KNOBELN"))
}

/// Calls `f` with what the discipline's planner knows of the contest.
pub(crate) fn with_view<T>(
    c: &BotContest,
    config: &Config,
    f: impl FnOnce(&ContestView<'_>) -> T,
) -> T {
    let teams = team_ids(c);
    let names = names_of(c);
    let sections = config.sections();
    f(&ContestView {
        seed: c.seed,
        teams: &teams,
        names: &names,
        materials: &c.materials,
        sections: &sections,
    })
}

/// The rows of a contest stored after a row id, by row id.
const REFRESH: &str = "SELECT rowid, game_key, result FROM bot_games \
                       WHERE +contest_id = ?1 AND rowid > ?2 ORDER BY rowid";

/// A reader of a contest's stored games (key and planner result), each
/// read once: a call reads what was stored since the last
/// ([`StoredResults::refresh`]), so a contest of millions of games played
/// batch by batch reads each row once, not once per batch. It keeps no
/// row: the caller counts each (the discipline's planner).
#[derive(Debug, Default)]
pub struct StoredResults {
    /// The last row read (rows are only added, under growing row ids).
    last_row: i64,
}

impl StoredResults {
    /// Hands `f` each row stored since the last call (key, planner
    /// result), in row order: a range of row ids (`+contest_id` keeps
    /// SQLite from the index by contest, which read every row of the
    /// contest and sorted them, in every phase).
    pub fn refresh(
        &mut self,
        conn: &Connection,
        contest: i64,
        mut f: impl FnMut(&str, &str) -> Result<()>,
    ) -> Result<()> {
        let mut st = conn.prepare_cached(REFRESH)?;
        let mut rows = st.query(rusqlite::params![contest, self.last_row])?;
        while let Some(r) = rows.next()? {
            let key = r.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
            let result = r.get_ref(2)?.as_str().map_err(rusqlite::Error::from)?;
            f(key, result)?;
            self.last_row = r.get(0)?;
        }
        Ok(())
    }
}

pub(crate) fn parse<T: for<'de> Deserialize<'de>>(s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| BotContestError::Corrupt(e.to_string()))
}

pub(crate) fn team_ids(c: &BotContest) -> Vec<TeamId> {
    c.entries.iter().map(|e| e.team).collect()
}

pub(crate) fn names_of(c: &BotContest) -> impl Fn(TeamId) -> String + '_ {
    move |t| {
        c.entries
            .iter()
            .find(|e| e.team == t)
            .map(|e| e.name.clone())
            .unwrap_or_else(|| format!("team {}", t.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading what was stored since the last read is a range of row ids,
    /// not a pass over every row of the contest (which made a contest
    /// played phase by phase quadratic in its games).
    #[test]
    fn the_stored_results_since_a_row_are_a_range_of_row_ids() {
        let store = crate::store::Store::open_in_memory().unwrap();
        let plan: Vec<String> = {
            let mut st = store
                .conn()
                .prepare(&format!("EXPLAIN QUERY PLAN {REFRESH}"))
                .unwrap();
            let rows = st.query_map([1i64, 5], |r| r.get::<_, String>(3)).unwrap();
            rows.collect::<std::result::Result<_, _>>().unwrap()
        };
        assert_eq!(
            plan,
            vec!["SEARCH bot_games USING INTEGER PRIMARY KEY (rowid>?)".to_string()]
        );
        let mut read = StoredResults::default();
        let mut rows = 0;
        read.refresh(store.conn(), 1, |_, _| {
            rows += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(rows, 0);
    }
}
