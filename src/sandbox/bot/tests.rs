//! The unit tests of the bot sandbox that need no sandbox: reading a task's
//! system call, telling rest from sleep and work, the rlimits, program paths.
//! The sandbox's properties are tested on real bots in `tests/it`.

use super::*;
use rest::{look_at, TaskLook};

#[test]
fn a_task_reading_stdin_is_recognised() {
    assert!(reads_stdin(
        "0 0x0 0x55d0c8a4e2a0 0x1000 0x0 0x0 0x0 0x7ffd 0x7f"
    ));
    assert!(!reads_stdin(
        "0 0x3 0x55d0c8a4e2a0 0x1000 0x0 0x0 0x0 0x7ffd 0x7f"
    ));
    assert!(!reads_stdin("230 0x1 0x0 0x7ffd 0x0 0x0 0x0 0x7ffd 0x7f"));
    assert!(!reads_stdin("running"));
}

#[test]
fn waiting_for_input_and_resting_are_told_from_sleeping_and_computing() {
    let read0 = "0 0x0 0x55d0c8a4e2a0 0x1000 0x0 0x0 0x0 0x7ffd 0x7f";
    let poll = "7 0x7ffd 0x1 0xffffffff 0x0 0x0 0x0 0x7ffd 0x7f";
    let futex = "202 0x7f 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f";
    let sleep = "230 0x1 0x0 0x7ffd 0x0 0x0 0x0 0x7ffd 0x7f";
    assert!(waits_for_input(read0) && waits_for_input(poll));
    assert!(!waits_for_input(futex) && !waits_for_input(sleep));
    // At rest: blocked in a call that does not end by itself.
    assert!(blocked_for_good(read0) && blocked_for_good(futex));
    for busy in [
        sleep,
        "35 0x7ffd 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f",
        // `restart_syscall`: a sleep going on after a stop and `SIGCONT`.
        "219 0x0 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f",
        "running",
        "-1 0x7ffd 0x4011",
    ] {
        assert!(!blocked_for_good(busy), "{busy}");
    }
}

/// A call the kernel restarted (`restart_syscall`) is a wait for input
/// only where the thread's `wchan` names `poll`'s wait: a `poll` goes on
/// so after a freeze; a sleep goes on so too, and ends by itself.
#[test]
fn a_restarted_poll_waits_for_input_and_a_restarted_sleep_does_not() {
    let restarted = "219 0x7ffd 0x1 0xffffffff 0x0 0x0 0x0 0x7ffd 0x7f";
    for wchan in [
        "poll_schedule_timeout.constprop.0",
        "poll_schedule_timeout",
        "do_sys_poll",
    ] {
        let look = look_at(restarted, || Some(wchan.to_string()));
        assert_eq!(look, TaskLook::WaitsForInput, "{wchan}");
    }
    for wchan in [
        "do_syscall_64",
        "hrtimer_nanosleep",
        "futex_wait_queue",
        "0",
        "poll_x",
    ] {
        let look = look_at(restarted, || Some(wchan.to_string()));
        assert_eq!(look, TaskLook::Busy, "{wchan}");
    }
    assert_eq!(look_at(restarted, || None), TaskLook::Busy);
    // A `poll` with a timeout ends by itself: waited out, whatever its
    // `wchan` (only the timeout's low 32 bits count: it is an `int`).
    let poll_wchan = || Some("poll_schedule_timeout.constprop.0".to_string());
    let timed = "219 0x7ffd 0x1 0x186a0 0x0 0x0 0x0 0x7ffd 0x7f";
    assert_eq!(look_at(timed, poll_wchan), TaskLook::Busy);
    let wide = "219 0x7ffd 0x1 0xffffffff00000064 0x0 0x0 0x0 0x7ffd 0x7f";
    assert_eq!(look_at(wide, poll_wchan), TaskLook::Busy);
    let negative = "219 0x7ffd 0x1 0x00000000fffffffe 0x0 0x0 0x0 0x7ffd 0x7f";
    assert_eq!(look_at(negative, poll_wchan), TaskLook::WaitsForInput);
    // Only a restarted call has its `wchan` read.
    let read0 = "0 0x0 0x55d0c8a4e2a0 0x1000 0x0 0x0 0x0 0x7ffd 0x7f";
    let futex = "202 0x7f 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f";
    let unread = || -> Option<String> { panic!("wchan read") };
    assert_eq!(look_at(read0, unread), TaskLook::WaitsForInput);
    assert_eq!(look_at(futex, unread), TaskLook::Blocked);
    assert_eq!(look_at("running", unread), TaskLook::Busy);
}

