//! Programs the jail's runs execute from a copy in huge pages: a large
//! program of the host's `/usr` (the zig toolchain's 185 MB clang and
//! wasm-ld, started twice a compile) copied once per server into a
//! read-only tmpfs of its own that the kernel backs with 2 MiB pages,
//! which every jail run mounts over the program's path ([`super::jail`]).
//! The program the tools run is the same file, byte for byte, at the same
//! path; what changes is the kernel's work to map it: from the host's
//! disk cache a start maps the program 4 kB at a time, from a tmpfs of
//! huge pages in whole large pages, and a zig start costs about half the
//! CPU (the figures page of the book).
//!
//! The copy is made by a child of the server ([`super::tmpfs::detached_tmpfs`]):
//! a tmpfs of exactly the program's size in whole huge pages (never
//! swapped where the kernel allows `noswap`), the file written into it,
//! the mount made read-only before anyone else holds it, mounted nowhere
//! on the host. A run mounts a copy of that read-only mount, and only
//! while the program's path still names the file copied, unchanged (its
//! device, inode, size and times: else the run starts the host's file,
//! as the compile cache's key, which reads the same, says); the program
//! is named by its own path (no link, no `..`). A tool cannot change the
//! copy (it keeps no capability): writing, truncating or changing the
//! program fails (`EROFS`, or `EACCES` where its mode refuses first), so
//! one strategy's compile can leave nothing in the next one's tools. The
//! memory (the program's size, rounded up to whole huge pages) is the
//! server's, for its life, charged to its control group; it is freed when
//! the server ends (even by `kill -9`: only the server's descriptor and
//! the mounts of its running jails hold it, and a copy under way dies
//! with the server's thread that waits for it).
//!
//! Not here: which programs are held (the toolchain names them,
//! `crate::toolchain::wasm::Toolchain::hold_in_memory`), the runs' mounts
//! (`jail.rs`). Where the kernel gives tmpfs no huge pages, nothing is held
//! (a copy in small pages is not faster) and the runs use the host's file.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::tmpfs::{detached_tmpfs, Fill, Maker};

/// A huge page of x86-64 and arm64 (4 kB base pages): the unit the held
/// copy's tmpfs is sized in.
const HUGE_PAGE: u64 = 2 << 20;

/// The largest program held (the zig toolchain's is 185 MB): a bound on
/// the memory one hold takes.
pub const MAX_HELD_BYTES: u64 = 512 << 20;

/// The name of the copy in its tmpfs.
pub(super) const COPY_NAME: &str = "program";

/// A program of the host's `/usr` held in huge pages.
#[derive(Debug)]
pub struct Held {
    /// The program's path on the host and in the jail (under `/usr`).
    pub program: PathBuf,
    /// Its size in bytes; the memory held is this rounded up to whole
    /// huge pages.
    pub bytes: u64,
    /// The detached, read-only mount of the tmpfs holding the copy
    /// ([`COPY_NAME`]).
    mount: OwnedFd,
    /// The host's file as it was copied: a run mounts the copy only while
    /// the path still names that file, unchanged ([`Held::still_the_file`]).
    copied: FileId,
}

/// A file as `stat` tells it: which file (device and inode) and its
/// version (size, last change of its contents and of its inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileId {
    fn of(meta: &fs::Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

impl Held {
    /// The descriptor of the copy's detached mount, for a run's
    /// `open_tree`.
    pub(super) fn mount_fd(&self) -> RawFd {
        self.mount.as_raw_fd()
    }

    /// Whether the program's path names, unchanged, the file that was
    /// copied (the same file, size and times; the path has no link, which
    /// [`hold`] made sure of): else a run starts the host's file, as the
    /// compile's cache key, which reads that file's size and times, says.
    pub(super) fn still_the_file(&self) -> bool {
        fs::symlink_metadata(&self.program).is_ok_and(|m| FileId::of(&m) == self.copied)
    }

    /// The memory the copy takes: its size in whole huge pages.
    pub fn memory(&self) -> u64 {
        self.bytes.div_ceil(HUGE_PAGE) * HUGE_PAGE
    }
}

/// Why a program is not held (the runs then use the host's file).
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    #[error("{0} is not a file under /usr named by its own path (no link, no ..), which is all the jail sees of the host")]
    NotUnderUsr(PathBuf),
    #[error("{path} is {bytes} bytes, more than the {max} a hold may take")]
    TooLarge { path: PathBuf, bytes: u64, max: u64 },
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("a tmpfs of huge pages for {path}: {source}")]
    Tmpfs { path: PathBuf, source: io::Error },
    #[error("the kernel gives tmpfs no huge pages")]
    NoHugePages,
    #[error("no thread to copy it: {0}")]
    Thread(io::Error),
    #[error("{0} changed while it was copied")]
    Changed(PathBuf),
    #[error("this process's hold of {0} failed")]
    Failed(PathBuf),
}

