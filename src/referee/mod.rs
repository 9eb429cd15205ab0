//! The referee: plays one game of KNOBELN between two strategies.
//!
//! Each strategy is a WebAssembly module ([`crate::wasm`]); both run on
//! the caller's thread: P as an ordinary call whose every `make_throw`
//! steps Q, a fiber suspended in its own `make_throw`, to its throw of the
//! same number, so the referee has both throws of a throw at once. The referee checks them against the
//! rules ([`crate::game::knobeln`]) and the limits (fuel, memory, call
//! stack, a trap, ending early, the watchdog), scores them, and gives each
//! player the other's throw. After `L` throws, or at the first failure,
//! both instances are dropped.
//!
//! The referee decides nothing about tournaments (rescheduling, counting);
//! it reports what happened in one game: points, every throw, and each
//! failure with the player, the throw number and the broken rule.

use std::io;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::game::knobeln::{check_throw, judge, Params, RuleBreak, RunRule, Throw};
use crate::seed::SeedKey;
use crate::wasm::{
    lead, Control, Ending, GameWatch, Loaded, OnThrow, Seat, SeatLimits, Step, Strategy, WasmError,
};

/// The limits of one strategy in one game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerLimits {
    /// The CPU seconds of the process runner of earlier versions: no
    /// strategy runs as a process any more (fuel is the CPU limit, see
    /// [`RefereeConfig::fuel`]); kept so that the configurations stored
    /// and sent between machines keep their form.
    pub cpu_secs: u64,
    /// The strategy's linear memory in bytes (static data and stack):
    /// 1024 kB as in 1994.
    pub memory_bytes: u64,
}

impl Default for PlayerLimits {
    fn default() -> Self {
        PlayerLimits {
            cpu_secs: 2,
            memory_bytes: 1024 * 1024,
        }
    }
}

/// How a game is refereed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefereeConfig {
    pub params: Params,
    pub limits: PlayerLimits,
    /// The watchdog: a player's own running time in a game (for a
    /// module; fuel runs out long before on any sound machine, see
    /// [`DEFAULT_WALL`]); past it the game is an engine fault and is played
    /// again, never a player's failure.
    pub wall: Duration,
    /// The CPU limit: fuel per strategy and game, one unit per WebAssembly
    /// operator ([`DEFAULT_FUEL`]). A configuration stored before fuel
    /// existed gets the default.
    #[serde(default = "default_fuel")]
    pub fuel: u64,
}

/// Fuel per strategy and game: the announcement's "less than 30 seconds of
/// cpu time on a SUN SparcStation 2". The SPARCstation 2 (40 MHz SPARC,
/// Sun's rating 28.5 MIPS) executes 30 s x 28.5e6 = 855e6 instructions in
/// 30 s; WebAssembly needs about two operators for one instruction of a
/// register machine (its operands go through `local.get`/`local.set`,
/// which cost fuel like any operator), so 2 x 855e6 = 1.71e9 operators.
/// The book (docs/src/participant/knobeln.md) gives the arithmetic and how long that
/// is on this machine.
pub const DEFAULT_FUEL: u64 = 1_710_000_000;

/// The watchdog's default: 60 s of a player's own running time. The
/// slowest class of operator takes 1.2 ns per unit of fuel here (`knobeln
/// bench fuel`, quiet or with the other CPUs busy), so the default fuel
/// takes at most about 2 s; 60 s leaves room for a machine 25 times
/// slower before a game is played again.
pub const DEFAULT_WALL: Duration = Duration::from_secs(60);

fn default_fuel() -> u64 {
    DEFAULT_FUEL
}

impl Default for RefereeConfig {
    fn default() -> Self {
        RefereeConfig {
            params: Params::default(),
            limits: PlayerLimits::default(),
            wall: DEFAULT_WALL,
            fuel: DEFAULT_FUEL,
        }
    }
}

