//! The module spill: the compiled code of the modules the in-memory cache
//! ([`super::modules`]) dropped, kept as files in a private folder, so
//! that such a module is loaded again in a fraction of a millisecond
//! instead of compiled again by Cranelift (tens of milliseconds). A field
//! larger than the cache loads its groups' programs one group after
//! another in every round; without the spill every program would be
//! compiled again in every round. A module is written when the cache drops
//! it, not when it is compiled: a field that fits in the cache, and the
//! compile service's trial games, write nothing; a module dropped again
//! that is still here is not written again.
//!
//! Only bytes this process wrote are ever turned back into machine code:
//! - the folder is made by this process (mode 0700, its name random,
//!   `knobeln-modules-<pid>-…` under `$TMPDIR`, else `/var/tmp`), its
//!   owner and mode checked once made, and removed when the process exits
//!   (one a process left, killed, is removed by the next one to start:
//!   [`remove_stale`], told by the lock a live spill holds on its folder).
//!   It is made under a name [`remove_stale`] never considers
//!   (`.knobeln-making-…`), opened and locked, and only then renamed to
//!   its final name: a folder under the final name is locked from the
//!   moment it has that name, so no cleanup, of this process or another
//!   sharing the parent, removes one being made;
//! - a file is named by the module's SHA-256 and the engine's
//!   configuration, written once with `O_EXCL` (mode 0600) and, like
//!   every file here, opened and removed relative to the folder held open
//!   (a folder renamed away and another put at its path is never read; no
//!   symbolic link followed, no FIFO waited for), and its length
//!   and SHA-256 are kept in this process's memory (with what the
//!   structural check learnt of its `.wasm`, [`Spill::put_checked`]): a file is copied
//!   once, by the kernel (`sendfile`), into a memory file, which is then
//!   sealed against every change, and only then are its length and
//!   SHA-256 checked, on the sealed file ([`Spill::get`]); the engine maps
//!   that same file (its code and its memory's initial image: nothing
//!   copied into fresh memory and made read-only afterwards, whose written
//!   pages' TLB flushes interrupt the game threads; the engine still makes
//!   the code executable, an `mprotect` of the mapped file), so the bytes checked are the bytes that run, whatever
//!   anyone wrote before the seal (to the spill's file during the copy,
//!   or to the memory file through `/proc/<pid>/fd`). A file someone else
//!   changed (even a valid compiled module of another program) is removed
//!   and the module compiled again;
//! - nothing here reads a compiled module from anywhere else (NATS, the
//!   database, another process's folder).
//!
//! What this deliberately does not do: it never decides whether a module
//! is playable (the caller checks every module with [`super::check`]
//! before it is compiled; one taken from here plays with the shape the
//! caller recorded with it when it was put), it keeps no order of use
//! (when the folder would hold more than [`super::engine::SPILL_BYTES`]
//! or [`super::engine::SPILL_FILES`], the modules kept longest are removed
//! first: a long-lived server keeps its latest modules, whatever came
//! before), and any failure to write or read (folder full, unwritable,
//! removed) only means compiling as without the spill.
//!
//! The bound is counted in the filesystem's units, as the kernel and the
//! disk's quota charge it: a file is charged its length rounded up to the
//! folder's block size (`statvfs`'s `f_frsize`, read once when the folder
//! is made, so the charge is known before the file is written), and the
//! files are counted (each takes an inode). The folder's own entries are
//! not charged (about a hundred bytes a file).

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::{CStr, CString};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};
use wasmtime::{Engine, Module};

use super::check::Shape;

/// The prefix of a spill folder's name (then the process id and a random
/// tail).
const PREFIX: &str = "knobeln-modules-";

/// Why a module was not kept in the spill (the caller compiles again at
/// the next miss; only tests branch on it).
#[derive(Debug, thiserror::Error)]
pub(super) enum NotKept {
    #[error("the module is larger than the spill's bound of {0} bytes (in blocks)")]
    Full(u64),
    #[error("the module could not be serialized: {0}")]
    Serialize(String),
    #[error("the spill's file could not be written: {0}")]
    Io(#[from] std::io::Error),
}

/// What [`Spill::put`] did with a module it kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kept {
    /// Serialized and written now.
    Written,
    /// Its file was there already (or being written by another thread):
    /// nothing serialized, nothing written.
    Already,
}

