//! The flooding island (freiesMagazin programming contest 2012/13, "Gestrandet
//! auf einer Insel"): one bot on an island that the flood takes field by field.
//!
//! What is here: the island's text format and its validation
//! ([`Island::parse`], for islands that participants send in), the rules of a
//! round, the flood-card deck and the draw and discard piles of island
//! fields, and the game as a [`LineGame`] with one seat. Chance comes only
//! from the seed given to [`FloodGame::new`]. What is not here: processes,
//! the 0.1 s per round limit (the referee's; the game says how many rounds
//! have begun, [`LineGame::cpu_rounds`]), running many games and scoring
//! them (`crate::tournament::flooding`).
//!
//! # The island
//!
//! ```text
//! GAMEBOARDSTART 8,1
//! ...o#...
//! GAMEBOARDEND
//! ROUND 1 4,1
//! ```
//!
//! `X,Y` are the columns and rows; then come `Y` rows of `X` symbols: `.`
//! water or a sunk field, `o` a flooded field, `#` a dry field. Fields are
//! addressed `(x,y)` from `(1,1)` top left. The optional `ROUND 1 X,Y` after
//! `GAMEBOARDEND` is the start field; it must lie on the board and not be
//! sunk (a flooded start is allowed). Without it, the bot starts on the
//! first dry field in reading order (row by row from the top, each row from
//! the left), or, when no field is dry, on the first flooded one: that is
//! what the 2012 engine did. An island has at most [`MAX_FIELDS`] fields
//! (`X·Y`, water included: "Die Größe der Insel ist dabei auf 1000 Felder
//! begrenzt") and at least one field that is not sunk. The parser reads at
//! most [`MAX_ISLAND_TEXT`] bytes, in one pass; it ignores a byte-order mark,
//! blank lines outside the rows, white space around a line and `\r` line
//! ends, and says in its error which line is wrong and how to fix it.
//!
//! # A round, message by message
//!
//! The seed's figure of two example rounds is lost; this order is rebuilt
//! from its text and is what the 2012 engine sends:
//!
//! 1. At the start only: `GAMEBOARDSTART X,Y`, the `Y` rows as they are,
//!    `GAMEBOARDEND`.
//! 2. `ROUND Z X,Y`: round `Z` begins with the bot on `(X,Y)`.
//! 3. The bot answers with exactly three lines, each one of `GO d` or `DRY d`
//!    with `d` one of `NORTH` (y − 1), `EAST` (x + 1), `SOUTH` (y + 1),
//!    `WEST` (x − 1), `CURRENT`, the words exactly so (blanks around and
//!    between them and carriage returns at the end are tolerated, as the
//!    2012 engine read words from a stream). Each command takes effect when
//!    it is read.
//! 4. `INCRFLOOD Z`: the flood card of the round is drawn; `Z` (0 or 1) is by
//!    how much the flood level rose, i.e. how many more fields are flooded
//!    than in the round before.
//! 5. `FLOOD X,Y` for each field drawn from the pile, in draw order (as many
//!    as the level; fewer only when no field is left to draw).
//! 6. If the bot now stands on a sunk field it drowns, and the game ends
//!    (`END`); otherwise the next round begins (2.), until the round cap.
//!
//! At the end the bot gets `END` ([`Step::Over`]'s farewell).
//!
//! # Rule decisions (where the seed leaves room)
//!
//! - **Walking on water.** The 02.12.2012 bugfix: a bot that steps onto a
//!   sunk field (or off the board: everything outside the island is water)
//!   drowns at once. The rest of its three commands is still read (and must
//!   still be well-formed) but not carried out; the round's flood is still
//!   drawn and sent (`INCRFLOOD`, `FLOOD` lines), then the game ends with
//!   `END`: the order the 2012 engine sends (issue 27). The score is the
//!   same either way (the round it drowned in).
//! - **Drying water.** 04.01.2013: drying a sunk field (or a field off the
//!   board) changes nothing and is counted as a warning in the outcome; the
//!   game goes on. Drying a dry field changes nothing and is no warning.
//! - **The flood-card deck.** Ten cards, two of which raise the level. One is
//!   drawn each round; when the deck is used up (after every tenth round)
//!   all ten are shuffled again. So in every block of ten rounds the level
//!   rises by exactly two, until it reaches [`MAX_LEVEL`] = 7 (02.01.2013),
//!   which happens in rounds 31–40. A raising card drawn at level 7 does
//!   nothing at all: `INCRFLOOD 0` and no reshuffle of the discard pile (the
//!   update says the flood rises no more, and the reshuffle is what the rise
//!   does "in addition"; `INCRFLOOD` stays true to its meaning, "Z more
//!   fields than before").
//! - **The field piles** (13.12.2012). The draw pile starts as all fields
//!   that are not sunk, shuffled. A drawn field is flooded: a dry one becomes
//!   flooded and goes to the discard pile, a flooded one sinks and leaves the
//!   game. When a raising card raises the level, the discard pile is shuffled
//!   and put on top of the draw pile (recently flooded fields come back
//!   first). When the draw pile runs out while fields remain to be flooded,
//!   the discard pile (including fields drawn earlier in the same round) is
//!   shuffled and becomes the draw pile, so a field can be flooded twice in
//!   one round. Drying a field does not move its card.
//! - **Score.** [`FloodOutcome::rounds`] is the round the game ended in, as
//!   the 2012 engine counted ("(II) ROUNDS: 77"): a bot that drowns in round
//!   Z scores Z; one that is still alive after the round cap scores the cap;
//!   a bot that breaks the protocol in round Z (or crashes, or runs out of
//!   time: [`FloodGame::forfeit`]) scores Z − 1, the rounds it completed, so
//!   that breaking a rule is never better than drowning.
//! - **Round cap.** A bot that keeps its field dry could live for ever, so a
//!   game ends after [`Params::max_rounds`] rounds (default
//!   [`DEFAULT_MAX_ROUNDS`]).
//! - **Chance.** Two generators are derived from the game's seed: one shuffles
//!   the flood cards, one the field piles. So the rounds in which the level
//!   rises depend on the seed alone, the same for every bot; the order of
//!   the fields drawn is the same as long as the bots' islands are the same.
//!
//! **Invariant:** the draw pile and the discard pile together hold every
//! field that is not sunk, each exactly once.

use super::lines::{LineGame, Step, Violation};
use crate::seed::{derive, SplitMix64};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Most fields an island may have (width × height, water included).
pub const MAX_FIELDS: usize = 1000;
/// Most bytes of island text the parser reads.
pub const MAX_ISLAND_TEXT: usize = 16 * 1024;
/// The highest flood level (02.01.2013): at most seven fields a round.
pub const MAX_LEVEL: u8 = 7;
/// Cards in the flood-card deck.
pub const FLOOD_CARDS: usize = 10;
/// Cards of the deck that raise the flood level.
pub const RAISING_CARDS: usize = 2;
/// Commands a bot gives each round.
pub const COMMANDS_PER_ROUND: u8 = 3;
/// The default round cap.
pub const DEFAULT_MAX_ROUNDS: u32 = 2000;

/// The state of one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tile {
    /// `#`: land.
    Dry,
    /// `o`: flooded, can be dried again.
    Flooded,
    /// `.`: water, or a field that sank; lost for good.
    Sunk,
}

