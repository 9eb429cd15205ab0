//! What a match may cost each bot: [`LineLimits`] (CPU time per reply and
//! per match, the wall-clock backstops, memory, line length, disk and the
//! kept folder), and the sandbox limits a language gets from them.
//!
//! Not here: enforcing them ([`super::Match`]) or the words of a failure
//! (`failure.rs`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::lang::Toolchain;
use crate::sandbox::bot::BotLimits;

/// Limits of every bot in a match.
///
/// A reply's limit is CPU time, the bot's own: what its whole process tree
/// computed for that reply, read from its control group (the first
/// [`FIRST_LOOK`](crate::lines::FIRST_LOOK) of each reply is not counted: a reply that comes within
/// it is never looked at; the bot's CPU is one CPU, so that is at most as
/// much CPU time). The wall clock per reply is only a
/// backstop for a bot that waits (sleeps, blocks, deadlocks) instead of
/// computing. So the verdict on a reply depends on the bot alone: its
/// opponent is frozen while the referee waits for it (both clocks of a
/// reply that takes the look start once the kernel reports the freeze
/// held), and whatever another bot on its CPU computes is not its time
/// ([`Match`](crate::lines::Match)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineLimits {
    /// CPU time (whole tree) for one reply.
    pub reply_cpu: Duration,
    /// CPU time for the first reply (runtime start-up included).
    pub startup_cpu: Duration,
    /// Wall clock for one reply: the backstop ([`wall_backstop`]).
    pub reply_wall: Duration,
    /// Wall clock for the first reply.
    pub startup_wall: Duration,
    /// CPU time per bot and match, whole process tree.
    pub cpu: Duration,
    /// Memory per bot in MiB (the language's allowance comes on top).
    pub memory_mb: u64,
    /// Size of each of the bot's `/tmp` and `/work`, in MiB.
    pub disk_mb: u64,
    /// Size of `/work` instead of `disk_mb`, in KiB: the quota of a
    /// working folder kept across matches ([`Match::start_with_folders`](crate::lines::Match::start_with_folders)).
    #[serde(default)]
    pub work_kb: Option<u64>,
    /// Longest line a bot may send, in bytes (without the newline).
    pub max_line: usize,
    /// Wall clock for the whole match, if it has a budget (a trial game
    /// of a compile request): past it, the bot waited for fails.
    #[serde(default)]
    pub match_wall: Option<Duration>,
    /// Wall clock each bot may be waited for in all in one match (its
    /// start-up and every answer): past it, that bot fails (`waited`).
    /// With it the longest match is computable from the config whatever a
    /// bot does (a bot that sleeps before every answer, fast in its trial
    /// and slow in the contest).
    #[serde(default)]
    pub waited: Option<Duration>,
    /// Whether `memory_mb` is the bot's own (the language's allowance on
    /// top) or the whole process's, runtime included (Morabaraba's "512 MB
    /// in total").
    #[serde(default)]
    pub memory: MemoryCount,
}

/// What `memory_mb` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryCount {
    /// The bot's own memory; the language's allowance (a JVM's, an
    /// interpreter's) comes on top.
    #[default]
    PlusLanguage,
    /// Everything: the process tree may hold `memory_mb`, the runtime's
    /// own needs included; a runtime that is told a heap size gets what
    /// is left after its allowance.
    Total,
}

impl LineLimits {
    /// The size of a bot's `/work`, in bytes.
    pub fn work_bytes(&self) -> u64 {
        self.work_kb.map_or(self.disk_mb << 20, |kb| kb << 10)
    }

    /// The memory of a bot of `lang`: (the control group's limit, the
    /// size a runtime is told, both in MiB).
    pub fn memory_of(&self, lang: &crate::lang::Language) -> (u64, u64) {
        match self.memory {
            MemoryCount::PlusLanguage => (self.memory_mb + lang.memory_extra_mb, self.memory_mb),
            MemoryCount::Total => (
                self.memory_mb,
                self.memory_mb.saturating_sub(lang.memory_extra_mb).max(16),
            ),
        }
    }
}

/// The wall-clock backstop for a reply of `cpu` CPU time: four times as
/// much and two seconds more. A bot that computes is never near it: while
/// the referee waits for it, its opponent is frozen and its CPU is its
/// match's alone ([`CpuSlots`](crate::lines::CpuSlots)); another bot thawed on that CPU at the
/// same time fails once it has computed `cpu` itself.
pub fn wall_backstop(cpu: Duration) -> Duration {
    cpu * 4 + Duration::from_secs(2)
}

impl LineLimits {
    /// Limits with `reply` and `startup` CPU time per reply and the
    /// backstops that go with them; the rest as by default.
    pub fn with_replies(reply: Duration, startup: Duration) -> LineLimits {
        LineLimits {
            reply_cpu: reply,
            startup_cpu: startup,
            reply_wall: wall_backstop(reply),
            startup_wall: wall_backstop(startup),
            ..LineLimits::default()
        }
    }
}

impl Default for LineLimits {
    fn default() -> Self {
        LineLimits {
            reply_cpu: Duration::from_secs(2),
            startup_cpu: Duration::from_secs(10),
            reply_wall: wall_backstop(Duration::from_secs(2)),
            startup_wall: wall_backstop(Duration::from_secs(10)),
            cpu: Duration::from_secs(60),
            memory_mb: 256,
            disk_mb: 16,
            work_kb: None,
            max_line: 4096,
            match_wall: None,
            waited: None,
            memory: MemoryCount::PlusLanguage,
        }
    }
}

/// The sandbox limits a language gets for a match.
pub fn bot_limits(toolchain: &Toolchain, limits: &LineLimits) -> BotLimits {
    let lang = &toolchain.language;
    let memory = limits.memory_of(lang).0 << 20;
    BotLimits {
        memory_bytes: memory,
        address_space_fallback: lang.address_space_limit.then_some(memory + (64 << 20)),
        processes: lang.processes,
        cpu_secs: limits.cpu.as_secs() + 2,
        disk_bytes: limits.disk_mb << 20,
        work_bytes: limits.work_bytes(),
        open_files: 256,
    }
}
