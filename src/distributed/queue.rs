//! What the coordinator and the workers share about the queue: the
//! JetStream streams, subjects and consumer names, the connection options
//! (TLS, credentials), the queue's settings, creating the streams, and the
//! errors of talking to NATS. No job is published or played here.

use std::path::PathBuf;
use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::consumer::{pull, AckPolicy};
use async_nats::jetstream::stream::{DiscardPolicy, RetentionPolicy, StorageType};

use super::wire::{self, Discipline};
use crate::engine::EngineError;

/// The work-queue stream of jobs: subjects
/// `knobeln.jobs.v<format>.<discipline>.<tournament>`.
pub const JOBS_STREAM: &str = "KNOBELN_JOBS";
/// The stream of results: subjects `knobeln.results.<session>.<worker>`.
pub const RESULTS_STREAM: &str = "KNOBELN_RESULTS";
/// The object store of programs, named by their SHA-256 in hex.
pub const PROGRAMS_BUCKET: &str = "knobeln-programs";

/// The subject of a tournament's jobs of one discipline. It names the
/// message format: jobs of another format go to another queue, which
/// workers of that version pull from, so no worker takes a job it cannot
/// read (and none drops one).
pub fn jobs_subject(discipline: Discipline, tournament: i64) -> String {
    format!(
        "knobeln.jobs.v{}.{}.{tournament}",
        wire::FORMAT,
        discipline.as_str()
    )
}

/// The subjects of all jobs of one discipline (a worker consumer's filter).
pub fn jobs_filter(discipline: Discipline) -> String {
    format!("knobeln.jobs.v{}.{}.*", wire::FORMAT, discipline.as_str())
}

/// The durable consumer all workers of one discipline pull from.
pub fn workers_consumer(discipline: Discipline) -> String {
    format!("workers-{}-v{}", discipline.as_str(), wire::FORMAT)
}

/// Where a worker publishes its answers to a coordinator's session: a
/// subject of its own, whose last token is the worker's name. The NATS
/// server's permissions (deploy/nats-server.conf) let each worker's user
/// publish on `knobeln.results.*.<its user>` only, so the name the
/// coordinator reads off the subject ([`worker_of_subject`]) is one the
/// server vouches for.
pub fn results_subject(session: &str, worker: &str) -> String {
    format!("knobeln.results.{session}.{worker}")
}

/// The subjects of all answers to a session (its results consumer's filter).
pub fn results_filter(session: &str) -> String {
    format!("knobeln.results.{session}.*")
}

/// The worker an answer came from: the last token of the subject it was
/// published on, if the subject is one of `session`'s and the name is
/// valid ([`wire::valid_worker_name`]).
pub fn worker_of_subject<'a>(subject: &'a str, session: &str) -> Option<&'a str> {
    let worker = subject
        .strip_prefix("knobeln.results.")?
        .strip_prefix(session)?
        .strip_prefix('.')?;
    wire::valid_worker_name(worker).then_some(worker)
}

/// Faults of the distributed runner and the worker (infrastructure only).
#[derive(Debug, thiserror::Error)]
pub enum DistributedError {
    #[error("cannot connect to the NATS server at {url}: {error}")]
    Connect { url: String, error: String },
    #[error("NATS credentials: {0}")]
    Credentials(String),
    #[error("NATS JetStream: {0}")]
    JetStream(String),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

pub(crate) fn js_err(what: &str, e: impl std::fmt::Display) -> DistributedError {
    DistributedError::JetStream(format!("{what}: {e}"))
}

/// How to reach the NATS server and prove who we are.
#[derive(Clone, Default)]
pub struct NatsOptions {
    /// `nats://host:port` (or `tls://host:port` for TLS from the start).
    pub url: String,
    pub user: Option<String>,
    pub password: Option<String>,
    /// A `.creds` file (JWT and nkey seed, decentralized auth).
    pub creds_file: Option<PathBuf>,
    /// A file holding an nkey seed (`SU…`).
    pub nkey_file: Option<PathBuf>,
    /// CA certificate(s) to trust for the server's TLS certificate (TLS is
    /// then required).
    pub ca_file: Option<PathBuf>,
    /// Client certificate and key, for servers that verify clients.
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

impl std::fmt::Debug for NatsOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsOptions")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .field("creds_file", &self.creds_file)
            .field("nkey_file", &self.nkey_file)
            .field("ca_file", &self.ca_file)
            .field("cert_file", &self.cert_file)
            .field("key_file", &self.key_file)
            .finish()
    }
}

impl NatsOptions {
    /// Connects; reconnects forever afterwards (a server restart or a cut
    /// link is waited out). `retry` also waits for the first connection.
    pub async fn connect(
        &self,
        name: &str,
        retry: bool,
    ) -> Result<async_nats::Client, DistributedError> {
        self.connect_as(name, retry, None).await
    }

