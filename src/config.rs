//! The server's configuration: `knobeln.toml`, with environment overrides
//! for secrets.
//!
//! The file is found by [`discover`]: `--config PATH`, else
//! `$KNOBELN_CONFIG`, else `./knobeln.toml`, else
//! `/etc/knobeln/knobeln.toml`; when none is there, the error lists the
//! places tried. Relative paths inside the file (database, spool, site,
//! password and key files, the RSM note) are relative to the file's folder,
//! never to the current directory ([`Config::resolve_paths`]), so `knobeln
//! status` means the same contest from any folder.
//!
//! [`Config::default`] (spool transport under `spool`, database
//! `knobeln.db`, an open contest timeline) is what `knobeln demo` and the
//! tests start from; a command never falls back to it silently.
//!
//! Parsing and validation only; nothing here opens a connection or a file
//! other than the config file and password files it names.

use std::ffi::OsStr;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The whole configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// The SQLite database.
    pub database: PathBuf,
    pub contest: ContestConfig,
    pub timeline: Timeline,
    pub limits: Limits,
    pub rules: Rules,
    pub transport: TransportKind,
    pub spool: SpoolConfig,
    pub site: SiteConfig,
    pub engine: EngineConfig,
    pub imap: Option<ImapConfig>,
    pub smtp: Option<SmtpConfig>,
    /// Bot languages added to or replacing the built-in ones (`[[language]]`).
    pub language: Vec<crate::lang::Language>,
    /// The bot disciplines' parameters (used when `contest.discipline` is theirs).
    pub ultimatum: crate::discipline::UltimatumConfig,
    pub flooding: crate::discipline::FloodingConfig,
    pub footsteps: crate::discipline::FootstepsConfig,
    pub morabaraba: crate::discipline::MorabarabaConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database: PathBuf::from("knobeln.db"),
            contest: ContestConfig::default(),
            timeline: Timeline::default(),
            limits: Limits::default(),
            rules: Rules::default(),
            transport: TransportKind::Spool,
            spool: SpoolConfig::default(),
            site: SiteConfig::default(),
            engine: EngineConfig::default(),
            imap: None,
            smtp: None,
            language: Vec::new(),
            ultimatum: Default::default(),
            flooding: Default::default(),
            footsteps: Default::default(),
            morabaraba: Default::default(),
        }
    }
}

/// Who the contest is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ContestConfig {
    /// The contest's own address: participants write to it, replies come from it.
    pub address: String,
    /// The organizer's address: told about mails that could not be processed.
    pub organizer: String,
    /// Shown in mails.
    pub name: String,
    /// Value of our `X-Loop` header (mail carrying it is never answered).
    pub loop_id: String,
    /// What is played: `knobeln` (default), `ultimatum`, `flooding`,
    /// `footsteps` or `morabaraba`; the bot disciplines take their
    /// parameters from their own section (`[ultimatum]`, …).
    pub discipline: crate::discipline::Discipline,
}

impl Default for ContestConfig {
    fn default() -> Self {
        ContestConfig {
            address: "knobeln@contest.example".into(),
            organizer: "organizer@contest.example".into(),
            name: "International KNOBELN contest".into(),
            loop_id: "knobeln@contest.example".into(),
            discipline: crate::discipline::Discipline::Knobeln,
        }
    }
}

/// The dates of the contest (announcement: "Important Dates"). All in UTC.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Timeline {
    pub registration_start: DateTime<Utc>,
    pub compile_start: DateTime<Utc>,
    pub registration_deadline: DateTime<Utc>,
    /// Noon UT in 1994. The compile service closes two hours before.
    pub contest_start: DateTime<Utc>,
    /// How long before the contest start the compile service closes.
    pub compile_closes_before_minutes: i64,
    /// Registered teams without an accepted strategy are told so this long
    /// before the compile service closes (once per team; 0: never).
    pub no_strategy_reminder_minutes: i64,
}

impl Default for Timeline {
    /// An open timeline: everything started long ago, the contest is far away.
    fn default() -> Self {
        let past = DateTime::parse_from_rfc3339("2000-01-01T00:00:00Z")
            .expect("date")
            .with_timezone(&Utc);
        let future = DateTime::parse_from_rfc3339("2999-12-31T12:00:00Z")
            .expect("date")
            .with_timezone(&Utc);
        Timeline {
            registration_start: past,
            compile_start: past,
            registration_deadline: future,
            contest_start: future,
            compile_closes_before_minutes: 120,
            no_strategy_reminder_minutes: 24 * 60,
        }
    }
}

