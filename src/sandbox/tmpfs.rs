//! A tmpfs made by a short-lived child of the server and held by the
//! descriptor of its detached mount, mounted nowhere on the host: the
//! compile jail's work folder ([`super::jail`]) and the read-only copy of
//! a program held in huge pages ([`super::held`]). The child shares the
//! server's descriptor table (so the descriptor outlives it) and makes the
//! file system in a mount namespace of its own, and in a user namespace
//! when the server is not root ([`UserMaps`]); a copy it fills is written
//! from a table of its own (no process the server starts meanwhile holds
//! the copy open for writing when the mount is made read-only).
//!
//! Not here: what the tmpfs holds or where a run mounts it.

use std::cell::Cell;
use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use super::spawn;

/// `fsopen`'s and `fsmount`'s flag: the descriptor is close-on-exec.
const FS_CLOEXEC: libc::c_uint = 1;
/// `fsconfig` commands.
const FSCONFIG_SET_FLAG: libc::c_uint = 0;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
/// `fsmount`'s mount attributes.
const MOUNT_ATTR_NOSUID: libc::c_uint = 0x2;
const MOUNT_ATTR_NODEV: libc::c_uint = 0x4;
/// `mount_setattr`'s attribute: read-only.
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// Who makes a detached tmpfs: root in a mount namespace of its own, or
/// (the server is not root) the root of a new user namespace.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Maker {
    Root,
    UserNamespace,
}

/// A file a detached tmpfs is filled with before it is made read-only:
/// `len` bytes of `source` (read from its start) as the file `name`, mode
/// 0555.
pub(super) struct Fill {
    pub source: RawFd,
    pub len: u64,
    pub name: CString,
}