impl Tile {
    pub fn symbol(self) -> char {
        match self {
            Tile::Dry => '#',
            Tile::Flooded => 'o',
            Tile::Sunk => '.',
        }
    }

    pub fn from_symbol(c: char) -> Option<Tile> {
        match c {
            '#' => Some(Tile::Dry),
            'o' => Some(Tile::Flooded),
            '.' => Some(Tile::Sunk),
            _ => None,
        }
    }
}

/// A field's address, 1-based: `x` the column from the left, `y` the row
/// from the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Field {
    pub x: u16,
    pub y: u16,
}

impl fmt::Display for Field {
    /// As in the protocol: `X,Y`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.x, self.y)
    }
}

/// A checked island: its board and the bot's start field. (Not
/// deserializable: an island is only made by [`Island::parse`] or
/// [`Island::new`]; store it as [`Island::to_text`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Island {
    width: u16,
    height: u16,
    /// Row by row from the top.
    tiles: Vec<Tile>,
    start: Field,
    /// Whether the text named the start field (`ROUND 1 X,Y`).
    start_given: bool,
}

/// Why an island's text was refused. Every message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IslandError {
    #[error("the island text is {bytes} bytes long; at most {MAX_ISLAND_TEXT} are read (an island has at most {MAX_FIELDS} fields)")]
    TooLong { bytes: usize },
    #[error("the island text is empty; it starts with a line `GAMEBOARDSTART X,Y`")]
    Empty,
    #[error("line {line}: expected `GAMEBOARDSTART X,Y` (X columns, Y rows, e.g. `GAMEBOARDSTART 8,1`), found {found:?}")]
    BadHeader { line: usize, found: String },
    #[error("line {line}: the island is {width}×{height} = {fields} fields; it must have at least one and at most {MAX_FIELDS} fields (columns × rows, water included)")]
    BadSize {
        line: usize,
        width: u32,
        height: u32,
        fields: u64,
    },
    #[error(
        "line {line}: row {row} has {found} symbols, but the header says every row has {expected}"
    )]
    RowLength {
        line: usize,
        row: usize,
        expected: usize,
        found: usize,
    },
    #[error("line {line}, column {column}: {found:?} is not a field; use `#` (dry), `o` (flooded) or `.` (water)")]
    BadSymbol {
        line: usize,
        column: usize,
        found: char,
    },
    #[error("the text ends after {found} of the {expected} rows the header announces")]
    MissingRows { expected: usize, found: usize },
    #[error("line {line}: expected `GAMEBOARDEND` after the {rows} rows, found {found:?}")]
    MissingEnd {
        line: usize,
        rows: usize,
        found: String,
    },
    #[error("the text ends before `GAMEBOARDEND` (after the {rows} rows)")]
    EndMissing { rows: usize },
    #[error("line {line}: after `GAMEBOARDEND` only an optional start line `ROUND 1 X,Y` may follow, found {found:?}")]
    BadStartLine { line: usize, found: String },
    #[error("the start field `ROUND 1 {x},{y}` is not on the {width}×{height} board (fields run from 1,1 top left to {width},{height})")]
    StartOffBoard {
        x: u32,
        y: u32,
        width: u16,
        height: u16,
    },
    #[error("the start field `ROUND 1 {x},{y}` is water; the bot must start on a dry (`#`) or flooded (`o`) field")]
    StartSunk { x: u16, y: u16 },
    #[error("line {line}: nothing may follow the start line, found {found:?}")]
    TrailingText { line: usize, found: String },
    #[error("the island has no land: at least one field must be dry (`#`) or flooded (`o`)")]
    NoLand,
}

/// At most this many characters of an offending line are quoted back.
const QUOTE_CHARS: usize = 60;

fn quote(line: &str) -> String {
    let mut s: String = line.chars().take(QUOTE_CHARS).collect();
    if line.chars().nth(QUOTE_CHARS).is_some() {
        s.push('…');
    }
    s
}