impl Timeline {
    pub fn compile_end(&self) -> DateTime<Utc> {
        self.contest_start - chrono::Duration::minutes(self.compile_closes_before_minutes)
    }

    pub fn registration_open(&self, now: DateTime<Utc>) -> bool {
        now >= self.registration_start && now < self.registration_deadline
    }

    pub fn compile_open(&self, now: DateTime<Utc>) -> bool {
        now >= self.compile_start && now < self.compile_end()
    }
}

/// Limits against abuse and overload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest mail accepted, in bytes.
    pub max_mail_bytes: usize,
    /// At most this many registered teams (0: no limit). The default, 500,
    /// is what one machine of two cores serves with room to spare (a
    /// KNOBELN tournament of 500 teams plays in about a minute, `bench
    /// scale`) and five times the seeds' largest fields; raise it knowingly.
    pub max_participants: u32,
    /// At most this many teams per mailbox: an address in lower case
    /// without its `+tag` (0: no limit). The default, 1: a team is reached
    /// at its mailbox, and the tags of one mailbox are one person's, who
    /// could otherwise register a team per tag without a confirmation
    /// (a registration from the mailbox itself needs none).
    pub teams_per_mailbox: u32,
    /// At most this many teams per organization (0: no limit).
    pub max_teams_per_organization: u32,
    /// At most this many compile requests per team per hour (0: no limit).
    pub compiles_per_team_per_hour: u32,
    /// `serve` works on at most this many compile requests at once (one per
    /// team, teams in turn), apart from the other mails (at least 1).
    pub compiles_at_once: u32,
    /// At most this many replies to one sender address per day (0: no
    /// limit). `user+tag@Domain` counts as `user@domain`. Counts replies
    /// to strangers and to registered teams' mailboxes (a From line is a
    /// claim); never a team's reply proven by its authentification string,
    /// the answer to a registration that is kept, or a contest mail.
    pub replies_per_sender_per_day: u32,
    /// At most this many replies to all strangers of one domain per day (0:
    /// no limit): a flood with forged senders stops here. A registered
    /// team's mailbox at that domain is not a stranger's.
    pub replies_per_domain_per_day: u32,
    /// At most this many replies to strangers in all per day (0: no
    /// limit): what forged senders at any number of domains can draw out of
    /// the server. Participants' replies never count here.
    pub stranger_replies_per_day: u32,
    /// At most this many replies per day to one team proven by its
    /// authentification string (compile reports, status, preferences;
    /// 0: no limit). Only the team can spend it.
    pub replies_per_team_per_day: u32,
    /// At most this many confirmation requests (a registration naming
    /// another address than its sender's) to the addresses of one domain
    /// per day; to one address at most one a day whatever this says.
    pub confirmations_per_domain_per_day: u32,
    /// At most this many confirmation requests in all per day (0: no
    /// limit): bounds the pending registrations stored (each at most
    /// 16 KiB of form) and the mails they send, however many domains.
    pub confirmations_per_day: u32,
    /// At most this many participant kits (`SEND knobelnsoftware`, about
    /// 141 kB each) to one sender per day (0: no limit).
    pub kits_per_sender_per_day: u32,
    /// At most this many participant kits to all senders of one domain per
    /// day (0: no limit).
    pub kits_per_domain_per_day: u32,
    /// At most this many participant kits to everybody together per day
    /// (0: no limit): what strangers at many domains can draw out of the
    /// server in kit bytes is this times the kit's size (about 14 MB a day
    /// at the default 100).
    pub kits_per_day: u32,
    /// The organizer gets at most one digest of failed outgoing and
    /// set-aside incoming mails per this many minutes (the first at once).
    pub digest_interval_minutes: u32,
    /// Processing attempts before a mail is set aside as failed.
    pub max_processing_attempts: u32,
    /// Sending attempts before an outgoing mail is given up.
    pub max_send_attempts: u32,
    /// At most this many strangers' mails that are none of the commands
    /// are forwarded to the organizer per day (0: none); a registered
    /// team's mailbox has 3 a day of its own.
    pub forwards_per_day: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_mail_bytes: 512 * 1024,
            max_participants: 500,
            teams_per_mailbox: 1,
            max_teams_per_organization: 0,
            compiles_per_team_per_hour: 20,
            compiles_at_once: 2,
            replies_per_sender_per_day: 50,
            replies_per_domain_per_day: 300,
            stranger_replies_per_day: 1000,
            replies_per_team_per_day: 200,
            confirmations_per_domain_per_day: 10,
            confirmations_per_day: 100,
            kits_per_sender_per_day: 2,
            kits_per_domain_per_day: 20,
            kits_per_day: 100,
            digest_interval_minutes: 60,
            max_processing_attempts: 3,
            max_send_attempts: 10,
            forwards_per_day: 20,
        }
    }
}

