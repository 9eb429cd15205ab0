//! `knobeln worker`: plays games from the JetStream work queue.
//!
//! A worker is stateless. It pulls jobs of each kind while it holds fewer
//! games than twice its game threads (one playing and one waiting per
//! thread; a job may bring several games, a coordinator runs one kind at
//! a time), tells JetStream it
//! is still working on every job it holds (so `ack_wait` can stay short and
//! a dead worker's games come back quickly), fetches both programs by
//! SHA-256 from the object store into a local cache, verifies the hash of
//! every program before it runs (from the store and from the cache alike),
//! plays each game of a job on a thread pinned to one CPU exactly as the
//! local pool does (a job's games go to the game threads in one batch per
//! thread, so the worker's own threads wake once per batch, not once per
//! game), publishes the job's records in one answer to the
//! coordinator's result subject, waits for JetStream to confirm it, and
//! only then acknowledges the job.
//!
//! Bot games (the four line-protocol disciplines) come from a consumer of
//! their own: the worker fetches each seat's program (a `BotProgram` as
//! JSON) the same way, finds the language's toolchain on its own machine
//! from the definition the job carries (probed once per language), and
//! plays the game in the bot sandbox as a local bot contest does, at most
//! `jobs` at a time. A language missing here is a fault of this worker:
//! the game goes to another. `--play` chooses which kinds a worker takes.
//!
//! When it cannot play a game (the referee's `Err`: a sandbox or machine
//! fault; a program that cannot be fetched in time (`FETCH_TIME`,
//! `worker/cache.rs`) or
//! has the wrong hash) it says
//! so in a `Fault` result: never a participant's failure. After three jobs
//! in a row with such faults it takes no games for a while (30 s, doubling up to 10
//! minutes), so its games go to other workers.
//!
//! It never sees the tournament's key, team names, sources, mail or the
//! database: only what a [`JobMessage`] holds.
//!
//! Two modes for tests and benchmarks: `Fake` answers every job at once
//! with a canned record (the coordinator's ceiling), `Faulty` reports a
//! fault for every job (the coordinator's handling of broken workers).
//!
//! The program cache is `worker/cache.rs`, the unit tests `worker/tests.rs`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer::PullConsumer, AckKind};
use futures_util::StreamExt;
use tokio::sync::{oneshot, Semaphore};

use super::queue::{results_subject, workers_consumer, DistributedError, NatsOptions, JOBS_STREAM};
use super::wire::{self, BotSeat, Discipline, GameIdent, JobMessage, Outcome, Play, ResultMessage};
use crate::discipline::play::{Played, Setup, Transcript};
use crate::game::knobeln::replay;
use crate::lang::build::BotProgram;
use crate::lang::{LanguageTable, Toolchain, Toolchains};
use crate::lines::LineLimits;
use crate::referee::{GameRecord, GameSeeds, Referee, RefereeConfig};
use crate::sandbox::{allowed_cpus, pin_current_thread};
use crate::wasm::Loaded;

mod cache;

use cache::ProgramCache;

/// The prefix of a worker's reply subjects: the deployment's permissions
/// let workers subscribe to these only, so a worker cannot listen to the
/// coordinator's replies (results, API answers).
pub const WORKER_INBOX: &str = "_INBOX_knobeln_worker";

/// Jobs in a row with infrastructure faults after which a worker pauses.
const FAULTS_BEFORE_PAUSE: u32 = 3;

/// What a worker does with a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerMode {
    /// Plays it.
    Play,
    /// Answers at once with a canned record (benchmark of the coordinator).
    Fake,
    /// Reports an infrastructure fault for every job (tests).
    Faulty,
}

#[derive(Debug, Clone)]
pub struct WorkerOptions {
    pub nats: NatsOptions,
    /// Games played at once (threads, each pinned to one CPU).
    pub jobs: usize,
    /// The name the coordinator reports this worker by.
    pub name: String,
    /// Where fetched programs are kept between runs.
    pub cache_dir: PathBuf,
    pub mode: WorkerMode,
    /// The kinds of games it takes (default: all).
    pub play: Vec<Discipline>,
    /// Test mode: waits this long before it plays a job (a slow machine,
    /// or a long bot match; zero: none).
    pub delay_per_job: Duration,
    /// Test mode: the `n`th KNOBELN game this worker starts panics on its
    /// game thread (a bug in the engine, as a test can cause it).
    pub panic_in_game: Option<u64>,
    /// How often a worker waiting for the coordinator's queue looks for it
    /// when no word of its creation came ([`LOOK_FOR_THE_QUEUE_EVERY`];
    /// tests make it long, to show the word wakes it).
    pub look_every: Duration,
}

/// How often a worker waiting for the queue looks for it besides the
/// server's word of its creation (a word missed while reconnecting).
pub const LOOK_FOR_THE_QUEUE_EVERY: Duration = Duration::from_secs(5);

