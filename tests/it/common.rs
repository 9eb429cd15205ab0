//! Helpers shared by the test modules: where the test data is, compiling a
//! strategy into a module, playing a game (and checking its points against the rules), and running
//! the `knobeln` binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use knobeln::game::knobeln::{replay, Params};
use knobeln::referee::{GameRecord, GameSeeds, Referee, RefereeConfig};
use knobeln::toolchain::compile::{compile, CompileConfig, Outcome, Profile};
use knobeln::wasm::Loaded;

/// A path inside the crate.
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The kit's home referee of the bot discipline `d` (its name) as one file,
/// as the kit mails it: the discipline's part joined with the drivers of
/// `src/discipline/home_referee/`. Written once per test process (below
/// the target's temporary folder, named by the process), so a test runs
/// exactly what participants run.
pub fn home_referee(d: &str) -> PathBuf {
    use std::collections::BTreeMap;
    use std::sync::{Mutex, OnceLock};
    static WRITTEN: OnceLock<Mutex<BTreeMap<String, PathBuf>>> = OnceLock::new();
    let mut written = WRITTEN.get_or_init(Default::default).lock().unwrap();
    if let Some(p) = written.get(d) {
        return p.clone();
    }
    let discipline: knobeln::discipline::Discipline = d.parse().expect("a discipline's name");
    let seam = knobeln::discipline::registry::of(discipline).expect("a bot discipline");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("home-referee-{}", std::process::id()))
        .join(d);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("referee.py");
    fs::write(&path, seam.referee_py()).unwrap();
    written.insert(d.to_string(), path.clone());
    path
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

/// A compiled strategy as the server holds it: its module's bytes, and
/// the module compiled by the engine (or why it cannot play).
pub struct Strategy {
    pub loaded: Loaded,
}

/// Holds a module as the server does.
pub fn install(wasm: &[u8]) -> Strategy {
    Strategy {
        loaded: knobeln::wasm::load(wasm).expect("the WebAssembly engine is there"),
    }
}

/// How long a test lets a jailed tool run by the clock: far beyond what
/// its CPU limit (10 s a process) takes on a machine loaded many times
/// over (at a load of 30 on two cores, 10 s of CPU is 150 s of wall). The
/// clock gives no verdict (a run it ends is the server's
/// [`JailError::Overloaded`](knobeln::sandbox::jail::JailError)), so a
/// test that asserts a verdict of the compile service must not meet it
/// on a busy machine; the tests of the wall itself set their own.
pub const TEST_JAIL_WALL: Duration = Duration::from_secs(20 * 60);

/// How long a test waits for an event whose time depends on the machine's
/// load (a mail answered, a contest played, a log line): only a guard
/// against a test that hangs, never a measure of speed, so far beyond what
/// any load makes of it.
pub const HANG_GUARD: Duration = Duration::from_secs(20 * 60);