/// The game and tournament rules of the contest (defaults: 1994).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    pub a: i64,
    pub b: i64,
    pub k: u32,
    /// Throws per game (L).
    pub throws: u32,
    /// The CPU limit: fuel (WebAssembly operators) per strategy and game;
    /// the default is the announcement's 30 s on a SPARCstation 2
    /// ([`crate::referee::DEFAULT_FUEL`]).
    pub fuel: u64,
    /// Removed: the CPU limit is `fuel`, the same on every machine. Only
    /// read to refuse a config that still sets it, with the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_secs: Option<u64>,
    /// Memory per strategy in kB: the module's linear memory (data, heap
    /// and stack), whole WebAssembly pages of 64 kB.
    pub memory_kb: u64,
    /// The watchdog: seconds of each player's own running time per game
    /// (against faults of the engine; fuel runs out long before; past it
    /// the game is played again, never a player's failure).
    pub wall_secs: f64,
    /// Exemplars per strategy in the Knobeln Evolution.
    pub exemplars: u64,
    /// Generation cap of the Evolution.
    pub max_generations: u32,
    /// Games played in parallel (0: one per CPU).
    pub jobs: usize,
    /// A paragraph of the organizer's for the round summaries (RSM): a text
    /// file, read when a summary goes out.
    pub rsm_note_file: Option<PathBuf>,
    /// Mails with game protocols (DGP) are split into numbered parts of at
    /// most this many bytes.
    pub max_protocol_mail_bytes: usize,
    /// The process playing the contest renews its lease on it every quarter
    /// of this; another may take it over this long after the last renewal.
    pub lease_secs: u64,
    /// After each round the contest pauses this long for the organizer's
    /// round summary (RSM), sent with `knobeln rsm` or by mail; 0: no
    /// pause, the automatic summary goes out at once.
    pub rsm_pause_minutes: u64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            a: 1,
            b: 12288,
            k: 8,
            throws: 1000,
            fuel: crate::referee::DEFAULT_FUEL,
            cpu_secs: None,
            memory_kb: 1024,
            wall_secs: crate::referee::DEFAULT_WALL.as_secs_f64(),
            exemplars: 5,
            max_generations: 1000,
            jobs: 0,
            rsm_note_file: None,
            max_protocol_mail_bytes: 200 * 1024,
            lease_secs: 60,
            rsm_pause_minutes: 0,
        }
    }
}

impl Rules {
    /// The referee configuration these rules describe.
    pub fn referee(&self) -> crate::referee::RefereeConfig {
        crate::referee::RefereeConfig {
            params: crate::game::Params {
                a: self.a,
                b: self.b,
                k: self.k,
                l: self.throws,
            },
            limits: crate::referee::PlayerLimits {
                memory_bytes: self.memory_kb * 1024,
                ..Default::default()
            },
            wall: std::time::Duration::from_secs_f64(self.wall_secs.max(0.1)),
            fuel: self.fuel,
        }
    }

    pub fn evolution(&self) -> crate::tournament::EvolutionConfig {
        crate::tournament::EvolutionConfig {
            exemplars_per_strategy: self.exemplars,
            max_generations: self.max_generations,
        }
    }
}

