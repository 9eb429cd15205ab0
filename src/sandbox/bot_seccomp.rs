//! The seccomp-bpf filter of the bot sandbox.
//!
//! The policy, from the tables below:
//! 1. an **allow-list** fit for language runtimes (files, memory, threads,
//!    futexes, clocks, signals, pipes, `AF_UNIX` sockets, `execve` of the
//!    runtime's own programs); every other call fails with `ENOSYS`, which
//!    runtimes read as "not on this kernel" (glibc falls back from `clone3`
//!    to `clone` that way);
//! 2. a **kill-list** of the calls only an attack needs: `ptrace`,
//!    `process_vm_*`, the mount family, `unshare`/`setns` and `clone` with
//!    namespace flags, `keyctl`, `bpf`, `perf_event_open`, `kexec_*`, module
//!    loading, `io_uring_*`, `userfaultfd` and the like end the whole bot
//!    with SIGSYS, which the referee reports as a forbidden system call;
//! 3. `socket` of any family but `AF_UNIX` fails with `EAFNOSUPPORT` (there
//!    is no network in the bot's namespace anyway);
//!    Not on the list, among others: `sysinfo` (the machine's memory,
//!    load, uptime and process count: a figure other bots move; glibc
//!    2.36's `sysconf(_SC_PHYS_PAGES)` then answers an undefined figure,
//!    which is why the JVM is told its heap and `-XX:MaxRAM`),
//!    the file-event calls (`inotify_*`,
//!    `fanotify_*`: a watch on `/usr` would report other bots' use of the
//!    runtimes live, a channel between bots), the calls that tell whether a file's
//!    page is cached without reading it (`mincore`, `preadv2`/`pwritev2`,
//!    whose `RWF_NOWAIT` fails on an uncached page, `cachestat`), the one
//!    that drops another program's cached pages (`fadvise64`'s
//!    `DONTNEED`), `readahead`, and `sched_setaffinity` (a bot stays on
//!    the CPU the referee gave it). glibc's `preadv2` falls back to
//!    `preadv` when the call is missing and no flag is asked for;
//! 4. a foreign architecture (i386 calls through `int 0x80`) ends the
//!    process; x32 numbers match nothing allowed and fail with `ENOSYS`.
//!
//! It is compiled here into one filter, a binary search over runs of
//! numbers ([`bot_filter`], why in [`compile`]); the tests compile the same
//! policy with `seccompiler` (the filter compiler of Firecracker) and check
//! that both answer alike for every system call number and every argument
//! the policy looks at. `seccomp` itself is not on the allow-list.
//!
//! A second, small filter ([`one_process_filter`]) is stacked on it for a
//! bot that may not start processes (a match's bot where no control group
//! counts its CPU, [`super::bot::NewProcesses::WhereCounted`]): `fork`,
//! `vfork` and `clone` without `CLONE_THREAD` (or with `CLONE_VFORK`)
//! fail with `EPERM`
//! ([`NO_PROCESS_ERRNO`]), threads stay allowed, and `clone3` (whose
//! flags are in memory a filter cannot read) fails with `ENOSYS` as in
//! the first. The bot is then one process, its threads included, whose
//! CPU the kernel counts in one place whatever it does.
//!
//! This module only builds the filters; [`super::bot`] installs them last,
//! after every other confinement step, just before `execve` (the second
//! one, under the jail's init, the init's child just before its `execve`:
//! the init itself must fork once).

use std::io;

/// Namespace flags that `clone` may not carry inside the sandbox.
const NAMESPACE_FLAGS: [u64; 7] = [
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];

