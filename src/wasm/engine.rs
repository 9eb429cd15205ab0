//! The engine's configuration (the baseline target, fuel and its weights,
//! WebAssembly 1.0, the pooling allocator), its limits, and the epoch
//! watchdog's ticks. Compiling and keeping modules is [`super::modules`]'s,
//! playing them [`super::seat`]'s; this file knows neither.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig,
    WasmFeatures,
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

/// What a slot of the pool keeps of a linear memory (and of a table) when
/// its instance is gone, reset to the module's initial contents in place
/// ([`config`]): the default memory limit of a contest. A strategy that
/// wrote more has the rest given back to the kernel. The pool's resident
/// memory grows by at most this much per slot used (the slots in use and
/// the [`WARM_SLOTS`] unused warm ones): 1 MiB each for a strategy that
/// writes its whole memory, a few pages for most; at most about 100 MiB
/// beyond the instances playing, whatever the field.
pub const SLOT_KEEP_RESIDENT_BYTES: usize = 1 << 20;

/// Unused slots the pool keeps warm (affine to the module last in them,
/// so a module plays again in a slot already mapped for it): enough for
/// two groups of 41 and the compile service's trial games. Set here, not
/// left to wasmtime's default (also 100), because it bounds the memory
/// the slots keep ([`SLOT_KEEP_RESIDENT_BYTES`]).
pub const WARM_SLOTS: u32 = 100;

/// Compiled modules kept for reuse (by SHA-256 of the `.wasm`), at most
/// this many … More than a field the contest plays round after round: a
/// round loads its groups' programs one group after the other, so a cache
/// smaller than the field drops each module just before it is wanted again
/// and compiles every program of every round anew on the server's thread
/// (with 256 entries, a field of 400 spent about 15 us a game compiling).
/// A module that has played keeps an open file (its static data's image):
/// compiling raises the process's soft limit of open files to make room
/// (`modules::room_for_cached_files`).
pub(crate) const CACHE_ENTRIES: usize = 1024;

/// … holding at most this much compiled code together (a module at the
/// module check's limits compiles to a few MB: `knobeln bench compile`).
pub const CACHE_CODE_BYTES: usize = 256 << 20;

/// The bytes of compiled modules the process keeps as files in its
/// private folder beside the cache (`spill`), counted as the filesystem
/// charges them: each file's length rounded up to whole blocks. A module
/// the cache dropped is written there and loads again from there instead
/// of compiling. A strategy of the scale benchmark serializes to about
/// 15 kB (16 kB in 4 KiB blocks; docs/src/figures.md), a module at the
/// module check's limits to a few MB, so a field of 10,000 fits many
/// times; when the folder would hold more, the modules kept longest are
/// removed first.
pub const SPILL_BYTES: u64 = 2 << 30;

/// The most files (inodes) the spill's folder holds: a filesystem runs
/// out of inodes as it runs out of blocks, and many tiny modules would
/// use up inodes long before [`SPILL_BYTES`]. 65,536 files of the
/// smallest charge (one 4 KiB block) are 256 MiB; when the folder would
/// hold more, the modules kept longest are removed first.
pub const SPILL_FILES: usize = 65_536;

/// How often the watchdog's epoch advances.
pub const EPOCH_TICK: Duration = Duration::from_millis(50);

/// Faults of the engine itself (never a participant's mistake).
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    #[error("the WebAssembly engine could not be set up: {0}")]
    Engine(String),
}

/// The bytes of compiled functions the process keeps ([`CompiledFunctions`]):
/// the example strategy's functions (its own, the runtime's and the
/// trampolines) take a small part of it.
pub const FUNCTION_CACHE_BYTES: usize = 8 << 20;

/// What a kept function is counted beyond its key's and code's lengths:
/// the map's entry and the allocations' headers.
const FUNCTION_ENTRY_BYTES: usize = 128;

