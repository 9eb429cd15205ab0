//! The footsteps discipline, FootSteps (2007), in one folder: its rules
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
pub struct Footsteps;

/// The demo bots (`demo/`): our own versions of the seed's sample bots
/// and stronger ones, in C and Python.
const DEMO_BOTS: &[DemoBot] = &[
    DemoBot {
        file: "one.c",
        source: include_str!("demo/one.c"),
    },
    DemoBot {
        file: "one.py",
        source: include_str!("demo/one.py"),
    },
    DemoBot {
        file: "steady.c",
        source: include_str!("demo/steady.c"),
    },
    DemoBot {
        file: "counter.py",
        source: include_str!("demo/counter.py"),
    },
];

impl BotDiscipline for Footsteps {
    fn discipline(&self) -> Discipline {
        Discipline::Footsteps
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(sections.footsteps).expect("json")
    }

    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig {
        sections.footsteps.limits()
    }

    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(m, game(setup), transcript, Outcome::Footsteps)
    }

    fn expand(&self, setup: &Setup, moves: &Moves) -> Vec<Exchange> {
        replay_moves(game(setup), moves)
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

    fn rules_template(&self) -> &'static str {
        "kit_rules_footsteps"
    }
}

/// The game a FootSteps setup plays.
fn game(setup: &Setup) -> crate::discipline::footsteps::rules::Game {
    let Setup::Footsteps(p) = setup else {
        unreachable!("a FootSteps setup")
    };
    crate::discipline::footsteps::rules::Game::new(*p)
}