/// A file this process wrote: its length, what it is charged (its length
/// in whole blocks), its SHA-256, and what the structural check learnt of
/// the module's `.wasm`.
struct Written {
    len: u64,
    charge: u64,
    digest: [u8; 32],
    /// What the structural check learnt of the `.wasm` the module was
    /// compiled from, where the module was put with it
    /// ([`Spill::put_checked`]): kept in this process's memory, never read
    /// from the file.
    shape: Option<Shape>,
}

struct Files {
    by_module: HashMap<String, Written>,
    /// The modules in `by_module`, kept longest first.
    order: VecDeque<String>,
    /// Modules being written now (charged, not in `by_module` yet).
    writing: HashSet<String>,
    /// The charge of the files kept and being written, in bytes of whole
    /// blocks.
    charged: u64,
    /// The files kept and being written.
    count: usize,
    /// Files written since the spill was made.
    writes: u64,
}

/// What a file of `len` bytes is charged on a filesystem of `block`-byte
/// blocks: its length rounded up to whole blocks (a byte over a block is
/// two blocks).
pub(super) fn charge(len: u64, block: u64) -> u64 {
    let block = block.max(1);
    len.div_ceil(block).saturating_mul(block)
}

/// A private folder of compiled modules (see the module documentation).
pub(super) struct Spill {
    dir: PathBuf,
    /// The most bytes of whole blocks the files are charged.
    max_bytes: u64,
    /// The most files.
    max_files: usize,
    /// The folder's filesystem's block size (`f_frsize`).
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

/// A step of making the spill's folder ([`Spill::create_observed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Making {
    /// Made, under a name no cleanup considers, not locked yet.
    Made,
    /// Open and locked, still under that name.
    Locked,
    /// Renamed to its final name, locked.
    Named,
}

/// The prefix of a folder's name while it is made (then the process id
/// and the random tail it keeps): [`remove_stale`] never considers it.
const MAKING: &str = ".knobeln-making-";

/// The block size of the filesystem holding the open folder `dir`
/// (`f_frsize`, else `f_bsize`, else 4096).
fn block_size(dir: &std::fs::File) -> u64 {
    // SAFETY: a zeroed statvfs is a valid value of a plain C struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatvfs on an open descriptor, writing the struct it is given.
    if unsafe { libc::fstatvfs(dir.as_raw_fd(), &mut st) } != 0 {
        return 4096;
    }
    [st.f_frsize as u64, st.f_bsize as u64, 4096]
        .into_iter()
        .find(|&b| b > 0)
        .unwrap_or(4096)
}

impl Spill {
    /// Makes a new private folder under `parent` for modules of `engine`,
    /// holding files charged at most `max_bytes` (in whole blocks) and at
    /// most `max_files` files. Fails where the folder cannot be made, or is
    /// not a directory of this user's with mode 0700 once made.
    pub(super) fn create(
        parent: &Path,
        max_bytes: u64,
        max_files: usize,
        engine: &Engine,
    ) -> std::io::Result<Spill> {
        Self::create_observed(parent, max_bytes, max_files, engine, &mut |_, _| {})
    }

