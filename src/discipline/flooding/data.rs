//! The flooding island's data as the server keeps and sends it: its name, the setup
//! of a game (its own serde type: `crate::discipline::data`), the results table, and the kit's test islands.
//!
//! What it deliberately does not do: play, plan or show anything (the
//! folder's other files).

use serde::{Deserialize, Serialize};

use super::planner;
use super::rules::{Island, Params};
use crate::discipline::game::Setup;
use crate::discipline::Discipline;

/// Its name.
pub const DISCIPLINE: Discipline = Discipline::FLOODING;

/// A game: the island (sent as its text and checked again by
/// [`Island::parse`] on arrival), the parameters and the game's seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloodSetup {
    #[serde(with = "island_text")]
    pub island: Island,
    pub params: Params,
    pub seed: u64,
}

/// The results: the islands' names and the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FloodResults {
    pub islands: Vec<String>,
    pub table: planner::FloodingTable,
}

/// The setup of a game on `island`.
pub fn setup(island: Island, params: Params, seed: u64) -> Setup {
    Setup::new(
        DISCIPLINE,
        FloodSetup {
            island,
            params,
            seed,
        },
    )
}

/// An island as its text format.
mod island_text {
    use crate::discipline::flooding::rules::Island;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(island: &Island, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&island.to_text())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Island, D::Error> {
        let text = String::deserialize(d)?;
        Island::parse(&text).map_err(serde::de::Error::custom)
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
