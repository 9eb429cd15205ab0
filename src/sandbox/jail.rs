//! A jail for running the toolchain (gcc, as, ld) on hostile input.
//!
//! The server's jails share one private tree in a temporary folder, made
//! by its first [`Jail::new`] (and again should a cleaner of the temp
//! folder have removed a part of it): `root/usr` (the host's `/usr`,
//! bind-mounted read-only), `bin`, `lib`, `lib64` mirrored as on the host (symlinks on a merged-/usr system),
//! `dev/null`, and the mount points `tmp` and `work`; and the jail's work
//! folder, a tmpfs of its own of [`WORK_BYTES`] and [`WORK_INODES`]
//! that is mounted nowhere on the host: the jail holds it by a descriptor
//! (a detached mount, `fsmount`), the server reads and writes it through
//! that descriptor ([`Jail::work_dir`]), and each run mounts a copy of it
//! at `/work` and `/tmp` of its own mount namespace. Whatever the tools
//! write, they write into that tmpfs: a write past its pages or inodes
//! fails with `ENOSPC` ([`JailOutput::work_full`] says which), and
//! nothing of it reaches the host's disk. The rest of the tree is mounted
//! read-only in the run. [`Jail::run`] starts a
//! command (without copying the server, [`super::spawn`]) in new mount,
//! IPC, UTS and PID namespaces (plus a user namespace when not root) and a
//! network namespace without a link up: as root the jail's own for its
//! life, lent by the bots' pool ([`super::netns`]: making one and freeing
//! it in a kernel worker costs about a millisecond of CPU a run) and
//! given back at drop, kept only if no socket is left in it; not root a
//! new one per run. Chrooted into that tree, under a uid of the jail's
//! own when the server is root, with only standard input, output and error open, with CPU, address-space,
//! file-size, open-file and process-count limits, a wall-clock limit and a
//! cap on the output it keeps. Nothing outside the toolchain and the work
//! folder is readable, and there is no network. The first process of the
//! PID namespace is the jail's init (`jail_init.c`, built by `build.rs`,
//! executed from a sealed memory file, [`super::exe`]), never a tool: the
//! kernel gives that process no signal of default action, so a tool
//! started as it would meet its file size limit only as `EFBIG` and its
//! soft CPU limit not at all. The init forks the command as PID 2, an
//! ordinary process that gets `SIGXFSZ` and `SIGXCPU`, reaps every process
//! of the namespace, and when the command ends writes the command's wait
//! status to a pipe only the server reads (the command never holds it, so
//! an exit code it chooses never reads as a signal). Then, and when the
//! server asks at the wall (a byte on a second pipe whose write end only
//! the server holds), it kills every other process of the namespace,
//! reaps them all, says so and exits: the run's CPU ([`JailOutput::cpu`])
//! is every process's, in the kernel's count of the init's children
//! (a process the kernel ends with the namespace is reaped without adding
//! its CPU to anyone's). An init that does not answer within
//! [`REAP_BOUND`] is killed from outside, and the run's count is then
//! [`CpuCount::Partial`] (where the jail has no control group to count
//! it): then the init's process group is killed with it. The
//! parent-death signal (re-armed after dropping privileges, which clears it)
//! kills the init, and with it the namespace, when the server dies, even
//! by `kill -9`. The tree a server leaves behind (killed, or ended: it is
//! kept for the process's life) is removed by the next server's first
//! [`Jail::new`].
//!
//! The process limit is `RLIMIT_NPROC`, which the kernel counts per uid in
//! a user namespace (and checks up the chain of namespaces, `ucounts`), so
//! each jail's count is its own: when the server is root, the jail runs
//! under a uid of its own ([`super::uid`], taken by [`Jail::new`], given
//! back on drop), and neither another jail's processes nor `nobody`'s
//! count against it; when it is not, every run has a user namespace of its
//! own, counted apart (one level up, the server's own uid counts every
//! jail's processes together with the server's threads and its bots, under
//! the server's own limit).
//!
//! Where the machine gives the server control groups (the bots' rule,
//! [`super::cgroup::Cgroups::detect`]: root, or a delegated v2 subtree),
//! each jail has one of its own, made by [`Jail::new`]: every run's
//! process joins it before its exec, its `memory.max`
//! ([`JailLimits::memory`], no swap) counts the tools' pages and the pages
//! of the work folder's tmpfs they wrote together (the kernel charges
//! tmpfs pages to the writer's group; `RLIMIT_AS` is per process and
//! counts no tmpfs page), its `pids.max` the processes beside
//! `RLIMIT_NPROC`; what a run leaves is killed after it, and the group is
//! removed with the jail, after the tmpfs is freed. A tool the kernel's
//! OOM killer ends at that limit is counted by the group's `oom_kill`
//! ([`JailOutput::oom_kills`]). Elsewhere the rlimits alone hold.
//!
//! It is the jail of the KNOBELN compile service (gcc's checks, clang and
//! wasm-ld), whose lexical checks keep a strategy from naming any other
//! file (no `#include`); it has no `/proc`. A bot's build, whose compiler
//! reads whatever its source names, runs in the bot sandbox instead
//! (`crate::lang::build`), with the confinement of a match.
//!
//! It deliberately does not know what gcc is: callers pass argv and read the
//! work folder.

use std::ffi::CString;
use std::fs;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::cgroup::{self, Group, GroupLimits};
use super::exe::Executable;
use super::netns::{self, Netns};
use super::spawn::{self, arrange_fds, check, CArgs};
use super::tmpfs::{detached_tmpfs, Maker, UserMaps};
use super::uid::{UidSlot, SLOTS};
use super::{is_root, pipe, set_rlimit};

/// Prefix of the jail folders in the system's temp folder; the server's pid
/// follows, so that folders of dead servers can be recognised.
const JAIL_PREFIX: &str = "knobeln-jail-";

/// The size of a jail's work folder (its tmpfs's `size`), in bytes: whole
/// pages. A compile of a strategy with 1 MB of static data (the most an
/// accepted one can have) writes about 3 MB (measured: a 240 kB source,
/// `strategy.i` and `strategy.clang.i` 240 kB each, gcc's and clang's
/// objects 1.04 MB each, gcc's assembler file while it lives). A file may
/// grow to [`JailLimits::file_size`] (16 MiB), so that gcc's runaway
/// output meets the file limit (a macro bomb's report says so) before the
/// folder is full, with room for three more such files beside it.
pub const WORK_BYTES: u64 = 64 << 20;

/// Inodes of a jail's work folder (its tmpfs's `nr_inodes`, the folder
/// itself included). A compile has at most about ten files at once.
pub const WORK_INODES: u64 = 256;

/// The memory of a compile jail ([`JailLimits::memory`]), in bytes: the
/// work folder's [`WORK_BYTES`] plus what the tools need for the largest
/// source the lexical limits accept, with headroom (see the security
/// model's jail rows for the measurement).
pub const MEMORY_BYTES: u64 = 256 << 20;

