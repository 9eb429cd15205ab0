//! The rules of KNOBELN (announcement of 1994, "Rules of Game").
//!
//! Both players choose a number in `a..=b` at the same time (a *throw*).
//! Equal numbers score nothing; otherwise the higher number wins unless it is
//! more than twice the lower one, in which case the lower wins. The winner of
//! a throw with number N gets floor(log2 N) points. Each player's throws must
//! form non-decreasing series of at least `k` throws. A game has `L` throws.
//!
//! This module judges throws and series; it knows nothing of processes,
//! pipes or time limits (that is the referee's business).

use serde::{Deserialize, Serialize};
use std::fmt;

/// One player's number in one throw. Kept wide so that anything a strategy
/// prints (within the referee's parse cap) can be represented and judged.
pub type Throw = i64;

/// Game parameters. The 1994 contest: a = 1, b = 12288, k = 8, L = 1000.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Smallest allowed throw.
    pub a: Throw,
    /// Largest allowed throw.
    pub b: Throw,
    /// Minimum length of each non-decreasing series.
    pub k: u32,
    /// Throws per game.
    pub l: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            a: 1,
            b: 12288,
            k: 8,
            l: 1000,
        }
    }
}

impl Params {
    /// Checks that the parameters make a playable game.
    pub fn validate(&self) -> Result<(), String> {
        if self.a < 1 {
            return Err(format!("a must be at least 1 (got {})", self.a));
        }
        if self.b < self.a {
            return Err(format!("b ({}) must not be below a ({})", self.b, self.a));
        }
        if self.b > (1 << 40) {
            return Err(format!("b ({}) is unreasonably large", self.b));
        }
        if self.k < 1 {
            return Err("k must be at least 1".into());
        }
        if self.l < 1 || self.l > 1_000_000 {
            return Err(format!("L must be in 1..=1000000 (got {})", self.l));
        }
        Ok(())
    }

    pub fn in_range(&self, t: Throw) -> bool {
        (self.a..=self.b).contains(&t)
    }
}

/// The two sides of a game: P (player 0) and Q (player 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Player {
    P,
    Q,
}

impl Player {
    pub fn index(self) -> usize {
        match self {
            Player::P => 0,
            Player::Q => 1,
        }
    }

    pub fn from_index(i: usize) -> Player {
        if i == 0 {
            Player::P
        } else {
            Player::Q
        }
    }

    pub fn other(self) -> Player {
        match self {
            Player::P => Player::Q,
            Player::Q => Player::P,
        }
    }
}

/// floor(log2 n) for n >= 1; 0 for n < 1 (which never wins points anyway).
pub fn log2_floor(n: Throw) -> u32 {
    if n < 1 {
        0
    } else {
        63 - (n as u64).leading_zeros()
    }
}

/// The result of one throw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Who won the throw; `None` when both threw the same number.
    pub winner: Option<Player>,
    /// Points of the winner (0 if nobody won).
    pub points: u32,
}

impl Outcome {
    /// Points of each side, `[P, Q]`.
    pub fn points_of(&self) -> [u32; 2] {
        match self.winner {
            Some(Player::P) => [self.points, 0],
            Some(Player::Q) => [0, self.points],
            None => [0, 0],
        }
    }
}

/// Judges one throw: P threw `p`, Q threw `q` (rules 2–4). Both throws are
/// assumed to be in range; range checks are [`Params::in_range`]'s job.
pub fn judge(p: Throw, q: Throw) -> Outcome {
    use std::cmp::Ordering::*;
    let (winner, number) = match p.cmp(&q) {
        Equal => {
            return Outcome {
                winner: None,
                points: 0,
            }
        }
        // p > q: P wins if 2q >= p, else Q wins.
        Greater => {
            if 2 * (q as i128) >= p as i128 {
                (Player::P, p)
            } else {
                (Player::Q, q)
            }
        }
        Less => {
            if 2 * (p as i128) >= q as i128 {
                (Player::Q, q)
            } else {
                (Player::P, p)
            }
        }
    };
    Outcome {
        winner: Some(winner),
        points: log2_floor(number),
    }
}

/// Why a throw broke the rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum RuleBreak {
    /// Rule 1: the number is outside `a..=b`.
    OutOfRange { thrown: Throw, a: Throw, b: Throw },
    /// Rule 6: a decrease before the current series was `k` long.
    SeriesTooShort {
        thrown: Throw,
        previous: Throw,
        series_len: u32,
        k: u32,
    },
}

impl fmt::Display for RuleBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleBreak::OutOfRange { thrown, a, b } => write!(
                f,
                "threw {thrown}, outside the allowed range {a}..{b} (rule 1)"
            ),
            RuleBreak::SeriesTooShort {
                thrown,
                previous,
                series_len,
                k,
            } => write!(
                f,
                "threw {thrown} after {previous}, but its non-decreasing series was only \
                 {series_len} throw{} long; every series must be at least {k} long (rule 6)",
                if *series_len == 1 { "" } else { "s" }
            ),
        }
    }
}

/// Tracks one player's throws against rule 6 (the run rule).
///
/// A series starts with the first throw and with every throw lower than its
/// predecessor. A throw lower than its predecessor is allowed only when the
/// series it ends is at least `k` throws long. The last series of a game may
/// be cut short by the end of the game.
#[derive(Debug, Clone)]
pub struct RunRule {
    k: u32,
    previous: Option<Throw>,
    series_len: u32,
}

