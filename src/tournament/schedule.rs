//! The games of one group within one round, with failures and
//! disqualification, as a deterministic state machine.
//!
//! A runner (which executes games, possibly many at once, and stores them)
//! drives a [`GroupSchedule`]: it asks [`GroupSchedule::next_to_run`] for
//! games it may start, plays them, and hands each result back with
//! [`GroupSchedule::record`], in whatever order they finish. The schedule
//! *applies* results strictly in schedule order (buffering results that
//! arrive early), so the final state depends only on the games' outcomes,
//! never on timing or on the number of workers: a parallel run ends exactly
//! like a sequential one. For the same reason the state can be rebuilt from
//! the recorded outcomes alone, fed in any order
//! ([`GroupSchedule::replay`]), so a runner killed mid-round reloads its
//! finished games and continues.
//!
//! What it deliberately does not do: play games, measure time, decide what a
//! failure is (the referee reports it in [`GameOutcome::failed`]), store
//! anything, or rank the group ([`super::ranking`] does that from
//! [`GroupSchedule::counted_games`]).
//!
//! **Invariant:** `tournament` never does I/O, never reads a clock, never draws
//! from a global RNG.
//!
//! # The games
//!
//! The group's members are sorted by [`TeamId`]; member `i` is the i-th. Every
//! unordered pair `{i, j}` with `i <= j` plays one game, the self-game
//! `i == j` included: n members play n(n+1)/2 games. Member `i` (the lower
//! index, i.e. the lower id) is P, member `j` is Q.
//!
//! **Schedule order:** the n(n+1)/2 pairs, listed as `(0,0), (0,1), …,
//! (0,n-1), (1,1), …`, are shuffled (Fisher–Yates with [`SplitMix64`]) with
//! the seed `seed::derive(tournament_seed, &[round, group])`, which spreads
//! each team's games over the round. These are slots `0..n(n+1)/2`;
//! rescheduled games are appended after them, in the order in which the
//! failures were applied.
//!
//! **Game seeds:** the game of members `i <= j` in attempt `a` (1 = first
//! try) gets `seed::derive(tournament_seed, &[round, group, i, j, a])`, all
//! as `u64`. A rescheduled game therefore has a different seed.
//!
//! # Failures (announcement, "Rules of Tournament")
//!
//! Failures are counted per strategy per round (every round starts afresh).
//! When a result is applied:
//! - If one of its players is already disqualified, the game is
//!   **cancelled**: its outcome (if any was played) is ignored, and a failure
//!   in it is not counted.
//! - Otherwise every player that failed gets one failure. A game where both
//!   players failed counts one failure for each. **A self-game in which the
//!   strategy failed (on either side or both) counts as one failure** of that
//!   strategy; its reason is P's if P failed, else Q's.
//! - A strategy's second failure in the round disqualifies it from the
//!   contest. The game is not rescheduled; it and all the strategy's other
//!   games of the round already counted become **void** (not counted, for its
//!   opponents too), and its games not yet applied will be cancelled.
//! - If nobody was disqualified by this game but someone failed (a first
//!   failure), the game is **discarded** (its intermediate result does not
//!   count) and rescheduled at the end of the schedule with `attempt + 1`. A
//!   game where both players fail for the first time is rescheduled once; if
//!   one of them is disqualified by it and the other fails for the first
//!   time, the other's failure is still counted, and the game is void.
//! - Otherwise the game is **counted**.
//!
//! A game is attempted at most three times (each attempt that fails uses up
//! at least one of the two players' single forgiven failures), and a group
//! has at most n(n+1)/2 + n slots.

use super::units::TeamId;
use crate::game::Player;
use crate::seed::{derive, SplitMix64};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Identifies one attempt of one game: the `slot` is its position in the
/// group's schedule (rescheduled games get new slots at the end). Stable
/// across runs with the same seed and outcomes; suitable as a database key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GameKey {
    pub round: u32,
    pub group: u32,
    pub slot: u32,
}

/// A game the runner is to play.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledGame {
    pub key: GameKey,
    /// `[P, Q]`. Both the same team in a self-game.
    pub players: [TeamId; 2],
    /// The players' member indices `[i, j]`, `i <= j` (used in the seed).
    pub members: [u32; 2],
    /// 1 for the first try, 2 and 3 for rescheduled games.
    pub attempt: u32,
    /// The game's seed, `seed::derive(tournament_seed, &[round, group, i, j, attempt])`.
    pub seed: u64,
}

impl ScheduledGame {
    pub fn is_self_game(&self) -> bool {
        self.members[0] == self.members[1]
    }
}

