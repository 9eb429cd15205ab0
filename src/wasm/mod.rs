//! Strategies as WebAssembly modules: the one engine that runs them, and
//! the cache of compiled modules.
//!
//! A KNOBELN strategy is its C source compiled by clang for `wasm32` and
//! linked with the contest runtime ([`crate::toolchain::wasm`]). What it
//! can do is fixed by construction: it sees its own linear memory (at most
//! the contest's memory limit, 1024 kB), imports exactly the referee's two
//! functions (`knobeln.seed`, `knobeln.make_throw`), and every operator it
//! executes costs one unit of fuel. There is no instruction that reads a
//! clock, the CPU it runs on or anything outside its memory, and its
//! memory starts as its data segments and zeros: a strategy's behaviour is
//! a function of its code and its seed.
//!
//! The engine is the same on every machine: Cranelift for the baseline
//! x86-64 target (no feature inferred from the host's CPU, so the same
//! machine code and the same call-stack use everywhere), NaN
//! canonicalisation, only the WebAssembly 1.0 features (no bulk memory,
//! SIMD, threads, reference types, tail calls, …), fuel, and an epoch
//! watchdog against engine faults. Instances come from a pooling
//! allocator; both players of a game run on the caller's thread, the lead
//! as an ordinary call and the other as a fiber ([`seat`]).
//!
//! This module knows nothing of the game's rules: [`seat`] reports throws
//! and endings, [`crate::referee`] judges them.

pub mod seat;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, InstancePre, Linker, Module, OptLevel,
    PoolingAllocationConfig, WasmFeatures,
};

pub use seat::{
    lead, Control, Ending, GameWatch, Seat, SeatLimits, Step, WatchdogTripped, HOST_CALL_FUEL,
};

/// Bytes of one WebAssembly page.
pub const PAGE_BYTES: u64 = 65536;

/// The engine's own call stack for a strategy (where the machine code of
/// its functions keeps return addresses and the locals that are not in its
/// linear memory): a recursion that needs more ends as a memory failure.
/// Cranelift compiles for one fixed target, so the same strategy reaches
/// the same depth on every x86-64 machine.
pub const CALL_STACK_BYTES: usize = 512 * 1024;

/// The largest linear memory any contest may configure (`[rules]
/// memory_kb`): the pool's slots are this large.
pub const MAX_MEMORY_BYTES: u64 = 64 << 20;

/// Instances the pool holds at once: two per game being played. Games are
/// played one per thread, so this bounds the threads that play at once.
pub const POOL_INSTANCES: u32 = 512;

/// The most games that play at once in one process (the local pool's and
/// a worker's game threads are capped to it), with room for the trial
/// games of the compile service beside them.
pub const MAX_GAMES_AT_ONCE: usize = POOL_INSTANCES as usize / 2 - 16;

/// Compiled modules kept for reuse (by SHA-256 of the `.wasm`), at most
/// this many …
const CACHE_ENTRIES: usize = 256;

/// … holding at most this much compiled code together (a module at the
/// module check's limits compiles to a few MB: `knobeln bench compile`).
pub const CACHE_CODE_BYTES: usize = 256 << 20;

/// How often the watchdog's epoch advances.
pub const EPOCH_TICK: Duration = Duration::from_millis(50);

/// Faults of the engine itself (never a participant's mistake).
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    #[error("the WebAssembly engine could not be set up: {0}")]
    Engine(String),
}

/// The process's engine (built once) and the linker with the referee's
/// functions.
struct Runtime {
    engine: Engine,
    linker: Linker<seat::SeatData>,
    lead_linker: Linker<seat::LeadData>,
}

fn runtime() -> Result<&'static Runtime, WasmError> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let engine =
                Engine::new(&config().map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            let linker = seat::linker(&engine).map_err(|e| e.to_string())?;
            let lead_linker = seat::lead_linker(&engine).map_err(|e| e.to_string())?;
            start_watchdog(engine.clone());
            Ok(Runtime {
                engine,
                linker,
                lead_linker,
            })
        })
        .as_ref()
        .map_err(|e| WasmError::Engine(e.clone()))
}