/// Runs a worker until SIGTERM or Ctrl-C: then it takes no new job,
/// finishes the games it holds, publishes them and exits. A second SIGTERM
/// or Ctrl-C ends it at once: the games it holds are not acknowledged, and
/// JetStream gives them to other workers after `ack_wait`.
pub fn run(options: WorkerOptions) -> Result<(), DistributedError> {
    keep_freed_memory();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("knobeln-worker")
        .enable_all()
        .build()?;
    let r = runtime.block_on(work(options));
    // A bot game still on a blocking thread (a stop at once) is not waited
    // for: its bots die with this process (their parent-death signal).
    runtime.shutdown_timeout(Duration::from_secs(1));
    r
}

/// Bytes of freed memory glibc keeps for reuse instead of returning them
/// to the system, and the size from which it maps an allocation of its
/// own ([`keep_freed_memory`]).
const KEEP_FREED_BYTES: i32 = 4 << 20;

/// Keeps a job's buffers in the worker's heap from one job to the next.
/// An answer is about 200 kB (2 kB a game's throws): with glibc's defaults
/// each one was mapped or grown into the heap, faulted in page by page,
/// and given back (`madvise`) when freed, so the next one faulted in
/// again: about 40 % of the worker's threads besides its games went to
/// page faults and `malloc`'s growing and trimming (figures: "The queue's
/// floor on two cores"). With both thresholds at 4 MiB an answer (at most
/// `wire::MAX_MESSAGE_BYTES`, 1 MiB) comes from the heap, and up to
/// 4 MiB freed stays there.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of glibc's allocator parameters; it is
    // called before the worker starts its threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, KEEP_FREED_BYTES);
        libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP_FREED_BYTES);
    }
}

/// What the tasks of a worker share.
struct Worker {
    name: String,
    mode: WorkerMode,
    delay_per_job: Duration,
    look_every: Duration,
    js: jetstream::Context,
    client: async_nats::Client,
    cache: Option<ProgramCache>,
    games: Option<GameThreads>,
    /// Games played at once.
    jobs: usize,
    /// Bot games playing now (at most `jobs`).
    bot_slots: Arc<Semaphore>,
    /// Each language's toolchain on this machine, by its definition.
    toolchains: tokio::sync::Mutex<HashMap<String, Toolchain>>,
    /// The shortest `ack_wait` of the consumers pulled from, in ms.
    ack_wait_ms: AtomicU64,
    /// Reply subjects of the jobs held, for the keep-alive.
    held: Mutex<HashMap<u64, async_nats::Subject>>,
    next_held: AtomicU64,
    faults_in_a_row: AtomicU32,
    paused_until: Mutex<Option<Instant>>,
    played: AtomicU64,
    stopping: AtomicBool,
}

async fn work(o: WorkerOptions) -> Result<(), DistributedError> {
    let jobs = o.jobs.max(1);
    let client = o
        .nats
        .connect_as(
            &format!("knobeln worker {}", o.name),
            true,
            Some(WORKER_INBOX),
        )
        .await?;
    let js = jetstream::new(client.clone());
    let (cache, games) = if o.mode == WorkerMode::Play {
        let bucket = wait_for_programs(&client, &js, &o.name, o.look_every).await;
        (
            Some(ProgramCache::new(o.cache_dir.clone(), bucket)?),
            Some(GameThreads::start(jobs, o.panic_in_game)),
        )
    } else {
        (None, None)
    };
    let kinds: Vec<Discipline> = if o.play.is_empty() {
        Discipline::ALL.to_vec()
    } else {
        o.play.clone()
    };
    eprintln!(
        "worker {}: ready at {}, {jobs} game(s) at a time, playing {}{}",
        o.name,
        o.nats.url,
        kinds
            .iter()
            .map(|d| d.as_str())
            .collect::<Vec<_>>()
            .join(" and "),
        match o.mode {
            WorkerMode::Play => String::new(),
            WorkerMode::Fake => " (fake: canned records, no games)".into(),
            WorkerMode::Faulty => " (faulty: reports a fault for every job)".into(),
        }
    );
    let w = Arc::new(Worker {
        name: o.name.clone(),
        mode: o.mode,
        delay_per_job: o.delay_per_job,
        look_every: o.look_every,
        js,
        client,
        cache,
        games,
        jobs,
        bot_slots: Arc::new(Semaphore::new(jobs)),
        toolchains: tokio::sync::Mutex::new(HashMap::new()),
        ack_wait_ms: AtomicU64::new(u64::MAX),
        held: Mutex::new(HashMap::new()),
        next_held: AtomicU64::new(0),
        faults_in_a_row: AtomicU32::new(0),
        paused_until: Mutex::new(None),
        played: AtomicU64::new(0),
        stopping: AtomicBool::new(false),
    });
    let keepalive = tokio::spawn(keep_alive(w.clone()));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut loops = tokio::task::JoinSet::new();
    for kind in kinds {
        loops.spawn(pull_loop(w.clone(), kind, stopped.clone()));
    }
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    w.stopping.store(true, Ordering::SeqCst);
    eprintln!(
        "worker {}: stopping after the {} job(s) it holds (SIGTERM or Ctrl-C again: at once)",
        w.name,
        w.held.lock().expect("lock").len()
    );
    let _ = stop.send(true);
    tokio::select! {
        _ = async { while loops.join_next().await.is_some() {} } => {}
        _ = term.recv() => stop_at_once(&w),
        _ = tokio::signal::ctrl_c() => stop_at_once(&w),
    }
    keepalive.abort();
    // The server may be gone: what could not be sent is not waited for.
    let _ = tokio::time::timeout(Duration::from_secs(2), w.client.flush()).await;
    eprintln!(
        "worker {}: stopped, {} game(s) played",
        w.name,
        w.played.load(Ordering::Relaxed)
    );
    Ok(())
}

