//! The ultimatum game's tables: the results table (`Bot Plus Minus Won Draw
//! Lost`, with the 2011 prize column when asked for) as text and as the
//! site's cells, and a bot's per-opponent table (matches, the mean Plus and
//! Minus per repetition, the orders won, drawn and lost).
//!
//! What it deliberately does not do: rank or count (that is [`super::planner`])
//! or read stored games (the contest, `crate::contest::bots`, does and hands
//! the tables and rows in).

use super::planner::{self as ultimatum, Table};
use crate::discipline::table::{
    columns_text, hundredths, opponent_name, place_cells, wrapped, OpponentRow, OpponentTable,
    TextColumn,
};

/// The results table as text (7-bit, at most 72 columns whatever the
/// names: longer names are cut and marked "...").
pub fn results_text(table: &Table) -> String {
    let mut t = String::new();
    t.push_str(&wrapped(&format!(
        "Every bot played every other in both orders, {} times; Plus and \
             Minus are the mean points per repetition: Plus what the bot \
             scored, Minus what its opponents scored against it. Won, Draw \
             and Lost count the two orders of each pairing, each decided over \
             all its repetitions. Ranked by Plus, then by the higher Minus.",
        table.repetitions
    )));
    t.push('\n');
    let prize = !table.prizes.is_empty();
    let rows = &table.rows;
    let mut cols = vec![
        TextColumn::numbers("Place", place_cells(rows.iter().map(|r| r.place))),
        TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
        TextColumn::numbers("Plus", rows.iter().map(|r| r.plus.to_string()).collect()),
        TextColumn::numbers("Minus", rows.iter().map(|r| r.minus.to_string()).collect()),
        TextColumn::numbers("Won", rows.iter().map(|r| r.won.to_string()).collect()),
        TextColumn::numbers("Draw", rows.iter().map(|r| r.drawn.to_string()).collect()),
        TextColumn::numbers("Lost", rows.iter().map(|r| r.lost.to_string()).collect()),
    ];
    if prize {
        cols.push(TextColumn::numbers(
            "Prize",
            rows.iter()
                .map(|r| match table.prize_of(r.team) {
                    Some(c) => format!("{}.{:02} EUR", c / 100, c % 100),
                    None => String::new(),
                })
                .collect(),
        ));
    }
    t.push_str(&columns_text(&cols));
    if prize {
        t.push_str(&format!(
            "\nPrize (the 2011 rule): the first {} places get P / (20000 * (N - 1))\n\
                 euros, P their Plus, N = {} bots.\n",
            ultimatum::PRIZE_PLACES,
            table.rows.len()
        ));
    }
    let forfeits: Vec<String> = table
        .rows
        .iter()
        .filter(|r| r.forfeits > 0)
        .map(|r| format!("{} ({})", r.name, r.forfeits))
        .collect();
    if !forfeits.is_empty() {
        t.push('\n');
        t.push_str(&wrapped(&format!(
            "Matches forfeited (a broken rule or limit): {}",
            forfeits.join(", ")
        )));
    }
    t
}

/// The ranking as headers and rows of cells, for the site's table: the
/// text table's columns.
pub fn table_rows(t: &Table) -> (Vec<String>, Vec<Vec<String>>) {
    let heads = |h: &[&str]| h.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let prize = !t.prizes.is_empty();
    let mut head = heads(&["Place", "Bot", "Plus", "Minus", "Won", "Draw", "Lost"]);
    if prize {
        head.push("Prize".into());
    }
    (
        head,
        t.rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.place.to_string(),
                    r.name.clone(),
                    r.plus.to_string(),
                    r.minus.to_string(),
                    r.won.to_string(),
                    r.drawn.to_string(),
                    r.lost.to_string(),
                ];
                if prize {
                    row.push(
                        t.prize_of(r.team)
                            .map(|c| format!("{}.{:02} EUR", c / 100, c % 100))
                            .unwrap_or_default(),
                    );
                }
                row
            })
            .collect(),
    )
}

/// A bot's per-opponent table, its rows added up to its row of the
/// results table.
pub fn opponent_table(t: &Table, rows: &[OpponentRow]) -> OpponentTable {
    let name = opponent_name;
    let mut notes = Vec::new();
    let (heads, cells, total): (Vec<&'static str>, Vec<Vec<String>>, Vec<String>) = {
        let reps = u64::from(t.repetitions.max(1));
        let line = |r: &OpponentRow| {
            vec![
                name(r),
                r.games.to_string(),
                hundredths(r.points.max(0) as u64, reps),
                hundredths(r.minus, reps),
                r.won.to_string(),
                r.drawn.to_string(),
                r.lost.to_string(),
                r.failures.to_string(),
            ]
        };
        let all = OpponentRow::total(rows);
        notes.push(
            "Plus and Minus are the mean points per repetition; the results table \
                 shows their totals rounded to whole points. Won, Draw and Lost count \
                 the two orders of each pairing, each decided over all its repetitions."
                .to_string(),
        );
        (
            vec![
                "Opponent", "Matches", "Plus", "Minus", "Won", "Draw", "Lost", "Failures",
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
