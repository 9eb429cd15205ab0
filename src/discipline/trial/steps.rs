//! The steps every bot discipline's trial is made of (each discipline's
//! own trial is its folder's `trial.rs`): a demo opponent built once per
//! process, the limits of a trial game, a failure and what the bot wrote
//! to standard error as report lines, where two runs of one game differ.
//!
//! What it deliberately does not do: choose or play a discipline's trial
//! ([`super`] finds the discipline's seam; the seam plays its games).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::discipline::bots::{build_bot, Built, Source};
use crate::discipline::game::Played;
use crate::discipline::seam::BotDiscipline;
pub use crate::discipline::seam::{TrialError, TrialReport};
use crate::draw::visible;
use crate::lang::build::{BotProgram, BuildLimits};
use crate::lang::{LanguageTable, Toolchain, Toolchains};
use crate::lines::LineLimits;

/// A demo bot, built once per process.
pub fn demo_opponent(
    seam: &dyn BotDiscipline,
    file: &str,
) -> Result<(Toolchain, BotProgram), TrialError> {
    let d = seam.discipline();
    static CACHE: OnceLock<Mutex<HashMap<String, (Toolchain, BotProgram)>>> = OnceLock::new();
    let key = format!("{d}/{file}");
    let cache = CACHE.get_or_init(Default::default);
    if let Some(b) = cache.lock().expect("cache").get(&key) {
        return Ok(b.clone());
    }
    let bot = seam
        .demo_bots()
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
pub fn fail(lines: &mut Vec<String>, p: &Played, seat: usize, what: &str) -> bool {
    let mut any = false;
    for f in p.failures.iter().filter(|f| f.bot == seat) {
        any = true;
        lines.push(format!("FAILURE in {what}: {}", visible(&f.reason)));
    }
    if any {
        lines.extend(stderr_tail(p.stderr.get(seat).map_or("", String::as_str)));
    }
    any
}

/// Where two runs of the same game first differ, in the bot's own lines
/// (a sentence; each line cut).
pub fn first_difference(first: &[String], second: &[String]) -> String {
    let cut = |l: Option<&String>| match l {
        Some(l) => {
            let l = visible(l);
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
pub(crate) fn stderr_tail(stderr: &str) -> Vec<String> {
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
        let l = visible(l);
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
pub fn budgeted(limits: LineLimits, secs: u64) -> LineLimits {
    LineLimits {
        match_wall: Some(std::time::Duration::from_secs(secs)),
        ..limits
    }
}

#[cfg(test)]
mod tests {

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

    /// Hostile review (issue 38's leftovers): what a bot wrote reaches its
    /// report mail (plain text) as visible escapes: its standard error,
    /// a failure's reason, the lines of two runs that differ.
    #[test]
    fn a_bots_bidi_override_or_control_shows_as_its_escape_in_its_report() {
        use crate::lines::{BotFailure, BotFailureKind};
        let hostile = crate::draw::tests::HIDING;
        let p = Played {
            outcome: None,
            failures: vec![BotFailure {
                bot: 0,
                turn: 1,
                kind: BotFailureKind::Output {
                    problem: "x".into(),
                },
                line: None,
                reason: format!("it printed {hostile}"),
            }],
            cpu_ms: vec![0],
            cpu_us: vec![0],
            wall_ms: 0,
            stderr: vec![hostile.replace('\n', " ")],
            transcript: None,
            transcript_truncated: false,
            moves: None,
            folders: None,
        };
        let mut lines = Vec::new();
        assert!(fail(&mut lines, &p, 0, "the first game"));
        lines.push(first_difference(&[hostile.into()], &["B".into()]));
        for l in &lines {
            assert_eq!(crate::draw::visible(l), l.as_str());
        }
        assert!(lines[0].contains("\\u{202e}txt.exe"), "{lines:?}");
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