/// Limits of one jailed command.
#[derive(Debug, Clone, Copy)]
pub struct JailLimits {
    /// CPU seconds per process.
    pub cpu_secs: u64,
    /// Address space per process, in bytes.
    pub address_space: u64,
    /// Largest file a process may write, in bytes.
    pub file_size: u64,
    /// Wall-clock limit for the whole command.
    pub wall: Duration,
    /// How much of the command's output (stdout and stderr together) is kept.
    pub output_cap: usize,
    /// Processes the jailed command may have at once, itself and all it
    /// started, counted per jail (RLIMIT_NPROC, see the module's text,
    /// and the jail's control group's `pids.max` where there is one).
    pub processes: u64,
    /// Memory of the whole jail at once, in bytes: the pages its tools
    /// hold and the pages of its work folder's tmpfs they wrote, as the
    /// kernel charges them to the jail's control group (`memory.max`, no
    /// swap). Only where the machine gives the server a memory
    /// controller ([`Jail::memory_limited`]); elsewhere the tools are
    /// bounded by `address_space` alone, per process.
    pub memory: u64,
}

impl Default for JailLimits {
    fn default() -> Self {
        JailLimits {
            cpu_secs: 10,
            address_space: 1 << 30,
            file_size: 16 << 20,
            wall: Duration::from_secs(30),
            output_cap: 64 << 10,
            processes: 64,
            memory: MEMORY_BYTES,
        }
    }
}

/// The environment of every process in the jail (also gcc's driver's when
/// it is asked for its `cc1` command).
pub const JAIL_ENV: &[&str] = &[
    "PATH=/usr/bin:/bin",
    "TMPDIR=/work",
    "HOME=/work",
    "LC_ALL=C",
    // Reproducible builds: gcc's and clang's `__DATE__` and
    // `__TIME__` say 1 January 1970, whenever a source is built.
    "SOURCE_DATE_EPOCH=0",
    "TZ=UTC",
];

/// How a jailed command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JailExit {
    Exited(i32),
    Signaled(i32),
    /// Killed by the jail after the wall-clock limit.
    WallClock,
}

/// Whether a run's [`JailOutput::cpu`] counts every process of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuCount {
    /// Every process: the init killed and reaped all of them before it
    /// exited (or the jail's control group counted them).
    Complete,
    /// A lower bound: the init did not answer the wall's request within
    /// [`REAP_BOUND`] and was killed from outside, with processes the
    /// kernel then reaped uncounted, and the jail has no control group
    /// that counts them. Only a run the wall ended can be so, and such a
    /// run gets no verdict ([`JailError::Overloaded`]).
    Partial,
}

/// The most of a command's dropped output kept as its end
/// ([`JailOutput::output_tail`]): gcc's driver's last lines after a program
/// it started ended by a signal are about 250 bytes.
pub const OUTPUT_TAIL: usize = 4 << 10;

/// How long the jail waits, at the wall, for its init to kill, reap and
/// count every process of the run before it kills the init from outside
/// (the count then [`CpuCount::Partial`]). The init answers in
/// milliseconds; this bounds a run whose init is held up (a process the
/// kernel cannot end at once).
pub const REAP_BOUND: Duration = Duration::from_secs(5);

/// Which of the work folder's limits a run found used up when it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkFull {
    /// Every page of its [`WORK_BYTES`].
    Bytes,
    /// Every one of its [`WORK_INODES`].
    Inodes,
}

/// What a jailed command did.
#[derive(Debug, Clone)]
pub struct JailOutput {
    pub exit: JailExit,
    /// The first `output_cap` bytes of stdout and stderr, interleaved, lossily UTF-8.
    pub output: String,
    /// How many bytes of output were dropped beyond the cap.
    pub output_dropped: u64,
    /// The whole lines that ended the dropped output, at most
    /// [`OUTPUT_TAIL`] bytes of them, lossily UTF-8 (empty where nothing
    /// was dropped): what a command says last after its children, such as
    /// gcc's driver's line on a program it started that a limit ended,
    /// stays readable however much the children wrote before it. Not shown
    /// to anyone; read for a verdict only.
    pub output_tail: String,
    /// The CPU time of every process of the run (gcc's `cc1` and `as`,
    /// and whatever was still running when the command ended or the wall
    /// came: the init kills and reaps those), from the kernel's
    /// accounting of the init when it was reaped; where the jail has a
    /// control group, its count if larger.
    pub cpu: Duration,
    /// Whether `cpu` counts every process of the run.
    pub cpu_count: CpuCount,
    /// The work folder's state when the command ended: `Some` when a
    /// write into it must have failed for want of room (the kernel's
    /// count of free pages or inodes is at zero). Never read from the
    /// tool's words, which can be the program's own (`#error No space
    /// left on device`).
    pub work_full: Option<WorkFull>,
    /// How many of the command's processes the kernel's OOM killer ended
    /// at the jail's [`JailLimits::memory`] (its control group's
    /// `oom_kill` counter, counted over this run); 0 without a memory
    /// controller.
    pub oom_kills: u64,
    /// The most memory the jail held at once during this run (its tools
    /// and its work folder's pages, those earlier runs wrote included),
    /// where it has a memory controller: the group's peak, reset when the
    /// run began ([`crate::sandbox::cgroup::Group::watch_memory_peak`]; a
    /// kernel that cannot reset it gives the peak since the jail was made).
    pub memory_peak: Option<u64>,
}

impl JailOutput {
    pub fn success(&self) -> bool {
        self.exit == JailExit::Exited(0)
    }
}

/// Infrastructure faults of the jail (never the participant's fault).
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    #[error("cannot prepare the jail in {path}: {source}")]
    Prepare { path: PathBuf, source: io::Error },
    #[error("cannot start {program} in the jail: {source} (the jail needs root or unprivileged user namespaces)")]
    Spawn { program: String, source: io::Error },
    #[error("i/o error while running {program} in the jail: {source}")]
    Io { program: String, source: io::Error },
    /// The server is root and every uid slot is taken (by bots and jails).
    #[error("cannot prepare a jail: more than {SLOTS} bots and compile jails at once")]
    NoUid,
    /// The wall-clock limit ended a run (no process of it ended by its
    /// CPU limit, which would have ended the run first): a C tool runs
    /// none of the program's code and waits for nothing, so what stopped
    /// it is the server's load (or a tool that hung), never the program.
    /// A bot's build ended by its wall is this too (`lang::build`): what a
    /// build waits for (the load, or a build script's sleep) gives no
    /// verdict either, and the team's server problems are bounded apart.
    /// Not a verdict: the request is answered as a server problem. `cpu`
    /// is the run's, all its processes' together (`cc1` and `as` each
    /// have the CPU limit: together they may pass it); `cpu_count` says
    /// whether it is all of them or a lower bound.
    #[error(
        "{program} did not finish within {} s of wall-clock time ({}{:.1} s of CPU used, no \
         process at its CPU limit): the server was too busy (or the tool hung), so no verdict \
         was given",
        wall.as_secs(),
        match cpu_count { CpuCount::Complete => "", CpuCount::Partial => "at least " },
        cpu.as_secs_f64()
    )]
    Overloaded {
        program: String,
        wall: Duration,
        cpu: Duration,
        cpu_count: CpuCount,
    },
    /// An OOM killer ended a process of the run while the jail's group was
    /// below its memory ([`JailOutput::oom_kill_is_the_jails`] says no):
    /// the machine's own OOM killer (the machine short of memory, or a
    /// parent group's limit), not the program's doing (red team F11).
    #[error(
        "an OOM killer ended {program} in the jail while the jail held {peak} bytes of its \
         {limit}: the machine ran short of memory, not the program"
    )]
    KilledFromOutside {
        program: String,
        peak: u64,
        limit: u64,
    },
}