/// A strategy's memory in kB must be whole WebAssembly pages (64 kB), at
/// least 128 kB (the shadow stack and the runtime) and at most the
/// engine's slot ([`crate::wasm::MAX_MEMORY_BYTES`]).
pub fn check_memory_kb(memory_kb: u64) -> Result<(), String> {
    let max_kb = crate::wasm::MAX_MEMORY_BYTES / 1024;
    if !memory_kb.is_multiple_of(64) || !(128..=max_kb).contains(&memory_kb) {
        return Err(format!(
            "memory_kb must be a multiple of 64 (a WebAssembly page) between 128 and {max_kb} \
             (got {memory_kb})"
        ));
    }
    Ok(())
}

/// How mail comes in and goes out.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// Files in `spool/incoming/` and `spool/outgoing/`.
    Spool,
    /// IMAP in, SMTP out.
    Imap,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SpoolConfig {
    pub dir: PathBuf,
    /// Seconds between scans of the incoming folder in `serve`.
    pub poll_secs: u64,
}

impl Default for SpoolConfig {
    fn default() -> Self {
        SpoolConfig {
            dir: PathBuf::from("spool"),
            poll_secs: 2,
        }
    }
}

/// The static results site (`knobeln site`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SiteConfig {
    /// Regenerate the site into this folder after every group while the
    /// contest runs, and at its end (none: only `knobeln site DIR`).
    pub dir: Option<PathBuf>,
    /// Leave out the per-game pages (about 120 kB each).
    pub no_game_pages: bool,
    /// Bot disciplines: how many games of each pairing keep their
    /// transcript (moves form) for a game page with its picture, the
    /// mails and the download: the first N repetitions (ultimatum), games
    /// (FootSteps) or runs per island (flooding); Morabaraba plays each
    /// pairing once. The other games are listed with their outcome only.
    pub transcripts_per_pairing: u32,
    /// Bot disciplines: once the contest is finished, each bot's page shows
    /// the source of each of its versions (never while it runs).
    pub publish_sources: bool,
}

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig {
            dir: None,
            no_game_pages: false,
            transcripts_per_pairing: 1,
            publish_sources: false,
        }
    }
}

/// Where games are played: local threads (the default), or workers on other
/// machines through NATS JetStream (`knobeln worker`; see deploy/README.md).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// The NATS server (`nats://host:4222`, `tls://…`): when set, games go
    /// to workers through its JetStream queue instead of local threads.
    pub nats: Option<String>,
    pub nats_user: Option<String>,
    /// The password, or use `nats_password_file` or `KNOBELN_NATS_PASSWORD`.
    pub nats_password: Option<String>,
    pub nats_password_file: Option<PathBuf>,
    /// A `.creds` file (JWT + nkey) instead of user and password.
    pub nats_creds_file: Option<PathBuf>,
    /// A file with an nkey seed instead of user and password.
    pub nats_nkey_file: Option<PathBuf>,
    /// CA certificate of the server's TLS certificate (TLS is then required).
    pub nats_ca_file: Option<PathBuf>,
    /// Client certificate and key, for servers that verify clients.
    pub nats_cert_file: Option<PathBuf>,
    pub nats_key_file: Option<PathBuf>,
    /// Seconds a dead worker's game waits before another worker gets it
    /// (0: 30).
    pub ack_wait_secs: u64,
    /// Games kept in the queue at once (0: 1024).
    pub in_flight: usize,
}

/// How a connection is secured.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TlsMode {
    /// Plain text (loopback only!).
    None,
    /// Plain connection upgraded with STARTTLS.
    Starttls,
    /// TLS from the first byte.
    Tls,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ImapConfig {
    pub host: String,
    pub port: u16,
    pub tls: TlsMode,
    pub user: String,
    /// The password, or use `password_file` or `KNOBELN_IMAP_PASSWORD`.
    #[serde(default)]
    pub password: Option<String>,
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    #[serde(default = "default_mailbox")]
    pub mailbox: String,
    /// How often to look for new mail when not waiting in IDLE (the server
    /// lacks IDLE, or `idle = false`).
    #[serde(default = "default_poll")]
    pub poll_secs: u64,
    /// Wait for new mail in IMAP IDLE (RFC 2177) where the server has it.
    #[serde(default = "default_idle")]
    pub idle: bool,
    /// How long one IDLE lasts before it is renewed (servers may drop an
    /// idle client after 30 minutes; RFC 2177 says renew within 29).
    #[serde(default = "default_idle_renew")]
    pub idle_renew_secs: u64,
}

