//! Everything of footsteps that is neither its rules (`crate::discipline::footsteps::rules`) nor its
//! tournament (`crate::discipline::footsteps::planner`): the picture of a game for the
//! results site, the kit's home referee (`referee.py`), and this
//! discipline's side of the seam ([`super::seam::BotDiscipline`]).

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
pub struct Footsteps;

impl BotDiscipline for Footsteps {
    fn discipline(&self) -> Discipline {
        Discipline::Footsteps
    }

    fn section(&self, config: &Config) -> serde_json::Value {
        serde_json::to_value(config.footsteps).expect("json")
    }

    fn limits(&self, config: &Config) -> BotLimitsConfig {
        config.footsteps.limits()
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