/// A real process blocked in `poll` on its input, stopped and continued
/// (what a freeze does to it too: the kernel goes on with the call as
/// `restart_syscall`), is at rest; one in a sleep, stopped and continued,
/// is not. Before, the first was taken for busy: an honest bot that
/// waits in `poll` never came to rest after a freeze, and failed.
#[test]
fn a_process_in_poll_stays_at_rest_after_a_stop_and_a_sleeping_one_does_not() {
    use std::process::{Command, Stdio};
    let after_stop = |case: &Case| -> (bool, String) {
        let mut child = Command::new("python3")
            .args(["-c", &case.script])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let probe = RestProbe::new(pid, None, 0);
        wait_until_blocked_in(pid, case.blocks_in);
        // SAFETY: signals to our own child.
        unsafe {
            libc::kill(pid, libc::SIGSTOP);
        }
        wait_until(pid, "stopped", "stat", |stat| state_of(stat) == Some('T'));
        unsafe {
            libc::kill(pid, libc::SIGCONT);
        }
        // Continued, it goes on with its call: as `restart_syscall`, or
        // as the call again (a sleep until a time, Python's). Looked at
        // only once it sleeps again: a process stopped, or continued and
        // not yet run, shows in its `syscall` file the call it stopped
        // in, so a look then found it "blocked again", and the next look
        // found it running on its way back into the call.
        wait_until(pid, "asleep again", "stat", |stat| {
            state_of(stat) == Some('S')
        });
        let (restarted, again) = (
            format!("{} ", libc::SYS_restart_syscall),
            format!("{} ", case.blocks_in),
        );
        wait_until(
            pid,
            "blocked again after its continue",
            "syscall",
            |syscall| {
                syscall.starts_with(&restarted)
                    || (case.goes_on_as == Restart::Either && syscall.starts_with(&again))
            },
        );
        let seen = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
        let rest = probe.at_rest(|| vec![pid]);
        let _ = child.kill();
        let _ = child.wait();
        (rest, seen)
    };
    let poll = |timeout: &str| {
        format!("import select\np = select.poll()\np.register(0, select.POLLIN)\np.poll({timeout})")
    };
    let cases = [
        Case {
            what: "in poll",
            script: poll(""),
            blocks_in: libc::SYS_poll,
            goes_on_as: Restart::RestartSyscall,
            at_rest: true,
        },
        Case {
            what: "asleep",
            script: "import time\ntime.sleep(100)".to_string(),
            blocks_in: libc::SYS_clock_nanosleep,
            goes_on_as: Restart::Either,
            at_rest: false,
        },
        // A `poll` with a timeout, restarted, ends by itself: not at rest
        // (red team: counted as waiting, a bot printing when it runs out
        // had its line caught or not by whether a freeze came in between).
        Case {
            what: "in a timed poll",
            script: poll("100000"),
            blocks_in: libc::SYS_poll,
            goes_on_as: Restart::RestartSyscall,
            at_rest: false,
        },
    ];
    for case in cases {
        let (rest, seen) = after_stop(&case);
        assert_eq!(rest, case.at_rest, "{}, restarted: {seen}", case.what);
    }
}

/// The state letter of a `/proc/PID/stat` line (after the name, which may
/// hold anything).
fn state_of(stat: &str) -> Option<char> {
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
}

/// A process of [`a_process_in_poll_stays_at_rest_after_a_stop_and_a_sleeping_one_does_not`].
struct Case {
    what: &'static str,
    script: String,
    /// The call it is blocked in when it is stopped.
    blocks_in: i64,
    goes_on_as: Restart,
    /// Whether the probe finds it at rest after its continue.
    at_rest: bool,
}

