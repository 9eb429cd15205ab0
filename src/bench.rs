//! Benchmarks that print figures (never asserted in tests): games of the
//! WebAssembly engine (full games of three pairs of strategies, a game of
//! one throw, the engine's cost per throw), and the tournament's pool
//! against one game alone.
//!
//! The floor of a design with a process per strategy (a pipe round trip,
//! a referee exchanging throws with two locked-down processes) is measured
//! by `cargo bench --bench game` (`benches/game.rs`) beside these figures:
//! no strategy runs as a process any more.

use std::time::{Duration, Instant};

use crate::referee::{GameSeeds, Referee, RefereeConfig};
use crate::sandbox::pin_current_thread;
use crate::seed::SeedKey;
use crate::toolchain::compile::{compile, CompileConfig, CompileError, Outcome};
use crate::wasm::Strategy;

/// A trivial strategy: always the same throw, forever.
pub const TRIVIAL_C: &str = "main() { for (;;) make_throw(100); }\n";

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Compiles the strategies and measures `games` games of each kind, in a
/// thread of its own (it pins itself to one CPU; the caller stays free).
pub fn game_bench(games: usize) -> Result<GameBench, CompileError> {
    std::thread::scope(|s| {
        s.spawn(|| game_bench_here(games))
            .join()
            .expect("bench thread")
    })
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
fn family_source(family: &str) -> String {
    let team = crate::demo::field(crate::demo::FAMILIES.len())
        .into_iter()
        .find(|t| t.family == family)
        .expect("a demo family");
    crate::demo::strategy_source(&team, "x")
}

fn game_bench_here(games: usize) -> Result<GameBench, CompileError> {
    let games = games.max(1);
    let cpu = *crate::sandbox::allowed_cpus().first().unwrap_or(&0);
    pin_current_thread(cpu)?;
    let one_throw = RefereeConfig {
        params: crate::game::knobeln::Params {
            l: 1,
            ..Default::default()
        },
        ..RefereeConfig::default()
    };
    // The median of `games` full games (a game that ends early by a rule
    // break, as the 1994 example's can, is played again with another seed).
    let run = |play: &dyn Fn(u64) -> Result<crate::referee::GameRecord, String>| {
        let mut times = Vec::with_capacity(games);
        let mut seed = 0u64;
        while times.len() < games {
            let t = Instant::now();
            let g = play(seed).map_err(CompileError::Runtime)?;
            let took = t.elapsed();
            seed += 1;
            if g.failures.is_empty() {
                times.push(took);
            } else if seed > 20 * games as u64 {
                return Err(CompileError::Runtime(format!(
                    "a bench strategy keeps failing: {:?}",
                    g.failures
                )));
            }
        }
        Ok(median(&mut times))
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
    use crate::engine::run::{run_tournament, Quiet, TournamentConfig};
    use crate::engine::SystemClock;
    use crate::store::{NewVersion, Store};

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
        let mut store = Store::open(&dir.path().join(format!("bench{i}.db")))?;
        let clock = SystemClock;
        let now = chrono::Utc::now();
        let mut entries = Vec::new();
        for t in 0..n_teams {
            let team = store.ensure_team(&format!("trivial{t:02}"), now)?;
            let v = store.insert_version(
                &NewVersion {
                    team,
                    source: TRIVIAL_C.as_bytes(),
                    source_sha256: "bench",
                    binary: Some(&binary),
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

/// Figures of the compile benchmark: `n` distinct small strategies through
/// every step of the compile service (gcc in the jail, clang, check 6,
/// wasm-ld, the module's check, Cranelift), the runtime object already
/// built.
#[derive(Debug, Clone)]
pub struct CompileBench {
    pub n: usize,
    pub wall: Duration,
    /// CPU time of this process and its children (gcc, as, clang, wasm-ld)
    /// per compile.
    pub cpu_per_compile: Duration,
    /// The same for `gcc -c` alone on the same sources, in the same jail:
    /// the floor of any compile service that runs gcc.
    pub gcc_floor_cpu: Duration,
    /// The engine's compiler (Cranelift, in this process) on the largest
    /// function and the largest module accepted.
    pub cranelift: Vec<CraneliftFigure>,
}

/// What Cranelift cost on one synthetic module.
#[derive(Debug, Clone)]
pub struct CraneliftFigure {
    pub what: String,
    pub module_bytes: usize,
    pub cpu: Duration,
    /// How far the process's peak resident memory rose while it compiled.
    pub peak_rise_kb: u64,
    /// The compiled code kept while the module plays.
    pub image_kb: u64,
}

impl CompileBench {
    pub fn print(&self) {
        println!(
            "compile service, {} distinct strategies: {:.2} s wall, {:.1} ms CPU per compile \
             (gcc checks, clang, wasm-ld, module check, Cranelift; goal: 150 ms)",
            self.n,
            self.wall.as_secs_f64(),
            ms(self.cpu_per_compile)
        );
        println!(
            "floor: gcc -c alone in the jail:   {:.1} ms CPU per source ({:.2}x)",
            ms(self.gcc_floor_cpu),
            self.cpu_per_compile.as_secs_f64() / self.gcc_floor_cpu.as_secs_f64()
        );
        for c in &self.cranelift {
            println!(
                "Cranelift, {} ({} kB): {:.0} ms CPU, peak memory +{:.1} MB, compiled code \
                 {:.1} MB",
                c.what,
                c.module_bytes / 1024,
                ms(c.cpu),
                c.peak_rise_kb as f64 / 1024.0,
                c.image_kb as f64 / 1024.0
            );
        }
    }
}

/// A line of `/proc/self/status` in kB (`VmHWM`, `VmRSS`).
pub fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Cranelift on the largest function and the largest module the module
/// check accepts (straight-line code; each compiled once, uncached).
fn cranelift_figures() -> Result<Vec<CraneliftFigure>, CompileError> {
    use crate::toolchain::wasm::{
        straight_line_module, StraightLine, MAX_FUNCTION_BYTES, MODULE_FUNCTIONS_AT_LIMIT,
    };
    let mut out = Vec::new();
    for (what, shape, functions) in [
        ("one function at the limit, a chain", StraightLine::Chain, 1),
        ("one function at the limit, all live", StraightLine::Wide, 1),
        (
            "a module at the limit, chains",
            StraightLine::Chain,
            MODULE_FUNCTIONS_AT_LIMIT,
        ),
        (
            "a module at the limit, all live",
            StraightLine::Wide,
            MODULE_FUNCTIONS_AT_LIMIT,
        ),
    ] {
        let module = straight_line_module(shape, functions, MAX_FUNCTION_BYTES - 8);
        // Reset the peak (VmHWM) to the current resident size.
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let before = status_kb("VmRSS:");
        let c = cpu_used();
        let compiled = crate::wasm::compile_uncached(&module)
            .map_err(|e| CompileError::Runtime(e.to_string()))?;
        let cpu = cpu_used() - c;
        out.push(CraneliftFigure {
            what: what.into(),
            module_bytes: module.len(),
            cpu,
            peak_rise_kb: status_kb("VmHWM:").saturating_sub(before),
            image_kb: compiled as u64 / 1024,
        });
    }
    Ok(out)
}

/// CPU time (user + system) of this process and its waited-for children.
fn cpu_used() -> Duration {
    let get = |who| {
        // SAFETY: getrusage fills a valid struct.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        tv(u.ru_utime) + tv(u.ru_stime)
    };
    get(libc::RUSAGE_SELF) + get(libc::RUSAGE_CHILDREN)
}

/// A small distinct strategy with a description (the organizer's profile).
fn bench_source(i: usize) -> String {
    let description: String = (1..=15)
        .map(|l| format!("Line {l} of the description of benchmark strategy {i}.\n"))
        .collect();
    format!(
        "#if 0\n{description}#endif\nmain() {{ int t = {}; for (;;) {{ t = make_throw(t) % 12000 + 1; }} }}\n",
        i % 12000 + 1
    )
}

/// Runs the compile benchmark on `n` sources.
pub fn compile_bench(n: usize) -> Result<CompileBench, CompileError> {
    use crate::sandbox::jail::{Jail, JailLimits};
    use crate::toolchain::compile::Profile;
    use crate::toolchain::gcc::{Gcc, SOURCE_NAME};
    crate::toolchain::compile::runtime_wasm_object()?;
    crate::toolchain::compile::example_strategy()?;
    let cfg = CompileConfig {
        profile: Profile::Organizer,
        ..CompileConfig::default()
    };
    let n = n.max(1);
    let (t, c) = (Instant::now(), cpu_used());
    for i in 0..n {
        let outcome = compile(bench_source(i).as_bytes(), &cfg)?;
        if !outcome.accepted() {
            return Err(CompileError::Runtime(format!(
                "benchmark strategy {i} rejected: {:?}",
                outcome.report().diagnostics
            )));
        }
    }
    let (wall, cpu) = (t.elapsed(), cpu_used() - c);
    let c = cpu_used();
    for i in 0..n {
        let jail = Jail::new()?;
        let gcc = Gcc::new(&jail, JailLimits::default());
        gcc.put(SOURCE_NAME, bench_source(i).as_bytes())?;
        gcc.compile(
            crate::toolchain::gcc::Input::Source,
            SOURCE_NAME,
            "strategy.o",
        )?;
    }
    let floor = cpu_used() - c;
    Ok(CompileBench {
        n,
        wall,
        cpu_per_compile: cpu / n as u32,
        gcc_floor_cpu: floor / n as u32,
        cranelift: cranelift_figures()?,
    })
}

/// Any failure of a benchmark (they run whole subsystems).
pub type BenchError = Box<dyn std::error::Error + Send + Sync>;

/// Figures of the registration benchmark: `n` registrations that all ask
/// for the same team name (each gets the next free `_N`), against `n` with
/// distinct names (the floor: the same mails without the name search).
#[derive(Debug, Clone)]
pub struct RegistrationBench {
    pub n: usize,
    pub same_name: Duration,
    pub distinct: Duration,
}

impl RegistrationBench {
    pub fn print(&self) {
        println!(
            "{} registrations, distinct names (floor): {:>7.2} s",
            self.n,
            self.distinct.as_secs_f64()
        );
        println!(
            "{} registrations, all the same name:      {:>7.2} s ({:.2}x; goal: 1.2 s at 1000)",
            self.n,
            self.same_name.as_secs_f64(),
            self.same_name.as_secs_f64() / self.distinct.as_secs_f64()
        );
    }
}

/// Stores and processes `n` registration mails on the embedded default in
/// a temporary folder; returns the time.
fn time_registrations(n: usize, same_name: bool) -> Result<Duration, BenchError> {
    let dir = tempfile::tempdir()?;
    let defaults = crate::config::Config::default();
    let config = crate::config::Config {
        database: dir.path().join("bench.db"),
        spool: crate::config::SpoolConfig {
            dir: dir.path().join("spool"),
            ..defaults.spool.clone()
        },
        // Every registration of the benchmark is to be taken.
        limits: crate::config::Limits {
            max_participants: 0,
            ..defaults.limits.clone()
        },
        ..defaults
    };
    let store = crate::store::Store::open(&config.database)?;
    let now = chrono::Utc::now();
    let t = Instant::now();
    for i in 0..n {
        let name = if same_name {
            "the_heavy_lords_of_knobeln".to_string()
        } else {
            format!("team_{i}")
        };
        let raw = format!(
            "From: u{i}@participants.example\r\nTo: knobeln@contest.example\r\n\
             Subject: registration for KNOBELN\r\nMessage-ID: <bench-{i}@participants.example>\r\n\
             \r\nmail-address: u{i}@participants.example\r\nmail-preference: GRR\r\n\
             team-name: {name}\r\nOrganization: Organization {i}, City, Land\r\n\
             team-members:\r\n A. Bench, 30, tester,\r\n writes C\r\n"
        );
        crate::mail::inbox::take_in(store.conn(), "bench", None, raw.as_bytes(), usize::MAX, now)?;
    }
    let mut server = crate::server::Server::new(config, store);
    server.process()?;
    Ok(t.elapsed())
}

/// Runs the registration benchmark.
pub fn registration_bench(n: usize) -> Result<RegistrationBench, BenchError> {
    let distinct = time_registrations(n, false)?;
    let same_name = time_registrations(n, true)?;
    Ok(RegistrationBench {
        n,
        same_name,
        distinct,
    })
}

/// Figures of the spool benchmark: `n` queued mails of a contest's size
/// (2 kB) delivered by the outbox sender to the spool, against the same
/// files written straight without any sync (the floor: what the file
/// system costs without durability) and with one `fsync` per file (how the
/// sender wrote them before it synced a batch at once).
#[derive(Debug, Clone)]
pub struct SpoolBench {
    pub n: usize,
    pub sender: Duration,
    pub floor: Duration,
    pub fsync_each: Duration,
}

impl SpoolBench {
    pub fn print(&self) {
        let per = |d: Duration| d.as_secs_f64() * 1000.0 / self.n as f64;
        println!(
            "{} mails to the spool, files without sync (floor):   {:>7.2} s ({:.2} ms per mail)",
            self.n,
            self.floor.as_secs_f64(),
            per(self.floor)
        );
        println!(
            "{} mails to the spool, one fsync per file:           {:>7.2} s ({:.2} ms per mail, {:.2}x the floor)",
            self.n,
            self.fsync_each.as_secs_f64(),
            per(self.fsync_each),
            self.fsync_each.as_secs_f64() / self.floor.as_secs_f64()
        );
        println!(
            "{} mails through the outbox sender (one syncfs per 50, database marks): {:>7.2} s ({:.2} ms per mail, {:.2}x the floor)",
            self.n,
            self.sender.as_secs_f64(),
            per(self.sender),
            self.sender.as_secs_f64() / self.floor.as_secs_f64()
        );
    }
}

/// Runs the spool benchmark in temporary folders (on the file system of
/// the system's temporary folder: use `TMPDIR` for the spool's disk).
pub fn spool_bench(n: usize) -> Result<SpoolBench, BenchError> {
    use std::io::Write;
    let body = "x".repeat(72) + "\r\n";
    let raw = |i: usize| {
        format!(
            "From: knobeln@contest.example\r\nTo: p{i}@participants.example\r\n\
             Subject: KNOBELN: group results\r\n\r\n{}",
            body.repeat(27)
        )
        .into_bytes()
    };
    let write_files = |dir: &std::path::Path, fsync_each: bool| -> std::io::Result<()> {
        for i in 0..n {
            let path = dir.join(format!("{i:06}-group.eml"));
            let tmp = path.with_extension("eml.tmp");
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&raw(i))?;
            if fsync_each {
                f.sync_all()?;
            }
            std::fs::rename(&tmp, &path)?;
        }
        Ok(())
    };
    let dir = tempfile::tempdir()?;
    let t = Instant::now();
    write_files(dir.path(), false)?;
    let floor = t.elapsed();
    let dir = tempfile::tempdir()?;
    let t = Instant::now();
    write_files(dir.path(), true)?;
    let fsync_each = t.elapsed();

    let dir = tempfile::tempdir()?;
    let store = crate::store::Store::open(&dir.path().join("bench.db"))?;
    let mut spool = crate::mail::transport::spool::Spool::open(&dir.path().join("spool"))?;
    let now = chrono::Utc::now();
    for i in 0..n {
        let to = vec![format!("p{i}@participants.example")];
        crate::store::mail::queue_outgoing(
            store.conn(),
            &crate::store::mail::NewOutgoing {
                inbox_id: None,
                kind: "group",
                recipients: &to,
                budget: Default::default(),
                sender_key: None,
                subject: "KNOBELN: group results",
                message_id: &format!("bench-{i}@contest.example"),
                raw: &raw(i),
                event_key: None,
            },
            now - chrono::Duration::seconds(1),
        )?;
    }
    let config = crate::config::Config::default();
    let t = Instant::now();
    let out = crate::mail::delivery::flush(&store, &mut spool, &config, &chrono::Utc::now)?;
    let sender = t.elapsed();
    if out.sent != n {
        return Err(format!("{} of {n} mails sent", out.sent).into());
    }
    Ok(SpoolBench {
        n,
        sender,
        floor,
        fsync_each,
    })
}

/// Figures of a whole contest at scale: `n_teams` distinct trivial
/// strategies compiled, all rounds, the Evolution, the results and the
/// results site (without game pages, regenerated as groups finish, as
/// `[site] dir` does in a contest).
#[derive(Debug, Clone)]
pub struct ScaleBench {
    pub play_mode: ScalePlay,
    pub n_teams: usize,
    pub jobs: usize,
    pub compile: Duration,
    pub play: Duration,
    pub n_games: u64,
    /// One game of two trivial modules alone on one CPU, measured in this
    /// run, × games / CPUs.
    pub floor: Duration,
    pub results_and_site: Duration,
    /// Time the site observer took while the games were played (its share
    /// of `play`).
    pub site_during_play: Duration,
    pub peak_rss_kb: u64,
    pub db_bytes: u64,
    /// The contest's mails to its teams (every team registered with every
    /// preference the mode can serve: LAP, GRP, GRG, GRR and the final
    /// results; with real games also LGP and DGP), as queued: how many,
    /// their bytes, and the time building them took.
    pub mails: u64,
    pub mail_bytes: u64,
    pub mail_time: Duration,
    pub mail_preferences: &'static str,
}

impl ScaleBench {
    pub fn print(&self) {
        match self.play_mode {
            ScalePlay::Real => {
                println!("contest of {} teams, {} workers:", self.n_teams, self.jobs)
            }
            ScalePlay::Instant => println!(
                "contest of {} teams, games answered at once (the server's own cost; \
                 nothing compiled, no game played):",
                self.n_teams
            ),
        }
        println!(
            "  compile:          {:>9.1} s ({:.1} ms per strategy)",
            self.compile.as_secs_f64(),
            ms(self.compile) / self.n_teams as f64
        );
        println!(
            "  play:             {:>9.1} s, {} games, {:.1} games/s",
            self.play.as_secs_f64(),
            self.n_games,
            self.n_games as f64 / self.play.as_secs_f64()
        );
        println!(
            "  floor of play:    {:>9.1} s (one game alone x games / CPUs); ratio {:.2}x (goal: 1.2x)",
            self.floor.as_secs_f64(),
            self.play.as_secs_f64() / self.floor.as_secs_f64()
        );
        println!(
            "  site while playing:     {:>5.1} s ({:.1} % of play: the contest with the site takes {:.3}x the time without)",
            self.site_during_play.as_secs_f64(),
            100.0 * self.site_during_play.as_secs_f64() / self.play.as_secs_f64(),
            self.play.as_secs_f64()
                / (self.play.as_secs_f64() - self.site_during_play.as_secs_f64()).max(1e-9)
        );
        println!(
            "  final results and site: {:>5.1} s",
            self.results_and_site.as_secs_f64()
        );
        println!(
            "  peak RSS of the server: {} MB (goal: < 200 MB); database: {:.1} MB ({:.0} bytes per game)",
            self.peak_rss_kb / 1024,
            self.db_bytes as f64 / 1e6,
            self.db_bytes as f64 / self.n_games.max(1) as f64
        );
        println!(
            "  contest mails ({}): {} mails, {:.1} MB ({:.0} kB per team, the largest share LAP's \
             list of every team), built in {:.1} s",
            self.mail_preferences,
            self.mails,
            self.mail_bytes as f64 / 1e6,
            self.mail_bytes as f64 / 1e3 / self.n_teams.max(1) as f64,
            self.mail_time.as_secs_f64()
        );
    }
}

/// Registers every entry of tournament `tid` with `preferences` (a
/// plain record of the announcement's shape), for the contest's mails.
fn register_entries(
    store: &crate::store::Store,
    tid: i64,
    preferences: &str,
) -> Result<(), BenchError> {
    let now = crate::store::timestamp(chrono::Utc::now());
    for e in store.entries(tid)? {
        let address = format!("{}@participants.example", e.name);
        let record = format!(
            "mail-address: {address}\nmail-preference: {preferences}\nteam-name: {}\n\
             Organization: University of Northeast Sacrodata, Intellect City, Eggland\n\
             team-members:\n Joe Cool, 45, professional systems programmer\n \
             Jane More, 20, graduate student of computer science\n",
            e.name
        );
        store.conn().execute(
            "INSERT INTO registrations (team_id, mail_address, requested_name, preferences, \
             organization, members, record, auth_salt, auth_hash, registered_at, mailbox) \
             VALUES (?1, ?2, ?3, ?4, 'Sacrodata', '[]', ?5, x'00', x'00', ?6, ?2)",
            rusqlite::params![e.team.0, address, e.name, preferences, record, now],
        )?;
    }
    Ok(())
}

/// Two observers: the contest's mailer, then the site (timed apart).
struct MailsAndSite<'c, O> {
    mailer: crate::contest::mails::Mailer<'c>,
    mail_time: Duration,
    site: O,
}

impl<O: crate::engine::run::Observer> crate::engine::run::Observer for MailsAndSite<'_, O> {
    fn event(
        &mut self,
        store: &crate::store::Store,
        event: &crate::engine::run::Event,
    ) -> Result<(), String> {
        let t = Instant::now();
        let r = crate::engine::run::Observer::event(&mut self.mailer, store, event);
        self.mail_time += t.elapsed();
        r?;
        self.site.event(store, event)
    }
}

/// An observer that measures the time another one takes.
struct Timed<O> {
    inner: O,
    spent: Duration,
}

impl<O: crate::engine::run::Observer> crate::engine::run::Observer for Timed<O> {
    fn event(
        &mut self,
        store: &crate::store::Store,
        event: &crate::engine::run::Event,
    ) -> Result<(), String> {
        let t = Instant::now();
        let r = self.inner.event(store, event);
        self.spent += t.elapsed();
        r
    }
}

/// A small distinct strategy for the scale benchmark (any number of teams).
fn scale_source(i: usize) -> String {
    let description: String = (1..=15)
        .map(|l| format!("Line {l} of the description of scale strategy {i}.\n"))
        .collect();
    // A constant throw keeps every rule; the second number only makes the
    // source distinct beyond 12000 teams.
    format!(
        "#if 0\n{description}#endif\nmain() {{ int t = {}, u = {}; for (;;) make_throw(t + 0 * u); }}\n",
        i % 12000 + 1,
        i / 12000
    )
}

/// How the scale benchmark plays its games.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalePlay {
    /// Every game played by the referee and the compiled strategies.
    Real,
    /// Every game answered at once with a canned record and the strategies
    /// not compiled (one trivial binary for all): what the server itself
    /// costs around the games (store, schedule, observers, site), for
    /// fields too large to play here.
    Instant,
}

/// Runs a whole contest of `n_teams` in a temporary folder.
pub fn scale_bench(n_teams: usize, jobs: usize, mode: ScalePlay) -> Result<ScaleBench, BenchError> {
    use crate::engine::prepare::prepare_folder;
    use crate::engine::run::{run_tournament, TournamentConfig};
    use crate::engine::SystemClock;
    use crate::site::observer::SiteObserver;
    use crate::site::SiteOptions;
    use crate::store::Store;

    let dir = tempfile::tempdir()?;
    let field = dir.path().join("field");
    std::fs::create_dir(&field)?;
    for i in 0..n_teams {
        std::fs::write(field.join(format!("t{i:05}.c")), scale_source(i))?;
    }
    let db = dir.path().join("scale.db");
    let mut store = Store::open(&db)?;
    let clock = SystemClock;
    crate::toolchain::compile::runtime_wasm_object()?;
    let t = Instant::now();
    let entries: Vec<_> = match mode {
        ScalePlay::Real => {
            let prepared = prepare_folder(&store, &field, jobs, &clock)?;
            if !prepared.rejected.is_empty() {
                return Err(format!("{} strategies rejected", prepared.rejected.len()).into());
            }
            prepared
                .accepted
                .iter()
                .map(|a| (a.team, a.version))
                .collect()
        }
        ScalePlay::Instant => {
            let now = chrono::Utc::now();
            let mut entries = Vec::with_capacity(n_teams);
            for i in 0..n_teams {
                let team = store.ensure_team(&format!("t{i:05}"), now)?;
                let source = scale_source(i);
                let version = store.insert_version(
                    &crate::store::NewVersion {
                        team,
                        source: source.as_bytes(),
                        source_sha256: "instant",
                        binary: Some(b"instant"),
                        lexical_elements: None,
                        description: None,
                        report_json: "{}",
                    },
                    now,
                )?;
                entries.push((team, version));
            }
            entries
        }
    };
    let compile = t.elapsed();
    let config = TournamentConfig {
        referee: RefereeConfig::default(),
        evolution: Default::default(),
    };
    let tid = store.create_tournament(
        1,
        &SeedKey::public_from_seed(1),
        &serde_json::to_string(&config)?,
        "scale",
        &entries,
        chrono::Utc::now(),
    )?;
    let mail_preferences = match mode {
        ScalePlay::Real => "LAP,LGP,DGP,GRP,GRG,GRR",
        // Protocols replay games: instant games have none.
        ScalePlay::Instant => "LAP,GRP,GRG,GRR",
    };
    register_entries(&store, tid, mail_preferences)?;
    let mail_config = crate::config::Config::default();
    let mail_now = chrono::Utc::now;
    let mailer = crate::contest::mails::Mailer {
        config: &mail_config,
        tournament: tid,
        now: &mail_now,
        cache: Default::default(),
        replayer: Default::default(),
    };
    let t = Instant::now();
    mailer.lap(&store)?;
    let lap_time = t.elapsed();
    let mut site_inner = SiteObserver::new(dir.path().join("site"), tid);
    site_inner.options = SiteOptions {
        no_game_pages: true,
        ..SiteOptions::default()
    };
    let mut site = MailsAndSite {
        mailer,
        mail_time: lap_time,
        site: Timed {
            inner: site_inner,
            spent: Duration::ZERO,
        },
    };
    let t = Instant::now();
    match mode {
        ScalePlay::Real => run_tournament(&mut store, tid, jobs, &clock, &mut site)?,
        ScalePlay::Instant => {
            let instant = |referee: &RefereeConfig| -> Result<
                Box<dyn crate::engine::pool::Runner>,
                crate::engine::EngineError,
            > {
                Ok(Box::new(crate::distributed::instant::InstantRunner::new(
                    *referee,
                )))
            };
            crate::engine::run::run_tournament_with(&mut store, tid, &instant, &clock, &mut site)?
        }
    }
    let play = t.elapsed();
    let t = Instant::now();
    // The final results as the contest's mails compute them (no game kept
    // once its group is settled), then the whole site.
    crate::engine::results::ResultsCache::keeping(
        &store,
        tid,
        crate::engine::results::KeptGames::UntilSettled,
    )?
    .refresh_all(&store)?;
    site.site.inner.regenerate(&store)?;
    let results_and_site = t.elapsed();
    let t = Instant::now();
    site.mailer.final_results(&store)?;
    let mail_time = site.mail_time + t.elapsed();
    let site_during_play = site.site.spent;
    let (mails, mail_bytes): (i64, i64) = store.conn().query_row(
        "SELECT COUNT(*), COALESCE(SUM(length(raw)), 0) FROM outbox",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let n_games: u64 = store.conn().query_row(
        "SELECT COUNT(*) FROM games WHERE tournament_id = ?1",
        [tid],
        |r| r.get(0),
    )?;
    // The floor: one game of two trivial modules alone on one CPU (the
    // game benchmark's median of 50, measured in this run) x games / CPUs.
    let per_game = game_bench(50)?.wasm_games[0].1;
    let floor = per_game.mul_f64(n_games as f64 / jobs.max(1) as f64);
    drop(store);
    let db_bytes = [db.clone(), db.with_extension("db-wal")]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    // SAFETY: getrusage fills a valid struct.
    let peak_rss_kb = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u.ru_maxrss as u64
    };
    Ok(ScaleBench {
        play_mode: mode,
        n_teams,
        jobs,
        compile,
        play,
        n_games,
        floor,
        results_and_site,
        site_during_play,
        peak_rss_kb,
        db_bytes,
        mails: mails as u64,
        mail_bytes: mail_bytes as u64,
        mail_time,
        mail_preferences,
    })
}