/// The default of `imap.idle_renew_secs`: 25 minutes.
pub const DEFAULT_IDLE_RENEW_SECS: u64 = 25 * 60;
/// The longest IDLE RFC 2177 allows before renewing: 29 minutes.
pub const MAX_IDLE_RENEW_SECS: u64 = 29 * 60;

fn default_idle() -> bool {
    true
}

fn default_idle_renew() -> u64 {
    DEFAULT_IDLE_RENEW_SECS
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SmtpConfig {
    pub host: String,
    pub port: u16,
    pub tls: TlsMode,
    #[serde(default)]
    pub user: Option<String>,
    /// The password, or use `password_file` or `KNOBELN_SMTP_PASSWORD`.
    #[serde(default)]
    pub password: Option<String>,
    #[serde(default)]
    pub password_file: Option<PathBuf>,
}

fn default_mailbox() -> String {
    "INBOX".into()
}

fn default_poll() -> u64 {
    5
}

/// Config faults.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parse {
        path: PathBuf,
        source: Box<toml::de::Error>,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(
        "no config file found; looked for {} (write one with `knobeln init`, or give --config PATH)",
        tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NotFound { tried: Vec<PathBuf> },
}

/// The environment variable naming the config file.
pub const CONFIG_ENV: &str = "KNOBELN_CONFIG";
/// The config file in the current directory, tried third.
pub const LOCAL_CONFIG: &str = "knobeln.toml";
/// The system-wide config file, tried last.
pub const SYSTEM_CONFIG: &str = "/etc/knobeln/knobeln.toml";

/// How the config file was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigOrigin {
    /// `--config PATH`.
    Flag,
    /// `$KNOBELN_CONFIG`.
    Environment,
    /// `./knobeln.toml`.
    WorkingDirectory,
    /// `/etc/knobeln/knobeln.toml`.
    System,
}

/// Chooses the config file: `flag`, else `env` (the value of
/// `$KNOBELN_CONFIG`, when set and not empty), else `./knobeln.toml`, else
/// `/etc/knobeln/knobeln.toml`, the last two only if `exists` says so. A
/// file named by the flag or the environment is taken even when it is
/// missing (reading it then fails and says so): an explicit choice never
/// falls through to another file.
pub fn discover(
    flag: Option<&Path>,
    env: Option<&OsStr>,
    exists: impl Fn(&Path) -> bool,
) -> Result<(PathBuf, ConfigOrigin), ConfigError> {
    if let Some(p) = flag {
        return Ok((p.to_path_buf(), ConfigOrigin::Flag));
    }
    if let Some(v) = env.filter(|v| !v.is_empty()) {
        return Ok((PathBuf::from(v), ConfigOrigin::Environment));
    }
    let local = Path::new(LOCAL_CONFIG);
    if exists(local) {
        return Ok((local.to_path_buf(), ConfigOrigin::WorkingDirectory));
    }
    let system = Path::new(SYSTEM_CONFIG);
    if exists(system) {
        return Ok((system.to_path_buf(), ConfigOrigin::System));
    }
    Err(ConfigError::NotFound {
        tried: vec![
            PathBuf::from("--config (not given)"),
            PathBuf::from(format!("${CONFIG_ENV} (not set)")),
            PathBuf::from("./knobeln.toml"),
            system.to_path_buf(),
        ],
    })
}

