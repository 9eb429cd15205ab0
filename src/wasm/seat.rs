//! The two players of one game, on the referee's thread.
//!
//! The *lead* ([`lead`]) runs its `main` as an ordinary call; each of its
//! `make_throw` calls hands its throw to a callback of the referee's, which
//! answers with the opponent's throw or stops it. The other player is a
//! [`Seat`]: a fiber suspended in every `make_throw`, which the referee
//! drives with [`Seat::step`] from that callback: it runs until the
//! strategy calls `make_throw` (a [`Step::Threw`]) or ends (returns from
//! `main`, or traps: [`Step::Ended`]). A throw is thus one switch to the
//! seat's stack and back. Nothing here waits for anything but the
//! strategies' own computation, so a game never blocks its thread, and the
//! two players take turns on one thread without a context switch of the
//! operating system.
//!
//! The seat knows no rule: it hands over what the strategy threw and the
//! opponent's throw the referee gives back.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use wasmtime::{
    Caller, Engine, Func, Instance, InstancePre, Linker, Store, StoreContextMut, Trap, TypedFunc,
    UpdateDeadline, Val,
};

use super::engine::{ticks, EPOCH_TICK};

/// A strategy ready to play: its module compiled and linked with the
/// referee's functions.
pub struct Strategy {
    /// SHA-256 of the `.wasm` (by which another machine fetches and
    /// verifies it).
    pub sha256: String,
    pub(super) pre: InstancePre<SeatData>,
    pub(super) lead_pre: InstancePre<LeadData>,
    /// What the structural check learnt of its `.wasm` (how `main` is
    /// called: its number of (i32) parameters).
    pub(super) shape: super::check::Shape,
    /// The size of its compiled code.
    pub(super) code_bytes: usize,
}

impl std::fmt::Debug for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Strategy")
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

/// Fuel one call of the referee's `seed` costs: a call out of the module
/// takes as long as a hundred ordinary operators. The runtime calls it
/// once, and a checked strategy cannot call it at all, but a module of an
/// older version could call it in a loop. (`make_throw` needs no weight:
/// the referee ends the game at its last throw, so it is called at most
/// L + 1 times.)
pub const HOST_CALL_FUEL: u64 = 100;

/// What the referee's functions see of a seat.
pub struct SeatData {
    exchange: Arc<Exchange>,
    seed: u64,
    watch: Arc<GameWatch>,
}

/// The watchdog's view of one game: how long each player has run, in
/// ticks of the watchdog ([`EPOCH_TICK`]), each counted from its own start
/// and over its own running only. The seat's steps are timed by the tick
/// counter (a tick that falls inside a step is the seat's: an unbiased
/// count of its time at the cost of two atomic reads a throw); the lead
/// runs whenever the seat does not.
#[derive(Debug)]
pub struct GameWatch {
    started: u64,
    seat_ticks: AtomicU64,
    /// The tick the seat's current step began at, or [`IDLE`].
    seat_since: AtomicU64,
}

const IDLE: u64 = u64::MAX;

impl GameWatch {
    /// A game starts now.
    pub fn start() -> Arc<GameWatch> {
        Arc::new(GameWatch {
            started: ticks(),
            seat_ticks: AtomicU64::new(0),
            seat_since: AtomicU64::new(IDLE),
        })
    }

    fn seat_own(&self, now: u64) -> u64 {
        let since = self.seat_since.load(Ordering::Relaxed);
        self.seat_ticks.load(Ordering::Relaxed)
            + if since == IDLE {
                0
            } else {
                now.saturating_sub(since)
            }
    }

    fn lead_own(&self, now: u64) -> u64 {
        now.saturating_sub(self.started)
            .saturating_sub(self.seat_own(now))
    }
}

/// Which player a store is, for the watchdog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Player {
    Lead,
    Seat,
}

/// The watchdog ended a strategy: it ran longer than its fuel can take on
/// any sound machine. Never a player's failure: the engine is at fault
/// (or the machine), and the game is played again.
#[derive(Debug)]
pub struct WatchdogTripped {
    pub own: std::time::Duration,
}

impl std::fmt::Display for WatchdogTripped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the watchdog stopped a strategy after {:.1} s of its own running time, longer \
             than its fuel can take on a sound machine (an engine or machine fault, not the \
             strategy's)",
            self.own.as_secs_f64()
        )
    }
}

impl std::error::Error for WatchdogTripped {}

/// Takes `HOST_CALL_FUEL` from the calling strategy, or ends it for its
/// CPU time when it has less.
fn charge_host_call<T: 'static>(caller: &mut Caller<'_, T>) -> wasmtime::Result<()> {
    let fuel = caller.get_fuel()?;
    if fuel < HOST_CALL_FUEL {
        caller.set_fuel(0)?;
        return Err(wasmtime::Error::from(Trap::OutOfFuel));
    }
    caller.set_fuel(fuel - HOST_CALL_FUEL)
}

