//! The module spill: the compiled code of every module this process
//! compiled, kept as files in a private folder, so that a module the
//! in-memory cache ([`super::modules`]) dropped is loaded again in a
//! fraction of a millisecond instead of compiled again by Cranelift (tens
//! of milliseconds). A field larger than the cache loads its groups'
//! programs one group after another in every round; without the spill
//! every program would be compiled again in every round.
//!
//! Only bytes this process wrote are ever turned back into machine code:
//! - the folder is made by this process (mode 0700, its name random,
//!   `knobeln-modules-<pid>-…` under `$TMPDIR`, else `/var/tmp`), its
//!   owner and mode checked once made, and removed when the process exits
//!   (one a process left, killed, is removed by the next one to start:
//!   [`remove_stale`], told by the lock a live spill holds on its folder);
//! - a file is named by the module's SHA-256 and the engine's
//!   configuration, written once with `O_EXCL` (mode 0600) and, like
//!   every file here, opened and removed relative to the folder held open
//!   (a folder renamed away and another put at its path is never read; no
//!   symbolic link followed, no FIFO waited for), and its length
//!   and SHA-256 are kept in this process's memory: a file is read whole
//!   into memory, and only bytes of that length and digest are
//!   deserialized. A file someone else changed (even a valid compiled
//!   module of another program) is removed and the module compiled again;
//! - nothing here reads a compiled module from anywhere else (NATS, the
//!   database, another process's folder).
//!
//! What this deliberately does not do: it never decides whether a module
//! is playable (the caller checks every module with [`super::check`]
//! before it is compiled or taken from here), it keeps no order of use
//! (when the folder would hold more than [`super::engine::SPILL_BYTES`],
//! the modules kept longest are removed first: a long-lived server keeps
//! its latest modules, whatever came before; each file counted in the
//! filesystem's allocation units, its length rounded up to the folder's
//! block: what the disk holds, not the bytes written), and any failure to write or read (folder full, unwritable, removed) only
//! means compiling as without the spill.

use std::collections::{HashMap, VecDeque};
use std::ffi::{CStr, CString};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};
use wasmtime::{Engine, Module};

/// The prefix of a spill folder's name (then the process id and a random
/// tail).
const PREFIX: &str = "knobeln-modules-";

/// Why a module was not kept in the spill (the caller compiles again at
/// the next miss; only tests branch on it).
#[derive(Debug, thiserror::Error)]
pub(super) enum NotKept {
    #[error("the module is larger than the spill's bound of {0} bytes")]
    Full(u64),
    #[error("the module could not be serialized: {0}")]
    Serialize(String),
    #[error("the spill's file could not be written: {0}")]
    Io(#[from] std::io::Error),
}

/// A file this process wrote: its length and SHA-256.
struct Written {
    len: u64,
    /// What it is charged: its length rounded up to the folder's block.
    charged: u64,
    digest: [u8; 32],
}

struct Files {
    by_module: HashMap<String, Written>,
    /// The modules in `by_module`, kept longest first.
    order: VecDeque<String>,
    /// The bytes the files take on disk (each rounded up to the block).
    bytes: u64,
}

/// A private folder of compiled modules (see the module documentation).
pub(super) struct Spill {
    dir: PathBuf,
    max_bytes: u64,
    /// The filesystem's allocation unit under the folder (`f_frsize`, at
    /// least 4 KiB): a file takes whole blocks, so a file of `len` bytes is
    /// charged `len` rounded up to it.
    block: u64,
    /// The engine's configuration, as a file name's part.
    engine_tag: String,
    files: Mutex<Files>,
    /// The folder, open with an exclusive `flock` held for the process's
    /// life (the kernel drops it when the process ends, `kill -9` too):
    /// [`remove_stale`] never removes a folder whose lock is held. Every
    /// file is opened and removed relative to it, so a folder renamed away
    /// and another put at its path (where the parent lets others rename)
    /// is never read.
    held: std::fs::File,
}

/// `dir` opened as a folder, not through a symbolic link, and locked
/// exclusively, or `None` where another open file holds its lock.
fn lock(dir: &Path) -> std::io::Result<Option<std::fs::File>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)?;
    // SAFETY: flock on a file descriptor this function owns, open.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        Ok(Some(f))
    } else {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(e)
        }
    }
}

