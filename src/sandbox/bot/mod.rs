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
//!   exactly this bot), otherwise the server's uid;
//! - in a **control group** of its own ([`super::cgroup`]) that limits its
//!   memory (resident pages, not address space: the JVM's reservations are
//!   not use) and its threads and processes, and counts the CPU time of the
//!   whole tree; rlimits where control groups are missing;
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

use std::cell::OnceCell;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::cgroup::{Freeze, Group, GroupLimits, BOT_GROUPS};
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
use plan::{Plan, STEPS};
pub use rest::RestProbe;
use rest::{read_at_start, reads_stdin, task_syscall_files};
use spec::io_err;
pub use spec::{
    BotFile, BotLimits, BotSpawnError, BotSpec, FirstProcess, Network, ProcFs, WorkFolder,
    INSIDE_UID,
};
#[cfg(test)]
use {
    plan::{bot_rlimits, check_relative},
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
    /// The program's process as the server sees it (under an init: the
    /// init's first child), once found.
    program: OnceCell<i32>,
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
    /// under an init the init's child (found in the init's `children`,
    /// where the program is the first: the init forks it before anything
    /// can be reparented to it); `None` while the init has not forked it
    /// yet, or once it is gone.
    pub fn program_pid(&self) -> Option<i32> {
        if self.init.is_none() {
            return Some(self.pid());
        }
        if let Some(&pid) = self.program.get() {
            return Some(pid);
        }
        let init = self.pid();
        let children = fs::read_to_string(format!("/proc/{init}/task/{init}/children")).ok()?;
        let pid = children.split_whitespace().next()?.parse().ok()?;
        Some(*self.program.get_or_init(|| pid))
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

    /// Stops (`Frozen`) or resumes (`Thawed`) the whole bot, where the
    /// machine has a freezer (`false` where not).
    pub fn freeze(&self, state: Freeze) -> bool {
        self.group
            .as_ref()
            .is_some_and(|g| g.freeze(state).unwrap_or(false))
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

    /// CPU time of the whole tree so far (control group), or, without
    /// one, of every process of the tree still there and every child they
    /// reaped (`/proc`, 10 ms resolution): a process that ended unreaped
    /// by anyone (its parent ignores `SIGCHLD`) is counted while it runs,
    /// and no longer once it has ended.
    pub fn cpu_time(&self) -> Duration {
        if let Some(t) = self.group.as_ref().and_then(|g| g.cpu_time()) {
            return t;
        }
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
        let mut all = match &self.group {
            Some(g) => g.members(),
            None => std::iter::once(pid).chain(descendants(pid)).collect(),
        };
        if self.init.is_some() {
            all.retain(|&p| p != pid);
        }
        all
    }

    /// Whether the bot has come to rest ([`RestProbe`]): what it printed
    /// so far is in its output pipe. A bot whose program is not (or no
    /// longer) there prints nothing more.
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
            .any(|f| read_at_start(&f, &mut buf).is_some_and(reads_stdin))
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

/// utime + stime + cutime + cstime of a process, from /proc.
pub fn proc_cpu_time(pid: i32) -> Option<Duration> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = (11..=14)
        .map(|i| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
        .sum();
    // SAFETY: plain libc call.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_millis(ticks * 1000 / hz))
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
