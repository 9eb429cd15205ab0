//! The two children of a bot's spawn, run on the [`Plan`] after the
//! clone: the first child (control group, network namespace, descriptors,
//! rlimits, CPU pin, toolchain staging; it clones the bot and writes its
//! user maps) and the bot itself (its root, pivot, user, capabilities,
//! parent-death signal, seccomp, exec). They share the server's memory, so
//! they only make system calls on data prepared before: no allocation, no
//! lock, no `std` I/O. One sequence each, best read top to bottom.
//!
//! Not here: preparing the plan (`plan.rs`) and what the server does with
//! the started bot ([`super::BotProcess`]).

use std::ffi::{c_int, c_void};
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::Ordering;

use crate::sandbox::cgroup::join_fd;
use crate::sandbox::set_rlimit;
use crate::sandbox::spawn::{arrange_fds, check};

use super::plan::{step, Action, Plan, CHILD_STACK};
use super::spec::INSIDE_UID;

impl Plan {
    /// The descriptor of the program to execute, if it is not `prog`:
    /// the init, or the sealed program.
    fn exe_src(&self) -> Option<c_int> {
        match (self.init, &self.exe) {
            (Some(init), _) => Some(init.fd()),
            (None, Some(exe)) => Some(exe.fd()),
            (None, None) => None,
        }
    }

    fn fail(&self, name: &str, e: io::Error) -> io::Error {
        self.failed_step.store(step(name), Ordering::SeqCst);
        self.failed_errno
            .store(e.raw_os_error().unwrap_or(libc::EINVAL), Ordering::SeqCst);
        e
    }

