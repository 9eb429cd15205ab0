//! The flooding discipline, the flooding island (freiesMagazin 2012), in
//! one folder: its rules (`rules.rs`, pure), its planner and scoring
//! (`planner.rs`), what the contest stores of a game (`keys.rs`),
//! `islands.rs` (the contest's islands drawn from its seed), its tables
//! (`tables.rs`: results and per-opponent texts), the picture of a game for
//! the results site (`picture.rs`), its part of the kit's home referee
//! (`referee_rules.py`, joined with `../home_referee/`),
//! its demo bots (`demo/`), and here this discipline's side of the seam
//! ([`super::seam::BotDiscipline`]).
//!
//! What it deliberately does not do: run a process, keep limits or blame a
//! bot (`crate::lines`), or store and mail anything (the contest run,
//! `crate::contest::bots`, asks for all of it through the seam). Its config section is
//! `config.rs` (lent to the seam as a field of `Sections`).

pub mod config;
pub mod contest;
pub mod data;
pub mod islands;
pub mod keys;
pub mod picture;
pub mod planner;
pub mod rules;
pub mod submission;
pub mod tables;
pub mod trial;

use std::sync::Arc;

use crate::discipline::data::Results;
use crate::discipline::data::{decode_as, Data, DataKind};
use crate::discipline::game::{run, Outcome, Played, Setup, Transcript};
use crate::discipline::game::{scripted, ScriptedGame};
use crate::discipline::seam::{same_outcome, Planner, ScriptedPlayers, TrialError, TrialReport};
use crate::discipline::seam::{
    BotDiscipline, ContestView, DemoBot, MaterialGrid, Numbering, ReplayTerms, RulesTemplate, Seat,
    SetupOfKey,
};
use crate::discipline::table::{OpponentRow, OpponentTable};
use crate::discipline::transcript::moves::{replay_moves, Moves};
use crate::discipline::{BotLimitsConfig, Discipline, Sections};
use crate::game::lines::Exchange;
use crate::lines::{Match, MatchError};
use crate::tournament::TeamId;
use rules::{FloodOutcome, Island};