    /// [`Self::connect`] with reply subjects under `inbox` instead of `_INBOX`.
    pub async fn connect_as(
        &self,
        name: &str,
        retry: bool,
        inbox: Option<&str>,
    ) -> Result<async_nats::Client, DistributedError> {
        let mut o = async_nats::ConnectOptions::new()
            .name(name)
            .max_reconnects(None)
            .ping_interval(Duration::from_secs(10))
            .connection_timeout(Duration::from_secs(5))
            .reconnect_delay_callback(reconnect_delay);
        let who = name.to_string();
        o = o.event_callback(move |event| {
            let who = who.clone();
            async move {
                match event {
                    async_nats::Event::Disconnected => {
                        eprintln!("{who}: lost the NATS server; reconnecting")
                    }
                    async_nats::Event::Connected => eprintln!("{who}: connected to NATS"),
                    async_nats::Event::ServerError(e) => eprintln!("{who}: NATS server: {e}"),
                    _ => {}
                }
            }
        });
        if retry {
            o = o.retry_on_initial_connect();
        }
        if let Some(prefix) = inbox {
            o = o.custom_inbox_prefix(prefix);
        }
        if let Some(path) = &self.creds_file {
            o = o
                .credentials_file(path)
                .await
                .map_err(|e| DistributedError::Credentials(format!("{}: {e}", path.display())))?;
        }
        if let Some(path) = &self.nkey_file {
            let seed = std::fs::read_to_string(path)
                .map_err(|e| DistributedError::Credentials(format!("{}: {e}", path.display())))?;
            o = o.nkey(seed.trim().to_string());
        }
        if let Some(user) = &self.user {
            o = o.user_and_password(user.clone(), self.password.clone().unwrap_or_default());
        }
        if let Some(ca) = &self.ca_file {
            o = o.add_root_certificates(ca.clone()).require_tls(true);
        }
        match (&self.cert_file, &self.key_file) {
            (Some(c), Some(k)) => o = o.add_client_certificate(c.clone(), k.clone()),
            (None, None) => {}
            _ => {
                return Err(DistributedError::Credentials(
                    "a client certificate needs both its certificate and its key file".into(),
                ))
            }
        }
        o.connect(self.url.as_str())
            .await
            .map_err(|e| DistributedError::Connect {
                url: self.url.clone(),
                error: e.to_string(),
            })
    }
}

/// How long to wait before connection attempt `attempts` (counted from 1;
/// async-nats asks before the very first attempt too): none before the
/// first, then a quarter of a second more for each, at most two seconds.
pub(super) fn reconnect_delay(attempts: usize) -> Duration {
    Duration::from_millis((250 * attempts.saturating_sub(1) as u64).min(2000))
}

/// The coordinator's settings of the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    /// How long a job may be held by a worker without a sign of life before
    /// JetStream gives it to another worker (workers extend it while they
    /// play, so this is how long a dead worker's games wait).
    pub ack_wait: Duration,
    /// How many games the coordinator keeps in the queue at once.
    pub in_flight: usize,
}

impl QueueSettings {
    /// How long without a result, with games in flight, before a session
    /// asks whether the queue still holds its games (it may have lost them
    /// in a server's restart): twice `ack_wait` (a dead worker's jobs are
    /// back in the queue by then), at least five seconds.
    pub fn stall_after(&self) -> Duration {
        (self.ack_wait * 2).max(Duration::from_secs(5))
    }
}

impl Default for QueueSettings {
    fn default() -> Self {
        QueueSettings {
            ack_wait: Duration::from_secs(30),
            // 8 jobs of 128 games: enough for four workers of two threads
            // each to have a job playing and one waiting. (A bot contest's
            // jobs are one game each, with its kept folders: more would
            // hold more of them in the stream.)
            in_flight: 1024,
        }
    }
}

/// Creates (or updates) the streams, the worker consumers and the object
/// store: the coordinator's job (workers only bind to them).
pub async fn ensure_queue(
    js: &jetstream::Context,
    settings: &QueueSettings,
) -> Result<(), DistributedError> {
    let jobs = js
        .get_or_create_stream(jetstream::stream::Config {
            name: JOBS_STREAM.into(),
            description: Some("knobeln: games to play (a work queue)".into()),
            subjects: vec!["knobeln.jobs.>".into()],
            retention: RetentionPolicy::WorkQueue,
            storage: StorageType::File,
            max_message_size: wire::MAX_MESSAGE_BYTES as i32,
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        })
        .await
        .map_err(|e| js_err("the jobs stream", e))?;
    ensure_results_stream(js, settings).await?;
    for d in Discipline::ALL {
        jobs.create_consumer(pull::Config {
            durable_name: Some(workers_consumer(d)),
            description: Some(format!("knobeln workers playing {}", d.as_str())),
            filter_subject: jobs_filter(d),
            ack_policy: AckPolicy::Explicit,
            ack_wait: settings.ack_wait,
            max_deliver: -1,
            max_ack_pending: -1,
            ..Default::default()
        })
        .await
        .map_err(|e| js_err("the workers' consumer", e))?;
    }
    if js.get_object_store(PROGRAMS_BUCKET).await.is_err() {
        js.create_object_store(jetstream::object_store::Config {
            bucket: PROGRAMS_BUCKET.into(),
            description: Some("knobeln: strategy programs by SHA-256".into()),
            storage: StorageType::File,
            ..Default::default()
        })
        .await
        .map_err(|e| js_err("the programs' object store", e))?;
    }
    Ok(())
}

