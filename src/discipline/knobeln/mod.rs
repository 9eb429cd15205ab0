//! KNOBELN (the 1994 International KNOBELN contest at Karlsruhe), as the
//! rest of the server asks of it ([`super::family::StrategyDiscipline`]):
//! its name and title. Its players are C strategies built
//! into WebAssembly modules.
//!
//! What is not here (each is the engine's machinery of the strategies'
//! family, KNOBELN its only discipline): the rules and parameters of a
//! game (`crate::game::knobeln`), the rounds of groups and the Evolution
//! (`crate::tournament`), the checks and the build of a strategy
//! (`crate::toolchain`), one game (`crate::referee`), the tournament
//! (`crate::engine`) and its mails and tables (`crate::contest`,
//! `crate::tables`).

use super::family::StrategyDiscipline;
use super::Discipline;

/// KNOBELN's seam.
pub struct Knobeln;

impl StrategyDiscipline for Knobeln {
    fn discipline(&self) -> Discipline {
        Discipline::KNOBELN
    }

    fn title(&self) -> &'static str {
        "KNOBELN"
    }
}