/// The throw a strategy made, shared between the host function (inside
/// the fiber) and the referee (outside).
struct Exchange {
    /// The throw of the pending `make_throw`, or [`NONE`].
    thrown: AtomicI64,
}

const NONE: i64 = i64::MIN;

std::thread_local! {
    /// The opponent's throw that the pending `make_throw` of the seat being
    /// stepped on this thread returns: set by [`Seat::step`] just before
    /// it resumes the seat's fiber (on this thread), taken by the
    /// `make_throw` it resumes ([`AwaitReply`]), cleared by each new
    /// `make_throw` before it suspends. Kept here, not in the seat's
    /// [`Exchange`], so that the future of a `make_throw` holds nothing and
    /// needs no memory of its own: a `Box` of it allocates nothing, where
    /// a future holding the exchange cost a `malloc` and a `free` a throw
    /// (and an `Arc`'s two atomic counts).
    static REPLY: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

/// The limits of one seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatLimits {
    /// Fuel for the whole game (one unit per WebAssembly operator, more
    /// for the slow ones: [`super::engine::operator_cost`]).
    pub fuel: u64,
    /// The watchdog: the player's own running time in the game, far above
    /// what its fuel takes; past it the game is an engine fault
    /// ([`WatchdogTripped`]), never the player's.
    pub wall: std::time::Duration,
}

/// How a strategy ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// `main` returned (its value, 0 for a `void main`).
    Returned(i32),
    /// It trapped: used up its fuel, its call stack, the watchdog's time,
    /// or executed an operator that traps.
    Trapped(Trap),
    /// The engine failed (not the strategy's fault).
    Fault(String),
    /// The referee stopped it ([`Control::Stop`]): the game is over.
    Stopped,
}

/// What the referee's callback tells the lead after one of its throws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// `make_throw` returns this (the opponent's throw).
    Reply(i32),
    /// The game is over: the lead is stopped where it is.
    Stop,
}

/// What answers the lead's throws: the referee's game in progress. The
/// lead's store owns it for the game and [`lead`] gives it back, so the
/// game reaches it through a plain `&mut` a throw (no lock, no shared
/// count).
pub trait OnThrow: std::any::Any + Send {
    /// The lead threw `thrown`: the opponent's throw, or stop.
    fn on_throw(&mut self, thrown: i32) -> Control;
}

/// A lead's game that ends at its first throw (the fuel benchmark's).
pub struct StopAtFirstThrow;

impl OnThrow for StopAtFirstThrow {
    fn on_throw(&mut self, _: i32) -> Control {
        Control::Stop
    }
}

/// What the referee's functions see of the lead.
pub struct LeadData {
    on_throw: Box<dyn OnThrow>,
    seed: u64,
    watch: Arc<GameWatch>,
}

/// The game's watch of a store's data (for its watchdog callback).
trait Watched {
    fn watch(&self) -> &GameWatch;
}

impl Watched for LeadData {
    fn watch(&self) -> &GameWatch {
        &self.watch
    }
}

impl Watched for SeatData {
    fn watch(&self) -> &GameWatch {
        &self.watch
    }
}

/// The error that unwinds the lead when the referee stops it.
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the referee stopped the strategy")
    }
}

impl std::error::Error for Stopped {}

/// The linker of the lead: the referee's two functions, called directly.
pub(super) fn lead_linker(engine: &Engine) -> wasmtime::Result<Linker<LeadData>> {
    let mut linker = Linker::new(engine);
    linker.func_wrap(
        "knobeln",
        "seed",
        |mut caller: Caller<'_, LeadData>| -> wasmtime::Result<i64> {
            charge_host_call(&mut caller)?;
            Ok(caller.data().seed as i64)
        },
    )?;
    linker.func_wrap(
        "knobeln",
        "make_throw",
        |mut caller: Caller<'_, LeadData>, thrown: i32| -> wasmtime::Result<i32> {
            match caller.data_mut().on_throw.on_throw(thrown) {
                Control::Reply(r) => Ok(r),
                Control::Stop => Err(wasmtime::Error::new(Stopped)),
            }
        },
    )?;
    Ok(linker)
}

