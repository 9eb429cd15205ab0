//! A jail for running the toolchain (gcc, as, ld) on hostile input.
//!
//! [`Jail::new`] prepares a private tree in a temporary folder:
//! `root/usr` (the host's `/usr`, bind-mounted read-only), `bin`, `lib`,
//! `lib64` mirrored as on the host (symlinks on a merged-/usr system),
//! `dev/null`, `tmp` and the writable `work` folder. [`Jail::run`] starts a
//! command (without copying the server, [`super::spawn`]) in new mount,
//! network, IPC, UTS and PID namespaces (plus a user namespace when not
//! root), chrooted into that tree, as `nobody` when the server is root, with
//! only standard input, output and error open, with CPU, address-space,
//! file-size, open-file and process-count limits, a wall-clock limit and a
//! cap on the output it keeps. Nothing outside the toolchain and the work
//! folder is readable, and there is no network. The command is PID 1 of its
//! namespace, so when it ends everything it started ends with it; the whole
//! process group is killed when the command ends or overruns, and the
//! parent-death signal (re-armed after dropping privileges, which clears it)
//! kills it when the server dies, even by `kill -9`. A jail folder left
//! behind by a killed server is removed by the next [`Jail::new`].
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
use std::os::fd::AsRawFd;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::spawn::{self, arrange_fds, check, CArgs};
use super::{is_root, pipe, set_rlimit};

/// Prefix of the jail folders in the system's temp folder; the server's pid
/// follows, so that folders of dead servers can be recognised.
const JAIL_PREFIX: &str = "knobeln-jail-";

/// The user id the jailed command runs as, when the server runs as root.
pub const NOBODY: u32 = 65534;

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
    /// Processes the jailed user may have at once (RLIMIT_NPROC).
    pub processes: u64,
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
        }
    }
}

/// How a jailed command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JailExit {
    Exited(i32),
    Signaled(i32),
    /// Killed by the jail after the wall-clock limit.
    WallClock,
}

/// What a jailed command did.
#[derive(Debug, Clone)]
pub struct JailOutput {
    pub exit: JailExit,
    /// The first `output_cap` bytes of stdout and stderr, interleaved, lossily UTF-8.
    pub output: String,
    /// How many bytes of output were dropped beyond the cap.
    pub output_dropped: u64,
    /// The CPU time of the command and everything it waited for (gcc's
    /// `cc1` and `as`), from the kernel's accounting when it was reaped.
    pub cpu: Duration,
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
}

/// A prepared jail: a private root tree with a writable work folder.
pub struct Jail {
    dir: tempfile::TempDir,
    root: PathBuf,
}

