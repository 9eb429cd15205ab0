//! Morabaraba's tables: the points with f(V), head-to-head only where two
//! bots have equal points, as text and as the site's cells, and a bot's
//! per-opponent table (a game against itself counted for both its sides,
//! [`SELF_GAME_NOTE`]).
//!
//! What it deliberately does not do: score or rank (that is
//! [`super::planner`]) or read stored games (the contest does).

use super::planner::MorabarabaTable;
use crate::discipline::table::{
    columns_text, millionths_text, opponent_name, place_cells, wrapped, OpponentRow, OpponentTable,
    TextColumn,
};

/// Whether Morabaraba's head-to-head decided or shared a place: it is
/// only shown when two bots have equal points.
pub fn head_to_head_shown(t: &MorabarabaTable) -> bool {
    t.rows.iter().any(|r| r.head_to_head.is_some())
}

/// The sentence under every table where a bot's game against itself is
/// counted (Morabaraba's).
pub const SELF_GAME_NOTE: &str = "A game against itself counts for both of its sides: \
     two games, one won and one lost (or two draws), with the points and the CPU time of \
     both sides.";

/// The results table as text (7-bit, at most 72 columns whatever the
/// names: longer names are cut and marked "...").
pub fn results_text(table: &MorabarabaTable) -> String {
    let mut t = String::new();
    let h2h = head_to_head_shown(table);
    t.push_str(&wrapped(&format!(
        "Every bot played every bot in both colours, itself included. A \
             winner gets f(V) points, a loser loses 1 - f(H), a draw scores 0, \
             with f(x) = 2/(1+exp(x*x/100)) and V, H the CPU seconds the winner \
             and the loser used in that game. Equal points are decided by \
             the games among the tied bots (H2H, {}).",
        if h2h {
            "shown only for bots with equal points"
        } else {
            "not shown: no two bots have equal points"
        }
    )));
    t.push('\n');
    let rows = &table.rows;
    let mut cols = vec![
        TextColumn::numbers("Place", place_cells(rows.iter().map(|r| r.place))),
        TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
        TextColumn::numbers(
            "Points",
            rows.iter()
                .map(|r| millionths_text(r.points.millionths()))
                .collect(),
        ),
    ];
    if h2h {
        cols.push(TextColumn::numbers(
            "H2H",
            rows.iter()
                .map(|r| {
                    r.head_to_head
                        .map_or("-".to_string(), |h| millionths_text(h.millionths()))
                })
                .collect(),
        ));
    }
    cols.extend([
        TextColumn::numbers("Won", rows.iter().map(|r| r.won.to_string()).collect()),
        TextColumn::numbers("Draw", rows.iter().map(|r| r.drawn.to_string()).collect()),
        TextColumn::numbers("Lost", rows.iter().map(|r| r.lost.to_string()).collect()),
        TextColumn::numbers(
            "CPU s",
            rows.iter()
                .map(|r| format!("{:.3}", r.cpu_micros as f64 / 1e6))
                .collect(),
        ),
    ]);
    t.push_str(&columns_text(&cols));
    t.push('\n');
    t.push_str(&wrapped(SELF_GAME_NOTE));
    t
}

/// The ranking as headers and rows of cells, for the site's table: the
/// text table's columns.
pub fn table_rows(t: &MorabarabaTable) -> (Vec<String>, Vec<Vec<String>>) {
    let heads = |h: &[&str]| h.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let h2h = head_to_head_shown(t);
    let mut head = heads(&["Place", "Bot", "Points"]);
    if h2h {
        head.push("Head-to-head".into());
    }
    head.extend(heads(&["Won", "Draw", "Lost", "CPU s"]));
    (
        head,
        t.rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.place.to_string(),
                    r.name.clone(),
                    millionths_text(r.points.millionths()),
                ];
                if h2h {
                    row.push(
                        r.head_to_head
                            .map(|s| millionths_text(s.millionths()))
                            .unwrap_or_else(|| "-".into()),
                    );
                }
                row.extend([
                    r.won.to_string(),
                    r.drawn.to_string(),
                    r.lost.to_string(),
                    format!("{:.3}", r.cpu_micros as f64 / 1e6),
                ]);
                row
            })
            .collect(),
    )
}

/// A bot's per-opponent table, its rows added up to its row of the
/// results table.
pub fn opponent_table(_table: &MorabarabaTable, rows: &[OpponentRow]) -> OpponentTable {
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
                millionths_text(r.points),
                format!("{:.3}", r.cpu_micros as f64 / 1e6),
                r.failures.to_string(),
            ]
        };
        let all = OpponentRow::total(rows);
        if rows.iter().any(|r| r.itself) {
            notes.push(SELF_GAME_NOTE.to_string());
        }
        (
            vec![
                "Opponent", "Games", "Won", "Draw", "Lost", "Points", "CPU s", "Failures",
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