/// Runs `strategy` as the lead of a game with its generator's `seed`:
/// `on_throw` gets each of its throws and answers it. Returns how it
/// ended ([`Ending::Stopped`] when `on_throw` stopped it) and `on_throw`
/// itself, with what it kept of the game. `watch` is the game's, shared
/// with the [`Seat`] of the other player.
pub fn lead<H: OnThrow>(
    strategy: &Strategy,
    seed: u64,
    limits: SeatLimits,
    watch: Arc<GameWatch>,
    on_throw: H,
) -> (Ending, H) {
    let pre = &strategy.lead_pre;
    let data = LeadData {
        on_throw: Box::new(on_throw),
        seed,
        watch,
    };
    let mut store = new_store(pre.module().engine(), data, limits, Player::Lead);
    let ending = match &mut store {
        Ok(store) => play_lead(strategy, store),
        Err((_, ending)) => ending.clone(),
    };
    let data = match store {
        Ok(store) => store.into_data(),
        Err((store, _)) => store.into_data(),
    };
    let on_throw: Box<dyn std::any::Any> = data.on_throw;
    match on_throw.downcast::<H>() {
        Ok(h) => (ending, *h),
        Err(_) => unreachable!("the lead's store holds the handler it was given"),
    }
}

/// The lead's instance made and its `main` run to its end.
fn play_lead(strategy: &Strategy, store: &mut Store<LeadData>) -> Ending {
    let instance = match strategy.lead_pre.instantiate(&mut *store) {
        Ok(i) => i,
        Err(e) => return ending_of(e),
    };
    let (start, main) = match entries(&instance, store) {
        Ok(e) => e,
        Err(ending) => return ending,
    };
    if let Err(e) = start.call(&mut *store, ()) {
        return ending_of(e);
    }
    let (params, mut results) = main_vals(&main, store, strategy.shape.main_params);
    match main.call(&mut *store, &params, &mut results) {
        Ok(()) => returned(&results),
        Err(e) => ending_of(e),
    }
}

/// A store for one player with its fuel and the watchdog: at every tick
/// in which the player runs, its own running time is compared with
/// `limits.wall`. `Err`: the store (for its data) and how the player
/// ended without running.
fn new_store<T: Watched + Send + 'static>(
    engine: &Engine,
    data: T,
    limits: SeatLimits,
    player: Player,
) -> Result<Store<T>, (Store<T>, Ending)> {
    let mut store = Store::new(engine, data);
    if let Err(e) = store.set_fuel(limits.fuel) {
        return Err((store, Ending::Fault(format!("{e:#}"))));
    }
    let budget = deadline_ticks(limits);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |cx: StoreContextMut<'_, T>| {
        let now = ticks();
        let watch = cx.data().watch();
        let own = match player {
            Player::Lead => watch.lead_own(now),
            Player::Seat => watch.seat_own(now),
        };
        if own > budget {
            return Err(wasmtime::Error::new(WatchdogTripped {
                own: EPOCH_TICK * own as u32,
            }));
        }
        Ok(UpdateDeadline::Continue(1))
    });
    Ok(store)
}

/// The runtime's `knobeln_start` and the strategy's `main` of an instance.
fn entries<T: 'static>(
    instance: &Instance,
    store: &mut Store<T>,
) -> Result<(TypedFunc<(), ()>, Func), Ending> {
    let start = instance
        .get_typed_func::<(), ()>(&mut *store, "knobeln_start")
        .map_err(|e| Ending::Fault(format!("{e:#}")))?;
    let main = instance
        .get_func(&mut *store, "main")
        .ok_or_else(|| Ending::Fault("the module has no main".into()))?;
    Ok((start, main))
}

/// `main`'s arguments (zeros) and room for its result.
fn main_vals<T: 'static>(main: &Func, store: &Store<T>, params: usize) -> (Vec<Val>, Vec<Val>) {
    (
        vec![Val::I32(0); params],
        vec![Val::I32(0); main.ty(store).results().len()],
    )
}

/// How a strategy whose `main` returned ended (0 for a `void main`).
fn returned(results: &[Val]) -> Ending {
    Ending::Returned(match results.first() {
        Some(Val::I32(v)) => *v,
        _ => 0,
    })
}

/// The watchdog's budget in ticks of a player's own running time.
fn deadline_ticks(limits: SeatLimits) -> u64 {
    limits.wall.as_millis().div_ceil(EPOCH_TICK.as_millis()) as u64 + 1
}

/// What one step of a seat gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Threw(i32),
    Ended(Ending),
}

type Running = Pin<Box<dyn Future<Output = Ending> + Send>>;

/// A strategy's instance in a game.
pub struct Seat {
    running: Option<Running>,
    exchange: Arc<Exchange>,
    watch: Arc<GameWatch>,
}