/// What the referee reports about one game. Indexed by side: `[P, Q]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameOutcome {
    /// Points won by each side (meaningless if anyone failed).
    pub points: [u64; 2],
    /// Whether each side failed (broke a rule, crashed, timed out, …).
    pub failed: [bool; 2],
    /// Why each side failed, for the report.
    pub reason: [Option<String>; 2],
}

impl GameOutcome {
    /// A game played to the end.
    pub fn played(points: [u64; 2]) -> GameOutcome {
        GameOutcome {
            points,
            ..GameOutcome::default()
        }
    }

    /// A game stopped because `side` failed.
    pub fn failure(side: Player, reason: impl Into<String>) -> GameOutcome {
        let mut o = GameOutcome::default();
        o.failed[side.index()] = true;
        o.reason[side.index()] = Some(reason.into());
        o
    }

    /// A game in which both sides failed.
    pub fn both_failed(reason_p: impl Into<String>, reason_q: impl Into<String>) -> GameOutcome {
        GameOutcome {
            points: [0, 0],
            failed: [true, true],
            reason: [Some(reason_p.into()), Some(reason_q.into())],
        }
    }

    pub fn any_failed(&self) -> bool {
        self.failed[0] || self.failed[1]
    }
}

/// Where an attempt stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttemptStatus {
    /// Not applied yet (not played, running, or waiting for an earlier slot).
    Pending,
    /// Counts for the group table.
    Counted,
    /// A first failure: the result is discarded, the game was rescheduled as
    /// slot `rescheduled_as`.
    Discarded { rescheduled_as: u32 },
    /// Not counted because a player had been disqualified before this slot
    /// was applied (normally not played at all; no outcome kept).
    Cancelled,
    /// Played, but a player was disqualified in this round (in this game or
    /// in another one), so it does not count for anyone.
    Void,
}

/// One attempt of one game, with its status and (once applied, unless
/// cancelled) its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub game: ScheduledGame,
    pub status: AttemptStatus,
    pub outcome: Option<GameOutcome>,
}

/// One counted failure, in the order failures were applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub team: TeamId,
    pub key: GameKey,
    /// The referee's reason (or "unspecified failure").
    pub reason: String,
    /// Whether this failure (the team's second) disqualified the team.
    pub disqualifying: bool,
}

/// A strategy disqualified in this round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disqualification {
    pub team: TeamId,
    /// The game of the second failure.
    pub key: GameKey,
    /// The reason of the second failure.
    pub reason: String,
    /// The game of the first failure, and its reason.
    pub first_key: GameKey,
    pub first_reason: String,
}

/// A game that counts for the group table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountedGame {
    pub key: GameKey,
    /// `[P, Q]`; the same team twice for a self-game.
    pub players: [TeamId; 2],
    /// Points of `[P, Q]`.
    pub points: [u64; 2],
}

impl CountedGame {
    pub fn is_self_game(&self) -> bool {
        self.players[0] == self.players[1]
    }
}

/// The deterministic state of a group: what [`GroupSchedule::report`]
/// returns. Equal for every run (sequential, parallel, resumed) that saw the
/// same outcomes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupReport {
    pub round: u32,
    pub group: u32,
    /// Sorted by id.
    pub members: Vec<TeamId>,
    /// Every slot, in schedule order.
    pub attempts: Vec<Attempt>,
    /// Every counted failure, in the order applied.
    pub failures: Vec<Failure>,
    /// In the order of disqualification.
    pub disqualified: Vec<Disqualification>,
    pub finished: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("team {0} appears twice in the group")]
    DuplicateMember(TeamId),
    #[error("game {key:?} does not belong to round {round}, group {group}")]
    WrongGroup {
        key: GameKey,
        round: u32,
        group: u32,
    },
    #[error("game {0:?}: no such slot can exist in this group")]
    SlotOutOfRange(GameKey),
    #[error("game {0:?} already has an outcome")]
    AlreadyRecorded(GameKey),
    #[error("game {0:?} is not handed out")]
    NotHandedOut(GameKey),
}

