//! Benchmarks that print figures (never asserted in tests): games of the
//! WebAssembly engine (full games of three pairs of strategies, a game of
//! one throw, the engine's cost per throw), and the tournament's pool
//! against one game alone.
//!
//! The floor of a design with a process per strategy (a pipe round trip,
//! a referee exchanging throws with two locked-down processes) is measured
//! by `cargo bench --bench game` (`benches/game.rs`) beside these figures:
//! no strategy runs as a process any more.
//!
//! The files: `game.rs` the engine's games; `tournament.rs` the pool;
//! `compile.rs` the compile service; `mail.rs` registrations and the
//! spool; `scale.rs` a whole contest; `spill_load.rs` a load from the module
//! spill alone; `folder_fs.rs` the file system of a bench's folder;
//! `measure.rs` what they share. This
//! file only declares and re-exports them.

mod compile;
mod folder_fs;
mod game;
mod mail;
mod measure;
mod scale;
mod spill_load;
mod tournament;

pub use compile::{compile_bench, status_kb, CompileBench, CraneliftFigure};
pub use folder_fs::{BenchFolder, FolderFs, Journal};
pub use game::{bench_strategy, game_bench, GameBench, TRIVIAL_C};
pub use mail::{registration_bench, spool_bench, RegistrationBench, SpoolBench};
pub use measure::{cpu_time, dir_size, BenchError, CpuOf};
pub use scale::{scale_bench, ScaleBench, ScalePlay, ScaleSite};
pub use spill_load::{spill_load_bench, SpillLoadBench};
pub use tournament::{games_played, tournament_bench, trivial_tournament, TournamentBench};
