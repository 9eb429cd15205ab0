//! The integrity of a contest against participants who have read the
//! source code (issue 9): a strategy cannot learn its opponent's
//! randomness, results do not depend on addresses or on anything of the
//! machine, what runs is what was checked, nothing of the server reaches a
//! strategy or the jail, and every step on a stranger's source is bounded.
//! Each test plays or compiles a small hostile source from
//! `tests/data/strategies/hostile/` or builds one inline.

use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use knobeln::referee::{GameSeeds, Referee, RefereeConfig};
use knobeln::sandbox::jail::{
    CpuCount, Jail, JailError, JailExit, JailLimits, WorkFull, WORK_BYTES, WORK_INODES,
};
use knobeln::seed::SeedKey;
use knobeln::toolchain::compile::{Outcome, Profile};
use knobeln::toolchain::diagnostic::Check;
use knobeln::toolchain::gcc::{Gcc, ToolLimit};
use knobeln::toolchain::wasm::check_module;

use crate::common::{
    build_unchecked, compile_file, compile_source, config, example_path, hostile_path, install,
    play, repo_path, stdout_of, strategy_path, Strategy,
};
use crate::mail_spool::Contest;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How the server derived a player's seed before issue 9: invertible.
fn old_player_seed(game: u64, player: u64) -> u64 {
    mix(mix(game ^ 0x4B4E_4F42_454C_4E00) ^ mix(player.wrapping_add(0x9E37_79B9_7F4A_7C15)))
}

/// Points per throw of player 0 in a game with the given seeds.
fn points_per_throw(thief: &Strategy, example: &Strategy, seeds: GameSeeds) -> f64 {
    let cfg = RefereeConfig::default();
    let rec = Referee::new(cfg)
        .play_loaded([&thief.loaded, &example.loaded], seeds)
        .expect("the referee referees");
    assert!(
        !rec.failed(0),
        "the thief keeps the rules: {:?}",
        rec.failures
    );
    rec.points[0] as f64 / rec.throws.len().max(1) as f64
}

/// Item 1. The thief finds its own seed in memory and inverts the old
/// derivation. The test first shows that the attack is real (against seeds
/// derived the old way it wins almost every throw), then that keyed seeds
/// defeat it: it scores like an ordinary strategy.
#[test]
fn a_strategy_cannot_compute_its_opponents_seed() {
    let thief = compile_file(&hostile_path("seed_thief"));
    let example = compile_file(&example_path());
    let key = SeedKey::from_bytes(*b"a secret of 16 b");
    let (mut old, mut keyed) = (0.0, 0.0);
    let games = [11u64, 12, 13, 14];
    for &g in &games {
        let derivable = GameSeeds {
            game: g,
            players: [old_player_seed(g, 0), old_player_seed(g, 1)],
        };
        old += points_per_throw(&thief, &example, derivable);
        keyed += points_per_throw(&thief, &example, GameSeeds::new(&key, g));
    }
    old /= games.len() as f64;
    keyed /= games.len() as f64;
    assert!(
        old > 8.0,
        "the attack works on derivable seeds: {old} points/throw"
    );
    assert!(keyed < 3.0, "keyed seeds defeat it: {keyed} points/throw");
}

/// Item 2. Addresses of locals, statics and functions, uninitialised stack
/// and the memory above the first frame all go into the mixer's throws:
/// the same seeds must still give the same game, every time.
#[test]
fn same_seeds_same_game_whatever_a_strategy_reads_of_its_memory() {
    let mixer = compile_file(&hostile_path("address_mixer"));
    let constant = compile_file(&strategy_path("constant"));
    let cfg = config(200, 100_000_000, Duration::from_secs(10));
    let first = play(&cfg, &mixer, &constant, 77);
    assert!(first.failures.is_empty(), "{:?}", first.failures);
    for _ in 0..4 {
        let again = play(&cfg, &mixer, &constant, 77);
        assert_eq!(again.throws, first.throws, "same seed, same throws");
    }
    // A freshly loaded copy of the same program (another memory file, other
    // descriptor numbers) plays the same game too.
    let twin = compile_file(&hostile_path("address_mixer"));
    assert_eq!(play(&cfg, &twin, &constant, 77).throws, first.throws);
}

/// Item 2, whole tournaments: the same seed gives byte-identical results
/// with hostile strategies in the field, run after run and whatever the
/// number of workers.
#[test]
fn a_tournament_with_hostile_strategies_is_reproduced_by_its_seed() {
    let dir = tempfile::tempdir().unwrap();
    let field = write_field(
        dir.path(),
        &[
            ("mixer", hostile_path("address_mixer")),
            ("thief", hostile_path("seed_thief")),
            ("example", example_path()),
            ("constant", strategy_path("constant")),
        ],
    );
    let run = |db: &str, jobs: &str| {
        tournament_json(&field, &dir.path().join(db), "4242", jobs, "300", None)
    };
    let a = run("a.db", "1");
    assert_eq!(run("b.db", "2"), a);
    assert_eq!(run("c.db", "2"), a);
}

/// A folder of strategies for `knobeln tournament`, each with the
/// description of requirement 7 the organizer's profile wants.
fn write_field(
    dir: &std::path::Path,
    strategies: &[(&str, std::path::PathBuf)],
) -> std::path::PathBuf {
    let field = dir.join("field");
    std::fs::create_dir(&field).unwrap();
    let description: String = (1..=15)
        .map(|i| format!("Line {i} of the description of a test strategy.\n"))
        .collect();
    for (name, path) in strategies {
        let src = std::fs::read_to_string(path).unwrap();
        std::fs::write(
            field.join(format!("{name}.c")),
            format!("#if 0\n{description}#endif\n{src}"),
        )
        .unwrap();
    }
    field
}

/// `knobeln tournament --json` on a field (pinned to `cpu` with taskset
/// when given): its standard output.
fn tournament_json(
    field: &std::path::Path,
    db: &std::path::Path,
    seed: &str,
    jobs: &str,
    throws: &str,
    cpu: Option<usize>,
) -> String {
    let mut cmd = match cpu {
        Some(cpu) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &cpu.to_string(), env!("CARGO_BIN_EXE_knobeln")]);
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_knobeln")),
    };
    let out = cmd
        .args(["tournament", "--strategies"])
        .arg(field)
        .args(["--seed", seed, "--db"])
        .arg(db)
        .args(["--jobs", jobs, "--json", "--throws", throws])
        .output()
        .expect("run knobeln");
    assert!(out.status.success(), "{}", crate::common::stderr_of(&out));
    stdout_of(&out)
}

/// Issue 23: whatever a strategy reads of addresses, uninitialised memory,
/// all of its memory, a NaN's bits or its own progress, the same seeds
/// give the same game; the same tournament seed gives the same results
/// whatever the number of workers and the CPU it runs on.
#[test]
fn nothing_of_the_machine_reaches_a_strategy() {
    let probe = compile_file(&hostile_path("machine_probe"));
    let constant = compile_file(&strategy_path("constant"));
    let cfg = config(300, 100_000_000, Duration::from_secs(10));
    let first = play(&cfg, &probe, &constant, 5);
    assert!(first.failures.is_empty(), "{:?}", first.failures);
    // Games on other threads at once (other instances in the pool, other
    // stacks) play the same game.
    std::thread::scope(|s| {
        let games: Vec<_> = (0..4)
            .map(|_| s.spawn(|| play(&cfg, &probe, &constant, 5)))
            .collect();
        for g in games {
            assert_eq!(g.join().unwrap().throws, first.throws);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let field = write_field(
        dir.path(),
        &[
            ("probe", hostile_path("machine_probe")),
            ("mixer", hostile_path("address_mixer")),
            ("example", example_path()),
        ],
    );
    let cpus = knobeln::sandbox::allowed_cpus();
    let run = |db: &str, cpu: usize, jobs: &str| {
        tournament_json(&field, &dir.path().join(db), "2323", jobs, "200", Some(cpu))
    };
    let a = run("a.db", cpus[0], "1");
    assert_eq!(run("b.db", *cpus.last().unwrap(), "1"), a, "another CPU");
    assert_eq!(run("c.db", cpus[0], "2"), a, "two workers");
}

/// Issue 23, the wall: whatever slips past the source checks, the module
/// must have the shape of a strategy: it imports only the referee's
/// make_throw and seed, exports only main, knobeln_start and its memory,
/// has no start function and no more memory than the limit.
#[test]
fn the_module_must_have_the_shape_of_a_strategy() {
    let accepted = build_unchecked(std::fs::read(strategy_path("constant")).unwrap().as_slice());
    assert!(check_module(&accepted, 1 << 20).is_ok());
    let cases = [
        (
            "__attribute__((import_module(\"wasi_snapshot_preview1\"), import_name(\"fd_write\"))) \
             int w(int, int, int, int);\nmain() { w(1, 0, 0, 0); for (;;) make_throw(100); }\n",
            "imports `wasi_snapshot_preview1.fd_write`",
        ),
        (
            "__attribute__((import_module(\"knobeln\"), import_name(\"peek\"))) int peek(void);\n\
             main() { for (;;) make_throw(peek()); }\n",
            "imports `knobeln.peek`",
        ),
        (
            "__attribute__((export_name(\"steal\"))) int steal(void) { return 1; }\n\
             main() { for (;;) make_throw(100); }\n",
            "exports `steal`",
        ),
        (
            "__attribute__((import_module(\"knobeln\"), import_name(\"make_throw\"))) long long t(long long);\n\
             main() { for (;;) t(100); }\n",
            "imports `knobeln.make_throw`",
        ),
    ];
    for (src, words) in cases {
        let module = build_unchecked(src.as_bytes());
        let problems = check_module(&module, 1 << 20).expect_err(words);
        assert!(
            problems.iter().any(|p| p.contains(words)),
            "{words}: {problems:?}"
        );
        // The compile service refuses the attribute already (check 2).
        let outcome = compile_source(src.as_bytes(), Profile::Local);
        assert!(!outcome.accepted(), "{words}");
        assert!(outcome
            .report()
            .errors()
            .any(|d| d.check == Check::SingleFile));
    }
    // More memory than the limit, or a module of another shape altogether.
    let problems = check_module(&accepted, 512 << 10).unwrap_err();
    assert!(
        problems.iter().any(|p| p.contains("1024 kB of memory")),
        "{problems:?}"
    );
    assert!(check_module(b"\0asm\x01\0\0\0", 1 << 20).is_err());
    assert!(check_module(b"\x7fELF", 1 << 20).is_err());
}

/// A native program stored by an older version (or any bytes that are no
/// module of the contest's shape) is that player's failure at throw 1,
/// never run and never a fault that stops the contest.
#[test]
fn a_native_program_is_never_run() {
    let elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0".repeat(64);
    let bad = install(&elf);
    let good = compile_file(&strategy_path("constant"));
    let rec = play(
        &config(20, 1_000_000, Duration::from_secs(5)),
        &bad,
        &good,
        1,
    );
    assert_eq!(rec.failures.len(), 1, "{rec:?}");
    assert_eq!((rec.failures[0].player, rec.failures[0].throw), (0, 1));
    assert!(
        rec.failures[0].reason.contains("could not be started"),
        "{}",
        rec.failures[0].reason
    );
}

/// Item 6. A descriptor of the server open without close-on-exec (a file
/// of secrets, a pipe) must not reach the jailed compiler. (A strategy has
/// no descriptors at all: its module imports two functions.)
#[test]
fn no_descriptor_of_the_server_reaches_the_jail() {
    let secret = tempfile::tempfile().unwrap();
    std::io::Write::write_all(&mut &secret, b"the server's secrets").unwrap();
    // SAFETY: F_DUPFD (without close-on-exec) on our own file, far above
    // every descriptor another test may be using.
    let leaked = unsafe { libc::fcntl(secret.as_raw_fd(), libc::F_DUPFD, 900) };
    assert!(leaked >= 900);
    let jail = Jail::new().unwrap();
    // An external command per descriptor (a builtin's redirection would make
    // bash save its own descriptors at 10 and up).
    let probe = format!(
        "for fd in {{3..64}} {leaked}; do if /usr/bin/true 2>/dev/null >&$fd; then echo open $fd; fi; done; echo done"
    );
    let out = jail
        .run(&["/bin/bash", "-c", &probe], &JailLimits::default())
        .unwrap();
    // SAFETY: closing the descriptor we made.
    unsafe { libc::close(leaked) };
    assert_eq!(out.output.trim(), "done", "{}", out.output);
}

/// A source with a static array of `kb` kB that plays a fixed throw.
fn static_array_source(kb: u64) -> String {
    format!(
        "static char big[{kb} * 1024];\nmain() {{ int i; for (i = 0; i < sizeof big; i += 4096) big[i] = 1;\n for (;;) make_throw(100 + big[0]); }}\n"
    )
}

/// Item 7. Whatever is accepted can play: every size of static array that
/// the compile service accepts plays its first throws; those it refuses
/// do not fit beside the 64 kB stack, and the refusal says how much the
/// program needs.
#[test]
fn everything_accepted_starts_and_plays() {
    let constant = compile_file(&strategy_path("constant"));
    let cfg = config(5, 10_000_000, Duration::from_secs(10));
    let mut accepted = Vec::new();
    for kb in [600, 900, 950, 955, 958, 959, 960, 961, 1000] {
        match compile_source(static_array_source(kb).as_bytes(), Profile::Local) {
            Outcome::Accepted { binary, .. } => {
                let s = install(&binary);
                let rec = play(&cfg, &s, &constant, 1);
                assert!(
                    rec.failures.is_empty(),
                    "{kb} kB accepted but: {:?}",
                    rec.failures
                );
                assert_eq!(rec.throws.len(), 5);
                accepted.push(kb);
            }
            Outcome::Rejected { report } => {
                let msg: Vec<_> = report.errors().map(|d| d.message.clone()).collect();
                assert!(
                    msg.iter().any(
                        |m| m.contains("does not fit into the memory limit of 1024 kB")
                            && m.contains("smaller by at least")
                    ),
                    "{kb} kB: {msg:?}"
                );
            }
        }
    }
    assert!(
        accepted.contains(&600) && accepted.contains(&900),
        "{accepted:?}"
    );
    for kb in [960, 961, 1000] {
        assert!(
            !accepted.contains(&kb),
            "{kb} kB do not fit beside the stack, yet were accepted"
        );
    }
}

/// Descendants of `pid` (children, grandchildren, …) from /proc.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) {
            if let Some(pp) = rest
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse::<u32>().ok())
            {
                parent_of.push((p, pp));
            }
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let cur = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == cur)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let state = s.rfind(')').and_then(|i| s[i + 2..].chars().next());
            !matches!(state, Some('Z') | Some('X'))
        })
        .unwrap_or(false)
}

