//! The morabaraba discipline, Morabaraba (2014), in one folder: its rules
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
use crate::discipline::seam::{same_outcome, Planner, ScriptedPlayers, TrialError, TrialReport};
use crate::discipline::seam::{
    same_setup, BotDiscipline, ContestView, DemoBot, Numbering, ReplayTerms, RulesTemplate, Seat,
    SetupOfKey,
};
use crate::discipline::table::{millionths_text, OpponentRow, OpponentTable};
use crate::discipline::transcript::moves::{replay_moves, Moves};
use crate::discipline::{BotLimitsConfig, Discipline, Sections};
use crate::game::lines::Exchange;
use crate::lines::{Match, MatchError};
use crate::tournament::TeamId;
use rules::{MorabarabaEnd, MorabarabaOutcome};

pub use data::{setup, MorabarabaSetup, DISCIPLINE};

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
        DISCIPLINE
    }

    fn title(&self) -> &'static str {
        "Morabaraba"
    }

    fn decode(&self, kind: DataKind, value: serde_json::Value) -> Result<Arc<dyn Data>, String> {
        match kind {
            DataKind::Setup => decode_as::<MorabarabaSetup>(value),
            DataKind::Outcome => decode_as::<MorabarabaOutcome>(value),
        }
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(sections.morabaraba).expect("json")
    }

    fn play_setup(
        &self,
        _sections: &Sections<'_>,
        _seed: u64,
        _material: Option<&str>,
    ) -> Result<Setup, String> {
        Ok(setup())
    }

    fn validate(&self, sections: &Sections<'_>) -> Result<(), String> {
        sections.morabaraba.validate()
    }

    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig {
        sections.morabaraba.limits()
    }

    fn play(&self, _setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(m, rules::MorabarabaGame::new(), transcript, DISCIPLINE)
    }

    fn expand(&self, _setup: &Setup, moves: &Moves) -> Vec<Exchange> {
        replay_moves(rules::MorabarabaGame::new(), moves)
    }

    fn check_outcome(&self, _setup: &Setup, outcome: &Outcome, seats: usize) -> Result<(), String> {
        use crate::discipline::game::{printable, MAX_RULE_TEXT};
        let o = outcome.get::<MorabarabaOutcome>();
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
        match &o.end {
            MorabarabaEnd::TwoCowsLeft { loser } | MorabarabaEnd::NoLegalMove { loser } => {
                seat(*loser)?
            }
            MorabarabaEnd::IllegalMove { loser, rule: t }
            | MorabarabaEnd::Forfeit { loser, reason: t } => {
                seat(*loser)?;
                if !printable(t, 2 * MAX_RULE_TEXT) {
                    return Err("an ending's text is too long or not printable".into());
                }
            }
            MorabarabaEnd::ThreeCowsNoMill | MorabarabaEnd::NoMillIn200Turns => {}
        }
        if o.names.iter().flatten().any(|x| !printable(x, 200)) {
            return Err("a bot's name is too long or not printable".into());
        }
        Ok(())
    }

    fn outcome_text(&self, outcome: &Outcome, names: &[String]) -> String {
        use crate::words::{counted, player};
        let o = outcome.get::<MorabarabaOutcome>();
        let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| player(i));
        let mut t = match o.winner {
            Some(w) => format!("{} wins", name(w)),
            None => "draw".to_string(),
        };
        t.push_str(&format!(
            " after {} ({}); cows left {} / {}\n",
            counted(o.turns.into(), "turn", "turns"),
            o.end,
            o.cows[0],
            o.cows[1]
        ));
        t
    }

    fn setup_lines(&self, _setup: &Setup, _subject: &str) -> Vec<String> {
        Vec::new()
    }

    fn planner<'a>(&self, view: &ContestView<'a>) -> Result<Box<dyn Planner + 'a>, String> {
        Ok(Box::new(contest::MorabarabaPlanner::new(view)))
    }

    fn planner_result(
        &self,
        sections: &Sections<'_>,
        key: &str,
        _seats: &[TeamId],
        played: &Played,
    ) -> serde_json::Value {
        serde_json::json!(keys::played(key, played, sections.morabaraba))
    }

    fn stored_setups(&self, _view: &ContestView<'_>) -> Result<SetupOfKey, String> {
        Ok(same_setup(setup()))
    }

    /// One game per ordered pair (itself included): every game is its
    /// pairing's first.
    fn kept_games_per_team(
        &self,
        _sections: &Sections<'_>,
        teams: usize,
        _materials: usize,
        kept_per_pairing: u32,
    ) -> u64 {
        2 * teams as u64 * u64::from(kept_per_pairing.min(1))
    }

    fn key_seats(&self, key: &str, _teams: &[TeamId]) -> Result<Vec<TeamId>, String> {
        keys::seats(key).map_err(|e| e.to_string())
    }

    fn count(&self, row: &mut OpponentRow, result: &str, seat: usize, _team: TeamId) {
        contest::count(row, result, seat)
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
        "its games won-drawn-lost, and the points the row's bot got"
    }

    fn grid_cell(&self, _results: &Results, row: &OpponentRow) -> String {
        format!(
            "{}-{}-{}<br>{}",
            row.won,
            row.drawn,
            row.lost,
            millionths_text(row.points)
        )
    }

    fn after_ranking_html(&self, results: &Results) -> String {
        contest::after_ranking_html(results.get())
    }

    fn grid_note_html(&self, _results: &Results) -> String {
        format!("<p>{}</p>\n", crate::draw::escape(tables::SELF_GAME_NOTE))
    }

    fn replay_terms(&self) -> ReplayTerms {
        ReplayTerms {
            unit: "move",
            frames: true,
            // The two names first, then the moves.
            numbering: Numbering::PrintedAfter(2),
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
        // home referees share, then the driver it shares with the flooding island.
        concat!(
            include_str!("referee_rules.py"),
            include_str!("../home_referee/shared.py"),
            include_str!("../home_referee/game_driver.py"),
        )
    }

    fn kit_data(&self, sections: &Sections<'_>) -> serde_json::Value {
        let mut v = self.section(sections);
        // The per-move limit is only a backstop when it is above the game's.
        let m = &sections.morabaraba;
        v["move_is_backstop"] = (m.reply_ms >= m.cpu_secs * 1000).into();
        v
    }

    fn rules_template(&self) -> RulesTemplate {
        RulesTemplate::Named("kit_rules_morabaraba")
    }

    fn demo_contest_name(&self) -> &'static str {
        "Morabaraba demo contest"
    }

    fn scripted_players(&self) -> Option<ScriptedPlayers> {
        Some(ScriptedPlayers {
            play: scripted_game,
            vary: same_outcome,
            repetitions_key: None,
        })
    }
}

/// The site benchmark's scripted bots: a name, then every seventh legal
/// move in turn.
fn scripted_game(_setup: &Setup) -> ScriptedGame {
    let mut named = [false; 2];
    let mut k = 0usize;
    scripted(DISCIPLINE, rules::MorabarabaGame::new(), |g, seat, _| {
        if !named[seat] {
            named[seat] = true;
            return format!("bench{seat}");
        }
        k += 7;
        let moves = g.position().legal_moves();
        moves
            .get(k % moves.len().max(1))
            .map(|m| m.to_line())
            .unwrap_or_default()
    })
}
