//! Starting a process without copying the server: `clone(CLONE_VM |
//! CLONE_VFORK)`, the way `posix_spawn` works inside the C library.
//!
//! `fork()` copies the page tables of the whole server for every process it
//! starts; with a server of a few hundred MB that cost dominated a game. Here
//! the child borrows the parent's memory (the parent thread is suspended
//! until the child calls `execve` or exits), runs a confinement closure on a
//! stack of its own, and execs. The closure may only make system calls: no
//! allocation, no locks, no panics. Namespace flags (`CLONE_NEWPID`, …) can
//! be passed for the jail, which needs them at creation (a `CLONE_VM` child
//! cannot `unshare` a user namespace).
//!
//! Signals are blocked in the parent thread around the clone, and the child
//! resets every handled signal to its default before it unblocks them, so no
//! handler of the server ever runs in the child.
//!
//! This module only starts processes; what confinement they get is decided
//! by the bot sandbox ([`super::bot`]) and the compile jail ([`super::jail`]).

use std::ffi::{c_int, c_void, CString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

/// Size of the stack the child runs on before `execve`.
const CHILD_STACK: usize = 64 * 1024;

struct Shared<'a> {
    body: &'a mut dyn FnMut() -> io::Error,
    errno: c_int,
}

extern "C" fn trampoline(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Shared` the parent passed; the parent is
    // suspended (CLONE_VFORK) until we exec or exit.
    let shared = unsafe { &mut *(arg as *mut Shared<'_>) };
    // SAFETY: plain system calls on local data.
    unsafe {
        for sig in 1..libc::SIGRTMAX() {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_DFL
                && old.sa_sigaction != libc::SIG_IGN
            {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
    let err = (shared.body)();
    shared.errno = err.raw_os_error().unwrap_or(libc::EINVAL).max(1);
    // SAFETY: leaves the child without running any destructor.
    unsafe { libc::_exit(127) }
}

/// Starts a child that runs `body` and then (inside `body`) execs. `body`
/// returns only on failure, with the error. `flags` are extra clone flags
/// (namespaces). Returns the child's pid (in the caller's PID namespace).
///
/// # Safety
/// `body` runs in a child that shares the caller's memory: it may only make
/// async-signal-safe system calls on data prepared before the call.
pub(crate) unsafe fn spawn_with(
    flags: c_int,
    body: &mut dyn FnMut() -> io::Error,
) -> io::Result<i32> {
    let mut stack = vec![0u8; CHILD_STACK];
    let top = (stack.as_mut_ptr() as usize + CHILD_STACK) & !15usize;
    let mut shared = Shared { body, errno: 0 };
    let mut all: libc::sigset_t = std::mem::zeroed();
    let mut old: libc::sigset_t = std::mem::zeroed();
    libc::sigfillset(&mut all);
    libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    let pid = libc::clone(
        trampoline,
        top as *mut c_void,
        flags | libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
        &mut shared as *mut Shared<'_> as *mut c_void,
    );
    let clone_err = io::Error::last_os_error();
    libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    drop(stack);
    if pid < 0 {
        return Err(clone_err);
    }
    if shared.errno != 0 {
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        return Err(io::Error::from_raw_os_error(shared.errno));
    }
    Ok(pid)
}

/// A child started by [`spawn_with`]: waited for by pid.
#[derive(Debug)]
pub struct Child {
    pid: i32,
    status: Option<ExitStatus>,
    /// The CPU time (user and system) of the child and of the descendants
    /// it waited for, as the kernel accounted it when the child was reaped.
    cpu: Duration,
}

impl Child {
    pub(crate) fn new(pid: i32) -> Child {
        Child {
            pid,
            status: None,
            cpu: Duration::ZERO,
        }
    }

    /// The CPU time of the child and its waited-for descendants (zero
    /// until it is reaped).
    pub fn cpu(&self) -> Duration {
        self.cpu
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether the child has been reaped ([`Child::cpu`] is then its own).
    pub fn reaped(&self) -> bool {
        self.status.is_some()
    }

    /// The exit status if the child has ended (reaps it), without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.wait_flags(libc::WNOHANG)?;
        }
        Ok(self.status)
    }

    /// Waits for the child to end.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        while self.status.is_none() {
            self.status = self.wait_flags(0)?;
        }
        Ok(self.status.expect("waited"))
    }

    fn wait_flags(&mut self, flags: c_int) -> io::Result<Option<ExitStatus>> {
        loop {
            let mut status = 0;
            // SAFETY: wait4 on our own child; rusage is a plain struct it fills.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            let r = unsafe { libc::wait4(self.pid, &mut status, flags, &mut usage) };
            if r == self.pid {
                let tv = |t: libc::timeval| {
                    Duration::from_secs(t.tv_sec.max(0) as u64)
                        + Duration::from_micros(t.tv_usec.max(0) as u64)
                };
                self.cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
                return Ok(Some(ExitStatus::from_raw(status)));
            }
            if r == 0 {
                return Ok(None);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// A NULL-terminated array of C strings for `execve`, built before the clone.
pub(crate) struct CArgs {
    _strings: Vec<CString>,
    ptrs: Vec<*const libc::c_char>,
}

impl CArgs {
    pub fn new<S: AsRef<str>>(items: &[S]) -> io::Result<CArgs> {
        let strings = items
            .iter()
            .map(|s| {
                CString::new(s.as_ref())
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in an argument"))
            })
            .collect::<io::Result<Vec<_>>>()?;
        let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        Ok(CArgs {
            _strings: strings,
            ptrs,
        })
    }

    pub fn as_ptr(&self) -> *const *const libc::c_char {
        self.ptrs.as_ptr()
    }
}

/// The result of a system call as `io::Result` (async-signal-safe).
pub(crate) fn check(r: c_int) -> Result<(), io::Error> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Puts `fds[i]` at descriptor `i` (for 0, 1, 2, …), `exe` (if any) at
/// the next descriptor, close-on-exec (for `execveat`), and closes every
/// other descriptor. Only system calls: for use in a spawned child.
pub(crate) fn arrange_fds(fds: &[RawFd], exe: Option<RawFd>) -> Result<(), io::Error> {
    // First move every source high up, so that no dup2 overwrites a source
    // that is still needed.
    const HIGH: RawFd = 64;
    let mut moved = [0 as RawFd; 8];
    if fds.len() + 1 > moved.len() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let sources = fds.iter().copied().chain(exe);
    for (i, fd) in sources.enumerate() {
        // SAFETY: fcntl on a descriptor of this child's own table.
        let m = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, HIGH) };
        check(m)?;
        moved[i] = m;
    }
    for (i, &m) in moved[..fds.len()].iter().enumerate() {
        // SAFETY: dup2 into the child's own table; clears close-on-exec.
        check(unsafe { libc::dup2(m, i as c_int) })?;
    }
    let mut next = fds.len() as c_int;
    if exe.is_some() {
        // SAFETY: as above; the executable stays close-on-exec.
        check(unsafe { libc::dup3(moved[fds.len()], next, libc::O_CLOEXEC) })?;
        next += 1;
    }
    close_from(next as u32, u32::MAX);
    Ok(())
}

/// Gives the calling process a descriptor table of its own and closes
/// every descriptor of it but `kept`: the table it shared (the server's)
/// is never touched, and where the unshare fails nothing is closed. No
/// allocation: for a child of [`spawn_with`] that shares the server's
/// table.
///
/// One `close_range(first, ~0, CLOSE_RANGE_UNSHARE)` makes the table,
/// `first` the multiple of 64 above the highest kept: the kernel copies
/// into the new table only the descriptors below a multiple of 64 no
/// lower than `first` (`unshare_fd` with `max_fds`, `fs/file.c`), and
/// closes those from `first` on in the same call, before the table is
/// the child's; so the child never holds the server's descriptors from
/// `first` on in its table, not even for the microseconds before its own
/// closes. Those below `first` but the kept are closed next. `first` is a
/// multiple of 64 because kernels 5.9 to 5.17 before their fix of 2022
/// copied the table's bitmaps wrongly for another (the fix,
/// `1c24a186398f`, rounds it so). Where the kernel has no `close_range`
/// (before 5.9), [`unshare_whole_then_close`] does the same in two steps.
pub(super) fn keep_only_in_own_table<const N: usize>(mut kept: [c_int; N]) -> io::Result<()> {
    kept.sort_unstable();
    match keep_in_one_call(&kept) {
        Ok(()) => Ok(()),
        Err(_) => unshare_whole_then_close(kept),
    }
}

/// [`keep_only_in_own_table`]'s way on a kernel with
/// `CLOSE_RANGE_UNSHARE` (`kept` sorted); an error where it has none,
/// with nothing unshared or closed.
fn keep_in_one_call(kept: &[c_int]) -> io::Result<()> {
    // At most 2^31 (a descriptor is a `c_int`): no overflow.
    let above = kept
        .iter()
        .rev()
        .find_map(|&k| u32::try_from(k).ok())
        .map_or(0, |k| (k + 1).next_multiple_of(64));
    // SAFETY: unshares the calling process's own table and closes in the
    // new one only.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            above,
            u32::MAX,
            libc::CLOSE_RANGE_UNSHARE,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    close_gaps_below(kept, above);
    Ok(())
}

/// The two-step way of [`keep_only_in_own_table`], for a kernel without
/// `CLOSE_RANGE_UNSHARE`: `unshare(CLONE_FILES)` copies the whole table,
/// then every descriptor but `kept` (sorted) is closed.
fn unshare_whole_then_close<const N: usize>(kept: [c_int; N]) -> io::Result<()> {
    // SAFETY: unshare of the calling process's own descriptor table.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // No descriptor's number is `u32::MAX` (they are `c_int`s).
    close_gaps_below(&kept, u32::MAX);
    Ok(())
}

/// Closes every descriptor below `end` but the `kept` (sorted; negative
/// numbers ignored). No allocation.
fn close_gaps_below(kept: &[c_int], end: u32) {
    let mut first: u32 = 0;
    for &k in kept {
        let Ok(k) = u32::try_from(k) else { continue };
        if k >= end {
            break;
        }
        if k > first {
            close_from(first, k - 1);
        }
        first = first.max(k.saturating_add(1));
    }
    if end > first {
        close_from(first, end - 1);
    }
}

/// `close_range(first, last)`, or a loop where the kernel lacks it.
fn close_from(first: u32, last: u32) {
    if first > last {
        return;
    }
    // SAFETY: closing descriptors of this child's own table.
    let r = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    if r != 0 {
        let top = last.min(65_535);
        for fd in first..=top {
            // SAFETY: as above.
            unsafe { libc::close(fd as c_int) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways of keeping descriptors, in a child that shares the
    /// parent's table.
    #[derive(Clone, Copy)]
    enum Way {
        /// `close_range` with `CLOSE_RANGE_UNSHARE` (Linux 5.9; this
        /// machine kind's kernel has it: an error fails the test).
        OneCall,
        /// The fallback for kernels without the flag.
        UnshareWholeThenClose,
    }

    /// Which of six pipe ends a child of `way` still has open (bit i for
    /// the i-th), keeping the 5th and the 2nd (given in any order, with a
    /// duplicate and a number no descriptor has); the parent's six are
    /// all still open after it.
    fn open_in_child(way: Way) -> i32 {
        let mut fds = [0 as c_int; 6];
        for pair in fds.chunks_mut(2) {
            // SAFETY: pipe2 writes two descriptors into the pair.
            assert_eq!(
                unsafe { libc::pipe2(pair.as_mut_ptr(), libc::O_CLOEXEC) },
                0
            );
        }
        let kept = [fds[4], -1, fds[1], fds[4]];
        let mut body = || {
            let mut sorted = kept;
            sorted.sort_unstable();
            let kept_only = match way {
                Way::OneCall => keep_in_one_call(&sorted),
                Way::UnshareWholeThenClose => unshare_whole_then_close(sorted),
            };
            if let Err(e) = kept_only {
                return e;
            }
            // Bit i: `fds[i]` still open.
            let mut open = 0;
            for (i, &fd) in fds.iter().enumerate() {
                // SAFETY: fcntl only asks about a descriptor.
                if unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0 {
                    open |= 1 << i;
                }
            }
            // Standard input, output and error are no kept ones either.
            for fd in 0..3 {
                // SAFETY: as above.
                if unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0 {
                    open |= 1 << 6;
                }
            }
            // SAFETY: ends the child with the bits as its status.
            unsafe { libc::_exit(open) }
        };
        // SAFETY: the body only makes system calls.
        let pid = unsafe { spawn_with(libc::CLONE_FILES, &mut body) }.unwrap();
        let st = Child::new(pid).wait().unwrap();
        for fd in fds {
            // SAFETY: the parent's descriptors are all still open.
            assert_eq!(unsafe { libc::close(fd) }, 0);
        }
        st.code().unwrap()
    }

    /// `keep_only_in_own_table` leaves open exactly the descriptors kept,
    /// in one call to the kernel as in the fallback's two steps.
    #[test]
    fn a_child_keeps_only_the_descriptors_kept_in_a_table_of_its_own() {
        assert_eq!(open_in_child(Way::OneCall), 0b010010);
        // Descriptors beyond the first 64 (a kept one between two that
        // are not, the highest above the first multiple of 64 past it),
        // and none kept at all.
        let mut pair = [0 as c_int; 2];
        // SAFETY: pipe2 writes two descriptors into the pair.
        assert_eq!(
            unsafe { libc::pipe2(pair.as_mut_ptr(), libc::O_CLOEXEC) },
            0
        );
        // SAFETY: duplicates of our own pipe's end, at or above a number.
        let high =
            [70, 100, 200].map(|at| unsafe { libc::fcntl(pair[0], libc::F_DUPFD_CLOEXEC, at) });
        assert!(
            high[0] >= 70 && high[1] >= 100 && high[2] >= 200,
            "{high:?}"
        );
        for kept in [Some(high[1]), None] {
            let mut body = || {
                let kept_only = match kept {
                    Some(k) => keep_only_in_own_table([1, k, 2]),
                    None => keep_only_in_own_table([-1]),
                };
                if let Err(e) = kept_only {
                    return e;
                }
                // Bit i: the i-th of 0, 1, 2 and the three high ones open.
                let mut open = 0;
                for (i, fd) in [0, 1, 2, high[0], high[1], high[2]].into_iter().enumerate() {
                    // SAFETY: fcntl only asks about a descriptor.
                    if unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0 {
                        open |= 1 << i;
                    }
                }
                // SAFETY: ends the child with the bits as its status.
                unsafe { libc::_exit(open) }
            };
            // SAFETY: the body only makes system calls.
            let pid = unsafe { spawn_with(libc::CLONE_FILES, &mut body) }.unwrap();
            let expected = if kept.is_some() { 0b010110 } else { 0 };
            assert_eq!(
                Child::new(pid).wait().unwrap().code(),
                Some(expected),
                "{kept:?}"
            );
        }
        for fd in pair.into_iter().chain(high) {
            // SAFETY: the parent's descriptors are all still open.
            assert_eq!(unsafe { libc::close(fd) }, 0);
        }
        assert_eq!(open_in_child(Way::UnshareWholeThenClose), 0b010010);
    }

    #[test]
    fn a_spawned_child_runs_and_reports_exec_errors() {
        let argv = CArgs::new(&["/bin/sh", "-c", "exit 7"]).unwrap();
        let env = CArgs::new::<&str>(&[]).unwrap();
        let path = CString::new("/bin/sh").unwrap();
        let mut body = || {
            // SAFETY: execve with arrays prepared before the clone.
            unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), env.as_ptr()) };
            io::Error::last_os_error()
        };
        let pid = unsafe { spawn_with(0, &mut body) }.unwrap();
        let st = Child::new(pid).wait().unwrap();
        assert_eq!(st.code(), Some(7));

        let missing = CString::new("/nonexistent/program").unwrap();
        let mut body = || {
            // SAFETY: as above.
            unsafe { libc::execve(missing.as_ptr(), argv.as_ptr(), env.as_ptr()) };
            io::Error::last_os_error()
        };
        let err = unsafe { spawn_with(0, &mut body) }.unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
    }
}