    /// [`Spill::create`], telling `seen` each step of making the folder
    /// and the folder's path then (a test runs a cleanup at each).
    pub(super) fn create_observed(
        parent: &Path,
        max_bytes: u64,
        max_files: usize,
        engine: &Engine,
        seen: &mut dyn FnMut(Making, &Path),
    ) -> std::io::Result<Spill> {
        let making = tempfile::Builder::new()
            .prefix(&format!("{MAKING}{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)?
            .keep();
        seen(Making::Made, &making);
        let held = match lock(&making) {
            Ok(Some(f)) => f,
            Ok(None) => {
                return Err(std::io::Error::other(format!(
                    "{} is locked by another process",
                    making.display()
                )))
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&making);
                return Err(e);
            }
        };
        seen(Making::Locked, &making);
        let meta = held.metadata()?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o777 != 0o700 {
            let _ = std::fs::remove_dir_all(&making);
            return Err(std::io::Error::other(format!(
                "{} is not a private folder of this user's",
                making.display()
            )));
        }
        // The final name keeps the pid and the random tail; the lock, held
        // on the open folder, goes with it. Never over another folder.
        let tail = making
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(MAKING))
            .expect("the name made above")
            .to_string();
        let dir = parent.join(format!("{PREFIX}{tail}"));
        let from =
            CString::new(making.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)?;
        let to = CString::new(dir.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)?;
        // SAFETY: renameat2 with two NUL-terminated paths.
        if unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        } != 0
        {
            let e = std::io::Error::last_os_error();
            let _ = std::fs::remove_dir_all(&making);
            return Err(e);
        }
        seen(Making::Named, &dir);
        let block = block_size(&held);
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        Ok(Spill {
            dir,
            max_bytes,
            max_files,
            block,
            engine_tag: format!("{:016x}", h.finish()),
            files: Mutex::new(Files {
                by_module: HashMap::new(),
                order: VecDeque::new(),
                writing: HashSet::new(),
                charged: 0,
                count: 0,
                writes: 0,
            }),
            held,
        })
    }

    /// The folder.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// What the files kept are charged, in bytes of whole blocks.
    #[cfg(test)]
    pub(super) fn charged(&self) -> u64 {
        self.files.lock().expect("spill").charged
    }

    /// The files kept.
    #[cfg(test)]
    pub(super) fn files(&self) -> usize {
        self.files.lock().expect("spill").count
    }

    /// The files written since the spill was made.
    #[cfg(test)]
    pub(super) fn writes(&self) -> u64 {
        self.files.lock().expect("spill").writes
    }

    /// The folder's filesystem's block size, by which files are charged.
    #[cfg(test)]
    pub(super) fn block(&self) -> u64 {
        self.block
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
    /// unless the spill holds it already (then nothing is serialized or
    /// written), removing the modules kept longest where the bounds need
    /// room: its charge in whole blocks, and one file.
    pub(super) fn put(&self, sha256: &str, module: &Module) -> Result<Kept, NotKept> {
        self.put_with(sha256, module, None)
    }

    /// [`Spill::put`] of a module compiled from a `.wasm` that passed the
    /// structural check with `shape`: a load of it gives the shape back
    /// ([`Spill::get`]), so the `.wasm` is not checked again.
    pub(super) fn put_checked(
        &self,
        sha256: &str,
        module: &Module,
        shape: Shape,
    ) -> Result<Kept, NotKept> {
        self.put_with(sha256, module, Some(shape))
    }

    fn put_with(
        &self,
        sha256: &str,
        module: &Module,
        shape: Option<Shape>,
    ) -> Result<Kept, NotKept> {
        let Some(name) = self.name(sha256) else {
            return Err(NotKept::Io(std::io::Error::other("not a SHA-256 in hex")));
        };
        let held =
            |files: &Files| files.by_module.contains_key(sha256) || files.writing.contains(sha256);
        {
            let mut files = self.files.lock().expect("spill");
            if let Some(w) = files.by_module.get_mut(sha256) {
                // Kept without a shape before (a plain `put`): the shape now.
                w.shape = w.shape.or(shape);
            }
            if held(&files) {
                return Ok(Kept::Already);
            }
        }
        let bytes = module
            .serialize()
            .map_err(|e| NotKept::Serialize(format!("{e:#}")))?;
        let len = bytes.len() as u64;
        let charge = charge(len, self.block);
        if charge > self.max_bytes || self.max_files == 0 {
            return Err(NotKept::Full(self.max_bytes));
        }
        let fits = {
            // Charged before writing, so that writers at once stay within the bounds.
            let mut files = self.files.lock().expect("spill");
            if held(&files) {
                // Another thread kept it meanwhile.
                return Ok(Kept::Already);
            }
            loop {
                if files.charged + charge <= self.max_bytes && files.count < self.max_files {
                    files.charged += charge;
                    files.count += 1;
                    files.writing.insert(sha256.to_string());
                    break true;
                }
                // Only modules being written now are charged and not in
                // `order`: with none left to remove, this one is not kept.
                let Some(oldest) = files.order.pop_front() else {
                    break false;
                };
                if let Some(w) = files.by_module.remove(&oldest) {
                    files.charged -= w.charge;
                    files.count -= 1;
                }
                // Removed while the lock is held: once it is released,
                // another thread may keep that module again under the same
                // name, and must not lose its new file to this removal.
                if let Some(old) = self.name(&oldest) {
                    self.remove_in(&old);
                }
            }
        };
        if !fits {
            return Err(NotKept::Full(self.max_bytes));
        }
        let written = (|| -> std::io::Result<()> {
            // A file of this name that this process did not record (left by
            // a failed write, or put there by someone else) is replaced.
            self.remove_in(&name);
            let mut f = self.open_in(&name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL)?;
            f.write_all(&bytes)
        })();
        let mut files = self.files.lock().expect("spill");
        files.writing.remove(sha256);
        match written {
            Ok(()) => {
                let digest = Sha256::digest(&bytes).into();
                files.by_module.insert(
                    sha256.to_string(),
                    Written {
                        len,
                        charge,
                        digest,
                        shape,
                    },
                );
                files.order.push_back(sha256.to_string());
                files.writes += 1;
                Ok(Kept::Written)
            }
            Err(e) => {
                files.charged -= charge;
                files.count -= 1;
                // Under the lock, as every removal of a kept name.
                self.remove_in(&name);
                Err(NotKept::Io(e))
            }
        }
    }

    /// The module whose SHA-256 is `sha256`, if this process kept it and
    /// its file still holds exactly the bytes written, with the shape it
    /// was put with ([`Spill::put_checked`]). A file that does not is
    /// removed and forgotten.
    pub(super) fn get(&self, engine: &Engine, sha256: &str) -> Option<(Module, Option<Shape>)> {
        self.get_observed(engine, sha256, &mut |_, _| {})
            .map(|(m, _, shape)| (m, shape))
    }

    /// [`Spill::get`], saying how the module was made, and telling `seen`
    /// each step of the load with the file it has reached (a test acts
    /// there as a neighbour would: changes the spill's file, or writes the
    /// memory file through `/proc/<pid>/fd`).
    pub(super) fn get_observed(
        &self,
        engine: &Engine,
        sha256: &str,
        seen: &mut dyn FnMut(Loading, &std::fs::File),
    ) -> Option<(Module, Mapped, Option<Shape>)> {
        let name = self.name(sha256)?;
        let (len, digest, shape) = {
            let files = self.files.lock().expect("spill");
            let w = files.by_module.get(sha256)?;
            (w.len, w.digest, w.shape)
        };
        let module = self.load(engine, &name, len, &digest, seen);
        if module.is_none() {
            tracing::warn!(
                "the compiled module {} in {} was changed or removed: compiled again",
                sha256,
                self.dir.display()
            );
            self.forget(sha256, &name);
        }
        module.map(|(m, mapped)| (m, mapped, shape))
    }

    /// The module in the file `name`, if it holds `len` bytes of SHA-256
    /// `digest`, as [`Spill::get`] says: copied once, by the kernel, into a
    /// memory file ([`copy_into`]), sealed against every change, and only
    /// then its length and digest checked, on the sealed file: the bytes
    /// checked are the bytes the engine maps, whatever anyone writes
    /// before the seal (the spill's file during the copy, or the memory
    /// file through `/proc/<pid>/fd`). Where no memory file can be made,
    /// the file is read whole into memory, checked there, and copied by
    /// `Module::deserialize`.
    fn load(
        &self,
        engine: &Engine,
        name: &CStr,
        len: u64,
        digest: &[u8; 32],
        seen: &mut dyn FnMut(Loading, &std::fs::File),
    ) -> Option<(Module, Mapped)> {
        // Never waits (a FIFO put in its place) and never reads more than
        // the file this process wrote (a link to an endless device).
        let file = self.open_in(name, libc::O_RDONLY | libc::O_NONBLOCK).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() != len {
            return None;
        }
        seen(Loading::Opened, &file);
        let Ok(memory) = memory_file() else {
            let mut b = Vec::with_capacity(len as usize);
            (&file).take(len + 1).read_to_end(&mut b).ok()?;
            if b.len() as u64 != len || <[u8; 32]>::from(Sha256::digest(&b)) != *digest {
                return None;
            }
            // SAFETY: `Module::deserialize` trusts its bytes to be what
            // `Module::serialize` of this engine wrote (it maps them as
            // machine code). These bytes are in this process's memory, of
            // the length and SHA-256 this process recorded when it wrote
            // them; nothing changes them before the call copies them.
            return unsafe { Module::deserialize(engine, &b) }
                .ok()
                .map(|m| (m, Mapped::Copied));
        };
        copy_into(&file, &memory, len).ok()?;
        seen(Loading::Copied, &memory);
        seal(&memory).ok()?;
        seen(Loading::Sealed, &memory);
        if !holds(&memory, len, digest) {
            return None;
        }
        // SAFETY: `Module::deserialize_open_file` trusts the file to hold
        // what `Module::serialize` of this engine wrote, unchanged for the
        // module's life (it maps it as machine code). The memory file is
        // sealed against writes, growing and shrinking, its seals sealed
        // (no process, this one included, can change it any more), and
        // it was found to hold, after the seal, exactly the length and
        // SHA-256 this process recorded when it wrote the module's file.
        unsafe { Module::deserialize_open_file(engine, memory) }
            .ok()
            .map(|m| (m, Mapped::Sealed))
    }

    /// Forgets a module whose file did not hold what was written, and
    /// removes the file, both under the lock: a thread that keeps the same
    /// module again meanwhile (it is no longer recorded, so `put` writes
    /// it) writes its file after this removal, never before it.
    fn forget(&self, sha256: &str, name: &CStr) {
        let mut files = self.files.lock().expect("spill");
        if files.writing.contains(sha256) {
            // Kept again already: the file being written is the new one.
            return;
        }
        if let Some(w) = files.by_module.remove(sha256) {
            files.charged -= w.charge;
            files.count -= 1;
            files.order.retain(|m| m != sha256);
        }
        self.remove_in(name);
    }
}

