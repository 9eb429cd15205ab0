//! The compile service's trial for a bot discipline: after a bot is built,
//! it plays what tells a participant whether it works, and the verdict
//! says what went wrong and how to fix it. Each discipline's trial is its
//! folder's `trial.rs` (behind [`super::seam::BotDiscipline::trial`]),
//! made of the shared [`steps`]; here is only the dispatch by discipline.
//!
//! - Ultimatum: the entry condition, a match of the contest's length
//!   against itself within `entry_secs` of wall clock, then a match
//!   against the demo bot `simple`.
//! - Flooding island: one game on each demo island.
//! - FootSteps: two games against the demo bot `one`, one on each side.
//! - Morabaraba: a game in each colour against the demo bot `first`, and
//!   the first one again: a bot whose moves differ between the two runs
//!   of the same game is not deterministic, which the rules forbid.
//!
//! A failure of the bot in a trial (a broken rule, a crash, a limit) or a
//! missed entry condition rejects the version. It plays games (I/O); the
//! judgement of each game is the game's and the referee's.

pub mod steps;

pub use steps::*;

use super::{Discipline, Sections};
use crate::lang::build::BotProgram;
use crate::lang::Toolchain;

/// Plays the trial of `bot` for the contest's discipline (its seam's
/// [`super::seam::BotDiscipline::trial`]; KNOBELN's strategies have none
/// here: their trial game is the compile service's).
pub fn trial(
    d: Discipline,
    cfg: &Sections<'_>,
    bot: (&Toolchain, &BotProgram),
    seed: u64,
) -> Result<TrialReport, TrialError> {
    match super::registry::of(d) {
        Some(seam) => seam.trial(cfg, bot, seed),
        None => Ok(TrialReport {
            passed: true,
            lines: Vec::new(),
        }),
    }
}
