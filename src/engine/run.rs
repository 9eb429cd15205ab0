//! Runs a tournament to its end: round after round of groups, every game
//! committed to the store soon after it finishes (up to 64 games or 20 ms
//! of them in one transaction, always before their group's end and before
//! the observers hear of them), then the Knobeln Evolution.
//!
//! Resuming is the normal path: every step first looks in the store. A round
//! that exists keeps its groups; a group's schedule is rebuilt by replaying
//! its stored games ([`GroupSchedule::replay`]) and only the missing games
//! are played. Because the schedule applies outcomes in slot order, the
//! result does not depend on the number of workers or on where a previous
//! run was killed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::group::{group_outcome, GroupOutcome, SharedName};
use super::pool::{Done, Job, Pool, Program, Runner};
use super::{Clock, EngineError};
use crate::referee::{GameRecord, GameSeeds, Referee, RefereeConfig};
use crate::seed::SeedKey;
use crate::store::{Entry, NewGame, Store};
use crate::tournament::evolution::{evolve, payoff_matrix, EvolutionConfig};
use crate::tournament::grouping::{draw_groups, grouping_seed, is_final};
use crate::tournament::ranking::{advancing, GroupRanking};
use crate::tournament::schedule::GroupSchedule;
use crate::tournament::{GameOutcome, TeamId};

/// Everything that defines a tournament besides its entries and seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentConfig {
    pub referee: RefereeConfig,
    pub evolution: EvolutionConfig,
}

/// What happens, for progress displays and (later) mail.
#[derive(Debug, Clone)]
pub enum Event {
    RoundStarted {
        round: u32,
        n_teams: usize,
        n_groups: usize,
        n_games: usize,
        is_final: bool,
    },
    GroupStarted {
        round: u32,
        group: u32,
        members: Vec<TeamId>,
    },
    /// A game of the round is stored: told once it is committed (with the
    /// games stored with it, so possibly after a later group's start),
    /// `done` of `total` the round's games applied when it finished.
    GameFinished {
        round: u32,
        done: usize,
        total: usize,
    },
    /// A group's games are over and its end is stored.
    GroupFinished {
        round: u32,
        group: u32,
        /// The group's outcome, computed once by the engine from the
        /// schedule it played (or, resumed, replayed from the store) the
        /// group with: what the observers show of the group. `None` where
        /// whoever tells of the end did not compute it (a tool, a test):
        /// an observer computes it from the store then, to the same value.
        outcome: Option<Arc<GroupOutcome>>,
    },
    RoundFinished {
        round: u32,
        advanced: Vec<TeamId>,
        disqualified: Vec<TeamId>,
    },
    EvolutionFinished {
        /// Generations computed after the initial population (the count
        /// the mails, the article and the site give).
        generations: usize,
    },
}