/// The engine's configuration (see the module documentation).
pub fn config() -> wasmtime::Result<Config> {
    let mut c = Config::new();
    // The baseline x86-64 target: no CPU feature inferred from this host.
    c.target("x86_64-unknown-linux-gnu")?;
    c.cranelift_opt_level(OptLevel::Speed);
    c.cranelift_nan_canonicalization(true);
    c.consume_fuel(true);
    c.operator_cost(operator_cost());
    c.epoch_interruption(true);
    c.max_wasm_stack(CALL_STACK_BYTES);
    c.async_stack_size(CALL_STACK_BYTES + (256 << 10));
    c.wasm_backtrace_max_frames(None);
    c.wasm_features(WasmFeatures::all(), false);
    // WebAssembly 1.0 (its "gc types" flag is an internal of the parser that
    // needs the GC support this build leaves out; 1.0 has no GC types).
    c.wasm_features(WasmFeatures::WASM1.difference(WasmFeatures::GC_TYPES), true);
    let mut pool = PoolingAllocationConfig::default();
    pool.total_core_instances(POOL_INSTANCES)
        .total_memories(POOL_INSTANCES)
        .total_tables(POOL_INSTANCES)
        .total_stacks(POOL_INSTANCES)
        .max_memories_per_module(1)
        .max_tables_per_module(1)
        .table_elements(16 * 1024)
        .max_memory_size(MAX_MEMORY_BYTES as usize);
    c.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Ok(c)
}

/// The watchdog's ticks since the engine was built.
static TICKS: AtomicU64 = AtomicU64::new(0);

/// The watchdog's tick count now (advanced every [`EPOCH_TICK`]).
pub(crate) fn ticks() -> u64 {
    TICKS.load(Ordering::Relaxed)
}

/// Advances the tick count and the engine's epoch every [`EPOCH_TICK`]
/// for the life of the process: a running store checks its player's own
/// running time at the next loop or call after a tick.
fn start_watchdog(engine: Engine) {
    std::thread::Builder::new()
        .name("wasm-watchdog".into())
        .spawn(move || loop {
            std::thread::sleep(EPOCH_TICK);
            TICKS.fetch_add(1, Ordering::Relaxed);
            engine.increment_epoch();
        })
        .expect("start the WebAssembly watchdog");
}

/// Fuel of the operators that take longer than the others (every other
/// operator costs what wasmtime charges: one, or nothing for the control
/// structure `block`, `loop`, `end`, `nop`, `drop`). `memory.grow` calls
/// into the engine (34 ns here, measured by `knobeln bench fuel`); a
/// strategy's memory cannot grow, but the call can be made in a loop.
pub fn operator_cost() -> wasmtime::OperatorCost {
    let mut cost = wasmtime::OperatorCost::new();
    cost.MemoryGrow = MEMORY_GROW_FUEL;
    cost
}

/// What `memory.grow` costs ([`operator_cost`]).
pub const MEMORY_GROW_FUEL: u8 = 255;

/// A strategy ready to play: its module compiled and linked with the
/// referee's functions.
pub struct Strategy {
    /// SHA-256 of the `.wasm` (by which another machine fetches and
    /// verifies it).
    pub sha256: String,
    pre: InstancePre<seat::SeatData>,
    lead_pre: InstancePre<seat::LeadData>,
    /// How `main` is called: its number of (i32) parameters.
    main_params: usize,
    /// The size of its compiled code.
    code_bytes: usize,
}

impl std::fmt::Debug for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Strategy")
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

/// Why a stored program cannot play (the player's fault: it is not a
/// module of the contest's shape).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotPlayable(pub String);

/// A program ready to play, or why it cannot.
pub type Loaded = Result<Arc<Strategy>, NotPlayable>;

