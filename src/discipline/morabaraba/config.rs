//! `[morabaraba]`: the 2014 contest's parameters, with the seed's defaults,
//! and the limits its bots play under (its CPU time in seconds of the
//! seed's machine).
//!
//! What it deliberately does not do: read the file (`crate::config`).

use serde::{Deserialize, Serialize};

use crate::discipline::limits::{in_range, BotLimitsConfig};

/// `[morabaraba]`: the 2014 contest's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MorabarabaConfig {
    /// CPU seconds per bot and game (120), in seconds of the seed's test
    /// machine (a 2.0 GHz x86-64): see `speed_percent`.
    pub cpu_secs: u64,
    /// Memory per bot in MiB (512), "in total": the runtime's own needs
    /// included (no language allowance on top).
    pub memory_mb: u64,
    /// CPU time for one move, in ms (the seed sets none but the game's).
    pub reply_ms: u64,
    pub startup_ms: u64,
    /// This machine's speed against the seed's 2.0 GHz x86-64, in percent
    /// (150: it does in 1 s what that machine did in 1.5 s). A bot's CPU
    /// time here times this, over 100, is its time there: the CPU limit
    /// here is `cpu_secs` × 100 / `speed_percent`, and f(V) is computed
    /// from the converted time.
    pub speed_percent: u64,
}

impl Default for MorabarabaConfig {
    fn default() -> Self {
        MorabarabaConfig {
            cpu_secs: 120,
            memory_mb: 512,
            reply_ms: 130_000,
            startup_ms: 130_000,
            speed_percent: 100,
        }
    }
}

impl MorabarabaConfig {
    pub fn limits(&self) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: self.here_ms(self.reply_ms),
            startup_ms: self.here_ms(self.startup_ms),
            cpu_secs: self.here_ms(self.cpu_secs * 1000).div_ceil(1000),
            memory_mb: self.memory_mb,
            memory: crate::lines::MemoryCount::Total,
            work_kb: None,
            // The seed: 120 s of the program's own time per match (the
            // clock stops while it waits for the opponent); twice that,
            // and the start-up.
            waited_secs: self.here_ms(self.startup_ms).div_ceil(1000)
                + 2 * self.here_ms(self.cpu_secs * 1000).div_ceil(1000),
        }
    }

    /// A time of the seed's machine as this machine's (rounded up).
    fn here_ms(&self, seed_ms: u64) -> u64 {
        (seed_ms * 100).div_ceil(self.speed_percent.max(1))
    }

    /// CPU time measured here as the seed's machine's, in microseconds
    /// (integers only: the same on every machine for the same figures).
    pub fn seed_micros(&self, here_micros: u64) -> u64 {
        (u128::from(here_micros) * u128::from(self.speed_percent) / 100) as u64
    }

    pub fn validate(&self) -> Result<(), String> {
        in_range(
            "morabaraba",
            "speed_percent",
            self.speed_percent,
            10,
            10_000,
        )?;
        self.limits().validate("morabaraba")
    }
}
