//! The bot sandbox: a participant's program in any language, confined for
//! one match.
//!
//! A bot is a language runtime (a native program, a Python interpreter, a
//! JVM) that talks over standard input and output. Every bot process, and
//! everything it starts, runs
//! - in new **user, mount, PID, network, IPC, UTS and cgroup namespaces**:
//!   its own PID 1 (when it ends, the kernel ends everything it started),
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

use std::ffi::{c_int, c_void, CString};
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::cgroup::{join_fd, Freeze, Group, GroupLimits, BOT_GROUPS};
use super::exe::Executable;
use super::netns::{Netns, POOL};
use super::set_rlimit;
use super::spawn::{self, arrange_fds, check, CArgs};
use super::{is_root, pipe, set_nonblocking};

/// The uid a bot has inside its namespace.
pub const INSIDE_UID: u32 = 1000;

/// First uid of the range bots get outside their namespace when the server
/// runs as root: `BOT_UID_BASE + 256 · block + slot`, the block drawn at
/// random per server. No distribution hands out uids there.
pub const BOT_UID_BASE: u32 = 0x1000_0000;

/// Bots one server runs at once (uid slots).
const SLOTS: usize = 256;

/// Where both children hold the sealed program ([`arrange_fds`] puts it
/// after the three pipes).
const EXE_FD: RawFd = 3;

/// Size of the stack the bot runs on before `execve`.
const CHILD_STACK: usize = 64 * 1024;

/// One file of a bot's program, placed in `/bot`; or, for the native (ELF)
/// program the run command starts (`/bot/PATH` as `argv[0]`), executed
/// from a sealed in-memory copy ([`super::exe::Executable`]) made at the
/// first spawn and shared by every later match of this `BotFile`: no copy
/// per bot (a Rust program's 350 kB cost ~0.2 ms per bot to write and free).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BotFile {
    /// Relative path (checked: no `..`, no absolute path, no NUL).
    pub path: String,
    /// Private, so that the sealed copy always holds exactly these bytes.
    bytes: Vec<u8>,
    pub executable: bool,
    #[serde(skip)]
    sealed: SealedCopy,
}

impl BotFile {
    pub fn new(path: String, bytes: Vec<u8>, executable: bool) -> BotFile {
        BotFile {
            path,
            bytes,
            executable,
            sealed: SealedCopy::default(),
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Replaces the contents (and forgets the sealed copy of the old ones).
    pub fn set_bytes(&mut self, bytes: Vec<u8>) {
        self.bytes = bytes;
        self.sealed = SealedCopy::default();
    }

    /// The sealed copy to execute, made at the first call, or `None` where
    /// it could not be one the bot may execute (then the file is copied).
    /// A copy whose execute bits a bot took (possible where the kernel
    /// cannot seal the mode and the bot's uid owns the file) is replaced.
    fn sealed(&self) -> Option<Arc<Executable>> {
        let mut copy = self.sealed.0.lock().unwrap_or_else(|e| e.into_inner());
        let usable = match &*copy {
            Sealed::NotYet => false,
            Sealed::Made(exe) => exe.executable_by_others(),
            Sealed::Unavailable => true,
        };
        if !usable {
            *copy = match Executable::from_bytes(&format!("knobeln-bot-{}", self.path), &self.bytes)
            {
                Ok(exe) if exe.executable_by_others() => Sealed::Made(Arc::new(exe)),
                _ => Sealed::Unavailable,
            };
        }
        match &*copy {
            Sealed::Made(exe) => Some(exe.clone()),
            _ => None,
        }
    }
}

/// The lazily made sealed copy of a [`BotFile`]'s bytes. A clone starts
/// without one; two `BotFile`s are equal by their contents alone.
#[derive(Default)]
struct SealedCopy(Mutex<Sealed>);

#[derive(Default)]
enum Sealed {
    /// No spawn has asked yet.
    #[default]
    NotYet,
    Made(Arc<Executable>),
    /// None that a bot may execute could be made: the file is copied.
    Unavailable,
}

impl Clone for SealedCopy {
    fn clone(&self) -> Self {
        SealedCopy::default()
    }
}

impl PartialEq for SealedCopy {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for SealedCopy {}

impl std::fmt::Debug for SealedCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealedCopy")
    }
}

/// Limits of one bot for one match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BotLimits {
    /// Memory (resident, whole tree), in bytes.
    pub memory_bytes: u64,
    /// When no memory control group is available: the address-space limit
    /// that stands in for `memory_bytes`, or `None` for runtimes whose
    /// reservations would be mistaken for use (the JVM limits its heap itself).
    pub address_space_fallback: Option<u64>,
    /// Threads and processes at once.
    pub processes: u64,
    /// CPU seconds per process (a backstop; the referee watches the tree).
    pub cpu_secs: u64,
    /// Size of `/tmp`, in bytes.
    pub disk_bytes: u64,
    /// Size of `/work`, in bytes (a kept folder's quota).
    pub work_bytes: u64,
    /// Open files per process.
    pub open_files: u64,
}

