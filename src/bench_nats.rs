//! `knobeln bench distributed --workers N`: what the queue costs, measured
//! against the local pool in the same run on the same machine.
//!
//! 1. A tournament of trivial strategies (1000-throw games; `--teams`: one
//!    group up to 41, a field of groups in rounds above) with the local
//!    pool (one thread per CPU), then through NATS with N `knobeln worker`
//!    processes sharing the same CPUs: the queue's overhead per game
//!    (goal: at most 5 %, on a field too).
//! 2. The coordinator's ceiling: a larger field answered at once by fake
//!    workers (`knobeln worker --fake`), against the engine and store alone
//!    (a runner in the same process that answers at once). The ceiling over
//!    one CPU's rate of real games says how many worker CPUs one
//!    coordinator can feed.
//!
//! The workers, the coordinator and the NATS server share this machine's
//! CPUs here; on real machines the workers have theirs. Because other work
//! on the machine distorts wall times, each kind of run also says where its
//! CPU went per game (`account.rs`: the engine's thread, the coordinator's
//! NATS thread, the workers' game threads and the rest of them, the NATS
//! server) and how many jobs and NATS messages a game took. Figures are
//! printed, never asserted.

mod account;
mod split;

pub use split::WallSplit;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_nats::jetstream;

use crate::bench::{cpu_time, games_played, trivial_tournament, CpuOf};
use crate::distributed::instant::InstantRunner;
use crate::distributed::wire::Discipline;
use crate::distributed::{
    ensure_queue, workers_consumer, DistributedError, NatsOptions, QueueSettings,
};
use crate::engine::pool::Runner;
use crate::engine::run::{run_tournament, run_tournament_with, Quiet};
use crate::engine::{EngineError, SystemClock};
use crate::referee::RefereeConfig;
use crate::toolchain::compile::{compile, CompileConfig, Outcome};

/// Figures of the distributed benchmark.
#[derive(Debug, Clone)]
pub struct DistributedBench {
    pub cpus: usize,
    pub n_teams: usize,
    pub n_games: usize,
    pub workers: usize,
    pub jobs_per_worker: usize,
    /// Runs of each kind; the best counts.
    pub rounds: usize,
    pub local: Duration,
    pub queue: Duration,
    pub ceiling_teams: usize,
    pub ceiling_games: usize,
    pub ceiling_queue: Duration,
    pub ceiling_engine: Duration,
    /// Where the CPU of every run of each kind went (summed over the runs).
    pub local_cpu: LocalCpu,
    pub queue_cpu: QueueCpu,
}

/// The CPU of the local pool's runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalCpu {
    /// Games played in these runs.
    pub games: usize,
    /// These runs' wall time, added up.
    pub wall: Duration,
    /// The engine's thread (the server's).
    pub engine: Duration,
    /// The pool's game threads.
    pub games_threads: Duration,
}

/// The CPU and messages of the queue's runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct QueueCpu {
    pub games: usize,
    /// These runs' wall time, added up.
    pub wall: Duration,
    /// The engine's thread in the coordinator's process.
    pub engine: Duration,
    /// The rest of the coordinator's process (its NATS session's thread).
    pub session: Duration,
    /// The workers' game threads.
    pub worker_games: Duration,
    /// The rest of the workers (their NATS and pulling threads).
    pub worker_rest: Duration,
    /// The NATS server (none when the bench was given one: `--nats`).
    pub nats: Option<Duration>,
    /// Jobs published and results sent (JetStream's sequence numbers).
    pub jobs: u64,
    pub results: u64,
    /// Messages into and out of the NATS server.
    pub nats_in: Option<u64>,
    pub nats_out: Option<u64>,
    /// The workers' game threads' time in these runs (the runs' wall time
    /// times the threads), and of it: on a CPU, and runnable but waiting
    /// for one; the rest they slept, waiting for games.
    pub game_threads_time: Duration,
    pub game_threads_running: Duration,
    pub game_threads_runnable: Duration,
}

