//! The bot sandbox: a participant's program in any language, confined for
//! one match.
//!
//! A bot is a language runtime (a native program, a Python interpreter, a
//! JVM) that talks over standard input and output. Every bot process, and
//! everything it starts, runs
//! - in new **user, mount, PID, network, IPC, UTS and cgroup namespaces**:
//!   its own PID 1 (when it ends, the kernel ends everything it started;
//!   a build's and a match's PID 1 is the compile jail's init,
//!   [`FirstProcess::Init`], which starts the compiler or the bot's
//!   program as PID 2 so that it gets its limits' signals, and kills and
//!   reaps everything before it exits),
//!   no network interface but loopback-less nothing, a private `/proc` that
//!   shows only its own processes (as root, the network namespace is one
//!   the server made and lends to one bot at a time, [`super::netns`]);
//! - in a process group of its own, without a session or terminal;
//! - on a **root file system of its own**: a tmpfs, read-only once built,
//!   holding `/usr` (and the `bin`/`lib` links) read-only, the language's
//!   extra read-only paths (e.g. `/etc/java-17-openjdk`), `/dev/null`,
//!   `zero`, `random`, `urandom`, the program files in `/bot` (a native
//!   program runs from a sealed in-memory copy instead, see [`BotFile`]),
//!   and two private, size-limited writable tmpfs folders: `/tmp` and the
//!   working folder `/work`. Nothing of the host's `/etc`, `/home`, `/root`, `/tmp`
//!   or any other bot is there, and all of it vanishes with the match;
//! - as an unprivileged user: inside, uid 1000; outside, when the server is
//!   root, a uid of its own per running bot (so that `RLIMIT_NPROC` counts
//!   exactly this bot), otherwise the server's uid, and then the bot sets
//!   `RLIMIT_NPROC` itself inside its own user namespace, where the kernel
//!   counts its tasks alone (`TasksCounted`);
//! - in a **control group** of its own ([`super::cgroup`]) that limits its
//!   memory (resident pages, not address space: the JVM's reservations are
//!   not use) and its threads and processes, and counts the CPU time of the
//!   whole tree; rlimits where control groups are missing, and there a
//!   match's bot is **one process** ([`NewProcesses::WhereCounted`]: it may
//!   start threads, never a process), whose CPU the kernel counts in one
//!   place;
//! - under **seccomp-bpf** ([`super::bot_seccomp`]), installed last, with
//!   `no_new_privs`;
//! - with `PR_SET_PDEATHSIG` (armed after the last change of user): if the
//!   server dies, even by `kill -9`, the bot's PID 1 dies and the kernel
//!   ends its whole namespace.
//!
//! It is started without copying the server ([`super::spawn`]) in two
//! steps, because a `CLONE_VM` child cannot create a user namespace by
//! `unshare`: a first child joins the control group, enters the lent
//! network namespace (if there is one), keeps only the bot's three pipes,
//! sets the rlimits and clears its supplementary groups; it clones the bot
//! (`CLONE_PARENT`, so that the server is its parent, with all the
//! namespaces), writes the bot's uid and gid maps from outside
//! (as root it may map the bot's own uid), lets it go, waits until the bot
//! has exec'd (`CLONE_CHILD_CLEARTID`, the mechanism behind vfork) and
//! exits. The bot becomes uid 1000, builds its root, pivots into it,
//! drops every capability, arms the parent-death signal, sets
//! `no_new_privs`, installs seccomp and execs. Nothing of it touches the
//! server's `/proc/self`, so concurrent spawns cannot disturb each other.
//!
//! Deliberately no protocol here: [`BotProcess`] gives the referee three
//! pipes, the CPU time, and how the process ended.
//!
//! This file holds the running bot ([`BotProcess`]) (its uid slot is
//! [`super::uid`]'s, shared with the compile jails);
//! `spec.rs` what a caller asks for (the spec, the limits, the program's
//! files, the spawn error), `plan.rs` prepares a spawn, `children.rs` is
//! the code of its two children, `rest.rs` tells whether a bot has come to
//! rest, `tests.rs` has the unit tests.

use std::cell::{Cell, OnceCell};
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::process::ExitStatus;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::cgroup::{Freeze, Group, GroupLimits, Held, BOT_GROUPS};
use super::jail::{read_init_report, InitRecords, InitReport};
use super::netns::{Netns, POOL};
use super::spawn::{self};
use super::uid::UidSlot as Slot;
use super::{is_root, pipe, set_nonblocking};

