//! What one game of a bot discipline is and what became of it, as data:
//! its [`Setup`], its [`Outcome`], the [`Played`] record (CPU, failures,
//! transcript, folders) and [`run`], which drives a discipline's
//! `LineGame` on a started match. Starting the match and choosing the
//! discipline is [`super::play`]'s; storing and judging is not here.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Discipline;
use crate::discipline::flooding::rules::{FloodOutcome, Island};
use crate::discipline::footsteps::rules::{self as footsteps, GameOutcome};
use crate::discipline::morabaraba::rules::MorabarabaOutcome;
use crate::discipline::ultimatum::rules::{self as ultimatum, MatchOutcome};
use crate::game::lines::{Exchange, LineGame, Recorded};
use crate::lines::game::play_game_on;
use crate::lines::{BotFailure, Match, MatchError};
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

impl Setup {
    /// The discipline this setup is a game of.
    pub fn discipline(&self) -> Discipline {
        match self {
            Setup::Ultimatum(_) => Discipline::Ultimatum,
            Setup::Flooding { .. } => Discipline::Flooding,
            Setup::Footsteps(_) => Discipline::Footsteps,
            Setup::Morabaraba => Discipline::Morabaraba,
        }
    }
}
