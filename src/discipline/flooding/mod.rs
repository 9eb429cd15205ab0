//! The flooding discipline, the flooding island (freiesMagazin 2012), in
//! one folder: its rules (`rules.rs`, pure), its planner and scoring
//! (`planner.rs`), what the contest stores of a game (`keys.rs`),
//! `islands.rs` (the contest's islands drawn from its seed), its tables
//! (`tables.rs`: results and per-opponent texts), the picture of a game for
//! the results site (`picture.rs`), the kit's home referee (`referee.py`),
//! its demo bots (`demo/`), and here this discipline's side of the seam
//! ([`super::seam::BotDiscipline`]).
//!
//! What it deliberately does not do: run a process, keep limits or blame a
//! bot (`crate::lines`), or store and mail anything (the contest run,
//! `crate::contest::bots`, reads its planner and tables). Not in the folder
//! yet: its config section, its variants of the data enums `Setup`,
//! `Outcome` and `Results`, and its trial (ARCHITECTURE.md lists them).

pub mod islands;
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
pub struct Flooding;

/// The demo bots (`demo/`): our own versions of the seed's sample bots
/// and stronger ones, in C and Python.
const DEMO_BOTS: &[DemoBot] = &[
    DemoBot {
        file: "stand.c",
        source: include_str!("demo/stand.c"),
    },
    DemoBot {
        file: "stand.py",
        source: include_str!("demo/stand.py"),
    },
    DemoBot {
        file: "keeper.c",
        source: include_str!("demo/keeper.c"),
    },
    DemoBot {
        file: "wanderer.py",
        source: include_str!("demo/wanderer.py"),
    },
];

impl BotDiscipline for Flooding {
    fn discipline(&self) -> Discipline {
        Discipline::Flooding
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(sections.flooding).expect("json")
    }

    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig {
        sections.flooding.limits()
    }

    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(m, game(setup), transcript, Outcome::Flooding)
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
        "kit_rules_flooding"
    }

    fn kit_data(&self, sections: &Sections<'_>) -> serde_json::Value {
        let mut v = self.section(sections);
        v["islands"] = islands(sections)
            .iter()
            .map(|(name, text)| {
                let island = crate::discipline::flooding::rules::Island::parse(text).ok();
                serde_json::json!({
                    "name": name,
                    "width": island.as_ref().map(|i| i.width()).unwrap_or(0),
                    "height": island.as_ref().map(|i| i.height()).unwrap_or(0),
                })
            })
            .collect();
        v
    }

    fn revisions(&self, sections: &Sections<'_>) -> Option<u32> {
        Some(sections.flooding.revisions)
    }

    fn kit_files(&self, sections: &Sections<'_>) -> Vec<(String, String)> {
        islands(sections)
            .into_iter()
            .map(|(name, text)| (format!("island-{name}.txt"), text))
            .collect()
    }
}

/// The kit's test islands (name, text in the seed's format,
/// `test_islands/`): the trial plays them, the contest never does (the
/// 2012 seed's "Testinseln").
pub const TEST_ISLANDS: &[(&str, &str)] = &[
    ("lagoon", include_str!("test_islands/lagoon.txt")),
    ("atoll", include_str!("test_islands/atoll.txt")),
    ("ridge", include_str!("test_islands/ridge.txt")),
];

/// The islands a kit carries: the test islands only. The contest's own
/// (the organizer's files, the teams', those drawn from the seed) are
/// never in the kit; the site publishes them after the contest.
fn islands(_sections: &Sections<'_>) -> Vec<(String, String)> {
    TEST_ISLANDS
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect()
}

/// The game a flooding setup plays.
fn game(setup: &Setup) -> crate::discipline::flooding::rules::FloodGame {
    let Setup::Flooding {
        island,
        params,
        seed,
    } = setup
    else {
        unreachable!("a flooding setup")
    };
    crate::discipline::flooding::rules::FloodGame::new(island, *params, *seed)
}