/// How [`Spill::get`] made a module of verified bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mapped {
    /// Mapped from a sealed memory file holding the bytes: the engine
    /// maps its code and its memories' initial image from that file
    /// (`Module::deserialize_open_file`), so nothing is copied into fresh
    /// anonymous memory and made read-only and executable afterwards
    /// (each `mprotect` of written pages, and later their `munmap`,
    /// interrupts every CPU running a game thread of this process to flush
    /// its TLB; the engine's `mprotect` that makes the mapped code
    /// executable remains), and no second memory file is made for the image at the
    /// module's first instance on a game thread.
    Sealed,
    /// Copied by `Module::deserialize` (no memory file could be made).
    Copied,
}

/// A step of a load from the spill ([`Spill::get_observed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loading {
    /// The spill's file open, of the length recorded; nothing copied yet
    /// (`seen` is given the spill's file).
    Opened,
    /// Its bytes copied into the memory file, not sealed yet (`seen` is
    /// given the memory file).
    Copied,
    /// The memory file sealed, its bytes not checked yet (`seen` is given
    /// the memory file).
    Sealed,
}

/// A new memory file (`memfd_create`, closed on exec) that can be sealed.
fn memory_file() -> std::io::Result<std::fs::File> {
    // SAFETY: memfd_create with a NUL-terminated name; the descriptor it
    // returns is owned by the `File` alone.
    let fd = unsafe {
        libc::memfd_create(
            c"knobeln-module".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor, open, owned by nothing else.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// Copies the first `len` bytes of `from` to the end of `to` (empty), by
/// the kernel from `from`'s page cache into `to`'s pages (`sendfile`: one
/// copy, no buffer of this process's); where the kernel refuses
/// `sendfile` for these files, through a buffer (`read` and `write`).
/// Fails where `from` holds fewer than `len` bytes.
fn copy_into(from: &std::fs::File, to: &std::fs::File, len: u64) -> std::io::Result<()> {
    let mut offset: libc::off_t = 0;
    while (offset as u64) < len {
        let left = (len - offset as u64).min(1 << 30) as usize;
        // SAFETY: sendfile between two descriptors the caller holds open,
        // reading `from` at `offset` (which it advances), not its position.
        let n = unsafe { libc::sendfile(to.as_raw_fd(), from.as_raw_fd(), &mut offset, left) };
        if n > 0 {
            continue;
        }
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EINVAL | libc::ENOSYS) if offset == 0 => {
                let copied = std::io::copy(&mut from.take(len), &mut &*to)?;
                return if copied == len {
                    Ok(())
                } else {
                    Err(std::io::ErrorKind::UnexpectedEof.into())
                };
            }
            _ => return Err(e),
        }
    }
    Ok(())
}

/// Seals `file` against writes, growing and shrinking, and against new
/// seals (`F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL`):
/// once this returns, its contents are fixed for its life, whoever holds
/// it (fails where a shared writable mapping of it exists).
fn seal(file: &std::fs::File) -> std::io::Result<()> {
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on a descriptor the caller holds open.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the sealed memory file `file` holds exactly `len` bytes of
/// SHA-256 `digest`, read from the file itself (`pread`, in pieces
/// through a buffer of this thread's, [`READ_BUFFER`] bytes made once: no
/// mapping of the file made and unmapped, whose `munmap` would interrupt
/// the game threads' CPUs, and no buffer allocated and cleared at each
/// load).
fn holds(file: &std::fs::File, len: u64, digest: &[u8; 32]) -> bool {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if file.metadata().map(|m| m.len()).ok() != Some(len) {
        return false;
    }
    BUFFER.with_borrow_mut(|buf| {
        if buf.is_empty() {
            buf.resize(READ_BUFFER, 0);
        }
        digest_of(file, len, buf).is_some_and(|d| d == *digest)
    })
}

/// The bytes of the buffer [`holds`] reads a file through, one per thread
/// that loads from the spill.
const READ_BUFFER: usize = 64 << 10;

/// The SHA-256 of the first `len` bytes of `file`, read through `buf`;
/// `None` where it holds fewer or cannot be read.
fn digest_of(file: &std::fs::File, len: u64, buf: &mut [u8]) -> Option<[u8; 32]> {
    use std::os::unix::fs::FileExt;
    let mut sha = Sha256::new();
    let mut at = 0u64;
    while at < len {
        let want = (len - at).min(buf.len() as u64) as usize;
        match file.read_at(&mut buf[..want], at) {
            Ok(0) => return None,
            Ok(n) => {
                sha.update(&buf[..n]);
                at += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(sha.finalize().into())
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
/// or not a folder, is left alone. A folder being made is never
/// considered: it is made as `.knobeln-making-…` and has its final name
/// only once locked ([`Spill::create`]). One left by a process killed
/// between its `mkdir` and its rename (empty: no file is written before
/// the rename) is removed once it is [`MAKING_LEFT_SECS`] old, its process
/// gone (not this one), unlocked and still empty; before, every such kill
/// left a folder nobody removed or charged.
pub(super) fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    for e in entries.flatten() {
        let name = e.file_name();
        if let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(MAKING))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        {
            remove_left_making(&e.path(), pid, me);
            continue;
        }
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

/// How old a folder left while being made (`.knobeln-making-…`) must be
/// before [`remove_stale`] removes it: a maker locks its folder a few
/// system calls after making it, so one this old and unlocked was left by
/// a process killed in between (also one of another pid namespace sharing
/// the parent, whose pid means nothing here).
pub(super) const MAKING_LEFT_SECS: u64 = 600;

/// Removes `dir`, a folder left while being made by process `pid`, if it
/// is this user's, at least [`MAKING_LEFT_SECS`] old, of a process gone
/// (never this one's), unlocked, and empty (`rmdir`: a folder with
/// anything in it stays).
fn remove_left_making(dir: &Path, pid: libc::pid_t, me: libc::uid_t) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    let old = meta
        .modified()
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age.as_secs() >= MAKING_LEFT_SECS);
    if !meta.is_dir() || meta.uid() != me || pid <= 0 || !old {
        return;
    }
    // SAFETY: signal 0 only asks whether the process exists.
    let gone = pid as u32 != std::process::id()
        && ((unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH))
            || zombie(pid));
    if gone {
        if let Ok(Some(_unheld)) = lock(dir) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that does not hold what was written is forgotten and removed
    /// by `get`; a thread that keeps the same module again meanwhile (the
    /// module no longer recorded, so its `put` writes it) must keep its
    /// new file. Here the second `put` is between the first's record being
    /// dropped and the removal: `forget` finds the module being written
    /// and leaves its file alone. Before, `forget` removed the file after
    /// releasing the lock, and the new write's file could go with it (the
    /// spill then recorded a module with no file: compiled again later).
    #[test]
    fn a_module_kept_again_while_its_damaged_file_is_forgotten_keeps_its_file() {
        let engine = Engine::default();
        let module = Module::new(&engine, b"\0asm\x01\0\0\0").unwrap();
        let parent = tempfile::tempdir().unwrap();
        let spill = Spill::create(parent.path(), 1 << 30, 1024, &engine).unwrap();
        let sha = "ab".repeat(32);
        let name = spill.name(&sha).unwrap();
        assert!(matches!(spill.put(&sha, &module), Ok(Kept::Written)));
        // Another thread forgot it (its file damaged) and is writing it
        // again: recorded as being written, its new file in place.
        {
            let mut files = spill.files.lock().unwrap();
            assert!(files.by_module.remove(&sha).is_some());
            files.order.retain(|m| m != &sha);
            files.writing.insert(sha.clone());
        }
        // A late `forget` of the old, damaged file.
        spill.forget(&sha, &name);
        assert!(
            spill.open_in(&name, libc::O_RDONLY).is_ok(),
            "the file being written again was removed"
        );
    }
}
