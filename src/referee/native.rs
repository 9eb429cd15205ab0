//! The process runner of earlier versions: plays one game of KNOBELN
//! between two native strategy programs, each its own confined process
//! ([`crate::sandbox::player`]) exchanging throws with the referee over
//! pipes, one line (`N\n`) per throw.
//!
//! No contest path plays it any more (a native program's machine code
//! cannot be fenced by construction: see [`crate::wasm`]); `knobeln bench
//! game` plays it beside the WebAssembly engine, with the same rules,
//! failures and sentences, to print both figures of one run.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

use super::{
    describe_failure, Failure, FailureKind, GameRecord, GameSeeds, RefereeConfig, RefereeError,
};
use crate::game::knobeln::{check_throw, judge, RunRule, Throw};
use crate::sandbox::cpu::TscOff;
use crate::sandbox::exe::Executable;
use crate::sandbox::player::{describe_status, PlayerProcess, SpawnError, Start, StatusKind};

/// Longest line a strategy may print for one throw.
const MAX_LINE: usize = 24;

/// The process runner's referee: holds the configuration, plays games.
#[derive(Debug, Clone)]
pub struct NativeReferee {
    pub config: RefereeConfig,
}

enum Slot {
    Waiting,
    Threw(Throw),
    Failed(Failure),
}

struct Side {
    proc: Option<PlayerProcess>,
    buf: Vec<u8>,
    eof: bool,
}

impl Side {
    /// The descriptor the player's lines come from (a live side only).
    fn output_fd(&self) -> std::os::fd::RawFd {
        self.proc
            .as_ref()
            .expect("live side")
            .from_player
            .as_raw_fd()
    }
}

impl NativeReferee {
    pub fn new(config: RefereeConfig) -> Self {
        NativeReferee { config }
    }

    /// Plays one game: `players[0]` is P, `players[1]` is Q.
    pub fn play(
        &self,
        players: [&Executable; 2],
        seeds: GameSeeds,
    ) -> Result<GameRecord, RefereeError> {
        let cfg = &self.config;
        // No TSC reads in this thread until the game is over (see sandbox::cpu).
        let _tsc = TscOff::new();
        let timer = WallTimer::start(cfg.wall)?;
        let mut record = GameRecord {
            seed: seeds.game,
            points: [0, 0],
            throws: Vec::with_capacity(cfg.params.l as usize),
            failures: Vec::new(),
        };
        let mut sides: Vec<Side> = Vec::with_capacity(2);
        let mut early: Vec<Failure> = Vec::new();
        for (i, exe) in players.iter().enumerate() {
            let start = Start::Game {
                seed: seeds.players[i],
            };
            let kind = match PlayerProcess::spawn(exe, start, &cfg.limits) {
                Ok(p) => {
                    sides.push(Side {
                        proc: Some(p),
                        buf: Vec::with_capacity(64),
                        eof: false,
                    });
                    continue;
                }
                Err(SpawnError::Memory { limit_kb }) => FailureKind::Memory {
                    limit_kb,
                    call_stack_kb: None,
                },
                Err(SpawnError::Exec { error }) => FailureKind::Unstartable {
                    error: error.to_string(),
                },
                Err(e) => return Err(RefereeError::Spawn(e)),
            };
            early.push(self.failure(i, 1, kind));
            sides.push(Side {
                proc: None,
                buf: Vec::new(),
                eof: true,
            });
        }
        if !early.is_empty() {
            record.failures = early;
            return Ok(record);
        }
        let mut runs = [RunRule::new(cfg.params.k), RunRule::new(cfg.params.k)];
        for n in 1..=cfg.params.l {
            let mut slots = [Slot::Waiting, Slot::Waiting];
            self.collect(&mut sides, &mut slots, n, &timer)?;
            let mut throws = [0 as Throw; 2];
            for i in 0..2 {
                match &slots[i] {
                    Slot::Threw(t) => {
                        if let Err(rule) = check_throw(&cfg.params, &mut runs[i], *t) {
                            slots[i] = Slot::Failed(self.failure(i, n, FailureKind::Rule(rule)));
                        } else {
                            throws[i] = *t;
                        }
                    }
                    Slot::Failed(_) => {}
                    Slot::Waiting => unreachable!("collect fills every slot"),
                }
            }
            let failures: Vec<Failure> = slots
                .into_iter()
                .filter_map(|s| match s {
                    Slot::Failed(f) => Some(f),
                    _ => None,
                })
                .collect();
            if !failures.is_empty() {
                record.failures = failures;
                break;
            }
            let pts = judge(throws[0], throws[1]).points_of();
            record.points[0] += pts[0] as u64;
            record.points[1] += pts[1] as u64;
            record.throws.push(throws);
            if n == cfg.params.l {
                break;
            }
            // Each player learns the other's throw.
            for i in 0..2 {
                // A dead reader shows up as end of input at the next throw;
                // a full pipe means it does not read at all.
                if let Err(Some(kind)) = send(&mut sides[i], throws[1 - i]) {
                    record.failures.push(self.failure(i, n + 1, kind));
                }
            }
            if !record.failures.is_empty() {
                break;
            }
        }
        for side in sides.iter_mut() {
            if let Some(p) = side.proc.as_mut() {
                p.finish()?;
            }
        }
        Ok(record)
    }