mod children;
mod plan;
mod rest;
mod spec;

use children::open_work;
use plan::{one_process, Plan, STEPS};
pub use rest::RestProbe;
use rest::{read_at_start, reads_stdin, stat_fields, task_syscall_files};
use spec::io_err;
pub use spec::{
    BotFile, BotLimits, BotSpawnError, BotSpec, FirstProcess, Network, NewProcesses, ProcFs,
    WorkFolder, INSIDE_UID,
};
#[cfg(test)]
use {
    plan::{bot_rlimits, check_relative, TasksCounted},
    rest::{blocked_for_good, waits_for_input},
};

/// First uid of the range bots get outside their namespace when the server
/// runs as root (shared with the compile jails, [`super::uid`]).
pub use super::uid::UID_BASE as BOT_UID_BASE;

/// A running bot: its three pipes, its control group, its process.
#[derive(Debug)]
pub struct BotProcess {
    child: spawn::Child,
    /// Our end of the bot's standard input (non-blocking).
    pub stdin: OwnedFd,
    /// Our end of the bot's standard output (non-blocking).
    pub stdout: OwnedFd,
    /// Our end of the bot's standard error (non-blocking).
    pub stderr: OwnedFd,
    group: Option<Group>,
    /// The network namespace lent to it, given back when it is gone.
    netns: Option<Netns>,
    limits: BotLimits,
    _slot: Option<Slot>,
    /// How it ended, once [`BotProcess::finish`] reaped it and checked its
    /// group (a second call, e.g. on drop, reads nothing again).
    finished: Option<ExitStatus>,
    /// Its `/work`, for [`WorkFolder::Returned`].
    work: Option<OwnedFd>,
    /// Looks whether it has come to rest ([`BotProcess::at_rest`]), made
    /// at the first look (under an init, the program is its child, which
    /// the init forks after the spawn).
    rest: OnceCell<RestProbe>,
    /// [`FirstProcess::Init`]: the init's status pipe (read once the init
    /// is reaped) and the server's end of its request pipe.
    init: Option<InitPipes>,
    /// The program's process, once found ([`BotProcess::program_pid`]).
    program: OnceCell<Program>,
    /// Where its CPU is counted.
    counter: CpuCounter,
    /// The most CPU time [`BotProcess::cpu_time`] has answered: a count
    /// never goes back (a count from `/proc` is in ticks, the kernel's at
    /// the init's reaping in microseconds).
    counted: Cell<Duration>,
    /// Whether the program was stopped by `SIGSTOP` ([`BotProcess::freeze`]
    /// without a freezer).
    stopped: Cell<bool>,
}

/// Where a bot's CPU time is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CpuCounter {
    /// Its control group: every process of its tree, ended or not.
    Group,
    /// Its program, which is one process ([`NewProcesses::WhereCounted`]
    /// without a control group): its own `/proc/PID/stat` (every thread
    /// of it, ended or not), then, once the init has reaped it, the
    /// init's (the init's own and its reaped child's), then what the
    /// kernel gave when the server reaped the init.
    OneProcess,
    /// Every process of its tree still there and every child they reaped
    /// (a build without a control group: the compiler starts its tools;
    /// its init reaps and counts all of them at its end).
    Tree,
}

/// A bot's program: its pid as the server sees it and its
/// `/proc/PID/stat`, held open: the file stays the process's (reading it
/// fails once the process is reaped, whatever gets its pid next).
#[derive(Debug)]
struct Program {
    pid: i32,
    stat: fs::File,
    /// Its pidfd (`None` where the kernel has none), opened before its
    /// stat was checked: the process the check found.
    pidfd: Option<OwnedFd>,
}

impl Program {
    /// Opens the stat of `pid` and keeps it if it is `parent`'s child
    /// (`None` where the program is not that process, or is gone).
    fn pin(pid: i32, parent: Option<i32>) -> Option<Program> {
        let pidfd = pidfd_open(pid, 0).ok();
        let stat = fs::File::open(format!("/proc/{pid}/stat")).ok()?;
        let program = Program { pid, stat, pidfd };
        if let Some(parent) = parent {
            if stat_ppid(&program.read()?)? != parent {
                return None;
            }
        }
        Some(program)
    }

