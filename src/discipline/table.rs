//! The text tables every bot discipline's results share: columns of names
//! and numbers fitted to [`TEXT_WIDTH`] (names cut in their middle and
//! marked), wrapped sentences, the number forms (places, hundredths,
//! millionths), and a bot's per-opponent row ([`OpponentRow`], summed by the
//! contest from its stored games) with the table it makes
//! ([`OpponentTable`], one per discipline in `NAME/tables.rs`).
//!
//! What it deliberately does not do: know a discipline's columns (each
//! discipline's `tables.rs`) or read a stored game (`crate::contest::bots`
//! counts them into rows).

use std::collections::BTreeMap;

use crate::tournament::TeamId;

/// Place cells as the text tables show them ("1.").
pub fn place_cells(places: impl Iterator<Item = u32>) -> Vec<String> {
    places.map(|p| format!("{p}.")).collect()
}

/// A bot's results against one opponent (or on one island), summed over
/// the stored games from the results the table is made of and by the
/// table's own rules, so that a bot's rows add up to its row of the table:
/// the per-opponent mail (GRP), the bot's page and the index's grid show
/// them. A game against itself counts for both of its sides, as in the
/// table: two games, one won and one lost (or two draws), with the points
/// and the CPU time of both sides.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OpponentRow {
    pub pairing: String,
    /// The opponent (none on the flooding island).
    pub opponent: Option<TeamId>,
    /// The opponent's name, or `island NAME`.
    pub against: String,
    /// Whether the opponent is the bot itself.
    pub itself: bool,
    /// Games counted: a game against itself twice (both its sides); the
    /// ultimatum game's matches; FootSteps' games of round 0.
    pub games: u64,
    pub won: u64,
    pub drawn: u64,
    pub lost: u64,
    /// Failures of this bot in these games.
    pub failures: u64,
    /// Morabaraba: the points, in millionths; the ultimatum game: Plus,
    /// summed over the repetitions.
    pub points: i64,
    /// The ultimatum game: Minus, summed over the repetitions.
    pub minus: u64,
    /// Morabaraba: the CPU time as the table counts it, in microseconds.
    pub cpu_micros: u64,
    /// Flooding: rounds survived in all.
    pub rounds: u64,
    /// FootSteps: games played and won in the tie replays.
    pub replay_games: u64,
    pub replay_won: u64,
    /// The ultimatum game: per slot, this bot's and its opponent's points
    /// and forfeits, decided over all repetitions in [`Tally::rows_of`].
    pub(crate) slots: BTreeMap<u32, ([u64; 2], [u32; 2])>,
}

impl OpponentRow {
    /// The total row of `rows`: every count and sum added up, named
    /// "total" (a discipline's table shows the columns it has).
    pub fn total(rows: &[OpponentRow]) -> OpponentRow {
        let sum = |f: fn(&OpponentRow) -> u64| rows.iter().map(f).sum::<u64>();
        OpponentRow {
            against: "total".into(),
            games: sum(|r| r.games),
            won: sum(|r| r.won),
            drawn: sum(|r| r.drawn),
            lost: sum(|r| r.lost),
            failures: sum(|r| r.failures),
            points: rows.iter().map(|r| r.points).sum(),
            minus: sum(|r| r.minus),
            cpu_micros: sum(|r| r.cpu_micros),
            rounds: sum(|r| r.rounds),
            replay_games: sum(|r| r.replay_games),
            replay_won: sum(|r| r.replay_won),
            ..Default::default()
        }
    }
}

/// A bot's per-opponent table: column heads, one row of cells per
/// opponent (the name first), the total (which equals the bot's row of
/// the results table) and the sentences that go under it. The same model
/// makes the mail's text and the bot's page.
#[derive(Debug, Clone, PartialEq)]
pub struct OpponentTable {
    pub heads: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    pub total: Vec<String>,
    pub notes: Vec<String>,
}

