//! The rules and line protocol of the ultimatum game (freiesMagazin's fourth
//! programming contest, 2011).
//!
//! A match is `R` rounds (2500 in the contest) between two bots. In every
//! round each bot is the proposer once: it offers its opponent an amount
//! `x` in `0..=1000` of a pot of 1000; the opponent (the responder) accepts
//! (`JA`) and gets `x` while the proposer gets `1000 − x`, or rejects
//! (`NEIN`) and neither gets anything. A match therefore shares at most
//! `2 · 1000 · R` points (5,000,000 for 2500 rounds) between the two bots.
//!
//! # Who proposes when
//!
//! Seat 0 (the bot named first in the match, "Bot A") proposes first in
//! *every* round, seat 1 second. The seed's FAQ says so ("Jede Runde darf
//! zuerst Bot A und danach Bot B den Startspieler geben"); the sentence "der
//! Startspieler wechselt" of the rules is the change from A to B within a
//! round and back to A at the next one. The other order is the return match
//! (B against A), which the tournament plays too.
//!
//! # The protocol, line by line
//!
//! The game sends (each line without its line end):
//!
//! 1. `RUNDEN n` to both, once, before anything else (n = the number of rounds).
//! 2. For each round `r` = 1..=n: `RUNDE r` to both, then two half-rounds,
//!    first with seat 0 as proposer, then with seat 1. A half-round is:
//!    - `START` to the proposer, which answers with its offer: a line with
//!      a whole number from 0 to 1000;
//!    - `ANGEBOT x` to the responder, which answers `JA` or `NEIN`;
//!    - `JA` or `NEIN` (the answer) and then `PUNKTE p` to the proposer,
//!      where p = 1000 − x if accepted, else 0;
//!    - `PUNKTE q` to the responder, where q = x if accepted, else 0.
//!
//!    Both bots are told what they won ("Danach werden beide über den
//!    gewonnenen Betrag informiert"), each its own amount.
//! 3. `ENDE` to both at the end of the match (also when it ends early
//!    because a bot broke the protocol).
//!
//! Lines to the same seat that follow each other are sent in one
//! [`Step::Send`], e.g. `RUNDEN 2500`, `RUNDE 1`, `START` to seat 0.
//!
//! # What a bot may print
//!
//! Strict on content: an offer is ASCII decimal digits only (leading zeros
//! allowed, no sign, no blank inside), with a value from 0 to 1000; an
//! answer is exactly `JA` or `NEIN` in capitals. Tolerated around them, as
//! the 2011 engine read numbers and words from a stream: blanks (spaces,
//! tabs) before and after, and carriage returns at the end
//! ([`crate::game::lines::trimmed`]). Anything else is a protocol violation.
//!
//! # Violations
//!
//! A violation ends the match at once. The bot that broke the protocol
//! forfeits it: it scores 0 points for the match and the match is lost for
//! it; its opponent keeps the points it earned in the completed half-rounds
//! before the violation, and wins the match ([`MatchOutcome::scored`],
//! [`MatchOutcome::result_for`]). A half-round interrupted by the violation
//! earns nothing.
//!
//! This module knows nothing of processes, pipes, time limits or
//! tournaments (that is the referee's and [`crate::discipline::ultimatum::planner`]'s
//! business).

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

use crate::game::lines::{LineGame, Step, Violation};

/// The pot of every half-round: an offer is a share of it.
pub const POT: u32 = 1000;

/// The most rounds a match may have (a sanity cap for configurations).
pub const MAX_ROUNDS: u32 = 1_000_000;

/// How many characters of an offending line a [`Violation`] keeps.
const MAX_QUOTED: usize = 200;

/// Parameters of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Rounds per match; each round both seats propose once.
    pub rounds: u32,
}

impl Default for Params {
    /// The 2011 contest: 2500 rounds.
    fn default() -> Self {
        Params { rounds: 2500 }
    }
}

impl Params {
    /// Checks that the parameters make a playable match.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_ROUNDS).contains(&self.rounds) {
            return Err(format!(
                "rounds must be in 1..={MAX_ROUNDS} (got {})",
                self.rounds
            ));
        }
        Ok(())
    }

    /// The most points the two seats can share in a match: 2 · 1000 · rounds.
    pub fn max_total_points(&self) -> u64 {
        2 * POT as u64 * self.rounds as u64
    }
}

