//! FootSteps' trial of a new bot: two games against the demo bot `one`,
//! one on each side.
//!
//! What it deliberately does not do: build bots or blame them (the shared
//! steps of `crate::discipline::trial`, the referee's verdicts).

use super::rules::GameOutcome;
use crate::discipline::game::Transcript;
use crate::discipline::seam::{BotDiscipline, Seat};
use crate::discipline::trial::steps::{
    budgeted, demo_opponent, fail, TrialError, TrialReport, TRIAL_GAME_SECS,
};
use crate::discipline::Sections;

pub fn trial(
    seam: &dyn BotDiscipline,
    cfg: &Sections<'_>,
    bot: Seat<'_>,
) -> Result<TrialReport, TrialError> {
    let mut lines = Vec::new();
    let mut passed = true;
    let (tc, prog) = demo_opponent(seam, "one.c")?;
    let setup = super::data::setup(cfg.footsteps.params());
    let limits = budgeted(cfg.footsteps.limits().line_limits(), TRIAL_GAME_SECS);
    for (me, seats) in [(0usize, [bot, (&tc, &prog)]), (1, [(&tc, &prog), bot])] {
        let p = seam.play_bots(&setup, &seats, limits, Transcript::Drop, None)?;
        let side = format!(
            "{} on the {}",
            crate::words::player(me),
            if me == 0 { "left" } else { "right" }
        );
        if let Some(o) = &p.outcome {
            let o = o.get::<GameOutcome>();
            let verdict = match o.winner {
                Some(w) if w == me => "you won",
                Some(_) => "you lost",
                None => "a draw",
            };
            lines.push(format!(
                "Trial game against the demo bot one (you are {side}): \
                 {verdict} after {} ({}).",
                crate::words::counted(o.turns.into(), "turn", "turns"),
                o.ending
            ));
        }
        passed &= !fail(
            &mut lines,
            &p,
            me,
            &format!("the trial game (you are {side})"),
        );
    }
    Ok(TrialReport { passed, lines })
}