/// `n / d`: a whole number when it is one, else with two decimals,
/// rounded half up (0 for no `d`).
pub fn hundredths(n: u64, d: u64) -> String {
    if d == 0 {
        return "0".into();
    }
    if n.is_multiple_of(d) {
        return (n / d).to_string();
    }
    let h = (u128::from(n) * 200 + u128::from(d)) / (2 * u128::from(d));
    format!("{}.{:02}", h / 100, h % 100)
}

/// Millionths as a number with six decimals (Morabaraba's points).
pub fn millionths_text(m: i64) -> String {
    let sign = if m < 0 { "-" } else { "" };
    let a = m.unsigned_abs();
    format!("{sign}{}.{:06}", a / 1_000_000, a % 1_000_000)
}

/// The width of every text table of the mails and `results.txt`.
pub const TEXT_WIDTH: usize = 72;

/// A name cut to `width` characters in its middle, marked with "...":
/// its start and its end stay (names that differ only at their ends stay
/// apart, "NAME (itself)" keeps its "(itself)").
pub fn fit_name(name: &str, width: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= width {
        return name.to_string();
    }
    let keep = width.saturating_sub(3);
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut s: String = chars[..head].iter().collect();
    s.push_str(&".".repeat(width.min(3)));
    s.extend(&chars[chars.len() - tail..]);
    s
}

/// One column of a text table: names (left-aligned, sharing what is left
/// of [`TEXT_WIDTH`] and cut with a marker) or numbers (right-aligned, as
/// wide as their widest cell).
pub struct TextColumn {
    pub head: String,
    pub cells: Vec<String>,
    pub names: bool,
}

impl TextColumn {
    pub fn names(head: &str, cells: Vec<String>) -> TextColumn {
        TextColumn {
            head: head.to_string(),
            cells,
            names: true,
        }
    }

    pub fn numbers(head: &str, cells: Vec<String>) -> TextColumn {
        TextColumn {
            head: head.to_string(),
            cells,
            names: false,
        }
    }

    fn natural(&self) -> usize {
        self.cells
            .iter()
            .map(|c| c.chars().count())
            .chain([self.head.chars().count()])
            .max()
            .unwrap_or(0)
    }
}

/// The columns as lines of at most [`TEXT_WIDTH`] characters (two blanks
/// between columns, no blank at a line's end), whatever the names.
pub fn columns_text(cols: &[TextColumn]) -> String {
    const GAP: usize = 2;
    let fixed: usize = cols.iter().filter(|c| !c.names).map(|c| c.natural()).sum();
    let n_names = cols.iter().filter(|c| c.names).count().max(1);
    let room = TEXT_WIDTH.saturating_sub(fixed + GAP * cols.len().saturating_sub(1)) / n_names;
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| {
            if c.names {
                c.natural().min(room.max(c.head.chars().count()))
            } else {
                c.natural()
            }
        })
        .collect();
    let n_rows = cols.iter().map(|c| c.cells.len()).max().unwrap_or(0);
    let mut t = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (k, (c, cell)) in cols.iter().zip(cells).enumerate() {
            if k > 0 {
                l.push_str(&" ".repeat(GAP));
            }
            let w = widths[k];
            if c.names {
                l.push_str(&format!("{:<w$}", fit_name(cell, w)));
            } else {
                l.push_str(&format!("{cell:>w$}"));
            }
        }
        t.push_str(l.trim_end());
        t.push('\n');
    };
    line(cols.iter().map(|c| c.head.as_str()).collect());
    for i in 0..n_rows {
        line(
            cols.iter()
                .map(|c| c.cells.get(i).map(String::as_str).unwrap_or(""))
                .collect(),
        );
    }
    t
}

/// Sentences wrapped at [`TEXT_WIDTH`].
pub fn wrapped(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > TEXT_WIDTH {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// An opponent's name in a per-opponent table: "NAME (itself)" for a
/// game against itself.
pub fn opponent_name(r: &OpponentRow) -> String {
    if r.itself {
        format!("{} (itself)", r.against)
    } else {
        r.against.clone()
    }
}
