//! The blame: which rule or limit a bot broke ([`BotFailureKind`]), the
//! [`BotFailure`] that names bot, turn and line, the sentence a report
//! gives it, and what a bot wrote as a record may keep it (escaped and
//! cut: [`show_line`], [`kept_stderr`]).
//!
//! Not here: deciding that a bot failed ([`super::Match`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The CPU time a frozen bot may still be charged (what it ran between the
/// stop and its taking effect): past it, it resumed itself.
pub const FROZEN_SLACK: Duration = Duration::from_millis(50);

/// Which rule or limit a bot broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "failure", rename_all = "snake_case")]
pub enum BotFailureKind {
    /// A rule of the game (the game's words).
    Rule {
        rule: String,
    },
    /// A line that is too long or not UTF-8.
    Output {
        problem: String,
    },
    /// Ended before the game was over.
    Exited {
        status: i32,
    },
    /// Killed by a signal.
    Crashed {
        signal: i32,
    },
    CpuTime {
        limit_ms: u64,
    },
    /// More CPU time for one reply than allowed (with what it computed
    /// after its previous answer before it read on, where the referee
    /// counted that: [`BotFailureKind::BusyAfterAnswer`]).
    ReplyCpu {
        limit_ms: u64,
    },
    /// More CPU time by round `rounds` than a game budgeted by rounds
    /// allows: `startup_ms + rounds × round_ms` in all.
    RoundsCpu {
        limit_ms: u64,
        rounds: u64,
        round_ms: u64,
        startup_ms: u64,
    },
    Memory {
        limit_mb: u64,
    },
    /// A system call the sandbox forbids (SIGSYS).
    ForbiddenCall,
    /// No answer within the wall clock; `waiting_for_input`: it sat in
    /// `read` on its own input (an unflushed answer).
    WallClock {
        limit_ms: u64,
        waiting_for_input: bool,
    },
    /// Stopped reading the referee's lines.
    NotReading,
    /// Printed a line when none was asked of it (after its answer, before
    /// the referee's next lines).
    Unasked,
    /// After its answer, computed more CPU time than its next reply may
    /// take before it came to rest (read its input, or blocked waiting for
    /// it): what a bot computes between its answer and its next lines
    /// counts toward its next reply, in its own CPU time, so whether a
    /// late line is caught never depends on the machine's load.
    BusyAfterAnswer {
        limit_ms: u64,
    },
    /// After its answer, did not come to rest within its next reply's
    /// wall clock (it slept, or ran on, instead of reading its input).
    AwakeAfterAnswer {
        limit_ms: u64,
    },
    /// The match's wall-clock budget ran out, and the referee had waited
    /// for this bot longest in all (its answers and the one it owed).
    MatchWall {
        limit_ms: u64,
    },
    /// The referee waited for this bot longer in all than a match allows
    /// ([`LineLimits::waited`](crate::lines::LineLimits::waited)).
    Waited {
        limit_ms: u64,
    },
    /// It ran while it was stopped for another bot's turn (it resumed
    /// itself: on cgroup v1 a stop is a signal, which `SIGCONT` undoes; or
    /// it kept its own freeze from holding, staying in the kernel):
    /// more than [`FROZEN_SLACK`] of CPU time
    /// while stopped. How much more is not part of the verdict: it is as
    /// much the machine's load's (when the referee's check came) as the
    /// bot's, and what is published must not depend on the load; the
    /// referee logs it for the organizer ([`ran_while_stopped`]). A game
    /// stored before with `ran_ms` reads as this.
    RanWhileStopped,
}

/// One bot's failure in a match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotFailure {
    /// Index of the bot in the match.
    pub bot: usize,
    pub turn: u32,
    #[serde(flatten)]
    pub kind: BotFailureKind,
    /// The offending line (escaped, at most 200 characters), if any.
    pub line: Option<String>,
    /// A sentence for the participant: which rule, which turn, what happened.
    pub reason: String,
}

