//! Helpers shared by the test modules: where the test data is, compiling a
//! strategy into a temp folder of its own, playing a game (and checking its
//! points against the rules), finding processes a game left behind, and
//! running the `knobeln` binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use knobeln::game::knobeln::{replay, Params};
use knobeln::referee::{GameRecord, GameSeeds, Referee, RefereeConfig};
use knobeln::sandbox::exe::Executable;
use knobeln::sandbox::player::PlayerLimits;
use knobeln::toolchain::compile::{compile, CompileConfig, Outcome, Profile};

/// A path inside the crate.
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// `tests/data/strategies/NAME.c`.
pub fn strategy_path(name: &str) -> PathBuf {
    repo_path("tests/data/strategies").join(format!("{name}.c"))
}

/// `tests/data/strategies/hostile/NAME.c`.
pub fn hostile_path(name: &str) -> PathBuf {
    repo_path("tests/data/strategies/hostile").join(format!("{name}.c"))
}

/// `tests/data/sources/NAME.c` (the compile-check corpus).
pub fn source_path(name: &str) -> PathBuf {
    repo_path("tests/data/sources").join(format!("{name}.c"))
}

/// The 1994 example strategy, as shipped.
pub fn example_path() -> PathBuf {
    repo_path("src/runtime/example.c")
}

/// A compiled strategy, held sealed in memory as the server holds it, under
/// a name no other strategy of this test run has, so that its processes can
/// be told apart from every other test's (`/proc/PID/exe` shows
/// `/memfd:NAME (deleted)`).
pub struct Strategy {
    pub exe: Executable,
    pub name: String,
}

/// A name of at most 15 characters, unique in this test run.
fn unique_name() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("kt{}x{n}", std::process::id() % 1_000_000)
}

/// Holds a strategy binary as the server does.
pub fn install(binary: &[u8]) -> Strategy {
    let name = unique_name();
    let exe = Executable::from_bytes(&name, binary).expect("hold the strategy binary");
    Strategy { exe, name }
}

/// Runs the compile service on a source.
pub fn compile_source(src: &[u8], profile: Profile) -> Outcome {
    let cfg = CompileConfig {
        profile,
        ..CompileConfig::default()
    };
    compile(src, &cfg).expect("the compile service runs (jail and gcc available)")
}

/// Compiles a strategy file with the local rules (as `knobeln play` does);
/// panics with the errors if it is rejected.
pub fn compile_file(path: &Path) -> Strategy {
    let src = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    match compile_source(&src, Profile::Local) {
        Outcome::Accepted { binary, .. } => install(&binary),
        Outcome::Rejected { report } => panic!(
            "{} does not compile: {:#?}\n{}",
            path.display(),
            report.errors().collect::<Vec<_>>(),
            report.compiler_output
        ),
    }
}

/// Builds a strategy the way the compile service links one (same flags,
/// same runtime, in the same jail) but without any of its checks: for the
/// tests of the walls behind them (the runtime's lock-down, the referee's
/// limits), fed what the checks would have refused, such as inline
/// assembly.
pub fn build_unchecked(src: &[u8]) -> Vec<u8> {
    use knobeln::sandbox::jail::{Jail, JailLimits};
    use knobeln::toolchain::gcc::{Gcc, RUNTIME_C, SOURCE_NAME};
    let jail = Jail::new().expect("a jail");
    let gcc = Gcc::new(&jail, JailLimits::default());
    gcc.put(SOURCE_NAME, src).expect("put the source");
    gcc.put("knobellib.c", RUNTIME_C.as_bytes())
        .expect("put the runtime");
    for (c, o) in [(SOURCE_NAME, "strategy.o"), ("knobellib.c", "knobellib.o")] {
        let run = gcc.compile(c, o).expect("gcc runs");
        assert!(run.ok, "{c} does not compile: {}", run.messages);
    }
    let ld = gcc
        .link(&["strategy.o", "knobellib.o"], "strategy")
        .expect("the linker runs");
    assert!(ld.ok, "does not link: {}", ld.messages);
    gcc.get("strategy").expect("the linked program")
}

/// [`build_unchecked`] on a file, held like a compiled strategy.
pub fn compile_unchecked(path: &Path) -> Strategy {
    let src = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    install(&build_unchecked(&src))
}

/// A referee configuration with the 1994 rules except for the number of
/// throws, and the given limits (memory stays at 1024 kB).
pub fn config(l: u32, cpu_secs: u64, wall: Duration) -> RefereeConfig {
    RefereeConfig {
        params: Params {
            l,
            ..Params::default()
        },
        limits: PlayerLimits {
            cpu_secs,
            ..PlayerLimits::default()
        },
        wall,
    }
}

/// Plays one game. Every game played through here also checks that the
/// record's points are exactly the rules applied to its throws.
pub fn play(cfg: &RefereeConfig, p: &Strategy, q: &Strategy, seed: u64) -> GameRecord {
    let record = Referee::new(*cfg)
        .play([&p.exe, &q.exe], GameSeeds::public(seed))
        .expect("the referee can referee (not a player's fault)");
    assert_eq!(
        replay(&cfg.params, &record.throws),
        Ok(record.points),
        "the points of the record must be those of its throws under the rules: {record:?}"
    );
    record
}

/// Processes that run the strategy, or are named after it (zombies
/// included: their `exe` link is gone but their name stays), as "pid: stat"
/// lines.
pub fn processes_of(strategy: &Strategy) -> Vec<String> {
    let wanted = format!("/memfd:{} (deleted)", strategy.name);
    let comm: String = format!("memfd:{}", strategy.name)
        .chars()
        .take(15)
        .collect();
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").expect("/proc is mounted").flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let exe_matches = fs::read_link(entry.path().join("exe"))
            .map(|e| e.to_string_lossy() == wanted)
            .unwrap_or(false);
        // A process that ended meanwhile has no stat: it is not left over.
        let stat = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let comm_matches = match (stat.find('('), stat.rfind(')')) {
            (Some(a), Some(b)) if a < b => stat[a + 1..b] == comm,
            _ => false,
        };
        if exe_matches || comm_matches {
            found.push(format!("{pid}: {}", stat.trim()));
        }
    }
    found
}

/// [`processes_of`] after giving the system a few seconds to take away
/// whatever was killed (an orphan is reaped by init, not by us).
pub fn leftover_processes(strategy: &Strategy) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found = processes_of(strategy);
        if found.is_empty() || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the `knobeln` binary in the crate folder.
pub fn knobeln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_knobeln"))
        .args(args)
        .current_dir(repo_path(""))
        .output()
        .expect("run the knobeln binary")
}

/// Standard output of a run, as text.
pub fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Standard error of a run, as text.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `knobeln contest start --seed SEED --config CONFIG` to the end and
/// asserts that it succeeded (its standard error is the message if not).
pub fn contest_start(config: &Path, seed: u64) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_knobeln"))
        .args(["contest", "start", "--seed", &seed.to_string(), "--config"])
        .arg(config)
        .output()
        .expect("run the knobeln binary");
    assert!(out.status.success(), "contest start: {}", stderr_of(&out));
    out
}