    /// Its stat line's bytes (the command's name in it is the program's
    /// choice, any bytes: [`stat_fields`] reads past it).
    fn read(&self) -> Option<Vec<u8>> {
        let mut buf = [0u8; 1024];
        let n = self.stat.read_at(&mut buf, 0).ok()?;
        Some(buf[..n].to_vec())
    }

    /// Its CPU time (every thread's, ended or not), while it is not
    /// reaped: its process CPU clock, in nanoseconds as the scheduler last
    /// counted each thread (at its last switch or tick), read by its pid;
    /// the held stat is read after it, so a program reaped before the
    /// clock's read (its pid then maybe another process's) gives `None`.
    /// Before, its stat's `utime` and `stime`, each cut to whole ticks of
    /// 10 ms: a count up to 20 ms short, so a bot could run that much more
    /// than `FROZEN_SLACK` while stopped unseen (red team, reasoned).
    fn cpu(&self) -> Option<Duration> {
        let clock = process_cpu_clock(self.pid);
        self.read()?;
        clock
    }

    /// Whether its stop by `SIGSTOP` holds, as the kernel reports it: no
    /// thread in its `/proc/PID/task/TID/stat` is running or waiting for a
    /// CPU (state `R`), or one has taken the stop (`T`), or the program is
    /// reaped. A signal only asks (see [`Program::stop`], which sends one
    /// to each thread found running): until a thread takes it, it runs on.
    /// The first thread that takes it sets the stop pending in every other
    /// thread of the process at once and wakes each (the kernel's
    /// `do_signal_stop`, under the lock that also keeps a thread being
    /// made from missing it), so once one shows `T`, each thread still
    /// running or waiting for a CPU stops before its next instruction: a
    /// thread the scheduler leaves waiting (`SCHED_IDLE`, nice 19, behind
    /// another process on its CPU) runs nothing meanwhile, and waiting
    /// for it let a bot hold each of its stops off at no CPU for
    /// `FREEZE_HOLD_WAIT` (red team, after the stop sent to each running
    /// thread). A thread asleep (`S`, `D`) runs nothing, and when it wakes
    /// it stops before its next instruction, unless the bot undid its stop
    /// (a timer's `SIGCONT`), which its CPU count then shows, as it shows a
    /// thread that stays in the kernel: so asleep is held too. Waiting for
    /// every thread to show `T` let a bot keep its stop from ever holding
    /// at no CPU (a thread waiting as a vfork's parent, which no stop
    /// reaches, or threads that resume themselves and sleep), and each of
    /// its stops then cost its match `FREEZE_HOLD_WAIT` (red team, after
    /// the first form of this check). The listing is the program's: its
    /// stat, held open, still reads after it (not reaped, so its pid was
    /// no other process's). A read that fails otherwise is `Pending`.
    fn held(&self) -> Held {
        let stopped_or_none_running = || -> Option<bool> {
            let mut running = false;
            for task in fs::read_dir(format!("/proc/{}/task", self.pid)).ok()? {
                let stat = match fs::read(task.ok()?.path().join("stat")) {
                    Ok(stat) => stat,
                    Err(e) if ended(&e) => continue,
                    Err(_) => return None,
                };
                match stat_fields(&stat)?.first() {
                    Some(&"T") => return Some(true),
                    Some(&"R") => running = true,
                    _ => {}
                }
            }
            Some(!running)
        };
        // Listed first, then its stat read: reaped (nothing of it runs), or
        // still the process the listing was of.
        let listed = stopped_or_none_running();
        if self.read().is_none() || listed == Some(true) {
            Held::Held
        } else {
            Held::Pending
        }
    }