/// Which rule or limit a failing strategy broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "failure", rename_all = "snake_case")]
pub enum FailureKind {
    /// A game rule (range or series).
    Rule(RuleBreak),
    /// Printed something that is not a throw.
    Output { line: String },
    /// Ended before the game was over.
    Exited { status: i32 },
    /// Killed by a signal (segmentation fault, illegal instruction, ...);
    /// a module's trap is given the signal a process would have got (as
    /// strategies of earlier versions were), and its own words.
    Crashed {
        signal: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trap: Option<String>,
    },
    /// Used up its CPU time: its fuel, or seconds (stored by an earlier
    /// version, whose strategies ran as processes).
    CpuTime {
        #[serde(default, skip_serializing_if = "is_zero")]
        limit_secs: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fuel: Option<u64>,
    },
    /// Needs more memory than the limit: its linear memory, or (with
    /// `call_stack_kb`) the engine's call stack for its recursion.
    Memory {
        limit_kb: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_stack_kb: Option<u64>,
    },
    /// Made a system call other than read, write or exit.
    ForbiddenCall,
    /// Produced no throw within the wall-clock limit (blocked or looping while
    /// the CPU was elsewhere).
    WallClock { limit_ms: u64 },
    /// Stopped reading the referee's messages.
    NotReading,
    /// The program could not be started at all (the kernel refused it).
    Unstartable { error: String },
}

/// One strategy's failure in a game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// 0 for P (the first player), 1 for Q.
    pub player: usize,
    /// The throw (1-based) in which the failure happened.
    pub throw: u32,
    #[serde(flatten)]
    pub kind: FailureKind,
    /// A sentence for the participant: which rule, which throw, what happened.
    pub reason: String,
}

/// What happened in one game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    pub seed: u64,
    /// Points of P and Q (up to the failure, if any).
    pub points: [u64; 2],
    /// Every completed throw, `[P's, Q's]`.
    pub throws: Vec<[Throw; 2]>,
    /// Zero, one or two failures (both players can fail in the same throw).
    pub failures: Vec<Failure>,
}

