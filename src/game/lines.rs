//! The seam between the games of the bot disciplines (issue 14) and the
//! referee that runs bots: a game that talks to its seats in lines of text.
//!
//! A [`LineGame`] is a pure state machine. The referee asks it what happens
//! next ([`LineGame::next`]): send lines to a seat, wait for one line from a
//! seat, or the game is over. It hands every line a bot printed to
//! [`LineGame::reply`], which either accepts it (and changes the state) or
//! says which rule the line broke. Simultaneous moves (FootSteps' secret
//! bids) are two `Expect`s in a row before anything is sent; chance (the
//! flooding island's cards) comes from a seed given to the game's
//! constructor. The game knows nothing of processes, pipes, time or CPU: the
//! referee owns those limits and their blame.
//!
//! **Invariant:** a `LineGame` never does I/O, never reads a clock and never
//! draws a random number except from the seed it was given.

use serde::{Deserialize, Serialize};

/// What the referee does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Send these lines (each without its line end) to `seat`.
    Send { seat: usize, lines: Vec<String> },
    /// Wait for one line from `seat` and give it to [`LineGame::reply`].
    Expect { seat: usize },
    /// The game is over; every seat gets its farewell lines (e.g. `ENDE`,
    /// `fin`, `END`, nine zeros) and then ends.
    Over { farewell: Vec<(usize, Vec<String>)> },
}

/// A line that broke a rule of the game: the seat's fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub seat: usize,
    /// A sentence for the participant: which rule, and how to keep it.
    pub rule: String,
    /// The offending line, as printed (capped by the referee).
    pub line: String,
}

/// A game whose players are programs that read and write lines.
pub trait LineGame {
    /// What a finished game reports (points, winner, rounds survived, …).
    type Outcome: Clone + std::fmt::Debug + Serialize;

    /// How many seats (bots) the game has.
    fn n_seats(&self) -> usize;

    /// The next step. After [`Step::Over`], it keeps returning `Over`.
    fn next(&mut self) -> Step;

    /// The line `seat` printed in answer to the last [`Step::Expect`]
    /// (without its line end). `Err` ends the game: the seat broke a rule.
    fn reply(&mut self, seat: usize, line: &str) -> Result<(), Violation>;

    /// The outcome, once the game is over (also after a violation: the
    /// game says what a violation means, e.g. a lost game).
    fn outcome(&self) -> Option<Self::Outcome>;

    /// `seat` failed outside the game's rules (it crashed, ran out of time
    /// or memory, stopped answering): the game ends as the game says a
    /// forfeit ends (a lost match, the rounds completed, …). `reason` is the
    /// referee's sentence. No effect once the game is over.
    fn forfeit(&mut self, seat: usize, reason: &str);

    /// The turn the game is in, for failure reports ("round 17").
    fn turn(&self) -> u64;

    /// A game whose CPU limit is a budget per round, counted over the
    /// whole game (the flooding island's "0.1 s per round", which island.txt
    /// illustrates as "77 rounds, at most 7.7 s"): `Some(r)`, the rounds
    /// begun so far. The referee then lets the bot have used, by now, the
    /// start-up allowance and `r` times the per-reply CPU time, all
    /// together. The default, `None`: each reply has a limit of its own.
    fn cpu_rounds(&self) -> Option<u64> {
        None
    }

    /// After [`LineGame::reply`] returned a violation: the other seats that
    /// broke a rule in the same step, each with its own rule and line
    /// (FootSteps' simultaneous bids). The default: none.
    fn also_broken(&self) -> Vec<Violation> {
        Vec::new()
    }
}

/// A line as the seeds' engines read a number or a word from a stream:
/// blanks (spaces, tabs) around it and a carriage return at the end do not
/// count; what is left must be exactly the content (issue 27: an offer
/// `500 ` is 500, `5 00` is no number).
pub fn trimmed(line: &str) -> &str {
    line.trim_matches(|c| c == ' ' || c == '\t' || c == '\r')
}

/// Who said a line of a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Said {
    /// The referee, to the seat.
    ToBot,
    /// The seat, to the referee.
    ByBot,
}

