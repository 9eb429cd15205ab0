//! The referee core for line protocols: drives one or more bots that talk
//! over standard input and output, a line at a time, and owns the limits
//! and the blame.
//!
//! A game (its rules pure, in `crate::game`) is played by a function that
//! gets a [`Match`] and uses four verbs: [`Match::send`] a line,
//! [`Match::receive`] a line (within the limits), [`Match::ask`] (both) and
//! [`Match::receive_all`] (for simultaneous moves: every bot answers or
//! fails, then all failures are reported together). A reply is a complete
//! line; parsing it strictly is the game's job, and a reply that breaks a
//! rule becomes [`Match::broken_rule`]. Every verb returns
//! `Result<_, Stop>`, so a game is a plain loop with `?`; [`play`] turns a
//! stop into a [`MatchRecord`].
//!
//! Blame, as in the KNOBELN referee: every [`BotFailure`] names the bot,
//! the turn (set by the game with [`Match::set_turn`]), the rule or limit
//! and, where there is one, the offending line. Limits per bot and match:
//! - wall clock per reply (`reply_wall`; the first reply gets
//!   `startup_wall`, for runtimes that start slowly); a bot that sits in
//!   `read` on its own standard input when its time is up has answered into
//!   a buffer it never flushed, and the reason says so;
//! - CPU time of the whole process tree for the match (`cpu`; checked at
//!   least every 100 ms of wall clock and at the end; only the bot's own
//!   work counts, never its waiting); for a game budgeted by rounds
//!   ([`Match::allow_rounds`], the flooding island) CPU time by round `r`
//!   of `startup_cpu + r × reply_cpu` in all instead of a limit per reply;
//! - memory (the sandbox's control group: "needed more than N MB"),
//!   forbidden system calls (SIGSYS), crashes (the signal), ending early
//!   (the exit status), lines longer than `max_line`, output that is not
//!   UTF-8, not reading its input;
//! - a line printed when none was asked for: before a bot gets new lines
//!   after its answer, the referee waits until it has come to rest, so the
//!   line is caught where it was printed whatever the timing
//!   ([`Match::send`]; [`Match::farewell`] sends the last lines unlooked).
//!
//! A bot's working folder can be kept from one match to its next
//! ([`Match::start_with_folders`]; read at [`Match::finish`]).
//!
//! It knows no game, no tournament and no file system: bots come in as
//! [`BotIo`] (the sandbox's [`BotProcess`], or anything with three pipes).
//!
//! This file has the verbs; `state.rs` the match's state, `bot_io.rs` what
//! the referee needs of a bot, `limits.rs` what a match may cost,
//! `failure.rs` the words of the blame, `wait.rs` the steps under the verbs
//! (freezing, reading a line, the CPU checks, a bot's end). The verbs share
//! the match's state and read best top to bottom (start, send, receive,
//! finish), so they stay together here.

mod bot_io;
mod cpus;
pub mod echo;
mod failure;
pub mod game;
mod limits;
mod state;
mod wait;

use std::io;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::lang::build::BotProgram;
use crate::lang::Toolchain;
use crate::sandbox::bot::{
    BotProcess, BotSpec, FirstProcess, Network, NewProcesses, ProcFs, WorkFolder,
};
pub use crate::sandbox::cgroup::{Freeze, Held};
use crate::sandbox::folder::FolderImage;
pub use bot_io::BotIo;
pub use cpus::{CpuSlot, CpuSlots, CPU_SLOTS};
pub use failure::{
    describe_bot_failure, kept_stderr, ran_while_stopped, show_line, BotFailure, BotFailureKind,
    FROZEN_SLACK, SHOWN_LINE_CHARS, STDERR_KEEP,
};
pub use limits::{bot_limits, wall_backstop, LineLimits, MemoryCount};
use state::{Allowance, Budget, NextCpu, Rest, Seat};
pub use state::{Match, MatchError, Stop};
use wait::poll_one;
pub use wait::FREEZE_HOLD_WAIT;

/// How long [`Match::settle`] looks back to back before it pauses.
const SETTLE_EAGER: Duration = Duration::from_millis(1);

/// The longest pause between two looks of [`Match::settle`].
pub const SETTLE_PAUSE_MAX: Duration = Duration::from_millis(50);

/// What a bot left behind, for the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatReport {
    /// CPU time of its whole tree in the match.
    pub cpu: Duration,
    /// The first 4 KiB of its standard error (for the participant).
    pub stderr: String,
    /// Its working folder at the end, when it is kept for its next match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<FolderImage>,
}