/// Whether `host` names this machine's loopback interface (127.0.0.0/8,
/// `::1`, `localhost`), where a plain-text connection never leaves the
/// machine.
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim();
    let h = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(h);
    let h = h.strip_suffix('.').unwrap_or(h);
    if h.eq_ignore_ascii_case("localhost") {
        return true;
    }
    h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl Config {
    /// The disciplines' sections, as the seam reads them.
    pub fn sections(&self) -> crate::discipline::Sections<'_> {
        crate::discipline::Sections {
            ultimatum: &self.ultimatum,
            flooding: &self.flooding,
            footsteps: &self.footsteps,
            morabaraba: &self.morabaraba,
        }
    }

    /// Finds the config file ([`discover`], with `--config` as `flag`) and
    /// loads it ([`Config::load_file`]).
    pub fn load(flag: Option<&Path>) -> Result<Config, ConfigError> {
        let env = std::env::var_os(CONFIG_ENV);
        let (path, _origin) = discover(flag, env.as_deref(), |p| p.is_file())?;
        Self::load_file(&path)
    }

    /// Loads the config file at `path`: parses it, makes its relative paths
    /// relative to its folder, applies environment overrides, validates.
    pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut cfg = Self::parse(&text).map_err(|e| match e {
            ConfigError::Parse { source, .. } => ConfigError::Parse {
                path: path.to_path_buf(),
                source,
            },
            other => other,
        })?;
        let absolute = std::path::absolute(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let folder = absolute.parent().unwrap_or(Path::new("/"));
        cfg.resolve_paths(folder);
        cfg.apply_env(|k| std::env::var(k).ok());
        cfg.validate()?;
        Ok(cfg)
    }

    /// Makes every relative path of the config relative to `folder` (the
    /// config file's): the database, the spool and site folders, the RSM
    /// note, and the password, credential, key and certificate files.
    /// Absolute paths stay as they are.
    pub fn resolve_paths(&mut self, folder: &Path) {
        let fix = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = folder.join(&*p);
            }
        };
        let fix_opt = |p: &mut Option<PathBuf>| {
            if let Some(p) = p.as_mut() {
                fix(p);
            }
        };
        fix(&mut self.database);
        fix(&mut self.spool.dir);
        fix_opt(&mut self.site.dir);
        fix_opt(&mut self.rules.rsm_note_file);
        if let Some(imap) = self.imap.as_mut() {
            fix_opt(&mut imap.password_file);
        }
        if let Some(smtp) = self.smtp.as_mut() {
            fix_opt(&mut smtp.password_file);
        }
        let e = &mut self.engine;
        for p in [
            &mut e.nats_password_file,
            &mut e.nats_creds_file,
            &mut e.nats_nkey_file,
            &mut e.nats_ca_file,
            &mut e.nats_cert_file,
            &mut e.nats_key_file,
        ] {
            fix_opt(p);
        }
    }

    /// Parses a config text (no environment, no validation).
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: PathBuf::from("<config>"),
            source: Box::new(e),
        })
    }

    /// The bot languages: the built-ins with this config's `[[language]]`s.
    pub fn languages(&self) -> Result<crate::lang::LanguageTable, String> {
        crate::lang::LanguageTable::with(&self.language)
    }

    /// Secrets from the environment win over the file.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) {
        if let (Some(imap), Some(p)) = (self.imap.as_mut(), var("KNOBELN_IMAP_PASSWORD")) {
            imap.password = Some(p);
        }
        if let (Some(smtp), Some(p)) = (self.smtp.as_mut(), var("KNOBELN_SMTP_PASSWORD")) {
            smtp.password = Some(p);
        }
        if let Some(p) = var("KNOBELN_NATS_PASSWORD") {
            self.engine.nats_password = Some(p);
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rules.cpu_secs.is_some() {
            return Err(ConfigError::Invalid(
                "[rules] cpu_secs is gone: strategies run as WebAssembly and their CPU limit \
                 is `fuel`, operators per strategy and game, the same on every machine \
                 (default 1710000000, the announcement's 30 s of a SPARCstation 2); remove \
                 cpu_secs or replace it by fuel"
                    .into(),
            ));
        }
        if self.rules.fuel == 0 {
            return Err(ConfigError::Invalid(
                "[rules] fuel must be at least 1".into(),
            ));
        }
        check_memory_kb(self.rules.memory_kb)
            .map_err(|e| ConfigError::Invalid(format!("[rules] {e}")))?;
        let t = &self.timeline;
        if t.registration_deadline <= t.registration_start {
            return Err(ConfigError::Invalid(
                "timeline: registration_deadline must come after registration_start".into(),
            ));
        }
        if t.compile_end() <= t.compile_start {
            return Err(ConfigError::Invalid(
                "timeline: the compile service would close before it opens".into(),
            ));
        }
        if self.transport == TransportKind::Imap && (self.imap.is_none() || self.smtp.is_none()) {
            return Err(ConfigError::Invalid(
                "transport = \"imap\" needs an [imap] and an [smtp] section".into(),
            ));
        }
        if let Some(imap) = &self.imap {
            if !(1..=MAX_IDLE_RENEW_SECS).contains(&imap.idle_renew_secs) {
                return Err(ConfigError::Invalid(format!(
                    "imap.idle_renew_secs must be between 1 and {MAX_IDLE_RENEW_SECS} \
                     (RFC 2177: renew an IDLE within 29 minutes)"
                )));
            }
        }
        let plain = [
            self.imap
                .as_ref()
                .filter(|c| c.tls == TlsMode::None)
                .map(|c| ("imap", &c.host)),
            self.smtp
                .as_ref()
                .filter(|c| c.tls == TlsMode::None)
                .map(|c| ("smtp", &c.host)),
        ];
        for (section, host) in plain.into_iter().flatten() {
            if !is_loopback_host(host) {
                return Err(ConfigError::Invalid(format!(
                    "[{section}] tls = \"none\" with host = \"{host}\": the password would \
                     cross the network in plain text; use tls = \"tls\" or \"starttls\" \
                     (\"none\" is allowed only for 127.0.0.1, ::1 and localhost)"
                )));
            }
        }
        if self.rules.lease_secs == 0 {
            return Err(ConfigError::Invalid(
                "rules.lease_secs must be at least 1".into(),
            ));
        }
        let p = self.rules.referee().params;
        p.validate()
            .map_err(|e| ConfigError::Invalid(format!("rules: {e}")))?;
        self.languages().map_err(ConfigError::Invalid)?;
        self.ultimatum.validate().map_err(ConfigError::Invalid)?;
        let max = crate::discipline::MAX_FOLDER_KB_WITH_WORKERS;
        if self.engine.nats.is_some()
            && self.ultimatum.kept_folder_bytes().is_some()
            && self.ultimatum.folder_kb > max
        {
            return Err(ConfigError::Invalid(format!(
                "ultimatum.folder_kb must be at most {max} with [engine] nats: two kept folders \
                 travel with each game to a worker, in one message (got {})",
                self.ultimatum.folder_kb
            )));
        }
        self.flooding.validate().map_err(ConfigError::Invalid)?;
        self.footsteps.validate().map_err(ConfigError::Invalid)?;
        self.morabaraba.validate().map_err(ConfigError::Invalid)?;
        if !self.contest.address.contains('@') {
            return Err(ConfigError::Invalid(
                "contest.address must be a mail address".into(),
            ));
        }
        Ok(())
    }
}