fn stop_at_once(w: &Worker) {
    eprintln!(
        "worker {}: stopping at once; the {} job(s) it held go to other workers after ack_wait",
        w.name,
        w.held.lock().expect("lock").len()
    );
}

/// Pulls and plays jobs of one kind until told to stop; then waits for
/// the games it holds.
async fn pull_loop(w: Arc<Worker>, kind: Discipline, mut stop: tokio::sync::watch::Receiver<bool>) {
    let consumer = tokio::select! {
        c = wait_for_queue(&w, kind) => c,
        _ = stop.changed() => return,
    };
    let ack_wait = consumer.cached_info().config.ack_wait;
    w.ack_wait_ms
        .fetch_min(ack_wait.as_millis() as u64, Ordering::Relaxed);
    let places = Arc::new(GamePlaces::new(2 * w.jobs));
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            _ = fetch(&w, kind, &consumer, &places, &mut tasks) => {}
        }
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
}

/// How many games a pull loop holds (playing, or waiting for a game
/// thread), against how many it wants to hold: one playing and one
/// waiting per game thread. Jobs are pulled while fewer are held; a job
/// may bring several games, so the count may go past the mark.
struct GamePlaces {
    held: std::sync::atomic::AtomicUsize,
    mark: usize,
    freed: tokio::sync::Notify,
}

impl GamePlaces {
    fn new(mark: usize) -> GamePlaces {
        GamePlaces {
            held: std::sync::atomic::AtomicUsize::new(0),
            mark: mark.max(1),
            freed: tokio::sync::Notify::new(),
        }
    }

    /// Waits until fewer games than the mark are held; how many are free.
    async fn free(&self) -> usize {
        loop {
            let freed = self.freed.notified();
            let held = self.held.load(Ordering::SeqCst);
            if held < self.mark {
                return self.mark - held;
            }
            freed.await;
        }
    }

    fn take(&self, n: usize) {
        self.held.fetch_add(n, Ordering::SeqCst);
    }

    /// `n` games are done. The pulling task is woken only when the count
    /// falls below the mark (it waits for nothing else), not at every game:
    /// a game thread gives its places back as each game ends.
    fn give_back(&self, n: usize) {
        let before = self.held.fetch_sub(n, Ordering::SeqCst);
        if before >= self.mark && before - n < self.mark {
            self.freed.notify_one();
        }
    }
}

/// What ended a wait for something the coordinator creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// The first look found it: it was there.
    AtOnce,
    /// The server's word of its creation (a JetStream advisory) woke the
    /// wait.
    WokenByItsCreation,
    /// A later look found it (no word came: missed while reconnecting, or
    /// the deployment's permissions do not let the worker hear it).
    ByLooking,
}

/// Waits until `look` finds what a coordinator creates. Every worker wakes
/// at its creation, not at its next look: the wait listens to the
/// JetStream advisory `advisory` (subscribed before the first look, so a
/// creation after it is heard), and looks again on that word or every
/// `look_every`.
///
/// The worker `name` says when its first look fails, and how the wait
/// ended unless at once.
async fn wait_for_creation<T, F, Fut>(
    client: &async_nats::Client,
    name: &str,
    what: &str,
    advisory: String,
    look_every: Duration,
    mut look: F,
) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let mut word = client.subscribe(advisory).await.ok();
    let mut found = Found::AtOnce;
    loop {
        if let Some(t) = look().await {
            say_found(name, what, found);
            return t;
        }
        if found == Found::AtOnce {
            eprintln!("worker {name}: waiting for a coordinator to create {what}");
        }
        found = Found::ByLooking;
        match word.as_mut() {
            Some(heard) => match tokio::time::timeout(look_every, heard.next()).await {
                Ok(Some(_)) => found = Found::WokenByItsCreation,
                // The subscription ended (the client closed): only looks
                // from now on, never a loop without a pause.
                Ok(None) => word = None,
                Err(_) => {}
            },
            None => tokio::time::sleep(look_every).await,
        }
    }
}

