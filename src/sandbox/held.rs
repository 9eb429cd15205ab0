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
//! a tmpfs of exactly the program's size in whole huge pages, the file
//! written into it, the mount made read-only before anyone else holds it,
//! mounted nowhere on the host. A run mounts a copy of that read-only mount
//! and cannot change it (its tools keep no capability): a tool writing,
//! truncating or changing the program fails with `EROFS`, so one
//! strategy's compile can leave nothing in the next one's tools. The
//! memory (the program's size, rounded up to whole huge pages) is the
//! server's, for its life, charged to its control group; it is freed when
//! the server ends (even by `kill -9`: only the server's descriptor and
//! the mounts of its running jails hold it).
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
}

impl Held {
    /// The descriptor of the copy's detached mount, for a run's
    /// `open_tree`.
    pub(super) fn mount_fd(&self) -> RawFd {
        self.mount.as_raw_fd()
    }

    /// The memory the copy takes: its size in whole huge pages.
    pub fn memory(&self) -> u64 {
        self.bytes.div_ceil(HUGE_PAGE) * HUGE_PAGE
    }
}

/// Why a program is not held (the runs then use the host's file).
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    #[error("{0} is not a file under /usr, which is all the jail sees of the host")]
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
}

/// The programs held, and those whose hold was started.
struct Registry {
    held: Vec<Arc<Held>>,
    started: BTreeSet<PathBuf>,
    /// Holds started and not yet ended (either way).
    pending: usize,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    held: Vec::new(),
    started: BTreeSet::new(),
    pending: 0,
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
/// costs about 0.4 s of CPU for the zig toolchain; the runs use the host's
/// file until it is done), once per process and program. A hold that
/// fails is said on stderr once; the runs go on with the host's file.
pub fn hold_in_background(program: &Path) {
    {
        let mut r = registry();
        if !r.started.insert(program.to_path_buf()) {
            return;
        }
        r.pending += 1;
    }
    let ended = |outcome: Result<Held, HoldError>, program: &Path| {
        let mut r = registry();
        match outcome {
            Ok(held) => r.held.push(Arc::new(held)),
            Err(HoldError::NoHugePages) => {}
            Err(e) => eprintln!(
                "knobeln: the jail runs {} from the disk: {e}",
                program.display()
            ),
        }
        r.pending -= 1;
        ENDED.notify_all();
    };
    let program = program.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name("hold-program".into())
        .spawn({
            let program = program.clone();
            move || ended(hold(&program, MAX_HELD_BYTES), &program)
        });
    if let Err(e) = spawned {
        ended(Err(HoldError::Thread(e)), &program);
    }
}

/// Holds `program` on the calling thread, once per process (the copy held
/// already if it is), and has the jail's runs of it use the copy from now
/// on.
pub fn hold_now(program: &Path) -> Result<Arc<Held>, HoldError> {
    if let Some(held) = registry().held.iter().find(|h| h.program == program) {
        return Ok(Arc::clone(held));
    }
    let held = Arc::new(hold(program, MAX_HELD_BYTES)?);
    let mut r = registry();
    r.started.insert(program.to_path_buf());
    r.held.push(Arc::clone(&held));
    Ok(held)
}

/// Waits until every hold started has ended (held or not), at most
/// `timeout`: whether they have. For benchmarks that measure the steady
/// state.
pub fn wait_for_holds(timeout: Duration) -> bool {
    let r = registry();
    let (r, _) = ENDED
        .wait_timeout_while(r, timeout, |r| r.pending > 0)
        .unwrap_or_else(|e| e.into_inner());
    r.pending == 0
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
    if !program.is_absolute()
        || !program.starts_with("/usr")
        || program
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(HoldError::NotUnderUsr(program.to_path_buf()));
    }
    if !huge_pages_offered() {
        return Err(HoldError::NoHugePages);
    }
    let read = |source| HoldError::Read {
        path: program.to_path_buf(),
        source,
    };
    let file = fs::File::open(program).map_err(read)?;
    let meta = file.metadata().map_err(read)?;
    if !meta.is_file() {
        return Err(HoldError::NotUnderUsr(program.to_path_buf()));
    }
    let bytes = meta.size();
    if bytes > max {
        return Err(HoldError::TooLarge {
            path: program.to_path_buf(),
            bytes,
            max,
        });
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
    let options = [
        ("size", size.to_string()),
        ("nr_inodes", "4".to_string()),
        ("mode", "0755".to_string()),
        ("huge", "always".to_string()),
    ];
    let maker = if super::is_root() {
        Maker::Root
    } else {
        Maker::UserNamespace
    };
    let mount: OwnedFd = detached_tmpfs(&options, maker, Some(&fill)).map_err(tmpfs)?;
    Ok(Held {
        program: program.to_path_buf(),
        bytes,
        mount,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a regular file under `/usr` is held (the jail sees nothing
    /// else of the host), and none larger than the bound.
    #[test]
    fn only_a_file_under_usr_within_the_bound_is_held() {
        for path in [
            "/etc/passwd",
            "usr/bin/dash",
            "/usr/../etc/passwd",
            "/usr/bin",
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
