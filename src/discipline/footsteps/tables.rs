//! FootSteps' tables: games won and their percentage with the tie replays,
//! then the pair table, as text and as the site's cells, and a bot's
//! per-opponent table (round robin, replays won of those played).
//!
//! What it deliberately does not do: plan or rank (that is
//! [`super::planner`]) or read stored games (the contest does).

use super::planner::Table;
use crate::discipline::table::{
    columns_text, opponent_name, place_cells, wrapped, OpponentRow, OpponentTable, TextColumn,
};
use crate::tournament::TeamId;

/// The results table as text (7-bit, at most 72 columns whatever the
/// names: longer names are cut and marked "...").
pub fn results_text(table: &Table) -> String {
    let mut t = String::new();
    t.push_str(
        "Every pair played the same number of games, each bot on each side\n\
             equally often. Ranked by games won; Percent is the share of all\n\
             games won. Tied bots played again among themselves.\n\n",
    );
    let rows = &table.rows;
    t.push_str(&columns_text(&[
        TextColumn::numbers("Place", place_cells(rows.iter().map(|r| r.place))),
        TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
        TextColumn::numbers("Won", rows.iter().map(|r| r.won.to_string()).collect()),
        TextColumn::numbers(
            "Percent",
            rows.iter().map(|r| format!("{:.2}%", r.percent)).collect(),
        ),
        TextColumn::numbers("Drawn", rows.iter().map(|r| r.drawn.to_string()).collect()),
        TextColumn::numbers("Lost", rows.iter().map(|r| r.lost.to_string()).collect()),
        TextColumn::numbers(
            "Replays",
            rows.iter()
                .map(|r| {
                    if r.tie_wins.is_empty() {
                        "-".to_string()
                    } else {
                        let w: Vec<String> = r.tie_wins.iter().map(u32::to_string).collect();
                        w.join(" ")
                    }
                })
                .collect(),
        ),
    ]));
    let name = |id: TeamId| {
        table
            .rows
            .iter()
            .find(|r| r.team == id)
            .map(|r| r.name.clone())
            .unwrap_or_else(|| id.to_string())
    };
    t.push_str("\nThe pairs (round 0 is the round robin, then the replays):\n\n");
    let pairs = &table.pairs;
    t.push_str(&columns_text(&[
        TextColumn::numbers("Round", pairs.iter().map(|p| p.round.to_string()).collect()),
        TextColumn::names("Bot A", pairs.iter().map(|p| name(p.pair[0])).collect()),
        TextColumn::names("Bot B", pairs.iter().map(|p| name(p.pair[1])).collect()),
        TextColumn::numbers(
            "A won",
            pairs.iter().map(|p| p.wins[0].to_string()).collect(),
        ),
        TextColumn::numbers(
            "B won",
            pairs.iter().map(|p| p.wins[1].to_string()).collect(),
        ),
        TextColumn::numbers(
            "None",
            pairs.iter().map(|p| p.no_winner.to_string()).collect(),
        ),
    ]));
    for set in &table.unresolved {
        let names: Vec<String> = set.iter().map(|&t| name(t)).collect();
        t.push('\n');
        t.push_str(&wrapped(&format!(
            "Still tied after the last replay, sharing a place: {}",
            names.join(", ")
        )));
    }
    t
}

/// The ranking as headers and rows of cells, for the site's table: the
/// text table's columns.
pub fn table_rows(t: &Table) -> (Vec<String>, Vec<Vec<String>>) {
    let heads = |h: &[&str]| h.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    (
        heads(&["Place", "Bot", "Won", "Percent", "Drawn", "Lost"]),
        t.rows
            .iter()
            .map(|r| {
                vec![
                    r.place.to_string(),
                    r.name.clone(),
                    r.won.to_string(),
                    format!("{:.2} %", r.percent),
                    r.drawn.to_string(),
                    r.lost.to_string(),
                ]
            })
            .collect(),
    )
}

/// A bot's per-opponent table, its rows added up to its row of the
/// results table.
pub fn opponent_table(_table: &Table, rows: &[OpponentRow]) -> OpponentTable {
    let name = opponent_name;
    let mut notes = Vec::new();
    let (heads, cells, total): (Vec<&'static str>, Vec<Vec<String>>, Vec<String>) = {
        let line = |r: &OpponentRow| {
            vec![
                name(r),
                r.games.to_string(),
                r.won.to_string(),
                r.drawn.to_string(),
                r.lost.to_string(),
                if r.replay_games == 0 {
                    "-".to_string()
                } else {
                    format!("{} of {}", r.replay_won, r.replay_games)
                },
                r.failures.to_string(),
            ]
        };
        let all = OpponentRow::total(rows);
        notes.push(
            "Games, Won, Draw and Lost are those of the round robin (round 0), as in \
                 the results table; Replays: the games won of those played in tie replays."
                .to_string(),
        );
        (
            vec![
                "Opponent", "Games", "Won", "Draw", "Lost", "Replays", "Failures",
            ],
            rows.iter().map(line).collect(),
            line(&all),
        )
    };
    OpponentTable {
        heads,
        rows: cells,
        total,
        notes,
    }
}