/// Says how a wait of the worker `name` for `what` ended, unless at once.
fn say_found(name: &str, what: &str, found: Found) {
    match found {
        Found::AtOnce => {}
        Found::WokenByItsCreation => {
            eprintln!("worker {name}: {what} created (woken by its creation)")
        }
        Found::ByLooking => eprintln!("worker {name}: {what} found by looking again"),
    }
}

/// Waits until a coordinator has created the programs' object store (with
/// the queue).
async fn wait_for_programs(
    client: &async_nats::Client,
    js: &jetstream::Context,
    name: &str,
    look_every: Duration,
) -> jetstream::object_store::ObjectStore {
    let advisory = format!(
        "$JS.EVENT.ADVISORY.STREAM.CREATED.OBJ_{}",
        super::PROGRAMS_BUCKET
    );
    wait_for_creation(client, name, "the queue", advisory, look_every, || async {
        js.get_object_store(super::PROGRAMS_BUCKET).await.ok()
    })
    .await
}

/// Waits until a coordinator has created the consumer of `kind`'s jobs.
async fn wait_for_queue(w: &Worker, kind: Discipline) -> PullConsumer {
    let consumer = workers_consumer(kind);
    let advisory = format!("$JS.EVENT.ADVISORY.CONSUMER.CREATED.{JOBS_STREAM}.{consumer}");
    let what = format!("the queue of {} games", kind.as_str());
    wait_for_creation(
        &w.client,
        &w.name,
        &what,
        advisory,
        w.look_every,
        || async {
            let stream = w.js.get_stream(JOBS_STREAM).await.ok()?;
            stream
                .get_consumer::<jetstream::consumer::pull::Config>(&consumer)
                .await
                .ok()
        },
    )
    .await
}

/// Pulls jobs for the free places (as many as could fill them, counting
/// the most games a job of this kind brings), and starts each.
async fn fetch(
    w: &Arc<Worker>,
    kind: Discipline,
    consumer: &PullConsumer,
    places: &Arc<GamePlaces>,
    tasks: &mut tokio::task::JoinSet<()>,
) {
    let free = places.free().await;
    let pause = *w.paused_until.lock().expect("lock");
    if let Some(until) = pause {
        tokio::time::sleep_until(until.into()).await;
        *w.paused_until.lock().expect("lock") = None;
    }
    let wanted = free.div_ceil(wire::most_games_per_job(kind));
    // A pull request that waits (up to `expires`) for jobs to come.
    let batch = consumer
        .batch()
        .max_messages(wanted)
        .expires(Duration::from_secs(5))
        .messages()
        .await;
    let mut batch = match batch {
        Ok(b) => b,
        Err(e) => {
            eprintln!("worker {}: cannot pull jobs ({e}); trying again", w.name);
            tokio::time::sleep(Duration::from_secs(1)).await;
            return;
        }
    };
    let mut got = 0;
    while let Some(m) = batch.next().await {
        match m {
            Ok(msg) => {
                let job = JobMessage::decode(&msg.payload);
                // A job this worker cannot read takes one place.
                places.take(job.as_ref().map_or(1, |j| j.games.len()));
                tasks.spawn(handle(w.clone(), msg, job, places.clone()));
                got += 1;
                if got == wanted {
                    break;
                }
            }
            Err(e) => {
                eprintln!("worker {}: pulling jobs: {e}", w.name);
                tokio::time::sleep(Duration::from_millis(500)).await;
                break;
            }
        }
    }
}

/// Tells JetStream, for every job held, that it is still being worked on
/// (every third of the shortest `ack_wait`).
async fn keep_alive(w: Arc<Worker>) {
    let tick = Duration::from_millis(200);
    let mut last = Instant::now();
    loop {
        // A short tick: the consumers' `ack_wait` is known only once they
        // are found, and may be short.
        tokio::time::sleep(tick).await;
        let ack_wait = match w.ack_wait_ms.load(Ordering::Relaxed) {
            u64::MAX => Duration::from_secs(30),
            ms => Duration::from_millis(ms),
        };
        if last.elapsed() < (ack_wait / 3).max(tick) {
            continue;
        }
        last = Instant::now();
        let replies: Vec<async_nats::Subject> =
            w.held.lock().expect("lock").values().cloned().collect();
        for r in replies {
            let _ = w.client.publish(r, AckKind::Progress.into()).await;
        }
    }
}

