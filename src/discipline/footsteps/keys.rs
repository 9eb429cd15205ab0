//! What the contest stores of a FootSteps game beside its moves: the
//! planner's result of a played game, read from its key (the planner's, as
//! JSON) and what was played, and which repetition of its pairing the key
//! is (the first few keep their transcripts).
//!
//! What it deliberately does not do: store or play anything (the contest
//! run, `crate::contest::bots`, calls it with a game it played).

use super::planner::{GameKey, PlayedGame};
use crate::discipline::game::Played;
use crate::tournament::TeamId;

/// The planner's result of the game of `key` between `seats`: without an
/// outcome, the bot that did not fail wins.
pub fn played(key: &str, seats: &[TeamId], p: &Played) -> PlayedGame {
    let failed_seat = p.failures.first().map(|f| f.bot);
    let key: GameKey = serde_json::from_str(key).expect("own key");
    let winner = match p
        .outcome
        .as_ref()
        .and_then(|o| o.try_get::<super::rules::GameOutcome>())
    {
        Some(o) => o.winner.map(|w| seats[w]),
        None => failed_seat.map(|f| seats[1 - f]),
    };
    PlayedGame { key, winner }
}

/// The game's number within its pair (`u32::MAX` for a key that is none).
pub fn repetition(key: &str) -> u32 {
    serde_json::from_str::<GameKey>(key)
        .map(|k| k.game)
        .unwrap_or(u32::MAX)
}

/// The game's teams in seat order, from its key.
pub fn seats(key: &str) -> Result<Vec<TeamId>, serde_json::Error> {
    let k: GameKey = serde_json::from_str(key)?;
    Ok(k.seats().to_vec())
}
