//! The flooding island's board: fields and their states, and the island
//! text format with its checks ([`Island::parse`], for islands participants
//! send in), and the board as the protocol prints it.
//!
//! What it deliberately does not do: play (that is [`super::FloodGame`]) or
//! draw islands from a seed (that is `crate::discipline::flooding::islands`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Most fields an island may have (width × height, water included).
pub const MAX_FIELDS: usize = 1000;
/// Most bytes of island text the parser reads.
pub const MAX_ISLAND_TEXT: usize = 16 * 1024;

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
    pub(super) width: u16,
    pub(super) height: u16,
    /// Row by row from the top.
    pub(super) tiles: Vec<Tile>,
    pub(super) start: Field,
    /// Whether the text named the start field (`ROUND 1 X,Y`).
    pub(super) start_given: bool,
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

pub(super) fn board_rows(width: u16, tiles: &[Tile]) -> Vec<String> {
    tiles
        .chunks(width as usize)
        .map(|row| row.iter().map(|t| t.symbol()).collect())
        .collect()
}
