//! Morabaraba's side of a contest run: its planner (every pairing once in
//! each colour order, a bot against itself too; the table with f(V) of
//! the CPU time from the stored games, fed one at a time),
//! how a stored game counts in a bot's per-opponent rows, and the notes of
//! the results page.
//!
//! What it deliberately does not do: play, store or mail anything (the
//! contest run, `crate::contest::bots`, asks through the seam).

use std::collections::BTreeMap;

use super::planner::{self, GameResult, MorabarabaTable, Pairing};
use super::tables::{head_to_head_shown, SELF_GAME_NOTE};
use crate::discipline::data::Results;
use crate::discipline::game::Setup;
use crate::discipline::seam::{ContestState, ContestView, PlannedGame, Planner, StoredSet};
use crate::discipline::table::OpponentRow;
use crate::tournament::TeamId;

/// The contest's planner: the plan's games (N² for N bots, [`planner::
/// plan`]'s order) by their place `first · N + second`, each stored game's
/// result in its place (a game's result is what the head-to-head of bots
/// equal in points needs), and which are stored.
pub struct MorabarabaPlanner<'a> {
    teams: &'a [TeamId],
    names: &'a dyn Fn(TeamId) -> String,
    /// A team's place in the entry order.
    place: BTreeMap<TeamId, usize>,
    stored: StoredSet,
    results: Vec<Option<GameResult>>,
    setup: Setup,
}

impl<'a> MorabarabaPlanner<'a> {
    pub fn new(view: &ContestView<'a>) -> MorabarabaPlanner<'a> {
        let n = view.teams.len();
        MorabarabaPlanner {
            teams: view.teams,
            names: view.names,
            place: view
                .teams
                .iter()
                .enumerate()
                .map(|(i, &t)| (t, i))
                .collect(),
            stored: StoredSet::new((n * n) as u64),
            results: vec![None; n * n],
            setup: super::data::setup(),
        }
    }
}

impl Planner for MorabarabaPlanner<'_> {
    fn add(&mut self, key: &str, result: &str) -> Result<(), String> {
        let p: Pairing = serde_json::from_str(key).map_err(|e| format!("game key {key}: {e}"))?;
        let r: GameResult = serde_json::from_str(result).map_err(|e| e.to_string())?;
        let place = |t: TeamId| {
            self.place
                .get(&t)
                .copied()
                .ok_or_else(|| planner::MorabarabaError::UnknownTeam(t).to_string())
        };
        let i = place(p.first)? * self.teams.len() + place(p.second)?;
        self.stored.insert(i as u64)?;
        self.results[i] = Some(r);
        Ok(())
    }

    fn next_games(&mut self, limit: usize) -> Result<Vec<PlannedGame>, String> {
        let n = self.teams.len();
        Ok(self
            .stored
            .missing(limit)
            .into_iter()
            .map(|i| {
                let p = Pairing {
                    first: self.teams[i as usize / n],
                    second: self.teams[i as usize % n],
                };
                PlannedGame {
                    key: serde_json::to_string(&p).expect("json"),
                    seats: vec![p.first, p.second],
                    setup: self.setup.clone(),
                }
            })
            .collect())
    }

    fn results(&self, _state: ContestState) -> Result<Option<Results>, String> {
        let results: Vec<GameResult> = self.results.iter().flatten().copied().collect();
        let table = planner::rank(self.teams, &results, self.names).map_err(|e| e.to_string())?;
        Ok(Some(Results::new(super::data::DISCIPLINE, table)))
    }
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