    /// The first child: control group, limits; then it clones the bot
    /// into its namespaces, writes the bot's user and group maps from
    /// outside (as root it may map the bot's own uid), lets it go and waits
    /// until it has exec'd. Only system calls.
    pub(super) fn first_child(&self) -> io::Error {
        // SAFETY: plain prctl.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        }
        for &fd in &self.join {
            if let Err(e) = join_fd(fd) {
                return self.fail("join the control group", e);
            }
        }
        // A lent network namespace: the bot is born in it (entered before
        // the descriptors are closed).
        if let Some(fd) = self.netns {
            // SAFETY: plain syscall; it changes only this child.
            if let Err(e) = check(unsafe { libc::setns(fd, libc::CLONE_NEWNET) }) {
                return self.fail("enter the network namespace", e);
            }
        }
        // Only the bot's pipes from here on, at 0, 1, 2 (and the init's).
        if let Err(e) = arrange_fds(&self.fds, self.exe_src()) {
            return self.fail("arrange descriptors", e);
        }
        for &(res, v) in &self.rlimits {
            if let Err(e) = set_rlimit(res, v, v) {
                return self.fail("set resource limits", e);
            }
        }
        if let Some(dir) = &self.toolchain {
            // A mount namespace of this child's own, where the toolchain is
            // at the stage for the bot (whose namespace copies this one).
            // SAFETY: plain system calls on data prepared before the clone.
            let staged = unsafe {
                check(libc::unshare(libc::CLONE_NEWNS))
                    .and_then(|()| crate::sandbox::make_mounts_private(&self.slash))
                    .and_then(|()| {
                        check(libc::mount(
                            dir.as_ptr(),
                            self.toolchain_stage.as_ptr(),
                            std::ptr::null(),
                            libc::MS_BIND | libc::MS_REC,
                            std::ptr::null(),
                        ))
                    })
            };
            if let Err(e) = staged {
                return self.fail("stage the toolchain", e);
            }
        }
        if let Some(set) = &self.affinity {
            // Inherited by the bot and everything it starts.
            if let Err(e) = rustix::thread::sched_setaffinity(None, set) {
                return self.fail("pin to its CPU", e.into());
            }
        }
        if self.outside_uid.is_some() {
            // No supplementary group (root's) goes with the bot.
            // SAFETY: plain syscall.
            if let Err(e) = check(unsafe { libc::setgroups(0, std::ptr::null()) }) {
                return self.fail("become the bot's user", e);
            }
        }
        let mut flags = libc::CLONE_VM
            | libc::CLONE_PARENT
            | libc::CLONE_NEWUSER
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWCGROUP
            | libc::CLONE_CHILD_SETTID
            | libc::CLONE_CHILD_CLEARTID;
        if self.netns.is_none() {
            flags |= libc::CLONE_NEWNET;
        }
        let top = (self.stack.as_ptr() as usize + CHILD_STACK) & !15usize;
        // SAFETY: the bot runs `bot_main` on its own stack with this plan,
        // which outlives it: we wait below until it has exec'd or exited
        // (the kernel then clears `bot_tid`), and the server waits for us.
        let pid = unsafe {
            libc::clone(
                bot_main,
                top as *mut c_void,
                flags,
                self as *const Plan as *mut c_void,
                std::ptr::null_mut::<libc::pid_t>(),
                std::ptr::null_mut::<c_void>(),
                self.bot_tid.as_ptr(),
            )
        };
        if pid < 0 {
            return self.fail("clone the bot", io::Error::last_os_error());
        }
        // The server reaps the bot even if its start fails below.
        self.bot_pid.store(pid, Ordering::SeqCst);
        let mapped = self.write_maps(pid);
        self.go
            .store(if mapped.is_ok() { 1 } else { -1 }, Ordering::SeqCst);
        // Wait until the bot's memory is released (exec or exit): the
        // kernel then writes 0 into `bot_tid` and wakes the futex. The wake
        // was seen to go missing here, so the wait also looks every 200 us.
        // A bot that is held waits for the server, which opens its `/work`
        // once we are gone: then we wait only until it waits.
        loop {
            let v = self.bot_tid.load(Ordering::SeqCst);
            if v == 0 || (self.hold && self.held.load(Ordering::SeqCst) == 1) {
                break;
            }
            let ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 200_000,
            };
            // SAFETY: futex wait on a word of the shared memory, with a timeout.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.bot_tid.as_ptr(),
                    libc::FUTEX_WAIT,
                    v,
                    &ts as *const libc::timespec,
                );
            }
        }
        if let Err(e) = mapped {
            return self.fail("map the user", e);
        }
        let errno = self.failed_errno.load(Ordering::SeqCst);
        if errno != 0 {
            return io::Error::from_raw_os_error(errno);
        }
        // SAFETY: leaves without running destructors (shared memory).
        unsafe { libc::_exit(0) }
    }

    /// Writes `/proc/PID/{setgroups,uid_map,gid_map}` of the bot.
    fn write_maps(&self, pid: i32) -> io::Result<()> {
        let mut path = [0u8; 48];
        // SAFETY: writes into NUL-terminated stack buffers.
        unsafe {
            write_file(proc_path(&mut path, pid, b"setgroups"), b"deny")?;
            write_file(proc_path(&mut path, pid, b"uid_map"), &self.uid_map)?;
            write_file(proc_path(&mut path, pid, b"gid_map"), &self.gid_map)?;
        }
        Ok(())
    }

    /// The bot before exec: map the user, build and enter the root, drop
    /// privileges, seccomp, exec. Only system calls.
    fn bot(&self) -> io::Error {
        macro_rules! t {
            ($name:expr, $e:expr) => {
                if let Err(e) = $e {
                    return self.fail($name, e);
                }
            };
        }
        // SAFETY: system calls on data prepared before the clone.
        unsafe {
            // Wait for the first child to write our maps.
            loop {
                match self.go.load(Ordering::SeqCst) {
                    0 => {
                        libc::sched_yield();
                    }
                    1 => break,
                    _ => libc::_exit(127),
                }
            }
            t!(
                "arrange descriptors",
                arrange_fds(&self.inner_fds, self.exe_src().map(|_| self.exe_fd))
            );
            // The tasks' limit counted in this user namespace alone (see
            // `TasksCounted::InOwnUserNamespace`); lowering a limit needs no
            // privilege.
            if let Some(n) = self.nproc_inside {
                t!("set resource limits", set_rlimit(libc::RLIMIT_NPROC, n, n));
            }
            // Become uid 1000 (the bot's uid outside) at once: files made on
            // our own tmpfs need a mapped owner. The capabilities in our
            // namespace stay until the capset below (uid 0 is not mapped
            // here, so the kernel sees no root being left).
            t!(
                "drop to the bot's user",
                check(libc::setresgid(INSIDE_UID, INSIDE_UID, INSIDE_UID))
                    .and_then(|()| check(libc::setresuid(INSIDE_UID, INSIDE_UID, INSIDE_UID)))
            );
            t!(
                "make the mounts private",
                crate::sandbox::make_mounts_private(&self.slash)
            );
            t!(
                "mount the new root",
                check(libc::mount(
                    self.tmpfs.as_ptr(),
                    self.staging.as_ptr(),
                    self.tmpfs.as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    self.staging_opts.as_ptr().cast(),
                ))
            );
            for a in &self.actions {
                match a {
                    Action::Mkdir(p, mode) => {
                        t!("create a folder", check(libc::mkdir(p.as_ptr(), *mode)))
                    }
                    Action::Bind { src, dst, remount } => {
                        t!(
                            "bind a read-only path",
                            check(libc::mount(
                                src.as_ptr(),
                                dst.as_ptr(),
                                std::ptr::null(),
                                libc::MS_BIND | libc::MS_REC,
                                std::ptr::null(),
                            ))
                        );
                        t!(
                            "bind a read-only path",
                            check(libc::mount(
                                std::ptr::null(),
                                dst.as_ptr(),
                                std::ptr::null(),
                                libc::MS_BIND
                                    | libc::MS_REMOUNT
                                    | libc::MS_RDONLY
                                    | libc::MS_NOSUID
                                    | libc::MS_NODEV
                                    | remount,
                                std::ptr::null(),
                            ))
                        );
                    }
                    Action::Symlink(target, link) => {
                        t!(
                            "make a link",
                            check(libc::symlink(target.as_ptr(), link.as_ptr()))
                        )
                    }
                    Action::Device { src, dst, remount } => {
                        let fd = libc::open(dst.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o666);
                        if fd < 0 {
                            return self.fail("create a folder", io::Error::last_os_error());
                        }
                        libc::close(fd);
                        t!(
                            "bind a read-only path",
                            check(libc::mount(
                                src.as_ptr(),
                                dst.as_ptr(),
                                std::ptr::null(),
                                libc::MS_BIND,
                                std::ptr::null(),
                            ))
                        );
                        t!(
                            "bind a read-only path",
                            check(libc::mount(
                                std::ptr::null(),
                                dst.as_ptr(),
                                std::ptr::null(),
                                libc::MS_BIND
                                    | libc::MS_REMOUNT
                                    | libc::MS_RDONLY
                                    | libc::MS_NOSUID
                                    | remount,
                                std::ptr::null(),
                            ))
                        );
                    }
                    Action::Tmpfs { dst, opts } => t!(
                        "mount a tmpfs",
                        check(libc::mount(
                            self.tmpfs.as_ptr(),
                            dst.as_ptr(),
                            self.tmpfs.as_ptr(),
                            libc::MS_NOSUID | libc::MS_NODEV,
                            opts.as_ptr().cast(),
                        ))
                    ),
                    Action::Proc(dst) => {
                        // Only the processes (`subset=pid`, Linux 5.8): no
                        // meminfo, loadavg, stat, cpuinfo or sys, whose
                        // counters are the whole machine's. An older
                        // kernel gets the whole /proc; without a fresh
                        // /proc at all (a host that masks parts of its
                        // own) the bot simply has none.
                        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                        if libc::mount(
                            self.proc_fs.as_ptr(),
                            dst.as_ptr(),
                            self.proc_fs.as_ptr(),
                            flags,
                            self.proc_opts.as_ptr().cast(),
                        ) != 0
                        {
                            libc::mount(
                                self.proc_fs.as_ptr(),
                                dst.as_ptr(),
                                self.proc_fs.as_ptr(),
                                flags,
                                std::ptr::null(),
                            );
                        }
                    }
                    Action::File {
                        path,
                        bytes,
                        len,
                        mode,
                    } => {
                        let fd = libc::open(
                            path.as_ptr(),
                            libc::O_CREAT | libc::O_WRONLY | libc::O_EXCL | libc::O_CLOEXEC,
                            *mode,
                        );
                        if fd < 0 {
                            return self.fail("write a program file", io::Error::last_os_error());
                        }
                        let mut done = 0usize;
                        while done < *len {
                            let r = libc::write(fd, bytes.add(done).cast(), *len - done);
                            if r <= 0 {
                                let e = io::Error::last_os_error();
                                libc::close(fd);
                                return self.fail("write a program file", e);
                            }
                            done += r as usize;
                        }
                        libc::close(fd);
                    }
                }
            }
            t!(
                "pivot into the new root",
                check(libc::syscall(
                    libc::SYS_pivot_root,
                    self.staging.as_ptr(),
                    self.put_old.as_ptr()
                ) as c_int)
                .and_then(|()| check(libc::chdir(self.slash.as_ptr())))
                .and_then(|()| check(libc::umount2(self.old_inside.as_ptr(), libc::MNT_DETACH)))
                .and_then(|()| check(libc::rmdir(self.old_inside.as_ptr())))
            );
            t!(
                "make the root read-only",
                check(libc::mount(
                    std::ptr::null(),
                    self.slash.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND
                        | libc::MS_REMOUNT
                        | libc::MS_RDONLY
                        | libc::MS_NOSUID
                        | libc::MS_NODEV,
                    std::ptr::null(),
                ))
            );
            // A process group of its own, so that `kill(0, …)` reaches only
            // the bot. Not a session of its own: `setsid` would also give
            // the bot a scheduler autogroup of its own, and every switch
            // between referee and bot would cross task groups (a round trip
            // 13 % slower, measured). The bot has no terminal: no
            // descriptor of one, no `/dev/tty`.
            t!("drop to the bot's user", {
                check(libc::chdir(self.work.as_ptr())).and_then(|()| check(libc::setpgid(0, 0)))
            });
            // No capability survives, not even in the bot's own namespaces.
            let mut header = CapHeader {
                version: 0x2008_0522,
                pid: 0,
            };
            let data = [CapData::default(); 2];
            t!(
                "drop to the bot's user",
                check(libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) as c_int)
            );
            // Changing the user clears the parent-death signal: arm it now.
            t!(
                "set no_new_privs and the parent-death signal",
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))
                    .and_then(|()| check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)))
            );
            if self.hold {
                // The server opens our /work (through /proc/PID/root) now.
                self.held.store(1, Ordering::SeqCst);
                while self.released.load(Ordering::SeqCst) == 0 {
                    libc::sched_yield();
                }
                if self.released.load(Ordering::SeqCst) < 0 {
                    libc::_exit(127);
                }
            }
            t!(
                "install seccomp",
                crate::sandbox::bot_seccomp::install(self.filter)
            );
            if let Some(second) = self.one_process {
                t!(
                    "install seccomp",
                    crate::sandbox::bot_seccomp::install(second)
                );
            }
            if self.exe_src().is_some() {
                libc::syscall(
                    libc::SYS_execveat,
                    self.exe_fd,
                    c"".as_ptr(),
                    self.argv.as_ptr(),
                    self.env.as_ptr(),
                    libc::AT_EMPTY_PATH,
                );
            } else {
                libc::execve(self.prog.as_ptr(), self.argv.as_ptr(), self.env.as_ptr());
            }
            self.fail("exec the program", io::Error::last_os_error())
        }
    }
}

