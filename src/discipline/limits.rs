//! The limits every bot of a match plays under, in the configuration's
//! words ([`BotLimitsConfig`]: milliseconds, seconds, MiB), and the range
//! check every discipline's section uses.
//!
//! What it deliberately does not do: enforce a limit (`crate::lines`,
//! `crate::sandbox`) or read a section (each discipline's `config.rs`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::lines::LineLimits;

/// The limits every bot of a match plays under, in the configuration's
/// words (milliseconds, seconds, MiB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotLimitsConfig {
    /// CPU time for one reply, in milliseconds (the bot's own; the wall
    /// clock backstop is [`crate::lines::wall_backstop`] of it).
    pub reply_ms: u64,
    /// CPU time for the first reply (the runtime's start-up), in ms.
    pub startup_ms: u64,
    /// CPU seconds per bot and game (whole process tree).
    pub cpu_secs: u64,
    /// Memory per bot in MiB (the language's allowance comes on top,
    /// unless `memory` says the figure is the total).
    pub memory_mb: u64,
    /// What `memory_mb` counts (not a key of the config: the discipline's).
    #[serde(skip)]
    pub memory: crate::lines::MemoryCount,
    /// The size of a bot's `/work` when it is a kept folder, in KiB (not
    /// a key of this table: `[ultimatum] folder_kb`).
    #[serde(skip)]
    pub work_kb: Option<u64>,
    /// The wall clock each bot may be waited for in one match, in seconds
    /// (not a key: each discipline derives it from its seed's terms; see
    /// the discipline's `limits`).
    #[serde(skip)]
    pub waited_secs: u64,
}

/// `section.name` is `v`, which must lie in `lo..=hi`; the error names the
/// key, the range and the value.
pub(crate) fn in_range(section: &str, name: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(format!("{section}.{name} must be in {lo}..={hi} (got {v})"))
    }
}

impl BotLimitsConfig {
    pub(crate) fn validate(&self, section: &str) -> Result<(), String> {
        in_range(section, "reply_ms", self.reply_ms, 1, 3_600_000)?;
        in_range(section, "startup_ms", self.startup_ms, 1, 3_600_000)?;
        in_range(section, "cpu_secs", self.cpu_secs, 1, 86_400)?;
        in_range(section, "memory_mb", self.memory_mb, 8, 65_536)
    }

    /// The referee's limits.
    pub fn line_limits(&self) -> LineLimits {
        LineLimits {
            cpu: Duration::from_secs(self.cpu_secs),
            memory_mb: self.memory_mb,
            memory: self.memory,
            work_kb: self.work_kb,
            waited: Some(Duration::from_secs(self.waited_secs)),
            ..LineLimits::with_replies(
                Duration::from_millis(self.reply_ms),
                Duration::from_millis(self.startup_ms.max(self.reply_ms)),
            )
        }
    }
}
