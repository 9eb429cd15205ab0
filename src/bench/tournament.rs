//! The tournament's pool against one game alone ([`tournament_bench`]):
//! one group of trivial strategies with one worker and with several, and
//! where the CPU of each run went (the game threads, the server's thread,
//! the interrupts the CPUs sent each other).
//!
//! Not here: a whole contest (`scale.rs`).

use std::path::Path;
use std::time::{Duration, Instant};

use super::game::{bench_strategies, trivial_variants, AloneAt, GameAlone, TRIVIAL_C};
use super::measure::{cpu_time, ms, CpuOf, CrossCpu};
use crate::engine::run::TournamentConfig;
use crate::engine::EngineError;
use crate::referee::RefereeConfig;
use crate::seed::SeedKey;
use crate::store::{NewVersion, Store};
use crate::toolchain::compile::{compile, CompileConfig, Outcome};

/// Runs of each kind (one worker, all workers), alternately; the fastest
/// of each counts (other load on the machine only ever slows a run).
pub const TOURNAMENT_RUNS: usize = 5;

/// Figures of the tournament benchmark: a tournament of `n_teams` trivial
/// strategies (one group of n(n+1)/2 games up to 41 teams, every round
/// above), with 1 worker and with `jobs` workers.
#[derive(Debug, Clone)]
pub struct TournamentBench {
    pub n_teams: usize,
    pub n_games: usize,
    pub jobs: usize,
    pub one_worker: GroupRun,
    pub all_workers: GroupRun,
    /// One game alone (the median of nine trivial variants' medians, the
    /// same nine modules) before the runs and after them: as with the
    /// runs, other load only ever slows it, so the floor is the lesser
    /// ([`TournamentBench::game_floor`]).
    pub game_alone: GameAlone,
}

/// One timed run of the group and where its CPU went.
#[derive(Debug, Clone, Copy)]
pub struct GroupRun {
    pub wall: Duration,
    /// CPU of the thread that runs the tournament (the server's thread:
    /// the schedule, storing games, the observers).
    pub server_cpu: Duration,
    /// CPU of the rest of the process: the game threads (and the
    /// watchdog's ticks).
    pub games_cpu: Duration,
    /// Interrupts between CPUs during the run (the whole machine's).
    pub cross_cpu: CrossCpu,
}

impl GroupRun {
    /// `what` per game: its CPU by thread and the interrupts.
    fn print(&self, what: &str, n_games: usize) {
        let per_game = |d: Duration| d.as_secs_f64() * 1e3 / n_games as f64;
        let per_game_n = |n: u64| n as f64 / n_games as f64;
        println!(
            "  {what}, per game: game threads {:.3} ms CPU, server thread {:.3} ms CPU; \
             interrupts between CPUs: {:.2} TLB shootdowns, {:.2} function calls, {:.2} reschedules",
            per_game(self.games_cpu),
            per_game(self.server_cpu),
            per_game_n(self.cross_cpu.tlb_shootdowns),
            per_game_n(self.cross_cpu.function_calls),
            per_game_n(self.cross_cpu.reschedules),
        );
    }
}

impl TournamentBench {
    /// One game alone on one CPU, the per-game floor: the lesser of
    /// [`TournamentBench::game_alone`]'s two moments.
    pub fn game_floor(&self) -> Duration {
        self.game_alone.least()
    }

    pub fn print(&self) {
        let per_sec = |d: Duration| self.n_games as f64 / d.as_secs_f64();
        let (one, all) = (self.one_worker.wall, self.all_workers.wall);
        let floor_all = self.game_floor().as_secs_f64() * self.n_games as f64 / self.jobs as f64;
        println!(
            "{} of {} trivial strategies: {} games",
            if self.n_teams * (self.n_teams + 1) / 2 == self.n_games {
                "one group"
            } else {
                "a tournament (every round)"
            },
            self.n_teams,
            self.n_games
        );
        println!(
            "floor: one game alone {:.3} ms x {} games / {} CPUs = {:.2} s",
            ms(self.game_floor()),
            self.n_games,
            self.jobs,
            floor_all,
        );
        println!(
            "one game alone: {}",
            self.game_alone.describe("before the runs", "after them")
        );
        println!(
            "1 worker:  {:>7.3} s  {:>7.1} games/s  (best of {TOURNAMENT_RUNS})",
            one.as_secs_f64(),
            per_sec(one)
        );
        println!(
            "{} workers: {:>7.3} s  {:>7.1} games/s  ({:.2}x the floor)",
            self.jobs,
            all.as_secs_f64(),
            per_sec(all),
            all.as_secs_f64() / floor_all
        );
        println!(
            "parallel efficiency: {:.0} % (goal: 90 %)",
            100.0 * one.as_secs_f64() / (all.as_secs_f64() * self.jobs as f64)
        );
        self.one_worker.print("1 worker", self.n_games);
        self.all_workers
            .print(&format!("{} workers", self.jobs), self.n_games);
    }
}

