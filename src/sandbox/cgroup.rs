//! Control groups for bots: memory, process count and the CPU time of a
//! whole process tree.
//!
//! A bot is a language runtime (a JVM, a Python interpreter, a program that
//! starts threads or children), so per-process rlimits cannot say what it
//! uses: the JVM reserves gigabytes of address space it never touches, and
//! the CPU time of a child is lost to `RLIMIT_CPU`. A control group per bot
//! holds all of it: its memory limit counts resident pages (and tmpfs pages
//! it writes), its pids limit counts every thread and process, and its CPU
//! counter covers the whole tree.
//!
//! Both cgroup versions are supported, detected once per process
//! ([`Cgroups::detect`]) and logged in one line:
//! - **v2** (`/sys/fs/cgroup/cgroup.controllers` exists): groups are made
//!   inside the server's own cgroup (delegated to it, e.g. by systemd's
//!   `Delegate=yes`). Where the server's cgroup holds processes, the kernel
//!   forbids enabling controllers for children, so the server first moves
//!   itself into a leaf `knobeln-server`.
//! - **v1** (separate hierarchies `memory`, `pids`, `cpuacct`, `freezer`):
//!   groups are made under `knobeln/` at each hierarchy's root (as root).
//! - anything missing: the caller falls back to rlimits for that controller
//!   ([`Controllers`] says which are there).
//!
//! A process joins a group by writing `0` through a descriptor opened here
//! (the kernel checks the opener's credentials), so a spawned child can
//! join before it execs, and everything it starts is inside from the first
//! instruction. On v1 that descriptor is the group's `tasks` file, which
//! moves the (single-threaded) child without the kernel's global
//! `cgroup.procs` lock: entering that lock waits for an RCU grace period
//! (~12 ms on a 250 Hz kernel) whenever no group changed for a few ticks,
//! which made the start of a lone bot cost more than the rest of its
//! sandbox. On v2 it is `cgroup.procs` (see the book, docs/src/participant/bots.md).
//!
//! Groups can be pooled ([`GroupPool`]; the bot sandbox's is
//! [`BOT_GROUPS`]): an empty group is handed to the next user with its
//! counters counted from the hand-over, instead of being removed and made
//! again.
//!
//! This module knows nothing of bots or games: it makes, reads, kills,
//! pools and removes groups. Detecting what the machine offers is in
//! `detect.rs`, the unit tests in `tests.rs`.

use std::fs;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

mod detect;

/// The environment variable that names where the control groups are
/// mounted, instead of `/sys/fs/cgroup`: a host with both versions (v1's
/// controllers at `/sys/fs/cgroup/*`, a v2 hierarchy at
/// `/sys/fs/cgroup/unified`) may choose v2 (frozen bots die of `SIGKILL`,
/// no freezer hierarchy needed; memory and processes then limited by
/// rlimits where v1 holds those controllers). On this machine kind (v1 by
/// default) the test command names the v2 hierarchy here to run the
/// control groups' and the bots' tests a second time on v2.
pub const CGROUP_ROOT_VAR: &str = "KNOBELN_CGROUP_ROOT";

#[cfg(test)]
use detect::{detect_at, enables_cpu, favors_dynmods, remove_stale_groups, v2_controllers};

/// Which controllers a group gets on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Controllers {
    pub memory: bool,
    pub pids: bool,
    pub cpu: bool,
    /// Freezing (v2 `cgroup.freeze`, v1 `freezer.state`; v1 without its
    /// freezer hierarchy: stopping every member by signal): the referee
    /// stops a bot it is not waiting for ([`Group::freeze`]).
    pub freezer: bool,
}

/// The control-group layout of this machine, as far as the server can use it.
#[derive(Debug, Clone)]
pub enum Cgroups {
    /// Unified hierarchy: groups under `base`.
    V2 {
        base: PathBuf,
        controllers: Controllers,
        /// Whether the hierarchy is mounted with `favordynmods`; without it,
        /// each join waits for an RCU grace period when joins are sparse.
        favor_dynmods: bool,
        /// Whether the `cpu` controller is on for the server's own group's
        /// children: then the bots' groups and the server's are scheduler
        /// groups apart, which costs every round trip.
        cpu_splits: bool,
    },
    /// Separate hierarchies: groups under `<hierarchy>/knobeln`.
    V1 {
        memory: Option<PathBuf>,
        pids: Option<PathBuf>,
        cpuacct: Option<PathBuf>,
        /// The v1 freezer: a frozen task stays frozen whatever signal it
        /// gets or sends ([`Group::freeze`]).
        freezer: Option<PathBuf>,
        /// Whether `cpuacct` is mounted together with `cpu` (systemd's
        /// `cpu,cpuacct`): then each bot's group is a scheduler group of
        /// its own, which costs every round trip.
        cpuacct_with_cpu: bool,
    },
    /// No usable control groups (not root, no delegation): rlimits only.
    None { why: String },
}

