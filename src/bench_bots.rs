//! `knobeln bench bots`: what a match of line-protocol bots costs, per
//! language, against floors measured in the same run.
//!
//! - **Raw pipe floor**: the C echo bot run as a plain child process and
//!   driven by a bare write/read loop, 2500 rounds × 2 bots (5000 round
//!   trips, the size of the ultimatum protocol's exchange).
//! - **Start-up** per language: a one-round echo match in the sandbox
//!   (spawn, runtime start, first answer, kill), and the same unconfined.
//! - **Match** per language: a 2500-round echo match between two bots of
//!   the language in the sandbox, and the same bots **unconfined** (plain
//!   child processes driven by the same referee core): the difference is
//!   the sandbox's overhead (goal: at most 10 %).
//!
//! Referee and bots run on one CPU. Prints figures, asserts nothing.
//! Languages whose toolchain is missing are listed as such; `--language`
//! measures only the languages named (the C bot is built for the floor
//! anyway).

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};

use crate::lang::build::{build, BotProgram, Build, BuildLimits};
use crate::lang::{choose, LanguageTable, Toolchain, Toolchains};
use crate::lines::echo::play_echo;
use crate::lines::{bot_limits, play, BotIo, LineLimits, Match};
use crate::sandbox::bot::{proc_cpu_time, RestProbe};
use crate::sandbox::set_nonblocking;

/// The echo bots the benchmark uses (the same as the tests').
const ECHO_BOTS: [(&str, &str); 5] = [
    ("echo.c", include_str!("../tests/data/bots/echo.c")),
    ("echo.cpp", include_str!("../tests/data/bots/echo.cpp")),
    ("echo.py", include_str!("../tests/data/bots/echo.py")),
    ("Echo.java", include_str!("../tests/data/bots/Echo.java")),
    ("echo.rs", include_str!("../tests/data/bots/echo.rs")),
];

/// Rounds of the exchange (the ultimatum protocol's 2500).
pub const ROUNDS: u32 = 2500;

/// Figures of one language.
#[derive(Debug, Clone)]
pub struct LanguageFigures {
    pub language: String,
    pub startup: Duration,
    /// The same one-round match with the bots unconfined.
    pub startup_unconfined: Duration,
    pub sandboxed: Duration,
    pub unconfined: Duration,
    /// The referee's own CPU (its thread) in the fastest sandboxed match.
    pub referee_cpu: Duration,
    /// The two bots' CPU in that match.
    pub bots_cpu: Duration,
}

