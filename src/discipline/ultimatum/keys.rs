//! What the contest stores of a ultimatum game beside its moves: the
//! planner's result of a played game, read from its key (the planner's, as
//! JSON) and what was played, and which repetition of its pairing the key
//! is (the first few keep their transcripts).
//!
//! What it deliberately does not do: store or play anything (the contest
//! run, `crate::contest::bots`, calls it with a game it played).

use super::planner::{slot_seats, MatchKey, PlayedMatch};
use super::rules::MatchOutcome;
use crate::discipline::game::Played;
use crate::tournament::TeamId;

/// The planner's result of the match of `key`: a forfeiting bot scores 0.
pub fn played(key: &str, p: &Played) -> PlayedMatch {
    let failed_seat = p.failures.first().map(|f| f.bot);
    let key: MatchKey = serde_json::from_str(key).expect("own key");
    let (points, forfeited_by) = match p.outcome.as_ref().and_then(|o| o.try_get::<MatchOutcome>())
    {
        Some(o) => (o.scored(), o.forfeited_by.or(failed_seat)),
        None => ([0, 0], failed_seat),
    };
    let mut points = points;
    if let Some(f) = forfeited_by {
        points[f] = 0;
    }
    PlayedMatch {
        key,
        points,
        forfeited_by,
    }
}

/// The match's repetition (`u32::MAX` for a key that is none).
pub fn repetition(key: &str) -> u32 {
    serde_json::from_str::<MatchKey>(key)
        .map(|k| k.repetition)
        .unwrap_or(u32::MAX)
}

/// The match's teams in seat order, from its key and the contest's
/// entries.
pub fn seats(key: &str, entries: &[TeamId]) -> Result<Vec<TeamId>, serde_json::Error> {
    let k: MatchKey = serde_json::from_str(key)?;
    Ok(slot_seats(entries, k.slot).to_vec())
}
