//! `knobeln worker --nats URL [--jobs N] [--name NAME] [--cache DIR] [--play KINDS]`: plays
//! games from the NATS JetStream queue of a coordinator (`[engine] nats` in
//! the server's config, or `tournament --nats`) until SIGTERM. Also the NATS
//! connection flags shared with `tournament`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use knobeln::distributed::wire::Discipline;
use knobeln::distributed::worker::{
    default_cache_dir, host_name, worker_name, WorkerMode, WorkerOptions,
};
use knobeln::distributed::{NatsOptions, QueueSettings};

/// How to reach a NATS server and authenticate (the password comes from
/// `--nats-password-file` or the environment variable
/// `KNOBELN_NATS_PASSWORD`, never from the command line).
#[derive(Args, Debug, Clone, Default)]
pub struct NatsArgs {
    /// The NATS server with JetStream (`nats://host:4222`, or `tls://…`).
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
    /// NATS user (with --nats-password-file or KNOBELN_NATS_PASSWORD).
    #[arg(long, value_name = "NAME")]
    pub nats_user: Option<String>,
    /// File whose first line is the NATS password.
    #[arg(long, value_name = "FILE")]
    pub nats_password_file: Option<PathBuf>,
    /// NATS credentials file (JWT and nkey seed).
    #[arg(long, value_name = "FILE")]
    pub nats_creds: Option<PathBuf>,
    /// File holding an nkey seed.
    #[arg(long, value_name = "FILE")]
    pub nats_nkey: Option<PathBuf>,
    /// CA certificate to trust for the server's TLS certificate (TLS is then required).
    #[arg(long, value_name = "FILE")]
    pub nats_ca: Option<PathBuf>,
    /// Client certificate for TLS (with --nats-key).
    #[arg(long, value_name = "FILE")]
    pub nats_cert: Option<PathBuf>,
    /// Client key for TLS (with --nats-cert).
    #[arg(long, value_name = "FILE")]
    pub nats_key: Option<PathBuf>,
}

impl NatsArgs {
    /// The connection options, if `--nats` is given.
    pub fn options(&self) -> anyhow::Result<Option<NatsOptions>> {
        let Some(url) = &self.nats else {
            return Ok(None);
        };
        let password = match (
            &self.nats_password_file,
            std::env::var("KNOBELN_NATS_PASSWORD"),
        ) {
            (Some(f), _) => Some(
                knobeln::config::secret(&None, &Some(f.clone()))
                    .with_context(|| format!("reading {}", f.display()))?
                    .unwrap_or_default(),
            ),
            (None, Ok(p)) => Some(p),
            (None, Err(_)) => None,
        };
        Ok(Some(NatsOptions {
            url: url.clone(),
            user: self.nats_user.clone(),
            password,
            creds_file: self.nats_creds.clone(),
            nkey_file: self.nats_nkey.clone(),
            ca_file: self.nats_ca.clone(),
            cert_file: self.nats_cert.clone(),
            key_file: self.nats_key.clone(),
        }))
    }
}

/// The coordinator's queue settings, for `tournament --nats`.
#[derive(Args, Debug, Clone)]
pub struct QueueArgs {
    /// Seconds a silent worker's game waits before another worker gets it.
    #[arg(long, default_value_t = 30)]
    pub ack_wait_secs: u64,
    /// Games kept in the queue at once (a job carries up to 128: keep
    /// enough for every worker to hold two).
    #[arg(long, default_value_t = 1024)]
    pub in_flight: usize,
}

impl QueueArgs {
    pub fn settings(&self) -> anyhow::Result<QueueSettings> {
        anyhow::ensure!(
            self.ack_wait_secs >= 1,
            "--ack-wait-secs must be at least 1"
        );
        anyhow::ensure!(self.in_flight >= 1, "--in-flight must be at least 1");
        Ok(QueueSettings {
            ack_wait: Duration::from_secs(self.ack_wait_secs),
            in_flight: self.in_flight,
        })
    }
}

#[derive(Args, Debug)]
pub struct Worker {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// Games played at once (default: one per CPU).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// The worker's name, the last token of the subject it answers on (the
    /// coordinator goes by it): with --nats-user it is the user (the
    /// server allows that user its own subject only), else this (default:
    /// host-PID). Letters, digits, `-` and `_`.
    #[arg(long)]
    pub name: Option<String>,
    /// Folder of the program cache (default: ~/.cache/knobeln/programs).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Benchmark mode: answer every job at once with a canned record
    /// instead of playing (measures the coordinator, not the games).
    #[arg(long)]
    pub fake: bool,
    /// Test mode: report an infrastructure fault for every job.
    #[arg(long, hide = true)]
    pub faulty: bool,
    /// Test mode: wait this many milliseconds before playing a job.
    #[arg(long, hide = true, default_value_t = 0)]
    pub slow_ms: u64,
    /// Test mode: the Nth KNOBELN game this worker starts panics.
    #[arg(long, hide = true, value_name = "N")]
    pub panic_in_game: Option<u64>,
    /// Test mode: how often, in seconds, a worker waiting for the queue
    /// looks for it besides the word of its creation (default 5).
    #[arg(long, hide = true, value_name = "SECS")]
    pub look_every_secs: Option<u64>,
    /// The kinds of games to take: `knobeln` (compiled KNOBELN strategies),
    /// `bots` (the line-protocol disciplines: needs the contest's language
    /// toolchains on this machine). Default: both.
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    pub play: Vec<String>,
}

impl Worker {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let nats = self
            .nats
            .options()?
            .context("knobeln worker needs --nats URL (the coordinator's NATS server)")?;
        anyhow::ensure!(
            !(self.fake && self.faulty),
            "--fake and --faulty exclude each other"
        );
        let jobs = self
            .jobs
            .unwrap_or_else(|| knobeln::sandbox::allowed_cpus().len())
            .max(1);
        let name = worker_name(nats.user.as_deref(), self.name.as_deref(), || {
            format!("{}-{}", host_name(), std::process::id())
        })
        .map_err(|e| anyhow::anyhow!(e))?;
        let mode = if self.fake {
            WorkerMode::Fake
        } else if self.faulty {
            WorkerMode::Faulty
        } else {
            WorkerMode::Play
        };
        let play = self
            .play
            .iter()
            .map(|k| {
                Discipline::parse(k)
                    .with_context(|| format!("--play {k}: the kinds of games are knobeln and bots"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        knobeln::distributed::worker::run(WorkerOptions {
            nats,
            jobs,
            name,
            cache_dir: self.cache.unwrap_or_else(default_cache_dir),
            mode,
            play,
            delay_per_job: std::time::Duration::from_millis(self.slow_ms),
            panic_in_game: self.panic_in_game,
            look_every: self.look_every_secs.map_or(
                knobeln::distributed::worker::LOOK_FOR_THE_QUEUE_EVERY,
                |s| std::time::Duration::from_secs(s.max(1)),
            ),
        })?;
        Ok(ExitCode::SUCCESS)
    }
}
