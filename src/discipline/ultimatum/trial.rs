//! The ultimatum game's trial of a new bot: the entry condition (a match
//! of the contest's length against itself within `entry_secs` of wall
//! clock), then a match against the demo bot `simple`.
//!
//! What it deliberately does not do: build bots or blame them (the shared
//! steps of `crate::discipline::trial`, the referee's verdicts).

use super::rules::MatchOutcome;
use crate::discipline::game::Transcript;
use crate::discipline::seam::{BotDiscipline, Seat};
use crate::discipline::trial::steps::{budgeted, demo_opponent, fail, TrialError, TrialReport};
use crate::discipline::Sections;
use crate::lines::BotFailureKind;

pub fn trial(
    seam: &dyn BotDiscipline,
    cfg: &Sections<'_>,
    bot: Seat<'_>,
) -> Result<TrialReport, TrialError> {
    let mut lines = Vec::new();
    let mut passed = true;
    let u = cfg.ultimatum;
    // The entry match is stopped as soon as it is over its time: a bot that
    // answers slowly costs the server `entry_secs`.
    let limits = budgeted(u.limits().line_limits(), u.entry_secs);
    let setup = super::data::setup(u.params());
    let p = seam.play_bots(&setup, &[bot, bot], limits, Transcript::Drop, None)?;
    let secs = p.wall_ms as f64 / 1000.0;
    let stopped = p
        .failures
        .iter()
        .any(|f| matches!(f.kind, BotFailureKind::MatchWall { .. }));
    let met = p.failures.is_empty() && p.wall_ms <= u.entry_secs * 1000;
    if stopped {
        lines.push(format!(
            "Entry condition: a match of {} rounds against itself must end within \
             {} s of wall clock; it was stopped there, unfinished: NOT met.",
            u.rounds, u.entry_secs
        ));
    } else {
        lines.push(format!(
            "Entry condition: a match of {} rounds against itself took {secs:.1} s \
             of wall clock (at most {} s allowed): {}.",
            u.rounds,
            u.entry_secs,
            if met { "met" } else { "NOT met" }
        ));
    }
    if !met {
        passed = false;
        if p.failures.is_empty() || stopped {
            lines.push(
                "Make your bot faster: it must answer each START and ANGEBOT \
                 line at once, and print each answer with a flush."
                    .into(),
            );
        }
    }
    if !stopped {
        passed &= !fail(&mut lines, &p, 0, "the match against itself (as player 1)");
        passed &= !fail(&mut lines, &p, 1, "the match against itself (as player 2)");
    }
    let (tc, prog) = demo_opponent(seam, "simple.c")?;
    // A match of the same size: the same budget.
    let p = seam.play_bots(&setup, &[bot, (&tc, &prog)], limits, Transcript::Drop, None)?;
    if let Some(o) = &p.outcome {
        let o = o.get::<MatchOutcome>();
        let s = o.scored();
        lines.push(format!(
            "Trial match against the demo bot simple ({} rounds): your points {}, \
             simple's points {}; {} of your offers were accepted.",
            o.rounds, s[0], s[1], o.accepted_offers[0]
        ));
    }
    passed &= !fail(&mut lines, &p, 0, "the trial match against simple");
    Ok(TrialReport { passed, lines })
}