/// The sentence a participant reads about a failure of `bot` (0-based) in
/// `turn`, with the offending line as shown (escaped, capped). The referee
/// and the coordinator of remote games both write it with this.
pub fn describe_bot_failure(
    bot: usize,
    turn: u32,
    kind: &BotFailureKind,
    shown: Option<&str>,
) -> String {
    let what = match kind {
        BotFailureKind::Rule { rule } => format!("broke a rule: {rule}"),
        BotFailureKind::Output { problem } => format!("sent {problem}"),
        BotFailureKind::Exited { status: -1 } => {
            "closed its standard output before the game was over".to_string()
        }
        BotFailureKind::Exited { status } => {
            format!("ended before the game was over (exit status {status})")
        }
        BotFailureKind::Crashed { signal } => format!("crashed ({})", signal_name(*signal)),
        BotFailureKind::CpuTime { limit_ms } => format!(
            "used more than {} s of CPU time in this match",
            *limit_ms as f64 / 1000.0
        ),
        BotFailureKind::ReplyCpu { limit_ms } => format!(
            "computed more than {} s of CPU time for one answer (its own time, with what it \
             computed after its previous answer before reading on: what its opponent or \
             other bots do is not counted)",
            *limit_ms as f64 / 1000.0
        ),
        BotFailureKind::RoundsCpu {
            limit_ms,
            rounds,
            round_ms,
            startup_ms,
        } => format!(
            "had used more than {} s of CPU time by round {rounds}: {} s per round, counted \
             over the game, and {} s for its start-up (its own time: the whole process tree)",
            *limit_ms as f64 / 1000.0,
            *round_ms as f64 / 1000.0,
            *startup_ms as f64 / 1000.0
        ),
        BotFailureKind::Memory { limit_mb } => {
            format!("needed more than {limit_mb} MB of memory")
        }
        BotFailureKind::ForbiddenCall => {
            "made a system call the sandbox forbids (e.g. ptrace, mount, bpf); the bot was ended"
                .to_string()
        }
        BotFailureKind::WallClock {
            limit_ms,
            waiting_for_input: true,
        } => format!(
            "gave no answer within {} s, while it was itself waiting for input: its answer \
                 is probably still in its output buffer. Flush standard output after every line \
                 (C: fflush(stdout); C++: std::flush or std::endl; Python: print(..., \
                 flush=True); Java: System.out.flush())",
            *limit_ms as f64 / 1000.0
        ),
        BotFailureKind::WallClock { limit_ms, .. } => format!(
            "gave no answer within {} s of wall clock (blocked or sleeping: waiting is \
             limited by the wall clock, computing by CPU time)",
            *limit_ms as f64 / 1000.0
        ),
        BotFailureKind::NotReading => "stopped reading the referee's lines".to_string(),
        BotFailureKind::Unasked => "printed a line nobody asked for (after its answer, before \
             the referee's next lines): print exactly the lines the protocol asks for, one \
             answer per request"
            .to_string(),
        BotFailureKind::BusyAfterAnswer { limit_ms } => format!(
            "kept computing after its answer: more than {} s of CPU time before it read the \
             referee's next lines (what a bot computes between its answer and its next lines \
             counts toward its next answer): read the next line right after printing an \
             answer",
            *limit_ms as f64 / 1000.0
        ),
        BotFailureKind::AwakeAfterAnswer { limit_ms } => format!(
            "did not come back to read the referee's next lines within {} s of wall clock \
             after its answer (it slept, or kept running, instead of reading its input)",
            *limit_ms as f64 / 1000.0
        ),
        BotFailureKind::MatchWall { limit_ms } => format!(
            "had taken the most of the match's {} s of wall clock, in the time its answers \
             took and its returns to its input after them, when they were over (the match \
             was stopped there): it must answer faster",
            *limit_ms as f64 / 1000.0
        ),
        BotFailureKind::RanWhileStopped => format!(
            "ran for more than {} ms of CPU time while it was stopped for another bot's turn \
             (it resumed itself, e.g. with SIGCONT, or stayed in the kernel past its stop): a \
             bot must not take the CPU its opponent is given",
            FROZEN_SLACK.as_millis()
        ),
        BotFailureKind::Waited { limit_ms } => format!(
            "was waited for more than {} s of wall clock in all in this match (its start-up, \
             its answers and its returns to its input after them, together; each bot has \
             that much per match): a bot that sleeps or blocks instead of answering is \
             stopped there",
            *limit_ms as f64 / 1000.0
        ),
    };
    let mut reason = format!("player {}, turn {turn}: {what}", bot + 1);
    if let Some(l) = shown {
        reason.push_str(&format!("; its line: \"{l}\""));
    }
    reason
}

