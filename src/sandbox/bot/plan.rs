//! What a bot's spawn prepares before the clone: the [`Plan`] both
//! children read (descriptors, rlimits, user maps, every mount of the new
//! root as an [`Action`], argv and environment as C strings, the seccomp
//! filter, the stack), built from a [`BotSpec`] with every allocation and
//! path check done here, in the server.
//!
//! Not here: anything that runs in the children (`children.rs`), which may
//! only make system calls on this prepared data.

use std::ffi::CString;
use std::fs;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicI32;
use std::sync::Arc;

use crate::sandbox::cgroup::Group;
use crate::sandbox::exe::Executable;
use crate::sandbox::netns::Netns;
use crate::sandbox::spawn::CArgs;

use super::spec::{
    io_err, BotLimits, BotSpawnError, BotSpec, FirstProcess, NewProcesses, ProcFs, WorkFolder,
    INSIDE_UID,
};

/// Size of the stack the bot runs on before `execve`.
pub(super) const CHILD_STACK: usize = 64 * 1024;

/// Steps of the bot's set-up, for the error message when one fails.
pub(super) const STEPS: &[&str] = &[
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

pub(super) fn step(name: &str) -> i32 {
    STEPS.iter().position(|s| *s == name).unwrap_or(0) as i32
}

/// Everything the two children need, prepared before the clone.
pub(super) struct Plan {
    pub(super) join: Vec<RawFd>,
    /// A network namespace to enter before the clone (else the clone makes one).
    pub(super) netns: Option<RawFd>,
    /// The bot's descriptors, placed at 0, 1, 2, … by the first child:
    /// its three pipes, and for [`FirstProcess::Init`] the init's status
    /// and request pipes at 3 and 4 and the sealed program (if there is
    /// one) at 5.
    pub(super) fds: Vec<RawFd>,
    /// `0, 1, …, fds.len() - 1`: the same descriptors as the bot keeps them.
    pub(super) inner_fds: Vec<RawFd>,
    /// Where both children hold the program to execute (the sealed
    /// program or the init): after `fds`
    /// ([`crate::sandbox::spawn::arrange_fds`] puts it there).
    pub(super) exe_fd: RawFd,
    pub(super) rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    /// The `RLIMIT_NPROC` the bot sets in its own user namespace
    /// ([`TasksCounted::InOwnUserNamespace`]).
    pub(super) nproc_inside: Option<u64>,
    /// The CPU set of the bot (one CPU), if it is pinned.
    pub(super) affinity: Option<rustix::thread::CpuSet>,
    /// A build's toolchain folder, staged by the first child.
    pub(super) toolchain: Option<CString>,
    pub(super) toolchain_stage: CString,
    pub(super) outside_uid: Option<u32>,
    pub(super) uid_map: Vec<u8>,
    pub(super) gid_map: Vec<u8>,
    /// The bot's thread id word: non-zero until the bot execs or exits.
    pub(super) bot_tid: AtomicI32,
    /// 0 while the first child writes the bot's maps, 1 when done, -1 on failure.
    pub(super) go: AtomicI32,
    pub(super) slash: CString,
    pub(super) staging: CString,
    pub(super) staging_opts: CString,
    pub(super) tmpfs: CString,
    pub(super) proc_fs: CString,
    pub(super) proc_opts: CString,
    pub(super) actions: Vec<Action>,
    pub(super) put_old: CString,
    pub(super) old_inside: CString,
    pub(super) work: CString,
    pub(super) prog: CString,
    /// The sealed program to execute instead of `prog` (at `exe_fd` in
    /// both children, close-on-exec; under the init at its descriptor 5,
    /// which the init executes), held until the spawn is over.
    pub(super) exe: Option<Arc<Executable>>,
    /// The jail's init, executed instead of either ([`FirstProcess::Init`];
    /// `argv` then starts with its name).
    pub(super) init: Option<&'static Executable>,
    pub(super) argv: CArgs,
    pub(super) env: CArgs,
    pub(super) filter: &'static [libc::sock_filter],
    /// The filter stacked on `filter` for a program that may not start
    /// processes ([`one_process`]): installed by the bot before its exec
    /// ([`FirstProcess::Program`]), or handed to the init in its `argv[0]`,
    /// which installs it in its child ([`FirstProcess::Init`]).
    pub(super) one_process: Option<&'static [libc::sock_filter]>,
    pub(super) stack: Vec<u8>,
    /// `WorkFolder::Returned`: the bot waits before its last steps until
    /// the server has opened its `/work` (`held` 1 when it waits,
    /// `released` 1 when it may go on).
    pub(super) hold: bool,
    pub(super) held: AtomicI32,
    pub(super) released: AtomicI32,
    /// Set by the bot on failure: (step, errno).
    pub(super) failed_step: AtomicI32,
    pub(super) failed_errno: AtomicI32,
    pub(super) bot_pid: AtomicI32,
}

pub(super) enum Action {
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

pub(super) fn cstr(s: &str) -> Result<CString, BotSpawnError> {
    CString::new(s).map_err(|_| BotSpawnError::BadPath(s.to_string()))
}

pub(super) fn cpath(p: &Path) -> Result<CString, BotSpawnError> {
    CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|_| BotSpawnError::BadPath(p.display().to_string()))
}

/// Where the new root is assembled (a tmpfs over it, in the bot's own
/// mount namespace only).
pub(super) const STAGING: &str = "/tmp";

/// Where the first child shows a build's toolchain folder to the bot, in a
/// mount namespace of its own (the host's `/mnt` is untouched): the bot
/// binds it from there to `/toolchain`. A toolchain under `/root` cannot
/// be reached by the bot's user itself, and a bind from outside the bot's
/// mount namespace is refused by the kernel.
pub(super) const TOOLCHAIN_STAGE: &str = "/mnt";

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

/// Whether the bot of `spec` is to be one process (its threads
/// included): it may start processes only where a control group counts
/// their CPU ([`NewProcesses::WhereCounted`]) and `group` does not.
pub(super) fn one_process(spec: &BotSpec<'_>, group: Option<&Group>) -> bool {
    spec.processes == NewProcesses::WhereCounted && !group.is_some_and(Group::counts_cpu)
}

pub(super) fn check_relative(p: &str) -> Result<(), BotSpawnError> {
    let bad = p.is_empty()
        || p.starts_with('/')
        || p.contains('\0')
        || p.split('/').any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        return Err(BotSpawnError::BadPath(p.to_string()));
    }
    Ok(())
}

