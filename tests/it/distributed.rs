//! Games played by workers through NATS JetStream (issue 15), end to end:
//! Debian's `nats-server` started by each test on a free port with file
//! storage in the test's folder, the coordinator (`knobeln tournament
//! --nats`) and the workers (`knobeln worker`) as separate processes. The
//! reference is always the same command without `--nats` (the local pool).
//!
//! The worker that is cut off runs in a network namespace of its own behind
//! a veth pair, and the link goes down (`ip link set … down`) and up again:
//! its TCP connection stalls as on a real network, nothing is closed.

use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");
const THROWS: &str = "200";
const SEED: u64 = 15;
/// The deployed config's workers (deploy/nats-server.conf) with the
/// passwords the tests give them.
const WORKERS: [Credential; 3] = [
    ("worker-1", "worker-1-secret"),
    ("worker-2", "worker-2-secret"),
    ("worker-3", "worker-3-secret"),
];
/// The credential a hostile test steals, and an honest worker's.
const STOLEN: Credential = WORKERS[0];
const HONEST: Credential = WORKERS[1];

/// A distinct small strategy `i` with its 15-line description: constants,
/// climbers, followers and gamblers (who sometimes throw 0: rescheduled
/// games and disqualifications).
fn source(i: usize) -> (String, String) {
    let description: String = (1..=15)
        .map(|l| format!("Line {l} of the description of test strategy {i} (issue 15).\n"))
        .collect();
    let (kind, body) = match i % 4 {
        0 => (
            "constant",
            format!("main() {{ for (;;) make_throw({}); }}", 100 + 7 * i),
        ),
        1 => (
            "climber",
            format!(
                "main() {{ int i, t; for (;;) {{ t = next_random({}, {}); \
                 for (i = 0; i < 8; i++) make_throw(t + i); }} }}",
                50 + i,
                3000 + 37 * i
            ),
        ),
        2 => (
            "follower",
            format!(
                "main() {{ int i, mine = {0}, yours = {0}; for (;;) {{ \
                 for (i = 0; i < 8; i++) {{ if (i > 0 && yours > mine && yours <= 12288) mine = yours; \
                 yours = make_throw(mine); }} mine = {0}; }} }}",
                64 + i
            ),
        ),
        _ => (
            "gambler",
            format!(
                "main() {{ int i, t, n = 0, fail_at = next_random(1, {}); for (;;) {{ \
                 t = next_random(50, 3000); for (i = 0; i < 8; i++, n++) \
                 make_throw(n == fail_at ? 0 : t + i); }} }}",
                700 + 10 * i
            ),
        ),
    };
    (
        format!("{kind}_{i:02}.c"),
        format!("#if 0\n{description}#endif\n{body}\n"),
    )
}

/// A folder with `n` distinct strategies.
fn field(dir: &Path, n: usize) -> PathBuf {
    let d = dir.join("strategies");
    std::fs::create_dir_all(&d).unwrap();
    for i in 0..n {
        let (name, text) = source(i);
        std::fs::write(d.join(name), text).unwrap();
    }
    d
}

fn tournament_args(strategies: &Path, db: &Path) -> Vec<String> {
    [
        "tournament",
        "--json",
        "--throws",
        THROWS,
        "--seed",
        &SEED.to_string(),
        "--strategies",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        strategies.display().to_string(),
        "--db".into(),
        db.display().to_string(),
    ])
    .collect()
}

