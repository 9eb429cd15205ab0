//! What a caller asks for when it starts a bot: the program's files
//! ([`BotFile`], with its sealed copy), the limits, the [`BotSpec`] and
//! its choices (network, `/work`, `/proc`), the uid the bot has inside,
//! and why a spawn fails ([`BotSpawnError`]).
//!
//! Not here: preparing or running a spawn (`plan.rs`, `children.rs`) and
//! the running bot ([`super::BotProcess`]).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::sandbox::exe::Executable;
use crate::sandbox::uid::SLOTS;

/// The uid a bot has inside its namespace.
pub const INSIDE_UID: u32 = 1000;

/// One file of a bot's program, placed in `/bot`; or, for the native (ELF)
/// program the run command starts (`/bot/PATH` as `argv[0]`), executed
/// from a sealed in-memory copy ([`Executable`]) made at the
/// first spawn and shared by every later match of this `BotFile`: no copy
/// per bot (a Rust program's 350 kB cost ~0.2 ms per bot to write and free).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BotFile {
    /// Relative path (checked: no `..`, no absolute path, no NUL).
    pub path: String,
    /// Private to the bot sandbox, so that the sealed copy always holds
    /// exactly these bytes.
    pub(super) bytes: Vec<u8>,
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
    pub(super) fn sealed(&self) -> Option<Arc<Executable>> {
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
    /// One the server made, lent for the match
    /// ([`crate::sandbox::netns`]); a fresh one where the server cannot
    /// make them.
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
    /// empty ones too, [`crate::sandbox::folder::FolderImage::dirs`]).
    pub work_dirs: &'a [String],
    /// Whether the server keeps `/work` after the bot is gone.
    pub work: WorkFolder,
    /// Whether the bot gets a `/proc` (of its own PID namespace).
    pub proc: ProcFs,
    /// A host folder shown read-only at `/toolchain` (a compiler that
    /// lives outside `/usr`, at a neutral path).
    pub toolchain: Option<&'a Path>,
    /// The runtime image ([`crate::sandbox::image`]) the bot's `/usr`,
    /// top-level folders, read-only paths and devices come from; `None`:
    /// the host's.
    pub image: Option<&'a Path>,
    /// What the first process of the bot's PID namespace is.
    pub first: FirstProcess,
    /// Whether the program may start processes of its own.
    pub processes: NewProcesses,
}

/// Whether a bot's program may start processes (threads it may always
/// start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NewProcesses {
    /// Only where a control group counts the CPU of the bot's whole tree
    /// (every match's bot): without one, `fork`, `vfork` and `clone`
    /// without `CLONE_THREAD` fail with `EPERM` from the program's first
    /// instruction on ([`crate::sandbox::bot_seccomp::one_process_filter`]),
    /// so that the bot is one process whose CPU the kernel counts in one
    /// place, all of it: a child that computes and ends unreaped (its
    /// parent ignores `SIGCHLD`) would add its CPU to no one's.
    #[default]
    WhereCounted,
    /// Always (a build: the compiler runs its assembler and linker; the
    /// init reaps and counts every process of it when it ends).
    Always,
}

/// What the first process (PID 1) of a bot's PID namespace is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FirstProcess {
    /// The program itself: no bot of the server's starts so since issue 38
    /// (kept for the sandbox's own tests of a spawn's failures).
    #[default]
    Program,
    /// The compile jail's init ([`crate::sandbox::jail`]), which starts
    /// the program as PID 2 (a build, and a match's bot; a sealed native
    /// program is handed to it as its descriptor 5): the kernel gives the
    /// first process of a PID namespace no signal of default action, so a
    /// compiler or a bot started as it would meet its file size limit
    /// only as `EFBIG`. The
    /// init reports how the program ended on a pipe only the server reads
    /// ([`super::BotProcess::init_report`]), and ends the run when the
    /// program ends or the server asks ([`super::BotProcess::end_run`]):
    /// it kills and reaps every process of the namespace, so that the
    /// CPU it reports is all of theirs. It takes one of the bot's
    /// processes beyond [`BotLimits::processes`].
    Init,
}

/// What becomes of a bot's `/work` folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkFolder {
    /// Gone with the bot (a match).
    #[default]
    Private,
    /// Opened by the server before the program starts and kept
    /// ([`super::BotProcess::take_work`]): a build's output, or a working
    /// folder kept for the bot's next match ([`crate::sandbox::folder`]).
    /// The folder is still the bot's own tmpfs, so nothing of the host
    /// shows in it.
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
    #[error("bot sandbox: more than {SLOTS} bots and compile jails at once")]
    NoSlot,
}

pub(super) fn io_err(what: &str) -> impl Fn(io::Error) -> BotSpawnError + '_ {
    move |source| BotSpawnError::Io {
        what: what.to_string(),
        source,
    }
}