/// Where the kernel counts a bot's tasks (threads and processes) for its
/// `RLIMIT_NPROC`, which it counts per uid in each user namespace, and
/// checks up the chain of namespaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TasksCounted {
    /// The server is root: the bot's uid outside is its own, so the
    /// count of that uid is exactly the bot's; set by the first child.
    ByOwnUid,
    /// The server is not root: the bot's uid outside is the server's,
    /// which counts the server's threads and every other bot's too; the
    /// limit is set inside the bot's own user namespace (by the bot before
    /// its exec), where the count is the bot's tasks alone. Set before the
    /// clone it would also cap the namespace's level above (the kernel
    /// takes the creator's limit for it), where every task of the
    /// server's uid counts.
    InOwnUserNamespace,
}

/// The rlimits the first child sets for a bot (soft and hard alike);
/// `RLIMIT_NPROC` among them only for [`TasksCounted::ByOwnUid`] (see
/// [`nproc_inside`] for the other). Without a memory controller the
/// address space is limited instead. `RLIMIT_RTPRIO` and `RLIMIT_NICE`
/// are 0 whatever the server's own limits: no real-time policy and no
/// priority above its opponent's.
pub(super) fn bot_rlimits(
    lim: &BotLimits,
    count: TasksCounted,
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
    if count == TasksCounted::ByOwnUid {
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

/// The `RLIMIT_NPROC` the bot sets itself in its own user namespace, for
/// [`TasksCounted::InOwnUserNamespace`]: its tasks there (the init's among
/// them where it has one), nothing else counts in that namespace.
pub(super) fn nproc_inside(lim: &BotLimits, count: TasksCounted) -> Option<u64> {
    (count == TasksCounted::InOwnUserNamespace).then_some(lim.processes)
}

impl Plan {
    pub(super) fn new(
        spec: &BotSpec<'_>,
        group: Option<&Group>,
        netns: Option<&Netns>,
        fds: &[RawFd],
        outside_uid: Option<u32>,
    ) -> Result<Plan, BotSpawnError> {
        let mut lim = spec.limits;
        if spec.first == FirstProcess::Init {
            lim.processes += 1;
        }
        let controllers = group.map(|g| g.controllers()).unwrap_or_default();
        let count = match outside_uid {
            Some(_) => TasksCounted::ByOwnUid,
            None => TasksCounted::InOwnUserNamespace,
        };
        let rlimits = bot_rlimits(&lim, count, controllers.memory);
        let nproc_inside = nproc_inside(&lim, count);
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
        let mut fds = fds.to_vec();
        let one_process =
            one_process(spec, group).then(crate::sandbox::bot_seccomp::one_process_filter);
        let (init, argv) = match spec.first {
            FirstProcess::Program => (None, CArgs::new(spec.argv)),
            FirstProcess::Init => {
                let init = crate::sandbox::jail::init_executable().map_err(io_err("the init"))?;
                // The sealed program goes to the init as its descriptor 5
                // (after the three pipes and its two), which it executes.
                if let Some(program) = &exe {
                    debug_assert_eq!(fds.len(), 5, "the init's program descriptor is its 5");
                    fds.push(program.fd());
                }
                // The init's argv[0] carries the filter its child installs.
                let name = match one_process {
                    Some(f) => format!(
                        "{}:{}",
                        crate::sandbox::jail::INIT_NAME,
                        crate::sandbox::bot_seccomp::filter_hex(f)
                    ),
                    None => crate::sandbox::jail::INIT_NAME.to_string(),
                };
                let mut argv = vec![name];
                argv.extend(spec.argv.iter().cloned());
                (Some(init), CArgs::new(&argv))
            }
        };
        Ok(Plan {
            join: group.map(|g| g.join_fds()).unwrap_or_default(),
            netns: netns.map(Netns::fd),
            inner_fds: (0..fds.len() as RawFd).collect(),
            exe_fd: fds.len() as RawFd,
            fds,
            rlimits,
            nproc_inside,
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
            init,
            argv: argv.map_err(io_err("arguments"))?,
            env: CArgs::new(&env).map_err(io_err("environment"))?,
            filter: crate::sandbox::bot_seccomp::bot_filter(),
            one_process: match spec.first {
                FirstProcess::Program => one_process,
                FirstProcess::Init => None,
            },
            stack: vec![0u8; CHILD_STACK],
            hold: spec.work == WorkFolder::Returned,
            held: AtomicI32::new(0),
            released: AtomicI32::new(0),
            failed_step: AtomicI32::new(0),
            failed_errno: AtomicI32::new(0),
            bot_pid: AtomicI32::new(0),
        })
    }
}
