//! The ultimatum game's data as the server keeps and sends it: its name, the setup
//! of a game (its own serde type: `crate::discipline::data`).
//!
//! What it deliberately does not do: play, plan or show anything (the
//! folder's other files).

use super::rules::Params;
use crate::discipline::game::Setup;
use crate::discipline::Discipline;

/// Its name.
pub const DISCIPLINE: Discipline = Discipline::ULTIMATUM;

/// The setup of a match of `p`.
pub fn setup(p: Params) -> Setup {
    Setup::new(DISCIPLINE, p)
}
