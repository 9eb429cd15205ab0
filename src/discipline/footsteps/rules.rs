//! The rules and line protocol of FootSteps (the fifth contest of the
//! Spanish-language algorithm contests of 2007).
//!
//! A token sits on the middle field of a strip of seven fields. Seat 0 (the
//! *left* player) wants it on the leftmost field (0), seat 1 (the *right*
//! player) on the rightmost (6). Each starts with 50 points. Every turn both
//! bid in secret; the higher bid moves the token one field toward its
//! bidder's goal, equal bids leave it; both lose what they bid. A bid must
//! be at least 1 while the bidder has points and 0 once it has none (a
//! bidder without points goes on playing, bidding 0). Whoever brings the
//! token to its goal wins. If both are out of points before that, the game
//! is a draw, wherever the token is. A goal reached in the very turn that
//! empties both purses is a win: the token is moved before the purses are
//! looked at. Since every turn but a drawn last one costs at least one
//! point, a game has at most 100 turns.
//!
//! # Protocol
//!
//! As the seed's: a bot prints its bid as a decimal number on a line of its
//! own, then reads one line: the opponent's bid (a decimal number), or
//! `fin` when the game is over (normally or by an illegal bid), and then
//! ends; otherwise it bids again. The game sends nothing before the first
//! bid. The two bids of a turn are collected as two [`Step::Expect`]s
//! (seat 0, then seat 1) before either bot is told anything.
//!
//! A bid is ASCII decimal digits (leading zeros allowed), optionally
//! preceded by `-` (so that a negative bid is reported as the rule it
//! breaks); blanks around it and carriage returns at the end are tolerated
//! as a stream reader skips them ([`crate::game::lines::trimmed`]), nothing else.
//!
//! # Illegal bids
//!
//! "Si un programa hace una oferta ilegal (menor que uno o mayor que la
//! cantidad de puntos que tenga, o distinta de cero si ya no tiene puntos)
//! perderá la partida": an illegal bid (or a line that is not a bid) loses
//! the game. The bids are secret and simultaneous, so both are judged
//! together once both are in: seat 0's line is accepted for the moment
//! (`reply` returns `Ok`) and the [`Violation`] comes with seat 1's reply
//! (its `seat` is the offender). If both bid illegally in the same turn,
//! both lose: nobody wins the game, and the violation reported is seat 0's
//! (the outcome records both).
//!
//! This module knows nothing of processes, pipes, time limits or
//! tournaments.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

use crate::game::lines::{LineGame, Step, Violation};

/// How many characters of an offending line a [`Violation`] keeps.
const MAX_QUOTED: usize = 200;

/// Parameters of a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Fields of the strip (odd, so that there is a middle field).
    pub fields: u32,
    /// Points each player starts with.
    pub points: u32,
}

impl Default for Params {
    /// The 2007 contest: seven fields, 50 points each.
    fn default() -> Self {
        Params {
            fields: 7,
            points: 50,
        }
    }
}

impl Params {
    /// Checks that the parameters make a playable game.
    pub fn validate(&self) -> Result<(), String> {
        if self.fields < 3 || self.fields > 1001 || self.fields.is_multiple_of(2) {
            return Err(format!(
                "fields must be odd and in 3..=1001 (got {})",
                self.fields
            ));
        }
        if !(1..=1_000_000).contains(&self.points) {
            return Err(format!(
                "points must be in 1..=1000000 (got {})",
                self.points
            ));
        }
        Ok(())
    }

    /// The middle field, where the token starts (3 of 0..=6).
    pub fn middle(&self) -> u32 {
        self.fields / 2
    }

    /// The field seat `seat` wants the token on: 0 for seat 0, the last
    /// field for seat 1.
    pub fn goal(&self, seat: usize) -> u32 {
        if seat == 0 {
            0
        } else {
            self.fields - 1
        }
    }
}

/// How a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The token reached the winner's goal.
    Goal,
    /// Both ran out of points before a goal: a draw.
    OutOfPoints,
    /// A bid broke the rules; `seats[i]` says whether seat `i`'s did.
    IllegalBid { seats: [bool; 2] },
    /// A bot failed outside the rules (crashed, ran out of time): it loses.
    Forfeit { seat: usize },
}

