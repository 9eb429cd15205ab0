//! A sixth discipline that lives only in the tests (issue 37): rock-paper-
//! scissors bots, joined to the server through the same seam as the seeds'
//! four (`knobeln::discipline::seam::BotDiscipline`) and registered at run
//! time (`registry::register`). Nothing of it is in `src/`: if the contest
//! run, the mails or the site needed a line for it there, this folder could
//! not be enough, and `contest::a_contest_of_a_discipline_from_outside_
//! the_crate_runs_by_mail` would not build or not pass.
//!
//! - `rules.rs`: the game, a `LineGame` (pure).
//! - here: its data (setup, outcome, table), its section `[rps]`, its
//!   planner (every pair of bots once), its table and texts, its trial and
//!   its kit.
//! - `contest.rs`: the contest by mail, end to end, in this process.

mod contest;
pub mod rules;

use std::collections::BTreeMap;
use std::sync::Arc;

use knobeln::discipline::data::{decode_as, Data, DataKind};
use knobeln::discipline::game::{run, Outcome, Played, Setup, Transcript};
use knobeln::discipline::results::Results;
use knobeln::discipline::seam::{
    same_setup, BotDiscipline, ContestState, ContestView, DemoBot, PlannedGame, Planner,
    RulesTemplate, Seat, SetupOfKey, StoredSet,
};
use knobeln::discipline::table::{OpponentRow, OpponentTable};
use knobeln::discipline::transcript::{replay_moves, Moves};
use knobeln::discipline::trial::{budgeted, fail, TrialError, TrialReport};
use knobeln::discipline::{BotLimitsConfig, Discipline, Sections};
use knobeln::game::lines::Exchange;
use knobeln::lines::{Match, MatchError, MemoryCount};
use knobeln::tournament::TeamId;
use serde::{Deserialize, Serialize};

use rules::{RpsGame, RpsOutcome, RpsSetup};

/// The discipline behind the seam.
pub struct Rps;

pub const RPS: Discipline = Discipline::named("rps");

/// Registers it (once per process; again is no change).
pub fn register() {
    knobeln::discipline::registry::register(&Rps).expect("rps registers");
}

/// `[rps]`: rounds per game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RpsConfig {
    pub rounds: u32,
}

impl Default for RpsConfig {
    fn default() -> Self {
        RpsConfig { rounds: 9 }
    }
}

fn config(sections: &Sections<'_>) -> Result<RpsConfig, String> {
    match sections.table("rps") {
        Some(t) => t.clone().try_into().map_err(|e| format!("[rps]: {e}")),
        None => Ok(RpsConfig::default()),
    }
}

/// A game's key: the pair, lower team first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairKey {
    pub a: TeamId,
    pub b: TeamId,
}

/// What the planner keeps of a played game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairResult {
    pub key: PairKey,
    /// The team that won, if one did.
    pub winner: Option<TeamId>,
}

/// The table: two points a game won, one a game drawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RpsTable {
    pub rows: Vec<RpsRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RpsRow {
    pub place: u32,
    pub team: TeamId,
    pub name: String,
    pub won: u32,
    pub drawn: u32,
    pub lost: u32,
    pub points: u32,
}

const DEMO_BOTS: &[DemoBot] = &[
    DemoBot {
        file: "rock.py",
        source: "import sys\nfor line in sys.stdin:\n    if line.startswith('END'):\n        break\n    if line.startswith('RPS') or line.startswith('THEY'):\n        print('R', flush=True)\n",
    },
    DemoBot {
        file: "paper.py",
        source: "import sys\nfor line in sys.stdin:\n    if line.startswith('END'):\n        break\n    if line.startswith('RPS') or line.startswith('THEY'):\n        print('P', flush=True)\n",
    },
];

