//! Everything of morabaraba that is neither its rules (`crate::discipline::morabaraba::rules`) nor its
//! tournament (`crate::discipline::morabaraba::planner`): the picture of a game for the
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
pub struct Morabaraba;

impl BotDiscipline for Morabaraba {
    fn discipline(&self) -> Discipline {
        Discipline::Morabaraba
    }

    fn section(&self, config: &Config) -> serde_json::Value {
        serde_json::to_value(config.morabaraba).expect("json")
    }

    fn limits(&self, config: &Config) -> BotLimitsConfig {
        config.morabaraba.limits()
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

    fn referee_py(&self) -> &'static str {
        include_str!("referee.py")
    }

    fn kit_data(&self, config: &Config) -> serde_json::Value {
        let mut v = self.section(config);
        // The per-move limit is only a backstop when it is above the game's.
        let m = &config.morabaraba;
        v["move_is_backstop"] = (m.reply_ms >= m.cpu_secs * 1000).into();
        v
    }

    fn rules_template(&self) -> &'static str {
        "kit_rules_morabaraba"
    }
}
