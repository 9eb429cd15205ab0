//! Morabaraba's side of a contest run: every pairing once in each colour
//! order (a bot against itself too), the table with f(V) of the CPU time,
//! how a stored game counts in a bot's per-opponent rows, and the notes of
//! the results page.
//!
//! What it deliberately does not do: play, store or mail anything (the
//! contest run, `crate::contest::bots`, asks through the seam).

use std::collections::BTreeMap;

use super::planner::{self, GameResult, MorabarabaTable};
use super::tables::{head_to_head_shown, SELF_GAME_NOTE};
use crate::discipline::data::Results;
use crate::discipline::seam::{ContestView, PlannedGame};
use crate::discipline::table::OpponentRow;

/// The games not stored yet.
pub fn next_games(view: &ContestView<'_>, done: &BTreeMap<String, String>) -> Vec<PlannedGame> {
    let setup = super::data::setup();
    planner::plan(view.teams)
        .into_iter()
        .map(|p| PlannedGame {
            key: serde_json::to_string(&p).expect("json"),
            seats: vec![p.first, p.second],
            setup: setup.clone(),
        })
        .filter(|g| !done.contains_key(&g.key))
        .collect()
}

/// The table from the stored games.
pub fn results(view: &ContestView<'_>, done: &BTreeMap<String, String>) -> Result<Results, String> {
    let results: Vec<GameResult> = done
        .values()
        .map(|v| serde_json::from_str(v).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let table = planner::rank(view.teams, &results, view.names).map_err(|e| e.to_string())?;
    Ok(Results::new(super::data::DISCIPLINE, table))
}

/// Counts a stored game into the row of the bot at `seat`.
pub fn count(row: &mut OpponentRow, result: &str, seat: usize) {
    row.games += 1;
    let Ok(r) = serde_json::from_str::<GameResult>(result) else {
        return;
    };
    let points = planner::game_points(&r);
    match r.winner {
        None => row.drawn += 1,
        Some(w) if w == seat => row.won += 1,
        Some(_) => row.lost += 1,
    }
    row.points += points[seat].millionths();
    row.cpu_micros += r.cpu_micros[seat];
}

/// The notes under the ranking: the self-game rule and the head-to-head.
pub fn after_ranking_html(t: &MorabarabaTable) -> String {
    let mut h = format!("<p>{}</p>\n", crate::draw::escape(SELF_GAME_NOTE));
    h.push_str(if head_to_head_shown(t) {
        "<p>Head-to-head: for bots with equal points, the points each won in the \
         games among them; it decides their order (equal again, they share the \
         place).</p>\n"
    } else {
        "<p>No two bots have equal points, so no head-to-head was needed.</p>\n"
    });
    h
}