/// The local run of an `n`-team field: its JSON and the compiled programs
/// (computed once per test run).
fn local_run(n: usize) -> (Value, Vec<Vec<u8>>) {
    type Runs = Mutex<HashMap<usize, (Value, Vec<Vec<u8>>)>>;
    static CACHE: OnceLock<Runs> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
    c.entry(n)
        .or_insert_with(|| {
            let tmp = tempfile::tempdir().unwrap();
            let dir = field(tmp.path(), n);
            let db = tmp.path().join("local.db");
            let out = Command::new(BIN)
                .args(tournament_args(&dir, &db))
                .args(["--jobs", "2"])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "local tournament: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let conn = rusqlite::Connection::open(&db).unwrap();
            let mut st = conn
                .prepare("SELECT binary FROM strategy_versions WHERE binary IS NOT NULL")
                .unwrap();
            let programs = st
                .query_map([], |r| r.get::<_, Vec<u8>>(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (serde_json::from_slice(&out.stdout).unwrap(), programs)
        })
        .clone()
}

/// The local run's JSON.
fn reference(n: usize) -> Value {
    local_run(n).0
}

/// A free TCP port on `host`.
fn free_port(host: &str) -> u16 {
    TcpListener::bind((host, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits for `what` (polling), failing the test after two minutes.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "gave up waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `coordinator` has exited, failing the test with `what`
/// and its stderr if it still runs after `limit` (a hung run).
fn wait_for_exit(coordinator: &mut Coordinator, limit: Duration, what: &str) {
    let start = Instant::now();
    while coordinator.running() {
        assert!(start.elapsed() < limit, "{what}: {}", coordinator.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A thread that works until it is told to stop (a flag it reads).
struct Stoppable<T> {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<T>,
}

impl<T: Send + 'static> Stoppable<T> {
    /// Starts `work` on a thread of its own, with its stop flag.
    fn spawn(work: impl FnOnce(&std::sync::atomic::AtomicBool) -> T + Send + 'static) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || work(&stop))
        };
        Stoppable { stop, thread }
    }

    /// Whether the work ended by itself.
    fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Tells the work to stop and waits for its result.
    fn stop(self) -> T {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().unwrap()
    }
}

/// A nats-server with JetStream (file storage under `dir`).
struct Nats {
    child: Option<Child>,
    host: String,
    port: u16,
    dir: PathBuf,
    config: Option<PathBuf>,
    env: Vec<(String, String)>,
}

impl Nats {
    fn start(dir: &Path, host: &str) -> Nats {
        let mut n = Nats {
            child: None,
            host: host.to_string(),
            port: free_port(host),
            dir: dir.join("nats"),
            config: None,
            env: Vec::new(),
        };
        n.run();
        n
    }

    /// With deploy/nats-server.conf, its listen address and store folder
    /// set for the test, and the passwords (the coordinator's, and
    /// [`WORKERS`]') in the environment.
    fn start_deployed(dir: &Path, coordinator_pw: &str) -> Nats {
        let port = free_port("127.0.0.1");
        let store = dir.join("nats");
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/nats-server.conf"),
        )
        .unwrap();
        assert!(text.contains("0.0.0.0:4222") && text.contains("\"/var/lib/nats\""));
        let text = text
            .replace("0.0.0.0:4222", &format!("127.0.0.1:{port}"))
            .replace("\"/var/lib/nats\"", &format!("\"{}\"", store.display()));
        let conf = dir.join("nats-server.conf");
        std::fs::write(&conf, text).unwrap();
        let mut n = Nats {
            child: None,
            host: "127.0.0.1".into(),
            port,
            dir: store,
            config: Some(conf),
            env: [(
                "KNOBELN_NATS_COORDINATOR_PASSWORD".to_string(),
                coordinator_pw.to_string(),
            )]
            .into_iter()
            .chain(WORKERS.iter().enumerate().map(|(i, (_, pw))| {
                (
                    format!("KNOBELN_NATS_WORKER_{}_PASSWORD", i + 1),
                    pw.to_string(),
                )
            }))
            .collect(),
        };
        n.run();
        n
    }

    /// With a config of the test's own (`PORT` and `STORE` filled in).
    fn start_config(dir: &Path, text: &str) -> Nats {
        let port = free_port("127.0.0.1");
        let store = dir.join("nats");
        let conf = dir.join("nats-server.conf");
        let text = text
            .replace("PORT", &port.to_string())
            .replace("STORE", &store.display().to_string());
        std::fs::write(&conf, text).unwrap();
        let mut n = Nats {
            child: None,
            host: "127.0.0.1".into(),
            port,
            dir: store,
            config: Some(conf),
            env: Vec::new(),
        };
        n.run();
        n
    }

    fn run(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.with_extension("log"))
            .unwrap();
        let mut cmd = Command::new("nats-server");
        match &self.config {
            Some(c) => {
                cmd.arg("-c").arg(c);
            }
            None => {
                cmd.args(["-js", "-a", &self.host, "-p", &self.port.to_string(), "-sd"])
                    .arg(&self.dir);
            }
        }
        let child = cmd
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("nats-server is installed (tests/run-all.sh installs it)");
        self.child = Some(child);
        let addr = format!("{}:{}", self.host, self.port);
        wait_until("nats-server to listen", || {
            TcpStream::connect(&addr).is_ok()
        });
    }

    fn url(&self) -> String {
        format!("nats://{}:{}", self.host, self.port)
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts the command on one CPU, the next in turn: several workers on one
/// machine get their CPUs from whoever starts them (as with `taskset -c`).
fn on_next_cpu(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let cpus = knobeln::sandbox::allowed_cpus();
    let cpu = cpus[NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % cpus.len()];
    // SAFETY: cpu_set_t is plain data; the closure makes one system call.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A worker's own looks for the queue two minutes apart: a run that
/// starts at once was heard of (the server's word of the queue's
/// creation), not looked for.
const LOOK_RARELY: &str = "--look-every-secs=120";

/// A `knobeln worker` process.
struct Worker {
    child: Child,
    log: PathBuf,
}

impl Worker {
    fn start(dir: &Path, url: &str, name: &str, extra: &[&str]) -> Worker {
        Worker::start_with(Command::new(BIN), dir, url, name, extra, &[])
    }

    /// A worker under its own NATS user (the deployed permissions), named
    /// after it.
    fn start_as(dir: &Path, url: &str, (user, password): Credential) -> Worker {
        Worker::start_with(
            Command::new(BIN),
            dir,
            url,
            user,
            &["--nats-user", user],
            &[("KNOBELN_NATS_PASSWORD", password)],
        )
    }

    fn start_with(
        mut cmd: Command,
        dir: &Path,
        url: &str,
        name: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Worker {
        let log = dir.join(format!("{name}.log"));
        on_next_cpu(&mut cmd);
        let child = cmd
            .args([
                "worker", "--nats", url, "--jobs", "1", "--name", name, "--cache",
            ])
            .arg(dir.join(format!("{name}-cache")))
            .args(extra)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Worker { child, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (at most 60 s) until the worker says it waits for a
    /// coordinator to create the queue: it has listened for the word of
    /// the queue's creation and looked for the queue once. A test that
    /// needs every worker to take part starts its run only then (the CI
    /// saw a worker slow to start under load find every game taken).
    /// `queue`: what the worker waits for first, "the queue" (the
    /// programs' store) for a worker that plays, each kind's queue ("the
    /// queue of bots games") for one that does not.
    fn wait_until_waiting_for(&self, queue: &str) {
        let until = Instant::now() + Duration::from_secs(60);
        let said = format!(": waiting for a coordinator to create {queue}\n");
        while !self.log().contains(&said) {
            assert!(Instant::now() < until, "not ready: {}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the worker was woken by the server's word of `queue`'s
    /// creation (not by a look of its own, which `--look-every-secs`
    /// makes rare).
    fn woken_by_the_creation_of(&self, queue: &str) -> bool {
        self.log()
            .contains(&format!(": {queue} created (woken by its creation)\n"))
    }

    fn terminate(&mut self) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A coordinator: `knobeln tournament --nats URL` in the background.
struct Coordinator {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

fn coordinator_args(strategies: &Path, db: &Path, url: &str, extra: &[&str]) -> Vec<String> {
    let mut args = tournament_args(strategies, db);
    args.extend(
        ["--nats", url, "--ack-wait-secs", "1"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string()),
    );
    args
}

impl Coordinator {
    fn start(dir: &Path, strategies: &Path, db: &Path, url: &str, extra: &[&str]) -> Coordinator {
        Coordinator::start_env(dir, strategies, db, url, extra, &[])
    }

    fn start_env(
        dir: &Path,
        strategies: &Path,
        db: &Path,
        url: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Coordinator {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stdout = dir.join(format!("coordinator{n}.json"));
        let stderr = dir.join(format!("coordinator{n}.err"));
        let child = Command::new(BIN)
            .args(coordinator_args(strategies, db, url, extra))
            .envs(env.iter().copied())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Coordinator {
            child,
            stdout,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Waits for the end; the JSON it printed.
    fn finish(mut self) -> (Value, String) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let err = self.stderr();
                assert!(status.success(), "the coordinator failed: {err}");
                // Shown with --nocapture: who played what.
                for l in err.lines().filter(|l| l.contains("workers of this run")) {
                    eprintln!("{l}");
                }
                let out = std::fs::read(&self.stdout).unwrap();
                return (serde_json::from_slice(&out).unwrap(), err);
            }
            assert!(
                start.elapsed() < Duration::from_secs(300),
                "the coordinator did not finish: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn count_games(db: &Path) -> i64 {
    let Ok(conn) = rusqlite::Connection::open(db) else {
        return 0;
    };
    conn.query_row("SELECT COUNT(*) FROM games", [], |r| r.get(0))
        .unwrap_or(0)
}

/// Every stored game is one slot's, once, and every game the results count
/// is stored.
fn assert_counted_once(db: &Path, results: &Value) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let dup: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM (SELECT 1 FROM games GROUP BY tournament_id, round, grp, slot \
             HAVING COUNT(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dup, 0, "a slot was stored twice");
    let played: usize = results["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["groups"].as_array().unwrap())
        .flat_map(|g| g["games"].as_array().unwrap())
        .filter(|g| g["status"] != "cancelled")
        .count();
    assert!(count_games(db) as usize >= played);
}

/// The coordinator's closing line: games per worker.
fn games_of(stderr: &str, worker: &str) -> u64 {
    let line = stderr
        .lines()
        .rfind(|l| l.contains("workers of this run:"))
        .unwrap_or_else(|| panic!("no worker report in {stderr}"));
    line.split(';')
        .find_map(|part| {
            let part = part
                .trim()
                .trim_start_matches("knobeln: workers of this run: ");
            part.strip_prefix(&format!("{worker}: "))
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn a_45_team_tournament_through_three_workers_equals_the_local_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 45);
    let expected = reference(45);
    assert_eq!(expected["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(expected["rounds"][0]["groups"].as_array().unwrap().len(), 2);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");

    // Worker w3's cache holds, under the name (hash) of every program, the
    // bytes of another program: it must notice and fetch the right ones.
    // (The coordinator compiles the same sources to the same programs as
    // the local run.)
    let programs = local_run(45).1;
    assert_eq!(programs.len(), 45);
    let poisoned = tmp.path().join("w3-cache");
    std::fs::create_dir_all(&poisoned).unwrap();
    for (i, p) in programs.iter().enumerate() {
        let other = &programs[(i + 1) % programs.len()];
        std::fs::write(poisoned.join(sha256_hex(p)), other).unwrap();
    }

    let workers: Vec<Worker> = ["w1", "w2", "w3"]
        .iter()
        .map(|w| Worker::start(tmp.path(), &nats.url(), w, &[]))
        .collect();
    let (got, err) = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]).finish();
    assert_eq!(got, expected, "{err}");
    assert_counted_once(&db, &got);
    assert!(
        games_of(&err, "w1") + games_of(&err, "w2") + games_of(&err, "w3") > 0,
        "{err}"
    );
    assert!(err.contains("; 0 games published again"), "{err}");
    assert!(
        workers[2]
            .log()
            .contains("does not match its SHA-256; fetching it again"),
        "w3 used its cache without checking: {}",
        workers[2].log()
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    knobeln::engine::prepare::sha256_hex(bytes)
}

#[test]
fn a_worker_killed_mid_round_loses_nothing_and_counts_nothing_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 45);
    let expected = reference(45);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let mut victim = Worker::start(tmp.path(), &nats.url(), "victim", &[]);
    let mut coordinator = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    // The victim plays alone until it has games in hand, then others join.
    wait_until("the victim to play 50 games", || count_games(&db) >= 50);
    let _w2 = Worker::start(tmp.path(), &nats.url(), "w2", &[]);
    let _w3 = Worker::start(tmp.path(), &nats.url(), "w3", &[]);
    wait_until("100 games", || count_games(&db) >= 100);
    assert!(coordinator.running(), "finished before the kill");
    victim.child.kill().unwrap(); // SIGKILL, with jobs in hand
    victim.child.wait().unwrap();
    let (got, err) = coordinator.finish();
    assert_eq!(got, expected, "{err}");
    assert_counted_once(&db, &got);
    assert!(games_of(&err, "victim") >= 50, "{err}");
    assert!(games_of(&err, "w2") + games_of(&err, "w3") > 0, "{err}");
    // Its jobs came back by JetStream's redelivery: none was lost.
    assert!(err.contains("; 0 games published again"), "{err}");
}

#[test]
fn a_second_sigterm_stops_a_worker_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 45);
    let mut nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let mut worker = Worker::start(tmp.path(), &nats.url(), "w1", &[]);
    let _coordinator = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    wait_until("20 games", || count_games(&db) >= 20);
    // The server goes: the worker cannot deliver what it plays now, and a
    // graceful stop waits up to 30 s for that.
    nats.kill();
    std::thread::sleep(Duration::from_millis(500));
    let pid = worker.child.id() as i32;
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        worker.child.try_wait().unwrap().is_none(),
        "the worker did not wait for the job it holds: {}",
        worker.log()
    );
    let again = Instant::now();
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    while worker.child.try_wait().unwrap().is_none() {
        assert!(
            again.elapsed() < Duration::from_secs(10),
            "a second SIGTERM did not stop the worker: {}",
            worker.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        worker.log().contains("stopping at once"),
        "{}",
        worker.log()
    );
}

#[test]
fn a_coordinator_killed_mid_round_resumes_to_identical_results() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 45);
    let expected = reference(45);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let _w1 = Worker::start(tmp.path(), &nats.url(), "w1", &[]);
    let _w2 = Worker::start(tmp.path(), &nats.url(), "w2", &[]);
    let mut first = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    wait_until("100 games", || count_games(&db) >= 100);
    assert!(first.running(), "finished before the kill");
    first.kill();
    let stored = count_games(&db);
    assert!(stored < 529, "killed in round 1 ({stored} games)");
    // The same command again: a new session; the old one's jobs are dropped.
    let (got, err) = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]).finish();
    assert!(err.contains("resuming tournament"), "{err}");
    assert_eq!(got, expected, "{err}");
    assert_counted_once(&db, &got);
}

#[test]
fn a_restarted_nats_server_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 45);
    let expected = reference(45);
    let mut nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let _w1 = Worker::start(tmp.path(), &nats.url(), "w1", &[]);
    let _w2 = Worker::start(tmp.path(), &nats.url(), "w2", &[]);
    let mut coordinator = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    wait_until("100 games", || count_games(&db) >= 100);
    assert!(coordinator.running(), "finished before the restart");
    nats.kill(); // SIGKILL: jobs, results and programs are in its files
    let stored = count_games(&db);
    std::thread::sleep(Duration::from_millis(500));
    nats.run();
    let (got, err) = coordinator.finish();
    assert!(stored < 529, "restarted in round 1 ({stored} games)");
    assert_eq!(got, expected, "{err}");
    assert_counted_once(&db, &got);
}

/// A network namespace with a veth pair to the host, removed on drop.
struct Netns {
    name: String,
    host_if: String,
    host_ip: String,
}

impl Netns {
    fn create() -> Netns {
        let id = std::process::id() % 10000;
        let name = format!("knobeln-t{id}");
        let host_if = format!("knh{id}");
        let peer_if = format!("knp{id}");
        let net = 64 + (std::process::id() % 120);
        let host_ip = format!("10.215.{net}.1");
        let peer_ip = format!("10.215.{net}.2");
        let ip = |args: &[&str]| {
            let out = Command::new("ip")
                .args(args)
                .output()
                .expect("ip (iproute2)");
            assert!(
                out.status.success(),
                "ip {}: {} (this test needs root for network namespaces)",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        ip(&["netns", "add", &name]);
        let ns = Netns {
            name: name.clone(),
            host_if: host_if.clone(),
            host_ip: host_ip.clone(),
        };
        ip(&[
            "link", "add", &host_if, "type", "veth", "peer", "name", &peer_if,
        ]);
        ip(&["link", "set", &peer_if, "netns", &name]);
        ip(&["addr", "add", &format!("{host_ip}/30"), "dev", &host_if]);
        ip(&["link", "set", &host_if, "up"]);
        let inside = |args: &[&str]| {
            let mut a = vec!["netns", "exec", &name, "ip"];
            a.extend_from_slice(args);
            ip(&a);
        };
        inside(&["addr", "add", &format!("{peer_ip}/30"), "dev", &peer_if]);
        inside(&["link", "set", &peer_if, "up"]);
        inside(&["link", "set", "lo", "up"]);
        ns
    }

    fn command(&self) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, BIN]);
        c
    }

    fn link(&self, up: bool) {
        let out = Command::new("ip")
            .args(["link", "set", &self.host_if, if up { "up" } else { "down" }])
            .output()
            .unwrap();
        assert!(out.status.success());
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_if])
            .output();
    }
}

#[test]
fn a_worker_cut_off_and_back_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 45);
    let expected = reference(45);
    let ns = Netns::create();
    let nats = Nats::start(tmp.path(), &ns.host_ip);
    let db = tmp.path().join("coordinator.db");
    // The remote worker plays alone at first.
    let remote = Worker::start_with(ns.command(), tmp.path(), &nats.url(), "remote", &[], &[]);
    let mut coordinator = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    wait_until("the remote worker to play 100 games", || {
        count_games(&db) >= 100
    });
    ns.link(false);
    let cut = Instant::now();
    let cut_at = count_games(&db);
    // Its games in hand come back after ack_wait (1 s); a local worker
    // plays them and more, then leaves (SIGTERM: it finishes what it holds).
    let mut local = Worker::start(tmp.path(), &nats.url(), "local", &[]);
    wait_until("the local worker to play 150 games", || {
        count_games(&db) >= cut_at + 150
    });
    local.terminate();
    assert!(local.log().contains("stopped"), "{}", local.log());
    assert!(coordinator.running(), "finished while the link was down");
    // The link stays down well past ack_wait.
    std::thread::sleep(Duration::from_secs(3).saturating_sub(cut.elapsed()));
    // The link comes back: the remote worker alone must finish.
    ns.link(true);
    let (got, err) = coordinator.finish();
    assert_eq!(got, expected, "{err}");
    assert_counted_once(&db, &got);
    // Of the 150 games counted after the cut, a few may be the remote
    // worker's, sent just before the link went down (seen: 146 local).
    assert!(games_of(&err, "local") >= 120, "{err}");
    assert!(
        games_of(&err, "remote") > cut_at as u64,
        "the remote worker played nothing after the link came back: {err}\n{}",
        remote.log()
    );
}

#[test]
fn a_worker_that_cannot_play_is_reported_and_its_games_go_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 8);
    let expected = reference(8);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let broken = Worker::start(tmp.path(), &nats.url(), "broken", &["--faulty"]);
    let coordinator = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    wait_until("the broken worker to be reported and to pause", || {
        coordinator
            .stderr()
            .contains("worker broken keeps failing games for infrastructure reasons")
            && broken.log().contains("taking no games for 30 s")
    });
    assert_eq!(count_games(&db), 0, "a faulty worker's game was counted");
    let _good = Worker::start(tmp.path(), &nats.url(), "good", &[]);
    let (got, err) = coordinator.finish();
    // Nobody was disqualified or failed for the broken worker's faults.
    assert_eq!(got, expected, "{err}");
    let report = err
        .lines()
        .rfind(|l| l.contains("workers of this run"))
        .unwrap();
    // Three jobs (of up to eight games each) before it paused, and those
    // it pulled meanwhile: every game of them reported, none played.
    let faults: u64 = report
        .split("broken: 0 games, ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(faults >= 3, "{err}");
    assert!(err.contains("(an infrastructure fault, not the participants'"));
}

/// A game that panics on a worker's game thread (a bug in the engine)
/// loses that game only: the other games of its job are answered, the one
/// is played again, and the results are the local run's.
#[test]
fn a_game_that_panics_on_a_worker_loses_that_game_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 8);
    let expected = reference(8);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let worker = Worker::start(tmp.path(), &nats.url(), "w", &["--panic-in-game", "2"]);
    let (got, err) = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]).finish();
    assert_eq!(got, expected, "{err}");
    assert_counted_once(&db, &got);
    let report = err
        .lines()
        .rfind(|l| l.contains("workers of this run"))
        .unwrap();
    // One fault (the game that panicked), not one per game of its job.
    assert!(
        report.contains(", 1 infrastructure faults (last: the game panicked"),
        "{report}"
    );
    assert!(
        worker.log().contains("--panic-in-game 2"),
        "{}",
        worker.log()
    );
}

