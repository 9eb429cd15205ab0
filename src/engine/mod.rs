//! The tournament engine: runs the pure [`crate::tournament`] core with real
//! games ([`crate::referee`]) on a pool of pinned worker threads, and keeps
//! every step in the [`crate::store`], so that a killed run resumes where it
//! stopped and ends with the same results.
//!
//! - [`prepare`]: compiles a folder of strategy sources into entries (cached
//!   by source hash in the store).
//! - [`pool`]: worker threads, each pinned to one CPU, playing games.
//! - [`run`]: the rounds, groups, rescheduling, advancement and the Evolution.
//! - [`group`]: a group's results (games, table, disqualified teams) from
//!   its schedule, one value the engine hands to every observer at the
//!   group's end.
//! - [`results`]: the contest's results as data (the `--json` output),
//!   rebuilt from the store alone.
//! - [`replay`]: a stored game's throws, by playing it again (the store
//!   keeps only its outcome and a digest of its throws).
//! - [`upgrade`]: native programs of an older version rebuilt as modules.
//! - `synthetic` (tests only): a runner answering every game at once.
//!
//! The engine takes `now` from its caller through a [`Clock`] and never
//! decides rules itself: those are the tournament core's.

pub mod group;
pub mod pool;
pub mod prepare;
pub mod replay;
pub mod results;
pub mod run;
#[cfg(test)]
pub mod synthetic;
pub mod upgrade;

use chrono::{DateTime, Utc};

/// Gives the memory malloc holds free in its arenas (every thread's)
/// back to the system: glibc's `malloc_trim(0)`, which releases the whole
/// free pages inside each arena, not only at its top (nothing on other C
/// libraries). The games' threads allocate in arenas of their own, which
/// the server's thread does not reuse: without this, what a round's games
/// freed stays resident beside what the server's thread grows by
/// afterwards. About 2.5 ms a call at 10,000 teams (once a round).
pub fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free pages of the allocator's own
    // arenas, under their locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Where the engine gets "now" for timestamps (the shell passes the system
/// clock; tests may pass a fixed one).
pub trait Clock: Send {
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Engine faults: infrastructure, never a strategy's misbehaviour.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Compile(#[from] crate::toolchain::compile::CompileError),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Wasm(#[from] crate::wasm::WasmError),
    #[error("tournament schedule: {0}")]
    Schedule(#[from] crate::tournament::schedule::ScheduleError),
    #[error("ranking: {0}")]
    Ranking(#[from] crate::tournament::ranking::RankingError),
    #[error("evolution: {0}")]
    Evolution(#[from] crate::tournament::evolution::EvolutionError),
    #[error("game {key} could not be refereed ({attempts} tries): {error}")]
    Referee {
        key: String,
        attempts: u32,
        error: String,
    },
    #[error("the stored tournament does not match: {0}")]
    Mismatch(String),
    #[error("{0}")]
    Invalid(String),
    #[error("stopped on request; running it again resumes")]
    Stopped,
    #[error("while reporting progress: {0}")]
    Observer(String),
}