/// One line of a game's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    pub seat: usize,
    pub said: Said,
    pub line: String,
}

/// A game that keeps its transcript: every line sent to a seat and every
/// line a seat printed, in order (at most `cap` lines; `truncated` says
/// whether more were left out). It plays exactly as the game it wraps.
#[derive(Debug, Clone)]
pub struct Recorded<G> {
    pub game: G,
    pub transcript: Vec<Exchange>,
    pub truncated: bool,
    cap: usize,
    farewell_noted: bool,
}

impl<G> Recorded<G> {
    pub fn new(game: G, cap: usize) -> Recorded<G> {
        Recorded {
            game,
            transcript: Vec::new(),
            truncated: false,
            cap,
            farewell_noted: false,
        }
    }

    fn note(&mut self, seat: usize, said: Said, line: &str) {
        if self.transcript.len() < self.cap {
            self.transcript.push(Exchange {
                seat,
                said,
                line: line.to_string(),
            });
        } else {
            self.truncated = true;
        }
    }
}

/// The most bytes of one line a transcript keeps (longer lines are cut,
/// with a note of how much was left out).
pub const STORED_LINE_BYTES: usize = 256;

/// `line` as a transcript keeps it: at most [`STORED_LINE_BYTES`] of it.
pub fn stored_line(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= STORED_LINE_BYTES {
        return line.into();
    }
    let mut end = STORED_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}[... {} more bytes]", &line[..end], line.len() - end).into()
}

impl<G: LineGame> LineGame for Recorded<G> {
    type Outcome = G::Outcome;

    fn n_seats(&self) -> usize {
        self.game.n_seats()
    }

    fn next(&mut self) -> Step {
        let step = self.game.next();
        match &step {
            Step::Send { seat, lines } => {
                for l in lines {
                    self.note(*seat, Said::ToBot, l);
                }
            }
            Step::Over { farewell } => {
                // `Over` repeats; the farewell is written down once.
                if !self.farewell_noted {
                    self.farewell_noted = true;
                    for (seat, lines) in farewell {
                        for l in lines {
                            self.note(*seat, Said::ToBot, l);
                        }
                    }
                }
            }
            Step::Expect { .. } => {}
        }
        step
    }

    fn reply(&mut self, seat: usize, line: &str) -> Result<(), Violation> {
        let result = self.game.reply(seat, line);
        // Kept as the rules read it: an accepted line without the blanks
        // around it (which do not count), any line cut at
        // STORED_LINE_BYTES: what a bot prints never grows a record
        // beyond what its game means.
        let kept = match &result {
            Ok(()) => trimmed(line),
            Err(_) => line,
        };
        self.note(seat, Said::ByBot, &stored_line(kept));
        result
    }

    fn outcome(&self) -> Option<Self::Outcome> {
        self.game.outcome()
    }

    fn forfeit(&mut self, seat: usize, reason: &str) {
        self.game.forfeit(seat, reason)
    }

    fn turn(&self) -> u64 {
        self.game.turn()
    }

    fn cpu_rounds(&self) -> Option<u64> {
        self.game.cpu_rounds()
    }

    fn also_broken(&self) -> Vec<Violation> {
        self.game.also_broken()
    }
}

/// Plays a game against scripted seats (a closure per step): for tests of
/// game modules without processes. `answer(seat, lines_seen_by_seat)`
/// returns the seat's next line. Returns the outcome, or the violation.
pub fn play_scripted<G: LineGame>(
    game: &mut G,
    mut answer: impl FnMut(usize, &[String]) -> String,
    max_steps: usize,
) -> Result<G::Outcome, Violation> {
    let mut seen: Vec<Vec<String>> = vec![Vec::new(); game.n_seats()];
    for _ in 0..max_steps {
        match game.next() {
            Step::Send { seat, lines } => seen[seat].extend(lines),
            Step::Expect { seat } => {
                let line = answer(seat, &seen[seat]);
                game.reply(seat, &line)?;
            }
            Step::Over { .. } => {
                return Ok(game.outcome().expect("an outcome once over"));
            }
        }
    }
    panic!("the game did not end within {max_steps} steps");
}