/// How a process stopped in a blocking call goes on with it once continued
/// (the test waits until it is blocked so again).
#[derive(PartialEq)]
enum Restart {
    /// As `restart_syscall`.
    RestartSyscall,
    /// As `restart_syscall` or as the call again (Python's sleep until a
    /// time).
    Either,
}

/// Waits until process `pid` is blocked in system call `nr` (its
/// `/proc/PID/syscall` names it), for at most 30 s: a process just started
/// may take long to get there on a loaded machine, where a fixed wait of
/// 300 ms had a test look at it still starting (a CI run beside a cold
/// build failed so), and one continued after a stop to go on with its
/// call.
fn wait_until_blocked_in(pid: i32, nr: i64) {
    let want = format!("{nr} ");
    wait_until(
        pid,
        &format!("blocked in call {nr}"),
        "syscall",
        |syscall| syscall.starts_with(&want),
    );
}

/// Waits until `holds` of process `pid`'s `/proc/PID/<file>`, for at most
/// 30 s (`what` names it if it never does).
fn wait_until(pid: i32, what: &str, file: &str, holds: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let path = format!("/proc/{pid}/{file}");
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if holds(&text) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "process {pid} never {what}: {file} {text}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_process_is_at_rest_in_read_and_not_while_it_sleeps_or_computes() {
    use std::process::{Command, Stdio};
    // (`Some(nr)`: looked at once blocked in call `nr`, however long the
    // shell takes to get there on a loaded machine.)
    let at_rest_within = |script: &str, wait: Duration, blocks_in: Option<i64>| -> bool {
        let mut child = Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let probe = RestProbe::new(child.id() as i32, None, 0);
        if let Some(nr) = blocks_in {
            wait_until_blocked_in(child.id() as i32, nr);
        }
        std::thread::sleep(wait);
        let rest = probe.at_rest(|| vec![child.id() as i32]);
        let _ = child.kill();
        let _ = child.wait();
        rest
    };
    let settle = Duration::from_millis(300);
    assert!(
        at_rest_within("read x", settle, Some(libc::SYS_read)),
        "blocked reading its input"
    );
    assert!(
        !at_rest_within("exec sleep 5", settle, None),
        "asleep: it wakes by itself"
    );
    assert!(
        !at_rest_within("while :; do :; done", settle, None),
        "computing"
    );
}

#[test]
fn a_bot_may_not_use_real_time_priorities_whatever_the_servers_limits() {
    for count in [TasksCounted::ByOwnUid, TasksCounted::InOwnUserNamespace] {
        for memory in [false, true] {
            let r = bot_rlimits(&BotLimits::default(), count, memory);
            assert!(r.contains(&(libc::RLIMIT_RTPRIO, 0)), "{r:?}");
            assert!(r.contains(&(libc::RLIMIT_NICE, 0)), "{r:?}");
        }
    }
}

#[test]
fn program_paths_stay_inside_the_bot_folder() {
    for bad in ["", "/etc/x", "../x", "a/../b", "a//b", "./a", "a\0b"] {
        assert!(check_relative(bad).is_err(), "{bad:?}");
    }
    for good in ["bot", "Main.class", "pkg/Main.class"] {
        assert!(check_relative(good).is_ok(), "{good:?}");
    }
}

