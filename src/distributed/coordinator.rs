//! The coordinator's side of the queue: [`NatsQueue`], games handed to
//! workers and their results taken back, for any kind of game (a
//! [`Task`]); [`NatsRunner`] is the engine's
//! [`Runner`](crate::engine::pool::Runner) on it for KNOBELN games, and the
//! bot contests use it with their own task.
//!
//! For each game submitted it makes sure its programs are in the
//! object store (uploaded once per session, checked against their hash),
//! publishes it to the work queue in a job with others (up to
//! `wire::games_per_job`; a game waits at most `session::LINGER` for
//! company; KNOBELN jobs of at most `publish::games_ahead` games out at once, the
//! rest held back, and smaller as a round's last games come:
//! `publish::job_size`) and waits for the answer on its own session's subject. A job is
//! answered as a whole: a game the answer leaves out goes back to the
//! queue. Results may come in any order, late or twice
//! (JetStream gives a job to another worker when one goes silent for
//! `ack_wait`): a result counts only if its game is still in flight, so a
//! game played twice is counted once. A worker that could not play a game
//! (a fault of its sandbox or machine, never the participant's) is reported
//! and the game goes back to the queue for another worker; a game that
//! three different workers could not play goes back to the engine as an
//! infrastructure fault (which retries it, then stops, as with local
//! threads). Everything a worker sends is checked (`wire::check_record`,
//! `wire::check_bot_game`).
//!
//! It does not decide anything about the tournament: that stays the
//! engine's, which applies results in schedule order, so which worker
//! played what never changes a result.
//!
//! The files: `task.rs` the [`Task`] and [`Upload`] traits; `handle.rs`
//! [`NatsQueue`], the caller's handle; `session.rs` the session itself
//! (its state, loop and report), with `publish.rs` (jobs and uploads) and
//! `results.rs` (results and faults), `recover.rs` (games the queue lost); `knobeln.rs`
//! [`KnobelnTask`] and [`NatsRunner`]. This file only declares and
//! re-exports them.

mod handle;
mod knobeln;
mod publish;
mod recover;
mod results;
mod session;
mod task;

pub use handle::NatsQueue;
pub use knobeln::{KnobelnTask, NatsRunner};
pub use task::{Task, Upload};