impl DistributedBench {
    pub fn print(&self) {
        let rate = |n: usize, d: Duration| n as f64 / d.as_secs_f64();
        // Up to 41 teams are one group; more are a field of groups in rounds.
        let what = if self.n_teams <= 41 {
            "one group"
        } else {
            "a field (every round)"
        };
        println!(
            "distributed: {what} of {} trivial strategies, {} games of 1000 throws, {} CPUs \
             (best of {} runs each)",
            self.n_teams, self.n_games, self.cpus, self.rounds
        );
        println!(
            "local pool, {} threads:                {:>7.2} s {:>8.1} games/s",
            self.cpus,
            self.local.as_secs_f64(),
            rate(self.n_games, self.local)
        );
        let overhead = 100.0 * (self.queue.as_secs_f64() / self.local.as_secs_f64() - 1.0);
        let per_game_ms = (self.queue.as_secs_f64() - self.local.as_secs_f64()) * 1000.0
            / self.n_games as f64
            * self.cpus as f64;
        println!(
            "queue, {} worker(s) x {} game(s) at once: {:>7.2} s {:>8.1} games/s  \
             (overhead {overhead:.1} %, {per_game_ms:.2} ms CPU per game; goal: 5 %)",
            self.workers,
            self.jobs_per_worker,
            self.queue.as_secs_f64(),
            rate(self.n_games, self.queue)
        );
        let ceiling = rate(self.ceiling_games, self.ceiling_queue);
        let per = |d: Duration, n: usize| d.as_secs_f64() * 1000.0 / n.max(1) as f64;
        let l = &self.local_cpu;
        println!(
            "  CPU per game, local pool:  engine thread {:.3} ms, game threads {:.3} ms; all {:.3} ms",
            per(l.engine, l.games),
            per(l.games_threads, l.games),
            per(l.engine + l.games_threads, l.games)
        );
        let q = &self.queue_cpu;
        let all =
            q.engine + q.session + q.worker_games + q.worker_rest + q.nats.unwrap_or_default();
        println!(
            "  CPU per game, queue:       engine thread {:.3} ms, coordinator's NATS thread {:.3} ms, \
             workers' game threads {:.3} ms, workers' other threads {:.3} ms, nats-server {}; all {:.3} ms",
            per(q.engine, q.games),
            per(q.session, q.games),
            per(q.worker_games, q.games),
            per(q.worker_rest, q.games),
            q.nats
                .map_or("not measured".into(), |d| format!("{:.3} ms", per(d, q.games))),
            per(all, q.games)
        );
        let g = q.games.max(1) as f64;
        println!(
            "  messages per game, queue:  {:.3} jobs, {:.3} results (games per job {:.1}){}",
            q.jobs as f64 / g,
            q.results as f64 / g,
            g / q.jobs.max(1) as f64,
            match (q.nats_in, q.nats_out) {
                (Some(i), Some(o)) => format!(
                    ", NATS messages {:.2} in and {:.2} out",
                    i as f64 / g,
                    o as f64 / g
                ),
                _ => String::new(),
            }
        );
        let share = |d: Duration| {
            100.0 * d.as_secs_f64() / q.game_threads_time.as_secs_f64().max(f64::MIN_POSITIVE)
        };
        let asleep = q
            .game_threads_time
            .saturating_sub(q.game_threads_running + q.game_threads_runnable);
        println!(
            "  workers' game threads, queue: asleep (waiting for games) {:.1} % of the run, \
             on a CPU {:.1} %, waiting for one {:.1} %",
            share(asleep),
            share(q.game_threads_running),
            share(q.game_threads_runnable)
        );
        let local = split::Spent {
            games: l.games,
            wall: l.wall,
            engine: l.engine,
            game_threads: l.games_threads,
            ..split::Spent::default()
        };
        let queued = split::Spent {
            games: q.games,
            wall: q.wall,
            engine: q.engine,
            game_threads: q.worker_games,
            coordinator: q.session,
            workers_rest: q.worker_rest,
            nats: q.nats,
        };
        if let Some(s) = WallSplit::of(&local, &queued, self.cpus) {
            println!(
                "  the queue's wall over the pool's, all runs: {:+.1} % = the queue's own threads \
                 {:+.1} (coordinator's NATS thread {:+.1}, workers' other threads {:+.1}, \
                 nats-server {:+.1}) + engine thread {:+.1} + game threads {:+.1} + cores unused \
                 {:+.1} points ({:.1} % of the pool's core time, {:.1} % of the queue's); \
                 by CPU alone (no core unused, as on a quiet machine) {:+.1} %, of which the \
                 queue's own threads {:+.1}: on cores the games share, its floor",
                s.overhead,
                s.own_threads(),
                s.coordinator,
                s.workers_rest,
                s.nats,
                s.engine,
                s.game_threads,
                s.rest,
                s.rest_share[0],
                s.rest_share[1],
                s.cpu_over,
                s.own_threads_of_cpu
            );
        }
        println!(
            "coordinator ceiling, {} teams ({} games) answered at once by {} fake worker(s): \
             {:.2} s {:.0} games/s",
            self.ceiling_teams,
            self.ceiling_games,
            self.workers,
            self.ceiling_queue.as_secs_f64(),
            ceiling
        );
        println!(
            "  the engine and store alone (no queue):                        {:.2} s {:.0} games/s",
            self.ceiling_engine.as_secs_f64(),
            rate(self.ceiling_games, self.ceiling_engine)
        );
        let per_cpu = rate(self.n_games, self.local) / self.cpus as f64;
        println!(
            "one coordinator feeds about {:.0} worker CPUs playing such games \
             ({:.1} ms per game and CPU; heavier strategies need fewer games/s, so more CPUs)",
            ceiling / per_cpu,
            1000.0 / per_cpu
        );
    }
}