static NEXT_GROUP: AtomicU64 = AtomicU64::new(1);

/// Limits of one group; `None` leaves a controller unlimited.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupLimits {
    pub memory_bytes: Option<u64>,
    pub processes: Option<u64>,
}

/// One control group (one directory per v1 hierarchy, or one v2 directory).
#[derive(Debug)]
pub struct Group {
    version: u8,
    memory: Option<PathBuf>,
    pids: Option<PathBuf>,
    cpu: Option<PathBuf>,
    dirs: Vec<PathBuf>,
    procs: Vec<OwnedFd>,
    /// The counters when this use of the group began: zero for a new
    /// group, the last bot's totals for one from [`GroupPool`].
    base: Counters,
    /// Memory a reused group still holds from before (page cache its last
    /// bot read first); the memory limit is raised by as much.
    stale_memory: u64,
    /// The limits as last written (`memory_bytes` including `stale_memory`).
    written: GroupLimits,
    /// Whether v1's `memory.memsw.limit_in_bytes` is there (swap accounting).
    memsw: bool,
    /// v2: the directory with `cgroup.freeze`; v1: the group in the
    /// freezer hierarchy (`freezer.state`). Without it v1 stops members by
    /// signals instead (see [`Group::freeze`]).
    freezer: Option<PathBuf>,
    /// Whether the group is frozen (as last written).
    frozen: AtomicBool,
}

/// One use's view of its group's memory peak ([`Group::watch_memory_peak`]).
#[derive(Debug, Default)]
pub struct PeakWatch {
    /// v2: `memory.peak`, opened and reset for this watch (its reads
    /// through this file are this watch's peak).
    file: Option<fs::File>,
    path: Option<PathBuf>,
    since_now: bool,
}

impl PeakWatch {
    /// The most memory the group held at once since the watch began (or,
    /// where the kernel could not reset the peak, since the group was
    /// made), in bytes; `None` without a memory controller.
    pub fn read(&self) -> Option<u64> {
        match (&self.file, &self.path) {
            (Some(f), _) => {
                use std::os::unix::fs::FileExt;
                let mut buf = [0u8; 32];
                let n = f.read_at(&mut buf, 0).ok()?;
                std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()
            }
            (None, Some(path)) => read_u64(path),
            (None, None) => None,
        }
    }

    /// Whether [`PeakWatch::read`] is this use's own peak (the kernel
    /// reset it when the watch began).
    pub fn since_now(&self) -> bool {
        self.since_now
    }
}

/// What [`Group::freeze`] makes of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freeze {
    Frozen,
    Thawed,
}

/// What the kernel reports of a group's freeze ([`Group::held`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Every member is stopped by the freezer, and the kernel says so (v2
    /// `cgroup.events` `frozen 1`, v1 `freezer.state` `FROZEN`): none runs
    /// until thawed, whatever it was sent. (A one-process bot stopped by
    /// `SIGSTOP` is held once `/proc` reports none of its threads running,
    /// or one of them stopped, which sets the stop pending in every other;
    /// a `SIGCONT` can undo that, which its CPU count then shows.)
    Held,
    /// The freeze is written, but a member has not stopped yet (it stops at
    /// its next return to user space).
    Pending,
    /// Nothing the kernel holds to report: no freezer (v1 stops a group's
    /// members by `SIGSTOP`, which `SIGCONT` undoes), or not frozen.
    /// Only the CPU count tells whether such a bot ran.
    Unconfirmed,
}

/// The counters of a group that cannot be reset (v2, and v1's `oom_kill`
/// and `pids.events`): what one bot did is the difference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counters {
    cpu: Duration,
    oom_kills: u64,
    /// v1 only: failures to charge (older kernels count no `oom_kill`).
    failcnt: u64,
    pids_refused: u64,
}

