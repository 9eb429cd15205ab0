//! FootSteps' side of a contest run: the round robin of each pair's games,
//! then the tie replays the stored results call for, and the table once
//! the planner says the tournament is over; how a stored game counts in a
//! bot's per-opponent rows; the pair table of the results page.
//!
//! What it deliberately does not do: play, store or mail anything (the
//! contest run, `crate::contest::bots`, asks through the seam).

use std::collections::BTreeMap;

use super::planner::{self, Plan, PlayedGame};
use crate::discipline::data::Results;
use crate::discipline::seam::{ContestView, PlannedGame};
use crate::discipline::table::OpponentRow;
use crate::tournament::TeamId;

fn plan(view: &ContestView<'_>, done: &BTreeMap<String, String>) -> Result<Plan, String> {
    let played: Vec<PlayedGame> = done
        .values()
        .map(|v| serde_json::from_str(v).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    planner::plan(
        view.teams,
        &view.sections.footsteps.tournament(),
        &played,
        view.names,
    )
    .map_err(|e| e.to_string())
}

/// The games of the current round not stored yet (the round robin, then
/// each tie replay).
pub fn next_games(
    view: &ContestView<'_>,
    done: &BTreeMap<String, String>,
) -> Result<Vec<PlannedGame>, String> {
    let setup = super::data::setup(view.sections.footsteps.params());
    Ok(match plan(view, done)? {
        Plan::Done(_) => Vec::new(),
        Plan::Play { games, .. } => games
            .into_iter()
            .map(|g| PlannedGame {
                key: serde_json::to_string(&g.key).expect("json"),
                seats: g.seats.to_vec(),
                setup: setup.clone(),
            })
            .filter(|g| !done.contains_key(&g.key))
            .collect(),
    })
}

/// The table, once the planner says the tournament is over.
pub fn results(
    view: &ContestView<'_>,
    done: &BTreeMap<String, String>,
) -> Result<Option<Results>, String> {
    Ok(match plan(view, done)? {
        Plan::Done(t) => Some(Results::new(super::data::DISCIPLINE, t)),
        Plan::Play { .. } => None,
    })
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
