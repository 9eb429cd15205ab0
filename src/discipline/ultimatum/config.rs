//! `[ultimatum]`: the 2011 contest's parameters, with the seed's defaults,
//! and the limits its bots play under.
//!
//! What it deliberately does not do: read the file (`crate::config`).

use serde::{Deserialize, Serialize};

use crate::discipline::limits::{in_range, BotLimitsConfig};

/// `[ultimatum]`: the 2011 contest's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UltimatumConfig {
    /// Rounds per match (2500).
    pub rounds: u32,
    /// How often the whole round robin is played (100).
    pub repetitions: u32,
    /// The entry condition: a match of `rounds` rounds against itself must
    /// end within this many seconds of wall clock (60).
    pub entry_secs: u64,
    pub reply_ms: u64,
    pub startup_ms: u64,
    /// CPU seconds per bot and match.
    pub cpu_secs: u64,
    pub memory_mb: u64,
    /// The 2011 organizers' prize column: the first three places get
    /// P / (20000 · (N − 1)) euros, P their Plus (off by default).
    pub prize: bool,
    /// Whether a bot's working folder lasts across its matches (the FAQ:
    /// "a file stays until the bot that created it deletes it"), or is new
    /// for each match.
    pub folders: FolderKeeping,
    /// The quota of a kept working folder, in KiB (its tmpfs's size).
    pub folder_kb: u64,
}

/// What becomes of a bot's working folder between its matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FolderKeeping {
    /// Kept until the contest ends (the 2011 FAQ); the bot's matches run
    /// in one fixed order.
    #[default]
    Kept,
    /// New and empty for every match.
    Fresh,
}

impl Default for UltimatumConfig {
    fn default() -> Self {
        UltimatumConfig {
            rounds: 2500,
            repetitions: 100,
            entry_secs: 60,
            reply_ms: 2000,
            startup_ms: 10_000,
            cpu_secs: 60,
            memory_mb: 256,
            prize: false,
            folders: FolderKeeping::Kept,
            folder_kb: DEFAULT_FOLDER_KB,
        }
    }
}

/// A kept folder's default quota: 256 KiB (the seed sets none and asks for
/// no "gigabyte dimensions"; the FAQ finds little worth keeping). Two of
/// them travel with a game to a worker, within a NATS message.
pub const DEFAULT_FOLDER_KB: u64 = 256;

/// The largest quota when games go to workers (`[engine] nats`): two
/// folders at their stored form's bound (content, names, entries:
/// [`crate::sandbox::folder::encoded_bound`]), in base64, and the moves
/// within one 1 MiB message.
pub const MAX_FOLDER_KB_WITH_WORKERS: u64 = 256;

impl UltimatumConfig {
    /// The working folders the matches start with: `Some` when they are
    /// kept, with the quota in bytes.
    pub fn kept_folder_bytes(&self) -> Option<u64> {
        (self.folders == FolderKeeping::Kept).then_some(self.folder_kb << 10)
    }

    pub fn params(&self) -> crate::discipline::ultimatum::rules::Params {
        crate::discipline::ultimatum::rules::Params {
            rounds: self.rounds,
        }
    }
    pub fn limits(&self) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: self.reply_ms,
            startup_ms: self.startup_ms,
            cpu_secs: self.cpu_secs,
            memory_mb: self.memory_mb,
            memory: crate::lines::MemoryCount::PlusLanguage,
            work_kb: self.kept_folder_bytes().map(|b| b >> 10),
            // The seed: a match of `rounds` against itself ends within a
            // minute (`entry_secs`), "about double" is still tolerated;
            // each bot may take that double for its own.
            waited_secs: 2 * self.entry_secs,
        }
    }
    pub fn validate(&self) -> Result<(), String> {
        self.params()
            .validate()
            .map_err(|e| format!("ultimatum.{e}"))?;
        in_range(
            "ultimatum",
            "repetitions",
            u64::from(self.repetitions),
            1,
            10_000,
        )?;
        in_range("ultimatum", "entry_secs", self.entry_secs, 1, 3600)?;
        in_range("ultimatum", "folder_kb", self.folder_kb, 4, 16 << 10)?;
        self.limits().validate("ultimatum")
    }
}