impl Jail {
    /// Prepares a new jail tree under the system's temp folder.
    pub fn new() -> Result<Jail, JailError> {
        remove_stale_jails();
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
        for d in ["usr", "dev", "work", "tmp"] {
            let p = root.join(d);
            prep(&p, fs::create_dir_all(&p))?;
        }
        prep(
            &root,
            fs::set_permissions(&root, fs::Permissions::from_mode(0o755)),
        )?;
        for top in ["bin", "lib", "lib64", "sbin"] {
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
        let tmp = root.join("tmp");
        prep(
            &tmp,
            fs::set_permissions(&tmp, fs::Permissions::from_mode(0o1777)),
        )?;
        let work = root.join("work");
        prep(
            &work,
            fs::set_permissions(&work, fs::Permissions::from_mode(0o755)),
        )?;
        if is_root() {
            prep(
                &work,
                std::os::unix::fs::chown(&work, Some(NOBODY), Some(NOBODY)),
            )?;
        }
        Ok(Jail { dir, root })
    }

    /// The work folder as seen from outside (inside the jail it is `/work`).
    pub fn work_dir(&self) -> PathBuf {
        self.root.join("work")
    }

    /// The temporary folder holding the jail (removed on drop).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `argv` (`argv[0]` an absolute path inside the jail) with cwd `/work`.
    pub fn run(&self, argv: &[&str], limits: &JailLimits) -> Result<JailOutput, JailError> {
        let program = argv[0].to_string();
        let spawn_err = |source| JailError::Spawn {
            program: program.clone(),
            source,
        };
        let plan = MountPlan::new(&self.root).map_err(spawn_err)?;
        let (read_end, write_end) = pipe().map_err(spawn_err)?;
        let null = fs::OpenOptions::new()
            .read(true)
            .open("/dev/null")
            .map_err(spawn_err)?;
        let args = CArgs::new(argv).map_err(spawn_err)?;
        let env = CArgs::new(&[
            "PATH=/usr/bin:/bin",
            "TMPDIR=/work",
            "HOME=/work",
            "LC_ALL=C",
            // Reproducible builds: gcc's and clang's `__DATE__` and
            // `__TIME__` say 1 January 1970, whenever a source is built.
            "SOURCE_DATE_EPOCH=0",
            "TZ=UTC",
        ])
        .map_err(spawn_err)?;
        let prog = CString::new(argv[0]).map_err(|_| {
            spawn_err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "NUL in the program",
            ))
        })?;
        let lim = *limits;
        let fds = [
            null.as_raw_fd(),
            write_end.as_raw_fd(),
            write_end.as_raw_fd(),
        ];
        let mut flags = libc::CLONE_NEWNS
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWPID;
        if !plan.as_root {
            flags |= libc::CLONE_NEWUSER;
        }
        let mut body = || -> io::Error {
            let run = || -> Result<(), io::Error> {
                arrange_fds(&fds, None)?;
                // SAFETY: system calls on data prepared before the clone.
                unsafe {
                    check(libc::setpgid(0, 0))?;
                    // Dies with the server, even on kill -9.
                    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                }
                plan.enter()?;
                set_rlimit(libc::RLIMIT_CPU, lim.cpu_secs, lim.cpu_secs + 1)?;
                set_rlimit(libc::RLIMIT_AS, lim.address_space, lim.address_space)?;
                set_rlimit(libc::RLIMIT_FSIZE, lim.file_size, lim.file_size)?;
                set_rlimit(libc::RLIMIT_NOFILE, 64, 64)?;
                set_rlimit(libc::RLIMIT_CORE, 0, 0)?;
                set_rlimit(libc::RLIMIT_NPROC, lim.processes, lim.processes)?;
                plan.drop_privileges()?;
                // SAFETY: as above.
                unsafe {
                    // Changing the user clears the parent-death signal: again.
                    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                    check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
                    libc::execve(prog.as_ptr(), args.as_ptr(), env.as_ptr());
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
        let deadline = Instant::now() + limits.wall;
        let io_err = |source| JailError::Io {
            program: program.clone(),
            source,
        };
        let mut output = Vec::new();
        let mut dropped = 0u64;
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
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    kill_group(pid);
                    let _ = child.wait();
                    return Err(io_err(e));
                }
            }
        }
        // The output is closed (or time is up): whatever is left of the group goes.
        let status = if timed_out {
            kill_group(pid);
            child.wait().map_err(io_err)?;
            None
        } else {
            let st = wait_until(&mut child, deadline).map_err(io_err)?;
            kill_group(pid);
            if st.is_none() {
                child.wait().map_err(io_err)?;
            }
            st
        };
        let exit = match status {
            None => JailExit::WallClock,
            Some(st) => match (st.code(), st.signal()) {
                (Some(c), _) => JailExit::Exited(c),
                (None, Some(s)) => JailExit::Signaled(s),
                _ => JailExit::Exited(-1),
            },
        };
        Ok(JailOutput {
            exit,
            output: String::from_utf8_lossy(&output).into_owned(),
            output_dropped: dropped,
            cpu: child.cpu(),
        })
    }
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
    slash: CString,
    work: CString,
    as_root: bool,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    uid_map_path: CString,
    gid_map_path: CString,
    setgroups_path: CString,
}

impl MountPlan {
    fn new(root: &Path) -> io::Result<MountPlan> {
        let c = |p: &Path| {
            CString::new(p.as_os_str().as_encoded_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))
        };
        // SAFETY: plain syscalls.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Ok(MountPlan {
            root: c(root)?,
            usr_src: c(Path::new("/usr"))?,
            usr_dst: c(&root.join("usr"))?,
            null_src: c(Path::new("/dev/null"))?,
            null_dst: c(&root.join("dev/null"))?,
            slash: c(Path::new("/"))?,
            work: c(Path::new("/work"))?,
            as_root: is_root(),
            uid_map: format!("0 {uid} 1\n").into_bytes(),
            gid_map: format!("0 {gid} 1\n").into_bytes(),
            uid_map_path: c(Path::new("/proc/self/uid_map"))?,
            gid_map_path: c(Path::new("/proc/self/gid_map"))?,
            setgroups_path: c(Path::new("/proc/self/setgroups"))?,
        })
    }

    /// Runs in the child between clone and exec: only system calls.
    fn enter(&self) -> io::Result<()> {
        // The namespaces were made by the clone itself.
        // SAFETY: system calls on valid NUL-terminated strings prepared before the clone.
        unsafe {
            if !self.as_root {
                write_file(&self.setgroups_path, b"deny")?;
                write_file(&self.uid_map_path, &self.uid_map)?;
                write_file(&self.gid_map_path, &self.gid_map)?;
            }
            super::make_mounts_private(&self.slash)?;
            check(libc::mount(
                self.usr_src.as_ptr(),
                self.usr_dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
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
            check(libc::chroot(self.root.as_ptr()))?;
            check(libc::chdir(self.work.as_ptr()))?;
        }
        Ok(())
    }

    fn drop_privileges(&self) -> io::Result<()> {
        if !self.as_root {
            return Ok(());
        }
        // SAFETY: plain syscalls.
        unsafe {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(NOBODY) != 0
                || libc::setuid(NOBODY) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
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