/// How a stand-in for a worker treats the one job it takes.
#[derive(Clone, Copy)]
enum TakeJob {
    /// Answers only its first game (a fault): a broken or older worker.
    AnswerInPart,
    /// Answers nothing: as if the queue lost the job, or the result, in a
    /// server's restart.
    Lose,
}

/// The KNOBELN workers' consumer of the jobs, once the queue has it.
async fn knobeln_workers_consumer(
    js: &async_nats::jetstream::Context,
) -> Option<async_nats::jetstream::consumer::Consumer<async_nats::jetstream::consumer::pull::Config>>
{
    js.get_stream("KNOBELN_JOBS")
        .await
        .ok()?
        .get_consumer(&knobeln::distributed::workers_consumer(
            knobeln::distributed::wire::Discipline::Knobeln,
        ))
        .await
        .ok()
}

/// The KNOBELN workers' consumer of the jobs, waiting for the queue to
/// have it (failing the test after a minute: no queue came).
async fn the_workers_consumer(
    js: &async_nats::jetstream::Context,
) -> async_nats::jetstream::consumer::Consumer<async_nats::jetstream::consumer::pull::Config> {
    let start = Instant::now();
    loop {
        if let Some(c) = knobeln_workers_consumer(js).await {
            return c;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no queue came");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The next batch of at most `max` jobs of the queue (waiting 200 ms for
/// them), or `None` if the queue has no workers' consumer yet (after a
/// pause of 100 ms) or the fetch failed: the loops of the tests' thieves
/// and forgers try again.
async fn next_jobs(
    js: &async_nats::jetstream::Context,
    max: usize,
) -> Option<async_nats::jetstream::consumer::pull::Batch> {
    let Some(consumer) = knobeln_workers_consumer(js).await else {
        tokio::time::sleep(Duration::from_millis(100)).await;
        return None;
    };
    consumer
        .fetch()
        .max_messages(max)
        .expires(Duration::from_millis(200))
        .messages()
        .await
        .ok()
}

/// Takes one job from the queue as `how` says, acknowledges it, and says
/// how many games it held.
fn take_one_job(url: &str, how: TakeJob) -> usize {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use async_nats::jetstream;
        use futures_util::StreamExt;
        let js = jetstream::new(async_nats::connect(url).await.unwrap());
        let consumer = the_workers_consumer(&js).await;
        let mut batch = consumer.fetch().max_messages(1).messages().await.unwrap();
        let msg = loop {
            if let Some(m) = batch.next().await {
                break m.unwrap();
            }
            batch = consumer.fetch().max_messages(1).messages().await.unwrap();
        };
        // Jobs are binary (since format 8): read as the worker reads them.
        let job = knobeln::distributed::wire::JobMessage::decode(&msg.payload).unwrap();
        let job: Value = serde_json::to_value(job).unwrap();
        let games = job["games"].as_array().unwrap();
        assert!(games.len() > 1, "a job of one game: {job}");
        if let TakeJob::Lose = how {
            // Confirmed by the server before the connection goes.
            msg.double_ack().await.unwrap();
            return games.len();
        }
        let answer = serde_json::json!({
            "format": job["format"], "session": job["session"], "job": job["job"],
            "worker": "partial",
            "results": [{"game": games[0]["game"], "outcome": {"fault": "out of disk"}}],
        });
        let subject = format!(
            "knobeln.results.{}.partial",
            job["session"].as_str().unwrap()
        );
        js.publish(subject, answer.to_string().into())
            .await
            .unwrap()
            .await
            .unwrap();
        msg.ack().await.unwrap();
        games.len()
    })
}

#[test]
fn games_a_workers_answer_leaves_out_go_back_to_the_queue() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 8);
    let expected = reference(8);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let coordinator = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    let in_job = take_one_job(&nats.url(), TakeJob::AnswerInPart);
    wait_until("the coordinator to notice the games left out", || {
        coordinator
            .stderr()
            .matches("its answer to the job left this game out")
            .count()
            == in_job - 1
    });
    let _good = Worker::start(tmp.path(), &nats.url(), "good", &[]);
    let (got, err) = coordinator.finish();
    assert_eq!(got, expected, "{err}");
    // Every game is the good worker's; a game it played twice (a job
    // handed out again under load) changes nothing of the results above.
    let good: usize = err
        .split("good: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(err.contains("partial: 0 games,") && good >= 36, "{err}");
}

