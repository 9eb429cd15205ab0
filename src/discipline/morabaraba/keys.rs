//! What the contest stores of a Morabaraba game beside its moves: the
//! planner's result of a played game, read from its key (the planner's, as
//! JSON) and what was played, and which repetition of its pairing the key
//! is (the first few keep their transcripts).
//!
//! What it deliberately does not do: store or play anything (the contest
//! run, `crate::contest::bots`, calls it with a game it played).
//!
//! Morabaraba plays each pairing once: every key is its pairing's first.

use super::planner::{GameResult, Pairing};
use crate::discipline::game::Played;
use crate::discipline::MorabarabaConfig;
use crate::tournament::TeamId;

/// The planner's result of the game of `key`: without an outcome, the bot
/// that did not fail wins; the CPU times as the seed's machine's (f(V) is
/// the seed's: CPU time as its 2.0 GHz machine's).
pub fn played(key: &str, p: &Played, config: &MorabarabaConfig) -> GameResult {
    let failed_seat = p.failures.first().map(|f| f.bot);
    let pairing: Pairing = serde_json::from_str(key).expect("own key");
    let winner = match p
        .outcome
        .as_ref()
        .and_then(|o| o.try_get::<super::rules::MorabarabaOutcome>())
    {
        Some(o) => o.winner,
        None => failed_seat.map(|f| 1 - f),
    };
    let cpu = |i: usize| config.seed_micros(p.cpu_us.get(i).copied().unwrap_or(0));
    GameResult {
        pairing,
        winner,
        cpu_micros: [cpu(0), cpu(1)],
    }
}

/// The game's teams in seat order (first colour first), from its key.
pub fn seats(key: &str) -> Result<Vec<TeamId>, serde_json::Error> {
    let p: Pairing = serde_json::from_str(key)?;
    Ok(vec![p.first, p.second])
}
