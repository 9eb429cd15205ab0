//! FootSteps' side of a contest run: its planner (the round robin of each
//! pair's games, then the tie replays the stored results call for, and
//! the table once the tournament is over, from each pair's tallies); how a stored game counts in a
//! bot's per-opponent rows; the pair table of the results page.
//!
//! What it deliberately does not do: play, store or mail anything (the
//! contest run, `crate::contest::bots`, asks through the seam).

use super::planner::{self, GameKey, PlayedGame, Step, Tallies};
use crate::discipline::data::Results;
use crate::discipline::game::Setup;
use crate::discipline::seam::{ContestState, ContestView, PlannedGame, Planner};
use crate::discipline::table::OpponentRow;
use crate::tournament::TeamId;

/// The contest's planner: each pair's games per round as far as stored
/// (which, as a bit per game, and their wins: [`planner::Tallies`]), not
/// the games' results; the round robin, then the tie replays the tallies
/// call for ([`planner::step`]).
pub struct FootStepsPlanner<'a> {
    teams: &'a [TeamId],
    names: &'a dyn Fn(TeamId) -> String,
    config: planner::Config,
    setup: Setup,
    tallies: Tallies,
}

impl<'a> FootStepsPlanner<'a> {
    pub fn new(view: &ContestView<'a>) -> FootStepsPlanner<'a> {
        FootStepsPlanner {
            teams: view.teams,
            names: view.names,
            config: view.sections.footsteps.tournament(),
            setup: super::data::setup(view.sections.footsteps.params()),
            tallies: Tallies::new(),
        }
    }
}

impl Planner for FootStepsPlanner<'_> {
    fn add(&mut self, key: &str, result: &str) -> Result<(), String> {
        let k: GameKey = serde_json::from_str(key).map_err(|e| format!("game key {key}: {e}"))?;
        let p: PlayedGame = serde_json::from_str(result).map_err(|e| e.to_string())?;
        self.tallies
            .add(&k, p.winner, &self.config)
            .map_err(|e| e.to_string())
    }

    fn next_games(&mut self, limit: usize) -> Result<Vec<PlannedGame>, String> {
        let step = planner::step(self.teams, &self.config, &self.tallies, self.names)
            .map_err(|e| e.to_string())?;
        Ok(match step {
            Step::Done(_) => Vec::new(),
            Step::Play { round, sets } => {
                planner::missing_games(round, &sets, &self.config, &self.tallies, limit)
                    .into_iter()
                    .map(|g| PlannedGame {
                        key: serde_json::to_string(&g.key).expect("json"),
                        seats: g.seats.to_vec(),
                        setup: self.setup.clone(),
                    })
                    .collect()
            }
        })
    }

    fn results(&self, _state: ContestState) -> Result<Option<Results>, String> {
        let step = planner::step(self.teams, &self.config, &self.tallies, self.names)
            .map_err(|e| e.to_string())?;
        Ok(match step {
            Step::Done(t) => Some(Results::new(super::data::DISCIPLINE, t)),
            Step::Play { .. } => None,
        })
    }
}

/// Counts a stored game: the round robin's as won, drawn or lost; a tie
/// replay's apart.
pub fn count(row: &mut OpponentRow, result: &str, team: TeamId) {
    let Ok(p) = serde_json::from_str::<PlayedGame>(result) else {
        row.games += 1;
        return;
    };
    if p.key.round == 0 {
        row.games += 1;
        match p.winner {
            None => row.drawn += 1,
            Some(w) if w == team => row.won += 1,
            Some(_) => row.lost += 1,
        }
    } else {
        row.replay_games += 1;
        if p.winner == Some(team) {
            row.replay_won += 1;
        }
    }
}

/// The pair table as in the text, each pair a link to its games (HTML).
pub fn pair_table_html(t: &planner::Table, name: &dyn Fn(TeamId) -> String) -> String {
    use crate::draw::escape;
    let mut h = String::from(
        "<h2>Pairs</h2>\n<table class=\"pairs\"><tr><th>Round</th><th class=\"l\">Pair</th>\
         <th>Won</th><th>Won</th><th>No winner</th></tr>\n",
    );
    for p in &t.pairs {
        let [a, b] = p.pair;
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"l\"><a href=\"pairing/{}-{}.html\">{} vs {}</a></td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>\n",
            p.round,
            a.0.min(b.0),
            a.0.max(b.0),
            escape(&name(a)),
            escape(&name(b)),
            p.wins[0],
            p.wins[1],
            p.no_winner
        ));
    }
    h.push_str("</table>\n");
    h
}
