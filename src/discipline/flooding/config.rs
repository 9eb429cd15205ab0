//! `[flooding]`: the 2012 contest's parameters, with the seed's defaults,
//! and the limits its bots play under.
//!
//! What it deliberately does not do: read the file (`crate::config`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::discipline::limits::{in_range, BotLimitsConfig};

/// `[flooding]`: the 2012 contest's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FloodingConfig {
    /// Games per bot and island (1000).
    pub runs: u32,
    /// A game ends after this round at the latest.
    pub max_rounds: u32,
    /// The organizer's island files (the seed's text format): the
    /// contest's islands, with those the teams send in. Never in the kit,
    /// published on the results site after the contest.
    pub islands: Vec<PathBuf>,
    /// Islands drawn from the contest's seed at its start (`drawn-1`, …).
    /// Unset: 3 when `islands` names no file, else none. The kit's test
    /// islands are never played in the contest (the 2012 seed).
    pub drawn_islands: Option<u32>,
    /// CPU time per round, in ms: the seed's 0.1 s, counted as the bot's
    /// own time and as a budget over the game (by round `r`, `startup_ms
    /// + r × round_ms` in all; see docs/src/config.md).
    pub round_ms: u64,
    pub startup_ms: u64,
    /// CPU seconds per bot and game.
    pub cpu_secs: u64,
    pub memory_mb: u64,
    /// How often a team may improve its bot after its first accepted one
    /// (2012: "bis zu fünfmal nachbessern"); accepted versions count.
    pub revisions: u32,
}

impl Default for FloodingConfig {
    fn default() -> Self {
        FloodingConfig {
            runs: crate::discipline::flooding::planner::DEFAULT_RUNS,
            max_rounds: crate::discipline::flooding::rules::DEFAULT_MAX_ROUNDS,
            islands: Vec::new(),
            drawn_islands: None,
            round_ms: 100,
            startup_ms: 10_000,
            cpu_secs: 60,
            memory_mb: 256,
            revisions: 5,
        }
    }
}

impl FloodingConfig {
    /// How many islands the contest draws from its seed.
    pub fn drawn_island_count(&self) -> u32 {
        self.drawn_islands
            .unwrap_or(if self.islands.is_empty() { 3 } else { 0 })
    }

    pub fn params(&self) -> crate::discipline::flooding::rules::Params {
        crate::discipline::flooding::rules::Params {
            max_rounds: self.max_rounds,
        }
    }
    pub fn limits(&self) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: self.round_ms,
            startup_ms: self.startup_ms,
            cpu_secs: self.cpu_secs,
            memory_mb: self.memory_mb,
            memory: crate::lines::MemoryCount::PlusLanguage,
            work_kb: None,
            // The seed: 0.1 s per round, the server's work included; twice
            // that for every round of the longest game, and the start-up.
            waited_secs: (self.startup_ms + 2 * u64::from(self.max_rounds) * self.round_ms)
                .div_ceil(1000),
        }
    }
    pub fn validate(&self) -> Result<(), String> {
        in_range("flooding", "runs", u64::from(self.runs), 1, 100_000)?;
        in_range(
            "flooding",
            "max_rounds",
            u64::from(self.max_rounds),
            1,
            1_000_000,
        )?;
        in_range("flooding", "round_ms", self.round_ms, 1, 60_000)?;
        in_range("flooding", "revisions", u64::from(self.revisions), 0, 1000)?;
        if let Some(n) = self.drawn_islands {
            in_range("flooding", "drawn_islands", u64::from(n), 0, 20)?;
        }
        self.limits().validate("flooding")
    }
}