impl std::fmt::Display for Ending {
    /// A sentence for people: "player 2 made an illegal bid".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::words::player;
        match self {
            Ending::Goal => write!(f, "the token reached a goal"),
            Ending::OutOfPoints => write!(f, "both players ran out of points"),
            Ending::IllegalBid {
                seats: [true, true],
            } => {
                write!(f, "both players made an illegal bid")
            }
            Ending::IllegalBid {
                seats: [true, false],
            } => {
                write!(f, "{} made an illegal bid", player(0))
            }
            Ending::IllegalBid {
                seats: [false, true],
            } => {
                write!(f, "{} made an illegal bid", player(1))
            }
            Ending::IllegalBid { .. } => write!(f, "an illegal bid"),
            Ending::Forfeit { seat } => write!(f, "{} forfeited", player(*seat)),
        }
    }
}

/// What a finished game reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameOutcome {
    /// The seat that won; `None` for a draw (or two illegal bids).
    pub winner: Option<usize>,
    pub ending: Ending,
    /// Where the token is at the end (0 = the left end).
    pub position: u32,
    /// Points each seat has left.
    pub points_left: [u32; 2],
    /// Turns completed (a turn ended by an illegal bid does not count).
    pub turns: u32,
}

/// A bid as judged: the amount, or the rule the line broke.
type Judged = Result<u32, String>;

/// One game, as a [`LineGame`] the referee drives.
#[derive(Debug, Clone)]
pub struct Game {
    params: Params,
    position: u32,
    points: [u32; 2],
    /// The bids of every completed turn, `[seat 0, seat 1]`.
    bids: Vec<[u32; 2]>,
    /// This turn's bids as they come in (with the line, for a violation).
    collected: [Option<(Judged, String)>; 2],
    pending: VecDeque<Step>,
    expecting: Option<usize>,
    outcome: Option<GameOutcome>,
    /// Seat 1's violation when both bids of a turn were illegal.
    also: Option<Violation>,
}

impl Game {
    /// A new game; `params` must be valid ([`Params::validate`]).
    pub fn new(params: Params) -> Game {
        assert!(params.validate().is_ok(), "invalid FootSteps parameters");
        Game {
            params,
            position: params.middle(),
            points: [params.points; 2],
            bids: Vec::new(),
            collected: [None, None],
            pending: VecDeque::new(),
            expecting: None,
            outcome: None,
            also: None,
        }
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Where the token is (0 = the left end).
    pub fn position(&self) -> u32 {
        self.position
    }

    /// Points each seat has left.
    pub fn points(&self) -> [u32; 2] {
        self.points
    }

    /// The bids of every completed turn, in order.
    pub fn bids(&self) -> &[[u32; 2]] {
        &self.bids
    }

    fn end(&mut self, winner: Option<usize>, ending: Ending) {
        self.outcome = Some(GameOutcome {
            winner,
            ending,
            position: self.position,
            points_left: self.points,
            turns: self.bids.len() as u32,
        });
        self.expecting = None;
    }

    /// Plays a turn with two legal bids.
    fn play_turn(&mut self, bids: [u32; 2]) {
        use std::cmp::Ordering::*;
        self.points[0] -= bids[0];
        self.points[1] -= bids[1];
        match bids[0].cmp(&bids[1]) {
            Greater => self.position -= 1,
            Less => self.position += 1,
            Equal => {}
        }
        self.bids.push(bids);
        if self.position == self.params.goal(0) {
            self.end(Some(0), Ending::Goal);
        } else if self.position == self.params.goal(1) {
            self.end(Some(1), Ending::Goal);
        } else if self.points == [0, 0] {
            self.end(None, Ending::OutOfPoints);
        } else {
            self.pending.push_back(Step::Send {
                seat: 0,
                lines: vec![bids[1].to_string()],
            });
            self.pending.push_back(Step::Send {
                seat: 1,
                lines: vec![bids[0].to_string()],
            });
        }
    }

    /// Both bids are in: judge them together.
    fn judge_turn(&mut self) -> Result<(), Violation> {
        let (Some((bid0, line0)), Some((bid1, line1))) =
            (self.collected[0].take(), self.collected[1].take())
        else {
            unreachable!("judge_turn with a bid missing")
        };
        match (bid0, bid1) {
            (Ok(b0), Ok(b1)) => {
                self.play_turn([b0, b1]);
                Ok(())
            }
            (Err(rule), Ok(_)) => {
                self.end(
                    Some(1),
                    Ending::IllegalBid {
                        seats: [true, false],
                    },
                );
                Err(violation(0, rule, &line0))
            }
            (Ok(_), Err(rule)) => {
                self.end(
                    Some(0),
                    Ending::IllegalBid {
                        seats: [false, true],
                    },
                );
                Err(violation(1, rule, &line1))
            }
            (Err(rule0), Err(rule1)) => {
                self.end(
                    None,
                    Ending::IllegalBid {
                        seats: [true, true],
                    },
                );
                // Both broke the rule: each is blamed with its own line.
                self.also = Some(violation(1, rule1, &line1));
                Err(violation(0, rule0, &line0))
            }
        }
    }
}

fn violation(seat: usize, rule: String, line: &str) -> Violation {
    Violation {
        seat,
        rule,
        line: quote(line),
    }
}

/// Keeps at most [`MAX_QUOTED`] characters of a line for a report.
fn quote(line: &str) -> String {
    match line.char_indices().nth(MAX_QUOTED) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    }
}

