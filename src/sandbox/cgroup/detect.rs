//! Finding, once per process, which control groups this machine offers
//! ([`Cgroups::detect`]): the version, the controllers, the mount options
//! that cost time, where the server's groups go; and removing the groups a
//! dead server left.
//!
//! Not here: making, reading, freezing or pooling a group (`cgroup.rs`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{kill_frozen_v1, kill_members, Cgroups, Controllers, CGROUP_ROOT_VAR};
use crate::sandbox::process_alive;

static DETECTED: OnceLock<Cgroups> = OnceLock::new();

impl Cgroups {
    /// Detects (once per process) what this machine offers, and logs it:
    /// the hierarchies mounted at `/sys/fs/cgroup`, or at the directory
    /// [`CGROUP_ROOT_VAR`] names.
    pub fn detect() -> &'static Cgroups {
        DETECTED.get_or_init(|| {
            let root = std::env::var_os(CGROUP_ROOT_VAR)
                .filter(|r| !r.is_empty())
                .map_or_else(|| PathBuf::from("/sys/fs/cgroup"), PathBuf::from);
            let found = detect_at(&root);
            eprintln!("knobeln: bot sandbox: {}", found.describe());
            found
        })
    }

    pub fn controllers(&self) -> Controllers {
        match self {
            Cgroups::V2 { controllers, .. } => *controllers,
            Cgroups::V1 {
                memory,
                pids,
                cpuacct,
                ..
            } => Controllers {
                memory: memory.is_some(),
                pids: pids.is_some(),
                cpu: cpuacct.is_some(),
                // The freezer hierarchy, or else stopped by signals, member
                // by member (see Group::freeze).
                freezer: true,
            },
            Cgroups::None { .. } => Controllers::default(),
        }
    }

    /// Whether a frozen bot is held by the kernel (v2 `cgroup.freeze`, the
    /// v1 freezer), which no signal undoes, rather than by `SIGSTOP`.
    pub fn freezes_in_kernel(&self) -> bool {
        match self {
            Cgroups::V2 { controllers, .. } => controllers.freezer,
            Cgroups::V1 { freezer, .. } => freezer.is_some(),
            Cgroups::None { .. } => false,
        }
    }

    /// One line for the log and `knobeln languages`.
    pub fn describe(&self) -> String {
        let c = self.controllers();
        let mut fallbacks = Vec::new();
        if !c.memory {
            fallbacks.push("memory by RLIMIT_AS (or the runtime's own heap limit)");
        }
        if !c.pids {
            fallbacks.push("processes by RLIMIT_NPROC");
        }
        if !c.cpu {
            fallbacks.push(
                "a match's bot one process (no fork), its CPU the kernel's count of that process",
            );
        }
        if !c.freezer {
            fallbacks.push(
                "no freezer: a match's bot, one process, is stopped by SIGSTOP while not \
                 on turn (one that resumes itself fails for running while stopped)",
            );
        }
        let fb = if fallbacks.is_empty() {
            String::new()
        } else {
            format!("; falling back to rlimits: {}", fallbacks.join(", "))
        };
        match self {
            Cgroups::V2 {
                base,
                favor_dynmods,
                cpu_splits,
                ..
            } => format!(
                "cgroup v2 under {} (memory {}, pids {}, cpu {}, freezer {}){fb}{}{}",
                base.display(),
                yes(c.memory),
                yes(c.pids),
                yes(c.cpu),
                yes(c.freezer),
                if *favor_dynmods {
                    ""
                } else {
                    "; not mounted with favordynmods: a bot's start may wait about a \
                     scheduler tick for the kernel when starts are sparse \
                     (mount -o remount,favordynmods /sys/fs/cgroup)"
                },
                if *cpu_splits {
                    "; the cpu controller is on for the server's group's children: \
                     referee and bots are scheduled in different groups, about 18 % \
                     more per round trip (turn it off there: \
                     echo -cpu > cgroup.subtree_control)"
                } else {
                    ""
                }
            ),
            Cgroups::V1 {
                cpuacct_with_cpu,
                freezer,
                ..
            } => format!(
                "cgroup v1 (memory {}, pids {}, cpuacct {}, {}){fb}{}",
                yes(c.memory),
                yes(c.pids),
                yes(c.cpu),
                if freezer.is_some() {
                    "freezer yes"
                } else {
                    "no freezer hierarchy: a bot not on turn is stopped by SIGSTOP, \
                     which it can undo (it then fails for running while stopped); \
                     mount the freezer hierarchy"
                },
                if *cpuacct_with_cpu {
                    "; cpuacct is mounted with cpu: each bot is a scheduler group of \
                     its own, about 18 % more per round trip (mount cpuacct on its \
                     own, or use cgroup v2)"
                } else {
                    ""
                }
            ),
            Cgroups::None { why } => format!("no control groups ({why}){fb}"),
        }
    }
}

pub(super) fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