/// A finished match: the game's outcome (if it got to the end), failures,
/// and per bot the CPU time and standard error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchRecord<O> {
    pub outcome: Option<O>,
    pub failures: Vec<BotFailure>,
    pub bots: Vec<SeatReport>,
}

const CPU_CHECK_EVERY: Duration = Duration::from_millis(100);

/// How long a reply may take before the referee reads the bot's CPU time
/// (the zero of the reply's CPU count) and freezes the bots it is not
/// waiting for. Replies quicker than this cost no look at all: reading a
/// control group's counter costs more than a whole round trip. At 1 ms,
/// scheduling noise alone made a few percent of fast echo replies that
/// slow (the benchmark's match 20 % slower); at 5 ms none.
pub const FIRST_LOOK: Duration = Duration::from_millis(5);

/// Starts one bot of `program` in the sandbox, in a network namespace of
/// `network`'s kind (matches use [`Network::Lent`]); with `folder`, its
/// `/work` holds that kept folder and is kept after it
/// ([`BotProcess::take_work`]).
pub fn spawn_bot(
    toolchain: &Toolchain,
    program: &BotProgram,
    limits: &LineLimits,
    network: Network,
    cpu: Option<usize>,
    folder: Option<&FolderImage>,
) -> Result<BotProcess, MatchError> {
    let argv = toolchain
        .command(
            &toolchain.language.run,
            &program.stem,
            limits.memory_of(&toolchain.language).1,
        )
        .map_err(|what| MatchError::Toolchain { bot: 0, what })?;
    // What does not fit this `/work` (an image stored by an older version,
    // a quota lowered since) is left out, never a fault of the start.
    let folder = folder.map(|f| f.fitted(limits.work_bytes()));
    let work_files = folder.as_ref().map(FolderImage::files).unwrap_or_default();
    let work_dirs = folder.as_ref().map(FolderImage::dirs).unwrap_or_default();
    // The runtime's files, served from memory where the server can mount
    // them (see sandbox::image); a copy that fails is the server's fault.
    let image = crate::sandbox::image::runtime_image().ok();
    if let Some(img) = image {
        let mut paths = toolchain.run_files.clone();
        paths.extend(toolchain.run_read_only.iter().cloned());
        paths.extend(toolchain.run_program.clone());
        let programs: Vec<&[u8]> = program
            .files
            .iter()
            .filter(|f| f.executable)
            .map(|f| f.bytes())
            .collect();
        // Never the host's /usr instead: a bot that could make its image
        // fail would have the page cache to time again. What its own
        // program names and the image lacks is its loader's error; what
        // the language needs and the image lacks (filled by root before
        // a package upgrade) is the server's.
        img.ensure(&paths, &programs)
            .map_err(|e| MatchError::Toolchain {
                bot: 0,
                what: format!(
                    "the runtime image: {e} (as root: knobeln languages --fill-runtime-image)"
                ),
            })?;
    }
    let spec = BotSpec {
        argv: &argv,
        env: &toolchain.language.env,
        files: &program.files,
        read_only: &toolchain.run_read_only,
        limits: bot_limits(toolchain, limits),
        network,
        cpu,
        work_files: &work_files,
        work_dirs: &work_dirs,
        work: if folder.is_some() {
            WorkFolder::Returned
        } else {
            WorkFolder::Private
        },
        proc: if toolchain.language.run_proc {
            ProcFs::Mounted
        } else {
            ProcFs::Hidden
        },
        toolchain: None,
        image: image.map(|i| i.root()),
        // The bot is the init's child, never its namespace's PID 1, which
        // the kernel gives no signal of default action: past its file size
        // limit it is ended by `SIGXFSZ` as an ordinary process is.
        first: FirstProcess::Init,
        // Without a control group that counts its whole tree, the bot is
        // one process (threads allowed): a child ended unreaped would add
        // its CPU to no one's.
        processes: NewProcesses::WhereCounted,
    };
    Ok(BotProcess::spawn(&spec)?)
}

impl Match {
    /// A match between running bots.
    pub fn new(bots: Vec<(Box<dyn BotIo>, u64)>, limits: LineLimits) -> Match {
        Match::with_work(
            bots.into_iter().map(|(bot, mb)| (bot, mb, None)).collect(),
            limits,
        )
    }