/// The result of a match for one seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchResult {
    Won,
    Draw,
    Lost,
}

impl std::fmt::Display for MatchResult {
    /// As people read it: "won", "draw", "lost".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MatchResult::Won => "won",
            MatchResult::Draw => "draw",
            MatchResult::Lost => "lost",
        })
    }
}

/// What a finished match reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchOutcome {
    /// Rounds the match was to have.
    pub rounds: u32,
    /// Rounds completed (both half-rounds).
    pub rounds_completed: u32,
    /// Points each seat earned in the completed half-rounds.
    pub points: [u64; 2],
    /// How many of each seat's offers were accepted.
    pub accepted_offers: [u32; 2],
    /// The seat that broke the protocol and so forfeited the match.
    pub forfeited_by: Option<usize>,
}

impl MatchOutcome {
    /// The points that count for each seat: as earned, except that a seat
    /// that forfeited scores 0.
    pub fn scored(&self) -> [u64; 2] {
        let mut scored = self.points;
        if let Some(seat) = self.forfeited_by {
            scored[seat] = 0;
        }
        scored
    }

    /// Won, drawn or lost for `seat`: a forfeit loses (and the opponent
    /// wins); otherwise more points win and equal points draw.
    pub fn result_for(&self, seat: usize) -> MatchResult {
        use std::cmp::Ordering::*;
        if let Some(f) = self.forfeited_by {
            return if f == seat {
                MatchResult::Lost
            } else {
                MatchResult::Won
            };
        }
        match self.points[seat].cmp(&self.points[1 - seat]) {
            Greater => MatchResult::Won,
            Equal => MatchResult::Draw,
            Less => MatchResult::Lost,
        }
    }
}

/// One half-round as played: who proposed, the offer, the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HalfRound {
    /// 1-based.
    pub round: u32,
    pub proposer: usize,
    pub offer: u32,
    pub accepted: bool,
}

impl HalfRound {
    /// Points of each seat from this half-round.
    pub fn points(&self) -> [u64; 2] {
        let mut p = [0u64; 2];
        if self.accepted {
            p[self.proposer] = (POT - self.offer) as u64;
            p[1 - self.proposer] = self.offer as u64;
        }
        p
    }
}

/// What the game waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaiting {
    /// The proposer's offer (after `START`).
    Offer,
    /// The responder's answer to `ANGEBOT offer`.
    Answer { offer: u32 },
}

/// One match, as a [`LineGame`] the referee drives.
#[derive(Debug, Clone)]
pub struct Match {
    params: Params,
    /// Current round, 1-based (0 only before `new` returns).
    round: u32,
    /// The current half-round's proposer.
    proposer: usize,
    awaiting: Awaiting,
    /// Steps not yet handed out by `next`.
    pending: VecDeque<Step>,
    /// The seat `next` asked for a line and whose reply is outstanding.
    expecting: Option<usize>,
    over: bool,
    half_rounds: Vec<HalfRound>,
    points: [u64; 2],
    accepted_offers: [u32; 2],
    forfeited_by: Option<usize>,
}

