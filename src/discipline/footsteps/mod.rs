//! The footsteps discipline, FootSteps (2007), in one folder: its rules
//! (`rules.rs`, pure), its planner and scoring (`planner.rs`), what the
//! contest stores of a game (`keys.rs`), its tables (`tables.rs`: results
//! and per-opponent texts), the picture of a game for the results site
//! (`picture.rs`), its part of the kit's home referee (`referee_rules.py`,
//! joined with `../home_referee/`), its demo bots
//! (`demo/`), and here this discipline's side of the seam
//! ([`super::seam::BotDiscipline`]).
//!
//! What it deliberately does not do: run a process, keep limits or blame a
//! bot (`crate::lines`), or store and mail anything (the contest run,
//! `crate::contest::bots`, asks for all of it through the seam). Its config section is
//! `config.rs` (lent to the seam as a field of `Sections`).

pub mod config;
pub mod contest;
pub mod data;
pub mod keys;
pub mod picture;
pub mod planner;
pub mod rules;
pub mod tables;
pub mod trial;

use std::sync::Arc;

use crate::discipline::data::Results;
use crate::discipline::data::{decode_as, Data, DataKind};
use crate::discipline::game::{run, Outcome, Played, Setup, Transcript};
use crate::discipline::game::{scripted, ScriptedGame};
use crate::discipline::seam::{
    same_setup, BotDiscipline, ContestView, DemoBot, Numbering, Planner, ReplayTerms,
    RulesTemplate, Seat, SetupOfKey,
};
use crate::discipline::seam::{ScriptedPlayers, TrialError, TrialReport};
use crate::discipline::table::{OpponentRow, OpponentTable};
use crate::discipline::transcript::moves::{replay_moves, Moves};
use crate::discipline::{BotLimitsConfig, Discipline, Sections};
use crate::game::lines::Exchange;
use crate::lines::{Match, MatchError};
use crate::tournament::TeamId;
use rules::{Ending, GameOutcome, Params};

