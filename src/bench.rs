//! Benchmarks that print figures (never asserted in tests): one game
//! against the machine's physical floor, measured in the same run.
//!
//! The floor is the raw round trip of a few bytes between two processes over
//! a pair of pipes, ×1000 (one per throw), with both processes on the same
//! CPU, as the referee keeps a game's three parties.

use std::time::{Duration, Instant};

use crate::referee::{GameSeeds, Referee, RefereeConfig};
use crate::sandbox::exe::Executable;
use crate::sandbox::pin_current_thread;
use crate::seed::SeedKey;
use crate::toolchain::compile::{compile, CompileConfig, CompileError, Outcome};

/// A trivial strategy: always the same throw, forever.
pub const TRIVIAL_C: &str = "main() { for (;;) make_throw(100); }\n";

/// A forked peer process connected by two pipes.
struct Peer {
    pid: libc::pid_t,
    /// Our write end (the peer's input).
    to: i32,
    /// Our read end (the peer's output).
    from: i32,
}

impl Peer {
    /// Forks a peer that runs `body(its input, its output)` and never returns.
    fn fork(body: fn(i32, i32) -> !) -> std::io::Result<Peer> {
        let mut to_child = [0i32; 2];
        let mut to_parent = [0i32; 2];
        // SAFETY: plain syscalls; the child only makes raw system calls.
        unsafe {
            if libc::pipe(to_child.as_mut_ptr()) != 0 || libc::pipe(to_parent.as_mut_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let pid = libc::fork();
            if pid < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if pid == 0 {
                libc::close(to_child[1]);
                libc::close(to_parent[0]);
                body(to_child[0], to_parent[1]);
            }
            libc::close(to_child[0]);
            libc::close(to_parent[1]);
            Ok(Peer {
                pid,
                to: to_child[1],
                from: to_parent[0],
            })
        }
    }

    fn write(&self, msg: &[u8]) {
        // SAFETY: valid fd and buffer.
        unsafe { libc::write(self.to, msg.as_ptr().cast(), msg.len()) };
    }

    fn read(&self, buf: &mut [u8]) {
        // SAFETY: valid fd and buffer.
        unsafe { libc::read(self.from, buf.as_mut_ptr().cast(), buf.len()) };
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // SAFETY: closing our fds ends the peer; then reap it.
        unsafe {
            libc::close(self.to);
            libc::close(self.from);
            libc::kill(self.pid, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(self.pid, &mut status, 0);
        }
    }
}

/// The median of `rounds` timings of `n` exchanges.
fn timed(n: usize, rounds: usize, mut exchange: impl FnMut()) -> Duration {
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = crate::sandbox::cpu::monotonic();
        for _ in 0..n {
            exchange();
        }
        times.push(crate::sandbox::cpu::monotonic() - t);
    }
    median(&mut times)
}

/// Median time of `rounds` × `n` pipe round trips between this process and a
/// forked echo child, both pinned to `cpu`.
pub fn pipe_round_trip(n: usize, rounds: usize, cpu: usize) -> std::io::Result<Duration> {
    pin_current_thread(cpu)?;
    fn echo(input: i32, output: i32) -> ! {
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: raw reads and writes on our pipes.
            unsafe {
                let r = libc::read(input, buf.as_mut_ptr().cast(), buf.len());
                if r <= 0 {
                    libc::_exit(0);
                }
                libc::write(output, buf.as_ptr().cast(), r as usize);
            }
        }
    }
    let peer = Peer::fork(echo)?;
    let mut buf = [0u8; 64];
    Ok(timed(n, rounds, || {
        peer.write(b"1234\n");
        peer.read(&mut buf);
    }))
}