/// A job the queue no longer holds, that no result will ever answer (a
/// NATS server killed may come back without a job or a result it had
/// confirmed), is published again once the queue holds nothing of the
/// session's: the tournament ends with the results of one machine.
#[test]
fn games_the_queue_lost_are_published_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 8);
    let expected = reference(8);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let coordinator = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    let lost = take_one_job(&nats.url(), TakeJob::Lose);
    let _w = Worker::start(tmp.path(), &nats.url(), "w1", &[]);
    let (got, err) = coordinator.finish();
    assert_eq!(got, expected, "{err}");
    assert!(
        err.contains("the queue holds none of the") && err.contains("published again"),
        "{err}"
    );
    let again: usize = err
        .split("duplicate results ignored; ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(again >= lost, "{again} published again, {lost} lost: {err}");
    assert_counted_once(&db, &got);
}

/// A game no worker ever answers (every job taken and confirmed, never
/// answered: a broken worker of this version, a queue that keeps losing it)
/// is not published for ever: after three losses it goes to the engine as
/// an infrastructure fault, which tries it three times and then stops the
/// run with an error naming the game, not a player. The same command with a
/// worker resumes the tournament to the local run's results.
#[test]
fn a_game_no_worker_ever_answers_stops_the_run_naming_the_game_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 2);
    let expected = reference(2);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let hole = {
        let url = nats.url();
        Stoppable::spawn(move |stop| lose_every_job(&url, stop))
    };
    let mut first = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]);
    wait_for_exit(
        &mut first,
        Duration::from_secs(240),
        "the run did not give up",
    );
    let lost = hole.stop();
    let err = first.stderr();
    assert!(
        err.contains("could not be refereed (3 tries): the queue lost it 3 times"),
        "{err}"
    );
    assert!(err.contains("game round 1, group 1, slot "), "{err}");
    assert!(lost >= 9, "{lost} jobs lost: {err}");
    assert_eq!(count_games(&db), 0, "{err}");
    let _w = Worker::start(tmp.path(), &nats.url(), "w1", &[]);
    let (got, err) = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]).finish();
    assert!(err.contains("resuming tournament"), "{err}");
    assert_eq!(got, expected, "{err}");
    assert_counted_once(&db, &got);
}

/// Takes every job of the queue and confirms it without an answer until
/// `stop`; how many it took.
fn lose_every_job(url: &str, stop: &std::sync::atomic::AtomicBool) -> usize {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use async_nats::jetstream;
        use futures_util::StreamExt;
        let js = jetstream::new(async_nats::connect(url).await.unwrap());
        let mut taken = 0;
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            let Some(mut batch) = next_jobs(&js, 16).await else {
                continue;
            };
            while let Some(Ok(msg)) = batch.next().await {
                msg.double_ack().await.unwrap();
                taken += 1;
            }
        }
        taken
    })
}

/// A worker that holds its job longer than the check's wait (a slow
/// machine, a long match) keeps it alive: the queue counts it as held, and
/// nothing is published again.
#[test]
fn a_job_held_long_by_a_live_worker_is_not_published_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 2);
    let expected = reference(2);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    // Four games in one job, held eight seconds before they are played:
    // no result for longer than the check waits (five seconds, ack_wait
    // 1 s), while the worker keeps the job alive.
    let _slow = Worker::start(tmp.path(), &nats.url(), "slow", &["--slow-ms", "8000"]);
    let (got, err) = Coordinator::start(tmp.path(), &dir, &db, &nats.url(), &[]).finish();
    assert_eq!(got, expected, "{err}");
    assert!(err.contains("; 0 games published again"), "{err}");
    assert!(!err.contains("the queue holds none"), "{err}");
}

#[test]
fn the_deployed_permissions_run_a_tournament_and_keep_workers_in_their_place() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 6);
    let expected = reference(6);
    let nats = Nats::start_deployed(tmp.path(), "coordinator-secret");
    let db = tmp.path().join("coordinator.db");
    let url = nats.url();
    let w = Worker::start_with(
        Command::new(BIN),
        tmp.path(),
        &url,
        WORKERS[0].0,
        &["--nats-user", WORKERS[0].0, LOOK_RARELY],
        &[("KNOBELN_NATS_PASSWORD", WORKERS[0].1)],
    );
    // The deployment lets a worker hear that the queue was created: it
    // waits for it before the run and is woken by its creation.
    w.wait_until_waiting_for("the queue");
    // A wrong password gets nowhere.
    let out = Command::new(BIN)
        .args(coordinator_args(
            &dir,
            &tmp.path().join("x.db"),
            &url,
            &["--nats-user", "coordinator"],
        ))
        .env("KNOBELN_NATS_PASSWORD", "guess")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot connect to the NATS server"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (got, err) = Coordinator::start_env(
        tmp.path(),
        &dir,
        &db,
        &url,
        &["--nats-user", "coordinator"],
        &[("KNOBELN_NATS_PASSWORD", "coordinator-secret")],
    )
    .finish();
    assert_eq!(got, expected, "{err}");
    assert!(w.woken_by_the_creation_of("the queue"), "{}", w.log());

    // Now as a worker, try what a worker must not do.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use async_nats::jetstream;
        use futures_util::StreamExt;
        let connect = |user: &str, pw: &str, inbox: Option<&str>| {
            let mut o = async_nats::ConnectOptions::with_user_and_password(user.into(), pw.into())
                .request_timeout(Some(Duration::from_secs(2)));
            if let Some(i) = inbox {
                o = o.custom_inbox_prefix(i);
            }
            o.connect(url.clone())
        };
        let admin = jetstream::new(
            connect("coordinator", "coordinator-secret", None)
                .await
                .unwrap(),
        );
        let worker_client = connect(WORKERS[0].0, WORKERS[0].1, Some("_INBOX_knobeln_worker"))
            .await
            .unwrap();
        let mut ctx = jetstream::new(worker_client.clone());
        ctx.set_timeout(Duration::from_secs(2));
        let jobs_before = admin
            .get_stream("KNOBELN_JOBS")
            .await
            .unwrap()
            .info()
            .await
            .unwrap()
            .state
            .messages;
        // 1. Queue a job.
        let queued = match ctx
            .publish(
                knobeln::distributed::jobs_subject(
                    knobeln::distributed::wire::Discipline::Knobeln,
                    1,
                ),
                "{}".into(),
            )
            .await
        {
            Ok(ack) => ack.await.is_ok(),
            Err(_) => false,
        };
        assert!(!queued, "a worker queued a job");
        // 2. Replace a program.
        let programs = ctx.get_object_store("knobeln-programs").await.unwrap();
        let mut list = admin
            .get_object_store("knobeln-programs")
            .await
            .unwrap()
            .list()
            .await
            .unwrap();
        let victim = list.next().await.unwrap().unwrap();
        let put = programs
            .put(
                victim.name.as_str(),
                &mut b"#!/bin/sh\necho owned\n".as_slice(),
            )
            .await;
        assert!(put.is_err(), "a worker replaced a program");
        let after = admin
            .get_object_store("knobeln-programs")
            .await
            .unwrap()
            .info(&victim.name)
            .await
            .unwrap();
        assert_eq!(after.digest, victim.digest, "the program changed");
        // 3. Purge or delete the queue, read results.
        let purge = worker_client
            .request("$JS.API.STREAM.PURGE.KNOBELN_JOBS", "".into())
            .await;
        assert!(purge.is_err(), "a worker purged the queue");
        let delete = worker_client
            .request("$JS.API.STREAM.DELETE.KNOBELN_RESULTS", "".into())
            .await;
        assert!(delete.is_err(), "a worker deleted the results");
        assert!(
            admin.get_stream("KNOBELN_RESULTS").await.is_ok(),
            "the results stream is gone"
        );
        let jobs_after = admin
            .get_stream("KNOBELN_JOBS")
            .await
            .unwrap()
            .info()
            .await
            .unwrap()
            .state
            .messages;
        assert_eq!(jobs_before, jobs_after);
        // 4. Listen to results or to the coordinator's replies.
        let mut sub = worker_client.subscribe("knobeln.results.>").await.unwrap();
        let mut inbox = worker_client.subscribe("_INBOX.>").await.unwrap();
        worker_client.flush().await.unwrap();
        // The server refuses both subscriptions: they end (or stay silent
        // while the coordinator's traffic flows).
        admin
            .publish("knobeln.results.someone", "{}".into())
            .await
            .unwrap()
            .await
            .unwrap();
        let heard = tokio::time::timeout(Duration::from_millis(500), sub.next()).await;
        assert!(!matches!(heard, Ok(Some(_))), "a worker read a result");
        let heard = tokio::time::timeout(Duration::from_millis(200), inbox.next()).await;
        assert!(
            !matches!(heard, Ok(Some(_))),
            "a worker read the coordinator's replies"
        );
    });
}