/// System calls a language runtime needs (x86-64 numbers from libc).
const ALLOWED: &[libc::c_long] = &[
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_open,
    libc::SYS_close,
    libc::SYS_stat,
    libc::SYS_fstat,
    libc::SYS_lstat,
    libc::SYS_poll,
    libc::SYS_lseek,
    libc::SYS_mmap,
    libc::SYS_mprotect,
    libc::SYS_munmap,
    libc::SYS_brk,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigreturn,
    libc::SYS_ioctl,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_access,
    libc::SYS_pipe,
    libc::SYS_select,
    libc::SYS_sched_yield,
    libc::SYS_mremap,
    libc::SYS_msync,
    libc::SYS_madvise,
    libc::SYS_dup,
    libc::SYS_dup2,
    libc::SYS_pause,
    libc::SYS_nanosleep,
    libc::SYS_getitimer,
    libc::SYS_alarm,
    libc::SYS_setitimer,
    libc::SYS_getpid,
    libc::SYS_sendfile,
    libc::SYS_socket,
    libc::SYS_connect,
    libc::SYS_accept,
    libc::SYS_sendto,
    libc::SYS_recvfrom,
    libc::SYS_sendmsg,
    libc::SYS_recvmsg,
    libc::SYS_shutdown,
    libc::SYS_bind,
    libc::SYS_listen,
    libc::SYS_getsockname,
    libc::SYS_getpeername,
    libc::SYS_socketpair,
    libc::SYS_setsockopt,
    libc::SYS_getsockopt,
    libc::SYS_fork,
    libc::SYS_vfork,
    libc::SYS_execve,
    libc::SYS_exit,
    libc::SYS_wait4,
    libc::SYS_kill,
    libc::SYS_uname,
    libc::SYS_fcntl,
    libc::SYS_flock,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_truncate,
    libc::SYS_ftruncate,
    libc::SYS_getdents,
    libc::SYS_getcwd,
    libc::SYS_chdir,
    libc::SYS_fchdir,
    libc::SYS_rename,
    libc::SYS_mkdir,
    libc::SYS_rmdir,
    libc::SYS_creat,
    libc::SYS_link,
    libc::SYS_unlink,
    libc::SYS_symlink,
    libc::SYS_readlink,
    libc::SYS_chmod,
    libc::SYS_fchmod,
    libc::SYS_umask,
    libc::SYS_gettimeofday,
    libc::SYS_getrlimit,
    libc::SYS_getrusage,
    libc::SYS_times,
    libc::SYS_getuid,
    libc::SYS_getgid,
    libc::SYS_geteuid,
    libc::SYS_getegid,
    libc::SYS_setpgid,
    libc::SYS_getppid,
    libc::SYS_getpgrp,
    libc::SYS_setsid,
    libc::SYS_getgroups,
    libc::SYS_getresuid,
    libc::SYS_getresgid,
    libc::SYS_getpgid,
    libc::SYS_getsid,
    libc::SYS_capget,
    libc::SYS_rt_sigpending,
    libc::SYS_rt_sigtimedwait,
    libc::SYS_rt_sigqueueinfo,
    libc::SYS_rt_sigsuspend,
    libc::SYS_sigaltstack,
    libc::SYS_utime,
    libc::SYS_statfs,
    libc::SYS_fstatfs,
    libc::SYS_getpriority,
    libc::SYS_setpriority,
    libc::SYS_sched_setparam,
    libc::SYS_sched_getparam,
    libc::SYS_sched_setscheduler,
    libc::SYS_sched_getscheduler,
    libc::SYS_sched_get_priority_max,
    libc::SYS_sched_get_priority_min,
    libc::SYS_sched_rr_get_interval,
    libc::SYS_mlock,
    libc::SYS_munlock,
    libc::SYS_prctl,
    libc::SYS_arch_prctl,
    libc::SYS_setrlimit,
    libc::SYS_gettid,
    libc::SYS_getxattr,
    libc::SYS_lgetxattr,
    libc::SYS_fgetxattr,
    libc::SYS_listxattr,
    libc::SYS_llistxattr,
    libc::SYS_flistxattr,
    libc::SYS_time,
    libc::SYS_futex,
    libc::SYS_sched_getaffinity,
    libc::SYS_epoll_create,
    libc::SYS_getdents64,
    libc::SYS_set_tid_address,
    libc::SYS_restart_syscall,
    libc::SYS_timer_create,
    libc::SYS_timer_settime,
    libc::SYS_timer_gettime,
    libc::SYS_timer_getoverrun,
    libc::SYS_timer_delete,
    libc::SYS_clock_gettime,
    libc::SYS_clock_getres,
    libc::SYS_clock_nanosleep,
    libc::SYS_exit_group,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_ctl,
    libc::SYS_tgkill,
    libc::SYS_tkill,
    libc::SYS_utimes,
    libc::SYS_waitid,
    libc::SYS_openat,
    libc::SYS_mkdirat,
    libc::SYS_newfstatat,
    libc::SYS_unlinkat,
    libc::SYS_renameat,
    libc::SYS_linkat,
    libc::SYS_symlinkat,
    libc::SYS_readlinkat,
    libc::SYS_fchmodat,
    libc::SYS_faccessat,
    libc::SYS_pselect6,
    libc::SYS_ppoll,
    libc::SYS_set_robust_list,
    libc::SYS_get_robust_list,
    libc::SYS_splice,
    libc::SYS_tee,
    libc::SYS_sync_file_range,
    libc::SYS_vmsplice,
    libc::SYS_utimensat,
    libc::SYS_epoll_pwait,
    libc::SYS_signalfd,
    libc::SYS_timerfd_create,
    libc::SYS_eventfd,
    libc::SYS_fallocate,
    libc::SYS_timerfd_settime,
    libc::SYS_timerfd_gettime,
    libc::SYS_accept4,
    libc::SYS_signalfd4,
    libc::SYS_eventfd2,
    libc::SYS_epoll_create1,
    libc::SYS_dup3,
    libc::SYS_pipe2,
    libc::SYS_preadv,
    libc::SYS_pwritev,
    libc::SYS_rt_tgsigqueueinfo,
    libc::SYS_recvmmsg,
    libc::SYS_prlimit64,
    libc::SYS_sendmmsg,
    libc::SYS_getcpu,
    libc::SYS_sched_setattr,
    libc::SYS_sched_getattr,
    libc::SYS_renameat2,
    libc::SYS_getrandom,
    libc::SYS_memfd_create,
    libc::SYS_execveat,
    libc::SYS_membarrier,
    libc::SYS_mlock2,
    libc::SYS_copy_file_range,
    libc::SYS_statx,
    libc::SYS_rseq,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_send_signal,
    libc::SYS_close_range,
    libc::SYS_faccessat2,
    libc::SYS_epoll_pwait2,
];