/// A one-process bot's stop holds once a thread of it has taken the stop
/// (`T`), even while another still waits for a CPU (`R`): the first thread
/// that takes it sets it pending in every other, which takes it before its
/// next instruction, so waiting for such a thread waits for nothing the
/// bot could run. Here the bot's main thread, asleep in its read on CPU 0,
/// is woken by the process's stop while a real-time thread of the test's
/// own spins on that CPU for 400 ms, and its four spinning threads on CPU 1
/// take their own stops: `held` says so within 200 ms while the main
/// thread still waits (it is checked to be `R` then, so the case is the
/// one meant). Before, a stop waited for every thread found `R`, here
/// until the real-time thread let the main one run (a bot's thread at
/// `SCHED_IDLE` or nice 19 behind its own spinning threads held each of
/// its stops off so, at no CPU, up to `FREEZE_HOLD_WAIT`: red team).
#[test]
fn a_stop_holds_once_a_thread_took_it_while_another_still_waits_for_a_cpu() {
    let _cpu = crate::sandbox::one_cpu_bound_test_at_a_time();
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("waiter.c");
    fs::write(
        &source,
        "#define _GNU_SOURCE\n#include <pthread.h>\n#include <sched.h>\n#include <unistd.h>\n\
         static void *spin(void *a) { (void)a; volatile unsigned long n = 0; for (;;) n++; }\n\
         int main(void) { cpu_set_t one; CPU_ZERO(&one); CPU_SET(1, &one);\n\
         pthread_attr_t at; pthread_attr_init(&at);\n\
         pthread_attr_setaffinity_np(&at, sizeof one, &one);\n\
         for (int i = 0; i < 4; i++) { pthread_t t; pthread_create(&t, &at, spin, 0); }\n\
         CPU_ZERO(&one); CPU_SET(0, &one); sched_setaffinity(0, sizeof one, &one);\n\
         char c; return read(0, &c, 1) < 0; }\n",
    )
    .unwrap();
    let exe = built(&source);
    let pin = |cpus: &[usize]| {
        let mut set = rustix::thread::CpuSet::new();
        for &c in cpus {
            set.set(c);
        }
        rustix::thread::sched_setaffinity(None, &set).unwrap();
    };
    // This thread looks from CPU 1, never behind the real-time one.
    struct Unpin(rustix::thread::CpuSet);
    impl Drop for Unpin {
        fn drop(&mut self) {
            let _ = rustix::thread::sched_setaffinity(None, &self.0);
        }
    }
    let _unpin = Unpin(rustix::thread::sched_getaffinity(None).unwrap());
    pin(&[1]);
    let child = Killed(Command::new(&exe).stdin(Stdio::piped()).spawn().unwrap());
    let pid = child.0.id() as i32;
    let state_of = |tid: i32| -> Option<String> {
        let stat = fs::read(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
        Some(stat_fields(&stat)?.first()?.to_string())
    };
    let started = std::time::Instant::now();
    while fs::read_dir(format!("/proc/{pid}/task")).unwrap().count() < 5
        || state_of(pid).as_deref() != Some("S")
    {
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    let program = Program::pin(pid, None).unwrap();
    let spinning = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let hog = scope.spawn(|| {
            pin(&[0]);
            let param = libc::sched_param { sched_priority: 1 };
            // SAFETY: a plain system call on this thread.
            let set = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
            assert_eq!(set, 0, "the tests run as root, where SCHED_FIFO is allowed");
            spinning.store(true, Ordering::SeqCst);
            let from = std::time::Instant::now();
            while from.elapsed() < Duration::from_millis(400) {
                std::hint::spin_loop();
            }
        });
        while !spinning.load(Ordering::SeqCst) {
            assert!(!hog.is_finished(), "the real-time thread ended first");
            std::thread::sleep(Duration::from_micros(200));
        }
        std::thread::sleep(Duration::from_millis(10));
        assert!(program.stop());
        let asked = std::time::Instant::now();
        while program.held() != Held::Held {
            assert!(
                asked.elapsed() < Duration::from_millis(200),
                "not held while the main thread waits for its CPU: {:?}",
                state_of(pid)
            );
            std::thread::sleep(Duration::from_micros(200));
        }
        assert_eq!(
            state_of(pid).as_deref(),
            Some("R"),
            "the main thread was to wait for its CPU"
        );
        hog.join().unwrap();
    });
    assert!(program.signal(libc::SIGCONT));
}