impl GameRecord {
    pub fn failed(&self, player: usize) -> bool {
        self.failures.iter().any(|f| f.player == player)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Infrastructure faults: the game could not be refereed at all.
#[derive(Debug, thiserror::Error)]
pub enum RefereeError {
    #[error("i/o error while refereeing: {0}")]
    Io(#[from] io::Error),
    #[error(transparent)]
    Wasm(#[from] WasmError),
    #[error("the WebAssembly engine failed in a game: {0}")]
    Engine(String),
}

/// The seeds of one game: the game's own (stored, and printed in protocols)
/// and the seed of each player's generator, which only that player's
/// runtime ever sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GameSeeds {
    pub game: u64,
    pub players: [u64; 2],
}

impl GameSeeds {
    /// The players' seeds under the tournament's secret `key`.
    pub fn new(key: &SeedKey, game: u64) -> GameSeeds {
        GameSeeds {
            game,
            players: [key.player_seed(game, 0), key.player_seed(game, 1)],
        }
    }

    /// Seeds for a local game (`play`, the trial game): reproducible from
    /// the game seed alone.
    pub fn public(game: u64) -> GameSeeds {
        GameSeeds::new(&SeedKey::public_from_seed(game), game)
    }
}

/// The referee: holds the configuration, plays games.
#[derive(Debug, Clone)]
pub struct Referee {
    pub config: RefereeConfig,
}

/// One player's answer in one throw.
enum Slot {
    Threw(Throw),
    Failed(Failure),
    /// The engine failed.
    Faulted(String),
}

impl Referee {
    pub fn new(config: RefereeConfig) -> Self {
        Referee { config }
    }

    /// Plays one game between programs that may not be playable: one that
    /// is not (a stored program that is no module of this engine) fails
    /// in throw 1; otherwise as [`Referee::play`].
    pub fn play_loaded(
        &self,
        players: [&Loaded; 2],
        seeds: GameSeeds,
    ) -> Result<GameRecord, RefereeError> {
        if let [Ok(p), Ok(q)] = players {
            return self.play([p, q], seeds);
        }
        let failures = players
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                p.as_ref().err().map(|e| {
                    self.failure(
                        i,
                        1,
                        FailureKind::Unstartable {
                            error: e.to_string(),
                        },
                    )
                })
            })
            .collect();
        Ok(GameRecord {
            seed: seeds.game,
            points: [0, 0],
            throws: Vec::new(),
            failures,
        })
    }

    /// Plays one game: `players[0]` is P, `players[1]` is Q. Runs on the
    /// caller's thread and waits for nothing but the strategies' own
    /// computation: P runs as the lead ([`crate::wasm::lead`]), and each of
    /// its throws steps Q (a [`Seat`]) to its throw of the same number;
    /// both are judged together, as if thrown at once.
    pub fn play(
        &self,
        players: [&Strategy; 2],
        seeds: GameSeeds,
    ) -> Result<GameRecord, RefereeError> {
        let cfg = self.config;
        let limits = SeatLimits {
            fuel: cfg.fuel,
            wall: cfg.wall,
        };
        let watch = GameWatch::start();
        let duel = Duel {
            cfg,
            q: Seat::new(players[1], seeds.players[1], limits, watch.clone()),
            q_reply: 0,
            runs: [RunRule::new(cfg.params.k), RunRule::new(cfg.params.k)],
            record: GameRecord {
                seed: seeds.game,
                points: [0, 0],
                throws: Vec::with_capacity(cfg.params.l as usize),
                failures: Vec::new(),
            },
            n: 0,
            over: false,
            fault: None,
        };
        // The lead's store owns the duel while P plays and gives it back.
        let (ending, mut d) = lead(players[0], seeds.players[0], limits, watch, duel);
        if ending != Ending::Stopped && !d.over {
            // P ended before its next throw: Q's throw of the same number
            // is judged too (both can fail in one throw).
            let n = d.n + 1;
            let p = match failure_kind(&cfg, ending) {
                Ok(kind) => Slot::Failed(failure(&cfg, 0, n, kind)),
                Err(fault) => Slot::Faulted(fault),
            };
            let q = d.q_slot(n);
            d.settle(n, p, q);
        }
        match d.fault {
            Some(fault) => Err(RefereeError::Engine(fault)),
            None => Ok(d.record),
        }
    }

    fn failure(&self, player: usize, throw: u32, kind: FailureKind) -> Failure {
        failure(&self.config, player, throw, kind)
    }
}

/// A failure with the participant's sentence.
fn failure(cfg: &RefereeConfig, player: usize, throw: u32, kind: FailureKind) -> Failure {
    let reason = describe_failure(cfg, throw, &kind);
    Failure {
        player,
        throw,
        kind,
        reason,
    }
}

/// The failure of a strategy that ended before the game was over; `Err`:
/// the engine failed (not the strategy's fault).
fn failure_kind(cfg: &RefereeConfig, ending: Ending) -> Result<FailureKind, String> {
    use wasmtime::Trap;
    let limit_kb = cfg.limits.memory_bytes / 1024;
    Ok(match ending {
        Ending::Returned(status) => FailureKind::Exited { status },
        Ending::Fault(e) => return Err(e),
        Ending::Stopped => return Err("a strategy was stopped outside a game".into()),
        Ending::Trapped(Trap::OutOfFuel) => FailureKind::CpuTime {
            limit_secs: 0,
            fuel: Some(cfg.fuel),
        },
        // Only fuel decides a game: the engine's interruption (which the
        // watchdog no longer uses) is never a player's failure.
        Ending::Trapped(Trap::Interrupt) => {
            return Err("the engine interrupted a strategy (an engine fault)".into())
        }
        Ending::Trapped(Trap::StackOverflow) => FailureKind::Memory {
            limit_kb,
            call_stack_kb: Some(crate::wasm::CALL_STACK_BYTES as u64 / 1024),
        },
        Ending::Trapped(trap) => crash_of(trap),
    })
}

/// The crash of a trap other than fuel's, the call stack's and the
/// engine's interruption ([`failure_kind`] judges those): the signal a
/// process would have got, and wasmtime's own words.
fn crash_of(trap: wasmtime::Trap) -> FailureKind {
    use wasmtime::Trap;
    let signal = match trap {
        Trap::IntegerDivisionByZero | Trap::IntegerOverflow | Trap::BadConversionToInteger => {
            libc::SIGFPE
        }
        Trap::UnreachableCodeReached => libc::SIGILL,
        _ => libc::SIGSEGV,
    };
    FailureKind::Crashed {
        signal,
        trap: Some(
            trap.to_string()
                .trim_start_matches("wasm trap: ")
                .to_string(),
        ),
    }
}

/// Whether `kind` is the crash of a trap of this engine's ([`crash_of`]
/// of one of wasmtime's traps but the three [`failure_kind`] judges
/// otherwise): its signal and its words both (red team F16: a worker's
/// record carried any words it liked into a participant's failure).
fn is_a_traps_crash(kind: &FailureKind) -> bool {
    use wasmtime::Trap;
    (0..=u8::MAX)
        .filter_map(Trap::from_u8)
        .filter(|t| !matches!(t, Trap::OutOfFuel | Trap::StackOverflow | Trap::Interrupt))
        .any(|t| crash_of(t) == *kind)
}

/// Whether this referee could have made a failure of `kind` under `cfg`
/// (what [`failure_kind`] and a strategy that cannot start give, with the
/// contest's own figures): a worker's record naming any other is refused
/// (`crate::distributed::wire::check_record`). The wall clock never
/// decides a game, and the kinds of the referee that ran strategies as
/// processes (output, a forbidden call, not reading) are no longer made.
pub fn referee_makes(cfg: &RefereeConfig, kind: &FailureKind) -> bool {
    match kind {
        FailureKind::Rule(_) | FailureKind::Exited { .. } | FailureKind::Unstartable { .. } => true,
        FailureKind::CpuTime { limit_secs, fuel } => *limit_secs == 0 && *fuel == Some(cfg.fuel),
        FailureKind::Memory {
            limit_kb,
            call_stack_kb,
        } => {
            *limit_kb == cfg.limits.memory_bytes / 1024
                && *call_stack_kb == Some(crate::wasm::CALL_STACK_BYTES as u64 / 1024)
        }
        FailureKind::Crashed { .. } => is_a_traps_crash(kind),
        FailureKind::Output { .. }
        | FailureKind::ForbiddenCall
        | FailureKind::WallClock { .. }
        | FailureKind::NotReading => false,
    }
}

/// A game in progress: Q's seat, the run rules, the record so far. P's
/// throws come in through [`Duel::on_throw`].
struct Duel {
    cfg: RefereeConfig,
    q: Seat,
    /// What Q's pending `make_throw` returns (P's last throw).
    q_reply: i64,
    runs: [RunRule; 2],
    record: GameRecord,
    /// Throws completed.
    n: u32,
    /// The game is over (its last throw, or a failure).
    over: bool,
    /// The engine failed.
    fault: Option<String>,
}

impl OnThrow for Duel {
    /// P threw `t` in the next throw: Q throws too, both are judged.
    fn on_throw(&mut self, t: i32) -> Control {
        let n = self.n + 1;
        let t = Throw::from(t);
        let p = match check_throw(&self.cfg.params, &mut self.runs[0], t) {
            Ok(()) => Slot::Threw(t),
            Err(rule) => Slot::Failed(failure(&self.cfg, 0, n, FailureKind::Rule(rule))),
        };
        let q = self.q_slot(n);
        self.settle(n, p, q)
    }
}

impl Duel {
    /// Q's throw number `n`, checked, or its failure.
    fn q_slot(&mut self, n: u32) -> Slot {
        match self.q.step(self.q_reply) {
            Step::Threw(t) => {
                let t = Throw::from(t);
                match check_throw(&self.cfg.params, &mut self.runs[1], t) {
                    Ok(()) => Slot::Threw(t),
                    Err(rule) => Slot::Failed(failure(&self.cfg, 1, n, FailureKind::Rule(rule))),
                }
            }
            Step::Ended(ending) => match failure_kind(&self.cfg, ending) {
                Ok(kind) => Slot::Failed(failure(&self.cfg, 1, n, kind)),
                Err(fault) => Slot::Faulted(fault),
            },
        }
    }

