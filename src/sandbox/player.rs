//! Starting a compiled strategy as a confined process.
//!
//! The strategy binary carries the contest runtime, whose entry point wipes
//! its initial stack, moves to a fixed stack, unmaps the kernel's clock
//! pages and locks the process down with seccomp strict mode before `main`
//! runs. Here we add what the runtime cannot do for itself: the program is
//! executed from its sealed memory file ([`Executable`]), without address
//! space randomisation, with a fixed argument vector (`strategy SEED`) and an
//! empty environment, with only standard input, output and error open
//! (every other descriptor of the server closed), resource limits (CPU
//! seconds, address space, file size, open files, core dumps, locked
//! memory), `no_new_privs`, `SCHED_BATCH`, death with the server, and a
//! process group of its own so that [`PlayerProcess::kill`] ends everything
//! it is. It is started without copying the server ([`super::spawn`]).
//!
//! Deliberately no referee logic: this module starts and stops processes; the
//! referee talks to them.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::OnceLock;

use super::exe::Executable;
use super::jail::kill_group;
use super::spawn::{self, arrange_fds, check, CArgs};
use super::{pipe, set_nonblocking};

/// Limits of one strategy process for one game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlayerLimits {
    /// CPU time per game, in whole seconds (the kernel's granularity).
    pub cpu_secs: u64,
    /// Address space in bytes (code, data, stack): 1024 kB as in 1994.
    pub memory_bytes: u64,
}

impl Default for PlayerLimits {
    fn default() -> Self {
        PlayerLimits {
            cpu_secs: 2,
            memory_bytes: 1024 * 1024,
        }
    }
}

/// Why a strategy process could not be started. `Memory` is the player's
/// fault (its image does not fit the memory limit); the others are the
/// server's.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("the program does not fit into the memory limit of {limit_kb} kB")]
    Memory { limit_kb: u64 },
    /// The kernel refused to execute the program (not a static executable,
    /// names an interpreter that is missing, …): the player's fault.
    #[error("the program cannot be executed: {error}")]
    Exec { error: io::Error },
    #[error("cannot start strategy {path}: {source}")]
    Io { path: String, source: io::Error },
}

/// What a strategy process is started for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// A game: the runtime seeds the strategy's generator with `seed`.
    Game { seed: u64 },
    /// The start-up probe of the compile service: the runtime does all its
    /// start-up, touches [`PROBE_STACK_BYTES`] of stack under the lock-down
    /// and exits with [`PROBE_OK`] without running any participant code.
    Probe,
}

/// Stack the start-up probe touches: what every accepted strategy is
/// guaranteed to have for its own use.
pub const PROBE_STACK_BYTES: u64 = 64 * 1024;
/// The exit status of a successful start-up probe (see the runtime).
pub const PROBE_OK: i32 = 122;

/// `ADDR_NO_RANDOMIZE` from `<linux/personality.h>`.
const ADDR_NO_RANDOMIZE: libc::c_ulong = 0x0040000;

/// A running strategy: its stdin (our writes) and stdout (our reads).
pub struct PlayerProcess {
    child: spawn::Child,
    pub to_player: OwnedFd,
    pub from_player: OwnedFd,
    reaped: Option<ExitStatus>,
}

/// `/dev/null`, opened once per process (close-on-exec).
fn dev_null() -> io::Result<RawFd> {
    static NULL: OnceLock<Result<OwnedFd, i32>> = OnceLock::new();
    let r = NULL.get_or_init(|| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map(OwnedFd::from)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
    });
    match r {
        Ok(fd) => Ok(fd.as_raw_fd()),
        Err(e) => Err(io::Error::from_raw_os_error(*e)),
    }
}

fn rlimit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> Result<(), io::Error> {
    super::set_rlimit(resource, soft, hard)
}