/// The kit's home referee: two bots, the rounds of `RPS N`.
const REFEREE_PY: &str = r#"#!/usr/bin/env python3
"""Rock-paper-scissors at home: python3 referee.py ./bot1 ./bot2 [ROUNDS]"""
import subprocess, sys
bots = [subprocess.Popen([p], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for p in sys.argv[1:3]]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 9
wins = [0, 0]
for b in bots:
    b.stdin.write(f"RPS {rounds}\n"); b.stdin.flush()
beats = {("R", "S"), ("S", "P"), ("P", "R")}
for r in range(rounds):
    h = [b.stdout.readline().strip() for b in bots]
    for i in (0, 1):
        if (h[i], h[1 - i]) in beats:
            wins[i] += 1
        bots[i].stdin.write(f"THEY {h[1 - i]}\n"); bots[i].stdin.flush()
for b in bots:
    b.stdin.write("END\n"); b.stdin.close(); b.wait()
print(f"rounds won: {wins[0]} / {wins[1]}")
"#;

/// The round robin's planner: each pair once, in entry order (the pair
/// (i, j), i < j, at its place in that order), which are stored, and each
/// team's games won, drawn and lost.
struct RpsPlanner<'a> {
    teams: &'a [TeamId],
    names: &'a dyn Fn(TeamId) -> String,
    setup: Setup,
    stored: StoredSet,
    /// Team → games won, drawn, lost.
    rows: BTreeMap<TeamId, [u32; 3]>,
}

impl RpsPlanner<'_> {
    /// The place of the pair of the entries at `i` < `j` in the plan.
    fn place(&self, i: usize, j: usize) -> u64 {
        let n = self.teams.len() as u64;
        let (i, j) = (i as u64, j as u64);
        i * (2 * n - i - 1) / 2 + (j - i - 1)
    }

    fn index(&self, t: TeamId) -> Result<usize, String> {
        self.teams
            .iter()
            .position(|&u| u == t)
            .ok_or_else(|| "a game of a team not entered".to_string())
    }
}

impl Planner for RpsPlanner<'_> {
    fn add(&mut self, key: &str, result: &str) -> Result<(), String> {
        let k: PairKey = serde_json::from_str(key).map_err(|e| e.to_string())?;
        let r: PairResult = serde_json::from_str(result).map_err(|e| e.to_string())?;
        let (i, j) = (self.index(k.a)?, self.index(k.b)?);
        if i >= j {
            return Err(format!("the game {key} is none of the plan"));
        }
        self.stored.insert(self.place(i, j))?;
        for (me, other) in [(k.a, k.b), (k.b, k.a)] {
            let row = self.rows.get_mut(&me).expect("entered");
            match r.winner {
                None => row[1] += 1,
                Some(w) if w == me => row[0] += 1,
                Some(w) if w == other => row[2] += 1,
                Some(_) => return Err("a winner not of the pair".into()),
            }
        }
        Ok(())
    }

    fn next_games(&mut self, limit: usize) -> Result<Vec<PlannedGame>, String> {
        let mut games = Vec::new();
        for (i, &a) in self.teams.iter().enumerate() {
            for (j, &b) in self.teams.iter().enumerate().skip(i + 1) {
                if games.len() == limit {
                    return Ok(games);
                }
                if !self.stored.contains(self.place(i, j)) {
                    games.push(PlannedGame {
                        key: serde_json::to_string(&PairKey { a, b }).expect("json"),
                        seats: vec![a, b],
                        setup: self.setup.clone(),
                    });
                }
            }
        }
        Ok(games)
    }

    fn results(&self, _state: ContestState) -> Result<Option<Results>, String> {
        let mut rows: Vec<RpsRow> = self
            .rows
            .iter()
            .map(|(&t, &[won, drawn, lost])| RpsRow {
                place: 0,
                team: t,
                name: (self.names)(t),
                won,
                drawn,
                lost,
                points: 2 * won + drawn,
            })
            .collect();
        rows.sort_by(|x, y| y.points.cmp(&x.points).then(x.name.cmp(&y.name)));
        for i in 0..rows.len() {
            rows[i].place = if i > 0 && rows[i].points == rows[i - 1].points {
                rows[i - 1].place
            } else {
                i as u32 + 1
            };
        }
        Ok(Some(Results::new(RPS, RpsTable { rows })))
    }
}

impl BotDiscipline for Rps {
    fn discipline(&self) -> Discipline {
        RPS
    }

