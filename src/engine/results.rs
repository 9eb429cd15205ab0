//! The results of a tournament as data, rebuilt from the store alone (so an
//! interrupted and resumed run prints exactly what an uninterrupted one
//! does). This is the `knobeln tournament --json` object.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::group::group_outcome;
pub use super::group::{
    placed, DisqualifiedTeam, Failures, GameFailure, GameResult, GameStatus, GroupOutcome,
    GroupResult, Placed, SharedName,
};
use super::prepare::Rejected;
use super::run::{outcome_of, TournamentConfig};
use super::EngineError;
use crate::store::Store;
use crate::tournament::evolution::{evolve, payoff_matrix};
use crate::tournament::ranking::GroupRanking;
use crate::tournament::schedule::GroupSchedule;
use crate::tournament::TeamId;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Results {
    pub seed: u64,
    pub rejected: Vec<Rejected>,
    pub rounds: Vec<RoundResult>,
    pub winners: Vec<Placed>,
    pub evolution: Option<EvolutionResult>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundResult {
    pub number: u32,
    pub is_final: bool,
    pub groups: Vec<GroupResult>,
    pub advanced: Vec<String>,
    pub disqualified: Vec<DisqualifiedTeam>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvolutionResult {
    pub population: u64,
    pub exemplars_per_strategy: u64,
    pub generations: Vec<Generation>,
    pub end: crate::tournament::EvolutionEnd,
    pub ranking: Vec<EvolutionPlaced>,
    pub unranked: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Generation {
    pub counts: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvolutionPlaced {
    pub team: String,
    pub fraction: f64,
    pub count: u64,
    pub place: u32,
}

/// Rebuilds the results of `tournament` from the store.
pub fn results(
    store: &Store,
    tournament: i64,
    rejected: Vec<Rejected>,
) -> Result<Results, EngineError> {
    let mut cache = ResultsCache::new(store, tournament)?;
    cache.refresh_all(store)?;
    let mut out = cache.results;
    out.rejected = rejected;
    Ok(out)
}

/// What a finished group keeps for the round's aggregates.
struct GroupState {
    /// Finished in the store and in its schedule: its results never change
    /// again and are not recomputed.
    settled: bool,
    ranking: GroupRanking,
    /// How many of the round's disqualified teams are this group's.
    n_disqualified: usize,
}

struct RoundState {
    row: crate::store::RoundRow,
    members: Vec<Vec<TeamId>>,
    /// The groups as last computed. The round's disqualified teams
    /// ([`RoundResult::disqualified`]) are theirs, group after group: a
    /// group's are found by the counts of the groups before it (no list
    /// of their groups is kept beside them).
    groups: Vec<Option<GroupState>>,
    /// The aggregates were computed from settled groups after the round
    /// finished.
    settled: bool,
}

/// The results of a running tournament, kept up to date group by group.
///
/// The observers (the contest's mails, the results site) hold one each and
/// refresh only what an event changed: a finished group is computed once,
/// from its own games, and never again, so observing a tournament costs
/// what its games cost, not the square of it. A group whose end the engine
/// told with its [`GroupOutcome`] ([`ResultsCache::refresh_finished_group`])
/// is not read from the store at all. [`results`] is a fresh cache
/// refreshed completely, so both give the same [`Results`].
pub struct ResultsCache {
    games: KeptGames,
    /// Settled groups whose games go at the next refresh
    /// ([`KeptGames::UntilSettled`]).
    to_forget: Vec<(usize, usize)>,
    tournament: i64,
    config: TournamentConfig,
    names: HashMap<TeamId, SharedName>,
    rounds: Vec<RoundState>,
    results: Results,
}

/// Keeps only the games with a failure (what the round's summary and the
/// final mail need to name a disqualifying game).
fn forget_games(games: &mut Vec<GameResult>) {
    games.retain(|x| !x.failures.is_empty());
    games.shrink_to_fit();
}

/// Which games a [`ResultsCache`] keeps in its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptGames {
    /// Every game (the site: a team's page lists all its games).
    All,
    /// A settled group's games until the next refresh when the refresh
    /// was for that group (none otherwise), then only its ranking and the
    /// games with a failure (the mails: a group's mails
    /// need its games once; the round's summary and the final mail name
    /// the game that disqualified a team), so the memory kept does not
    /// grow with the games played.
    UntilSettled,
}

impl ResultsCache {
    /// A cache that keeps every game.
    pub fn new(store: &Store, tournament: i64) -> Result<Self, EngineError> {
        Self::keeping(store, tournament, KeptGames::All)
    }

    pub fn keeping(store: &Store, tournament: i64, games: KeptGames) -> Result<Self, EngineError> {
        let row = store.tournament(tournament)?;
        let config: TournamentConfig = serde_json::from_str(&row.config)
            .map_err(|e| EngineError::Mismatch(format!("tournament config: {e}")))?;
        let names: HashMap<TeamId, SharedName> = store
            .entries(tournament)?
            .into_iter()
            .map(|e| (e.team, SharedName::from(e.name)))
            .collect();
        Ok(ResultsCache {
            games,
            to_forget: Vec::new(),
            tournament,
            config,
            names,
            rounds: Vec::new(),
            results: Results {
                seed: row.seed,
                rejected: Vec::new(),
                rounds: Vec::new(),
                winners: Vec::new(),
                evolution: None,
            },
        })
    }

    /// The results as last refreshed.
    pub fn results(&self) -> &Results {
        &self.results
    }

    fn name(&self, t: TeamId) -> String {
        self.shared_name(t).to_string()
    }

    /// A team of the tournament's name, as the results hold it (read
    /// once with the entries: a team's name never changes).
    pub fn team_name(&self, t: TeamId) -> Option<SharedName> {
        self.names.get(&t).cloned()
    }

    /// A team's name as the games hold it: one allocation per team.
    fn shared_name(&self, t: TeamId) -> SharedName {
        self.names
            .get(&t)
            .cloned()
            .unwrap_or_else(|| SharedName::from(format!("team {t}")))
    }

    /// Brings every round and group up to date (settled groups are not
    /// recomputed).
    pub fn refresh_all(&mut self, store: &Store) -> Result<&Results, EngineError> {
        self.discover_rounds(store)?;
        for r in 0..self.rounds.len() {
            self.refresh_round_at(store, r, None)?;
        }
        Ok(&self.results)
    }

    /// Brings one group up to date, and its round's aggregates (groups of
    /// the round never seen before are computed once; others keep their
    /// last state).
    pub fn refresh_group(
        &mut self,
        store: &Store,
        round: u32,
        group: u32,
    ) -> Result<&Results, EngineError> {
        self.discover_rounds(store)?;
        if let Some(r) = self.rounds.iter().position(|s| s.row.number == round) {
            self.refresh_round_at(store, r, Some((group, None)))?;
        }
        Ok(&self.results)
    }

    /// Brings one finished group up to date from its outcome as the
    /// engine computed it (not from the store: the same value
    /// [`Self::refresh_group`] would compute from its stored games), and
    /// its round's aggregates.
    pub fn refresh_finished_group(
        &mut self,
        store: &Store,
        round: u32,
        group: u32,
        outcome: &GroupOutcome,
    ) -> Result<&Results, EngineError> {
        self.discover_rounds(store)?;
        if let Some(r) = self.rounds.iter().position(|s| s.row.number == round) {
            self.refresh_round_at(store, r, Some((group, Some(outcome))))?;
        }
        Ok(&self.results)
    }

    /// Brings every group of one round up to date.
    pub fn refresh_round(&mut self, store: &Store, round: u32) -> Result<&Results, EngineError> {
        self.discover_rounds(store)?;
        if let Some(r) = self.rounds.iter().position(|s| s.row.number == round) {
            self.refresh_round_at(store, r, None)?;
        }
        Ok(&self.results)
    }

    /// Reads rounds not seen yet, and the state of rounds not finished
    /// (and forgets the games it was asked to forget).
    fn discover_rounds(&mut self, store: &Store) -> Result<(), EngineError> {
        for (r, g) in std::mem::take(&mut self.to_forget) {
            forget_games(&mut self.results.rounds[r].groups[g].games);
        }
        for state in self.rounds.iter_mut().filter(|s| !s.row.finished) {
            if let Some(row) = store.round(self.tournament, state.row.number)? {
                state.row = row;
            }
        }
        let mut number = self.rounds.len() as u32 + 1;
        while let Some(row) = store.round(self.tournament, number)? {
            let members = store.groups(self.tournament, number)?;
            self.results.rounds.push(RoundResult {
                number,
                is_final: row.is_final,
                groups: Vec::new(),
                advanced: Vec::new(),
                disqualified: Vec::new(),
            });
            self.rounds.push(RoundState {
                groups: members.iter().map(|_| None).collect(),
                members,
                row,
                settled: false,
            });
            number += 1;
        }
        Ok(())
    }

    /// Recomputes the groups of round index `r` that need it (`only`: just
    /// that one, plus groups never computed; with its outcome if the
    /// engine gave it, then that finished group is not read from the
    /// store), then the round's aggregates.
    fn refresh_round_at(
        &mut self,
        store: &Store,
        r: usize,
        only: Option<(u32, Option<&GroupOutcome>)>,
    ) -> Result<(), EngineError> {
        let (only, given) = match only {
            Some((group, given)) => (Some(group), given),
            None => (None, None),
        };
        if self.rounds[r].settled {
            return Ok(());
        }
        let round = self.rounds[r].row.number;
        let n_groups = self.rounds[r].members.len();
        let mut final_schedule = None;
        for g in 0..n_groups {
            let group = g as u32 + 1;
            let state = &self.rounds[r].groups[g];
            let wanted = match state {
                None => true,
                // A settled group kept only its games with a failure
                // ([`KeptGames::UntilSettled`]): the group asked for is
                // computed again, its caller reads its games. (Only a
                // resumed tournament asks for a group settled already:
                // its first event computed every group never computed,
                // finished ones among them, whose end is told again
                // after it and whose mails may not be queued yet.)
                Some(s) if s.settled => {
                    self.games == KeptGames::UntilSettled && only == Some(group)
                }
                // Once the round is finished, every group is brought up
                // to date (an observer may have missed an event).
                Some(_) => only.is_none_or(|o| o == group) || self.rounds[r].row.finished,
            };
            // The final round's Evolution needs its one group's schedule.
            let need_schedule = self.rounds[r].row.is_final && self.rounds[r].row.finished;
            if !wanted && !need_schedule {
                continue;
            }
            let given = given.filter(|_| only == Some(group) && !need_schedule);
            let (outcome, settled) = match given {
                // Finished in its schedule and in the store: the engine
                // tells a group's end after storing it.
                Some(outcome) => (outcome.clone(), true),
                None => {
                    let members = self.rounds[r].members[g].clone();
                    let (outcome, sched) = self.compute_group(store, round, group, &members)?;
                    let settled = sched.is_finished()
                        && store.group_finished(self.tournament, round, group)?;
                    if need_schedule && g == 0 {
                        final_schedule = Some((outcome.ranking.clone(), sched));
                    }
                    (outcome, settled)
                }
            };
            let GroupOutcome {
                result,
                ranking,
                disqualified,
            } = outcome;
            // Disqualifications of this group replace its earlier ones, in
            // the order of their groups (as a full rebuild lists them),
            // whatever order the groups' events came in.
            let groups = &mut self.rounds[r].groups;
            let at: usize = groups[..g].iter().flatten().map(|s| s.n_disqualified).sum();
            let before = groups[g].as_ref().map_or(0, |s| s.n_disqualified);
            groups[g] = Some(GroupState {
                settled,
                ranking,
                n_disqualified: disqualified.len(),
            });
            let rr = &mut self.results.rounds[r];
            rr.disqualified.splice(at..at + before, disqualified);
            if rr.groups.len() <= g {
                rr.groups.resize_with(g + 1, || GroupResult {
                    number: 0,
                    members: Vec::new(),
                    ranking: Vec::new(),
                    games: Vec::new(),
                });
            }
            rr.groups[g] = result;
            if settled && self.games == KeptGames::UntilSettled {
                if only == Some(group) {
                    // The caller is about to read this group's games.
                    self.to_forget.push((r, g));
                } else {
                    forget_games(&mut rr.groups[g].games);
                }
            }
        }
        let state = &self.rounds[r];
        if state.row.finished && !state.row.is_final {
            let rankings: Vec<GroupRanking> = state
                .groups
                .iter()
                .map(|g| {
                    g.as_ref()
                        .map(|g| g.ranking.clone())
                        .unwrap_or(GroupRanking {
                            entries: Vec::new(),
                            disqualified: Vec::new(),
                        })
                })
                .collect();
            let mut advanced: Vec<String> =
                super::run::advancing_field(&rankings, state.row.field.len())
                    .into_iter()
                    .map(|t| self.name(t))
                    .collect();
            advanced.sort();
            self.results.rounds[r].advanced = advanced;
        }
        if let Some((ranking, sched)) = final_schedule {
            self.results.winners = placed(&ranking, &|t| self.name(t));
            self.results.evolution = self.evolution(&ranking, &sched)?;
        }
        let state = &self.rounds[r];
        self.rounds[r].settled = state.row.finished
            && state
                .groups
                .iter()
                .all(|g| g.as_ref().is_some_and(|g| g.settled));
        Ok(())
    }

    /// A group's outcome from its stored games (read and replayed here:
    /// after a restart, or for a group whose end this cache did not hear
    /// with its outcome), and the schedule they replay to.
    fn compute_group(
        &self,
        store: &Store,
        round: u32,
        group: u32,
        members: &[TeamId],
    ) -> Result<(GroupOutcome, GroupSchedule), EngineError> {
        let stored = store.game_outcomes(self.tournament, round, group)?;
        let sched = GroupSchedule::replay(
            self.results.seed,
            round,
            group,
            members,
            stored.iter().map(|s| (s.key, outcome_of(&s.record))),
        )?;
        Ok((
            group_outcome(&sched, members, &|t| self.shared_name(t)),
            sched,
        ))
    }

    fn evolution(
        &self,
        ranking: &GroupRanking,
        sched: &GroupSchedule,
    ) -> Result<Option<EvolutionResult>, EngineError> {
        let name = |t: TeamId| self.name(t);
        let strategies: Vec<TeamId> = ranking.entries.iter().map(|e| e.team).collect();
        if strategies.is_empty() {
            return Ok(None);
        }
        let payoff = payoff_matrix(&strategies, &sched.counted_games())?;
        let evo = evolve(&strategies, &payoff, &self.config.evolution)?;
        Ok(Some(EvolutionResult {
            population: evo.total,
            exemplars_per_strategy: evo.exemplars_per_strategy,
            generations: evo
                .generations
                .iter()
                .map(|g| Generation {
                    counts: strategies
                        .iter()
                        .zip(g)
                        .map(|(t, c)| (name(*t), *c))
                        .collect(),
                })
                .collect(),
            end: evo.end.clone(),
            ranking: evo
                .ranking
                .iter()
                .map(|e| EvolutionPlaced {
                    team: name(e.team),
                    fraction: e.fraction,
                    count: e.count,
                    place: e.place,
                })
                .collect(),
            unranked: evo.unranked.iter().map(|&t| name(t)).collect(),
        }))
    }
}

/// A store with a tournament of seed `seed` entered by `n` teams,
/// `team00`, `team01`, …, their modules stand-ins (for runners that
/// answer games without playing them): the tournament's id. Shared by the
/// tests of the engine and of what observes it.
#[cfg(test)]
pub(crate) fn stand_in_tournament(store: &mut crate::store::Store, seed: u64, n: usize) -> i64 {
    stand_in_tournament_of(
        store,
        seed,
        (0..n).map(|t| (format!("team{t:02}"), None, None)),
    )
}

/// A tournament of seed `seed` entered by a team for each (name,
/// description, lexical elements), its version's module a stand-in: the
/// tournament's id.
#[cfg(test)]
pub(crate) fn stand_in_tournament_of(
    store: &mut crate::store::Store,
    seed: u64,
    teams: impl Iterator<Item = (String, Option<String>, Option<u64>)>,
) -> i64 {
    use crate::referee::RefereeConfig;
    use crate::seed::SeedKey;
    use crate::store::NewVersion;
    let now = chrono::Utc::now();
    let entries: Vec<_> = teams
        .map(|(name, description, lexical_elements)| {
            let team = store.ensure_team(&name, now).unwrap();
            let v = store
                .insert_version(
                    &NewVersion {
                        team,
                        source: b"x",
                        source_sha256: "x",
                        binary: Some(b"x"),
                        lexical_elements,
                        description: description.as_deref(),
                        report_json: "{}",
                    },
                    now,
                )
                .unwrap();
            (team, v)
        })
        .collect();
    let config = TournamentConfig {
        referee: RefereeConfig::default(),
        evolution: Default::default(),
    };
    store
        .create_tournament(
            seed,
            &SeedKey::public_from_seed(seed),
            &serde_json::to_string(&config).unwrap(),
            "test",
            &entries,
            now,
        )
        .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pool::Runner;
    use crate::engine::run::{run_tournament_with, Event, Observer};
    use crate::engine::synthetic::Synthetic;
    use crate::referee::RefereeConfig;

    /// At every event, the cache refreshed for that event alone agrees
    /// with a full rebuild on everything the event speaks of.
    struct Compare {
        tournament: i64,
        cache: Option<ResultsCache>,
        /// Keeps a settled group's games only until the next refresh.
        lean: Option<ResultsCache>,
        groups_checked: usize,
        rounds_checked: usize,
    }

    impl Observer for Compare {
        fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
            let err = |e: EngineError| e.to_string();
            if self.cache.is_none() {
                self.cache = Some(ResultsCache::new(store, self.tournament).map_err(err)?);
            }
            if self.lean.is_none() {
                self.lean = Some(
                    ResultsCache::keeping(store, self.tournament, KeptGames::UntilSettled)
                        .map_err(err)?,
                );
            }
            let cache = self.cache.as_mut().expect("filled");
            let lean = self.lean.as_mut().expect("filled");
            match event {
                Event::GroupFinished {
                    round,
                    group,
                    outcome,
                } => {
                    let full = results(store, self.tournament, vec![]).map_err(err)?;
                    let (r, g) = (*round as usize - 1, *group as usize - 1);
                    // The engine's outcome is what the store rebuilds: the
                    // lean cache takes it, the other reads the store.
                    let outcome = outcome.as_deref().expect("the engine computes it");
                    assert_eq!(outcome.result, full.rounds[r].groups[g]);
                    let kept = lean
                        .refresh_finished_group(store, *round, *group, outcome)
                        .map_err(err)?;
                    assert_eq!(kept.rounds[r].groups[g], full.rounds[r].groups[g]);
                    let part = cache.refresh_group(store, *round, *group).map_err(err)?;
                    assert_eq!(part.rounds[r].groups[g], full.rounds[r].groups[g]);
                    let members = &full.rounds[r].groups[g].members;
                    let of_group = |res: &Results| -> Vec<DisqualifiedTeam> {
                        res.rounds[r]
                            .disqualified
                            .iter()
                            .filter(|d| members.contains(&d.team))
                            .cloned()
                            .collect()
                    };
                    assert_eq!(of_group(part), of_group(&full));
                    self.groups_checked += 1;
                }
                Event::RoundFinished { round, .. } => {
                    let full = results(store, self.tournament, vec![]).map_err(err)?;
                    let part = cache.refresh_round(store, *round).map_err(err)?;
                    let r = *round as usize - 1;
                    assert_eq!(part.rounds[r], full.rounds[r]);
                    self.rounds_checked += 1;
                }
                _ => {}
            }
            Ok(())
        }
    }

    /// A game's JSON is byte for byte what the struct with the repeated
    /// fields (`failure`, `counted`, `status` as a string, `failures` as a
    /// list) wrote, with and without failures, in every status.
    #[test]
    fn a_game_is_written_as_before_it_was_made_smaller() {
        #[derive(Serialize)]
        struct Before {
            slot: u32,
            players: [String; 2],
            points: [u64; 2],
            seed: u64,
            attempt: u32,
            failure: Option<GameFailure>,
            failures: Vec<GameFailure>,
            counted: bool,
            status: &'static str,
        }
        let failure = |player: usize, reason: &str| GameFailure {
            player,
            reason: reason.into(),
        };
        let statuses = [
            (GameStatus::Counted, "counted"),
            (GameStatus::Discarded, "discarded"),
            (GameStatus::Void, "void"),
            (GameStatus::Cancelled, "cancelled"),
            (GameStatus::Pending, "pending"),
        ];
        let failure_lists = [
            vec![],
            vec![failure(1, "crashed in throw 3")],
            vec![failure(0, "a \"quoted\" reason"), failure(1, "too slow")],
        ];
        for (status, word) in statuses {
            for failures in &failure_lists {
                let players = ["alpha", "ßeta"];
                let now = GameResult {
                    slot: 17,
                    attempt: 2,
                    players: players.map(SharedName::from),
                    points: [u64::MAX, 0],
                    seed: 0xdead_beef_f00d,
                    failures: failures.clone().into(),
                    status,
                };
                let before = Before {
                    slot: 17,
                    players: players.map(String::from),
                    points: [u64::MAX, 0],
                    seed: 0xdead_beef_f00d,
                    attempt: 2,
                    failure: failures.first().cloned(),
                    failures: failures.clone(),
                    counted: word == "counted",
                    status: word,
                };
                assert_eq!(
                    serde_json::to_string(&now).unwrap(),
                    serde_json::to_string(&before).unwrap()
                );
                assert_eq!(
                    serde_json::to_string_pretty(&now).unwrap(),
                    serde_json::to_string_pretty(&before).unwrap()
                );
                assert_eq!(now.status.to_string(), word);
                // A name is padded as a string is (the mails' tables).
                assert_eq!(format!("[{:<7}]", now.players[0]), "[alpha  ]");
                assert_eq!(format!("[{:>6}]", now.players[1]), "[  ßeta]");
                assert_eq!(now.failure(), failures.first());
            }
        }
        // Small enough for a cache of every game of a contest.
        assert!(std::mem::size_of::<GameResult>() <= 64);
    }

    #[test]
    fn results_kept_group_by_group_equal_a_full_rebuild() {
        let mut store = Store::open_in_memory().unwrap();
        let tid = stand_in_tournament(&mut store, 7, 50);
        let factory = |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
            Ok(Box::new(Synthetic::new("crashed in throw 1")))
        };
        let mut compare = Compare {
            tournament: tid,
            cache: None,
            lean: None,
            groups_checked: 0,
            rounds_checked: 0,
        };
        run_tournament_with(
            &mut store,
            tid,
            &factory,
            &crate::engine::SystemClock,
            &mut compare,
        )
        .unwrap();
        assert!(
            compare.rounds_checked >= 2,
            "a preliminary and a final round"
        );
        assert!(compare.groups_checked >= 3);
        let full = results(&store, tid, vec![]).unwrap();
        assert!(
            !full.rounds[0].disqualified.is_empty(),
            "the crasher is disqualified"
        );
        assert!(full.evolution.is_some());
        let cache = compare.cache.as_mut().unwrap();
        assert_eq!(cache.refresh_all(&store).unwrap(), &full);
        // The lean cache has the same rankings and the Evolution, and no
        // games any more.
        let lean = compare.lean.as_mut().unwrap().refresh_all(&store).unwrap();
        assert_eq!(lean.winners, full.winners);
        assert_eq!(lean.evolution, full.evolution);
        for (a, b) in lean.rounds.iter().zip(&full.rounds) {
            assert_eq!(a.advanced, b.advanced);
            assert_eq!(a.disqualified, b.disqualified);
            for (x, y) in a.groups.iter().zip(&b.groups) {
                assert_eq!(x.ranking, y.ranking);
            }
        }
        // A refresh of everything keeps no settled group's games but those
        // with a failure.
        for (a, b) in lean.rounds.iter().zip(&full.rounds) {
            for (x, y) in a.groups.iter().zip(&b.groups) {
                let failed: Vec<&GameResult> =
                    y.games.iter().filter(|g| !g.failures.is_empty()).collect();
                assert!(
                    x.games.iter().collect::<Vec<_>>() == failed,
                    "round {} group {}: only the games with a failure are kept",
                    a.number,
                    x.number
                );
            }
        }
        let kept: usize = lean
            .rounds
            .iter()
            .flat_map(|r| &r.groups)
            .map(|g| g.games.len())
            .sum();
        assert!(kept > 0, "the crasher's failed games are kept");
    }

    /// Answers every game at once, as [`Synthetic`] does, but in the first
    /// round's groups `crash_in` every tenth team (its id ending in 1)
    /// crashes in every game it plays first, and the games of the first
    /// round come back group by group in the order of `first` (groups not
    /// named after, highest first): its groups finish in that order.
    struct OutOfOrder {
        crash_in: Vec<u32>,
        first: Vec<u32>,
        queued: std::cell::RefCell<Vec<crate::engine::pool::Done>>,
    }

    impl Runner for OutOfOrder {
        fn capacity(&self) -> usize {
            // Every game of a round at once: the order is the runner's.
            1 << 20
        }
        fn submit(&self, job: crate::engine::pool::Job) {
            let seed = job.game.seed;
            let key = job.game.key;
            let crasher = key.round == 1
                && self.crash_in.contains(&key.group)
                && job.game.players[0].0 % 10 == 1;
            let failures = if crasher {
                vec![crate::referee::Failure {
                    player: 0,
                    throw: 1,
                    kind: crate::referee::FailureKind::Crashed {
                        signal: 11,
                        trap: None,
                    },
                    reason: "crashed".into(),
                }]
            } else {
                Vec::new()
            };
            let record = crate::referee::GameRecord {
                seed,
                points: [seed % 997, (seed >> 20) % 997],
                throws: Vec::new(),
                failures,
            };
            self.queued
                .borrow_mut()
                .push(crate::engine::pool::Done::played(job.game, record));
        }
        fn next_done(&self) -> Option<crate::engine::pool::Done> {
            let mut queued = self.queued.borrow_mut();
            let rank = |d: &crate::engine::pool::Done| {
                let (round, group) = (d.game.key.round, d.game.key.group);
                match self.first.iter().position(|&g| g == group) {
                    Some(i) if round == 1 => i as i64,
                    _ if round == 1 => i64::from(u32::MAX - group),
                    _ => i64::from(group),
                }
            };
            // The first queued of the best rank.
            let at = (0..queued.len()).min_by_key(|&i| (rank(&queued[i]), i))?;
            Some(queued.remove(at))
        }
    }

    /// [`Compare`] at every event, and the order the groups finished in.
    struct Arrivals {
        compare: Compare,
        finished: Vec<(u32, u32)>,
    }

    impl Observer for Arrivals {
        fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
            if let Event::GroupFinished { round, group, .. } = event {
                self.finished.push((*round, *group));
            }
            self.compare.event(store, event)
        }
    }

    /// Groups finishing out of order (3, 1, 2, then the rest from the
    /// highest), some with disqualifications: the cache refreshed event by
    /// event lists the round's disqualified teams in the order of their
    /// groups, as a full rebuild does, and the whole results equal those
    /// of the same contest played group after group. Fails if a group's
    /// disqualifications were placed in the order the groups arrived.
    #[test]
    fn groups_finishing_out_of_order_give_the_results_of_groups_in_order() {
        let play = |first: Vec<u32>| {
            let mut store = Store::open_in_memory().unwrap();
            // Four groups in the first round.
            let tid = stand_in_tournament(&mut store, 7, 130);
            let factory = move |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
                Ok(Box::new(OutOfOrder {
                    crash_in: vec![1, 3, 4],
                    first: first.clone(),
                    queued: Default::default(),
                }))
            };
            let mut arrivals = Arrivals {
                compare: Compare {
                    tournament: tid,
                    cache: None,
                    lean: None,
                    groups_checked: 0,
                    rounds_checked: 0,
                },
                finished: Vec::new(),
            };
            run_tournament_with(
                &mut store,
                tid,
                &factory,
                &crate::engine::SystemClock,
                &mut arrivals,
            )
            .unwrap();
            let full = results(&store, tid, vec![]).unwrap();
            let cache = arrivals.compare.cache.as_mut().unwrap();
            assert_eq!(cache.refresh_all(&store).unwrap(), &full);
            (full, arrivals)
        };
        let (in_order, arrived) = play((1..=20).collect());
        let round_1 = |a: &Arrivals| -> Vec<u32> {
            a.finished
                .iter()
                .filter(|(r, _)| *r == 1)
                .map(|(_, g)| *g)
                .collect()
        };
        let round_1_in_order = round_1(&arrived);
        let n = round_1_in_order.len() as u32;
        assert_eq!(n, 4, "groups in the first round");
        assert_eq!(round_1_in_order, (1..=n).collect::<Vec<_>>(), "in order");
        let (shuffled, arrived) = play(vec![3, 1, 2]);
        let order = round_1(&arrived);
        let mut want = vec![3, 1, 2];
        want.push(4);
        assert_eq!(order, want, "the groups finished out of order");
        assert!(arrived.compare.rounds_checked >= 2);
        // Disqualifications in some groups, not all, and not in the
        // order they arrived.
        let round = &shuffled.rounds[0];
        let group_of = |team: &str| -> u32 {
            round
                .groups
                .iter()
                .find(|g| g.members.iter().any(|m| m == team))
                .unwrap()
                .number
        };
        let dq_groups: Vec<u32> = round
            .disqualified
            .iter()
            .map(|d| group_of(&d.team))
            .collect();
        assert!(dq_groups.is_sorted(), "{dq_groups:?}");
        let mut distinct = dq_groups.clone();
        distinct.dedup();
        assert_eq!(distinct, [1, 3, 4], "disqualified in groups {dq_groups:?}");
        let by_arrival: Vec<u32> = order
            .iter()
            .copied()
            .filter(|g| distinct.contains(g))
            .collect();
        assert_eq!(
            by_arrival,
            [3, 1, 4],
            "the arrival order is not the groups'"
        );
        assert_eq!(shuffled, in_order);
    }
}