    /// `SIGSTOP` to the process, then to each of its threads on a CPU or
    /// waiting for one: whether the kernel took the process's. A process's
    /// signal wakes one thread (by our reading of the kernel's
    /// `complete_signal`, the main one, asleep in its read), which stops
    /// the others only when it next runs: until then they run on (4 ms,
    /// the scheduler's tick, to 18 ms of a bot's 12 spinning threads' CPU
    /// here, 40 ms under the CI's load), all of it counted against the
    /// bot's `FROZEN_SLACK`, so a bot's fate hung on the machine's load. A
    /// thread's own signal reaches it at once where it runs (the kernel
    /// interrupts it); a thread asleep takes the group stop when it wakes.
    /// Bounded, whatever the bot's threads: the walk looks at most
    /// [`STOP_WALK`] threads and sends at most [`THREAD_STOPS`] signals (a
    /// stop signal costs the kernel a walk of every thread of the process,
    /// so one to each of 10,000 threads cost 10-17 s: red team), and at
    /// most one thread's pidfd is open at a time. Each thread's signal goes
    /// through a pidfd of that thread (`PIDFD_THREAD`, Linux 6.9), used
    /// only if the thread is the program's: its number still listed under
    /// the program's `/proc/PID/task` after the pidfd was opened, and the
    /// program's stat still reading after that (so that `/proc/PID` was
    /// the program's: a reaped program's stat never reads again); had the
    /// thread opened ended before that listing, its pidfd reaches no one,
    /// so no signal reaches a thread or process that got its number later.
    /// Where the kernel has no thread pidfds, the process's signal alone.
    fn stop(&self) -> bool {
        if !self.signal(libc::SIGSTOP) {
            return false;
        }
        let Ok(tasks) = fs::read_dir(format!("/proc/{}/task", self.pid)) else {
            return true;
        };
        let mut sent = 0;
        for task in tasks.flatten().take(STOP_WALK) {
            if sent == THREAD_STOPS {
                break;
            }
            let Some(tid) = task
                .file_name()
                .to_str()
                .and_then(|t| t.parse::<i32>().ok())
            else {
                continue;
            };
            let running = fs::read(task.path().join("stat")).ok().is_some_and(|stat| {
                stat_fields(&stat).and_then(|f| f.first().copied()) == Some("R")
            });
            if !running {
                continue;
            }
            let thread = match pidfd_open(tid, libc::PIDFD_THREAD) {
                Ok(thread) => thread,
                // No thread pidfds in this kernel: the process's alone.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break,
                Err(_) => continue,
            };
            if task.path().exists() && self.read().is_some() {
                send_through(&thread, libc::SIGSTOP);
                sent += 1;
            }
        }
        true
    }

    /// Sends it `signal` through its pidfd; whether the kernel took it.
    fn signal(&self, signal: i32) -> bool {
        self.pidfd
            .as_ref()
            .is_some_and(|fd| send_through(fd, signal))
    }
}

/// Threads of a one-process bot [`Program::stop`] looks at, at most.
const STOP_WALK: usize = 256;

/// Threads of a one-process bot [`Program::stop`] sends their own
/// `SIGSTOP`, at most: those found on a CPU or waiting for one (on a
/// match's one CPU, one runs at a time).
const THREAD_STOPS: usize = 64;

/// A pidfd of process (or, with `PIDFD_THREAD`, thread) `pid`.
fn pidfd_open(pid: i32, flags: libc::c_uint) -> io::Result<OwnedFd> {
    // SAFETY: a plain system call; a descriptor it returns is ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) })
}

/// Sends `signal` through pidfd `fd` (to its process, or to its thread
/// where it is a thread's); whether the kernel took it.
fn send_through(fd: &OwnedFd, signal: i32) -> bool {
    // SAFETY: a plain system call on a descriptor we hold.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    r == 0
}

/// The server's ends of the pipes of a bot's init ([`FirstProcess::Init`]),
/// and what it reported, once read.
#[derive(Debug)]
struct InitPipes {
    status: Option<OwnedFd>,
    ask: Option<OwnedFd>,
    report: Option<InitRecords>,
}

