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

use serde::{Deserialize, Serialize};

mod mail;
mod sections;
#[cfg(test)]
mod tests;

pub use mail::*;
pub use sections::*;

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
    /// The sections of registered disciplines beyond the seeds' four
    /// (`[NAME]` of a discipline added by `registry::register`), as
    /// tables their seams read ([`crate::discipline::Sections::table`]).
    #[serde(skip)]
    pub other_sections: std::collections::BTreeMap<String, toml::Value>,
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
            other_sections: Default::default(),
        }
    }
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
            other: &self.other_sections,
            workers: if self.engine.nats.is_some() {
                crate::discipline::Workers::Nats
            } else {
                crate::discipline::Workers::Local
            },
        }
    }

    /// Sets a key of a bot discipline's section from `KEY=VALUE` (VALUE a
    /// TOML value: `rounds=5`, `name="x"`), as if the configuration's text
    /// said it: read back as the section's type, so an unknown key or a
    /// wrong type is refused in the section's words (`knobeln play
    /// --set`). The section's checks are its seam's ([`Config::validate`],
    /// or `BotDiscipline::validate` of the one discipline).
    pub fn set_in_section(
        &mut self,
        d: crate::discipline::Discipline,
        assignment: &str,
    ) -> Result<(), ConfigError> {
        let invalid = |e: String| ConfigError::Invalid(format!("{assignment}: {e}"));
        let Some((key, text)) = assignment.split_once('=') else {
            return Err(invalid("no `=`: give KEY=VALUE".into()));
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(invalid(format!(
                "`{key}` is no key of a section (letters, digits, `_`, `-`)"
            )));
        }
        let value = toml::from_str::<toml::Table>(&format!("v = {}", text.trim()))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .ok_or_else(|| {
                invalid(format!(
                    "`{}` is no TOML value (a text needs quotes: {key}=\"…\")",
                    text.trim()
                ))
            })?;
        let section = d.name();
        if !crate::discipline::registry::built_in().contains(&d) {
            // A registered discipline's section is its table.
            if crate::discipline::registry::of(d).is_none() {
                return Err(invalid(format!("{d} has no section")));
            }
            let table = self
                .other_sections
                .entry(section.to_string())
                .or_insert_with(|| toml::Value::Table(Default::default()));
            let Some(table) = table.as_table_mut() else {
                return Err(invalid(format!("[{section}] is no table")));
            };
            table.insert(key.to_string(), value);
            return Ok(());
        }
        let mut whole =
            toml::Table::try_from(&*self).map_err(|e| invalid(format!("the config: {e}")))?;
        let table = whole
            .entry(section)
            .or_insert_with(|| toml::Value::Table(Default::default()));
        let Some(table) = table.as_table_mut() else {
            return Err(invalid(format!("[{section}] is no table")));
        };
        table.insert(key.to_string(), value);
        let mut back: Config = toml::Value::Table(whole)
            .try_into()
            .map_err(|e: toml::de::Error| invalid(format!("[{section}] {}", e.message())))?;
        back.other_sections = std::mem::take(&mut self.other_sections);
        *self = back;
        Ok(())
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

    /// Parses a config text (no environment, no validation). A table
    /// named after a registered discipline beyond the seeds' four is that
    /// discipline's section ([`Config::other_sections`]).
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let error = |e| ConfigError::Parse {
            path: PathBuf::from("<config>"),
            source: Box::new(e),
        };
        let mut table: toml::Table = toml::from_str(text).map_err(error)?;
        let builtin = ["ultimatum", "flooding", "footsteps", "morabaraba"];
        let others: Vec<String> = crate::discipline::Discipline::bots()
            .into_iter()
            .map(|d| d.name().to_string())
            .filter(|n| !builtin.contains(&n.as_str()) && table.contains_key(n))
            .collect();
        if others.is_empty() {
            // The text itself, so that an error names its line.
            return toml::from_str(text).map_err(error);
        }
        let other_sections = others
            .into_iter()
            .filter_map(|n| table.remove(&n).map(|v| (n, v)))
            .collect();
        let rest = toml::to_string(&table).expect("a table as text");
        let mut config: Config = toml::from_str(&rest).map_err(error)?;
        config.other_sections = other_sections;
        Ok(config)
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
        check_contest_name(&self.contest.name).map_err(ConfigError::Invalid)?;
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
        check_keep_inbox_days(self.limits.keep_inbox_days, self.imap.as_ref())
            .map_err(ConfigError::Invalid)?;
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
        // Every discipline's section, whatever the contest plays (a broken
        // [flooding] is refused in a KNOBELN contest too), each by its seam.
        let sections = self.sections();
        for seam in crate::discipline::registry::all() {
            seam.validate(&sections).map_err(ConfigError::Invalid)?;
        }
        if !self.contest.address.contains('@') {
            return Err(ConfigError::Invalid(
                "contest.address must be a mail address".into(),
            ));
        }
        Ok(())
    }
}

/// `limits.keep_inbox_days` keeps a processed mail's key while anything
/// can deliver the mail again: at least [`MIN_KEEP_INBOX_DAYS`] (a
/// mailer's retries), and longer than the IMAP mailbox holds a mail taken
/// in (`imap.keep_days` whole days after the day it arrived, so up to
/// `keep_days` + 1 days after it arrived): a mailbox read again (its
/// UIDVALIDITY changed) must find each mail it hands over already stored.
fn check_keep_inbox_days(days: u32, imap: Option<&ImapConfig>) -> Result<(), String> {
    if days < MIN_KEEP_INBOX_DAYS {
        return Err(format!(
            "limits.keep_inbox_days = {days}: at least {MIN_KEEP_INBOX_DAYS} (a mailer \
             retries a mail for up to 5 days, and the retry must find the mail's key)"
        ));
    }
    if let Some(imap) = imap {
        if u64::from(days) <= u64::from(imap.keep_days) + 1 {
            return Err(format!(
                "limits.keep_inbox_days = {days} must be longer than imap.keep_days + 1 \
                 ({}): the mailbox may hand a mail over again while it holds it, and \
                 its key must still be in the database",
                u64::from(imap.keep_days) + 1
            ));
        }
    }
    Ok(())
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
