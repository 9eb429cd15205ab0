//! One coordinator session on NATS JetStream, run on the queue's tokio
//! runtime: the games in flight, uploading their programs, publishing them
//! in jobs, taking results from the session's subject (checked, counted
//! once), giving a worker's failed game to another, and the workers' report
//! when the session ends.
//!
//! Not here: the caller's handle (`handle.rs`), what a game is (the
//! [`Task`]), and anything about the tournament (the engine's).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer::pull, consumer::AckPolicy};
use base64::Engine as _;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot};

use super::task::{Task, Upload};
use crate::distributed::queue::{
    ensure_queue, jobs_subject, js_err, results_subject, DistributedError, NatsOptions,
    QueueSettings, JOBS_STREAM, PROGRAMS_BUCKET, RESULTS_STREAM,
};
use crate::distributed::wire::{
    self, Discipline, GameIdent, JobMessage, Outcome, Play, ResultMessage,
};

/// A game that this many different workers could not play goes back to
/// the engine as an infrastructure fault.
const MAX_FAULTING_WORKERS: usize = 3;

/// A game in flight.
struct Pending<T> {
    task: T,
    programs: Vec<Arc<dyn Upload>>,
    play: Play,
    /// The job that carries it now (`None` while it waits for one).
    job: Option<String>,
    /// Workers that reported they could not play it.
    faulted_on: BTreeSet<String>,
}

/// A job published: its games, and its bytes until the queue confirms it
/// (a job whose confirmation is lost is published again as it was, under
/// the same id, so JetStream stores it once).
struct Sent {
    games: Vec<GameIdent>,
    payload: Option<Vec<u8>>,
}

/// What a worker did in this session.
#[derive(Default)]
struct WorkerStats {
    games: u64,
    faults: u64,
    last_fault: String,
}

type AckFuture = BoxFuture<'static, (String, Result<jetstream::publish::PublishAck, String>)>;

/// How long a game waits for others to share its job: a job is published
/// at once when it is full, else after this long (the engine hands over
/// the games that replace finished ones a few at a time).
const LINGER: Duration = Duration::from_millis(2);

pub(super) struct Coordinator<T: Task> {
    js: jetstream::Context,
    programs: jetstream::object_store::ObjectStore,
    results_consumer: jetstream::consumer::PullConsumer,
    results: Option<jetstream::consumer::pull::Stream>,
    session: String,
    /// The kind of jobs (their subject).
    kind: Discipline,
    /// The tournament or bot contest.
    scope: i64,
    uploaded: HashSet<String>,
    /// Programs a worker could not use: put into the store again, whatever
    /// the store says it holds.
    reupload: HashSet<String>,
    in_flight: HashMap<GameIdent, Pending<T>>,
    /// Games waiting for a job, in the order they came.
    to_publish: VecDeque<GameIdent>,
    /// Since when the first of them waits.
    waiting_since: Option<Instant>,
    /// Jobs published and not yet answered, by name.
    jobs: HashMap<String, Sent>,
    /// Jobs the queue did not confirm: published again as they are.
    republish: VecDeque<String>,
    acks: FuturesUnordered<AckFuture>,
    /// Jobs published so far (their names count up).
    next_copy: u64,
    retry_at: Option<Instant>,
    workers: BTreeMap<String, WorkerStats>,
    duplicates: u64,
    last_result: Instant,
    last_warning: Option<Instant>,
}

fn results_consumer_name(session: &str) -> String {
    format!("coordinator-{session}")
}

/// The digest the object store keeps for bytes with this SHA-256 (hex).
fn object_digest(sha256_hex: &str) -> String {
    let raw: Vec<u8> = (0..sha256_hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(&sha256_hex[2 * i..2 * i + 2], 16).ok())
        .collect();
    format!(
        "SHA-256={}",
        base64::engine::general_purpose::URL_SAFE.encode(raw)
    )
}

/// A worker's name as it may appear in our logs.
fn printable_name(name: &str) -> String {
    let n: String = name.chars().filter(|c| !c.is_control()).take(64).collect();
    if n.is_empty() {
        "(unnamed)".into()
    } else {
        n
    }
}

