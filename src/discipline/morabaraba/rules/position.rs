//! Morabaraba's moves and positions: a move line as the protocol writes it
//! ([`Move::parse`]), the state of a game ([`Position`]) with the legality
//! of a move ([`Position::play`]: placing, moving, flying, shooting, the
//! no-immediate-re-forming rule) and the end and draw rules
//! ([`Position::status`]).
//!
//! What it deliberately does not do: talk the line protocol or blame a seat
//! (that is [`super::MorabarabaGame`]).

use serde::Serialize;
use std::fmt;

use super::board::{mill_text, Point, MILLS, N_POINTS};

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
    pub(super) cells: [Option<u8>; N_POINTS],
    pub(super) in_hand: [u8; 2],
    pub(super) to_move: usize,
    /// Turns played.
    pub(super) turn: u32,
    pub(super) turns_since_mill: u32,
    /// Per player: mills it may not form in its next turn (bit sets).
    pub(super) forbidden: [u32; 2],
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
