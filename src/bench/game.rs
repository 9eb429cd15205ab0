//! The WebAssembly engine's games ([`game_bench`]): full games of three
//! pairs of strategies, a game of one throw, and the engine's cost per
//! throw, on one pinned CPU; the floor of a field's play
//! ([`game_floor`]), measured at two moments of a run ([`GameAlone`]);
//! and [`bench_strategy`] ([`bench_strategies`]), a
//! strategy compiled for a benchmark.
//!
//! Not here: the floor of a process per strategy (`benches/game.rs`
//! measures it), and the pool (`tournament.rs`).

use std::time::{Duration, Instant};

use super::measure::{median, ms, MachineCpu};
use crate::referee::{GameSeeds, Referee, RefereeConfig};
use crate::sandbox::pin_current_thread;
use crate::toolchain::compile::{compile, CompileConfig, CompileError, Outcome};
use crate::wasm::Strategy;

/// A trivial strategy: always the same throw, forever.
pub const TRIVIAL_C: &str = "main() { for (;;) make_throw(100); }\n";

/// `n` trivial strategies, each its own source (and so its own module):
/// a constant throw, forever, as [`TRIVIAL_C`].
pub fn trivial_variants(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("main() {{ for (;;) make_throw({}); }}\n", 100 + i))
        .collect()
}

/// Figures of one benchmark run of the WebAssembly engine's games, on one
/// CPU.
#[derive(Debug, Clone)]
pub struct GameBench {
    /// WebAssembly games, median each: (what, time); trivial vs trivial
    /// first.
    pub wasm_games: Vec<(String, Duration)>,
    /// A WebAssembly game of one throw: instantiating both players.
    pub wasm_start_up: Duration,
    pub games: usize,
}

impl GameBench {
    /// The engine's cost per throw, both players (trivial strategies).
    pub fn per_throw(&self) -> Duration {
        self.wasm_games[0].1.saturating_sub(self.wasm_start_up) / 1000
    }

    /// The trivial game (1000 throws), median.
    pub fn trivial_game(&self) -> Duration {
        self.wasm_games[0].1
    }

    pub fn print(&self) {
        for (what, t) in &self.wasm_games {
            println!(
                "wasm game, {what:<36} {:>8.3} ms (median of {})",
                ms(*t),
                self.games
            );
        }
        println!(
            "wasm game of one throw (instantiating both):   {:>8.3} ms",
            ms(self.wasm_start_up)
        );
        println!(
            "wasm engine per throw, both players:           {:>8.3} us (goal: 0.25 us)",
            self.per_throw().as_secs_f64() * 1e6
        );
    }
}

/// Compiles the strategies and measures `games` games of each kind, in a
/// thread of its own (it pins itself to one CPU; the caller stays free).
pub fn game_bench(games: usize) -> Result<GameBench, CompileError> {
    on_one_pinned_cpu(|| game_bench_here(games))
}

/// Runs `f` in a thread of its own pinned to the first CPU this process
/// may use (the caller stays free).
fn on_one_pinned_cpu<T: Send>(
    f: impl FnOnce() -> Result<T, CompileError> + Send,
) -> Result<T, CompileError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let cpu = *crate::sandbox::allowed_cpus().first().unwrap_or(&0);
            pin_current_thread(cpu)?;
            f()
        })
        .join()
        .expect("bench thread")
    })
}

/// The median time of `games` full games played by `play` from seed
/// `first_seed` on (a game that ends early by a rule break, as the 1994
/// example's can, is played again with another seed).
fn median_game(
    games: usize,
    first_seed: u64,
    play: &dyn Fn(u64) -> Result<crate::referee::GameRecord, String>,
) -> Result<Duration, CompileError> {
    let mut times = Vec::with_capacity(games);
    let mut seed = first_seed;
    while times.len() < games {
        let t = Instant::now();
        let g = play(seed).map_err(CompileError::Runtime)?;
        let took = t.elapsed();
        seed += 1;
        if g.failures.is_empty() {
            times.push(took);
        } else if seed > first_seed + 20 * games as u64 {
            return Err(CompileError::Runtime(format!(
                "a bench strategy keeps failing: {:?}",
                g.failures
            )));
        }
    }
    Ok(median(&mut times))
}

/// The floor the benchmarks of a field set their play against: one game
/// of a strategy against itself alone on one pinned CPU, for each of
/// `strategies` (each a module of its own: [`bench_strategies`]) the
/// median of `games` games, and of those the median, in a thread of its
/// own. One module's game is not every module's: the same trivial source
/// took 0.249 to 0.319 ms a game in six processes, and one median of 50
/// games read after a field's play 228 to 406 us in four runs of one
/// build (where the compiled code lies decides, as it does for each of
/// the field's modules); the middle of several modules is the field's
/// game alone. The modules are compiled by the caller, so that the floor
/// measured at two moments of one run is of the same modules and differs
/// by the moment alone.
pub fn game_floor(
    strategies: &[std::sync::Arc<Strategy>],
    games: usize,
) -> Result<Duration, CompileError> {
    on_one_pinned_cpu(|| {
        let referee = Referee::new(RefereeConfig::default());
        let mut medians = Vec::with_capacity(strategies.len());
        for strategy in strategies {
            medians.push(median_game(games.max(1), 0, &|i| {
                referee
                    .play([strategy, strategy], GameSeeds::public(i))
                    .map_err(|e| e.to_string())
            })?);
        }
        if medians.is_empty() {
            return Err(CompileError::Runtime("a floor of no strategy".into()));
        }
        Ok(median(&mut medians))
    })
}