/// Compiles (or takes from the cache) the module `wasm`. `Ok(Err(_))`: the
/// bytes are not a module this engine plays (a participant's fault);
/// `Err`: the engine could not be set up.
pub fn load(wasm: &[u8]) -> Result<Loaded, WasmError> {
    load_hashed(wasm, crate::engine::prepare::sha256_hex(wasm))
}

/// [`load`] for a caller that has `wasm`'s SHA-256 already (it fetched or
/// stored the module by it).
pub fn load_hashed(wasm: &[u8], sha256: String) -> Result<Loaded, WasmError> {
    if let Some(s) = cache().lock().expect("module cache").get(&sha256) {
        return Ok(Ok(s));
    }
    let rt = runtime()?;
    let shape = match crate::toolchain::wasm::check_module(wasm, MAX_MEMORY_BYTES) {
        Ok(shape) => shape,
        Err(problems) => return Ok(Err(NotPlayable(problems.join("; ")))),
    };
    let module = match Module::new(&rt.engine, wasm) {
        Ok(m) => m,
        Err(e) => return Ok(Err(NotPlayable(format!("{e:#}")))),
    };
    let (pre, lead_pre) = match (
        rt.linker.instantiate_pre(&module),
        rt.lead_linker.instantiate_pre(&module),
    ) {
        (Ok(p), Ok(l)) => (p, l),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(NotPlayable(format!("{e:#}")))),
    };
    let s = Arc::new(Strategy {
        sha256: sha256.clone(),
        pre,
        lead_pre,
        main_params: shape.main_params,
        code_bytes: code_bytes(&module),
    });
    cache().lock().expect("module cache").put(sha256, s.clone());
    Ok(Ok(s))
}

/// The bytes of `module`'s compiled code image.
fn code_bytes(module: &Module) -> usize {
    let range = module.image_range();
    (range.end as usize).saturating_sub(range.start as usize)
}

/// Compiles `wasm` (a module of the contest's shape) without the cache:
/// the size of its compiled code. For `knobeln bench compile`.
pub fn compile_uncached(wasm: &[u8]) -> Result<usize, WasmError> {
    let rt = runtime()?;
    crate::toolchain::wasm::check_module(wasm, MAX_MEMORY_BYTES)
        .map_err(|p| WasmError::Engine(p.join("; ")))?;
    let module = Module::new(&rt.engine, wasm).map_err(|e| WasmError::Engine(format!("{e:#}")))?;
    Ok(code_bytes(&module))
}

/// Compiled modules by content hash, the least recently used dropped first.
struct Cache {
    entries: HashMap<String, (Arc<Strategy>, u64)>,
    clock: u64,
    /// The compiled code of all entries, in bytes.
    code_bytes: usize,
}

impl Cache {
    fn get(&mut self, sha256: &str) -> Option<Arc<Strategy>> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(sha256).map(|(s, used)| {
            *used = clock;
            s.clone()
        })
    }

    fn put(&mut self, sha256: String, s: Arc<Strategy>) {
        while !self.entries.is_empty()
            && (self.entries.len() >= CACHE_ENTRIES
                || self.code_bytes + s.code_bytes > CACHE_CODE_BYTES)
        {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((gone, _)) = self.entries.remove(&oldest) {
                self.code_bytes -= gone.code_bytes;
            }
        }
        self.clock += 1;
        self.code_bytes += s.code_bytes;
        if let Some((old, _)) = self.entries.insert(sha256, (s, self.clock)) {
            self.code_bytes -= old.code_bytes;
        }
    }
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| {
        Mutex::new(Cache {
            entries: HashMap::new(),
            clock: 0,
            code_bytes: 0,
        })
    })
}

/// Whether `bytes` look like a WebAssembly module (its magic number):
/// a stored program without it is a native binary of an older version.
pub fn is_module(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\0asm")
}