/// Reads a secret: the inline value, else the file's first line.
pub fn secret(
    inline: &Option<String>,
    file: &Option<PathBuf>,
) -> Result<Option<String>, ConfigError> {
    if let Some(s) = inline {
        return Ok(Some(s.clone()));
    }
    if let Some(f) = file {
        let text = std::fs::read_to_string(f).map_err(|source| ConfigError::Read {
            path: f.clone(),
            source,
        })?;
        return Ok(Some(text.lines().next().unwrap_or("").to_string()));
    }
    Ok(None)
}

/// The commented example written by `knobeln init` (also `deploy/knobeln.toml`).
pub const EXAMPLE: &str = include_str!("../deploy/knobeln.toml");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_parses_and_validates() {
        let cfg = Config::parse(EXAMPLE).unwrap();
        cfg.validate().unwrap();
    }

    #[test]
    fn the_default_is_spool_with_an_open_timeline() {
        let cfg = Config::default();
        assert_eq!(cfg.transport, TransportKind::Spool);
        let now = Utc::now();
        assert!(cfg.timeline.registration_open(now));
        assert!(cfg.timeline.compile_open(now));
    }

    #[test]
    fn compile_service_closes_two_hours_before_the_start() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let t = Timeline {
            contest_start: at("1994-05-14T12:00:00Z"),
            compile_start: at("1994-03-23T00:00:00Z"),
            ..Timeline::default()
        };
        assert!(t.compile_open(at("1994-05-14T09:59:59Z")));
        assert!(!t.compile_open(at("1994-05-14T10:00:00Z")));
        assert!(!t.compile_open(at("1994-03-22T23:59:59Z")));
    }

    #[test]
    fn environment_overrides_secrets() {
        let mut cfg = Config::parse(
            "transport = \"imap\"\n[imap]\nhost = \"127.0.0.1\"\nport = 143\ntls = \"none\"\nuser = \"u\"\n\
             [smtp]\nhost = \"localhost\"\nport = 25\ntls = \"none\"\npassword = \"file\"\n",
        )
        .unwrap();
        cfg.validate().unwrap();
        cfg.apply_env(|k| (k == "KNOBELN_SMTP_PASSWORD").then(|| "s3cret".to_string()));
        assert_eq!(cfg.smtp.unwrap().password.as_deref(), Some("s3cret"));
    }

    #[test]
    fn unknown_keys_are_errors_not_silence() {
        assert!(Config::parse("databse = \"x.db\"\n").is_err());
    }

    #[test]
    fn discovery_takes_flag_then_environment_then_cwd_then_etc() {
        let none = |_: &Path| false;
        let all = |_: &Path| true;
        let (p, o) = discover(Some(Path::new("a.toml")), Some(OsStr::new("b.toml")), all).unwrap();
        assert_eq!((p, o), (PathBuf::from("a.toml"), ConfigOrigin::Flag));
        let (p, o) = discover(None, Some(OsStr::new("b.toml")), all).unwrap();
        assert_eq!((p, o), (PathBuf::from("b.toml"), ConfigOrigin::Environment));
        let (p, o) = discover(None, Some(OsStr::new("")), all).unwrap();
        assert_eq!(
            (p, o),
            (
                PathBuf::from("knobeln.toml"),
                ConfigOrigin::WorkingDirectory
            )
        );
        let etc_only = |p: &Path| p == Path::new(SYSTEM_CONFIG);
        let (p, o) = discover(None, None, etc_only).unwrap();
        assert_eq!((p, o), (PathBuf::from(SYSTEM_CONFIG), ConfigOrigin::System));
        // An explicit choice is taken even when the file is missing.
        let (p, _) = discover(None, Some(OsStr::new("gone.toml")), none).unwrap();
        assert_eq!(p, PathBuf::from("gone.toml"));
        let err = discover(None, None, none).unwrap_err().to_string();
        for place in [
            "--config",
            "$KNOBELN_CONFIG",
            "./knobeln.toml",
            SYSTEM_CONFIG,
        ] {
            assert!(err.contains(place), "{place} in {err}");
        }
    }

    #[test]
    fn relative_paths_are_relative_to_the_config_folder() {
        let mut cfg = Config::parse(
            "database = \"state/k.db\"\n[spool]\ndir = \"/abs/spool\"\n\
             [site]\ndir = \"www\"\n[rules]\nrsm_note_file = \"note.txt\"\n\
             [engine]\nnats_ca_file = \"ca.pem\"\n",
        )
        .unwrap();
        cfg.resolve_paths(Path::new("/etc/knobeln"));
        assert_eq!(cfg.database, PathBuf::from("/etc/knobeln/state/k.db"));
        assert_eq!(cfg.spool.dir, PathBuf::from("/abs/spool"));
        assert_eq!(cfg.site.dir, Some(PathBuf::from("/etc/knobeln/www")));
        assert_eq!(
            cfg.rules.rsm_note_file,
            Some(PathBuf::from("/etc/knobeln/note.txt"))
        );
        assert_eq!(
            cfg.engine.nats_ca_file,
            Some(PathBuf::from("/etc/knobeln/ca.pem"))
        );
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for h in [
            "127.0.0.1",
            "127.8.9.10",
            "::1",
            "[::1]",
            "localhost",
            "LocalHost.",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "10.0.0.1",
            "mail.contest.example",
            "localhost.evil.example",
            "::2",
            "",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }

    #[test]
    fn plain_text_mail_connections_are_refused_beyond_loopback() {
        let text = |imap_host: &str, imap_tls: &str, smtp_host: &str, smtp_tls: &str| {
            format!(
                "transport = \"imap\"\n[imap]\nhost = \"{imap_host}\"\nport = 143\n\
                 tls = \"{imap_tls}\"\nuser = \"u\"\n[smtp]\nhost = \"{smtp_host}\"\n\
                 port = 587\ntls = \"{smtp_tls}\"\n"
            )
        };
        let check = |t: String| Config::parse(&t).unwrap().validate();
        check(text("127.0.0.1", "none", "::1", "none")).unwrap();
        check(text("mail.example", "tls", "mail.example", "starttls")).unwrap();
        let err = check(text("mail.example", "none", "127.0.0.1", "none"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("[imap]") && err.contains("plain text"),
            "{err}"
        );
        let err = check(text("::1", "none", "192.0.2.7", "none"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("[smtp]") && err.contains("192.0.2.7"), "{err}");
    }
}