impl Match {
    /// A new match; `params` must be valid ([`Params::validate`]).
    pub fn new(params: Params) -> Match {
        assert!(params.validate().is_ok(), "invalid ultimatum parameters");
        let mut m = Match {
            params,
            round: 1,
            proposer: 0,
            awaiting: Awaiting::Offer,
            pending: VecDeque::new(),
            expecting: None,
            over: false,
            half_rounds: Vec::new(),
            points: [0; 2],
            accepted_offers: [0; 2],
            forfeited_by: None,
        };
        let runden = format!("RUNDEN {}", params.rounds);
        m.send(0, runden.clone());
        m.send(1, runden);
        m.start_round();
        m
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Every completed half-round so far, in order.
    pub fn half_rounds(&self) -> &[HalfRound] {
        &self.half_rounds
    }

    /// Points earned so far by each seat.
    pub fn points(&self) -> [u64; 2] {
        self.points
    }

    /// Queues a line for `seat`, joining it to the last queued step when
    /// that is a send to the same seat.
    fn send(&mut self, seat: usize, line: String) {
        if let Some(Step::Send { seat: s, lines }) = self.pending.back_mut() {
            if *s == seat {
                lines.push(line);
                return;
            }
        }
        self.pending.push_back(Step::Send {
            seat,
            lines: vec![line],
        });
    }

    /// `RUNDE r` to both, then `START` to seat 0.
    fn start_round(&mut self) {
        let runde = format!("RUNDE {}", self.round);
        self.send(1, runde.clone());
        self.send(0, runde);
        self.proposer = 0;
        self.start_half();
    }

    fn start_half(&mut self) {
        self.send(self.proposer, "START".into());
        self.awaiting = Awaiting::Offer;
        self.pending.push_back(Step::Expect {
            seat: self.proposer,
        });
    }

    /// The match is decided; lines already queued (the last `PUNKTE`) are
    /// still sent, then `next` says [`Step::Over`].
    fn finish(&mut self) {
        self.over = true;
        self.expecting = None;
    }

    fn violation(&mut self, seat: usize, rule: String, line: &str) -> Violation {
        self.forfeited_by = Some(seat);
        self.pending.clear();
        self.finish();
        Violation {
            seat,
            rule,
            line: quote(line),
        }
    }

    /// Records an answered half-round and moves on.
    fn settle(&mut self, offer: u32, accepted: bool) {
        let half = HalfRound {
            round: self.round,
            proposer: self.proposer,
            offer,
            accepted,
        };
        let pts = half.points();
        self.half_rounds.push(half);
        self.points[0] += pts[0];
        self.points[1] += pts[1];
        if accepted {
            self.accepted_offers[self.proposer] += 1;
        }
        let (proposer, responder) = (self.proposer, 1 - self.proposer);
        self.send(proposer, if accepted { "JA" } else { "NEIN" }.into());
        self.send(proposer, format!("PUNKTE {}", pts[proposer]));
        self.send(responder, format!("PUNKTE {}", pts[responder]));
        if proposer == 0 {
            self.proposer = 1;
            self.start_half();
        } else if self.round < self.params.rounds {
            self.round += 1;
            self.start_round();
        } else {
            self.finish();
        }
    }
}

/// Keeps at most [`MAX_QUOTED`] characters of a line for a report.
fn quote(line: &str) -> String {
    match line.char_indices().nth(MAX_QUOTED) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    }
}

/// The line without one trailing carriage return (a CR LF line end).
fn without_cr(line: &str) -> &str {
    crate::game::lines::trimmed(line)
}

/// Reads an offer: digits only, value 0..=1000. `Err` is the rule broken.
pub fn parse_offer(line: &str) -> Result<u32, String> {
    let s = without_cr(line);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "after START a bot prints its offer: a whole number from 0 to {POT}, digits only, \
             alone on its line (e.g. \"400\")"
        ));
    }
    let digits = s.trim_start_matches('0');
    if digits.len() > 4 || digits.parse::<u32>().unwrap_or(0) > POT {
        return Err(format!(
            "offered {}, but an offer must be from 0 to {POT} (the pot of every half-round)",
            quote(s)
        ));
    }
    Ok(digits.parse::<u32>().unwrap_or(0))
}

/// Reads an answer: exactly `JA` (accept) or `NEIN` (reject).
pub fn parse_answer(line: &str) -> Result<bool, String> {
    match without_cr(line) {
        "JA" => Ok(true),
        "NEIN" => Ok(false),
        _ => Err(
            "after ANGEBOT a bot answers JA (accept) or NEIN (reject), in capitals, \
                  alone on its line"
                .into(),
        ),
    }
}

impl LineGame for Match {
    type Outcome = MatchOutcome;

    fn n_seats(&self) -> usize {
        2
    }

    fn next(&mut self) -> Step {
        if let Some(seat) = self.expecting {
            return Step::Expect { seat };
        }
        match self.pending.pop_front() {
            Some(Step::Expect { seat }) => {
                self.expecting = Some(seat);
                Step::Expect { seat }
            }
            Some(step) => step,
            None => Step::Over {
                farewell: vec![(0, vec!["ENDE".into()]), (1, vec!["ENDE".into()])],
            },
        }
    }

