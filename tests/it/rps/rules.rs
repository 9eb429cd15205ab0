//! Rock-paper-scissors as a line game: each round both bots name a hand
//! (`R`, `P` or `S`) without seeing the other's, then each learns the
//! other's. The bot that wins more rounds wins the game.
//!
//! Protocol: each bot gets `RPS N` (N rounds), then per round prints its
//! hand and reads `THEY X`; after the last round `END`.

use knobeln::game::lines::{trimmed, LineGame, Step, Violation};
use serde::{Deserialize, Serialize};

/// A game's setup: how many rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpsSetup {
    pub rounds: u32,
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpsOutcome {
    pub rounds: u32,
    /// Rounds each seat won.
    pub wins: [u32; 2],
    /// The seat that won the game, if one did.
    pub winner: Option<usize>,
    /// Why the game ended early: a seat broke a rule or failed.
    pub forfeit: Option<(usize, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Greet(usize),
    Ask(usize),
    Tell(usize),
    Over,
}

/// One game.
#[derive(Debug, Clone)]
pub struct RpsGame {
    rounds: u32,
    round: u32,
    phase: Phase,
    hands: [u8; 2],
    wins: [u32; 2],
    forfeit: Option<(usize, String)>,
}

impl RpsGame {
    pub fn new(setup: RpsSetup) -> RpsGame {
        RpsGame {
            rounds: setup.rounds,
            round: 0,
            phase: Phase::Greet(0),
            hands: [0; 2],
            wins: [0; 2],
            forfeit: None,
        }
    }
}

/// Whether hand `a` beats hand `b`.
fn beats(a: u8, b: u8) -> bool {
    matches!((a, b), (b'R', b'S') | (b'S', b'P') | (b'P', b'R'))
}

impl LineGame for RpsGame {
    type Outcome = RpsOutcome;

    fn n_seats(&self) -> usize {
        2
    }

    fn next(&mut self) -> Step {
        match self.phase {
            Phase::Greet(seat) => {
                self.phase = if seat == 0 {
                    Phase::Greet(1)
                } else if self.rounds == 0 {
                    Phase::Over
                } else {
                    Phase::Ask(0)
                };
                Step::Send {
                    seat,
                    lines: vec![format!("RPS {}", self.rounds)],
                }
            }
            Phase::Ask(seat) => Step::Expect { seat },
            Phase::Tell(seat) => {
                let other = self.hands[1 - seat] as char;
                self.phase = if seat == 0 {
                    Phase::Tell(1)
                } else if self.round == self.rounds {
                    Phase::Over
                } else {
                    Phase::Ask(0)
                };
                Step::Send {
                    seat,
                    lines: vec![format!("THEY {other}")],
                }
            }
            Phase::Over => Step::Over {
                farewell: vec![(0, vec!["END".into()]), (1, vec!["END".into()])],
            },
        }
    }

    fn reply(&mut self, seat: usize, line: &str) -> Result<(), Violation> {
        let hand = match trimmed(line) {
            "R" => b'R',
            "P" => b'P',
            "S" => b'S',
            _ => {
                self.forfeit = Some((seat, "a hand is R, P or S".into()));
                self.phase = Phase::Over;
                return Err(Violation {
                    seat,
                    rule: "a hand is one letter: R, P or S".into(),
                    line: line.into(),
                });
            }
        };
        self.hands[seat] = hand;
        if seat == 0 {
            self.phase = Phase::Ask(1);
        } else {
            self.round += 1;
            let [a, b] = self.hands;
            if beats(a, b) {
                self.wins[0] += 1;
            } else if beats(b, a) {
                self.wins[1] += 1;
            }
            self.phase = Phase::Tell(0);
        }
        Ok(())
    }

    fn outcome(&self) -> Option<RpsOutcome> {
        if self.phase != Phase::Over {
            return None;
        }
        let winner = match &self.forfeit {
            Some((seat, _)) => Some(1 - seat),
            None if self.wins[0] > self.wins[1] => Some(0),
            None if self.wins[1] > self.wins[0] => Some(1),
            None => None,
        };
        Some(RpsOutcome {
            rounds: self.round,
            wins: self.wins,
            winner,
            forfeit: self.forfeit.clone(),
        })
    }

    fn forfeit(&mut self, seat: usize, reason: &str) {
        if self.phase != Phase::Over {
            self.forfeit = Some((seat, reason.into()));
            self.phase = Phase::Over;
        }
    }

    fn turn(&self) -> u64 {
        u64::from(self.round + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_beats_rock_and_the_game_counts_rounds() {
        let mut g = RpsGame::new(RpsSetup { rounds: 2 });
        let mut sent = Vec::new();
        let hands = [["P", "R"], ["S", "S"]];
        let mut round = 0;
        loop {
            match g.next() {
                Step::Send { seat, lines } => sent.push((seat, lines)),
                Step::Expect { seat } => {
                    g.reply(seat, hands[round][seat]).unwrap();
                    if seat == 1 {
                        round += 1;
                    }
                }
                Step::Over { .. } => break,
            }
        }
        let o = g.outcome().unwrap();
        assert_eq!((o.rounds, o.wins, o.winner), (2, [1, 0], Some(0)));
        assert_eq!(sent[2], (0, vec!["THEY R".to_string()]));
        let mut g = RpsGame::new(RpsSetup { rounds: 1 });
        g.next();
        g.next();
        assert!(g.reply(0, "X").is_err());
        assert_eq!(g.outcome().unwrap().winner, Some(1));
    }
}