impl<T: Task> Coordinator<T> {
    pub(super) async fn connect(
        options: &NatsOptions,
        settings: &QueueSettings,
        kind: Discipline,
        scope: i64,
        session: String,
    ) -> Result<Coordinator<T>, DistributedError> {
        let client = options
            .connect(&format!("knobeln coordinator {session}"), false)
            .await?;
        let js = jetstream::new(client);
        ensure_queue(&js, settings).await?;
        let programs = js
            .get_object_store(PROGRAMS_BUCKET)
            .await
            .map_err(|e| js_err("the programs' object store", e))?;
        // Jobs an earlier run of this contest left behind are stale (this
        // run publishes what it still needs); their results would go to a
        // session nobody reads.
        let jobs = js
            .get_stream(JOBS_STREAM)
            .await
            .map_err(|e| js_err("the jobs stream", e))?;
        jobs.purge()
            .filter(jobs_subject(kind, scope))
            .await
            .map_err(|e| js_err("dropping stale jobs", e))?;
        let results_consumer = js
            .get_stream(RESULTS_STREAM)
            .await
            .map_err(|e| js_err("the results stream", e))?
            .create_consumer(pull::Config {
                durable_name: Some(results_consumer_name(&session)),
                description: Some(format!("results for coordinator session {session}")),
                filter_subject: results_subject(&session),
                ack_policy: AckPolicy::Explicit,
                ack_wait: Duration::from_secs(30),
                max_deliver: -1,
                max_ack_pending: -1,
                // A coordinator killed with -9 leaves it behind; the server
                // removes it after an hour without a reader.
                inactive_threshold: Duration::from_secs(3600),
                ..Default::default()
            })
            .await
            .map_err(|e| js_err("the coordinator's results consumer", e))?;
        let results = Some(
            results_consumer
                .stream()
                .max_messages_per_batch(256)
                .heartbeat(Duration::from_secs(5))
                .expires(Duration::from_secs(30))
                .messages()
                .await
                .map_err(|e| js_err("reading results", e))?,
        );
        Ok(Coordinator {
            js,
            programs,
            results_consumer,
            results,
            session,
            kind,
            scope,
            uploaded: HashSet::new(),
            reupload: HashSet::new(),
            in_flight: HashMap::new(),
            to_publish: VecDeque::new(),
            waiting_since: None,
            jobs: HashMap::new(),
            republish: VecDeque::new(),
            acks: FuturesUnordered::new(),
            next_copy: 0,
            retry_at: None,
            workers: BTreeMap::new(),
            duplicates: 0,
            last_result: Instant::now(),
            last_warning: None,
        })
    }

