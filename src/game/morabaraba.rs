//! Morabaraba (Ohjelmointiputka's AI contest 2014, organised by Metabolix):
//! the board, the rules and the line protocol of one game between two bots.
//!
//! What is here: the 24 points and the lines between them, mills, the
//! legality of a move ([`Position::play`]), the end of a game, and the game
//! as a [`LineGame`] with two seats. What is not here: processes, the 512 MB
//! and 120 s CPU limits and the CPU measurement (the referee's), scoring
//! with the CPU times (`crate::tournament::morabaraba`), and the check that
//! a bot is deterministic (a comparison of two runs, done by the caller).
//!
//! # The board
//!
//! Three nested squares; "neliöiden vastaavat nurkat sekä vastaavat sivujen
//! keskikohdat on yhdistetty viivoilla": the corresponding corners *and* the
//! corresponding side midpoints of the squares are joined by lines. A point
//! is `x y s`: `x` 1 left, 2 middle, 3 right; `y` 1 bottom, 2 middle, 3 top;
//! `s` the square, 1 outermost, 2 middle, 3 innermost; `2 2 s` does not
//! exist. So there are 24 points and 20 straight lines of three points, each
//! a possible mill ([`MILLS`]):
//!
//! - the 4 sides of each square (12): e.g. `1 1 s`, `2 1 s`, `3 1 s`;
//! - the 4 lines through the side midpoints (4): e.g. `2 1 1`, `2 1 2`, `2 1 3`;
//! - the 4 diagonal lines through the corners (4): e.g. `1 1 1`, `1 1 2`, `1 1 3`.
//!
//! Two points are neighbours when they are next to each other on one of
//! these lines (40 pairs): a corner of the middle square has four
//! neighbours, a midpoint of the outer or inner square three.
//!
//! # The game
//!
//! Player 1 (seat 0) begins; turns alternate. Each player has 12 cows. In
//! turns 1–24 each turn places a cow on a free point; later turns move a
//! cow along a line to a free neighbouring point, and a player with exactly
//! three cows moves one to any free point ("flying"). A move that forms a
//! mill (a line of three of the mover's cows, one of them the cow just
//! placed or moved) shoots one opponent's cow: one that is in no mill, or
//! any when all the opponent's cows on the board are in mills. One cow only,
//! even when the move forms two mills.
//!
//! "Jos siirto hajottaa oman myllyn ja muodostaa toisen, heti seuraavalla
//! vuorolla ei saa muodostaa uudestaan juuri hajotettua myllyä": when a move
//! takes a cow out of one of its player's mills *and* forms another mill,
//! then on that player's very next turn no move may form the broken mill
//! again (whichever cow would complete it). A move that breaks a mill without
//! forming one puts no such restriction.
//!
//! A game ends after a move:
//! 1. a player with only two cows left (on the board and still to place)
//!    has lost;
//! 2. otherwise it is a draw when either player has exactly three cows and
//!    the last 10 turns formed no mill, or when the last 200 turns formed no
//!    mill (counted from the start of the game or the last mill);
//! 3. otherwise the player to move who has no legal move has lost.
//!
//! A player whose line is not a legal move (or whose name is not valid)
//! loses at once.
//!
//! # The protocol
//!
//! Each bot first gets its player number, `1` or `2`, and answers with its
//! name, 3–9 letters `a-z`, `A-Z` or digits. Then the player to move prints
//! its move as nine numbers separated by spaces, `from to shot`: three for
//! the point the cow comes from (`0 0 0` while placing), three for the point
//! it goes to, three for the opponent's cow shot (`0 0 0` when no mill was
//! formed). `0 0 0 2 3 1 0 0 0` places a cow in the middle of the outer
//! square's top side; `1 3 1 2 1 1 3 2 3` moves (flies) the cow from the
//! board's top left corner to the middle of its bottom side and shoots the
//! cow at the middle of the inner square's right side. The other bot gets
//! the move, written with single spaces. When the game is over, both get
//! `0 0 0 0 0 0 0 0 0` (and not the last move).
//!
//! # Rule decisions (where the seed leaves room)
//!
//! - Shooting is compulsory: "Jos myllyä ei muodostu eli vastustajan lehmää
//!   ei ammuta" equates forming no mill with shooting nothing, so a move that
//!   forms a mill and names no cow is illegal, as is one that names a cow
//!   without forming a mill. (Should the opponent have no cow on the board,
//!   nothing can be shot and the last three numbers are zeros.)
//! - "Jäljellä" (cows left) counts the cows on the board and those still to
//!   place, in the placing phase too.
//! - "Heti seuraavalla vuorolla" is the mover's own next turn (the turn in
//!   between is the opponent's, who cannot form the mover's mills).
//! - When the 10-turn or the 200-turn draw applies after a move that also
//!   leaves the opponent without a legal move, the game is a draw (the draw
//!   ends the game before the blocked player's turn).
//! - Flying needs exactly three cows and applies after the placing phase
//!   only (while placing, every turn places).
//! - A move line is nine tokens, each `0`, `1`, `2` or `3`, separated by
//!   white space; anything else (signs, leading zeros, a tenth number) is
//!   an illegal move. A name is trimmed of surrounding white space.

use super::lines::{LineGame, Step, Violation};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::VecDeque;
use std::fmt;

/// Points on the board.
pub const N_POINTS: usize = 24;
/// Cows each player has.
pub const COWS: u8 = 12;
/// Turns of the placing phase (12 rounds).
pub const PLACING_TURNS: u32 = 24;
/// A player with this many cows flies.
pub const FLYING_COWS: u8 = 3;
/// With this many cows a player has lost.
pub const LOSING_COWS: u8 = 2;
/// Turns without a mill after which a game with a three-cow player is drawn.
pub const THREE_COWS_DRAW_TURNS: u32 = 10;
/// Turns without a mill after which any game is drawn.
pub const NO_MILL_DRAW_TURNS: u32 = 200;
/// The line both bots get when the game is over.
pub const GAME_OVER_LINE: &str = "0 0 0 0 0 0 0 0 0";

/// One of the 24 points.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Point(u8);

/// `(x, y)` of the eight points of a square, in index order.
const XY: [(u8, u8); 8] = [
    (1, 1),
    (2, 1),
    (3, 1),
    (1, 2),
    (3, 2),
    (1, 3),
    (2, 3),
    (3, 3),
];

/// The point `x y s`, for tables known to be valid.
const fn p(x: u8, y: u8, s: u8) -> Point {
    let k = match (x, y) {
        (1, 1) => 0,
        (2, 1) => 1,
        (3, 1) => 2,
        (1, 2) => 3,
        (3, 2) => 4,
        (1, 3) => 5,
        (2, 3) => 6,
        (3, 3) => 7,
        _ => panic!("no such point"),
    };
    assert!(matches!(s, 1..=3), "no such square");
    Point((s - 1) * 8 + k)
}

impl Point {
    /// The point `x y square`, if it exists.
    pub fn new(x: u8, y: u8, square: u8) -> Option<Point> {
        let ok = (1..=3).contains(&x) && (1..=3).contains(&y) && (1..=3).contains(&square);
        (ok && (x, y) != (2, 2)).then(|| p(x, y, square))
    }

