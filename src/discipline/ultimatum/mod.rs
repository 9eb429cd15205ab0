//! The ultimatum discipline, the ultimatum game (freiesMagazin 2011), in
//! one folder: its rules (`rules.rs`, pure), its planner and scoring
//! (`planner.rs`), what the contest stores of a game (`keys.rs`), its
//! tables (`tables.rs`: results and per-opponent texts), the picture of a
//! game for the results site (`picture.rs`), its part of the kit's home referee
//! (`referee_rules.py`, joined with `../home_referee/`), its demo bots (`demo/`), its data (`data.rs`), its config section (`config.rs`), its side
//! of a contest run (`contest.rs`), its trial (`trial.rs`), and here its side
//! of the seam ([`super::seam::BotDiscipline`]).
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
use crate::discipline::table::{OpponentRow, OpponentTable};
use crate::discipline::transcript::moves::{replay_moves, Moves};
use crate::discipline::{BotLimitsConfig, Discipline, Sections, Workers};
use crate::game::lines::Exchange;
use crate::lines::{Match, MatchError};
use crate::tournament::TeamId;
use rules::{MatchOutcome, Params};

pub use data::{setup, DISCIPLINE};

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
        DISCIPLINE
    }

    fn title(&self) -> &'static str {
        "the ultimatum game"
    }

    fn decode(&self, kind: DataKind, value: serde_json::Value) -> Result<Arc<dyn Data>, String> {
        match kind {
            DataKind::Setup => decode_as::<Params>(value),
            DataKind::Outcome => decode_as::<MatchOutcome>(value),
        }
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(sections.ultimatum).expect("json")
    }

    fn play_setup(
        &self,
        sections: &Sections<'_>,
        _seed: u64,
        _material: Option<&str>,
    ) -> Result<Setup, String> {
        let p = sections.ultimatum.params();
        p.validate().map_err(|e| format!("ultimatum.{e}"))?;
        Ok(setup(p))
    }

    /// The section's own checks, and with games sent to workers
    /// (`[engine] nats`) kept folders small enough that two travel with a
    /// game in one message.
    fn validate(&self, sections: &Sections<'_>) -> Result<(), String> {
        let u = sections.ultimatum;
        u.validate()?;
        let max = config::MAX_FOLDER_KB_WITH_WORKERS;
        if sections.workers == Workers::Nats && u.kept_folder_bytes().is_some() && u.folder_kb > max
        {
            return Err(format!(
                "ultimatum.folder_kb must be at most {max} with [engine] nats: two kept folders \
                 travel with each game to a worker, in one message (got {})",
                u.folder_kb
            ));
        }
        Ok(())
    }

    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig {
        sections.ultimatum.limits()
    }

    fn keeps_folders(&self, sections: &Sections<'_>) -> bool {
        sections.ultimatum.kept_folder_bytes().is_some()
    }

    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(m, game(setup), transcript, DISCIPLINE)
    }

    fn expand(&self, setup: &Setup, moves: &Moves) -> Vec<Exchange> {
        replay_moves(game(setup), moves)
    }

    fn check_outcome(&self, setup: &Setup, outcome: &Outcome, seats: usize) -> Result<(), String> {
        let p = setup.get::<Params>();
        let o = outcome.get::<MatchOutcome>();
        if o.rounds != p.rounds || o.rounds_completed > o.rounds {
            return Err(format!(
                "{} of {} rounds in a match of {}",
                o.rounds_completed, o.rounds, p.rounds
            ));
        }
        match o.forfeited_by {
            Some(s) if s >= seats => Err(format!("seat {s} in a game of {seats}")),
            _ => Ok(()),
        }
    }

    fn outcome_text(&self, outcome: &Outcome, names: &[String]) -> String {
        use crate::words::{counted, player};
        let o = outcome.get::<MatchOutcome>();
        let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| player(i));
        let mut t = String::new();
        for (i, points) in o.scored().iter().enumerate() {
            t.push_str(&format!(
                "{}: {} ({}), {} of {} accepted\n",
                name(i),
                counted(*points, "point", "points"),
                o.result_for(i),
                o.accepted_offers[i],
                counted(o.rounds_completed.into(), "offer", "offers"),
            ));
        }
        t.push_str(&format!(
            "rounds completed: {} of {}\n",
            o.rounds_completed, o.rounds
        ));
        t
    }

    fn setup_lines(&self, setup: &Setup, _subject: &str) -> Vec<String> {
        vec![format!("rounds: {}", setup.get::<Params>().rounds)]
    }

    fn planner<'a>(&self, view: &ContestView<'a>) -> Result<Box<dyn Planner + 'a>, String> {
        Ok(Box::new(contest::UltimatumPlanner::new(view)))
    }

    fn planner_result(
        &self,
        _sections: &Sections<'_>,
        key: &str,
        _seats: &[TeamId],
        played: &Played,
    ) -> serde_json::Value {
        contest::planner_result(key, played)
    }

    fn stored_setups(&self, view: &ContestView<'_>) -> Result<SetupOfKey, String> {
        Ok(same_setup(contest::contest_setup(view.sections)))
    }

    fn key_seats(&self, key: &str, teams: &[TeamId]) -> Result<Vec<TeamId>, String> {
        contest::key_seats(key, teams)
    }

    fn key_order(&self) -> &'static [&'static str] {
        &["repetition", "slot"]
    }

    /// A match per ordered pair (itself included) and repetition, of
    /// `repetitions`.
    fn kept_games_per_team(
        &self,
        sections: &Sections<'_>,
        teams: usize,
        _materials: usize,
        kept_per_pairing: u32,
    ) -> u64 {
        2 * teams as u64 * u64::from(kept_per_pairing.min(sections.ultimatum.repetitions))
    }

    fn repetition(&self, key: &str) -> u32 {
        keys::repetition(key)
    }

    fn count(&self, row: &mut OpponentRow, result: &str, seat: usize, _team: TeamId) {
        contest::count(row, result, seat)
    }

    fn finish_row(&self, row: &mut OpponentRow) {
        contest::finish_row(row)
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
        "won-drawn-lost of the pairing's two orders, and the mean points per \
         repetition the row's bot scored"
    }

    fn grid_cell(&self, results: &Results, row: &OpponentRow) -> String {
        let reps = i64::from(results.get::<planner::Table>().repetitions.max(1));
        format!(
            "{}-{}-{}<br>{}",
            row.won,
            row.drawn,
            row.lost,
            (row.points + reps / 2) / reps
        )
    }

    fn replay_terms(&self) -> ReplayTerms {
        ReplayTerms {
            unit: "round",
            frames: false,
            numbering: Numbering::Round,
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
        // home referees share, then the driver it shares with FootSteps.
        concat!(
            include_str!("referee_rules.py"),
            include_str!("../home_referee/shared.py"),
            include_str!("../home_referee/match_driver.py"),
        )
    }

    fn rules_template(&self) -> RulesTemplate {
        RulesTemplate::Named("kit_rules_ultimatum")
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

    fn demo_contest_name(&self) -> &'static str {
        "freiesMagazin ultimatum demo contest"
    }

    fn scripted_players(&self) -> Option<ScriptedPlayers> {
        Some(ScriptedPlayers {
            play: scripted_game,
            vary: same_outcome,
            repetitions_key: Some("repetitions"),
        })
    }
}

/// The site benchmark's scripted match: each offers 300 + the turn modulo
/// 400, and refuses every third offer.
fn scripted_game(setup: &Setup) -> ScriptedGame {
    use crate::game::lines::LineGame;
    scripted(DISCIPLINE, game(setup), |g, _, last| {
        if !last.starts_with("ANGEBOT") {
            format!("{}", 300 + g.turn() % 400)
        } else if g.turn() % 3 == 0 {
            "NEIN".into()
        } else {
            "JA".into()
        }
    })
}

/// The game an ultimatum setup plays.
fn game(setup: &Setup) -> rules::Match {
    rules::Match::new(*setup.get::<Params>())
}
