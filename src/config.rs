//! The server's configuration: `knobeln.toml`, with environment overrides
//! for secrets, and the embedded default when there is no file (spool
//! transport under `./spool`, database `./knobeln.db`, and an open contest
//! timeline, so a new user can try everything at once).
//!
//! Parsing and validation only; nothing here opens a connection or a file
//! other than the config file and password files it names.

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
    /// At most this many registered teams (0: no limit).
    pub max_participants: u32,
    /// At most this many teams per organization (0: no limit).
    pub max_teams_per_organization: u32,
    /// At most this many compile requests per team per hour (0: no limit).
    pub compiles_per_team_per_hour: u32,
    /// At most this many replies to one sender address per day.
    pub replies_per_sender_per_day: u32,
    /// Processing attempts before a mail is set aside as failed.
    pub max_processing_attempts: u32,
    /// Sending attempts before an outgoing mail is given up.
    pub max_send_attempts: u32,
    /// At most this many mails that are none of the commands are forwarded
    /// to the organizer per day (0: none).
    pub forwards_per_day: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_mail_bytes: 512 * 1024,
            max_participants: 0,
            max_teams_per_organization: 0,
            compiles_per_team_per_hour: 20,
            replies_per_sender_per_day: 50,
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
    /// CPU seconds per strategy and game.
    pub cpu_secs: u64,
    /// Memory per strategy in kB (address space).
    pub memory_kb: u64,
    /// Wall-clock seconds per game.
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
            cpu_secs: 2,
            memory_kb: 1024,
            wall_secs: 10.0,
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
            limits: crate::sandbox::player::PlayerLimits {
                cpu_secs: self.cpu_secs.max(1),
                memory_bytes: self.memory_kb * 1024,
            },
            wall: std::time::Duration::from_secs_f64(self.wall_secs.max(0.1)),
        }
    }

    pub fn evolution(&self) -> crate::tournament::EvolutionConfig {
        crate::tournament::EvolutionConfig {
            exemplars_per_strategy: self.exemplars,
            max_generations: self.max_generations,
        }
    }
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SiteConfig {
    /// Regenerate the site into this folder after every group while the
    /// contest runs, and at its end (none: only `knobeln site DIR`).
    pub dir: Option<PathBuf>,
    /// Leave out the per-game pages (about 120 kB each).
    pub no_game_pages: bool,
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
    /// Games kept in the queue at once (0: 128).
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
    #[serde(default = "default_poll")]
    pub poll_secs: u64,
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
}

impl Config {
    /// Loads `path`, or the embedded default when `path` is `None` and
    /// `./knobeln.toml` does not exist. Applies environment overrides.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let default_path = Path::new("knobeln.toml");
        let path = match path {
            Some(p) => Some(p),
            None if default_path.exists() => Some(default_path),
            None => None,
        };
        let mut cfg = match path {
            None => Config::default(),
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.to_path_buf(),
                    source,
                })?;
                Self::parse(&text).map_err(|e| match e {
                    ConfigError::Parse { source, .. } => ConfigError::Parse {
                        path: p.to_path_buf(),
                        source,
                    },
                    other => other,
                })?
            }
        };
        cfg.apply_env(|k| std::env::var(k).ok());
        cfg.validate()?;
        Ok(cfg)
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
            "transport = \"imap\"\n[imap]\nhost = \"h\"\nport = 143\ntls = \"none\"\nuser = \"u\"\n\
             [smtp]\nhost = \"h\"\nport = 25\ntls = \"none\"\npassword = \"file\"\n",
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
}