/// One game alone on one CPU ([`game_floor`]) at one moment of a run, and
/// what the machine's CPUs did while it was measured.
#[derive(Debug, Clone, Copy)]
pub struct AloneAt {
    pub per_game: Duration,
    /// `/proc/stat` over the measurement: where two moments differ with
    /// the rest of the machine idle, the difference is the machine's (the
    /// hypervisor's, the other CPU's).
    pub machine: MachineCpu,
}

impl AloneAt {
    /// [`game_floor`] of `strategies` (`games` each), now.
    pub fn now(
        strategies: &[std::sync::Arc<Strategy>],
        games: usize,
    ) -> Result<AloneAt, CompileError> {
        let machine_at_start = MachineCpu::now();
        let per_game = game_floor(strategies, games)?;
        Ok(AloneAt {
            per_game,
            machine: MachineCpu::now().since(machine_at_start),
        })
    }

    /// `"284.1 us before play, the rest of the machine 0.02, stolen 0.00"`.
    fn describe(&self, when: &str) -> String {
        // The floor's thread is one of the CPUs; the rest is the machine's.
        let rest = self.machine.shares().map_or(String::new(), |s| {
            format!(
                ", the rest of the machine {:.2}, stolen {:.2}",
                (s.busy - 1.0).max(0.0),
                s.stolen
            )
        });
        format!("{:.1} us {when}{rest}", self.per_game.as_secs_f64() * 1e6)
    }
}

/// One game alone measured at two moments of a benchmark's run, the same
/// modules at both (a field's benchmark: before its play and after it).
/// Whatever else the machine does meanwhile only adds to a game alone, so
/// the floor is the lesser; both are printed, since on a shared machine
/// they differ by as much as play is above its floor.
#[derive(Debug, Clone, Copy)]
pub struct GameAlone {
    pub before: AloneAt,
    pub after: AloneAt,
}

impl GameAlone {
    /// The floor's game: the lesser of the two moments.
    pub fn least(&self) -> Duration {
        self.before.per_game.min(self.after.per_game)
    }

    /// Both moments, each named (`before`, `after`), for a report's line.
    pub fn describe(&self, before: &str, after: &str) -> String {
        format!(
            "{}; {} (the floor takes the lesser: what else runs only adds)",
            self.before.describe(before),
            self.after.describe(after)
        )
    }
}

/// Each of `sources` compiled (local rules) into a module of its own.
pub fn bench_strategies(sources: &[String]) -> Result<Vec<std::sync::Arc<Strategy>>, CompileError> {
    sources
        .iter()
        .map(|source| bench_strategy(source))
        .collect()
}

/// Compiles `source` (local rules) into a module ready to play.
pub fn bench_strategy(source: &str) -> Result<std::sync::Arc<Strategy>, CompileError> {
    let Outcome::Accepted { binary, .. } = compile(source.as_bytes(), &CompileConfig::local())?
    else {
        return Err(CompileError::Runtime(
            "a bench strategy does not compile".into(),
        ));
    };
    crate::wasm::load(&binary)
        .map_err(|e| CompileError::Runtime(e.to_string()))?
        .map_err(|e| CompileError::Runtime(e.to_string()))
}

/// A demo family's source (variant 0) without its header.
pub(super) fn family_source(family: &str) -> String {
    let team = crate::demo::field(crate::demo::FAMILIES.len())
        .into_iter()
        .find(|t| t.family == family)
        .expect("a demo family");
    crate::demo::strategy_source(&team, "x")
}

fn game_bench_here(games: usize) -> Result<GameBench, CompileError> {
    let games = games.max(1);
    let one_throw = RefereeConfig {
        params: crate::game::knobeln::Params {
            l: 1,
            ..Default::default()
        },
        ..RefereeConfig::default()
    };
    let run = |play: &dyn Fn(u64) -> Result<crate::referee::GameRecord, String>| {
        median_game(games, 0, play)
    };
    let trivial = bench_strategy(TRIVIAL_C)?;
    let example = bench_strategy(crate::toolchain::compile::EXAMPLE_C)?;
    let frequency = bench_strategy(&family_source("frequency"))?;
    let titfortat = bench_strategy(&family_source("titfortat"))?;
    let referee = Referee::new(RefereeConfig::default());
    let mut wasm_games = Vec::new();
    for (what, p, q) in [
        ("trivial vs trivial:", &trivial, &trivial),
        ("example vs example:", &example, &example),
        ("frequency vs titfortat (demo):", &frequency, &titfortat),
    ] {
        let t = run(&|i| {
            referee
                .play([p, q], GameSeeds::public(i))
                .map_err(|e| e.to_string())
        })?;
        wasm_games.push((what.to_string(), t));
    }
    let short = Referee::new(one_throw);
    let wasm_start_up = run(&|i| {
        short
            .play([&trivial, &trivial], GameSeeds::public(i))
            .map_err(|e| e.to_string())
    })?;
    Ok(GameBench {
        wasm_games,
        wasm_start_up,
        games,
    })
}