pub(super) fn detect_at(root: &Path) -> Cgroups {
    if root.join("cgroup.controllers").exists() {
        return detect_v2(root);
    }
    let v1 = |name: &str| -> Option<PathBuf> {
        let h = root.join(name);
        if !h.join("cgroup.procs").exists() {
            return None;
        }
        let base = h.join("knobeln");
        match fs::create_dir(&base) {
            Ok(()) => Some(base),
            // Made before (by root, say): usable only if this process may
            // make groups in it (a server that is not root may not).
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                use rustix::fs::Access;
                rustix::fs::access(&base, Access::WRITE_OK | Access::EXEC_OK)
                    .is_ok()
                    .then_some(base)
            }
            Err(_) => None,
        }
    };
    let memory = v1("memory");
    let pids = v1("pids");
    let cpuacct = v1("cpuacct").or_else(|| v1("cpu,cpuacct"));
    let freezer = v1("freezer");
    let cpuacct_with_cpu = cpuacct
        .as_ref()
        .and_then(|b| b.parent())
        .is_some_and(|h| h.join("cpu.shares").exists());
    if memory.is_none() && pids.is_none() && cpuacct.is_none() {
        return Cgroups::None {
            why: format!("no writable cgroup v1 hierarchy under {}", root.display()),
        };
    }
    // The freezer first: a frozen member of a dead server's group dies of
    // the SIGKILL only once it is thawed.
    for base in [&freezer, &memory, &pids, &cpuacct].into_iter().flatten() {
        remove_stale_groups(base);
    }
    Cgroups::V1 {
        memory,
        pids,
        cpuacct,
        freezer,
        cpuacct_with_cpu,
    }
}

/// The v2 controllers the bots' groups get, of those `available`: memory
/// and pids. Not `cpu`: every v2 group has `cpu.stat` (the CPU time of its
/// whole tree) without it, and with it each bot's group would be a
/// scheduler group of its own, apart from the referee's: every switch
/// between them crosses groups, about 18 % more per round trip (measured
/// here with a pipe ping-pong between two v1 `cpu` groups: 4.1 vs 4.9 us).
pub(super) fn v2_controllers(available: &str) -> Vec<&'static str> {
    ["memory", "pids"]
        .into_iter()
        .filter(|c| available.split_whitespace().any(|a| a == *c))
        .collect()
}

/// Whether a `cgroup.subtree_control` text turns the `cpu` controller on.
pub(super) fn enables_cpu(subtree_control: &str) -> bool {
    subtree_control.split_whitespace().any(|c| c == "cpu")
}

pub(super) fn detect_v2(root: &Path) -> Cgroups {
    let own = fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("0::").map(|p| p.to_string()))
        })
        .unwrap_or_else(|| "/".to_string());
    let own_dir = root.join(own.trim_start_matches('/'));
    let available = fs::read_to_string(own_dir.join("cgroup.controllers")).unwrap_or_default();
    let enable = v2_controllers(&available);
    if !enable.is_empty() && enable_controllers(&own_dir, &enable).is_err() {
        // Processes in our own group: move the server into a leaf, then the
        // group may hand controllers to children.
        let leaf = own_dir.join("knobeln-server");
        let _ = fs::create_dir_all(&leaf)
            .and_then(|()| fs::write(leaf.join("cgroup.procs"), b"0"))
            .and_then(|()| enable_controllers(&own_dir, &enable));
    }
    let base = own_dir.join(format!("knobeln-bots-{}", std::process::id()));
    if let Err(e) = fs::create_dir_all(&base) {
        return Cgroups::None {
            why: format!("cannot create {}: {e}", base.display()),
        };
    }
    let _ = enable_controllers(&base, &enable);
    // An earlier version turned `cpu` on in our own group; off again there
    // (never at the root: the system's slices may use it).
    let own_control = own_dir.join("cgroup.subtree_control");
    if own_dir != root && enables_cpu(&fs::read_to_string(&own_control).unwrap_or_default()) {
        let _ = fs::write(&own_control, "-cpu");
    }
    let cpu_splits = enables_cpu(&fs::read_to_string(&own_control).unwrap_or_default());
    let enabled = fs::read_to_string(base.join("cgroup.subtree_control")).unwrap_or_default();
    let on = |c: &str| enabled.split_whitespace().any(|a| a == c);
    if let Some(parent) = base.parent() {
        remove_stale_groups_v2(parent);
    }
    Cgroups::V2 {
        controllers: Controllers {
            memory: on("memory"),
            pids: on("pids"),
            // cpu.stat (usage_usec) is there in every v2 group.
            cpu: true,
            // cgroup.freeze is there in every non-root group (Linux 5.2).
            freezer: base.join("cgroup.freeze").exists(),
        },
        base,
        favor_dynmods: favors_dynmods(
            &fs::read_to_string("/proc/self/mounts").unwrap_or_default(),
            root,
        ),
        cpu_splits,
    }
}

/// Whether the cgroup2 mount at `root` has `favordynmods` (in the text of
/// `/proc/self/mounts`). Joining a v2 group (`cgroup.procs`) takes the
/// kernel's global lock for writing; unless the hierarchy favours dynamic
/// changes, entering it waits for an RCU grace period (about 12 ms on a
/// 250 Hz kernel) whenever no group changed for a few ticks.
pub(super) fn favors_dynmods(mounts: &str, root: &Path) -> bool {
    mounts.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() >= 4
            && Path::new(f[1]) == root
            && f[2] == "cgroup2"
            && f[3].split(',').any(|o| o == "favordynmods")
    })
}

pub(super) fn enable_controllers(dir: &Path, which: &[&str]) -> io::Result<()> {
    let line: Vec<String> = which.iter().map(|c| format!("+{c}")).collect();
    fs::write(dir.join("cgroup.subtree_control"), line.join(" "))
}

/// Removes groups of servers that are no longer running (named `PID-N`).
pub(super) fn remove_stale_groups(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !process_alive(pid) {
            kill_frozen_v1(&e.path());
            kill_members(&e.path());
            let _ = fs::remove_dir(e.path());
        }
    }
}

pub(super) fn remove_stale_groups_v2(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("knobeln-bots-"))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !process_alive(pid) {
            if let Ok(groups) = fs::read_dir(e.path()) {
                for g in groups.flatten() {
                    if g.path().is_dir() {
                        kill_members(&g.path());
                        let _ = fs::remove_dir(g.path());
                    }
                }
            }
            let _ = fs::remove_dir(e.path());
        }
    }
}