/// Parses `A,B` with 1 to 5 decimal digits on each side.
fn parse_pair(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(',')?;
    let num = |t: &str| -> Option<u32> {
        if t.is_empty() || t.len() > 5 || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    Some((num(a)?, num(b)?))
}

impl Island {
    /// Parses and checks an island in the seed's text format.
    pub fn parse(text: &str) -> Result<Island, IslandError> {
        if text.len() > MAX_ISLAND_TEXT {
            return Err(IslandError::TooLong { bytes: text.len() });
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // (1-based line number, trimmed line)
        let mut lines = text.split('\n').enumerate().map(|(i, l)| (i + 1, l.trim()));
        let mut next_nonblank = || lines.by_ref().find(|(_, l)| !l.is_empty());

        let (line_no, header) = next_nonblank().ok_or(IslandError::Empty)?;
        let bad_header = || IslandError::BadHeader {
            line: line_no,
            found: quote(header),
        };
        let size = header
            .strip_prefix("GAMEBOARDSTART ")
            .ok_or_else(bad_header)?;
        let (width, height) = parse_pair(size.trim()).ok_or_else(bad_header)?;
        let fields = u64::from(width) * u64::from(height);
        if width == 0 || height == 0 || fields > MAX_FIELDS as u64 {
            return Err(IslandError::BadSize {
                line: line_no,
                width,
                height,
                fields,
            });
        }
        let (w, h) = (width as usize, height as usize);

        let mut tiles = Vec::with_capacity(w * h);
        for row in 1..=h {
            let (line, text) = next_nonblank().ok_or(IslandError::MissingRows {
                expected: h,
                found: row - 1,
            })?;
            if text == "GAMEBOARDEND" {
                return Err(IslandError::MissingRows {
                    expected: h,
                    found: row - 1,
                });
            }
            let mut n = 0;
            for (column, c) in text.chars().enumerate() {
                if column >= w {
                    return Err(IslandError::RowLength {
                        line,
                        row,
                        expected: w,
                        found: text.chars().count(),
                    });
                }
                let tile = Tile::from_symbol(c).ok_or(IslandError::BadSymbol {
                    line,
                    column: column + 1,
                    found: c,
                })?;
                tiles.push(tile);
                n += 1;
            }
            if n != w {
                return Err(IslandError::RowLength {
                    line,
                    row,
                    expected: w,
                    found: n,
                });
            }
        }

        match next_nonblank() {
            None => return Err(IslandError::EndMissing { rows: h }),
            Some((_, "GAMEBOARDEND")) => {}
            Some((line, found)) => {
                return Err(IslandError::MissingEnd {
                    line,
                    rows: h,
                    found: quote(found),
                })
            }
        }

        let (width, height) = (width as u16, height as u16);
        let mut start = None;
        if let Some((line, text)) = next_nonblank() {
            let bad = || IslandError::BadStartLine {
                line,
                found: quote(text),
            };
            let pair = text.strip_prefix("ROUND 1 ").ok_or_else(bad)?;
            let (x, y) = parse_pair(pair.trim()).ok_or_else(bad)?;
            if x == 0 || y == 0 || x > u32::from(width) || y > u32::from(height) {
                return Err(IslandError::StartOffBoard {
                    x,
                    y,
                    width,
                    height,
                });
            }
            let field = Field {
                x: x as u16,
                y: y as u16,
            };
            start = Some(field);
            if let Some((line, found)) = next_nonblank() {
                return Err(IslandError::TrailingText {
                    line,
                    found: quote(found),
                });
            }
        }
        Island::new(width, height, tiles, start)
    }

    /// An island from its parts (e.g. generated for a demo). `tiles` row by
    /// row from the top; `start` `None` for the default start.
    pub fn new(
        width: u16,
        height: u16,
        tiles: Vec<Tile>,
        start: Option<Field>,
    ) -> Result<Island, IslandError> {
        let fields = u64::from(width) * u64::from(height);
        if width == 0 || height == 0 || fields > MAX_FIELDS as u64 {
            return Err(IslandError::BadSize {
                line: 1,
                width: width.into(),
                height: height.into(),
                fields,
            });
        }
        assert_eq!(tiles.len() as u64, fields, "tiles must be width × height");
        let default_start = Self::default_start(width, &tiles).ok_or(IslandError::NoLand)?;
        let start_given = start.is_some();
        let start = match start {
            None => default_start,
            Some(f) => {
                if f.x == 0 || f.y == 0 || f.x > width || f.y > height {
                    return Err(IslandError::StartOffBoard {
                        x: f.x.into(),
                        y: f.y.into(),
                        width,
                        height,
                    });
                }
                if tiles[(f.y as usize - 1) * width as usize + (f.x as usize - 1)] == Tile::Sunk {
                    return Err(IslandError::StartSunk { x: f.x, y: f.y });
                }
                f
            }
        };
        Ok(Island {
            width,
            height,
            tiles,
            start,
            start_given,
        })
    }

    /// The first dry field in reading order, else the first flooded one.
    fn default_start(width: u16, tiles: &[Tile]) -> Option<Field> {
        let at = |i: usize| Field {
            x: (i % width as usize) as u16 + 1,
            y: (i / width as usize) as u16 + 1,
        };
        tiles
            .iter()
            .position(|&t| t == Tile::Dry)
            .or_else(|| tiles.iter().position(|&t| t == Tile::Flooded))
            .map(at)
    }

    pub fn width(&self) -> u16 {
        self.width
    }

    pub fn height(&self) -> u16 {
        self.height
    }

    /// Where the bot starts.
    pub fn start(&self) -> Field {
        self.start
    }

    /// Whether the text named the start field.
    pub fn start_given(&self) -> bool {
        self.start_given
    }

    /// The field at `f`; everything off the board is water.
    pub fn tile(&self, f: Field) -> Tile {
        self.index(f).map_or(Tile::Sunk, |i| self.tiles[i])
    }

    /// Fields that are not sunk.
    pub fn n_land(&self) -> usize {
        self.tiles.iter().filter(|&&t| t != Tile::Sunk).count()
    }

    fn index(&self, f: Field) -> Option<usize> {
        (f.x >= 1 && f.y >= 1 && f.x <= self.width && f.y <= self.height)
            .then(|| (f.y as usize - 1) * self.width as usize + (f.x as usize - 1))
    }

    /// The board's rows as the protocol sends them.
    pub fn rows(&self) -> Vec<String> {
        board_rows(self.width, &self.tiles)
    }

    /// The island in its text format, always with the start line.
    pub fn to_text(&self) -> String {
        let mut s = format!("GAMEBOARDSTART {},{}\n", self.width, self.height);
        for row in self.rows() {
            s.push_str(&row);
            s.push('\n');
        }
        s.push_str(&format!("GAMEBOARDEND\nROUND 1 {}\n", self.start));
        s
    }
}

fn board_rows(width: u16, tiles: &[Tile]) -> Vec<String> {
    tiles
        .chunks(width as usize)
        .map(|row| row.iter().map(|t| t.symbol()).collect())
        .collect()
}

/// A direction of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Direction {
    North,
    East,
    South,
    West,
    Current,
}

/// One of the bot's three commands of a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    Go(Direction),
    Dry(Direction),
}

impl Command {
    /// Parses a command as the seed writes it (`GO NORTH`, `DRY CURRENT`,
    /// …): the two words in capitals; blanks around and between them and
    /// carriage returns at the end are tolerated, as a stream reader skips
    /// them.
    pub fn parse(line: &str) -> Option<Command> {
        let mut words = line.split_ascii_whitespace();
        let (verb, dir) = (words.next()?, words.next()?);
        if words.next().is_some() {
            return None;
        }
        let dir = match dir {
            "NORTH" => Direction::North,
            "EAST" => Direction::East,
            "SOUTH" => Direction::South,
            "WEST" => Direction::West,
            "CURRENT" => Direction::Current,
            _ => return None,
        };
        match verb {
            "GO" => Some(Command::Go(dir)),
            "DRY" => Some(Command::Dry(dir)),
            _ => None,
        }
    }
}

impl Direction {
    /// The field one step from `f` in this direction (may be off the board:
    /// coordinates 0 stand for "off the board").
    pub fn from(self, f: Field) -> Field {
        match self {
            Direction::North => Field { x: f.x, y: f.y - 1 },
            Direction::East => Field { x: f.x + 1, y: f.y },
            Direction::South => Field { x: f.x, y: f.y + 1 },
            Direction::West => Field { x: f.x - 1, y: f.y },
            Direction::Current => f,
        }
    }
}

/// Game parameters beyond the seed's fixed rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// The game ends after this round at the latest.
    pub max_rounds: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            max_rounds: DEFAULT_MAX_ROUNDS,
        }
    }
}

/// The flood-card deck: ten cards, two of which raise the level, drawn one a
/// round and all shuffled again when used up.
#[derive(Debug, Clone)]
struct FloodDeck {
    /// The cards still to draw; `true` raises the level. Top = last.
    cards: Vec<bool>,
}

impl FloodDeck {
    fn new() -> Self {
        FloodDeck { cards: Vec::new() }
    }

    /// Draws the next card (shuffling all ten when the deck is used up);
    /// `true` when it raises the level.
    fn draw(&mut self, rng: &mut SplitMix64) -> bool {
        if self.cards.is_empty() {
            self.cards = (0..FLOOD_CARDS).map(|i| i < RAISING_CARDS).collect();
            rng.shuffle(&mut self.cards);
        }
        self.cards.pop().expect("a refilled deck")
    }
}

/// The draw pile and the discard pile of island fields (board indices).
#[derive(Debug, Clone)]
struct FieldPiles {
    /// Top = last.
    draw: Vec<u16>,
    discard: Vec<u16>,
}

impl FieldPiles {
    fn new(mut fields: Vec<u16>, rng: &mut SplitMix64) -> Self {
        rng.shuffle(&mut fields);
        FieldPiles {
            draw: fields,
            discard: Vec::new(),
        }
    }

    /// The level rose: the discard pile is shuffled and put on top.
    fn discard_on_top(&mut self, rng: &mut SplitMix64) {
        rng.shuffle(&mut self.discard);
        self.draw.append(&mut self.discard);
    }

