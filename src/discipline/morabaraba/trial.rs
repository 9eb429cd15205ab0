//! Morabaraba's trial of a new bot: a game in each colour against the
//! demo bot `first`, and the first one again: a bot whose moves differ
//! between the two runs of the same game is not deterministic, which the
//! rules forbid.
//!
//! What it deliberately does not do: build bots or blame them (the shared
//! steps of `crate::discipline::trial`, the referee's verdicts).

use super::rules::MorabarabaOutcome;
use crate::discipline::game::Transcript;
use crate::discipline::seam::{BotDiscipline, Seat};
use crate::discipline::trial::steps::{
    budgeted, demo_opponent, fail, first_difference, TrialError, TrialReport, TRIAL_GAME_SECS,
};
use crate::discipline::Sections;
use crate::game::lines::Said;

pub fn trial(
    seam: &dyn BotDiscipline,
    cfg: &Sections<'_>,
    bot: Seat<'_>,
) -> Result<TrialReport, TrialError> {
    let mut lines = Vec::new();
    let mut passed = true;
    let setup = super::data::setup();
    let (tc, prog) = demo_opponent(seam, "first.c")?;
    let limits = budgeted(cfg.morabaraba.limits().line_limits(), TRIAL_GAME_SECS);
    let mut first_run: Option<Vec<String>> = None;
    for (me, seats) in [
        (0usize, [bot, (&tc, &prog)]),
        (1, [(&tc, &prog), bot]),
        (0, [bot, (&tc, &prog)]),
    ] {
        let p = seam.play_bots(&setup, &seats, limits, Transcript::Keep, None)?;
        let moves: Vec<String> = p
            .transcript
            .iter()
            .flatten()
            .filter(|e| e.seat == me && e.said == Said::ByBot)
            .map(|e| e.line.clone())
            .collect();
        if me == 0 {
            if let Some(before) = &first_run {
                if *before != moves {
                    passed = false;
                    lines.push(format!(
                        "FAILURE: your bot is not deterministic: the same game \
                         played twice got different moves from it. Use no \
                         random numbers and no clock. {}",
                        first_difference(before, &moves)
                    ));
                } else {
                    lines.push(
                        "The first game played again: the same moves \
                         (deterministic)."
                            .into(),
                    );
                }
                continue;
            }
            first_run = Some(moves);
        }
        let colour = crate::words::player(me);
        if let Some(o) = &p.outcome {
            let o = o.get::<MorabarabaOutcome>();
            let verdict = match o.winner {
                Some(w) if w == me => "you won",
                Some(_) => "you lost",
                None => "a draw",
            };
            lines.push(format!(
                "Trial game against the demo bot first (you are {colour}): {verdict} \
                 after {} ({}), {} ms of CPU.",
                crate::words::counted(o.turns.into(), "turn", "turns"),
                o.end,
                p.cpu_ms[me]
            ));
        }
        passed &= !fail(
            &mut lines,
            &p,
            me,
            &format!("the trial game (you are {colour})"),
        );
    }
    Ok(TrialReport { passed, lines })
}