impl BotProcess {
    /// Starts a bot in the sandbox.
    pub fn spawn(spec: &BotSpec<'_>) -> Result<BotProcess, BotSpawnError> {
        let lim = spec.limits;
        let slot = if is_root() {
            Some(Slot::take().ok_or(BotSpawnError::NoSlot)?)
        } else {
            None
        };
        // The init is one process more than the program's.
        let first_extra = match spec.first {
            FirstProcess::Program => 0,
            FirstProcess::Init => 1,
        };
        let group = BOT_GROUPS
            .lease(&GroupLimits {
                memory_bytes: Some(lim.memory_bytes),
                processes: Some(lim.processes + first_extra),
            })
            .map_err(io_err("create the control group"))?;
        let counter = if group.as_ref().is_some_and(Group::counts_cpu) {
            CpuCounter::Group
        } else if one_process(spec, group.as_ref()) {
            CpuCounter::OneProcess
        } else {
            CpuCounter::Tree
        };
        let (in_r, in_w) = pipe().map_err(io_err("pipe"))?;
        let (out_r, out_w) = pipe().map_err(io_err("pipe"))?;
        let (err_r, err_w) = pipe().map_err(io_err("pipe"))?;
        let netns = match spec.network {
            Network::Lent => POOL.take(),
            Network::Own => None,
        };
        // The init's status pipe (at its 3) and request pipe (at its 4).
        let init_pipes = match spec.first {
            FirstProcess::Program => None,
            FirstProcess::Init => Some((
                pipe().map_err(io_err("pipe"))?,
                pipe().map_err(io_err("pipe"))?,
            )),
        };
        let mut fds = vec![in_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()];
        if let Some(((_, status_w), (ask_r, _))) = &init_pipes {
            fds.extend([status_w.as_raw_fd(), ask_r.as_raw_fd()]);
        }
        let plan = Plan::new(
            spec,
            group.as_ref(),
            netns.as_ref(),
            &fds,
            slot.as_ref().map(|s| s.uid()),
        )?;
        let mut body = || plan.first_child();
        // SAFETY: the body only makes system calls on the prepared plan.
        let first = unsafe { spawn::spawn_with(0, &mut body) };
        let describe = |e: io::Error| {
            let s = plan.failed_step.load(Ordering::SeqCst) as usize;
            BotSpawnError::Io {
                what: format!(
                    "cannot start {} ({})",
                    spec.argv[0],
                    STEPS.get(s).copied().unwrap_or("start")
                ),
                source: e,
            }
        };
        let pid = plan.bot_pid.load(Ordering::SeqCst);
        let first = match first {
            Ok(first) => first,
            Err(e) => {
                if pid > 0 {
                    // The bot ended before its exec: reap it.
                    let _ = spawn::Child::new(pid).wait();
                }
                return Err(describe(e));
            }
        };
        let _ = spawn::Child::new(first).wait();
        if pid <= 0 {
            return Err(describe(io::Error::other("the bot was not started")));
        }
        let work = if plan.hold {
            let opened = if plan.held.load(Ordering::SeqCst) == 1 {
                open_work(pid)
            } else {
                Err(io::Error::other(
                    "the bot ended before its /work was opened",
                ))
            };
            plan.released
                .store(if opened.is_ok() { 1 } else { -1 }, Ordering::SeqCst);
            // The plan must live until the bot has exec'd or exited.
            while plan.bot_tid.load(Ordering::SeqCst) != 0 {
                std::thread::sleep(Duration::from_micros(100));
            }
            let errno = plan.failed_errno.load(Ordering::SeqCst);
            match opened {
                Ok(_) if errno != 0 => {
                    let _ = spawn::Child::new(pid).wait();
                    return Err(describe(io::Error::from_raw_os_error(errno)));
                }
                Ok(fd) => Some(fd),
                Err(e) => {
                    let _ = spawn::Child::new(pid).wait();
                    return Err(describe(e));
                }
            }
        } else {
            None
        };
        drop(plan);
        drop((in_r, out_w, err_w));
        // Only the init holds its ends now.
        let init = init_pipes.map(|((status_r, status_w), (ask_r, ask_w))| {
            drop((status_w, ask_r));
            InitPipes {
                status: Some(status_r),
                ask: Some(ask_w),
                report: None,
            }
        });
        for fd in [&in_w, &out_r, &err_r] {
            set_nonblocking(fd).map_err(io_err("pipe"))?;
        }
        Ok(BotProcess {
            child: spawn::Child::new(pid),
            stdin: in_w,
            stdout: out_r,
            stderr: err_r,
            group,
            netns,
            limits: lim,
            _slot: slot,
            finished: None,
            work,
            rest: OnceCell::new(),
            init,
            program: OnceCell::new(),
            counter,
            counted: Cell::new(Duration::ZERO),
            stopped: Cell::new(false),
        })
    }