/// How close to its memory limit a jail's group must have come for an OOM
/// kill of its member to be its own: a charge that fails at the limit is
/// at most a huge page (2 MiB) and a batch of pages per CPU short of it.
pub const OOM_SLACK_BYTES: u64 = 8 << 20;

impl JailOutput {
    /// Whether the OOM kills of the run ([`JailOutput::oom_kills`]) are the
    /// jail's own: its group's peak reached its `limit` (within
    /// [`OOM_SLACK_BYTES`]). The group's `oom_kill` counter counts a
    /// member ended by any OOM killer, the machine's own too; a peak far
    /// below the limit says the kill came from outside. Without a peak
    /// (no control group) there are no OOM kills counted either.
    pub fn oom_kill_is_the_jails(&self, limit: u64) -> bool {
        self.oom_kills > 0
            && self
                .memory_peak
                .is_none_or(|peak| peak.saturating_add(OOM_SLACK_BYTES) >= limit)
    }
}

/// A prepared jail: a private root tree with a writable work folder.
pub struct Jail {
    /// The tree the runs are chrooted into, shared with the server's
    /// other jails.
    tree: Arc<Tree>,
    /// The work folder's tmpfs: a detached mount, held only here.
    work: OwnedFd,
    /// `/proc/self/fd/N` of `work`: the work folder as the server's paths
    /// reach it.
    work_path: PathBuf,
    /// The jail's control group (memory, processes), removed with the
    /// jail after the work folder's pages charged to it are freed (it is
    /// declared after `work`, and fields are dropped in order);
    /// `None` where the machine has none for the server (then rlimits
    /// alone, as for the bots: [`cgroup::Cgroups::detect`]).
    group: Option<Mutex<Group>>,
    /// The jail's own uid when the server is root (its commands run under
    /// it, and it owns the work folder).
    uid: Option<UidSlot>,
    /// The network namespace every run of this jail enters, lent from the
    /// server's pool ([`netns::POOL`]) for the jail's life and given back
    /// when it drops (kept only if no socket is left in it); `None` where
    /// the server makes none (not root): each run's clone makes one.
    netns: Option<Netns>,
}

/// The jail's tree, read-only in every run (each mounts its jail's work
/// folder over `work` and `tmp` in its own mount namespace): made once per
/// server and shared by its jails ([`shared_tree`]), removed when it is
/// replaced and the last jail holding it is gone.
struct Tree {
    dir: tempfile::TempDir,
    root: PathBuf,
}

/// What the tree holds: the folders, then the host's top folders mirrored
/// (links on a merged-/usr system), then `dev/null`.
const TREE_DIRS: [&str; 4] = ["usr", "dev", "work", "tmp"];
const TREE_TOPS: [&str; 4] = ["bin", "lib", "lib64", "sbin"];

impl Tree {
    fn make() -> Result<Tree, JailError> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{JAIL_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|source| JailError::Prepare {
                path: std::env::temp_dir(),
                source,
            })?;
        let root = dir.path().join("root");
        let prep = |path: &Path, r: io::Result<()>| {
            r.map_err(|source| JailError::Prepare {
                path: path.to_path_buf(),
                source,
            })
        };
        prep(
            dir.path(),
            fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)),
        )?;
        for d in TREE_DIRS {
            let p = root.join(d);
            prep(&p, fs::create_dir_all(&p))?;
        }
        prep(
            &root,
            fs::set_permissions(&root, fs::Permissions::from_mode(0o755)),
        )?;
        for top in TREE_TOPS {
            let host = Path::new("/").join(top);
            let inside = root.join(top);
            match fs::read_link(&host) {
                Ok(target) => prep(&inside, symlink(target, &inside))?,
                Err(_) if host.is_dir() => prep(&inside, fs::create_dir_all(&inside))?,
                Err(_) => {}
            }
        }
        let null = root.join("dev/null");
        prep(&null, fs::write(&null, b""))?;
        let work_point = root.join("work");
        prep(
            &work_point,
            fs::set_permissions(&work_point, fs::Permissions::from_mode(0o755)),
        )?;
        Ok(Tree { dir, root })
    }

    /// Whether everything [`Tree::make`] made is still there (a cleaner
    /// of the temp folder may remove what a long-running server keeps):
    /// a few `lstat`s.
    fn intact(&self) -> bool {
        let there = |p: &Path| fs::symlink_metadata(p).is_ok();
        TREE_DIRS.iter().all(|d| there(&self.root.join(d)))
            && there(&self.root.join("dev/null"))
            && TREE_TOPS.iter().all(|top| {
                let host = Path::new("/").join(top);
                !(host.is_symlink() || host.is_dir()) || there(&self.root.join(top))
            })
    }
}

/// The server's jail tree: the one made before while it is intact, else
/// a new one (and then the trees a killed server left behind are removed).
fn shared_tree() -> Result<Arc<Tree>, JailError> {
    static TREE: Mutex<Option<Arc<Tree>>> = Mutex::new(None);
    tree_held_in(&TREE)
}

/// [`shared_tree`] with the tree held in `slot`.
fn tree_held_in(slot: &Mutex<Option<Arc<Tree>>>) -> Result<Arc<Tree>, JailError> {
    let mut held = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(tree) = held.as_ref().filter(|t| t.intact()) {
        return Ok(Arc::clone(tree));
    }
    remove_stale_jails();
    let tree = Arc::new(Tree::make()?);
    *held = Some(Arc::clone(&tree));
    Ok(tree)
}

impl Jail {
    /// Prepares a new jail: the server's tree ([`shared_tree`]), a work
    /// folder, a control group and a uid of its own.
    pub fn new() -> Result<Jail, JailError> {
        let uid = if is_root() {
            Some(UidSlot::take().ok_or(JailError::NoUid)?)
        } else {
            None
        };
        let tree = shared_tree()?;
        let work =
            work_tmpfs(uid.as_ref().map(UidSlot::uid)).map_err(|source| JailError::Prepare {
                path: PathBuf::from("a tmpfs for the work folder"),
                source,
            })?;
        let work_path = PathBuf::from(format!("/proc/self/fd/{}", work.as_raw_fd()));
        let defaults = JailLimits::default();
        let group = Group::create(&GroupLimits {
            memory_bytes: Some(defaults.memory),
            processes: Some(defaults.processes + INIT_PROCESSES),
        })
        .map_err(|source| JailError::Prepare {
            path: PathBuf::from("a control group for the jail"),
            source,
        })?;
        Ok(Jail {
            tree,
            work,
            work_path,
            group: group.map(Mutex::new),
            uid,
            // Only where the runs need no user namespace of their own: a
            // namespace of the initial one is entered with root's rights.
            netns: if is_root() { netns::POOL.take() } else { None },
        })
    }

