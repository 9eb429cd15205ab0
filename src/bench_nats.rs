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
//! CPUs here; on real machines the workers have theirs. Figures are
//! printed, never asserted.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_nats::jetstream;

use crate::bench::{games_played, trivial_tournament};
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
}

impl LocalNats {
    fn start(dir: &Path) -> Result<LocalNats, DistributedError> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        // One Go thread: the server shares this machine's CPUs with the
        // games, and idle Go threads that spin for work take CPU from them.
        let child = Command::new("nats-server")
            .env("GOMAXPROCS", "1")
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(dir)
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
        })
    }
}

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
    {
        let _workers = Workers::start(exe, &url, workers, jobs_per_worker, false, &cache)?;
        queue_ready(&url, &settings, workers)?;
        for round in 0..rounds.max(1) {
            let path = dir.path().join(format!("local{round}.db"));
            let (mut store, tid) = trivial_tournament(&path, n_teams, &binary)?;
            let t = Instant::now();
            run_tournament(&mut store, tid, cpus, &clock, &mut Quiet)?;
            local = local.min(t.elapsed());
            n_games = games_played(&store, tid)?;

            let path = dir.path().join(format!("queue{round}.db"));
            let (mut store, tid) = trivial_tournament(&path, n_teams, &binary)?;
            let factory =
                crate::distributed::runner_factory(Some((options.clone(), settings)), tid, cpus);
            let t = Instant::now();
            run_tournament_with(&mut store, tid, &*factory, &clock, &mut Quiet)?;
            queue = queue.min(t.elapsed());
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
    })
}
