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
//!
//! The server runs on Linux on x86-64 only: its bots' system-call filter
//! (`sandbox::bot_seccomp`), the calls the referee reads from `/proc` to
//! tell a bot at rest (`sandbox::bot`) and the native kit runtime are
//! written for that architecture's system calls; on any other the build
//! stops with one sentence saying so.

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
compile_error!(
    "knobeln runs on Linux on x86-64 only: the bots' system-call filter \
     (src/sandbox/bot_seccomp.rs) and the referee's look at a bot's system \
     calls (src/sandbox/bot/rest.rs) are written for x86-64's system calls; \
     building for another architecture needs its own filter, reviewed and \
     tested there"
);

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