/// A one-process bot's CPU count is its process CPU clock, to the
/// nanosecond as the scheduler counted it: a program that computed 15 ms
/// and sleeps is counted 15 ms (within 1 ms of the clock the test reads),
/// not its stat's ticks, which cut `utime` and `stime` to whole 10 ms each
/// (10 ms here, and up to 20 ms short: red team, reasoned, a bot could run
/// that much past `FROZEN_SLACK` while stopped unseen). Reaped, it is
/// counted no more.
#[test]
fn a_one_process_bots_cpu_is_counted_to_the_nanosecond_not_in_ticks() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("fifteen.c");
    fs::write(
        &source,
        "#include <time.h>\n#include <unistd.h>\n\
         static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);\n\
         return t.tv_sec + t.tv_nsec * 1e-9; }\n\
         int main(void) { volatile unsigned long n = 0; while (cpu() < 0.015) n++;\n\
         char c; return read(0, &c, 1) < 0; }\n",
    )
    .unwrap();
    let exe = built(&source);
    let mut child = Killed(Command::new(&exe).stdin(Stdio::piped()).spawn().unwrap());
    let pid = child.0.id() as i32;
    let program = Program::pin(pid, None).unwrap();
    let started = std::time::Instant::now();
    while cpu(pid) < Duration::from_millis(15) || program.held() != Held::Held {
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(5));
    }
    let (counted, clock) = (program.cpu().unwrap(), cpu(pid));
    assert!(
        counted.abs_diff(clock) < Duration::from_millis(1),
        "counted {counted:?}, its clock {clock:?}"
    );
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert_eq!(program.cpu(), None, "a reaped program is counted no more");
}

/// A process names itself as it likes (`prctl(PR_SET_NAME)`, any bytes
/// but NUL): a stat line whose name is not UTF-8 and holds `) ` still
/// gives its CPU time, parent and threads, read past the name's last
/// `)`. Before, the line was read as UTF-8 whole: such a bot without a
/// control group had no CPU time while it ran.
#[test]
fn a_stat_line_whose_name_is_no_utf8_still_gives_its_numbers() {
    let mut line = b"4242 (\xff) 0 (\xfe".to_vec();
    line.extend_from_slice(
        b") R 7 4242 4242 0 -1 4194304 100 0 0 0 300 200 5 5 20 0 3 0 1000 1000 100 \n",
    );
    assert!(std::str::from_utf8(&line).is_err());
    // SAFETY: plain libc call.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    assert_eq!(
        super::stat_cpu_time(&line),
        Some(Duration::from_millis(510 * 1000 / hz))
    );
    assert_eq!(super::stat_ppid(&line), Some(7));
    assert_eq!(super::rest::stat_threads(&line), Some(3));
}

/// The program gcc builds from C file `source`, beside it.
fn built(source: &std::path::Path) -> std::path::PathBuf {
    let exe = source.with_extension("");
    let status = std::process::Command::new("gcc")
        .args(["-O1", "-pthread", "-o"])
        .arg(&exe)
        .arg(source)
        .status()
        .unwrap();
    assert!(status.success());
    exe
}

/// Killed and reaped however the test ends (a stopped process left behind
/// would hold the test's output open).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Process `pid`'s CPU time, every thread's, to the nanosecond (its CPU
/// clock).
fn cpu(pid: i32) -> Duration {
    super::process_cpu_clock(pid).expect("the process's CPU clock")
}