/// Bot groups given back empty, kept for the next bot instead of being
/// removed and made again: making a group (a v1 directory in each of three
/// hierarchies, each populated with dozens of control files) and removing
/// it (freed after an RCU grace period, by a kernel worker) cost ~0.35 ms
/// of every bot's start, 10 % of a short match. A group is reused only when
/// it has no member left; its counters go on from the last bot's totals,
/// which become the new bot's zero ([`Counters`]), and memory it still
/// holds (page cache its last bot read first, at most `STALE_MAX`) is
/// added to the new bot's limit, so that every bot gets exactly its limit.
#[derive(Debug)]
pub struct GroupPool {
    idle: Mutex<Vec<Group>>,
}

/// The pool of the bot sandbox.
pub static BOT_GROUPS: GroupPool = GroupPool {
    idle: Mutex::new(Vec::new()),
};

/// Idle groups kept at most (more bots at once than this make new ones).
const POOL_MAX: usize = 64;

/// Memory a given-back group may still hold and be reused.
const STALE_MAX: u64 = 4 << 20;

impl GroupPool {
    /// A group with `limits`: an idle one, or a new one; `None` when this
    /// machine has no usable control groups.
    pub fn lease(&self, limits: &GroupLimits) -> io::Result<Option<Group>> {
        loop {
            let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(mut g) = idle else {
                return Group::create(limits);
            };
            // A group whose limits cannot be written is removed (on drop).
            if g.set_limits(limits).is_ok() {
                return Ok(Some(g));
            }
        }
    }

    /// Takes a group back after its bot is gone: kept for the next bot if
    /// it is empty and holds little memory, else removed.
    pub fn give_back(&self, mut g: Group) {
        if !g.ready_for_reuse() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < POOL_MAX {
            idle.push(g);
        }
    }

    /// How many groups wait for a bot.
    pub fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Removes every idle group (at shutdown, and for tests).
    pub fn clear(&self) {
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        drop(idle);
    }
}

impl Group {
    /// Makes a new group with `limits`, or `None` when this machine has no
    /// usable control groups.
    pub fn create(limits: &GroupLimits) -> io::Result<Option<Group>> {
        let name = format!(
            "{}-{}",
            std::process::id(),
            NEXT_GROUP.fetch_add(1, Ordering::Relaxed)
        );
        let mut g = match Cgroups::detect() {
            Cgroups::None { .. } => return Ok(None),
            Cgroups::V2 {
                base, controllers, ..
            } => {
                let dir = base.join(&name);
                fs::create_dir(&dir)?;
                Group {
                    version: 2,
                    memory: controllers.memory.then(|| dir.clone()),
                    pids: controllers.pids.then(|| dir.clone()),
                    cpu: Some(dir.clone()),
                    freezer: controllers.freezer.then(|| dir.clone()),
                    dirs: vec![dir],
                    procs: Vec::new(),
                    base: Counters::default(),
                    stale_memory: 0,
                    written: *limits,
                    memsw: false,
                    frozen: AtomicBool::new(false),
                }
            }
            Cgroups::V1 {
                memory,
                pids,
                cpuacct,
                freezer,
                ..
            } => {
                let mut g = Group {
                    version: 1,
                    memory: memory.as_ref().map(|b| b.join(&name)),
                    pids: pids.as_ref().map(|b| b.join(&name)),
                    cpu: cpuacct.as_ref().map(|b| b.join(&name)),
                    freezer: freezer.as_ref().map(|b| b.join(&name)),
                    dirs: Vec::new(),
                    procs: Vec::new(),
                    base: Counters::default(),
                    stale_memory: 0,
                    written: *limits,
                    memsw: false,
                    frozen: AtomicBool::new(false),
                };
                for d in [&g.memory, &g.pids, &g.cpu, &g.freezer]
                    .into_iter()
                    .flatten()
                {
                    fs::create_dir(d)?;
                    g.dirs.push(d.clone());
                }
                g
            }
        };
        if let (Some(dir), Some(bytes)) = (&g.memory, limits.memory_bytes) {
            if g.version == 2 {
                write_file(&dir.join("memory.max"), &bytes.to_string())?;
                let _ = write_file(&dir.join("memory.swap.max"), "0");
            } else {
                write_file(&dir.join("memory.limit_in_bytes"), &bytes.to_string())?;
                g.memsw = write_file(&dir.join("memory.memsw.limit_in_bytes"), &bytes.to_string())
                    .is_ok();
            }
        }
        if let (Some(dir), Some(n)) = (&g.pids, limits.processes) {
            write_file(&dir.join("pids.max"), &n.to_string())?;
        }
        // v1: the `tasks` file, which moves only the writing thread; the
        // kernel then skips the global lock that `cgroup.procs` takes
        // (entering it waits for an RCU grace period, ~12 ms here, whenever
        // no group changed for a few ticks). The joiner is always a
        // single-threaded child before its exec. v2 has no such file.
        let join_file = if g.version == 2 {
            "cgroup.procs"
        } else {
            "tasks"
        };
        for d in g.dirs.clone() {
            let f = fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(d.join(join_file))?;
            g.procs.push(f.into());
        }
        Ok(Some(g))
    }