    /// Reads until both slots hold a throw or a failure: P's line first,
    /// then Q's, with blocking reads (both players have their throw to
    /// make, so the order costs nothing), which is two system calls per
    /// throw. The game's wall-clock deadline is a timer that interrupts a
    /// blocking read; whoever still owes its line then has failed (a line
    /// that arrived with the deadline still counts).
    fn collect(
        &self,
        sides: &mut [Side],
        slots: &mut [Slot; 2],
        n: u32,
        timer: &WallTimer,
    ) -> Result<(), RefereeError> {
        for i in 0..2 {
            while matches!(slots[i], Slot::Waiting) {
                if let Some(s) = self.take_line(&mut sides[i], i, n) {
                    slots[i] = s;
                } else if sides[i].eof {
                    slots[i] = Slot::Failed(self.ended(&mut sides[i], i, n)?);
                } else if timer.expired() {
                    self.deadline(sides, slots, n)?;
                } else {
                    read_some(&mut sides[i])?;
                }
            }
        }
        Ok(())
    }

    /// The wall-clock deadline has passed: a line already sent still
    /// counts; whoever has none has failed.
    fn deadline(
        &self,
        sides: &mut [Side],
        slots: &mut [Slot; 2],
        n: u32,
    ) -> Result<(), RefereeError> {
        for i in 0..2 {
            if !matches!(slots[i], Slot::Waiting) {
                continue;
            }
            if !sides[i].eof {
                read_available(&mut sides[i])?;
            }
            slots[i] = match self.take_line(&mut sides[i], i, n) {
                Some(s) => s,
                None if sides[i].eof => Slot::Failed(self.ended(&mut sides[i], i, n)?),
                None => Slot::Failed(self.failure(
                    i,
                    n,
                    FailureKind::WallClock {
                        limit_ms: self.config.wall.as_millis() as u64,
                    },
                )),
            };
        }
        Ok(())
    }

    /// Takes one complete line from a side's buffer, if there is one.
    fn take_line(&self, side: &mut Side, i: usize, n: u32) -> Option<Slot> {
        let Some(pos) = side.buf.iter().position(|&b| b == b'\n') else {
            if side.buf.len() > MAX_LINE {
                let line = printable(&side.buf);
                return Some(Slot::Failed(self.failure(
                    i,
                    n,
                    FailureKind::Output { line },
                )));
            }
            return None;
        };
        let line: Vec<u8> = side.buf.drain(..=pos).collect();
        let text = &line[..line.len() - 1];
        match parse_throw(text) {
            Some(t) => Some(Slot::Threw(t)),
            None => Some(Slot::Failed(self.failure(
                i,
                n,
                FailureKind::Output {
                    line: printable(text),
                },
            ))),
        }
    }

    /// The player's output ended before its throw `n`: find out why.
    fn ended(&self, side: &mut Side, i: usize, n: u32) -> Result<Failure, RefereeError> {
        let proc = side.proc.as_mut().expect("live side");
        let status = proc.status_within(Duration::from_millis(200))?;
        let kind = match status.map(|s| describe_status(&s)) {
            // It closed its output but went on: it is dead now, and at fault.
            None => FailureKind::Exited { status: -1 },
            Some(StatusKind::Exited(code)) => FailureKind::Exited { status: code },
            Some(StatusKind::Signaled(sig)) => match sig {
                libc::SIGXCPU => FailureKind::CpuTime {
                    limit_secs: self.config.limits.cpu_secs,
                    fuel: None,
                },
                libc::SIGKILL | libc::SIGSYS => FailureKind::ForbiddenCall,
                _ => FailureKind::Crashed {
                    signal: sig,
                    trap: None,
                },
            },
        };
        Ok(self.failure(i, n, kind))
    }

    fn failure(&self, player: usize, throw: u32, kind: FailureKind) -> Failure {
        let reason = describe_failure(&self.config, throw, &kind);
        Failure {
            player,
            throw,
            kind,
            reason,
        }
    }
}