/// A new tmpfs with `options` (an empty value: a flag), mounted nowhere (`nosuid`, `nodev`): the
/// descriptor of its detached mount. With `fill`, the file is written into
/// it and the mount made read-only before anyone else holds it. It is made
/// by a child in a mount namespace of its own (and a user namespace where
/// the server is not root: creating a file system needs `CAP_SYS_ADMIN`
/// where it is made) that shares the server's descriptor table, so that
/// the descriptor outlives it (a fill it writes from a table of its own,
/// holding only the mount and the source: no process another thread
/// starts meanwhile inherits the copy open for writing, which would make
/// the mount busy when it is made read-only); the file system lives as long as a
/// descriptor or a mount of it does.
pub(super) fn detached_tmpfs(
    options: &[(&str, String)],
    maker: Maker,
    fill: Option<&Fill>,
) -> io::Result<OwnedFd> {
    let c =
        |s: &str| CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL"));
    let options = options
        .iter()
        .map(|(k, v)| Ok((c(k)?, c(v)?)))
        .collect::<io::Result<Vec<_>>>()?;
    let tmpfs = c("tmpfs")?;
    let empty = c("")?;
    let maps = UserMaps::new()?;
    let made: Cell<RawFd> = Cell::new(-1);
    let mut body = || -> io::Error {
        // SAFETY: system calls on data prepared before the clone.
        unsafe {
            if maker == Maker::UserNamespace {
                if let Err(e) = maps.write() {
                    return e;
                }
            }
            let fs = libc::syscall(libc::SYS_fsopen, tmpfs.as_ptr(), FS_CLOEXEC) as RawFd;
            if fs < 0 {
                return io::Error::last_os_error();
            }
            let mut ok = true;
            for (key, value) in &options {
                // An option without a value is a flag (`noswap`).
                let (command, value) = if value.is_empty() {
                    (FSCONFIG_SET_FLAG, std::ptr::null())
                } else {
                    (FSCONFIG_SET_STRING, value.as_ptr())
                };
                ok = ok
                    && libc::syscall(libc::SYS_fsconfig, fs, command, key.as_ptr(), value, 0) == 0;
            }
            ok = ok
                && libc::syscall(
                    libc::SYS_fsconfig,
                    fs,
                    FSCONFIG_CMD_CREATE,
                    std::ptr::null::<libc::c_char>(),
                    std::ptr::null::<libc::c_char>(),
                    0,
                ) == 0;
            let mount = if ok {
                libc::syscall(
                    libc::SYS_fsmount,
                    fs,
                    FS_CLOEXEC,
                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                ) as RawFd
            } else {
                -1
            };
            let err = io::Error::last_os_error();
            // The descriptor table is the server's: leave only the mount.
            libc::close(fs);
            if mount < 0 {
                return err;
            }
            // Known to the parent from here on, which closes it unless
            // the child ends with 0 (killed halfway through a fill, too).
            made.set(mount);
            if let Some(fill) = fill {
                // A fill takes a while (0.4 s for the zig toolchain): no
                // signal but SIGKILL ends it halfway, and it dies with the
                // server (its memory is the server's).
                let mut all: libc::sigset_t = std::mem::zeroed();
                libc::sigfillset(&mut all);
                libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                // The copy written from a descriptor table of the child's
                // own: a process another thread of the server starts
                // meanwhile copies the server's table, and its copy of a
                // descriptor open for writing on this tmpfs, held until
                // it execs, made the read-only step busy (`EBUSY`: the
                // program was not held, in about one process of six
                // whose compiles ran on two threads). Of the server's
                // descriptors the child keeps the mount and the source
                // alone, so it holds nothing else open (a pipe's end)
                // while it copies.
                if let Err(e) = spawn::keep_only_in_own_table([mount, fill.source]) {
                    return e;
                }
                if let Err(e) = fill_read_only(mount, fill, &empty) {
                    return e;
                }
            }
            libc::_exit(0)
        }
    };
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_FILES;
    if maker == Maker::UserNamespace {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: the body only makes system calls on data prepared above.
    let spawned = unsafe { spawn::spawn_with(flags, &mut body) };
    // What the child made is closed unless it ended with 0: a fill that
    // failed returns its error through `spawn_with` (the child has ended
    // by then), with the mount already in the server's table.
    let close_made = || {
        let fd = made.get();
        if fd >= 0 {
            // SAFETY: the child made it in our table and nobody else has it.
            drop(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    };
    let pid = match spawned {
        Ok(pid) => pid,
        Err(e) => {
            close_made();
            return Err(e);
        }
    };
    // The child has ended when `spawn_with` returns (`CLONE_VFORK`, and
    // it never execs): a wait that fails (`ECHILD`, another reaper) leaves
    // nobody using the mount, which is closed as on every other failure.
    let status = match spawn::Child::new(pid).wait() {
        Ok(status) => status,
        Err(e) => {
            close_made();
            return Err(e);
        }
    };
    let fd = made.get();
    if fd < 0 || status.code() != Some(0) {
        close_made();
        return Err(io::Error::other(format!(
            "the child making a tmpfs ended with {status}"
        )));
    }
    // SAFETY: the child made it in our table and nobody else has it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// For [`detached_tmpfs`]'s child: writes `fill`'s file into the mount
/// `mount`, then makes the mount read-only. Only system calls.
unsafe fn fill_read_only(mount: RawFd, fill: &Fill, empty: &CString) -> io::Result<()> {
    let file = libc::openat(
        mount,
        fill.name.as_ptr(),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
        0o555,
    );
    if file < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut offset: libc::off_t = 0;
    while (offset as u64) < fill.len {
        let left = (fill.len - offset as u64).min(1 << 30) as usize;
        let n = libc::sendfile(file, fill.source, &mut offset, left);
        if n <= 0 {
            // No allocation in the child: a file shorter than its size is
            // `ENODATA`.
            let err = if n == 0 {
                io::Error::from_raw_os_error(libc::ENODATA)
            } else {
                io::Error::last_os_error()
            };
            libc::close(file);
            return Err(err);
        }
    }
    libc::close(file);
    /// `struct mount_attr` of `mount_setattr(2)`.
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    if libc::syscall(
        libc::SYS_mount_setattr,
        mount,
        empty.as_ptr(),
        libc::AT_EMPTY_PATH as libc::c_uint,
        &attr as *const MountAttr,
        std::mem::size_of::<MountAttr>(),
    ) != 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The user and group maps of a user namespace whose root is the server's
/// user, written by the child into its own `/proc/self` files.
pub(super) struct UserMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    uid_map_path: CString,
    gid_map_path: CString,
    setgroups_path: CString,
}

impl UserMaps {
    pub(super) fn new() -> io::Result<UserMaps> {
        let c = |s: &str| {
            CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL"))
        };
        // SAFETY: plain syscalls.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Ok(UserMaps {
            uid_map: format!("0 {uid} 1\n").into_bytes(),
            gid_map: format!("0 {gid} 1\n").into_bytes(),
            uid_map_path: c("/proc/self/uid_map")?,
            gid_map_path: c("/proc/self/gid_map")?,
            setgroups_path: c("/proc/self/setgroups")?,
        })
    }

    /// Only system calls: for the child.
    pub(super) unsafe fn write(&self) -> io::Result<()> {
        write_file(&self.setgroups_path, b"deny")?;
        write_file(&self.uid_map_path, &self.uid_map)?;
        write_file(&self.gid_map_path, &self.gid_map)
    }
}

unsafe fn write_file(path: &CString, data: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY);
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = libc::write(fd, data.as_ptr().cast(), data.len());
    libc::close(fd);
    if n != data.len() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// The maker of this process's tmpfs: root's, else a user namespace's.
    fn test_maker() -> Maker {
        if super::super::is_root() {
            Maker::Root
        } else {
            Maker::UserNamespace
        }
    }

    /// The tmpfs descriptors open in this process with exactly `inodes`
    /// inodes (a number no other test's tmpfs has).
    fn open_with_inodes(inodes: u64) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<RawFd>().ok())
            .filter(|&fd| {
                // SAFETY: `fstatfs` on a descriptor number (a closed one
                // fails) into a zeroed struct.
                let mut st: libc::statfs = unsafe { std::mem::zeroed() };
                let ok = unsafe { libc::fstatfs(fd, &mut st) } == 0;
                ok && st.f_type == libc::TMPFS_MAGIC && st.f_files == inodes
            })
            .count()
    }

    /// A fill that fails (its file shorter than said) leaves no mount in
    /// the server's descriptor table: the child had handed it over before
    /// the copy, and the error closes it.
    #[test]
    fn a_failed_fill_leaves_no_mount_behind() {
        const INODES: u64 = 4093;
        let source = std::fs::File::open("/usr/bin/dash").unwrap();
        let len = source.metadata().unwrap().len();
        let fill = Fill {
            source: source.as_raw_fd(),
            len: len + 1,
            name: CString::new("copy").unwrap(),
        };
        let options = [
            ("size", (4u64 << 20).to_string()),
            ("nr_inodes", INODES.to_string()),
        ];
        let maker = test_maker();
        let e = detached_tmpfs(&options, maker, Some(&fill)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENODATA), "{e}");
        assert_eq!(open_with_inodes(INODES), 0);
        // The same with a fill that fits: one mount, the caller's.
        let fill = Fill { len, ..fill };
        let mount = detached_tmpfs(&options, maker, Some(&fill)).unwrap();
        assert_eq!(open_with_inodes(INODES), 1);
        drop(mount);
        assert_eq!(open_with_inodes(INODES), 0);
    }

    /// A fill is written from the child's own descriptor table: the
    /// server's descriptors are all still open after it (the child closes
    /// every one but the mount and the source in its own table, never in
    /// the one it shares with the server), the mount is the caller's and
    /// read-only.
    #[test]
    fn a_fill_leaves_the_servers_descriptors_open() {
        let mut pipe = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors.
        assert_eq!(
            unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) },
            0
        );
        let source = std::fs::File::open("/usr/bin/dash").unwrap();
        let fill = Fill {
            source: source.as_raw_fd(),
            len: source.metadata().unwrap().len(),
            name: CString::new("copy").unwrap(),
        };
        let options = [("size", (4u64 << 20).to_string())];
        let mount = detached_tmpfs(&options, test_maker(), Some(&fill)).unwrap();
        for fd in [pipe[0], pipe[1], source.as_raw_fd(), mount.as_raw_fd()] {
            // SAFETY: fcntl only asks about a descriptor.
            assert!(
                unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0,
                "{fd} closed"
            );
        }
        // SAFETY: openat on the mount's descriptor with a NUL-terminated name.
        let w = unsafe { libc::openat(mount.as_raw_fd(), c"copy".as_ptr(), libc::O_WRONLY) };
        assert_eq!(w, -1, "the copy opened for writing");
        // Root meets the read-only mount; another user the copy's mode first.
        let e = io::Error::last_os_error().raw_os_error();
        assert!(matches!(e, Some(libc::EROFS | libc::EACCES)), "{e:?}");
        for fd in pipe {
            // SAFETY: the test's own pipe, still open.
            assert_eq!(unsafe { libc::close(fd) }, 0);
        }
    }

    /// A wait for the making child that fails (`ECHILD`: here the process
    /// ignores `SIGCHLD`, so the kernel reaps its children itself) closes
    /// the mount the child made. Run in a process of its own (the test
    /// binary again, this test alone): ignoring `SIGCHLD` would fail every
    /// other test's waits.
    #[test]
    fn a_failed_wait_leaves_no_mount_behind() {
        const INODES: u64 = 4091;
        const ALONE: &str = "KNOBELN_TEST_SIGCHLD_IGNORED";
        const ME: &str = "sandbox::tmpfs::tests::a_failed_wait_leaves_no_mount_behind";
        // The process of its own: asked by this variable naming this test,
        // and run with this test alone (a variable inherited by a whole
        // run of the tests never makes them ignore `SIGCHLD`).
        let alone = std::env::var_os(ALONE).is_some_and(|v| v == ME)
            && std::env::args().any(|a| a == "--exact")
            && std::env::args().any(|a| a == ME);
        if !alone {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", ME, "--test-threads=1"])
                .env(ALONE, ME)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{said}");
            assert!(said.contains("1 passed"), "the test did not run: {said}");
            return;
        }
        // SAFETY: this process runs this test alone.
        unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
        let options = [
            ("size", (1u64 << 20).to_string()),
            ("nr_inodes", INODES.to_string()),
        ];
        let maker = test_maker();
        let e = detached_tmpfs(&options, maker, None).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ECHILD), "{e}");
        assert_eq!(open_with_inodes(INODES), 0);
    }
}