impl Spill {
    /// Makes a new private folder under `parent` for modules of `engine`,
    /// holding at most `max_bytes` of files. Fails where the folder cannot
    /// be made, or is not a directory of this user's with mode 0700 once
    /// made.
    pub(super) fn create(parent: &Path, max_bytes: u64, engine: &Engine) -> std::io::Result<Spill> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)?
            .keep();
        let held = match lock(&dir) {
            Ok(Some(f)) => f,
            Ok(None) => {
                return Err(std::io::Error::other(format!(
                    "{} is locked by another process",
                    dir.display()
                )))
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let meta = held.metadata()?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o777 != 0o700 {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(std::io::Error::other(format!(
                "{} is not a private folder of this user's",
                dir.display()
            )));
        }
        // SAFETY: fstatvfs on a descriptor this function holds open,
        // into a zeroed struct it owns.
        let block = unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            if libc::fstatvfs(held.as_raw_fd(), &mut st) == 0 {
                st.f_frsize as u64
            } else {
                0
            }
        }
        .max(4096);
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        Ok(Spill {
            dir,
            max_bytes,
            block,
            engine_tag: format!("{:016x}", h.finish()),
            files: Mutex::new(Files {
                by_module: HashMap::new(),
                order: VecDeque::new(),
                bytes: 0,
            }),
            held,
        })
    }

    /// The folder.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The bytes the files kept take on disk, each rounded up to the block.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> u64 {
        self.files.lock().expect("spill").bytes
    }

    /// The file name of the module whose SHA-256 is `sha256`: `None` unless
    /// `sha256` is 64 lower-case hex digits (a name in the folder, nothing
    /// that leads out of it).
    fn name(&self, sha256: &str) -> Option<CString> {
        let hex = sha256.len() == 64
            && sha256
                .bytes()
                .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
        hex.then(|| {
            CString::new(format!("{sha256}-{}.cwasm", self.engine_tag)).expect("hex, no NUL")
        })
    }

    /// `name` in the folder this spill holds open, with `flags`, never
    /// through a symbolic link.
    fn open_in(&self, name: &CStr, flags: libc::c_int) -> std::io::Result<std::fs::File> {
        // SAFETY: openat on the folder's open descriptor with a
        // NUL-terminated name; the descriptor it returns is owned by the
        // `File` alone.
        let fd = unsafe {
            libc::openat(
                self.held.as_raw_fd(),
                name.as_ptr(),
                flags | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                0o600 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new descriptor, open, owned by nothing else.
        Ok(unsafe { std::fs::File::from_raw_fd(fd) })
    }

    /// Removes `name` from the folder this spill holds open, if it is there.
    fn remove_in(&self, name: &CStr) {
        // SAFETY: unlinkat on the folder's open descriptor with a
        // NUL-terminated name.
        unsafe { libc::unlinkat(self.held.as_raw_fd(), name.as_ptr(), 0) };
    }

    /// Keeps `module` (compiled from the module whose SHA-256 is `sha256`)
    /// unless the spill holds it already, removing the modules kept longest
    /// where the bound needs room.
    pub(super) fn put(&self, sha256: &str, module: &Module) -> Result<(), NotKept> {
        let Some(name) = self.name(sha256) else {
            return Err(NotKept::Io(std::io::Error::other("not a SHA-256 in hex")));
        };
        if self
            .files
            .lock()
            .expect("spill")
            .by_module
            .contains_key(sha256)
        {
            return Ok(());
        }
        let bytes = module
            .serialize()
            .map_err(|e| NotKept::Serialize(format!("{e:#}")))?;
        let len = bytes.len() as u64;
        let charged = len.div_ceil(self.block) * self.block;
        if charged > self.max_bytes {
            return Err(NotKept::Full(self.max_bytes));
        }
        let mut evicted = Vec::new();
        {
            // Charged before writing, so that writers at once stay within the bound.
            let mut files = self.files.lock().expect("spill");
            while files.bytes + charged > self.max_bytes {
                // Only modules being written now are charged and not in
                // `order`: with none left to remove, this one is not kept.
                let Some(oldest) = files.order.pop_front() else {
                    return Err(NotKept::Full(self.max_bytes));
                };
                if let Some(w) = files.by_module.remove(&oldest) {
                    files.bytes -= w.charged;
                }
                evicted.extend(self.name(&oldest));
            }
            files.bytes += charged;
        }
        for old in evicted {
            self.remove_in(&old);
        }
        let written = (|| -> std::io::Result<()> {
            // A file of this name that this process did not record (left by
            // a failed write, or put there by someone else) is replaced.
            self.remove_in(&name);
            let mut f = self.open_in(&name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL)?;
            f.write_all(&bytes)
        })();
        let mut files = self.files.lock().expect("spill");
        match written {
            Ok(()) => {
                let digest = Sha256::digest(&bytes).into();
                if files
                    .by_module
                    .insert(
                        sha256.to_string(),
                        Written {
                            len,
                            charged,
                            digest,
                        },
                    )
                    .is_some()
                {
                    // Another thread kept the same module meanwhile.
                    files.bytes -= charged;
                } else {
                    files.order.push_back(sha256.to_string());
                }
                Ok(())
            }
            Err(e) => {
                files.bytes -= charged;
                drop(files);
                self.remove_in(&name);
                Err(NotKept::Io(e))
            }
        }
    }

    /// The module whose SHA-256 is `sha256`, if this process kept it and
    /// its file still holds exactly the bytes written. A file that does not
    /// is removed and forgotten.
    pub(super) fn get(&self, engine: &Engine, sha256: &str) -> Option<Module> {
        let name = self.name(sha256)?;
        let (len, digest) = {
            let files = self.files.lock().expect("spill");
            let w = files.by_module.get(sha256)?;
            (w.len, w.digest)
        };
        // Never waits (a FIFO put in its place) and never reads more than
        // the file this process wrote (a link to an endless device).
        let bytes = self
            .open_in(&name, libc::O_RDONLY | libc::O_NONBLOCK)
            .ok()
            .and_then(|f| {
                let meta = f.metadata().ok()?;
                if !meta.is_file() || meta.len() != len {
                    return None;
                }
                let mut b = Vec::with_capacity(len as usize);
                f.take(len + 1).read_to_end(&mut b).ok()?;
                Some(b)
            });
        let intact = bytes.as_ref().is_some_and(|b| {
            b.len() as u64 == len && <[u8; 32]>::from(Sha256::digest(b)) == digest
        });
        let module = match bytes {
            // SAFETY: `Module::deserialize` trusts its bytes to be what
            // `Module::serialize` of this engine wrote (it maps them as
            // machine code). These bytes are in this process's memory, read
            // whole from a file this process wrote with `O_EXCL` into its
            // own folder (mode 0700), and they have the length and SHA-256
            // this process recorded when it serialized this module with this
            // engine: they are exactly those bytes, whoever could write the
            // file since. Nothing else reaches this call.
            Some(b) if intact => unsafe { Module::deserialize(engine, &b) }.ok(),
            _ => None,
        };
        if module.is_none() {
            tracing::warn!(
                "the compiled module {} in {} was changed or removed: compiled again",
                sha256,
                self.dir.display()
            );
            self.forget(sha256, &name);
        }
        module
    }

    fn forget(&self, sha256: &str, name: &CStr) {
        let mut files = self.files.lock().expect("spill");
        if let Some(w) = files.by_module.remove(sha256) {
            files.bytes -= w.charged;
            files.order.retain(|m| m != sha256);
        }
        drop(files);
        self.remove_in(name);
    }
}

/// Whether process `pid` has ended but is not reaped yet (a zombie: it
/// still answers `kill(pid, 0)`), by its state in `/proc/<pid>/stat`
/// (the first field after the command's closing parenthesis).
fn zombie(pid: libc::pid_t) -> bool {
    std::fs::read(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.iter()
            .rposition(|&b| b == b')')
            .and_then(|end| stat.get(end + 2))
            == Some(&b'Z')
    })
}

/// Removes spill folders under `parent` that this user's processes left
/// when they ended without exiting (killed): a folder whose lock no live
/// spill holds, and whose process is gone (or a zombie) or is this one (which has made
/// no spill under `parent` yet: a folder under its own pid is a last
/// life's, killed, whose pid this one got again: PID 1 of a restarted
/// container). A folder a live spill holds (of this machine's processes
/// or of another pid namespace's sharing `parent`), of another user's,
/// or not a folder, is left alone; so is one of a live process that may
/// be making it now (not locked yet).
pub(super) fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me || pid <= 0 {
            continue;
        }
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = pid as u32 == std::process::id()
            || (unsafe { libc::kill(pid, 0) } != 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH))
            || zombie(pid);
        if !gone {
            continue;
        }
        // Held while it is removed: a spill holding it is live.
        if let Ok(Some(_unheld)) = lock(&e.path()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