/// The programs held, and those whose hold was started.
struct Registry {
    held: Vec<Arc<Held>>,
    /// Every program whose hold was started: none is tried twice.
    started: BTreeSet<PathBuf>,
    /// Holds started and not yet ended (either way).
    pending: BTreeSet<PathBuf>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    held: Vec::new(),
    started: BTreeSet::new(),
    pending: BTreeSet::new(),
});
static ENDED: Condvar = Condvar::new();

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// The programs held now: what a run mounts.
pub(super) fn held() -> Vec<Arc<Held>> {
    registry().held.clone()
}

/// The programs held now and the memory each takes (its size in whole
/// huge pages): what a report of the server's memory names.
pub fn held_programs() -> Vec<(PathBuf, u64)> {
    held()
        .iter()
        .map(|h| (h.program.clone(), h.memory()))
        .collect()
}

/// Starts holding `program` in huge pages on a thread of its own (the copy
/// costs about 0.4 s of CPU for the zig toolchain, 2 s on a VM whose fresh
/// memory its host hands back page by page at the first touch; the runs
/// use the host's file until it is done), once per process and program. A hold that
/// fails is said on stderr once; the runs go on with the host's file.
pub fn hold_in_background(program: &Path) {
    if !start(program) {
        return;
    }
    let program = program.to_path_buf();
    let said = |program: &Path, ended: Result<Arc<Held>, HoldError>| {
        if let Err(e) = ended {
            eprintln!(
                "knobeln: the jail runs {} from the disk: {e}",
                program.display()
            );
        }
    };
    let spawned = std::thread::Builder::new()
        .name("hold-program".into())
        .spawn({
            let program = program.clone();
            move || said(&program, end(&program, hold(&program, MAX_HELD_BYTES)))
        });
    if let Err(e) = spawned {
        said(&program, end(&program, Err(HoldError::Thread(e))));
    }
}

/// Holds `program` on the calling thread (or waits for the hold another
/// started), once per process, and has the jail's runs of it use the copy
/// from now on. `Err`: this process's hold of it failed.
pub fn hold_now(program: &Path) -> Result<Arc<Held>, HoldError> {
    if start(program) {
        end(program, hold(program, MAX_HELD_BYTES))
    } else {
        let r = ENDED
            .wait_while(registry(), |r| r.pending.contains(program))
            .unwrap_or_else(|e| e.into_inner());
        r.held
            .iter()
            .find(|h| h.program == program)
            .cloned()
            .ok_or_else(|| HoldError::Failed(program.to_path_buf()))
    }
}

/// Marks the hold of `program` started; `false`: it was before.
fn start(program: &Path) -> bool {
    let mut r = registry();
    // Asked at every compile: no allocation once started.
    if r.started.contains(program) {
        return false;
    }
    r.started.insert(program.to_path_buf());
    r.pending.insert(program.to_path_buf());
    true
}

/// Ends the hold [`start`] marked: registers the copy (the runs use it
/// from now on).
fn end(program: &Path, outcome: Result<Held, HoldError>) -> Result<Arc<Held>, HoldError> {
    let mut r = registry();
    r.pending.remove(program);
    ENDED.notify_all();
    let held = Arc::new(outcome?);
    r.held.push(Arc::clone(&held));
    Ok(held)
}

/// Waits until every hold started has ended (held or not), at most
/// `timeout`: whether they have. For benchmarks that measure the steady
/// state.
pub fn wait_for_holds(timeout: Duration) -> bool {
    let r = registry();
    let (r, _) = ENDED
        .wait_timeout_while(r, timeout, |r| !r.pending.is_empty())
        .unwrap_or_else(|e| e.into_inner());
    r.pending.is_empty()
}

/// Whether the kernel backs a tmpfs mounted with `huge=always` with huge
/// pages: it has transparent huge pages, and its setting for shared memory
/// does not deny them to every mount (`deny`; a copy in small pages would
/// take the memory and save nothing).
fn huge_pages_offered() -> bool {
    fs::read_to_string("/sys/kernel/mm/transparent_hugepage/shmem_enabled")
        .is_ok_and(|setting| !setting.contains("[deny]"))
}