impl PlayerProcess {
    /// Starts `exe` for a game or for the start-up probe.
    pub fn spawn(
        exe: &Executable,
        start: Start,
        limits: &PlayerLimits,
    ) -> Result<PlayerProcess, SpawnError> {
        let lim = *limits;
        let io_err = |source| SpawnError::Io {
            path: exe.name().to_string(),
            source,
        };
        let arg = match start {
            Start::Game { seed } => seed.to_string(),
            Start::Probe => "probe".to_string(),
        };
        let argv = CArgs::new(&["strategy", arg.as_str()]).map_err(io_err)?;
        let envp = CArgs::new::<&str>(&[]).map_err(io_err)?;
        let empty = c"";
        let (in_read, in_write) = pipe().map_err(io_err)?;
        let (out_read, out_write) = pipe().map_err(io_err)?;
        let null = dev_null().map_err(io_err)?;
        let fds = [in_read.as_raw_fd(), out_write.as_raw_fd(), null];
        let exe_fd = exe.fd();
        // Set by the child just before execveat (it shares our memory), so
        // that an error of exec itself is told from the server's own faults.
        let at_exec = std::cell::Cell::new(false);
        let mut body = || -> io::Error {
            let run = || -> Result<(), io::Error> {
                arrange_fds(&fds, Some(exe_fd))?;
                // SAFETY (all below): async-signal-safe system calls on data
                // prepared before the clone.
                unsafe {
                    check(libc::setpgid(0, 0))?;
                    // Dies with the server, even on kill -9.
                    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                    // The same addresses in every run (see the runtime).
                    let persona = libc::personality(0xffff_ffff);
                    check(libc::personality(
                        persona as libc::c_ulong | ADDR_NO_RANDOMIZE,
                    ))?;
                }
                rlimit(libc::RLIMIT_CPU, lim.cpu_secs, lim.cpu_secs + 1)?;
                rlimit(libc::RLIMIT_FSIZE, 0, 0)?;
                rlimit(libc::RLIMIT_NOFILE, 4, 4)?;
                rlimit(libc::RLIMIT_CORE, 0, 0)?;
                rlimit(libc::RLIMIT_MEMLOCK, 0, 0)?;
                // SAFETY: as above.
                unsafe {
                    // No wakeup preemption: the referee finishes sending both
                    // throws before either player runs (fewer context switches).
                    let param = libc::sched_param { sched_priority: 0 };
                    libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
                    check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
                }
                // Last: from here on the exec itself counts against the limit.
                rlimit(libc::RLIMIT_AS, lim.memory_bytes, lim.memory_bytes)?;
                at_exec.set(true);
                // SAFETY: execveat of the sealed program at descriptor 3.
                unsafe {
                    libc::syscall(
                        libc::SYS_execveat,
                        3,
                        empty.as_ptr(),
                        argv.as_ptr(),
                        envp.as_ptr(),
                        libc::AT_EMPTY_PATH,
                    );
                }
                Err(io::Error::last_os_error())
            };
            match run() {
                Ok(()) => io::Error::from_raw_os_error(libc::EINVAL),
                Err(e) => e,
            }
        };
        // SAFETY: the body only makes system calls on data prepared above.
        let pid = match unsafe { spawn::spawn_with(0, &mut body) } {
            Ok(pid) => pid,
            Err(e) if at_exec.get() && e.raw_os_error() == Some(libc::ENOMEM) => {
                return Err(SpawnError::Memory {
                    limit_kb: lim.memory_bytes / 1024,
                })
            }
            Err(error) if at_exec.get() && error.raw_os_error() != Some(libc::EAGAIN) => {
                return Err(SpawnError::Exec { error })
            }
            Err(source) => return Err(io_err(source)),
        };
        drop(in_read);
        drop(out_write);
        set_nonblocking(&in_write).map_err(io_err)?;
        Ok(PlayerProcess {
            child: spawn::Child::new(pid),
            to_player: in_write,
            from_player: out_read,
            reaped: None,
        })
    }

    pub fn pid(&self) -> i32 {
        self.child.pid()
    }

    /// Kills the process group (idempotent).
    pub fn kill(&mut self) {
        if self.reaped.is_none() {
            kill_group(self.pid());
        }
    }

    /// The exit status, if the process has ended (reaps it).
    pub fn try_status(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.reaped.is_none() {
            self.reaped = self.child.try_wait()?;
        }
        Ok(self.reaped)
    }

    /// Waits for the exit status for at most `wait`; kills the group if the
    /// process is still alive after that. Returns `None` if it had to be killed.
    pub fn status_within(&mut self, wait: std::time::Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = super::cpu::monotonic() + wait;
        loop {
            if let Some(st) = self.try_status()? {
                return Ok(Some(st));
            }
            if super::cpu::monotonic() >= deadline {
                self.kill();
                self.reaped = Some(self.child.wait()?);
                return Ok(None);
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// Kills and reaps; returns how the process had ended if it ended by itself.
    pub fn finish(&mut self) -> io::Result<ExitStatus> {
        self.kill();
        if self.reaped.is_none() {
            self.reaped = Some(self.child.wait()?);
        }
        Ok(self.reaped.expect("reaped"))
    }

    /// CPU time (user + system) the process has used so far, from /proc.
    pub fn cpu_time(&self) -> Option<std::time::Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).ok()?;
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        // SAFETY: plain libc call.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        Some(std::time::Duration::from_millis(
            (utime + stime) * 1000 / hz,
        ))
    }
}

impl Drop for PlayerProcess {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Describes how a strategy process ended, for failure reports.
pub fn describe_status(status: &ExitStatus) -> StatusKind {
    match (status.code(), status.signal()) {
        (Some(code), _) => StatusKind::Exited(code),
        (None, Some(sig)) => StatusKind::Signaled(sig),
        _ => StatusKind::Exited(-1),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    Exited(i32),
    Signaled(i32),
}
