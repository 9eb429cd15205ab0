//! Whether a bot has come to rest ([`RestProbe`]): what its threads are
//! blocked in, read from `/proc` files kept open.
//!
//! Not here: waiting, freezing or any decision about the bot; the line
//! referee ([`crate::lines`]) asks and decides.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// One thread's `/proc/PID/task/TID` folder and its `syscall` file, open.
#[derive(Debug)]
pub(super) struct TaskFiles {
    dir: std::path::PathBuf,
    pub(super) syscall: fs::File,
}

/// The `syscall` file of every thread of the processes `pids` (those that
/// can be opened), with the thread's folder.
pub(super) fn task_syscall_files(pids: Vec<i32>) -> impl Iterator<Item = TaskFiles> {
    pids.into_iter()
        .filter_map(|pid| fs::read_dir(format!("/proc/{pid}/task")).ok())
        .flat_map(|tasks| tasks.flatten())
        .filter_map(|t| {
            let dir = t.path();
            let syscall = fs::File::open(dir.join("syscall")).ok()?;
            Some(TaskFiles { dir, syscall })
        })
}

/// What one look at a thread found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TaskLook {
    /// Running, in user space, or in a call that ends by itself (a sleep).
    Busy,
    /// Blocked in a call that does not end by itself.
    Blocked,
    /// Waiting for input ([`waits_for_input`], or a `poll` the kernel
    /// restarted after a freeze or a stop).
    WaitsForInput,
}

/// The look at a thread whose `syscall` file reads `syscall`; `wchan`
/// gives its `wchan` file's text, read only for a restarted call made
/// without a timeout.
pub(super) fn look_at(syscall: &str, wchan: impl FnOnce() -> Option<String>) -> TaskLook {
    if waits_for_input(syscall) {
        TaskLook::WaitsForInput
    } else if blocked_for_good(syscall) {
        TaskLook::Blocked
    } else if syscall_nr(syscall) == Some(libc::SYS_restart_syscall)
        && without_timeout(syscall)
        && wchan().is_some_and(|w| in_poll(&w))
    {
        TaskLook::WaitsForInput
    } else {
        TaskLook::Busy
    }
}

/// Whether the call a `syscall` file names was made without a timeout:
/// its third argument, a `poll`'s timeout (an `int`: its low 32 bits),
/// negative. The file shows the registers the call was made with, also
/// while the kernel goes on with it as `restart_syscall`.
fn without_timeout(syscall: &str) -> bool {
    syscall
        .split_whitespace()
        .nth(3)
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .is_some_and(|a| (a as u32 as i32) < 0)
}

/// A `wchan` naming the kernel's wait in `poll`: a freeze (or a stop)
/// interrupts a thread blocked in `poll`, and the kernel goes on with it
/// as `restart_syscall` (`/proc`'s `syscall` file then names that, like a
/// sleep going on), still waiting there. Before, such a thread counted as
/// busy: an honest bot that waits for its input in `poll` and was frozen
/// while its opponent thought never came to rest (red team, issue 38).
/// Only a `poll` without a timeout counts so ([`look_at`]): one with a
/// timeout ends by itself, and counting it as waiting let a bot that
/// prints when its timeout runs out have its line caught or not by
/// whether it was frozen meanwhile (red team, second round); it is waited
/// out, as a sleep is. Where `wchan` reads `0` (a kernel without symbols)
/// such a `poll` counts as busy, as before.
fn in_poll(wchan: &str) -> bool {
    let w = wchan.trim();
    [
        "poll_schedule_timeout",
        "do_sys_poll",
        "do_poll",
        "do_restart_poll",
    ]
    .iter()
    .any(|f| {
        w.strip_prefix(f)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    })
}

/// A thread's `wchan`, read from its folder.
fn wchan_of(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join("wchan")).ok()
}

impl TaskFiles {
    /// The look at this thread, its `syscall` read into `buf` (`None` where
    /// it cannot be read).
    pub(super) fn look(&self, buf: &mut [u8]) -> Option<TaskLook> {
        let s = read_at_start(&self.syscall, buf)?;
        Some(look_at(s, || wchan_of(&self.dir)))
    }
}

/// Looks whether a bot has come to rest: its main thread is blocked in a
/// system call that does not end by itself (not a sleep: `nanosleep`,
/// `clock_nanosleep`, or one of them going on as `restart_syscall`), and a
/// thread of it waits for input (blocked in `read` on its standard input,
/// or in `poll` or `select`, also a `poll` without a timeout going on
/// after a freeze: its `wchan` tells, [`look_at`]) or every thread is
/// blocked so. What it printed before is then in its output pipe, and it
/// prints nothing more until the referee writes to it. Cheap for the
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
    /// The main thread's folder (its `wchan`, for a restarted call).
    main_dir: std::path::PathBuf,
    /// The thread last seen waiting for input.
    reader: std::cell::RefCell<Option<TaskFiles>>,
}