/// Median time of `rounds` × `n` throws between this process (as a minimal
/// referee: blocking reads, no checks) and two forked children that behave
/// like strategies (seccomp strict mode, write a throw, read the answer), all
/// on `cpu`: the floor of any design with three processes per game.
pub fn three_party_floor(n: usize, rounds: usize, cpu: usize) -> std::io::Result<Duration> {
    pin_current_thread(cpu)?;
    let _tsc = crate::sandbox::cpu::TscOff::new();
    fn strategy(input: i32, output: i32) -> ! {
        // SAFETY: raw system calls only, as a locked-down strategy makes.
        unsafe {
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
            libc::prctl(libc::PR_SET_SECCOMP, 1, 0, 0, 0);
            let mut buf = [0u8; 64];
            loop {
                libc::write(output, b"100\n".as_ptr().cast(), 4);
                if libc::read(input, buf.as_mut_ptr().cast(), buf.len()) <= 0 {
                    libc::syscall(libc::SYS_exit, 0);
                }
            }
        }
    }
    let p = Peer::fork(strategy)?;
    let q = Peer::fork(strategy)?;
    let mut buf = [0u8; 64];
    Ok(timed(n, rounds, || {
        p.read(&mut buf);
        q.read(&mut buf);
        p.write(b"100\n");
        q.write(b"100\n");
    }))
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Figures of one benchmark run.
#[derive(Debug, Clone)]
pub struct GameBench {
    /// Raw two-process pipe round trip ×1000.
    pub floor: Duration,
    /// Minimal three-process exchange ×1000 (referee + two strategies).
    pub three_party: Duration,
    pub game_pinned: Duration,
    pub game_best: Duration,
    pub games: usize,
}

impl GameBench {
    pub fn ratio(&self) -> f64 {
        self.game_pinned.as_secs_f64() / self.floor.as_secs_f64()
    }

    pub fn print(&self) {
        println!(
            "raw pipe round trip x1000 (floor, same CPU): {:>8.3} ms",
            ms(self.floor)
        );
        println!(
            "minimal three-process exchange x1000:         {:>8.3} ms ({:.2}x the floor)",
            ms(self.three_party),
            self.three_party.as_secs_f64() / self.floor.as_secs_f64()
        );
        println!(
            "one 1000-throw game, median of {}:            {:>8.3} ms (best {:.3} ms)",
            self.games,
            ms(self.game_pinned),
            ms(self.game_best)
        );
        println!(
            "ratio game / floor:                          {:>8.2}x (goal: 1.5x)",
            self.ratio()
        );
        println!(
            "ratio game / three-process exchange:         {:>8.2}x",
            self.game_pinned.as_secs_f64() / self.three_party.as_secs_f64()
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Compiles the trivial strategy, measures the floors and `games` games, in
/// a thread of its own (it pins itself to one CPU; the caller stays free).
pub fn game_bench(games: usize) -> Result<GameBench, CompileError> {
    std::thread::scope(|s| {
        s.spawn(|| game_bench_here(games))
            .join()
            .expect("bench thread")
    })
}

fn game_bench_here(games: usize) -> Result<GameBench, CompileError> {
    let cpu = *crate::sandbox::allowed_cpus().first().unwrap_or(&0);
    let floor = pipe_round_trip(1000, 21, cpu)?;
    let three_party = three_party_floor(1000, 21, cpu)?;
    let Outcome::Accepted { binary, .. } = compile(TRIVIAL_C.as_bytes(), &CompileConfig::local())?
    else {
        return Err(CompileError::Runtime(
            "the trivial strategy does not compile".into(),
        ));
    };
    let trivial = Executable::from_bytes("knobeln-bench-trivial", &binary)?;
    let referee = Referee::new(RefereeConfig::default());
    pin_current_thread(cpu)?;
    let mut times = Vec::with_capacity(games);
    for i in 0..games.max(1) {
        let t = Instant::now();
        let g = referee
            .play([&trivial, &trivial], GameSeeds::public(i as u64))
            .map_err(|e| CompileError::Runtime(e.to_string()))?;
        times.push(t.elapsed());
        assert!(
            g.failures.is_empty(),
            "the trivial strategy failed: {:?}",
            g.failures
        );
    }
    let best = *times.iter().min().expect("one game");
    Ok(GameBench {
        floor,
        three_party,
        game_pinned: median(&mut times),
        game_best: best,
        games: games.max(1),
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
    let game_floor = game_bench(15)?.game_pinned;
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