    /// The next field to flood; when the draw pile is empty, the discard
    /// pile is shuffled and becomes the draw pile. `None` when no field is
    /// left at all.
    fn draw(&mut self, rng: &mut SplitMix64) -> Option<u16> {
        if self.draw.is_empty() {
            std::mem::swap(&mut self.draw, &mut self.discard);
            rng.shuffle(&mut self.draw);
        }
        self.draw.pop()
    }
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum FloodEnd {
    /// The bot stepped onto water (a sunk field or off the board).
    WalkedIntoWater { field: Field },
    /// The field the bot stood on sank in the flood of the round.
    FieldSank { field: Field },
    /// The bot was still alive after the round cap.
    RoundCap,
    /// The bot broke the protocol (see the game's [`Violation`]).
    RuleBroken { rule: String },
    /// The referee ended the game (crash, time limit, …).
    Forfeit { reason: String },
}

impl fmt::Display for FloodEnd {
    /// A sentence for people: "the field 6,3 sank under the bot".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FloodEnd::WalkedIntoWater { field } => {
                write!(f, "the bot walked into the water at {field}")
            }
            FloodEnd::FieldSank { field } => write!(f, "the field {field} sank under the bot"),
            FloodEnd::RoundCap => write!(f, "the bot was still on the island after the last round"),
            FloodEnd::RuleBroken { rule } => write!(f, "the bot broke a rule: {rule}"),
            FloodEnd::Forfeit { reason } => write!(f, "the game was stopped: {reason}"),
        }
    }
}

/// A command that changed nothing and may be a bot's mistake (04.01.2013).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloodWarning {
    pub round: u32,
    /// 1..=3 within the round.
    pub command: u8,
    /// The field the bot tried to dry (off-board coordinates may be 0 or
    /// width/height + 1).
    pub field: Field,
}

/// At most this many warnings are kept (all are counted).
pub const MAX_WARNINGS_KEPT: usize = 20;

/// The outcome of one game on the island.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloodOutcome {
    /// The score: the round the game ended in (see the module's rule
    /// decisions).
    pub rounds: u32,
    pub end: FloodEnd,
    /// The flood level at the end.
    pub level: u8,
    /// Where the bot was at the end.
    pub position: Field,
    /// How often the bot tried to dry water.
    pub n_warnings: u32,
    /// The first [`MAX_WARNINGS_KEPT`] of them.
    pub warnings: Vec<FloodWarning>,
}

/// One game of one bot on one island, as a [`LineGame`] with one seat.
#[derive(Debug, Clone)]
pub struct FloodGame {
    width: u16,
    height: u16,
    tiles: Vec<Tile>,
    position: Field,
    params: Params,
    card_rng: SplitMix64,
    field_rng: SplitMix64,
    deck: FloodDeck,
    piles: FieldPiles,
    level: u8,
    /// The current round (1-based; 0 before the first).
    round: u32,
    /// Commands read in the current round.
    commands: u8,
    /// Set when the bot walked into water this round.
    walked_into: Option<Field>,
    outbox: Vec<String>,
    n_warnings: u32,
    warnings: Vec<FloodWarning>,
    outcome: Option<FloodOutcome>,
}

/// Path tags under the game seed for the two generators.
const CARD_STREAM: u64 = 1;
const FIELD_STREAM: u64 = 2;

impl FloodGame {
    /// A new game on `island` whose chance comes from `seed` alone.
    pub fn new(island: &Island, params: Params, seed: u64) -> FloodGame {
        let card_rng = SplitMix64::new(derive(seed, &[CARD_STREAM]));
        let mut field_rng = SplitMix64::new(derive(seed, &[FIELD_STREAM]));
        let land: Vec<u16> = (0..island.tiles.len() as u16)
            .filter(|&i| island.tiles[i as usize] != Tile::Sunk)
            .collect();
        let piles = FieldPiles::new(land, &mut field_rng);
        // The flood-card deck is shuffled at its first draw.
        let mut game = FloodGame {
            width: island.width,
            height: island.height,
            tiles: island.tiles.clone(),
            position: island.start,
            params,
            card_rng,
            field_rng,
            deck: FloodDeck::new(),
            piles,
            level: 0,
            round: 0,
            commands: 0,
            walked_into: None,
            outbox: Vec::new(),
            n_warnings: 0,
            warnings: Vec::new(),
            outcome: None,
        };
        game.outbox
            .push(format!("GAMEBOARDSTART {},{}", island.width, island.height));
        game.outbox.extend(island.rows());
        game.outbox.push("GAMEBOARDEND".into());
        game.begin_round();
        game
    }

    /// The flood level now.
    pub fn level(&self) -> u8 {
        self.level
    }

    /// Where the bot stands now.
    pub fn position(&self) -> Field {
        self.position
    }

    /// The board as it is now.
    pub fn rows(&self) -> Vec<String> {
        board_rows(self.width, &self.tiles)
    }

    /// The field at `f` now; off the board is water.
    pub fn tile(&self, f: Field) -> Tile {
        self.index(f).map_or(Tile::Sunk, |i| self.tiles[i])
    }

    /// Ends the game because of something outside the rules (the bot
    /// crashed or ran out of time): it scores the rounds it completed.
    pub fn forfeit(&mut self, reason: &str) {
        if self.outcome.is_none() {
            self.outbox.clear();
            self.finish(
                self.round.saturating_sub(1),
                FloodEnd::Forfeit {
                    reason: reason.to_string(),
                },
            );
        }
    }

    fn index(&self, f: Field) -> Option<usize> {
        (f.x >= 1 && f.y >= 1 && f.x <= self.width && f.y <= self.height)
            .then(|| (f.y as usize - 1) * self.width as usize + (f.x as usize - 1))
    }

    fn field_at(&self, i: u16) -> Field {
        Field {
            x: i % self.width + 1,
            y: i / self.width + 1,
        }
    }

    fn begin_round(&mut self) {
        self.round += 1;
        self.commands = 0;
        self.outbox
            .push(format!("ROUND {} {}", self.round, self.position));
    }

    fn finish(&mut self, rounds: u32, end: FloodEnd) {
        self.outcome = Some(FloodOutcome {
            rounds,
            end,
            level: self.level,
            position: self.position,
            n_warnings: self.n_warnings,
            warnings: self.warnings.clone(),
        });
    }

    fn apply(&mut self, command: Command) {
        if self.walked_into.is_some() {
            return; // drowned: the rest of the round's commands are not carried out
        }
        match command {
            Command::Go(d) => {
                let to = d.from(self.position);
                self.position = to;
                if self.tile(to) == Tile::Sunk {
                    self.walked_into = Some(to);
                }
            }
            Command::Dry(d) => {
                let f = d.from(self.position);
                match self.index(f) {
                    Some(i) if self.tiles[i] == Tile::Flooded => self.tiles[i] = Tile::Dry,
                    Some(i) if self.tiles[i] == Tile::Dry => {}
                    _ => {
                        self.n_warnings += 1;
                        if self.warnings.len() < MAX_WARNINGS_KEPT {
                            self.warnings.push(FloodWarning {
                                round: self.round,
                                command: self.commands,
                                field: f,
                            });
                        }
                    }
                }
            }
        }
    }

