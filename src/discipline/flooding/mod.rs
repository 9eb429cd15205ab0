//! Everything of flooding that is neither its rules (`crate::discipline::flooding::rules`) nor its
//! tournament (`crate::discipline::flooding::planner`): the picture of a game for the
//! results site, the kit's home referee (`referee.py`), and this
//! discipline's side of the seam ([`super::seam::BotDiscipline`]).

pub mod islands;
pub mod picture;
pub mod planner;
pub mod rules;
pub mod tables;

use crate::config::Config;
use crate::discipline::play::{run, Outcome, Played, Setup, Transcript};
use crate::discipline::seam::BotDiscipline;
use crate::discipline::transcript::{replay_moves, Moves};
use crate::discipline::{BotLimitsConfig, Discipline};
use crate::game::lines::Exchange;
use crate::lines::{Match, MatchError};

/// This discipline behind the seam.
pub struct Flooding;

impl BotDiscipline for Flooding {
    fn discipline(&self) -> Discipline {
        Discipline::Flooding
    }

    fn section(&self, config: &Config) -> serde_json::Value {
        serde_json::to_value(&config.flooding).expect("json")
    }

    fn limits(&self, config: &Config) -> BotLimitsConfig {
        config.flooding.limits()
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

    fn referee_py(&self) -> &'static str {
        include_str!("referee.py")
    }

    fn rules_template(&self) -> &'static str {
        "kit_rules_flooding"
    }

    fn kit_data(&self, config: &Config) -> serde_json::Value {
        let mut v = self.section(config);
        v["islands"] = islands(config)
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

    fn revisions(&self, config: &Config) -> Option<u32> {
        Some(config.flooding.revisions)
    }

    fn kit_files(&self, config: &Config) -> Vec<(String, String)> {
        islands(config)
            .into_iter()
            .map(|(name, text)| (format!("island-{name}.txt"), text))
            .collect()
    }
}

/// The islands a kit carries: the test islands only. The contest's own
/// (the organizer's files, the teams', those drawn from the seed) are
/// never in the kit; the site publishes them after the contest.
fn islands(_config: &Config) -> Vec<(String, String)> {
    crate::demo::bots::TEST_ISLANDS
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