/// System calls that end the bot at once (SIGSYS): only an attack needs them.
const KILLED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_userfaultfd,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_mount_setattr,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_process_madvise,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_vhangup,
];

/// What the filter answers for one system call number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Allow,
    /// Fails with `ENOSYS` ("not on this kernel").
    Refuse,
    /// Ends the whole bot with SIGSYS.
    Kill,
    /// `clone`: ends the bot with any namespace flag, allowed otherwise.
    CloneWithoutNamespaces,
    /// `socket`: `AF_UNIX` allowed, any other family `EAFNOSUPPORT`.
    UnixSocketsOnly,
}

fn answer(nr: i64) -> Answer {
    if nr == libc::SYS_clone {
        Answer::CloneWithoutNamespaces
    } else if nr == libc::SYS_socket {
        Answer::UnixSocketsOnly
    } else if KILLED.contains(&nr) {
        Answer::Kill
    } else if ALLOWED.contains(&nr) {
        Answer::Allow
    } else {
        Answer::Refuse
    }
}

/// The architecture this filter is for (`AUDIT_ARCH_X86_64`).
const AUDIT_ARCH: u32 = 0xC000_003E;

// Classic BPF as seccomp takes it (linux/filter.h, linux/seccomp.h).
const LD_W_ABS: u16 = 0x20;
const JA: u16 = 0x05;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
// Offsets in `struct seccomp_data`: nr, arch, args[0] (low and high word).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;
const ARG0_HIGH: u32 = 20;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The instructions that answer for one run of numbers (the number is in
/// the accumulator).
fn block(a: Answer) -> Vec<libc::sock_filter> {
    let ns_mask = NAMESPACE_FLAGS.iter().fold(0u64, |m, f| m | f);
    match a {
        Answer::Allow => vec![stmt(RET_K, RET_ALLOW)],
        Answer::Refuse => vec![stmt(RET_K, RET_ERRNO | libc::ENOSYS as u32)],
        Answer::Kill => vec![stmt(RET_K, RET_KILL_PROCESS)],
        // The flags are all in the low word of the first argument.
        Answer::CloneWithoutNamespaces => vec![
            stmt(LD_W_ABS, ARG0_LOW),
            jump(JSET_K, ns_mask as u32, 0, 1),
            stmt(RET_K, RET_KILL_PROCESS),
            stmt(RET_K, RET_ALLOW),
        ],
        // The whole 64-bit argument must be AF_UNIX.
        Answer::UnixSocketsOnly => vec![
            stmt(LD_W_ABS, ARG0_HIGH),
            jump(JEQ_K, 0, 0, 3),
            stmt(LD_W_ABS, ARG0_LOW),
            jump(JEQ_K, libc::AF_UNIX as u32, 0, 1),
            stmt(RET_K, RET_ALLOW),
            stmt(RET_K, RET_ERRNO | libc::EAFNOSUPPORT as u32),
        ],
    }
}

/// A binary search over `runs` (first number of each run, ascending, the
/// first one 0; a run lasts until the next one starts).
fn search(runs: &[(u32, Answer)]) -> Vec<libc::sock_filter> {
    if let [(_, a)] = runs {
        return block(*a);
    }
    let mid = runs.len() / 2;
    let below = search(&runs[..mid]);
    let above = search(&runs[mid..]);
    let mut out = Vec::with_capacity(below.len() + above.len() + 2);
    match u8::try_from(below.len()) {
        Ok(skip) => out.push(jump(JGE_K, runs[mid].0, skip, 0)),
        // Conditional jumps reach 255 instructions; `ja` reaches all.
        Err(_) => {
            out.push(jump(JGE_K, runs[mid].0, 0, 1));
            out.push(stmt(JA, below.len() as u32));
        }
    }
    out.extend(below);
    out.extend(above);
    out
}

/// Compiles the policy above into one filter: a foreign architecture ends
/// the process, then a binary search over runs of system call numbers with
/// the same answer. `seccompiler` compiles the same policy into three
/// stacked filters of 1461 instructions (a linear chain of five per
/// system call), which the kernel converts, JITs and pre-evaluates for
/// every syscall number at each bot's start: 0.5 ms per bot, the largest
/// single cost of a sandboxed start. This one is a sixth of the size; the
/// tests check that it answers exactly like `seccompiler`'s for every
/// number and the arguments that matter.
fn compile() -> Vec<libc::sock_filter> {
    let highest = ALLOWED
        .iter()
        .chain(KILLED)
        .chain([&libc::SYS_clone, &libc::SYS_socket])
        .copied()
        .max()
        .unwrap_or(0);
    let mut runs: Vec<(u32, Answer)> = Vec::new();
    for nr in 0..=highest + 1 {
        let a = answer(nr);
        let special = matches!(a, Answer::CloneWithoutNamespaces | Answer::UnixSocketsOnly);
        match runs.last() {
            Some((_, last)) if *last == a && !special => {}
            _ => runs.push((nr as u32, a)),
        }
    }
    let mut prog = vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(RET_K, RET_KILL_PROCESS),
        stmt(LD_W_ABS, NR),
    ];
    prog.extend(search(&runs));
    prog
}