    pub(super) async fn run(
        mut self,
        mut submit: mpsc::UnboundedReceiver<T>,
        done: crossbeam_channel::Sender<T::Done>,
        mut stop: oneshot::Receiver<()>,
    ) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            // Waiting games are published when their linger ends, but not
            // before a retry after trouble is due (the tick covers that).
            let linger = self
                .waiting_since
                .map(|t| (t + LINGER).max(self.retry_at.unwrap_or(t)));
            tokio::select! {
                biased;
                _ = &mut stop => break,
                job = submit.recv() => match job {
                    Some(job) => {
                        self.add(job);
                        // Whatever else the engine handed over shares jobs.
                        while let Ok(job) = submit.try_recv() {
                            self.add(job);
                        }
                    }
                    None => break,
                },
                Some((job, ack)) = self.acks.next(), if !self.acks.is_empty() => match ack {
                    Ok(_) => {
                        if let Some(sent) = self.jobs.get_mut(&job) {
                            sent.payload = None;
                        }
                    }
                    Err(e) => {
                        self.warn(&format!("the queue did not confirm a job ({e}); publishing it again"));
                        self.republish.push_back(job);
                    }
                },
                msg = next_result(&mut self.results) => match msg {
                    Some(Ok(m)) => self.result(m, &done).await,
                    Some(Err(e)) => self.warn(&format!("reading results: {e}")),
                    None => self.reopen_results().await,
                },
                _ = tokio::time::sleep_until(linger.unwrap_or_else(Instant::now).into()), if linger.is_some() => {}
                _ = tick.tick() => self.watchdog(),
            }
            self.publish_pending().await;
        }
        self.close().await;
    }

    fn add(&mut self, task: T) {
        let ident = task.ident();
        if self.in_flight.is_empty() {
            self.last_result = Instant::now();
        }
        let play = task.play();
        self.in_flight.insert(
            ident,
            Pending {
                programs: task.programs(),
                play,
                task,
                job: None,
                faulted_on: BTreeSet::new(),
            },
        );
        self.wait_for_job(ident);
    }

    /// The game goes into the next job published.
    fn wait_for_job(&mut self, ident: GameIdent) {
        if self.to_publish.is_empty() {
            self.waiting_since = Some(Instant::now());
        }
        self.to_publish.push_back(ident);
    }

    fn next_job_name(&mut self) -> String {
        self.next_copy += 1;
        format!("{}-{}", self.session, self.next_copy)
    }

    /// Publishes what waits: jobs the queue did not confirm, then the
    /// waiting games in jobs (a full job at once, the rest after
    /// [`LINGER`]); on trouble, tries again a second later.
    async fn publish_pending(&mut self) {
        if self.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        self.retry_at = None;
        while let Some(name) = self.republish.pop_front() {
            let Some(payload) = self.jobs.get(&name).and_then(|s| s.payload.clone()) else {
                continue;
            };
            if let Err(e) = self.send(&name, payload).await {
                self.warn(&e);
                self.republish.push_front(name);
                self.retry_at = Some(Instant::now() + Duration::from_secs(1));
                return;
            }
        }
        loop {
            while let Some(front) = self.to_publish.front() {
                if self.in_flight.contains_key(front) {
                    break;
                }
                self.to_publish.pop_front();
            }
            let Some(first) = self.to_publish.front() else {
                self.waiting_since = None;
                return;
            };
            let per_job = wire::games_per_job(&self.in_flight[first].play);
            let lingered = self.waiting_since.is_none_or(|t| t.elapsed() >= LINGER);
            if self.to_publish.len() < per_job && !lingered {
                return;
            }
            let mut games = Vec::with_capacity(per_job);
            while games.len() < per_job {
                let Some(ident) = self.to_publish.pop_front() else {
                    break;
                };
                if self.in_flight.contains_key(&ident) {
                    games.push(ident);
                }
            }
            if let Err(e) = self.publish_job(&games).await {
                self.warn(&e);
                for ident in games.into_iter().rev() {
                    self.to_publish.push_front(ident);
                }
                self.retry_at = Some(Instant::now() + Duration::from_secs(1));
                return;
            }
        }
    }

    /// Makes sure the games' programs are in the store, then publishes the
    /// games as one job.
    async fn publish_job(&mut self, games: &[GameIdent]) -> Result<(), String> {
        let mut programs: Vec<Arc<dyn Upload>> = Vec::new();
        for ident in games {
            programs.extend(self.in_flight[ident].programs.iter().cloned());
        }
        for program in &programs {
            self.ensure_uploaded(program.as_ref()).await?;
        }
        let name = self.next_job_name();
        let message = JobMessage {
            format: wire::FORMAT,
            session: self.session.clone(),
            job: name.clone(),
            games: games
                .iter()
                .map(|ident| wire::GameJob {
                    game: *ident,
                    play: self.in_flight[ident].play.clone(),
                })
                .collect(),
        };
        let payload = message.encode();
        self.send(&name, payload.clone()).await?;
        for ident in games {
            if let Some(p) = self.in_flight.get_mut(ident) {
                p.job = Some(name.clone());
            }
        }
        self.jobs.insert(
            name,
            Sent {
                games: games.to_vec(),
                payload: Some(payload),
            },
        );
        Ok(())
    }

    /// Publishes a job's bytes under its name; the queue's confirmation
    /// comes later (`acks`).
    async fn send(&mut self, name: &str, payload: Vec<u8>) -> Result<(), String> {
        let publish = jetstream::message::PublishMessage::build()
            .payload(payload.into())
            .message_id(name);
        let ack = self
            .js
            .send_publish(jobs_subject(self.kind, self.scope), publish)
            .await
            .map_err(|e| format!("publishing a job: {e}"))?;
        let name = name.to_string();
        self.acks.push(Box::pin(async move {
            (name, ack.await.map_err(|e| e.to_string()))
        }));
        Ok(())
    }

    /// Puts a program into the object store unless it is there with the
    /// right digest.
    async fn ensure_uploaded(&mut self, program: &dyn Upload) -> Result<(), String> {
        let sha = program.sha256().to_string();
        if self.uploaded.contains(&sha) {
            return Ok(());
        }
        let expected = object_digest(&sha);
        let present = if self.reupload.contains(&sha) {
            false
        } else {
            match self.programs.info(&sha).await {
                Ok(info) => !info.deleted && info.digest.as_deref() == Some(expected.as_str()),
                Err(e) if e.kind() == jetstream::object_store::InfoErrorKind::NotFound => false,
                Err(e) => return Err(format!("looking up program {sha}: {e}")),
            }
        };
        if !present {
            let bytes = program
                .bytes()
                .map_err(|e| format!("reading program {sha}: {e}"))?;
            if crate::engine::prepare::sha256_hex(&bytes) != sha {
                return Err(format!(
                    "program {sha} does not have the hash it is stored under"
                ));
            }
            self.programs
                .put(sha.as_str(), &mut bytes.as_slice())
                .await
                .map_err(|e| format!("uploading program {sha}: {e}"))?;
        }
        self.reupload.remove(&sha);
        self.uploaded.insert(sha);
        Ok(())
    }

    async fn result(&mut self, msg: jetstream::Message, done: &crossbeam_channel::Sender<T::Done>) {
        // Taken into memory now; should this process die before the engine
        // stores it, the next run plays the game again.
        let _ = msg.ack().await;
        let r = match ResultMessage::decode(&msg.payload) {
            Ok(r) => r,
            Err(e) => {
                self.warn(&format!("a result that cannot be read was ignored: {e}"));
                return;
            }
        };
        if r.session != self.session {
            return;
        }
        self.last_result = Instant::now();
        let worker = printable_name(&r.worker);
        let mut answered = HashSet::new();
        for wire::GameResult { game, outcome } in r.results {
            if game.tournament != self.scope || !answered.insert(game) {
                continue;
            }
            self.game_result(game, &worker, outcome, done);
        }
        // A job is answered as a whole: a game its answer left out goes
        // back to the queue (unless another job carries it by now).
        if let Some(sent) = self.jobs.remove(&r.job) {
            for game in sent.games {
                let carried = self
                    .in_flight
                    .get(&game)
                    .is_some_and(|p| p.job.as_deref() == Some(r.job.as_str()));
                if carried && !answered.contains(&game) {
                    self.fault(
                        game,
                        &worker,
                        "its answer to the job left this game out".into(),
                        done,
                    );
                }
            }
        }
    }

    /// One game's outcome from a worker.
    fn game_result(
        &mut self,
        game: GameIdent,
        worker: &str,
        outcome: Outcome,
        done: &crossbeam_channel::Sender<T::Done>,
    ) {
        let Some(p) = self.in_flight.get(&game) else {
            // Played twice (redelivered after ack_wait, or published again
            // after a fault): the first result counted.
            self.duplicates += 1;
            return;
        };
        match outcome {
            Outcome::Fault(error) => {
                let error: String = error.chars().take(500).collect();
                self.fault(game, worker, error, done)
            }
            played => match p.task.accept(played) {
                Ok(d) => {
                    self.in_flight.remove(&game);
                    self.workers.entry(worker.to_string()).or_default().games += 1;
                    let _ = done.send(d);
                }
                Err(why) => self.fault(
                    game,
                    worker,
                    format!("sent a record no referee can have made ({why})"),
                    done,
                ),
            },
        }
    }

    /// A worker could not play a game: report it, and give the game to
    /// another worker (or, after three workers, to the engine as a fault).
    fn fault(
        &mut self,
        ident: GameIdent,
        worker: &str,
        error: String,
        done: &crossbeam_channel::Sender<T::Done>,
    ) {
        let stats = self.workers.entry(worker.to_string()).or_default();
        stats.faults += 1;
        stats.last_fault = error.clone();
        let faults = stats.faults;
        eprintln!(
            "knobeln: worker {worker} could not play the game of {ident}: {error} \
             (an infrastructure fault, not the participants'; the game goes back to the queue)"
        );
        if faults == 3 {
            eprintln!(
                "knobeln: worker {worker} keeps failing games for infrastructure reasons \
                 ({faults} so far); other workers play them. Check that machine."
            );
        }
        let Some(p) = self.in_flight.get_mut(&ident) else {
            return;
        };
        p.faulted_on.insert(worker.to_string());
        if p.faulted_on.len() >= MAX_FAULTING_WORKERS {
            let p = self.in_flight.remove(&ident).expect("in flight");
            let why = format!(
                "{} workers could not play it ({}); last: {error}",
                p.faulted_on.len(),
                p.faulted_on.iter().cloned().collect::<Vec<_>>().join(", ")
            );
            let _ = done.send(p.task.failed(why));
            return;
        }
        // Before the game is published again, its programs are looked up
        // in the store again (and put there if missing); a program the
        // worker names in its error (it could not fetch it, or it came with
        // another hash) is put there again in any case. Not every program
        // after every fault: putting one replaces its chunks, which would
        // pull them from under workers that are reading it.
        for prog in &p.programs {
            let sha = prog.sha256();
            self.uploaded.remove(sha);
            if error.contains(sha) {
                self.reupload.insert(sha.to_string());
            }
        }
        p.job = None;
        self.wait_for_job(ident);
    }

    async fn reopen_results(&mut self) {
        self.results = None;
        match self
            .results_consumer
            .stream()
            .max_messages_per_batch(256)
            .heartbeat(Duration::from_secs(5))
            .expires(Duration::from_secs(30))
            .messages()
            .await
        {
            Ok(s) => self.results = Some(s),
            Err(e) => {
                self.warn(&format!("reading results again: {e}"));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }

    fn watchdog(&mut self) {
        let quiet = self.last_result.elapsed();
        if !self.in_flight.is_empty() && quiet > Duration::from_secs(60) {
            self.warn(&format!(
                "no result for {} s with {} games in the queue: are workers running \
                 (`knobeln worker --nats URL`)?",
                quiet.as_secs(),
                self.in_flight.len()
            ));
        }
    }

    /// A warning, at most one a minute (the same trouble repeats while a
    /// server is down).
    fn warn(&mut self, text: &str) {
        let now = Instant::now();
        if self
            .last_warning
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(60))
        {
            return;
        }
        self.last_warning = Some(now);
        eprintln!("knobeln: {text}");
    }

    /// The session ends: its consumer goes, its left-over jobs go, and the
    /// workers' report is printed.
    async fn close(mut self) {
        let quick = Duration::from_secs(3);
        if let Ok(stream) = self.js.get_stream(RESULTS_STREAM).await {
            let _ = tokio::time::timeout(
                quick,
                stream.delete_consumer(&results_consumer_name(&self.session)),
            )
            .await;
        }
        if !self.in_flight.is_empty() {
            if let Ok(stream) = self.js.get_stream(JOBS_STREAM).await {
                let _ = tokio::time::timeout(
                    quick,
                    stream
                        .purge()
                        .filter(jobs_subject(self.kind, self.scope))
                        .into_future(),
                )
                .await;
            }
        }
        self.results = None;
        let mut lines: Vec<String> = self
            .workers
            .iter()
            .map(|(name, s)| {
                let mut l = format!("{name}: {} games", s.games);
                if s.faults > 0 {
                    l.push_str(&format!(
                        ", {} infrastructure faults (last: {})",
                        s.faults, s.last_fault
                    ));
                }
                l
            })
            .collect();
        if lines.is_empty() {
            lines.push("none answered".into());
        }
        eprintln!(
            "knobeln: workers of this run: {}; {} jobs published; {} duplicate results ignored",
            lines.join("; "),
            self.next_copy,
            self.duplicates
        );
    }
}

async fn next_result(
    results: &mut Option<jetstream::consumer::pull::Stream>,
) -> Option<Result<jetstream::Message, String>> {
    match results {
        Some(s) => s.next().await.map(|r| r.map_err(|e| e.to_string())),
        None => {
            // Opening the stream failed: try again in a moment.
            tokio::time::sleep(Duration::from_secs(1)).await;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_object_digest_is_the_stores_form_of_the_hash() {
        // SHA-256 of the empty string.
        let hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(
            object_digest(hex),
            "SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }

    #[test]
    fn worker_names_in_logs_are_printable_and_short() {
        assert_eq!(printable_name("w1\n\x1b[31m"), "w1[31m");
        assert_eq!(printable_name(&"x".repeat(100)).len(), 64);
        assert_eq!(printable_name(""), "(unnamed)");
    }
}
