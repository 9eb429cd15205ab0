//! Starting a compiled strategy as a confined process.
//!
//! The strategy binary carries the contest runtime, whose entry point locks
//! the process down with seccomp strict mode before `main` runs. Here we add
//! what the runtime cannot do for itself: resource limits (CPU seconds,
//! address space, file size, open files, processes, core dumps), an empty
//! environment, `/` as working folder, `no_new_privs`, and a process group of
//! its own so that [`PlayerProcess::kill`] ends everything it is.
//!
//! Deliberately no referee logic: this module starts and stops processes; the
//! referee talks to them.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};

use super::jail::kill_group;
use super::set_rlimit;

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
    #[error("cannot start strategy {path}: {source}")]
    Io { path: String, source: io::Error },
}

/// A running strategy: its stdin (our writes) and stdout (our reads).
pub struct PlayerProcess {
    child: Child,
    pub to_player: OwnedFd,
    pub from_player: OwnedFd,
    reaped: Option<ExitStatus>,
}

impl PlayerProcess {
    /// Starts `binary` with the game seed as its only argument.
    pub fn spawn(
        binary: &Path,
        seed: u64,
        limits: &PlayerLimits,
    ) -> Result<PlayerProcess, SpawnError> {
        let lim = *limits;
        let mut cmd = Command::new(binary);
        cmd.arg(seed.to_string())
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        // SAFETY: only async-signal-safe system calls.
        unsafe {
            cmd.pre_exec(move || {
                // Dies with the server, even on kill -9.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                set_rlimit(libc::RLIMIT_CPU, lim.cpu_secs, lim.cpu_secs + 1)?;
                set_rlimit(libc::RLIMIT_FSIZE, 0, 0)?;
                set_rlimit(libc::RLIMIT_NOFILE, 4, 4)?;
                set_rlimit(libc::RLIMIT_CORE, 0, 0)?;
                set_rlimit(libc::RLIMIT_MEMLOCK, 0, 0)?;
                // No wakeup preemption: the referee finishes sending both
                // throws before either player runs (fewer context switches).
                let param = libc::sched_param { sched_priority: 0 };
                libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // Last: from here on the exec itself counts against the limit.
                set_rlimit(libc::RLIMIT_AS, lim.memory_bytes, lim.memory_bytes)?;
                Ok(())
            });
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) if e.raw_os_error() == Some(libc::ENOMEM) => {
                return Err(SpawnError::Memory {
                    limit_kb: lim.memory_bytes / 1024,
                })
            }
            Err(source) => {
                return Err(SpawnError::Io {
                    path: binary.display().to_string(),
                    source,
                })
            }
        };
        let to_player: OwnedFd = child.stdin.take().expect("piped stdin").into();
        let from_player: OwnedFd = child.stdout.take().expect("piped stdout").into();
        set_nonblocking(&to_player).map_err(|source| SpawnError::Io {
            path: binary.display().to_string(),
            source,
        })?;
        Ok(PlayerProcess {
            child,
            to_player,
            from_player,
            reaped: None,
        })
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
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

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: fcntl on a valid fd.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
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