    fn title(&self) -> &'static str {
        "rock-paper-scissors"
    }

    fn decode(&self, kind: DataKind, value: serde_json::Value) -> Result<Arc<dyn Data>, String> {
        match kind {
            DataKind::Setup => decode_as::<RpsSetup>(value),
            DataKind::Outcome => decode_as::<RpsOutcome>(value),
        }
    }

    fn section(&self, sections: &Sections<'_>) -> serde_json::Value {
        serde_json::to_value(config(sections).unwrap_or_default()).expect("json")
    }

    fn validate(&self, sections: &Sections<'_>) -> Result<(), String> {
        let c = config(sections)?;
        if !(1..=1000).contains(&c.rounds) {
            return Err(format!("rps.rounds must be in 1..=1000 (got {})", c.rounds));
        }
        Ok(())
    }

    fn limits(&self, _sections: &Sections<'_>) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: 2000,
            startup_ms: 10_000,
            cpu_secs: 10,
            memory_mb: 256,
            memory: MemoryCount::PlusLanguage,
            work_kb: None,
            waited_secs: 30,
        }
    }

    fn play_setup(
        &self,
        sections: &Sections<'_>,
        _seed: u64,
        _material: Option<&str>,
    ) -> Result<Setup, String> {
        let rounds = config(sections)?.rounds;
        Ok(Setup::new(RPS, RpsSetup { rounds }))
    }

    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError> {
        run(m, RpsGame::new(*setup.get::<RpsSetup>()), transcript, RPS)
    }

    fn expand(&self, setup: &Setup, moves: &Moves) -> Vec<Exchange> {
        replay_moves(RpsGame::new(*setup.get::<RpsSetup>()), moves)
    }

    fn check_outcome(&self, setup: &Setup, outcome: &Outcome, seats: usize) -> Result<(), String> {
        let o = outcome.get::<RpsOutcome>();
        if o.rounds > setup.get::<RpsSetup>().rounds || o.winner.is_some_and(|w| w >= seats) {
            return Err("an outcome this game cannot have".into());
        }
        Ok(())
    }

    fn outcome_text(&self, outcome: &Outcome, names: &[String]) -> String {
        let o = outcome.get::<RpsOutcome>();
        let name = |i: usize| {
            names
                .get(i)
                .cloned()
                .unwrap_or_else(|| knobeln::words::player(i))
        };
        let who = match o.winner {
            Some(w) => format!("{} wins", name(w)),
            None => "draw".into(),
        };
        format!(
            "{who}: rounds won {} / {} of {}\n",
            o.wins[0], o.wins[1], o.rounds
        )
    }

    fn setup_lines(&self, setup: &Setup, _subject: &str) -> Vec<String> {
        vec![format!("rounds: {}", setup.get::<RpsSetup>().rounds)]
    }

    fn planner<'a>(&self, view: &ContestView<'a>) -> Result<Box<dyn Planner + 'a>, String> {
        let rounds = config(view.sections)?.rounds;
        let n = view.teams.len() as u64;
        Ok(Box::new(RpsPlanner {
            teams: view.teams,
            names: view.names,
            setup: Setup::new(RPS, RpsSetup { rounds }),
            stored: StoredSet::new(n * n.saturating_sub(1) / 2),
            rows: view.teams.iter().map(|&t| (t, [0; 3])).collect(),
        }))
    }

    fn planner_result(
        &self,
        _sections: &Sections<'_>,
        key: &str,
        seats: &[TeamId],
        played: &Played,
    ) -> serde_json::Value {
        let key: PairKey = serde_json::from_str(key).expect("own key");
        let winner = match played.outcome.as_ref().map(|o| o.get::<RpsOutcome>()) {
            Some(o) => o.winner.map(|w| seats[w]),
            None => played.failures.first().map(|f| seats[1 - f.bot]),
        };
        serde_json::json!(PairResult { key, winner })
    }

    fn stored_setups(&self, view: &ContestView<'_>) -> Result<SetupOfKey, String> {
        let rounds = config(view.sections)?.rounds;
        Ok(same_setup(Setup::new(RPS, RpsSetup { rounds })))
    }

    fn key_seats(&self, key: &str, _teams: &[TeamId]) -> Result<Vec<TeamId>, String> {
        let k: PairKey = serde_json::from_str(key).map_err(|e| e.to_string())?;
        Ok(vec![k.a, k.b])
    }

    fn count(&self, row: &mut OpponentRow, result: &str, _seat: usize, team: TeamId) {
        row.games += 1;
        if let Ok(r) = serde_json::from_str::<PairResult>(result) {
            match r.winner {
                None => row.drawn += 1,
                Some(w) if w == team => row.won += 1,
                Some(_) => row.lost += 1,
            }
        }
    }

    fn results_text(&self, results: &Results) -> String {
        let t = results.get::<RpsTable>();
        let mut s = String::from("Place  Bot                   Won  Drawn  Lost  Points\n");
        for r in &t.rows {
            s.push_str(&format!(
                "{:>5}  {:<20} {:>4} {:>6} {:>5} {:>7}\n",
                r.place, r.name, r.won, r.drawn, r.lost, r.points
            ));
        }
        s
    }

    fn table_rows(&self, results: &Results) -> (Vec<String>, Vec<Vec<String>>) {
        let t = results.get::<RpsTable>();
        let heads = ["Place", "Bot", "Won", "Drawn", "Lost", "Points"];
        let rows = t
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.place.to_string(),
                    r.name.clone(),
                    r.won.to_string(),
                    r.drawn.to_string(),
                    r.lost.to_string(),
                    r.points.to_string(),
                ]
            })
            .collect();
        (heads.map(String::from).to_vec(), rows)
    }

    fn opponent_table(&self, _results: &Results, rows: &[OpponentRow]) -> OpponentTable {
        let cells = |r: &OpponentRow| {
            vec![
                r.against.clone(),
                r.won.to_string(),
                r.drawn.to_string(),
                r.lost.to_string(),
            ]
        };
        OpponentTable {
            heads: vec!["Opponent", "Won", "Drawn", "Lost"],
            rows: rows.iter().map(cells).collect(),
            total: cells(&OpponentRow::total(rows)),
            notes: vec!["A game won is two points, a game drawn one.".into()],
        }
    }

    fn picture(&self, _setup: &Setup, transcript: &[Exchange], _names: &[String]) -> String {
        format!("<p>{} lines</p>", transcript.len())
    }

    fn trial(
        &self,
        sections: &Sections<'_>,
        bot: Seat<'_>,
        _seed: u64,
    ) -> Result<TrialReport, TrialError> {
        let rounds = config(sections).unwrap_or_default().rounds;
        let setup = Setup::new(RPS, RpsSetup { rounds });
        let limits = budgeted(self.limits(sections).line_limits(), 60);
        let p = self.play_bots(&setup, &[bot, bot], limits, Transcript::Drop, None)?;
        let said = match &p.outcome {
            Some(o) => self.outcome_text(o, &["you".into(), "you again".into()]),
            None => "it did not end".into(),
        };
        let mut lines = vec![format!("Trial game against itself: {}", said.trim_end())];
        let mut passed = !fail(&mut lines, &p, 0, "the trial game (as player 1)");
        passed &= !fail(&mut lines, &p, 1, "the trial game (as player 2)");
        Ok(TrialReport { passed, lines })
    }

    fn referee_py(&self) -> &'static str {
        REFEREE_PY
    }

    fn rules_template(&self) -> RulesTemplate {
        RulesTemplate::Text(
            "{{#fill}}\nRock-paper-scissors: {{rounds}} rounds a game; each round print R, P \
             or S, then read THEY X, the other's hand.\n{{/fill}}\n",
        )
    }

    fn demo_bots(&self) -> &'static [DemoBot] {
        DEMO_BOTS
    }

    fn demo_contest_name(&self) -> &'static str {
        "rock-paper-scissors demo contest"
    }

    fn submission(&self) -> Option<knobeln::discipline::seam::Submission> {
        Some(MOTTO)
    }

    fn materials(
        &self,
        _sections: &Sections<'_>,
        _seed: u64,
        sent: &[(String, String)],
    ) -> Result<Vec<(String, String)>, String> {
        Ok(sent.to_vec())
    }
}

/// What a team may send beside its bot: a motto (subject `motto`, a line
/// `motto: TEXT` in the mail), kept as the contest's materials.
pub const MOTTO: knobeln::discipline::seam::Submission = knobeln::discipline::seam::Submission {
    word: "motto",
    what: "motto",
    whats: "mottoes",
    help: "  motto                      your team's motto: a line motto: TEXT",
    format: "Write one line motto: TEXT, at most 40 letters, digits, spaces and .,!?-",
    missing: "The mail holds no motto: no line starting with motto:.",
    find: |text| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix("motto:"))
            .map(|m| m.trim().to_string())
    },
    check: |text| {
        let fine = (1..=40).contains(&text.chars().count())
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " .,!?-".contains(c));
        if fine {
            Ok(knobeln::discipline::seam::Checked {
                text: text.to_string(),
                report: format!("Motto: {text}\n"),
            })
        } else {
            Err(format!("The motto {text:?} is not one line of at most 40 letters, digits, spaces and .,!?-"))
        }
    },
};