/// Copies `program` (a regular file under `/usr`, at most `max` bytes)
/// into a read-only tmpfs of huge pages of its own, on the calling thread
/// (which waits for the child that copies). Not registered: the runs do
/// not use it ([`hold_now`] does that).
pub fn hold(program: &Path, max: u64) -> Result<Held, HoldError> {
    let read = |source| HoldError::Read {
        path: program.to_path_buf(),
        source,
    };
    // Its own path: a link anywhere on it could lead out of `/usr` on the
    // host, or out of the tree where a run mounts the copy.
    if !program.is_absolute()
        || !program.starts_with("/usr")
        || fs::canonicalize(program).map_err(read)? != program
    {
        return Err(HoldError::NotUnderUsr(program.to_path_buf()));
    }
    let file = fs::File::open(program).map_err(read)?;
    let meta = file.metadata().map_err(read)?;
    if !meta.is_file() {
        return Err(HoldError::NotUnderUsr(program.to_path_buf()));
    }
    let before = FileId::of(&meta);
    let bytes = meta.size();
    if bytes > max {
        return Err(HoldError::TooLarge {
            path: program.to_path_buf(),
            bytes,
            max,
        });
    }
    if !huge_pages_offered() {
        return Err(HoldError::NoHugePages);
    }
    let tmpfs = |source| HoldError::Tmpfs {
        path: program.to_path_buf(),
        source,
    };
    let fill = Fill {
        source: file.as_raw_fd(),
        len: bytes,
        name: CString::new(COPY_NAME).expect("no NUL"),
    };
    let size = bytes.div_ceil(HUGE_PAGE).max(1) * HUGE_PAGE;
    let mut options = vec![
        ("size", size.to_string()),
        ("nr_inodes", "4".to_string()),
        ("mode", "0755".to_string()),
        ("huge", "always".to_string()),
        // Never swapped (Linux 6.4; refused in a user namespace): a page
        // pushed out and read back small would cost every start again.
        ("noswap", String::new()),
    ];
    let maker = if super::is_root() {
        Maker::Root
    } else {
        Maker::UserNamespace
    };
    // Without `noswap` only where the kernel refuses that option
    // (`EINVAL`: an older kernel, or a user namespace), asked of an empty
    // tmpfs first: the copy is then made once, and any failure of it is
    // the hold's.
    let noswap = [("size", HUGE_PAGE.to_string()), ("noswap", String::new())];
    if let Err(e) = detached_tmpfs(&noswap, maker, None) {
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Err(tmpfs(e));
        }
        options.pop();
    }
    let mount: OwnedFd = detached_tmpfs(&options, maker, Some(&fill)).map_err(tmpfs)?;
    // The copy is of one version of the file: the same file, unchanged
    // from before the copy to after it, and the path still names it.
    let after = file.metadata().map_err(read)?;
    let now = fs::symlink_metadata(program).map_err(read)?;
    if FileId::of(&after) != before || FileId::of(&now) != before {
        return Err(HoldError::Changed(program.to_path_buf()));
    }
    Ok(Held {
        program: program.to_path_buf(),
        bytes,
        mount,
        copied: before,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a regular file under `/usr` is held (the jail sees nothing
    /// else of the host), and none larger than the bound.
    #[test]
    fn only_a_file_under_usr_within_the_bound_is_held() {
        // `/usr/bin/sh` is a link to `dash` (Debian).
        for path in [
            "/etc/passwd",
            "usr/bin/dash",
            "/usr/../etc/passwd",
            "/usr/bin",
            "/usr/bin/sh",
        ] {
            let e = hold(Path::new(path), MAX_HELD_BYTES).unwrap_err();
            assert!(matches!(e, HoldError::NotUnderUsr(_)), "{path}: {e}");
        }
        let e = hold(Path::new("/usr/bin/dash"), 1000).unwrap_err();
        assert!(
            matches!(e, HoldError::TooLarge { bytes, max: 1000, .. } if bytes > 1000),
            "{e}"
        );
        assert!(e.to_string().contains("more than the 1000"), "{e}");
        // Exactly at the bound it is held; a byte under it, refused.
        let size = fs::metadata("/usr/bin/dash").unwrap().size();
        let e = hold(Path::new("/usr/bin/dash"), size - 1).unwrap_err();
        assert!(
            matches!(e, HoldError::TooLarge { bytes, .. } if bytes == size),
            "{e}"
        );
        assert_eq!(hold(Path::new("/usr/bin/dash"), size).unwrap().bytes, size);
    }

    /// The copy takes the program's size in whole huge pages.
    #[test]
    fn a_copy_takes_its_size_in_whole_huge_pages() {
        let held = hold(Path::new("/usr/bin/dash"), MAX_HELD_BYTES).unwrap();
        assert_eq!(held.bytes, fs::metadata("/usr/bin/dash").unwrap().size());
        assert_eq!(held.memory(), HUGE_PAGE);
        let copy = PathBuf::from(format!("/proc/self/fd/{}/{COPY_NAME}", held.mount_fd()));
        assert_eq!(fs::read(&copy).unwrap(), fs::read("/usr/bin/dash").unwrap());
        // Read-only from its making: not even the server (root, or the
        // copy's owner) changes it.
        use std::os::unix::fs::PermissionsExt;
        let e = fs::set_permissions(&copy, fs::Permissions::from_mode(0o777)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EROFS), "{e}");
        assert!(fs::OpenOptions::new().append(true).open(&copy).is_err());
    }
}