impl Default for BotLimits {
    fn default() -> Self {
        BotLimits {
            memory_bytes: 256 << 20,
            address_space_fallback: Some(1 << 30),
            processes: 32,
            cpu_secs: 60,
            disk_bytes: 16 << 20,
            work_bytes: 16 << 20,
            open_files: 256,
        }
    }
}

/// Where a bot's network namespace comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// One the server made, lent for the match ([`super::netns`]); a fresh
    /// one where the server cannot make them.
    #[default]
    Lent,
    /// A fresh one, made by the bot's clone.
    Own,
}

/// What to start.
#[derive(Debug, Clone)]
pub struct BotSpec<'a> {
    /// The command; `argv[0]` is an absolute path inside the sandbox.
    pub argv: &'a [String],
    /// The environment (`KEY=value`); PATH, HOME, TMPDIR, LANG come first.
    pub env: &'a [String],
    pub files: &'a [BotFile],
    /// Host paths shown read-only at the same place (must be world-readable).
    pub read_only: &'a [PathBuf],
    pub limits: BotLimits,
    pub network: Network,
    /// The one CPU the bot and everything it starts run on (the referee's
    /// choice, [`crate::lines::CpuSlots`]); `None`: the server's CPUs. Set
    /// before the bot exists and inherited; the bot cannot change it
    /// (`sched_setaffinity` is refused).
    pub cpu: Option<usize>,
    /// Files placed into the writable `/work` before the program starts
    /// (a build's source).
    pub work_files: &'a [BotFile],
    /// Folders made in `/work` before the program starts (a kept folder's
    /// empty ones too, [`super::folder::FolderImage::dirs`]).
    pub work_dirs: &'a [String],
    /// Whether the server keeps `/work` after the bot is gone.
    pub work: WorkFolder,
    /// Whether the bot gets a `/proc` (of its own PID namespace).
    pub proc: ProcFs,
    /// A host folder shown read-only at `/toolchain` (a compiler that
    /// lives outside `/usr`, at a neutral path).
    pub toolchain: Option<&'a Path>,
    /// The runtime image ([`super::image`]) the bot's `/usr`, top-level
    /// folders, read-only paths and devices come from; `None`: the host's.
    pub image: Option<&'a Path>,
}

/// What becomes of a bot's `/work` folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkFolder {
    /// Gone with the bot (a match).
    #[default]
    Private,
    /// Opened by the server before the program starts and kept
    /// ([`BotProcess::take_work`]): a build's output, or a working folder
    /// kept for the bot's next match ([`super::folder`]). The folder is
    /// still the bot's own tmpfs, so nothing of the host shows in it.
    Returned,
}

/// Whether a bot sees a `/proc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcFs {
    /// Its own PID namespace's, showing only its processes
    /// (`subset=pid`); per-process files still show some of the machine
    /// (`net/sockstat`, `mountinfo`).
    Mounted,
    /// None at all (every built-in bot, most compilers): nothing of the
    /// machine to read there. The loader's `$ORIGIN` comes from
    /// `LD_ORIGIN_PATH`, set to the program's folder.
    #[default]
    Hidden,
}

/// Why a bot could not be started: always the server's fault (a missing
/// runtime, a machine without user namespaces), never the participant's.
#[derive(Debug, thiserror::Error)]
pub enum BotSpawnError {
    #[error("bot sandbox: {what}: {source}")]
    Io { what: String, source: io::Error },
    #[error("bot sandbox: a program file has a bad path: {0:?}")]
    BadPath(String),
    #[error("bot sandbox: more than {SLOTS} bots at once")]
    NoSlot,
}

fn io_err(what: &str) -> impl Fn(io::Error) -> BotSpawnError + '_ {
    move |source| BotSpawnError::Io {
        what: what.to_string(),
        source,
    }
}

static SLOTS_TAKEN: Mutex<[bool; SLOTS]> = Mutex::new([false; SLOTS]);

/// A uid slot, given back on drop.
#[derive(Debug)]
struct Slot(usize);

impl Slot {
    fn take() -> Option<Slot> {
        let mut taken = SLOTS_TAKEN.lock().unwrap_or_else(|e| e.into_inner());
        let i = taken.iter().position(|t| !t)?;
        taken[i] = true;
        Some(Slot(i))
    }