    /// Whether the jail's runs enter a network namespace lent from the
    /// server's pool (the server is root), rather than each making one.
    pub fn lent_netns(&self) -> bool {
        self.netns.is_some()
    }

    /// Whether the jail's memory is bounded as a whole, in the kernel's
    /// unit (a control group with the memory controller): its tools'
    /// pages and its work folder's together, at [`JailLimits::memory`].
    pub fn memory_limited(&self) -> bool {
        self.group().is_some_and(|g| g.controllers().memory)
    }

    /// The directories of the jail's control group (none without one),
    /// removed with the jail.
    pub fn group_dirs(&self) -> Vec<PathBuf> {
        self.group().map(|g| g.dirs().to_vec()).unwrap_or_default()
    }

    /// The jail's control group, if it has one.
    fn group(&self) -> Option<std::sync::MutexGuard<'_, Group>> {
        self.group
            .as_ref()
            .map(|g| g.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The work folder as the server reaches it (inside the jail it is
    /// `/work`): a path through the jail's descriptor of its tmpfs, valid
    /// in this process while the jail lives.
    pub fn work_dir(&self) -> PathBuf {
        self.work_path.clone()
    }

    /// Writes `contents` as the file `name` of the work folder (a name, no
    /// folders; a link of that name is not followed, and anything of that
    /// name that is not a regular file is an error, `InvalidData`: never
    /// waited on, as a FIFO a tool left would be), dated `modified`.
    pub fn write_file(
        &self,
        name: &str,
        contents: &[u8],
        modified: std::time::SystemTime,
    ) -> io::Result<()> {
        use rustix::fs::OFlags;
        check_name(name)?;
        let file = rustix::fs::openat(
            &self.work,
            name,
            OFlags::WRONLY
                | OFlags::CREATE
                | OFlags::TRUNC
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::CLOEXEC,
            rustix::fs::Mode::from_raw_mode(0o644),
        )?;
        let mut file = fs::File::from(file);
        if !file.metadata()?.file_type().is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{name} is not a regular file"),
            ));
        }
        io::Write::write_all(&mut file, contents)?;
        file.set_modified(modified)
    }

    /// Reads the regular file `name` of the work folder (a name, no
    /// folders), at most `cap` bytes of it: a longer file, a link or
    /// anything that is not a regular file is an error (`InvalidData`),
    /// never followed or read beyond the cap.
    pub fn read_file(&self, name: &str, cap: u64) -> io::Result<Vec<u8>> {
        use rustix::fs::OFlags;
        check_name(name)?;
        let file = rustix::fs::openat(
            &self.work,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        let file = fs::File::from(file);
        let meta = file.metadata()?;
        let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
        if !meta.file_type().is_file() {
            return Err(invalid(format!("{name} is not a regular file")));
        }
        if meta.len() > cap {
            return Err(invalid(format!(
                "{name} is {} bytes, more than the {cap} read",
                meta.len()
            )));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(cap + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > cap {
            return Err(invalid(format!("{name} grew beyond the {cap} bytes read")));
        }
        Ok(bytes)
    }

    /// Which of the work folder's limits is used up now, if one is.
    fn work_full(&self) -> io::Result<Option<WorkFull>> {
        let st = rustix::fs::fstatfs(&self.work)?;
        Ok(if st.f_bfree == 0 {
            Some(WorkFull::Bytes)
        } else if st.f_ffree == 0 {
            Some(WorkFull::Inodes)
        } else {
            None
        })
    }

    /// The temporary folder holding the jail's tree (shared by the
    /// server's jails, [`shared_tree`]).
    pub fn path(&self) -> &Path {
        self.tree.dir.path()
    }

    /// Runs `argv` (`argv[0]` an absolute path inside the jail) with cwd `/work`.
    pub fn run(&self, argv: &[&str], limits: &JailLimits) -> Result<JailOutput, JailError> {
        self.run_under_init(INIT_NAME, argv, limits)
    }

    /// [`Jail::run`] with the init's `argv[0]` given (a bot's carries a
    /// seccomp filter after a `:`; the tests give ones the init cannot
    /// read or install).
    fn run_under_init(
        &self,
        init_arg0: &str,
        argv: &[&str],
        limits: &JailLimits,
    ) -> Result<JailOutput, JailError> {
        let program = argv[0].to_string();
        let spawn_err = |source| JailError::Spawn {
            program: program.clone(),
            source,
        };
        let plan = MountPlan::new(
            &self.tree.root,
            self.work.as_raw_fd(),
            self.uid.as_ref().map(UidSlot::uid),
            Path::new(&program),
        )
        .map_err(spawn_err)?;
        let (read_end, write_end) = pipe().map_err(spawn_err)?;
        let null = fs::OpenOptions::new()
            .read(true)
            .open("/dev/null")
            .map_err(spawn_err)?;
        // The jail's first process is its init, which starts the command
        // as PID 2 and reports how it ended through the status pipe.
        let init = init_executable().map_err(spawn_err)?;
        let (status_read, status_write) = pipe().map_err(spawn_err)?;
        // The server's request to end the run (the init's descriptor 4).
        let (ask_read, ask_write) = pipe().map_err(spawn_err)?;
        let mut init_argv = Vec::with_capacity(argv.len() + 1);
        init_argv.push(init_arg0);
        init_argv.extend_from_slice(argv);
        let args = CArgs::new(&init_argv).map_err(spawn_err)?;
        let env = CArgs::new(JAIL_ENV).map_err(spawn_err)?;
        let empty = CString::default();
        let lim = *limits;
        let (join_fds, oom_before, peak, cpu_before) = match self.group() {
            Some(mut g) => {
                // Written only where they differ from the group's.
                g.set_limits(&GroupLimits {
                    memory_bytes: Some(limits.memory),
                    processes: Some(limits.processes + INIT_PROCESSES),
                })
                .map_err(spawn_err)?;
                // This run's own peak: an earlier run of the compile near
                // the limit must not make a later kill from outside look
                // like the jail's (red team E12).
                (
                    g.join_fds(),
                    g.oom_kills(),
                    g.watch_memory_peak(),
                    g.cpu_time(),
                )
            }
            None => (Vec::new(), 0, Default::default(), None),
        };
        // 0, 1, 2, the init's status pipe at 3 and its request pipe at 4;
        // the init's executable at 5, close-on-exec.
        let fds = [
            null.as_raw_fd(),
            write_end.as_raw_fd(),
            write_end.as_raw_fd(),
            status_write.as_raw_fd(),
            ask_read.as_raw_fd(),
        ];
        let mut flags =
            libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS | libc::CLONE_NEWPID;
        if plan.own_uid.is_none() {
            flags |= libc::CLONE_NEWUSER;
        }
        let netns = self.netns.as_ref().map(Netns::fd);
        if netns.is_none() {
            flags |= libc::CLONE_NEWNET;
        }
        let mut body = || -> io::Error {
            let run = || -> Result<(), io::Error> {
                // Into the jail's control group first: everything the
                // command starts is inside from its first instruction.
                for fd in &join_fds {
                    cgroup::join_fd(*fd)?;
                }
                // The jail's lent network namespace, entered before the
                // descriptors are closed (the command is born in it).
                if let Some(fd) = netns {
                    // SAFETY: plain syscall; it changes only this child.
                    check(unsafe { libc::setns(fd, libc::CLONE_NEWNET) })?;
                }
                // SAFETY: system calls on data prepared before the clone.
                unsafe {
                    check(libc::setpgid(0, 0))?;
                    // Dies with the server, even on kill -9.
                    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                }
                // Before the descriptors are closed: it mounts the work
                // folder from the jail's descriptor of it.
                plan.enter()?;
                arrange_fds(&fds, Some(init.fd()))?;
                set_rlimit(libc::RLIMIT_CPU, lim.cpu_secs, lim.cpu_secs + 1)?;
                set_rlimit(libc::RLIMIT_AS, lim.address_space, lim.address_space)?;
                set_rlimit(libc::RLIMIT_FSIZE, lim.file_size, lim.file_size)?;
                set_rlimit(libc::RLIMIT_NOFILE, 64, 64)?;
                set_rlimit(libc::RLIMIT_CORE, 0, 0)?;
                // The init counts too: the command keeps its `processes`.
                let nproc = lim.processes + INIT_PROCESSES;
                set_rlimit(libc::RLIMIT_NPROC, nproc, nproc)?;
                plan.drop_privileges()?;
                // SAFETY: as above.
                unsafe {
                    // Changing the user clears the parent-death signal: again.
                    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                    check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
                    libc::syscall(
                        libc::SYS_execveat,
                        fds.len() as libc::c_int,
                        empty.as_ptr(),
                        args.as_ptr(),
                        env.as_ptr(),
                        libc::AT_EMPTY_PATH,
                    );
                }
                Err(io::Error::last_os_error())
            };
            match run() {
                Ok(()) => io::Error::from_raw_os_error(libc::EINVAL),
                Err(e) => e,
            }
        };
        // SAFETY: the body only makes system calls on data prepared above.
        let pid = unsafe { spawn::spawn_with(flags, &mut body) }.map_err(spawn_err)?;
        let mut child = spawn::Child::new(pid);
        drop(write_end); // our copy of the pipe's write end
        drop(status_write); // only the init holds it now
        drop(ask_read);
        let deadline = Instant::now() + limits.wall;
        let io_err = |source| JailError::Io {
            program: program.clone(),
            source,
        };
        let mut output = Vec::new();
        let mut dropped = 0u64;
        let mut tail = Tail::default();
        let mut timed_out = false;
        let mut reader = fs::File::from(read_end);
        let mut buf = [0u8; 8192];
        loop {
            let now = Instant::now();
            if now >= deadline {
                timed_out = true;
                break;
            }
            let ms = (deadline - now).as_millis().min(1000) as i32;
            let mut pfd = libc::pollfd {
                fd: reader.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, ms.max(1)) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                kill_group(pid);
                let _ = child.wait();
                return Err(io_err(e));
            }
            if r == 0 {
                continue;
            }
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = limits.output_cap.saturating_sub(output.len());
                    let keep = room.min(n);
                    output.extend_from_slice(&buf[..keep]);
                    dropped += (n - keep) as u64;
                    tail.push(&buf[keep..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    kill_group(pid);
                    let _ = child.wait();
                    return Err(io_err(e));
                }
            }
        }
        // The output is closed (or time is up). The init ends the run
        // itself when the command ends; at the wall the server asks it to
        // (it kills, reaps and counts every process), and kills it from
        // outside only if it does not answer within `REAP_BOUND`.
        let status = if timed_out {
            None
        } else {
            wait_until(&mut child, deadline).map_err(io_err)?
        };
        if status.is_none() {
            let mut ask = fs::File::from(ask_write);
            let _ = io::Write::write_all(&mut ask, b"x");
            drop(ask);
            let bound = Instant::now() + REAP_BOUND;
            if wait_until(&mut child, bound).map_err(io_err)?.is_none() {
                kill_group(pid);
                // SAFETY: plain syscall on our own child, not yet reaped.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                child.wait().map_err(io_err)?;
            }
        }
        // No `kill_group` once the init is reaped: its pid, and so the
        // group's id, may be another process's by now. The init left no
        // process (it reaped them all, or the kernel ended the namespace
        // with it).
        // The command's own status, as the init reported it; without a
        // report (the wall clock, the server's death) none.
        let records = read_init_report(status_read).map_err(io_err)?;
        let status = match records.command {
            InitReport::Ended(st) => status.map(|_| st),
            InitReport::NotStarted(errno) => {
                return Err(spawn_err(io::Error::from_raw_os_error(errno)))
            }
            InitReport::None => status,
        };
        let exit = match status {
            None => JailExit::WallClock,
            Some(st) => match (st.code(), st.signal()) {
                (Some(c), _) => JailExit::Exited(c),
                (None, Some(s)) => JailExit::Signaled(s),
                _ => JailExit::Exited(-1),
            },
        };
        // Whatever left the command's process group (and so escaped
        // `kill_group`) ends with the group: the PID namespace ends with
        // its PID 1, and the control group is emptied all the same.
        let (oom_kills, memory_peak, group_cpu) = match self.group() {
            Some(g) => {
                if !g.members().is_empty() {
                    g.kill_all();
                }
                (
                    g.oom_kills().saturating_sub(oom_before),
                    peak.read(),
                    g.cpu_time()
                        .zip(cpu_before)
                        .map(|(now, before)| now.saturating_sub(before)),
                )
            }
            None => (0, None, None),
        };
        // The run's CPU as the kernel counted it: what the init reaped (its
        // rusage: every process of the run, which the init killed and
        // reaped before it exited), or, where the jail has a control
        // group, the group's count if larger. Only an init killed from
        // outside leaves processes to the kernel, reaped uncounted: then
        // only the group counts them.
        let (cpu, cpu_count) = match (group_cpu, records.count) {
            (Some(g), _) => (child.cpu().max(g), CpuCount::Complete),
            (None, count) => (child.cpu(), count),
        };
        let output_tail = tail.lines(output.last().copied());
        let output = String::from_utf8_lossy(&output).into_owned();
        let work_full = self.work_full().map_err(io_err)?;
        Ok(JailOutput {
            exit,
            output,
            output_dropped: dropped,
            output_tail,
            cpu,
            cpu_count,
            work_full,
            oom_kills,
            memory_peak,
        })
    }
}

impl Drop for Jail {
    /// Gives the lent network namespace back: every process of every run
    /// is gone by now (each run ended with its PID namespace's first
    /// process, which the kernel outlives no process of the namespace),
    /// and the pool keeps it only if no socket is left in it.
    fn drop(&mut self) {
        if let Some(n) = self.netns.take() {
            netns::POOL.give_back(n);
        }
    }
}

/// The last bytes of a command's dropped output, [`OUTPUT_TAIL`] of
/// them and the one before, which says whether they begin a line.
#[derive(Default)]
struct Tail {
    bytes: std::collections::VecDeque<u8>,
}

impl Tail {
    /// Keeps the last `OUTPUT_TAIL + 1` bytes (one more than the tail, to
    /// tell whether its first line began before it): a chunk's bytes that
    /// would fall off at once are never copied.
    fn push(&mut self, dropped: &[u8]) {
        const KEPT: usize = OUTPUT_TAIL + 1;
        self.bytes
            .extend(&dropped[dropped.len().saturating_sub(KEPT)..]);
        let excess = self.bytes.len().saturating_sub(KEPT);
        self.bytes.drain(..excess);
    }

    /// The whole lines of the tail: a first line that began before it,
    /// in the kept output (whose last byte is `kept_last`) or in what was
    /// dropped before, is left off, so that no line of the tail begins
    /// where its line did not.
    fn lines(self, kept_last: Option<u8>) -> String {
        let mut bytes = Vec::from(self.bytes);
        let before = if bytes.len() > OUTPUT_TAIL {
            Some(bytes.remove(0))
        } else {
            kept_last
        };
        let start = match before {
            None | Some(b'\n') => 0,
            Some(_) => bytes
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| i + 1),
        };
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }
}

