//! A bot contest's results table, whichever its discipline ([`Results`]:
//! the planner's table, stored and sent as its serde form), and the texts
//! every discipline makes of it: the table as text and as the site's cells,
//! a bot's per-opponent table and its summary text. Each match here hands
//! over to the discipline's own `tables.rs`.
//!
//! What it deliberately does not do: compute a table (the planners) or read
//! stored games (`crate::contest::bots`).

use serde::Serialize;

use crate::discipline::table::{columns_text, wrapped, OpponentRow, OpponentTable, TextColumn};
use crate::discipline::{flooding, footsteps, morabaraba, ultimatum};

/// The result table of a bot contest.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "discipline", rename_all = "snake_case")]
pub enum Results {
    Ultimatum(ultimatum::planner::Table),
    Flooding {
        islands: Vec<String>,
        table: flooding::planner::FloodingTable,
    },
    Footsteps(footsteps::planner::Table),
    Morabaraba(morabaraba::planner::MorabarabaTable),
}

/// The results table as text (7-bit, at most 72 columns whatever the
/// names: longer names are cut and marked "..."), in the discipline's own
/// form.
pub fn results_text(results: &Results) -> String {
    match results {
        Results::Ultimatum(table) => ultimatum::tables::results_text(table),
        Results::Flooding { islands, table } => flooding::tables::results_text(islands, table),
        Results::Footsteps(table) => footsteps::tables::results_text(table),
        Results::Morabaraba(table) => morabaraba::tables::results_text(table),
    }
}

/// The ranking as headers and rows of cells, for the site's table: the
/// text table's columns (the flooding island's one column per island,
/// Morabaraba's head-to-head only when two bots have equal points).
pub fn table_rows(results: &Results) -> (Vec<String>, Vec<Vec<String>>) {
    match results {
        Results::Ultimatum(t) => ultimatum::tables::table_rows(t),
        Results::Flooding { islands, table } => flooding::tables::table_rows(islands, table),
        Results::Footsteps(t) => footsteps::tables::table_rows(t),
        Results::Morabaraba(t) => morabaraba::tables::table_rows(t),
    }
}

/// The per-opponent table of one bot, in its discipline's form.
pub fn opponent_table(results: &Results, rows: &[OpponentRow]) -> OpponentTable {
    match results {
        Results::Ultimatum(t) => ultimatum::tables::opponent_table(t, rows),
        Results::Flooding { table, .. } => flooding::tables::opponent_table(table, rows),
        Results::Footsteps(t) => footsteps::tables::opponent_table(t, rows),
        Results::Morabaraba(t) => morabaraba::tables::opponent_table(t, rows),
    }
}

/// The per-opponent summary as text (the mail's table, with its total
/// and notes), at most [`TEXT_WIDTH`] columns whatever the names.
pub fn summary_text(results: &Results, rows: &[OpponentRow]) -> String {
    let table = opponent_table(results, rows);
    let mut all = table.rows.clone();
    all.push(table.total.clone());
    let cols: Vec<TextColumn> = table
        .heads
        .iter()
        .enumerate()
        .map(|(k, h)| {
            let cells = all.iter().map(|r| r[k].clone()).collect();
            if k == 0 {
                TextColumn::names(h, cells)
            } else {
                TextColumn::numbers(h, cells)
            }
        })
        .collect();
    let mut t = columns_text(&cols);
    for n in &table.notes {
        t.push('\n');
        t.push_str(&wrapped(n));
    }
    t
}