    /// `BOT_UID_BASE + 256 · block + slot`, with a block drawn at random
    /// once per server: a bot sees its uid outside in its `uid_map`, and a
    /// block derived from the server's pid would tell it that pid. Two
    /// servers share a block with a chance of one in four million.
    fn uid(&self) -> u32 {
        static BLOCK: OnceLock<u32> = OnceLock::new();
        let block = *BLOCK.get_or_init(|| {
            let mut b = [0u8; 4];
            getrandom::fill(&mut b).map_or(std::process::id(), |()| u32::from_le_bytes(b))
                % 0x40_0000
        });
        BOT_UID_BASE + block * SLOTS as u32 + self.0 as u32
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut taken = SLOTS_TAKEN.lock().unwrap_or_else(|e| e.into_inner());
        taken[self.0] = false;
    }
}

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
    /// Looks whether it has come to rest ([`BotProcess::at_rest`]).
    rest: RestProbe,
}

/// Steps of the bot's set-up, for the error message when one fails.
const STEPS: &[&str] = &[
    "start",
    "join the control group",
    "enter the network namespace",
    "arrange descriptors",
    "set resource limits",
    "pin to its CPU",
    "stage the toolchain",
    "become the bot's user",
    "clone the bot",
    "map the user",
    "make the mounts private",
    "mount the new root",
    "create a folder",
    "bind a read-only path",
    "make a link",
    "mount a tmpfs",
    "write a program file",
    "pivot into the new root",
    "make the root read-only",
    "drop to the bot's user",
    "set no_new_privs and the parent-death signal",
    "install seccomp",
    "exec the program",
];

fn step(name: &str) -> i32 {
    STEPS.iter().position(|s| *s == name).unwrap_or(0) as i32
}

/// Everything the two children need, prepared before the clone.
struct Plan {
    join: Vec<RawFd>,
    /// A network namespace to enter before the clone (else the clone makes one).
    netns: Option<RawFd>,
    fds: [RawFd; 3],
    rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    /// The CPU set of the bot (one CPU), if it is pinned.
    affinity: Option<rustix::thread::CpuSet>,
    /// A build's toolchain folder, staged by the first child.
    toolchain: Option<CString>,
    toolchain_stage: CString,
    outside_uid: Option<u32>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// The bot's thread id word: non-zero until the bot execs or exits.
    bot_tid: AtomicI32,
    /// 0 while the first child writes the bot's maps, 1 when done, -1 on failure.
    go: AtomicI32,
    slash: CString,
    staging: CString,
    staging_opts: CString,
    tmpfs: CString,
    proc_fs: CString,
    proc_opts: CString,
    actions: Vec<Action>,
    put_old: CString,
    old_inside: CString,
    work: CString,
    prog: CString,
    /// The sealed program to execute instead of `prog` (at descriptor 3
    /// in both children, close-on-exec), held until the spawn is over.
    exe: Option<Arc<Executable>>,
    argv: CArgs,
    env: CArgs,
    filter: &'static [libc::sock_filter],
    stack: Vec<u8>,
    /// `WorkFolder::Returned`: the bot waits before its last steps until
    /// the server has opened its `/work` (`held` 1 when it waits,
    /// `released` 1 when it may go on).
    hold: bool,
    held: AtomicI32,
    released: AtomicI32,
    /// Set by the bot on failure: (step, errno).
    failed_step: AtomicI32,
    failed_errno: AtomicI32,
    bot_pid: AtomicI32,
}

enum Action {
    Mkdir(CString, libc::mode_t),
    Bind {
        src: CString,
        dst: CString,
        remount: libc::c_ulong,
    },
    Symlink(CString, CString),
    /// An empty file to bind a device onto, then the bind, remounted
    /// read-only: a device is still written through, but its inode (one
    /// for every bot of the machine) can no longer be touched: no
    /// `utimensat` whose time another bot would read.
    Device {
        src: CString,
        dst: CString,
        remount: libc::c_ulong,
    },
    Tmpfs {
        dst: CString,
        opts: CString,
    },
    Proc(CString),
    File {
        path: CString,
        bytes: *const u8,
        len: usize,
        mode: libc::mode_t,
    },
}

// SAFETY: the raw pointers in `Action::File` point into the caller's
// `BotFile`s, which outlive the spawn; the plan is only read.
unsafe impl Send for Plan {}

fn cstr(s: &str) -> Result<CString, BotSpawnError> {
    CString::new(s).map_err(|_| BotSpawnError::BadPath(s.to_string()))
}

fn cpath(p: &Path) -> Result<CString, BotSpawnError> {
    CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|_| BotSpawnError::BadPath(p.display().to_string()))
}

/// Where the new root is assembled (a tmpfs over it, in the bot's own
/// mount namespace only).
const STAGING: &str = "/tmp";

/// Where the first child shows a build's toolchain folder to the bot, in a
/// mount namespace of its own (the host's `/mnt` is untouched): the bot
/// binds it from there to `/toolchain`. A toolchain under `/root` cannot
/// be reached by the bot's user itself, and a bind from outside the bot's
/// mount namespace is refused by the kernel.
const TOOLCHAIN_STAGE: &str = "/mnt";