/// All figures of a run.
#[derive(Debug, Clone)]
pub struct BotsBench {
    pub floor: Duration,
    pub repeats: usize,
    pub languages: Vec<LanguageFigures>,
    pub missing: Vec<(String, String)>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl BotsBench {
    pub fn print(&self) {
        let trips = 2.0 * ROUNDS as f64;
        println!(
            "bots: {ROUNDS}-round echo exchange, 2 bots ({} round trips), best of {}",
            trips, self.repeats
        );
        println!(
            "  raw pipe floor (C bot, bare loop): {:8.1} ms ({:.1} us per round trip)",
            ms(self.floor),
            ms(self.floor) * 1000.0 / trips
        );
        println!(
            "  {:<8} {:>10} {:>10} {:>12} {:>12} {:>9} {:>9}",
            "language", "start-up", "unconfined", "match", "unconfined", "overhead", "x floor"
        );
        for l in &self.languages {
            let overhead = l.sandboxed.as_secs_f64() / l.unconfined.as_secs_f64() - 1.0;
            println!(
                "  {:<8} {:>7.1} ms {:>7.1} ms {:>9.1} ms {:>9.1} ms {:>8.1}% {:>8.2}x",
                l.language,
                ms(l.startup),
                ms(l.startup_unconfined),
                ms(l.sandboxed),
                ms(l.unconfined),
                overhead * 100.0,
                l.sandboxed.as_secs_f64() / self.floor.as_secs_f64()
            );
        }
        for l in &self.languages {
            println!(
                "  {:<8} the referee's CPU {:7.1} ms ({:.2} us per answer) beside the bots' {:7.1} ms",
                l.language,
                ms(l.referee_cpu),
                ms(l.referee_cpu) * 1000.0 / trips,
                ms(l.bots_cpu)
            );
        }
        for (name, why) in &self.missing {
            println!("  {name:<8} missing: {why}");
        }
        println!(
            "  (start-up = a one-round match, sandboxed and unconfined; match = start-up of both bots + {ROUNDS} rounds + kill; overhead = sandboxed / unconfined - 1, goal <= 10 %)"
        );
    }
}

/// Runs the benchmark: `repeats` runs of each figure, the best kept, for
/// the built-in languages named in `only` (all when empty).
pub fn bots_bench(repeats: usize, only: &[String]) -> anyhow::Result<BotsBench> {
    let table = LanguageTable::builtin();
    let mut choices = Vec::new();
    for (file, source) in ECHO_BOTS {
        let choice = choose(&table, Some(file), None).map_err(|e| anyhow!(e))?;
        choices.push((file, source, choice));
    }
    if let Some(unknown) = only
        .iter()
        .find(|name| !choices.iter().any(|(_, _, c)| &c.language == *name))
    {
        let known: Vec<&str> = choices
            .iter()
            .map(|(_, _, c)| c.language.as_str())
            .collect();
        return Err(anyhow!(
            "no echo bot in language {unknown:?}; the benchmark has: {}",
            known.join(", ")
        ));
    }
    // Referee and bots on one CPU (the bots inherit it), as the KNOBELN
    // referee plays: cheaper and steadier round trips, for all figures alike.
    let cpus = crate::sandbox::allowed_cpus();
    crate::sandbox::pin_current_thread(*cpus.last().unwrap_or(&0))?;
    let toolchains = Toolchains::resolve(&table);
    let limits = LineLimits {
        cpu: Duration::from_secs(120),
        ..LineLimits::default()
    };
    let mut languages = Vec::new();
    let mut missing = Vec::new();
    let mut c_program = None;
    for (file, source, choice) in choices {
        let measured = only.is_empty() || only.contains(&choice.language);
        // The C bot is built for the floor anyway.
        if !measured && choice.language != "c" {
            continue;
        }
        let tc = match toolchains.get(&choice.language) {
            Some(Ok(tc)) => tc,
            Some(Err(why)) => {
                missing.push((choice.language.clone(), why.clone()));
                continue;
            }
            None => continue,
        };
        let program = match build(
            tc,
            &choice.assumed,
            source.as_bytes(),
            &BuildLimits::default(),
        )
        .with_context(|| format!("building {file}"))?
        {
            Build::Built { program, .. } => program,
            Build::Rejected { report } => {
                return Err(anyhow!("{file} was rejected:\n{}", report.text()))
            }
        };
        if choice.language == "c" {
            c_program = Some(program.clone());
        }
        if !measured {
            continue;
        }
        // Interleaved, best of each: a busy machine slows both alike.
        let (mut startup, mut startup_unconfined, mut unconfined) =
            (Duration::MAX, Duration::MAX, Duration::MAX);
        let mut sandboxed = SandboxedMatch {
            wall: Duration::MAX,
            referee_cpu: Duration::ZERO,
            bots_cpu: Duration::ZERO,
        };
        for _ in 0..repeats.max(1) {
            startup = startup.min(sandboxed_match(tc, &program, 1, &limits)?.wall);
            startup_unconfined =
                startup_unconfined.min(unconfined_match(tc, &program, 1, &limits)?);
            let m = sandboxed_match(tc, &program, ROUNDS, &limits)?;
            if m.wall < sandboxed.wall {
                sandboxed = m;
            }
            unconfined = unconfined.min(unconfined_match(tc, &program, ROUNDS, &limits)?);
        }
        languages.push(LanguageFigures {
            language: choice.language,
            startup,
            startup_unconfined,
            sandboxed: sandboxed.wall,
            unconfined,
            referee_cpu: sandboxed.referee_cpu,
            bots_cpu: sandboxed.bots_cpu,
        });
    }
    let c = c_program.ok_or_else(|| anyhow!("the C toolchain is missing: no floor"))?;
    let c_tc = match toolchains.get("c") {
        Some(Ok(tc)) => tc,
        _ => return Err(anyhow!("the C toolchain is missing")),
    };
    let mut floor = Duration::MAX;
    for _ in 0..repeats.max(1) {
        floor = floor.min(raw_floor(c_tc, &c)?);
    }
    Ok(BotsBench {
        floor,
        repeats,
        languages,
        missing,
    })
}

/// One sandboxed match: its wall clock, the referee's CPU (this thread)
/// and the bots' CPU.
struct SandboxedMatch {
    wall: Duration,
    referee_cpu: Duration,
    bots_cpu: Duration,
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    // SAFETY: getrusage fills a valid struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn sandboxed_match(
    tc: &Toolchain,
    program: &BotProgram,
    rounds: u32,
    limits: &LineLimits,
) -> anyhow::Result<SandboxedMatch> {
    let (t0, c0) = (Instant::now(), thread_cpu());
    let m = Match::start(&[(tc, program), (tc, program)], *limits)?;
    let rec = play(m, |m| play_echo(m, rounds, 1))?;
    let (wall, referee_cpu) = (t0.elapsed(), thread_cpu() - c0);
    if !rec.failures.is_empty() {
        return Err(anyhow!("{}: {}", tc.language.name, rec.failures[0].reason));
    }
    Ok(SandboxedMatch {
        wall,
        referee_cpu,
        bots_cpu: rec.bots.iter().map(|b| b.cpu).sum(),
    })
}

fn unconfined_match(
    tc: &Toolchain,
    program: &BotProgram,
    rounds: u32,
    limits: &LineLimits,
) -> anyhow::Result<Duration> {
    let dir = tempfile::tempdir()?;
    write_program(dir.path(), program)?;
    let argv = tc
        .command(&tc.language.run, &program.stem, limits.memory_mb)
        .map_err(|e| anyhow!(e))?;
    let t0 = Instant::now();
    let mut bots: Vec<(Box<dyn BotIo>, u64)> = Vec::new();
    for _ in 0..2 {
        bots.push((
            Box::new(Unconfined::spawn(&argv, dir.path())?),
            bot_limits(tc, limits).memory_bytes >> 20,
        ));
    }
    let rec = play(Match::new(bots, *limits), |m| play_echo(m, rounds, 1))?;
    let took = t0.elapsed();
    if !rec.failures.is_empty() {
        return Err(anyhow!("{}: {}", tc.language.name, rec.failures[0].reason));
    }
    Ok(took)
}

/// The C echo bot driven by a bare blocking loop: the cost of the pipes.
fn raw_floor(tc: &Toolchain, program: &BotProgram) -> anyhow::Result<Duration> {
    let dir = tempfile::tempdir()?;
    write_program(dir.path(), program)?;
    let argv = tc
        .command(&tc.language.run, &program.stem, 64)
        .map_err(|e| anyhow!(e))?;
    let argv = unconfined_argv(&argv, dir.path());
    let mut children = Vec::new();
    for _ in 0..2 {
        children.push(
            Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()?,
        );
    }
    let mut ends: Vec<(
        std::process::ChildStdin,
        BufReader<std::process::ChildStdout>,
    )> = children
        .iter_mut()
        .map(|c| {
            (
                c.stdin.take().expect("stdin"),
                BufReader::new(c.stdout.take().expect("stdout")),
            )
        })
        .collect();
    let mut line = String::new();
    // Warm up: both bots running.
    for (w, r) in ends.iter_mut() {
        w.write_all(b"ECHO 1\n")?;
        line.clear();
        r.read_line(&mut line)?;
    }
    let t0 = Instant::now();
    for round in 0..ROUNDS {
        // One write per line, as the referee does (`writeln!` on an
        // unbuffered pipe would make three).
        let ask = format!("ECHO {}\n", round % 1000);
        for (w, r) in ends.iter_mut() {
            w.write_all(ask.as_bytes())?;
            line.clear();
            r.read_line(&mut line)?;
        }
    }
    let took = t0.elapsed();
    drop(ends);
    for mut c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
    Ok(took)
}

fn write_program(dir: &std::path::Path, program: &BotProgram) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir.join("bot"))?;
    std::fs::create_dir_all(dir.join("work"))?;
    for f in &program.files {
        let p = dir.join("bot").join(&f.path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&p, f.bytes())?;
        let mode = if f.executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// The run command with `/bot` pointing at `dir/bot`.
fn unconfined_argv(argv: &[String], dir: &std::path::Path) -> Vec<String> {
    let bot = dir.join("bot").display().to_string();
    argv.iter()
        .map(|a| {
            if a == "/bot" {
                bot.clone()
            } else if let Some(rest) = a.strip_prefix("/bot/") {
                format!("{bot}/{rest}")
            } else {
                a.clone()
            }
        })
        .collect()
}

/// A bot run as a plain child process (for the benchmark's comparison only;
/// contests never run a bot this way).
struct Unconfined {
    /// The same look for lines nobody asked for as a confined bot's (but
    /// for the count of its tasks: it is the bench's own bot).
    rest: RestProbe,
    child: Child,
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

impl Unconfined {
    fn spawn(argv: &[String], dir: &std::path::Path) -> anyhow::Result<Unconfined> {
        let argv = unconfined_argv(argv, dir);
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(dir.join("work"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", argv[0]))?;
        let stdin: OwnedFd = child.stdin.take().expect("stdin").into();
        let stdout: OwnedFd = child.stdout.take().expect("stdout").into();
        let stderr: OwnedFd = child.stderr.take().expect("stderr").into();
        for fd in [&stdin, &stdout, &stderr] {
            set_nonblocking(fd)?;
        }
        Ok(Unconfined {
            rest: RestProbe::for_one_task(child.id() as i32),
            child,
            stdin,
            stdout,
            stderr,
        })
    }
}

impl BotIo for Unconfined {
    fn fds(&self) -> [std::os::fd::RawFd; 3] {
        [
            self.stdin.as_raw_fd(),
            self.stdout.as_raw_fd(),
            self.stderr.as_raw_fd(),
        ]
    }
    fn cpu_time(&self) -> Duration {
        proc_cpu_time(self.child.id() as i32).unwrap_or_default()
    }
    fn try_status(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }
    fn finish(&mut self) -> std::io::Result<ExitStatus> {
        // SAFETY: kill of our own child's process group.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        self.child.wait()
    }
    fn out_of_memory(&self) -> bool {
        false
    }
    fn waiting_for_input(&self) -> bool {
        false
    }
    fn at_rest(&self) -> bool {
        self.rest.at_rest(|| vec![self.child.id() as i32])
    }
}