    /// A match between running bots, each with its kept `/work` if it has
    /// one (read when the match is over, [`SeatReport::folder`]).
    fn with_work(bots: Vec<(Box<dyn BotIo>, u64, Option<OwnedFd>)>, limits: LineLimits) -> Match {
        let now = Instant::now();
        Match {
            seats: bots
                .into_iter()
                .map(|(bot, memory_limit_mb, work)| Seat {
                    bot,
                    work,
                    memory_limit_mb,
                    buf: Vec::with_capacity(64),
                    eof: false,
                    answered: false,
                    answered_turn: 0,
                    settled: false,
                    stderr: Vec::new(),
                    last_cpu_check: now,
                    budget: None,
                    frozen: false,
                    allowance: None,
                    waited: Duration::ZERO,
                    frozen_cpu: Duration::ZERO,
                    counted_from: None,
                })
                .collect(),
            limits,
            turn: 0,
            failed: Vec::new(),
            _cpu: None,
            started: now,
        }
    }

    /// Starts every bot in the sandbox, in order, all on one CPU of
    /// their own ([`CPU_SLOTS`]).
    pub fn start(
        bots: &[(&Toolchain, &BotProgram)],
        limits: LineLimits,
    ) -> Result<Match, MatchError> {
        Match::start_with_folders(bots, limits, None)
    }

    /// As [`Match::start`]; with `folders` (one per bot), each bot's
    /// `/work` holds its kept folder, and [`Match::finish`] reads what it
    /// holds at the end ([`SeatReport::folder`]).
    pub fn start_with_folders(
        bots: &[(&Toolchain, &BotProgram)],
        limits: LineLimits,
        folders: Option<&[FolderImage]>,
    ) -> Result<Match, MatchError> {
        let slot = CPU_SLOTS.lease();
        let mut seats: Vec<(Box<dyn BotIo>, u64, Option<OwnedFd>)> = Vec::new();
        for (i, (tc, program)) in bots.iter().enumerate() {
            let folder = folders.map(|f| &f[i]);
            let mut p = spawn_bot(tc, program, &limits, Network::Lent, slot.cpu(), folder)
                .map_err(|e| match e {
                    MatchError::Toolchain { what, .. } => MatchError::Toolchain { bot: i, what },
                    other => other,
                })?;
            let work = p.take_work();
            seats.push((Box::new(p), limits.memory_of(&tc.language).0, work));
        }
        let mut m = Match::with_work(seats, limits);
        m._cpu = Some(slot);
        Ok(m)
    }

    pub fn n_bots(&self) -> usize {
        self.seats.len()
    }

    pub fn limits(&self) -> &LineLimits {
        &self.limits
    }

    /// The turn failures are attributed to from now on.
    pub fn set_turn(&mut self, turn: u32) {
        self.turn = turn;
    }

    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// The processes of bot `bot` right now (server's pids).
    pub fn members(&self, bot: usize) -> Vec<i32> {
        self.seats[bot].bot.members()
    }

    /// CPU time of bot `bot`'s whole tree so far.
    pub fn cpu_time(&self, bot: usize) -> Duration {
        self.seats[bot].bot.cpu_time()
    }

    /// A rule of the game broken by `bot` with `line`.
    pub fn broken_rule(&self, bot: usize, rule: &str, line: &str) -> Stop {
        Stop::Failed(vec![self.failure(
            bot,
            BotFailureKind::Rule {
                rule: rule.to_string(),
            },
            Some(line),
        )])
    }

    /// Several bots broke a rule in the same step: (bot, rule, its line).
    pub fn broken_rules(&self, broken: &[(usize, &str, &str)]) -> Stop {
        Stop::Failed(
            broken
                .iter()
                .map(|(bot, rule, line)| {
                    self.failure(
                        *bot,
                        BotFailureKind::Rule {
                            rule: rule.to_string(),
                        },
                        Some(line),
                    )
                })
                .collect(),
        )
    }

    fn failure(&self, bot: usize, kind: BotFailureKind, line: Option<&str>) -> BotFailure {
        self.failure_in(bot, self.turn, kind, line)
    }

    /// [`Match::failure`] in `turn` rather than the current one.
    fn failure_in(
        &self,
        bot: usize,
        turn: u32,
        kind: BotFailureKind,
        line: Option<&str>,
    ) -> BotFailure {
        let shown = line.map(show_line);
        BotFailure {
            bot,
            turn,
            reason: describe_bot_failure(bot, turn, &kind, shown.as_deref()),
            kind,
            line: shown,
        }
    }

