//! Morabaraba's data as the server keeps and sends it: its name, the setup
//! of a game (its own serde type: `crate::discipline::data`).
//!
//! What it deliberately does not do: play, plan or show anything (the
//! folder's other files).

use serde::{Deserialize, Serialize};

use crate::discipline::game::Setup;
use crate::discipline::Discipline;

/// Its name.
pub const DISCIPLINE: Discipline = Discipline::MORABARABA;

/// A game's setup: the game has no parameters (stored as `{}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MorabarabaSetup {}

/// The setup of a game.
pub fn setup() -> Setup {
    Setup::new(DISCIPLINE, MorabarabaSetup {})
}