/// Reads a bid and checks it against the bidder's points (`has`). `Err`
/// is the rule broken, in words for the participant.
pub fn judge_bid(line: &str, has: u32) -> Result<u32, String> {
    let s = crate::game::lines::trimmed(line);
    let (negative, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(
            "a bid is a whole number in decimal digits, alone on its line (e.g. \"7\")".into(),
        );
    }
    let significant = digits.trim_start_matches('0');
    // Anything longer than 10 digits is far above any purse.
    let value: u64 = if significant.len() > 10 {
        u64::MAX
    } else {
        significant.parse().unwrap_or(0)
    };
    let shown = quote(s);
    if has == 0 {
        return if value == 0 {
            Ok(0)
        } else {
            Err(format!(
                "bid {shown}, but a bot that has no points left must bid 0"
            ))
        };
    }
    if negative || value < 1 {
        return Err(format!(
            "bid {shown}, but a bid must be at least 1 while the bot has points (it has {has})"
        ));
    }
    if value > has as u64 {
        return Err(format!(
            "bid {shown}, but the bot has only {has} point{} left",
            if has == 1 { "" } else { "s" }
        ));
    }
    Ok(value as u32)
}

impl LineGame for Game {
    type Outcome = GameOutcome;

    fn n_seats(&self) -> usize {
        2
    }

    fn next(&mut self) -> Step {
        if let Some(seat) = self.expecting {
            return Step::Expect { seat };
        }
        if let Some(step) = self.pending.pop_front() {
            return step;
        }
        if self.outcome.is_some() {
            return Step::Over {
                farewell: vec![(0, vec!["fin".into()]), (1, vec!["fin".into()])],
            };
        }
        let seat = if self.collected[0].is_none() { 0 } else { 1 };
        self.expecting = Some(seat);
        Step::Expect { seat }
    }

    fn reply(&mut self, seat: usize, line: &str) -> Result<(), Violation> {
        if self.outcome.is_some() {
            return Err(violation(
                seat,
                "printed a line after the end of the game".into(),
                line,
            ));
        }
        if self.expecting != Some(seat) {
            self.pending.clear();
            self.end(
                Some(1 - seat),
                Ending::IllegalBid {
                    seats: [seat == 0, seat == 1],
                },
            );
            return Err(violation(
                seat,
                "printed a line when it was not its turn: a bot prints one bid, then \
                 reads the opponent's bid before it bids again"
                    .into(),
                line,
            ));
        }
        self.expecting = None;
        let judged = judge_bid(line, self.points[seat]);
        self.collected[seat] = Some((judged, line.to_string()));
        if seat == 0 {
            Ok(())
        } else {
            self.judge_turn()
        }
    }

    fn also_broken(&self) -> Vec<Violation> {
        self.also.iter().cloned().collect()
    }

    fn outcome(&self) -> Option<GameOutcome> {
        self.outcome.clone()
    }

    fn forfeit(&mut self, seat: usize, _reason: &str) {
        if self.outcome.is_none() {
            self.pending.clear();
            self.end(Some(1 - seat), Ending::Forfeit { seat });
        }
    }