/// The linker with the referee's two functions.
pub(super) fn linker(engine: &Engine) -> wasmtime::Result<Linker<SeatData>> {
    let mut linker = Linker::new(engine);
    linker.func_wrap(
        "knobeln",
        "seed",
        |mut caller: Caller<'_, SeatData>| -> wasmtime::Result<i64> {
            charge_host_call(&mut caller)?;
            Ok(caller.data().seed as i64)
        },
    )?;
    linker.func_wrap_async(
        "knobeln",
        "make_throw",
        |caller: Caller<'_, SeatData>, (thrown,): (i32,)| {
            caller
                .data()
                .exchange
                .thrown
                .store(thrown as i64, Ordering::Relaxed);
            // Back to the referee until it has both throws: the next step
            // brings the reply.
            REPLY.set(None);
            Box::new(AwaitReply) as Box<dyn Future<Output = i32> + Send>
        },
    )?;
    Ok(linker)
}

/// The future of a seat's `make_throw`: pending (the fiber suspends, the
/// referee's [`Seat::step`] returns) until the next step has put the
/// opponent's throw in [`REPLY`], then that throw. Zero-sized: boxing it
/// allocates nothing.
struct AwaitReply;

impl Future for AwaitReply {
    type Output = i32;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<i32> {
        match REPLY.take() {
            Some(reply) => Poll::Ready(reply as i32),
            None => Poll::Pending,
        }
    }
}

impl Seat {
    /// Instantiates `strategy` for a game with its generator's `seed`.
    /// Nothing of the strategy runs before the first [`Seat::step`].
    pub fn new(strategy: &Strategy, seed: u64, limits: SeatLimits, watch: Arc<GameWatch>) -> Seat {
        let exchange = Arc::new(Exchange {
            thrown: AtomicI64::new(NONE),
        });
        let pre = strategy.pre.clone();
        let main_params = strategy.shape.main_params;
        let data = SeatData {
            exchange: exchange.clone(),
            seed,
            watch: watch.clone(),
        };
        let engine = pre.module().engine().clone();
        let running: Running = Box::pin(async move {
            let mut store = match new_store(&engine, data, limits, Player::Seat) {
                Ok(s) => s,
                Err((_, ending)) => return ending,
            };
            let instance = match pre.instantiate_async(&mut store).await {
                Ok(i) => i,
                Err(e) => return ending_of(e),
            };
            let (start, main) = match entries(&instance, &mut store) {
                Ok(e) => e,
                Err(ending) => return ending,
            };
            if let Err(e) = start.call_async(&mut store, ()).await {
                return ending_of(e);
            }
            let (params, mut results) = main_vals(&main, &store, main_params);
            match main.call_async(&mut store, &params, &mut results).await {
                Ok(()) => returned(&results),
                Err(e) => ending_of(e),
            }
        });
        Seat {
            running: Some(running),
            exchange,
            watch,
        }
    }

    /// Runs the strategy until its next throw or its end; `reply` is the
    /// opponent's throw that its pending `make_throw` returns (ignored
    /// before the first throw). A step after the strategy's end is the
    /// engine's fault ([`Ending::Fault`]): the referee never takes one.
    pub fn step(&mut self, reply: i64) -> Step {
        let Some(running) = self.running.as_mut() else {
            return Step::Ended(Ending::Fault("the strategy has ended".into()));
        };
        self.exchange.thrown.store(NONE, Ordering::Relaxed);
        // Read by the pending `make_throw` this poll resumes, on this
        // thread (before the first throw nothing reads it: each
        // `make_throw` clears it before it waits).
        REPLY.set(Some(reply));
        let mut cx = Context::from_waker(Waker::noop());
        let since = ticks();
        self.watch.seat_since.store(since, Ordering::Relaxed);
        let polled = running.as_mut().poll(&mut cx);
        // Nothing of this step's reply outlives it (a seat that ended
        // before it took it leaves none for the next seat on this thread).
        REPLY.set(None);
        // Only this thread writes the seat's count (the watchdog's
        // callbacks that read it run here too): a load and a store, not a
        // locked `fetch_add` a throw.
        let spent = ticks().saturating_sub(since);
        let seat_ticks = &self.watch.seat_ticks;
        seat_ticks.store(
            seat_ticks.load(Ordering::Relaxed) + spent,
            Ordering::Relaxed,
        );
        self.watch.seat_since.store(IDLE, Ordering::Relaxed);
        match polled {
            Poll::Pending => match self.exchange.thrown.load(Ordering::Relaxed) {
                NONE => {
                    self.running = None;
                    Step::Ended(Ending::Fault(
                        "the strategy was suspended outside make_throw".into(),
                    ))
                }
                t => Step::Threw(t as i32),
            },
            Poll::Ready(ending) => {
                self.running = None;
                Step::Ended(ending)
            }
        }
    }
}

fn ending_of(e: wasmtime::Error) -> Ending {
    if e.downcast_ref::<Stopped>().is_some() {
        return Ending::Stopped;
    }
    match e.downcast_ref::<Trap>() {
        Some(t) => Ending::Trapped(*t),
        None => Ending::Fault(format!("{e:#}")),
    }
}
