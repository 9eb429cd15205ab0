//! Unit tests of the line referee that need no bot: bounded, escaped output.

use super::*;

#[test]
fn a_bots_stderr_and_lines_stay_bounded_after_escaping() {
    for flood in [
        vec![1u8; 3 * STDERR_KEEP],
        vec![0xffu8; 3 * STDERR_KEEP],
        vec![b'"'; 3 * STDERR_KEEP],
        vec![b'\n'; 3 * STDERR_KEEP],
        b"ordinary text\n".repeat(1000),
    ] {
        let kept = kept_stderr(&flood);
        let stored = serde_json::to_string(&kept).unwrap();
        assert!(
            stored.len() <= STDERR_KEEP + 2,
            "{} bytes stored",
            stored.len()
        );
        assert!(kept.ends_with(" [cut]"), "{kept:?}");
    }
    assert_eq!(kept_stderr(b"a\x01b\n"), "a\\u{1}b\n");
    let shown = show_line(&"\u{1}".repeat(1000));
    assert!(shown.chars().count() <= SHOWN_LINE_CHARS + 1, "{shown}");
    assert_eq!(show_line("abc"), "abc");
}

#[test]
fn lines_are_shown_escaped_and_short() {
    assert_eq!(show_line("a\tb\u{1b}"), "a\\tb\\u{1b}");
    assert_eq!(show_line(&"x".repeat(300)).chars().count(), 201);
}

/// A bot played by a thread of the test, with a CPU clock of its own: it
/// "computes" in steps of a millisecond of wall clock, each worth
/// `1 ms / load` of its CPU time, so `load` is how busy the machine is
/// (1: quiet; 3: it gets a third of its CPU). It answers `ECHO x` with
/// `x`; what it does around its answers is its [`Script`].
mod scripted {
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::process::ExitStatus;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use crate::lines::BotIo;

    /// What the bot does after its answer `n` (1-based) and before its
    /// answer `n`.
    #[derive(Clone, Default)]
    pub struct Script {
        /// CPU time it computes after each answer, before reading on.
        pub after_answer: Duration,
        /// Only after its first answer (else after every one).
        pub only_first: bool,
        /// Wall clock it sleeps after each answer (no CPU), before reading on.
        pub sleep_after_answer: Duration,
        /// Prints `extra` after that work (a line nobody asked for).
        pub extra: bool,
        /// That line's length instead, in bytes of `x` (0: the word).
        pub extra_bytes: usize,
        /// CPU time it computes before each answer but the first (at
        /// full speed, whatever the load: a reply's own time).
        pub before_answer: Duration,
    }

    struct Shared {
        cpu_ns: AtomicU64,
        resting: AtomicBool,
        killed: AtomicBool,
        ended: AtomicBool,
    }

    pub struct Scripted {
        stdin: OwnedFd,
        stdout: OwnedFd,
        stderr: OwnedFd,
        shared: Arc<Shared>,
    }