    fn reply(&mut self, seat: usize, line: &str) -> Result<(), Violation> {
        if self.over {
            return Err(Violation {
                seat,
                rule: "printed a line after the end of the match".into(),
                line: quote(line),
            });
        }
        if self.expecting != Some(seat) {
            let rule = "printed a line when it was not its turn: a bot speaks only after \
                        START (its offer) and after ANGEBOT (JA or NEIN)"
                .into();
            return Err(self.violation(seat, rule, line));
        }
        self.expecting = None;
        match self.awaiting {
            Awaiting::Offer => match parse_offer(line) {
                Ok(offer) => {
                    let responder = 1 - self.proposer;
                    self.send(responder, format!("ANGEBOT {offer}"));
                    self.awaiting = Awaiting::Answer { offer };
                    self.pending.push_back(Step::Expect { seat: responder });
                    Ok(())
                }
                Err(rule) => Err(self.violation(seat, rule, line)),
            },
            Awaiting::Answer { offer } => match parse_answer(line) {
                Ok(accepted) => {
                    self.settle(offer, accepted);
                    Ok(())
                }
                Err(rule) => Err(self.violation(seat, rule, line)),
            },
        }
    }

    fn outcome(&self) -> Option<MatchOutcome> {
        self.over.then(|| MatchOutcome {
            rounds: self.params.rounds,
            rounds_completed: self
                .half_rounds
                .last()
                .map(|h| {
                    if h.proposer == 1 {
                        h.round
                    } else {
                        h.round - 1
                    }
                })
                .unwrap_or(0),
            points: self.points,
            accepted_offers: self.accepted_offers,
            forfeited_by: self.forfeited_by,
        })
    }

    /// A bot that failed outside the protocol forfeits the match, as a
    /// violation does.
    fn forfeit(&mut self, seat: usize, _reason: &str) {
        if !self.over {
            self.forfeited_by = Some(seat);
            self.pending.clear();
            self.finish();
        }
    }

    fn turn(&self) -> u64 {
        self.round as u64
    }
}

/// The seed's sample bots (its "dummybot" strategies) as scripted players
/// for tests: each reads the last line it was sent and answers it.
///
/// `more` and `semirandom` are as the seed describes them; the seed does
/// not describe `simple` and `random`, so these are our reading, chosen to
/// match the seed's example table (simple beats random and loses to more):
/// `simple` offers 250 and accepts every offer of at least 250; `random`
/// offers a uniform amount in 0..=1000 and accepts with probability 1/2.
#[cfg(test)]
pub(crate) mod sample_bots {
    use crate::seed::SplitMix64;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Strategy {
        Simple,
        More,
        Random,
        SemiRandom,
    }

    impl Strategy {
        pub fn name(self) -> &'static str {
            match self {
                Strategy::Simple => "simple",
                Strategy::More => "more",
                Strategy::Random => "random",
                Strategy::SemiRandom => "semirandom",
            }
        }

        /// The answer to the last line seen.
        pub fn answer(self, rng: &mut SplitMix64, last: &str) -> String {
            if last == "START" {
                let offer = match self {
                    Strategy::Simple => 250,
                    Strategy::More => 499,
                    Strategy::Random => rng.below(1001),
                    Strategy::SemiRandom => rng.below(501),
                };
                return offer.to_string();
            }
            let offer: u64 = last
                .strip_prefix("ANGEBOT ")
                .and_then(|x| x.parse().ok())
                .unwrap_or_else(|| panic!("a sample bot asked to answer {last:?}"));
            let accept = match self {
                Strategy::Simple => offer >= 250,
                Strategy::More => offer > 500,
                Strategy::Random => rng.below(2) == 1,
                Strategy::SemiRandom => offer >= 500 || rng.below(2) == 1,
            };
            if accept { "JA" } else { "NEIN" }.into()
        }
    }

    /// Plays a match between two sample bots, each with its own generator.
    pub fn play(rounds: u32, bots: [Strategy; 2], seeds: [u64; 2]) -> super::MatchOutcome {
        let mut game = super::Match::new(super::Params { rounds });
        let mut rngs = seeds.map(SplitMix64::new);
        crate::game::lines::play_scripted(
            &mut game,
            |seat, seen| bots[seat].answer(&mut rngs[seat], seen.last().expect("a line")),
            20 * rounds as usize + 10,
        )
        .expect("sample bots keep the protocol")
    }
}

#[cfg(test)]
mod tests;
