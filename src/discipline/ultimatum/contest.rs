//! The ultimatum game's side of a contest run: its planner (the games in
//! playing order, each bot's matches one phase at a time when its working
//! folder is kept; the table once every match is in, from each slot's
//! sums), what is stored of a played match, and how a stored match counts in a bot's per-opponent rows.
//!
//! What it deliberately does not do: play, store or mail anything (the
//! contest run, `crate::contest::bots`, asks through the seam).

use std::collections::BTreeSet;

use super::planner::{self, MatchKey, PlayedMatch, SlotSums, TableError};
use crate::discipline::data::Results;
use crate::discipline::game::{Played, Setup};
use crate::discipline::seam::{ContestState, ContestView, PlannedGame, Planner, StoredSet};
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

/// The contest's planner: the schedule's matches by their place in it
/// (`repetition · n(n−1) + slot`, [`planner::schedule`]'s order), which
/// are stored, and each slot's points and forfeits summed over its
/// repetitions (what the table needs), not the matches' results. With
/// kept folders it hands out one phase at a time: the earliest with a
/// match not stored ([`planner::phase_matches`]).
pub struct UltimatumPlanner<'a> {
    teams: &'a [TeamId],
    names: &'a dyn Fn(TeamId) -> String,
    config: planner::Config,
    prize: bool,
    /// Whether the bots' working folders are kept (phase by phase).
    kept: bool,
    setup: Setup,
    slots: u32,
    stored: StoredSet,
    sums: Vec<SlotSums>,
    /// Every phase before it is stored (kept folders).
    phase: u64,
}

impl<'a> UltimatumPlanner<'a> {
    pub fn new(view: &ContestView<'a>) -> UltimatumPlanner<'a> {
        let config = tournament(view.sections);
        let slots = planner::n_slots(view.teams.len());
        UltimatumPlanner {
            teams: view.teams,
            names: view.names,
            config,
            prize: view.sections.ultimatum.prize,
            kept: view.sections.ultimatum.kept_folder_bytes().is_some(),
            setup: contest_setup(view.sections),
            slots,
            stored: StoredSet::new(u64::from(config.repetitions) * u64::from(slots)),
            sums: vec![SlotSums::default(); slots as usize],
            phase: 0,
        }
    }

    fn place(&self, key: &MatchKey) -> u64 {
        u64::from(key.repetition) * u64::from(self.slots) + u64::from(key.slot)
    }

    fn planned(&self, m: planner::ScheduledMatch) -> PlannedGame {
        PlannedGame {
            key: serde_json::to_string(&m.key).expect("json"),
            seats: m.seats.to_vec(),
            setup: self.setup.clone(),
        }
    }
}

impl Planner for UltimatumPlanner<'_> {
    fn add(&mut self, key: &str, result: &str) -> Result<(), String> {
        let k: MatchKey = serde_json::from_str(key).map_err(|e| format!("game key {key}: {e}"))?;
        let m: PlayedMatch = serde_json::from_str(result).map_err(|e| e.to_string())?;
        if k.repetition >= self.config.repetitions || k.slot >= self.slots || m.key != k {
            return Err(TableError::UnknownMatch(k).to_string());
        }
        if let Some(seat) = m.forfeited_by.filter(|&s| s > 1) {
            return Err(TableError::BadSeat(k, seat).to_string());
        }
        self.stored
            .insert(self.place(&k))
            .map_err(|_| TableError::DuplicateMatch(k).to_string())?;
        self.sums[k.slot as usize].add(&m);
        Ok(())
    }

    fn next_games(&mut self, limit: usize) -> Result<Vec<PlannedGame>, String> {
        if !self.kept {
            let slots = u64::from(self.slots);
            let missing = self.stored.missing(limit);
            return Ok(missing
                .into_iter()
                .map(|i| {
                    let key = MatchKey {
                        repetition: (i / slots) as u32,
                        slot: (i % slots) as u32,
                    };
                    self.planned(planner::ScheduledMatch {
                        key,
                        seats: planner::slot_seats(self.teams, key.slot),
                    })
                })
                .collect());
        }
        // Phase by phase: the earliest phase with a match not stored (a
        // run stopped in the middle of one resumes it first). Asked for
        // none, it hands out none and stays at its phase (taking none of
        // a phase is no sign that the phase is stored).
        if limit == 0 {
            return Ok(Vec::new());
        }
        let total =
            u64::from(self.config.repetitions) * planner::phases_per_repetition(self.teams.len());
        while self.phase < total {
            let missing: Vec<PlannedGame> = planner::phase_matches(self.teams, self.phase)
                .into_iter()
                .filter(|m| !self.stored.contains(self.place(&m.key)))
                .take(limit)
                .map(|m| self.planned(m))
                .collect();
            if !missing.is_empty() {
                return Ok(missing);
            }
            self.phase += 1;
        }
        Ok(Vec::new())
    }

    fn results(&self, state: ContestState) -> Result<Option<Results>, String> {
        if state == ContestState::Running {
            return Ok(None);
        }
        let mut seen = BTreeSet::new();
        for &t in self.teams {
            if !seen.insert(t) {
                return Err(TableError::DuplicateEntry(t).to_string());
            }
        }
        let expected = self.stored.games();
        if self.stored.stored() < expected {
            let i = self.stored.first_missing();
            let slots = u64::from(self.slots);
            return Err(TableError::NotFinished {
                missing: expected - self.stored.stored(),
                first: MatchKey {
                    repetition: (i / slots) as u32,
                    slot: (i % slots) as u32,
                },
            }
            .to_string());
        }
        let table = planner::table_of_sums(self.teams, &self.config, &self.sums, self.names);
        let table = if self.prize {
            table.with_prizes()
        } else {
            table
        };
        Ok(Some(Results::new(super::data::DISCIPLINE, table)))
    }
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
