//! What one game of a bot discipline is and what became of it, as data:
//! its [`Setup`], its [`Outcome`], the [`Played`] record (CPU, failures,
//! transcript, folders) and [`run`], which drives a discipline's
//! `LineGame` on a started match. Starting the match and choosing the
//! discipline is [`super::play`]'s; storing and judging is not here.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::data::{Data, OutcomeKind, SetupKind, Tagged};
use super::Discipline;
use crate::game::lines::{Exchange, LineGame, Recorded, Step};
use crate::lines::game::play_game_on;
use crate::lines::{BotFailure, Match, MatchError};
use crate::sandbox::folder::FolderImage;

/// The game to play and its parameters (chance included), as its
/// discipline's own type ([`super::data`]): stored with a game and sent to
/// the workers of other machines (decoded on arrival by the discipline,
/// which checks it again: a flooding island by `Island::parse`).
pub type Setup = Tagged<SetupKind>;

/// A finished game's outcome, as its discipline's own type.
pub type Outcome = Tagged<OutcomeKind>;

impl Setup {
    /// How many bots the game seats.
    pub fn seats(&self) -> usize {
        self.discipline().seats()
    }
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
    /// folders ([`play_with_folders`](crate::discipline::play::play_with_folders)); taken out before the record is
    /// stored ([`Played::take_folders`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folders: Option<Vec<FolderImage>>,
}

/// Plays `game` on `m` and says what happened (each discipline's
/// [`super::seam::BotDiscipline::play`] calls it with its game).
pub fn run<G: LineGame>(
    m: Match,
    game: G,
    transcript: Transcript,
    discipline: Discipline,
) -> Result<Played, MatchError>
where
    G::Outcome: Data,
{
    let cap = match transcript {
        Transcript::Keep => TRANSCRIPT_CAP,
        Transcript::Drop => 0,
    };
    let mut game = Recorded::new(game, cap);
    let mut rec = play_game_on(m, &mut game)?;
    let cpu = |d: &Duration| d.as_millis() as u64;
    Ok(Played {
        outcome: rec.outcome.map(|o| Outcome::new(discipline, o)),
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

/// Longest text a worker may put into a bot failure's rule or problem.
pub const MAX_RULE_TEXT: usize = 300;

/// Whether a text a worker sent is at most `max` characters and has no
/// control characters (checked before it reaches a page or a mail).
pub fn printable(t: &str, max: usize) -> bool {
    t.chars().count() <= max && !t.chars().any(char::is_control)
}

/// What a game between scripted players ended with: its outcome (`None`:
/// it ended outside the rules) and its transcript.
pub type ScriptedGame = (Option<Outcome>, Vec<Exchange>);

/// Plays `game` by its rules alone, no process, with `answer(game, seat,
/// the last line sent to that seat)` for every line asked, as the referee
/// drives it (a discipline's scripted players for the site's benchmark,
/// `crate::discipline::seam::ScriptedPlayers`). A line that breaks the
/// rules ends the game there; at most ten million steps.
pub fn scripted<G: LineGame>(
    d: Discipline,
    game: G,
    mut answer: impl FnMut(&G, usize, &str) -> String,
) -> ScriptedGame
where
    G::Outcome: Data,
{
    let mut game = Recorded::new(game, TRANSCRIPT_CAP);
    let mut last = vec![String::new(); game.n_seats()];
    for _ in 0..10_000_000 {
        match game.next() {
            Step::Send { seat, lines } => {
                if let Some(l) = lines.last() {
                    last[seat] = l.clone();
                }
            }
            Step::Expect { seat } => {
                let line = answer(&game.game, seat, &last[seat]);
                if game.reply(seat, &line).is_err() {
                    let _ = game.next();
                    break;
                }
            }
            Step::Over { .. } => break,
        }
    }
    (game.outcome().map(|o| Outcome::new(d, o)), game.transcript)
}