thread_local! {
    /// Whether this thread compiles the module whose functions are kept
    /// ([`keep_functions_with`]): only then does the cache take a function.
    static FILLING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Cranelift's compiled functions, kept by the function's input (its
/// intermediate code and the target's settings, hashed by Cranelift with
/// SHA-256: a function is taken from here only where Cranelift would
/// compile exactly this one again). Filled only from a module whose code
/// is public ([`keep_functions_with`]: the announcement's example strategy,
/// which links the runtime every strategy links): every compile after it
/// takes the runtime's functions and the trampolines from here instead of
/// compiling them again (about 1.5 ms of a compile's CPU, the figures
/// say). No participant's function is ever kept, so how fast a compile is
/// tells no team whether another's code was compiled. At most
/// [`FUNCTION_CACHE_BYTES`] of keys, code and entries: a function that
/// would go past it empties the cache first.
#[derive(Debug)]
pub struct CompiledFunctions {
    kept: std::sync::Mutex<KeptFunctions>,
    bound: usize,
    hits: AtomicU64,
}

#[derive(Debug, Default)]
struct KeptFunctions {
    by_key: std::collections::HashMap<Vec<u8>, Vec<u8>>,
    bytes: usize,
}

/// What a kept function is counted: its key, its code as allocated, and
/// its entry.
fn kept_bytes(key: &[u8], code: &Vec<u8>) -> usize {
    key.len() + code.capacity() + FUNCTION_ENTRY_BYTES
}

impl CompiledFunctions {
    /// An empty cache of at most `bound` bytes of keys, code and entries.
    pub fn new(bound: usize) -> CompiledFunctions {
        CompiledFunctions {
            kept: std::sync::Mutex::new(KeptFunctions::default()),
            bound,
            hits: AtomicU64::new(0),
        }
    }

    /// Functions taken from the cache so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Functions kept now.
    pub fn len(&self) -> usize {
        self.kept().by_key.len()
    }

    /// Whether no function is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of keys, code and entries kept now.
    pub fn bytes(&self) -> usize {
        self.kept().bytes
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, KeptFunctions> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl wasmtime::CacheStore for CompiledFunctions {
    fn get(&self, key: &[u8]) -> Option<std::borrow::Cow<'_, [u8]>> {
        let code = self.kept().by_key.get(key).cloned()?;
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(std::borrow::Cow::Owned(code))
    }

    fn insert(&self, key: &[u8], mut code: Vec<u8>) -> bool {
        if !FILLING.with(std::cell::Cell::get) {
            return false;
        }
        code.shrink_to_fit();
        let size = kept_bytes(key, &code);
        if size > self.bound {
            return false;
        }
        let mut kept = self.kept();
        if kept.bytes + size > self.bound {
            *kept = KeptFunctions::default();
        }
        if let Some(old) = kept.by_key.insert(key.to_vec(), code) {
            kept.bytes -= kept_bytes(key, &old);
        }
        kept.bytes += size;
        true
    }
}

/// Compiles `wasm`, a module whose code is public (the announcement's
/// example strategy), with `engine` on this thread, keeping its compiled
/// functions in the engine's [`CompiledFunctions`] (if it has one) for
/// every later compile; the module itself is not kept.
pub fn keep_functions_with(engine: &Engine, wasm: &[u8]) -> wasmtime::Result<()> {
    struct Filling;
    impl Drop for Filling {
        fn drop(&mut self) {
            FILLING.with(|f| f.set(false));
        }
    }
    FILLING.with(|f| f.set(true));
    let _filling = Filling;
    wasmtime::Module::new(engine, wasm)?;
    Ok(())
}

/// Whether an engine keeps Cranelift's compiled functions for the next
/// compile ([`CompiledFunctions`]).
#[derive(Debug, Clone)]
pub enum FunctionCache {
    Kept(std::sync::Arc<CompiledFunctions>),
    /// Every function compiled anew (tests compare the two).
    None,
}

/// The engine's configuration (see the module documentation), with the
/// process's cache of compiled functions.
pub fn config() -> wasmtime::Result<Config> {
    config_with(FunctionCache::Kept(kept_functions().clone()))
}

/// The process's cache of compiled functions (its engine's).
pub fn kept_functions() -> &'static std::sync::Arc<CompiledFunctions> {
    static KEPT: std::sync::OnceLock<std::sync::Arc<CompiledFunctions>> =
        std::sync::OnceLock::new();
    KEPT.get_or_init(|| std::sync::Arc::new(CompiledFunctions::new(FUNCTION_CACHE_BYTES)))
}

/// The engine's configuration with `cache` for its compiled functions:
/// the code compiled is the same either way.
pub fn config_with(cache: FunctionCache) -> wasmtime::Result<Config> {
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
    // No `.eh_frame` for the system's unwinder: nothing here unwinds
    // through a strategy's frames with it (a trap or the referee's stop
    // leaves them by wasmtime's own unwinding; a host function's panic is
    // caught at its boundary and resumed outside them). What it costs: a
    // backtrace taken in a host function (a panic's with `RUST_BACKTRACE`,
    // an error's with `RUST_LIB_BACKTRACE`) and a profiler's DWARF call
    // graph stop at the first WebAssembly frame (frame pointers, which
    // Cranelift keeps, still walk through). With it, every module loaded
    // registered its frames with libgcc, whose list of registered objects
    // (before GCC 13, as Debian 12's libgcc) is walked from the newest at
    // each module dropped: a module evicted from a cache of a thousand
    // walked past a thousand others, on the server's thread
    // (docs/src/figures.md). The code compiled is the same.
    c.native_unwind_info(false);
    c.wasm_features(WasmFeatures::all(), false);
    // WebAssembly 1.0 (its "gc types" flag is an internal of the parser that
    // needs the GC support this build leaves out; 1.0 has no GC types).
    c.wasm_features(WasmFeatures::WASM1.difference(WasmFeatures::GC_TYPES), true);
    let mut pool = PoolingAllocationConfig::default();
    pool.max_unused_warm_slots(WARM_SLOTS)
        .total_core_instances(POOL_INSTANCES)
        .total_memories(POOL_INSTANCES)
        .total_tables(POOL_INSTANCES)
        .total_stacks(POOL_INSTANCES)
        .max_memories_per_module(1)
        .max_tables_per_module(1)
        .table_elements(16 * 1024)
        .max_memory_size(MAX_MEMORY_BYTES as usize);
    // A slot given back is reset in place, without a system call, where
    // the kernel can say which of its pages were written (`PAGEMAP_SCAN`,
    // Linux 6.7): those pages are copied back from the module's image or
    // zeroed, up to `SLOT_KEEP_RESIDENT_BYTES`, and only the rest goes back
    // to the kernel with `madvise`. Each `madvise` makes the kernel flush
    // the address space's translations on every other CPU running a thread
    // of this process (a TLB shootdown: an interrupt, and a VM exit on a
    // virtual machine) and costs page faults when the slot is used again:
    // with games of 0.2 ms that made two game threads of one process slower
    // than two worker processes (docs/src/figures.md). Without the scan
    // the reset would be a `memset` of the whole kept size per instance,
    // dearer than the `madvise` it saves, so the defaults stay.
    if PoolingAllocationConfig::is_pagemap_scan_available() {
        pool.pagemap_scan(Enabled::Yes)
            .linear_memory_keep_resident(SLOT_KEEP_RESIDENT_BYTES)
            .table_keep_resident(SLOT_KEEP_RESIDENT_BYTES);
    }
    c.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    if let FunctionCache::Kept(kept) = cache {
        c.enable_incremental_compilation(kept)?;
    }
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
pub(super) fn start_watchdog(engine: Engine) {
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
/// A floating-point multiplication, division or square root whose operand
/// or result is subnormal (below 2^-1022 for a `double`) takes an x86-64
/// processor a microcode assist: about 50–60 ns of CPU here, 40 times an
/// ordinary operator, however quiet the machine. A strategy that chains
/// them (`x = x * y * y * …` with `x` subnormal and `y` one: two operators
/// a product) made a unit of fuel 17–23 times the slowest ordinary
/// operator's, and the contest's fuel 36–47 s of CPU per player instead of
/// the 2.1 s the server plans for (red team G18): they cost their weight,
/// [`FLOAT_ASSIST_FUEL`], whatever their operands, since the fuel is
/// counted before the operands are known.
/// An integer division or remainder by a number the compiler cannot see
/// (by a constant, clang writes a multiplication) is a `div` of the
/// processor's, about 6 ns here for 64 bits in a dependent chain (up to
/// 40 on older processors): [`DIVISION_FUEL`].
pub fn operator_cost() -> wasmtime::OperatorCost {
    let mut cost = wasmtime::OperatorCost::new();
    cost.MemoryGrow = MEMORY_GROW_FUEL;
    cost.F32Mul = FLOAT_ASSIST_FUEL;
    cost.F32Div = FLOAT_ASSIST_FUEL;
    cost.F32Sqrt = FLOAT_ASSIST_FUEL;
    cost.F64Mul = FLOAT_ASSIST_FUEL;
    cost.F64Div = FLOAT_ASSIST_FUEL;
    cost.F64Sqrt = FLOAT_ASSIST_FUEL;
    cost.I32DivS = DIVISION_FUEL;
    cost.I32DivU = DIVISION_FUEL;
    cost.I32RemS = DIVISION_FUEL;
    cost.I32RemU = DIVISION_FUEL;
    cost.I64DivS = DIVISION_FUEL;
    cost.I64DivU = DIVISION_FUEL;
    cost.I64RemS = DIVISION_FUEL;
    cost.I64RemU = DIVISION_FUEL;
    cost
}

/// What `memory.grow` costs ([`operator_cost`]).
pub const MEMORY_GROW_FUEL: u8 = 255;

/// What a floating-point multiplication, division or square root costs
/// ([`operator_cost`]): the most one can take (a subnormal operand's
/// microcode assist) in units of the slowest ordinary operator, so that a
/// unit of fuel takes no longer with them than without
/// (`knobeln bench fuel`'s classes `subnormal *` and `subnormal /`).
pub const FLOAT_ASSIST_FUEL: u8 = 64;

/// What an integer division or remainder costs ([`operator_cost`]): its
/// time in units of the slowest ordinary operator (`knobeln bench fuel`'s
/// class `division by var`).
pub const DIVISION_FUEL: u8 = 8;

/// Whether `bytes` look like a WebAssembly module (its magic number):
/// a stored program without it is a native binary of an older version.
pub fn is_module(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\0asm")
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore;

    /// The cache holds at most its bound of keys and code: a function that
    /// would go past it empties it first, and one larger than the bound is
    /// not kept at all.
    #[test]
    fn compiled_functions_stay_within_their_bound() {
        // Each function below counts its key, its code as allocated and
        // its entry: 1 + 39 + 128 = 168 bytes.
        let cache = CompiledFunctions::new(400);
        FILLING.with(|f| f.set(true));
        assert!(cache.insert(b"a", vec![0; 39]));
        assert!(cache.insert(b"b", vec![0; 39]));
        assert_eq!(cache.bytes(), 336);
        assert!(cache.get(b"a").is_some() && cache.get(b"b").is_some());
        assert_eq!(cache.hits(), 2);
        // A third would make 504 bytes: the cache is emptied first.
        assert!(cache.insert(b"c", vec![0; 39]));
        assert_eq!(cache.bytes(), 168);
        assert!(cache.get(b"a").is_none() && cache.get(b"c").is_some());
        // The same key again replaces its code, counted once; its spare
        // capacity is given back before it is counted.
        let mut code = Vec::with_capacity(1000);
        code.extend_from_slice(&[0; 9]);
        assert!(cache.insert(b"c", code));
        assert_eq!(cache.bytes(), 138);
        // Larger than the bound: refused, the cache kept as it was.
        assert!(!cache.insert(b"d", vec![0; 400]));
        assert_eq!(cache.bytes(), 138);
        assert_eq!(cache.hits(), 3);
        FILLING.with(|f| f.set(false));
    }

    /// Only the module compiled to fill the cache puts functions into it:
    /// any other compile's (a participant's) are never kept.
    #[test]
    fn only_the_filling_compile_keeps_functions() {
        let cache = CompiledFunctions::new(FUNCTION_CACHE_BYTES);
        assert!(!cache.insert(b"a participant's function", vec![0; 10]));
        assert!(cache.is_empty());
    }
}