/// Who a stand-in for a hostile worker is: its NATS user and password.
type Credential = (&'static str, &'static str);

/// What [`fault_every_job`] did: jobs taken, and the subjects the server
/// confirmed a fault on (one entry per confirmed publish).
#[derive(Default)]
struct Faulted {
    jobs: usize,
    confirmed: Vec<String>,
}

/// A hostile worker: takes every job from the queue with `puller`'s
/// credential and answers it, for each of `names` (each published with the
/// credential beside it), with a fault for every game of the job, under
/// that name, on the old subject (`knobeln.results.<session>`) and on the
/// name's own (`knobeln.results.<session>.<name>`); acknowledges the job.
/// With `in_turn`, each job is answered under one name only, the next in
/// turn (as workers that each took the game in a job of their own).
/// Until `stop`, or until it took `max_jobs`.
fn fault_every_job(
    url: &str,
    puller: Credential,
    names: &[(&'static str, Credential)],
    in_turn: bool,
    max_jobs: usize,
    stop: &std::sync::atomic::AtomicBool,
) -> Faulted {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use async_nats::jetstream;
        use futures_util::StreamExt;
        let connect = |credential: Credential| connect_as_worker(url, credential);
        let js = jetstream::new(connect(puller).await);
        let mut publishers = Vec::new();
        for (name, credential) in names {
            let mut ctx = jetstream::new(connect(*credential).await);
            // A publish the server refuses is never confirmed: not long.
            ctx.set_timeout(Duration::from_millis(300));
            publishers.push((*name, ctx));
        }
        let mut done = Faulted::default();
        while done.jobs < max_jobs && !stop.load(std::sync::atomic::Ordering::SeqCst) {
            let Some(mut batch) = next_jobs(&js, 1).await else {
                continue;
            };
            while let Some(Ok(msg)) = batch.next().await {
                let job = knobeln::distributed::wire::JobMessage::decode(&msg.payload).unwrap();
                let job: Value = serde_json::to_value(job).unwrap();
                let session = job["session"].as_str().unwrap().to_string();
                let faults: Vec<Value> = job["games"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|g| serde_json::json!({"game": g["game"], "outcome": {"fault": "out of disk"}}))
                    .collect();
                let turn = done.jobs % publishers.len();
                for (i, (name, ctx)) in publishers.iter().enumerate() {
                    if in_turn && i != turn {
                        continue;
                    }
                    let answer = serde_json::json!({
                        "format": job["format"], "session": session, "job": job["job"],
                        "worker": name, "results": faults,
                    });
                    for subject in [
                        format!("knobeln.results.{session}"),
                        format!("knobeln.results.{session}.{name}"),
                    ] {
                        if let Ok(ack) = ctx.publish(subject.clone(), answer.to_string().into()).await {
                            if ack.await.is_ok() {
                                done.confirmed.push(subject);
                            }
                        }
                    }
                }
                msg.ack().await.unwrap();
                done.jobs += 1;
            }
        }
        done
    })
}

/// Issue 34/38 (F3 of the hostile review): one worker's stolen credential
/// answers every job it takes with faults under three names. A worker's
/// identity is its NATS user, pinned by the server to its own results
/// subject: the faults under the other names are refused by the server,
/// the credential's own count as one worker's, and the run does not stop;
/// a real worker then plays the games to the local run's results.
#[test]
fn one_stolen_worker_credential_faulting_under_three_names_does_not_stop_the_run() {
    let stolen = STOLEN;
    let (done, err) = faults_that_must_not_stop_the_run(&[
        (stolen.0, stolen),
        ("mallory-b", stolen),
        ("mallory-c", stolen),
    ]);
    // Only the credential's own subject took a fault.
    assert!(!done.confirmed.is_empty());
    for subject in &done.confirmed {
        assert!(
            subject.ends_with(&format!(".{}", stolen.0)),
            "the server took a fault on {subject}"
        );
    }
    assert!(!err.contains("mallory"), "{err}");
}

/// Three workers' credentials that all answer the same job with faults
/// count once: a fault is tied to the job that carries the game now, and
/// after the first the game waits for another job (the others' faults are
/// counted as ignored in the report).
#[test]
fn three_workers_faulting_the_same_job_count_as_one() {
    let names = WORKERS.map(|c| (c.0, c));
    let (done, err) = faults_that_must_not_stop_the_run(&names);
    assert!(done.confirmed.len() >= 3 * 6, "{err}");
    let ignored: usize = err
        .split("games published again that the queue had lost; ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(ignored >= 2 * 6, "{ignored} faults ignored: {err}");
}

/// A coordinator under the deployed config, a hostile worker
/// ([`fault_every_job`] with `names`, pulling as [`STOLEN`]) that faults
/// six jobs: the run must still be going; an honest worker
/// ([`HONEST`]) then plays it to the local run's results. What the
/// hostile worker did, and the coordinator's log.
fn faults_that_must_not_stop_the_run(names: &[(&'static str, Credential)]) -> (Faulted, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 2);
    let expected = reference(2);
    let nats = Nats::start_deployed(tmp.path(), "coordinator-secret");
    let db = tmp.path().join("coordinator.db");
    let url = nats.url();
    let mut coordinator = Coordinator::start_env(
        tmp.path(),
        &dir,
        &db,
        &url,
        &["--nats-user", "coordinator"],
        &[("KNOBELN_NATS_PASSWORD", "coordinator-secret")],
    );
    let attacker = {
        let (url, names) = (url.clone(), names.to_vec());
        Stoppable::spawn(move |stop| fault_every_job(&url, STOLEN, &names, false, 6, stop))
    };
    // Six jobs faulted (the engine gives a game up after three workers'
    // faults, three times), or the run gave up.
    wait_until("six jobs faulted or the run stopped", || {
        attacker.is_finished() || !coordinator.running()
    });
    let done = attacker.stop();
    assert!(
        coordinator.running(),
        "faults of one credential stopped the run: {}",
        coordinator.stderr()
    );
    assert_eq!(done.jobs, 6);
    let _honest = Worker::start_as(tmp.path(), &url, HONEST);
    let (got, err) = coordinator.finish();
    assert_eq!(got, expected, "{err}");
    (done, err)
}

/// Three workers (three credentials, each on its own subject, each given
/// the game in a job of its own) that cannot play a game still stop the run: the engine gets it back as an
/// infrastructure fault after three distinct workers, tries it three times
/// and stops naming the game and the workers.
#[test]
fn three_workers_faulting_a_game_still_stop_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 2);
    let nats = Nats::start_deployed(tmp.path(), "coordinator-secret");
    let db = tmp.path().join("coordinator.db");
    let url = nats.url();
    let mut coordinator = Coordinator::start_env(
        tmp.path(),
        &dir,
        &db,
        &url,
        &["--nats-user", "coordinator"],
        &[("KNOBELN_NATS_PASSWORD", "coordinator-secret")],
    );
    let attacker = {
        let url = url.clone();
        Stoppable::spawn(move |stop| {
            let names = WORKERS.map(|c| (c.0, c));
            fault_every_job(&url, WORKERS[0], &names, true, usize::MAX, stop)
        })
    };
    wait_for_exit(
        &mut coordinator,
        Duration::from_secs(120),
        "three workers' faults did not stop the run",
    );
    let done = attacker.stop();
    let err = coordinator.stderr();
    assert!(
        err.contains("could not be refereed (3 tries): 3 workers could not play it (worker-1, worker-2, worker-3)"),
        "{err}"
    );
    // Each worker's fault went to its own subject, and only there.
    for subject in &done.confirmed {
        let (_, name) = subject.rsplit_once('.').unwrap();
        assert!(
            name.starts_with("worker-"),
            "the server took a fault on {subject}"
        );
    }
    assert_eq!(count_games(&db), 0, "{err}");
}

/// A hostile worker with one stolen credential takes one job, learns the
/// session from it and faults the job's games (its own job: they count).
/// Once the coordinator has published them again, it answers, on its own
/// subject, jobs it never received under the names it guesses
/// (`<session>-1` to `<session>-200`). Those answers must fault nothing:
/// before job names were unguessable, the job that carried the games
/// again was answered as if this worker had left them out, and they were
/// faulted and published again. The run then ends with the local run's
/// results.
#[test]
fn answers_to_jobs_a_worker_never_received_fault_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 8);
    let expected = reference(8);
    let nats = Nats::start_deployed(tmp.path(), "coordinator-secret");
    let db = tmp.path().join("coordinator.db");
    let url = nats.url();
    let coordinator = Coordinator::start_env(
        tmp.path(),
        &dir,
        &db,
        &url,
        &["--nats-user", "coordinator"],
        &[("KNOBELN_NATS_PASSWORD", "coordinator-secret")],
    );
    let faults = |err: &str| {
        err.matches(&format!("worker {} could not play the game", STOLEN.0))
            .count()
    };
    let own = answer_jobs_never_received(&url, STOLEN, |own| {
        wait_until("the stolen credential's own faults", || {
            faults(&coordinator.stderr()) >= own
        })
    });
    let _honest = Worker::start_as(tmp.path(), &url, HONEST);
    let (got, err) = coordinator.finish();
    assert_eq!(got, expected, "{err}");
    assert_eq!(faults(&err), own, "faults beyond its own job's: {err}");
}