    /// Descriptors a single-threaded child writes `0` into to join this
    /// group (before exec).
    pub fn join_fds(&self) -> Vec<RawFd> {
        self.procs.iter().map(|f| f.as_raw_fd()).collect()
    }

    /// Which limits this group enforces.
    pub fn controllers(&self) -> Controllers {
        Controllers {
            memory: self.memory.is_some(),
            pids: self.pids.is_some(),
            cpu: self.cpu.is_some(),
            freezer: self.freezer.is_some() || (self.version == 1 && !self.dirs.is_empty()),
        }
    }

    /// Freezes (`Frozen`) or thaws (`Thawed`) every member: a frozen bot
    /// uses no CPU. Writes only when the state changes.
    ///
    /// - **v2**: `cgroup.freeze`. The kernel stops each member at its next
    ///   return to user space, which is soon enough for a bot that is not
    ///   on turn, and a frozen task still dies of `SIGKILL` (the server's
    ///   death included).
    /// - **v1**: the freezer hierarchy's `freezer.state`. A frozen task
    ///   stays frozen whatever it does or is sent: `SIGCONT` (from a timer
    ///   it armed, from a sibling) does not thaw it, and a child it forks
    ///   is born into the frozen group. It does not die of `SIGKILL` until
    ///   thawed, so [`Group::kill_all`] thaws after killing, and a group of
    ///   a server killed while a bot was frozen is thawed and killed when
    ///   the next server starts (until then it holds its memory, within
    ///   its limit, and no CPU).
    ///   While this process lives, a guard waits for its end
    ///   ([`guard_frozen_groups`]) and thaws and kills what it leaves
    ///   frozen, so that a `kill -9` of the server leaves no bot behind.
    /// - **v1 without the freezer hierarchy**: `SIGSTOP` to every member,
    ///   again until no new member appears, and `SIGCONT` to thaw. A bot
    ///   can undo that (a timer's `SIGCONT`); the referee then fails it for
    ///   running while stopped, and the log line at start says so.
    pub fn freeze(&self, state: Freeze) -> io::Result<bool> {
        let on = state == Freeze::Frozen;
        if self.frozen.load(Ordering::Relaxed) == on {
            return Ok(true);
        }
        if let Some(dir) = &self.freezer {
            if self.version == 2 {
                write_file(&dir.join("cgroup.freeze"), if on { "1" } else { "0" })?;
            } else {
                if on {
                    guard_frozen_groups(dir.parent().unwrap_or(Path::new("/")))?;
                }
                write_file(
                    &dir.join("freezer.state"),
                    if on { "FROZEN" } else { "THAWED" },
                )?;
            }
        } else if self.version == 1 {
            let Some(dir) = self.dirs.first() else {
                return Ok(false);
            };
            use rustix::process::Signal;
            signal_members(dir, if on { Signal::STOP } else { Signal::CONT });
        } else {
            return Ok(false);
        }
        self.frozen.store(on, Ordering::Relaxed);
        Ok(true)
    }

    /// Whether the freeze of [`Group::freeze`] has taken hold, as the kernel
    /// reports it: a write of `cgroup.freeze` (or `freezer.state`) only
    /// asks, and each member stops at its next return to user space.
    pub fn held(&self) -> io::Result<Held> {
        if !self.frozen.load(Ordering::Relaxed) {
            return Ok(Held::Unconfirmed);
        }
        let Some(dir) = &self.freezer else {
            return Ok(Held::Unconfirmed);
        };
        let done = if self.version == 2 {
            fs::read_to_string(dir.join("cgroup.events"))?
                .lines()
                .any(|l| l.trim() == "frozen 1")
        } else {
            fs::read_to_string(dir.join("freezer.state"))?.trim() == "FROZEN"
        };
        Ok(if done { Held::Held } else { Held::Pending })
    }

