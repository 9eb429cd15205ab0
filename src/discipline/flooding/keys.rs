//! What the contest stores of a flooding island game beside its moves: the
//! planner's result of a played game, read from its key (the planner's, as
//! JSON) and what was played, and which repetition of its pairing the key
//! is (the first few keep their transcripts).
//!
//! What it deliberately does not do: store or play anything (the contest
//! run, `crate::contest::bots`, calls it with a game it played).

use super::planner::{FloodKey, IslandId, RunResult};
use crate::discipline::game::Played;
use crate::tournament::TeamId;

/// The planner's result of the game of `key`: the rounds survived (0 for
/// a game without an outcome).
pub fn played(key: &str, p: &Played) -> RunResult {
    let k: FloodKey = serde_json::from_str(key).expect("own key");
    let rounds = p
        .outcome
        .as_ref()
        .and_then(|o| o.try_get::<super::rules::FloodOutcome>())
        .map_or(0, |o| o.rounds);
    RunResult {
        team: k.team,
        island: IslandId(k.island),
        run: k.run,
        rounds,
    }
}

/// The game's run (`u32::MAX` for a key that is none).
pub fn repetition(key: &str) -> u32 {
    serde_json::from_str::<FloodKey>(key)
        .map(|k| k.run)
        .unwrap_or(u32::MAX)
}

/// The game's bot, from its key.
pub fn seats(key: &str) -> Result<Vec<TeamId>, serde_json::Error> {
    let k: FloodKey = serde_json::from_str(key)?;
    Ok(vec![k.team])
}