    /// [`FirstProcess::Init`]: asks the init to end the run (it kills and
    /// reaps every other process of the namespace, says so and exits) and
    /// waits for it at most `bound`; an init that has not exited by then
    /// is killed from outside, with the rest of the bot
    /// ([`BotProcess::kill`]). Without an init: [`BotProcess::kill`].
    pub fn end_run(&mut self, bound: Duration) -> io::Result<()> {
        if let Some(ask) = self.init.as_mut().and_then(|p| p.ask.take()) {
            let mut ask = fs::File::from(ask);
            let _ = io::Write::write_all(&mut ask, b"x");
            drop(ask);
            let until = std::time::Instant::now() + bound;
            while std::time::Instant::now() < until {
                if self.child.try_wait()?.is_some() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        self.kill();
        Ok(())
    }

    /// [`FirstProcess::Init`], once the bot is reaped
    /// ([`BotProcess::finish`]): what the init reported (how the program
    /// ended, whether it reaped every process); `None` without an init.
    pub(crate) fn init_report(&mut self) -> io::Result<Option<InitRecords>> {
        let Some(pipes) = self.init.as_mut() else {
            return Ok(None);
        };
        if let Some(status) = pipes.status.take() {
            pipes.report = Some(read_init_report(status)?);
        }
        Ok(pipes.report)
    }

    /// The program's process as the server sees it: the bot's PID 1, or
    /// under an init the init's child (found once in the init's
    /// `children`, where the program is the first: the init forks it
    /// before anything can be reparented to it; kept with its
    /// `/proc/PID/stat` open, checked to be the init's child, so that a
    /// pid used again later is never taken for it); `None` while the init
    /// has not forked it yet, or where it was gone before it was found.
    pub fn program_pid(&self) -> Option<i32> {
        self.program().map(|p| p.pid)
    }

    fn program(&self) -> Option<&Program> {
        if let Some(p) = self.program.get() {
            return Some(p);
        }
        let first = self.pid();
        let found = match self.init {
            None => Program::pin(first, None)?,
            Some(_) => {
                let children =
                    fs::read_to_string(format!("/proc/{first}/task/{first}/children")).ok()?;
                let pid = children.split_whitespace().next()?.parse().ok()?;
                Program::pin(pid, Some(first))?
            }
        };
        Some(self.program.get_or_init(|| found))
    }

    /// The CPU time of the bot's PID 1 and every process it reaped, as
    /// the kernel counted it when the server reaped it (zero before
    /// [`BotProcess::finish`]). With [`FirstProcess::Init`], whose init
    /// reaps every process of the bot before it exits, all of the bot's.
    pub fn reaped_cpu(&self) -> Duration {
        self.child.cpu()
    }

    /// The bot's `/work` (a directory descriptor), for a bot started with
    /// [`WorkFolder::Returned`]; it stays readable after the bot is gone.
    pub fn take_work(&mut self) -> Option<OwnedFd> {
        self.work.take()
    }

    /// The bot's PID 1, as the server sees it.
    pub fn pid(&self) -> i32 {
        self.child.pid()
    }

    pub fn limits(&self) -> &BotLimits {
        &self.limits
    }

    /// Its control group, where the machine has them.
    pub fn group(&self) -> Option<&Group> {
        self.group.as_ref()
    }

    /// Kills the whole bot (idempotent): its PID 1 (the kernel then ends the
    /// namespace) and every member of its control group.
    pub fn kill(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            // SAFETY: plain syscall on our own child.
            unsafe {
                libc::kill(self.child.pid(), libc::SIGKILL);
            }
        }
        if let Some(g) = &self.group {
            g.kill_all();
        }
    }

    /// Stops (`Frozen`) or resumes (`Thawed`) the whole bot: by its
    /// control group's freezer, or, where it has none and the bot is one
    /// process ([`CpuCounter::OneProcess`]), by `SIGSTOP` and `SIGCONT` to
    /// that process, which stop and resume all its threads (`false` where
    /// neither can be done). A one-process bot can undo its stop (a
    /// timer's `SIGCONT`), as under the v1 fallback of signals; its CPU,
    /// counted in one place, then grows while it should not, and the
    /// referee fails it for running while stopped. Before, without a
    /// control group nothing stopped a bot: its threads computed while its
    /// opponent was waited for, on the CPU the two share (red team 21).
    pub fn freeze(&self, state: Freeze) -> bool {
        if let Some(g) = &self.group {
            if g.freeze(state).unwrap_or(false) {
                return true;
            }
        }
        self.counter == CpuCounter::OneProcess && self.stop_program(state)
    }

    /// `SIGSTOP` (`Frozen`) or `SIGCONT` (`Thawed`) to the program, through
    /// its pidfd (never a process that got its pid later); whether it was
    /// sent or the program is already so.
    fn stop_program(&self, state: Freeze) -> bool {
        let on = state == Freeze::Frozen;
        if self.stopped.get() == on {
            return true;
        }
        let sent = self.program().is_some_and(|p| {
            if on {
                p.stop()
            } else {
                p.signal(libc::SIGCONT)
            }
        });
        if sent {
            self.stopped.set(on);
        }
        sent
    }

    /// Whether its freeze has taken hold, as the kernel reports it: its
    /// group's freezer ([`Group::held`]), or, where it was stopped by
    /// `SIGSTOP`, the states of its program's threads ([`Program::held`]);
    /// `Unconfirmed` where neither stops it. An error reading the kernel's
    /// report is `Pending`: nothing says it holds.
    pub fn held(&self) -> Held {
        if self.stopped.get() {
            return self.program().map_or(Held::Pending, Program::held);
        }
        self.group
            .as_ref()
            .map_or(Held::Unconfirmed, |g| g.held().unwrap_or(Held::Pending))
    }

    /// How the bot's program ended, if the bot has (reaps its PID 1):
    /// under an init, the program's wait status as the init reported it
    /// (the init's own status where it reported none: killed from
    /// outside); an error of kind `NotFound` where the program could not
    /// be executed (the server's fault, as a failed spawn is).
    pub fn try_status(&mut self) -> io::Result<Option<ExitStatus>> {
        let Some(first) = self.child.try_wait()? else {
            return Ok(None);
        };
        match self.init_report()?.map(|r| r.command) {
            Some(InitReport::Ended(st)) => Ok(Some(st)),
            Some(InitReport::NotStarted(errno)) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "the bot's program could not be executed: {}",
                    io::Error::from_raw_os_error(errno)
                ),
            )),
            Some(InitReport::None) | None => Ok(Some(first)),
        }
    }

    /// Kills and reaps. The bot's main process is PID 1 of its namespace:
    /// the kernel reaps it only after every other process of the namespace
    /// is gone, so after the wait nothing of the bot is left (the control
    /// group is checked all the same).
    pub fn finish(&mut self) -> io::Result<ExitStatus> {
        if let Some(st) = self.finished {
            return Ok(st);
        }
        if self.child.try_wait()?.is_none() {
            // SAFETY: plain syscall on our own child.
            unsafe {
                libc::kill(self.child.pid(), libc::SIGKILL);
            }
        }
        // A task held by the v1 freezer dies of its SIGKILL only once
        // thawed: without this the wait below would never end.
        if let Some(g) = &self.group {
            let _ = g.freeze(Freeze::Thawed);
        }
        let st = self.child.wait()?;
        if let Some(g) = &self.group {
            if !g.members().is_empty() {
                g.kill_all();
            }
        }
        // Every process of the bot is gone with its PID 1: its network
        // namespace may go to the next bot (if it holds no socket).
        if let Some(n) = self.netns.take() {
            POOL.give_back(n);
        }
        self.finished = Some(st);
        Ok(st)
    }

    /// CPU time of the bot so far, never less than it answered before:
    /// - with a control group, the whole tree's;
    /// - without one, a match's bot is one process
    ///   ([`NewProcesses::WhereCounted`]), and this is its program's
    ///   (every thread's, ended or not: its process CPU clock, in
    ///   nanoseconds, checked by a read of its held `/proc/PID/stat`);
    ///   once the init has reaped it,
    ///   the init's with its reaped child's, and once the server has
    ///   reaped the init, what the kernel gave with it;
    /// - a build without one ([`NewProcesses::Always`]): every process of
    ///   the tree still there and every child they reaped (a process that
    ///   ended unreaped by anyone is counted while it runs, and no longer
    ///   once it has ended; the init's count at the build's end has it).
    pub fn cpu_time(&self) -> Duration {
        let now = match self.counter {
            CpuCounter::Group => match self.group.as_ref().and_then(|g| g.cpu_time()) {
                Some(t) => t,
                None => self.tree_cpu_time(),
            },
            CpuCounter::OneProcess if self.child.reaped() => self.child.cpu(),
            CpuCounter::OneProcess => match self.program().and_then(Program::cpu) {
                Some(t) => t,
                None => proc_cpu_time(self.pid()).unwrap_or_default(),
            },
            CpuCounter::Tree => self.tree_cpu_time(),
        };
        let counted = now.max(self.counted.get());
        self.counted.set(counted);
        counted
    }

    fn tree_cpu_time(&self) -> Duration {
        let pid = self.pid();
        std::iter::once(pid)
            .chain(descendants(pid))
            .filter_map(proc_cpu_time)
            .sum()
    }

    /// Whether the memory limit ended (part of) the bot.
    pub fn out_of_memory(&self) -> bool {
        self.group.as_ref().is_some_and(|g| g.oom_killed())
    }

    /// The bot's processes as the server sees them (not its init, which
    /// runs nothing of the bot's).
    pub fn members(&self) -> Vec<i32> {
        let pid = self.pid();
        let mut all = match (&self.group, self.counter) {
            (Some(g), _) => g.members(),
            // One process: its program, while it is there (no walk).
            (None, CpuCounter::OneProcess) => {
                return self
                    .program()
                    .filter(|p| p.read().is_some())
                    .map(|p| p.pid)
                    .into_iter()
                    .collect();
            }
            (None, _) => std::iter::once(pid).chain(descendants(pid)).collect(),
        };
        if self.init.is_some() {
            all.retain(|&p| p != pid);
        }
        all
    }

    /// Whether the bot has come to rest ([`RestProbe`]): what it printed
    /// so far is in its output pipe. A bot whose program is not (or no
    /// longer) there prints nothing more. Meaningful only while the bot
    /// may run: one frozen or stopped at the end of a system call shows
    /// that call as if it were blocked in it (the referee resumes it
    /// before it asks).
    pub fn at_rest(&self) -> bool {
        let probe = match self.rest.get() {
            Some(probe) => probe,
            None => {
                let Some(program) = self.program_pid() else {
                    return true;
                };
                let counter = self.group.as_ref().and_then(Group::tasks_counter);
                let others = match self.init {
                    Some(_) => 1,
                    None => 0,
                };
                self.rest
                    .get_or_init(|| RestProbe::new(program, counter.as_deref(), others))
            }
        };
        probe.at_rest(|| self.members())
    }

    /// Whether some thread of the bot sits in `read` on its standard input,
    /// i.e. the bot waits for the referee (for a bot that "answered" into
    /// an output buffer it never flushed).
    pub fn waiting_for_input(&self) -> bool {
        let mut buf = [0u8; 1024];
        task_syscall_files(self.members())
            .any(|t| read_at_start(&t.syscall, &mut buf).is_some_and(reads_stdin))
    }
}