/// The jail's init (`src/sandbox/jail_init.c`, built by `build.rs`): a
/// static program of a few system calls, the first process of every run's
/// PID namespace.
const INIT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/jail-init"));

/// Processes the init adds to a run: itself (not counted against
/// [`JailLimits::processes`]).
const INIT_PROCESSES: u64 = 1;

/// The init's `argv[0]` (and its memory file's name).
pub(crate) const INIT_NAME: &str = "knobeln-jail-init";

/// The init, held once per server in a sealed memory file (or, where the
/// kernel forbids executing those, in the private unlinked file of
/// [`Executable::from_bytes`], opened to every uid's execution: a jail's
/// own uid runs it, and nothing reaches that file but its descriptor).
pub(crate) fn init_executable() -> io::Result<&'static Executable> {
    static HELD: OnceLock<Result<Executable, (io::ErrorKind, String)>> = OnceLock::new();
    HELD.get_or_init(|| {
        let held = |e: io::Error| (e.kind(), e.to_string());
        let exe = Executable::from_bytes(INIT_NAME, INIT).map_err(held)?;
        if !exe.executable_by_others() {
            // SAFETY: fchmod on the descriptor the executable holds.
            check(unsafe { libc::fchmod(exe.fd(), 0o555) }).map_err(held)?;
        }
        Ok(exe)
    })
    .as_ref()
    .map_err(|(kind, what)| io::Error::new(*kind, format!("the jail's init: {what}")))
}

