//! How the referee waits for a bot: freezing the bots it does not wait
//! for and thawing them, reading a line within the limits, draining
//! output, the CPU checks, and reading how a bot ended. These are the
//! private steps under [`super::Match`]'s verbs.
//!
//! Not here: the verbs themselves and what a game sees (`mod.rs`), the
//! match's state (`state.rs`), the words of a failure (`failure.rs`).

use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use crate::sandbox::cgroup::{Freeze, Held};

use super::failure::{ran_while_stopped, too_long, BotFailure, BotFailureKind, STDERR_KEEP};
use super::state::{Match, MatchError, Stop};

/// How long the referee waits for the kernel to report a freeze held
/// before the reply's clocks start anyway, the bot not held then counted
/// as a stopped bot is: by its own CPU count ([`Match::freeze_all_but`]).
/// A member stops at its next return to user space: within microseconds
/// of a CPU, so a second is a bot that keeps itself in the kernel or a
/// machine that no longer schedules it; the bots waited for have no clock
/// running meanwhile.
pub const FREEZE_HOLD_WAIT: Duration = Duration::from_secs(1);

impl Match {
    /// Freezes every bot but `bots` (those the referee waits for), so that
    /// nothing another bot of the match does takes their CPU, and returns
    /// once the kernel reports each of them held ([`Held::Held`]; a bot
    /// stopped by `SIGSTOP` once none of its threads is reported running,
    /// or one stopped): a freeze is only asked by its write (a stop by its
    /// signal), and a member runs on until its next return to user space
    /// (a thread until it, or another that then stops it, has run). The
    /// kernel names a bot
    /// that keeps its own freeze from holding: one whose own group is not
    /// held while its own CPU count runs on by more than
    /// [`FROZEN_SLACK`](super::FROZEN_SLACK) (counted from the first look
    /// that finds it pending) kept itself running, e.g. in calls that loop
    /// in the kernel and return early for nothing but `SIGKILL` (red team
    /// 22): it is killed
    /// and its failure ([`BotFailureKind::RanWhileStopped`]) returned. A
    /// freeze still not held after [`FREEZE_HOLD_WAIT`] with no such CPU
    /// (a bot asleep in the kernel, or not scheduled) stops nothing: the
    /// reply's clocks start, and the bot is counted as a stopped bot is
    /// from its first pending look ([`Match::resumed_while_frozen`]), so
    /// it fails if it runs on and costs the bot waited for at most that
    /// slack; the wait is its own, added to the time the referee waited
    /// for it (`waited`). Never an engine fault: one that a bot could
    /// choose would have its games played again and then the run stopped
    /// (decided after red team 22). A frozen bot is thawed when the referee next
    /// waits for it (or writes to it and its pipe is full).
    pub(super) fn freeze_all_but(&mut self, bots: &[usize]) -> Vec<BotFailure> {
        let mut asked = Vec::new();
        for b in 0..self.seats.len() {
            let seat = &mut self.seats[b];
            if bots.contains(&b) || seat.frozen || seat.eof {
                continue;
            }
            seat.frozen = seat.bot.freeze(Freeze::Frozen);
            if seat.frozen {
                asked.push(b);
            }
        }
        let newly = asked.clone();
        let start = Instant::now();
        let mut pause = Duration::from_micros(50);
        // Each bot's CPU count when its freeze was first seen pending (read
        // only then: a freeze that holds at once costs no read).
        let mut pending_cpu: Vec<(usize, Duration)> = Vec::new();
        let mut failures = Vec::new();
        while !asked.is_empty() {
            asked.retain(|&b| self.seats[b].bot.held() == Held::Pending);
            for b in asked.clone() {
                let now = self.seats[b].bot.cpu_time();
                let Some(&(_, since)) = pending_cpu.iter().find(|&&(x, _)| x == b) else {
                    pending_cpu.push((b, now));
                    continue;
                };
                let ran = now.saturating_sub(since);
                if let Some(kind) = ran_while_stopped(ran) {
                    tracing::warn!(
                        bot = b,
                        turn = self.turn,
                        ran_ms = ran.as_millis() as u64,
                        "a bot kept running while its freeze was pending: failed \
                         ran_while_stopped"
                    );
                    self.kill(b);
                    failures.push(self.failure(b, kind, None));
                    asked.retain(|&x| x != b);
                }
            }
            if asked.is_empty() {
                break;
            }
            if start.elapsed() >= FREEZE_HOLD_WAIT {
                tracing::warn!(
                    bots = ?asked,
                    turn = self.turn,
                    waited_ms = FREEZE_HOLD_WAIT.as_millis() as u64,
                    "a bot not on turn was not reported frozen: counted by its CPU as a \
                     stopped bot from its first pending look"
                );
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
        // A freeze still not held when the wait gave up cost the match that
        // wait: it is the bot's, as time the referee waited for it (its
        // `waited`), so a bot that holds each of its freezes off at no CPU
        // still meets the match's bound on waiting, and the longest match
        // stays computable from the limits. (Before, that second a stop
        // was nobody's: a bot could add one to every turn of its matches.)
        if !asked.is_empty() {
            let stall = start.elapsed();
            for &b in &asked {
                self.seats[b].waited += stall;
            }
        }
        // What a bot is charged while frozen counts from here: the CPU it
        // took before its freeze held is its own turn's. One still not held
        // counts from its first pending look.
        for b in newly {
            let pending = pending_cpu.iter().find(|&&(x, _)| x == b).map(|&(_, c)| c);
            let seat = &mut self.seats[b];
            if seat.frozen {
                seat.frozen_cpu = match (asked.contains(&b), pending) {
                    (true, Some(since)) => since,
                    _ => seat.bot.cpu_time(),
                };
            }
        }
        failures
    }

    /// The frozen bots that ran while frozen more than [`FROZEN_SLACK`](super::FROZEN_SLACK)
    /// (they resumed themselves): each is killed, and its failure returned.
    /// The freeze that signals cannot undo is the kernel's count of the
    /// bot's CPU time, which this reads.
    pub(super) fn resumed_while_frozen(&mut self) -> Vec<BotFailure> {
        let mut out = Vec::new();
        for b in 0..self.seats.len() {
            let seat = &self.seats[b];
            if !seat.frozen || seat.eof {
                continue;
            }
            let ran = seat.bot.cpu_time().saturating_sub(seat.frozen_cpu);
            if let Some(kind) = ran_while_stopped(ran) {
                // The figure is the load's as much as the bot's: the
                // organizer's log has it, the verdict does not.
                tracing::warn!(
                    bot = b,
                    turn = self.turn,
                    ran_ms = ran.as_millis() as u64,
                    "a bot ran while it was stopped for another bot's turn: failed \
                     ran_while_stopped"
                );
                self.kill(b);
                self.seats[b].frozen = false;
                out.push(self.failure(b, kind, None));
            }
        }
        out
    }

    /// Freezes every bot of `bots` that has its reply in `replies`; returns
    /// the failures of those that kept their own freeze from holding
    /// ([`Match::freeze_all_but`]).
    pub(super) fn freeze_all_but_pending(
        &mut self,
        bots: &[usize],
        replies: &[Option<String>],
    ) -> Vec<BotFailure> {
        let waiting: Vec<usize> = (0..self.seats.len())
            .filter(|b| match bots.iter().position(|x| x == b) {
                Some(k) => replies[k].is_none(),
                None => false,
            })
            .collect();
        self.freeze_all_but(&waiting)
    }

    /// Resumes `bot` if it is frozen, after a last look at what it ran
    /// while frozen: past [`FROZEN_SLACK`](super::FROZEN_SLACK) it is
    /// killed and its failure returned (`ran_while_stopped`). The looks
    /// while another bot's reply is waited for come every 100 ms
    /// (`CPU_CHECK_EVERY`); before this one, a bot that resumed itself ran
    /// unlooked-at whenever that reply came sooner, up to about 100 ms of
    /// CPU each turn where 50 are allowed (red team).
    pub(super) fn thaw(&mut self, bot: usize) -> Option<BotFailure> {
        let seat = &self.seats[bot];
        if !seat.frozen {
            return None;
        }
        if !seat.eof {
            let ran = seat.bot.cpu_time().saturating_sub(seat.frozen_cpu);
            if let Some(kind) = ran_while_stopped(ran) {
                tracing::warn!(
                    bot,
                    turn = self.turn,
                    ran_ms = ran.as_millis() as u64,
                    "a bot ran while it was stopped for another bot's turn, seen as it \
                     was resumed: failed ran_while_stopped"
                );
                self.kill(bot);
                return Some(self.failure(bot, kind, None));
            }
        }
        let seat = &mut self.seats[bot];
        seat.bot.freeze(Freeze::Thawed);
        seat.frozen = false;
        None
    }

    /// [`Match::thaw`] where the bot's failure stops the match.
    pub(super) fn thaw_or_stop(&mut self, bot: usize) -> Result<(), Stop> {
        match self.thaw(bot) {
            Some(f) => {
                self.failed.push(f.clone());
                Err(Stop::Failed(vec![f]))
            }
            None => Ok(()),
        }
    }

    /// A complete line from the buffer, reading what is there first.
    pub(super) fn take_line(&mut self, bot: usize) -> Option<Result<String, BotFailure>> {
        let max = self.limits.max_line;
        loop {
            let seat = &mut self.seats[bot];
            if let Some(i) = seat.buf.iter().position(|&c| c == b'\n') {
                let mut line: Vec<u8> = seat.buf.drain(..=i).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if line.len() > max {
                    let shown = String::from_utf8_lossy(&line[..line.len().min(400)]).into_owned();
                    return Some(Err(self.failure(bot, too_long(max), Some(&shown))));
                }
                return Some(match String::from_utf8(line) {
                    Ok(s) => Ok(s),
                    Err(e) => {
                        let shown = String::from_utf8_lossy(e.as_bytes()).into_owned();
                        let kind = BotFailureKind::Output {
                            problem: "a line that is not UTF-8 text".into(),
                        };
                        Err(self.failure(bot, kind, Some(&shown)))
                    }
                });
            }
            if seat.buf.len() > max {
                let shown =
                    String::from_utf8_lossy(&seat.buf[..seat.buf.len().min(400)]).into_owned();
                return Some(Err(self.failure(bot, too_long(max), Some(&shown))));
            }
            if seat.eof {
                return None;
            }
            match read_some(seat.bot.fds()[1], &mut seat.buf, max.max(398) + 2) {
                Ok(0) => {
                    seat.eof = true;
                    return None;
                }
                Ok(_) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => return None,
                Err(_) => {
                    seat.eof = true;
                    return None;
                }
            }
        }
    }

    /// Keeps the first bytes of a bot's standard error, discards the rest.
    pub(super) fn drain(&mut self, bot: usize) -> io::Result<()> {
        let seat = &mut self.seats[bot];
        let fd = seat.bot.fds()[2];
        let mut scratch = Vec::new();
        loop {
            scratch.clear();
            match read_some(fd, &mut scratch, 65536) {
                Ok(0) => return Ok(()),
                Ok(_) => {
                    let room = STDERR_KEEP.saturating_sub(seat.stderr.len());
                    seat.stderr
                        .extend_from_slice(&scratch[..room.min(scratch.len())]);
                }
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => return Ok(()),
                Err(_) => return Ok(()),
            }
        }
    }

    pub(super) fn wait_readable(&mut self, bots: &[usize], wait: Duration) -> io::Result<()> {
        let mut pfds: Vec<libc::pollfd> = Vec::with_capacity(bots.len() * 2);
        for &b in bots {
            let fds = self.seats[b].bot.fds();
            for fd in [fds[1], fds[2]] {
                pfds.push(libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                });
            }
        }
        let ms = wait.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: a valid array of pollfds.
        let r = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
        for (k, &b) in bots.iter().enumerate() {
            if pfds[2 * k + 1].revents != 0 {
                self.drain(b)?;
            }
        }
        Ok(())
    }

    /// A failure if `bot` is over the match's CPU time, over its
    /// allowance by rounds, or over `reply_limit` since its reply began to
    /// count ([`Budget::cpu_base`](super::state::Budget): where the referee
    /// waited for it to rest after its last answer, from there, else from
    /// the reply's first look).
    pub(super) fn over_cpu(&self, bot: usize, reply_limit: Duration) -> Option<BotFailure> {
        let used = self.seats[bot].bot.cpu_time();
        if let Some(f) = self.over_cpu_total(bot, used) {
            return Some(f);
        }
        let base = self.seats[bot].budget.and_then(|b| b.cpu_base)?;
        (used.saturating_sub(base) > reply_limit).then(|| {
            self.failure(
                bot,
                BotFailureKind::ReplyCpu {
                    limit_ms: reply_limit.as_millis() as u64,
                },
                None,
            )
        })
    }

    /// A failure if `bot`, having used `used`, is over the match's CPU
    /// time or over its allowance by rounds.
    pub(super) fn over_cpu_total(&self, bot: usize, used: Duration) -> Option<BotFailure> {
        if used > self.limits.cpu {
            let kind = BotFailureKind::CpuTime {
                limit_ms: self.limits.cpu.as_millis() as u64,
            };
            return Some(self.failure(bot, kind, None));
        }
        let a = self.seats[bot].allowance?;
        let kind = self.over_rounds(used, a.rounds)?;
        Some(self.failure(bot, kind, None))
    }

    /// What a bot of a game budgeted by rounds may have used in all after
    /// `rounds` rounds: its start-up and a reply's CPU time a round.
    pub(super) fn rounds_allowance(&self, rounds: u64) -> Duration {
        let l = &self.limits;
        let factor = u32::try_from(rounds).unwrap_or(u32::MAX);
        l.startup_cpu
            .saturating_add(l.reply_cpu.saturating_mul(factor))
    }

    /// The failure of a bot of a game budgeted by rounds that has used
    /// `used` in all, if that is over its allowance after `rounds` rounds.
    pub(super) fn over_rounds(&self, used: Duration, rounds: u64) -> Option<BotFailureKind> {
        let allowed = self.rounds_allowance(rounds);
        (used > allowed).then_some(BotFailureKind::RoundsCpu {
            limit_ms: allowed.as_millis() as u64,
            rounds,
            round_ms: self.limits.reply_cpu.as_millis() as u64,
            startup_ms: self.limits.startup_cpu.as_millis() as u64,
        })
    }

    pub(super) fn kill(&mut self, bot: usize) {
        self.seats[bot].frozen = false;
        let _ = self.seats[bot].bot.finish();
    }

    pub(super) fn fail_now(
        &mut self,
        bot: usize,
        kind: BotFailureKind,
        line: Option<&str>,
    ) -> Stop {
        let f = self.failure(bot, kind, line);
        self.stop_with(bot, f)
    }

    /// Ends `bot` for failure `f`, which stops the match.
    pub(super) fn stop_with(&mut self, bot: usize, f: BotFailure) -> Stop {
        self.kill(bot);
        self.failed.push(f.clone());
        Stop::Failed(vec![f])
    }

    pub(super) fn ended(&mut self, bot: usize) -> Stop {
        match self.ended_failure(bot) {
            Ok(f) => {
                self.failed.push(f.clone());
                Stop::Failed(vec![f])
            }
            Err(e) => Stop::Fault(e),
        }
    }

    /// The failure of a bot whose output closed or whose input broke: how
    /// its program ended decides which limit or rule it was. A program
    /// that could not be executed is the server's fault, never the bot's.
    pub(super) fn ended_failure(&mut self, bot: usize) -> Result<BotFailure, MatchError> {
        let deadline = Instant::now() + Duration::from_secs(1);
        let status = loop {
            match self.seats[bot].bot.try_status() {
                Ok(Some(st)) => break Some(st),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.kill(bot);
                    return Err(MatchError::Toolchain {
                        bot,
                        what: e.to_string(),
                    });
                }
                _ => break None,
            }
        };
        let seat = &self.seats[bot];
        let oom = seat.bot.out_of_memory();
        let cpu_over = seat.bot.cpu_time() > self.limits.cpu;
        let memory_limit = seat.memory_limit_mb;
        self.kill(bot);
        use std::os::unix::process::ExitStatusExt;
        let kind = match status {
            _ if oom => BotFailureKind::Memory {
                limit_mb: memory_limit,
            },
            Some(st) if st.signal() == Some(libc::SIGSYS) => BotFailureKind::ForbiddenCall,
            Some(st)
                if st.signal() == Some(libc::SIGXCPU)
                    || (st.signal() == Some(libc::SIGKILL) && cpu_over) =>
            {
                BotFailureKind::CpuTime {
                    limit_ms: self.limits.cpu.as_millis() as u64,
                }
            }
            Some(st) => match (st.code(), st.signal()) {
                (Some(code), _) => BotFailureKind::Exited { status: code },
                (None, Some(sig)) => BotFailureKind::Crashed { signal: sig },
                _ => BotFailureKind::Exited { status: -1 },
            },
            // Output closed, process still there: it ended its part.
            None => BotFailureKind::Exited { status: -1 },
        };
        Ok(self.failure(bot, kind, None))
    }
}

pub(super) fn read_some(fd: RawFd, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let mut chunk = [0u8; 4096];
    let want = chunk.len().min(max.saturating_sub(buf.len()).max(1));
    // SAFETY: read into a valid stack buffer.
    let r = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), want) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.extend_from_slice(&chunk[..r as usize]);
    Ok(r as usize)
}

pub(super) fn poll_one(fd: RawFd, events: libc::c_short, wait: Duration) -> io::Result<()> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = wait.as_millis().clamp(1, 100) as i32;
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    Ok(())
}