    /// All 24 points, square by square.
    pub fn all() -> impl Iterator<Item = Point> {
        (0..N_POINTS as u8).map(Point)
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn x(self) -> u8 {
        XY[(self.0 % 8) as usize].0
    }

    pub fn y(self) -> u8 {
        XY[(self.0 % 8) as usize].1
    }

    pub fn square(self) -> u8 {
        self.0 / 8 + 1
    }

    /// The points next to this one along a line.
    pub fn neighbours(self) -> impl Iterator<Item = Point> {
        MILLS.iter().flat_map(move |line| {
            let i = line.iter().position(|&q| q == self);
            let (a, b) = match i {
                Some(0) => (Some(line[1]), None),
                Some(1) => (Some(line[0]), Some(line[2])),
                Some(2) => (Some(line[1]), None),
                _ => (None, None),
            };
            a.into_iter().chain(b)
        })
    }
}

impl fmt::Display for Point {
    /// As in the protocol: `x y s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.x(), self.y(), self.square())
    }
}

impl fmt::Debug for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{},{})", self.x(), self.y(), self.square())
    }
}

impl Serialize for Point {
    /// As `[x, y, s]`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        [self.x(), self.y(), self.square()].serialize(serializer)
    }
}

/// The 20 lines of the board, each a possible mill.
pub const MILLS: [[Point; 3]; 20] = [
    // The sides of each square.
    [p(1, 1, 1), p(2, 1, 1), p(3, 1, 1)],
    [p(1, 3, 1), p(2, 3, 1), p(3, 3, 1)],
    [p(1, 1, 1), p(1, 2, 1), p(1, 3, 1)],
    [p(3, 1, 1), p(3, 2, 1), p(3, 3, 1)],
    [p(1, 1, 2), p(2, 1, 2), p(3, 1, 2)],
    [p(1, 3, 2), p(2, 3, 2), p(3, 3, 2)],
    [p(1, 1, 2), p(1, 2, 2), p(1, 3, 2)],
    [p(3, 1, 2), p(3, 2, 2), p(3, 3, 2)],
    [p(1, 1, 3), p(2, 1, 3), p(3, 1, 3)],
    [p(1, 3, 3), p(2, 3, 3), p(3, 3, 3)],
    [p(1, 1, 3), p(1, 2, 3), p(1, 3, 3)],
    [p(3, 1, 3), p(3, 2, 3), p(3, 3, 3)],
    // Through the corresponding side midpoints.
    [p(2, 1, 1), p(2, 1, 2), p(2, 1, 3)],
    [p(2, 3, 1), p(2, 3, 2), p(2, 3, 3)],
    [p(1, 2, 1), p(1, 2, 2), p(1, 2, 3)],
    [p(3, 2, 1), p(3, 2, 2), p(3, 2, 3)],
    // Through the corresponding corners.
    [p(1, 1, 1), p(1, 1, 2), p(1, 1, 3)],
    [p(1, 3, 1), p(1, 3, 2), p(1, 3, 3)],
    [p(3, 1, 1), p(3, 1, 2), p(3, 1, 3)],
    [p(3, 3, 1), p(3, 3, 2), p(3, 3, 3)],
];

fn mill_text(i: usize) -> String {
    let [a, b, c] = MILLS[i];
    format!("{a}, {b}, {c}")
}

/// A move as the protocol writes it: nine numbers, `None` for `0 0 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Move {
    pub from: Option<Point>,
    pub to: Option<Point>,
    pub shot: Option<Point>,
}

impl Move {
    /// Reads a move line (syntax only; [`Position::play`] judges it).
    pub fn parse(line: &str) -> Result<Move, MoveError> {
        let mut numbers = [0u8; 9];
        let mut n = 0;
        for token in line.split_ascii_whitespace() {
            if n == 9 {
                return Err(MoveError::Syntax);
            }
            numbers[n] = match token {
                "0" => 0,
                "1" => 1,
                "2" => 2,
                "3" => 3,
                _ => return Err(MoveError::Syntax),
            };
            n += 1;
        }
        if n != 9 {
            return Err(MoveError::Syntax);
        }
        let point = |slot: Slot, t: &[u8]| -> Result<Option<Point>, MoveError> {
            match t {
                [0, 0, 0] => Ok(None),
                &[x, y, s] => Point::new(x, y, s).map(Some).ok_or(MoveError::NoSuchPoint {
                    slot,
                    numbers: [x, y, s],
                }),
                _ => unreachable!("three numbers"),
            }
        };
        Ok(Move {
            from: point(Slot::From, &numbers[0..3])?,
            to: point(Slot::To, &numbers[3..6])?,
            shot: point(Slot::Shot, &numbers[6..9])?,
        })
    }

    /// The line as the protocol writes it.
    pub fn to_line(&self) -> String {
        let part = |q: Option<Point>| q.map_or("0 0 0".to_string(), |q| q.to_string());
        format!("{} {} {}", part(self.from), part(self.to), part(self.shot))
    }
}

/// Which three numbers of a move line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Slot {
    From,
    To,
    Shot,
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Slot::From => "first",
            Slot::To => "second",
            Slot::Shot => "last",
        })
    }
}

/// Why a move is illegal. The message names the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error(
        "a move is nine numbers, each 0, 1, 2 or 3, separated by spaces (e.g. `0 0 0 2 3 1 0 0 0`)"
    )]
    Syntax,
    #[error("the {slot} three numbers `{} {} {}` are not a point: a point is `x y s` with x, y and s in 1–3 and not x = y = 2, or `0 0 0` for none", numbers[0], numbers[1], numbers[2])]
    NoSuchPoint { slot: Slot, numbers: [u8; 3] },
    #[error("in the first {PLACING_TURNS} turns cows are placed, not moved: the first three numbers must be `0 0 0`")]
    FromWhilePlacing,
    #[error("after the first {PLACING_TURNS} turns a cow is moved: the first three numbers must name one of your cows")]
    NoFrom,
    #[error("there is no cow of yours on {0}")]
    NotYourCow(Point),
    #[error("the second three numbers must name the point the cow goes to")]
    NoTo,
    #[error("the point {0} is not free")]
    Occupied(Point),
    #[error("{from} and {to} are not neighbours on a line: a cow moves along a line to the next point; only a player with three cows may fly anywhere")]
    NotAdjacent { from: Point, to: Point },
    #[error("the move forms the mill {mill} again, which your previous move broke while forming another mill; that mill may not be formed again on your very next turn")]
    ForbiddenMill { mill: String },
    #[error("the move forms a mill, so the last three numbers must name one of the opponent's cows to shoot")]
    MissingShot,
    #[error("the move forms no mill, so the last three numbers must be `0 0 0`")]
    ShotWithoutMill,
    #[error(
        "the opponent has no cows on the board to shoot, so the last three numbers must be `0 0 0`"
    )]
    NothingToShoot,
    #[error("there is no opponent's cow on {0} to shoot")]
    NotOpponentsCow(Point),
    #[error("the cow on {0} is in a mill; while the opponent has cows outside mills, one of those must be shot")]
    ShotInMill(Point),
}

/// What a legal move did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Played {
    /// Mills formed (bit set over [`MILLS`]).
    pub formed: u32,
    /// The mover's mills the move broke.
    pub broken: u32,
}

/// How a game stands after a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    Ongoing,
    /// `loser` has only two cows left.
    TwoCowsLeft {
        loser: usize,
    },
    /// `loser`, to move, has no legal move.
    NoLegalMove {
        loser: usize,
    },
    /// A player has three cows and ten turns formed no mill.
    ThreeCowsNoMill,
    /// Two hundred turns formed no mill.
    NoMillIn200Turns,
}