impl RestProbe {
    /// A probe for the bot whose main process is `pid`, its task count in
    /// its control group's `tasks_counter` (`pids.current`, which counts
    /// `others` tasks that are not the bot's: its init), or, without
    /// one, its process's threads (a bot on a machine without the pids
    /// controller: its children are not seen).
    pub fn new(pid: i32, tasks_counter: Option<&Path>, others: u64) -> RestProbe {
        let tasks = match tasks_counter.and_then(|p| fs::File::open(p).ok()) {
            Some(f) => TaskCount::Group(f, others),
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
            main_dir: std::path::PathBuf::from(format!("/proc/{pid}")),
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
            if look_at(s, || wchan_of(&self.main_dir)) == TaskLook::Busy {
                return false;
            }
            let one_task = match &self.tasks {
                TaskCount::Group(f, others) => read_at_start(f, &mut buf)
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .map(|n| n.saturating_sub(*others)),
                TaskCount::Threads(f) => f
                    .as_ref()
                    .and_then(|f| f.read_at(&mut buf, 0).ok())
                    .and_then(|n| stat_threads(&buf[..n])),
                TaskCount::One => Some(1),
            } == Some(1);
            if one_task {
                return true;
            }
        }
        if let Some(t) = self.reader.borrow().as_ref() {
            if let Some(s) = read_at_start(&t.syscall, &mut buf) {
                // On its way back to its input (or still computing).
                if s.starts_with("running") || s.starts_with("-1") {
                    return false;
                }
                if look_at(s, || wchan_of(&t.dir)) == TaskLook::WaitsForInput {
                    return true;
                }
            }
        }
        let mut all_waiting = true;
        for t in task_syscall_files(members()) {
            match t.look(&mut buf) {
                None => continue,
                Some(TaskLook::WaitsForInput) => {
                    *self.reader.borrow_mut() = Some(t);
                    return true;
                }
                Some(TaskLook::Blocked) => {}
                Some(TaskLook::Busy) => all_waiting = false,
            }
        }
        all_waiting
    }
}

/// Where a bot's tasks are counted.
#[derive(Debug)]
enum TaskCount {
    /// Its control group's `pids.current`: every thread of every process,
    /// and that many tasks that are not the bot's (its init).
    Group(fs::File, u64),
    /// Its main process's `stat` (the number of its threads).
    Threads(Option<fs::File>),
    /// Known to be one task.
    One,
}

/// The fields of a `/proc/PID/stat` after the command's name (the state
/// is the first). The name is the process's own choice (`prctl`
/// `PR_SET_NAME`, `/proc/self/comm`): any bytes but NUL, not UTF-8, with
/// `)` and spaces; what the kernel writes after its last `)` is ASCII.
/// Before, the line was read as UTF-8 whole, and a bot that named itself
/// `"\xff"` had no CPU time while it ran.
pub(super) fn stat_fields(stat: &[u8]) -> Option<Vec<&str>> {
    let end = stat.iter().rposition(|&b| b == b')')?;
    let after = std::str::from_utf8(stat.get(end + 2..)?).ok()?;
    Some(after.split_whitespace().collect())
}

/// The threads of a process, from its `stat` line.
pub(super) fn stat_threads(stat: &[u8]) -> Option<u64> {
    stat_fields(stat)?.get(17)?.parse().ok()
}

/// The text of a small `/proc` or control-group file kept open, read anew.
pub(super) fn read_at_start<'a>(f: &fs::File, buf: &'a mut [u8]) -> Option<&'a str> {
    let n = f.read_at(buf, 0).ok()?;
    std::str::from_utf8(&buf[..n]).ok()
}

/// From a task's `syscall` file: blocked in a system call that does not
/// end by itself. Not "running", not "-1 …" (in user space: computing, or
/// stopped there), not a sleep, nor `restart_syscall`: the kernel goes on
/// with a call it restarts with what is left of its timeout (a sleep, a
/// `poll` or a `futex` wait with one) after a stop and `SIGCONT`, so it
/// ends by itself (a bot stopped by `SIGSTOP` mid-`nanosleep` showed it,
/// and was taken for one at rest before its late line).
pub(super) fn blocked_for_good(syscall: &str) -> bool {
    match syscall_nr(syscall) {
        None | Some(-1) => false,
        Some(n) => ![
            libc::SYS_nanosleep,
            libc::SYS_clock_nanosleep,
            libc::SYS_restart_syscall,
        ]
        .contains(&n),
    }
}

/// A task waiting for input: [`reads_stdin`], or blocked in `poll`,
/// `ppoll`, `select` or `pselect6` (whose descriptors cannot be named
/// here: a bot has no other input to wait for).
pub(super) fn waits_for_input(syscall: &str) -> bool {
    let nr = syscall_nr(syscall);
    reads_stdin(syscall)
        || matches!(nr, Some(n) if n == libc::SYS_poll
            || n == libc::SYS_ppoll
            || n == libc::SYS_select
            || n == libc::SYS_pselect6)
}

/// The system call's number in a `syscall` file (`None`: "running").
fn syscall_nr(syscall: &str) -> Option<i64> {
    syscall
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<i64>().ok())
}

/// `/proc/PID/task/TID/syscall` of a task blocked in `read(0, …)`,
/// `readv(0, …)` or `pread64(0, …)`.
pub(super) fn reads_stdin(syscall: &str) -> bool {
    let mut it = syscall.split_whitespace();
    let nr = it.next().and_then(|n| n.parse::<i64>().ok());
    let fd = it.next();
    let reading = matches!(
        nr,
        Some(n) if n == libc::SYS_read || n == libc::SYS_readv || n == libc::SYS_pread64
    );
    reading && fd == Some("0x0")
}
