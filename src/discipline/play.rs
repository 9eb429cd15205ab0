//! One game (or match) of a bot discipline between built bots: the game's
//! rules from `crate::game`, the bots in the sandbox through
//! [`crate::lines::Match`], and a [`Played`] that says what happened, with
//! the transcript when asked for.
//!
//! `knobeln play --discipline`, the compile service's trial match and the
//! contest run all play through [`play`], which starts the match and hands
//! it to the discipline's [`super::seam::BotDiscipline::play`] (the one
//! place that pairs a discipline with its [`LineGame`]). It measures the wall clock of the
//! whole game (the ultimatum game's entry condition); CPU time per bot is
//! the referee's. It knows nothing of tournaments, storage or mail.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::discipline::flooding::rules::{FloodOutcome, Island};
use crate::discipline::footsteps::rules::{self as footsteps, GameOutcome};
use crate::discipline::morabaraba::rules::MorabarabaOutcome;
use crate::discipline::ultimatum::rules::{self as ultimatum, MatchOutcome};
use crate::game::lines::{Exchange, LineGame, Recorded};
use crate::lang::build::BotProgram;
use crate::lang::Toolchain;
use crate::lines::game::play_game_on;
use crate::lines::{BotFailure, LineLimits, Match, MatchError};
use crate::sandbox::folder::FolderImage;

/// The game to play and its parameters (chance included). Serializable
/// for the workers of other machines (an island travels as its text and is
/// checked again by [`Island::parse`] on arrival).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "game", rename_all = "snake_case")]
pub enum Setup {
    Ultimatum(ultimatum::Params),
    Flooding {
        #[serde(with = "island_text")]
        island: Island,
        params: crate::discipline::flooding::rules::Params,
        seed: u64,
    },
    Footsteps(footsteps::Params),
    Morabaraba,
}

impl Setup {
    pub fn seats(&self) -> usize {
        match self {
            Setup::Flooding { .. } => 1,
            _ => 2,
        }
    }
}

/// An island as its text format.
mod island_text {
    use super::Island;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(island: &Island, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&island.to_text())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Island, D::Error> {
        let text = String::deserialize(d)?;
        Island::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A finished game's outcome, per discipline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "discipline", rename_all = "snake_case")]
pub enum Outcome {
    Ultimatum(MatchOutcome),
    Flooding(FloodOutcome),
    Footsteps(GameOutcome),
    Morabaraba(MorabarabaOutcome),
}

/// Whether to keep the lines of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transcript {
    Keep,
    Drop,
}

/// Lines kept at most in a transcript (a 2500-round ultimatum match has
/// about 22,500).
pub const TRANSCRIPT_CAP: usize = 200_000;

/// What happened in one game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Played {
    /// The outcome (also after a failure: the game says what it means).
    pub outcome: Option<Outcome>,
    /// Every failure, with its bot (seat), turn and reason.
    pub failures: Vec<BotFailure>,
    /// CPU time of each seat's whole process tree, in ms.
    pub cpu_ms: Vec<u64>,
    /// Exact CPU time of each seat, in microseconds (for Morabaraba's f).
    pub cpu_us: Vec<u64>,
    /// Wall clock of the whole game, start-up included, in ms.
    pub wall_ms: u64,
    /// The first bytes of each seat's standard error.
    pub stderr: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Vec<Exchange>>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transcript_truncated: bool,
    /// The moves form of the transcript (body only), as a worker on
    /// another machine sends it instead of the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<String>,
    /// Each seat's working folder at the end, for a game played with kept
    /// folders ([`play_with_folders`]); taken out before the record is
    /// stored ([`Played::take_folders`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folders: Option<Vec<FolderImage>>,
}

impl Played {
    /// Takes each seat's kept folder out of the record.
    pub fn take_folders(&mut self) -> Option<Vec<FolderImage>> {
        self.folders.take()
    }

    /// Takes the game's transcript as its moves form (body only): from the
    /// transcript the referee kept (not if it was cut), or as a worker sent
    /// it. `None` when the game kept none.
    pub fn take_moves(&mut self) -> Option<String> {
        let truncated = std::mem::take(&mut self.transcript_truncated);
        if let Some(m) = self.moves.take() {
            self.transcript = None;
            return Some(m);
        }
        let t = self.transcript.take().filter(|_| !truncated)?;
        let forfeits: Vec<(usize, String)> = self
            .failures
            .iter()
            .filter(|f| !matches!(f.kind, crate::lines::BotFailureKind::Rule { .. }))
            .map(|f| (f.bot, f.reason.clone()))
            .collect();
        Some(super::transcript::moves_body(&super::transcript::moves_of(
            &t, &forfeits,
        )))
    }
}

/// Plays one game of `setup` between `bots` (seat order), under `limits`.
/// `Err` only for the server's own faults.
pub fn play(
    setup: &Setup,
    bots: &[(&Toolchain, &BotProgram)],
    limits: LineLimits,
    transcript: Transcript,
) -> Result<Played, MatchError> {
    play_with_folders(setup, bots, limits, transcript, None)
}

