//! Where the CPU of the distributed benchmark's runs went, process by
//! process and thread by thread, and how many messages the NATS server
//! carried: figures that a loaded machine does not inflate the way it
//! inflates wall time (a run that waits for the CPU takes longer, it does
//! not take more CPU).
//!
//! Read from Linux's `/proc` (other processes' threads), `getrusage` (this
//! process and its calling thread) and the NATS server's monitoring
//! endpoint (`/varz`). Not here: running anything, or judging the figures.

use std::io::{Read, Write};
use std::time::Duration;

/// A process's CPU time (user and system), split into its threads whose
/// name starts with a prefix (the game threads) and the rest.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SplitCpu {
    pub(super) named: Duration,
    pub(super) rest: Duration,
}

impl std::ops::Sub for SplitCpu {
    type Output = SplitCpu;
    fn sub(self, o: SplitCpu) -> SplitCpu {
        SplitCpu {
            named: self.named.saturating_sub(o.named),
            rest: self.rest.saturating_sub(o.rest),
        }
    }
}

impl std::ops::Add for SplitCpu {
    type Output = SplitCpu;
    fn add(self, o: SplitCpu) -> SplitCpu {
        SplitCpu {
            named: self.named + o.named,
            rest: self.rest + o.rest,
        }
    }
}

/// The name and CPU time of a `/proc/…/stat` line (fields 2, 14 and 15).
pub(super) fn parse_stat(text: &str) -> Option<(String, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // Fields from the third on: utime is the 14th, stime the 15th.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((name, utime + stime))
}

fn ticks(n: u64) -> Duration {
    // SAFETY: sysconf has no preconditions.
    let per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_nanos(n * 1_000_000_000 / per_sec)
}

/// Process `pid`'s CPU so far: its threads named `prefix…` against the
/// rest (threads that ended count in the rest); zeros if it is gone.
pub(super) fn process_cpu(pid: u32, prefix: &str) -> SplitCpu {
    let total = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| parse_stat(&t))
        .map_or(0, |(_, t)| t);
    let mut named = 0;
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in dir.flatten() {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            if let Some((name, t)) = parse_stat(&stat) {
                if name.starts_with(prefix) {
                    named += t;
                }
            }
        }
    }
    SplitCpu {
        named: ticks(named),
        rest: ticks(total.saturating_sub(named)),
    }
}

/// How the threads of process `pid` named `prefix…` spent their time so
/// far, from Linux's `/proc/…/schedstat` (nanoseconds): on a CPU, and
/// runnable but waiting for one; and how many such threads there are. The
/// rest of their life they slept (a game thread: waiting for games).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sched {
    pub(super) running: Duration,
    pub(super) runnable: Duration,
    pub(super) threads: usize,
}

impl std::ops::Add for Sched {
    type Output = Sched;
    fn add(self, o: Sched) -> Sched {
        Sched {
            running: self.running + o.running,
            runnable: self.runnable + o.runnable,
            threads: self.threads + o.threads,
        }
    }
}

/// The first two numbers of a `schedstat` line: nanoseconds on a CPU and
/// waiting for one.
pub(super) fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace();
    let running = fields.next()?.parse().ok()?;
    let runnable = fields.next()?.parse().ok()?;
    Some((running, runnable))
}

pub(super) fn threads_sched(pid: u32, prefix: &str) -> Sched {
    let mut sched = Sched::default();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in dir.flatten() {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            if !parse_stat(&stat).is_some_and(|(name, _)| name.starts_with(prefix)) {
                continue;
            }
            let text = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            if let Some((running, runnable)) = parse_schedstat(&text) {
                sched.running += Duration::from_nanos(running);
                sched.runnable += Duration::from_nanos(runnable);
                sched.threads += 1;
            }
        }
    }
    sched
}

/// Messages the NATS server has taken in and sent out so far (its
/// monitoring endpoint's `in_msgs` and `out_msgs`); `None` if it cannot
/// be asked.
pub(super) fn nats_messages(monitor_port: u16) -> Option<(u64, u64)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", monitor_port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /varz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let body = &text[text.find("\r\n\r\n")? + 4..];
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    Some((v["in_msgs"].as_u64()?, v["out_msgs"].as_u64()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_the_name_and_user_plus_system_ticks() {
        let line = "4242 (referee-0) S 1 2 3 4 5 6 7 8 9 10 120 30 0 0 20 0 1 0";
        assert_eq!(parse_stat(line), Some(("referee-0".into(), 150)));
        // A name with a parenthesis and a space in it.
        let line = "7 (a) b) R 1 2 3 4 5 6 7 8 9 10 5 6 0";
        assert_eq!(parse_stat(line), Some(("a) b".into(), 11)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_schedstat_line_gives_the_time_on_a_cpu_and_waiting_for_one() {
        assert_eq!(parse_schedstat("123456 7890 42\n"), Some((123456, 7890)));
        assert_eq!(parse_schedstat("1"), None);
        // This thread's own file reads.
        let own = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
        assert!(parse_schedstat(&own).is_some(), "{own}");
    }
}