    /// The turn being played, 1-based (after the end: the last turn).
    fn turn(&self) -> u64 {
        let done = self.bids.len() as u64;
        match &self.outcome {
            Some(o) if !matches!(o.ending, Ending::IllegalBid { .. } | Ending::Forfeit { .. }) => {
                done
            }
            _ => done + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::lines::play_scripted;
    use crate::seed::SplitMix64;

    /// Plays a game where each seat bids from a list (as lines), recording
    /// what each seat reads (farewell included).
    fn scripted(bids: [&[&str]; 2]) -> (Result<GameOutcome, Violation>, Game, [Vec<String>; 2]) {
        let mut game = Game::new(Params::default());
        let mut seen: [Vec<String>; 2] = [Vec::new(), Vec::new()];
        let mut next_bid = [0usize; 2];
        let mut result = None;
        for _ in 0..1000 {
            match game.next() {
                Step::Send { seat, lines } => seen[seat].extend(lines),
                Step::Expect { seat } => {
                    let line = bids[seat][next_bid[seat]];
                    next_bid[seat] += 1;
                    if let Err(v) = game.reply(seat, line) {
                        result = Some(Err(v));
                    }
                }
                Step::Over { farewell } => {
                    for (s, lines) in farewell {
                        seen[s].extend(lines);
                    }
                    let r = result.unwrap_or_else(|| Ok(game.outcome().unwrap()));
                    return (r, game, seen);
                }
            }
        }
        panic!("no end");
    }

    #[test]
    fn the_higher_bid_moves_the_token_and_the_goal_wins() {
        // Seat 0 outbids seat 1 three times: the token goes 3 → 2 → 1 → 0.
        let (r, game, seen) = scripted([&["2", "2", "2"], &["1", "1", "1"]]);
        let o = r.unwrap();
        assert_eq!(o.winner, Some(0));
        assert_eq!(o.ending, Ending::Goal);
        assert_eq!((o.position, o.points_left, o.turns), (0, [44, 47], 3));
        assert_eq!(game.bids(), &[[2, 1], [2, 1], [2, 1]]);
        // Each reads the other's bid after every turn but the last, then fin.
        assert_eq!(seen[0], ["1", "1", "fin"]);
        assert_eq!(seen[1], ["2", "2", "fin"]);
        // And to the right.
        let (r, _, _) = scripted([&["1"; 3], &["3"; 3]]);
        let o = r.unwrap();
        assert_eq!((o.winner, o.position), (Some(1), 6));
    }

    #[test]
    fn equal_bids_do_not_move_but_both_pay() {
        let (r, game, seen) = scripted([&["5", "45"], &["5", "45"]]);
        let o = r.unwrap();
        assert_eq!(game.bids(), &[[5, 5], [45, 45]]);
        assert_eq!((o.winner, o.position, o.points_left), (None, 3, [0, 0]));
        assert_eq!(seen[0], ["5", "fin"]);
    }

    #[test]
    fn both_out_of_points_is_a_draw_wherever_the_token_is() {
        // "Si ambos jugadores se quedan sin puntos antes de que esto suceda,
        // se declara empate (sin importar dónde haya quedado la ficha)."
        // 10 > 5 moves the token to field 2, 40 < 45 back to 3.
        let (r, _, seen) = scripted([&["10", "40"], &["5", "45"]]);
        let o = r.unwrap();
        assert_eq!((o.winner, o.ending), (None, Ending::OutOfPoints));
        assert_eq!((o.position, o.points_left, o.turns), (3, [0, 0], 2));
        assert_eq!(seen, [vec!["5", "fin"], vec!["10", "fin"]]);
        // Off the middle: 1 < 10 → field 4; 5 > 1 → 3; 6 > 1 → 2; both
        // have 38 left and bid it all: a draw on field 2.
        let (r, _, _) = scripted([&["1", "5", "6", "38"], &["10", "1", "1", "38"]]);
        let o = r.unwrap();
        assert_eq!((o.winner, o.ending), (None, Ending::OutOfPoints));
        assert_eq!((o.position, o.points_left, o.turns), (2, [0, 0], 4));
    }

    #[test]
    fn a_bidder_without_points_bids_zero_and_the_other_walks_home() {
        // Seat 0 spends everything at once (field 2), then must bid 0; seat 1
        // moves the token one field per turn with bids of 1: 2 → 3 → 4 → 5 → 6.
        let (r, game, seen) = scripted([&["50", "0", "0", "0", "0"], &["1", "1", "1", "1", "1"]]);
        let o = r.unwrap();
        assert_eq!((o.winner, o.position, o.points_left), (Some(1), 6, [0, 45]));
        assert_eq!(game.bids().len(), 5);
        assert_eq!(seen[1], ["50", "0", "0", "0", "fin"]);
        // A nonzero bid without points is illegal.
        let (r, _, _) = scripted([&["50", "1"], &["1", "1"]]);
        let v = r.unwrap_err();
        assert_eq!(v.seat, 0);
        assert!(v.rule.contains("no points left must bid 0"), "{}", v.rule);
    }

    #[test]
    fn a_goal_in_the_turn_that_empties_both_purses_wins() {
        // 1:20 → field 4 (49, 30); 2:1 three times → field 1 (43, 27);
        // 43:27 → field 0 with both purses empty: seat 0 wins.
        let (r, _, _) = scripted([&["1", "2", "2", "2", "43"], &["20", "1", "1", "1", "27"]]);
        let o = r.unwrap();
        assert_eq!((o.winner, o.ending), (Some(0), Ending::Goal));
        assert_eq!((o.position, o.points_left, o.turns), (0, [0, 0], 5));
    }

    #[test]
    fn illegal_bids_lose_the_game() {
        // A bid of 0 while points remain.
        let (r, _, seen) = scripted([&["0"], &["1"]]);
        let v = r.unwrap_err();
        assert_eq!((v.seat, v.line.as_str()), (0, "0"));
        assert!(v.rule.contains("at least 1"), "{}", v.rule);
        assert_eq!(seen, [vec!["fin".to_string()], vec!["fin".to_string()]]);
        // A bid above the points left.
        let (r, game, _) = scripted([&["1"], &["51"]]);
        let v = r.unwrap_err();
        assert_eq!(v.seat, 1);
        assert!(v.rule.contains("only 50 points"), "{}", v.rule);
        let o = game.outcome().unwrap();
        assert_eq!(o.winner, Some(0));
        assert_eq!(
            o.ending,
            Ending::IllegalBid {
                seats: [false, true]
            }
        );
        assert_eq!((o.position, o.points_left, o.turns), (3, [50, 50], 0));
        // Negative bids, signs, blanks, words.
        for bad in [
            "-1",
            "-0",
            "+1",
            "1 1",
            "1.0",
            "uno",
            "",
            "fin",
            "99999999999999999999999",
        ] {
            let (r, game, _) = scripted([&["1"], &[bad]]);
            assert_eq!(r.unwrap_err().seat, 1, "{bad:?}");
            assert_eq!(game.outcome().unwrap().winner, Some(0));
        }
        // Accepted spellings.
        assert_eq!(judge_bid("007", 50), Ok(7));
        assert_eq!(judge_bid("7\r", 50), Ok(7));
        assert_eq!(judge_bid("0", 0), Ok(0));
        assert_eq!(judge_bid("000", 0), Ok(0));
        assert_eq!(judge_bid("50", 50), Ok(50));
        assert!(judge_bid("-0", 0).is_ok(), "minus zero is zero");
    }

    #[test]
    fn bids_are_secret_so_both_are_judged_together() {
        // Seat 0's illegal bid is accepted for the moment; the violation
        // comes with seat 1's bid.
        let mut g = Game::new(Params::default());
        assert_eq!(g.next(), Step::Expect { seat: 0 });
        assert_eq!(g.next(), Step::Expect { seat: 0 });
        assert_eq!(g.turn(), 1);
        assert_eq!(g.reply(0, "0"), Ok(()));
        assert_eq!(g.next(), Step::Expect { seat: 1 });
        let v = g.reply(1, "3").unwrap_err();
        assert_eq!(v.seat, 0);
        assert_eq!(g.outcome().unwrap().winner, Some(1));
        assert!(matches!(g.next(), Step::Over { .. }));
        // Both illegal in the same turn: both lose, nobody wins.
        let (r, game, _) = scripted([&["0"], &["60"]]);
        let v = r.unwrap_err();
        assert_eq!((v.seat, v.line.as_str()), (0, "0"));
        // Seat 1 is blamed too, with its own rule and line.
        let also = game.also_broken();
        assert_eq!(also.len(), 1);
        assert_eq!((also[0].seat, also[0].line.as_str()), (1, "60"));
        assert!(also[0].rule.contains("60"), "{}", also[0].rule);
        let o = game.outcome().unwrap();
        assert_eq!(o.winner, None);
        assert_eq!(
            o.ending,
            Ending::IllegalBid {
                seats: [true, true]
            }
        );
    }

    #[test]
    fn speaking_out_of_turn_loses() {
        let mut g = Game::new(Params::default());
        assert_eq!(g.next(), Step::Expect { seat: 0 });
        let v = g.reply(1, "3").unwrap_err();
        assert_eq!(v.seat, 1);
        assert_eq!(g.outcome().unwrap().winner, Some(0));
        assert!(g.reply(0, "3").is_err());
    }

    #[test]
    fn other_strips_and_purses() {
        assert!(Params {
            fields: 6,
            points: 50
        }
        .validate()
        .is_err());
        assert!(Params {
            fields: 1,
            points: 50
        }
        .validate()
        .is_err());
        assert!(Params {
            fields: 7,
            points: 0
        }
        .validate()
        .is_err());
        let p = Params {
            fields: 3,
            points: 2,
        };
        assert_eq!((p.middle(), p.goal(0), p.goal(1)), (1, 0, 2));
        let mut g = Game::new(p);
        let o = play_scripted(
            &mut g,
            |seat, _| if seat == 0 { "1" } else { "2" }.into(),
            10,
        )
        .unwrap();
        assert_eq!((o.winner, o.turns), (Some(1), 1));
    }

    /// A random legal bid for a purse of `has` points.
    fn legal(r: &mut SplitMix64, has: u32) -> u32 {
        if has == 0 {
            0
        } else if r.below(4) == 0 {
            has
        } else {
            1 + r.below(has.min(12) as u64) as u32
        }
    }

    /// Hand-written property test: random legal play never panics, always
    /// ends within 2 × 50 turns, and the bookkeeping adds up.
    #[test]
    fn random_legal_play_always_ends() {
        let mut rng = SplitMix64::new(2007);
        let mut endings = std::collections::BTreeMap::new();
        for _ in 0..2000 {
            let mut game = Game::new(Params::default());
            let mut r = SplitMix64::new(rng.next_u64());
            let mut purse = [50u32; 2];
            let o = play_scripted(
                &mut game,
                |seat, _| {
                    let b = legal(&mut r, purse[seat]);
                    purse[seat] -= b;
                    b.to_string()
                },
                1000,
            )
            .expect("legal play");
            assert!(o.turns <= 100);
            let spent = game
                .bids()
                .iter()
                .fold([0, 0], |a, b| [a[0] + b[0], a[1] + b[1]]);
            assert_eq!([50 - spent[0], 50 - spent[1]], o.points_left);
            let moves: i64 = game
                .bids()
                .iter()
                .map(|b| (b[1] as i64 - b[0] as i64).signum())
                .sum();
            assert_eq!(3 + moves, o.position as i64);
            match o.ending {
                Ending::Goal => assert_eq!(o.position, if o.winner == Some(0) { 0 } else { 6 }),
                Ending::OutOfPoints => {
                    assert_eq!((o.winner, o.points_left), (None, [0, 0]));
                    assert!((1..=5).contains(&o.position));
                }
                Ending::IllegalBid { .. } => panic!("a legal bid was refused"),
                Ending::Forfeit { .. } => panic!("nobody forfeits here"),
            }
            *endings.entry(format!("{:?}", o.ending)).or_insert(0) += 1;
        }
        // Both endings happen.
        assert_eq!(endings.len(), 2, "{endings:?}");
    }

    /// Random lines, legal or not: never a panic, always an end.
    #[test]
    fn random_lines_never_panic() {
        let mut rng = SplitMix64::new(5);
        for _ in 0..2000 {
            let mut game = Game::new(Params::default());
            let mut r = SplitMix64::new(rng.next_u64());
            let res = play_scripted(
                &mut game,
                |_, _| {
                    ["0", "1", "5", "50", "51", "-2", "x", "", "12\r", "3 "][r.below(10) as usize]
                        .to_string()
                },
                1000,
            );
            let o = game.outcome().unwrap();
            match res {
                Ok(_) => assert!(!matches!(o.ending, Ending::IllegalBid { .. })),
                Err(v) => {
                    let Ending::IllegalBid { seats } = o.ending else {
                        panic!("a violation without an illegal bid")
                    };
                    assert!(seats[v.seat]);
                    assert_eq!(o.winner.is_none(), seats[0] && seats[1]);
                }
            }
        }
    }
}
