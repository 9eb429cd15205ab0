//! Process confinement, at the edge of the system.
//!
//! Two kinds of strangers' work run as processes on the server's machine
//! (a KNOBELN strategy is not one of them: it is a WebAssembly module that
//! the engine runs in the server's threads, [`crate::wasm`]):
//! - gcc, clang and wasm-ld, fed with hostile source ([`jail`]): they run in private mount, network,
//!   IPC and UTS namespaces, chrooted into a tree that holds only the
//!   toolchain (`/usr`, read-only), `/dev/null` and a private writable work
//!   folder, under a uid of the jail's own when the server runs as root
//!   ([`uid`]) or in a user namespace of its own otherwise, under CPU,
//!   memory, file-size, file-count, process-count (each jail's own) and
//!   wall-clock limits, with its output capped.
//! - bots, participants' programs in any language ([`bot`]): namespaces
//!   (the network one lent from [`netns`]), a read-only root of their own,
//!   a control group ([`cgroup`]) and seccomp-bpf ([`bot_seccomp`]); a
//!   native program runs from a sealed in-memory copy ([`exe`]); their
//!   compilers run in the same sandbox.
//!
//! All are started by [`spawn`] without copying the server's memory.
//!
//! **Invariant:** no participant code runs outside these confinements,
//! and the server executes no file it did not write itself (a bot's files
//! are written by the server into the bot's own tmpfs).
//! This module knows nothing of games or contests.

pub mod bot;
pub mod bot_seccomp;
pub mod cgroup;
pub mod cpu;
pub mod exe;
pub mod folder;
pub mod held;
pub mod image;
pub mod jail;
pub mod netns;
pub(crate) mod spawn;
mod tmpfs;
pub mod uid;

pub use cpu::{allowed_cpus, pin_current_thread};

use std::io;
use std::os::fd::{AsFd, OwnedFd};

/// Taken by the library's tests that keep a CPU busy (threads spinning on
/// one, a real-time thread) or bound by time what the kernel does with the
/// CPU a process gets (a freeze held within a second, a thawed group
/// running again): one at a time, or one's spinning threads starve
/// another's (the CI's cgroup v2 pass saw a freeze not held within its
/// second beside 300 spinning threads).
#[cfg(test)]
pub(crate) fn one_cpu_bound_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A pipe, both ends close-on-exec: (read end, write end).
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// Makes `fd` non-blocking.
pub fn set_nonblocking(fd: impl AsFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}

/// Makes every mount of the calling process's (new) mount namespace
/// private, so that nothing it mounts reaches the host. Only a system
/// call: usable in a spawned child. `slash` is `"/"`.
pub(crate) fn make_mounts_private(slash: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: mount with a valid NUL-terminated path and null arguments.
    let r = unsafe {
        libc::mount(
            std::ptr::null(),
            slash.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    spawn::check(r)
}

/// Whether a process `pid` exists (whoever's it is).
pub(crate) fn process_alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// Whether the server runs as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Sets one resource limit (soft and hard) on the calling process.
/// Async-signal-safe: usable between fork and exec.
pub(crate) fn set_rlimit(
    resource: libc::__rlimit_resource_t,
    soft: u64,
    hard: u64,
) -> io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: soft as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    // SAFETY: setrlimit reads a valid rlimit struct.
    if unsafe { libc::setrlimit(resource, &lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