/// One job: play its games, publish their results in one answer,
/// acknowledge. Each game's place is given back as the game ends.
async fn handle(
    w: Arc<Worker>,
    msg: jetstream::Message,
    job: Result<JobMessage, wire::WireError>,
    places: Arc<GamePlaces>,
) {
    let id = w.next_held.fetch_add(1, Ordering::Relaxed);
    if let Some(reply) = msg.reply.clone() {
        w.held.lock().expect("lock").insert(id, reply);
    }
    let (session, name, results) = match job {
        Ok(job) => {
            if !w.delay_per_job.is_zero() {
                tokio::time::sleep(w.delay_per_job).await;
            }
            let batched = w.mode == WorkerMode::Play
                && job
                    .games
                    .iter()
                    .all(|g| matches!(g.play, Play::Knobeln { .. }));
            let outcomes = if batched {
                play_knobeln_job(&w, &job.games, &places).await
            } else {
                futures_util::future::join_all(job.games.iter().map(|g| {
                    let places = places.clone();
                    let w = &w;
                    async move {
                        let outcome = play(w, &g.play).await;
                        places.give_back(1);
                        wire::GameResult {
                            game: g.game,
                            outcome,
                        }
                    }
                }))
                .await
            };
            (job.session, job.job, outcomes)
        }
        Err(e) => {
            places.give_back(1);
            match JobMessage::identity(&msg.payload) {
                // Tell the coordinator, so another worker can take them.
                Some((session, name, games)) => {
                    let why = format!("this worker cannot read the job ({e}); update it");
                    let results = games
                        .into_iter()
                        .map(|game| wire::GameResult {
                            game,
                            outcome: Outcome::Fault(why.clone()),
                        })
                        .collect();
                    (session, name, results)
                }
                None => {
                    eprintln!(
                        "worker {}: a job nobody can answer was dropped: {e}",
                        w.name
                    );
                    let _ = msg.ack_with(AckKind::Term).await;
                    w.held.lock().expect("lock").remove(&id);
                    return;
                }
            }
        }
    };
    let faults: Vec<(GameIdent, String)> = results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Fault(e) => Some((r.game, e.clone())),
            Outcome::Played(_) | Outcome::BotGame(_) => None,
        })
        .collect();
    let played = results.len() - faults.len();
    let result = ResultMessage {
        format: wire::FORMAT,
        session: session.clone(),
        job: name,
        worker: w.name.clone(),
        results,
    };
    // Built once: a retry sends the same bytes without copying them.
    let message =
        jetstream::message::PublishMessage::build().payload(result.encode_within_limit().into());
    if publish_result(&w, &results_subject(&session, &w.name), message).await {
        // Acknowledged only once the result is stored: should this worker
        // die before, the games are played again elsewhere.
        let _ = msg.ack().await;
    }
    w.held.lock().expect("lock").remove(&id);
    w.played.fetch_add(played as u64, Ordering::Relaxed);
    if faults.is_empty() {
        w.faults_in_a_row.store(0, Ordering::Relaxed);
        return;
    }
    for (game, e) in &faults {
        eprintln!("worker {}: could not play the game of {game}: {e}", w.name);
    }
    // Jobs, not games, count: a broken machine fails a whole job at once.
    let n = w.faults_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
    if n >= FAULTS_BEFORE_PAUSE {
        let secs = (30u64 << (n - FAULTS_BEFORE_PAUSE).min(5)).min(600);
        eprintln!(
            "worker {}: {n} jobs with infrastructure faults in a row; taking no games for \
             {secs} s (other workers play them)",
            w.name
        );
        *w.paused_until.lock().expect("lock") = Some(Instant::now() + Duration::from_secs(secs));
    }
}