    /// The flood after the bot's three commands, then the drowning check.
    ///
    /// A bot that walked into water this round has drowned already; the
    /// round's flood is drawn and sent all the same (`INCRFLOOD`, `FLOOD`
    /// lines, then `END`), as the 2012 engine did.
    fn end_round(&mut self) {
        let raising = self.deck.draw(&mut self.card_rng);
        let rise = u8::from(raising && self.level < MAX_LEVEL);
        if rise == 1 {
            self.level += 1;
            self.piles.discard_on_top(&mut self.field_rng);
        }
        self.outbox.push(format!("INCRFLOOD {rise}"));
        for _ in 0..self.level {
            let Some(i) = self.piles.draw(&mut self.field_rng) else {
                break; // every field has sunk
            };
            let tile = &mut self.tiles[i as usize];
            match *tile {
                Tile::Dry => {
                    *tile = Tile::Flooded;
                    self.piles.discard.push(i);
                }
                Tile::Flooded => *tile = Tile::Sunk,
                Tile::Sunk => unreachable!("a sunk field is on no pile"),
            }
            let f = self.field_at(i);
            self.outbox.push(format!("FLOOD {f}"));
        }
        if let Some(field) = self.walked_into {
            self.finish(self.round, FloodEnd::WalkedIntoWater { field });
        } else if self.tile(self.position) == Tile::Sunk {
            self.finish(
                self.round,
                FloodEnd::FieldSank {
                    field: self.position,
                },
            );
        } else if self.round >= self.params.max_rounds {
            self.finish(self.round, FloodEnd::RoundCap);
        } else {
            self.begin_round();
        }
    }
}

impl LineGame for FloodGame {
    type Outcome = FloodOutcome;

    fn n_seats(&self) -> usize {
        1
    }

    fn next(&mut self) -> Step {
        if !self.outbox.is_empty() {
            return Step::Send {
                seat: 0,
                lines: std::mem::take(&mut self.outbox),
            };
        }
        if self.outcome.is_some() {
            return Step::Over {
                farewell: vec![(0, vec!["END".to_string()])],
            };
        }
        Step::Expect { seat: 0 }
    }

    fn reply(&mut self, seat: usize, line: &str) -> Result<(), Violation> {
        let violation = |rule: String| Violation {
            seat,
            rule,
            line: line.to_string(),
        };
        if seat != 0 || self.outcome.is_some() {
            return Err(violation("no line was expected from the bot now".into()));
        }
        let Some(command) = Command::parse(line) else {
            let rule = format!(
                "after `ROUND {} {}` the bot must print exactly three commands, one a line, \
                 each `GO` or `DRY` followed by one space and `NORTH`, `EAST`, `SOUTH`, `WEST` \
                 or `CURRENT`, in capitals (command {} of round {} was not one)",
                self.round,
                self.position,
                self.commands + 1,
                self.round
            );
            self.outbox.clear();
            self.finish(self.round - 1, FloodEnd::RuleBroken { rule: rule.clone() });
            return Err(violation(rule));
        };
        self.commands += 1;
        self.apply(command);
        if self.commands == COMMANDS_PER_ROUND {
            self.end_round();
        }
        Ok(())
    }

    fn outcome(&self) -> Option<FloodOutcome> {
        self.outcome.clone()
    }

    fn forfeit(&mut self, _seat: usize, reason: &str) {
        FloodGame::forfeit(self, reason);
    }

    fn turn(&self) -> u64 {
        self.round.into()
    }

