//! `[footsteps]`: the 2007 contest's parameters, with the seed's defaults,
//! and the limits its bots play under.
//!
//! What it deliberately does not do: read the file (`crate::config`).

use serde::{Deserialize, Serialize};

use crate::discipline::limits::BotLimitsConfig;

/// `[footsteps]`: the 2007 contest's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FootstepsConfig {
    /// Games each pair plays in a round (300).
    pub games_per_pair: u32,
    /// Tie replays at most (3); then the tied share their place.
    pub max_tie_rounds: u32,
    /// Fields of the strip (7).
    pub fields: u32,
    /// Points each player starts with (50).
    pub points: u32,
    pub reply_ms: u64,
    pub startup_ms: u64,
    pub cpu_secs: u64,
    pub memory_mb: u64,
}

impl Default for FootstepsConfig {
    fn default() -> Self {
        FootstepsConfig {
            games_per_pair: 300,
            max_tie_rounds: 3,
            fields: 7,
            points: 50,
            reply_ms: 2000,
            startup_ms: 10_000,
            cpu_secs: 10,
            memory_mb: 256,
        }
    }
}

impl FootstepsConfig {
    pub fn params(&self) -> crate::discipline::footsteps::rules::Params {
        crate::discipline::footsteps::rules::Params {
            fields: self.fields,
            points: self.points,
        }
    }
    pub fn tournament(&self) -> crate::discipline::footsteps::planner::Config {
        crate::discipline::footsteps::planner::Config {
            games_per_pair: self.games_per_pair,
            max_tie_rounds: self.max_tie_rounds,
        }
    }
    pub fn limits(&self) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: self.reply_ms,
            startup_ms: self.startup_ms,
            cpu_secs: self.cpu_secs,
            memory_mb: self.memory_mb,
            memory: crate::lines::MemoryCount::PlusLanguage,
            work_kb: None,
            // The seed names no time: twice the CPU a game may use, and
            // the start-up.
            waited_secs: self.startup_ms.div_ceil(1000) + 2 * self.cpu_secs,
        }
    }
    pub fn validate(&self) -> Result<(), String> {
        self.params()
            .validate()
            .map_err(|e| format!("footsteps.{e}"))?;
        self.tournament()
            .validate()
            .map_err(|e| format!("footsteps: {e}"))?;
        self.limits().validate("footsteps")
    }
}
