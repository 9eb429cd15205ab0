//! Modules made ready to play: compiled by the one engine (built here on
//! first use, with its linkers and watchdog), checked once more against
//! the contest's shape, and kept by SHA-256 in a small LRU cache. Nothing
//! here runs a strategy's code (that is [`super::seat`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use wasmtime::{Engine, Linker, Module};

use super::engine::{
    config, start_watchdog, WasmError, CACHE_CODE_BYTES, CACHE_ENTRIES, MAX_MEMORY_BYTES,
};
use super::seat::{lead_linker, linker, LeadData, SeatData, Strategy};

/// The process's engine (built once) and the linker with the referee's
/// functions.
struct Runtime {
    engine: Engine,
    linker: Linker<SeatData>,
    lead_linker: Linker<LeadData>,
}

fn runtime() -> Result<&'static Runtime, WasmError> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let engine =
                Engine::new(&config().map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            let linker = linker(&engine).map_err(|e| e.to_string())?;
            let lead_linker = lead_linker(&engine).map_err(|e| e.to_string())?;
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
    load_hashed(wasm, crate::hash::sha256_hex(wasm))
}

/// [`load`] for a caller that has `wasm`'s SHA-256 already (it fetched or
/// stored the module by it).
pub fn load_hashed(wasm: &[u8], sha256: String) -> Result<Loaded, WasmError> {
    if let Some(s) = cache().lock().expect("module cache").get(&sha256) {
        return Ok(Ok(s));
    }
    let rt = runtime()?;
    let shape = match super::check::check_module(wasm, MAX_MEMORY_BYTES) {
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
    super::check::check_module(wasm, MAX_MEMORY_BYTES)
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