/// The schedule of one group in one round. See the module documentation for
/// the rules.
#[derive(Debug, Clone)]
pub struct GroupSchedule {
    tournament_seed: u64,
    round: u32,
    group: u32,
    members: Vec<TeamId>,
    attempts: Vec<Attempt>,
    /// Slots `..applied` are applied (final status, except Counted → Void).
    applied: usize,
    /// Outcomes recorded but not yet applied, by slot (may name slots that
    /// do not exist yet when replaying).
    recorded: BTreeMap<u32, GameOutcome>,
    /// Slots handed out by `next_to_run` and not yet recorded (dispatch
    /// bookkeeping only; not part of the report).
    handed_out: BTreeSet<u32>,
    /// Where `next_to_run` looks on from: every slot from `applied` below
    /// it was looked at once and was handed out, recorded, or of a
    /// disqualified player then, none of which is undone but by
    /// [`GroupSchedule::requeue`] (its slots are in `requeued`). Before, each
    /// call looked again at every slot from `applied` on: a group whose
    /// games were all handed out but one long one was walked whole at
    /// every fill of the pool (dispatch bookkeeping, not in the report).
    cursor: usize,
    /// Slots given back by [`GroupSchedule::requeue`], offered first.
    requeued: BTreeSet<u32>,
    failure_count: Vec<u32>,
    first_failure: Vec<Option<(GameKey, String)>>,
    is_disqualified: Vec<bool>,
    failures: Vec<Failure>,
    disqualified: Vec<Disqualification>,
}

impl GroupSchedule {
    /// The schedule of group `group` of round `round`, before any game.
    /// `members` may come in any order; they are sorted by id.
    pub fn new(
        tournament_seed: u64,
        round: u32,
        group: u32,
        members: &[TeamId],
    ) -> Result<GroupSchedule, ScheduleError> {
        let mut members = members.to_vec();
        members.sort_unstable();
        if let Some(w) = members.windows(2).find(|w| w[0] == w[1]) {
            return Err(ScheduleError::DuplicateMember(w[0]));
        }
        let n = members.len() as u32;
        let mut pairs: Vec<(u32, u32)> = (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).collect();
        SplitMix64::new(derive(
            tournament_seed,
            &[u64::from(round), u64::from(group)],
        ))
        .shuffle(&mut pairs);
        let mut s = GroupSchedule {
            tournament_seed,
            round,
            group,
            attempts: Vec::with_capacity(pairs.len() + members.len()),
            applied: 0,
            recorded: BTreeMap::new(),
            handed_out: BTreeSet::new(),
            cursor: 0,
            requeued: BTreeSet::new(),
            failure_count: vec![0; members.len()],
            first_failure: vec![None; members.len()],
            is_disqualified: vec![false; members.len()],
            failures: Vec::new(),
            disqualified: Vec::new(),
            members,
        };
        for (i, j) in pairs {
            s.push_attempt(i, j, 1);
        }
        Ok(s)
    }

    /// Rebuilds the state from recorded outcomes, given in any order
    /// (e.g. loaded from the database after a crash). Outcomes of games that
    /// turned out cancelled are accepted and ignored.
    pub fn replay(
        tournament_seed: u64,
        round: u32,
        group: u32,
        members: &[TeamId],
        outcomes: impl IntoIterator<Item = (GameKey, GameOutcome)>,
    ) -> Result<GroupSchedule, ScheduleError> {
        let mut s = GroupSchedule::new(tournament_seed, round, group, members)?;
        for (key, outcome) in outcomes {
            s.record(key, outcome)?;
        }
        Ok(s)
    }

    /// The seed of the game of members `i <= j` in attempt `attempt`.
    pub fn game_seed(
        tournament_seed: u64,
        round: u32,
        group: u32,
        i: u32,
        j: u32,
        attempt: u32,
    ) -> u64 {
        derive(
            tournament_seed,
            &[
                u64::from(round),
                u64::from(group),
                u64::from(i),
                u64::from(j),
                u64::from(attempt),
            ],
        )
    }

    fn push_attempt(&mut self, i: u32, j: u32, attempt: u32) -> u32 {
        let slot = self.attempts.len() as u32;
        self.attempts.push(Attempt {
            game: ScheduledGame {
                key: self.key(slot),
                players: [self.members[i as usize], self.members[j as usize]],
                members: [i, j],
                attempt,
                seed: Self::game_seed(self.tournament_seed, self.round, self.group, i, j, attempt),
            },
            status: AttemptStatus::Pending,
            outcome: None,
        });
        slot
    }

    fn key(&self, slot: u32) -> GameKey {
        GameKey {
            round: self.round,
            group: self.group,
            slot,
        }
    }

    /// The most slots this group can ever have: n(n+1)/2 + n.
    pub fn max_slots(&self) -> usize {
        let n = self.members.len();
        n * (n + 1) / 2 + n
    }

    pub fn round(&self) -> u32 {
        self.round
    }

    pub fn group(&self) -> u32 {
        self.group
    }