/// Mount flags of the host mount holding `path`, as `MS_*` bits that a
/// read-only bind remount must keep (the kernel refuses to clear locked ones).
fn locked_flags(path: &Path) -> libc::c_ulong {
    let Ok(c) = cpath(path) else {
        return 0;
    };
    // SAFETY: statvfs fills a plain struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let f = st.f_flag as libc::c_ulong;
    let mut ms = 0;
    for (st_bit, ms_bit) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f & st_bit != 0 {
            ms |= ms_bit;
        }
    }
    ms
}

fn check_relative(p: &str) -> Result<(), BotSpawnError> {
    let bad = p.is_empty()
        || p.starts_with('/')
        || p.contains('\0')
        || p.split('/').any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        return Err(BotSpawnError::BadPath(p.to_string()));
    }
    Ok(())
}

/// The rlimits of a bot (soft and hard alike). `own_uid`: the bot's uid
/// outside is its own, so the process count is exactly its own; without
/// a memory controller the address space is limited instead.
/// `RLIMIT_RTPRIO` and `RLIMIT_NICE` are 0 whatever the server's own
/// limits: no real-time policy and no priority above its opponent's.
fn bot_rlimits(
    lim: &BotLimits,
    own_uid: bool,
    memory_controller: bool,
) -> Vec<(libc::__rlimit_resource_t, u64)> {
    let mut rlimits = vec![
        (libc::RLIMIT_CORE, 0),
        (libc::RLIMIT_NOFILE, lim.open_files),
        (libc::RLIMIT_CPU, lim.cpu_secs),
        (libc::RLIMIT_FSIZE, lim.disk_bytes),
        (libc::RLIMIT_MSGQUEUE, 0),
        (libc::RLIMIT_RTPRIO, 0),
        (libc::RLIMIT_NICE, 0),
    ];
    if own_uid {
        // Plus one for the bot's first process before its exec.
        rlimits.push((libc::RLIMIT_NPROC, lim.processes + 1));
    }
    if !memory_controller {
        if let Some(a) = lim.address_space_fallback {
            rlimits.push((libc::RLIMIT_AS, a));
        }
    }
    rlimits
}

