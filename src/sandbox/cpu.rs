//! CPU placement and timekeeping for the processes of a game.
//!
//! A game's three parties (referee thread and two strategies) exchange a
//! message per throw, so their cost is the cost of context switches: keep
//! them on one CPU ([`pin_current_thread`]). Strategies run in seccomp strict
//! mode, which also disables the time-stamp counter for them; every switch
//! between a task with and one without the TSC rewrites a control register,
//! which costs a VM exit on virtual machines (measured here: a pipe round
//! trip of 4.4 us becomes 15 us). [`TscOff`] therefore disables the TSC for
//! the referee thread too, for the duration of a game, and [`monotonic`]
//! reads the clock by system call, which needs no TSC in user space.
//!
//! **Invariant:** while a [`TscOff`] guard lives, its thread must not call
//! `std::time::Instant::now` or anything else that reads the TSC (the vDSO
//! clock does): it would die with SIGSEGV. Use [`monotonic`].

use std::io;
use std::time::Duration;

/// Pins the calling thread (and the processes it spawns from now on) to one CPU.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu % rustix::thread::CpuSet::MAX_CPU);
    rustix::thread::sched_setaffinity(None, &set)?;
    Ok(())
}

/// The CPUs the calling thread may run on, in order (CPU 0 if they cannot
/// be read).
pub fn allowed_cpus() -> Vec<usize> {
    let cpus: Vec<usize> = match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => Vec::new(),
    };
    if cpus.is_empty() {
        vec![0]
    } else {
        cpus
    }
}

/// CLOCK_MONOTONIC read by system call (no TSC in user space).
pub fn monotonic() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    unsafe {
        libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts);
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Disables the time-stamp counter for the calling thread while it lives
/// (see the module documentation), and re-enables it on drop.
pub struct TscOff {
    active: bool,
}

impl TscOff {
    pub fn new() -> TscOff {
        // SAFETY: prctl on the calling thread.
        let active = unsafe { libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_SIGSEGV, 0, 0, 0) } == 0;
        TscOff { active }
    }
}

impl Default for TscOff {
    fn default() -> Self {
        TscOff::new()
    }
}

impl Drop for TscOff {
    fn drop(&mut self) {
        if self.active {
            // SAFETY: prctl on the calling thread.
            unsafe {
                libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_ENABLE, 0, 0, 0);
            }
        }
    }
}
