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
//! them (`crate::discipline::flooding::planner`).
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

use crate::game::lines::{LineGame, Step, Violation};
use crate::seed::{derive, SplitMix64};
use serde::{Deserialize, Serialize};
use std::fmt;

mod cards;
mod island;

use cards::{FieldPiles, FloodDeck};
pub use cards::{FLOOD_CARDS, RAISING_CARDS};
use island::board_rows;
pub use island::{Field, Island, IslandError, Tile, MAX_FIELDS, MAX_ISLAND_TEXT};

/// The highest flood level (02.01.2013): at most seven fields a round.
pub const MAX_LEVEL: u8 = 7;
/// Commands a bot gives each round.
pub const COMMANDS_PER_ROUND: u8 = 3;
/// The default round cap.
pub const DEFAULT_MAX_ROUNDS: u32 = 2000;

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
mod tests;