/// The results stream's configuration: what bounds the answers the NATS
/// server keeps.
///
/// A worker's user may publish on `knobeln.results.*.<user>`, for any
/// session, so what one credential can make the server keep must be
/// bounded by the stream itself, and charged to that credential:
/// - Interest retention: an answer is kept only while a session's consumer
///   (its filter `knobeln.results.<session>.*`) has not acknowledged it. An
///   answer to a session nobody reads is not stored at all, and when a
///   session's consumer goes (at its end, or an hour after its coordinator
///   was killed) its unread answers go with it.
/// - At most `in_flight` answers per subject, that is per session and
///   worker, new ones refused beyond (`DiscardNew` per subject): an honest
///   worker has at most one answer per job in flight, and a job carries at
///   least one of the session's `in_flight` games. A credential flooding a
///   live session fills its own subject only; another worker's answers are
///   never refused nor dropped for it.
/// - Each answer at most [`wire::MAX_MESSAGE_BYTES`].
///
/// No total in bytes: a total is shared, so a flooder reaching it would
/// have honest answers refused (or, discarding old ones, dropped).
fn results_stream_config(settings: &QueueSettings) -> jetstream::stream::Config {
    jetstream::stream::Config {
        name: RESULTS_STREAM.into(),
        description: Some("knobeln: results of games, per coordinator session".into()),
        subjects: vec!["knobeln.results.>".into()],
        retention: RetentionPolicy::Interest,
        storage: StorageType::File,
        max_message_size: wire::MAX_MESSAGE_BYTES as i32,
        max_messages_per_subject: settings.in_flight.max(1) as i64,
        discard: DiscardPolicy::New,
        discard_new_per_subject: true,
        // Results of a session whose consumer outlived it by accident.
        max_age: Duration::from_secs(7 * 24 * 3600),
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    }
}

/// Creates the results stream, or brings it to [`results_stream_config`]:
/// the limits are updated in place; a stream of an older version kept as
/// a work queue (whose retention NATS cannot change) is made again, which
/// drops answers waiting in it (the sessions reading them publish those
/// games again when no result comes, as after a server's restart).
async fn ensure_results_stream(
    js: &jetstream::Context,
    settings: &QueueSettings,
) -> Result<(), DistributedError> {
    let config = results_stream_config(settings);
    match js.get_stream(RESULTS_STREAM).await {
        Ok(mut stream) => {
            let info = stream
                .info()
                .await
                .map_err(|e| js_err("the results stream", e))?;
            if info.config.retention != config.retention {
                js.delete_stream(RESULTS_STREAM)
                    .await
                    .map_err(|e| js_err("the results stream of an older version", e))?;
                js.create_stream(config)
                    .await
                    .map_err(|e| js_err("the results stream", e))?;
            } else if info.config.max_messages_per_subject != config.max_messages_per_subject
                || info.config.discard != config.discard
                || !info.config.discard_new_per_subject
                || info.config.max_message_size != config.max_message_size
            {
                js.update_stream(config)
                    .await
                    .map_err(|e| js_err("the results stream's limits", e))?;
            }
        }
        Err(_) => {
            js.get_or_create_stream(config)
                .await
                .map_err(|e| js_err("the results stream", e))?;
        }
    }
    Ok(())
}

/// A job's name: `<session>-<number>-<16 random hex digits>`. The random
/// part keeps a worker from naming a job it never received: the
/// coordinator answers a job as a whole (a game its answer leaves out is
/// that worker's fault), so a guessable name would let one credential
/// fault the games of every job in flight. It names nothing else (the
/// games and their results do not depend on it).
pub fn job_name(session: &str, number: u64) -> String {
    format!("{session}-{number}-{}", random_hex(8))
}

/// A random name for a coordinator session (the subject its results come to).
pub fn new_session() -> String {
    random_hex(12)
}

/// `bytes` bytes from the OS's random source, in lower-case hex (twice as
/// many digits).
pub fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    getrandom::fill(&mut b).expect("the OS random source");
    let mut hex = String::with_capacity(2 * bytes);
    for x in b {
        hex.push(char::from_digit(u32::from(x >> 4), 16).expect("a hex digit"));
        hex.push(char::from_digit(u32::from(x & 15), 16).expect("a hex digit"));
    }
    hex
}