/// Opens `/work` of the held bot `pid` (its own tmpfs, seen through
/// `/proc/PID/root`): the descriptor keeps the folder after the bot and its
/// namespace are gone.
pub(super) fn open_work(pid: i32) -> io::Result<OwnedFd> {
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(format!("/proc/{pid}/root/work"))?;
    Ok(f.into())
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

extern "C" fn bot_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the plan; the parent is suspended until we exec or exit.
    let plan = unsafe { &*(arg as *const Plan) };
    let _ = plan.bot();
    // SAFETY: leaves without running destructors (shared memory).
    unsafe { libc::_exit(127) }
}

/// `/proc/PID/NAME` into `buf`, NUL-terminated (no allocation).
fn proc_path<'a>(buf: &'a mut [u8; 48], pid: i32, name: &[u8]) -> &'a [u8] {
    let mut digits = [0u8; 20];
    let pid = crate::decimal::digits(&mut digits, pid.max(0) as u64);
    let mut len = 0;
    for part in [&b"/proc/"[..], pid, &b"/"[..], name] {
        buf[len..len + part.len()].copy_from_slice(part);
        len += part.len();
    }
    buf[len] = 0;
    &buf[..=len]
}

/// Writes `data` into the file at the NUL-terminated `path`.
unsafe fn write_file(path: &[u8], data: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = libc::write(fd, data.as_ptr().cast(), data.len());
    let e = io::Error::last_os_error();
    libc::close(fd);
    if n != data.len() as isize {
        return Err(e);
    }
    Ok(())
}
