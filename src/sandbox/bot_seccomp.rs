//! The seccomp-bpf filters of the bot sandbox, built with `seccompiler`
//! (the filter compiler of Firecracker), not written by hand.
//!
//! Three filters are stacked (installed in the order 3, 2, 1: once the
//! allow-list is in, `seccomp` itself is refused); the kernel takes the
//! strictest answer of all:
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
//!    is no network in the bot's namespace anyway).
//!
//! Calls of another ABI (x32, i386) match no allowed number and are refused;
//! a foreign architecture field kills the process (seccompiler's preamble).
//!
//! This module only builds filters; [`super::bot`] installs them last,
//! after every other confinement step, just before `execve`.

use std::collections::BTreeMap;
use std::io;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

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
    libc::SYS_mincore,
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
    libc::SYS_sysinfo,
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
    libc::SYS_readahead,
    libc::SYS_getxattr,
    libc::SYS_lgetxattr,
    libc::SYS_fgetxattr,
    libc::SYS_listxattr,
    libc::SYS_llistxattr,
    libc::SYS_flistxattr,
    libc::SYS_time,
    libc::SYS_futex,
    libc::SYS_sched_setaffinity,
    libc::SYS_sched_getaffinity,
    libc::SYS_epoll_create,
    libc::SYS_getdents64,
    libc::SYS_set_tid_address,
    libc::SYS_restart_syscall,
    libc::SYS_fadvise64,
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
    libc::SYS_inotify_init,
    libc::SYS_inotify_add_watch,
    libc::SYS_inotify_rm_watch,
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
    libc::SYS_inotify_init1,
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
    libc::SYS_preadv2,
    libc::SYS_pwritev2,
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

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> io::Result<SeccompCondition> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(other)
}

fn other<E: std::fmt::Display>(e: E) -> io::Error {
    io::Error::other(format!("seccomp filter: {e}"))
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    mismatch: SeccompAction,
    matched: SeccompAction,
) -> io::Result<BpfProgram> {
    let arch = std::env::consts::ARCH.try_into().map_err(other)?;
    let filter = SeccompFilter::new(rules, mismatch, matched, arch).map_err(other)?;
    filter.try_into().map_err(other)
}

/// The filters, in the order they are installed (compiled once per process).
pub fn bot_filters() -> io::Result<&'static [BpfProgram]> {
    static FILTERS: std::sync::OnceLock<Vec<BpfProgram>> = std::sync::OnceLock::new();
    if let Some(f) = FILTERS.get() {
        return Ok(f);
    }
    let built = build_filters()?;
    Ok(FILTERS.get_or_init(|| built))
}

fn build_filters() -> io::Result<Vec<BpfProgram>> {
    // 1. The allow-list; `clone` only without namespace flags.
    let mut allow: BTreeMap<i64, Vec<SeccompRule>> =
        ALLOWED.iter().map(|&nr| (nr, Vec::new())).collect();
    let mut no_ns = Vec::new();
    for flag in NAMESPACE_FLAGS {
        no_ns.push(cond(0, SeccompCmpOp::MaskedEq(flag), 0)?);
    }
    allow.insert(
        libc::SYS_clone,
        vec![SeccompRule::new(no_ns).map_err(other)?],
    );
    let allow = compile(
        allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        SeccompAction::Allow,
    )?;
    // 2. The kill-list, and `clone` with any namespace flag.
    let mut kill: BTreeMap<i64, Vec<SeccompRule>> =
        KILLED.iter().map(|&nr| (nr, Vec::new())).collect();
    let mut ns_rules = Vec::new();
    for flag in NAMESPACE_FLAGS {
        ns_rules.push(
            SeccompRule::new(vec![cond(0, SeccompCmpOp::MaskedEq(flag), flag)?]).map_err(other)?,
        );
    }
    kill.insert(libc::SYS_clone, ns_rules);
    let kill = compile(kill, SeccompAction::Allow, SeccompAction::KillProcess)?;
    // 3. Sockets: AF_UNIX only.
    let mut sockets = BTreeMap::new();
    sockets.insert(
        libc::SYS_socket,
        vec![
            SeccompRule::new(vec![cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?])
                .map_err(other)?,
        ],
    );
    let sockets = compile(
        sockets,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EAFNOSUPPORT as u32),
    )?;
    // The allow-list goes last: once it is in, `seccomp` itself is refused.
    Ok(vec![sockets, kill, allow])
}

/// Installs one compiled filter on the calling thread (and what it execs).
/// Only system calls: usable in a spawned child. `no_new_privs` must be set.
pub(crate) fn install(program: &BpfProgram) -> io::Result<()> {
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

    #[test]
    fn the_filters_compile() {
        let f = bot_filters().unwrap();
        assert_eq!(f.len(), 3);
        assert!(f
            .iter()
            .all(|p| !p.is_empty() && p.len() < u16::MAX as usize));
    }
}