impl Plan {
    fn new(
        spec: &BotSpec<'_>,
        group: Option<&Group>,
        netns: Option<&Netns>,
        fds: [RawFd; 3],
        outside_uid: Option<u32>,
    ) -> Result<Plan, BotSpawnError> {
        let lim = spec.limits;
        let controllers = group.map(|g| g.controllers()).unwrap_or_default();
        let rlimits = bot_rlimits(&lim, outside_uid.is_some(), controllers.memory);
        // SAFETY: plain syscalls.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let (outer_uid, outer_gid) = match outside_uid {
            Some(u) => (u, u),
            None => (uid, gid),
        };
        let s = |rel: &str| cstr(&format!("{STAGING}/{rel}"));
        let mut actions = Vec::new();
        let mut made = std::collections::BTreeSet::new();
        let mut mkdir_p = |rel: &str, actions: &mut Vec<Action>| -> Result<(), BotSpawnError> {
            let mut acc = String::new();
            for comp in rel.split('/').filter(|c| !c.is_empty()) {
                if !acc.is_empty() {
                    acc.push('/');
                }
                acc.push_str(comp);
                if made.insert(acc.clone()) {
                    actions.push(Action::Mkdir(s(&acc)?, 0o755));
                }
            }
            Ok(())
        };
        // /usr and the top-level links or folders of the host; the
        // folders from the runtime image where there is one.
        let from = |host: &Path| -> PathBuf {
            match spec.image {
                Some(image) => image.join(host.strip_prefix("/").unwrap_or(host)),
                None => host.to_path_buf(),
            }
        };
        for top in ["usr", "bin", "lib", "lib32", "lib64", "libx32", "sbin"] {
            let host = Path::new("/").join(top);
            match fs::read_link(&host) {
                Ok(target) => actions.push(Action::Symlink(cpath(&target)?, s(top)?)),
                Err(_) if host.is_dir() && from(&host).is_dir() => {
                    let src = from(&host);
                    mkdir_p(top, &mut actions)?;
                    actions.push(Action::Bind {
                        remount: locked_flags(&src),
                        src: cpath(&src)?,
                        dst: s(top)?,
                    });
                }
                Err(_) => {}
            }
        }
        for extra in spec.read_only {
            let rel = extra
                .to_str()
                .ok_or_else(|| BotSpawnError::BadPath(extra.display().to_string()))?
                .trim_start_matches('/');
            if rel.is_empty() || !from(extra).exists() {
                continue;
            }
            check_relative(rel)?;
            if extra.is_dir() {
                mkdir_p(rel, &mut actions)?;
            } else {
                if let Some((parent, _)) = rel.rsplit_once('/') {
                    mkdir_p(parent, &mut actions)?;
                }
                actions.push(Action::File {
                    path: s(rel)?,
                    bytes: std::ptr::null(),
                    len: 0,
                    mode: 0o644,
                });
            }
            let src = from(extra);
            actions.push(Action::Bind {
                src: cpath(&src)?,
                dst: s(rel)?,
                remount: locked_flags(&src),
            });
        }
        mkdir_p("dev", &mut actions)?;
        for dev in ["null", "zero", "random", "urandom"] {
            let src = from(&Path::new("/dev").join(dev));
            actions.push(Action::Device {
                remount: locked_flags(&src),
                src: cpath(&src)?,
                dst: s(&format!("dev/{dev}"))?,
            });
        }
        for (name, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            actions.push(Action::Symlink(cstr(target)?, s(&format!("dev/{name}"))?));
        }
        if spec.proc == ProcFs::Mounted {
            mkdir_p("proc", &mut actions)?;
            actions.push(Action::Proc(s("proc")?));
        }
        if let Some(dir) = spec.toolchain {
            // Staged at TOOLCHAIN_STAGE by the first child (see there).
            mkdir_p("toolchain", &mut actions)?;
            actions.push(Action::Bind {
                src: cstr(TOOLCHAIN_STAGE)?,
                dst: s("toolchain")?,
                remount: locked_flags(dir),
            });
        }
        mkdir_p("tmp", &mut actions)?;
        actions.push(Action::Tmpfs {
            dst: s("tmp")?,
            opts: cstr(&format!(
                "size={},nr_inodes=4096,mode=1777",
                lim.disk_bytes.max(4096)
            ))?,
        });
        mkdir_p("work", &mut actions)?;
        actions.push(Action::Tmpfs {
            dst: s("work")?,
            opts: cstr(&format!(
                "size={},nr_inodes=4096,mode=0700,uid={INSIDE_UID},gid={INSIDE_UID}",
                lim.work_bytes.max(4096)
            ))?,
        });
        for d in spec.work_dirs {
            check_relative(d)?;
            mkdir_p(&format!("work/{d}"), &mut actions)?;
        }
        for f in spec.work_files {
            check_relative(&f.path)?;
            if let Some((parent, _)) = f.path.rsplit_once('/') {
                mkdir_p(&format!("work/{parent}"), &mut actions)?;
            }
            actions.push(Action::File {
                path: s(&format!("work/{}", f.path))?,
                bytes: f.bytes.as_ptr(),
                len: f.bytes.len(),
                mode: if f.executable { 0o755 } else { 0o644 },
            });
        }
        mkdir_p("bot", &mut actions)?;
        let argv0 = spec
            .argv
            .first()
            .ok_or_else(|| BotSpawnError::BadPath("(empty command)".into()))?;
        let mut exe = None;
        let mut files_size = 0usize;
        for f in spec.files {
            check_relative(&f.path)?;
            // An ELF program only: a script's interpreter would have to
            // reopen it through a descriptor that is closed on exec.
            let native = f.bytes.starts_with(b"\x7fELF");
            if exe.is_none()
                && native
                && f.executable
                && argv0.strip_prefix("/bot/") == Some(&f.path)
            {
                exe = f.sealed();
                if exe.is_some() {
                    continue;
                }
            }
            if let Some((parent, _)) = f.path.rsplit_once('/') {
                mkdir_p(&format!("bot/{parent}"), &mut actions)?;
            }
            files_size += f.bytes.len() + 4096;
            actions.push(Action::File {
                path: s(&format!("bot/{}", f.path))?,
                bytes: f.bytes.as_ptr(),
                len: f.bytes.len(),
                mode: if f.executable { 0o755 } else { 0o644 },
            });
        }
        mkdir_p(".oldroot", &mut actions)?;
        let mut env: Vec<String> = vec![
            "PATH=/usr/local/bin:/usr/bin:/bin".into(),
            "HOME=/work".into(),
            "TMPDIR=/tmp".into(),
            "LANG=C.UTF-8".into(),
        ];
        if spec.proc == ProcFs::Hidden {
            // Without a /proc the loader cannot read /proc/self/exe to
            // resolve `$ORIGIN` (the `java` launcher finds libjli.so so).
            if let Some((dir, _)) = argv0.rsplit_once('/').filter(|(d, _)| !d.is_empty()) {
                env.push(format!("LD_ORIGIN_PATH={dir}"));
            }
        }
        env.extend(spec.env.iter().cloned());
        Ok(Plan {
            join: group.map(|g| g.join_fds()).unwrap_or_default(),
            netns: netns.map(Netns::fd),
            fds,
            rlimits,
            affinity: spec.cpu.map(|cpu| {
                let mut set = rustix::thread::CpuSet::new();
                set.set(cpu);
                set
            }),
            toolchain: spec.toolchain.map(cpath).transpose()?,
            toolchain_stage: cstr(TOOLCHAIN_STAGE)?,
            outside_uid,
            uid_map: format!("{INSIDE_UID} {outer_uid} 1\n").into_bytes(),
            gid_map: format!("{INSIDE_UID} {outer_gid} 1\n").into_bytes(),
            bot_tid: AtomicI32::new(-1),
            go: AtomicI32::new(0),
            slash: cstr("/")?,
            staging: cstr(STAGING)?,
            staging_opts: cstr(&format!(
                "size={},nr_inodes=8192,mode=0755",
                files_size + (1 << 20)
            ))?,
            tmpfs: cstr("tmpfs")?,
            proc_fs: cstr("proc")?,
            proc_opts: cstr("subset=pid")?,
            actions,
            put_old: s(".oldroot")?,
            old_inside: cstr("/.oldroot")?,
            work: cstr("/work")?,
            prog: cstr(argv0)?,
            exe,
            argv: CArgs::new(spec.argv).map_err(io_err("arguments"))?,
            env: CArgs::new(&env).map_err(io_err("environment"))?,
            filter: super::bot_seccomp::bot_filter(),
            stack: vec![0u8; CHILD_STACK],
            hold: spec.work == WorkFolder::Returned,
            held: AtomicI32::new(0),
            released: AtomicI32::new(0),
            failed_step: AtomicI32::new(0),
            failed_errno: AtomicI32::new(0),
            bot_pid: AtomicI32::new(0),
        })
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
    fn first_child(&self) -> io::Error {
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
        // Only the bot's pipes from here on, at 0, 1, 2.
        if let Err(e) = arrange_fds(&self.fds, self.exe.as_ref().map(|e| e.fd())) {
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
                    .and_then(|()| super::make_mounts_private(&self.slash))
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
                arrange_fds(&[0, 1, 2], self.exe.as_ref().map(|_| EXE_FD))
            );
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
                super::make_mounts_private(&self.slash)
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
            t!("install seccomp", super::bot_seccomp::install(self.filter));
            if self.exe.is_some() {
                libc::syscall(
                    libc::SYS_execveat,
                    EXE_FD,
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
fn open_work(pid: i32) -> io::Result<OwnedFd> {
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
    let mut digits = [0u8; 12];
    let mut n = pid.max(0) as u32;
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut len = 0;
    for part in [&b"/proc/"[..], &digits[k..], &b"/"[..], name] {
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

impl BotProcess {
    /// Starts a bot in the sandbox.
    pub fn spawn(spec: &BotSpec<'_>) -> Result<BotProcess, BotSpawnError> {
        let lim = spec.limits;
        let slot = if is_root() {
            Some(Slot::take().ok_or(BotSpawnError::NoSlot)?)
        } else {
            None
        };
        let group = BOT_GROUPS
            .lease(&GroupLimits {
                memory_bytes: Some(lim.memory_bytes),
                processes: Some(lim.processes),
            })
            .map_err(io_err("create the control group"))?;
        let (in_r, in_w) = pipe().map_err(io_err("pipe"))?;
        let (out_r, out_w) = pipe().map_err(io_err("pipe"))?;
        let (err_r, err_w) = pipe().map_err(io_err("pipe"))?;
        let netns = match spec.network {
            Network::Lent => POOL.take(),
            Network::Own => None,
        };
        let plan = Plan::new(
            spec,
            group.as_ref(),
            netns.as_ref(),
            [in_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()],
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
        for fd in [&in_w, &out_r, &err_r] {
            set_nonblocking(fd).map_err(io_err("pipe"))?;
        }
        let counter = group.as_ref().and_then(Group::tasks_counter);
        let rest = RestProbe::new(pid, counter.as_deref());
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
            rest,
        })
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

    /// How the bot's main process ended, if it has (reaps it).
    pub fn try_status(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
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

    /// CPU time of the whole tree so far (control group), or of the main
    /// process and its reaped children (fallback, 10 ms resolution).
    pub fn cpu_time(&self) -> Duration {
        if let Some(t) = self.group.as_ref().and_then(|g| g.cpu_time()) {
            return t;
        }
        proc_cpu_time(self.pid()).unwrap_or_default()
    }

    /// Whether the memory limit ended (part of) the bot.
    pub fn out_of_memory(&self) -> bool {
        self.group.as_ref().is_some_and(|g| g.oom_killed())
    }

    /// The bot's processes as the server sees them.
    pub fn members(&self) -> Vec<i32> {
        match &self.group {
            Some(g) => g.members(),
            None => vec![self.pid()],
        }
    }

    /// Whether the bot has come to rest ([`RestProbe`]): what it printed
    /// so far is in its output pipe.
    pub fn at_rest(&self) -> bool {
        self.rest.at_rest(|| self.members())
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

/// The `syscall` file of every thread of the processes `pids` (those that
/// can be opened).
fn task_syscall_files(pids: Vec<i32>) -> impl Iterator<Item = fs::File> {
    pids.into_iter()
        .filter_map(|pid| fs::read_dir(format!("/proc/{pid}/task")).ok())
        .flat_map(|tasks| tasks.flatten())
        .filter_map(|t| fs::File::open(t.path().join("syscall")).ok())
}

/// Looks whether a bot has come to rest: its main thread is blocked in a
/// system call that does not end by itself (not a sleep: `nanosleep`,
/// `clock_nanosleep`), and a thread of it waits for input (blocked in
/// `read` on its standard input, or in `poll` or `select`) or every thread
/// is blocked so. What it printed before is then in its output pipe, and
/// it prints nothing more until the referee writes to it. Cheap for the
/// usual bots: a bot of one process with one thread costs one read of its
/// `syscall` file while it still runs, and one of its group's task count
/// more once it rests (both files kept open); a runtime with threads of its
/// own (a JVM's compiler and collector run whenever they like) one read of
/// the `syscall` file of the thread it found reading last time. Anything
/// else is looked at in full.
#[derive(Debug)]
pub struct RestProbe {
    /// How many tasks the bot has.
    tasks: TaskCount,
    /// The main thread's `syscall` file.
    main: Option<fs::File>,
    /// The `syscall` file of the thread last seen waiting for input.
    reader: std::cell::RefCell<Option<fs::File>>,
}

impl RestProbe {
    /// A probe for the bot whose main process is `pid`, its task count in
    /// its control group's `tasks_counter` (`pids.current`), or, without
    /// one, its process's threads (a bot on a machine without the pids
    /// controller: its children are not seen).
    pub fn new(pid: i32, tasks_counter: Option<&Path>) -> RestProbe {
        let tasks = match tasks_counter.and_then(|p| fs::File::open(p).ok()) {
            Some(f) => TaskCount::Group(f),
            None => TaskCount::Threads(fs::File::open(format!("/proc/{pid}/stat")).ok()),
        };
        RestProbe::with_count(pid, tasks)
    }

    /// A probe for a process the caller knows to be one task (the
    /// benchmark's own unconfined bot).
    pub fn for_one_task(pid: i32) -> RestProbe {
        RestProbe::with_count(pid, TaskCount::One)
    }

    fn with_count(pid: i32, tasks: TaskCount) -> RestProbe {
        RestProbe {
            tasks,
            main: fs::File::open(format!("/proc/{pid}/syscall")).ok(),
            reader: std::cell::RefCell::new(None),
        }
    }

    /// Whether the bot has come to rest; `members` lists its processes
    /// for the full look.
    pub fn at_rest(&self, members: impl FnOnce() -> Vec<i32>) -> bool {
        let mut buf = [0u8; 1024];
        // The main thread first: while it computes (or sleeps) the bot is
        // not at rest, whatever its other threads do.
        if let Some(s) = self.main.as_ref().and_then(|f| read_at_start(f, &mut buf)) {
            if !blocked_for_good(s) {
                return false;
            }
            let one_task = match &self.tasks {
                TaskCount::Group(f) => {
                    read_at_start(f, &mut buf).and_then(|s| s.trim().parse::<u64>().ok())
                }
                TaskCount::Threads(f) => f
                    .as_ref()
                    .and_then(|f| read_at_start(f, &mut buf))
                    .and_then(stat_threads),
                TaskCount::One => Some(1),
            } == Some(1);
            if one_task {
                return true;
            }
        }
        if let Some(f) = self.reader.borrow().as_ref() {
            match read_at_start(f, &mut buf) {
                Some(s) if waits_for_input(s) => return true,
                // On its way back to its input (or still computing).
                Some(s) if s.starts_with("running") || s.starts_with("-1") => return false,
                _ => {}
            }
        }
        let mut all_waiting = true;
        for f in task_syscall_files(members()) {
            let Some(s) = read_at_start(&f, &mut buf) else {
                continue;
            };
            if waits_for_input(s) {
                *self.reader.borrow_mut() = Some(f);
                return true;
            }
            if !blocked_for_good(s) {
                all_waiting = false;
            }
        }
        all_waiting
    }
}

/// Where a bot's tasks are counted.
#[derive(Debug)]
enum TaskCount {
    /// Its control group's `pids.current`: every thread of every process.
    Group(fs::File),
    /// Its main process's `stat` (the number of its threads).
    Threads(Option<fs::File>),
    /// Known to be one task.
    One,
}

/// The threads of a process, from its `stat` line.
fn stat_threads(stat: &str) -> Option<u64> {
    stat[stat.rfind(')')? + 2..]
        .split_ascii_whitespace()
        .nth(17)?
        .parse()
        .ok()
}

/// The text of a small `/proc` or control-group file kept open, read anew.
fn read_at_start<'a>(f: &fs::File, buf: &'a mut [u8]) -> Option<&'a str> {
    use std::os::unix::fs::FileExt;
    let n = f.read_at(buf, 0).ok()?;
    std::str::from_utf8(&buf[..n]).ok()
}

/// From a task's `syscall` file: blocked in a system call that does not
/// end by itself. Not "running", not "-1 …" (in user space: computing, or
/// stopped there), not a sleep.
fn blocked_for_good(syscall: &str) -> bool {
    let nr = syscall
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<i64>().ok());
    match nr {
        None | Some(-1) => false,
        Some(n) => n != libc::SYS_nanosleep && n != libc::SYS_clock_nanosleep,
    }
}

/// A task waiting for input: [`reads_stdin`], or blocked in `poll`,
/// `ppoll`, `select` or `pselect6` (whose descriptors cannot be named
/// here: a bot has no other input to wait for).
fn waits_for_input(syscall: &str) -> bool {
    let nr = syscall
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<i64>().ok());
    reads_stdin(syscall)
        || matches!(nr, Some(n) if n == libc::SYS_poll
            || n == libc::SYS_ppoll
            || n == libc::SYS_select
            || n == libc::SYS_pselect6)
}

/// `/proc/PID/task/TID/syscall` of a task blocked in `read(0, …)`,
/// `readv(0, …)` or `pread64(0, …)`.
fn reads_stdin(syscall: &str) -> bool {
    let mut it = syscall.split_whitespace();
    let nr = it.next().and_then(|n| n.parse::<i64>().ok());
    let fd = it.next();
    let reading = matches!(
        nr,
        Some(n) if n == libc::SYS_read || n == libc::SYS_readv || n == libc::SYS_pread64
    );
    reading && fd == Some("0x0")
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
mod tests {
    use super::*;

    #[test]
    fn a_task_reading_stdin_is_recognised() {
        assert!(reads_stdin(
            "0 0x0 0x55d0c8a4e2a0 0x1000 0x0 0x0 0x0 0x7ffd 0x7f"
        ));
        assert!(!reads_stdin(
            "0 0x3 0x55d0c8a4e2a0 0x1000 0x0 0x0 0x0 0x7ffd 0x7f"
        ));
        assert!(!reads_stdin("230 0x1 0x0 0x7ffd 0x0 0x0 0x0 0x7ffd 0x7f"));
        assert!(!reads_stdin("running"));
    }

    #[test]
    fn waiting_for_input_and_resting_are_told_from_sleeping_and_computing() {
        let read0 = "0 0x0 0x55d0c8a4e2a0 0x1000 0x0 0x0 0x0 0x7ffd 0x7f";
        let poll = "7 0x7ffd 0x1 0xffffffff 0x0 0x0 0x0 0x7ffd 0x7f";
        let futex = "202 0x7f 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f";
        let sleep = "230 0x1 0x0 0x7ffd 0x0 0x0 0x0 0x7ffd 0x7f";
        assert!(waits_for_input(read0) && waits_for_input(poll));
        assert!(!waits_for_input(futex) && !waits_for_input(sleep));
        // At rest: blocked in a call that does not end by itself.
        assert!(blocked_for_good(read0) && blocked_for_good(futex));
        for busy in [
            sleep,
            "35 0x7ffd 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f",
            "running",
            "-1 0x7ffd 0x4011",
        ] {
            assert!(!blocked_for_good(busy), "{busy}");
        }
    }

    #[test]
    fn a_process_is_at_rest_in_read_and_not_while_it_sleeps_or_computes() {
        use std::process::{Command, Stdio};
        let at_rest_within = |script: &str, wait: Duration| -> bool {
            let mut child = Command::new("sh")
                .args(["-c", script])
                .stdin(Stdio::piped())
                .spawn()
                .unwrap();
            let probe = RestProbe::new(child.id() as i32, None);
            std::thread::sleep(wait);
            let rest = probe.at_rest(|| vec![child.id() as i32]);
            let _ = child.kill();
            let _ = child.wait();
            rest
        };
        let settle = Duration::from_millis(300);
        assert!(
            at_rest_within("read x", settle),
            "blocked reading its input"
        );
        assert!(
            !at_rest_within("exec sleep 5", settle),
            "asleep: it wakes by itself"
        );
        assert!(!at_rest_within("while :; do :; done", settle), "computing");
    }

    #[test]
    fn a_bot_may_not_use_real_time_priorities_whatever_the_servers_limits() {
        for own_uid in [false, true] {
            for memory in [false, true] {
                let r = bot_rlimits(&BotLimits::default(), own_uid, memory);
                assert!(r.contains(&(libc::RLIMIT_RTPRIO, 0)), "{r:?}");
                assert!(r.contains(&(libc::RLIMIT_NICE, 0)), "{r:?}");
            }
        }
    }

    #[test]
    fn program_paths_stay_inside_the_bot_folder() {
        for bad in ["", "/etc/x", "../x", "a/../b", "a//b", "./a", "a\0b"] {
            assert!(check_relative(bad).is_err(), "{bad:?}");
        }
        for good in ["bot", "Main.class", "pkg/Main.class"] {
            assert!(check_relative(good).is_ok(), "{good:?}");
        }
    }
}
