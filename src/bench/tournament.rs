//! The tournament's pool against one game alone ([`tournament_bench`]):
//! one group of trivial strategies with one worker and with several.
//!
//! Not here: a whole contest (`scale.rs`).

use std::path::Path;
use std::time::{Duration, Instant};

use super::game::{game_bench, TRIVIAL_C};
use super::measure::ms;
use crate::engine::run::TournamentConfig;
use crate::engine::EngineError;
use crate::referee::RefereeConfig;
use crate::seed::SeedKey;
use crate::store::{NewVersion, Store};
use crate::toolchain::compile::{compile, CompileConfig, Outcome};

/// Figures of the tournament benchmark: one group of `n_teams` trivial
/// strategies (n(n+1)/2 games), with 1 worker and with `jobs` workers.
#[derive(Debug, Clone)]
pub struct TournamentBench {
    pub n_teams: usize,
    pub n_games: usize,
    pub jobs: usize,
    pub one_worker: Duration,
    pub all_workers: Duration,
    /// One game alone on one CPU (median), the per-game floor.
    pub game_floor: Duration,
}

impl TournamentBench {
    pub fn print(&self) {
        let per_sec = |d: Duration| self.n_games as f64 / d.as_secs_f64();
        let floor_all = self.game_floor.as_secs_f64() * self.n_games as f64 / self.jobs as f64;
        println!(
            "one group of {} trivial strategies: {} games",
            self.n_teams, self.n_games
        );
        println!(
            "floor: one game alone {:.3} ms x {} games / {} CPUs = {:.2} s",
            ms(self.game_floor),
            self.n_games,
            self.jobs,
            floor_all
        );
        println!(
            "1 worker:  {:>7.2} s  {:>7.1} games/s",
            self.one_worker.as_secs_f64(),
            per_sec(self.one_worker)
        );
        println!(
            "{} workers: {:>7.2} s  {:>7.1} games/s  ({:.2}x the floor)",
            self.jobs,
            self.all_workers.as_secs_f64(),
            per_sec(self.all_workers),
            self.all_workers.as_secs_f64() / floor_all
        );
        println!(
            "parallel efficiency: {:.0} % (goal: 85 %)",
            100.0 * self.one_worker.as_secs_f64()
                / (self.all_workers.as_secs_f64() * self.jobs as f64)
        );
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
    let game_floor = game_bench(15)?.wasm_games[0].1;
    let dir = tempfile::tempdir()?;
    let mut times = Vec::new();
    for (i, workers) in [1, jobs].into_iter().enumerate() {
        let (mut store, tid) =
            trivial_tournament(&dir.path().join(format!("bench{i}.db")), n_teams, &binary)?;
        let clock = SystemClock;
        let t = Instant::now();
        run_tournament(&mut store, tid, workers, &clock, &mut Quiet)?;
        times.push(t.elapsed());
    }
    Ok(TournamentBench {
        n_teams,
        n_games: n_teams * (n_teams + 1) / 2,
        jobs,
        one_worker: times[0],
        all_workers: times[1],
        game_floor,
    })
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
