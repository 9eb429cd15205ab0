//! The state of one match: the [`Match`] (its bots' seats, the limits,
//! the turn, the failures so far) and what a seat holds per bot (pipes,
//! buffers, its reply budget, frozen or not); why a game stops ([`Stop`],
//! [`MatchError`]).
//!
//! Only data: the verbs that change it are in `mod.rs`, the steps under
//! them in `wait.rs`.

use std::io;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::sandbox::bot::BotSpawnError;

use super::bot_io::BotIo;
use super::cpus::CpuSlot;
use super::failure::BotFailure;
use super::limits::LineLimits;

/// Infrastructure faults: the match could not be refereed.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error(transparent)]
    Spawn(#[from] BotSpawnError),
    #[error("bot {bot}: {what}")]
    Toolchain { bot: usize, what: String },
    #[error("i/o error while refereeing: {0}")]
    Io(#[from] io::Error),
}

/// Why a game stopped before its end.
#[derive(Debug)]
pub enum Stop {
    /// One or more bots failed (the match is over).
    Failed(Vec<BotFailure>),
    /// The server could not go on.
    Fault(MatchError),
}

impl From<MatchError> for Stop {
    fn from(e: MatchError) -> Self {
        Stop::Fault(e)
    }
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Fault(MatchError::Io(e))
    }
}

pub(super) struct Seat {
    pub(super) bot: Box<dyn BotIo>,
    /// Its `/work`, when it is kept for its next match.
    pub(super) work: Option<OwnedFd>,
    pub(super) memory_limit_mb: u64,
    pub(super) buf: Vec<u8>,
    pub(super) eof: bool,
    pub(super) answered: bool,
    /// The turn of its last answer: where a line nobody asked for, found
    /// before its next lines ([`Match::settle`]), is its failure, however
    /// late the bot printed it (frozen between its answer and that line,
    /// it prints it only once thawed, in a later turn: the load's timing).
    pub(super) answered_turn: u32,
    /// Checked for lines nobody asked for since its last answer
    /// ([`Match::settle`]).
    pub(super) settled: bool,
    pub(super) stderr: Vec<u8>,
    pub(super) last_cpu_check: Instant,
    /// The reply budget in use (see [`Budget`]).
    pub(super) budget: Option<Budget>,
    pub(super) frozen: bool,
    /// A game budgeted by rounds ([`Match::allow_rounds`]).
    pub(super) allowance: Option<Allowance>,
    /// How long the referee has waited for it in this match, in all (the
    /// reply waited for now not included).
    pub(super) waited: Duration,
    /// Its CPU time when it was last frozen (while `frozen`).
    pub(super) frozen_cpu: Duration,
    /// Its CPU time when the referee's wait for it to rest after its last
    /// answer began to count ([`Match::settle`], where it did): its next
    /// reply's count begins there (taken into that reply's
    /// [`Budget::cpu_base`]), so what it computes between an answer and
    /// the next lines is the next reply's, not nobody's.
    pub(super) counted_from: Option<Duration>,
}

/// What a bot of a game budgeted by rounds may have used by now: CPU
/// time in all (its whole tree, start-up included), and the wall-clock
/// backstop of its next reply.
#[derive(Debug, Clone, Copy)]
pub(super) struct Allowance {
    pub(super) cpu: Duration,
    pub(super) rounds: u64,
    pub(super) wall: Duration,
}

/// What a bot's next reply may use of the CPU, as the wait to rest after
/// its answer judges the CPU it uses there.
#[derive(Debug, Clone, Copy)]
pub(super) enum NextCpu {
    /// Its next reply's own limit, counted from the wait's first counted
    /// look (one budget from answer to answer).
    Reply(Duration),
    /// A game budgeted by rounds: its allowance after this many rounds, of
    /// all the CPU it used.
    Rounds(u64),
}

/// How [`Match::settle`]'s wait for a bot to rest ended.
pub(super) enum Rest {
    Rested,
    /// The bot failed (not yet stopped).
    Failed(BotFailure),
    /// The match's wall clock ran out while it waited.
    MatchWall,
}

/// One reply's budget: when its wall clock began, where its CPU count
/// begins, and whether its first look came.
#[derive(Debug, Clone, Copy)]
pub(super) struct Budget {
    pub(super) since: Instant,
    /// The bot's CPU time the reply is counted from: where the referee's
    /// wait for it to rest after its last answer counted its CPU, that
    /// wait's base ([`Seat::counted_from`]: one count from answer to
    /// answer), known from the reply's start; else its CPU time at the
    /// first look.
    pub(super) cpu_base: Option<Duration>,
    /// The first look came: the other bots are frozen and the reply's
    /// wall clock began anew ([`FIRST_LOOK`](super::FIRST_LOOK)).
    pub(super) looked: bool,
}

/// The bots of one match, and the limits they play under.
pub struct Match {
    pub(super) seats: Vec<Seat>,
    pub(super) limits: LineLimits,
    pub(super) turn: u32,
    pub(super) failed: Vec<BotFailure>,
    /// The CPU every bot of this match runs on (held for the match).
    pub(super) _cpu: Option<CpuSlot>,
    /// When the match began (for `match_wall`).
    pub(super) started: Instant,
}
