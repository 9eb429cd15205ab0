//! Morabaraba (Ohjelmointiputka's AI contest 2014, organised by Metabolix):
//! the board, the rules and the line protocol of one game between two bots.
//!
//! What is here: the 24 points and the lines between them, mills, the
//! legality of a move ([`Position::play`]), the end of a game, and the game
//! as a [`LineGame`] with two seats. What is not here: processes, the 512 MB
//! and 120 s CPU limits and the CPU measurement (the referee's), scoring
//! with the CPU times (`crate::discipline::morabaraba::planner`), and the check that
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

use crate::game::lines::{LineGame, Step, Violation};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;

mod board;
mod position;

pub use board::{Point, MILLS, N_POINTS};
pub use position::{
    Move, MoveError, Played, Position, Slot, Status, COWS, FLYING_COWS, LOSING_COWS,
    NO_MILL_DRAW_TURNS, PLACING_TURNS, THREE_COWS_DRAW_TURNS,
};

/// The line both bots get when the game is over.
pub const GAME_OVER_LINE: &str = "0 0 0 0 0 0 0 0 0";

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
mod tests;