/// The state of a game: the board, the cows still to place, whose turn it
/// is, and what the draw rules and the re-forming rule need to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    cells: [Option<u8>; N_POINTS],
    in_hand: [u8; 2],
    to_move: usize,
    /// Turns played.
    turn: u32,
    turns_since_mill: u32,
    /// Per player: mills it may not form in its next turn (bit sets).
    forbidden: [u32; 2],
}

impl Default for Position {
    fn default() -> Self {
        Position::new()
    }
}

impl Position {
    /// The start: an empty board, 12 cows in each hand, player 1 to move.
    pub fn new() -> Position {
        Position {
            cells: [None; N_POINTS],
            in_hand: [COWS; 2],
            to_move: 0,
            turn: 0,
            turns_since_mill: 0,
            forbidden: [0; 2],
        }
    }

    /// A position from its parts (for tests and tools): cows on the board
    /// as `(point, player)` with player 0 or 1, cows still to place, whose
    /// turn and how many turns were played. No turns without a mill so far,
    /// nothing forbidden.
    pub fn from_parts(
        cows: &[(Point, usize)],
        in_hand: [u8; 2],
        to_move: usize,
        turn: u32,
    ) -> Position {
        let mut cells = [None; N_POINTS];
        for &(q, player) in cows {
            assert!(player < 2, "player 0 or 1");
            cells[q.index()] = Some(player as u8);
        }
        Position {
            cells,
            in_hand,
            to_move,
            turn,
            turns_since_mill: 0,
            forbidden: [0; 2],
        }
    }

    /// Whose turn it is (0 = player 1).
    pub fn to_move(&self) -> usize {
        self.to_move
    }

    /// Turns played so far.
    pub fn turns(&self) -> u32 {
        self.turn
    }

    /// Consecutive turns, up to now, that formed no mill.
    pub fn turns_since_mill(&self) -> u32 {
        self.turns_since_mill
    }

    /// Whose cow is on `q`.
    pub fn at(&self, q: Point) -> Option<usize> {
        self.cells[q.index()].map(usize::from)
    }

    /// Cows of `player` on the board.
    pub fn on_board(&self, player: usize) -> u8 {
        self.cells
            .iter()
            .filter(|c| **c == Some(player as u8))
            .count() as u8
    }

    /// Cows `player` has left: on the board and still to place.
    pub fn cows(&self, player: usize) -> u8 {
        self.on_board(player) + self.in_hand[player]
    }

    /// Whether the current turn places a cow.
    pub fn placing(&self) -> bool {
        self.turn < PLACING_TURNS
    }

    /// Whether `player` may fly (after the placing phase, with three cows).
    pub fn flying(&self, player: usize) -> bool {
        !self.placing() && self.cows(player) == FLYING_COWS
    }

    /// Whether the cow on `q` is in a mill of its owner.
    pub fn in_mill(&self, q: Point) -> bool {
        self.at(q)
            .is_some_and(|owner| self.mills_of(owner, q, &self.cells) != 0)
    }

    /// The complete mills of `player` through `q` on `cells`.
    fn mills_of(&self, player: usize, q: Point, cells: &[Option<u8>; N_POINTS]) -> u32 {
        let mine = Some(player as u8);
        MILLS
            .iter()
            .enumerate()
            .filter(|(_, line)| line.contains(&q) && line.iter().all(|r| cells[r.index()] == mine))
            .fold(0, |set, (i, _)| set | 1 << i)
    }

    /// Checks the cow's way (from, to) for the player to move and returns
    /// the board after it with the mills formed and broken; the shot is not
    /// looked at.
    fn check_way(&self, mv: &Move) -> Result<([Option<u8>; N_POINTS], Played), MoveError> {
        let me = self.to_move;
        let from = match (self.placing(), mv.from) {
            (true, Some(_)) => return Err(MoveError::FromWhilePlacing),
            (true, None) => None,
            (false, None) => return Err(MoveError::NoFrom),
            (false, Some(q)) if self.at(q) == Some(me) => Some(q),
            (false, Some(q)) => return Err(MoveError::NotYourCow(q)),
        };
        let to = mv.to.ok_or(MoveError::NoTo)?;
        if self.at(to).is_some() {
            return Err(MoveError::Occupied(to));
        }
        if let Some(from) = from {
            if !self.flying(me) && !from.neighbours().any(|q| q == to) {
                return Err(MoveError::NotAdjacent { from, to });
            }
        }
        let broken = from.map_or(0, |q| self.mills_of(me, q, &self.cells));
        let mut after = self.cells;
        if let Some(q) = from {
            after[q.index()] = None;
        }
        after[to.index()] = Some(me as u8);
        let formed = self.mills_of(me, to, &after);
        let again = formed & self.forbidden[me];
        if again != 0 {
            return Err(MoveError::ForbiddenMill {
                mill: mill_text(again.trailing_zeros() as usize),
            });
        }
        Ok((after, Played { formed, broken }))
    }

    /// The opponent's cows that a mill may shoot now.
    fn targets(&self) -> Vec<Point> {
        let them = 1 - self.to_move;
        let cows: Vec<Point> = Point::all().filter(|&q| self.at(q) == Some(them)).collect();
        let free: Vec<Point> = cows.iter().copied().filter(|&q| !self.in_mill(q)).collect();
        if free.is_empty() {
            cows
        } else {
            free
        }
    }

    /// Judges `mv` for the player to move and, if legal, plays it. An
    /// illegal move leaves the position unchanged.
    pub fn play(&mut self, mv: &Move) -> Result<Played, MoveError> {
        let me = self.to_move;
        let (mut after, played) = self.check_way(mv)?;
        let them = 1 - me;
        match (played.formed != 0, mv.shot) {
            (false, None) => {}
            (false, Some(_)) => return Err(MoveError::ShotWithoutMill),
            (true, shot) => {
                let targets = self.targets();
                match shot {
                    None if targets.is_empty() => {}
                    None => return Err(MoveError::MissingShot),
                    Some(_) if targets.is_empty() => return Err(MoveError::NothingToShoot),
                    Some(q) if self.at(q) != Some(them) => {
                        return Err(MoveError::NotOpponentsCow(q))
                    }
                    Some(q) if !targets.contains(&q) => return Err(MoveError::ShotInMill(q)),
                    Some(q) => after[q.index()] = None,
                }
            }
        }
        self.cells = after;
        if mv.from.is_none() {
            self.in_hand[me] -= 1;
        }
        self.turn += 1;
        self.turns_since_mill = if played.formed != 0 {
            0
        } else {
            self.turns_since_mill + 1
        };
        self.forbidden[me] = if played.formed != 0 && played.broken != 0 {
            played.broken
        } else {
            0
        };
        self.to_move = them;
        Ok(played)
    }

    /// Every legal move of the player to move (each possible shot a move
    /// of its own), in a fixed order.
    pub fn legal_moves(&self) -> Vec<Move> {
        let me = self.to_move;
        let froms: Vec<Option<Point>> = if self.placing() {
            vec![None]
        } else {
            Point::all()
                .filter(|&q| self.at(q) == Some(me))
                .map(Some)
                .collect()
        };
        let mut moves = Vec::new();
        for from in froms {
            for to in Point::all() {
                let way = Move {
                    from,
                    to: Some(to),
                    shot: None,
                };
                let Ok((_, played)) = self.check_way(&way) else {
                    continue;
                };
                let targets = if played.formed != 0 {
                    self.targets()
                } else {
                    Vec::new()
                };
                if targets.is_empty() {
                    moves.push(way);
                }
                for shot in targets {
                    moves.push(Move {
                        shot: Some(shot),
                        ..way
                    });
                }
            }
        }
        moves
    }

