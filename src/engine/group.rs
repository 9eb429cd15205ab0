//! A group's results as data: its games as the results show them, its
//! table, its disqualified teams, computed from its schedule in one pass
//! ([`group_outcome`]) — pure: a schedule and names in, a value out.
//!
//! The engine computes a finished group's [`GroupOutcome`] once, from the
//! schedule it played the group with, and hands it to every observer with
//! the group's end ([`super::run::Event::GroupFinished`]); a
//! [`super::results::ResultsCache`] computes the same value from the
//! store (after a restart, or for a group it never heard of) with the same
//! function, from the schedule the stored games replay to. So both give
//! the same bytes: a game's outcome in the schedule is its stored record's
//! (`outcome_of`), whether it was just played or read back.

use std::sync::Arc;

use serde::Serialize;

use crate::tournament::ranking::{rank_group, GroupRanking};
use crate::tournament::schedule::{AttemptStatus, GroupSchedule};
use crate::tournament::TeamId;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GroupResult {
    pub number: u32,
    pub members: Vec<String>,
    pub ranking: Vec<Placed>,
    pub games: Vec<GameResult>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Placed {
    pub team: String,
    pub points: f64,
    pub place: u32,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DisqualifiedTeam {
    pub team: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GameFailure {
    pub player: usize,
    pub reason: String,
}

/// One attempt of a game as the results show it.
///
/// The site's cache keeps one for every game of a contest (425,738 at
/// 10,000 teams), so it is small: 64 bytes, not 144. Its JSON
/// ([`Serialize`] below) is what it always was: `failure` (the first of
/// `failures`) and `counted` (whether `status` is counted) are written
/// from the fields they repeat, not kept beside them.
#[derive(Debug, Clone, PartialEq)]
pub struct GameResult {
    pub slot: u32,
    pub attempt: u32,
    /// The players' names, shared with every other game of the team (the
    /// site's cache keeps every game: a copy of each name per game was
    /// about a sixth of a 10,000-team contest's memory).
    pub players: [SharedName; 2],
    pub points: [u64; 2],
    pub seed: u64,
    pub failures: Failures,
    pub status: GameStatus,
}

impl GameResult {
    /// The first failure of the game, if any.
    pub fn failure(&self) -> Option<&GameFailure> {
        self.failures.first()
    }

    /// Whether the game counts for the ranking.
    pub fn counted(&self) -> bool {
        self.status == GameStatus::Counted
    }
}

impl Serialize for GameResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("GameResult", 9)?;
        st.serialize_field("slot", &self.slot)?;
        st.serialize_field("players", &self.players)?;
        st.serialize_field("points", &self.points)?;
        st.serialize_field("seed", &self.seed)?;
        st.serialize_field("attempt", &self.attempt)?;
        st.serialize_field("failure", &self.failure())?;
        st.serialize_field("failures", &self.failures)?;
        st.serialize_field("counted", &self.counted())?;
        st.serialize_field("status", &self.status)?;
        st.end()
    }
}

/// A team's name shared by all its games: one word (an `Arc<str>` is
/// two), the name allocated once per team. Reads and writes as the name.
#[derive(Clone, PartialEq, Eq)]
pub struct SharedName(Arc<String>);

impl std::ops::Deref for SharedName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for SharedName {
    fn from(name: String) -> Self {
        SharedName(Arc::new(name))
    }
}

impl From<&str> for SharedName {
    fn from(name: &str) -> Self {
        SharedName(Arc::new(name.to_string()))
    }
}

/// As the name's own `Display`: width and alignment apply (the mails'
/// tables pad names).
impl std::fmt::Display for SharedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&**self, f)
    }
}

impl std::fmt::Debug for SharedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for SharedName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

/// What became of a game's attempt (written as [`GameStatus::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameStatus {
    /// Counts for the ranking.
    Counted,
    /// A first failure: rescheduled.
    Discarded,
    /// A player was disqualified.
    Void,
    /// Not played: a player was already disqualified.
    Cancelled,
    /// Not played yet.
    Pending,
}