    /// Writes `limits` where they differ from what the group has: the
    /// memory limit is raised by what the group still holds from before.
    pub(crate) fn set_limits(&mut self, limits: &GroupLimits) -> io::Result<()> {
        let memory = limits.memory_bytes.map(|b| b + self.stale_memory);
        let unlimited = if self.version == 2 { "max" } else { "-1" };
        if let Some(dir) = &self.memory {
            if self.written.memory_bytes != memory {
                let text = memory.map_or(unlimited.to_string(), |b| b.to_string());
                if self.version == 2 {
                    write_file(&dir.join("memory.max"), &text)?;
                } else {
                    // v1 keeps limit <= memsw limit at every step.
                    let (limit, memsw) = (
                        dir.join("memory.limit_in_bytes"),
                        dir.join("memory.memsw.limit_in_bytes"),
                    );
                    let raising = match (self.written.memory_bytes, memory) {
                        (_, None) => true,
                        (None, Some(_)) => false,
                        (Some(old), Some(new)) => new > old,
                    };
                    match (self.memsw, raising) {
                        (false, _) => write_file(&limit, &text)?,
                        (true, true) => {
                            write_file(&memsw, &text)?;
                            write_file(&limit, &text)?;
                        }
                        (true, false) => {
                            write_file(&limit, &text)?;
                            write_file(&memsw, &text)?;
                        }
                    }
                }
            }
        }
        if let Some(dir) = &self.pids {
            if self.written.processes != limits.processes {
                let text = limits
                    .processes
                    .map_or("max".to_string(), |n| n.to_string());
                write_file(&dir.join("pids.max"), &text)?;
            }
        }
        self.written = GroupLimits {
            memory_bytes: memory,
            processes: limits.processes,
        };
        Ok(())
    }

    /// Whether the group may serve another bot: no member left and little
    /// memory held. Its counters now become the next bot's zero.
    fn ready_for_reuse(&mut self) -> bool {
        if !self.members().is_empty() || self.freeze(Freeze::Thawed).is_err() {
            return false;
        }
        let held = match &self.memory {
            None => 0,
            Some(dir) => {
                let file = if self.version == 2 {
                    "memory.current"
                } else {
                    "memory.usage_in_bytes"
                };
                match read_u64(&dir.join(file)) {
                    Some(n) => n,
                    None => return false,
                }
            }
        };
        if held > STALE_MAX {
            return false;
        }
        let Some(totals) = self.totals() else {
            return false;
        };
        self.base = totals;
        self.stale_memory = held;
        true
    }

    /// The counters as the kernel has them (since the group was made).
    fn totals(&self) -> Option<Counters> {
        Some(Counters {
            cpu: match &self.cpu {
                Some(_) => self.raw_cpu_time()?,
                None => Duration::ZERO,
            },
            oom_kills: match &self.memory {
                Some(_) => self.raw_oom_kills()?,
                None => 0,
            },
            failcnt: match &self.memory {
                Some(dir) if self.version == 1 => read_u64(&dir.join("memory.failcnt"))?,
                _ => 0,
            },
            pids_refused: match &self.pids {
                Some(_) => self.raw_pids_refused()?,
                None => 0,
            },
        })
    }

    /// Whether the group counts the CPU time of its members (a CPU
    /// accounting controller: v2's `cpu.stat`, v1's `cpuacct`).
    pub fn counts_cpu(&self) -> bool {
        self.cpu.is_some()
    }

    /// CPU time (user + system) of everything that ran in the group in
    /// this use of it.
    pub fn cpu_time(&self) -> Option<Duration> {
        Some(self.raw_cpu_time()?.saturating_sub(self.base.cpu))
    }

    fn raw_cpu_time(&self) -> Option<Duration> {
        let dir = self.cpu.as_ref()?;
        if self.version == 2 {
            let stat = fs::read_to_string(dir.join("cpu.stat")).ok()?;
            let usec: u64 = stat
                .lines()
                .find_map(|l| l.strip_prefix("usage_usec "))?
                .trim()
                .parse()
                .ok()?;
            Some(Duration::from_micros(usec))
        } else {
            let ns: u64 = fs::read_to_string(dir.join("cpuacct.usage"))
                .ok()?
                .trim()
                .parse()
                .ok()?;
            Some(Duration::from_nanos(ns))
        }
    }

