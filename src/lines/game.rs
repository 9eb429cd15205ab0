//! Drives a pure [`LineGame`] (the rules of a bot discipline) on a
//! [`Match`] (the bots in their sandboxes): the one adapter between the
//! games of `crate::game` and the referee core.
//!
//! A line that breaks a game rule ends the match with that bot's
//! [`BotFailureKind::Rule`](crate::lines::BotFailureKind::Rule); a bot that fails outside the rules (time, CPU,
//! memory, a crash) ends it too, and the game is told ([`LineGame::forfeit`])
//! so that it can say what a forfeit means for the score. Either way the
//! record carries the game's outcome and every failure with its bot, turn
//! and reason.

use super::{BotFailure, Match, MatchError, MatchRecord, Stop};
use crate::game::lines::{LineGame, Step};

/// Plays `game` on `m` to its end: the outcome (after a forfeit too) and the
/// failures. `Err` only for the server's own faults.
pub fn play_game<G: LineGame>(
    m: Match,
    mut game: G,
) -> Result<MatchRecord<G::Outcome>, MatchError> {
    play_game_on(m, &mut game)
}

/// As [`play_game`], leaving the game with the caller (e.g. a
/// [`crate::game::lines::Recorded`] game, for its transcript).
pub fn play_game_on<G: LineGame>(
    mut m: Match,
    game: &mut G,
) -> Result<MatchRecord<G::Outcome>, MatchError> {
    let result = drive(&mut m, game);
    let (late, bots) = m.finish().map_err(MatchError::Io)?;
    let failures: Vec<BotFailure> = match result {
        Ok(()) => late,
        Err(Stop::Failed(failures)) => failures,
        Err(Stop::Fault(e)) => return Err(e),
    };
    for f in &failures {
        game.forfeit(f.bot, &f.reason);
    }
    Ok(MatchRecord {
        outcome: game.outcome(),
        failures,
        bots,
    })
}

/// Runs the game's steps on the match until the game is over.
fn drive<G: LineGame>(m: &mut Match, game: &mut G) -> Result<(), Stop> {
    loop {
        match game.next() {
            Step::Send { seat, lines } => {
                for line in &lines {
                    m.send(seat, line)?;
                }
            }
            Step::Expect { seat } => {
                m.set_turn(u32::try_from(game.turn()).unwrap_or(u32::MAX));
                if let Some(rounds) = game.cpu_rounds() {
                    m.allow_rounds(seat, rounds);
                }
                let line = m.receive(seat)?;
                if let Err(v) = game.reply(seat, &line) {
                    // Each bot is blamed with its own line (in FootSteps the
                    // bid that broke the rule may be the other seat's, read
                    // before this one), and every bot that broke a rule in
                    // this step is listed.
                    let mut broken = vec![v];
                    broken.extend(game.also_broken());
                    let stop = m.broken_rules(
                        &broken
                            .iter()
                            .map(|v| (v.seat, v.rule.as_str(), v.line.as_str()))
                            .collect::<Vec<_>>(),
                    );
                    // The others still learn that the game is over.
                    if let Step::Over { farewell } = game.next() {
                        for (seat, lines) in farewell {
                            for line in &lines {
                                let _ = m.farewell(seat, line);
                            }
                        }
                    }
                    return Err(stop);
                }
            }
            Step::Over { farewell } => {
                // A bot that left after its last line is fine here.
                for (seat, lines) in farewell {
                    for line in &lines {
                        let _ = m.farewell(seat, line);
                    }
                }
                return Ok(());
            }
        }
    }
}