/// Runs the tournament benchmark in temporary databases.
pub fn tournament_bench(
    n_teams: usize,
    jobs: usize,
) -> Result<TournamentBench, crate::engine::EngineError> {
    use crate::engine::run::{run_tournament, Quiet};
    use crate::engine::SystemClock;

    let Outcome::Accepted { binary, .. } = compile(TRIVIAL_C.as_bytes(), &CompileConfig::local())?
    else {
        return Err(crate::engine::EngineError::Invalid(
            "the trivial strategy does not compile".into(),
        ));
    };
    let floor_strategies = bench_strategies(&trivial_variants(9))?;
    let alone_before = AloneAt::now(&floor_strategies, 15)?;
    let dir = tempfile::tempdir()?;
    let mut best: [Option<GroupRun>; 2] = [None, None];
    let mut n_games = 0;
    for run in 0..TOURNAMENT_RUNS {
        for (i, workers) in [1, jobs].into_iter().enumerate() {
            let path = dir.path().join(format!("bench{run}-{i}.db"));
            let (mut store, tid) = trivial_tournament(&path, n_teams, &binary)?;
            let clock = SystemClock;
            let (server0, process0) = (cpu_time(CpuOf::Thread), cpu_time(CpuOf::Process));
            let cross0 = CrossCpu::now();
            let t = Instant::now();
            run_tournament(&mut store, tid, workers, &clock, &mut Quiet)?;
            let wall = t.elapsed();
            n_games = games_played(&store, tid)?;
            let cross_cpu = CrossCpu::now().since(cross0);
            let server_cpu = cpu_time(CpuOf::Thread).saturating_sub(server0);
            let games_cpu = cpu_time(CpuOf::Process)
                .saturating_sub(process0)
                .saturating_sub(server_cpu);
            let this = GroupRun {
                wall,
                server_cpu,
                games_cpu,
                cross_cpu,
            };
            if best[i].is_none_or(|b| this.wall < b.wall) {
                best[i] = Some(this);
            }
        }
    }
    let [Some(one_worker), Some(all_workers)] = best else {
        unreachable!("TOURNAMENT_RUNS is at least one")
    };
    let game_alone = GameAlone {
        before: alone_before,
        after: AloneAt::now(&floor_strategies, 15)?,
    };
    Ok(TournamentBench {
        n_teams,
        n_games,
        jobs,
        one_worker,
        all_workers,
        game_alone,
    })
}

/// The games stored of tournament `tid`, over its rounds and groups.
pub fn games_played(store: &Store, tid: i64) -> Result<usize, EngineError> {
    let mut n = 0;
    let mut round = 1;
    while store.round(tid, round)?.is_some() {
        for g in 1..=store.groups(tid, round)?.len() as u32 {
            n += store.games(tid, round, g)?.len();
        }
        round += 1;
    }
    Ok(n)
}

/// A new tournament of `n_teams` copies of one program in a new database.
pub fn trivial_tournament(
    path: &Path,
    n_teams: usize,
    binary: &[u8],
) -> Result<(Store, i64), EngineError> {
    let mut store = Store::open(path)?;
    let now = chrono::Utc::now();
    let mut entries = Vec::new();
    for t in 0..n_teams {
        let team = store.ensure_team(&format!("trivial{t:03}"), now)?;
        let v = store.insert_version(
            &NewVersion {
                team,
                source: TRIVIAL_C.as_bytes(),
                source_sha256: "bench",
                binary: Some(binary),
                lexical_elements: None,
                description: None,
                report_json: "{}",
            },
            now,
        )?;
        entries.push((team, v));
    }
    let config = TournamentConfig {
        referee: RefereeConfig::default(),
        evolution: Default::default(),
    };
    let tid = store.create_tournament(
        1,
        &SeedKey::public_from_seed(1),
        &serde_json::to_string(&config).expect("json"),
        "bench",
        &entries,
        now,
    )?;
    Ok((store, tid))
}