/// Item 8. `kill -9` of the server while gcc works in the jail: gcc and
/// everything it started end with the server, and the jail folder the dead
/// server left behind is removed by the next server's first compile (a
/// server's jails share one tree, made by its first: that is when the
/// trees of servers no longer running are removed).
#[test]
fn the_compile_jail_dies_with_the_server_and_leaves_nothing_behind() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_knobeln"))
        .args([
            "check",
            repo_path("tests/data/sources/macro_bomb.c")
                .to_str()
                .unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = server.id();
    // Wait until the jailed preprocessor is at work.
    let deadline = Instant::now() + Duration::from_secs(20);
    let jailed = loop {
        let d = descendants(pid);
        if d.len() >= 2 {
            break d;
        }
        assert!(Instant::now() < deadline, "gcc never started in the jail");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));
    let jail_dirs = |pid: u32| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("knobeln-jail-{pid}-"))
            })
            .map(|e| e.path())
            .collect()
    };
    assert!(
        !jail_dirs(pid).is_empty(),
        "the jail folder of the running server"
    );
    server.kill().unwrap(); // SIGKILL
    server.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let running: Vec<u32> = jailed.iter().copied().filter(|&p| alive(p)).collect();
        if running.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "jailed processes outlived the server: {running:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The next server's first compile removes the dead server's jail
    // folder (and leaves its own, which the server after it removes).
    // (Its verdict does not matter: any source that is a single file runs
    // the tools.)
    Command::new(env!("CARGO_BIN_EXE_knobeln"))
        .args(["check", strategy_path("constant").to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(jail_dirs(pid), Vec::<std::path::PathBuf>::new());
}

/// Item 8. The jailed command is PID 2 of a namespace of its own, the
/// jail's init PID 1 (it sees no other process, and what it starts ends
/// with it), and the number of processes it may have is limited.
#[test]
fn the_jail_has_its_own_pid_namespace_and_a_process_limit() {
    let jail = Jail::new().unwrap();
    let out = jail
        .run(&["/bin/sh", "-c", "echo $$ $PPID"], &JailLimits::default())
        .unwrap();
    assert_eq!(out.output.trim(), "2 1");
    // Sleeps far longer than the wall limit: had they outlived the shell
    // (PID 1) and the run waited for them, the jail would have killed it
    // at the wall limit. No timing: the run's own verdict says which.
    let limits = JailLimits {
        processes: 8,
        wall: Duration::from_secs(60),
        ..JailLimits::default()
    };
    let bomb = "i=0; while [ $i -lt 40 ]; do sleep 100000 & i=$((i+1)); done; echo started";
    let out = jail.run(&["/bin/sh", "-c", bomb], &limits).unwrap();
    assert!(
        out.output.contains("fork") || out.output.contains("Resource"),
        "forks beyond the limit fail: {}",
        out.output
    );
    // The shell ends on its own (its status is its own: a failed fork
    // may end it), not killed by the jail at the wall limit.
    assert!(
        matches!(out.exit, JailExit::Exited(_)),
        "the sleeps died with the shell, not at the wall limit: {:?} {}",
        out.exit,
        out.output
    );
}

/// Processes of `nobody`'s on the host, killed when dropped.
struct NobodysProcesses(Vec<std::process::Child>);

impl NobodysProcesses {
    /// `n` sleeping processes of uid and gid 65534 (the test's own user
    /// when it runs as `nobody`).
    fn start(n: u64) -> NobodysProcesses {
        use std::os::unix::process::CommandExt;
        let mut started = NobodysProcesses(Vec::new());
        for _ in 0..n {
            let child = Command::new("/bin/sleep")
                .arg("100000")
                .uid(65534)
                .gid(65534)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            started.0.push(child);
        }
        started
    }
}

impl Drop for NobodysProcesses {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A jailed Python that forks until the kernel refuses (each child waits
/// on a pipe), says how many it has, writes `/work/full`, and holds them
/// all until the test writes `/work/go`.
const FORK_UNTIL_REFUSED: &str = "\
import errno, os, time
r, w = os.pipe()
n = 0
while True:
    try:
        pid = os.fork()
    except OSError as e:
        refused = errno.errorcode[e.errno]
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    n += 1
print('children', n, 'then', refused, flush=True)
open('/work/full', 'w').close()
while not os.path.exists('/work/go'):
    time.sleep(0.01)
os.close(w)
for _ in range(n):
    os.wait()
print('all ended', flush=True)
";

/// A tool that compiles a C function with gcc (its driver starts `cc1`
/// and `as`) and then starts eight processes at once.
const GCC_AND_EIGHT_PROCESSES: &str = "\
printf 'int f(int x) { return x + 1; }\\n' > f.c && gcc -c f.c -o f.o && echo 'gcc: ok'; \
i=0; while [ $i -lt 8 ]; do sleep 1 & i=$((i+1)); done; wait; echo \"started: $i\"";

/// Item 8. Each jail's process limit is its own, whatever the server's
/// user. Two jails at once, at the compiles' limit of 64 processes: the
/// first forks until the kernel refuses and holds what it has; while it
/// does, the second compiles with gcc and starts eight processes, and
/// is not refused one. The first is stopped at exactly its 64 (the
/// Python and 63 children: `EAGAIN` at the 64th child); 70 processes of
/// `nobody`'s on the host count against neither. As root the jails run
/// under uids of their own (before, both ran as `nobody`: the first got
/// no child at all beside `nobody`'s 70, and the second's gcc could not
/// start `cc1` while the first held 64); the test runs itself again as
/// `nobody`, where each run has a user namespace of its own.
#[test]
fn each_jails_process_limit_is_its_own() {
    also_as_nobody("integrity::each_jails_process_limit_is_its_own");
    let limits = at_the_default_limits();
    assert_eq!(limits.processes, 64, "the limit security.md names");
    let _nobodys = NobodysProcesses::start(limits.processes + 6);
    let first = Jail::new().unwrap();
    let second = Jail::new().unwrap();
    std::thread::scope(|scope| {
        let bomb = scope.spawn(|| {
            first
                .run(&["/usr/bin/python3", "-c", FORK_UNTIL_REFUSED], &limits)
                .unwrap()
        });
        // Until the first holds all it may have (no clock: its own file).
        while !first.work_dir().join("full").exists() {
            if bomb.is_finished() {
                let said = bomb.join().map(|o| o.output);
                panic!("the first jail ended before it was full: {said:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let other = second
            .run(&["/bin/sh", "-c", GCC_AND_EIGHT_PROCESSES], &limits)
            .unwrap();
        first
            .write_file("go", b"", std::time::SystemTime::now())
            .unwrap();
        let bomb = bomb.join().unwrap();
        assert_eq!(other.exit, JailExit::Exited(0), "{}", other.output);
        assert!(other.output.contains("gcc: ok"), "{}", other.output);
        assert!(other.output.contains("started: 8"), "{}", other.output);
        assert_eq!(bomb.exit, JailExit::Exited(0), "{}", bomb.output);
        assert!(
            bomb.output.contains("children 63 then EAGAIN"),
            "{}",
            bomb.output
        );
        assert!(bomb.output.contains("all ended"), "{}", bomb.output);
    });
}

/// D7: the jail's limits at the values the compiler runs under
/// (`JailLimits::default()`), each reached by a tool of the host's `/usr`
/// run as the jailed command's child (PID 1 of a namespace ignores the
/// signals the kernel sends for a limit); the wall limit is set far away,
/// so that only the limit tried can end the tool (the run's verdict says
/// which, never a clock).
fn at_the_default_limits() -> JailLimits {
    let d = JailLimits::default();
    assert_eq!(
        (d.cpu_secs, d.address_space, d.file_size),
        (10, 1 << 30, 16 << 20),
        "the limits security.md names"
    );
    JailLimits {
        wall: Duration::from_secs(900),
        ..d
    }
}

/// 10 s of CPU: an endless loop is killed by `RLIMIT_CPU` (`SIGXCPU`, 24).
#[test]
fn a_loop_in_the_jail_is_killed_by_the_cpu_limit() {
    let jail = Jail::new().unwrap();
    let out = jail
        .run(
            &[
                "/bin/sh",
                "-c",
                "/bin/sh -c 'while :; do :; done'; echo \"loop ended: $?\"",
            ],
            &at_the_default_limits(),
        )
        .unwrap();
    assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
    // 128 + SIGXCPU; the hard limit one second later would be SIGKILL (137).
    assert!(
        out.output.contains("loop ended: 152") || out.output.contains("loop ended: 137"),
        "{}",
        out.output
    );
}

/// The jail's command cannot make its exit status read as a signal: the
/// init reports the command's wait status as the kernel gave it, never an
/// exit code (a command that exits with 153, as a shell reports a child
/// ended by `SIGXFSZ`, or 137, `SIGKILL`'s, has exited). Nor can the
/// command's processes signal the init (PID 1 of their namespace, which
/// has no handler: the kernel drops every such signal, `SIGKILL` too), nor
/// trace it (it is not dumpable), nor write its status pipe (they never
/// hold it: descriptor 3 is closed in the command).
#[test]
fn the_jails_command_cannot_forge_a_signal_or_touch_its_init() {
    let jail = Jail::new().unwrap();
    let limits = at_the_default_limits();
    for code in [153, 137, 152] {
        let out = jail
            .run(&["/bin/sh", "-c", &format!("exit {code}")], &limits)
            .unwrap();
        assert_eq!(out.exit, JailExit::Exited(code), "{}", out.output);
    }
    let out = jail
        .run(
            &[
                "/bin/sh",
                "-c",
                "for s in TERM INT HUP XFSZ XCPU SEGV KILL STOP; do kill -s $s 1; done; \
                 echo 'signals sent'; (echo forged >&3) 2>/dev/null || echo 'no descriptor 3'; \
                 exit 3",
            ],
            &limits,
        )
        .unwrap();
    assert_eq!(out.exit, JailExit::Exited(3), "{}", out.output);
    assert!(out.output.contains("signals sent"), "{}", out.output);
    assert!(out.output.contains("no descriptor 3"), "{}", out.output);
    // A tracer in the jail cannot attach to the init (python's ctypes
    // calls ptrace itself: the jail has no strace).
    let out = jail
        .run(
            &[
                "/usr/bin/python3",
                "-c",
                "import ctypes, os\n\
                 libc = ctypes.CDLL(None, use_errno=True)\n\
                 r = libc.ptrace(16, 1, 0, 0)\n\
                 print('attach', r, os.strerror(ctypes.get_errno()))",
            ],
            &limits,
        )
        .unwrap();
    assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
    assert!(
        out.output.contains("attach -1 Operation not permitted"),
        "{}",
        out.output
    );
}

/// Red team G16: the server's jails share one tree (`compile-cpu`). A
/// compile's tools try to leave something in it for the next compile of
/// another team: a file at `/`, in `/dev`, `/bin` or `/usr`, a folder, a
/// device node, a link, `/bin` moved, `/dev/null` removed or opened up,
/// files in their `/work` and `/tmp`, and processes left running. Every
/// change is refused; the next jail (another team's) sees the same tree
/// as a jail made before, its `/work` and `/tmp` empty, and it is the same
/// tree (still intact: no new tree made, so no source can make the server
/// make trees endlessly). Run as root, and again as `nobody` (the
/// deployment's server, whose user owns the tree).
#[test]
fn a_compile_leaves_nothing_in_the_shared_tree_for_the_next_jail() {
    also_as_nobody("integrity::a_compile_leaves_nothing_in_the_shared_tree_for_the_next_jail");
    let limits = at_the_default_limits();
    let look = |jail: &Jail| {
        let out = jail
            .run(
                &[
                    "/bin/sh",
                    "-c",
                    "ls -A / /dev /tmp /work; readlink /bin /lib /lib64 /sbin; \
                     stat -c '%n %F %a %h %Y' / /dev /usr; stat -c '%n %F %a %h' /tmp /work; \
                     stat -c '%n %F %a %u %t:%T' /dev/null",
                ],
                &limits,
            )
            .unwrap();
        assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
        out.output
    };
    let before = Jail::new().unwrap();
    let seen_before = look(&before);
    assert!(
        seen_before.contains("/dev/null character special file 666")
            && seen_before.contains("/usr directory 755")
            && !seen_before.contains("No such file"),
        "{seen_before}"
    );
    let attacker = Jail::new().unwrap();
    let out = attacker
        .run(
            &[
                "/bin/sh",
                "-c",
                "for p in /x /dev/x /bin/x /usr/x /work/../x /tmp/../dev/x; do \
                   (echo left > $p) 2>/dev/null && echo \"wrote $p\"; done; \
                 (mkdir /dev/d) 2>/dev/null && echo 'made a folder'; \
                 (mknod /dev/zero2 c 1 5) 2>/dev/null && echo 'made a device'; \
                 (ln -s /work /dev/w) 2>/dev/null && echo 'made a link'; \
                 (mv /bin /b) 2>/dev/null && echo 'moved /bin'; \
                 (rm -f /dev/null) 2>/dev/null; [ -e /dev/null ] || echo 'removed /dev/null'; \
                 (chmod 777 /dev/null) 2>/dev/null && echo 'opened /dev/null'; \
                 (touch -d 2001-01-01 /dev /work) 2>/dev/null && echo 'dated'; \
                 echo left > /work/left && echo left > /tmp/left2 && echo 'own folder'; \
                 sleep 1000 & (sleep 1000 &); exit 0",
            ],
            &limits,
        )
        .unwrap();
    assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
    assert_eq!(out.output.trim(), "own folder", "{}", out.output);
    let next = Jail::new().unwrap();
    assert_eq!(
        next.path(),
        attacker.path(),
        "the same tree, not made again"
    );
    assert_eq!(next.path(), before.path());
    let seen_after = look(&next);
    assert_eq!(seen_after, seen_before);
    assert!(!seen_after.contains("left"), "{seen_after}");
}

/// Red team G16: the jail's init (`jail-init`) reports the command's own
/// status whatever the processes it starts do: an orphan (a double fork,
/// reparented to the init) that exits with 9 or kills itself with
/// `SIGXCPU` before the command ends is reaped and not reported; children
/// that outlive the command do not keep the init (the run ends with the
/// command, far before the wall of 900 s, and its status is the
/// command's, not the wall's).
#[test]
fn the_inits_report_is_the_commands_whatever_its_children_do() {
    also_as_nobody("integrity::the_inits_report_is_the_commands_whatever_its_children_do");
    let jail = Jail::new().unwrap();
    let limits = at_the_default_limits();
    let cases = [
        "(sh -c 'exit 9' &); sleep 0.3; exit 3",
        "(sh -c 'kill -s XCPU $$' &); sleep 0.3; exit 3",
        "sh -c 'exit 9' & wait; exit 3",
        "sleep 1717 & (sleep 1717 &); (sh -c 'sleep 1717; exit 9' &); exit 3",
        // A PID namespace of their own, nested in the jail's, is refused
        // (a chrooted process may not make a user namespace).
        "(unshare -Urpf sleep 1717 || echo refused) 2>/dev/null & wait; exit 3",
    ];
    for script in cases {
        let out = jail.run(&["/bin/sh", "-c", script], &limits).unwrap();
        assert_eq!(out.exit, JailExit::Exited(3), "{script}: {}", out.output);
        if script.contains("unshare") {
            assert_eq!(out.output.trim(), "refused");
        }
    }
    // Nothing the runs started is left on the host (the kernel ends a
    // PID namespace's processes, nested ones too, before its first
    // process is reaped).
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| c.windows(11).any(|w| w == b"sleep\x001717\x00"))
        .map(|c| String::from_utf8_lossy(&c).into_owned())
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

/// A Python that spins and says, after every 50 ms of its own CPU time,
/// how much it has used (its kernel's count, `process_time`); with an
/// argument, it makes `/work/done` once it has used that many seconds.
const SPINNER: &str = "import os, sys, time\n\
    done = float(sys.argv[1]) if len(sys.argv) > 1 else None\n\
    mark = 0.05\n\
    while True:\n\
    \x20   used = time.process_time()\n\
    \x20   if used >= mark:\n\
    \x20       os.write(1, b'spent %.3f\\n' % used)\n\
    \x20       mark += 0.05\n\
    \x20       if done is not None and used >= done and not os.path.exists('/work/done'):\n\
    \x20           open('/work/done', 'w').close()\n";

/// The CPU time the spinner said it had used last, in seconds.
fn spinner_said(output: &str) -> f64 {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("spent ")?.trim().parse::<f64>().ok())
        .fold(0.0, f64::max)
}

/// Whether this run of the test is the one without a control group (run
/// again as `nobody`, for whom the machine's control groups are not
/// writable), and if so that the jail indeed has none.
fn without_a_control_group(jail: &Jail) -> bool {
    let as_nobody = std::env::var_os(AS_ANOTHER_USER).is_some();
    if as_nobody {
        assert!(
            jail.group_dirs().is_empty(),
            "as nobody the jail has no control group: the path tried"
        );
    }
    as_nobody
}

/// Runs `script` (which starts the spinner) until the wall ends it, with a
/// wall long enough (doubled from 2 s, at most to 128 s) for the spinner
/// to have said 0.3 s of CPU: the run, and what the spinner said last.
fn run_spinner_to_the_wall(jail: &Jail, script: &str) -> (knobeln::sandbox::jail::JailOutput, f64) {
    jail.write_file("spin.py", SPINNER.as_bytes(), std::time::UNIX_EPOCH)
        .unwrap();
    let mut wall = Duration::from_secs(2);
    loop {
        let limits = JailLimits {
            wall,
            ..at_the_default_limits()
        };
        let out = jail.run(&["/bin/sh", "-c", script], &limits).unwrap();
        assert_eq!(out.exit, JailExit::WallClock, "{}", out.output);
        let said = spinner_said(&out.output);
        if said >= 0.3 || wall >= Duration::from_secs(128) {
            assert!(said >= 0.3, "the spinner never ran: {}", out.output);
            return (out, said);
        }
        wall *= 2;
    }
}

/// The run's CPU counts at least what the spinner said it used, and the
/// count is complete (`bare`: the jail had no control group).
fn assert_the_spinner_counted(out: &knobeln::sandbox::jail::JailOutput, said: f64, bare: bool) {
    assert!(
        out.cpu.as_secs_f64() >= said,
        "counted {:?}, the spinner said {said} s (without a control group: {bare})",
        out.cpu
    );
    assert_eq!(out.cpu_count, CpuCount::Complete);
}

/// A run the wall ends counts the CPU of every process it had, where the
/// jail has no control group too: at the wall the server asks the jail's
/// init, which kills every process of the namespace, reaps them (an
/// orphan is reparented to it) and says so; the kernel then counts each
/// one's CPU in the init's, which the server reads when it reaps the init.
/// Here a grandchild of the command (a Python under a shell under the
/// command) spins until the wall: the run's CPU is at least what the
/// spinner last said it had used, and is said complete. Run as root (the
/// jail's control group counts too) and again as `nobody` (no control
/// group: the init's count alone). Before, without a control group the
/// wall killed the init from outside and the kernel reaped the spinner
/// with the namespace, its CPU counted nowhere: the run's CPU was the
/// shells' few milliseconds.
#[test]
fn a_wall_ended_runs_cpu_counts_the_processes_it_ended() {
    also_as_nobody("integrity::a_wall_ended_runs_cpu_counts_the_processes_it_ended");
    let jail = Jail::new().unwrap();
    let bare = without_a_control_group(&jail);
    let (out, said) = run_spinner_to_the_wall(
        &jail,
        "/bin/sh -c '/usr/bin/python3 /work/spin.py & wait'; sleep 1000",
    );
    assert_the_spinner_counted(&out, said, bare);
}

/// The same when the command ends by itself: whatever it left running is
/// killed and reaped by the init, its CPU counted. Here the command starts
/// the spinner in the background, waits until it has used 0.3 s of CPU
/// and exits 0 while it spins. Before, without a control group, the init
/// exited with the command and the kernel reaped the spinner uncounted.
#[test]
fn a_runs_cpu_counts_what_its_command_left_running() {
    also_as_nobody("integrity::a_runs_cpu_counts_what_its_command_left_running");
    let jail = Jail::new().unwrap();
    let bare = without_a_control_group(&jail);
    jail.write_file("spin.py", SPINNER.as_bytes(), std::time::UNIX_EPOCH)
        .unwrap();
    let out = jail
        .run(
            &[
                "/bin/sh",
                "-c",
                "/usr/bin/python3 /work/spin.py 0.3 & \
                 while [ ! -e /work/done ]; do sleep 0.05; done; exit 0",
            ],
            &at_the_default_limits(),
        )
        .unwrap();
    assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
    let said = spinner_said(&out.output);
    assert!(said >= 0.3, "{}", out.output);
    assert_the_spinner_counted(&out, said, bare);
}

/// No process of the jail can keep the init from reaping at the wall, or
/// make it end the run early: it holds neither of the init's pipes (its
/// writes to descriptors 3 to 63 fail, its closes of them change nothing),
/// and of the signals it sends the init (every one from 1 to 64, over and
/// over, `SIGKILL`, `SIGSTOP` and a flood of `SIGCHLD` among them) the
/// kernel drops all but `SIGCHLD`, which only makes the init look for
/// ended children. The run still ends at the wall (not before), with the
/// spinner's CPU counted and the count complete. Run as root and as
/// `nobody` (no control group).
#[test]
fn a_jailed_process_cannot_keep_the_init_from_reaping() {
    also_as_nobody("integrity::a_jailed_process_cannot_keep_the_init_from_reaping");
    let jail = Jail::new().unwrap();
    let bare = without_a_control_group(&jail);
    let attack = "import os\n\
        for fd in range(3, 64):\n\
        \x20   try:\n\
        \x20       os.write(fd, b'x')\n\
        \x20       print('wrote', fd, flush=True)\n\
        \x20   except OSError:\n\
        \x20       pass\n\
        \x20   try:\n\
        \x20       os.close(fd)\n\
        \x20   except OSError:\n\
        \x20       pass\n\
        print('signalling', flush=True)\n\
        while True:\n\
        \x20   for sig in list(range(1, 65)) + [17] * 64:\n\
        \x20       try:\n\
        \x20           os.kill(1, sig)\n\
        \x20       except OSError:\n\
        \x20           pass\n";
    jail.write_file("attack.py", attack.as_bytes(), std::time::UNIX_EPOCH)
        .unwrap();
    let (out, said) = run_spinner_to_the_wall(
        &jail,
        "/usr/bin/python3 /work/attack.py & \
         /bin/sh -c '/usr/bin/python3 /work/spin.py & wait'; sleep 1000",
    );
    assert!(out.output.contains("signalling"), "{}", out.output);
    assert!(!out.output.contains("wrote"), "{}", out.output);
    assert_the_spinner_counted(&out, said, bare);
}

/// A bot's build (issue 38): its compiler is not the first process of the
/// build sandbox's PID namespace, which the kernel gives no signal of
/// default action, but the compile jail's init's child, so it stops at its
/// limits' signals, and the build's report says which limit in its words.
/// Each build command here is the tool itself (no shell before it): `dd`
/// writing past the build's file size limit (64 MiB: it seeks to 100 MiB)
/// ends by `SIGXFSZ`, "wrote a file larger than 67108864 bytes"; before,
/// as PID 1 it saw only `EFBIG` and exited 1 in its own words ("the
/// compiler reported errors (exit status 1)"). A Python spinning under a
/// CPU limit of 1 s is rejected for "more than 1 s of CPU time" (this
/// held before: the server's count, and `RLIMIT_CPU`'s `SIGKILL`, which
/// the kernel sends a PID 1 too). Run as root, and again as `nobody` (no
/// control group: the CPU is the init's count of what it reaped).
#[test]
fn a_bot_builds_tools_stop_at_their_file_size_and_cpu_limits() {
    use knobeln::lang::build::{build, Build, BuildLimits};
    use knobeln::lang::{choose, Language, LanguageTable, Toolchains};
    also_as_nobody("integrity::a_bot_builds_tools_stop_at_their_file_size_and_cpu_limits");
    let lang = |name: &str, compile: &str| -> Language {
        toml::from_str(&format!(
            "name = \"{name}\"\ntitle = \"A tool\"\nextensions = [\"{name}\"]\n\
             source = \"bot.{name}\"\ncompile = {compile}\n\
             compile_cpu_secs = 1\nartifacts = [\"run\"]\nrun = [\"/bot/run\"]\n\
             version = [\"/bin/sh\", \"-c\", \"echo 1\"]\n"
        ))
        .unwrap()
    };
    let table = LanguageTable::with(&[
        lang(
            "writer",
            r#"["dd", "if=/dev/zero", "of=big", "bs=1048576", "count=1", "seek=100"]"#,
        ),
        lang("spinner", r#"["python3", "-c", "while True: pass"]"#),
    ])
    .unwrap();
    let toolchains = Toolchains::resolve_only(&table, &["writer", "spinner"]);
    let limits = BuildLimits {
        wall: crate::common::TEST_JAIL_WALL,
        ..BuildLimits::default()
    };
    assert_eq!(
        limits.program_bytes,
        64 << 20,
        "the build's file size limit the test writes past"
    );
    let rejected = |name: &str| -> String {
        let tc = toolchains.get(name).unwrap().as_ref().unwrap();
        let choice = choose(&table, Some(&format!("bot.{name}")), None).unwrap();
        match build(tc, &choice.assumed, b"x\n", &limits) {
            Ok(Build::Rejected { report }) => report.text(),
            Ok(b) => panic!("{name} built:\n{}", b.report().text()),
            Err(e) => panic!("{name}: {e}"),
        }
    };
    let writer = rejected("writer");
    assert!(
        writer.contains("wrote a file larger than 67108864 bytes"),
        "{writer}"
    );
    let spinner = rejected("spinner");
    assert!(spinner.contains("more than 1 s of CPU time"), "{spinner}");
}

/// 16 MiB a file: a tool writing 17 MiB is stopped by `RLIMIT_FSIZE`
/// (`SIGXFSZ`, 25) with exactly 16 MiB written.
#[test]
fn a_tool_writing_17_mib_is_stopped_at_16_mib() {
    let jail = Jail::new().unwrap();
    let out = jail
        .run(
            &[
                "/bin/sh",
                "-c",
                "yes 0123456789abcdef | head -c 17825792 > big; echo \"head ended: $?\"; \
                 echo \"bytes: $(wc -c < big)\"",
            ],
            &at_the_default_limits(),
        )
        .unwrap();
    assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
    assert!(out.output.contains("head ended: 153"), "{}", out.output);
    assert!(out.output.contains("bytes: 16777216"), "{}", out.output);
}

/// The bytes of every file under `dir` on the host (links not followed).
fn host_bytes(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.path().symlink_metadata().unwrap();
        if meta.is_dir() {
            total += host_bytes(&entry.path());
        } else if meta.is_file() {
            total += meta.len();
        }
    }
    total
}

/// The work folder is a tmpfs of 64 MiB: a tool writing 15 MiB files, one
/// after the other, has four and 4 MiB of the fifth when its write fails
/// with `ENOSPC`; the report says the folder was full, and nothing of it
/// is on the host's disk.
#[test]
fn a_tool_writing_15_mib_files_stops_at_the_work_folders_64_mib() {
    assert_eq!(WORK_BYTES, 64 << 20, "the size security.md names");
    let jail = Jail::new().unwrap();
    let gcc = Gcc::new(&jail, at_the_default_limits());
    let script = "i=0; while [ $i -lt 10 ]; do \
                  yes 0123456789abcdef | head -c 15728640 > f$i || break; i=$((i+1)); done; \
                  echo \"files: $(ls | wc -l)\"; echo \"bytes: $(cat f* | wc -c)\"; \
                  echo \"host: $(ls /tmp | wc -l)\"; exit 1";
    let run = gcc.run_tool("sh", &["/bin/sh", "-c", script]).unwrap();
    assert!(
        run.messages.contains("No space left on device"),
        "{}",
        run.messages
    );
    assert!(run.messages.contains("files: 5"), "{}", run.messages);
    assert!(run.messages.contains("bytes: 67108864"), "{}", run.messages);
    // /tmp is the same folder (five files there too), not the host's.
    assert!(run.messages.contains("host: 5"), "{}", run.messages);
    let hit = run.limit_hit.expect("a limit");
    assert_eq!(hit.limit, ToolLimit::WorkFolder);
    assert_eq!(
        hit.sentence,
        "sh filled its work folder (its 64 MB) and failed: the program makes the compiler \
         write far more than a strategy needs; simplify it"
    );
    assert_eq!(host_bytes(jail.path()), 0, "nothing on the host's disk");
    // The server reads a file back with its cap (the 16 MiB a tool may
    // write): the 15 MiB file, never more.
    assert_eq!(gcc.get("f0").unwrap().len(), 15 << 20);
    assert!(
        jail.read_file("f0", 1 << 20).is_err(),
        "read beyond its cap"
    );
}

/// The work folder has 256 inodes (its root one of them): a tool making
/// empty files makes 255, and the report says the folder was full.
#[test]
fn a_tool_making_empty_files_stops_at_the_work_folders_256_inodes() {
    assert_eq!(WORK_INODES, 256, "the count security.md names");
    let jail = Jail::new().unwrap();
    let out = jail
        .run(
            &[
                "/bin/sh",
                "-c",
                "i=0; while [ $i -lt 100000 ]; do touch e$i || break; i=$((i+1)); done; \
                 echo \"made: $i\"; exit 1",
            ],
            &at_the_default_limits(),
        )
        .unwrap();
    assert_eq!(out.exit, JailExit::Exited(1), "{}", out.output);
    assert!(out.output.contains("made: 255"), "{}", out.output);
    assert!(
        out.output.contains("No space left on device"),
        "{}",
        out.output
    );
    assert_eq!(out.work_full, Some(WorkFull::Inodes));
    let gcc = Gcc::new(&jail, at_the_default_limits());
    let run = gcc
        .run_tool("sh", &["/bin/sh", "-c", "touch one_more; exit 1"])
        .unwrap();
    assert_eq!(
        run.limit_hit.expect("a limit").sentence,
        "sh filled its work folder (its 256 files) and failed: the program makes the compiler \
         write far more than a strategy needs; simplify it"
    );
    assert_eq!(host_bytes(jail.path()), 0, "nothing on the host's disk");
}

/// Set in the environment of this test's binary run again as `nobody`.
pub(crate) const AS_ANOTHER_USER: &str = "KNOBELN_TEST_AS_ANOTHER_USER";

/// Run as root, runs the test `name` of this binary again as `nobody`
/// through `setpriv` (the deployment's case: the server is not root) and
/// asserts that it passes; run as anyone else, or in that second run,
/// does nothing.
pub(crate) fn also_as_nobody(name: &str) {
    // SAFETY: a plain system call.
    if unsafe { libc::geteuid() } != 0 || std::env::var_os(AS_ANOTHER_USER).is_some() {
        return;
    }
    // `nobody` may not pass through the folders holding this binary
    // (a clone under /root): it runs a link to it (a copy on another
    // file system) in a folder it can read.
    let place = tempfile::tempdir().unwrap();
    std::fs::set_permissions(place.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = place.path().join("it");
    let this = std::env::current_exe().unwrap();
    if std::fs::hard_link(&this, &exe).is_err() {
        std::fs::copy(&this, &exe).unwrap();
    }
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&exe)
        .args(["--exact", name, "--test-threads=1", "--nocapture"])
        .env(AS_ANOTHER_USER, "1")
        .current_dir("/")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "as nobody: {said}");
    assert!(said.contains("1 passed"), "as nobody: {said}");
}

/// Outside its work folder the jail's tree is read-only, and a tool
/// cannot change its mounts: not under the jail's own uid (the server is
/// root) nor as its user namespace's root without capabilities (the server is not
/// root, as the deployment's unit runs it: this test, run as root, runs
/// itself again as `nobody` through `setpriv` to try that case too;
/// before the jail dropped the capabilities, the tool wrote `/escape`
/// onto the host's disk there).
#[test]
fn a_tool_cannot_write_the_jails_tree_or_change_its_mounts() {
    also_as_nobody("integrity::a_tool_cannot_write_the_jails_tree_or_change_its_mounts");
    let jail = Jail::new().unwrap();
    let out = jail
        .run(
            &[
                "/bin/sh",
                "-c",
                "mount -o remount,bind,rw / 2>&1 || echo 'no remount'; \
                 mount -t tmpfs none /work 2>&1 || echo 'no tmpfs'; \
                 for f in /escape /dev/escape /usr/escape; do touch $f 2>/dev/null || echo \"no $f\"; done; \
                 touch /work/inside && echo 'inside'; \
                 python3 -c \"$0\"",
                // Red team (F9): every mount holding files the tools can
                // run is `nosuid` (a set-user-ID file or one with file
                // capabilities, as a host's gst-ptp-helper with
                // cap_net_admin, gains nothing at exec; `/dev/null`, a
                // device, runs nothing), and the tool holds no capability.
                "import ctypes, os\n\
                 for p in ('/', '/usr', '/usr/lib', '/work', '/tmp'):\n\
                 \x20   print(('nosuid ' if os.statvfs(p).f_flag & os.ST_NOSUID else 'SUID ') + p)\n\
                 class H(ctypes.Structure): _fields_ = [('v', ctypes.c_uint32), ('pid', ctypes.c_int)]\n\
                 class D(ctypes.Structure): _fields_ = [('e', ctypes.c_uint32), ('p', ctypes.c_uint32), ('i', ctypes.c_uint32)]\n\
                 h = H(0x20080522, 0); d = (D * 2)()\n\
                 r = ctypes.CDLL(None).syscall(125, ctypes.byref(h), d)\n\
                 print('capget', r, 'caps', d[0].e | d[1].e | d[0].p | d[1].p | d[0].i | d[1].i)\n",
            ],
            &at_the_default_limits(),
        )
        .unwrap();
    for said in [
        "no remount",
        "no tmpfs",
        "no /escape",
        "no /dev/escape",
        "no /usr/escape",
        "inside",
        "nosuid /\n",
        "nosuid /usr\n",
        "nosuid /usr/lib\n",
        "nosuid /work\n",
        "nosuid /tmp\n",
        "capget 0 caps 0\n",
    ] {
        assert!(out.output.contains(said), "{said}: {}", out.output);
    }
    assert_eq!(host_bytes(jail.path()), 0, "nothing on the host's disk");
    assert!(!jail.path().join("root/escape").exists());
    assert!(jail.work_dir().join("inside").is_file());
}

/// A program the jail runs from a copy in huge pages (the zig
/// toolchain's, `knobeln::sandbox::held`; here the shell, held for the
/// test) is that copy, byte for byte, in the runs that start it, and no
/// tool can change it for the runs after: not write, grow, change the
/// mode of, remount or unmount it, under the jail's own uid (the server
/// is root: the copy is root's, mode 555, which refuses the tool already)
/// nor as its user namespace's root without capabilities (the server is
/// not root: the test runs itself again as `nobody`), where the copy's
/// file belongs to the run's root and only the read-only mount refuses
/// (with the mount left writable, that run changed the copy's mode). A
/// run that starts another program sees the host's file.
#[test]
fn a_program_run_from_its_copy_in_huge_pages_cannot_be_changed_by_a_tool() {
    also_as_nobody(
        "integrity::a_program_run_from_its_copy_in_huge_pages_cannot_be_changed_by_a_tool",
    );
    let dash = std::path::Path::new("/usr/bin/dash");
    let held = knobeln::sandbox::held::hold_now(dash).unwrap();
    assert_eq!(held.program, dash);
    let host = std::fs::read(dash).unwrap();
    let jail = Jail::new().unwrap();
    let attack = "stat -f -c 'on %T' /usr/bin/dash; \
                  echo x >> /usr/bin/dash 2>/dev/null || echo 'no append'; \
                  (: > /usr/bin/dash) 2>/dev/null || echo 'no truncate'; \
                  chmod 777 /usr/bin/dash 2>/dev/null || echo 'no chmod'; \
                  touch /usr/bin/dash 2>/dev/null || echo 'no touch'; \
                  sha256sum /usr/bin/dash; stat -c 'mode %a' /usr/bin/dash; \
                  python3 -c \"$0\"";
    // The mount calls themselves (the `mount` program needs `/proc`,
    // which the jail does not have): both refused for want of the right.
    let calls = "import ctypes, os\n\
                 libc = ctypes.CDLL(None, use_errno=True)\n\
                 r = libc.mount(b'none', b'/usr/bin/dash', None, 32 | 4096, None)\n\
                 print('remount', r, os.strerror(ctypes.get_errno()))\n\
                 r = libc.umount2(b'/usr/bin/dash', 0)\n\
                 print('umount', r, os.strerror(ctypes.get_errno()))\n";
    let run = |program: &str| {
        jail.run(&[program, "-c", attack, calls], &at_the_default_limits())
            .unwrap()
            .output
    };
    let digest = format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(&host));
    let mode = format!(
        "mode {:o}\n",
        std::fs::metadata(dash).unwrap().permissions().mode() & 0o7777
    );
    for round in 0..2 {
        let out = run("/usr/bin/dash");
        for said in [
            "on tmpfs\n",
            "no append",
            "no truncate",
            "no chmod",
            "no touch",
            "remount -1 Operation not permitted",
            "umount -1 Operation not permitted",
            &digest,
            "mode 555\n",
        ] {
            assert!(out.contains(said), "round {round}, {said}: {out}");
        }
    }
    // Another program's run sees the host's file, unchanged.
    let out = run("/bin/sh");
    assert!(!out.contains("on tmpfs"), "{out}");
    assert!(out.contains(&digest) && out.contains(&mode), "{out}");
    assert_eq!(std::fs::read(dash).unwrap(), host);
}

/// A file `name` in a folder under `/usr` (all the jail sees of the host)
/// of this test process's own, for `what` (another's removal of its
/// folder never meets this one's file): both removed when dropped. Root
/// only.
struct FileUnderUsr(std::path::PathBuf);

impl FileUnderUsr {
    fn new(what: &str, name: &str) -> FileUnderUsr {
        let dir = std::path::PathBuf::from(format!(
            "/usr/local/lib/knobeln-test-{what}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("root makes a folder under /usr/local");
        FileUnderUsr(dir.join(name))
    }
}

impl Drop for FileUnderUsr {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// A held program's copy is run only while its path names, unchanged, the
/// file that was copied: once the host's file is changed (a new version
/// installed while the server runs), its runs start the host's file, which
/// is what the compile's cache key (the file's size and times) describes.
/// Root only: the file is made under `/usr`, all the jail sees of the host.
#[test]
fn a_held_program_changed_on_the_host_is_run_from_the_host() {
    let under_usr = FileUnderUsr::new("held", "dash");
    let program = under_usr.0.clone();
    std::fs::copy("/usr/bin/dash", &program).unwrap();
    knobeln::sandbox::held::hold_now(&program).unwrap();
    let jail = Jail::new().unwrap();
    let path = program.to_str().unwrap();
    let on = |jail: &Jail| {
        let script = format!("stat -f -c 'on %T' {path}");
        jail.run(&[path, "-c", &script], &at_the_default_limits())
            .unwrap()
            .output
    };
    let before = on(&jail);
    assert!(before.contains("on tmpfs"), "{before}");
    // A new version: the same bytes, a newer date (the cache key's).
    let file = std::fs::File::options()
        .append(true)
        .open(&program)
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(file);
    let out = on(&jail);
    assert!(out.contains("on ") && !out.contains("on tmpfs"), "{out}");
}

/// A program that changes while it is copied is not held: a copy made
/// while another process writes into the file (a new version installed
/// over it, as a package manager's careless copy would) could be half of
/// each version, so the hold is refused (`HoldError::Changed`) and the
/// runs start the host's file. The writer overwrites bytes in place (the
/// size stays) from before the hold to after it; the hold compares the
/// file's identity, size and times before and after the copy. Root only:
/// the file is made under `/usr`.
#[test]
fn a_program_changed_while_it_is_copied_is_not_held() {
    use knobeln::sandbox::held::{hold, HoldError, MAX_HELD_BYTES};
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let under_usr = FileUnderUsr::new("changing", "program");
    let program = under_usr.0.clone();
    const SIZE: u64 = 64 << 20;
    std::fs::write(&program, vec![0x90u8; SIZE as usize]).unwrap();
    // Unchanged, the same file is held (the test's file is one a hold takes).
    assert_eq!(hold(&program, MAX_HELD_BYTES).unwrap().bytes, SIZE);
    let writing = AtomicBool::new(true);
    let writes = AtomicU64::new(0);
    let file = std::fs::File::options().write(true).open(&program).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            let page = [0xccu8; 4096];
            let mut at = 0u64;
            while writing.load(Ordering::Relaxed) {
                file.write_at(&page, at).unwrap();
                at = (at + 4096 * 97) % SIZE;
                writes.fetch_add(1, Ordering::Relaxed);
            }
        });
        // A hold whose copy the writer happened not to meet (descheduled
        // for all of it, under load) is held rightly: tried again, up to
        // five times, while the writer writes.
        let mut outcomes = Vec::new();
        for _ in 0..5 {
            let before = writes.load(Ordering::Relaxed);
            while writes.load(Ordering::Relaxed) == before {
                std::thread::yield_now();
            }
            match hold(&program, MAX_HELD_BYTES) {
                Err(HoldError::Changed(path)) => {
                    assert_eq!(path, program);
                    outcomes.push("changed");
                    break;
                }
                Err(e) => panic!("refused for another reason: {e}"),
                Ok(_) => outcomes.push("held"),
            }
        }
        writing.store(false, Ordering::Relaxed);
        assert_eq!(
            outcomes.last(),
            Some(&"changed"),
            "a file written during every copy was held: {outcomes:?}"
        );
    });
    assert_eq!(std::fs::metadata(&program).unwrap().len(), SIZE);
}

/// A program is held while other threads of the server start processes
/// (the compiles on the other thread, a match's bots): each such process
/// holds a copy of the server's descriptor table until it execs. The copy
/// was written through a descriptor of that table, so a process started
/// during the copy held it open for writing, and the mount could not be
/// made read-only (`EBUSY`: not held, every compile ran the tool from the
/// disk; one process in six of `knobeln bench scale --teams 60`). Now the
/// copy is written from a table of the copying child's own. Root only:
/// the file is made under `/usr`.
#[test]
fn a_program_is_held_while_other_threads_start_processes() {
    use knobeln::sandbox::held::{hold, MAX_HELD_BYTES};
    use std::os::unix::process::CommandExt;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let under_usr = FileUnderUsr::new("busy", "program");
    let program = under_usr.0.clone();
    std::fs::write(&program, vec![0x90u8; 16 << 20]).unwrap();
    let starting = AtomicBool::new(true);
    let started = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while starting.load(Ordering::Relaxed) {
                    let mut c = std::process::Command::new("/bin/true");
                    // Its copy of the table held 20 ms before its exec.
                    // SAFETY: a sleep is a system call, safe after a fork.
                    unsafe {
                        c.pre_exec(|| {
                            std::thread::sleep(Duration::from_millis(20));
                            Ok(())
                        });
                    }
                    assert!(c.status().unwrap().success());
                    started.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        while started.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        let before = started.load(Ordering::Relaxed);
        let mut outcomes = Vec::new();
        for _ in 0..30 {
            outcomes.push(hold(&program, MAX_HELD_BYTES).map(|h| h.bytes));
        }
        let during = started.load(Ordering::Relaxed) - before;
        starting.store(false, Ordering::Relaxed);
        assert!(during > 0, "no process started while the holds were made");
        for outcome in &outcomes {
            assert!(
                matches!(outcome, Ok(bytes) if *bytes == 16 << 20),
                "{:?}",
                outcomes
                    .iter()
                    .map(|o| o.as_ref().map_err(|e| e.to_string()))
                    .collect::<Vec<_>>()
            );
        }
    });
}

/// Red team (F9): what a tool leaves in its work folder never leads the
/// server elsewhere. The server reaches the folder through
/// `/proc/self/fd/N`, where a link a tool made resolves in the server's
/// own tree: a link named as gcc's output (to the host's `/etc/passwd`),
/// a link named as a file the server writes after the tools ran (the
/// runtime's object), a FIFO and a folder of those names are each an
/// error to the server, never followed, waited on or read; nothing lands
/// outside the folder. A hard link from the tree into the folder fails
/// (another file system).
#[test]
fn a_tool_cannot_lead_the_server_through_links_or_fifos_in_its_work_folder() {
    let jail = Jail::new().unwrap();
    let out = jail
        .run(
            &[
                "/bin/sh",
                "-c",
                "ln -s /etc/passwd strategy.o; ln -s /escape knobellib.wasm.o; \
                 mkfifo strategy.wasm.o; mkfifo strategy.wasm; mkdir strategy.i; \
                 ln /usr/bin/env hard 2>/dev/null || echo 'no hard link';",
            ],
            &at_the_default_limits(),
        )
        .unwrap();
    assert!(out.output.contains("no hard link"), "{}", out.output);
    let limits = at_the_default_limits();
    let gcc = Gcc::new(&jail, limits);
    for name in [
        "strategy.o",
        "strategy.wasm.o",
        "strategy.wasm",
        "strategy.i",
    ] {
        assert!(gcc.get(name).is_err(), "{name} read");
    }
    // The size the server asks of the preprocessed text: the folder's own
    // entry, not a target's.
    assert!(gcc.size("strategy.o").unwrap() < 100);
    for name in ["knobellib.wasm.o", "strategy.wasm.o", "strategy.i"] {
        assert!(gcc.put(name, b"runtime").is_err(), "{name} written");
    }
    assert!(!std::path::Path::new("/escape").exists());
    assert_eq!(host_bytes(jail.path()), 0, "nothing on the host's disk");
    // Names with folders are refused before anything is opened.
    for name in ["../x", "/etc/passwd", "..", ".", ""] {
        assert!(jail.read_file(name, 10).is_err(), "{name:?} read");
        assert!(
            jail.write_file(name, b"x", std::time::UNIX_EPOCH).is_err(),
            "{name:?} written"
        );
    }
}

/// 30 s of wall time, at its value: a tool that sleeps (using no CPU, so
/// no other limit can end it) is killed by the jail at the wall limit of
/// the compiles (`CompileConfig::default().jail`, `JailLimits::default()`).
/// The clock never gives a verdict: stopped before its CPU limit, the run
/// is a problem of the server's (`JailError::Overloaded`: a C tool runs
/// none of the program's code, so only load or a hung tool can make it
/// wait), which the participant is told as one, never a rejection.
#[test]
fn a_sleeping_tool_is_killed_at_the_30_s_wall_limit_as_the_servers_problem() {
    let limits = knobeln::toolchain::compile::CompileConfig::default().jail;
    assert_eq!(
        limits.wall,
        Duration::from_secs(30),
        "the limit security.md names"
    );
    assert_eq!(limits.wall, JailLimits::default().wall);
    let jail = Jail::new().unwrap();
    let gcc = Gcc::new(&jail, limits);
    let started = Instant::now();
    let err = gcc
        .run_tool(
            "sleep",
            &["/bin/sh", "-c", "echo asleep; sleep 100000; echo awake"],
        )
        .expect_err("the server's problem, not a verdict");
    assert!(
        started.elapsed() < Duration::from_secs(100),
        "killed at the wall"
    );
    let JailError::Overloaded {
        program, wall, cpu, ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(
        (program.as_str(), *wall),
        ("sleep", Duration::from_secs(30))
    );
    assert!(*cpu < Duration::from_secs(1), "{cpu:?}");
    assert!(
        err.to_string()
            .starts_with("sleep did not finish within 30 s of wall-clock time (0."),
        "{err}"
    );
}

/// The attack on the verdict is load: a tool that would finish within
/// its CPU limit, slowed past the wall by other work on the machine. Here
/// the wall is set below the work (0.3 s of wall for an endless loop with
/// 10 s of CPU allowed), as a machine busy enough would make it: the run
/// is the server's problem, never "did not finish" charged to the
/// program. Before, the report said "did not finish within … s", a
/// verdict that depended on the load. The CPU limit still gives one
/// (`a_loop_in_the_jail_is_killed_by_the_cpu_limit`).
#[test]
fn a_tool_slowed_past_the_wall_by_load_gets_no_verdict() {
    let limits = JailLimits {
        wall: Duration::from_millis(300),
        ..JailLimits::default()
    };
    let jail = Jail::new().unwrap();
    let gcc = Gcc::new(&jail, limits);
    let err = gcc
        .run_tool("gcc", &["/bin/sh", "-c", "while :; do :; done"])
        .expect_err("no verdict from the clock");
    assert!(
        matches!(&err, JailError::Overloaded { program, .. } if program == "gcc"),
        "{err}"
    );
}

/// Red team E12: the CPU limit is each process's (`RLIMIT_CPU`), the
/// run's CPU its finished processes' together: `cc1` near its 10 s, then
/// `as` slowed past the wall by load, passed 10 s between them with each
/// under it. Here two children of 0.7 s of CPU each under a limit of 1 s,
/// then a third that the wall stops (as the load would): no verdict.
/// Before, a run whose CPU passed the limit so was "did not finish within
/// … s", a rejection that depended on the load again. The two children's
/// CPU is counted although the wall ends the run: the shell that reaped
/// them dies with the namespace when its init is killed, reaped by the
/// kernel without adding its CPU to the init's, so the run's CPU is the
/// jail's control group's count where it has one (this test failed under
/// load once the jail had its init: 443 µs counted). The wall, 10 s, is
/// doubled (to at most 160 s) until both children finished before it: at
/// a load of 15 on two cores the first had used 0.5 s of its 0.7 by 10 s.
#[test]
fn a_run_whose_processes_together_passed_the_cpu_limit_gets_no_verdict_from_the_wall() {
    let jail = Jail::new().unwrap();
    let busy = "/usr/bin/python3 -c 'import time\nwhile time.process_time() < 0.7: pass'";
    let script = format!("rm -f /work/both; {busy}; {busy}; : > /work/both; exec sleep 100");
    let mut wall = Duration::from_secs(10);
    let (err, finished) = loop {
        let limits = JailLimits {
            cpu_secs: 1,
            wall,
            ..JailLimits::default()
        };
        let gcc = Gcc::new(&jail, limits);
        let err = gcc
            .run_tool("gcc", &["/bin/sh", "-c", &script])
            .expect_err("no verdict from the clock");
        let finished = jail.work_dir().join("both").exists();
        if finished || wall >= Duration::from_secs(160) {
            break (err, finished);
        }
        wall *= 2;
    };
    assert!(finished, "both children finished before a wall of {wall:?}");
    let JailError::Overloaded { program, cpu, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(program, "gcc");
    assert!(
        *cpu >= Duration::from_secs(1),
        "both children counted: {cpu:?}"
    );
}

/// 1 GiB of address space per process: a tool asking for 1.2 GiB is
/// refused it by `RLIMIT_AS` (Python's `MemoryError`), while 128 MiB is
/// granted (filled: within the jail's 256 MiB of memory too, where it
/// has a control group).
#[test]
fn a_tool_asking_for_more_than_1_gib_is_refused_it() {
    let jail = Jail::new().unwrap();
    let ask = |mib: u64| {
        jail.run(
            &[
                "/usr/bin/python3",
                "-c",
                &format!(
                    "import sys\ntry:\n    b = bytearray({mib} << 20)\n    print('granted', len(b))\n\
                     except MemoryError:\n    print('refused')\n    sys.exit(3)\n"
                ),
            ],
            &at_the_default_limits(),
        )
        .unwrap()
    };
    let small = ask(128);
    assert_eq!(small.exit, JailExit::Exited(0), "{}", small.output);
    assert!(
        small.output.contains("granted 134217728"),
        "{}",
        small.output
    );
    let large = ask(1229);
    assert_eq!(large.exit, JailExit::Exited(3), "{}", large.output);
    assert!(large.output.contains("refused"), "{}", large.output);
}

/// A jailed Python that writes 60 MiB into its work folder (four files of
/// 15 MiB, tmpfs pages nobody's rlimit counts), then starts four children
/// that each fill 100 MiB and hold it until all are started: 460 MiB at
/// once, every process far under its 1 GiB of address space.
const FILL_THE_FOLDER_AND_ALLOCATE: &str = "\
import os
for i in range(4):
    with open('/work/f%d' % i, 'wb') as f:
        f.write(b'\\1' * (15 << 20))
holds = []
held = 0
for i in range(4):
    r, w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(go_w)
        for k in holds:
            os.close(k)
        b = bytearray(b'x') * (100 << 20)
        os.write(w, b'1')
        os.read(go_r, 1)
        os._exit(0)
    os.close(w)
    os.close(go_r)
    if os.read(r, 1) == b'1':
        held += 1
    os.close(r)
    holds.append(go_w)
print('held', held, flush=True)
for k in holds:
    os.close(k)
for _ in holds:
    os.wait()
";

/// The jail's memory is counted where the kernel counts it: its tools'
/// pages and its work folder's tmpfs pages together, in a control group
/// of the jail's own (`memory.max`, no swap). A tool that fills 60 MiB of
/// its folder and then has four processes of 100 MiB each (each far under
/// its 1 GiB of address space: before, the jail held all 460 MiB) is
/// ended by the kernel's OOM killer at 256 MiB; the run counts the kill
/// from the group's `oom_kill` counter, the jail never held more than its
/// limit, and the report says so in words. Run as root, and again as
/// `nobody` through `setpriv`: where the server gets no memory controller
/// (not root on a v1 machine, no delegated v2 subtree), the jail says it is
/// not bounded as a whole and the rlimits alone hold (the case the
/// security model names).
#[test]
fn a_tool_filling_its_folder_and_allocating_is_stopped_at_the_jails_memory() {
    also_as_nobody(
        "integrity::a_tool_filling_its_folder_and_allocating_is_stopped_at_the_jails_memory",
    );
    let limits = at_the_default_limits();
    assert_eq!(limits.memory, 256 << 20, "the limit security.md names");
    let jail = Jail::new().unwrap();
    let out = jail
        .run(
            &["/usr/bin/python3", "-c", FILL_THE_FOLDER_AND_ALLOCATE],
            &limits,
        )
        .unwrap();
    if !jail.memory_limited() {
        assert!(
            // SAFETY: a plain system call.
            unsafe { libc::geteuid() } != 0,
            "as root the machine's control groups bound the jail"
        );
        assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
        assert!(out.output.contains("held 4"), "{}", out.output);
        assert_eq!((out.oom_kills, out.memory_peak), (0, None));
        return;
    }
    assert!(out.oom_kills >= 1, "{:?}: {}", out.exit, out.output);
    let peak = out.memory_peak.expect("the group's peak");
    assert!(
        peak <= limits.memory,
        "the jail held {peak} bytes at once, more than its {}",
        limits.memory
    );
    let gcc = Gcc::new(&jail, limits);
    let run = gcc
        .run_tool(
            "python3",
            &["/usr/bin/python3", "-c", FILL_THE_FOLDER_AND_ALLOCATE],
        )
        .unwrap();
    let hit = run.limit_hit.expect("a limit");
    assert_eq!(hit.limit, ToolLimit::Memory);
    assert!(
        hit.sentence.starts_with(
            "python3 needed more than 256 MiB of memory and was stopped: your program made the \
             compiler use more than 256 MiB"
        ),
        "{}",
        hit.sentence
    );
}

/// Each run of a jail has its own memory peak: the group's peak is reset
/// when a run begins, so a compile's early run near the limit (here a
/// Python holding 200 MiB of the 256) does not make a later run's peak
/// the limit, and an OOM kill of that later run while it held little is a
/// kill from outside (`KilledFromOutside`, the server's problem), never
/// the participant's rejection. Before, the peak was the group's since the
/// jail was made: the second run's was the first's 200 MiB and more
/// (red team E12).
#[test]
fn each_run_of_a_jail_has_its_own_memory_peak() {
    let limits = at_the_default_limits();
    let jail = Jail::new().unwrap();
    if !jail.memory_limited() {
        assert!(
            // SAFETY: a plain system call.
            unsafe { libc::geteuid() } != 0,
            "as root the machine's control groups bound the jail"
        );
        return;
    }
    let big = jail
        .run(
            &[
                "/usr/bin/python3",
                "-c",
                "b = b'x' * (200 << 20); print(len(b))",
            ],
            &limits,
        )
        .unwrap();
    assert_eq!(big.exit, JailExit::Exited(0), "{}", big.output);
    let first = big.memory_peak.expect("the group's peak");
    assert!(first >= 200 << 20, "{first}");
    let small = jail.run(&["/usr/bin/true"], &limits).unwrap();
    assert_eq!(small.exit, JailExit::Exited(0), "{}", small.output);
    let second = small.memory_peak.expect("the group's peak");
    assert!(
        second < 128 << 20,
        "the second run's peak is {second} bytes, the first's was {first}"
    );
    // A kill in that run would be one from outside.
    let killed = knobeln::sandbox::jail::JailOutput {
        oom_kills: 1,
        ..small
    };
    assert!(!killed.oom_kill_is_the_jails(limits.memory));
}

/// The jail's control group holds every process of each run and is
/// emptied after it, whatever the tools left (a process in a session of
/// its own, out of the command's process group, and one that ignores
/// every polite signal), and it is removed with the jail (its memory
/// with it: the work folder's pages are freed first).
#[test]
fn the_jails_control_group_is_emptied_after_each_run_and_removed_with_it() {
    let jail = Jail::new().unwrap();
    let dirs = jail.group_dirs();
    if !jail.memory_limited() {
        // SAFETY: a plain system call.
        assert!(
            unsafe { libc::geteuid() } != 0,
            "as root the jail has a group"
        );
        assert!(dirs.is_empty());
        return;
    }
    assert!(!dirs.is_empty());
    let script =
        "setsid sh -c 'trap \"\" HUP INT TERM; sleep 100000' </dev/null >/dev/null 2>&1 & \
                  sleep 100000 </dev/null >/dev/null 2>&1 & echo started";
    let out = jail
        .run(&["/bin/sh", "-c", script], &at_the_default_limits())
        .unwrap();
    assert!(out.output.contains("started"), "{}", out.output);
    for d in &dirs {
        let procs = std::fs::read_to_string(d.join("cgroup.procs")).unwrap();
        assert_eq!(procs.trim(), "", "{} after the run", d.display());
    }
    drop(jail);
    for d in &dirs {
        assert!(!d.exists(), "{} after the jail", d.display());
    }
}

/// A jailed tool that binds an abstract `AF_UNIX` name and a UDP port,
/// tells the server so, and waits to be let go, then leaves both sockets
/// in flight (sent over a socket pair that holds itself) when it ends.
const HOLD_SOCKETS: &str = "\
import os, socket, time
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
l.bind('\\0knobeln-jail-netns')
l.listen(1)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(('0.0.0.0', 4242))
open('/work/bound', 'w').close()
while not os.path.exists('/work/go'):
    time.sleep(0.01)
a, b = socket.socketpair()
socket.send_fds(a, [b'x'], [l.fileno(), u.fileno(), a.fileno(), b.fileno()])
print('left in flight')
";

/// A jailed tool looking for what `HOLD_SOCKETS` holds or left.
const PROBE_SOCKETS: &str = "\
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect('\\0knobeln-jail-netns')
    print('name connected')
except ConnectionRefusedError:
    print('name refused')
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.bind(('0.0.0.0', 4242))
    print('port free')
except OSError as e:
    print('port in use', e)
";

/// Each compile jail's runs share a network namespace of the jail's own
/// (as root one lent by the server's pool for the jail's life, instead of
/// one made and freed per run): a tool in another jail at the same time
/// cannot reach an abstract name or see a port a tool of this jail holds,
/// and what a tool leaves in it (both sockets in flight when it ends)
/// reaches no later jail: a namespace holding a socket is never lent
/// again. Run as root, and again as `nobody` through `setpriv` (a new
/// namespace per run).
#[test]
fn a_jails_network_namespace_is_its_own_and_carries_nothing_to_the_next() {
    also_as_nobody(
        "integrity::a_jails_network_namespace_is_its_own_and_carries_nothing_to_the_next",
    );
    let limits = JailLimits {
        wall: Duration::from_secs(120),
        ..JailLimits::default()
    };
    let probe = |jail: &Jail| {
        let out = jail
            .run(&["/usr/bin/python3", "-c", PROBE_SOCKETS], &limits)
            .unwrap();
        assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
        assert!(
            out.output.contains("name refused") && out.output.contains("port free"),
            "{}",
            out.output
        );
    };
    let holder = Jail::new().unwrap();
    // SAFETY: a plain system call.
    let root = unsafe { libc::geteuid() } == 0;
    assert_eq!(holder.lent_netns(), root, "as root the pool lends one");
    std::thread::scope(|s| {
        let held = s.spawn(|| {
            holder
                .run(&["/usr/bin/python3", "-c", HOLD_SOCKETS], &limits)
                .unwrap()
        });
        let bound = holder.work_dir().join("bound");
        while !bound.exists() && !held.is_finished() {
            std::thread::sleep(Duration::from_millis(10));
        }
        probe(&Jail::new().unwrap());
        holder.write_file("go", b"", std::time::UNIX_EPOCH).unwrap();
        let out = held.join().unwrap();
        assert_eq!(out.exit, JailExit::Exited(0), "{}", out.output);
        assert!(out.output.contains("left in flight"), "{}", out.output);
    });
    drop(holder);
    for _ in 0..4 {
        probe(&Jail::new().unwrap());
    }
}

/// A source within the lexical limits whose macros make gcc's
/// preprocessor hold ever more (`macro_bomb.c`: 2^N copies of a token) is
/// rejected by the jail's memory, in words ("your program made the
/// compiler use more than 256 MiB"), from the group's `oom_kill` counter,
/// never a server error; before, gcc's preprocessor grew to its 1 GiB of
/// address space (four times the jail's memory now) and said so. Without
/// a memory controller (run again as `nobody` on a cgroup v1 machine)
/// that per-process limit stops it, in its own words (or, on a busy
/// machine, its CPU or wall limit first).
#[test]
fn a_source_that_makes_the_preprocessor_balloon_is_rejected_for_the_jails_memory() {
    also_as_nobody(
        "integrity::a_source_that_makes_the_preprocessor_balloon_is_rejected_for_the_jails_memory",
    );
    let limited = Jail::new().unwrap().memory_limited();
    let mut src = std::fs::read(repo_path("tests/data/sources/macro_bomb.c")).unwrap();
    // A source no other test compiles (no module cache's outcome).
    src.extend_from_slice(b"\n/* the jail's memory */\n");
    let outcome = compile_source(&src, Profile::Local);
    assert!(!outcome.accepted());
    let errors: Vec<String> = outcome
        .report()
        .errors()
        .map(|e| e.message.clone())
        .collect();
    let wanted: &[&str] = if limited {
        &[
            "gcc needed more than 256 MiB of memory and was stopped: your program made the \
           compiler use more than 256 MiB",
        ]
    } else {
        // Growing to 1 GiB takes the preprocessor four times as long: on
        // a busy machine its CPU or wall limit may come first, as in
        // `macro_bomb_is_stopped_by_a_limit_with_a_clear_message`.
        &[
            "gcc needed more than 1024 MB of memory and was stopped",
            "gcc used more than 10 s of CPU time and was stopped",
            "gcc did not finish within 30 s and was stopped",
        ]
    };
    assert!(
        errors
            .iter()
            .any(|e| wanted.iter().any(|w| e.starts_with(w))),
        "{wanted:?}: {errors:#?}"
    );
}

/// Item 9. 26,000 distinct undefined functions: the report lists a sane
/// number of them and counts the rest, and stays small. Called from 260
/// functions of 100 calls each: one function of all 26,000 calls (ten
/// times the lexical limit) took `cc1 -O2` to 254 MiB, the jail's memory
/// limit to within a few pages, so that check 5 refused it for memory in
/// some runs, before any library check (a review found it after a
/// failure under load); 260 functions take it to about 100 MB.
#[test]
fn a_flood_of_problems_gives_a_short_report() {
    let mut src = String::new();
    for g in 0..260 {
        src.push_str(&format!("g{g}() {{\n"));
        for i in g * 100..g * 100 + 100 {
            src.push_str(&format!("f{i}();\n"));
        }
        src.push_str("}\n");
    }
    src.push_str("main() {\n");
    for g in 0..260 {
        src.push_str(&format!("g{g}();\n"));
    }
    src.push_str("for (;;) make_throw(1); }\n");
    assert!(src.len() < 256 * 1024);
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    let report = outcome.report();
    assert!(!outcome.accepted());
    let library: Vec<_> = report
        .errors()
        .filter(|d| d.check == Check::Library)
        .collect();
    assert!(library.len() <= 31, "{} errors listed", library.len());
    assert!(
        library
            .last()
            .unwrap_or_else(|| panic!(
                "no problem of the library check; the report's errors: {:#?}",
                report.errors().take(5).collect::<Vec<_>>()
            ))
            .message
            .contains("and 25970 more problems"),
        "{:?}",
        library.last()
    );
    let text = knobeln::report::compile_report(report, false, 10_000, None, &Default::default());
    assert!(text.len() < 32 * 1024, "a report of {} bytes", text.len());
}

/// Item 10. A compile request that fails inside the server (here: no
/// temporary folder for the jail) is answered at once and counted, but not
/// against the team's compiles of the hour: with one compile an hour, the
/// team's next request is compiled (before, it was refused as over the
/// limit: the server's trouble had spent the team's hour), and the one
/// after that is refused for the hour's compile.
#[test]
fn every_compile_request_is_answered_and_counted() {
    let c = Contest::new("[limits]\ncompiles_per_team_per_hour = 1\n");
    let auth = c.register_joe();
    let first = c.joe_compile(&auth);
    let out = c.ingest_env(&[&first], &[("TMPDIR", "/nonexistent/knobeln-tmp")]);
    assert!(out.status.success(), "{}", stdout_of(&out));
    let replies = c.replies();
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert!(
        replies[1].subject.contains("server problem"),
        "{}",
        replies[1].subject
    );
    assert!(replies[1].body.contains("problem on the server"));
    let second = c.joe_compile(&auth);
    c.ingest(&[&second]);
    let replies = c.replies();
    assert_eq!(replies.len(), 3);
    assert!(
        replies[2].body.contains("Result: ACCEPTED"),
        "the team keeps its compile: {}",
        replies[2].body
    );
    let third = c.joe_compile(&auth);
    c.ingest(&[&third]);
    let replies = c.replies();
    assert_eq!(replies.len(), 4);
    assert!(
        replies[3]
            .body
            .contains("compile requests within the last hour"),
        "{}",
        replies[3].body
    );
}

/// The other side: compile requests that each end as a server problem
/// (each can hold a jail up to its 30 s wall) are bounded apart, by
/// `server_problems_per_team_per_hour` (here 2; the team's compiles 20):
/// a flood of four from the team gets two server problems, then refusals
/// that run nothing and say the team's compiles were not counted, even
/// once the server could process them again, until the hour has room.
#[test]
fn compile_requests_ending_as_server_problems_are_bounded_apart() {
    let c = Contest::new("[limits]\nserver_problems_per_team_per_hour = 2\n");
    let auth = c.register_joe();
    let flood: Vec<_> = (0..3).map(|_| c.joe_compile(&auth)).collect();
    let refs: Vec<&std::path::Path> = flood.iter().map(|p| p.as_path()).collect();
    let out = c.ingest_env(&refs, &[("TMPDIR", "/nonexistent/knobeln-tmp")]);
    assert!(out.status.success(), "{}", stdout_of(&out));
    let fourth = c.joe_compile(&auth);
    c.ingest(&[&fourth]);
    let replies = c.replies();
    assert_eq!(replies.len(), 5, "{replies:?}");
    for r in &replies[1..3] {
        assert!(r.subject.contains("server problem"), "{}", r.subject);
    }
    for r in &replies[3..5] {
        assert!(!r.subject.contains("server problem"), "{}", r.subject);
        let body = r.body.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            body.contains("could not process 2 of your team's compile requests")
                && body.contains("did not count against your team's compiles"),
            "{body}"
        );
    }
}

/// Issue 23: the native programs an older version stored are rebuilt as
/// modules from their stored sources when a tournament runs, and then
/// play as before; a database without them is left alone.
#[test]
fn native_programs_of_an_older_version_are_rebuilt_as_modules() {
    use knobeln::store::{NewVersion, Store};
    let store = Store::open_in_memory().unwrap();
    let now = chrono::Utc::now();
    let source = std::fs::read(example_path()).unwrap();
    // What an older version stored: a native x86-64 program (its first
    // bytes are all the rebuild looks at; it is never run).
    let binary = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0".repeat(64);
    let team = store.ensure_team("old_timer", now).unwrap();
    let version = store
        .insert_version(
            &NewVersion {
                team,
                source: &source,
                source_sha256: "old",
                binary: Some(&binary),
                lexical_elements: None,
                description: None,
                report_json: "{}",
            },
            now,
        )
        .unwrap();
    let done = knobeln::engine::upgrade::rebuild_native_programs(&store, 1 << 20).unwrap();
    assert_eq!((done.rebuilt, done.failed), (1, 0));
    let module = store.version_binary(version).unwrap();
    assert!(knobeln::wasm::is_module(&module));
    let rebuilt = install(&module);
    let example = compile_file(&example_path());
    let cfg = config(300, 100_000_000, Duration::from_secs(10));
    assert_eq!(
        play(&cfg, &rebuilt, &example, 3),
        play(&cfg, &example, &example, 3),
        "the rebuilt program plays as the example does"
    );
    let again = knobeln::engine::upgrade::rebuild_native_programs(&store, 1 << 20).unwrap();
    assert_eq!((again.rebuilt, again.failed), (0, 0));
}

/// Issue 23: the attacks on the native build are contained by the
/// module's construction. A section name with a newline no longer injects
/// assembler directives (`.incbin` of a file of the build machine): clang
/// writes the object itself, and the module is what the C says; a C23
/// attribute in digraph spelling is refused.
#[test]
fn a_section_name_injects_nothing_into_a_module() {
    let src =
        "__attribute__((section(\".data\\n.incbin \\\"/usr/bin/true\\\"\\n.section .text\"))) \
               int x = 1;\nmain() { for (;;) make_throw(100 + x); }\n";
    let module = build_unchecked(src.as_bytes());
    assert!(
        module.len() < 4096,
        "{} bytes: something was included",
        module.len()
    );
    let s = install(&module);
    let constant = compile_file(&strategy_path("constant"));
    let rec = play(
        &config(10, 1_000_000, Duration::from_secs(5)),
        &s,
        &constant,
        1,
    );
    assert!(rec.failures.is_empty(), "{:?}", rec.failures);
    assert!(rec.throws.iter().all(|t| t[0] == 101));
    // The compile service refuses the attribute (check 2).
    assert!(!compile_source(src.as_bytes(), Profile::Local).accepted());
    let digraph = "<:<:gnu::section(\".data\\n.incbin \\\"/usr/bin/true\\\"\"):>:> int x = 1;\n\
                   main() { for (;;) make_throw(100 + x); }\n";
    assert!(!compile_source(digraph.as_bytes(), Profile::Local).accepted());
}