/// A `nats-server` of the benchmark's own, on a free port.
struct LocalNats {
    child: Child,
    url: String,
    /// Its monitoring port (`/varz`: messages in and out).
    monitor: u16,
}

impl LocalNats {
    fn start(dir: &Path) -> Result<LocalNats, DistributedError> {
        let free_port = || -> std::io::Result<u16> {
            Ok(std::net::TcpListener::bind("127.0.0.1:0")?
                .local_addr()?
                .port())
        };
        let port = free_port()?;
        let monitor = free_port()?;
        let child = nats_command(dir, port, monitor)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                DistributedError::JetStream(format!(
                    "cannot start nats-server ({e}): install it (Debian: nats-server) \
                     or pass --nats URL"
                ))
            })?;
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if start.elapsed() > Duration::from_secs(10) {
                return Err(DistributedError::JetStream(
                    "nats-server did not start".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(LocalNats {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            monitor,
        })
    }
}

/// The benchmark's `nats-server` on `port` (monitoring on `monitor`), its
/// store in `dir`, run as `deploy/README.md` advises.
fn nats_command(dir: &Path, port: u16, monitor: u16) -> Command {
    let mut cmd = Command::new("nats-server");
    // One Go thread: the server shares this machine's CPUs with the games,
    // and idle Go threads that spin for work take CPU from them.
    cmd.env("GOMAXPROCS", "1")
        // The Go collector less often: about a fifth of the server's CPU
        // went to collecting the answers' buffers (about 200 kB each) with
        // the default of 100 (the deploy README's advice, with its figures).
        .env("GOGC", NATS_GOGC)
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string()])
        .args(["-m", &monitor.to_string(), "-sd"])
        .arg(dir);
    cmd
}

/// The `GOGC` the deploy README advises for the NATS server.
pub const NATS_GOGC: &str = "400";

impl Drop for LocalNats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Worker processes, stopped (SIGTERM) on drop.
struct Workers(Vec<Child>);