/// Publishes a result until JetStream confirms it (a server restart or a
/// cut link is waited out); gives up only while stopping, after 30 s.
async fn publish_result(
    w: &Worker,
    subject: &str,
    message: jetstream::message::PublishMessage,
) -> bool {
    let mut delay = Duration::from_millis(100);
    let mut since: Option<Instant> = None;
    loop {
        let error = match w
            .js
            .send_publish(subject.to_string(), message.clone())
            .await
        {
            Ok(ack) => match ack.await {
                Ok(_) => return true,
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        let first = *since.get_or_insert_with(Instant::now);
        if w.stopping.load(Ordering::SeqCst) && first.elapsed() > Duration::from_secs(30) {
            eprintln!(
                "worker {}: result not delivered ({error}); the game will be played again",
                w.name
            );
            return false;
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(5));
    }
}

/// Plays (or, in the test modes, answers) one game.
async fn play(w: &Worker, play: &Play) -> Outcome {
    if w.mode == WorkerMode::Faulty {
        return Outcome::Fault("this worker was started to fail (--faulty)".into());
    }
    match play {
        Play::Knobeln {
            referee,
            programs,
            seeds,
        } => play_knobeln(w, referee, programs, *seeds).await,
        Play::Bots {
            setup,
            limits,
            seats,
            keep_transcript,
            folders,
        } => play_bots(w, setup, *limits, seats, *keep_transcript, folders.clone()).await,
    }
}

/// Plays (or answers) a KNOBELN game on a pinned game thread.
async fn play_knobeln(
    w: &Worker,
    referee: &RefereeConfig,
    programs: &[String; 2],
    seeds: wire::Seeds,
) -> Outcome {
    if w.mode == WorkerMode::Fake {
        return Outcome::Played(canned_record(referee, seeds.game));
    }
    let cache = w.cache.as_ref().expect("a playing worker has a cache");
    let games = w.games.as_ref().expect("a playing worker has threads");
    let (p, q) = tokio::join!(cache.get(&programs[0]), cache.get(&programs[1]));
    match (p, q) {
        (Ok(p), Ok(q)) => {
            let game = (Referee::new(*referee), [p, q], seeds.into());
            match games.play_batch(vec![game], None).await {
                Ok(mut records) => match records.pop() {
                    Some(Ok(record)) => Outcome::Played(record),
                    Some(Err(e)) => Outcome::Fault(e),
                    None => Outcome::Fault("a game thread answered nothing".into()),
                },
                Err(e) => Outcome::Fault(e),
            }
        }
        (Err(e), _) | (_, Err(e)) => Outcome::Fault(e),
    }
}

/// Plays a job of KNOBELN games: every game's programs from the cache (at
/// once, so programs not cached yet are fetched side by side), then the
/// games on the game threads in one batch per thread. Each game's place is
/// given back as the game ends (by the game thread); this task wakes once
/// per batch.
async fn play_knobeln_job(
    w: &Worker,
    games: &[wire::GameJob],
    places: &Arc<GamePlaces>,
) -> Vec<wire::GameResult> {
    let cache = w.cache.as_ref().expect("a playing worker has a cache");
    let threads = w.games.as_ref().expect("a playing worker has threads");
    // Each program of the job looked up once (a job's games share their
    // programs: 128 games of a group of 41 have 41), side by side.
    let mut names: Vec<&str> = games
        .iter()
        .filter_map(|g| match &g.play {
            Play::Knobeln { programs, .. } => Some(programs.iter().map(String::as_str)),
            Play::Bots { .. } => None,
        })
        .flatten()
        .collect();
    names.sort_unstable();
    names.dedup();
    let loaded: HashMap<&str, Result<Arc<Loaded>, String>> = names
        .iter()
        .copied()
        .zip(futures_util::future::join_all(names.iter().map(|sha| cache.get(sha))).await)
        .collect();
    let resolved = games.iter().map(|g| {
        let Play::Knobeln {
            referee,
            programs,
            seeds,
        } = &g.play
        else {
            return Err("not a KNOBELN game".to_string());
        };
        let program = |k: usize| loaded[programs[k].as_str()].clone();
        Ok((
            Referee::new(*referee),
            [program(0)?, program(1)?],
            GameSeeds::from(*seeds),
        ))
    });
    let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(games.len());
    let mut ready = Vec::new();
    let mut ready_at = Vec::new();
    for (i, r) in resolved.into_iter().enumerate() {
        match r {
            Ok(game) => {
                outcomes.push(None);
                ready.push(game);
                ready_at.push(i);
            }
            Err(e) => {
                outcomes.push(Some(Outcome::Fault(e)));
                places.give_back(1);
            }
        }
    }
    // As many batches as threads (or games), of about equal size.
    let n_batches = threads.threads.min(ready.len()).max(1);
    let per_batch = ready.len().div_ceil(n_batches).max(1);
    let mut batches = Vec::with_capacity(n_batches);
    let mut rest = ready.into_iter();
    loop {
        let batch: Vec<_> = rest.by_ref().take(per_batch).collect();
        if batch.is_empty() {
            break;
        }
        let n = batch.len();
        batches.push((n, threads.play_batch(batch, Some(places.clone()))));
    }
    let mut at = ready_at.into_iter();
    for (n, answer) in futures_util::future::join_all(
        batches
            .into_iter()
            .map(|(n, f)| async move { (n, f.await) }),
    )
    .await
    {
        let records: Vec<Result<GameRecord, String>> = match answer {
            Ok(r) if r.len() == n => r,
            Ok(_) => vec![Err("a game thread answered another number of games".into()); n],
            Err(e) => vec![Err(e); n],
        };
        for record in records {
            let i = at.next().expect("a place for every game");
            outcomes[i] = Some(match record {
                Ok(record) => Outcome::Played(record),
                Err(e) => Outcome::Fault(e),
            });
        }
    }
    games
        .iter()
        .zip(outcomes)
        .map(|(g, outcome)| wire::GameResult {
            game: g.game,
            outcome: outcome.unwrap_or_else(|| Outcome::Fault("the game was not played".into())),
        })
        .collect()
}

/// Plays (or answers) a bot game: each seat's program from the cache, its
/// language's toolchain on this machine, the game in the bot sandbox on a
/// blocking thread (at most `jobs` at once).
async fn play_bots(
    w: &Worker,
    setup: &Setup,
    limits: LineLimits,
    seats: &[BotSeat],
    keep_transcript: bool,
    folders: Option<Vec<crate::sandbox::folder::FolderImage>>,
) -> Outcome {
    if w.mode == WorkerMode::Fake {
        return Outcome::BotGame(Box::new(canned_bot_game(setup)));
    }
    let cache = w.cache.as_ref().expect("a playing worker has a cache");
    let mut bots: Vec<(Toolchain, Arc<BotProgram>)> = Vec::with_capacity(seats.len());
    for seat in seats {
        let program = match cache.get_bot(&seat.program).await {
            Ok(p) => p,
            Err(e) => return Outcome::Fault(e),
        };
        if program.language != seat.language.name {
            return Outcome::Fault(format!(
                "program {} is in {}, the job says {}",
                seat.program, program.language, seat.language.name
            ));
        }
        match toolchain(w, &seat.language).await {
            Ok(t) => bots.push((t, program)),
            Err(e) => return Outcome::Fault(e),
        }
    }
    let Ok(_slot) = w.bot_slots.clone().acquire_owned().await else {
        return Outcome::Fault("the worker is stopping".into());
    };
    let setup = setup.clone();
    let r = tokio::task::spawn_blocking(move || {
        let seats: Vec<(&Toolchain, &BotProgram)> = bots.iter().map(|(t, p)| (t, &**p)).collect();
        let keep = if keep_transcript {
            Transcript::Keep
        } else {
            Transcript::Drop
        };
        crate::discipline::play::play_with_folders(&setup, &seats, limits, keep, folders.as_deref())
    })
    .await;
    match r {
        Ok(Ok(mut played)) => {
            // The moves travel, not the transcript (a tenth of its size).
            played.moves = played.take_moves();
            Outcome::BotGame(Box::new(played))
        }
        Ok(Err(e)) => Outcome::Fault(format!("the referee failed: {e}")),
        Err(e) => Outcome::Fault(format!("a game thread died: {e}")),
    }
}

/// The toolchain of `language` on this machine (its definition checked
/// and its version probed; a toolchain found is remembered, a missing one
/// is looked for again at the next game, so installing it needs no
/// restart and a probe that timed out once is not taken for good).
async fn toolchain(w: &Worker, language: &crate::lang::Language) -> Result<Toolchain, String> {
    let key = serde_json::to_string(language).expect("a language serializes");
    let mut known = w.toolchains.lock().await;
    if let Some(t) = known.get(&key) {
        return Ok(t.clone());
    }
    let lang = language.clone();
    let found = tokio::task::spawn_blocking(move || {
        let table = LanguageTable::with(std::slice::from_ref(&lang))
            .map_err(|e| format!("the job's language {}: {e}", lang.name))?;
        match Toolchains::resolve_only(&table, &[lang.name.as_str()]).get(&lang.name) {
            Some(Ok(t)) => Ok(t.clone()),
            Some(Err(e)) => Err(format!("{} is not usable on this machine: {e}", lang.name)),
            None => Err(format!("{} is not a language of this worker", lang.name)),
        }
    })
    .await
    .unwrap_or_else(|e| Err(format!("probing a toolchain: {e}")));
    if let Ok(t) = &found {
        known.insert(key, t.clone());
    }
    found
}

/// A bot game as a referee could have made it, without playing: no
/// outcome, nothing used.
pub fn canned_bot_game(setup: &Setup) -> Played {
    let n = setup.seats();
    Played {
        outcome: None,
        failures: Vec::new(),
        cpu_ms: vec![0; n],
        cpu_us: vec![0; n],
        wall_ms: 0,
        stderr: vec![String::new(); n],
        transcript: None,
        transcript_truncated: false,
        moves: None,
        folders: None,
    }
}

/// A record as a referee could have made it, without playing: both
/// players throw `a` every time.
pub fn canned_record(cfg: &RefereeConfig, seed: u64) -> GameRecord {
    let throws = vec![[cfg.params.a, cfg.params.a]; cfg.params.l as usize];
    let points = replay(&cfg.params, &throws).unwrap_or([0, 0]);
    GameRecord {
        seed,
        points,
        throws,
        failures: Vec::new(),
    }
}

/// Plays one game on a game thread. A panic (a bug in the referee or the
/// engine, never a strategy's doing: a strategy's trap is a failure in its
/// record) loses this game only: it becomes an `Err` (a fault, the game is
/// played again elsewhere), and the thread goes on with the batch's other
/// games. Without this the thread died, and with it the answers of every
/// game of its batch. Nothing a game shares with the next one is left
/// half-changed by a panic: each game has its own instances and store; the
/// loaded modules are only read.
fn play_caught(
    game: &Game,
    started: &AtomicU64,
    panic_in_game: Option<u64>,
) -> Result<GameRecord, String> {
    let (referee, programs, seeds) = game;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let n = started.fetch_add(1, Ordering::Relaxed) + 1;
        if panic_in_game == Some(n) {
            panic!("--panic-in-game {n}: this game panics (a test)");
        }
        referee
            .play_loaded([&programs[0], &programs[1]], *seeds)
            .map_err(|e| format!("the referee failed: {e}"))
    }))
    .unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        Err(format!(
            "the game panicked on this worker's game thread ({what}): an engine fault"
        ))
    })
}