    /// Whether the player to move has a legal move.
    pub fn has_legal_move(&self) -> bool {
        let me = self.to_move;
        if self.placing() {
            return self.cells.iter().any(Option::is_none);
        }
        Point::all()
            .filter(|&q| self.at(q) == Some(me))
            .any(|from| {
                Point::all().any(|to| {
                    self.check_way(&Move {
                        from: Some(from),
                        to: Some(to),
                        shot: None,
                    })
                    .is_ok()
                })
            })
    }

    /// How the game stands (after the last move; see the module's order of
    /// the end rules).
    pub fn status(&self) -> Status {
        for player in 0..2 {
            if self.cows(player) <= LOSING_COWS {
                return Status::TwoCowsLeft { loser: player };
            }
        }
        let three = (0..2).any(|player| self.cows(player) == FLYING_COWS);
        if three && self.turns_since_mill >= THREE_COWS_DRAW_TURNS {
            return Status::ThreeCowsNoMill;
        }
        if self.turns_since_mill >= NO_MILL_DRAW_TURNS {
            return Status::NoMillIn200Turns;
        }
        if !self.has_legal_move() {
            return Status::NoLegalMove {
                loser: self.to_move,
            };
        }
        Status::Ongoing
    }
}

/// Whether `name` is a valid bot name: 3–9 letters `a-z`, `A-Z` or digits.
pub fn valid_name(name: &str) -> bool {
    (3..=9).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum MorabarabaEnd {
    TwoCowsLeft {
        loser: usize,
    },
    NoLegalMove {
        loser: usize,
    },
    /// An illegal move or an invalid name.
    IllegalMove {
        loser: usize,
        rule: String,
    },
    /// The referee ended the game (crash, limits, …).
    Forfeit {
        loser: usize,
        reason: String,
    },
    /// Draw: a player had three cows and ten turns formed no mill.
    ThreeCowsNoMill,
    /// Draw: two hundred turns formed no mill.
    NoMillIn200Turns,
}

impl fmt::Display for MorabarabaEnd {
    /// A sentence for people: "player 2 has two cows left".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::words::player;
        match self {
            MorabarabaEnd::TwoCowsLeft { loser } => {
                write!(f, "{} has two cows left", player(*loser))
            }
            MorabarabaEnd::NoLegalMove { loser } => {
                write!(f, "{} has no legal move", player(*loser))
            }
            MorabarabaEnd::IllegalMove { loser, rule } => {
                write!(f, "{} broke a rule: {rule}", player(*loser))
            }
            MorabarabaEnd::Forfeit { loser, reason } => {
                write!(f, "{} forfeited: {reason}", player(*loser))
            }
            MorabarabaEnd::ThreeCowsNoMill => {
                write!(f, "a player had three cows and ten turns formed no mill")
            }
            MorabarabaEnd::NoMillIn200Turns => {
                write!(f, "no mill in {NO_MILL_DRAW_TURNS} turns")
            }
        }
    }
}

/// The outcome of one game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MorabarabaOutcome {
    /// The seat that won (0 = player 1); `None` for a draw.
    pub winner: Option<usize>,
    pub end: MorabarabaEnd,
    /// Legal moves played.
    pub turns: u32,
    /// Cows each had left.
    pub cows: [u8; 2],
    /// The names the bots gave.
    pub names: [Option<String>; 2],
}

/// One game between two bots, as a [`LineGame`] with two seats: seat 0 is
/// player 1 (it begins), seat 1 player 2.
#[derive(Debug, Clone)]
pub struct MorabarabaGame {
    position: Position,
    names: [Option<String>; 2],
    outbox: VecDeque<Step>,
    moves: Vec<Move>,
    outcome: Option<MorabarabaOutcome>,
}

impl Default for MorabarabaGame {
    fn default() -> Self {
        MorabarabaGame::new()
    }
}

impl MorabarabaGame {
    pub fn new() -> MorabarabaGame {
        let outbox = (0..2)
            .map(|seat| Step::Send {
                seat,
                lines: vec![(seat + 1).to_string()],
            })
            .collect();
        MorabarabaGame {
            position: Position::new(),
            names: [None, None],
            outbox,
            moves: Vec::new(),
            outcome: None,
        }
    }

    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The legal moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Ends the game because of something outside the rules (a crash, a
    /// limit): `seat` loses.
    pub fn forfeit(&mut self, seat: usize, reason: &str) {
        if self.outcome.is_none() {
            self.outbox.clear();
            self.finish(MorabarabaEnd::Forfeit {
                loser: seat,
                reason: reason.to_string(),
            });
        }
    }

    fn finish(&mut self, end: MorabarabaEnd) {
        let winner = match &end {
            MorabarabaEnd::TwoCowsLeft { loser }
            | MorabarabaEnd::NoLegalMove { loser }
            | MorabarabaEnd::IllegalMove { loser, .. }
            | MorabarabaEnd::Forfeit { loser, .. } => Some(1 - loser),
            MorabarabaEnd::ThreeCowsNoMill | MorabarabaEnd::NoMillIn200Turns => None,
        };
        self.outcome = Some(MorabarabaOutcome {
            winner,
            end,
            turns: self.position.turn,
            cows: [self.position.cows(0), self.position.cows(1)],
            names: self.names.clone(),
        });
    }

    /// The seat whose line is awaited.
    fn expected_seat(&self) -> usize {
        self.names
            .iter()
            .position(Option::is_none)
            .unwrap_or(self.position.to_move)
    }
}

impl LineGame for MorabarabaGame {
    type Outcome = MorabarabaOutcome;

    fn n_seats(&self) -> usize {
        2
    }

    fn next(&mut self) -> Step {
        if let Some(step) = self.outbox.pop_front() {
            return step;
        }
        if self.outcome.is_some() {
            return Step::Over {
                farewell: (0..2)
                    .map(|seat| (seat, vec![GAME_OVER_LINE.to_string()]))
                    .collect(),
            };
        }
        Step::Expect {
            seat: self.expected_seat(),
        }
    }

    fn reply(&mut self, seat: usize, line: &str) -> Result<(), Violation> {
        let violation = |game: &mut MorabarabaGame, rule: String| {
            if game.outcome.is_none() {
                game.outbox.clear();
                game.finish(MorabarabaEnd::IllegalMove {
                    loser: seat,
                    rule: rule.clone(),
                });
            }
            Err(Violation {
                seat,
                rule,
                line: line.to_string(),
            })
        };
        if seat > 1 {
            return Err(Violation {
                seat,
                rule: "a game of Morabaraba has players 1 and 2 only".into(),
                line: line.to_string(),
            });
        }
        if self.outcome.is_some() || seat != self.expected_seat() {
            return violation(self, "it was not this player's turn to write".into());
        }
        if self.names[seat].is_none() {
            let name = line.trim();
            if !valid_name(name) {
                return violation(
                    self,
                    format!(
                        "after its player number ({}) a bot answers with its name: 3 to 9 \
                         letters a-z, A-Z or digits 0-9",
                        seat + 1
                    ),
                );
            }
            self.names[seat] = Some(name.to_string());
            return Ok(());
        }
        let turn = self.position.turn + 1;
        let played = Move::parse(line).and_then(|mv| self.position.play(&mv).map(|_| mv));
        let mv = match played {
            Ok(mv) => mv,
            Err(e) => return violation(self, format!("turn {turn}: illegal move: {e}")),
        };
        self.moves.push(mv);
        match self.position.status() {
            Status::Ongoing => self.outbox.push_back(Step::Send {
                seat: 1 - seat,
                lines: vec![mv.to_line()],
            }),
            Status::TwoCowsLeft { loser } => self.finish(MorabarabaEnd::TwoCowsLeft { loser }),
            Status::NoLegalMove { loser } => self.finish(MorabarabaEnd::NoLegalMove { loser }),
            Status::ThreeCowsNoMill => self.finish(MorabarabaEnd::ThreeCowsNoMill),
            Status::NoMillIn200Turns => self.finish(MorabarabaEnd::NoMillIn200Turns),
        }
        Ok(())
    }