impl Workers {
    fn start(
        exe: &Path,
        url: &str,
        n: usize,
        jobs: usize,
        fake: bool,
        cache: &Path,
    ) -> Result<Workers, DistributedError> {
        // Each worker gets its own CPUs, as `taskset -c` would give them:
        // otherwise every worker would pin its first game to the first CPU.
        let cpus = crate::sandbox::allowed_cpus();
        let per_worker = (cpus.len() / n.max(1)).max(1);
        let mut children = Vec::new();
        for i in 0..n {
            let mine: Vec<usize> = (0..per_worker)
                .map(|k| cpus[(i * per_worker + k) % cpus.len()])
                .collect();
            let mut cmd = Command::new(exe);
            with_affinity(&mut cmd, &mine);
            cmd.args(["worker", "--nats", url, "--jobs", &jobs.to_string()])
                .args(["--name", &format!("bench-{i}"), "--cache"])
                .arg(cache)
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if fake {
                cmd.arg("--fake");
            }
            children.push(cmd.spawn()?);
        }
        Ok(Workers(children))
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        }
        for c in &mut self.0 {
            let _ = c.wait();
        }
    }
}

/// Starts the command's process on these CPUs only.
fn with_affinity(cmd: &mut Command, cpus: &[usize]) {
    use std::os::unix::process::CommandExt;
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c % (libc::CPU_SETSIZE as usize), &mut set) };
    }
    // SAFETY: the closure only makes one system call (async-signal-safe).
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Creates the queue and waits until `n` workers are pulling from it, so
/// that the timing starts with every worker ready.
fn queue_ready(url: &str, settings: &QueueSettings, n: usize) -> Result<(), DistributedError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let options = NatsOptions {
            url: url.to_string(),
            ..NatsOptions::default()
        };
        let js = jetstream::new(options.connect("knobeln bench", false).await?);
        ensure_queue(&js, settings).await?;
        let stream = js
            .get_stream(crate::distributed::JOBS_STREAM)
            .await
            .map_err(|e| crate::distributed::queue::js_err("the jobs stream", e))?;
        let start = Instant::now();
        loop {
            let info = stream
                .consumer_info(workers_consumer(Discipline::Knobeln))
                .await
                .map_err(|e| crate::distributed::queue::js_err("the workers' consumer", e))?;
            if info.num_waiting >= n {
                return Ok(());
            }
            if start.elapsed() > Duration::from_secs(60) {
                return Err(DistributedError::JetStream(format!(
                    "only {} of {n} workers came",
                    info.num_waiting
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

/// Runs the benchmark: `exe` is the `knobeln` binary (for the workers),
/// `nats` a server to use (else one is started), `workers` worker processes.
pub fn distributed_bench(
    exe: &Path,
    nats: Option<&str>,
    n_teams: usize,
    workers: usize,
    rounds: usize,
) -> Result<DistributedBench, DistributedError> {
    let cpus = crate::sandbox::allowed_cpus().len();
    let workers = workers.max(1);
    let jobs_per_worker = (cpus / workers).max(1);
    let Outcome::Accepted { binary, .. } =
        compile(crate::bench::TRIVIAL_C.as_bytes(), &CompileConfig::local())
            .map_err(EngineError::from)?
    else {
        return Err(EngineError::Invalid("the trivial strategy does not compile".into()).into());
    };
    let dir = tempfile::tempdir()?;
    let server = match nats {
        Some(_) => None,
        None => Some(LocalNats::start(&dir.path().join("nats"))?),
    };
    let url = nats
        .map(str::to_string)
        .unwrap_or_else(|| server.as_ref().expect("started").url.clone());
    let options = NatsOptions {
        url: url.clone(),
        ..NatsOptions::default()
    };
    let clock = SystemClock;
    let cache: PathBuf = dir.path().join("cache");

    // 1. Real games: the local pool and the queue, alternately, `rounds`
    //    times each; the best of each counts (other load on the machine
    //    only ever makes a run slower).
    let settings = QueueSettings::default();
    let mut local = Duration::MAX;
    let mut queue = Duration::MAX;
    let mut n_games = 0;
    let mut local_cpu = LocalCpu::default();
    let mut queue_cpu = QueueCpu::default();
    {
        let worker_procs = Workers::start(exe, &url, workers, jobs_per_worker, false, &cache)?;
        queue_ready(&url, &settings, workers)?;
        let snapshot = || Snapshot::take(&worker_procs, server.as_ref());
        for round in 0..rounds.max(1) {
            let path = dir.path().join(format!("local{round}.db"));
            let (mut store, tid) = trivial_tournament(&path, n_teams, &binary)?;
            let before = snapshot();
            let t = Instant::now();
            run_tournament(&mut store, tid, cpus, &clock, &mut Quiet)?;
            let wall = t.elapsed();
            local = local.min(wall);
            local_cpu.wall += wall;
            let spent = snapshot().since(&before);
            n_games = games_played(&store, tid)?;
            local_cpu.games += n_games;
            local_cpu.engine += spent.engine;
            local_cpu.games_threads += spent.process.saturating_sub(spent.engine);

            let path = dir.path().join(format!("queue{round}.db"));
            let (mut store, tid) = trivial_tournament(&path, n_teams, &binary)?;
            let factory =
                crate::distributed::runner_factory(Some((options.clone(), settings)), tid, cpus);
            let (seqs, before) = (stream_sequences(&url), snapshot());
            let t = Instant::now();
            run_tournament_with(&mut store, tid, &*factory, &clock, &mut Quiet)?;
            let wall = t.elapsed();
            queue = queue.min(wall);
            queue_cpu.wall += wall;
            let spent = snapshot().since(&before);
            queue_cpu.game_threads_time += wall * spent.game_threads.threads as u32;
            queue_cpu.game_threads_running += spent.game_threads.running;
            queue_cpu.game_threads_runnable += spent.game_threads.runnable;
            let seqs_after = stream_sequences(&url);
            queue_cpu.games += games_played(&store, tid)?;
            queue_cpu.engine += spent.engine;
            queue_cpu.session += spent.process.saturating_sub(spent.engine);
            queue_cpu.worker_games += spent.workers.named;
            queue_cpu.worker_rest += spent.workers.rest;
            if let Some(n) = spent.nats {
                *queue_cpu.nats.get_or_insert_default() += n;
            }
            if let (Some((j0, r0)), Some((j1, r1))) = (seqs, seqs_after) {
                queue_cpu.jobs += j1.saturating_sub(j0);
                queue_cpu.results += r1.saturating_sub(r0);
            }
            if let Some((i, o)) = spent.nats_messages {
                *queue_cpu.nats_in.get_or_insert(0) += i;
                *queue_cpu.nats_out.get_or_insert(0) += o;
            }
        }
    }

    // 2. The coordinator's ceiling: fake workers, then no queue at all.
    let ceiling_teams = 120;
    let fast = QueueSettings {
        in_flight: 512,
        ..settings
    };
    let (mut store, tid) =
        trivial_tournament(&dir.path().join("ceiling.db"), ceiling_teams, &binary)?;
    let ceiling_queue = {
        let _workers = Workers::start(exe, &url, workers, 128, true, &cache)?;
        queue_ready(&url, &fast, workers)?;
        let factory = crate::distributed::runner_factory(Some((options, fast)), tid, cpus);
        let t = Instant::now();
        run_tournament_with(&mut store, tid, &*factory, &clock, &mut Quiet)?;
        t.elapsed()
    };
    let ceiling_games = games_played(&store, tid)?;
    let (mut store, tid) =
        trivial_tournament(&dir.path().join("engine.db"), ceiling_teams, &binary)?;
    let instant = |referee: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
        Ok(Box::new(InstantRunner::new(*referee)))
    };
    let t = Instant::now();
    run_tournament_with(&mut store, tid, &instant, &clock, &mut Quiet)?;
    let ceiling_engine = t.elapsed();
    drop(server);
    Ok(DistributedBench {
        cpus,
        n_teams,
        n_games,
        workers,
        jobs_per_worker,
        rounds,
        local,
        queue,
        ceiling_teams,
        ceiling_games,
        ceiling_queue,
        ceiling_engine,
        local_cpu,
        queue_cpu,
    })
}

/// The CPU used so far by each part of a run, and the NATS server's
/// message counts.
struct Snapshot {
    /// This thread (the engine's).
    engine: Duration,
    /// This whole process.
    process: Duration,
    /// The workers: their game threads (`referee-…`) and the rest.
    workers: account::SplitCpu,
    /// The workers' game threads, as the scheduler saw them.
    game_threads: account::Sched,
    nats: Option<Duration>,
    nats_messages: Option<(u64, u64)>,
}

impl Snapshot {
    fn take(workers: &Workers, server: Option<&LocalNats>) -> Snapshot {
        Snapshot {
            engine: cpu_time(CpuOf::Thread),
            process: cpu_time(CpuOf::Process),
            workers: workers
                .0
                .iter()
                .map(|c| account::process_cpu(c.id(), "referee-"))
                .fold(account::SplitCpu::default(), |a, b| a + b),
            game_threads: workers
                .0
                .iter()
                .map(|c| account::threads_sched(c.id(), "referee-"))
                .fold(account::Sched::default(), |a, b| a + b),
            nats: server.map(|s| {
                let c = account::process_cpu(s.child.id(), "");
                c.named + c.rest
            }),
            nats_messages: server.and_then(|s| account::nats_messages(s.monitor)),
        }
    }

    /// What was used between `before` and this one.
    fn since(&self, before: &Snapshot) -> Snapshot {
        Snapshot {
            engine: self.engine.saturating_sub(before.engine),
            process: self.process.saturating_sub(before.process),
            workers: self.workers - before.workers,
            game_threads: account::Sched {
                running: self
                    .game_threads
                    .running
                    .saturating_sub(before.game_threads.running),
                runnable: self
                    .game_threads
                    .runnable
                    .saturating_sub(before.game_threads.runnable),
                threads: self.game_threads.threads,
            },
            nats: self.nats.zip(before.nats).map(|(a, b)| a.saturating_sub(b)),
            nats_messages: self
                .nats_messages
                .zip(before.nats_messages)
                .map(|((i1, o1), (i0, o0))| (i1.saturating_sub(i0), o1.saturating_sub(o0))),
        }
    }
}

/// How many jobs and results have been published into the queue so far
/// (the last sequence numbers of the two streams); `None` if the server
/// cannot be asked.
fn stream_sequences(url: &str) -> Option<(u64, u64)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    rt.block_on(async {
        let options = NatsOptions {
            url: url.to_string(),
            ..NatsOptions::default()
        };
        let js = jetstream::new(options.connect("knobeln bench", false).await.ok()?);
        let last = |name: &'static str| {
            let js = js.clone();
            async move {
                let stream = js.get_stream(name).await.ok()?;
                Some(stream.get_info().await.ok()?.state.last_sequence)
            }
        };
        let jobs = last(crate::distributed::JOBS_STREAM).await?;
        let results = last(crate::distributed::RESULTS_STREAM).await?;
        Some((jobs, results))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchs_nats_server_runs_as_the_deploy_readme_advises() {
        let cmd = nats_command(Path::new("/tmp/x"), 4222, 8222);
        let env: Vec<_> = cmd.get_envs().collect();
        assert!(env.contains(&("GOGC".as_ref(), Some(NATS_GOGC.as_ref()))));
        assert!(env.contains(&("GOMAXPROCS".as_ref(), Some("1".as_ref()))));
        let readme = include_str!("../deploy/README.md");
        assert!(
            readme.contains(&format!("GOGC={NATS_GOGC}")),
            "deploy/README.md advises GOGC={NATS_GOGC}"
        );
    }
}