/// Receives events (the default does nothing). An observer may read the
/// store (everything an event speaks of is committed before it is
/// emitted); an error stops the run (it resumes from the store later).
///
/// Events may repeat after a resume (a group finished before a crash is
/// announced again): observers must be idempotent.
pub trait Observer {
    fn event(&mut self, _store: &Store, _event: &Event) -> Result<(), String> {
        Ok(())
    }
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// An observer that logs rounds and groups (started, finished) and the
/// Evolution's end, one line each (`tracing`, level info).
pub struct Logged;
impl Observer for Logged {
    fn event(&mut self, _store: &Store, event: &Event) -> Result<(), String> {
        match event {
            Event::RoundStarted {
                round,
                n_teams,
                n_groups,
                n_games,
                is_final,
            } => tracing::info!(
                "round {round} started: {n_teams} teams in {n_groups} groups, {n_games} games{}",
                if *is_final { " (the final round)" } else { "" }
            ),
            Event::GroupStarted {
                round,
                group,
                members,
            } => tracing::info!(
                "round {round}, group {group} started: {} members",
                members.len()
            ),
            Event::GameFinished { .. } => {}
            Event::GroupFinished { round, group, .. } => {
                tracing::info!("round {round}, group {group} finished")
            }
            Event::RoundFinished {
                round,
                advanced,
                disqualified,
            } => tracing::info!(
                "round {round} finished: {} advance, {} disqualified",
                advanced.len(),
                disqualified.len()
            ),
            Event::EvolutionFinished { generations } => {
                tracing::info!(
                    "the Evolution finished: {generations} generations computed after the \
                     initial population"
                )
            }
        }
        Ok(())
    }
}

static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks running tournaments of this process to stop: no new game starts,
/// the games in flight finish and are stored, and `run_tournament` returns
/// [`EngineError::Stopped`]; running it again resumes. (For a clean
/// shutdown; a `kill -9` loses at most the games in flight.)
pub fn request_stop() {
    STOP.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Whether a stop was asked for ([`request_stop`]): a runner that waits on
/// other machines gives up waiting then, and a paused contest observer
/// looks at it too.
pub fn stop_requested() -> bool {
    STOP.load(std::sync::atomic::Ordering::SeqCst)
}

/// How many times a game is retried after an infrastructure fault.
const MAX_INFRA_TRIES: u32 = 3;

/// Runs (or resumes) tournament `tournament` to its end, its games played
/// by a local pool of `jobs` workers.
pub fn run_tournament(
    store: &mut Store,
    tournament: i64,
    jobs: usize,
    clock: &dyn Clock,
    observer: &mut dyn Observer,
) -> Result<(), EngineError> {
    let local = |referee: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
        Ok(Box::new(Pool::start(jobs, Referee::new(*referee))))
    };
    run_tournament_with(store, tournament, &local, clock, observer)
}

/// Makes the runner of a tournament's games from its referee configuration.
pub type RunnerFactory<'a> = dyn Fn(&RefereeConfig) -> Result<Box<dyn Runner>, EngineError> + 'a;

/// Runs (or resumes) tournament `tournament` to its end, its games played
/// by the runner `runner` makes. Meanwhile the store's write-ahead log is
/// checkpointed by a thread of its own, not on this one
/// (`store::checkpoints`).
pub fn run_tournament_with(
    store: &mut Store,
    tournament: i64,
    runner: &RunnerFactory<'_>,
    clock: &dyn Clock,
    observer: &mut dyn Observer,
) -> Result<(), EngineError> {
    let checkpoints = store.checkpoint_in_background()?;
    let run = play_tournament(store, tournament, runner, clock, observer);
    let stopped = checkpoints.map_or(Ok(()), |c| c.stop(store));
    run?;
    Ok(stopped?)
}

/// [`run_tournament_with`]'s play.
fn play_tournament(
    store: &mut Store,
    tournament: i64,
    runner: &RunnerFactory<'_>,
    clock: &dyn Clock,
    observer: &mut dyn Observer,
) -> Result<(), EngineError> {
    let row = store.tournament(tournament)?;
    if row.finished {
        return Ok(());
    }
    let config: TournamentConfig = serde_json::from_str(&row.config)
        .map_err(|e| EngineError::Mismatch(format!("tournament config: {e}")))?;
    // Strategies an older version stored as native programs play as
    // modules from now on.
    super::upgrade::rebuild_native_programs(store, config.referee.limits.memory_bytes)?;
    let entries = store.entries(tournament)?;
    // Each team's name, shared by every group outcome that names it (as a
    // results cache names a team it has no entry of: never, for a
    // member).
    let names: HashMap<TeamId, SharedName> = entries
        .iter()
        .map(|e| (e.team, SharedName::from(e.name.as_str())))
        .collect();
    let name_of = |t: TeamId| {
        names
            .get(&t)
            .cloned()
            .unwrap_or_else(|| SharedName::from(format!("team {t}")))
    };
    let players = Players {
        entries: entries.iter().map(|e| (e.team, e.clone())).collect(),
        key: row.key,
    };
    let pool = runner(&config.referee)?;
    let mut field: Vec<TeamId> = entries.iter().map(|e| e.team).collect();
    field.sort();
    let mut round = 1u32;
    loop {
        if field.is_empty() {
            break;
        }
        let (groups, final_round) = match store.round(tournament, round)? {
            Some(r) => {
                if r.field != field {
                    return Err(EngineError::Mismatch(format!(
                        "round {round} has a different field"
                    )));
                }
                (store.groups(tournament, round)?, r.is_final)
            }
            None => {
                let groups = draw_groups(&field, grouping_seed(row.seed, round));
                let fin = is_final(field.len());
                store.insert_round(tournament, round, &field, fin, &groups)?;
                (groups, fin)
            }
        };
        let (schedules, rankings) = play_round(
            store,
            tournament,
            row.seed,
            round,
            &groups,
            final_round,
            &players,
            pool.as_ref(),
            clock,
            &name_of,
            observer,
        )?;
        let mut dq = Vec::new();
        for s in &schedules {
            for d in s.disqualified() {
                dq.push((d.team, d.key, d.reason.clone()));
            }
        }
        let advanced = if final_round {
            Vec::new()
        } else {
            advancing_field(&rankings, field.len())
        };
        if !store.round(tournament, round)?.is_some_and(|r| r.finished) {
            store.finish_round(tournament, round, &dq, clock.now())?;
        }
        // The round's games are over: what their threads' allocator
        // arenas hold free goes back to the system before the observers'
        // round work and the next round (see `give_back_free_memory`).
        super::give_back_free_memory();
        observer
            .event(
                store,
                &Event::RoundFinished {
                    round,
                    advanced: advanced.clone(),
                    disqualified: dq.iter().map(|d| d.0).collect(),
                },
            )
            .map_err(EngineError::Observer)?;
        if final_round {
            let ranking = &rankings[0];
            let strategies: Vec<TeamId> = ranking.entries.iter().map(|e| e.team).collect();
            if !strategies.is_empty() {
                let games = schedules[0].counted_games();
                let payoff = payoff_matrix(&strategies, &games)?;
                let evo = evolve(&strategies, &payoff, &config.evolution)?;
                let gens: Vec<Vec<(TeamId, u64)>> = evo
                    .generations
                    .iter()
                    .map(|g| strategies.iter().copied().zip(g.iter().copied()).collect())
                    .collect();
                store.save_evolution(tournament, &gens)?;
                observer
                    .event(
                        store,
                        &Event::EvolutionFinished {
                            // As every text counts them: after the initial
                            // population.
                            generations: evo.generations.len().saturating_sub(1),
                        },
                    )
                    .map_err(EngineError::Observer)?;
            }
            break;
        }
        field = advanced;
        field.sort();
        round += 1;
    }
    drop(pool);
    store.finish_tournament(tournament, clock.now())?;
    Ok(())
}

/// Who proceeds from a round: the better half of each group (with ties at
/// the cut). Should that not shrink the field at all (everyone tied
/// everywhere), each group is cut at exactly ceil(n/2) in table order, so a
/// tournament always ends.
pub fn advancing_field(rankings: &[GroupRanking], field_len: usize) -> Vec<TeamId> {
    let mut next: Vec<TeamId> = rankings
        .iter()
        .flat_map(|r| advancing(&r.entries))
        .collect();
    if next.len() >= field_len {
        next = rankings
            .iter()
            .flat_map(|r| {
                let n = r.entries.len().div_ceil(2);
                r.entries.iter().take(n).map(|e| e.team)
            })
            .collect();
    }
    next.sort();
    next
}

/// The outcome the schedule needs, from what the referee recorded.
pub fn outcome_of(record: &GameRecord) -> GameOutcome {
    let mut o = GameOutcome::played(record.points);
    for f in &record.failures {
        o.failed[f.player] = true;
        o.reason[f.player] = Some(f.reason.clone());
    }
    o
}

#[allow(clippy::too_many_arguments)]
fn play_round(
    store: &mut Store,
    tournament: i64,
    seed: u64,
    round: u32,
    groups: &[Vec<TeamId>],
    final_round: bool,
    players: &Players,
    pool: &dyn Runner,
    clock: &dyn Clock,
    name: &dyn Fn(TeamId) -> SharedName,
    observer: &mut dyn Observer,
) -> Result<(Vec<GroupSchedule>, Vec<GroupRanking>), EngineError> {
    let mut schedules = Vec::with_capacity(groups.len());
    for (g, members) in groups.iter().enumerate() {
        let group = g as u32 + 1;
        let stored = store.game_outcomes(tournament, round, group)?;
        let sched = GroupSchedule::replay(
            seed,
            round,
            group,
            members,
            stored.iter().map(|s| (s.key, outcome_of(&s.record))),
        )?;
        // Every stored game must be the one the schedule plays in its slot.
        for s in &stored {
            if let Some(mismatch) = sched_attempt_matches(&sched, s) {
                return Err(EngineError::Mismatch(mismatch));
            }
        }
        schedules.push(sched);
    }
    let n_games: usize = groups.iter().map(|m| m.len() * (m.len() + 1) / 2).sum();
    observer
        .event(
            store,
            &Event::RoundStarted {
                round,
                n_teams: groups.iter().map(Vec::len).sum(),
                n_groups: groups.len(),
                n_games,
                is_final: final_round,
            },
        )
        .map_err(EngineError::Observer)?;
    let mut started = vec![false; groups.len()];
    // The sealed programs of the groups being played (loaded when a group
    // starts, let go when it is finished: a few groups at a time).
    let mut loaded: Vec<HashMap<TeamId, Arc<Program>>> = vec![HashMap::new(); groups.len()];
    // Each finished group's table, from the outcome its end was told with
    // (every group's end is told, again after a resume).
    let mut rankings: Vec<Option<GroupRanking>> = vec![None; groups.len()];
    let mut infra_tries: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut in_flight = 0usize;
    // The finished games applied to their schedules, not yet stored (one
    // vector for the round): stored together, up to [`DONE_BATCH`] or
    // [`UNSTORED_WAIT`] after the first, and always before a group's end.
    let mut unstored = Unstored::default();
    // The round's games applied and scheduled, kept up to date game by game
    // (not summed over every group at every game).
    let mut progress = schedules.iter().fold((0, 0), |(d, t), s| {
        let (sd, st) = s.progress();
        (d + sd, t + st)
    });
    // What a wake-up looks at is bounded by the games in flight, not by
    // the field (a field of 10,000 has 244 groups; with real games the
    // engine wakes for about every game): the groups before `first_open`
    // are finished and not looked at again; `to_check` holds the groups
    // whose end may have come since the last look (every group at first:
    // a resumed round's may be finished already; then those a game was
    // applied to), and `told` counts the ends told.
    let mut first_open = 0usize;
    let mut to_check: Vec<usize> = (0..groups.len()).collect();
    let mut told = 0usize;
    loop {
        // The runner's capacity follows the time its games take.
        let capacity = pool.capacity();
        while schedules
            .get(first_open)
            .is_some_and(GroupSchedule::is_finished)
        {
            first_open += 1;
        }
        // Fill the pool, group by group.
        for (g, sched) in schedules.iter_mut().enumerate().skip(first_open) {
            count_look();
            if in_flight >= capacity || stop_requested() {
                break;
            }
            if sched.is_finished() {
                continue;
            }
            let to_run = sched.next_to_run(capacity - in_flight);
            if !to_run.is_empty() && !started[g] {
                started[g] = true;
                loaded[g] = players.load(store, sched.members())?;
                observer
                    .event(
                        store,
                        &Event::GroupStarted {
                            round,
                            group: g as u32 + 1,
                            members: sched.members().to_vec(),
                        },
                    )
                    .map_err(EngineError::Observer)?;
            }
            for game in to_run {
                let programs = [
                    loaded[g][&game.players[0]].clone(),
                    loaded[g][&game.players[1]].clone(),
                ];
                let seeds = GameSeeds::new(&players.key, game.seed);
                pool.submit(Job {
                    game,
                    programs,
                    seeds,
                });
                in_flight += 1;
            }
        }
        // In group order, as when every group was looked at.
        to_check.sort_unstable();
        to_check.dedup();
        for g in to_check.drain(..) {
            count_look();
            let sched = &schedules[g];
            if sched.is_finished() && rankings[g].is_none() {
                told += 1;
                // The group's end is committed with its last games (in
                // the same transaction: one commit, not two), never
                // before them.
                let group = g as u32 + 1;
                unstored.store_ending(store, tournament, round, Some((group, clock)), observer)?;
                loaded[g] = HashMap::new();
                // Computed once, for the round's advancement and for
                // every observer.
                let outcome = Arc::new(group_outcome(sched, &groups[g], name));
                rankings[g] = Some(outcome.ranking.clone());
                observer
                    .event(
                        store,
                        &Event::GroupFinished {
                            round,
                            group,
                            outcome: Some(outcome),
                        },
                    )
                    .map_err(EngineError::Observer)?;
            }
        }
        // Every group's end is told once it is finished (above).
        if told == schedules.len() {
            break;
        }
        if in_flight == 0 && stop_requested() {
            unstored.store(store, tournament, round, observer)?;
            return Err(EngineError::Stopped);
        }
        if in_flight == 0 {
            return Err(EngineError::Invalid(format!(
                "round {round}: the schedule has nothing to run but is not finished"
            )));
        }
        // Games finished already are kept until more arrive (at most
        // [`UNSTORED_WAIT`]): one commit for many games, not one per game
        // that finishes while the server's thread is idle.
        let waited = match unstored.since {
            Some(since) => pool.next_done_within(UNSTORED_WAIT.saturating_sub(since.elapsed())),
            None => None,
        };
        let first = match waited {
            Some(d) => d,
            None => {
                unstored.store(store, tournament, round, observer)?;
                pool.next_done()
                    .ok_or_else(|| EngineError::Invalid("the referee pool stopped".into()))?
            }
        };
        // The games that finished together carry one time, read once.
        let finished_at = crate::store::game_time(clock.now());
        let mut next = Some(first);
        while let Some(d) = next.take() {
            // A game of an earlier round was cancelled there while it was
            // being played (its round ended without it): nothing to do.
            if d.game.key.round == round {
                in_flight -= 1;
                to_check.push((d.game.key.group - 1) as usize);
                let recorded =
                    record_in_schedule(&d, round, &mut schedules, &mut progress, &mut infra_tries);
                match recorded {
                    Ok(Recorded::Game) => unstored.keep(d, finished_at, progress),
                    Ok(Recorded::Requeued) => {}
                    Err(e) => {
                        // The games applied before this one are kept.
                        unstored.store(store, tournament, round, observer)?;
                        return Err(e);
                    }
                }
            }
            if unstored.games.len() >= DONE_BATCH {
                unstored.store(store, tournament, round, observer)?;
                break;
            }
            next = pool.try_next_done();
        }
    }
    unstored.store(store, tournament, round, observer)?;
    let rankings = rankings
        .into_iter()
        .collect::<Option<Vec<GroupRanking>>>()
        .ok_or_else(|| {
            EngineError::Invalid(format!("round {round}: a group's end was not told"))
        })?;
    Ok((schedules, rankings))
}

thread_local! {
    /// Groups the engine looked at on this thread while playing (a test
    /// counts them per game, whatever other tests do meanwhile).
    static LOOKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one group looked at (filling the runner or for its end).
fn count_look() {
    LOOKS.with(|c| c.set(c.get() + 1));
}

/// The most finished games stored in one transaction (a commit's cost is
/// mostly the pages it writes: the tables' and indexes' last pages,
/// written again by every commit, are shared by more games).
const DONE_BATCH: usize = 256;

/// How long a finished game may wait to be stored with the games that
/// finish after it. A `kill -9` loses at most these games (and at most
/// [`DONE_BATCH`]): they are played again when the run resumes, to the
/// same outcome (a game depends on its seed and programs only).
const UNSTORED_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// The round's finished games applied to their schedules but not yet
/// stored, with the progress each brought (told to the observer once they
/// are committed: an observer reads only what is committed).
#[derive(Default)]
struct Unstored {
    /// Each game, the time it was received ([`crate::store::game_time`])
    /// and the round's games applied and scheduled after it.
    games: Vec<(Done, i64, (usize, usize))>,
    /// When the first of them was received.
    since: Option<std::time::Instant>,
}

impl Unstored {
    fn keep(&mut self, d: Done, finished_at: i64, progress: (usize, usize)) {
        self.since.get_or_insert_with(std::time::Instant::now);
        self.games.push((d, finished_at, progress));
    }

    /// Stores the games kept in one transaction, then tells the observer
    /// of each (in the order they were received).
    fn store(
        &mut self,
        store: &Store,
        tournament: i64,
        round: u32,
        observer: &mut dyn Observer,
    ) -> Result<(), EngineError> {
        self.store_ending(store, tournament, round, None, observer)
    }

    /// [`Self::store`], and with `ending` a group (its number, and the
    /// clock of its end) marked finished in the same transaction: a
    /// `kill -9` leaves its last games and its end committed together or
    /// neither.
    fn store_ending(
        &mut self,
        store: &Store,
        tournament: i64,
        round: u32,
        ending: Option<(u32, &dyn Clock)>,
        observer: &mut dyn Observer,
    ) -> Result<(), EngineError> {
        self.since = None;
        let ending = match ending {
            Some((group, clock)) if !store.group_finished(tournament, round, group)? => {
                Some((group, clock))
            }
            _ => None,
        };
        if self.games.is_empty() && ending.is_none() {
            return Ok(());
        }
        let tx = store
            .conn()
            .unchecked_transaction()
            .map_err(crate::store::StoreError::from)?;
        // Encoded where the game was played (a pool's worker), or here if
        // its runner did not; stored a few to a statement.
        let games: Vec<NewGame<'_>> = self
            .games
            .iter_mut()
            .filter_map(|(d, finished_at, _)| {
                d.for_store().map(|(game, record, encoded)| NewGame {
                    game,
                    record,
                    encoded,
                    finished_at: *finished_at,
                })
            })
            .collect();
        store.insert_games_at(tournament, games)?;
        if let Some((group, clock)) = ending {
            store.finish_group(tournament, round, group, clock.now())?;
        }
        tx.commit().map_err(crate::store::StoreError::from)?;
        for (_, _, (done, total)) in self.games.drain(..) {
            observer
                .event(store, &Event::GameFinished { round, done, total })
                .map_err(EngineError::Observer)?;
        }
        Ok(())
    }
}

/// Applies one finished game of the round to its group's schedule, or
/// counts an infrastructure fault and queues the game again. `progress`
/// (the round's games applied and scheduled) follows the group's change.
fn record_in_schedule(
    d: &Done,
    round: u32,
    schedules: &mut [GroupSchedule],
    progress: &mut (usize, usize),
    infra_tries: &mut BTreeMap<(u32, u32), u32>,
) -> Result<Recorded, EngineError> {
    let g = (d.game.key.group - 1) as usize;
    let before = schedules[g].progress();
    let result = record_in_group(d, round, &mut schedules[g], infra_tries);
    let after = schedules[g].progress();
    *progress = (
        progress.0 + after.0 - before.0,
        progress.1 + after.1 - before.1,
    );
    result
}

/// What [`record_in_schedule`] did with a finished game.
#[derive(Debug, PartialEq, Eq)]
enum Recorded {
    /// Its outcome is applied to the schedule.
    Game,
    /// It failed for the infrastructure and is queued again.
    Requeued,
}

/// [`record_in_schedule`]'s change to the group's schedule.
fn record_in_group(
    d: &Done,
    round: u32,
    sched: &mut GroupSchedule,
    infra_tries: &mut BTreeMap<(u32, u32), u32>,
) -> Result<Recorded, EngineError> {
    match d.result() {
        Ok(record) => {
            sched.record(d.game.key, outcome_of(record))?;
            Ok(Recorded::Game)
        }
        Err(error) => {
            let tries = infra_tries
                .entry((d.game.key.group, d.game.key.slot))
                .or_insert(0);
            *tries += 1;
            if *tries >= MAX_INFRA_TRIES {
                return Err(EngineError::Referee {
                    key: format!(
                        "round {round}, group {}, slot {}",
                        d.game.key.group, d.game.key.slot
                    ),
                    attempts: *tries,
                    error: error.clone(),
                });
            }
            sched.requeue(d.game.key)?;
            Ok(Recorded::Requeued)
        }
    }
}

/// Checks a stored game against the schedule's idea of that slot (players,
/// attempt, seed): a database from another seed or field is refused.
fn sched_attempt_matches(
    sched: &GroupSchedule,
    stored: &crate::store::StoredGame,
) -> Option<String> {
    let a = sched.attempt(stored.key)?;
    if a.game.players != stored.players
        || a.game.seed != stored.record.seed
        || a.game.attempt != stored.attempt
    {
        return Some(format!(
            "stored game {:?} is not the game the schedule plays in that slot",
            stored.key
        ));
    }
    None
}

/// The tournament's players: their stored versions, and the key of their
/// generators' seeds.
struct Players {
    entries: HashMap<TeamId, Entry>,
    key: SeedKey,
}

impl Players {
    /// The sealed programs of a group's members, from the store.
    fn load(
        &self,
        store: &Store,
        members: &[TeamId],
    ) -> Result<HashMap<TeamId, Arc<Program>>, EngineError> {
        members
            .iter()
            .map(|team| {
                let entry = self.entries.get(team).ok_or_else(|| {
                    EngineError::Mismatch(format!("team {} is not an entry", team.0))
                })?;
                let program = Program::new(store.version_binary(entry.version)?);
                // Made ready here, at the group's start: made ready by the
                // game thread that plays it first instead, the games'
                // threads cost more than this thread saved (10,000 teams:
                // +15 µs a game on them, -7 on this one; figures.md, the
                // session's end of 2026-12-01 at 20fbd1b).
                program.strategy()?;
                Ok((*team, Arc::new(program)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Log lines written into a buffer.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn logged_writes_one_line_per_group_started_and_finished() {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let store = Store::open_in_memory().unwrap();
        tracing::subscriber::with_default(subscriber, || {
            let mut log = Logged;
            for event in [
                Event::GroupStarted {
                    round: 1,
                    group: 2,
                    members: vec![TeamId(1), TeamId(2), TeamId(3)],
                },
                Event::GameFinished {
                    round: 1,
                    done: 1,
                    total: 6,
                },
                Event::GroupFinished {
                    round: 1,
                    group: 2,
                    outcome: None,
                },
            ] {
                log.event(&store, &event).unwrap();
            }
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "no line per game: {text}");
        assert!(
            lines[0].contains("INFO") && lines[0].ends_with("round 1, group 2 started: 3 members")
        );
        assert!(lines[1].ends_with("round 1, group 2 finished"), "{text}");
    }

    /// Answers as [`crate::engine::synthetic::Synthetic`] does, but a
    /// game is never there already: each comes while the engine waits
    /// ([`Runner::next_done_within`]), one at a time, as real games finish
    /// while the server's thread is idle.
    struct OneAtATime(crate::engine::synthetic::Synthetic);

    impl Runner for OneAtATime {
        fn capacity(&self) -> usize {
            self.0.capacity()
        }
        fn submit(&self, job: Job) {
            self.0.submit(job)
        }
        fn next_done(&self) -> Option<Done> {
            self.0.next_done()
        }
        fn next_done_within(&self, _wait: std::time::Duration) -> Option<Done> {
            self.0.next_done()
        }
    }

    fn one_at_a_time(_: &RefereeConfig) -> Result<Box<dyn Runner>, EngineError> {
        Ok(Box::new(OneAtATime(
            crate::engine::synthetic::Synthetic::new("crashed in throw 1"),
        )))
    }

    /// At each event, what another connection (another process) sees
    /// committed: the games stored.
    struct Committed {
        other: rusqlite::Connection,
        /// The committed games at each `GameFinished`, in order.
        at_games: Vec<i64>,
        /// Stops the run at this group's start (round 1), as a kill would.
        fail_at_group: Option<u32>,
    }

    impl Observer for Committed {
        fn event(&mut self, _store: &Store, event: &Event) -> Result<(), String> {
            match event {
                Event::GameFinished { .. } => {
                    let n: i64 = self
                        .other
                        .query_row("SELECT COUNT(*) FROM games", [], |r| r.get(0))
                        .unwrap();
                    self.at_games.push(n);
                }
                Event::GroupStarted {
                    round: 1, group, ..
                } if Some(*group) == self.fail_at_group => {
                    return Err(format!("stopped at group {group}'s start"));
                }
                _ => {}
            }
            Ok(())
        }
    }

    fn committed(db: &std::path::Path, fail_at_group: Option<u32>) -> Committed {
        Committed {
            other: rusqlite::Connection::open(db).unwrap(),
            at_games: Vec::new(),
            fail_at_group,
        }
    }

    /// The games as stored: key, attempt, players, points, seed.
    fn stored_games(db: &std::path::Path) -> Vec<[i64; 9]> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT round, grp, slot, attempt, player_p, player_q, points_p, points_q, seed
                 FROM games ORDER BY round, grp, slot",
            )
            .unwrap();
        stmt.query_map([], |r| {
            let mut row = [0i64; 9];
            for (i, v) in row.iter_mut().enumerate() {
                *v = r.get(i)?;
            }
            Ok(row)
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    /// Games that finish one at a time while the engine waits are stored
    /// [`DONE_BATCH`] to a commit (or fewer at a group's end), not one
    /// each; and every game is committed before the observer hears of it.
    /// Failed before the games were kept: one commit per game.
    #[test]
    fn games_finishing_one_at_a_time_are_committed_together_before_their_events() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("k.db");
        let mut store = Store::open(&db).unwrap();
        let tid = crate::engine::results::stand_in_tournament(&mut store, 7, 50);
        let mut seen = committed(&db, None);
        run_tournament_with(
            &mut store,
            tid,
            &one_at_a_time,
            &crate::engine::SystemClock,
            &mut seen,
        )
        .unwrap();
        let games = seen.at_games.len();
        let groups: i64 = store
            .conn()
            .query_row("SELECT COUNT(*) FROM groups", [], |r| r.get(0))
            .unwrap();
        assert!(games > 3 * DONE_BATCH, "{games} games");
        for (k, &n) in seen.at_games.iter().enumerate() {
            assert!(
                n as usize > k,
                "game {} announced before it was committed",
                k + 1
            );
        }
        let mut commits = seen.at_games.clone();
        commits.dedup();
        assert!(
            commits.len() <= games / DONE_BATCH + groups as usize,
            "{} commits for {games} games in {groups} groups",
            commits.len()
        );
    }

    /// Answers every game at once with throws drawn from its seed, each
    /// kind of ending somewhere: team 1 crashes in every game it plays
    /// first (rescheduled, then disqualified: void and cancelled games),
    /// Q is stopped by the watchdog in a game of 13 (a game stored with
    /// its throws, not for replay) or crashes in one of 11.
    struct Endings {
        done: std::cell::RefCell<std::collections::VecDeque<Done>>,
    }

    impl Runner for Endings {
        fn capacity(&self) -> usize {
            64
        }
        fn submit(&self, job: Job) {
            use crate::referee::{Failure, FailureKind};
            let seed = job.game.seed;
            let throws: Vec<[i64; 2]> = (0..(seed % 300) as i64)
                .map(|i| [1 + (seed as i64 >> 8).rem_euclid(7) * i % 97, 1 + i / 40])
                .collect();
            let crash = |player: usize| Failure {
                player,
                throw: 3,
                kind: FailureKind::Crashed {
                    signal: 11,
                    trap: None,
                },
                reason: format!("throw 3: crashed ({seed})"),
            };
            let mut failures = Vec::new();
            if job.game.players[0] == TeamId(1) {
                failures.push(crash(0));
            }
            if seed.is_multiple_of(13) {
                failures.push(Failure {
                    player: 1,
                    throw: 9,
                    kind: FailureKind::WallClock { limit_ms: 10_000 },
                    reason: "throw 9: stopped by the watchdog".into(),
                });
            } else if seed.is_multiple_of(11) {
                failures.push(crash(1));
            }
            let record = GameRecord {
                seed,
                points: [seed % 997, (seed >> 20) % 997],
                throws,
                failures,
            };
            self.done
                .borrow_mut()
                .push_back(Done::played(job.game, record));
        }
        fn next_done(&self) -> Option<Done> {
            self.done.borrow_mut().pop_front()
        }
    }

    /// At each group's end, the games its DGP protocols are written from
    /// as the store's connection kept them when it stored them
    /// (`Store::with_kept_games_packed`, the rows not read back) against the
    /// group's stored rows read by another connection, as a restarted
    /// process reads them.
    struct KeptAgainstStored {
        other: Store,
        tournament: i64,
        groups: usize,
        games: usize,
        replayed_rows: usize,
        statuses: std::collections::BTreeSet<&'static str>,
    }

    impl Observer for KeptAgainstStored {
        fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
            use crate::engine::results::GameStatus;
            let Event::GroupFinished {
                round,
                group,
                outcome: Some(outcome),
            } = event
            else {
                return Ok(());
            };
            let gr = &outcome.result;
            self.statuses
                .extend(gr.games.iter().map(|g| g.status.as_str()));
            let wanted: Vec<(u32, u32)> = gr
                .games
                .iter()
                .filter(|g| g.status != GameStatus::Cancelled)
                .map(|g| (g.slot, g.attempt))
                .collect();
            let kept = store
                .with_kept_games_packed(self.tournament, *round, *group, &wanted, |gs| {
                    gs.iter().map(|g| g.to_packed_game()).collect::<Vec<_>>()
                })
                .expect("every game of a group this process played is kept at its end");
            let stored = self
                .other
                .games_packed(self.tournament, *round, *group)
                .unwrap();
            let stored: Vec<_> = stored
                .into_iter()
                .filter(|g| wanted.contains(&(g.game.key.slot, g.game.attempt)))
                .collect();
            assert_eq!(kept.len(), stored.len(), "round {round}, group {group}");
            for (k, s) in kept.iter().zip(&stored) {
                let at = format!("round {round}, group {group}, slot {}", s.game.key.slot);
                assert_eq!(k.game.key, s.game.key, "{at}");
                assert_eq!(k.game.attempt, s.game.attempt, "{at}");
                assert_eq!(k.game.players, s.game.players, "{at}");
                assert_eq!(k.game.record.seed, s.game.record.seed, "{at}");
                assert_eq!(k.game.record.points, s.game.record.points, "{at}");
                assert_eq!(k.game.record.failures, s.game.record.failures, "{at}");
                assert!(k.game.record.throws.is_empty() && k.game.throws_digest.is_none());
                let bytes = k.packed.as_deref().expect("kept in format 1's bytes");
                match (&s.packed, s.game.throws_digest) {
                    // Stored with its throws (the watchdog's game): the
                    // very bytes.
                    (Some(stored), None) => assert_eq!(bytes, &stored[..], "{at}"),
                    // Stored for replay: the digest a replay is checked
                    // against is the kept bytes'.
                    (None, Some(digest)) => {
                        let throws =
                            crate::store::decode_throws(bytes, crate::store::THROWS_FORMAT)
                                .unwrap();
                        assert_eq!(crate::store::throws_digest(&throws), digest, "{at}");
                        self.replayed_rows += 1;
                    }
                    other => panic!("{at}: read from the store as {other:?}"),
                }
            }
            self.groups += 1;
            self.games += kept.len();
            Ok(())
        }
    }

    /// The games a group's DGP protocols are written from at its end, as
    /// the store's connection kept them when it stored them, are the
    /// group's stored games (what a restarted process writes them from:
    /// read, or replayed and checked against the stored digest), for
    /// every kind of ending: counted, a failure rescheduled (discarded),
    /// void and cancelled games of a disqualified team, the watchdog's
    /// game stored with its throws; so the protocols are the same bytes.
    #[test]
    fn a_groups_kept_games_are_its_stored_games_for_every_ending() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("k.db");
        let mut store = Store::open(&db).unwrap();
        let tid = crate::engine::results::stand_in_tournament(&mut store, 11, 130);
        let endings = |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
            Ok(Box::new(Endings {
                done: Default::default(),
            }))
        };
        let mut seen = KeptAgainstStored {
            other: Store::open(&db).unwrap(),
            tournament: tid,
            groups: 0,
            games: 0,
            replayed_rows: 0,
            statuses: Default::default(),
        };
        run_tournament_with(
            &mut store,
            tid,
            &endings,
            &crate::engine::SystemClock,
            &mut seen,
        )
        .unwrap();
        assert!(
            seen.groups > 3 && seen.games > 500,
            "{} groups",
            seen.groups
        );
        assert!(
            seen.replayed_rows > 0 && seen.replayed_rows < seen.games,
            "{} of {} games stored for replay",
            seen.replayed_rows,
            seen.games
        );
        let all: std::collections::BTreeSet<&str> =
            ["cancelled", "counted", "discarded", "void"].into();
        assert_eq!(seen.statuses, all);
    }

    /// A run stopped while games that finished were not yet stored (at a
    /// group's start, where an observer may fail as a kill would end the
    /// process) resumes to the very games of a run never stopped, each
    /// stored once.
    #[test]
    fn a_run_stopped_with_games_unstored_resumes_to_the_same_games() {
        let tmp = tempfile::tempdir().unwrap();
        let play = |name: &str, fail_at_group: Option<u32>| {
            let db = tmp.path().join(name);
            let mut store = Store::open(&db).unwrap();
            let tid = crate::engine::results::stand_in_tournament(&mut store, 7, 130);
            let mut seen = committed(&db, fail_at_group);
            let run = run_tournament_with(
                &mut store,
                tid,
                &one_at_a_time,
                &crate::engine::SystemClock,
                &mut seen,
            );
            (db, store, tid, run)
        };
        let (reference, ..) = play("ref.db", None);
        let (db, mut store, tid, run) = play("stopped.db", Some(3));
        assert!(run.is_err(), "the observer stopped the run");
        let before = stored_games(&db).len();
        assert!(before > 0, "games of groups 1 and 2 were stored");
        let mut seen = committed(&db, None);
        run_tournament_with(
            &mut store,
            tid,
            &one_at_a_time,
            &crate::engine::SystemClock,
            &mut seen,
        )
        .unwrap();
        assert_eq!(stored_games(&db), stored_games(&reference));
    }

    /// The groups the engine looks at for each game do not grow with the
    /// field: games that finish one at a time (as real games do, the
    /// engine waking for each) in a field of 300 (8 groups in the first
    /// round) and of 1200 (30) cost the same looks a game, about 3.
    /// Failed before: every wake-up looked at every group of the round (to
    /// fill the runner from the first group on, for a group's end, and
    /// whether all were finished), 43 looks a game at 1200 against 13 at
    /// 300.
    #[test]
    fn the_groups_looked_at_for_a_game_do_not_grow_with_the_field() {
        let looks_a_game = |teams: usize| {
            let tmp = tempfile::tempdir().unwrap();
            let db = tmp.path().join("k.db");
            let mut store = Store::open(&db).unwrap();
            let tid = crate::engine::results::stand_in_tournament(&mut store, 7, teams);
            let before = LOOKS.with(|c| c.get());
            run_tournament_with(
                &mut store,
                tid,
                &one_at_a_time,
                &crate::engine::SystemClock,
                &mut Quiet,
            )
            .unwrap();
            let looks = LOOKS.with(|c| c.get()) - before;
            let games: i64 = store
                .conn()
                .query_row("SELECT COUNT(*) FROM games", [], |r| r.get(0))
                .unwrap();
            looks as f64 / games as f64
        };
        let (small, large) = (looks_a_game(300), looks_a_game(1200));
        assert!(
            large <= small + 0.25 && large < 4.0,
            "{large:.2} looks a game at 1200 teams against {small:.2} at 300"
        );
    }
}