/// As [`play`]; with `folders` (one per seat), each bot's `/work` starts
/// as its kept folder, and [`Played::folders`] says what each holds at the
/// end (the quota: `limits.work_mb`).
pub fn play_with_folders(
    setup: &Setup,
    bots: &[(&Toolchain, &BotProgram)],
    limits: LineLimits,
    transcript: Transcript,
    folders: Option<&[FolderImage]>,
) -> Result<Played, MatchError> {
    assert_eq!(bots.len(), setup.seats(), "seats of the game");
    if let Some(f) = folders {
        assert_eq!(f.len(), bots.len(), "a folder per seat");
    }
    let start = Instant::now();
    let m = Match::start_with_folders(bots, limits, folders)?;
    let played = super::seam::of_setup(setup).play(setup, m, transcript)?;
    Ok(Played {
        wall_ms: start.elapsed().as_millis() as u64,
        ..played
    })
}

/// Plays `game` on `m` and says what happened (each discipline's
/// [`super::seam::BotDiscipline::play`] calls it with its game).
pub(crate) fn run<G: LineGame>(
    m: Match,
    game: G,
    transcript: Transcript,
    wrap: fn(G::Outcome) -> Outcome,
) -> Result<Played, MatchError> {
    let cap = match transcript {
        Transcript::Keep => TRANSCRIPT_CAP,
        Transcript::Drop => 0,
    };
    let mut game = Recorded::new(game, cap);
    let mut rec = play_game_on(m, &mut game)?;
    let cpu = |d: &Duration| d.as_millis() as u64;
    Ok(Played {
        outcome: rec.outcome.map(wrap),
        failures: rec.failures,
        cpu_ms: rec.bots.iter().map(|b| cpu(&b.cpu)).collect(),
        cpu_us: rec.bots.iter().map(|b| b.cpu.as_micros() as u64).collect(),
        wall_ms: 0,
        stderr: rec.bots.iter().map(|b| b.stderr.clone()).collect(),
        transcript: (transcript == Transcript::Keep).then_some(game.transcript),
        transcript_truncated: game.truncated,
        moves: None,
        folders: rec
            .bots
            .iter_mut()
            .map(|b| b.folder.take())
            .collect::<Option<Vec<_>>>(),
    })
}