pub use data::{setup, FloodResults, FloodSetup, DISCIPLINE, TEST_ISLANDS};

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
        DISCIPLINE
    }

    fn title(&self) -> &'static str {
        "the flooding island"
    }

    fn seats(&self) -> usize {
        1
    }

    fn decode(&self, kind: DataKind, value: serde_json::Value) -> Result<Arc<dyn Data>, String> {
        match kind {
            DataKind::Setup => decode_as::<FloodSetup>(value),
            DataKind::Outcome => decode_as::<FloodOutcome>(value),
        }
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(sections.flooding).expect("json")
    }

    fn material_name(&self) -> Option<&'static str> {
        Some("island")
    }

    /// On the island given, else the kit's first test island (the
    /// demo's lagoon).
    fn play_setup(
        &self,
        sections: &Sections<'_>,
        seed: u64,
        material: Option<&str>,
    ) -> Result<Setup, String> {
        let text = material.unwrap_or(TEST_ISLANDS[0].1);
        let island = Island::parse(text).map_err(|e| format!("the island: {e}"))?;
        Ok(setup(island, sections.flooding.params(), seed))
    }

    fn validate(&self, sections: &Sections<'_>) -> Result<(), String> {
        sections.flooding.validate()
    }

    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig {
        sections.flooding.limits()
    }

    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(m, game(setup), transcript, DISCIPLINE)
    }

    fn expand(&self, setup: &Setup, moves: &Moves) -> Vec<Exchange> {
        replay_moves(game(setup), moves)
    }

    fn check_outcome(
        &self,
        _setup: &Setup,
        outcome: &Outcome,
        _seats: usize,
    ) -> Result<(), String> {
        if outcome.get::<FloodOutcome>().warnings.len() > rules::MAX_WARNINGS_KEPT {
            return Err("more warnings than a referee keeps".into());
        }
        Ok(())
    }

    fn outcome_text(&self, outcome: &Outcome, names: &[String]) -> String {
        use crate::words::{counted, player};
        let o = outcome.get::<FloodOutcome>();
        let name = names.first().cloned().unwrap_or_else(|| player(0));
        let mut t = format!(
            "{name}: survived {} ({}), flood level {}, at {}\n",
            counted(o.rounds.into(), "round", "rounds"),
            o.end,
            o.level,
            o.position
        );
        // The same words as the kit's referee.py (issue 36).
        if o.n_warnings > 0 {
            t.push_str(&format!(
                "{name}: tried to dry water {} times\n",
                o.n_warnings
            ));
        }
        t
    }

    fn setup_lines(&self, setup: &Setup, subject: &str) -> Vec<String> {
        let s = setup.get::<FloodSetup>();
        let mut v = vec![
            format!("seed: {}", s.seed),
            format!("max_rounds: {}", s.params.max_rounds),
            format!(
                "island: {}",
                crate::discipline::transcript::moves::one_line(subject)
            ),
        ];
        for l in s.island.to_text().lines() {
            v.push(format!("island-text: {l}"));
        }
        v
    }

    fn materials(
        &self,
        sections: &Sections<'_>,
        seed: u64,
        sent: &[(String, String)],
    ) -> Result<Vec<(String, String)>, String> {
        contest::islands(sections.flooding, seed, sent)
    }

    fn submission(&self) -> Option<crate::discipline::seam::Submission> {
        Some(submission::ISLAND)
    }

    fn planner<'a>(&self, view: &ContestView<'a>) -> Result<Box<dyn Planner + 'a>, String> {
        Ok(Box::new(contest::FloodingPlanner::new(view)))
    }

    fn planner_result(
        &self,
        _sections: &Sections<'_>,
        key: &str,
        _seats: &[TeamId],
        played: &Played,
    ) -> serde_json::Value {
        serde_json::json!(keys::played(key, played))
    }

    fn stored_setups(&self, view: &ContestView<'_>) -> Result<SetupOfKey, String> {
        contest::stored_setups(view)
    }

    fn key_seats(&self, key: &str, _teams: &[TeamId]) -> Result<Vec<TeamId>, String> {
        keys::seats(key).map_err(|e| e.to_string())
    }

    fn key_order(&self) -> &'static [&'static str] {
        &["island", "run"]
    }

    fn repetition(&self, key: &str) -> u32 {
        keys::repetition(key)
    }

    /// A team's pairings are the islands (team and island), each of
    /// `runs` runs.
    fn kept_games_per_team(
        &self,
        sections: &Sections<'_>,
        _teams: usize,
        materials: usize,
        kept_per_pairing: u32,
    ) -> u64 {
        materials as u64 * u64::from(kept_per_pairing.min(sections.flooding.runs))
    }

    fn pairing(&self, key: &str, seats: &[TeamId]) -> String {
        let island = serde_json::from_str::<planner::FloodKey>(key)
            .map(|k| k.island)
            .unwrap_or(0);
        seats
            .first()
            .map_or_else(String::new, |t| island_pairing(*t, island as usize))
    }

    fn count(&self, row: &mut OpponentRow, result: &str, _seat: usize, _team: TeamId) {
        row.games += 1;
        if let Ok(r) = serde_json::from_str::<planner::RunResult>(result) {
            row.rounds += u64::from(r.rounds);
        }
    }

    fn against(&self, subject: &str) -> String {
        format!("island {subject}")
    }

    fn results_text(&self, results: &Results) -> String {
        let r = results.get::<FloodResults>();
        tables::results_text(&r.islands, &r.table)
    }

    fn table_rows(&self, results: &Results) -> (Vec<String>, Vec<Vec<String>>) {
        let r = results.get::<FloodResults>();
        tables::table_rows(&r.islands, &r.table)
    }

    fn opponent_table(&self, results: &Results, rows: &[OpponentRow]) -> OpponentTable {
        tables::opponent_table(&results.get::<FloodResults>().table, rows)
    }

    fn material_grid(&self) -> Option<MaterialGrid> {
        Some(MaterialGrid {
            heading: "Islands and bots",
            sentence: "Each cell: the mean rounds the bot of its column survived on the \
                       island of its row; it opens the runs.",
            corner: "Island",
            cell: |r| format!("{:.2}", planner::Rounds::mean(r.rounds, r.games).as_f64()),
            pairing: island_pairing,
        })
    }

    fn published_materials(
        &self,
        materials: &[(String, String)],
    ) -> Option<(&'static str, String)> {
        Some(("island", contest::islands_html(materials)))
    }

    fn pairing_title(&self, names: &[String], subject: &str) -> String {
        format!(
            "{} on the island {subject}",
            names.first().cloned().unwrap_or_default()
        )
    }

    fn game_note(&self, setup: &Setup) -> Option<String> {
        Some(format!("seed {}", setup.get::<FloodSetup>().seed))
    }

    fn replay_terms(&self) -> ReplayTerms {
        ReplayTerms {
            unit: "round",
            frames: true,
            numbering: Numbering::Round,
            solo_name: "the bot",
        }
    }

    fn per_what(&self) -> &'static str {
        "island"
    }

    fn picture(&self, setup: &Setup, transcript: &[Exchange], names: &[String]) -> String {
        picture::picture(setup, transcript, names)
    }

    fn trial(
        &self,
        sections: &Sections<'_>,
        bot: Seat<'_>,
        seed: u64,
    ) -> Result<TrialReport, TrialError> {
        trial::trial(self, sections, bot, seed)
    }

    fn demo_bots(&self) -> &'static [DemoBot] {
        DEMO_BOTS
    }

    fn referee_py(&self) -> &'static str {
        // One file for the kit: this discipline's part, then what the four
        // home referees share, then the driver it shares with Morabaraba.
        concat!(
            include_str!("referee_rules.py"),
            include_str!("../home_referee/shared.py"),
            include_str!("../home_referee/game_driver.py"),
        )
    }

    fn rules_template(&self) -> RulesTemplate {
        RulesTemplate::Named("kit_rules_flooding")
    }

    fn kit_data(&self, sections: &Sections<'_>) -> serde_json::Value {
        let mut v = self.section(sections);
        v["islands"] = islands(sections)
            .iter()
            .map(|(name, text)| {
                let island = Island::parse(text).ok();
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

    fn kit_example_args(&self) -> &'static str {
        "--island island-lagoon.txt --seed 7 ./mybot"
    }

    fn demo_contest_name(&self) -> &'static str {
        "freiesMagazin flooding island demo contest"
    }

    fn scripted_players(&self) -> Option<ScriptedPlayers> {
        Some(ScriptedPlayers {
            play: scripted_game,
            vary: same_outcome,
            repetitions_key: Some("runs"),
        })
    }
}

/// The site benchmark's scripted bot: it stands and dries its field.
fn scripted_game(setup: &Setup) -> ScriptedGame {
    scripted(DISCIPLINE, game(setup), |_, _, _| "GO CURRENT".into())
}

/// The islands a kit carries: the test islands only. The contest's own
/// (the organizer's files, the teams', those drawn from the seed) are
/// never in the kit; the site publishes them after the contest.
fn islands(_sections: &Sections<'_>) -> Vec<(String, String)> {
    TEST_ISLANDS
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect()
}

/// The page of a bot's runs on the island at index `k` (`TEAM@K`).
fn island_pairing(team: TeamId, k: usize) -> String {
    format!("{}@{k}", team.0)
}

/// The game a flooding setup plays.
fn game(setup: &Setup) -> rules::FloodGame {
    let s = setup.get::<FloodSetup>();
    rules::FloodGame::new(&s.island, s.params, s.seed)
}