/// What `fork`, `vfork` and `clone` without `CLONE_THREAD` answer to a
/// bot that may not start processes: `EPERM` ("Operation not permitted"),
/// which programs report at once. Not `EAGAIN`: a shell retries a fork
/// that failed with it for seconds ("fork: retry: Resource temporarily
/// unavailable"), and a program may loop on it for good.
pub const NO_PROCESS_ERRNO: i32 = libc::EPERM;

/// The filter stacked on [`bot_filter`] for a bot that may not start
/// processes: a foreign architecture ends it (as the first filter does);
/// `fork` and `vfork` fail with [`NO_PROCESS_ERRNO`]; `clone` fails so
/// without `CLONE_THREAD` (in the low word of its first argument, the
/// only one the kernel reads), a new thread of the process is allowed
/// (the kernel lets `CLONE_THREAD` go only with `CLONE_SIGHAND` and
/// `CLONE_VM`: a thread, never a process), but not with `CLONE_VFORK`
/// (its caller would wait, in a sleep only `SIGKILL` ends, until the new
/// thread ends or executes: a thread no `SIGSTOP` stops, so that its stop
/// would never be reported held; red team, issue 34; no library starts a
/// thread so); `clone3` fails with `ENOSYS`
/// (its flags are in memory; glibc then falls back to `clone`, which is
/// checked here). Every other number is allowed by its number alone, so
/// the kernel still answers `read` and `write` from its cache. The stack
/// of both answers like the first filter for every call but these
/// (tested below for every number and the arguments that matter).
pub fn one_process_filter() -> &'static [libc::sock_filter] {
    static FILTER: std::sync::OnceLock<Vec<libc::sock_filter>> = std::sync::OnceLock::new();
    FILTER.get_or_init(|| {
        let refuse = RET_ERRNO | NO_PROCESS_ERRNO as u32;
        vec![
            stmt(LD_W_ABS, ARCH),
            jump(JEQ_K, AUDIT_ARCH, 1, 0),
            stmt(RET_K, RET_KILL_PROCESS),
            stmt(LD_W_ABS, NR),
            jump(JEQ_K, libc::SYS_fork as u32, 8, 0),
            jump(JEQ_K, libc::SYS_vfork as u32, 7, 0),
            jump(JEQ_K, libc::SYS_clone3 as u32, 7, 0),
            jump(JEQ_K, libc::SYS_clone as u32, 1, 0),
            stmt(RET_K, RET_ALLOW),
            // clone: a thread that does not wait as a vfork's parent, or
            // refused.
            stmt(LD_W_ABS, ARG0_LOW),
            jump(JSET_K, libc::CLONE_VFORK as u32, 0, 1),
            stmt(RET_K, refuse),
            jump(JSET_K, libc::CLONE_THREAD as u32, 2, 0),
            stmt(RET_K, refuse),
            stmt(RET_K, RET_ERRNO | libc::ENOSYS as u32),
            stmt(RET_K, RET_ALLOW),
        ]
    })
}