/// The verdict on a bot charged `ran` of CPU time while it was stopped:
/// none within [`FROZEN_SLACK`] (what it ran
/// between the stop and its taking effect), else
/// [`BotFailureKind::RanWhileStopped`], the same whatever `ran` (the
/// figure goes to the organizer's log only, where the referee calls this).
pub fn ran_while_stopped(ran: Duration) -> Option<BotFailureKind> {
    (ran > FROZEN_SLACK).then_some(BotFailureKind::RanWhileStopped)
}

pub(super) fn too_long(max: usize) -> BotFailureKind {
    BotFailureKind::Output {
        problem: format!("a line longer than {max} bytes"),
    }
}

/// Characters of an offending line shown in a report (then `…`).
pub const SHOWN_LINE_CHARS: usize = 200;

/// A line as shown in a report: control characters escaped, at most 200
/// characters *after* escaping (a line of control characters would
/// otherwise grow five times).
pub fn show_line(line: &str) -> String {
    let mut out = String::new();
    let mut n = 0;
    for c in line.chars() {
        let shown: Vec<char> = if c.is_control() {
            c.escape_default().collect()
        } else {
            vec![c]
        };
        if n + shown.len() > SHOWN_LINE_CHARS {
            out.push('…');
            break;
        }
        n += shown.len();
        out.extend(shown);
    }
    out
}

/// Bytes of a bot's standard error kept for its report.
pub const STDERR_KEEP: usize = 4096;

/// A bot's standard error as kept in its record: bytes that are not UTF-8
/// replaced, control characters but newline and tab escaped, and cut so
/// that the text takes at most [`STDERR_KEEP`] bytes *as stored* (as a
/// JSON string, where a newline, tab, quote or backslash takes two): one
/// bot adds at most 4 KiB of standard error to a stored game, whatever it
/// writes.
pub fn kept_stderr(bytes: &[u8]) -> String {
    const CUT: &str = " [cut]";
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let mut stored = 0;
    for c in text.chars() {
        let piece: String = if c.is_control() && c != '\n' && c != '\t' {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        let cost: usize = piece
            .chars()
            .map(|c| match c {
                '\n' | '\t' | '"' | '\\' => 2,
                c => c.len_utf8(),
            })
            .sum();
        if stored + cost > STDERR_KEEP - CUT.len() {
            out.push_str(CUT);
            break;
        }
        stored += cost;
        out.push_str(&piece);
    }
    out
}

pub(super) fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "segmentation fault, SIGSEGV",
        libc::SIGABRT => "aborted, SIGABRT",
        libc::SIGFPE => "arithmetic error, SIGFPE",
        libc::SIGILL => "illegal instruction, SIGILL",
        libc::SIGBUS => "bus error, SIGBUS",
        libc::SIGKILL => "killed, SIGKILL",
        libc::SIGTERM => "terminated, SIGTERM",
        libc::SIGPIPE => "broken pipe, SIGPIPE",
        libc::SIGXFSZ => "wrote past its file size limit, SIGXFSZ",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}