/// A one-process bot's stop (`Program::stop`): the process's `SIGSTOP`,
/// and each thread on a CPU or waiting for one its own, through a pidfd of
/// that thread, at most `THREAD_STOPS` of them, whatever the bot's threads.
/// The process's signal wakes one thread, the main one asleep in its read,
/// which stops the others only when it runs; here it has the lowest
/// priority a thread may take for itself (nice 19) behind threads spinning
/// on its one CPU, so with the process's signal alone the spinning threads
/// ran on until it got the CPU (the test fails so: more than half of
/// `FROZEN_SLACK`, the bound here; `SCHED_IDLE` would make it wait longer,
/// but then, once the others stop, wait on for any other work of the CPU). With their own
/// signals they stop at once, and what the bot computes from the stop to
/// the kernel's report of it held (its CPU clock, to the nanosecond) stays
/// far below (the main thread at nice 19 may wait seconds for its CPU
/// where the CI keeps it busy: the hold is reported once a thread has
/// taken the stop, see the next test). The thaw's `SIGCONT` leaves no
/// stop pending in any thread
/// (`SigPnd`, `ShdPnd`): none is left to strike the bot on its turn. A
/// reaped program is sent nothing. The spinning threads start spinning
/// only once the main thread has taken its nice (before, the main thread
/// at nice 0 set it only after it had created 300 threads spinning beside
/// it on one CPU, and under a busy CI it was not done within the test's
/// 10 s wait).
#[test]
fn a_stop_reaches_the_running_threads_at_most_a_bound_and_the_thaw_leaves_none_pending() {
    let _cpu = crate::sandbox::one_cpu_bound_test_at_a_time();
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("spin.c");
    fs::write(
        &source,
        "#define _GNU_SOURCE\n#include <pthread.h>\n#include <sched.h>\n\
         #include <stdlib.h>\n#include <sys/resource.h>\n#include <unistd.h>\n\
         static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n\
         static pthread_cond_t go_cv = PTHREAD_COND_INITIALIZER; static int go;\n\
         static void *spin(void *a) { (void)a; pthread_mutex_lock(&m);\n\
         while (!go) pthread_cond_wait(&go_cv, &m); pthread_mutex_unlock(&m);\n\
         volatile unsigned long n = 0; for (;;) n++; }\n\
         int main(int argc, char **argv) { cpu_set_t one; CPU_ZERO(&one); CPU_SET(0, &one);\n\
         sched_setaffinity(0, sizeof one, &one);\n\
         for (int i = 0; i < atoi(argv[1]); i++) { pthread_t t; pthread_create(&t, 0, spin, 0); }\n\
         if (setpriority(PRIO_PROCESS, 0, 19)) return 2;\n\
         pthread_mutex_lock(&m); go = 1; pthread_cond_broadcast(&go_cv); pthread_mutex_unlock(&m);\n\
         char c; return read(0, &c, 1) < 0; }\n",
    )
    .unwrap();
    let exe = built(&source);
    let stop_pending = |pid: i32| -> bool {
        let sigstop = 1u64 << (libc::SIGSTOP - 1);
        fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
            .any(|t| {
                fs::read_to_string(t.path().join("status"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| l.strip_prefix("SigPnd:").or(l.strip_prefix("ShdPnd:")))
                    .any(|h| u64::from_str_radix(h.trim(), 16).unwrap_or(0) & sigstop != 0)
            })
    };
    let bound = crate::lines::FROZEN_SLACK / 2;
    for spinning in [12usize, 300] {
        let mut child = Killed(
            Command::new(&exe)
                .arg(spinning.to_string())
                .stdin(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let pid = child.0.id() as i32;
        // The main thread's nice (the 19th field of its stat).
        let nice_of_main = || -> Option<String> {
            let stat = fs::read(format!("/proc/{pid}/stat")).ok()?;
            Some(stat_fields(&stat)?.get(16)?.to_string())
        };
        let started = std::time::Instant::now();
        while nice_of_main().as_deref() != Some("19") {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{:?}",
                nice_of_main()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(50));
        let program = Program::pin(pid, None).unwrap();
        for turn in 0..5 {
            let at_stop = cpu(pid);
            assert!(program.stop());
            let asked = std::time::Instant::now();
            while program.held() != Held::Held {
                assert!(
                    asked.elapsed() < Duration::from_secs(5),
                    "{spinning} spinning, stop {turn}: never held"
                );
                std::thread::sleep(Duration::from_micros(200));
            }
            let ran = cpu(pid).saturating_sub(at_stop);
            // Past `THREAD_STOPS` running threads, those not sent their
            // own wait for the group stop, which comes when a thread sent
            // one runs: a bot with so many is held (that is checked), its
            // CPU meanwhile its own risk (`ran_while_stopped`).
            assert!(
                spinning > THREAD_STOPS || ran <= bound,
                "{spinning} spinning, stop {turn}: ran {ran:?} from the stop to its hold"
            );
            assert!(program.signal(libc::SIGCONT));
            std::thread::sleep(Duration::from_millis(20));
            assert!(!stop_pending(pid), "a stop left pending after the thaw");
        }
        child.0.kill().unwrap();
        child.0.wait().unwrap();
        assert!(!program.stop(), "a reaped program is sent nothing");
    }
}