    fn outcome(&self) -> Option<MorabarabaOutcome> {
        self.outcome.clone()
    }

    fn forfeit(&mut self, seat: usize, reason: &str) {
        MorabarabaGame::forfeit(self, seat, reason);
    }

    fn turn(&self) -> u64 {
        u64::from(self.position.turn) + u64::from(self.outcome.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::lines::play_scripted;
    use std::collections::BTreeSet;

    fn pt(x: u8, y: u8, s: u8) -> Point {
        Point::new(x, y, s).unwrap()
    }

    fn mv(line: &str) -> Move {
        Move::parse(line).unwrap()
    }

    /// A moving-phase position with player 0 to move.
    fn moving(p0: &[Point], p1: &[Point]) -> Position {
        let cows: Vec<(Point, usize)> = p0
            .iter()
            .map(|&q| (q, 0))
            .chain(p1.iter().map(|&q| (q, 1)))
            .collect();
        Position::from_parts(&cows, [0, 0], 0, PLACING_TURNS)
    }

    #[test]
    fn the_points_are_addressed_as_in_the_seed() {
        assert_eq!(Point::all().count(), 24);
        let all: BTreeSet<(u8, u8, u8)> =
            Point::all().map(|q| (q.x(), q.y(), q.square())).collect();
        assert_eq!(all.len(), 24);
        for s in 1..=3 {
            assert_eq!(Point::new(2, 2, s), None);
        }
        assert_eq!(Point::new(0, 1, 1), None);
        assert_eq!(Point::new(1, 4, 1), None);
        assert_eq!(Point::new(1, 1, 4), None);
        for q in Point::all() {
            assert_eq!(Point::new(q.x(), q.y(), q.square()), Some(q));
        }
        assert_eq!(pt(2, 3, 1).to_string(), "2 3 1");
    }

    /// "Jos ohjelma asettaa lehmän uloimman neliön yläreunan keskelle, rivi
    /// näyttää tältä: 0 0 0 2 3 1 0 0 0"
    #[test]
    fn the_seeds_placing_example() {
        let m = mv("0 0 0 2 3 1 0 0 0");
        assert_eq!(
            m,
            Move {
                from: None,
                to: Some(pt(2, 3, 1)),
                shot: None
            }
        );
        assert_eq!(m.to_line(), "0 0 0 2 3 1 0 0 0");
        let mut pos = Position::new();
        pos.play(&m).unwrap();
        assert_eq!(pos.at(pt(2, 3, 1)), Some(0));
        assert_eq!(pos.cows(0), 12);
        assert_eq!(pos.on_board(0), 1);
        assert_eq!(pos.to_move(), 1);
    }

    /// "Jos ohjelma siirtää lehmän laudan vasemmasta yläkulmasta alareunaan
    /// keskelle ja ampuu lehmän sisimmän neliön oikean reunan keskeltä, rivi
    /// näyttää tältä: 1 3 1 2 1 1 3 2 3" — a flying move with a shot.
    #[test]
    fn the_seeds_moving_example() {
        let m = mv("1 3 1 2 1 1 3 2 3");
        assert_eq!(
            m,
            Move {
                from: Some(pt(1, 3, 1)),
                to: Some(pt(2, 1, 1)),
                shot: Some(pt(3, 2, 3))
            }
        );
        assert_eq!(m.to_line(), "1 3 1 2 1 1 3 2 3");
        let mut pos = moving(
            &[pt(1, 3, 1), pt(1, 1, 1), pt(3, 1, 1)],
            &[pt(3, 2, 3), pt(2, 3, 2), pt(1, 2, 2), pt(3, 1, 2)],
        );
        assert!(pos.flying(0));
        let played = pos.play(&m).unwrap();
        assert_eq!(played.formed.count_ones(), 1);
        assert_eq!(pos.at(pt(2, 1, 1)), Some(0));
        assert_eq!(pos.at(pt(1, 3, 1)), None);
        assert_eq!(pos.at(pt(3, 2, 3)), None);
        assert_eq!(pos.cows(1), 3);
    }

    #[test]
    fn twenty_lines_and_their_neighbours() {
        assert_eq!(MILLS.len(), 20);
        let distinct: BTreeSet<[Point; 3]> = MILLS.iter().copied().collect();
        assert_eq!(distinct.len(), 20);
        for q in Point::all() {
            let n_lines = MILLS.iter().filter(|l| l.contains(&q)).count();
            let corner = q.x() != 2 && q.y() != 2;
            assert_eq!(n_lines, if corner { 3 } else { 2 }, "{q:?}");
        }
        // Every line is straight: constant in two of (x, y, s), or the
        // corner diagonal (same corner, all three squares).
        for line in MILLS {
            let same = |f: fn(Point) -> u8| line.iter().all(|&q| f(q) == f(line[0]));
            let sorted =
                |f: fn(Point) -> u8| line.iter().map(|&q| f(q)).collect::<Vec<_>>() == [1, 2, 3];
            let side = line.iter().all(|&q| q.square() == line[0].square())
                && ((same(Point::x) && sorted(Point::y)) || (same(Point::y) && sorted(Point::x)));
            let across = same(Point::x) && same(Point::y) && sorted(Point::square);
            assert!(side || across, "{line:?}");
        }
        let nb = |q: Point| q.neighbours().collect::<BTreeSet<_>>();
        assert_eq!(
            nb(pt(1, 1, 1)),
            [pt(2, 1, 1), pt(1, 2, 1), pt(1, 1, 2)].into()
        );
        assert_eq!(
            nb(pt(1, 1, 2)),
            [pt(2, 1, 2), pt(1, 2, 2), pt(1, 1, 1), pt(1, 1, 3)].into()
        );
        assert_eq!(
            nb(pt(2, 1, 2)),
            [pt(1, 1, 2), pt(3, 1, 2), pt(2, 1, 1), pt(2, 1, 3)].into()
        );
        assert_eq!(
            nb(pt(2, 1, 3)),
            [pt(1, 1, 3), pt(3, 1, 3), pt(2, 1, 2)].into()
        );
        assert_eq!(
            nb(pt(3, 2, 1)),
            [pt(3, 1, 1), pt(3, 3, 1), pt(3, 2, 2)].into()
        );
        let mut edges = 0;
        for q in Point::all() {
            for r in q.neighbours() {
                assert!(r.neighbours().any(|s| s == q), "symmetric");
                edges += 1;
            }
        }
        assert_eq!(edges, 2 * 40);
    }

    /// Each of the 20 lines is a mill when placed, and no other three points
    /// are.
    #[test]
    fn every_line_is_a_mill_and_nothing_else() {
        for line in MILLS {
            let mut pos = Position::new();
            let others: Vec<Point> = Point::all().filter(|q| !line.contains(q)).collect();
            for i in 0..2 {
                pos.play(&Move {
                    from: None,
                    to: Some(line[i]),
                    shot: None,
                })
                .unwrap();
                pos.play(&Move {
                    from: None,
                    to: Some(others[i]),
                    shot: None,
                })
                .unwrap();
            }
            let third = Move {
                from: None,
                to: Some(line[2]),
                shot: None,
            };
            assert_eq!(
                pos.clone().play(&third),
                Err(MoveError::MissingShot),
                "{line:?}"
            );
            let played = pos
                .play(&Move {
                    shot: Some(others[0]),
                    ..third
                })
                .unwrap();
            assert_eq!(played.formed.count_ones(), 1);
            assert_eq!(pos.cows(1), 11);
            assert_eq!(pos.turns_since_mill(), 0);
        }
        // Any three points of one player that are not a line form no mill.
        let lines: BTreeSet<BTreeSet<Point>> =
            MILLS.iter().map(|l| l.iter().copied().collect()).collect();
        let points: Vec<Point> = Point::all().collect();
        let mut n_mills = 0;
        for a in 0..24 {
            for b in a + 1..24 {
                for c in b + 1..24 {
                    let trio = [points[a], points[b], points[c]];
                    let pos = Position::from_parts(&trio.map(|q| (q, 0)), [9, 12], 1, 3);
                    let is_mill = pos.in_mill(trio[0]);
                    assert_eq!(
                        is_mill,
                        lines.contains(&trio.into_iter().collect()),
                        "{trio:?}"
                    );
                    n_mills += usize::from(is_mill);
                }
            }
        }
        assert_eq!(n_mills, 20);
    }

    #[test]
    fn a_mill_shoots_a_cow_outside_mills_first() {
        // Player 1 (0) completes the top of the outer square; player 2 (1)
        // has a mill on the inner square's bottom and a lone cow.
        let mut pos = moving(
            &[pt(1, 3, 1), pt(3, 3, 1), pt(2, 3, 2), pt(1, 2, 2)],
            &[pt(1, 1, 3), pt(2, 1, 3), pt(3, 1, 3), pt(3, 2, 1)],
        );
        let base = "2 3 2 2 3 1";
        assert_eq!(
            pos.clone().play(&mv(&format!("{base} 2 1 3"))),
            Err(MoveError::ShotInMill(pt(2, 1, 3)))
        );
        assert_eq!(
            pos.clone().play(&mv(&format!("{base} 1 3 1"))),
            Err(MoveError::NotOpponentsCow(pt(1, 3, 1)))
        );
        assert_eq!(
            pos.clone().play(&mv(&format!("{base} 1 1 1"))),
            Err(MoveError::NotOpponentsCow(pt(1, 1, 1)))
        );
        let mut ok = pos.clone();
        ok.play(&mv(&format!("{base} 3 2 1"))).unwrap();
        assert_eq!(ok.cows(1), 3);
        // The legal moves offer exactly the lone cow as the shot.
        let shots: BTreeSet<Option<Point>> = pos
            .legal_moves()
            .into_iter()
            .filter(|m| m.from == Some(pt(2, 3, 2)) && m.to == Some(pt(2, 3, 1)))
            .map(|m| m.shot)
            .collect();
        assert_eq!(shots, [Some(pt(3, 2, 1))].into());
        // When every cow of the opponent is in a mill, any may be shot.
        pos.cells[pt(3, 2, 1).index()] = None;
        pos.cells[pt(3, 3, 3).index()] = Some(1);
        pos.cells[pt(3, 2, 3).index()] = Some(1);
        let mut any = pos.clone();
        any.play(&mv(&format!("{base} 2 1 3"))).unwrap();
        assert_eq!(any.at(pt(2, 1, 3)), None);
    }

    #[test]
    fn two_mills_at_once_still_shoot_one_cow() {
        let mut pos = Position::from_parts(
            &[
                (pt(2, 1, 1), 0),
                (pt(3, 1, 1), 0),
                (pt(1, 2, 1), 0),
                (pt(1, 3, 1), 0),
                (pt(1, 1, 3), 1),
                (pt(3, 3, 3), 1),
                (pt(2, 3, 2), 1),
                (pt(3, 2, 2), 1),
            ],
            [8, 8],
            0,
            8,
        );
        let played = pos.play(&mv("0 0 0 1 1 1 2 3 2")).unwrap();
        assert_eq!(played.formed.count_ones(), 2);
        assert_eq!(pos.cows(1), 11);
        assert_eq!(pos.on_board(1), 3);
    }

    /// The running mill: a cow that shuttles between two mills may not go
    /// straight back.
    #[test]
    fn a_mill_broken_while_forming_another_may_not_be_formed_on_the_next_turn() {
        // Player 1: the outer bottom mill, and two cows on the middle
        // square's bottom corners. Player 2: five lone cows.
        let mut pos = moving(
            &[
                pt(1, 1, 1),
                pt(2, 1, 1),
                pt(3, 1, 1),
                pt(1, 1, 2),
                pt(3, 1, 2),
            ],
            &[
                pt(1, 3, 1),
                pt(3, 3, 1),
                pt(1, 3, 3),
                pt(3, 3, 3),
                pt(2, 3, 2),
            ],
        );
        // (2,1,1) → (2,1,2): breaks the outer bottom mill, forms the middle one.
        let played = pos.play(&mv("2 1 1 2 1 2 2 3 2")).unwrap();
        assert_eq!(
            (played.broken.count_ones(), played.formed.count_ones()),
            (1, 1)
        );
        pos.play(&mv("1 3 1 1 2 1 0 0 0")).unwrap();
        // Straight back re-forms the outer bottom mill: not on this turn.
        let back = mv("2 1 2 2 1 1 1 2 1");
        let err = pos.clone().play(&back).unwrap_err();
        assert_eq!(
            err,
            MoveError::ForbiddenMill {
                mill: "1 1 1, 2 1 1, 3 1 1".into()
            }
        );
        assert!(err.to_string().contains("1 1 1, 2 1 1, 3 1 1"));
        assert!(!pos
            .legal_moves()
            .iter()
            .any(|m| m.from == Some(pt(2, 1, 2)) && m.to == Some(pt(2, 1, 1))));
        // Another cow may go there, as long as the mill is not formed.
        pos.clone().play(&mv("1 1 1 2 1 1 0 0 0")).unwrap();
        // Another move is fine; (1,1,2) → (1,2,2) breaks the middle mill
        // without forming one.
        pos.play(&mv("1 1 2 1 2 2 0 0 0")).unwrap();
        pos.play(&mv("1 2 1 1 3 1 0 0 0")).unwrap();
        // A turn later, re-forming the outer mill is allowed again.
        let mut later = pos.clone();
        later.play(&mv("2 1 2 2 1 1 1 3 1")).unwrap();
        // Breaking a mill without forming one restricts nothing: it may be
        // formed again on the next turn (and shoots again).
        let mut pos = moving(
            &[pt(1, 1, 1), pt(2, 1, 1), pt(3, 1, 1), pt(1, 3, 2)],
            &[
                pt(1, 3, 1),
                pt(3, 3, 1),
                pt(1, 3, 3),
                pt(3, 3, 3),
                pt(2, 3, 2),
            ],
        );
        pos.play(&mv("2 1 1 2 1 2 0 0 0")).unwrap();
        assert_eq!(pos.forbidden[0], 0);
        pos.play(&mv("1 3 1 1 2 1 0 0 0")).unwrap();
        pos.play(&mv("2 1 2 2 1 1 1 2 1")).unwrap();
    }

    #[test]
    fn three_cows_fly_four_walk() {
        let p1 = [pt(1, 1, 1), pt(3, 3, 1), pt(1, 3, 3)];
        let p2 = [pt(3, 1, 2), pt(1, 3, 2), pt(2, 1, 3), pt(3, 3, 3)];
        let mut pos = moving(&p1, &p2);
        assert!(pos.flying(0) && !pos.flying(1));
        pos.play(&mv("1 1 1 2 3 3 0 0 0")).unwrap();
        assert_eq!(
            Move::parse("3 1 2 2 2 3 0 0 0"),
            Err(MoveError::NoSuchPoint {
                slot: Slot::To,
                numbers: [2, 2, 3]
            })
        );
        assert_eq!(
            pos.clone().play(&mv("3 1 2 1 1 1 0 0 0")),
            Err(MoveError::NotAdjacent {
                from: pt(3, 1, 2),
                to: pt(1, 1, 1)
            })
        );
        pos.play(&mv("3 1 2 3 2 2 0 0 0")).unwrap();
        // No flying while placing, whatever the count.
        let placing = Position::from_parts(&[(pt(1, 1, 1), 0)], [2, 3], 0, 20);
        assert!(!placing.flying(0));
    }

    /// Plays the first legal move that forms no mill, `n` times.
    fn quiet_moves(pos: &mut Position, n: u32) {
        for _ in 0..n {
            assert_eq!(pos.status(), Status::Ongoing);
            let m = pos
                .legal_moves()
                .into_iter()
                .find(|m| m.shot.is_none())
                .expect("a quiet move");
            assert_eq!(pos.play(&m).unwrap().formed, 0);
        }
    }

    #[test]
    fn three_cows_and_ten_turns_without_a_mill_are_a_draw() {
        let mut pos = moving(
            &[pt(1, 1, 1), pt(3, 3, 1), pt(1, 3, 3)],
            &[pt(3, 1, 2), pt(1, 3, 2), pt(2, 1, 3), pt(3, 3, 3)],
        );
        quiet_moves(&mut pos, 9);
        assert_eq!(pos.status(), Status::Ongoing);
        quiet_moves(&mut pos, 1);
        assert_eq!(pos.status(), Status::ThreeCowsNoMill);
        // Without a three-cow player, ten quiet turns are nothing.
        let mut pos = moving(
            &[pt(1, 1, 1), pt(3, 3, 1), pt(1, 3, 3), pt(2, 3, 2)],
            &[pt(3, 1, 2), pt(1, 3, 2), pt(2, 1, 3), pt(3, 3, 3)],
        );
        quiet_moves(&mut pos, 10);
        assert_eq!(pos.status(), Status::Ongoing);
    }

    #[test]
    fn two_hundred_turns_without_a_mill_are_a_draw() {
        let start = moving(
            &[pt(1, 1, 1), pt(3, 3, 1), pt(1, 3, 3), pt(2, 3, 2)],
            &[pt(3, 1, 2), pt(1, 3, 2), pt(2, 1, 3), pt(3, 3, 3)],
        );
        let mut pos = start.clone();
        quiet_moves(&mut pos, 199);
        assert_eq!(pos.status(), Status::Ongoing);
        quiet_moves(&mut pos, 1);
        assert_eq!(pos.status(), Status::NoMillIn200Turns);
        // The same through the protocol: two bots that never form a mill.
        let mut game = MorabarabaGame::new();
        game.position = start.clone();
        let mut mirror = start;
        let mut named = [false; 2];
        let outcome = play_scripted(
            &mut game,
            |seat, _| {
                if !named[seat] {
                    named[seat] = true;
                    return "Quiet".into();
                }
                let m = mirror
                    .legal_moves()
                    .into_iter()
                    .find(|m| m.shot.is_none())
                    .expect("a quiet move");
                mirror.play(&m).unwrap();
                m.to_line()
            },
            10_000,
        )
        .unwrap();
        assert_eq!(outcome.end, MorabarabaEnd::NoMillIn200Turns);
        assert_eq!(outcome.winner, None);
        assert_eq!(outcome.turns, PLACING_TURNS + 200);
        assert_eq!(outcome.cows, [4, 4]);
    }

    /// 24 points, 24 cows: a placing phase without a mill fills the board,
    /// and player 1 cannot move.
    #[test]
    fn a_placing_phase_without_mills_blocks_player_one() {
        let mut pos = Position::new();
        quiet_moves(&mut pos, PLACING_TURNS);
        assert_eq!(pos.status(), Status::NoLegalMove { loser: 0 });
    }

    #[test]
    fn two_cows_left_lose() {
        let mut pos = moving(
            &[pt(1, 3, 1), pt(3, 3, 1), pt(2, 3, 2), pt(1, 2, 2)],
            &[pt(1, 1, 3), pt(3, 2, 1), pt(3, 1, 3)],
        );
        pos.play(&mv("2 3 2 2 3 1 3 2 1")).unwrap();
        assert_eq!(pos.status(), Status::TwoCowsLeft { loser: 1 });
    }

    #[test]
    fn a_blocked_player_loses() {
        // Player 2's four cows on the outer corners; player 1 fills all
        // their neighbours, the last with its move.
        let corners = [pt(1, 1, 1), pt(1, 3, 1), pt(3, 1, 1), pt(3, 3, 1)];
        let mut pos = moving(
            &[
                pt(2, 1, 1),
                pt(1, 2, 1),
                pt(2, 3, 1),
                pt(3, 2, 1),
                pt(1, 3, 2),
                pt(3, 1, 2),
                pt(3, 3, 2),
                pt(1, 1, 3),
            ],
            &corners,
        );
        assert_eq!(pos.status(), Status::Ongoing);
        let played = pos.play(&mv("1 1 3 1 1 2 0 0 0")).unwrap();
        assert_eq!(played.formed, 0);
        assert!(!pos.has_legal_move());
        assert!(pos.legal_moves().is_empty());
        assert_eq!(pos.status(), Status::NoLegalMove { loser: 1 });
    }

    #[test]
    fn illegal_moves_of_every_kind() {
        use MoveError::*;
        for bad in [
            "",
            "0 0 0 2 3 1 0 0",
            "0 0 0 2 3 1 0 0 0 0",
            "0 0 0 2 3 1 0 0 4",
            "0 0 0 2 3 1 0 0 -1",
            "0 0 0 2 3 1 0 0 01",
            "0,0,0,2,3,1,0,0,0",
            "a b c d e f g h i",
        ] {
            assert_eq!(Move::parse(bad), Err(Syntax), "{bad:?}");
        }
        assert_eq!(
            Move::parse(" 0 0 0\t2 3 1 0 0 0\r"),
            Ok(mv("0 0 0 2 3 1 0 0 0"))
        );
        assert_eq!(
            Move::parse("0 0 0 2 2 1 0 0 0"),
            Err(NoSuchPoint {
                slot: Slot::To,
                numbers: [2, 2, 1]
            })
        );
        assert_eq!(
            Move::parse("0 1 0 2 3 1 0 0 0"),
            Err(NoSuchPoint {
                slot: Slot::From,
                numbers: [0, 1, 0]
            })
        );
        let placing = Position::from_parts(&[(pt(1, 1, 1), 0), (pt(3, 3, 3), 1)], [11, 11], 0, 2);
        let judge = |pos: &Position, line: &str| pos.clone().play(&mv(line));
        assert_eq!(judge(&placing, "1 1 1 2 1 1 0 0 0"), Err(FromWhilePlacing));
        assert_eq!(
            judge(&placing, "0 0 0 3 3 3 0 0 0"),
            Err(Occupied(pt(3, 3, 3)))
        );
        assert_eq!(judge(&placing, "0 0 0 0 0 0 0 0 0"), Err(NoTo));
        assert_eq!(judge(&placing, "0 0 0 2 1 1 3 3 3"), Err(ShotWithoutMill));
        let walking = moving(
            &[pt(1, 1, 1), pt(2, 1, 1), pt(3, 2, 1), pt(1, 1, 2)],
            &[pt(3, 3, 1), pt(3, 3, 3), pt(1, 2, 3), pt(2, 3, 2)],
        );
        assert_eq!(judge(&walking, "0 0 0 2 3 1 0 0 0"), Err(NoFrom));
        assert_eq!(
            judge(&walking, "3 3 1 2 3 1 0 0 0"),
            Err(NotYourCow(pt(3, 3, 1)))
        );
        assert_eq!(
            judge(&walking, "1 3 1 2 3 1 0 0 0"),
            Err(NotYourCow(pt(1, 3, 1)))
        );
        assert_eq!(judge(&walking, "1 1 1 0 0 0 0 0 0"), Err(NoTo));
        assert_eq!(
            judge(&walking, "1 1 1 2 1 1 0 0 0"),
            Err(Occupied(pt(2, 1, 1)))
        );
        assert_eq!(
            judge(&walking, "1 1 1 1 3 1 0 0 0"),
            Err(NotAdjacent {
                from: pt(1, 1, 1),
                to: pt(1, 3, 1)
            })
        );
        // (3,2,1) → (3,1,1) completes the outer bottom line.
        assert_eq!(judge(&walking, "3 2 1 3 1 1 0 0 0"), Err(MissingShot));
        assert_eq!(
            judge(&walking, "3 2 1 3 1 1 1 1 1"),
            Err(NotOpponentsCow(pt(1, 1, 1)))
        );
        assert_eq!(
            judge(&walking, "3 2 1 3 1 1 2 3 1"),
            Err(NotOpponentsCow(pt(2, 3, 1)))
        );
        assert!(judge(&walking, "3 2 1 3 1 1 3 3 1").is_ok());
        assert_eq!(judge(&walking, "1 1 1 1 2 1 3 3 1"), Err(ShotWithoutMill));
        // An illegal move changes nothing.
        let mut same = walking.clone();
        assert!(same.play(&mv("3 2 1 3 1 1 0 0 0")).is_err());
        assert_eq!(same, walking);
        // Every message names the rule.
        for e in [
            Syntax,
            FromWhilePlacing,
            NoFrom,
            MissingShot,
            ShotWithoutMill,
        ] {
            assert!(e.to_string().len() > 30, "{e}");
        }
    }

    #[test]
    fn names_are_three_to_nine_letters_or_digits() {
        for good in ["abc", "Abc123456", "XYZ", "007"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["ab", "abcdefghij", "ab-c", "äbc", "a b c", ""] {
            assert!(!valid_name(bad), "{bad}");
        }
        let mut game = MorabarabaGame::new();
        assert_eq!(
            game.next(),
            Step::Send {
                seat: 0,
                lines: vec!["1".into()]
            }
        );
        assert_eq!(
            game.next(),
            Step::Send {
                seat: 1,
                lines: vec!["2".into()]
            }
        );
        assert_eq!(game.next(), Step::Expect { seat: 0 });
        game.reply(0, "Alpha\r").unwrap();
        assert_eq!(game.next(), Step::Expect { seat: 1 });
        let v = game.reply(1, "B").unwrap_err();
        assert_eq!(v.seat, 1);
        assert!(v.rule.contains("3 to 9"), "{}", v.rule);
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.winner, Some(0));
        assert!(matches!(
            outcome.end,
            MorabarabaEnd::IllegalMove { loser: 1, .. }
        ));
        assert_eq!(outcome.names, [Some("Alpha".into()), None]);
        assert_eq!(
            game.next(),
            Step::Over {
                farewell: vec![
                    (0, vec![GAME_OVER_LINE.to_string()]),
                    (1, vec![GAME_OVER_LINE.to_string()])
                ]
            }
        );
    }

    #[test]
    fn moves_are_relayed_and_an_illegal_one_loses() {
        let mut game = MorabarabaGame::new();
        game.next();
        game.next();
        game.reply(0, "Alpha").unwrap();
        game.reply(1, "Beta").unwrap();
        assert_eq!(game.next(), Step::Expect { seat: 0 });
        game.reply(0, "0  0 0 2 3 1 0 0   0").unwrap();
        assert_eq!(
            game.next(),
            Step::Send {
                seat: 1,
                lines: vec!["0 0 0 2 3 1 0 0 0".into()]
            }
        );
        assert_eq!(game.next(), Step::Expect { seat: 1 });
        assert_eq!(game.turn(), 2);
        let v = game.reply(1, "0 0 0 2 3 1 0 0 0").unwrap_err();
        assert_eq!(v.seat, 1);
        assert_eq!(v.line, "0 0 0 2 3 1 0 0 0");
        assert!(
            v.rule.contains("turn 2") && v.rule.contains("2 3 1 is not free"),
            "{}",
            v.rule
        );
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.winner, Some(0));
        assert_eq!(outcome.turns, 1);
        assert_eq!(outcome.names, [Some("Alpha".into()), Some("Beta".into())]);
        assert!(matches!(game.next(), Step::Over { .. }));
        // A line out of turn is refused too.
        assert!(game.reply(0, "0 0 0 1 1 1 0 0 0").is_err());
        assert!(game.reply(2, "0 0 0 1 1 1 0 0 0").is_err());
        assert_eq!(game.outcome().unwrap().winner, Some(0));
    }

    #[test]
    fn a_forfeit_loses() {
        let mut game = MorabarabaGame::new();
        game.forfeit(0, "more than 120 s of CPU");
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.winner, Some(1));
        assert_eq!(
            outcome.end,
            MorabarabaEnd::Forfeit {
                loser: 0,
                reason: "more than 120 s of CPU".into()
            }
        );
        assert!(matches!(game.next(), Step::Over { .. }));
    }