impl Played {
    /// One line per seat and the outcome, for the terminal (and the site):
    /// sentences for people, seats without a name as "player 1", "player 2".
    pub fn summary(&self, names: &[String]) -> String {
        use crate::words::{counted, player};
        let mut t = String::new();
        let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| player(i));
        match &self.outcome {
            Some(Outcome::Ultimatum(o)) => {
                let s = o.scored();
                for (i, points) in s.iter().enumerate() {
                    t.push_str(&format!(
                        "{}: {} ({}), {} of {} accepted\n",
                        name(i),
                        counted(*points, "point", "points"),
                        o.result_for(i),
                        o.accepted_offers[i],
                        counted(o.rounds_completed.into(), "offer", "offers"),
                    ));
                }
                t.push_str(&format!(
                    "rounds completed: {} of {}\n",
                    o.rounds_completed, o.rounds
                ));
            }
            Some(Outcome::Flooding(o)) => {
                t.push_str(&format!(
                    "{}: survived {} ({}), flood level {}, at {}\n",
                    name(0),
                    counted(o.rounds.into(), "round", "rounds"),
                    o.end,
                    o.level,
                    o.position
                ));
                // The same words as the kit's referee.py (issue 36).
                if o.n_warnings > 0 {
                    t.push_str(&format!(
                        "{}: tried to dry water {} times\n",
                        name(0),
                        o.n_warnings
                    ));
                }
            }
            Some(Outcome::Footsteps(o)) => {
                match o.winner {
                    Some(w) => t.push_str(&format!("{} wins", name(w))),
                    None => t.push_str("draw"),
                }
                t.push_str(&format!(
                    " ({}) after {}; token on field {}, points left {} / {}\n",
                    o.ending,
                    counted(o.turns.into(), "turn", "turns"),
                    o.position,
                    o.points_left[0],
                    o.points_left[1]
                ));
            }
            Some(Outcome::Morabaraba(o)) => {
                match o.winner {
                    Some(w) => t.push_str(&format!("{} wins", name(w))),
                    None => t.push_str("draw"),
                }
                t.push_str(&format!(
                    " after {} ({}); cows left {} / {}\n",
                    counted(o.turns.into(), "turn", "turns"),
                    o.end,
                    o.cows[0],
                    o.cows[1]
                ));
            }
            None => t.push_str("no outcome\n"),
        }
        for (i, ms) in self.cpu_ms.iter().enumerate() {
            t.push_str(&format!("{}: {} ms CPU\n", name(i), ms));
        }
        t.push_str(&format!("wall clock: {} ms\n", self.wall_ms));
        for f in &self.failures {
            t.push_str(&format!("FAILURE of {}: {}\n", name(f.bot), f.reason));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::flooding::rules::{Field, FloodEnd};
    use crate::discipline::footsteps::rules::Ending;
    use crate::discipline::morabaraba::rules::MorabarabaEnd;

    fn played(outcome: Outcome) -> Played {
        Played {
            outcome: Some(outcome),
            failures: vec![],
            cpu_ms: vec![1, 2],
            cpu_us: vec![1000, 2000],
            wall_ms: 3,
            stderr: vec![],
            transcript: None,
            transcript_truncated: false,
            moves: None,
            folders: None,
        }
    }

    /// Every ending of every game, as `summary` words it.
    fn every_summary() -> Vec<String> {
        let field = Field { x: 6, y: 3 };
        let mut outcomes = vec![];
        for forfeited_by in [None, Some(0), Some(1)] {
            outcomes.push(Outcome::Ultimatum(MatchOutcome {
                rounds: 5,
                rounds_completed: 1,
                points: [700, 300],
                accepted_offers: [1, 0],
                forfeited_by,
            }));
        }
        for end in [
            FloodEnd::WalkedIntoWater { field },
            FloodEnd::FieldSank { field },
            FloodEnd::RoundCap,
            FloodEnd::RuleBroken {
                rule: "a command is GO or DRY".into(),
            },
            FloodEnd::Forfeit {
                reason: "player 1, turn 1: crashed".into(),
            },
        ] {
            outcomes.push(Outcome::Flooding(FloodOutcome {
                rounds: 1,
                end,
                level: 2,
                position: field,
                n_warnings: 2,
                warnings: vec![],
            }));
        }
        for (winner, ending) in [
            (Some(0), Ending::Goal),
            (None, Ending::OutOfPoints),
            (
                Some(1),
                Ending::IllegalBid {
                    seats: [true, false],
                },
            ),
            (
                Some(0),
                Ending::IllegalBid {
                    seats: [false, true],
                },
            ),
            (
                None,
                Ending::IllegalBid {
                    seats: [true, true],
                },
            ),
            (Some(1), Ending::Forfeit { seat: 0 }),
        ] {
            outcomes.push(Outcome::Footsteps(GameOutcome {
                winner,
                ending,
                position: 3,
                points_left: [1, 0],
                turns: 1,
            }));
        }
        for (winner, end) in [
            (Some(0), MorabarabaEnd::TwoCowsLeft { loser: 1 }),
            (Some(1), MorabarabaEnd::NoLegalMove { loser: 0 }),
            (
                Some(0),
                MorabarabaEnd::IllegalMove {
                    loser: 1,
                    rule: "the point is taken".into(),
                },
            ),
            (
                Some(1),
                MorabarabaEnd::Forfeit {
                    loser: 0,
                    reason: "player 1, turn 3: crashed".into(),
                },
            ),
            (None, MorabarabaEnd::ThreeCowsNoMill),
            (None, MorabarabaEnd::NoMillIn200Turns),
        ] {
            outcomes.push(Outcome::Morabaraba(MorabarabaOutcome {
                winner,
                end,
                turns: 1,
                cows: [3, 2],
                names: [None, None],
            }));
        }
        outcomes
            .into_iter()
            .flat_map(|o| {
                let p = played(o);
                [p.summary(&["moos".into(), "cows".into()]), p.summary(&[])]
            })
            .collect()
    }

    /// Issue 36: every outcome is a sentence for people, with no Rust
    /// `Debug` output and no "1 rounds".
    #[test]
    fn every_summary_is_words_for_people() {
        let debug = regex::Regex::new(
            r"\b[A-Z][A-Za-z]+ \{|\bSome\(|[(\[{,=]\s*None\b|\b[A-Z][a-z]+[A-Z][A-Za-z0-9]*\(|\([A-Z][a-z]+[A-Z][A-Za-z0-9]*\)|[A-Za-z]::[A-Za-z]|\b1 (round|turn|point|offer|cow)s\b",
        )
        .unwrap();
        for s in every_summary() {
            assert!(!debug.is_match(&s), "{s}");
        }
        let all = every_summary().join("");
        for words in [
            "moos: survived 1 round (the field 6,3 sank under the bot), flood level 2, at 6,3",
            "the bot walked into the water at 6,3",
            "moos: 700 points (won), 1 of 1 offer accepted",
            "cows wins (player 1 made an illegal bid) after 1 turn;",
            "draw (both players made an illegal bid)",
            "player 2 wins (player 1 forfeited)",
            "moos wins after 1 turn (player 2 broke a rule: the point is taken)",
            "draw after 1 turn (no mill in 200 turns)",
            "moos: tried to dry water 2 times",
        ] {
            assert!(all.contains(words), "{words}\n{all}");
        }
    }
}