/// [`answers_to_jobs_a_worker_never_received_fault_nothing`]'s hostile
/// worker: pulls one job with `credential`, answers it with a fault for
/// every game and acknowledges it; calls `counted` (with the job's number
/// of games) to wait for the coordinator to take the faults, waits for a
/// job in the queue again, then answers the names `<session>-1` to
/// `<session>-200` but its own's (a fault each for a game of its own job,
/// an answer holds at least one game). How many games its job held.
fn answer_jobs_never_received(
    url: &str,
    credential: Credential,
    counted: impl FnOnce(usize),
) -> usize {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use async_nats::jetstream;
        use futures_util::StreamExt;
        let client = connect_as_worker(url, credential).await;
        let js = jetstream::new(client);
        let mut consumer = the_workers_consumer(&js).await;
        let msg = loop {
            let mut batch = consumer.fetch().max_messages(1).messages().await.unwrap();
            if let Some(m) = batch.next().await {
                break m.unwrap();
            }
        };
        let job = knobeln::distributed::wire::JobMessage::decode(&msg.payload).unwrap();
        let job: Value = serde_json::to_value(job).unwrap();
        let session = job["session"].as_str().unwrap().to_string();
        let own = job["job"].as_str().unwrap().to_string();
        let games = job["games"].as_array().unwrap();
        let fault =
            |g: &Value| serde_json::json!({"game": g["game"], "outcome": {"fault": "out of disk"}});
        let subject = format!("knobeln.results.{session}.{}", credential.0);
        let publish = |name: String, results: Vec<Value>| {
            let answer = serde_json::json!({
                "format": job["format"], "session": session, "job": name,
                "worker": credential.0, "results": results,
            });
            let (js, subject) = (js.clone(), subject.clone());
            async move {
                js.publish(subject, answer.to_string().into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        };
        publish(own.clone(), games.iter().map(fault).collect()).await;
        msg.double_ack().await.unwrap();
        counted(games.len());
        // The games are in the queue again, in a job of another name.
        let start = Instant::now();
        while consumer.info().await.unwrap().num_pending == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no job came again"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for n in 1..=200 {
            let name = format!("{session}-{n}");
            if name != own {
                publish(name, vec![fault(&games[0])]).await;
            }
        }
        games.len()
    })
}

/// A stolen worker credential faults every job it takes naming the job's
/// programs (as a worker that could not fetch them says): the coordinator
/// puts a program so named into the store again whatever the store says,
/// which replaces its chunks under honest workers reading it. One
/// credential may ask that once per program: before, every fault put the
/// programs again (a put per fault, the programs stream growing with each
/// job). The run then ends with the local run's results.
#[test]
fn one_credential_naming_programs_in_its_faults_puts_them_again_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 2);
    let expected = reference(2);
    let nats = Nats::start_deployed(tmp.path(), "coordinator-secret");
    let db = tmp.path().join("coordinator.db");
    let url = nats.url();
    let coordinator = Coordinator::start_env(
        tmp.path(),
        &dir,
        &db,
        &url,
        &["--nats-user", "coordinator"],
        &[("KNOBELN_NATS_PASSWORD", "coordinator-secret")],
    );
    let seqs = fault_naming_programs(&url, STOLEN, 6);
    // The first fault may put the programs again; the later ones must not
    // (each job after the first came after the coordinator had handled
    // the fault before it, puts included).
    assert_eq!(
        seqs[1], seqs[5],
        "programs put again after every fault: {seqs:?}"
    );
    let _honest = Worker::start_as(tmp.path(), &url, HONEST);
    let (got, err) = coordinator.finish();
    assert_eq!(got, expected, "{err}");
}

/// [`one_credential_naming_programs_in_its_faults_puts_them_again_once`]'s
/// hostile worker: takes `jobs` jobs one after the other with
/// `credential`, answers each with a fault for every game naming every
/// program of the job, acknowledges it. The programs store's last
/// sequence number when it took each job.
fn fault_naming_programs(url: &str, credential: Credential, jobs: usize) -> Vec<u64> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use async_nats::jetstream;
        use futures_util::StreamExt;
        let client = connect_as_worker(url, credential).await;
        let js = jetstream::new(client);
        let consumer = the_workers_consumer(&js).await;
        let mut seqs = Vec::new();
        while seqs.len() < jobs {
            let mut batch = consumer.fetch().max_messages(1).messages().await.unwrap();
            let Some(msg) = batch.next().await else {
                continue;
            };
            let msg = msg.unwrap();
            let mut programs = js.get_stream("OBJ_knobeln-programs").await.unwrap();
            seqs.push(programs.info().await.unwrap().state.last_sequence);
            let job = knobeln::distributed::wire::JobMessage::decode(&msg.payload).unwrap();
            let job: Value = serde_json::to_value(job).unwrap();
            let text = job.to_string();
            let shas: Vec<&str> = text
                .split(|c: char| !c.is_ascii_hexdigit())
                .filter(|w| w.len() == 64)
                .collect();
            assert!(!shas.is_empty(), "{job}");
            let error = format!("could not fetch programs {}", shas.join(", "));
            let results: Vec<Value> = job["games"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| serde_json::json!({"game": g["game"], "outcome": {"fault": error}}))
                .collect();
            let answer = serde_json::json!({
                "format": job["format"], "session": job["session"], "job": job["job"],
                "worker": credential.0, "results": results,
            });
            let subject = format!(
                "knobeln.results.{}.{}",
                job["session"].as_str().unwrap(),
                credential.0
            );
            js.publish(subject, answer.to_string().into())
                .await
                .unwrap()
                .await
                .unwrap();
            msg.double_ack().await.unwrap();
        }
        seqs
    })
}

#[test]
fn no_message_carries_the_key_a_team_name_or_a_source() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 6);
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let db = tmp.path().join("coordinator.db");
    let secret = "00112233445566778899aabbccddeeff";
    let url = nats.url();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Everything that crosses the server, from before the coordinator starts.
    let (listening_tx, listening) = std::sync::mpsc::channel::<()>();
    let (seen, stop) = {
        let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
        let url = url.clone();
        let handle = rt.spawn(async move {
            use futures_util::StreamExt;
            let client = async_nats::connect(url).await.unwrap();
            let mut sub = client.subscribe(">").await.unwrap();
            client.flush().await.unwrap();
            listening_tx.send(()).unwrap();
            let mut seen: Vec<Vec<u8>> = Vec::new();
            loop {
                tokio::select! {
                    _ = &mut stop_rx => break,
                    m = sub.next() => match m {
                        Some(m) => {
                            let mut b = m.subject.as_bytes().to_vec();
                            b.push(b' ');
                            b.extend_from_slice(&m.payload);
                            seen.push(b);
                        }
                        None => break,
                    },
                }
            }
            seen
        });
        (handle, stop_tx)
    };
    listening.recv().unwrap();
    let _w = Worker::start(tmp.path(), &url, "w1", &[]);
    let (got, err) =
        Coordinator::start(tmp.path(), &dir, &db, &url, &["--secret", secret]).finish();
    assert!(!got["winners"].as_array().unwrap().is_empty(), "{err}");
    let _ = stop.send(());
    let seen = rt.block_on(seen).unwrap();
    // Games, in jobs of several games each.
    let games: usize = seen
        .iter()
        .filter(|m| m.starts_with(b"knobeln.jobs."))
        .map(|m| {
            let payload = &m[m.iter().position(|&b| b == b' ').unwrap() + 1..];
            knobeln::distributed::wire::JobMessage::decode(payload).map_or(0, |j| j.games.len())
        })
        .sum();
    assert!(games >= 21, "the capture missed the jobs ({games} games)");
    let forbidden: Vec<String> = std::iter::once(secret.to_string())
        .chain((0..6).map(|i| source(i).0.trim_end_matches(".c").to_string()))
        .chain(["description of test strategy".to_string()])
        .collect();
    for m in &seen {
        let text = String::from_utf8_lossy(m);
        for f in &forbidden {
            assert!(
                !text.contains(f.as_str()),
                "{f:?} crossed the network: {text:.300}"
            );
        }
    }
}

