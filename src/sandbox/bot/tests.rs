//! The unit tests of the bot sandbox that need no sandbox: reading a task's
//! system call, telling rest from sleep and work, the rlimits, program paths.
//! The sandbox's properties are tested on real bots in `tests/it`.

use super::*;

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

#[test]
fn a_process_is_at_rest_in_read_and_not_while_it_sleeps_or_computes() {
    use std::process::{Command, Stdio};
    let at_rest_within = |script: &str, wait: Duration| -> bool {
        let mut child = Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let probe = RestProbe::new(child.id() as i32, None, 0);
        std::thread::sleep(wait);
        let rest = probe.at_rest(|| vec![child.id() as i32]);
        let _ = child.kill();
        let _ = child.wait();
        rest
    };
    let settle = Duration::from_millis(300);
    assert!(
        at_rest_within("read x", settle),
        "blocked reading its input"
    );
    assert!(
        !at_rest_within("exec sleep 5", settle),
        "asleep: it wakes by itself"
    );
    assert!(!at_rest_within("while :; do :; done", settle), "computing");
}

#[test]
fn a_bot_may_not_use_real_time_priorities_whatever_the_servers_limits() {
    for own_uid in [false, true] {
        for memory in [false, true] {
            let r = bot_rlimits(&BotLimits::default(), own_uid, memory);
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

/// A one-process bot's stop (`Program::stop`) reaches every thread: the
/// process's `SIGSTOP` and each thread's own, through a pidfd of that
/// thread, so that a thread on a CPU is interrupted at once rather than
/// when the thread the process's signal woke next runs. Each thread the
/// group stop reached first keeps its own `SIGSTOP` pending (the kernel
/// shows it in the thread's `SigPnd`), which the thaw's `SIGCONT` removes
/// from every thread: no stop is left to strike the bot on its turn. A
/// reaped program is sent nothing.
#[test]
fn a_stop_reaches_every_thread_and_the_thaw_leaves_none_pending() {
    use std::process::{Command, Stdio};
    let spin = "import threading\n\
                def spin():\n    while True: pass\n\
                for _ in range(4): threading.Thread(target=spin, daemon=True).start()\n\
                import sys; sys.stdin.read()\n";
    /// Killed and reaped however the test ends (a stopped process left
    /// behind would hold the test's output open).
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Killed(
        Command::new("/usr/bin/python3")
            .args(["-c", spin])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id() as i32;
    let tasks = || -> Vec<(char, u64)> {
        fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
            .filter_map(|t| {
                let stat = fs::read(t.path().join("stat")).ok()?;
                let state = stat_fields(&stat)?.first()?.chars().next()?;
                let status = fs::read_to_string(t.path().join("status")).ok()?;
                let pending = status
                    .lines()
                    .find_map(|l| l.strip_prefix("SigPnd:"))
                    .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())?;
                Some((state, pending))
            })
            .collect()
    };
    let started = std::time::Instant::now();
    while tasks().len() < 5 {
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", tasks());
        std::thread::sleep(Duration::from_millis(10));
    }
    let program = Program::pin(pid, None).unwrap();
    let sigstop = 1u64 << (libc::SIGSTOP - 1);
    assert!(program.stop());
    let asked = std::time::Instant::now();
    while program.held() != Held::Held {
        assert!(asked.elapsed() < Duration::from_secs(1), "{:?}", tasks());
        std::thread::sleep(Duration::from_millis(1));
    }
    let stopped = std::time::Instant::now();
    while tasks().iter().any(|(s, _)| *s != 'T') {
        assert!(stopped.elapsed() < Duration::from_secs(1), "{:?}", tasks());
        std::thread::sleep(Duration::from_millis(1));
    }
    let own = tasks().iter().filter(|(_, p)| p & sigstop != 0).count();
    assert!(own >= 4, "each thread its own stop: {:?}", tasks());
    assert!(program.signal(libc::SIGCONT));
    std::thread::sleep(Duration::from_millis(50));
    let after = tasks();
    assert!(
        after.iter().all(|(_, p)| p & sigstop == 0),
        "a stop left pending after the thaw: {after:?}"
    );
    assert!(after.iter().any(|(s, _)| *s == 'R'), "{after:?}");
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert!(!program.stop(), "a reaped program is sent nothing");
}
