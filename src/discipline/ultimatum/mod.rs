//! The ultimatum discipline, the ultimatum game (freiesMagazin 2011), in
//! one folder: its rules (`rules.rs`, pure), its planner and scoring
//! (`planner.rs`), what the contest stores of a game (`keys.rs`), its
//! tables (`tables.rs`: results and per-opponent texts), the picture of a
//! game for the results site (`picture.rs`), the kit's home referee
//! (`referee.py`), its demo bots (`demo/`), and here this discipline's side
//! of the seam ([`super::seam::BotDiscipline`]).
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
pub struct Ultimatum;

/// The demo bots (`demo/`): our own versions of the seed's sample bots
/// and stronger ones, in C and Python.
const DEMO_BOTS: &[DemoBot] = &[
    DemoBot {
        file: "simple.c",
        source: include_str!("demo/simple.c"),
    },
    DemoBot {
        file: "more.c",
        source: include_str!("demo/more.c"),
    },
    DemoBot {
        file: "random.py",
        source: include_str!("demo/random.py"),
    },
    DemoBot {
        file: "adaptive.py",
        source: include_str!("demo/adaptive.py"),
    },
    DemoBot {
        file: "probe.c",
        source: include_str!("demo/probe.c"),
    },
];

impl BotDiscipline for Ultimatum {
    fn discipline(&self) -> Discipline {
        Discipline::Ultimatum
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(sections.ultimatum).expect("json")
    }

    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig {
        sections.ultimatum.limits()
    }

    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(m, game(setup), transcript, Outcome::Ultimatum)
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
        "kit_rules_ultimatum"
    }

    fn kit_data(&self, sections: &Sections<'_>) -> serde_json::Value {
        let mut v = self.section(sections);
        v["max_points"] = (2
            * u64::from(crate::discipline::ultimatum::rules::POT)
            * u64::from(sections.ultimatum.rounds))
        .into();
        v["kept_folders"] = sections.ultimatum.kept_folder_bytes().is_some().into();
        v
    }
}

/// The game an ultimatum setup plays.
fn game(setup: &Setup) -> crate::discipline::ultimatum::rules::Match {
    let Setup::Ultimatum(p) = setup else {
        unreachable!("an ultimatum setup")
    };
    crate::discipline::ultimatum::rules::Match::new(*p)
}
