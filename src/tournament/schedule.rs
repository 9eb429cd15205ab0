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
        for slot in self.applied..self.attempts.len() {
            if out.len() >= limit {
                break;
            }
            let slot32 = slot as u32;
            if self.handed_out.contains(&slot32) || self.recorded.contains_key(&slot32) {
                continue;
            }
            let [i, j] = self.attempts[slot].game.members;
            if self.is_disqualified[i as usize] || self.is_disqualified[j as usize] {
                continue;
            }
            self.handed_out.insert(slot32);
            out.push(self.attempts[slot].game.clone());
        }
        out
    }

    /// Gives a handed-out game back without an outcome (e.g. the runner's own
    /// infrastructure failed, not the strategies), so that it is offered again.
    pub fn requeue(&mut self, key: GameKey) -> Result<(), ScheduleError> {
        self.check_key(key)?;
        if self.handed_out.remove(&key.slot) {
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
mod tests {
    use super::*;

    fn teams(n: u32) -> Vec<TeamId> {
        (1..=n).map(|k| TeamId(k * 10)).collect()
    }

    fn points_from_seed(seed: u64) -> [u64; 2] {
        [seed % 1000, (seed >> 20) % 1000]
    }

    /// Plays every game to the end, one at a time; `behave` decides outcomes.
    fn run_sequential(
        s: &mut GroupSchedule,
        behave: &dyn Fn(&ScheduledGame) -> GameOutcome,
    ) -> Vec<(GameKey, GameOutcome)> {
        let mut log = Vec::new();
        while !s.is_finished() {
            let games = s.next_to_run(1);
            assert_eq!(
                games.len(),
                1,
                "an unfinished idle schedule always offers a game"
            );
            let o = behave(&games[0]);
            s.record(games[0].key, o.clone()).unwrap();
            log.push((games[0].key, o));
        }
        log
    }

    /// A simulated executor with `workers` workers whose games finish in a
    /// random order (drawn from `order_seed`).
    fn run_parallel(
        s: &mut GroupSchedule,
        behave: &dyn Fn(&ScheduledGame) -> GameOutcome,
        workers: usize,
        order_seed: u64,
    ) -> Vec<(GameKey, GameOutcome)> {
        let mut rng = SplitMix64::new(order_seed);
        let mut in_flight: Vec<ScheduledGame> = Vec::new();
        let mut log = Vec::new();
        loop {
            if !s.is_finished() {
                let free = workers - in_flight.len();
                in_flight.extend(s.next_to_run(free));
            }
            if in_flight.is_empty() {
                assert!(
                    s.is_finished(),
                    "nothing in flight, nothing to run, not finished"
                );
                break;
            }
            let k = rng.below(in_flight.len() as u64) as usize;
            let g = in_flight.swap_remove(k);
            let o = behave(&g);
            s.record(g.key, o.clone()).unwrap();
            log.push((g.key, o));
        }
        assert_eq!(s.in_flight(), 0);
        log
    }

    /// Deterministic chaos: each (team, game attempt) fails with probability
    /// about 1/6, decided by the game's seed; points from the seed.
    fn chaos(g: &ScheduledGame) -> GameOutcome {
        let mut o = GameOutcome::played(points_from_seed(g.seed));
        for side in 0..2 {
            let team = g.players[side];
            if derive(g.seed, &[u64::from(team.0), side as u64]).is_multiple_of(6) {
                o.failed[side] = true;
                o.reason[side] = Some(format!("team {team} broke a rule in slot {}", g.key.slot));
            }
        }
        o
    }

    fn status_of(s: &GroupSchedule, a: TeamId, b: TeamId) -> Vec<AttemptStatus> {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        s.attempts()
            .iter()
            .filter(|x| x.game.players == [lo, hi])
            .map(|x| x.status)
            .collect()
    }

    #[test]
    fn every_pair_plays_once_including_self_games() {
        let s = GroupSchedule::new(1, 2, 3, &teams(6)).unwrap();
        assert_eq!(s.attempts().len(), 21);
        let mut seen = BTreeSet::new();
        let mut seeds = BTreeSet::new();
        for (slot, a) in s.attempts().iter().enumerate() {
            let g = &a.game;
            assert_eq!(
                g.key,
                GameKey {
                    round: 2,
                    group: 3,
                    slot: slot as u32
                }
            );
            assert_eq!(g.attempt, 1);
            assert!(g.members[0] <= g.members[1]);
            assert!(g.players[0] <= g.players[1], "the lower id is P");
            assert_eq!(
                g.seed,
                derive(1, &[2, 3, g.members[0].into(), g.members[1].into(), 1])
            );
            assert!(seen.insert(g.players));
            assert!(seeds.insert(g.seed));
            assert_eq!(a.status, AttemptStatus::Pending);
        }
        assert_eq!(seen.iter().filter(|p| p[0] == p[1]).count(), 6);
        // The order is shuffled, and deterministic.
        let order: Vec<_> = s.attempts().iter().map(|a| a.game.members).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_ne!(order, sorted);
        let again = GroupSchedule::new(1, 2, 3, &teams(6)).unwrap();
        assert_eq!(again.report(), s.report());
        let mut shuffled_members = teams(6);
        shuffled_members.reverse();
        assert_eq!(
            GroupSchedule::new(1, 2, 3, &shuffled_members)
                .unwrap()
                .report(),
            s.report()
        );
    }

    #[test]
    fn duplicate_member_is_rejected() {
        let err = GroupSchedule::new(1, 1, 0, &[TeamId(1), TeamId(2), TeamId(1)]).unwrap_err();
        assert_eq!(err, ScheduleError::DuplicateMember(TeamId(1)));
    }

    #[test]
    fn empty_group_is_finished() {
        let mut s = GroupSchedule::new(1, 1, 0, &[]).unwrap();
        assert!(s.is_finished());
        assert!(s.next_to_run(10).is_empty());
    }

    #[test]
    fn first_failure_reschedules_with_attempt_2_and_a_new_seed() {
        let members = teams(4);
        let (a, b) = (members[0], members[2]);
        let mut s = GroupSchedule::new(7, 1, 0, &members).unwrap();
        let n0 = s.attempts().len();
        let failed_once = std::cell::Cell::new(false);
        run_sequential(&mut s, &|g| {
            if g.players == [a, b] && !failed_once.get() {
                failed_once.set(true);
                GameOutcome::failure(Player::Q, "throw out of range")
            } else {
                GameOutcome::played([3, 4])
            }
        });
        assert_eq!(s.attempts().len(), n0 + 1);
        let tries: Vec<&Attempt> = s
            .attempts()
            .iter()
            .filter(|x| x.game.players == [a, b])
            .collect();
        assert_eq!(tries.len(), 2);
        assert_eq!(
            tries[0].status,
            AttemptStatus::Discarded {
                rescheduled_as: n0 as u32
            }
        );
        assert_eq!(tries[1].game.key.slot, n0 as u32, "appended at the end");
        assert_eq!(tries[1].game.attempt, 2);
        assert_ne!(tries[1].game.seed, tries[0].game.seed);
        let [i, j] = tries[1].game.members;
        assert_eq!(
            tries[1].game.seed,
            derive(7, &[1, 0, i.into(), j.into(), 2])
        );
        assert_eq!(tries[1].status, AttemptStatus::Counted);
        // One failure is forgiven: nobody is disqualified, every pair counts once.
        assert!(s.disqualified().is_empty());
        assert_eq!(s.failures().len(), 1);
        assert_eq!(s.failures()[0].team, b);
        assert_eq!(s.failures()[0].reason, "throw out of range");
        assert_eq!(s.counted_games().len(), 10);
    }

    #[test]
    fn second_failure_disqualifies_and_voids_all_its_games_for_opponents_too() {
        let members = teams(6);
        let x = members[3];
        let mut s = GroupSchedule::new(11, 2, 1, &members).unwrap();
        // x fails in its 3rd and 5th game in schedule order.
        let x_slots: Vec<u32> = s
            .attempts()
            .iter()
            .filter(|a| a.game.players.contains(&x))
            .map(|a| a.game.key.slot)
            .collect();
        let (first, second) = (x_slots[2], x_slots[4]);
        run_sequential(&mut s, &|g| {
            let side = if g.players[0] == x {
                Player::P
            } else {
                Player::Q
            };
            if g.key.slot == first {
                GameOutcome::failure(side, "crashed")
            } else if g.key.slot == second {
                GameOutcome::failure(side, "timeout")
            } else {
                GameOutcome::played(points_from_seed(g.seed))
            }
        });
        assert_eq!(s.disqualified().len(), 1);
        let d = &s.disqualified()[0];
        assert_eq!(
            (d.team, d.key.slot, d.reason.as_str()),
            (x, second, "timeout")
        );
        assert_eq!(
            (d.first_key.slot, d.first_reason.as_str()),
            (first, "crashed")
        );
        assert!(s.is_disqualified(x));
        // None of x's games counts: earlier ones are void, later ones cancelled.
        for a in s.attempts().iter().filter(|a| a.game.players.contains(&x)) {
            let slot = a.game.key.slot;
            let expected = if slot == first {
                AttemptStatus::Discarded { rescheduled_as: 21 }
            } else if slot == 21 {
                // The rescheduled game came after the disqualification.
                AttemptStatus::Cancelled
            } else if slot <= second {
                // Counted until the disqualification, then void; and the
                // disqualifying game itself.
                AttemptStatus::Void
            } else {
                AttemptStatus::Cancelled
            };
            assert_eq!(a.status, expected, "slot {slot}");
            if expected == AttemptStatus::Cancelled {
                assert!(a.outcome.is_none(), "cancelled games are not played");
            }
        }
        let counted = s.counted_games();
        assert!(counted.iter().all(|g| !g.players.contains(&x)));
        // Every other pair counts exactly once: 5 teams → 15 games.
        assert_eq!(counted.len(), 15);
    }

    #[test]
    fn cancelled_games_are_not_offered() {
        let members = teams(3);
        let x = members[0];
        let mut s = GroupSchedule::new(5, 1, 0, &members).unwrap();
        // Hand out everything at once: x's later games are already out when
        // it is disqualified, and are wasted.
        let games = s.next_to_run(100);
        assert_eq!(games.len(), 6);
        let x_games: Vec<&ScheduledGame> =
            games.iter().filter(|g| g.players.contains(&x)).collect();
        let fail = |g: &ScheduledGame| {
            GameOutcome::failure(
                if g.players[0] == x {
                    Player::P
                } else {
                    Player::Q
                },
                "bad",
            )
        };
        // Record x's first two games as failures, in reverse order.
        s.record(x_games[1].key, fail(x_games[1])).unwrap();
        s.record(x_games[0].key, fail(x_games[0])).unwrap();
        for g in &games {
            if !g.players.contains(&x) {
                s.record(g.key, GameOutcome::played([1, 1])).unwrap();
            }
        }
        // The 3rd game of x is still out; a late result is accepted and ignored.
        assert!(s.is_finished());
        assert!(s.is_disqualified(x));
        assert!(
            s.next_to_run(100).is_empty(),
            "the reschedule of x is never offered"
        );
        s.record(x_games[2].key, GameOutcome::played([9, 9]))
            .unwrap();
        assert_eq!(
            s.attempt(x_games[2].key).unwrap().status,
            AttemptStatus::Cancelled
        );
        assert_eq!(s.attempt(x_games[2].key).unwrap().outcome, None);
    }

    #[test]
    fn both_players_failing_counts_one_failure_each() {
        let members = teams(3);
        let (a, b, c) = (members[0], members[1], members[2]);
        // Both fail for the first time: rescheduled once, one failure each.
        let mut s = GroupSchedule::new(3, 1, 0, &members).unwrap();
        let n0 = s.attempts().len() as u32;
        run_sequential(&mut s, &|g| {
            if g.players == [a, b] && g.attempt == 1 {
                GameOutcome::both_failed("p broke", "q broke")
            } else {
                GameOutcome::played([1, 2])
            }
        });
        assert_eq!(
            status_of(&s, a, b),
            [
                AttemptStatus::Discarded { rescheduled_as: n0 },
                AttemptStatus::Counted
            ]
        );
        let teams_failed: Vec<TeamId> = s.failures().iter().map(|f| f.team).collect();
        assert_eq!(teams_failed, [a, b]);
        assert!(s.disqualified().is_empty());

        // a had failed before (vs c); then a and b fail together: a is
        // disqualified, b's first failure is counted, no reschedule.
        let mut s = GroupSchedule::new(3, 1, 0, &members).unwrap();
        let ac_first = s
            .attempts()
            .iter()
            .position(|x| x.game.players == [a, c])
            .unwrap();
        let ab_first = s
            .attempts()
            .iter()
            .position(|x| x.game.players == [a, b])
            .unwrap();
        let (fail_alone, fail_together) = if ac_first < ab_first {
            ([a, c], [a, b])
        } else {
            ([a, b], [a, c])
        };
        run_sequential(&mut s, &|g| {
            if g.players == fail_alone && g.attempt == 1 {
                GameOutcome::failure(Player::P, "first")
            } else if g.players == fail_together {
                GameOutcome::both_failed("second", "other's first")
            } else {
                GameOutcome::played([1, 2])
            }
        });
        assert_eq!(s.disqualified().len(), 1);
        assert_eq!(s.disqualified()[0].team, a);
        assert_eq!(s.disqualified()[0].reason, "second");
        let other = fail_together[1];
        assert_eq!(s.failures().iter().filter(|f| f.team == other).count(), 1);
        assert!(!s.is_disqualified(other));
        assert_eq!(
            status_of(&s, fail_together[0], fail_together[1]),
            [AttemptStatus::Void]
        );
        // The other one still has its forgiven failure used up: a second one
        // would disqualify it. Here it played on; b vs c counts.
        assert_eq!(status_of(&s, b, c), [AttemptStatus::Counted]);

        // Both had failed before: both disqualified by the same game.
        let mut s = GroupSchedule::new(3, 1, 0, &members).unwrap();
        run_sequential(&mut s, &|g| {
            if g.players == [a, b] {
                GameOutcome::both_failed("a again", "b again")
            } else {
                GameOutcome::played([1, 2])
            }
        });
        let dq: BTreeSet<TeamId> = s.disqualified().iter().map(|d| d.team).collect();
        assert_eq!(dq, BTreeSet::from([a, b]));
        assert_eq!(
            status_of(&s, a, b),
            [
                AttemptStatus::Discarded { rescheduled_as: 6 },
                AttemptStatus::Void
            ]
        );
        let counted = s.counted_games();
        assert_eq!(counted.len(), 1);
        assert_eq!(counted[0].players, [c, c]);
    }

    #[test]
    fn self_game_failure_counts_once() {
        let members = teams(2);
        let a = members[0];
        let mut s = GroupSchedule::new(9, 1, 0, &members).unwrap();
        run_sequential(&mut s, &|g| {
            if g.players == [a, a] && g.attempt == 1 {
                GameOutcome::both_failed("p side", "q side")
            } else {
                GameOutcome::played([3, 4])
            }
        });
        assert!(s.disqualified().is_empty(), "one failure, not two");
        assert_eq!(s.failures().len(), 1);
        assert_eq!(s.failures()[0].reason, "p side");
        assert_eq!(
            status_of(&s, a, a),
            [
                AttemptStatus::Discarded { rescheduled_as: 3 },
                AttemptStatus::Counted
            ]
        );
        assert_eq!(s.attempts()[3].game.attempt, 2);
    }

    #[test]
    fn self_game_second_failure_disqualifies() {
        let members = teams(2);
        let a = members[0];
        let mut s = GroupSchedule::new(9, 1, 0, &members).unwrap();
        run_sequential(&mut s, &|g| {
            if g.players == [a, a] {
                GameOutcome::failure(Player::Q, "again")
            } else {
                GameOutcome::played([3, 4])
            }
        });
        assert!(s.is_disqualified(a));
        let counted = s.counted_games();
        assert_eq!(counted.len(), 1);
        assert_eq!(counted[0].players, [members[1], members[1]]);
    }

    #[test]
    fn chaos_actually_exercises_failures() {
        let mut s = GroupSchedule::new(1994, 1, 0, &teams(12)).unwrap();
        run_sequential(&mut s, &chaos);
        let r = s.report();
        assert!(r.disqualified.len() >= 2, "{:?}", r.disqualified);
        assert!(r
            .attempts
            .iter()
            .any(|a| matches!(a.status, AttemptStatus::Discarded { .. })));
        assert!(r
            .attempts
            .iter()
            .any(|a| a.status == AttemptStatus::Cancelled));
        assert!(r.attempts.iter().any(|a| a.status == AttemptStatus::Void));
        assert!(r
            .attempts
            .iter()
            .any(|a| a.status == AttemptStatus::Counted));
        assert!(r.attempts.iter().all(|a| a.game.attempt <= 3));
        assert!(r.attempts.len() <= s.max_slots());
        assert!(r.finished);
    }

    #[test]
    fn parallel_executor_gives_the_sequential_result() {
        for tseed in [1994u64, 1, 2, 3] {
            let members = teams(12);
            let mut seq = GroupSchedule::new(tseed, 1, 0, &members).unwrap();
            run_sequential(&mut seq, &chaos);
            let expected = seq.report();
            for (workers, order_seed) in [(2, 1), (2, 2), (3, 3), (8, 4), (100, 5)] {
                let mut par = GroupSchedule::new(tseed, 1, 0, &members).unwrap();
                let log = run_parallel(&mut par, &chaos, workers, order_seed);
                assert_eq!(par.report(), expected, "seed {tseed}, {workers} workers");
                assert_eq!(par.counted_games(), seq.counted_games());
                // Resume: the recorded outcomes (wasted ones included),
                // shuffled, rebuild the same state.
                let mut shuffled = log.clone();
                SplitMix64::new(order_seed + 100).shuffle(&mut shuffled);
                let replayed = GroupSchedule::replay(tseed, 1, 0, &members, shuffled).unwrap();
                assert_eq!(replayed.report(), expected);
            }
        }
    }

    #[test]
    fn killed_mid_round_resumes_from_recorded_outcomes() {
        let members = teams(10);
        let mut full = GroupSchedule::new(77, 3, 2, &members).unwrap();
        let log = run_parallel(&mut full, &chaos, 4, 9);
        let expected = full.report();
        for cut in [0, 1, log.len() / 3, log.len() / 2, log.len() - 1] {
            // The first `cut` results reached the database, in arbitrary order.
            let mut stored: Vec<_> = log[..cut].to_vec();
            SplitMix64::new(cut as u64).shuffle(&mut stored);
            let mut resumed = GroupSchedule::replay(77, 3, 2, &members, stored).unwrap();
            assert_eq!(resumed.in_flight(), 0);
            run_parallel(&mut resumed, &chaos, 3, cut as u64);
            assert_eq!(resumed.report(), expected, "cut at {cut}");
        }
    }

    #[test]
    fn record_rejects_foreign_and_duplicate_results() {
        let mut s = GroupSchedule::new(1, 4, 2, &teams(3)).unwrap();
        let g = s.next_to_run(1).remove(0);
        let wrong = GameKey { group: 3, ..g.key };
        assert!(matches!(
            s.record(wrong, GameOutcome::default()),
            Err(ScheduleError::WrongGroup { .. })
        ));
        let far = GameKey { slot: 9, ..g.key };
        assert_eq!(
            s.record(far, GameOutcome::default()),
            Err(ScheduleError::SlotOutOfRange(far))
        );
        s.record(g.key, GameOutcome::played([1, 2])).unwrap();
        assert_eq!(
            s.record(g.key, GameOutcome::played([1, 2])),
            Err(ScheduleError::AlreadyRecorded(g.key))
        );
        // A slot that may exist later (a reschedule) is buffered; if the
        // round finishes without it, it is reported as stray.
        let later = GameKey { slot: 7, ..g.key };
        s.record(later, GameOutcome::played([1, 2])).unwrap();
        while !s.is_finished() {
            let g = s.next_to_run(1).remove(0);
            s.record(g.key, GameOutcome::played([1, 1])).unwrap();
        }
        assert_eq!(s.stray_records(), vec![later]);
    }

    #[test]
    fn requeue_offers_a_game_again() {
        let mut s = GroupSchedule::new(1, 1, 0, &teams(3)).unwrap();
        let first = s.next_to_run(2);
        assert_eq!(first.len(), 2);
        assert_eq!(s.in_flight(), 2);
        s.requeue(first[1].key).unwrap();
        let again = s.next_to_run(1);
        assert_eq!(again, vec![first[1].clone()]);
        assert_eq!(
            s.requeue(GameKey {
                slot: 5,
                ..first[0].key
            }),
            Err(ScheduleError::NotHandedOut(GameKey {
                slot: 5,
                ..first[0].key
            }))
        );
    }

    #[test]
    fn report_serializes() {
        let mut s = GroupSchedule::new(1, 1, 0, &teams(3)).unwrap();
        run_sequential(&mut s, &chaos);
        let json = serde_json::to_value(s.report()).unwrap();
        assert!(json["attempts"][0]["status"]["kind"].is_string());
        let back: GroupReport = serde_json::from_value(json).unwrap();
        assert_eq!(back, s.report());
    }
}