    /// The members, sorted by id.
    pub fn members(&self) -> &[TeamId] {
        &self.members
    }

    /// Games the runner may start now, at most `limit`, earliest slots first.
    /// They are marked as handed out and not offered again (unless given back
    /// with [`GroupSchedule::requeue`]). Games of a player already known to be
    /// disqualified are skipped. A game handed out may still turn out
    /// cancelled when its turn comes (wasted work, harmless).
    ///
    /// Empty while the round is unfinished means: wait for a game in flight;
    /// rescheduled games appear once the failure before them is applied.
    pub fn next_to_run(&mut self, limit: usize) -> Vec<ScheduledGame> {
        let mut out = Vec::new();
        // The slots given back lie below the cursor (they were handed out):
        // first in slot order, as a walk from `applied` would find them.
        while out.len() < limit {
            let Some(slot) = self.requeued.pop_first() else {
                break;
            };
            self.offer(slot as usize, &mut out);
        }
        self.cursor = self.cursor.max(self.applied);
        while out.len() < limit && self.cursor < self.attempts.len() {
            self.cursor += 1;
            self.offer(self.cursor - 1, &mut out);
        }
        out
    }

    /// Hands out `slot` into `out` unless it is applied, handed out,
    /// recorded, or a disqualified player's.
    fn offer(&mut self, slot: usize, out: &mut Vec<ScheduledGame>) {
        let slot32 = slot as u32;
        if slot < self.applied
            || self.handed_out.contains(&slot32)
            || self.recorded.contains_key(&slot32)
        {
            return;
        }
        let [i, j] = self.attempts[slot].game.members;
        if self.is_disqualified[i as usize] || self.is_disqualified[j as usize] {
            return;
        }
        self.handed_out.insert(slot32);
        out.push(self.attempts[slot].game.clone());
    }

    /// Gives a handed-out game back without an outcome (e.g. the runner's own
    /// infrastructure failed, not the strategies), so that it is offered again.
    pub fn requeue(&mut self, key: GameKey) -> Result<(), ScheduleError> {
        self.check_key(key)?;
        if self.handed_out.remove(&key.slot) {
            self.requeued.insert(key.slot);
            Ok(())
        } else {
            Err(ScheduleError::NotHandedOut(key))
        }
    }

    /// Number of games handed out and not yet recorded or cancelled.
    pub fn in_flight(&self) -> usize {
        self.handed_out.len()
    }

    fn check_key(&self, key: GameKey) -> Result<(), ScheduleError> {
        if key.round != self.round || key.group != self.group {
            return Err(ScheduleError::WrongGroup {
                key,
                round: self.round,
                group: self.group,
            });
        }
        if key.slot as usize >= self.max_slots() {
            return Err(ScheduleError::SlotOutOfRange(key));
        }
        Ok(())
    }

    /// Records the outcome of a game, in any order; it is applied once all
    /// earlier slots are. A slot may be recorded before it exists (when
    /// replaying); it must then come into existence for the round to finish.
    /// Late outcomes of cancelled games are accepted and ignored.
    pub fn record(&mut self, key: GameKey, outcome: GameOutcome) -> Result<(), ScheduleError> {
        self.check_key(key)?;
        let slot = key.slot as usize;
        if slot < self.applied {
            return match self.attempts[slot].status {
                AttemptStatus::Cancelled => Ok(()),
                _ => Err(ScheduleError::AlreadyRecorded(key)),
            };
        }
        if self.recorded.contains_key(&key.slot) {
            return Err(ScheduleError::AlreadyRecorded(key));
        }
        self.recorded.insert(key.slot, outcome);
        self.handed_out.remove(&key.slot);
        self.advance();
        Ok(())
    }

    /// Applies as many slots as possible, strictly in order.
    fn advance(&mut self) {
        while self.applied < self.attempts.len() {
            let slot = self.applied as u32;
            let [i, j] = self.attempts[self.applied].game.members;
            if self.is_disqualified[i as usize] || self.is_disqualified[j as usize] {
                self.attempts[self.applied].status = AttemptStatus::Cancelled;
                self.recorded.remove(&slot);
                self.handed_out.remove(&slot);
                self.applied += 1;
                continue;
            }
            let Some(outcome) = self.recorded.remove(&slot) else {
                break;
            };
            self.apply(slot, outcome);
            self.applied += 1;
        }
    }