/// Every descendant of process `pid` still there (its children, theirs,
/// …), from the `children` file of each of their threads.
fn descendants(pid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(p) = next.pop() {
        let Ok(tasks) = fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let Ok(children) = fs::read_to_string(t.path().join("children")) else {
                continue;
            };
            for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                if !found.contains(&c) {
                    found.push(c);
                    next.push(c);
                }
            }
        }
    }
    found
}

/// Whether a read of a thread's `/proc` file failed because the thread
/// has ended (its folder gone, or the task no longer there).
fn ended(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH)
}

/// The CPU clock of process `pid` (`clock_getcpuclockid`): every thread's
/// time, ended or not, to the nanosecond as the scheduler last counted it.
fn process_cpu_clock(pid: i32) -> Option<Duration> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: a plain C struct of integers.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: plain calls writing into locals.
    unsafe {
        if libc::clock_getcpuclockid(pid, &mut clock) != 0
            || libc::clock_gettime(clock, &mut ts) != 0
        {
            return None;
        }
    }
    Some(Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// utime + stime + cutime + cstime of a process, from /proc.
pub fn proc_cpu_time(pid: i32) -> Option<Duration> {
    stat_cpu_time(&fs::read(format!("/proc/{pid}/stat")).ok()?)
}

/// utime + stime + cutime + cstime from a `/proc/PID/stat`.
fn stat_cpu_time(stat: &[u8]) -> Option<Duration> {
    let f = stat_fields(stat)?;
    let ticks: u64 = (11..=14)
        .map(|i| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
        .sum();
    // SAFETY: plain libc call.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_millis(ticks * 1000 / hz))
}

/// The parent's pid from a `/proc/PID/stat`.
fn stat_ppid(stat: &[u8]) -> Option<i32> {
    stat_fields(stat)?.get(1)?.parse().ok()
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        if self.finish().is_ok() {
            // The bot is reaped: its group may serve the next one.
            if let Some(g) = self.group.take() {
                BOT_GROUPS.give_back(g);
            }
        }
    }
}

#[cfg(test)]
mod tests;
