//! What the coordinator needs to know about a kind of game: [`Task`] (what
//! a job says, which programs it needs, how a worker's answer is checked)
//! and [`Upload`] (a program the object store must hold first, named by its
//! SHA-256).
//!
//! Only the two traits and the engine's program as an [`Upload`]; the
//! KNOBELN task is in `knobeln.rs`, the bot games' task in `contest::bots`,
//! and nothing here talks to NATS.

use std::sync::Arc;

use crate::distributed::wire::{GameIdent, Outcome, Play};
use crate::engine::pool::Program;

/// A program the object store must hold before a job that needs it is
/// published: named by the SHA-256 of its bytes.
pub trait Upload: Send + Sync {
    fn sha256(&self) -> &str;
    /// The bytes (read when they are uploaded, checked against the hash).
    fn bytes(&self) -> Result<Vec<u8>, String>;
}

impl Upload for Program {
    fn sha256(&self) -> &str {
        &self.sha256
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        Ok(self.wasm.clone())
    }
}

/// A kind of game the coordinator hands to workers: what the job says,
/// which programs it needs, and how a worker's answer is checked.
pub trait Task: Send + 'static {
    /// What the caller gets back for the task.
    type Done: Send + 'static;
    /// The game's identity (results are de-duplicated by it).
    fn ident(&self) -> GameIdent;
    /// What a worker needs to play it.
    fn play(&self) -> Play;
    fn programs(&self) -> Vec<Arc<dyn Upload>>;
    /// A worker's played outcome, checked; `Err` says why no referee can
    /// have made it (the worker is at fault).
    fn accept(&self, outcome: Outcome) -> Result<Self::Done, String>;
    /// The game could not be played (infrastructure).
    fn failed(self, error: String) -> Self::Done;
}