impl RunRule {
    pub fn new(k: u32) -> Self {
        RunRule {
            k,
            previous: None,
            series_len: 0,
        }
    }

    /// Records the next throw, or says why it breaks the run rule (the state
    /// is then unchanged).
    pub fn push(&mut self, t: Throw) -> Result<(), RuleBreak> {
        match self.previous {
            Some(prev) if t < prev => {
                if self.series_len < self.k {
                    return Err(RuleBreak::SeriesTooShort {
                        thrown: t,
                        previous: prev,
                        series_len: self.series_len,
                        k: self.k,
                    });
                }
                self.series_len = 1;
            }
            _ => self.series_len += 1,
        }
        self.previous = Some(t);
        Ok(())
    }

    /// Length of the current series so far.
    pub fn series_len(&self) -> u32 {
        self.series_len
    }
}

/// Checks one throw of one player against rules 1 and 6, updating the run rule.
pub fn check_throw(params: &Params, run: &mut RunRule, t: Throw) -> Result<(), RuleBreak> {
    if !params.in_range(t) {
        return Err(RuleBreak::OutOfRange {
            thrown: t,
            a: params.a,
            b: params.b,
        });
    }
    run.push(t)
}

/// Replays a whole list of throws as the referee would, without processes:
/// returns the points `[P, Q]`, or the first throw (1-based) where a player
/// broke a rule. Used by tests and by the protocol formatter's verification.
pub fn replay(
    params: &Params,
    throws: &[[Throw; 2]],
) -> Result<[u64; 2], (u32, Player, RuleBreak)> {
    let mut runs = [RunRule::new(params.k), RunRule::new(params.k)];
    let mut points = [0u64; 2];
    for (i, pair) in throws.iter().enumerate() {
        for side in [Player::P, Player::Q] {
            check_throw(params, &mut runs[side.index()], pair[side.index()])
                .map_err(|e| (i as u32 + 1, side, e))?;
        }
        let o = judge(pair[0], pair[1]);
        let pts = o.points_of();
        points[0] += pts[0] as u64;
        points[1] += pts[1] as u64;
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_rule_first_break(k: u32, throws: &[Throw]) -> Option<usize> {
        let mut r = RunRule::new(k);
        throws
            .iter()
            .position(|&t| r.push(t).is_err())
            .map(|i| i + 1)
    }

    #[test]
    fn announcement_run_rule_examples() {
        // "If for instance k = 3 then the sequence 1, 2, 3, 1, 4, 5, 6, 8, 2 is allowed"
        assert_eq!(run_rule_first_break(3, &[1, 2, 3, 1, 4, 5, 6, 8, 2]), None);
        // "while 1, 2, 3, 4, 1, 2, 1 is not" -- at the last throw ("too early").
        assert_eq!(run_rule_first_break(3, &[1, 2, 3, 4, 1, 2, 1]), Some(7));
    }

    #[test]
    fn run_rule_equal_throws_continue_a_series() {
        assert_eq!(run_rule_first_break(3, &[5, 5, 5, 1, 1, 1, 0]), None);
        assert_eq!(run_rule_first_break(3, &[5, 5, 1]), Some(3));
        assert_eq!(run_rule_first_break(1, &[5, 4, 3, 2, 1]), None);
    }

    #[test]
    fn judge_follows_rules_2_to_4() {
        // Equal: nobody.
        assert_eq!(
            judge(7, 7),
            Outcome {
                winner: None,
                points: 0
            }
        );
        // p > q and 2q >= p: P wins with floor(log2 p).
        assert_eq!(
            judge(6800, 3400),
            Outcome {
                winner: Some(Player::P),
                points: 12
            }
        );
        // p > q and 2q < p: Q wins with floor(log2 q).
        assert_eq!(
            judge(6801, 3400),
            Outcome {
                winner: Some(Player::Q),
                points: 11
            }
        );
        // symmetric
        assert_eq!(
            judge(3400, 6800),
            Outcome {
                winner: Some(Player::Q),
                points: 12
            }
        );
        assert_eq!(
            judge(3400, 6801),
            Outcome {
                winner: Some(Player::P),
                points: 11
            }
        );
        assert_eq!(
            judge(1, 2),
            Outcome {
                winner: Some(Player::Q),
                points: 1
            }
        );
        assert_eq!(
            judge(1, 3),
            Outcome {
                winner: Some(Player::P),
                points: 0
            }
        );
    }

    #[test]
    fn log2_of_the_announcement_example() {
        assert_eq!(log2_floor(6800), 12);
        assert_eq!(log2_floor(1), 0);
        assert_eq!(log2_floor(12288), 13);
        assert_eq!(log2_floor(0), 0);
    }

    #[test]
    fn range_and_replay() {
        let p = Params::default();
        assert!(p.in_range(1) && p.in_range(12288));
        assert!(!p.in_range(0) && !p.in_range(12289));
        let throws = vec![[100, 60]; 8];
        assert_eq!(replay(&p, &throws), Ok([6 * 8, 0]));
        let mut bad = throws.clone();
        bad.push([0, 5]);
        let err = replay(&p, &bad).unwrap_err();
        assert_eq!((err.0, err.1), (9, Player::P));
    }
}