/// Runs openssl (the test command installs it).
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is installed (tests/run-all.sh installs it)");
    assert!(
        out.status.success(),
        "openssl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn with_tls_the_workers_play_and_a_client_without_the_ca_gets_nowhere() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 5);
    let expected = reference(5);
    let d = tmp.path();
    // A CA of the test's own and a server certificate for 127.0.0.1.
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=knobeln test CA",
        ],
    );
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(d.join("ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "ext",
        ],
    );
    let conf = format!(
        "listen: 127.0.0.1:PORT\njetstream {{ store_dir: \"STORE\" }}\n\
         tls {{ cert_file: \"{}\", key_file: \"{}\" }}\n",
        d.join("server.pem").display(),
        d.join("server.key").display()
    );
    let nats = Nats::start_config(d, &conf);
    let url = format!("tls://127.0.0.1:{}", nats.port);
    let ca = d.join("ca.pem").display().to_string();
    let _w = Worker::start(d, &url, "w1", &["--nats-ca", &ca]);
    let (got, err) =
        Coordinator::start(d, &dir, &d.join("tls.db"), &url, &["--nats-ca", &ca]).finish();
    assert_eq!(got, expected, "{err}");
    assert!(games_of(&err, "w1") > 0, "{err}");
    // Without the CA, the server's certificate is refused.
    let out = Command::new(BIN)
        .args(coordinator_args(
            &dir,
            &d.join("plain.db"),
            &nats.url(),
            &[],
        ))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("invalid peer certificate"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_contest_with_engine_nats_in_its_config_has_its_games_played_by_workers() {
    use super::mail_spool::{auth_of, registration, Contest};
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let c = Contest::new(&format!(
        "[rules]\nthrows = 60\n[engine]\nnats = \"{}\"\nack_wait_secs = 2\n",
        nats.url()
    ));
    // Three teams register and send their strategies by mail.
    let teams: Vec<(String, usize)> = (0..3).map(|i| (format!("nats_team_{i}"), i)).collect();
    let address = |team: &str| format!("{team}@participants.example");
    let regs: Vec<PathBuf> = teams
        .iter()
        .map(|(t, _)| {
            c.mail(
                &address(t),
                "registration for KNOBELN",
                &registration(&address(t), t, &format!("Uni {t}, City, Land")),
                "",
            )
        })
        .collect();
    assert!(c
        .ingest(&regs.iter().map(|p| p.as_path()).collect::<Vec<_>>())
        .status
        .success());
    let acks = c.replies();
    let compiles: Vec<PathBuf> = teams
        .iter()
        .map(|(t, i)| {
            let ack = acks.iter().find(|r| r.to == vec![address(t)]).unwrap();
            let source = format!("/*\n <<FROM>> {t} {}\n*/\n{}", auth_of(ack), source(*i).1);
            c.mail(&address(t), "please compile", &source, "")
        })
        .collect();
    assert!(c
        .ingest(&compiles.iter().map(|p| p.as_path()).collect::<Vec<_>>())
        .status
        .success());
    let _w = Worker::start(tmp.path(), &nats.url(), "contest-worker", &[]);
    let out = Command::new(BIN)
        .args(["contest", "start", "--seed", "3", "--config"])
        .arg(c.config())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Three teams, one final group: six games, all played by the worker.
    assert!(games_of(&err, "contest-worker") >= 6, "{err}");
    assert!(
        c.replies()
            .iter()
            .any(|r| r.subject.contains("final results")),
        "no final results mail"
    );
}

/// The command of `knobeln demo` of a bot discipline in `dir` (locally, or
/// with its games played by workers through `nats`).
fn demo_command(dir: &Path, discipline: &str, games: &str, nats: Option<&str>) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "demo",
        "--discipline",
        discipline,
        "--games",
        games,
        "--dir",
    ])
    .arg(dir);
    if let Some(url) = nats {
        cmd.args(["--nats", url]);
    }
    cmd
}

/// Runs [`demo_command`]: the results article and the stderr.
fn bot_demo(dir: &Path, discipline: &str, games: &str, nats: Option<&str>) -> (String, String) {
    let out = demo_command(dir, discipline, games, nats).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{}\n{err}",
        String::from_utf8_lossy(&out.stdout)
    );
    (
        std::fs::read_to_string(dir.join("results.txt")).unwrap(),
        err,
    )
}

/// The games each worker played in a run, summed over the run's sessions
/// (FootSteps plays in several steps: one report each).
fn bot_games_of(stderr: &str, worker: &str) -> u64 {
    stderr
        .lines()
        .filter(|l| l.contains("workers of this run"))
        .map(|l| games_of(l, worker))
        .sum()
}

#[test]
fn bot_contests_through_workers_equal_the_local_run_and_a_broken_worker_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    // FootSteps: its planner plays in steps (replays after ties), each step
    // a session of the queue. A worker that cannot play is reported, its
    // games go to the other, and one that takes KNOBELN games only gets none.
    let (local, _) = bot_demo(&tmp.path().join("local"), "footsteps", "4", None);
    let broken = Worker::start(
        tmp.path(),
        &nats.url(),
        "broken",
        &[LOOK_RARELY, "--faulty"],
    );
    let good = Worker::start(tmp.path(), &nats.url(), "good", &[LOOK_RARELY]);
    let knobeln_only = Worker::start(
        tmp.path(),
        &nats.url(),
        "knobeln-only",
        &[LOOK_RARELY, "--play", "knobeln"],
    );
    // The broken worker must get games: every worker waits for the queue
    // before the run, and every one is woken by its creation (the CI saw
    // the good one take all 24 under load while the broken one had not
    // looked again).
    let waits = [
        (&broken, "the queue of bots games"),
        (&good, "the queue"),
        (&knobeln_only, "the queue"),
    ];
    for (worker, queue) in waits {
        worker.wait_until_waiting_for(queue);
    }
    let (remote, err) = bot_demo(
        &tmp.path().join("remote"),
        "footsteps",
        "4",
        Some(&nats.url()),
    );
    assert_eq!(remote, local, "{err}");
    for (worker, queue) in waits {
        assert!(worker.woken_by_the_creation_of(queue), "{}", worker.log());
    }
    // Games played by workers keep their transcripts as the local ones do:
    // the same game pages with the same transcripts.
    let transcripts = |run: &str| -> Vec<(String, String)> {
        let dir = tmp.path().join(run).join("site/game");
        let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".txt"))
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (r, l) = (transcripts("remote"), transcripts("local"));
    assert!(
        !l.is_empty() && r.len() == l.len(),
        "{} pages remote, {} local",
        r.len(),
        l.len()
    );
    assert!(r == l, "the transcripts of games played by workers differ");
    // 4 bots, 6 pairs, 4 games per pair (and no replay: see the local run).
    assert!(bot_games_of(&err, "good") >= 24, "{err}");
    assert!(
        err.contains("worker broken could not play the game"),
        "{err}"
    );
    assert!(err.contains("(an infrastructure fault, not the participants'"));
    assert!(!err.contains("knobeln-only:"), "{err}");
    assert!(
        good.log().contains("playing knobeln and bots")
            && knobeln_only.log().contains("playing knobeln\n")
            && broken.log().contains("could not play"),
        "{}\n{}",
        good.log(),
        knobeln_only.log()
    );
    drop(broken);
    // The flooding island: each island travels as its text and is checked
    // again by the worker; one seat per game.
    let (local, _) = bot_demo(&tmp.path().join("local-flooding"), "flooding", "2", None);
    let (remote, err) = bot_demo(
        &tmp.path().join("remote-flooding"),
        "flooding",
        "2",
        Some(&nats.url()),
    );
    assert_eq!(remote, local, "{err}");
    assert_eq!(bot_games_of(&err, "good"), 24, "{err}");
    // The ultimatum game keeps each bot's working folder (issue 27): the
    // folders travel with each game and come back with its result, phase
    // by phase, as in the local run.
    let (local, _) = bot_demo(&tmp.path().join("local-ultimatum"), "ultimatum", "1", None);
    let (remote, err) = bot_demo(
        &tmp.path().join("remote-ultimatum"),
        "ultimatum",
        "1",
        Some(&nats.url()),
    );
    assert_eq!(remote, local, "{err}");
    assert_eq!(bot_games_of(&err, "good"), 20, "{err}");
}

