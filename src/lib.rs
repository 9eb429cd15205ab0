//! KNOBELN contest server: the library behind the `knobeln` binary.
//!
//! See `ARCHITECTURE.md` for the bird's-eye view. In short:
//! - [`game`]: the rules of the disciplines, pure.
//! - [`toolchain`]: turns a participant's C source into a checked, compiled
//!   strategy (lexical counter, source checks, gcc in a jail, symbol checks).
//! - [`sandbox`]: the process-level confinement for gcc and for strategies.
//! - [`referee`]: plays one game between two compiled strategies.
//! - [`lang`], [`lines`]: bots in any language (the language table and
//!   builds) and the referee core for line protocols.
//! - [`tournament`]: grouping, ranking, advancement, the Evolution (pure).
//! - [`discipline`]: which game a contest plays, its parameters, and one
//!   game of a bot discipline between built bots.
//! - [`seed`]: deterministic seeds.
//! - [`fuzzing`]: the fuzz harnesses' bodies (issue 35), for `fuzz/` and
//!   the corpus replay test; the server never calls it.

pub mod admin;
pub mod auth;
pub mod bench;
pub mod bench_bots;
pub mod bench_contest;
pub mod bench_fuel;
pub mod bench_mail;
pub mod bench_nats;
pub mod bench_site;
pub mod config;
pub mod contest;
pub mod decimal;
pub mod demo;
pub mod discipline;
pub mod distributed;
pub mod draw;
pub mod engine;
pub mod fuzzing;
pub mod game;
pub mod hash;
pub mod kit;
pub mod lang;
pub mod lines;
pub mod mail;
pub mod outbox;
pub mod protocol;
pub mod referee;
pub mod report;
pub mod sandbox;
pub mod seed;
pub mod server;
pub mod site;
pub mod store;
pub mod tables;
#[cfg(test)]
mod testing;
pub mod toolchain;
pub mod tournament;
pub mod wasm;
pub mod words;