    /// Whole games between two greedy bots (a mill when they can, else the
    /// n-th legal move) always end, by a rule.
    #[test]
    fn whole_games_end_by_a_rule() {
        let mut ends = BTreeSet::new();
        for variant in 0..12usize {
            let mut game = MorabarabaGame::new();
            let mut mirror = Position::new();
            let mut named = [false; 2];
            let outcome = play_scripted(
                &mut game,
                |seat, _| {
                    if !named[seat] {
                        named[seat] = true;
                        return format!("Greedy{seat}");
                    }
                    let moves = mirror.legal_moves();
                    let m =
                        moves.iter().find(|m| m.shot.is_some()).copied().unwrap_or(
                            moves[(variant * 7 + mirror.turns() as usize) % moves.len()],
                        );
                    mirror.play(&m).unwrap();
                    m.to_line()
                },
                10_000,
            )
            .unwrap();
            assert_eq!(outcome.turns, mirror.turns());
            match outcome.end {
                MorabarabaEnd::TwoCowsLeft { loser } => {
                    assert_eq!(outcome.cows[loser], 2);
                    assert_eq!(outcome.winner, Some(1 - loser));
                }
                MorabarabaEnd::NoLegalMove { loser } => assert_eq!(outcome.winner, Some(1 - loser)),
                MorabarabaEnd::ThreeCowsNoMill | MorabarabaEnd::NoMillIn200Turns => {
                    assert_eq!(outcome.winner, None)
                }
                ref e => panic!("unexpected end {e:?}"),
            }
            ends.insert(format!("{:?}", std::mem::discriminant(&outcome.end)));
        }
        assert!(!ends.is_empty());
    }
}
