//! The compile service's trial for a bot discipline: after a bot is built,
//! it plays what tells a participant whether it works, and the verdict
//! says what went wrong and how to fix it.
//!
//! - Ultimatum: the entry condition, a match of the contest's length
//!   against itself within `entry_secs` of wall clock, then a match
//!   against the demo bot `simple`.
//! - Flooding island: one game on each demo island.
//! - FootSteps: two games against the demo bot `one`, one on each side.
//! - Morabaraba: a game in each colour against the demo bot `first`, and
//!   the first one again: a bot whose moves differ between the two runs
//!   of the same game is not deterministic, which the rules forbid.
//!
//! A failure of the bot in a trial (a broken rule, a crash, a limit) or a
//! missed entry condition rejects the version. It plays games (I/O); the
//! judgement of each game is the game's and the referee's.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::bots::{build_bot, Built, Source};
use super::play::{play, Outcome, Played, Setup, Transcript};
use super::{Discipline, Sections};
use crate::discipline::flooding::rules::Island;
use crate::game::lines::Said;
use crate::lang::build::{BotProgram, BuildLimits};
use crate::lang::{LanguageTable, Toolchain, Toolchains};
use crate::lines::{BotFailureKind, LineLimits, MatchError};

/// What the trial found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialReport {
    /// No failure of the bot, and the entry condition met.
    pub passed: bool,
    /// Lines for the report, one finding each.
    pub lines: Vec<String>,
}