    /// Whether the kernel killed a member for running out of memory in
    /// this use of the group.
    pub fn oom_killed(&self) -> bool {
        let Some(dir) = &self.memory else {
            return false;
        };
        if self.raw_oom_kills().unwrap_or(0) > self.base.oom_kills {
            return true;
        }
        // Older v1 kernels count only failures to charge.
        self.version == 1 && read_u64(&dir.join("memory.failcnt")).unwrap_or(0) > self.base.failcnt
    }

    /// How many members the kernel killed for running out of memory in
    /// this use of the group (its `oom_kill` counter; 0 without the
    /// memory controller or on a kernel without the counter).
    pub fn oom_kills(&self) -> u64 {
        self.raw_oom_kills()
            .unwrap_or(0)
            .saturating_sub(self.base.oom_kills)
    }

    /// Starts a watch of the group's memory peak for one use of it (a
    /// jail's run): read through the [`PeakWatch`], the peak is the most
    /// the group held since now, where the kernel lets it be reset (v1:
    /// writing `0` to `memory.max_usage_in_bytes`, which sets it to the
    /// usage now; v2 from Linux 6.12: writing to `memory.peak`, which
    /// resets it for the reads through the same open file only, so that
    /// watches of one group never reset each other's). Where it cannot be
    /// reset the watch reads the group's peak since it was made
    /// ([`PeakWatch::since_now`] says which).
    pub fn watch_memory_peak(&self) -> PeakWatch {
        let Some(dir) = &self.memory else {
            return PeakWatch::default();
        };
        if self.version == 2 {
            let path = dir.join("memory.peak");
            let file = fs::OpenOptions::new().read(true).write(true).open(&path);
            match file {
                Ok(f) if (&f).write_all(b"reset\n").is_ok() => PeakWatch {
                    file: Some(f),
                    path: Some(path),
                    since_now: true,
                },
                _ => PeakWatch {
                    file: None,
                    path: Some(path),
                    since_now: false,
                },
            }
        } else {
            let path = dir.join("memory.max_usage_in_bytes");
            let since_now = write_file(&path, "0").is_ok();
            PeakWatch {
                file: None,
                path: Some(path),
                since_now,
            }
        }
    }

    fn raw_oom_kills(&self) -> Option<u64> {
        let dir = self.memory.as_ref()?;
        let file = if self.version == 2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        let text = fs::read_to_string(dir.join(file)).ok()?;
        // A kernel without the line counts none.
        Some(counter(&text, "oom_kill ").unwrap_or(0))
    }

    /// Whether the pids limit refused a fork or a thread in this use of
    /// the group.
    pub fn pids_refused(&self) -> bool {
        self.raw_pids_refused().unwrap_or(0) > self.base.pids_refused
    }

    fn raw_pids_refused(&self) -> Option<u64> {
        let dir = self.pids.as_ref()?;
        let text = fs::read_to_string(dir.join("pids.events")).ok()?;
        Some(counter(&text, "max ").unwrap_or(0))
    }

    /// The file that counts the group's tasks (threads), where the machine
    /// has the pids controller.
    pub fn tasks_counter(&self) -> Option<PathBuf> {
        self.pids.as_ref().map(|d| d.join("pids.current"))
    }

    /// The group's directories (one per v1 hierarchy, one on v2).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The processes in the group (by their pid in the server's namespace).
    pub fn members(&self) -> Vec<i32> {
        self.dirs.first().map(|d| members(d)).unwrap_or_default()
    }