/// What the init reported on its status pipe: of the command, and whether
/// it reaped every process of the run before it exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InitRecords {
    pub(crate) command: InitReport,
    /// [`CpuCount::Complete`] when the init said it killed and reaped
    /// every other process of the namespace.
    pub(crate) count: CpuCount,
}

/// What the init reported of the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InitReport {
    /// The command ended with this wait status.
    Ended(ExitStatus),
    /// The command could not be executed (the `errno` of its `execve`,
    /// or of the init's `fork`).
    NotStarted(i32),
    /// Nothing: the init was killed before the command ended.
    None,
}

/// Reads the init's records (8 bytes each: a tag and a value) once the
/// init is reaped: every process that held the pipe's write end (the init,
/// and its child before the command's exec) is gone then.
pub(crate) fn read_init_report(pipe: OwnedFd) -> io::Result<InitRecords> {
    super::set_nonblocking(&pipe)?;
    let mut bytes = Vec::with_capacity(16);
    let mut reader = fs::File::from(pipe).take(64);
    match reader.read_to_end(&mut bytes) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    Ok(parse_init_report(&bytes))
}

/// The init's records, as [`InitRecords`]: a failed exec wins over the
/// exit status (127) the init then reports.
fn parse_init_report(bytes: &[u8]) -> InitRecords {
    let mut records = InitRecords {
        command: InitReport::None,
        count: CpuCount::Partial,
    };
    for rec in bytes.chunks_exact(8) {
        let tag = i32::from_ne_bytes(rec[..4].try_into().expect("4 bytes"));
        let value = i32::from_ne_bytes(rec[4..].try_into().expect("4 bytes"));
        match tag {
            1 if records.command == InitReport::None => {
                records.command = InitReport::Ended(ExitStatus::from_raw(value))
            }
            2 if !matches!(records.command, InitReport::NotStarted(_)) => {
                records.command = InitReport::NotStarted(value.max(1))
            }
            3 => records.count = CpuCount::Complete,
            _ => {}
        }
    }
    records
}

/// A file's name in the work folder: no folders, no `.` or `..`.
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a file name"),
        ));
    }
    Ok(())
}

fn wait_until(
    child: &mut spawn::Child,
    deadline: Instant,
) -> io::Result<Option<std::process::ExitStatus>> {
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Some(st));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `open_tree`: a copy of the mount, detached, close-on-exec.
const OPEN_TREE_CLONE: libc::c_uint = 1;
const OPEN_TREE_CLOEXEC: libc::c_uint = libc::O_CLOEXEC as libc::c_uint;
/// `move_mount`: the source is the descriptor itself.
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;

/// A new tmpfs of [`WORK_BYTES`] and [`WORK_INODES`], mounted nowhere,
/// owned by `owner` (the jail's own uid when the server is root):
/// the descriptor of its detached mount ([`detached_tmpfs`]).
fn work_tmpfs(owner: Option<u32>) -> io::Result<OwnedFd> {
    let mut options = vec![
        ("size", WORK_BYTES.to_string()),
        ("nr_inodes", WORK_INODES.to_string()),
        ("mode", "0755".to_string()),
    ];
    if let Some(uid) = owner {
        // The jailed command runs under the jail's uid and owns its folder.
        options.push(("uid", uid.to_string()));
        options.push(("gid", uid.to_string()));
    }
    // Owned by the jail's uid only when the server is root.
    let who = if owner.is_some() {
        Maker::Root
    } else {
        Maker::UserNamespace
    };
    detached_tmpfs(&options, who, None)
}

