//! One coordinator session on NATS JetStream, run on the queue's tokio
//! runtime: the games in flight, uploading their programs, publishing them
//! in jobs, taking results from the session's subject (checked, counted
//! once), giving a worker's failed game to another, and the workers' report
//! when the session ends.
//!
//! This file has the session's state, its loop and its end;
//! `publish.rs` and `results.rs` add the methods that publish games and
//! take results, `recover.rs` the one that publishes again what the queue
//! lost.
//!
//! Not here: the caller's handle (`handle.rs`), what a game is (the
//! [`Task`]), and anything about the tournament (the engine's).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer::pull, consumer::AckPolicy};
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot};

use super::task::{Task, Upload};
use crate::distributed::queue::{
    ensure_queue, jobs_subject, js_err, results_filter, DistributedError, NatsOptions,
    QueueSettings, JOBS_STREAM, PROGRAMS_BUCKET, RESULTS_STREAM,
};
use crate::distributed::wire::{Discipline, GameIdent, Play};

/// A game in flight.
pub(super) struct Pending<T> {
    pub(super) task: T,
    pub(super) programs: Vec<Arc<dyn Upload>>,
    pub(super) play: Play,
    /// The job that carries it now (`None` while it waits for one).
    pub(super) job: Option<String>,
    /// Workers that reported they could not play it.
    pub(super) faulted_on: BTreeSet<String>,
    /// How often the queue lost it (`recover.rs`).
    pub(super) lost: u32,
}

/// A job published: its games, and its bytes until the queue confirms it
/// (a job whose confirmation is lost is published again as it was, under
/// the same id, so JetStream stores it once).
pub(super) struct Sent {
    pub(super) games: Vec<GameIdent>,
    pub(super) payload: Option<Vec<u8>>,
}

/// What a worker did in this session.
#[derive(Default)]
pub(super) struct WorkerStats {
    pub(super) games: u64,
    pub(super) faults: u64,
    pub(super) last_fault: String,
}

type AckFuture = BoxFuture<'static, (String, Result<jetstream::publish::PublishAck, String>)>;

/// How long a game waits for others to share its job: a job is published
/// at once when it is full, else after this long (the engine hands over
/// the games that replace finished ones a few at a time).
pub(super) const LINGER: Duration = Duration::from_millis(2);

pub(super) struct Coordinator<T: Task> {
    pub(super) js: jetstream::Context,
    pub(super) programs: jetstream::object_store::ObjectStore,
    pub(super) results_consumer: jetstream::consumer::PullConsumer,
    pub(super) results: Option<jetstream::consumer::pull::Stream>,
    pub(super) session: String,
    /// The kind of jobs (their subject).
    pub(super) kind: Discipline,
    /// The tournament or bot contest.
    pub(super) scope: i64,
    pub(super) uploaded: HashSet<String>,
    /// Programs a worker could not use: put into the store again, whatever
    /// the store says it holds.
    pub(super) reupload: HashSet<String>,
    /// (program, worker): the programs each worker's faults had put into
    /// the store again, once each.
    pub(super) reupload_asked: HashSet<(String, String)>,
    pub(super) in_flight: HashMap<GameIdent, Pending<T>>,
    /// Games waiting for a job, in the order they came.
    pub(super) to_publish: VecDeque<GameIdent>,
    /// Since when the first of them waits.
    pub(super) waiting_since: Option<Instant>,
    /// Whether they wait because enough games are out (`publish::games_ahead`):
    /// then an answer, not the linger, lets the next job out.
    pub(super) held_back: bool,
    /// Jobs published and not yet answered, by name.
    pub(super) jobs: HashMap<String, Sent>,
    /// Jobs the queue did not confirm: published again as they are.
    pub(super) republish: VecDeque<String>,
    pub(super) acks: FuturesUnordered<AckFuture>,
    /// Jobs published so far (their names count up).
    pub(super) next_copy: u64,
    pub(super) retry_at: Option<Instant>,
    pub(super) workers: BTreeMap<String, WorkerStats>,
    pub(super) duplicates: u64,
    /// Faults ignored because the job their answer names does not carry
    /// the game (now).
    pub(super) stale_faults: u64,
    pub(super) last_result: Instant,
    pub(super) last_warning: Option<Instant>,
    /// How long without a result, with games in flight, before the session
    /// asks the queue whether it still holds them ([`Coordinator::
    /// recover_lost`]).
    pub(super) stall_after: Duration,
    /// The queue's settings (to create its streams and consumers again).
    pub(super) settings: QueueSettings,
    /// Whether the last check found results waiting that did not come.
    pub(super) results_were_waiting: bool,
    /// When it last asked.
    pub(super) last_recovery_check: Instant,
    /// Games published again because the queue had lost them.
    pub(super) recovered: u64,
}

/// The session's durable consumer of its results (created, or found as
/// it is when it exists with this configuration).
pub(super) async fn create_results_consumer(
    js: &jetstream::Context,
    session: &str,
) -> Result<jetstream::consumer::PullConsumer, DistributedError> {
    js.get_stream(RESULTS_STREAM)
        .await
        .map_err(|e| js_err("the results stream", e))?
        .create_consumer(pull::Config {
            durable_name: Some(results_consumer_name(session)),
            description: Some(format!("results for coordinator session {session}")),
            filter_subject: results_filter(session),
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
        .map_err(|e| js_err("the coordinator's results consumer", e))
}

pub(super) fn results_consumer_name(session: &str) -> String {
    format!("coordinator-{session}")
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
        let results_consumer = create_results_consumer(&js, &session).await?;
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
            reupload_asked: HashSet::new(),
            in_flight: HashMap::new(),
            to_publish: VecDeque::new(),
            waiting_since: None,
            held_back: false,
            jobs: HashMap::new(),
            republish: VecDeque::new(),
            acks: FuturesUnordered::new(),
            next_copy: 0,
            retry_at: None,
            workers: BTreeMap::new(),
            duplicates: 0,
            stale_faults: 0,
            last_result: Instant::now(),
            last_warning: None,
            stall_after: settings.stall_after(),
            settings: *settings,
            results_were_waiting: false,
            last_recovery_check: Instant::now(),
            recovered: 0,
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
            // before a retry after trouble is due (the tick covers that),
            // and not while enough jobs are out (an answer lets the next
            // one out).
            let linger = self
                .waiting_since
                .filter(|_| !self.held_back)
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
                _ = tick.tick() => {
                    self.watchdog();
                    self.recover_lost(&done).await;
                }
            }
            self.publish_pending().await;
        }
        self.close().await;
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
    pub(super) fn warn(&mut self, text: &str) {
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
            "knobeln: workers of this run: {}; {} jobs published; {} duplicate results ignored; \
             {} games published again that the queue had lost; {} faults ignored whose job \
             did not carry their game",
            lines.join("; "),
            self.next_copy,
            self.duplicates,
            self.recovered,
            self.stale_faults
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