    /// Sends `line` (a newline is added) to `bot`.
    pub fn send(&mut self, bot: usize, line: &str) -> Result<(), Stop> {
        self.settle(bot)?;
        self.write_line(bot, line)
    }

    /// Sends the game's last lines to `bot` (`ENDE`, `END`, …): nothing
    /// more is asked of it, so nothing it printed is looked at.
    pub fn farewell(&mut self, bot: usize, line: &str) -> Result<(), Stop> {
        self.write_line(bot, line)
    }

    /// Before `bot` is sent new lines after its last answer: it may have
    /// printed nothing since (nobody asked it for a line). The referee
    /// waits until the bot has come to rest ([`BotIo::at_rest`]: it waits
    /// for input, or for nothing that ends by itself), so that a line it
    /// printed before reading on is in its output pipe whatever the timing,
    /// and a complete line there breaks the rule "printed a line nobody
    /// asked for" in the turn of its last answer.
    ///
    /// The wait is bounded as a reply is, and what the bot uses in it is
    /// its next reply's ([`Match::rests_within`]): its own CPU time,
    /// counted from the first look after [`SETTLE_EAGER`] on and judged at
    /// every look (the one that finds it at rest too), over its next
    /// reply's CPU limit fails it ([`BotFailureKind::BusyAfterAnswer`]; a
    /// game budgeted by rounds: over its next round's allowance), and its
    /// next reply is counted from there (`counted_from`: one budget from
    /// answer to answer, judged at the answer however quick the reply); the
    /// wall clock is only the backstop of a bot that sleeps
    /// ([`BotFailureKind::AwakeAfterAnswer`]) and is time the referee
    /// waited for it (`waited`, so the match's bounds on waiting hold here
    /// too). The bot's own failures here are in the turn of its last
    /// answer; the match's wall clock running out names the bot waited
    /// for longest, in the current turn, as in a reply's wait.
    /// Before, the wait gave up after the wall-clock backstop and sent the
    /// lines: a bot that computed after its answer and then printed a line
    /// was caught on a quiet machine and not on a loaded one (its late line
    /// was then read as its next answer), and it computed that long in
    /// every turn counted by no reply.
    fn settle(&mut self, bot: usize) -> Result<(), Stop> {
        let seat = &self.seats[bot];
        if !seat.answered || seat.settled || seat.eof {
            return Ok(());
        }
        let start = Instant::now();
        let verdict = self.rests_within(bot, start);
        self.seats[bot].waited += start.elapsed();
        match verdict {
            Rest::Rested => {
                self.seats[bot].settled = true;
                Ok(())
            }
            Rest::Failed(f) => Err(self.stop_with(bot, f)),
            Rest::MatchWall => {
                // The match's wall clock went to the bots waited for: the
                // one waited for longest in all (this wait now counted)
                // fails, as in a reply's wait.
                let at_fault = self.waited_longest(|_| Duration::ZERO, &[]);
                let over = self.limits.match_wall.unwrap_or_default();
                let kind = BotFailureKind::MatchWall {
                    limit_ms: over.as_millis() as u64,
                };
                let f = self.failure(at_fault, kind, None);
                Err(self.stop_with(at_fault, f))
            }
        }
    }