/// Threads that play games, each pinned to one CPU as in the local pool,
/// so that a game's referee and both strategies share that CPU.
struct GameThreads {
    tx: crossbeam_channel::Sender<GameTask>,
    /// How many there are.
    threads: usize,
}

/// A game to play: its referee, both programs and the seeds.
type Game = (Referee, [Arc<Loaded>; 2], GameSeeds);

/// Games one thread plays in a row, answering once for all of them.
struct GameTask {
    games: Vec<Game>,
    /// Given a place back as each game ends.
    places: Option<Arc<GamePlaces>>,
    reply: oneshot::Sender<Vec<Result<GameRecord, String>>>,
}

/// Gives back the places of the games of a batch not played yet, should
/// the thread die in the middle of it.
struct PlacesLeft {
    places: Option<Arc<GamePlaces>>,
    left: usize,
}

impl PlacesLeft {
    fn one_done(&mut self) {
        if let Some(p) = &self.places {
            p.give_back(1);
        }
        self.left -= 1;
    }
}

impl Drop for PlacesLeft {
    fn drop(&mut self) {
        if let (Some(p), n @ 1..) = (&self.places, self.left) {
            p.give_back(n);
        }
    }
}

impl GameThreads {
    /// `n` threads pinned round-robin to the CPUs this process may use, as
    /// in the local pool. Several workers on one machine get their own CPUs
    /// from whoever starts them (`taskset -c`, systemd's `CPUAffinity=`);
    /// otherwise they would all start at the first CPU.
    /// `panic_in_game`: the test mode of [`WorkerOptions::panic_in_game`].
    fn start(n: usize, panic_in_game: Option<u64>) -> GameThreads {
        let cpus = allowed_cpus();
        let (tx, rx) = crossbeam_channel::unbounded::<GameTask>();
        let threads = n.clamp(1, crate::wasm::MAX_GAMES_AT_ONCE);
        let started = Arc::new(AtomicU64::new(0));
        for i in 0..threads {
            let rx = rx.clone();
            let started = started.clone();
            let cpu = cpus[i % cpus.len()];
            std::thread::Builder::new()
                .name(format!("referee-{i}"))
                .spawn(move || {
                    // Without pinning the game is slower, never wrong.
                    let _ = pin_current_thread(cpu);
                    for t in rx {
                        let mut left = PlacesLeft {
                            places: t.places,
                            left: t.games.len(),
                        };
                        let mut records = Vec::with_capacity(t.games.len());
                        for game in &t.games {
                            records.push(play_caught(game, &started, panic_in_game));
                            left.one_done();
                        }
                        let _ = t.reply.send(records);
                    }
                })
                .expect("spawn a referee thread");
        }
        GameThreads { tx, threads }
    }