impl GameStatus {
    /// The status as the JSON and the pages write it.
    pub fn as_str(self) -> &'static str {
        match self {
            GameStatus::Counted => "counted",
            GameStatus::Discarded => "discarded",
            GameStatus::Void => "void",
            GameStatus::Cancelled => "cancelled",
            GameStatus::Pending => "pending",
        }
    }
}

/// Compares with the status's word (as the JSON writes it): the
/// integration tests read statuses as words.
impl PartialEq<&str> for GameStatus {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

impl Serialize for GameStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for GameStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A game's failures: one word and no allocation for the many games
/// without any; written as a list.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(
    clippy::box_collection,
    reason = "one word in every game (a boxed slice is two); the second allocation only in the few games with a failure"
)]
pub struct Failures(Option<Box<Vec<GameFailure>>>);

impl From<Vec<GameFailure>> for Failures {
    fn from(v: Vec<GameFailure>) -> Self {
        Failures((!v.is_empty()).then(|| Box::new(v)))
    }
}

impl std::ops::Deref for Failures {
    type Target = [GameFailure];
    fn deref(&self) -> &[GameFailure] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<'a> IntoIterator for &'a Failures {
    type Item = &'a GameFailure;
    type IntoIter = std::slice::Iter<'a, GameFailure>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Serialize for Failures {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// A group's table as the results show it: names, points, places.
pub fn placed(r: &GroupRanking, name: &dyn Fn(TeamId) -> String) -> Vec<Placed> {
    r.entries
        .iter()
        .map(|e| Placed {
            team: name(e.team),
            points: e.points.as_f64(),
            place: e.place,
        })
        .collect()
}

/// Everything a group's end tells: its games (each pair's points, the
/// failures, what became of each attempt), its table and places, its
/// disqualified teams. The engine makes it once per finished group and
/// every observer reads it (the mails' GRP, GRG and GRR, the site's group
/// and team pages, the round's advancement).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupOutcome {
    /// The group as the results show it (its played attempts in slot
    /// order; none pending once the group is finished).
    pub result: GroupResult,
    /// The table by team (empty while the group is not finished): what
    /// the round's advancement is decided from.
    pub ranking: GroupRanking,
    /// Its disqualified teams, in the order they were disqualified.
    pub disqualified: Vec<DisqualifiedTeam>,
}

/// The outcome of a group from its schedule: one pass over its attempts
/// for the games, one over its counted games for the table. `members` in
/// the order the store lists them (the results name them so);
/// `name` gives a team's name as the results share it.
pub fn group_outcome(
    sched: &GroupSchedule,
    members: &[TeamId],
    name: &dyn Fn(TeamId) -> SharedName,
) -> GroupOutcome {
    // The players' names by their place among the schedule's members
    // (sorted), as each attempt names them: one look-up a member, not
    // two a game.
    let member_names: Vec<SharedName> = sched.members().iter().map(|&t| name(t)).collect();
    let text = |t: TeamId| name(t).to_string();
    // Made at its final size (collected through the filter, the vector
    // grew by doubling, leaving up to half its room unused and the
    // smaller vectors it outgrew as holes in the heap).
    let played = |a: &&crate::tournament::schedule::Attempt| a.status != AttemptStatus::Pending;
    let mut games: Vec<GameResult> =
        Vec::with_capacity(sched.attempts().iter().filter(played).count());
    games.extend(sched.attempts().iter().filter(played).map(|a| {
        // A cancelled game counts as not played, even if a parallel run
        // happened to play it before its turn (the schedule keeps no
        // outcome for it).
        let outcome = match a.status {
            AttemptStatus::Cancelled => None,
            _ => a.outcome.as_ref(),
        };
        // A game's failures as its record lists them: the referee's, P's
        // before Q's, at most one each (`outcome_of` keeps each side's).
        let failures: Vec<GameFailure> = outcome
            .map(|o| {
                (0..2)
                    .filter(|&side| o.failed[side])
                    .map(|side| GameFailure {
                        player: side,
                        reason: o.reason[side].clone().unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        GameResult {
            slot: a.game.key.slot,
            attempt: a.game.attempt,
            players: a.game.members.map(|m| member_names[m as usize].clone()),
            points: outcome.map_or([0, 0], |o| o.points),
            seed: a.game.seed,
            failures: failures.into(),
            status: status_of(&a.status),
        }
    }));
    let ranking = if sched.is_finished() {
        let dq: Vec<TeamId> = sched.disqualified().iter().map(|d| d.team).collect();
        rank_group(sched.members(), &dq, &sched.counted_games(), &text)
    } else {
        GroupRanking {
            entries: Vec::new(),
            disqualified: Vec::new(),
        }
    };
    let disqualified = disqualified_teams(sched, &text);
    let result = GroupResult {
        number: sched.group(),
        members: members.iter().map(|&t| text(t)).collect(),
        ranking: placed(&ranking, &text),
        games,
    };
    GroupOutcome {
        result,
        ranking,
        disqualified,
    }
}

/// The group's disqualified teams as the results show them.
fn disqualified_teams(
    sched: &GroupSchedule,
    text: &dyn Fn(TeamId) -> String,
) -> Vec<DisqualifiedTeam> {
    sched
        .disqualified()
        .iter()
        .map(|d| DisqualifiedTeam {
            team: text(d.team),
            reason: d.reason.clone(),
        })
        .collect()
}

/// How the results show an attempt of the schedule.
fn status_of(status: &AttemptStatus) -> GameStatus {
    match status {
        AttemptStatus::Counted => GameStatus::Counted,
        AttemptStatus::Discarded { .. } => GameStatus::Discarded,
        AttemptStatus::Void => GameStatus::Void,
        AttemptStatus::Cancelled => GameStatus::Cancelled,
        AttemptStatus::Pending => GameStatus::Pending,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::engine::run::outcome_of;
    use crate::referee::{Failure, FailureKind, GameRecord};
    use crate::seed::SplitMix64;
    use crate::tournament::ranking::rank_schedule;
    use crate::tournament::schedule::GameKey;

    /// A group as the results caches computed it before the engine's one
    /// value (this function is their code then): the stored records read
    /// by slot, the schedule replayed from them, the table ranked from it.
    fn as_the_caches_computed_it(
        seed: u64,
        members: &[TeamId],
        stored: &[(GameKey, GameRecord)],
        name: &dyn Fn(TeamId) -> SharedName,
    ) -> GroupOutcome {
        let text = |t: TeamId| name(t).to_string();
        let sched = GroupSchedule::replay(
            seed,
            1,
            1,
            members,
            stored.iter().map(|(k, r)| (*k, outcome_of(r))),
        )
        .unwrap();
        let mut by_slot: Vec<Option<&GameRecord>> = vec![None; sched.attempts().len()];
        for (k, r) in stored {
            if let Some(at) = by_slot.get_mut(k.slot as usize) {
                *at = Some(r);
            }
        }
        let member_names: Vec<SharedName> = sched.members().iter().map(|&t| name(t)).collect();
        let games: Vec<GameResult> = sched
            .attempts()
            .iter()
            .filter(|a| a.status != AttemptStatus::Pending)
            .map(|a| {
                let rec = if a.status == AttemptStatus::Cancelled {
                    None
                } else {
                    by_slot.get(a.game.key.slot as usize).copied().flatten()
                };
                let failures: Vec<GameFailure> = rec
                    .map(|r| {
                        r.failures
                            .iter()
                            .map(|f| GameFailure {
                                player: f.player,
                                reason: f.reason.clone(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                GameResult {
                    slot: a.game.key.slot,
                    attempt: a.game.attempt,
                    players: a.game.members.map(|m| member_names[m as usize].clone()),
                    points: rec.map(|r| r.points).unwrap_or([0, 0]),
                    seed: a.game.seed,
                    failures: failures.into(),
                    status: status_of(&a.status),
                }
            })
            .collect();
        let ranking = rank_schedule(&sched, &text).unwrap();
        let disqualified = disqualified_teams(&sched, &text);
        GroupOutcome {
            result: GroupResult {
                number: 1,
                members: members.iter().map(|&t| text(t)).collect(),
                ranking: placed(&ranking, &text),
                games,
            },
            ranking,
            disqualified,
        }
    }

    /// A referee's record: random points, and now and then a failure of
    /// P, of Q or of both (P's first, as the referee lists them), some
    /// with an empty reason.
    fn record(rng: &mut SplitMix64, seed: u64) -> GameRecord {
        let which = rng.below(40);
        let points = [rng.below(30), rng.below(30)];
        let mut failure = |player: usize| {
            let reason = match rng.below(3) {
                0 => String::new(),
                n => format!("crashed in throw {n}"),
            };
            Failure {
                player,
                throw: 1,
                kind: FailureKind::Crashed {
                    signal: 11,
                    trap: None,
                },
                reason,
            }
        };
        let failures = match which {
            0..=1 => vec![failure(0)],
            2..=3 => vec![failure(1)],
            4 => vec![failure(0), failure(1)],
            _ => vec![],
        };
        GameRecord {
            seed,
            points,
            throws: Vec::new(),
            failures,
        }
    }

    /// Over random groups played in random order (failures, rescheduled
    /// games, disqualifications, voided and cancelled games, ties): the
    /// outcome the engine computes from the schedule it played is the
    /// one each results cache computed from the stored records before,
    /// and the one a cache computes now from the schedule the store
    /// replays to (after a restart).
    #[test]
    fn a_groups_one_outcome_equals_what_each_observer_computed_from_the_store() {
        let mut rng = SplitMix64::new(38);
        let (mut disqualified, mut cancelled, mut discarded) = (0, 0, 0);
        for seed in 0..300u64 {
            let n = 1 + rng.below(9) as usize;
            let mut field: Vec<TeamId> = (1..=40).map(TeamId).collect();
            rng.shuffle(&mut field);
            let members: Vec<TeamId> = field[..n].to_vec();
            let names: HashMap<TeamId, SharedName> = members
                .iter()
                .map(|&t| {
                    (
                        t,
                        SharedName::from(format!("team-{}", rng.below(4) * 7 + t.0 as u64)),
                    )
                })
                .collect();
            let name = |t: TeamId| names[&t].clone();
            let mut live = GroupSchedule::new(seed, 1, 1, &members).unwrap();
            let mut stored: Vec<(GameKey, GameRecord)> = Vec::new();
            while !live.is_finished() {
                let mut batch = live.next_to_run(1 + rng.below(6) as usize);
                rng.shuffle(&mut batch);
                for game in batch {
                    let r = record(&mut rng, game.seed);
                    live.record(game.key, outcome_of(&r)).unwrap();
                    stored.push((game.key, r));
                }
            }
            let engine = group_outcome(&live, &members, &name);
            let before = as_the_caches_computed_it(seed, &members, &stored, &name);
            assert_eq!(engine, before, "group {seed}");
            rng.shuffle(&mut stored);
            let replayed = GroupSchedule::replay(
                seed,
                1,
                1,
                &members,
                stored.iter().map(|(k, r)| (*k, outcome_of(r))),
            )
            .unwrap();
            assert_eq!(group_outcome(&replayed, &members, &name), engine);
            disqualified += engine.disqualified.len();
            let status =
                |s: GameStatus| engine.result.games.iter().filter(|g| g.status == s).count();
            cancelled += status(GameStatus::Cancelled);
            discarded += status(GameStatus::Discarded);
        }
        assert!(
            disqualified > 10 && cancelled > 10 && discarded > 50,
            "the random groups had disqualifications ({disqualified}), cancelled games \
             ({cancelled}) and rescheduled ones ({discarded})"
        );
    }
}