    /// The looks of [`Match::settle`], from `start`, until `bot` rests or
    /// fails.
    fn rests_within(&mut self, bot: usize, start: Instant) -> Rest {
        // Its next reply's limits: what it may use of the CPU, decided
        // once (in a game budgeted by rounds, the allowance of one round
        // more than its last: [`Match::allow_rounds`] gives it with the
        // next question), and the wall clock, the backstop of this wait too.
        let (cpu_limit, wall_limit) = self.reply_limits(bot);
        let next_cpu = match self.seats[bot].allowance {
            Some(a) => NextCpu::Rounds(a.rounds + 1),
            None => NextCpu::Reply(cpu_limit),
        };
        let turn = self.seats[bot].answered_turn;
        // Its CPU time at the first counted look (read only once the eager
        // looks are over: an honest bot rests within microseconds).
        let mut counted_from: Option<Duration> = None;
        let mut backoff = 0u32;
        loop {
            // A held bot (frozen, or stopped by SIGSTOP) is looked at only
            // once it may run again: held at the end of a system call, its
            // `syscall` file names that call as if it were blocked in it
            // (`late_extra_busy.c`), so a look at a held bot took one that
            // was still printing for a bot at rest.
            if let Some(f) = self.thaw(bot) {
                return Rest::Failed(f);
            }
            let at_rest = self.seats[bot].bot.at_rest();
            // Read after the look: what it printed before coming to rest.
            match self.take_line(bot) {
                Some(Ok(line)) => {
                    // In the turn of its last answer, whenever it printed.
                    let f = self.failure_in(bot, turn, BotFailureKind::Unasked, Some(&line));
                    return Rest::Failed(f);
                }
                Some(Err(f)) => return Rest::Failed(in_turn(f, turn)),
                None => {}
            }
            let now = Instant::now();
            let waited = now.saturating_duration_since(start);
            // The CPU it used here: counted from the first look past the
            // eager ones that finds it busy, judged at every look from
            // there, the last (at rest) too.
            if counted_from.is_some() || (!at_rest && waited >= SETTLE_EAGER) {
                let used = self.seats[bot].bot.cpu_time();
                let base = *counted_from.get_or_insert(used);
                if let Some(f) = self.busy_after_answer(bot, used, base, next_cpu, turn) {
                    return Rest::Failed(f);
                }
            }
            if at_rest || self.seats[bot].eof {
                // Its next reply is counted from here (one budget from
                // answer to answer); a game budgeted by rounds counts all.
                if let NextCpu::Reply(_) = next_cpu {
                    self.seats[bot].counted_from = counted_from;
                }
                return Rest::Rested;
            }
            if let Some(limit) = self.limits.waited {
                if self.seats[bot].waited + waited > limit {
                    let kind = BotFailureKind::Waited {
                        limit_ms: limit.as_millis() as u64,
                    };
                    return Rest::Failed(self.failure_in(bot, turn, kind, None));
                }
            }
            if let Some(over) = self.limits.match_wall {
                if now >= self.started + over {
                    return Rest::MatchWall;
                }
            }
            if waited > wall_limit {
                let kind = BotFailureKind::AwakeAfterAnswer {
                    limit_ms: wall_limit.as_millis() as u64,
                };
                return Rest::Failed(self.failure_in(bot, turn, kind, None));
            }
            // The server's work per answer is bounded whatever the bot
            // does: looks back to back for the first millisecond (an
            // honest bot is at rest within microseconds), then pauses
            // that double from 200 µs up to SETTLE_PAUSE_MAX, so at most
            // about reply_wall / 50 ms more looks (each a read of one
            // small file per thread of the bot, and its CPU time).
            if waited < SETTLE_EAGER {
                std::thread::yield_now();
            } else {
                let pause =
                    (Duration::from_micros(200) * (1 << backoff.min(8))).min(SETTLE_PAUSE_MAX);
                backoff += 1;
                std::thread::sleep(pause);
            }
        }
    }

    /// A failure, in `turn` (its last answer's), if `bot`, at `used` of
    /// CPU time and `base` when its wait to rest began to count, is over
    /// the match's CPU time or over `next`, what its next reply may use.
    fn busy_after_answer(
        &self,
        bot: usize,
        used: Duration,
        base: Duration,
        next: NextCpu,
        turn: u32,
    ) -> Option<BotFailure> {
        let l = &self.limits;
        if used > l.cpu {
            let kind = BotFailureKind::CpuTime {
                limit_ms: l.cpu.as_millis() as u64,
            };
            return Some(self.failure_in(bot, turn, kind, None));
        }
        let kind = match next {
            NextCpu::Rounds(rounds) => self.over_rounds(used, rounds),
            NextCpu::Reply(limit) => {
                (used.saturating_sub(base) > limit).then_some(BotFailureKind::BusyAfterAnswer {
                    limit_ms: limit.as_millis() as u64,
                })
            }
        }?;
        Some(self.failure_in(bot, turn, kind, None))
    }

