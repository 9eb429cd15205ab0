//! The ultimatum game's side of a contest run: its games in playing order
//! (each bot's matches one phase at a time when its working folder is
//! kept), what is stored of a played match, the table once every match is
//! in, and how a stored match counts in a bot's per-opponent rows.
//!
//! What it deliberately does not do: play, store or mail anything (the
//! contest run, `crate::contest::bots`, asks through the seam).

use std::collections::BTreeMap;

use super::planner::{self, PlayedMatch};
use crate::discipline::data::Results;
use crate::discipline::game::{Played, Setup};
use crate::discipline::seam::{ContestState, ContestView, PlannedGame};
use crate::discipline::table::OpponentRow;
use crate::discipline::Sections;
use crate::tournament::TeamId;

fn tournament(sections: &Sections<'_>) -> planner::Config {
    planner::Config {
        repetitions: sections.ultimatum.repetitions,
    }
}

/// The setup of every match of the contest.
pub fn contest_setup(sections: &Sections<'_>) -> Setup {
    super::data::setup(sections.ultimatum.params())
}

/// The matches not stored yet; with kept folders only those of the
/// earliest phase (each bot's matches in one fixed order).
pub fn next_games(
    view: &ContestView<'_>,
    done: &BTreeMap<String, String>,
) -> Result<Vec<PlannedGame>, String> {
    let setup = contest_setup(view.sections);
    let planned = |m: planner::ScheduledMatch| PlannedGame {
        key: serde_json::to_string(&m.key).expect("json"),
        seats: m.seats.to_vec(),
        setup: setup.clone(),
    };
    let config = tournament(view.sections);
    if view.sections.ultimatum.kept_folder_bytes().is_none() {
        return Ok(planner::schedule(view.teams, &config)
            .map(planned)
            .filter(|g| !done.contains_key(&g.key))
            .collect());
    }
    // Phase by phase: the earliest phase with a match not stored. Phases
    // are played in order, so the stored matches point at it (each phase
    // holds n/2 matches); an earlier one with a gap comes first (a run
    // stopped in the middle of it).
    let n = view.teams.len();
    let total = u64::from(config.repetitions) * planner::phases_per_repetition(n);
    let missing = |p: u64| -> Vec<PlannedGame> {
        planner::phase_matches(view.teams, p)
            .into_iter()
            .map(planned)
            .filter(|g| !done.contains_key(&g.key))
            .collect()
    };
    let per_phase = (n / 2).max(1);
    let mut p = ((done.len() / per_phase) as u64).min(total);
    while p > 0 && !missing(p - 1).is_empty() {
        p -= 1;
    }
    while p < total {
        let games = missing(p);
        if !games.is_empty() {
            return Ok(games);
        }
        p += 1;
    }
    Ok(Vec::new())
}

/// The table from the stored matches (none while the contest runs: it
/// needs every match), with the prize column when configured.
pub fn results(
    view: &ContestView<'_>,
    done: &BTreeMap<String, String>,
    state: ContestState,
) -> Result<Option<Results>, String> {
    if state == ContestState::Running {
        return Ok(None);
    }
    let played: Vec<PlayedMatch> = done
        .values()
        .map(|v| serde_json::from_str(v).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let table = planner::table(view.teams, &tournament(view.sections), &played, view.names)
        .map_err(|e| e.to_string())?;
    let table = if view.sections.ultimatum.prize {
        table.with_prizes()
    } else {
        table
    };
    Ok(Some(Results::new(super::data::DISCIPLINE, table)))
}

/// Counts a stored match into a bot's row: its Plus and Minus, and per
/// slot the points and forfeits that decide the two orders ([`finish_row`]).
pub fn count(row: &mut OpponentRow, result: &str, seat: usize) {
    row.games += 1;
    let Ok(m) = serde_json::from_str::<PlayedMatch>(result) else {
        return;
    };
    let other = 1 - seat.min(1);
    row.points += m.points[seat] as i64;
    row.minus += m.points[other];
    let slot = row.slots.entry(m.key.slot).or_default();
    slot.0[0] += m.points[seat];
    slot.0[1] += m.points[other];
    match m.forfeited_by {
        Some(f) if f == seat => slot.1[0] += 1,
        Some(_) => slot.1[1] += 1,
        None => {}
    }
}

/// Each slot decided over its repetitions: won, drawn or lost.
pub fn finish_row(row: &mut OpponentRow) {
    for (points, forfeits) in row.slots.values() {
        match planner::slot_result(*points, *forfeits) {
            std::cmp::Ordering::Greater => row.won += 1,
            std::cmp::Ordering::Equal => row.drawn += 1,
            std::cmp::Ordering::Less => row.lost += 1,
        }
    }
}

/// The planner's result of a played match.
pub fn planner_result(key: &str, p: &Played) -> serde_json::Value {
    serde_json::json!(super::keys::played(key, p))
}

/// The team ids of a key's seats.
pub fn key_seats(key: &str, teams: &[TeamId]) -> Result<Vec<TeamId>, String> {
    super::keys::seats(key, teams).map_err(|e| e.to_string())
}
