//! A mail over 4 KiB read first in a process of its own, which the kernel stops
//! at a CPU budget: no mail the server reads in its own process costs it
//! more than [`PROBE_CPU`] a parse, however it is built.
//!
//! `mail-parser` (0.11) looks for a part's boundary at every `--` and
//! compares the whole boundary there, and a part that declares a boundary
//! which never comes scans to the end of the mail: a 512 KiB mail of one
//! 128 KiB boundary over a run of dashes took 0.6 s a parse in release, one
//! of 8,900 boundaries that never come 1.2 s, and the server parses a mail
//! several times (its admission, its lane, its processing, the sealing's
//! two looks). The cost grows with the square of the size; a header field
//! of encoded-word starts that each decode to the field's end is worse
//! still (30 ms at 16 KiB, 0.54 s at 64 KiB). Which
//! constructions are costly is not guessed here (base64 and
//! quoted-printable nested messages are parsed again, decoded, where a scan
//! of the raw bytes sees nothing): a mail over [`PROBED_FROM_BYTES`] is
//! parsed by `mail-parser`, as the server parses it, in a child process
//! (this program again, `knobeln mail-probe`) whose CPU time the kernel
//! counts and ends: an interval timer of [`PROBE_CPU`] of the process's
//! user and system time (`ITIMER_PROF`, set before `exec` and kept
//! across it; its `SIGPROF` ends the process, nothing in it catches the
//! signal), with `RLIMIT_CPU` and `RLIMIT_AS` behind it. A mail whose
//! probe ended otherwise than by its exit 0 within the budget is never
//! read in the server's process ([`Reading::may_be_read`]); the admission
//! keeps it as its key only without parsing a byte of it, the sealing
//! keeps nothing of a masked copy that is but the line saying so. `knobeln serve` checks at its start that the probe reads an
//! ordinary mail ([`check_program`]), so that no exit of a probe is
//! taken for a mail's doing that is the program's.
//!
//! Not here: what becomes of such a mail (`admission`, `secrets`); the
//! parse itself (`message`).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// Mails up to this size are read in the server's process without a probe:
/// the costliest construction known, a header field of encoded-word starts
/// (`=?aa?q?x` again and again: each start is decoded to the field's end),
/// takes about 2 ms there (quadratic: 30 ms at 16 KiB, 0.54 s at 64 KiB,
/// release), less than the probe's own start (about 2.6 ms of CPU).
pub const PROBED_FROM_BYTES: usize = 4 << 10;

/// The CPU time (user and system, the probe process's all) a probe may
/// take: its start, reading the mail, parsing it. A mail of 512 KiB of
/// text, or of base64 attachments, takes a few milliseconds.
pub const PROBE_CPU: Duration = Duration::from_millis(100);

/// The address space a probe may map: the program, the parse's deep
/// stack (256 MiB, reserved), its allocations.
const PROBE_ADDRESS_SPACE: u64 = 2 << 30;

/// The most a probe reads from its standard input.
const PROBE_MAX_BYTES: usize = 64 << 20;

/// The program a probe runs, once the binary said which
/// ([`use_this_program`]): without one (the library in a test, a tool
/// that reads no strangers' mail) no mail is probed.
static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// The command line's name of the probe.
pub const PROBE_COMMAND: &str = "mail-probe";

/// Says that mails over [`PROBED_FROM_BYTES`] are probed with `program
/// mail-probe` (the `knobeln` binary, at its start, as `/proc/self/exe`:
/// the program that runs, even once an upgrade replaced its file). The
/// first call decides.
pub fn use_this_program(program: PathBuf) {
    let _ = PROGRAM.set(program);
}

/// What a probe found about a mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Not probed: at most [`PROBED_FROM_BYTES`], or no probe program.
    NotProbed,
    /// Parsed within [`PROBE_CPU`]: `cpu` the probe's whole CPU time.
    WithinBudget { cpu: Duration },
    /// Stopped at [`PROBE_CPU`] (or at the CPU limit behind it): never
    /// read in the server's process. `cpu`: what the probe took.
    OverBudget { cpu: Duration },
    /// Ended otherwise than by its exit 0 or the CPU budget: another
    /// signal (a crash, an allocation past `RLIMIT_AS` aborting), or
    /// another exit status (only what the mail did can make a probe that
    /// passed [`check_program`] end so). Never read in the server's
    /// process either.
    Ended { cpu: Duration, how: Ending },
}

/// How a probe ended, other than by its exit 0 or the CPU budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Signal(i32),
    Exit(i32),
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Signal(s) => write!(f, "signal {s}"),
            Ending::Exit(code) => write!(f, "exit status {code}"),
        }
    }
}

impl Reading {
    /// Whether the server may parse the mail itself.
    pub fn may_be_read(self) -> bool {
        matches!(self, Reading::NotProbed | Reading::WithinBudget { .. })
    }

    /// Why the server does not read the mail, in words for its outcome;
    /// `None` where it may.
    pub fn why_unread(self, size: usize) -> Option<String> {
        match self {
            Reading::NotProbed | Reading::WithinBudget { .. } => None,
            Reading::OverBudget { cpu } => Some(format!(
                "reading its MIME structure took more than {} ms of CPU (stopped after {} ms; \
                 an ordinary mail of {size} bytes takes a few ms)",
                PROBE_CPU.as_millis(),
                cpu.as_millis()
            )),
            Reading::Ended { cpu, how } => Some(format!(
                "reading its MIME structure ended the reader ({how} after {} ms of CPU)",
                cpu.as_millis()
            )),
        }
    }
}