    fn write_line(&mut self, bot: usize, line: &str) -> Result<(), Stop> {
        let mut msg = Vec::with_capacity(line.len() + 1);
        msg.extend_from_slice(line.as_bytes());
        msg.push(b'\n');
        // Read only when the pipe is full (a clock reading is not free).
        let mut deadline: Option<Instant> = None;
        let fd = self.seats[bot].bot.fds()[0];
        let mut done = 0;
        while done < msg.len() {
            // SAFETY: write from a valid buffer to our pipe end.
            let r = unsafe { libc::write(fd, msg[done..].as_ptr().cast(), msg.len() - done) };
            if r > 0 {
                done += r as usize;
                continue;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => {
                    // A frozen bot reads nothing: it runs while it owes
                    // nothing until the referee waits for another bot.
                    self.thaw_or_stop(bot)?;
                    let now = Instant::now();
                    let deadline = *deadline.get_or_insert(now + self.limits.reply_wall);
                    if now >= deadline {
                        return Err(self.fail_now(bot, BotFailureKind::NotReading, None));
                    }
                    self.drain(bot)?;
                    poll_one(fd, libc::POLLOUT, deadline - now)?;
                }
                Some(libc::EPIPE) => return Err(self.ended(bot)),
                _ => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Sends `line` to `bot` and returns its reply.
    pub fn ask(&mut self, bot: usize, line: &str) -> Result<String, Stop> {
        self.send(bot, line)?;
        self.receive(bot)
    }

    /// The next line of `bot`, within the limits.
    pub fn receive(&mut self, bot: usize) -> Result<String, Stop> {
        match self.receive_all(&[bot]) {
            Ok(mut v) => Ok(v.pop().expect("one reply")),
            Err(e) => Err(e),
        }
    }

    /// The seat the referee has waited for longest in this match, of those
    /// not failed yet (`failures`; the caller waits for one of them): its
    /// answers and rests so far, and `this_wait` of it (the wait in
    /// progress). A wait for a freeze to hold is in the frozen bot's only
    /// where it gave up ([`Match::freeze_all_but`]).
    fn waited_longest(
        &self,
        this_wait: impl Fn(usize) -> Duration,
        failures: &[BotFailure],
    ) -> usize {
        (0..self.seats.len())
            .filter(|&s| !failures.iter().any(|f| f.bot == s))
            .max_by_key(|&s| self.seats[s].waited + this_wait(s))
            .expect("the bot waited for has not failed")
    }

    /// For a game budgeted by rounds ([`crate::game::lines::LineGame::cpu_rounds`]):
    /// `bot` is in its game's round `rounds`, so by now it may have used
    /// `startup_cpu + rounds × reply_cpu` of CPU time in all (the match's
    /// `cpu` stays a cap). Its next reply has no CPU limit of its own; its
    /// wall-clock backstop is [`wall_backstop`] of what is left.
    pub fn allow_rounds(&mut self, bot: usize, rounds: u64) {
        let cpu = self.rounds_allowance(rounds);
        let left = cpu.saturating_sub(self.seats[bot].bot.cpu_time());
        self.seats[bot].allowance = Some(Allowance {
            cpu,
            rounds,
            wall: wall_backstop(left),
        });
    }

    /// The next line of each of `bots` (simultaneous moves): every bot
    /// answers or fails; if any failed, all failures of this turn.
    pub fn receive_all(&mut self, bots: &[usize]) -> Result<Vec<String>, Stop> {
        let now = Instant::now();
        let mut replies: Vec<Option<String>> = vec![None; bots.len()];
        let mut failures: Vec<BotFailure> = Vec::new();
        for &b in bots {
            if let Some(f) = self.thaw(b) {
                failures.push(f);
            }
            // Counted from the wait to rest after its last answer, where
            // that wait counted; else from its first look.
            let cpu_base = self.seats[b].counted_from.take();
            self.seats[b].budget = Some(Budget {
                since: now,
                cpu_base,
                looked: false,
            });
        }
        let mut others_frozen = false;
        let mut frozen_checked = now;
        'waiting: loop {
            let mut pending: Vec<usize> = Vec::new();
            // One clock reading per pass (a pass is a few system calls).
            let mut now = Instant::now();
            let mut wake = now + CPU_CHECK_EVERY;
            // A bot that resumed itself while the others' replies are
            // waited for took their CPU: it fails, and the replies it
            // slowed get their wall clock anew.
            if others_frozen && now.duration_since(frozen_checked) >= CPU_CHECK_EVERY {
                frozen_checked = now;
                let cheats = self.resumed_while_frozen();
                if !cheats.is_empty() {
                    for (k, &b) in bots.iter().enumerate() {
                        if replies[k].is_some() {
                            continue;
                        }
                        let Seat { budget, waited, .. } = &mut self.seats[b];
                        if let Some(budget) = budget.as_mut() {
                            *waited += now.saturating_duration_since(budget.since);
                            budget.since = now;
                        }
                    }
                    failures.extend(cheats);
                }
            }
            for (k, &b) in bots.iter().enumerate() {
                if replies[k].is_some() || failures.iter().any(|f| f.bot == b) {
                    continue;
                }
                // A bot still waited for has not answered in this call.
                let (cpu_limit, wall_limit) = self.reply_limits(b);
                let budget = self.seats[b].budget.expect("budget set above");
                // The first look: the bots not waited for are frozen, and
                // once the kernel reports them held, this reply's clocks
                // start (the zero of its CPU count, its wall clock anew):
                // what another bot ran before its freeze held costs this
                // one nothing counted, however late the look came.
                if !budget.looked && now >= budget.since + FIRST_LOOK {
                    if !others_frozen {
                        others_frozen = true;
                        let stalled = self.freeze_all_but_pending(bots, &replies);
                        failures.extend(stalled);
                    }
                    now = Instant::now();
                    let cpu_base = budget
                        .cpu_base
                        .unwrap_or_else(|| self.seats[b].bot.cpu_time());
                    self.seats[b].budget = Some(Budget {
                        since: now,
                        cpu_base: Some(cpu_base),
                        looked: true,
                    });
                    self.seats[b].last_cpu_check = now;
                }
                let budget = self.seats[b].budget.expect("budget set above");
                // CPU of the whole tree: every 100 ms (the match's
                // budget, also for a bot that answers at once while its
                // other threads compute), and, once a reply took its first
                // look, four times per reply limit.
                let every = if budget.looked {
                    CPU_CHECK_EVERY.min(cpu_limit / 4).max(FIRST_LOOK)
                } else {
                    CPU_CHECK_EVERY
                };
                if now.duration_since(self.seats[b].last_cpu_check) >= every {
                    self.seats[b].last_cpu_check = now;
                    if let Some(f) = self.over_cpu(b, cpu_limit) {
                        self.kill(b);
                        failures.push(f);
                        continue;
                    }
                }
                match self.take_line(b) {
                    Some(Ok(line)) => {
                        // A reply that took a look, or is counted from the
                        // bot's wait to rest, is judged by its CPU.
                        if budget.cpu_base.is_some() {
                            if let Some(f) = self.over_cpu(b, cpu_limit) {
                                self.kill(b);
                                failures.push(f);
                                continue;
                            }
                        }
                        self.seats[b].answered = true;
                        self.seats[b].answered_turn = self.turn;
                        self.seats[b].settled = false;
                        self.seats[b].waited += now.saturating_duration_since(budget.since);
                        replies[k] = Some(line);
                        if others_frozen {
                            // It owes nothing more in this wait. The wait
                            // for its freeze to hold (up to
                            // `FREEZE_HOLD_WAIT`) is never the bots' still
                            // waited for: they get it back on their wall
                            // clocks (their CPU is counted as ever); one
                            // that gave up is this bot's own waiting
                            // (`freeze_all_but`).
                            let asked = Instant::now();
                            let stalled = self.freeze_all_but_pending(bots, &replies);
                            let stall = asked.elapsed();
                            for (j, &other) in bots.iter().enumerate() {
                                if replies[j].is_none() {
                                    if let Some(budget) = self.seats[other].budget.as_mut() {
                                        budget.since += stall;
                                    }
                                }
                            }
                            failures.extend(stalled);
                        }
                        continue;
                    }
                    Some(Err(f)) => {
                        self.kill(b);
                        failures.push(f);
                        continue;
                    }
                    None => {}
                }
                if self.seats[b].eof {
                    failures.push(self.ended_failure(b)?);
                    continue;
                }
                let deadline = budget.since + wall_limit;
                if let Some(waited) = self.limits.waited {
                    let out = budget.since + waited.saturating_sub(self.seats[b].waited);
                    if now >= out {
                        let kind = BotFailureKind::Waited {
                            limit_ms: waited.as_millis() as u64,
                        };
                        self.kill(b);
                        failures.push(self.failure(b, kind, None));
                        continue;
                    }
                    wake = wake.min(out);
                }
                if let Some(over) = self.limits.match_wall {
                    if now >= self.started + over {
                        // The match's wall clock went to the bots waited
                        // for: the one waited for longest in all fails, not
                        // whichever is waited for when it runs out (before,
                        // a trial's demo bot asked a moment before the end
                        // was named for its slow opponent), and the match
                        // stops there.
                        // A bot's wait in progress: each of `bots` not
                        // answered yet, from its budget's start.
                        let this_wait = |s: usize| match bots.iter().position(|&b| b == s) {
                            Some(k) if replies[k].is_none() => self.seats[s]
                                .budget
                                .map_or(Duration::ZERO, |b| now.saturating_duration_since(b.since)),
                            _ => Duration::ZERO,
                        };
                        let at_fault = self.waited_longest(this_wait, &failures);
                        let kind = BotFailureKind::MatchWall {
                            limit_ms: over.as_millis() as u64,
                        };
                        self.kill(at_fault);
                        failures.push(self.failure(at_fault, kind, None));
                        break 'waiting;
                    }
                    wake = wake.min(self.started + over);
                }
                if now >= deadline {
                    let waiting = self.seats[b].bot.waiting_for_input();
                    let kind = BotFailureKind::WallClock {
                        limit_ms: wall_limit.as_millis() as u64,
                        waiting_for_input: waiting,
                    };
                    let partial = (!self.seats[b].buf.is_empty())
                        .then(|| String::from_utf8_lossy(&self.seats[b].buf).into_owned());
                    self.kill(b);
                    failures.push(self.failure(b, kind, partial.as_deref()));
                    continue;
                }
                wake = wake.min(deadline).min(self.seats[b].last_cpu_check + every);
                if !budget.looked {
                    wake = wake.min(budget.since + FIRST_LOOK);
                }
                pending.push(b);
            }
            if pending.is_empty() {
                break;
            }
            let wait = wake.saturating_duration_since(now);
            self.wait_readable(&pending, wait)?;
        }
        if !failures.is_empty() {
            self.failed.extend(failures.iter().cloned());
            return Err(Stop::Failed(failures));
        }
        Ok(replies.into_iter().map(|r| r.expect("answered")).collect())
    }

    /// The CPU and wall-clock limits of `bot`'s next reply (the first one
    /// includes its runtime's start-up).
    fn reply_limits(&self, bot: usize) -> (Duration, Duration) {
        let l = &self.limits;
        if let Some(a) = self.seats[bot].allowance {
            (a.cpu, a.wall)
        } else if self.seats[bot].answered {
            (l.reply_cpu, l.reply_wall)
        } else {
            (l.startup_cpu, l.startup_wall)
        }
    }

    /// Ends the match: a last CPU check (a bot over its limit fails at the
    /// last turn), then every bot is killed with its whole tree.
    pub fn finish(mut self) -> io::Result<(Vec<BotFailure>, Vec<SeatReport>)> {
        let mut late = Vec::new();
        for b in 0..self.seats.len() {
            if !self.failed.iter().any(|f| f.bot == b) {
                if let Some(f) = self.over_cpu_total(b, self.seats[b].bot.cpu_time()) {
                    late.push(f);
                }
            }
        }
        let mut reports = Vec::new();
        for b in 0..self.seats.len() {
            let _ = self.drain(b);
            let cpu = self.seats[b].bot.cpu_time();
            self.kill(b);
            reports.push(SeatReport {
                cpu,
                stderr: kept_stderr(&self.seats[b].stderr),
                folder: None,
            });
        }
        // Every bot is gone: nothing writes its folder any more.
        let quota = self.limits.work_bytes();
        for (b, report) in reports.iter_mut().enumerate() {
            if let Some(work) = self.seats[b].work.take() {
                report.folder = Some(FolderImage::read(&work, quota)?);
            }
        }
        Ok((late, reports))
    }
}

/// `f` in `turn` (its sentence written anew for it).
fn in_turn(mut f: BotFailure, turn: u32) -> BotFailure {
    f.turn = turn;
    f.reason = describe_bot_failure(f.bot, turn, &f.kind, f.line.as_deref());
    f
}

/// Plays `game` on `m` to its end or first stop, then ends the match.
pub fn play<O>(
    mut m: Match,
    game: impl FnOnce(&mut Match) -> Result<O, Stop>,
) -> Result<MatchRecord<O>, MatchError> {
    let result = game(&mut m);
    let (late, bots) = m.finish()?;
    match result {
        Ok(o) if late.is_empty() => Ok(MatchRecord {
            outcome: Some(o),
            failures: Vec::new(),
            bots,
        }),
        Ok(_) => Ok(MatchRecord {
            outcome: None,
            failures: late,
            bots,
        }),
        Err(Stop::Failed(failures)) => Ok(MatchRecord {
            outcome: None,
            failures,
            bots,
        }),
        Err(Stop::Fault(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests;