    /// Kills every member with SIGKILL, until none is left (for a group
    /// that keeps forking; bounded: about 200 ms of rounds).
    ///
    /// v1 with the freezer: the group is frozen first (nothing forks while
    /// it is killed), every member gets `SIGKILL`, and the group is thawed,
    /// which is when frozen tasks die.
    ///
    /// v2: `cgroup.kill`, which kills the whole group, frozen members and
    /// forks racing it included, then a wait until the kernel lists no
    /// member (the signal is sent at once; members leave as they die).
    pub fn kill_all(&self) {
        if self.version == 2 {
            if let Some(d) = self.dirs.first() {
                if write_file(&d.join("cgroup.kill"), "1").is_ok() && emptied(d) {
                    return;
                }
            }
        }
        if let (1, Some(dir)) = (self.version, &self.freezer) {
            let _ = write_file(&dir.join("freezer.state"), "FROZEN");
            kill_frozen_v1(dir);
            self.frozen.store(false, Ordering::Relaxed);
        }
        for d in &self.dirs {
            kill_members(d);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.members().is_empty() {
            self.kill_all();
        }
        for d in &self.dirs {
            // The kernel removes a group only once its last member is gone.
            for _ in 0..1000 {
                if fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                kill_members(d);
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

fn members(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Sends `signal` to every member, again until a pass finds no member it
/// has not signalled (at most 64 passes).
fn signal_members(dir: &Path, signal: rustix::process::Signal) {
    let mut done: Vec<i32> = Vec::new();
    for _ in 0..64 {
        let fresh: Vec<i32> = members(dir)
            .into_iter()
            .filter(|p| !done.contains(p))
            .collect();
        if fresh.is_empty() {
            return;
        }
        for pid in fresh {
            send(pid, signal);
            done.push(pid);
        }
    }
}

/// Sends `signal` to process `pid` (gone already: nothing to do).
fn send(pid: i32, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// The write end of the pipe the guard of [`guard_frozen_groups`] reads:
/// never written, never closed; the kernel closes it when this process
/// ends, however it ends.
static FREEZER_GUARD: OnceLock<io::Result<OwnedFd>> = OnceLock::new();

/// Starts (once per process) the guard of this process's v1 freezer
/// groups under `base`: a shell in a session of its own, deaf to the
/// terminal's and the service manager's polite signals, that reads a pipe
/// only this process holds open. When the process is gone, however it
/// ended (`kill -9` included), the read returns end-of-file, and the guard
/// kills every member of this process's groups and thaws them: a task
/// held by the v1 freezer dies of `SIGKILL` only when thawed, so without
/// it a bot frozen at the server's death would stay until the next start
/// ([`detect::remove_stale_groups`]).
fn guard_frozen_groups(base: &Path) -> io::Result<()> {
    let made = FREEZER_GUARD.get_or_init(|| {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let groups = format!("{}/{}-", base.display(), std::process::id());
        let script = "trap '' HUP INT QUIT TERM PIPE; \
             while read -r _; do :; done; \
             for d in \"$0\"*; do \
               [ -d \"$d\" ] || continue; \
               for p in $(cat \"$d/cgroup.procs\"); do kill -9 \"$p\" 2>/dev/null; done; \
               echo THAWED > \"$d/freezer.state\"; \
             done";
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args(["-c", script, &groups])
            .stdin(std::process::Stdio::from(read))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        // The guard outlives this process by design: never waited for.
        cmd.spawn()?;
        Ok(write)
    });
    match made {
        Ok(_) => Ok(()),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("the guard of frozen bots could not start: {e}"),
        )),
    }
}

/// A v1 freezer group: `SIGKILL` to every member, then thawed, so that
/// frozen members die (a frozen task does not die of `SIGKILL` until
/// thawed). Nothing to do for a group of another hierarchy.
fn kill_frozen_v1(dir: &Path) {
    let state = dir.join("freezer.state");
    if !state.exists() {
        return;
    }
    for pid in members(dir) {
        send(pid, rustix::process::Signal::KILL);
    }
    let _ = write_file(&state, "THAWED");
}

/// Waits until the group at `dir` lists no member (at most about 200 ms,
/// as [`kill_members`]' rounds); whether it did.
fn emptied(dir: &Path) -> bool {
    let mut pause = Duration::from_micros(20);
    let deadline = std::time::Instant::now() + Duration::from_millis(200);
    loop {
        if members(dir).is_empty() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(2));
    }
}

fn kill_members(dir: &Path) {
    for round in 0..1000 {
        let pids = members(dir);
        if pids.is_empty() {
            return;
        }
        for pid in pids {
            send(pid, rustix::process::Signal::KILL);
        }
        if round > 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// The number after `key` on its line of a flat-keyed control file.
fn counter(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|n| n.trim().parse().ok())
}

fn read_u64(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn write_file(path: &Path, text: &str) -> io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).open(path)?;
    f.write_all(text.as_bytes())
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Writes `0` (the calling thread, the whole of a single-threaded child)
/// into a join descriptor of [`Group::join_fds`].
/// Only a system call: usable in a spawned child before exec.
pub(crate) fn join_fd(fd: RawFd) -> io::Result<()> {
    // SAFETY: write of one byte from a static buffer.
    let r = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
    if r != 1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