    /// The seed's 0.1 s per round, as a budget over the game: by round
    /// `r` the bot may have used `r` times the round's time (issue 27).
    fn cpu_rounds(&self) -> Option<u64> {
        Some(self.round.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::lines::play_scripted;

    const SEED_ISLAND: &str = "GAMEBOARDSTART 8,1\n...o#...\nGAMEBOARDEND\nROUND 1 4,1\n";

    fn f(x: u16, y: u16) -> Field {
        Field { x, y }
    }

    /// Everything the bot received, and the outcome.
    fn transcript(
        game: &mut FloodGame,
        mut bot: impl FnMut(&[String]) -> Vec<&'static str>,
    ) -> (Vec<String>, FloodOutcome) {
        let mut seen = Vec::new();
        let mut queue: Vec<&str> = Vec::new();
        for _ in 0..1_000_000 {
            match game.next() {
                Step::Send { lines, .. } => seen.extend(lines),
                Step::Expect { .. } => {
                    if queue.is_empty() {
                        queue = bot(&seen);
                        queue.reverse();
                    }
                    let line = queue.pop().expect("three commands");
                    game.reply(0, line).expect("a legal command");
                }
                Step::Over { farewell } => {
                    assert_eq!(farewell, vec![(0, vec!["END".to_string()])]);
                    seen.push("END".into());
                    return (seen, game.outcome().unwrap());
                }
            }
        }
        panic!("no end");
    }

    /// Plays one round with `commands`; returns what the bot got meanwhile
    /// (from what was still unsent before the round up to the next `ROUND`,
    /// or `END`).
    fn play_round(game: &mut FloodGame, commands: [&str; 3]) -> Vec<String> {
        let mut lines = Vec::new();
        let mut given = 0;
        while given < 3 {
            match game.next() {
                Step::Send { lines: l, .. } => lines.extend(l),
                Step::Expect { .. } => {
                    game.reply(0, commands[given]).unwrap();
                    given += 1;
                }
                Step::Over { .. } => panic!("over before the round's commands"),
            }
        }
        if let Step::Send { lines: l, .. } = game.next() {
            lines.extend(l);
        }
        if game.outcome.is_some() {
            assert!(matches!(game.next(), Step::Over { .. }));
            lines.push("END".into());
        }
        lines
    }

    fn all_dry(width: u16, height: u16) -> Island {
        Island::new(
            width,
            height,
            vec![Tile::Dry; width as usize * height as usize],
            None,
        )
        .unwrap()
    }

    fn check_piles(game: &FloodGame) {
        let mut on_piles: Vec<u16> = game
            .piles
            .draw
            .iter()
            .chain(&game.piles.discard)
            .copied()
            .collect();
        on_piles.sort_unstable();
        let land: Vec<u16> = (0..game.tiles.len() as u16)
            .filter(|&i| game.tiles[i as usize] != Tile::Sunk)
            .collect();
        assert_eq!(on_piles, land, "the piles hold exactly the land, once each");
    }

    #[test]
    fn the_seeds_example_island() {
        let island = Island::parse(SEED_ISLAND).unwrap();
        assert_eq!((island.width(), island.height()), (8, 1));
        assert_eq!(island.start(), f(4, 1));
        assert!(island.start_given());
        assert_eq!(island.tile(f(4, 1)), Tile::Flooded);
        assert_eq!(island.tile(f(5, 1)), Tile::Dry);
        assert_eq!(island.tile(f(3, 1)), Tile::Sunk);
        assert_eq!(island.tile(f(9, 1)), Tile::Sunk);
        assert_eq!(island.n_land(), 2);
        assert_eq!(island.to_text(), SEED_ISLAND);
        assert_eq!(Island::parse(&island.to_text()).unwrap(), island);
    }

    #[test]
    fn default_start_is_the_first_dry_field_else_the_first_flooded() {
        let i = Island::parse("GAMEBOARDSTART 3,2\n.o.\noo#\nGAMEBOARDEND").unwrap();
        assert_eq!(i.start(), f(3, 2));
        assert!(!i.start_given());
        let i = Island::parse("GAMEBOARDSTART 3,2\n...\n.oo\nGAMEBOARDEND\n").unwrap();
        assert_eq!(i.start(), f(2, 2));
        // The canonical text names the start, so it survives a round trip.
        assert_eq!(Island::parse(&i.to_text()).unwrap().start(), f(2, 2));
    }

    #[test]
    fn the_parser_is_lenient_about_layout_only() {
        let text = "\u{feff}\r\n  GAMEBOARDSTART 8,1 \r\n...o#...\r\n\r\nGAMEBOARDEND\r\n\r\nROUND 1 5,1\r\n\n";
        let i = Island::parse(text).unwrap();
        assert_eq!(i.start(), f(5, 1));
        let i = Island::parse(&format!(
            "GAMEBOARDSTART 1000,1\n{}\nGAMEBOARDEND",
            "#".repeat(1000)
        ))
        .unwrap();
        assert_eq!(i.n_land(), 1000);
    }

    #[test]
    fn the_parser_refuses_broken_islands_with_clear_words() {
        use IslandError::*;
        let err = |t: &str| Island::parse(t).unwrap_err();
        assert_eq!(err(""), Empty);
        assert_eq!(err("\n \n"), Empty);
        assert!(matches!(err("GAMEBOARD 8,1\n"), BadHeader { line: 1, .. }));
        assert!(matches!(err("GAMEBOARDSTART 8x1\n"), BadHeader { .. }));
        assert!(matches!(err("GAMEBOARDSTART 8,\n"), BadHeader { .. }));
        assert!(matches!(err("GAMEBOARDSTART 123456,1\n"), BadHeader { .. }));
        assert!(matches!(err("GAMEBOARDSTART 0,1\n"), BadSize { .. }));
        assert_eq!(
            err("GAMEBOARDSTART 1001,1\n"),
            BadSize {
                line: 1,
                width: 1001,
                height: 1,
                fields: 1001
            }
        );
        assert!(matches!(
            err("GAMEBOARDSTART 50,21\n"),
            BadSize { fields: 1050, .. }
        ));
        assert!(matches!(
            err("GAMEBOARDSTART 99999,99999\n"),
            BadSize { .. }
        ));
        assert_eq!(
            err("GAMEBOARDSTART 3,2\n##\n###\nGAMEBOARDEND"),
            RowLength {
                line: 2,
                row: 1,
                expected: 3,
                found: 2
            }
        );
        assert!(matches!(
            err("GAMEBOARDSTART 3,1\n####\nGAMEBOARDEND"),
            RowLength { found: 4, .. }
        ));
        assert_eq!(
            err("GAMEBOARDSTART 3,1\n#x#\nGAMEBOARDEND"),
            BadSymbol {
                line: 2,
                column: 2,
                found: 'x'
            }
        );
        assert_eq!(
            err("GAMEBOARDSTART 3,2\n###\nGAMEBOARDEND"),
            MissingRows {
                expected: 2,
                found: 1
            }
        );
        assert_eq!(
            err("GAMEBOARDSTART 3,2\n###\n"),
            MissingRows {
                expected: 2,
                found: 1
            }
        );
        assert_eq!(err("GAMEBOARDSTART 3,1\n###\n"), EndMissing { rows: 1 });
        assert!(matches!(
            err("GAMEBOARDSTART 3,1\n###\n###\nGAMEBOARDEND"),
            MissingEnd { line: 3, .. }
        ));
        assert!(matches!(
            err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 2 1,1"),
            BadStartLine { line: 4, .. }
        ));
        assert!(matches!(
            err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nSTART 1,1"),
            BadStartLine { .. }
        ));
        assert!(matches!(
            err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 1 4,1"),
            StartOffBoard { x: 4, y: 1, .. }
        ));
        assert!(matches!(
            err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 1 0,1"),
            StartOffBoard { .. }
        ));
        assert_eq!(
            err("GAMEBOARDSTART 3,1\n#.#\nGAMEBOARDEND\nROUND 1 2,1"),
            StartSunk { x: 2, y: 1 }
        );
        assert!(matches!(
            err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 1 1,1\nROUND 1 2,1"),
            TrailingText { line: 5, .. }
        ));
        assert_eq!(err("GAMEBOARDSTART 3,1\n...\nGAMEBOARDEND"), NoLand);
        let long = "GAMEBOARDSTART 3,1\n".to_string() + &" ".repeat(MAX_ISLAND_TEXT);
        assert!(matches!(err(&long), TooLong { .. }));
        // Messages quote at most a short piece of a hostile line.
        let hostile = format!("GAMEBOARDSTART {}", "9".repeat(5000));
        let msg = err(&hostile).to_string();
        assert!(
            msg.contains("GAMEBOARDSTART X,Y") && msg.len() < 300,
            "{msg}"
        );
        let msg = err("GAMEBOARDSTART 3,1\n#x#\nGAMEBOARDEND").to_string();
        assert!(
            msg.contains("line 2, column 2") && msg.contains("`#`"),
            "{msg}"
        );
    }

    #[test]
    fn commands_are_exactly_as_the_seed_writes_them() {
        assert_eq!(
            Command::parse("GO NORTH"),
            Some(Command::Go(Direction::North))
        );
        assert_eq!(
            Command::parse("DRY CURRENT"),
            Some(Command::Dry(Direction::Current))
        );
        assert_eq!(
            Command::parse("DRY WEST\r"),
            Some(Command::Dry(Direction::West))
        );
        for good in ["GO  NORTH", "GO NORTH ", " GO NORTH", "\tGO NORTH\r\r"] {
            assert_eq!(
                Command::parse(good),
                Some(Command::Go(Direction::North)),
                "{good:?}"
            );
        }
        for bad in [
            "go north",
            "GO NORTH NOW",
            "GONORTH",
            "GO",
            "WALK EAST",
            "DRY UP",
            "",
        ] {
            assert_eq!(Command::parse(bad), None, "{bad:?}");
        }
    }

    /// The seed's two example rounds are a lost figure; this is the same
    /// exchange rebuilt from the text, on the seed's example island, with
    /// the cards laid out by hand.
    #[test]
    fn two_example_rounds_on_the_seeds_island() {
        let island = Island::parse(SEED_ISLAND).unwrap();
        let mut game = FloodGame::new(&island, Params::default(), 1);
        let idx = |x: u16| x - 1;
        // Round 1 draws a raising card, round 2 a blank one.
        game.deck.cards = vec![
            false, false, false, false, false, false, false, true, false, true,
        ];
        // (5,1) lies on top of the draw pile, (4,1) below it.
        game.piles.draw = vec![idx(4), idx(5)];
        let mut round = 0;
        let (seen, outcome) = transcript(&mut game, |_| {
            round += 1;
            match round {
                1 => vec!["DRY CURRENT", "GO EAST", "GO WEST"],
                2 => vec!["GO CURRENT", "DRY EAST", "GO EAST"],
                _ => vec!["GO WEST", "GO WEST", "DRY CURRENT"],
            }
        });
        assert_eq!(
            seen,
            [
                "GAMEBOARDSTART 8,1",
                "...o#...",
                "GAMEBOARDEND",
                "ROUND 1 4,1",
                // DRY CURRENT dried (4,1); the bot went east and back.
                "INCRFLOOD 1",
                "FLOOD 5,1",
                "ROUND 2 4,1",
                // (5,1) dried again, the bot stands on it.
                "INCRFLOOD 0",
                "FLOOD 4,1",
                "ROUND 3 5,1",
                // GO WEST onto the flooded (4,1), GO WEST into the water;
                // the round's flood still comes (a raising card: level 2).
                "INCRFLOOD 1",
                "FLOOD 4,1",
                "FLOOD 5,1",
                "END",
            ]
        );
        assert_eq!(outcome.rounds, 3);
        assert_eq!(outcome.end, FloodEnd::WalkedIntoWater { field: f(3, 1) });
        assert_eq!(outcome.position, f(3, 1));
        assert_eq!(outcome.level, 2, "the flood of round 3 rose too");
        // DRY CURRENT after drowning was not carried out and is no warning.
        assert_eq!(outcome.n_warnings, 0);
    }

    /// The seed's dummy bot stands still until it drowns.
    #[test]
    fn the_standing_bot_drowns_when_its_field_sinks() {
        let island = all_dry(10, 10);
        for seed in 0..20 {
            let mut game = FloodGame::new(&island, Params::default(), seed);
            let outcome = play_scripted(&mut game, |_, _| "GO CURRENT".into(), 100_000).unwrap();
            assert_eq!(outcome.end, FloodEnd::FieldSank { field: f(1, 1) });
            assert_eq!(outcome.position, f(1, 1));
            // Its field had to be drawn twice: not before round 2.
            assert!(outcome.rounds >= 2 && outcome.rounds < DEFAULT_MAX_ROUNDS);
        }
    }

    /// Every ten rounds exactly two raising cards, until level 7; the
    /// number of FLOOD lines follows the level; the piles keep their
    /// invariant.
    #[test]
    fn the_flood_rises_twice_every_ten_rounds_up_to_seven() {
        // A bot that keeps its own field dry, on the largest island: it
        // lives long enough to see level 7.
        let mut tiles = vec![Tile::Dry; 1000];
        tiles[0] = Tile::Sunk;
        let island = Island::new(40, 25, tiles, Some(f(20, 12))).unwrap();
        let dance = [
            ["DRY NORTH", "GO EAST", "DRY CURRENT"],
            ["DRY SOUTH", "GO WEST", "DRY CURRENT"],
        ];
        for seed in 0..10 {
            let mut game = FloodGame::new(&island, Params { max_rounds: 100 }, seed);
            let mut level = 0u8;
            let mut rises = Vec::new();
            while game.outcome.is_none() {
                let round = game.round;
                let lines = play_round(&mut game, dance[round as usize % 2]);
                // One card a round; all ten shuffled again every ten rounds.
                assert_eq!(game.deck.cards.len(), 9 - ((round - 1) % 10) as usize);
                let rise: u8 = lines
                    .iter()
                    .find_map(|l| l.strip_prefix("INCRFLOOD "))
                    .unwrap()
                    .parse()
                    .unwrap();
                rises.push(rise);
                level += rise;
                assert_eq!(game.level(), level);
                let floods = lines.iter().filter(|l| l.starts_with("FLOOD ")).count();
                assert_eq!(floods, level as usize, "seed {seed} round {round}");
                check_piles(&game);
            }
            let outcome = game.outcome().unwrap();
            assert_eq!(outcome.end, FloodEnd::RoundCap, "seed {seed}");
            assert_eq!(outcome.rounds, 100);
            assert_eq!(outcome.level, MAX_LEVEL);
            let per_block: Vec<u8> = rises.chunks(10).map(|c| c.iter().sum()).collect();
            assert_eq!(per_block, [2, 2, 2, 1, 0, 0, 0, 0, 0, 0], "seed {seed}");
        }
    }

    #[test]
    fn the_flood_deck_has_two_raising_cards_in_every_ten() {
        let mut deck = FloodDeck::new();
        let mut rng = SplitMix64::new(7);
        let draws: Vec<bool> = (0..1000).map(|_| deck.draw(&mut rng)).collect();
        for block in draws.chunks(10) {
            assert_eq!(block.iter().filter(|&&c| c).count(), 2);
        }
        // and the positions vary
        let firsts: std::collections::BTreeSet<usize> = draws
            .chunks(10)
            .map(|b| b.iter().position(|&c| c).unwrap())
            .collect();
        assert!(firsts.len() > 3);
    }

    #[test]
    fn a_rise_puts_the_shuffled_discard_pile_on_top() {
        let mut rng = SplitMix64::new(3);
        let mut piles = FieldPiles {
            draw: vec![10, 11, 12],
            discard: vec![1, 2, 3, 4],
        };
        piles.discard_on_top(&mut rng);
        assert!(piles.discard.is_empty());
        let mut first: Vec<u16> = (0..4).map(|_| piles.draw(&mut rng).unwrap()).collect();
        first.sort_unstable();
        assert_eq!(first, [1, 2, 3, 4]);
        assert_eq!(piles.draw(&mut rng), Some(12));
    }

    /// "Das heißt, dass kürzlich überflutete Felder sehr schnell erneut
    /// überflutet werden."
    #[test]
    fn after_a_rise_recently_flooded_fields_come_first() {
        let island = Island::parse("GAMEBOARDSTART 5,1\n#####\nGAMEBOARDEND\nROUND 1 5,1").unwrap();
        let mut game = FloodGame::new(&island, Params::default(), 5);
        game.level = 1;
        // Round 1 a blank card, round 2 a raising one.
        game.deck.cards = vec![true, false];
        // Top of the draw pile: (1,1), then (2,1), (3,1), (4,1), (5,1).
        game.piles.draw = vec![4, 3, 2, 1, 0];
        let stand = ["GO CURRENT"; 3];
        let round1 = play_round(&mut game, stand);
        assert!(round1.ends_with(&[
            "INCRFLOOD 0".into(),
            "FLOOD 1,1".into(),
            "ROUND 2 5,1".into()
        ]));
        let round2 = play_round(&mut game, stand);
        // (1,1) came back from the discard pile first and sank.
        assert_eq!(
            round2,
            ["INCRFLOOD 1", "FLOOD 1,1", "FLOOD 2,1", "ROUND 3 5,1"]
        );
        assert_eq!(game.tile(f(1, 1)), Tile::Sunk);
        assert_eq!(game.tile(f(2, 1)), Tile::Flooded);
        check_piles(&game);
    }

    #[test]
    fn an_empty_draw_pile_takes_the_shuffled_discard_pile() {
        let mut rng = SplitMix64::new(3);
        let mut piles = FieldPiles {
            draw: vec![5],
            discard: vec![1, 2],
        };
        assert_eq!(piles.draw(&mut rng), Some(5));
        piles.discard.push(5);
        let mut rest: Vec<u16> = (0..3).map(|_| piles.draw(&mut rng).unwrap()).collect();
        rest.sort_unstable();
        assert_eq!(rest, [1, 2, 5]);
        assert_eq!(piles.draw(&mut rng), None);
    }

    /// 13.12.2012: "Dies kann dazu führen, dass ein Feld zweimal pro Runde
    /// überflutet wird."
    #[test]
    fn a_field_can_be_flooded_twice_in_one_round() {
        let island = Island::parse("GAMEBOARDSTART 1,1\n#\nGAMEBOARDEND").unwrap();
        let mut game = FloodGame::new(&island, Params::default(), 5);
        game.level = 1;
        game.deck.cards = vec![true];
        let (seen, outcome) = transcript(&mut game, |_| vec!["GO CURRENT"; 3]);
        assert_eq!(
            seen,
            [
                "GAMEBOARDSTART 1,1",
                "#",
                "GAMEBOARDEND",
                "ROUND 1 1,1",
                "INCRFLOOD 1",
                "FLOOD 1,1",
                "FLOOD 1,1",
                "END"
            ]
        );
        assert_eq!(outcome.end, FloodEnd::FieldSank { field: f(1, 1) });
        assert_eq!(outcome.rounds, 1);
    }

    #[test]
    fn at_level_seven_a_raising_card_changes_nothing() {
        let island = all_dry(5, 5);
        let mut game = FloodGame::new(&island, Params::default(), 5);
        game.level = MAX_LEVEL;
        game.deck.cards = vec![true];
        game.piles.discard = game.piles.draw.split_off(10);
        let top_seven: Vec<String> = game.piles.draw[3..]
            .iter()
            .rev()
            .map(|&i| format!("FLOOD {}", game.field_at(i)))
            .collect();
        let lines = play_round(&mut game, ["GO CURRENT"; 3]);
        assert!(lines.contains(&"INCRFLOOD 0".to_string()));
        assert_eq!(game.level(), MAX_LEVEL);
        // The seven fields came from the top of the draw pile, not from the
        // discard pile: it was not put on top.
        let flooded: Vec<String> = lines
            .into_iter()
            .filter(|l| l.starts_with("FLOOD "))
            .collect();
        assert_eq!(flooded, top_seven);
    }

    #[test]
    fn walking_off_the_board_is_walking_into_water() {
        let island = Island::parse("GAMEBOARDSTART 2,1\n##\nGAMEBOARDEND\nROUND 1 1,1").unwrap();
        let mut game = FloodGame::new(&island, Params::default(), 1);
        let (seen, outcome) = transcript(&mut game, |_| vec!["GO NORTH", "GO SOUTH", "GO EAST"]);
        assert_eq!(outcome.end, FloodEnd::WalkedIntoWater { field: f(1, 0) });
        assert_eq!(outcome.rounds, 1);
        // As the 2012 engine: the round's flood still comes, then `END`.
        assert_eq!(seen.last().unwrap(), "END");
        let incr = seen
            .iter()
            .position(|l| l.starts_with("INCRFLOOD "))
            .expect("the round's flood card is sent");
        let rise: usize = seen[incr]["INCRFLOOD ".len()..].parse().unwrap();
        assert_eq!(seen.len(), incr + 1 + rise + 1, "{seen:?}");
        assert!(seen[incr + 1..seen.len() - 1]
            .iter()
            .all(|l| l.starts_with("FLOOD ")));
    }

    #[test]
    fn drying_water_is_a_warning_not_an_abort() {
        let island = Island::parse("GAMEBOARDSTART 3,1\n.o#\nGAMEBOARDEND\nROUND 1 2,1").unwrap();
        let mut game = FloodGame::new(&island, Params { max_rounds: 2 }, 1);
        game.deck.cards = vec![false; 10];
        let (_, outcome) = transcript(&mut game, |_| vec!["DRY WEST", "DRY CURRENT", "DRY EAST"]);
        assert_eq!(outcome.end, FloodEnd::RoundCap);
        assert_eq!(outcome.rounds, 2);
        assert_eq!(outcome.n_warnings, 2);
        assert_eq!(
            outcome.warnings[0],
            FloodWarning {
                round: 1,
                command: 1,
                field: f(1, 1)
            }
        );
        assert_eq!(game.tile(f(2, 1)), Tile::Dry);
        // Off the board counts as water too.
        let island = Island::parse("GAMEBOARDSTART 1,1\n#\nGAMEBOARDEND").unwrap();
        let mut game = FloodGame::new(&island, Params { max_rounds: 1 }, 1);
        let (_, outcome) = transcript(&mut game, |_| vec!["DRY NORTH", "DRY EAST", "DRY SOUTH"]);
        assert_eq!(outcome.n_warnings, 3);
    }

    #[test]
    fn a_malformed_command_breaks_the_rules_and_scores_the_completed_rounds() {
        let island = all_dry(5, 5);
        let mut game = FloodGame::new(&island, Params::default(), 1);
        let mut n = 0;
        let err = play_scripted(
            &mut game,
            |_, _| {
                n += 1;
                if n == 8 {
                    "GO NORTHEAST".into()
                } else {
                    "GO CURRENT".into()
                }
            },
            1000,
        )
        .unwrap_err();
        assert_eq!(err.seat, 0);
        assert_eq!(err.line, "GO NORTHEAST");
        assert!(
            err.rule.contains("exactly three commands") && err.rule.contains("round 3"),
            "{}",
            err.rule
        );
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.rounds, 2);
        assert!(matches!(outcome.end, FloodEnd::RuleBroken { .. }));
        assert!(matches!(game.next(), Step::Over { .. }));
        assert!(game.reply(0, "GO CURRENT").is_err());
    }

    #[test]
    fn a_forfeit_scores_the_completed_rounds() {
        let island = all_dry(5, 5);
        let mut game = FloodGame::new(&island, Params::default(), 1);
        game.forfeit("no answer within 0.1 s");
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.rounds, 0);
        assert_eq!(
            outcome.end,
            FloodEnd::Forfeit {
                reason: "no answer within 0.1 s".into()
            }
        );
        assert!(matches!(game.next(), Step::Over { .. }));
    }

