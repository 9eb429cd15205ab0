//! The sections of the configuration for the mail transport: which one
//! (`transport`), the spool folder, and `[imap]` and `[smtp]` with their
//! TLS modes and defaults.
//!
//! What it deliberately does not do: find, read or check the whole file
//! (the parent module), or open a connection (`crate::mail::transport`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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

/// The default of `[site] game_page_bytes`: 1 GiB. A group of 41 teams
/// plays 861 games; their pages take 12 KiB of blocks each at KNOBELN's
/// usual 11.3 kB (10.1 MiB a group), 36 KiB at the largest measured (33 kB:
/// 1000 throws spread over five decades; 30.3 MiB a group). Every game
/// keeps its page at 400 teams even at 33 kB a page (the first round's
/// share: 44.8 MiB for each of its ten groups), and up to about 1800 teams
/// at 11.3 kB; at 10,000 teams the game pages stay within 1 GiB (about
/// 150 pages a group before the final, every page of the final).
pub const DEFAULT_GAME_PAGE_BYTES: u64 = 1 << 30;

/// The default of `[site] game_page_bytes` for a bot discipline's contest:
/// 8 GiB, shared evenly by the pairings that kept a game
/// (`crate::site::bots::pairing_share`). A kept game's page and download
/// take about 96 KiB of blocks in Morabaraba, 14 KiB in FootSteps, 23 KiB
/// on the flooding island and 290 KiB for an ultimatum match (the small
/// fields' snapshots), so at the seeds' size of 200 bots every page of
/// Morabaraba (3.7 GiB), FootSteps and the flooding island is kept, and
/// one ultimatum match of each pairing's two (a share of 421 KiB; 5.5 GiB).
/// KNOBELN's 1 GiB would keep no page of Morabaraba or the ultimatum game
/// at 200 bots (a share of 52 KiB, smaller than one page).
pub const DEFAULT_BOT_GAME_PAGE_BYTES: u64 = 8 << 30;

/// The static results site (`knobeln site`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SiteConfig {
    /// Regenerate the site into this folder after every group while the
    /// contest runs, and at its end (none: only `knobeln site DIR`).
    pub dir: Option<PathBuf>,
    /// Leave out the per-game pages (about 11 kB each).
    pub no_game_pages: bool,
    /// The bytes of disk (4 KiB blocks) the contest's game pages may take
    /// in all (none: [`DEFAULT_GAME_PAGE_BYTES`] for KNOBELN,
    /// [`DEFAULT_BOT_GAME_PAGE_BYTES`] for a bot discipline; read it with
    /// [`SiteConfig::game_page_bytes_of`]). KNOBELN: the final round an
    /// eighth, the other rounds the rest by halves (round r: 7/8 / 2^r), a
    /// round's share evenly by its groups; a group's pages are written in
    /// slot order while they fit its share, the games after have none (the
    /// round's page says why). A bot discipline: a share per pairing that
    /// kept a game, its pages in the order of its games while they fit
    /// (the pairing's page says why).
    pub game_page_bytes: Option<u64>,
    /// Bot disciplines: how many games of each pairing keep their
    /// transcript (moves form) for a game page with its picture, the
    /// mails and the download: the first N repetitions (ultimatum), games
    /// (FootSteps) or runs per island (flooding); Morabaraba plays each
    /// pairing once. The other games are listed with their outcome only.
    pub transcripts_per_pairing: u32,
    /// Bot disciplines: the packed bytes a team's lines may take in all
    /// its kept transcripts, shared evenly by the kept games it can be in
    /// (at most: `BotDiscipline::kept_games_per_team`); a kept game whose
    /// share of one team's lines is larger keeps no moves (its page says
    /// whose lines; the result stands).
    pub transcript_bytes_per_team: u64,
    /// Bot disciplines: once the contest is finished, each bot's page shows
    /// the source of each of its versions (never while it runs).
    pub publish_sources: bool,
}

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig {
            dir: None,
            no_game_pages: false,
            game_page_bytes: None,
            transcripts_per_pairing: 1,
            transcript_bytes_per_team: 64 << 20,
            publish_sources: false,
        }
    }
}

impl SiteConfig {
    /// The game pages' budget of a contest of `d`: the config's, else the
    /// default of KNOBELN or of the bot disciplines.
    pub fn game_page_bytes_of(&self, d: crate::discipline::Discipline) -> u64 {
        self.game_page_bytes
            .unwrap_or(if d.family().bots().is_some() {
                DEFAULT_BOT_GAME_PAGE_BYTES
            } else {
                DEFAULT_GAME_PAGE_BYTES
            })
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
    /// How many whole days a mail stays in the mailbox after the day it
    /// arrived, once the server has taken it in (then it is flagged
    /// `\Deleted` and expunged by its UID; 30: a mail of 1 March goes at
    /// the first take-in on 1 April, the mails due looked for at the first
    /// take-in of each day); 0 removes it at the take-in after its own. The database keeps a processed mail's first 4 KiB
    /// only: the mailbox is where its whole text is read, and what a
    /// restored backup takes in again, for these days.
    #[serde(default = "default_keep_days")]
    pub keep_days: u32,
}

/// The default of `imap.keep_days`: 30 days.
pub const DEFAULT_KEEP_DAYS: u32 = 30;

fn default_keep_days() -> u32 {
    DEFAULT_KEEP_DAYS
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