    /// Hands the games to one thread at once; the records come in their
    /// order. `places` gets a place back as each game ends.
    fn play_batch(
        &self,
        games: Vec<Game>,
        places: Option<Arc<GamePlaces>>,
    ) -> impl std::future::Future<Output = Result<Vec<Result<GameRecord, String>>, String>> {
        let (reply, answer) = oneshot::channel();
        let sent = self
            .tx
            .send(GameTask {
                games,
                places,
                reply,
            })
            .map_err(|e| {
                // The task comes back unplayed: its places are given back.
                let t = e.into_inner();
                if let Some(p) = t.places {
                    p.give_back(t.games.len());
                }
                "the game threads are gone".to_string()
            });
        async move {
            sent?;
            answer.await.map_err(|_| "a game thread died".to_string())
        }
    }
}

/// The worker's name, which its answers' subject ends in
/// ([`super::results_subject`]) and the coordinator goes by. With a NATS
/// user it is the user: the server's permissions (deploy/nats-server.conf)
/// allow each worker's user to publish on `knobeln.results.*.<user>` only,
/// so the name is one the server vouches for; `--name`, if given too, must
/// say the same. Without a user it is `--name`, else `default()` made
/// valid. A name that cannot be a subject's token is an error.
pub fn worker_name(
    user: Option<&str>,
    name: Option<&str>,
    default: impl FnOnce() -> String,
) -> Result<String, String> {
    let rule = "letters, digits, - and _, at most 64";
    match (user, name) {
        (Some(u), _) if !wire::valid_worker_name(u) => Err(format!(
            "the NATS user {u:?} cannot name this worker's results subject ({rule})"
        )),
        (Some(u), Some(n)) if n != u => Err(format!(
            "--name {n:?} differs from --nats-user {u:?}: a worker with a NATS user is \
             named by it (the server vouches for that name only)"
        )),
        (Some(u), _) => Ok(u.to_string()),
        (None, Some(n)) if !wire::valid_worker_name(n) => {
            Err(format!("--name {n:?}: a worker's name is {rule}"))
        }
        (None, Some(n)) => Ok(n.to_string()),
        (None, None) => Ok(wire::worker_name_from(&default())),
    }
}

/// This machine's name, for the default worker name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "worker".into())
}

/// The default folder of the program cache.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("knobeln/programs");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache/knobeln/programs");
    }
    std::env::temp_dir().join("knobeln-programs")
}

#[cfg(test)]
mod tests;
