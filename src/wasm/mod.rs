//! Strategies as WebAssembly modules: the one engine that runs them, and
//! the cache of compiled modules.
//!
//! A KNOBELN strategy is its C source compiled by clang for `wasm32` and
//! linked with the contest runtime ([`crate::toolchain::wasm`]). What it
//! can do is fixed by construction: it sees its own linear memory (at most
//! the contest's memory limit, 1024 kB), imports exactly the referee's two
//! functions (`knobeln.seed`, `knobeln.make_throw`), and every operator it
//! executes costs one unit of fuel. There is no instruction that reads a
//! clock, the CPU it runs on or anything outside its memory, and its
//! memory starts as its data segments and zeros: a strategy's behaviour is
//! a function of its code and its seed.
//!
//! The engine is the same on every machine: Cranelift for the baseline
//! x86-64 target (no feature inferred from the host's CPU, so the same
//! machine code and the same call-stack use everywhere), NaN
//! canonicalisation, only the WebAssembly 1.0 features (no bulk memory,
//! SIMD, threads, reference types, tail calls, …), fuel, and an epoch
//! watchdog against engine faults. Instances come from a pooling
//! allocator; both players of a game run on the caller's thread, the lead
//! as an ordinary call and the other as a fiber ([`seat`]).
//!
//! This module knows nothing of the game's rules: [`seat`] reports throws
//! and endings, [`crate::referee`] judges them.

//!
//! - [`check`]: the structural wall a module passes before it plays.
//! - [`engine`]: the engine's configuration, limits and watchdog ticks.
//! - [`modules`]: compiling modules and the module cache.
//! - [`seat`]: the two players of one game.
//! - [`spill`]: compiled modules the cache dropped, kept as files of this
//!   process's own.

pub mod check;
pub mod engine;
pub mod modules;
pub mod seat;
mod spill;

pub use engine::*;
pub use modules::{
    compile_counts, compile_uncached, keep_functions_of, leave_out_spill, limit_cache_entries,
    load, load_hashed, made_ready_here, CompileCounts, Loaded, NotPlayable, SpillProbe,
};
pub use seat::Strategy;
pub use seat::{
    lead, Control, Ending, GameWatch, OnThrow, Seat, SeatLimits, Step, StopAtFirstThrow,
    WatchdogTripped, HOST_CALL_FUEL,
};