pub use data::{setup, DISCIPLINE};

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
        DISCIPLINE
    }

    fn title(&self) -> &'static str {
        "FootSteps"
    }

    fn decode(&self, kind: DataKind, value: serde_json::Value) -> Result<Arc<dyn Data>, String> {
        match kind {
            DataKind::Setup => decode_as::<Params>(value),
            DataKind::Outcome => decode_as::<GameOutcome>(value),
        }
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(sections.footsteps).expect("json")
    }

    fn play_setup(
        &self,
        sections: &Sections<'_>,
        _seed: u64,
        _material: Option<&str>,
    ) -> Result<Setup, String> {
        Ok(setup(sections.footsteps.params()))
    }

    fn validate(&self, sections: &Sections<'_>) -> Result<(), String> {
        sections.footsteps.validate()
    }

    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig {
        sections.footsteps.limits()
    }

    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(m, game(setup), transcript, DISCIPLINE)
    }

    fn expand(&self, setup: &Setup, moves: &Moves) -> Vec<Exchange> {
        replay_moves(game(setup), moves)
    }

    fn check_outcome(&self, _setup: &Setup, outcome: &Outcome, seats: usize) -> Result<(), String> {
        let o = outcome.get::<GameOutcome>();
        let seat = |s: usize| {
            if s < seats {
                Ok(())
            } else {
                Err(format!("seat {s} in a game of {seats}"))
            }
        };
        if let Some(s) = o.winner {
            seat(s)?;
        }
        if let Ending::Forfeit { seat: s } = o.ending {
            seat(s)?;
        }
        Ok(())
    }

    fn outcome_text(&self, outcome: &Outcome, names: &[String]) -> String {
        use crate::words::{counted, player};
        let o = outcome.get::<GameOutcome>();
        let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| player(i));
        let mut t = match o.winner {
            Some(w) => format!("{} wins", name(w)),
            None => "draw".to_string(),
        };
        t.push_str(&format!(
            " ({}) after {}; token on field {}, points left {} / {}\n",
            o.ending,
            counted(o.turns.into(), "turn", "turns"),
            o.position,
            o.points_left[0],
            o.points_left[1]
        ));
        t
    }

    fn setup_lines(&self, setup: &Setup, _subject: &str) -> Vec<String> {
        let p = setup.get::<Params>();
        vec![
            format!("fields: {}", p.fields),
            format!("points: {}", p.points),
        ]
    }

    fn planner<'a>(&self, view: &ContestView<'a>) -> Result<Box<dyn Planner + 'a>, String> {
        Ok(Box::new(contest::FootStepsPlanner::new(view)))
    }

    fn planner_result(
        &self,
        _sections: &Sections<'_>,
        key: &str,
        seats: &[TeamId],
        played: &Played,
    ) -> serde_json::Value {
        serde_json::json!(keys::played(key, seats, played))
    }

    fn stored_setups(&self, view: &ContestView<'_>) -> Result<SetupOfKey, String> {
        Ok(same_setup(setup(view.sections.footsteps.params())))
    }

    fn key_seats(&self, key: &str, _teams: &[TeamId]) -> Result<Vec<TeamId>, String> {
        keys::seats(key).map_err(|e| e.to_string())
    }

    fn key_order(&self) -> &'static [&'static str] {
        &["round", "game"]
    }

    /// `games_per_pair` games per pair and round (the first round and at
    /// most `max_tie_rounds` replays), numbered from 0 in each.
    fn kept_games_per_team(
        &self,
        sections: &Sections<'_>,
        teams: usize,
        _materials: usize,
        kept_per_pairing: u32,
    ) -> u64 {
        let f = sections.footsteps;
        teams as u64
            * u64::from(1 + f.max_tie_rounds)
            * u64::from(kept_per_pairing.min(f.games_per_pair))
    }

    fn repetition(&self, key: &str) -> u32 {
        keys::repetition(key)
    }

    fn count(&self, row: &mut OpponentRow, result: &str, _seat: usize, team: TeamId) {
        contest::count(row, result, team)
    }

    fn results_text(&self, results: &Results) -> String {
        tables::results_text(results.get())
    }

    fn table_rows(&self, results: &Results) -> (Vec<String>, Vec<Vec<String>>) {
        tables::table_rows(results.get())
    }

    fn opponent_table(&self, results: &Results, rows: &[OpponentRow]) -> OpponentTable {
        tables::opponent_table(results.get(), rows)
    }

    fn grid_sentence(&self) -> &'static str {
        "the games of the round robin won-drawn-lost"
    }

    fn after_grid_html(&self, results: &Results, names: &dyn Fn(TeamId) -> String) -> String {
        contest::pair_table_html(results.get(), names)
    }

    fn replay_terms(&self) -> ReplayTerms {
        ReplayTerms {
            unit: "turn",
            frames: true,
            numbering: Numbering::Turns,
            solo_name: "the bot",
        }
    }

    fn picture(&self, setup: &Setup, transcript: &[Exchange], names: &[String]) -> String {
        picture::picture(setup, transcript, names)
    }

    fn trial(
        &self,
        sections: &Sections<'_>,
        bot: Seat<'_>,
        _seed: u64,
    ) -> Result<TrialReport, TrialError> {
        trial::trial(self, sections, bot)
    }

    fn demo_bots(&self) -> &'static [DemoBot] {
        DEMO_BOTS
    }

    fn referee_py(&self) -> &'static str {
        // One file for the kit: this discipline's part, then what the four
        // home referees share, then the driver it shares with ultimatum.
        concat!(
            include_str!("referee_rules.py"),
            include_str!("../home_referee/shared.py"),
            include_str!("../home_referee/match_driver.py"),
        )
    }

    fn rules_template(&self) -> RulesTemplate {
        RulesTemplate::Named("kit_rules_footsteps")
    }

    fn demo_contest_name(&self) -> &'static str {
        "FootSteps demo contest"
    }

    fn scripted_players(&self) -> Option<ScriptedPlayers> {
        Some(ScriptedPlayers {
            play: scripted_game,
            vary: alternate_winner,
            repetitions_key: Some("games_per_pair"),
        })
    }
}

/// The site benchmark's scripted bots: bids 1 to 3 by turn and seat.
fn scripted_game(setup: &Setup) -> ScriptedGame {
    use crate::game::lines::LineGame;
    scripted(DISCIPLINE, game(setup), |g, seat, _| {
        format!("{}", 1 + (g.turn() as usize + seat) % 3)
    })
}

/// The `k`-th game goes to one side or the other, so that ties are broken
/// as in a real field (the scripted bots would tie every pair).
fn alternate_winner(outcome: &Outcome, k: usize) -> Outcome {
    match outcome.try_get::<GameOutcome>() {
        Some(o) => {
            let mut o = o.clone();
            o.winner = Some(k % 2);
            Outcome::new(DISCIPLINE, o)
        }
        None => outcome.clone(),
    }
}

/// The game a FootSteps setup plays.
fn game(setup: &Setup) -> rules::Game {
    rules::Game::new(*setup.get::<Params>())
}
