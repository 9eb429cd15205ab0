//! The flooding island's tables: the mean survived rounds per island and
//! their sum (as many islands as fit get a column of the text table, the
//! others a small table each), as text and as the site's cells, and a bot's
//! per-island table.
//!
//! What it deliberately does not do: count or score (that is
//! [`super::planner`]) or read stored games (the contest does).

use super::planner::{self as flooding, FloodingTable};
use crate::discipline::table::{
    columns_text, opponent_name, place_cells, wrapped, OpponentRow, OpponentTable, TextColumn,
    TEXT_WIDTH,
};

/// How many of the flooding island's islands get a column of their own
/// in the text table: as many as leave a bot's name 12 characters.
fn island_columns(islands: &[String]) -> usize {
    let fixed = 5 + 2 + 12 + 2 + 6; // Place, Bot, Score
    let mut used = fixed;
    let mut n = 0;
    for name in islands {
        let w = name.chars().count().clamp(6, ISLAND_HEAD) + 2;
        if used + w > TEXT_WIDTH {
            break;
        }
        used += w;
        n += 1;
    }
    n
}

/// An island's column head is cut to this many characters (its start
/// kept, marked "..."; the table names the cut islands in full below).
const ISLAND_HEAD: usize = 12;

/// A column head cut to `width` characters, its start kept and marked
/// "..." when cut.
fn fit_head(head: &str, width: usize) -> String {
    if head.chars().count() <= width {
        return head.to_string();
    }
    let mut s: String = head.chars().take(width.saturating_sub(3)).collect();
    s.push_str("...");
    s
}

/// The results table as text (7-bit, at most 72 columns whatever the
/// names: longer names are cut and marked "...").
pub fn results_text(islands: &[String], table: &FloodingTable) -> String {
    let mut t = String::new();
    t.push_str(
        "Every bot played every island the same number of times with the\n\
             same flood cards. Per island the mean number of rounds it\n\
             survived; the score is their sum.\n\n",
    );
    let rows = &table.rows;
    let shown = island_columns(islands);
    // Every bot's mean on island `k`, as a column's cells.
    let means_on = |k: usize| -> Vec<String> {
        rows.iter()
            .map(|r| {
                r.islands
                    .get(k)
                    .map(|s| format!("{:.2}", s.mean.as_f64()))
                    .unwrap_or_default()
            })
            .collect()
    };
    let mut cols = vec![
        TextColumn::numbers("Place", place_cells(rows.iter().map(|r| r.place))),
        TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
    ];
    for (k, n) in islands.iter().enumerate().take(shown) {
        cols.push(TextColumn::numbers(&fit_head(n, ISLAND_HEAD), means_on(k)));
    }
    cols.push(TextColumn::numbers(
        "Score",
        rows.iter()
            .map(|r| format!("{:.2}", r.score.as_f64()))
            .collect(),
    ));
    t.push_str(&columns_text(&cols));
    if islands
        .iter()
        .take(shown)
        .any(|n| n.chars().count() > ISLAND_HEAD)
    {
        t.push('\n');
        t.push_str(&wrapped(&format!(
            "The islands of the columns: {}.",
            islands[..shown].join(", ")
        )));
    }
    for (k, n) in islands.iter().enumerate().skip(shown) {
        t.push_str(&format!("\nMean rounds on the island {n}:\n"));
        t.push_str(&columns_text(&[
            TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
            TextColumn::numbers("Mean rounds", means_on(k)),
        ]));
    }
    t
}

/// The ranking as headers and rows of cells, for the site's table: the
/// text table's columns.
pub fn table_rows(islands: &[String], table: &FloodingTable) -> (Vec<String>, Vec<Vec<String>>) {
    let heads = |h: &[&str]| h.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let mut head = heads(&["Place", "Bot"]);
    head.extend(islands.iter().map(|n| format!("Island {n}")));
    head.push("Score".into());
    (
        head,
        table
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![r.place.to_string(), r.name.clone()];
                row.extend(r.islands.iter().map(|s| format!("{:.2}", s.mean.as_f64())));
                row.push(format!("{:.2}", r.score.as_f64()));
                row
            })
            .collect(),
    )
}

/// A bot's per-opponent table, its rows added up to its row of the
/// results table.
pub fn opponent_table(_table: &FloodingTable, rows: &[OpponentRow]) -> OpponentTable {
    let name = opponent_name;
    let notes = Vec::new();
    let (heads, cells, total): (Vec<&'static str>, Vec<Vec<String>>, Vec<String>) = {
        let mean = |r: &OpponentRow| flooding::Rounds::mean(r.rounds, r.games);
        let line = |r: &OpponentRow, m: flooding::Rounds| {
            vec![
                name(r),
                r.games.to_string(),
                format!("{:.2}", m.as_f64()),
                r.failures.to_string(),
            ]
        };
        let score: u64 = rows.iter().map(|r| mean(r).millionths()).sum();
        let all = OpponentRow {
            against: "score (the sum)".into(),
            ..OpponentRow::total(rows)
        };
        (
            vec!["Island", "Runs", "Mean rounds", "Failures"],
            rows.iter().map(|r| line(r, mean(r))).collect(),
            line(&all, flooding::Rounds::from_millionths(score)),
        )
    };
    OpponentTable {
        heads,
        rows: cells,
        total,
        notes,
    }
}