/// A filter as text, four hexadecimal numbers per instruction (`code`,
/// `jt`, `jf`, `k`: 4, 2, 2 and 8 digits), for the jail's init, which
/// installs it in its child ([`one_process_filter`]; the init takes it in
/// its `argv[0]` after a `:`).
pub fn filter_hex(filter: &[libc::sock_filter]) -> String {
    filter
        .iter()
        .map(|i| format!("{:04x}{:02x}{:02x}{:08x}", i.code, i.jt, i.jf, i.k))
        .collect()
}

/// The filter (compiled once per process).
pub fn bot_filter() -> &'static [libc::sock_filter] {
    static FILTER: std::sync::OnceLock<Vec<libc::sock_filter>> = std::sync::OnceLock::new();
    FILTER.get_or_init(compile)
}

/// Installs the filter on the calling thread (and what it execs).
/// Only system calls: usable in a spawned child. `no_new_privs` must be set.
pub(crate) fn install(program: &[libc::sock_filter]) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: seccomp reads a valid sock_fprog that outlives the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0,
            &prog as *const libc::sock_fprog,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };

    fn cond(op: SeccompCmpOp, value: u64) -> SeccompCondition {
        SeccompCondition::new(0, SeccompCmpArgLen::Qword, op, value).unwrap()
    }

    fn seccompiler_filter(
        rules: BTreeMap<i64, Vec<SeccompRule>>,
        mismatch: SeccompAction,
        matched: SeccompAction,
    ) -> Vec<libc::sock_filter> {
        let arch = std::env::consts::ARCH.try_into().unwrap();
        let f = SeccompFilter::new(rules, mismatch, matched, arch).unwrap();
        let prog: seccompiler::BpfProgram = f.try_into().unwrap();
        prog.iter()
            .map(|i| libc::sock_filter {
                code: i.code,
                jt: i.jt,
                jf: i.jf,
                k: i.k,
            })
            .collect()
    }

    /// The same policy as three stacked `seccompiler` filters (the way the
    /// sandbox installed it before), in the order the kernel runs them
    /// (the last installed first).
    fn reference() -> Vec<Vec<libc::sock_filter>> {
        let mut allow: BTreeMap<i64, Vec<SeccompRule>> =
            ALLOWED.iter().map(|&nr| (nr, Vec::new())).collect();
        let no_ns = NAMESPACE_FLAGS
            .iter()
            .map(|&f| cond(SeccompCmpOp::MaskedEq(f), 0))
            .collect();
        allow.insert(libc::SYS_clone, vec![SeccompRule::new(no_ns).unwrap()]);
        let allow = seccompiler_filter(
            allow,
            SeccompAction::Errno(libc::ENOSYS as u32),
            SeccompAction::Allow,
        );
        let mut kill: BTreeMap<i64, Vec<SeccompRule>> =
            KILLED.iter().map(|&nr| (nr, Vec::new())).collect();
        let ns = NAMESPACE_FLAGS
            .iter()
            .map(|&f| SeccompRule::new(vec![cond(SeccompCmpOp::MaskedEq(f), f)]).unwrap())
            .collect();
        kill.insert(libc::SYS_clone, ns);
        let kill = seccompiler_filter(kill, SeccompAction::Allow, SeccompAction::KillProcess);
        let mut sockets = BTreeMap::new();
        sockets.insert(
            libc::SYS_socket,
            vec![SeccompRule::new(vec![cond(SeccompCmpOp::Ne, libc::AF_UNIX as u64)]).unwrap()],
        );
        let sockets = seccompiler_filter(
            sockets,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EAFNOSUPPORT as u32),
        );
        vec![allow, kill, sockets]
    }

    /// `struct seccomp_data` as the filter sees it.
    struct Data {
        nr: u32,
        arch: u32,
        arg0: u64,
    }

    impl Data {
        fn word(&self, offset: u32) -> u32 {
            match offset {
                NR => self.nr,
                ARCH => self.arch,
                ARG0_LOW => self.arg0 as u32,
                ARG0_HIGH => (self.arg0 >> 32) as u32,
                // Other arguments and the instruction pointer: arbitrary.
                _ => 0x5a5a_5a5a,
            }
        }
    }

    /// A classic BPF interpreter for what both compilers emit; an
    /// instruction it does not know fails the test.
    fn run(prog: &[libc::sock_filter], d: &Data) -> u32 {
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = prog[pc];
            let cond = |taken: bool| pc + 1 + if taken { i.jt } else { i.jf } as usize;
            pc = match i.code {
                LD_W_ABS => {
                    acc = d.word(i.k);
                    pc + 1
                }
                0x54 => {
                    acc &= i.k; // alu and k
                    pc + 1
                }
                JA => pc + 1 + i.k as usize,
                JEQ_K => cond(acc == i.k),
                0x25 => cond(acc > i.k), // jgt k
                JGE_K => cond(acc >= i.k),
                JSET_K => cond(acc & i.k != 0),
                RET_K => return i.k,
                other => panic!("unknown instruction {other:#x} at {pc}"),
            };
        }
    }

    /// The kernel's rule for stacked filters: the most restrictive action
    /// wins (compared as signed), the most recently installed on a tie.
    fn stacked(filters: &[Vec<libc::sock_filter>], d: &Data) -> u32 {
        let mut ret = RET_ALLOW;
        for f in filters {
            let r = run(f, d);
            if ((r & 0xffff_0000) as i32) < ((ret & 0xffff_0000) as i32) {
                ret = r;
            }
        }
        ret
    }

    #[test]
    fn the_filter_answers_like_seccompilers_for_every_call_and_argument() {
        let ours = bot_filter();
        let theirs = reference();
        let mut arg0s: Vec<u64> = vec![0, 1, 2, 10, u64::MAX, 1 << 32, (1 << 32) | 1];
        arg0s.extend((0..64).map(|b| 1u64 << b));
        arg0s.extend(NAMESPACE_FLAGS.iter().map(|f| f | libc::SIGCHLD as u64));
        arg0s.push(
            (libc::CLONE_VM
                | libc::CLONE_FS
                | libc::CLONE_FILES
                | libc::CLONE_SIGHAND
                | libc::CLONE_THREAD
                | libc::CLONE_SYSVSEM
                | libc::CLONE_SETTLS
                | libc::CLONE_PARENT_SETTID
                | libc::CLONE_CHILD_CLEARTID) as u64,
        );
        let numbers = (0..1024u32)
            .chain((0..600).map(|n| 0x4000_0000 | n))
            .chain([u32::MAX, 0x8000_0000]);
        let mut checked = 0;
        for nr in numbers {
            for arch in [AUDIT_ARCH, 0x4000_0003 /* i386 */] {
                for &arg0 in &arg0s {
                    let d = Data { nr, arch, arg0 };
                    assert_eq!(
                        run(ours, &d),
                        stacked(&theirs, &d),
                        "nr {nr} arch {arch:#x} arg0 {arg0:#x}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 100_000);
        // What it is for: far fewer instructions for the kernel to take in.
        let total: usize = theirs.iter().map(Vec::len).sum();
        assert!(ours.len() * 4 < total, "{} vs {total}", ours.len());
    }

    #[test]
    fn the_policy_decides_the_calls_it_names() {
        let d = |nr: i64, arg0: u64| Data {
            nr: nr as u32,
            arch: AUDIT_ARCH,
            arg0,
        };
        let f = bot_filter();
        assert_eq!(run(f, &d(libc::SYS_read, 0)), RET_ALLOW);
        assert_eq!(run(f, &d(libc::SYS_ptrace, 0)), RET_KILL_PROCESS);
        assert_eq!(
            run(f, &d(libc::SYS_seccomp, 0)),
            RET_ERRNO | libc::ENOSYS as u32
        );
        let unix = libc::AF_UNIX as u64;
        assert_eq!(run(f, &d(libc::SYS_socket, unix)), RET_ALLOW);
        assert_eq!(
            run(f, &d(libc::SYS_socket, libc::AF_INET as u64)),
            RET_ERRNO | libc::EAFNOSUPPORT as u32
        );
        let newnet = libc::CLONE_NEWNET as u64;
        assert_eq!(run(f, &d(libc::SYS_clone, newnet)), RET_KILL_PROCESS);
        assert_eq!(run(f, &d(libc::SYS_clone, libc::SIGCHLD as u64)), RET_ALLOW);
    }

    /// The kernel's `seccomp_is_const_allow` (kernel/seccomp.c): runs the
    /// filter for one native call number, knowing only the number and the
    /// architecture; `true` if it allows the call whatever its arguments.
    /// Such calls go into the filter's action cache at attach time and
    /// never run the filter again.
    fn kernel_caches_as_allowed(prog: &[libc::sock_filter], nr: u32) -> bool {
        let (mut pc, mut acc) = (0usize, 0u32);
        while pc < prog.len() {
            let i = prog[pc];
            match i.code {
                LD_W_ABS => match i.k {
                    NR => acc = nr,
                    ARCH => acc = AUDIT_ARCH,
                    _ => return false, // an argument: not constant
                },
                RET_K => return i.k == RET_ALLOW,
                JA => pc += i.k as usize,
                JEQ_K | 0x25 | JGE_K | JSET_K => {
                    let taken = match i.code {
                        JEQ_K => acc == i.k,
                        0x25 => acc > i.k,
                        JGE_K => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += if taken { i.jt } else { i.jf } as usize;
                }
                0x54 => acc &= i.k,
                _ => return false,
            }
            pc += 1;
        }
        false
    }

    /// The stack of both filters for a bot that may not start processes:
    /// for every call number (x32 and a foreign architecture included) and
    /// every first argument that matters, it answers as the first filter
    /// alone, but that `fork` and `vfork` fail with `EPERM`, `clone` does
    /// so without `CLONE_THREAD` or with `CLONE_VFORK` (namespace flags
    /// still end the bot), and
    /// `clone3` fails with `ENOSYS`. So no call the stack allows makes a
    /// process: `clone` with `CLONE_THREAD` makes a thread of the caller.
    #[test]
    fn a_bot_under_the_one_process_filter_can_start_threads_and_no_process() {
        let (first, second) = (bot_filter(), one_process_filter());
        let both = [first.to_vec(), second.to_vec()];
        let eperm = RET_ERRNO | NO_PROCESS_ERRNO as u32;
        let thread = (libc::CLONE_VM
            | libc::CLONE_FS
            | libc::CLONE_FILES
            | libc::CLONE_SIGHAND
            | libc::CLONE_THREAD
            | libc::CLONE_SYSVSEM
            | libc::CLONE_SETTLS
            | libc::CLONE_PARENT_SETTID
            | libc::CLONE_CHILD_CLEARTID) as u64;
        // glibc's fork, and posix_spawn's clone (CLONE_VM | CLONE_VFORK).
        let fork =
            (libc::CLONE_CHILD_SETTID | libc::CLONE_CHILD_CLEARTID) as u64 | libc::SIGCHLD as u64;
        let spawn = (libc::CLONE_VM | libc::CLONE_VFORK) as u64 | libc::SIGCHLD as u64;
        let mut arg0s: Vec<u64> = vec![0, u64::MAX, thread, fork, spawn, 1 << 32];
        arg0s.extend((0..64).map(|b| 1u64 << b));
        arg0s.extend(NAMESPACE_FLAGS.iter().map(|f| f | thread));
        arg0s.push(thread | libc::CLONE_VFORK as u64);
        let numbers = (0..1024u32)
            .chain((0..600).map(|n| 0x4000_0000 | n))
            .chain([u32::MAX, 0x8000_0000]);
        for nr in numbers {
            for arch in [AUDIT_ARCH, 0x4000_0003 /* i386 */] {
                for &arg0 in &arg0s {
                    let d = Data { nr, arch, arg0 };
                    let alone = run(first, &d);
                    let stacked = stacked(&both, &d);
                    let n = nr as i64;
                    let no_thread = arg0 as u32 & libc::CLONE_THREAD as u32 == 0
                        || arg0 as u32 & libc::CLONE_VFORK as u32 != 0;
                    let refused = n == libc::SYS_fork
                        || n == libc::SYS_vfork
                        || (n == libc::SYS_clone && no_thread);
                    let expected = if arch != AUDIT_ARCH || alone == RET_KILL_PROCESS || !refused {
                        alone
                    } else {
                        eperm
                    };
                    assert_eq!(stacked, expected, "nr {nr} arch {arch:#x} arg0 {arg0:#x}");
                    let process = refused || n == libc::SYS_clone3;
                    if arch == AUDIT_ARCH && process {
                        assert_ne!(stacked, RET_ALLOW, "nr {nr} arg0 {arg0:#x} makes a process");
                    }
                }
            }
        }
        let d = |nr: i64, arg0: u64| Data {
            nr: nr as u32,
            arch: AUDIT_ARCH,
            arg0,
        };
        assert_eq!(stacked(&both, &d(libc::SYS_clone, thread)), RET_ALLOW);
        assert_eq!(stacked(&both, &d(libc::SYS_clone, fork)), eperm);
        assert_eq!(stacked(&both, &d(libc::SYS_clone, spawn)), eperm);
        // A thread whose caller waits as a vfork's parent (red team: no
        // stop reaches that caller, so the bot's stop never holds).
        let vfork_thread = thread | libc::CLONE_VFORK as u64;
        assert_eq!(stacked(&both, &d(libc::SYS_clone, vfork_thread)), eperm);
        assert_eq!(stacked(&both, &d(libc::SYS_fork, 0)), eperm);
        assert_eq!(stacked(&both, &d(libc::SYS_vfork, 0)), eperm);
        assert_eq!(
            stacked(&both, &d(libc::SYS_clone3, 0)),
            RET_ERRNO | libc::ENOSYS as u32
        );
        assert_eq!(stacked(&both, &d(libc::SYS_execve, 0)), RET_ALLOW);
        // The kernel's cache still answers every call the number decides.
        for &nr in ALLOWED.iter().filter(|&&nr| answer(nr) == Answer::Allow) {
            let cached = [libc::SYS_fork, libc::SYS_vfork].contains(&nr)
                || kernel_caches_as_allowed(second, nr as u32);
            assert!(cached, "call {nr} would run the second filter every time");
        }
    }

    #[test]
    fn every_allowed_call_is_answered_from_the_kernels_cache() {
        // A bot's round trip is a read and a write: with the number alone
        // deciding them, the kernel answers from its per-filter bitmap and
        // never runs the filter on them.
        let f = bot_filter();
        for &nr in ALLOWED.iter().filter(|&&nr| answer(nr) == Answer::Allow) {
            assert!(
                kernel_caches_as_allowed(f, nr as u32),
                "call {nr} would run the filter every time"
            );
        }
        // Calls decided by an argument are not cached (and must not be).
        assert!(!kernel_caches_as_allowed(f, libc::SYS_clone as u32));
        assert!(!kernel_caches_as_allowed(f, libc::SYS_socket as u32));
        assert!(!kernel_caches_as_allowed(f, libc::SYS_ptrace as u32));
    }
}