/// CPU time of the calling thread.
pub fn thread_cpu() -> Duration {
    // SAFETY: getrusage fills a valid struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Runs the compile service on a source (its tools' wall far away:
/// [`TEST_JAIL_WALL`]).
pub fn compile_source(src: &[u8], profile: Profile) -> Outcome {
    let cfg = CompileConfig {
        profile,
        jail: knobeln::sandbox::jail::JailLimits {
            wall: TEST_JAIL_WALL,
            ..Default::default()
        },
        ..CompileConfig::default()
    };
    compile(src, &cfg).expect("the compile service runs (jail, gcc and clang available)")
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

/// Builds a module the way the compile service builds one (clang and
/// wasm-ld with the same flags and runtime, in the same jail) but without
/// any of its checks, not even the module's shape: for the tests of the
/// walls behind them, fed what the checks would have refused. `Err`:
/// clang or wasm-ld refused it (their messages).
pub fn try_build_unchecked(src: &[u8]) -> Result<Vec<u8>, String> {
    use knobeln::sandbox::jail::{Jail, JailLimits};
    use knobeln::toolchain::compile::runtime_wasm_object;
    use knobeln::toolchain::gcc::{Gcc, Input, SOURCE_NAME};
    use knobeln::toolchain::wasm::{BuiltinsInput, Toolchain};
    let tools = Toolchain::find().expect("clang, wasm-ld and the wasm32 builtins");
    let jail = Jail::new().expect("a jail");
    let gcc = Gcc::new(&jail, JailLimits::default());
    gcc.put(SOURCE_NAME, src).expect("put the source");
    gcc.put("knobellib.o", &runtime_wasm_object().expect("the runtime"))
        .expect("put the runtime");
    let cc = tools
        .compile(&gcc, Input::Source, SOURCE_NAME, "strategy.o")
        .expect("clang runs");
    if !cc.ok {
        return Err(cc.messages);
    }
    let ld = tools
        .link(
            &gcc,
            &["strategy.o", "knobellib.o"],
            "strategy.wasm",
            1 << 20,
            BuiltinsInput::Archive,
        )
        .expect("wasm-ld runs");
    if !ld.ok {
        return Err(ld.messages);
    }
    Ok(gcc.get("strategy.wasm").expect("the module"))
}

/// [`try_build_unchecked`], which must succeed.
pub fn build_unchecked(src: &[u8]) -> Vec<u8> {
    try_build_unchecked(src).unwrap_or_else(|e| panic!("does not build: {e}"))
}

/// [`build_unchecked`] on a file, held like a compiled strategy.
pub fn compile_unchecked(path: &Path) -> Strategy {
    let src = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    install(&build_unchecked(&src))
}

/// A referee configuration with the 1994 rules except for the number of
/// throws, and the given fuel and watchdog (memory stays at 1024 kB).
pub fn config(l: u32, fuel: u64, wall: Duration) -> RefereeConfig {
    RefereeConfig {
        params: Params {
            l,
            ..Params::default()
        },
        fuel,
        wall,
        ..RefereeConfig::default()
    }
}

/// Plays one game. Every game played through here also checks that the
/// record's points are exactly the rules applied to its throws.
pub fn play(cfg: &RefereeConfig, p: &Strategy, q: &Strategy, seed: u64) -> GameRecord {
    let record = Referee::new(*cfg)
        .play_loaded([&p.loaded, &q.loaded], GameSeeds::public(seed))
        .expect("the referee can referee (not a player's fault)");
    assert_eq!(
        replay(&cfg.params, &record.throws),
        Ok(record.points),
        "the points of the record must be those of its throws under the rules: {record:?}"
    );
    record
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

/// Runs `knobeln tournament --json` of `throws` throws a game on the
/// strategies folder `strategies` into the database `db` with `jobs`
/// game threads (and `extra` arguments), asserts that it succeeded, and
/// gives its standard output.
pub fn tournament_run(
    strategies: &Path,
    db: &Path,
    throws: u32,
    seed: u64,
    jobs: usize,
    extra: &[&str],
) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_knobeln"))
        .args(["tournament", "--json", "--throws", &throws.to_string()])
        .args(["--seed", &seed.to_string(), "--jobs", &jobs.to_string()])
        .arg("--strategies")
        .arg(strategies)
        .arg("--db")
        .arg(db)
        .args(extra)
        .output()
        .expect("run the knobeln binary");
    assert!(
        out.status.success(),
        "tournament failed: {}",
        stderr_of(&out)
    );
    out.stdout
}

/// The lines of `text` a person reads that hold Rust `Debug` output (issue
/// 36: every outcome and failure is a sentence for people): a struct
/// (`Name { `), `Some(`, `None` inside brackets or a list (a table's
/// "None" column or "None." are English), a CamelCase variant with a parenthesis
/// (`FieldSank(`) or alone in one (`(RoundCap)`), a path (`::`). For HTML, pass the text without its
/// tags, scripts and styles ([`visible_text`]).
pub fn debug_text(text: &str) -> Vec<String> {
    let debug = regex::Regex::new(
        r"\b[A-Z][A-Za-z]+ \{|\bSome\(|[(\[{,=]\s*None\b|\b[A-Z][a-z]+[A-Z][A-Za-z0-9]*\(|\([A-Z][a-z]+[A-Z][A-Za-z0-9]*\)|[A-Za-z]::[A-Za-z]",
    )
    .unwrap();
    // The seed spells its discipline "FootSteps": a name, not a variant.
    text.lines()
        .filter(|l| debug.is_match(&l.replace("FootSteps", "Footsteps")))
        .map(String::from)
        .collect()
}

/// What a browser shows of `html`: no scripts, no styles, no tags (the
/// entities left as they are).
pub fn visible_text(html: &str) -> String {
    let hidden = regex::Regex::new(r"(?s)<script\b.*?</script>|<style\b.*?</style>").unwrap();
    let tag = regex::Regex::new(r"(?s)<[^>]*>").unwrap();
    tag.replace_all(&hidden.replace_all(html, ""), "")
        .into_owned()
}

/// `data` in base64 (the `base64` crate's), in lines of 76 characters
/// joined by `eol`, as a mail's body part carries it.
pub fn base64_lines(data: &[u8], eol: &str) -> String {
    use base64::Engine;
    let text = base64::engine::general_purpose::STANDARD.encode(data);
    let lines: Vec<&str> = text
        .as_bytes()
        .chunks(76)
        .map(|l| std::str::from_utf8(l).unwrap())
        .collect();
    lines.join(eol)
}