/// The server could not play the trial.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error("the demo bot {0} could not be built: {1}")]
    DemoBot(String, String),
    #[error(transparent)]
    Match(#[from] MatchError),
    #[error("building the demo bot: {0}")]
    Jail(#[from] crate::sandbox::jail::JailError),
}

/// A demo bot, built once per process.
pub fn demo_opponent(d: Discipline, file: &str) -> Result<(Toolchain, BotProgram), TrialError> {
    static CACHE: OnceLock<Mutex<HashMap<String, (Toolchain, BotProgram)>>> = OnceLock::new();
    let key = format!("{d}/{file}");
    let cache = CACHE.get_or_init(Default::default);
    if let Some(b) = cache.lock().expect("cache").get(&key) {
        return Ok(b.clone());
    }
    let bot = super::registry::of(d)
        .map_or(&[][..], |b| b.demo_bots())
        .iter()
        .find(|b| b.file == file)
        .ok_or_else(|| TrialError::DemoBot(key.clone(), "no such demo bot".into()))?;
    let table = LanguageTable::builtin();
    let lang = crate::lang::choose(&table, Some(file), None)
        .map_err(|e| TrialError::DemoBot(key.clone(), e))?;
    let toolchains = Toolchains::resolve_only(&table, &[&lang.language]);
    let source = Source {
        file_name: Some(file),
        declared: None,
        bytes: bot.source.as_bytes(),
    };
    match build_bot(&table, &toolchains, source, &BuildLimits::default())? {
        Built::Ready {
            toolchain, program, ..
        } => {
            let b = (*toolchain, program);
            cache.lock().expect("cache").insert(key, b.clone());
            Ok(b)
        }
        Built::Refused { why, .. } => Err(TrialError::DemoBot(key, why)),
    }
}

/// Writes down the failures of `seat` in `p`; whether there were any.
fn fail(lines: &mut Vec<String>, p: &Played, seat: usize, what: &str) -> bool {
    let mut any = false;
    for f in p.failures.iter().filter(|f| f.bot == seat) {
        any = true;
        lines.push(format!("FAILURE in {what}: {}", f.reason));
    }
    if any {
        lines.extend(stderr_tail(p.stderr.get(seat).map_or("", String::as_str)));
    }
    any
}

/// Where two runs of the same game first differ, in the bot's own lines
/// (a sentence; each line cut).
fn first_difference(first: &[String], second: &[String]) -> String {
    let cut = |l: Option<&String>| match l {
        Some(l) => {
            let mut s: String = l.chars().take(STDERR_LINE_CHARS).collect();
            if l.chars().count() > STDERR_LINE_CHARS {
                s.push_str(" [...]");
            }
            format!("\"{s}\"")
        }
        None => "nothing (the game was over for it)".to_string(),
    };
    let at = first
        .iter()
        .zip(second)
        .position(|(a, b)| a != b)
        .unwrap_or(first.len().min(second.len()));
    format!(
        "Its move {} was {} the first time and {} the second.",
        at + 1,
        cut(first.get(at)),
        cut(second.get(at))
    )
}

/// Lines of a failing bot's standard error shown in its report: the last
/// ones, each cut, so that a crash says where (issue 36: the stored
/// stderr was never shown).
pub const STDERR_LINES_SHOWN: usize = 12;
/// Characters of one standard-error line shown.
pub const STDERR_LINE_CHARS: usize = 160;

/// The report's lines for the tail of a bot's standard error (none when
/// it wrote nothing).
fn stderr_tail(stderr: &str) -> Vec<String> {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let skip = lines.len().saturating_sub(STDERR_LINES_SHOWN);
    let mut out = vec![if skip > 0 {
        format!("  The last {STDERR_LINES_SHOWN} lines your bot wrote to standard error:")
    } else {
        "  What your bot wrote to standard error:".to_string()
    }];
    for l in &lines[skip..] {
        let mut shown: String = l.chars().take(STDERR_LINE_CHARS).collect();
        if l.chars().count() > STDERR_LINE_CHARS {
            shown.push_str(" [...]");
        }
        out.push(format!("  | {shown}"));
    }
    out
}

/// Wall clock for one trial game of a compile request (the ultimatum's are
/// its entry condition's `entry_secs`): the whole request plays at most
/// three trial games, so its games cost at most three times this.
pub const TRIAL_GAME_SECS: u64 = 60;

/// `limits` with a wall-clock budget of `secs` for the whole match.
fn budgeted(limits: LineLimits, secs: u64) -> LineLimits {
    LineLimits {
        match_wall: Some(std::time::Duration::from_secs(secs)),
        ..limits
    }
}

/// Plays the trial of `bot` for the contest's discipline.
pub fn trial(
    d: Discipline,
    cfg: &Sections<'_>,
    bot: (&Toolchain, &BotProgram),
    seed: u64,
) -> Result<TrialReport, TrialError> {
    let mut lines = Vec::new();
    let mut passed = true;
    match d {
        Discipline::Knobeln => {}
        Discipline::Ultimatum => {
            let u = cfg.ultimatum;
            // The entry match is stopped as soon as it is over its time:
            // a bot that answers slowly costs the server `entry_secs`.
            let limits = budgeted(u.limits().line_limits(), u.entry_secs);
            let setup = Setup::Ultimatum(u.params());
            let p = play(&setup, &[bot, bot], limits, Transcript::Drop)?;
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
            let (tc, prog) = demo_opponent(d, "simple.c")?;
            // A match of the same size: the same budget.
            let p = play(&setup, &[bot, (&tc, &prog)], limits, Transcript::Drop)?;
            if let Some(Outcome::Ultimatum(o)) = &p.outcome {
                let s = o.scored();
                lines.push(format!(
                    "Trial match against the demo bot simple ({} rounds): your points {}, \
                     simple's points {}; {} of your offers were accepted.",
                    o.rounds, s[0], s[1], o.accepted_offers[0]
                ));
            }
            passed &= !fail(&mut lines, &p, 0, "the trial match against simple");
        }
        Discipline::Flooding => {
            let f = cfg.flooding;
            for (k, (name, text)) in crate::discipline::flooding::TEST_ISLANDS.iter().enumerate() {
                let island = Island::parse(text).expect("the demo islands are valid");
                let game_seed = crate::seed::derive(seed, &[k as u64]);
                let setup = Setup::Flooding {
                    island,
                    params: f.params(),
                    seed: game_seed,
                };
                let limits = budgeted(f.limits().line_limits(), TRIAL_GAME_SECS);
                let p = play(&setup, &[bot], limits, Transcript::Drop)?;
                if let Some(Outcome::Flooding(o)) = &p.outcome {
                    lines.push(format!(
                        "Trial game on the island {name}, seed {game_seed}: survived {} ({}). \
                         The kit's referee plays it again: {}",
                        crate::words::counted(o.rounds.into(), "round", "rounds"),
                        o.end,
                        flooding_replay_command(name, game_seed, f.max_rounds)
                    ));
                    if o.n_warnings > 0 {
                        lines.push(format!(
                            "  Warning: {} times your bot tried to dry water or a field \
                             off the island (that does nothing).",
                            o.n_warnings
                        ));
                    }
                }
                passed &= !fail(&mut lines, &p, 0, &format!("the game on the island {name}"));
            }
        }
        Discipline::Footsteps => {
            let (tc, prog) = demo_opponent(d, "one.c")?;
            let setup = Setup::Footsteps(cfg.footsteps.params());
            let limits = budgeted(cfg.footsteps.limits().line_limits(), TRIAL_GAME_SECS);
            for (me, seats) in [(0usize, [bot, (&tc, &prog)]), (1, [(&tc, &prog), bot])] {
                let p = play(&setup, &seats, limits, Transcript::Drop)?;
                let side = format!(
                    "{} on the {}",
                    crate::words::player(me),
                    if me == 0 { "left" } else { "right" }
                );
                if let Some(Outcome::Footsteps(o)) = &p.outcome {
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
        }
        Discipline::Morabaraba => {
            let (tc, prog) = demo_opponent(d, "first.c")?;
            let limits = budgeted(cfg.morabaraba.limits().line_limits(), TRIAL_GAME_SECS);
            let mut first_run: Option<Vec<String>> = None;
            for (me, seats) in [
                (0usize, [bot, (&tc, &prog)]),
                (1, [(&tc, &prog), bot]),
                (0, [bot, (&tc, &prog)]),
            ] {
                let p = play(&Setup::Morabaraba, &seats, limits, Transcript::Keep)?;
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
                if let Some(Outcome::Morabaraba(o)) = &p.outcome {
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
        }
    }
    Ok(TrialReport { passed, lines })
}

/// The kit referee's command that plays a flooding trial game again: the
/// island, the seed, and the round cap when this contest's differs from
/// the referee's default (which is the server's default).
pub fn flooding_replay_command(island: &str, seed: u64, max_rounds: u32) -> String {
    let cap = if max_rounds == crate::discipline::flooding::rules::DEFAULT_MAX_ROUNDS {
        String::new()
    } else {
        format!(" --max-rounds {max_rounds}")
    };
    format!("python3 referee.py --island island-{island}.txt --seed {seed}{cap} ./mybot")
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_flooding_replay_command_names_a_round_cap_other_than_the_referees() {
        let default = crate::discipline::flooding::rules::DEFAULT_MAX_ROUNDS;
        // The kit's referee has the server's default.
        assert!(include_str!("flooding/referee.py")
            .contains(&format!("\nDEFAULT_MAX_ROUNDS = {default}\n")));
        assert_eq!(
            flooding_replay_command("lagoon", 7, default),
            "python3 referee.py --island island-lagoon.txt --seed 7 ./mybot"
        );
        assert_eq!(
            flooding_replay_command("lagoon", 7, 50),
            "python3 referee.py --island island-lagoon.txt --seed 7 --max-rounds 50 ./mybot"
        );
    }

    use super::*;

    /// Issue 36: a determinism failure says where the two runs differ.
    #[test]
    fn the_first_difference_of_two_runs_is_named() {
        let a: Vec<String> = ["A1", "B2", "C3"].map(String::from).to_vec();
        let b: Vec<String> = ["A1", "B7"].map(String::from).to_vec();
        assert_eq!(
            first_difference(&a, &b),
            "Its move 2 was \"B2\" the first time and \"B7\" the second."
        );
        assert_eq!(
            first_difference(&b[..1], &a),
            "Its move 2 was nothing (the game was over for it) the first time and \"B2\" the second."
        );
    }

    /// Issue 36: a crash's report shows the last lines of standard error,
    /// each cut.
    #[test]
    fn the_tail_of_standard_error_is_bounded() {
        let many: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let shown = stderr_tail(&many);
        assert_eq!(shown.len(), STDERR_LINES_SHOWN + 1);
        assert_eq!(shown.last().unwrap(), "  | line 39");
        let long = stderr_tail(&"x".repeat(1000));
        assert!(long[1].len() < STDERR_LINE_CHARS + 20, "{}", long[1]);
        assert!(stderr_tail("\n  \n").is_empty());
    }
}