#[test]
fn a_worker_killed_in_a_bot_contest_has_its_games_played_elsewhere_once() {
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let (local, _) = bot_demo(&tmp.path().join("local"), "flooding", "5", None);
    let mut victim = Worker::start(tmp.path(), &nats.url(), "victim", &[]);
    let dir = tmp.path().join("remote");
    let demo = demo_command(&dir, "flooding", "5", Some(&nats.url()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let played = || -> i64 {
        rusqlite::Connection::open(dir.join("knobeln.db"))
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM bot_games", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    // The victim plays alone until it has games in hand, then dies.
    wait_until("the victim to play 5 games", || played() >= 5);
    victim.child.kill().unwrap(); // SIGKILL, with jobs in hand
    victim.child.wait().unwrap();
    let before = played();
    assert!(before < 60, "finished before the kill ({before} games)");
    let _w2 = Worker::start(tmp.path(), &nats.url(), "w2", &[]);
    let out = demo.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    // Its jobs went to w2 (after ack_wait): the same results, each game
    // stored once (4 bots x 3 islands x 5 runs).
    let remote = std::fs::read_to_string(dir.join("results.txt")).unwrap();
    assert_eq!(remote, local, "{err}");
    assert_eq!(played(), 60);
    // The victim's answers published before it died may be stored after
    // `before` was read: count the victim's games as the coordinator does.
    assert!(
        bot_games_of(&err, "w2") >= 60 - bot_games_of(&err, "victim").max(before as u64),
        "{err}"
    );
}

#[test]
fn a_program_whose_chunks_left_the_store_is_put_there_again_and_its_games_are_played() {
    // What a worker saw when the coordinator put a program again while the
    // worker read it: the object's chunks gone from under the reader.
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(tmp.path(), "127.0.0.1");
    let (local, _) = bot_demo(&tmp.path().join("local"), "flooding", "1", None);
    let dir = tmp.path().join("remote");
    let err_path = tmp.path().join("demo.err");
    let mut demo = demo_command(&dir, "flooding", "1", Some(&nats.url()))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    // No worker yet: the coordinator puts the four bots' programs into the
    // store and queues the games. Then every chunk of every program goes.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use futures_util::StreamExt;
        let client = async_nats::connect(nats.url()).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let start = Instant::now();
        loop {
            // Listing an empty store waits for a first object forever: a
            // listing that takes long counts as none yet.
            let count = async {
                let mut n = 0;
                if let Ok(store) = js.get_object_store("knobeln-programs").await {
                    if let Ok(mut list) = store.list().await {
                        while let Some(Ok(_)) = list.next().await {
                            n += 1;
                        }
                    }
                }
                n
            };
            let n = tokio::time::timeout(Duration::from_secs(2), count)
                .await
                .unwrap_or(0);
            if n >= 4 {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "the programs never reached the store"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let stream = js.get_stream("OBJ_knobeln-programs").await.unwrap();
        stream
            .purge()
            .filter("$O.knobeln-programs.C.>")
            .await
            .unwrap();
    });
    let _w = Worker::start(tmp.path(), &nats.url(), "w", &[]);
    // A worker that waits for the chunks forever holds its jobs forever
    // (it keeps them alive): the contest would never end.
    let start = Instant::now();
    let status = loop {
        if let Some(st) = demo.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(300) {
            let _ = demo.kill();
            let _ = demo.wait();
            panic!(
                "the games were not played in 5 minutes:\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert!(status.success(), "{err}");
    let remote = std::fs::read_to_string(dir.join("results.txt")).unwrap();
    assert_eq!(remote, local, "{err}");
    // The worker said which program it could not fetch; it was put again.
    assert!(
        err.contains("worker w could not play the game") && err.contains("program"),
        "{err}"
    );
}

/// What [`flood_answers`] got confirmed by the server.
#[derive(Debug, Default)]
struct Flooded {
    /// Answers to sessions nobody reads (a fresh name each).
    unread: usize,
    /// Answers to the session `live` (which has a reader).
    live: usize,
}

/// A NATS client under a worker's credential, with the inbox prefix the
/// deployed permissions give workers.
async fn connect_as_worker(url: &str, (user, password): Credential) -> async_nats::Client {
    async_nats::ConnectOptions::with_user_and_password(user.into(), password.into())
        .custom_inbox_prefix("_INBOX_knobeln_worker")
        .connect(url.to_string())
        .await
        .unwrap()
}

/// A stolen worker credential floods the results stream: `unread`
/// answers of about 8 KiB, each to a session of a fresh random name (no
/// coordinator reads them), then `live` answers to the session `live`,
/// all on the credential's own subjects; each publish waits for the
/// server's confirmation.
fn flood_answers(url: &str, credential: Credential, unread: usize, live: usize) -> Flooded {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = connect_as_worker(url, credential).await;
        let mut js = async_nats::jetstream::new(client);
        js.set_timeout(Duration::from_secs(2));
        let pad = "x".repeat(8000);
        let mut done = Flooded::default();
        let sessions = (0..unread)
            .map(|_| knobeln::distributed::new_session())
            .chain((0..live).map(|_| "live".to_string()));
        for (i, session) in sessions.enumerate() {
            let answer = serde_json::json!({
                "format": knobeln::distributed::wire::FORMAT, "session": session,
                "job": format!("{session}-1-0000000000000000"), "worker": credential.0,
                "results": [], "pad": pad,
            });
            let subject = format!("knobeln.results.{session}.{}", credential.0);
            let confirmed = match js.publish(subject, answer.to_string().into()).await {
                Ok(ack) => ack.await.is_ok(),
                Err(_) => false,
            };
            if confirmed && i < unread {
                done.unread += 1;
            } else if confirmed {
                done.live += 1;
            }
        }
        done
    })
}

/// The results stream's state: messages and bytes.
fn results_stream_state(url: &str) -> (u64, u64) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let admin = async_nats::jetstream::new(
            async_nats::ConnectOptions::with_user_and_password(
                "coordinator".into(),
                "coordinator-secret".into(),
            )
            .connect(url.to_string())
            .await
            .unwrap(),
        );
        let mut stream = admin.get_stream("KNOBELN_RESULTS").await.unwrap();
        let info = stream.info().await.unwrap();
        (info.state.messages, info.state.bytes)
    })
}

/// D7 (F8's audit): a worker's user may publish answers on its own subject
/// of any session. One stolen credential floods the results stream with
/// answers to sessions nobody reads while a tournament runs, and then a
/// session that has a reader: the stream keeps none of the first (an
/// answer is kept only for a session's reader) and at most the session's
/// games in flight of the second (per subject, new ones refused), another
/// worker's answer to that session is still taken, and the honest run's
/// results equal the local run's. Once the reader goes, its unread answers
/// go too. Before, the stream kept every answer for a week.
#[test]
fn one_credential_flooding_answers_never_grows_the_results_stream_past_its_bound() {
    const IN_FLIGHT: u64 = 64;
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), 6);
    let expected = reference(6);
    let nats = Nats::start_deployed(tmp.path(), "coordinator-secret");
    let db = tmp.path().join("coordinator.db");
    let url = nats.url();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let admin = rt.block_on(async {
        async_nats::jetstream::new(
            async_nats::ConnectOptions::with_user_and_password(
                "coordinator".into(),
                "coordinator-secret".into(),
            )
            .connect(url.clone())
            .await
            .unwrap(),
        )
    });
    // The results stream as an older version made it: a work queue.
    rt.block_on(async {
        use async_nats::jetstream::stream::{Config, RetentionPolicy};
        admin
            .create_stream(Config {
                name: "KNOBELN_RESULTS".into(),
                subjects: vec!["knobeln.results.>".into()],
                retention: RetentionPolicy::WorkQueue,
                ..Default::default()
            })
            .await
            .unwrap();
    });
    let coordinator = Coordinator::start_env(
        tmp.path(),
        &dir,
        &db,
        &url,
        &[
            "--nats-user",
            "coordinator",
            "--in-flight",
            &IN_FLIGHT.to_string(),
        ],
        &[("KNOBELN_NATS_PASSWORD", "coordinator-secret")],
    );
    wait_until(
        "the coordinator to bring the results stream to its bounds",
        || {
            rt.block_on(async {
                match admin.get_stream("KNOBELN_RESULTS").await {
                    Ok(mut s) => s.info().await.is_ok_and(|i| {
                        i.config.retention
                            == async_nats::jetstream::stream::RetentionPolicy::Interest
                    }),
                    Err(_) => false,
                }
            })
        },
    );
    // A reader of the session `live`, as a coordinator's.
    rt.block_on(async {
        admin
            .get_stream("KNOBELN_RESULTS")
            .await
            .unwrap()
            .create_consumer(async_nats::jetstream::consumer::pull::Config {
                durable_name: Some("coordinator-live".into()),
                filter_subject: "knobeln.results.live.*".into(),
                ack_policy: async_nats::jetstream::consumer::AckPolicy::Explicit,
                ..Default::default()
            })
            .await
            .unwrap();
    });
    let flood = {
        let url = url.clone();
        Stoppable::spawn(move |_| flood_answers(&url, STOLEN, 2000, 2 * IN_FLIGHT as usize))
    };
    let _honest = Worker::start_as(tmp.path(), &url, HONEST);
    let (got, err) = coordinator.finish();
    assert_eq!(got, expected, "{err}");
    let flooded = flood.stop();
    // The server confirmed the answers to unread sessions (a worker's
    // publish to a session that ended is not retried for ever), and took
    // the session `live`'s up to its bound.
    assert_eq!(flooded.unread, 2000, "{flooded:?}");
    assert_eq!(flooded.live, IN_FLIGHT as usize, "{flooded:?}");
    let (messages, bytes) = results_stream_state(&url);
    assert_eq!(
        messages, IN_FLIGHT,
        "only the read session's answers are kept"
    );
    assert!(bytes < IN_FLIGHT * 9000, "{bytes} bytes");
    // Another worker's answer to the flooded session is still taken.
    let other = flood_answers(&url, WORKERS[2], 0, 1);
    assert_eq!(other.live, 1, "another worker's answer was refused");
    // The reader goes: its unread answers go with it.
    rt.block_on(async {
        admin
            .get_stream("KNOBELN_RESULTS")
            .await
            .unwrap()
            .delete_consumer("coordinator-live")
            .await
            .unwrap();
    });
    wait_until("the unread answers to go with their reader", || {
        results_stream_state(&url).0 == 0
    });
}

/// The deployment lets each worker hear the creation of the programs'
/// store and of every kind's consumer, by the names this version uses (a
/// new wire format renames the consumers: the file must follow, else its
/// workers wait for their next look).
#[test]
fn the_deployed_permissions_let_every_worker_hear_the_queues_creation_by_this_versions_names() {
    use knobeln::distributed::queue::{workers_consumer, JOBS_STREAM, PROGRAMS_BUCKET};
    use knobeln::distributed::wire::Discipline;
    let conf = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/nats-server.conf"
    ))
    .unwrap();
    let workers = conf.matches("user: worker-").count();
    assert!(workers >= 1, "{conf}");
    let mut subjects = vec![format!(
        "\"$JS.EVENT.ADVISORY.STREAM.CREATED.OBJ_{PROGRAMS_BUCKET}\""
    )];
    for d in Discipline::ALL {
        subjects.push(format!(
            "\"$JS.EVENT.ADVISORY.CONSUMER.CREATED.{JOBS_STREAM}.{}\"",
            workers_consumer(d)
        ));
    }
    for subject in subjects {
        assert_eq!(conf.matches(&subject).count(), workers, "{subject}");
    }
}
