//! A bot contest's results table, whichever its discipline ([`Results`]:
//! the planner's table, stored and sent as its serde form), and the texts
//! every discipline makes of it: the table as text and as the site's cells,
//! a bot's per-opponent table and its summary text. Each match here hands
//! over to the discipline's own `tables.rs`.
//!
//! What it deliberately does not do: compute a table (the planners) or read
//! stored games (`crate::contest::bots`).

pub use crate::discipline::data::Results;
use crate::discipline::table::{columns_text, wrapped, OpponentRow, OpponentTable, TextColumn};

/// The seam of a results table's discipline.
fn seam(results: &Results) -> &'static dyn crate::discipline::seam::BotDiscipline {
    crate::discipline::registry::of(results.discipline())
        .expect("a results table is a bot discipline's")
}

/// The results table as text (7-bit, at most 72 columns whatever the
/// names: longer names are cut and marked "..."), in the discipline's own
/// form.
pub fn results_text(results: &Results) -> String {
    seam(results).results_text(results)
}

/// The ranking as headers and rows of cells, for the site's table: the
/// text table's columns (the flooding island's one column per island,
/// Morabaraba's head-to-head only when two bots have equal points).
pub fn table_rows(results: &Results) -> (Vec<String>, Vec<Vec<String>>) {
    seam(results).table_rows(results)
}

/// The per-opponent table of one bot, in its discipline's form.
pub fn opponent_table(results: &Results, rows: &[OpponentRow]) -> OpponentTable {
    seam(results).opponent_table(results, rows)
}

/// The per-opponent summary as text (the mail's table, with its total
/// and notes), at most [`TEXT_WIDTH`](crate::discipline::table::TEXT_WIDTH) columns whatever the names.
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