    /// Records throw `n` (or its failures) and says how P goes on.
    fn settle(&mut self, n: u32, p: Slot, q: Slot) -> Control {
        match (p, q) {
            (Slot::Threw(a), Slot::Threw(b)) => {
                let pts = judge(a, b).points_of();
                self.record.points[0] += pts[0] as u64;
                self.record.points[1] += pts[1] as u64;
                self.record.throws.push([a, b]);
                self.n = n;
                self.q_reply = a;
                if n == self.cfg.params.l {
                    self.over = true;
                    Control::Stop
                } else {
                    Control::Reply(b as i32)
                }
            }
            (p, q) => {
                for slot in [p, q] {
                    match slot {
                        Slot::Failed(f) => self.record.failures.push(f),
                        Slot::Faulted(e) => self.fault = Some(e),
                        Slot::Threw(_) => {}
                    }
                }
                self.over = true;
                Control::Stop
            }
        }
    }
}

/// The sentence a participant reads about a failure.
pub fn describe_failure(cfg: &RefereeConfig, throw: u32, kind: &FailureKind) -> String {
    let l = cfg.params.l;
    let what = match kind {
        FailureKind::Rule(rule) => rule.to_string(),
        FailureKind::Output { line } => format!(
            "printed \"{line}\" where a throw (one integer on a line) was expected; \
             use make_throw() and print nothing else"
        ),
        FailureKind::Exited { status } => format!(
            "ended (exit status {status}) before the game was over; a game has {l} throws, \
             so keep calling make_throw() (best in an endless loop)"
        ),
        FailureKind::Crashed {
            signal,
            trap: Some(trap),
        } => format!(
            "crashed with {}: {trap}{}",
            signal_name(*signal),
            crash_hint(cfg, *signal)
        ),
        FailureKind::Crashed { signal, trap: None } => format!(
            "crashed with {} (signal {signal}){}",
            signal_name(*signal),
            crash_hint(cfg, *signal)
        ),
        FailureKind::CpuTime {
            fuel: Some(fuel), ..
        } => format!(
            "used more than its CPU time for the game, {fuel} WebAssembly operators (the \
             30 s of a SPARCstation 2; requirement 6)"
        ),
        FailureKind::CpuTime { limit_secs, .. } => {
            format!("used more than its {limit_secs} s of CPU time for the game (requirement 6)")
        }
        FailureKind::Memory {
            call_stack_kb: Some(stack_kb),
            ..
        } => format!(
            "recursed deeper than its call stack of {stack_kb} kB allows (requirement 5: \
             the memory of a strategy is limited)"
        ),
        FailureKind::Memory { limit_kb, .. } => format!(
            "needs more than the {limit_kb} kB of memory a strategy may use (requirement 5): \
             make static arrays smaller"
        ),
        FailureKind::ForbiddenCall => "made a system call other than read, write or exit, and was \
             stopped (requirement 1: no library routines except the five)"
            .to_string(),
        FailureKind::WallClock { limit_ms } => format!(
            "gave no throw within the game's wall-clock limit of {} s \
             (it blocked, or waited for input that never comes)",
            *limit_ms as f64 / 1000.0
        ),
        FailureKind::NotReading => {
            "stopped reading the opponent's throws (make_throw() reads them)".to_string()
        }
        FailureKind::Unstartable { error } => format!(
            "could not be started ({error}); a strategy must be the static program the \
             compile service builds"
        ),
    };
    format!("throw {throw}: {what}")
}

fn crash_hint(cfg: &RefereeConfig, signal: i32) -> String {
    if signal == libc::SIGSEGV || signal == libc::SIGBUS {
        format!(
            "; a bad pointer, or local variables beyond its {} kB of stack (recursion too \
             deep, or local arrays too large: make large arrays static), or data beyond the \
             memory limit of {} kB",
            crate::toolchain::wasm::SHADOW_STACK_BYTES / 1024,
            cfg.limits.memory_bytes / 1024
        )
    } else {
        String::new()
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "a segmentation fault",
        libc::SIGBUS => "a bus error",
        libc::SIGILL => "an illegal instruction",
        libc::SIGFPE => "an arithmetic exception (division by zero?)",
        libc::SIGTRAP => "a trap",
        libc::SIGABRT => "an abort",
        libc::SIGXFSZ => "a file size violation",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_reasons_name_rule_and_throw() {
        let cfg = RefereeConfig::default();
        let r = describe_failure(
            &cfg,
            17,
            &FailureKind::Rule(RuleBreak::OutOfRange {
                thrown: 0,
                a: 1,
                b: 12288,
            }),
        );
        assert_eq!(
            r,
            "throw 17: threw 0, outside the allowed range 1..12288 (rule 1)"
        );
        let r = describe_failure(
            &cfg,
            3,
            &FailureKind::CpuTime {
                limit_secs: 2,
                fuel: None,
            },
        );
        assert!(r.starts_with("throw 3: used more than its 2 s of CPU time"));
        let r = describe_failure(
            &cfg,
            4,
            &FailureKind::CpuTime {
                limit_secs: 0,
                fuel: Some(DEFAULT_FUEL),
            },
        );
        assert!(
            r.starts_with("throw 4: used more than its CPU time for the game, 1710000000"),
            "{r}"
        );
    }

    #[test]
    fn failures_stored_by_an_older_version_still_read() {
        let old: FailureKind = serde_json::from_str(r#"{"failure":"cpu_time","limit_secs":2}"#)
            .expect("an old cpu_time failure");
        assert_eq!(
            old,
            FailureKind::CpuTime {
                limit_secs: 2,
                fuel: None
            }
        );
        let old: FailureKind =
            serde_json::from_str(r#"{"failure":"crashed","signal":11}"#).expect("an old crash");
        assert_eq!(
            old,
            FailureKind::Crashed {
                signal: 11,
                trap: None
            }
        );
        let old: RefereeConfig = serde_json::from_str(
            r#"{"params":{"a":1,"b":12288,"k":8,"l":1000},"limits":{"cpu_secs":2,"memory_bytes":1048576},"wall":{"secs":10,"nanos":0}}"#,
        )
        .expect("an old referee configuration");
        assert_eq!(old.fuel, DEFAULT_FUEL);
    }
}