    #[test]
    fn the_round_cap_ends_every_game() {
        let island = all_dry(40, 25);
        let mut game = FloodGame::new(&island, Params { max_rounds: 5 }, 9);
        let outcome = play_scripted(&mut game, |_, _| "DRY CURRENT".into(), 1000).unwrap();
        assert_eq!(outcome.end, FloodEnd::RoundCap);
        assert_eq!(outcome.rounds, 5);
        assert_eq!(game.turn(), 5);
    }

    /// A bot walking at random (from its own seeded generator) on a small
    /// island: every game ends, the piles keep their invariant, and the same
    /// seed gives the same game.
    #[test]
    fn games_are_deterministic_from_the_seed() {
        let island = Island::parse(
            "GAMEBOARDSTART 6,4\n.####.\n##oo##\n#o##o#\n.####.\nGAMEBOARDEND\nROUND 1 3,2",
        )
        .unwrap();
        let play = |seed: u64| {
            let mut game = FloodGame::new(&island, Params::default(), seed);
            let mut bot = SplitMix64::new(99);
            let mut lines = Vec::new();
            for _ in 0..100_000 {
                match game.next() {
                    Step::Send { lines: l, .. } => lines.extend(l),
                    Step::Expect { .. } => {
                        let verb = ["GO", "DRY", "DRY"][bot.below(3) as usize];
                        let dir =
                            ["NORTH", "EAST", "SOUTH", "WEST", "CURRENT"][bot.below(5) as usize];
                        game.reply(0, &format!("{verb} {dir}")).unwrap();
                        check_piles(&game);
                    }
                    Step::Over { .. } => return (lines, game.outcome().unwrap()),
                }
            }
            panic!("no end");
        };
        let a = play(42);
        assert_eq!(a, play(42));
        let distinct: std::collections::BTreeSet<Vec<String>> = (0..8).map(|s| play(s).0).collect();
        assert!(distinct.len() > 4, "different seeds give different games");
    }
}
