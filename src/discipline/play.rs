//! One game (or match) of a bot discipline between built bots: the game's
//! rules from `crate::game`, the bots in the sandbox through
//! [`crate::lines::Match`], and a [`Played`] that says what happened, with
//! the transcript when asked for.
//!
//! `knobeln play --discipline`, the compile service's trial match and the
//! contest run all play through [`play`], which starts the match and hands
//! it to the discipline's [`super::seam::BotDiscipline::play`] (the one
//! place that pairs a discipline with its [`LineGame`](crate::game::lines::LineGame)). It measures the wall clock of the
//! whole game (the ultimatum game's entry condition); CPU time per bot is
//! the referee's. It knows nothing of tournaments, storage or mail.

use crate::game::lines::Exchange;
use crate::lang::build::BotProgram;
use crate::lang::Toolchain;
use crate::lines::{LineLimits, MatchError};
use crate::sandbox::folder::FolderImage;

pub use super::game::{Outcome, Played, Setup, Transcript, TRANSCRIPT_CAP};
use super::transcript::Moves;

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

/// The full transcript of a game from its stored moves, replayed by the
/// rules of its discipline (each discipline's
/// [`super::seam::BotDiscipline::expand`]). Steps are capped (a game that
/// would not end is cut), so the cost is linear in the moves and the setup.
pub fn expand(setup: &Setup, moves: &Moves) -> Vec<Exchange> {
    super::registry::of_setup(setup).expand(setup, moves)
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
    super::registry::of_setup(setup).play_bots(setup, bots, limits, transcript, folders)
}

impl Played {
    /// One line per seat and the outcome, for the terminal (and the site):
    /// sentences for people, seats without a name as "player 1", "player 2".
    pub fn summary(&self, names: &[String]) -> String {
        use crate::words::player;
        let mut t = String::new();
        let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| player(i));
        match &self.outcome {
            Some(o) => match super::registry::of(o.discipline()) {
                Some(seam) => t.push_str(&seam.outcome_text(o, names)),
                None => t.push_str("no outcome\n"),
            },
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
    use crate::discipline::flooding::rules::FloodOutcome;
    use crate::discipline::flooding::rules::{Field, FloodEnd};
    use crate::discipline::footsteps::rules::Ending;
    use crate::discipline::footsteps::rules::GameOutcome;
    use crate::discipline::morabaraba::rules::MorabarabaEnd;
    use crate::discipline::morabaraba::rules::MorabarabaOutcome;
    use crate::discipline::ultimatum::rules::MatchOutcome;

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
            outcomes.push(Outcome::new(
                crate::discipline::Discipline::ULTIMATUM,
                MatchOutcome {
                    rounds: 5,
                    rounds_completed: 1,
                    points: [700, 300],
                    accepted_offers: [1, 0],
                    forfeited_by,
                },
            ));
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
            outcomes.push(Outcome::new(
                crate::discipline::Discipline::FLOODING,
                FloodOutcome {
                    rounds: 1,
                    end,
                    level: 2,
                    position: field,
                    n_warnings: 2,
                    warnings: vec![],
                },
            ));
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
            outcomes.push(Outcome::new(
                crate::discipline::Discipline::FOOTSTEPS,
                GameOutcome {
                    winner,
                    ending,
                    position: 3,
                    points_left: [1, 0],
                    turns: 1,
                },
            ));
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
            outcomes.push(Outcome::new(
                crate::discipline::Discipline::MORABARABA,
                MorabarabaOutcome {
                    winner,
                    end,
                    turns: 1,
                    cows: [3, 2],
                    names: [None, None],
                },
            ));
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