fn parse_throw(text: &[u8]) -> Option<Throw> {
    let s = std::str::from_utf8(text).ok()?;
    let s = s.strip_suffix('\r').unwrap_or(s);
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn printable(bytes: &[u8]) -> String {
    let s: String = String::from_utf8_lossy(bytes)
        .chars()
        .take(MAX_LINE)
        .flat_map(|c| c.escape_default())
        .collect();
    if bytes.len() > MAX_LINE {
        format!("{s}...")
    } else {
        s
    }
}

/// The signal of the wall-clock timer (a real-time signal the C library
/// leaves free); its handler does nothing: its only effect is to interrupt
/// the referee thread's blocking read.
fn wall_signal() -> libc::c_int {
    libc::SIGRTMIN() + 4
}

extern "C" fn on_wall_signal(_: libc::c_int) {}

/// The game's wall-clock deadline: a POSIX timer that sends
/// [`wall_signal`] to the referee thread at the deadline and every 5 ms
/// after it (so that a read entered just after the first signal is
/// interrupted too). [`WallTimer::expired`] reads the clock by system call
/// (no TSC: see `sandbox::cpu`).
struct WallTimer {
    id: libc::timer_t,
    deadline: Duration,
}

impl WallTimer {
    fn start(after: Duration) -> io::Result<WallTimer> {
        static HANDLER: std::sync::Once = std::sync::Once::new();
        HANDLER.call_once(|| {
            // SAFETY: installs a handler that does nothing, without
            // SA_RESTART, so that blocking reads return EINTR.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_wall_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                sa.sa_flags = 0;
                libc::sigaction(wall_signal(), &sa, std::ptr::null_mut());
            }
        });
        let after = after.max(Duration::from_millis(1));
        let deadline = crate::sandbox::cpu::monotonic() + after;
        // SAFETY: timer_create with a sigevent aimed at this thread.
        let id = unsafe {
            let mut ev: libc::sigevent = std::mem::zeroed();
            ev.sigev_notify = libc::SIGEV_THREAD_ID;
            ev.sigev_signo = wall_signal();
            ev.sigev_notify_thread_id = libc::gettid();
            let mut id: libc::timer_t = std::mem::zeroed();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, &mut id) != 0 {
                return Err(io::Error::last_os_error());
            }
            id
        };
        let timer = WallTimer { id, deadline };
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 5_000_000,
            },
            it_value: libc::timespec {
                tv_sec: after.as_secs() as libc::time_t,
                tv_nsec: after.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: a valid timer and itimerspec; relative time.
        if unsafe { libc::timer_settime(timer.id, 0, &spec, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(timer)
    }

    fn expired(&self) -> bool {
        crate::sandbox::cpu::monotonic() >= self.deadline
    }
}

impl Drop for WallTimer {
    fn drop(&mut self) {
        // SAFETY: deletes our own timer; a signal still pending is harmless
        // (the handler does nothing).
        unsafe {
            libc::timer_delete(self.id);
        }
    }
}

/// Reads what is there without blocking (after the deadline).
fn read_available(side: &mut Side) -> io::Result<()> {
    let fd = side.output_fd();
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no waiting.
    while unsafe { libc::poll(&mut pfd, 1, 0) } > 0 && pfd.revents != 0 {
        let before = side.buf.len();
        read_some(side)?;
        if side.eof || side.buf.len() == before || side.buf.len() > MAX_LINE * 4 {
            break;
        }
    }
    Ok(())
}

/// One blocking read of a player's output into its buffer. An interrupted
/// read (the wall-clock timer) returns with nothing read.
fn read_some(side: &mut Side) -> io::Result<()> {
    let fd = side.output_fd();
    let mut buf = [0u8; 256];
    // SAFETY: reading into a valid buffer.
    let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => Ok(()),
            _ => Err(e),
        };
    }
    if r == 0 {
        side.eof = true;
    } else {
        side.buf.extend_from_slice(&buf[..r as usize]);
    }
    Ok(())
}

/// Formats `t` and a newline into `buf` without allocating.
fn format_line(t: Throw, buf: &mut [u8; 24]) -> &[u8] {
    let mut i = buf.len();
    buf[i - 1] = b'\n';
    i -= 1;
    let neg = t < 0;
    let mut v = t.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Sends a throw to a player. `Err(None)`: the player is gone (reported at
/// its next throw); `Err(Some(kind))`: the player's fault now.
fn send(side: &mut Side, t: Throw) -> Result<(), Option<FailureKind>> {
    let fd = side.proc.as_ref().expect("live side").to_player.as_raw_fd();
    let mut buf = [0u8; 24];
    let bytes = format_line(t, &mut buf);
    loop {
        // SAFETY: writing from a valid buffer.
        let r = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if r == bytes.len() as isize {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => Err(Some(FailureKind::NotReading)),
            _ if r >= 0 => Err(Some(FailureKind::NotReading)),
            _ => Err(None),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_format_like_printf() {
        let mut b = [0u8; 24];
        assert_eq!(format_line(0, &mut b), b"0\n");
        assert_eq!(format_line(12288, &mut b), b"12288\n");
        assert_eq!(format_line(-7, &mut b), b"-7\n");
        assert_eq!(format_line(i64::MIN, &mut b), b"-9223372036854775808\n");
    }

    #[test]
    fn throws_parse_strictly() {
        assert_eq!(parse_throw(b"123"), Some(123));
        assert_eq!(parse_throw(b"-5"), Some(-5));
        assert_eq!(parse_throw(b"12\r"), Some(12));
        assert_eq!(parse_throw(b""), None);
        assert_eq!(parse_throw(b" 1"), None);
        assert_eq!(parse_throw(b"1x"), None);
        assert_eq!(parse_throw(b"99999999999999999999"), None);
    }
}