/// Why a probe could not say (the server's trouble, never the mail's):
/// the program could not be started or waited for, or it ended in a way
/// no mail makes it end (an exit other than 0).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("starting the mail probe `{program} {PROBE_COMMAND}`: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    #[error("waiting for the mail probe: {0}")]
    Wait(std::io::Error),
    #[error(
        "the mail probe `{program} {PROBE_COMMAND}` did not read an ordinary mail of {size} \
         bytes: {reading:?} (is it this program, and may it run?)"
    )]
    NotWorking {
        program: String,
        size: usize,
        reading: Reading,
    },
}

/// An ordinary mail just over [`PROBED_FROM_BYTES`]: what
/// [`check_program`] has the probe read.
fn ordinary_mail() -> Vec<u8> {
    let mut m = b"From: probe@knobeln.invalid\r\nSubject: a probe's own check\r\n\r\n".to_vec();
    while m.len() <= PROBED_FROM_BYTES {
        m.extend_from_slice(b"an ordinary line of an ordinary mail\r\n");
    }
    m
}

/// Has the probe program read an ordinary mail over
/// [`PROBED_FROM_BYTES`] within its budget: `knobeln serve` does this at
/// its start, so that a probe that cannot work (another program, a
/// system that refuses it) stops the server with its reason instead of
/// every large mail being kept unread. Without a program nothing is
/// checked.
pub fn check_program() -> Result<(), ProbeError> {
    let Some(program) = PROGRAM.get() else {
        return Ok(());
    };
    let mail = ordinary_mail();
    match probe_with(program, &mail, PROBE_CPU)? {
        Reading::WithinBudget { .. } => Ok(()),
        reading => Err(ProbeError::NotWorking {
            program: program.display().to_string(),
            size: mail.len(),
            reading,
        }),
    }
}

/// Probes `raw` when it is over [`PROBED_FROM_BYTES`] and a program was
/// given ([`use_this_program`]).
pub fn reading(raw: &[u8]) -> Result<Reading, ProbeError> {
    match PROGRAM.get() {
        Some(program) if raw.len() > PROBED_FROM_BYTES => probe_with(program, raw, PROBE_CPU),
        _ => Ok(Reading::NotProbed),
    }
}

/// Runs `program mail-probe` on `raw` with a CPU budget of `budget`.
pub fn probe_with(
    program: &std::path::Path,
    raw: &[u8],
    budget: Duration,
) -> Result<Reading, ProbeError> {
    use std::os::unix::process::CommandExt;
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: budget.as_secs() as libc::time_t,
            tv_usec: budget.subsec_micros() as libc::suseconds_t,
        },
    };
    let cpu_secs = budget.as_secs() + 1;
    let mut command = Command::new(program);
    command
        .arg(PROBE_COMMAND)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: between fork and exec only async-signal-safe calls
    // (setrlimit, setitimer), on values built before the fork.
    unsafe {
        command.pre_exec(move || {
            let cpu = libc::rlimit {
                rlim_cur: cpu_secs,
                rlim_max: cpu_secs + 1,
            };
            let space = libc::rlimit {
                rlim_cur: PROBE_ADDRESS_SPACE,
                rlim_max: PROBE_ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_CPU, &cpu) != 0
                || libc::setrlimit(libc::RLIMIT_AS, &space) != 0
                || libc::setitimer(libc::ITIMER_PROF, &timer, std::ptr::null_mut()) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|source| ProbeError::Start {
        program: program.display().to_string(),
        source,
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A probe stopped before it read everything closes the pipe: its
        // end says what happened, not the write's.
        let _ = stdin.write_all(raw);
    }
    let (status, cpu) = wait_with_cpu(child.id() as libc::pid_t).map_err(ProbeError::Wait)?;
    // The timer's signal comes a tick late at most; past the budget is
    // past it, whatever ended first.
    if cpu > budget {
        return Ok(Reading::OverBudget { cpu });
    }
    if libc::WIFEXITED(status) {
        return Ok(match libc::WEXITSTATUS(status) {
            0 => Reading::WithinBudget { cpu },
            code => Reading::Ended {
                cpu,
                how: Ending::Exit(code),
            },
        });
    }
    let signal = libc::WTERMSIG(status);
    Ok(match signal {
        libc::SIGPROF | libc::SIGXCPU | libc::SIGKILL => Reading::OverBudget { cpu },
        _ => Reading::Ended {
            cpu,
            how: Ending::Signal(signal),
        },
    })
}

/// Waits for `pid`, its wait status and its CPU time (user and system).
fn wait_with_cpu(pid: libc::pid_t) -> std::io::Result<(libc::c_int, Duration)> {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our child, status and usage are ours to write.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Ok((status, time(usage.ru_utime) + time(usage.ru_stime)))
}

/// The probe's own side (`knobeln mail-probe`): reads a mail from standard
/// input and parses it as the server does (`mail-parser`, and the
/// server's reading of its parse), on the deep stack a whole mail is read
/// on. Its end is the verdict; it writes nothing.
pub fn probe_standard_input() -> std::io::Result<()> {
    let mut raw = Vec::new();
    std::io::stdin()
        .take(PROBE_MAX_BYTES as u64)
        .read_to_end(&mut raw)?;
    let limits = super::message::Limits {
        max_mail_bytes: usize::MAX,
        max_attachment_bytes: usize::MAX,
    };
    let _ = super::message::parse(&raw, "", &limits);
    Ok(())
}