/// Removes the jail folders of servers that are no longer running (a
/// server killed by `kill -9` cannot remove its own).
fn remove_stale_jails() {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(JAIL_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        if pid > 0 && !super::process_alive(pid) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Kills a whole process group; a group that is already gone is fine.
pub(crate) fn kill_group(pgid: i32) {
    // SAFETY: plain syscall.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// Everything the child needs to enter the jail, prepared before the fork so
/// that the child only makes system calls.
struct MountPlan {
    root: CString,
    usr_src: CString,
    usr_dst: CString,
    null_src: CString,
    null_dst: CString,
    work_dst: CString,
    tmp_dst: CString,
    empty: CString,
    slash: CString,
    work: CString,
    /// The jail's descriptor of the work folder's tmpfs.
    work_fd: RawFd,
    /// The flags of the host's mount that holds the tree which a user
    /// namespace may not drop (`nodev`, `noexec`, the atime rule): kept
    /// when the tree is made read-only.
    root_flags: libc::c_ulong,
    /// The jail's own uid (and gid) when the server is root; `None`: a
    /// user namespace of the run's own.
    own_uid: Option<u32>,
    maps: UserMaps,
    /// The program the run starts if it is held in huge pages
    /// ([`super::held`]), with the path in the tree its copy is mounted
    /// over: the `Arc` keeps the copy's descriptor open until the run has
    /// mounted it.
    held: Vec<(Arc<super::held::Held>, CString)>,
    /// The copy's name in its tmpfs.
    copy_name: CString,
}

impl MountPlan {
    fn new(
        root: &Path,
        work_fd: RawFd,
        own_uid: Option<u32>,
        program: &Path,
    ) -> io::Result<MountPlan> {
        let c = |p: &Path| {
            CString::new(p.as_os_str().as_encoded_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))
        };
        Ok(MountPlan {
            root: c(root)?,
            usr_src: c(Path::new("/usr"))?,
            usr_dst: c(&root.join("usr"))?,
            null_src: c(Path::new("/dev/null"))?,
            null_dst: c(&root.join("dev/null"))?,
            work_dst: c(&root.join("work"))?,
            tmp_dst: c(&root.join("tmp"))?,
            empty: c(Path::new(""))?,
            slash: c(Path::new("/"))?,
            work: c(Path::new("/work"))?,
            work_fd,
            root_flags: {
                let kept = libc::MS_NODEV
                    | libc::MS_NOEXEC
                    | libc::MS_NOATIME
                    | libc::MS_NODIRATIME
                    | libc::MS_RELATIME;
                // statvfs's ST_* flags are the mount's MS_* flags.
                rustix::fs::statvfs(root)?.f_flag.bits() as libc::c_ulong & kept
            },
            own_uid,
            maps: UserMaps::new()?,
            // Only the program the run starts: a mount costs every run.
            held: super::held::held()
                .into_iter()
                .filter(|h| h.program == program && h.still_the_file())
                .filter_map(|h| {
                    let inside = root.join(h.program.strip_prefix("/").ok()?);
                    Some((h, c(&inside).ok()?))
                })
                .collect(),
            copy_name: c(Path::new(super::held::COPY_NAME))?,
        })
    }

    /// Runs in the child between clone and exec: only system calls.
    fn enter(&self) -> io::Result<()> {
        // The namespaces were made by the clone itself.
        // SAFETY: system calls on valid NUL-terminated strings prepared before the clone.
        unsafe {
            if self.own_uid.is_none() {
                self.maps.write()?;
            }
            super::make_mounts_private(&self.slash)?;
            // The tree on a mount of its own, made read-only below once
            // everything is mounted in it: the tools write only into the
            // work folder's tmpfs (also when the server is not root and
            // the jail's root in its user namespace owns the tree).
            check(libc::mount(
                self.root.as_ptr(),
                self.root.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ))?;
            check(libc::mount(
                self.usr_src.as_ptr(),
                self.usr_dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
            // The programs held in huge pages, each a copy of its read-only
            // mount over the program's file: the same bytes at the same
            // path, mapped from huge pages.
            for (held, inside) in &self.held {
                let copy = libc::syscall(
                    libc::SYS_open_tree,
                    held.mount_fd(),
                    self.copy_name.as_ptr(),
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC,
                ) as RawFd;
                // Where the copy cannot be mounted, the run starts the
                // host's file (the same bytes).
                if copy >= 0 {
                    libc::syscall(
                        libc::SYS_move_mount,
                        copy,
                        self.empty.as_ptr(),
                        libc::AT_FDCWD,
                        inside.as_ptr(),
                        MOVE_MOUNT_F_EMPTY_PATH,
                    );
                    libc::close(copy);
                }
            }
            // Read-only on top; where a user namespace forbids the remount,
            // /usr still belongs to the real root and stays unwritable.
            libc::mount(
                std::ptr::null(),
                self.usr_dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND
                    | libc::MS_REMOUNT
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | libc::MS_NODEV,
                std::ptr::null(),
            );
            check(libc::mount(
                self.null_src.as_ptr(),
                self.null_dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ))?;
            // The work folder: a copy of the jail's detached mount of its
            // tmpfs (the same file system), at /work and at /tmp.
            let tree = libc::syscall(
                libc::SYS_open_tree,
                self.work_fd,
                self.empty.as_ptr(),
                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | libc::AT_EMPTY_PATH as libc::c_uint,
            ) as RawFd;
            if tree < 0 {
                return Err(io::Error::last_os_error());
            }
            let moved = libc::syscall(
                libc::SYS_move_mount,
                tree,
                self.empty.as_ptr(),
                libc::AT_FDCWD,
                self.work_dst.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            );
            let err = io::Error::last_os_error();
            libc::close(tree);
            if moved != 0 {
                return Err(err);
            }
            check(libc::mount(
                self.work_dst.as_ptr(),
                self.tmp_dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ))?;
            check(libc::mount(
                std::ptr::null(),
                self.root.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND
                    | libc::MS_REMOUNT
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | self.root_flags,
                std::ptr::null(),
            ))?;
            check(libc::chroot(self.root.as_ptr()))?;
            check(libc::chdir(self.work.as_ptr()))?;
        }
        Ok(())
    }

    fn drop_privileges(&self) -> io::Result<()> {
        let Some(uid) = self.own_uid else {
            // In its user namespace the command is root: it keeps no
            // capability there and gains none at exec (`SECBIT_NOROOT`),
            // so it cannot undo its mounts (make the tree writable, which
            // the server's user owns on the host, or mount a file system
            // of its own).
            const SECBITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x20;
            #[repr(C)]
            struct CapHeader {
                version: u32,
                pid: libc::c_int,
            }
            #[repr(C)]
            struct CapData {
                effective: u32,
                permitted: u32,
                inheritable: u32,
            }
            let header = CapHeader {
                version: 0x2008_0522,
                pid: 0,
            };
            let none = [
                CapData {
                    effective: 0,
                    permitted: 0,
                    inheritable: 0,
                },
                CapData {
                    effective: 0,
                    permitted: 0,
                    inheritable: 0,
                },
            ];
            // SAFETY: plain syscalls on local data.
            unsafe {
                check(libc::prctl(libc::PR_SET_SECUREBITS, SECBITS, 0, 0, 0))?;
                check(libc::syscall(libc::SYS_capset, &header, none.as_ptr()) as libc::c_int)?;
            }
            return Ok(());
        };
        // SAFETY: plain syscalls.
        unsafe {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(uid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One tree for every jail of a server while it is intact; a part of
    /// it removed (a cleaner of the temp folder, days into a contest): a
    /// new tree for the next jail, the old one removed with the last jail
    /// that held it. (On a slot of the test's own: the server's tree is
    /// in use by the other tests' jails.)
    #[test]
    fn jails_share_one_tree_and_a_damaged_one_is_made_again() {
        let slot = Mutex::new(None);
        let (a, b) = (tree_held_in(&slot).unwrap(), tree_held_in(&slot).unwrap());
        assert!(Arc::ptr_eq(&a, &b));
        assert!(a.intact());
        let null = a.root.join("dev/null");
        assert!(fs::symlink_metadata(&null).unwrap().is_file());
        fs::remove_file(&null).unwrap();
        assert!(!a.intact());
        let c = tree_held_in(&slot).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(c.intact());
        let old = a.dir.path().to_path_buf();
        drop((a, b));
        assert!(
            !old.exists(),
            "the replaced tree is removed with its last holder"
        );
        assert!(c.dir.path().exists());
    }

    /// The init's records: the command's wait status as the kernel gave
    /// it (a signal stays a signal, an exit code an exit code), a failed
    /// exec as the error, nothing (the init killed) as no report.
    #[test]
    fn the_inits_report_is_the_commands_wait_status() {
        let rec = |tag: i32, value: i32| [tag.to_ne_bytes(), value.to_ne_bytes()].concat();
        let ended = |bytes: &[u8]| match parse_init_report(bytes).command {
            InitReport::Ended(st) => (st.code(), st.signal()),
            other => panic!("{other:?}"),
        };
        assert_eq!(ended(&rec(1, libc::SIGXFSZ)), (None, Some(libc::SIGXFSZ)));
        assert_eq!(ended(&rec(1, 153 << 8)), (Some(153), None));
        assert_eq!(
            parse_init_report(&[rec(2, libc::ENOENT), rec(1, 127 << 8), rec(3, 0)].concat()),
            InitRecords {
                command: InitReport::NotStarted(libc::ENOENT),
                count: CpuCount::Complete
            }
        );
        let none = InitRecords {
            command: InitReport::None,
            count: CpuCount::Partial,
        };
        assert_eq!(parse_init_report(&[]), none);
        assert_eq!(parse_init_report(&rec(1, 0)[..5]), none);
        // The reap said (the wall's request answered), the command's end not.
        assert_eq!(
            parse_init_report(&rec(3, 0)),
            InitRecords {
                command: InitReport::None,
                count: CpuCount::Complete
            }
        );
    }

    /// The one-process filter reaches the init as hex text after a `:` in
    /// its `argv[0]` (a bot's without a control group, see
    /// `bot::plan`). A filter the init cannot read (not hex, a cut
    /// instruction, none, more than it holds) or the kernel refuses is a
    /// failed start: the command never runs without it. The real filter
    /// installs: the command runs and cannot start a process.
    #[test]
    fn a_filter_the_init_cannot_read_or_install_is_a_failed_start() {
        use crate::sandbox::bot_seccomp::{filter_hex, one_process_filter};
        let jail = Jail::new().unwrap();
        let limits = JailLimits::default();
        let good = filter_hex(one_process_filter());
        // sh runs `true` in a child: refused, so "forked" is never said.
        let argv = ["/bin/sh", "-c", "echo ran; /bin/true && echo forked"];
        let run =
            |filter: &str| jail.run_under_init(&format!("{INIT_NAME}:{filter}"), &argv, &limits);
        let out = run(&good).expect("the real filter installs");
        let said = &out.output;
        assert!(said.contains("ran") && !said.contains("forked"), "{said}");
        let refused = "ffff000000000000"; // no instruction of classic BPF
        let too_many = refused.repeat(65);
        for (why, filter) in [
            ("not hex", "zz".to_string()),
            ("upper case is not the server's hex", good.to_uppercase()),
            ("a cut instruction", good[..good.len() - 3].to_string()),
            ("no instruction", String::new()),
            ("more than the init holds", too_many),
            ("refused by the kernel", refused.to_string()),
        ] {
            match run(&filter) {
                Err(JailError::Spawn { source, .. }) => {
                    assert_eq!(source.raw_os_error(), Some(libc::EINVAL), "{why}")
                }
                other => panic!("{why}: {other:?}"),
            }
        }
    }

    /// A program the jail cannot execute is the jail's error, as before
    /// the init (which reports its child's failed `execve`).
    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let jail = Jail::new().unwrap();
        match jail.run(&["/nonexistent/tool"], &JailLimits::default()) {
            Err(JailError::Spawn { source, .. }) => {
                assert_eq!(source.raw_os_error(), Some(libc::ENOENT))
            }
            other => panic!("{other:?}"),
        }
    }

    /// The tail of the dropped output holds whole lines only: a line that
    /// began in the kept output or in what was dropped before the tail is
    /// left off, so a fragment ("gcc: …" cut out of a longer line of the
    /// program's) never reads as a line of its own.
    #[test]
    fn the_tail_of_the_dropped_output_is_whole_lines() {
        let tail = |kept_last, dropped: &[&[u8]]| {
            let mut t = Tail::default();
            for d in dropped {
                t.push(d);
            }
            t.lines(kept_last)
        };
        assert_eq!(tail(Some(b'\n'), &[b"gcc: a\n", b"b\n"]), "gcc: a\nb\n");
        assert_eq!(tail(Some(b'x'), &[b"gcc: a\n", b"b\n"]), "b\n");
        assert_eq!(tail(None, &[b"gcc: a\n"]), "gcc: a\n");
        assert_eq!(tail(Some(b'\n'), &[]), "");
        let long = [vec![b'x'; 2 * OUTPUT_TAIL], b"\ngcc: end\n".to_vec()].concat();
        assert_eq!(tail(Some(b'\n'), &[&long]), "gcc: end\n");
        let fragment = [vec![b'x'; OUTPUT_TAIL], b"gcc: end\n".to_vec()].concat();
        assert_eq!(
            tail(
                Some(b'\n'),
                &[&fragment[..OUTPUT_TAIL - 3], &fragment[OUTPUT_TAIL - 3..]]
            ),
            ""
        );
        let at_line = [vec![b'x'; OUTPUT_TAIL - 9], b"\ngcc: end\n".to_vec()].concat();
        assert_eq!(tail(Some(b'\n'), &[&at_line]), "gcc: end\n");
    }

    /// Red team (F11): the group's `oom_kill` counter counts a member
    /// ended by any OOM killer. A kill while the group held far less than
    /// its limit is the machine's (short of memory, or a parent group's
    /// limit), never the program's: only a peak at the limit makes it the
    /// jail's own. Before, every counted kill was reported to the
    /// participant as "your program made the compiler use more than
    /// 256 MiB". (The machine's own OOM killer cannot be called up by a
    /// test on a shared machine: the run's figures are given here.)
    #[test]
    fn an_oom_kill_is_the_jails_only_at_its_limit() {
        let out = |oom_kills, memory_peak| JailOutput {
            exit: JailExit::Signaled(libc::SIGKILL),
            output: String::new(),
            output_dropped: 0,
            output_tail: String::new(),
            cpu: Duration::ZERO,
            cpu_count: CpuCount::Complete,
            work_full: None,
            oom_kills,
            memory_peak,
        };
        let limit = MEMORY_BYTES;
        assert!(out(1, Some(limit)).oom_kill_is_the_jails(limit));
        assert!(out(2, Some(limit - (4 << 20))).oom_kill_is_the_jails(limit));
        assert!(!out(1, Some(limit - (9 << 20))).oom_kill_is_the_jails(limit));
        assert!(!out(1, Some(20 << 20)).oom_kill_is_the_jails(limit));
        assert!(!out(0, Some(limit)).oom_kill_is_the_jails(limit), "no kill");
        assert!(out(1, None).oom_kill_is_the_jails(limit));
    }
}