    fn pipe() -> (OwnedFd, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both are ours, just made.
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    impl Scripted {
        pub fn start(script: Script, load: u32) -> Scripted {
            let (in_read, in_write) = pipe();
            let (out_read, out_write) = pipe();
            let (err_read, _err_write) = pipe();
            for fd in [&in_write, &out_read, &err_read] {
                crate::sandbox::set_nonblocking(fd).unwrap();
            }
            let shared = Arc::new(Shared {
                cpu_ns: AtomicU64::new(0),
                resting: AtomicBool::new(true),
                killed: AtomicBool::new(false),
                ended: AtomicBool::new(false),
            });
            let bot = Arc::clone(&shared);
            std::thread::spawn(move || {
                run(script, load, &bot, in_read, out_write);
                bot.ended.store(true, Ordering::SeqCst);
            });
            Scripted {
                stdin: in_write,
                stdout: out_read,
                stderr: err_read,
                shared,
            }
        }
    }

    /// Computes `cpu` of its own CPU time at `load`; `false` once killed.
    fn compute(shared: &Shared, cpu: Duration, load: u32) -> bool {
        let step = Duration::from_millis(1);
        let mut used = Duration::ZERO;
        while used < cpu {
            if shared.killed.load(Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(step);
            let counted = step / load;
            used += counted;
            shared
                .cpu_ns
                .fetch_add(counted.as_nanos() as u64, Ordering::SeqCst);
        }
        true
    }

    fn run(script: Script, load: u32, shared: &Shared, input: OwnedFd, output: OwnedFd) {
        let mut input = BufReader::new(std::fs::File::from(input));
        let mut output = std::fs::File::from(output);
        let mut answers = 0u32;
        let mut line = String::new();
        loop {
            line.clear();
            shared.resting.store(true, Ordering::SeqCst);
            if input.read_line(&mut line).unwrap_or(0) == 0 || line.starts_with("END") {
                return;
            }
            shared.resting.store(false, Ordering::SeqCst);
            if answers > 0 && !compute(shared, script.before_answer, 1) {
                return;
            }
            let x = line.trim().strip_prefix("ECHO ").unwrap_or("");
            if writeln!(output, "{x}").is_err() {
                return;
            }
            answers += 1;
            if script.only_first && answers > 1 {
                continue;
            }
            if !compute(shared, script.after_answer, load) {
                return;
            }
            std::thread::sleep(script.sleep_after_answer);
            let extra = match script.extra_bytes {
                0 => "extra".to_string(),
                n => "x".repeat(n),
            };
            if script.extra && writeln!(output, "{extra}").is_err() {
                return;
            }
        }
    }

    impl BotIo for Scripted {
        fn fds(&self) -> [RawFd; 3] {
            [
                self.stdin.as_raw_fd(),
                self.stdout.as_raw_fd(),
                self.stderr.as_raw_fd(),
            ]
        }
        fn cpu_time(&self) -> Duration {
            Duration::from_nanos(self.shared.cpu_ns.load(Ordering::SeqCst))
        }
        fn try_status(&mut self) -> std::io::Result<Option<ExitStatus>> {
            use std::os::unix::process::ExitStatusExt;
            Ok(self
                .shared
                .ended
                .load(Ordering::SeqCst)
                .then(|| ExitStatus::from_raw(0)))
        }
        fn finish(&mut self) -> std::io::Result<ExitStatus> {
            use std::os::unix::process::ExitStatusExt;
            self.shared.killed.store(true, Ordering::SeqCst);
            Ok(ExitStatus::from_raw(libc::SIGKILL))
        }
        fn out_of_memory(&self) -> bool {
            false
        }
        fn waiting_for_input(&self) -> bool {
            self.shared.resting.load(Ordering::SeqCst)
        }
        fn at_rest(&self) -> bool {
            self.shared.resting.load(Ordering::SeqCst)
        }
    }
}

use scripted::{Script, Scripted};

/// Limits of the scripted matches: 100 ms of CPU a reply, a wall-clock
/// backstop of 3 s (far: a scripted bot's millisecond steps may take
/// longer where the tests run beside other work, which only makes its
/// load higher).
fn scripted_limits() -> LineLimits {
    LineLimits {
        reply_cpu: Duration::from_millis(100),
        startup_cpu: Duration::from_millis(100),
        reply_wall: Duration::from_secs(3),
        startup_wall: Duration::from_secs(3),
        ..LineLimits::default()
    }
}

/// Plays `turns` turns of echo against the scripted bots, each asked in
/// turn; a reply that does not repeat the number breaks the rule.
fn play_scripted(bots: Vec<Scripted>, limits: LineLimits, turns: u32) -> MatchRecord<()> {
    let seats = bots
        .into_iter()
        .map(|b| (Box::new(b) as Box<dyn BotIo>, 64))
        .collect();
    play(Match::new(seats, limits), |m| {
        for t in 1..=turns {
            m.set_turn(t);
            for b in 0..m.n_bots() {
                let reply = m.ask(b, &format!("ECHO {t}"))?;
                if reply != t.to_string() {
                    return Err(m.broken_rule(b, "the answer repeats the number", &reply));
                }
            }
        }
        Ok(())
    })
    .unwrap()
}

/// The records of one scripted bot playing `turns` alone under `limits`,
/// once at each of `loads`.
fn records_at_loads<const N: usize>(
    script: &Script,
    limits: LineLimits,
    turns: u32,
    loads: [u32; N],
) -> [MatchRecord<()>; N] {
    loads.map(|load| play_scripted(vec![Scripted::start(script.clone(), load)], limits, turns))
}

/// Who failed, in which turn, and how (the reason's figures aside).
fn verdict(rec: &MatchRecord<()>) -> Vec<(usize, u32, String)> {
    rec.failures
        .iter()
        .map(|f| {
            let kind = serde_json::to_value(&f.kind).unwrap()["failure"]
                .as_str()
                .unwrap()
                .to_string();
            (f.bot, f.turn, kind)
        })
        .collect()
}

/// The red team's gap in the look for lines nobody asked for: a bot that
/// computes 1 s of its CPU time after its first answer (ten times a
/// reply's limit) and then prints a line. The wait for it to rest gave up
/// at the wall-clock backstop (3 s): on a quiet machine the line came
/// at 1 s and failed "unasked" in turn 1; with the machine four times
/// as busy it came at 4 s, after the next question, and was read as
/// the turn-2 answer (a broken rule in turn 2, or a valid answer where the
/// game could read it so). The wait is now bounded by the bot's own CPU
/// time: it fails "busy after answer" in turn 1 at either load (at 100 ms
/// of its CPU: 0.1 and 0.4 s).
#[test]
fn computing_after_an_answer_is_judged_by_the_bots_cpu_whatever_the_load() {
    let script = Script {
        after_answer: Duration::from_secs(1),
        only_first: true,
        extra: true,
        ..Script::default()
    };
    let [quiet, loaded] = records_at_loads(&script, scripted_limits(), 3, [1, 4]);
    assert_eq!(verdict(&quiet), verdict(&loaded), "the load decided");
    let rec = &loaded;
    assert_eq!(
        verdict(rec),
        [(0, 1, "busy_after_answer".to_string())],
        "{:?}",
        rec.failures
    );
    let reason = &rec.failures[0].reason;
    assert!(reason.contains("0.1 s of CPU time"), "{reason}");
}

/// A late line printed within the CPU a reply may take is caught in the
/// turn of the last answer, quiet or loaded (at load 4 its 50 ms of CPU
/// take 200 ms of wall clock).
#[test]
fn a_late_line_within_a_replys_cpu_is_caught_whatever_the_load() {
    let script = Script {
        after_answer: Duration::from_millis(50),
        only_first: true,
        extra: true,
        ..Script::default()
    };
    let records = records_at_loads(&script, scripted_limits(), 3, [1, 4]);
    for (rec, load) in records.iter().zip([1, 4]) {
        assert_eq!(verdict(rec), [(0, 1, "unasked".to_string())], "load {load}");
        assert_eq!(rec.failures[0].line.as_deref(), Some("extra"));
    }
}

/// A line too long for the match (200 bytes against a limit of 100),
/// printed after the bot's first answer and found while the referee waits
/// for it to come back to its input, fails in the turn of that answer,
/// as a line nobody asked for does, quiet or loaded (the kit's home
/// referees do the same: `tests/it/bot_kit.rs`).
#[test]
fn a_too_long_line_after_an_answer_fails_in_the_turn_of_the_answer() {
    let script = Script {
        after_answer: Duration::from_millis(20),
        only_first: true,
        extra: true,
        extra_bytes: 200,
        ..Script::default()
    };
    let limits = LineLimits {
        max_line: 100,
        ..scripted_limits()
    };
    let records = records_at_loads(&script, limits, 3, [1, 4]);
    for (rec, load) in records.iter().zip([1, 4]) {
        assert_eq!(verdict(rec), [(0, 1, "output".to_string())], "load {load}");
        assert!(
            rec.failures[0]
                .reason
                .contains("a line longer than 100 bytes"),
            "{}",
            rec.failures[0].reason
        );
    }
}

/// What a bot computes after its answer counts toward its next reply:
/// 70 ms after each answer and 70 ms before the next are 140 ms for one
/// reply of 100 ms (before, the 70 ms after the answer were counted by no
/// reply). 40 and 40 stay within it.
#[test]
fn computing_after_an_answer_counts_toward_the_next_reply() {
    let over = Script {
        after_answer: Duration::from_millis(70),
        before_answer: Duration::from_millis(70),
        ..Script::default()
    };
    let rec = play_scripted(vec![Scripted::start(over, 1)], scripted_limits(), 3);
    assert_eq!(
        verdict(&rec),
        [(0, 2, "reply_cpu".to_string())],
        "{:?}",
        rec.failures
    );
    assert!(
        rec.failures[0].reason.contains("after its previous answer"),
        "{}",
        rec.failures[0].reason
    );
    let within = Script {
        after_answer: Duration::from_millis(40),
        before_answer: Duration::from_millis(40),
        ..Script::default()
    };
    let rec = play_scripted(vec![Scripted::start(within, 1)], scripted_limits(), 3);
    assert!(rec.failures.is_empty(), "{:?}", rec.failures);
}

/// A bot that sleeps after its answer instead of reading on fails at its
/// next reply's wall-clock backstop, in the turn of its answer (before,
/// its lines were sent at the backstop and it played on: a second of
/// every turn was nobody's).
#[test]
fn a_bot_that_sleeps_after_its_answer_fails_at_the_wall_backstop() {
    let script = Script {
        sleep_after_answer: Duration::from_millis(1500),
        only_first: true,
        ..Script::default()
    };
    let limits = LineLimits {
        reply_wall: Duration::from_millis(600),
        ..scripted_limits()
    };
    let rec = play_scripted(vec![Scripted::start(script, 1)], limits, 3);
    assert_eq!(
        verdict(&rec),
        [(0, 1, "awake_after_answer".to_string())],
        "{:?}",
        rec.failures
    );
    assert!(
        rec.failures[0].reason.contains("0.6 s of wall clock"),
        "{}",
        rec.failures[0].reason
    );
}

/// The wait for a bot to rest is time the referee waited for it: a match's
/// bound on waiting (`waited`) counts it. 300 ms of sleep after each
/// answer, within the backstop, passes the bound of 500 ms in the second
/// turn's wait (before, the bound never saw it).
#[test]
fn the_wait_for_a_bot_to_rest_counts_toward_its_waiting_in_the_match() {
    let script = Script {
        sleep_after_answer: Duration::from_millis(300),
        ..Script::default()
    };
    let limits = LineLimits {
        waited: Some(Duration::from_millis(500)),
        ..scripted_limits()
    };
    let rec = play_scripted(vec![Scripted::start(script, 1)], limits, 4);
    assert_eq!(
        verdict(&rec),
        [(0, 2, "waited".to_string())],
        "{:?}",
        rec.failures
    );
}

/// A match's wall clock that runs out while the referee waits for a bot
/// to rest names the bot waited for longest, its waits to rest counted:
/// the one that sleeps 150 ms after each answer, not its opponent, which
/// computes 20 ms for each (before, those waits were nobody's, and the
/// opponent was named).
#[test]
fn a_matchs_wall_clock_running_out_names_the_bot_slow_to_rest() {
    let sleeper = Script {
        sleep_after_answer: Duration::from_millis(150),
        ..Script::default()
    };
    let thinker = Script {
        before_answer: Duration::from_millis(20),
        ..Script::default()
    };
    let limits = LineLimits {
        match_wall: Some(Duration::from_millis(600)),
        ..scripted_limits()
    };
    let bots = vec![Scripted::start(sleeper, 1), Scripted::start(thinker, 1)];
    let rec = play_scripted(bots, limits, 10);
    // The turn is where the wall clock ran out: a wall clock's verdict,
    // not the rules'.
    let named: Vec<_> = verdict(&rec)
        .into_iter()
        .map(|(bot, _, kind)| (bot, kind))
        .collect();
    assert_eq!(named, [(0, "match_wall".to_string())], "{:?}", rec.failures);
}

/// Red team (issue 38): a bot that computes a little more than a reply may
/// take after each answer and then comes to rest between two looks was
/// judged only by looks that found it still busy, 50 ms apart at most: 80
/// ms of CPU against a limit of 60 passed quiet and failed at load 2. The
/// look that finds it at rest judges it too, at any load.
#[test]
fn computing_past_the_limit_is_judged_even_where_the_bot_rests_between_looks() {
    let script = Script {
        after_answer: Duration::from_millis(80),
        ..Script::default()
    };
    let limits = LineLimits {
        reply_cpu: Duration::from_millis(60),
        ..scripted_limits()
    };
    let [quiet, loaded] = records_at_loads(&script, limits, 5, [1, 2]).map(|r| verdict(&r));
    assert_eq!(quiet, loaded, "the load decided");
    assert_eq!(quiet, [(0, 1, "busy_after_answer".to_string())]);
}

/// What a bot computes after its answer counts toward its next reply
/// however quick that reply is: 44.5 ms after the answer (within the
/// limit of 45) and 3 ms for the next answer, quicker than the reply's
/// first look (a reply that quick is never looked at on its own), are
/// judged at that answer. At load 10 the wait's first millisecond, which
/// is not counted, is a tenth of a millisecond of the bot's CPU.
#[test]
fn computing_after_an_answer_is_judged_at_a_quick_next_answer() {
    let script = Script {
        after_answer: Duration::from_micros(44_500),
        before_answer: Duration::from_millis(3),
        ..Script::default()
    };
    let limits = LineLimits {
        reply_cpu: Duration::from_millis(45),
        ..scripted_limits()
    };
    let rec = play_scripted(vec![Scripted::start(script, 10)], limits, 3);
    assert_eq!(
        verdict(&rec),
        [(0, 2, "reply_cpu".to_string())],
        "{:?}",
        rec.failures
    );
}

/// A game budgeted by rounds (the flooding island's) counts the bot's CPU
/// over the game: what it computes after its answer in round `r` is
/// judged against round `r + 1`'s allowance, which its next question
/// brings, not round `r`'s (red team). Start-up 100 ms and 50 ms a round:
/// 170 ms after the first answer is within round 2's 200 ms; 230 ms is
/// not, and fails in turn 1 as over round 2's allowance.
#[test]
fn computing_after_an_answer_in_a_game_by_rounds_meets_the_next_rounds_allowance() {
    let limits = LineLimits {
        reply_cpu: Duration::from_millis(50),
        startup_cpu: Duration::from_millis(100),
        ..scripted_limits()
    };
    let by_rounds = |after: u64| -> MatchRecord<()> {
        let script = Script {
            after_answer: Duration::from_millis(after),
            only_first: true,
            ..Script::default()
        };
        let seats = vec![(Box::new(Scripted::start(script, 1)) as Box<dyn BotIo>, 64)];
        play(Match::new(seats, limits), |m| {
            for t in 1..=3u32 {
                m.set_turn(t);
                m.send(0, &format!("ECHO {t}"))?;
                m.allow_rounds(0, u64::from(t));
                m.receive(0)?;
            }
            Ok(())
        })
        .unwrap()
    };
    let rec = by_rounds(170);
    assert!(rec.failures.is_empty(), "{:?}", rec.failures);
    let rec = by_rounds(230);
    assert_eq!(
        verdict(&rec),
        [(0, 1, "rounds_cpu".to_string())],
        "{:?}",
        rec.failures
    );
    assert!(
        rec.failures[0].reason.contains("by round 2"),
        "{}",
        rec.failures[0].reason
    );
}