    fn apply(&mut self, slot: u32, outcome: GameOutcome) {
        let key = self.key(slot);
        let game = self.attempts[slot as usize].game.clone();
        let [i, j] = game.members;
        // (member, side) of each counted failure.
        let failing: Vec<(u32, usize)> = if i == j {
            (0..2)
                .find(|&s| outcome.failed[s])
                .map(|s| (i, s))
                .into_iter()
                .collect()
        } else {
            (0..2)
                .filter(|&s| outcome.failed[s])
                .map(|s| (game.members[s], s))
                .collect()
        };
        let mut newly_disqualified = Vec::new();
        for &(m, side) in &failing {
            let mu = m as usize;
            let team = self.members[mu];
            let reason = outcome.reason[side]
                .clone()
                .filter(|r| !r.trim().is_empty())
                .unwrap_or_else(|| "unspecified failure".to_string());
            self.failure_count[mu] += 1;
            let disqualifying = self.failure_count[mu] >= 2;
            self.failures.push(Failure {
                team,
                key,
                reason: reason.clone(),
                disqualifying,
            });
            if disqualifying {
                let (first_key, first_reason) = self.first_failure[mu]
                    .clone()
                    .expect("a second failure follows a first one");
                self.is_disqualified[mu] = true;
                self.disqualified.push(Disqualification {
                    team,
                    key,
                    reason,
                    first_key,
                    first_reason,
                });
                newly_disqualified.push(m);
            } else {
                self.first_failure[mu] = Some((key, reason));
            }
        }
        let status = if failing.is_empty() {
            AttemptStatus::Counted
        } else if newly_disqualified.is_empty() {
            let new_slot = self.push_attempt(i, j, game.attempt + 1);
            AttemptStatus::Discarded {
                rescheduled_as: new_slot,
            }
        } else {
            for a in &mut self.attempts[..slot as usize] {
                let [x, y] = a.game.members;
                if a.status == AttemptStatus::Counted
                    && (newly_disqualified.contains(&x) || newly_disqualified.contains(&y))
                {
                    a.status = AttemptStatus::Void;
                }
            }
            AttemptStatus::Void
        };
        let a = &mut self.attempts[slot as usize];
        a.status = status;
        a.outcome = Some(outcome);
    }

    /// Whether every slot is applied: the group's results are final.
    pub fn is_finished(&self) -> bool {
        self.applied == self.attempts.len()
    }

    /// Recorded outcomes still waiting to be applied whose slot does not
    /// exist (yet). Once the round is finished, any such record is stray:
    /// it came from a different run (other seed or other outcomes) and the
    /// runner's stored data is inconsistent.
    pub fn stray_records(&self) -> Vec<GameKey> {
        self.recorded
            .keys()
            .filter(|&&slot| slot as usize >= self.attempts.len())
            .map(|&slot| self.key(slot))
            .collect()
    }

    /// Number of slots applied so far, and number of slots so far.
    pub fn progress(&self) -> (usize, usize) {
        (self.applied, self.attempts.len())
    }

    /// All slots so far, in schedule order.
    pub fn attempts(&self) -> &[Attempt] {
        &self.attempts
    }

    /// One slot, if it exists (yet).
    pub fn attempt(&self, key: GameKey) -> Option<&Attempt> {
        if key.round != self.round || key.group != self.group {
            return None;
        }
        self.attempts.get(key.slot as usize)
    }

    /// Every counted failure so far, in the order applied.
    pub fn failures(&self) -> &[Failure] {
        &self.failures
    }

    /// The strategies disqualified in this round so far.
    pub fn disqualified(&self) -> &[Disqualification] {
        &self.disqualified
    }

    pub fn is_disqualified(&self, team: TeamId) -> bool {
        self.disqualified.iter().any(|d| d.team == team)
    }

    /// The games that count, in schedule order. Final only once
    /// [`GroupSchedule::is_finished`] (a later disqualification voids
    /// counted games).
    pub fn counted_games(&self) -> Vec<CountedGame> {
        self.attempts
            .iter()
            .filter(|a| a.status == AttemptStatus::Counted)
            .map(|a| CountedGame {
                key: a.game.key,
                players: a.game.players,
                points: a.outcome.as_ref().map_or([0, 0], |o| o.points),
            })
            .collect()
    }

    /// The deterministic state (everything but dispatch bookkeeping).
    pub fn report(&self) -> GroupReport {
        GroupReport {
            round: self.round,
            group: self.group,
            members: self.members.clone(),
            attempts: self.attempts.clone(),
            failures: self.failures.clone(),
            disqualified: self.disqualified.clone(),
            finished: self.is_finished(),
        }
    }
}

#[cfg(test)]
mod tests;
