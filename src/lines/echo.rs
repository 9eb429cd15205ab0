//! The echo protocol: a reference protocol for tests and the benchmark,
//! the size of the ultimatum game's exchange (2500 rounds, two bots, the
//! starting bot alternating).
//!
//! Each round `r`, each bot in turn gets `ECHO x` (x from the seed) and
//! must answer `x`; every right answer scores a point. At the end every
//! bot gets `END` and may exit. Not a discipline: it exists to check that
//! bots in every language can play, and what a match costs.

use super::{Match, Stop};
use crate::seed;

/// Plays `rounds` rounds; returns each bot's points.
pub fn play_echo(m: &mut Match, rounds: u32, game_seed: u64) -> Result<Vec<u64>, Stop> {
    let n = m.n_bots();
    let mut points = vec![0u64; n];
    for r in 1..=rounds {
        m.set_turn(r);
        for k in 0..n {
            let bot = (k + r as usize - 1) % n;
            let x = seed::derive(game_seed, &[r as u64, bot as u64]) % 1000;
            let reply = m.ask(bot, &format!("ECHO {x}"))?;
            if reply.trim() != x.to_string() {
                return Err(m.broken_rule(bot, &format!("the answer to ECHO {x} is {x}"), &reply));
            }
            points[bot] += 1;
        }
    }
    for bot in 0..n {
        // A bot that already left after its last answer is fine here.
        let _ = m.send(bot, "END");
    }
    Ok(points)
}
