//! The morabaraba discipline, Morabaraba (2014), in one folder: its rules
//! (`rules.rs`, pure), its planner and scoring (`planner.rs`), what the
//! contest stores of a game (`keys.rs`), its tables (`tables.rs`: results
//! and per-opponent texts), the picture of a game for the results site
//! (`picture.rs`), the kit's home referee (`referee.py`), its demo bots
//! (`demo/`), and here this discipline's side of the seam
//! ([`super::seam::BotDiscipline`]).
//!
//! What it deliberately does not do: run a process, keep limits or blame a
//! bot (`crate::lines`), or store and mail anything (the contest run,
//! `crate::contest::bots`, reads its planner and tables). Not in the folder
//! yet: its config section, its variants of the data enums `Setup`,
//! `Outcome` and `Results`, and its trial (ARCHITECTURE.md lists them).

pub mod keys;
pub mod picture;
pub mod planner;
pub mod rules;
pub mod tables;

use crate::discipline::game::{run, Outcome, Played, Setup, Transcript};
use crate::discipline::seam::{BotDiscipline, DemoBot};
use crate::discipline::transcript::{replay_moves, Moves};
use crate::discipline::{BotLimitsConfig, Discipline, Sections};
use crate::game::lines::Exchange;
use crate::lines::{Match, MatchError};

/// This discipline behind the seam.
pub struct Morabaraba;

/// The demo bots (`demo/`): our own versions of the seed's sample bots
/// and stronger ones, in C and Python.
const DEMO_BOTS: &[DemoBot] = &[
    DemoBot {
        file: "first.c",
        source: include_str!("demo/first.c"),
    },
    DemoBot {
        file: "first.py",
        source: include_str!("demo/first.py"),
    },
    DemoBot {
        file: "miller.c",
        source: include_str!("demo/miller.c"),
    },
];

impl BotDiscipline for Morabaraba {
    fn discipline(&self) -> Discipline {
        Discipline::Morabaraba
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(sections.morabaraba).expect("json")
    }

    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig {
        sections.morabaraba.limits()
    }

    fn play(&self, _setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(
            m,
            crate::discipline::morabaraba::rules::MorabarabaGame::new(),
            transcript,
            Outcome::Morabaraba,
        )
    }

    fn expand(&self, _setup: &Setup, moves: &Moves) -> Vec<Exchange> {
        replay_moves(
            crate::discipline::morabaraba::rules::MorabarabaGame::new(),
            moves,
        )
    }

    fn picture(&self, setup: &Setup, transcript: &[Exchange], names: &[String]) -> String {
        picture::picture(setup, transcript, names)
    }

    fn demo_bots(&self) -> &'static [DemoBot] {
        DEMO_BOTS
    }

    fn referee_py(&self) -> &'static str {
        include_str!("referee.py")
    }

    fn kit_data(&self, sections: &Sections<'_>) -> serde_json::Value {
        let mut v = self.section(sections);
        // The per-move limit is only a backstop when it is above the game's.
        let m = &sections.morabaraba;
        v["move_is_backstop"] = (m.reply_ms >= m.cpu_secs * 1000).into();
        v
    }

    fn rules_template(&self) -> &'static str {
        "kit_rules_morabaraba"
    }
}
