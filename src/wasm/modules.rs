//! Modules made ready to play: compiled by the one engine (built here on
//! first use, with its linkers and watchdog), checked once more against
//! the contest's shape before each compile (a module loaded back from the
//! spill plays with the shape its check gave when this process compiled
//! it), and kept by SHA-256 in a small LRU cache; what the
//! cache drops is written to the process's module spill ([`super::spill`])
//! as it drops it (unless the spill has it still), and loaded again from
//! there rather than compiled again. Nothing here runs a strategy's code
//! (that is [`super::seat`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use wasmtime::{Engine, Linker, Module};

use super::engine::{
    config, start_watchdog, WasmError, CACHE_CODE_BYTES, CACHE_ENTRIES, MAX_MEMORY_BYTES,
    SPILL_BYTES, SPILL_FILES,
};
use super::seat::{lead_linker, linker, LeadData, SeatData, Strategy};
use super::spill::{Kept, Spill};

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

/// The process's module spill, made on first use under [`spill_parent`]
/// and removed at exit; `None` where it cannot be made (then every miss
/// compiles, as without it).
fn spill(engine: &Engine) -> Option<&'static Spill> {
    static SPILL: OnceLock<Option<Spill>> = OnceLock::new();
    SPILL
        .get_or_init(|| {
            let parent = spill_folder();
            super::spill::remove_stale(&parent);
            match Spill::create(&parent, SPILL_BYTES, SPILL_FILES, engine) {
                Ok(s) => {
                    remove_at_exit(s.dir());
                    Some(s)
                }
                Err(e) => {
                    tracing::warn!(
                        "no folder for compiled modules under {} (modules the cache drops compile again): {e}",
                        parent.display()
                    );
                    None
                }
            }
        })
        .as_ref()
}

/// The temporary folder FHS keeps on disk: `/tmp` is often memory
/// (tmpfs, Debian's default since 13), where 2 GiB of spill would be
/// memory too.
const VAR_TMP: &str = "/var/tmp";

/// The folder the process's module spill is made in, as [`spill_parent`]
/// chooses it from this process's environment (what `bench scale` names
/// the file system of).
pub fn spill_folder() -> PathBuf {
    spill_parent(
        std::env::var_os("TMPDIR"),
        Some(Path::new(VAR_TMP)).filter(|p| p.is_dir()),
    )
}

/// Where the spill's folder is made: `$TMPDIR` where the organizer set it,
/// else `var_tmp` (`/var/tmp` where it exists: on disk; a systemd unit
/// with `PrivateTmp=yes` gets a private one), else the system's temporary
/// folder.
fn spill_parent(tmpdir: Option<std::ffi::OsString>, var_tmp: Option<&Path>) -> PathBuf {
    match (tmpdir, var_tmp) {
        (Some(dir), _) if !dir.is_empty() => PathBuf::from(dir),
        (_, Some(on_disk)) => on_disk.to_path_buf(),
        _ => std::env::temp_dir(),
    }
}

/// The spill's folder and the process that made it, for [`remove_spill`].
static SPILL_DIR: OnceLock<(PathBuf, u32)> = OnceLock::new();

/// Removes `dir` when the process exits (not in a child it forked, which
/// runs the same exit handlers).
fn remove_at_exit(dir: &Path) {
    if SPILL_DIR
        .set((dir.to_path_buf(), std::process::id()))
        .is_ok()
    {
        // SAFETY: `remove_spill` is an `extern "C" fn()` that does not unwind.
        unsafe { libc::atexit(remove_spill) };
    }
}

extern "C" fn remove_spill() {
    if let Some((dir, pid)) = SPILL_DIR.get() {
        if *pid == std::process::id() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Modules compiled by Cranelift in this process, taken from the spill,
/// and written to it ([`compile_counts`]).
static COMPILED: AtomicU64 = AtomicU64::new(0);
static FROM_SPILL: AtomicU64 = AtomicU64::new(0);
static TO_SPILL: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds of CPU of the threads that loaded modules from the spill,
/// spent on those loads (the file's copy, seal and digest, the
/// deserialization, the linkers' instance pre; the structural check only
/// where the spill kept no shape with the module).
static FROM_SPILL_CPU_NS: AtomicU64 = AtomicU64::new(0);

/// The calling thread's CPU time, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    // SAFETY: a zeroed timespec is a valid value of a plain C struct.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: clock_gettime writes the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

thread_local! {
    /// Modules compiled on this thread (a test counts its own, whatever
    /// other tests compile at the same time).
    static COMPILED_HERE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Modules made ready on this thread at a cache miss, compiled or
    /// loaded from the spill ([`made_ready_here`]).
    static MADE_READY_HERE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// `.wasm` files the structural check read on this thread at a cache
    /// miss (a test counts its own).
    static CHECKED_HERE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Modules the cache missed that this thread made ready (compiled, or
/// loaded from the spill) since it started: a test counts the work a
/// thread does whatever other threads and tests do meanwhile.
pub fn made_ready_here() -> u64 {
    MADE_READY_HERE.with(|c| c.get())
}

/// How this process's modules were made ready since it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompileCounts {
    /// Compiled by Cranelift (cache and spill missed).
    pub compiled: u64,
    /// Loaded from the spill (the cache missed).
    pub from_spill: u64,
    /// Written to the spill (the cache dropped a module the spill did not
    /// hold).
    pub to_spill: u64,
    /// The CPU time of the threads that loaded modules from the spill,
    /// spent on those loads, in nanoseconds.
    pub from_spill_cpu_ns: u64,
}

/// [`CompileCounts`] so far (a benchmark reports the difference).
pub fn compile_counts() -> CompileCounts {
    CompileCounts {
        compiled: COMPILED.load(Ordering::Relaxed),
        from_spill: FROM_SPILL.load(Ordering::Relaxed),
        to_spill: TO_SPILL.load(Ordering::Relaxed),
        from_spill_cpu_ns: FROM_SPILL_CPU_NS.load(Ordering::Relaxed),
    }
}

/// Whether the spill is left out ([`leave_out_spill`]).
static SPILL_OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Leaves the spill out for the rest of the process (every module the
/// cache dropped compiles again, as before the spill): for a benchmark's
/// figure without it, beside one with it.
pub fn leave_out_spill() {
    SPILL_OFF.store(true, Ordering::Relaxed);
}

/// The most modules the cache holds, below [`CACHE_ENTRIES`]
/// ([`limit_cache_entries`]).
static ENTRIES_LIMIT: AtomicUsize = AtomicUsize::new(CACHE_ENTRIES);

/// Lets the cache hold at most `n` modules (at least one; never more than
/// [`CACHE_ENTRIES`]), for the whole process: for benchmarks and tests of
/// a field larger than the cache on a field small enough to compile.
pub fn limit_cache_entries(n: usize) {
    ENTRIES_LIMIT.store(n.clamp(1, CACHE_ENTRIES), Ordering::Relaxed);
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
    load_in(
        cache(),
        |engine| {
            if SPILL_OFF.load(Ordering::Relaxed) {
                None
            } else {
                spill(engine)
            }
        },
        ENTRIES_LIMIT.load(Ordering::Relaxed),
        wasm,
        sha256,
    )
}

/// [`load_hashed`] with `cache`, the spill `spill_of` gives (called at a
/// miss), and at most `max_entries` modules in the cache (fewer where the
/// open files' limit leaves no room): the process's own, or a test's.
fn load_in<'s>(
    cache: &Mutex<Cache>,
    spill_of: impl FnOnce(&Engine) -> Option<&'s Spill>,
    max_entries: usize,
    wasm: &[u8],
    sha256: String,
) -> Result<Loaded, WasmError> {
    if let Some(s) = cache.lock().expect("module cache").get(&sha256) {
        return Ok(Ok(s));
    }
    // A miss decides by the SHA-256 what is checked and what the spill
    // gives back: every caller hashed or verified the bytes it gives.
    debug_assert_eq!(
        sha256,
        crate::hash::sha256_hex(wasm),
        "the caller's SHA-256"
    );
    let rt = runtime()?;
    let started = thread_cpu_ns();
    let entries = room_for_cached_files().min(max_entries);
    let spill = spill_of(&rt.engine);
    let check = || {
        CHECKED_HERE.with(|c| c.set(c.get() + 1));
        super::check::check_module(wasm, MAX_MEMORY_BYTES)
            .map_err(|problems| NotPlayable(problems.join("; ")))
    };
    MADE_READY_HERE.with(|c| c.set(c.get() + 1));
    let loaded = spill.and_then(|s| s.get(&rt.engine, &sha256));
    let from_spill = loaded.is_some();
    if from_spill {
        FROM_SPILL.fetch_add(1, Ordering::Relaxed);
    }
    let (module, shape) = match loaded {
        // Kept with what the check learnt of its `.wasm`: not checked
        // again. It was compiled by this process from a `.wasm` of this
        // SHA-256 that passed the check (only the cache's modules are
        // spilled, each checked before it was compiled), and a check of
        // the bytes given here would not be of what runs, the module.
        Some((m, Some(shape))) => (m, shape),
        Some((m, None)) => match check() {
            Ok(shape) => (m, shape),
            Err(e) => return Ok(Err(e)),
        },
        // Not kept, or its file changed or went: checked, then compiled.
        None => {
            let shape = match check() {
                Ok(shape) => shape,
                Err(e) => return Ok(Err(e)),
            };
            COMPILED.fetch_add(1, Ordering::Relaxed);
            COMPILED_HERE.with(|c| c.set(c.get() + 1));
            match Module::new(&rt.engine, wasm) {
                Ok(m) => (m, shape),
                Err(e) => return Ok(Err(NotPlayable(format!("{e:#}")))),
            }
        }
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
        shape,
        code_bytes: code_bytes(&module),
    });
    if from_spill {
        FROM_SPILL_CPU_NS.fetch_add(thread_cpu_ns().saturating_sub(started), Ordering::Relaxed);
    }
    let dropped = cache
        .lock()
        .expect("module cache")
        .put(sha256, s.clone(), entries);
    if let Some(spill) = spill {
        spill_dropped(spill, &dropped);
    }
    Ok(Ok(s))
}

/// For a benchmark: the module compiled from `wasm`, kept in a spill of
/// its own (a private folder where the process's spill would be, removed
/// with it), to be loaded back from it as a miss of the cache loads it
/// ([`SpillProbe::load`]), and its file, for a benchmark's own reading of
/// it beside.
pub struct SpillProbe {
    spill: Spill,
    sha256: String,
    _parent: tempfile::TempDir,
}

impl SpillProbe {
    /// Compiles `wasm` and keeps its module in a spill of its own.
    pub fn new(wasm: &[u8]) -> Result<SpillProbe, WasmError> {
        let rt = runtime()?;
        // Each module loaded back keeps its memory file open (a benchmark
        // keeps as many as a full cache): room for them, as a compile makes.
        room_for_cached_files();
        let fail = |e: &dyn std::fmt::Display| WasmError::Engine(e.to_string());
        let parent = tempfile::tempdir_in(spill_folder()).map_err(|e| fail(&e))?;
        let spill = Spill::create(parent.path(), 1 << 30, 16, &rt.engine).map_err(|e| fail(&e))?;
        let module = Module::new(&rt.engine, wasm).map_err(|e| fail(&e))?;
        let sha256 = crate::hash::sha256_hex(wasm);
        spill.put(&sha256, &module).map_err(|e| fail(&e))?;
        Ok(SpillProbe {
            spill,
            sha256,
            _parent: parent,
        })
    }

    /// Loads the module back from the spill (the file's copy, its seal,
    /// its check and the engine's mapping): whether it came back.
    pub fn load(&self) -> bool {
        self.load_beside(&mut std::collections::VecDeque::new(), 0)
    }

    /// Loads the module back as [`SpillProbe::load`] does, keeps it in
    /// `kept`, and drops the oldest modules kept beyond `keep`, as a full
    /// module cache drops one at each miss: whether it came back.
    pub fn load_beside(&self, kept: &mut std::collections::VecDeque<Module>, keep: usize) -> bool {
        let Some((module, _)) = runtime()
            .ok()
            .and_then(|rt| self.spill.get(&rt.engine, &self.sha256))
        else {
            return false;
        };
        kept.push_back(module);
        while kept.len() > keep {
            kept.pop_front();
        }
        true
    }

    /// The module's file in the spill.
    pub fn file(&self) -> Option<PathBuf> {
        std::fs::read_dir(self.spill.dir())
            .ok()?
            .flatten()
            .map(|e| e.path())
            .next()
    }

    /// The engine the module is compiled for.
    pub fn engine() -> Result<&'static Engine, WasmError> {
        Ok(&runtime()?.engine)
    }
}

/// Compiles `wasm`, a module whose code is public (the announcement's
/// example strategy, which links the runtime every strategy links), with
/// the process's engine to keep its compiled functions for every later
/// compile ([`super::engine::CompiledFunctions`]); the module is not kept.
pub fn keep_functions_of(wasm: &[u8]) -> Result<(), WasmError> {
    super::engine::keep_functions_with(&runtime()?.engine, wasm)
        .map_err(|e| WasmError::Engine(format!("{e:#}")))
}

/// Writes the modules the cache `dropped` to `spill`, each unless the
/// spill holds it still (then nothing is serialized), outside the cache's
/// lock.
fn spill_dropped(spill: &Spill, dropped: &[Arc<Strategy>]) {
    for gone in dropped {
        match spill.put_checked(&gone.sha256, gone.pre.module(), gone.shape) {
            Ok(Kept::Written) => {
                TO_SPILL.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Kept::Already) => {}
            Err(e) => tracing::debug!("compiled module {} not kept in the spill: {e}", gone.sha256),
        }
    }
}

/// Open files the process may need besides the cache's: the database,
/// mail and NATS connections, the pipes of compilers and bots.
const OTHER_FILES: u64 = 1024;

/// Raises the soft limit of open files (as far as the hard limit allows)
/// to what the cache may hold besides [`OTHER_FILES`]: each cached module
/// that has played keeps one open file, the engine's image of its static
/// data (a `memfd`, mapped copy-on-write into every instance), and the
/// cache keeps up to [`CACHE_ENTRIES`] of them. A service's soft limit is
/// often 1024 (systemd's default): a full cache would use it up, and the
/// next game, database access or connection would fail. Sandboxed
/// children set their own, lower limits. Checked at every compile (one
/// system call; a compile takes milliseconds), so it holds whoever lowered
/// the limit since. Returns how many modules the cache may hold under the
/// limit now in force ([`entries_for_open_files`]): the cache counts in
/// the kernel's unit, open files, where the limit could not be raised.
fn room_for_cached_files() -> usize {
    let want = CACHE_ENTRIES as u64 + OTHER_FILES;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the valid rlimit struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return entries_for_open_files(0);
    }
    if lim.rlim_cur >= want {
        return CACHE_ENTRIES;
    }
    let soft = want.min(lim.rlim_max);
    if soft > lim.rlim_cur {
        match crate::sandbox::set_rlimit(libc::RLIMIT_NOFILE, soft, lim.rlim_max) {
            Ok(()) => return entries_for_open_files(soft),
            Err(e) => tracing::warn!(
                "the open files' limit stays at {} (the module cache may hold {want}): {e}",
                lim.rlim_cur
            ),
        }
    }
    entries_for_open_files(lim.rlim_cur)
}

/// How many modules the cache may hold under a soft limit of `soft` open
/// files: what is left beside [`OTHER_FILES`], at least a quarter of the
/// limit (a limit of 1024 gives the 256 this cache held before it held
/// [`CACHE_ENTRIES`]), at least one, at most [`CACHE_ENTRIES`].
fn entries_for_open_files(soft: u64) -> usize {
    let left = soft.saturating_sub(OTHER_FILES).max(soft / 4).max(1);
    usize::try_from(left).map_or(CACHE_ENTRIES, |n| n.min(CACHE_ENTRIES))
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

    /// Keeps `s`, dropping the least recently used first while more than
    /// `max_entries` modules or [`CACHE_CODE_BYTES`] would be held: the
    /// modules dropped (for the spill).
    fn put(&mut self, sha256: String, s: Arc<Strategy>, max_entries: usize) -> Vec<Arc<Strategy>> {
        let mut dropped = Vec::new();
        while !self.entries.is_empty()
            && (self.entries.len() >= max_entries
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
                dropped.push(gone);
            }
        }
        self.clock += 1;
        self.code_bytes += s.code_bytes;
        // The same module compiled twice at once: the one replaced is
        // kept (as `s`), not dropped.
        if let Some((old, _)) = self.entries.insert(sha256, (s, self.clock)) {
            self.code_bytes -= old.code_bytes;
        }
        dropped
    }
}

impl Cache {
    fn new() -> Mutex<Cache> {
        Mutex::new(Cache {
            entries: HashMap::new(),
            clock: 0,
            code_bytes: 0,
        })
    }
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Cache::new)
}

#[cfg(test)]
mod tests {
    use super::super::check::{straight_line_module, StraightLine};
    use super::super::seat::{GameWatch, Seat, SeatLimits};
    use super::*;

    #[test]
    fn the_spill_lives_on_disk_unless_the_organizer_says_where() {
        let var_tmp = Path::new("/var/tmp");
        assert_eq!(
            spill_parent(Some("/srv/scratch".into()), Some(var_tmp)),
            PathBuf::from("/srv/scratch")
        );
        assert_eq!(spill_parent(Some("".into()), Some(var_tmp)), var_tmp);
        assert_eq!(spill_parent(None, Some(var_tmp)), var_tmp);
        assert_eq!(spill_parent(None, None), std::env::temp_dir());
    }

    /// A module of the contest's shape with `data` as static data at
    /// address 0 (as every C strategy's constants are).
    fn module_with_data(data: &[u8]) -> Vec<u8> {
        let mut m = straight_line_module(StraightLine::Chain, 1, 64);
        let mut content = vec![0x01, 0x00, 0x41, 0x00, 0x0b];
        let mut n = data.len();
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                content.push(byte);
                break;
            }
            content.push(byte | 0x80);
        }
        content.extend_from_slice(data);
        m.push(11);
        let mut n = content.len();
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                m.push(byte);
                break;
            }
            m.push(byte | 0x80);
        }
        m.extend_from_slice(&content);
        m
    }

    /// Hostile review (F6): a process started with the soft limit of a
    /// systemd service (1024 open files) has room for a full cache's files
    /// once it compiles a module.
    #[test]
    fn compiling_makes_room_for_the_cached_programs_files() {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the valid rlimit struct it is given.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        let hard = lim.rlim_max;
        crate::sandbox::set_rlimit(libc::RLIMIT_NOFILE, 1024.min(hard), hard).unwrap();
        let wasm = module_with_data(b"room for the cache's files");
        load(&wasm).unwrap().expect("playable");
        // SAFETY: as above.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        assert_eq!(
            lim.rlim_cur,
            (CACHE_ENTRIES as u64 + OTHER_FILES).min(hard),
            "the soft limit of open files"
        );
    }

    /// The cache counts in the kernel's unit: where the soft limit of open
    /// files could not be raised, it holds no more modules (each an open
    /// file) than leave the limit room for everything else.
    #[test]
    fn the_cache_holds_no_more_modules_than_the_open_files_limit_leaves_room_for() {
        assert_eq!(entries_for_open_files(0), 1);
        assert_eq!(entries_for_open_files(64), 16);
        assert_eq!(entries_for_open_files(1024), 256);
        assert_eq!(entries_for_open_files(1500), 476);
        assert_eq!(
            entries_for_open_files(CACHE_ENTRIES as u64 + OTHER_FILES),
            CACHE_ENTRIES
        );
        assert_eq!(entries_for_open_files(u64::MAX), CACHE_ENTRIES);
    }

    fn open_files() -> usize {
        std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
    }

    /// Hostile review (F6): distinct programs with static data, each
    /// played once (as the server compiles and tries every submission,
    /// and a contest plays every team's program): each one the cache
    /// keeps holds one open file (the engine's image of its data), so the
    /// cache holds at most `CACHE_ENTRIES` files
    /// ([`compiling_makes_room_for_the_cached_programs_files`]).
    #[test]
    fn a_cached_program_that_played_holds_one_open_file() {
        let before = open_files();
        let limits = SeatLimits {
            fuel: 1_000_000,
            wall: std::time::Duration::from_secs(60),
        };
        let n = 300;
        for i in 0..n {
            let data: Vec<u8> = (0..8192u32)
                .map(|k| (k.wrapping_mul(31) ^ i) as u8)
                .chain(i.to_le_bytes())
                .collect();
            let wasm = module_with_data(&data);
            let s = load(&wasm).unwrap().expect("playable");
            let mut seat = Seat::new(&s, 7, limits, GameWatch::start());
            let _ = seat.step(0);
        }
        // One file a program the cache keeps: never more than its entries.
        let held = open_files().saturating_sub(before);
        assert!(
            held <= CACHE_ENTRIES.min(n as usize) + 16,
            "{held} files held after playing {n} programs once"
        );
    }

    fn distinct_module(i: u32) -> Vec<u8> {
        module_with_data(format!("the spill's module {i}").as_bytes())
    }

    fn compiled_here() -> u64 {
        COMPILED_HERE.with(|c| c.get())
    }

    /// Issue 38: a field larger than the cache, played round after round,
    /// compiles each program once: what the cache dropped comes back from
    /// the spill. (Before the spill, every load after the first round was
    /// a compile.)
    #[test]
    fn more_modules_than_the_cache_holds_loaded_twice_compile_once_each() {
        limit_cache_entries(8);
        let n = 24;
        let before = compiled_here();
        for _round in 0..2 {
            for i in 0..n {
                let s = load(&distinct_module(1000 + i)).unwrap().expect("playable");
                assert_eq!(s.shape.main_params, 0);
            }
        }
        limit_cache_entries(CACHE_ENTRIES);
        assert_eq!(compiled_here() - before, u64::from(n), "compiles");
        assert!(compile_counts().from_spill >= u64::from(n) - 8);
    }

    fn private_spill(max_bytes: u64) -> (tempfile::TempDir, Spill) {
        private_spill_of(max_bytes, SPILL_FILES)
    }

    fn private_spill_of(max_bytes: u64, max_files: usize) -> (tempfile::TempDir, Spill) {
        let parent = tempfile::tempdir().unwrap();
        let spill = Spill::create(
            parent.path(),
            max_bytes,
            max_files,
            &runtime().unwrap().engine,
        )
        .unwrap();
        (parent, spill)
    }

    fn files_in(dir: &Path) -> usize {
        std::fs::read_dir(dir).unwrap().count()
    }

    /// Issue 38 (a6): the cache writes a module to the spill when it drops
    /// it, not when it is compiled: a field that fits in the cache, played
    /// round after round (and every trial game of the compile service, a
    /// module loaded once), writes nothing. (Before, every compile wrote
    /// its module.)
    #[test]
    fn a_field_that_fits_in_the_cache_writes_nothing_to_the_spill() {
        let (_parent, spill) = private_spill(1 << 30);
        let cache = Cache::new();
        for _round in 0..2 {
            for i in 0..6 {
                let s = load_in(&cache, |_| Some(&spill), 8, &distinct_module(6000 + i), {
                    crate::hash::sha256_hex(&distinct_module(6000 + i))
                })
                .unwrap()
                .expect("playable");
                assert_eq!(s.shape.main_params, 0);
            }
        }
        assert_eq!(spill.writes(), 0);
        assert_eq!(files_in(spill.dir()), 0);
    }

    /// A module the cache dropped is written once: loaded back from the
    /// spill and dropped again, it is still there and is not serialized
    /// or written again. Two programs in a cache of one, played in turn.
    #[test]
    fn a_module_dropped_again_is_not_written_again() {
        let (_parent, spill) = private_spill(1 << 30);
        let cache = Cache::new();
        let (a, b) = (distinct_module(6100), distinct_module(6101));
        let before = compiled_here();
        let load_one = |wasm: &[u8]| {
            load_in_cache_of_one(&cache, &spill, wasm);
        };
        load_one(&a);
        load_one(&b); // A dropped: written.
        load_one(&a); // From the spill; B dropped: written.
        load_one(&b); // From the spill; A dropped: still there.
        load_one(&a); // From the spill; B dropped: still there.
        assert_eq!(compiled_here() - before, 2, "each compiled once");
        assert_eq!(spill.writes(), 2, "each written once");
        assert_eq!(files_in(spill.dir()), 2);
    }

    /// Loads `wasm` through `cache`, holding one module, with `spill`.
    fn load_in_cache_of_one(cache: &Mutex<Cache>, spill: &Spill, wasm: &[u8]) -> Arc<Strategy> {
        load_in(
            cache,
            |_| Some(spill),
            1,
            wasm,
            crate::hash::sha256_hex(wasm),
        )
        .unwrap()
        .expect("playable")
    }

    /// Issue 38: a module loaded back from the spill is not checked again
    /// (the spill keeps what the check learnt of its `.wasm` when the
    /// module was compiled here; the bytes given at the load are not what
    /// runs), and plays with that shape; one whose file went is checked
    /// before it is compiled again. Before, every load from the spill ran
    /// the check (a wasmparser pass of the `.wasm`: 3.6 % of the server's
    /// thread at 2000 teams).
    #[test]
    fn a_module_from_the_spill_is_not_checked_again() {
        let (_parent, spill) = private_spill(1 << 30);
        let cache = Cache::new();
        // Shapes that differ (their static data's end).
        let (a, b) = (module_with_data(&[7; 100]), module_with_data(&[8; 5000]));
        let load_one = |wasm: &[u8]| load_in_cache_of_one(&cache, &spill, wasm);
        let checked = || CHECKED_HERE.with(|c| c.get());
        let compiled = compiled_here();
        let before = checked();
        let first = load_one(&a);
        let b_shape = load_one(&b).shape; // A dropped: written with its shape.
        assert_ne!(first.shape, b_shape);
        assert_eq!(checked() - before, 2, "each checked before its compile");
        let again = load_one(&a); // From the spill; B dropped.
        assert_eq!(checked() - before, 2, "A from the spill, not checked");
        assert_eq!(again.shape, first.shape);
        assert_eq!(compiled_here() - compiled, 2);
        // B's file gone: B is checked and compiled again.
        for e in std::fs::read_dir(spill.dir()).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        assert_eq!(load_one(&b).shape, b_shape, "what the new check learnt");
        assert_eq!(checked() - before, 3, "B checked before its compile");
        assert_eq!(compiled_here() - compiled, 3);
        // A module put without a shape (as a test's, or the benchmark's
        // probe's) is checked.
        let c = distinct_module(6302);
        let sha = crate::hash::sha256_hex(&c);
        spill.put(&sha, &compile(&c)).unwrap();
        load_in(&cache, |_| Some(&spill), 1, &c, sha)
            .unwrap()
            .expect("playable");
        assert_eq!(checked() - before, 4);
        assert_eq!(compiled_here() - compiled, 3, "C from the spill");
    }

    fn compile(wasm: &[u8]) -> Module {
        Module::new(&runtime().unwrap().engine, wasm).unwrap()
    }

    /// Issue 38: a module as the engine maps it (its serialized object,
    /// what the spill writes and loads) has no `.eh_frame` section, the
    /// one a load registers with libgcc and a drop looks up in libgcc's
    /// list of every module registered (so a full cache's each eviction
    /// walked past a thousand modules on the server's thread). Its code
    /// still plays: the other tests here play modules of this engine.
    #[test]
    fn a_module_carries_no_frames_for_the_system_unwinder() {
        let section = b".eh_frame\0";
        let has_section = |m: &Module| {
            m.serialize()
                .unwrap()
                .windows(section.len())
                .any(|w| w == section)
        };
        assert!(!has_section(&compile(&distinct_module(7100))));
        // The same module from an engine that keeps the system's default
        // has it (the search above finds what it looks for).
        use super::super::engine::{config_with, FunctionCache};
        let mut config = config_with(FunctionCache::None).unwrap();
        config.native_unwind_info(true);
        let engine = wasmtime::Engine::new(&config).unwrap();
        assert!(has_section(
            &Module::new(&engine, distinct_module(7100)).unwrap()
        ));
    }

    fn only_file(dir: &std::path::Path) -> std::path::PathBuf {
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    }

    /// The spill's folder is this user's alone, its files too.
    #[test]
    fn the_spills_folder_and_files_are_private() {
        use std::os::unix::fs::MetadataExt;
        let (_parent, spill) = private_spill(1 << 30);
        let meta = std::fs::symlink_metadata(spill.dir()).unwrap();
        // SAFETY: geteuid has no preconditions.
        assert_eq!(meta.uid(), unsafe { libc::geteuid() });
        assert_eq!(meta.mode() & 0o777, 0o700);
        let wasm = distinct_module(2000);
        spill
            .put(&crate::hash::sha256_hex(&wasm), &compile(&wasm))
            .unwrap();
        let file = only_file(spill.dir());
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
        assert!(file
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(&crate::hash::sha256_hex(&wasm)));
    }

    /// Issue 38: a module loaded back from the spill is mapped from a
    /// sealed memory file holding the bytes verified (its code and its
    /// memory's initial image both: no copy made read-only and executable
    /// afterwards, no second memory file at its first instance), and plays
    /// as the module compiled from its source: the same steps, its static
    /// data read from that file's image.
    #[test]
    fn a_module_loaded_from_the_spill_plays_as_compiled_from_a_sealed_file() {
        use super::super::spill::Mapped;
        let engine = &runtime().unwrap().engine;
        let (_parent, spill) = private_spill(1 << 30);
        let cache = Cache::new();
        let data: Vec<u8> = (0..9000u32)
            .map(|k| (k.wrapping_mul(37) >> 3) as u8)
            .collect();
        let a = module_with_data(&data);
        let b = distinct_module(6200);
        let load_one = |wasm: &[u8]| load_in_cache_of_one(&cache, &spill, wasm);
        let limits = SeatLimits {
            fuel: 1_000_000,
            wall: std::time::Duration::from_secs(60),
        };
        let steps = |s: &Strategy| {
            let mut seat = Seat::new(s, 7, limits, GameWatch::start());
            (0..3)
                .map(|_| format!("{:?}", seat.step(0)))
                .collect::<Vec<_>>()
        };
        let compiled = steps(&load_one(&a));
        load_one(&b); // A dropped: written to the spill.
        let before = compile_counts().from_spill;
        let from_spill = load_one(&a);
        assert!(
            compile_counts().from_spill > before,
            "A came from the spill"
        );
        assert_eq!(steps(&from_spill), compiled);
        assert!(compiled[0].contains("Ended"), "{compiled:?}");

        // Taken from the spill directly: the sealed path.
        let b_sha = crate::hash::sha256_hex(&b);
        let (module, how, _) = spill
            .get_observed(engine, &b_sha, &mut |_, _| {})
            .expect("B kept");
        assert_eq!(how, Mapped::Sealed);
        assert_eq!(
            module.serialize().unwrap(),
            compile(&b).serialize().unwrap()
        );
    }

    /// Hostile: the memory file a module from the spill is mapped from
    /// (the one the load made, reached once it is sealed) cannot be
    /// changed, by this process or any other (a process of this user's
    /// writing through `/proc/<pid>/fd`): every write, truncation, growth
    /// and shared writable mapping is refused, and no seal can be taken
    /// off; the module is made from it, its bytes those written.
    #[test]
    fn the_file_a_module_from_the_spill_runs_from_cannot_be_changed() {
        use super::super::spill::{Loading, Mapped};
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileExt;
        let engine = &runtime().unwrap().engine;
        let (_parent, spill) = private_spill(1 << 30);
        let wasm = distinct_module(6300);
        let sha = crate::hash::sha256_hex(&wasm);
        let bytes = compile(&wasm).serialize().unwrap();
        spill.put(&sha, &compile(&wasm)).unwrap();
        let mut tried = false;
        let (module, how, _) = spill
            .get_observed(engine, &sha, &mut |step, file| {
                if step != Loading::Sealed {
                    return;
                }
                tried = true;
                let refused = |r: std::io::Result<()>| {
                    r.expect_err("changed").raw_os_error() == Some(libc::EPERM)
                };
                assert!(refused(file.write_at(b"\xcc", 64).map(|_| ())), "a write");
                assert!(refused(file.set_len(0)), "a truncation");
                assert!(refused(file.set_len(bytes.len() as u64 + 4096)), "a growth");
                let via_proc = std::fs::OpenOptions::new()
                    .write(true)
                    .open(format!("/proc/self/fd/{}", file.as_raw_fd()))
                    .unwrap();
                assert!(
                    refused(via_proc.write_at(b"\xcc", 64).map(|_| ())),
                    "through /proc"
                );
                // SAFETY: mmap of an open file; a failure returns MAP_FAILED.
                let shared = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        bytes.len(),
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED,
                        file.as_raw_fd(),
                        0,
                    )
                };
                assert_eq!(shared, libc::MAP_FAILED, "a shared writable mapping");
                // SAFETY: fcntl on an open descriptor.
                let unseal = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, 0) };
                assert_eq!(unseal, -1, "seals sealed");
                let mut back = vec![0; bytes.len()];
                file.read_exact_at(&mut back, 0).unwrap();
                assert_eq!(back, bytes);
            })
            .expect("the module, its file sealed and unchanged");
        assert!(tried, "the load reached its sealed file");
        assert_eq!(how, Mapped::Sealed);
        assert_eq!(module.serialize().unwrap(), bytes);
    }

    /// Hostile (issue 38, the spill's load in one copy): a neighbour (a
    /// process of this user's) changes the bytes on their way to the
    /// engine before the memory file is sealed: the spill's file after it
    /// is opened and its length found right (one byte flipped, or cut
    /// short, while it is copied), or the memory file itself through
    /// `/proc/<pid>/fd` once copied and not yet sealed (a byte flipped, cut
    /// short, or mapped shared and writable to write after the seal: the
    /// seal is refused while such a mapping exists). Their length and
    /// SHA-256 are checked on the sealed file, the one the engine maps:
    /// none of these is run; the file is removed and the module compiled
    /// again. (Before, the bytes were checked in this process's memory and
    /// then written to the memory file: a write to it before the seal went
    /// unseen, and ran.)
    #[test]
    fn a_spilled_module_changed_on_its_way_before_the_seal_is_never_run() {
        use super::super::spill::Loading;
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileExt;
        let engine = &runtime().unwrap().engine;
        let wasm = distinct_module(6400);
        let sha = crate::hash::sha256_hex(&wasm);
        let len = compile(&wasm).serialize().unwrap().len() as u64;
        let reopened = |file: &std::fs::File| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(format!("/proc/self/fd/{}", file.as_raw_fd()))
                .unwrap()
        };
        let flip = |file: &std::fs::File| {
            let f = reopened(file);
            let mut b = [0u8];
            f.read_exact_at(&mut b, len / 2).unwrap();
            f.write_all_at(&[b[0] ^ 1], len / 2).unwrap();
        };
        let cut = |file: &std::fs::File| reopened(file).set_len(len / 2).unwrap();
        // A shared writable mapping held across the seal, to write after
        // it (left mapped: the test's process ends soon).
        let mapped = |file: &std::fs::File| {
            // SAFETY: mmap of an open file; a failure returns MAP_FAILED.
            let at = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    reopened(file).as_raw_fd(),
                    0,
                )
            };
            assert_ne!(at, libc::MAP_FAILED);
        };
        type Change<'a> = &'a dyn Fn(&std::fs::File);
        let changes: [(Loading, Change, &str); 5] = [
            (Loading::Opened, &flip, "the spill's file, one byte"),
            (Loading::Opened, &cut, "the spill's file, cut short"),
            (Loading::Copied, &flip, "the memory file, one byte"),
            (Loading::Copied, &cut, "the memory file, cut short"),
            (Loading::Copied, &mapped, "the memory file, mapped to write"),
        ];
        for (at, change, what) in changes {
            let (_parent, spill) = private_spill(1 << 30);
            spill.put(&sha, &compile(&wasm)).unwrap();
            let file = only_file(spill.dir());
            let mut changed = false;
            let loaded = spill.get_observed(engine, &sha, &mut |step, f| {
                if step == at {
                    change(f);
                    changed = true;
                }
            });
            assert!(changed, "{what}: the load reached {at:?}");
            assert!(loaded.is_none(), "{what}: run");
            assert!(!file.exists(), "{what}: the file is removed");
            assert_eq!((spill.charged(), spill.files()), (0, 0), "{what}");
        }
    }

    /// Hostile: whoever can write the spill's file (another process of
    /// this user's, root) replaces a compiled module by another valid
    /// compiled module, or changes one byte of its code: the file is never
    /// turned into machine code; it is removed and the module compiles
    /// again.
    #[test]
    fn a_spilled_module_changed_by_someone_else_is_never_run() {
        let (_parent, spill) = private_spill(1 << 30);
        let engine = &runtime().unwrap().engine;
        let a = distinct_module(3000);
        let b = distinct_module(3001);
        let sha_a = crate::hash::sha256_hex(&a);
        spill.put(&sha_a, &compile(&a)).unwrap();
        assert!(spill.get(engine, &sha_a).is_some(), "the file as written");

        // Another program's valid compiled module under A's name.
        let file = only_file(spill.dir());
        std::fs::write(&file, compile(&b).serialize().unwrap()).unwrap();
        assert!(spill.get(engine, &sha_a).is_none(), "B's code as A");
        assert!(!file.exists(), "the changed file is removed");
        assert_eq!((spill.charged(), spill.files()), (0, 0));
        assert!(spill.get(engine, &sha_a).is_none(), "forgotten");

        // One byte changed, the length kept.
        spill.put(&sha_a, &compile(&a)).unwrap();
        let file = only_file(spill.dir());
        let mut bytes = std::fs::read(&file).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        assert!(spill.get(engine, &sha_a).is_none(), "one byte changed");
        assert!(!file.exists());

        // A file put there for a module this process never kept.
        let sha_b = crate::hash::sha256_hex(&b);
        std::fs::write(
            file.with_file_name(
                file.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace(&sha_a, &sha_b),
            ),
            compile(&b).serialize().unwrap(),
        )
        .unwrap();
        assert!(spill.get(engine, &sha_b).is_none(), "never kept");
    }

    /// The spill holds at most its bound, in whole blocks: the modules
    /// kept longest make room for the latest (a long-lived server keeps
    /// what it plays now); a module larger than the whole bound is not
    /// kept (and compiles again at its next miss).
    #[test]
    fn the_spill_holds_at_most_its_bound() {
        use std::os::unix::fs::MetadataExt;
        let engine = &runtime().unwrap().engine;
        let a = distinct_module(4000);
        let one = compile(&a).serialize().unwrap().len() as u64;
        let (_probe_parent, probe) = private_spill(1 << 30);
        let block = probe.block();
        let blocks = super::super::spill::charge(one, block);
        // Two files in whole blocks, though three of their bytes would fit
        // (a byte over a block is charged a whole block).
        let bound = blocks * 3 - 1;
        assert!(
            !one.is_multiple_of(block) && one * 3 <= bound,
            "{one} bytes, blocks of {block}"
        );
        let (_parent, spill) = private_spill(bound);
        let mut kept = Vec::new();
        for i in 0..6 {
            let m = distinct_module(4000 + i);
            let sha = crate::hash::sha256_hex(&m);
            spill.put(&sha, &compile(&m)).unwrap();
            kept.push(sha);
            let metas: Vec<_> = std::fs::read_dir(spill.dir())
                .unwrap()
                .map(|e| e.unwrap().metadata().unwrap())
                .collect();
            let charged: u64 = metas
                .iter()
                .map(|m| super::super::spill::charge(m.len(), block))
                .sum();
            // What the filesystem says it holds, where it says (a
            // filesystem that packs small files holds less).
            let on_disk: u64 = metas.iter().map(|m| m.blocks() * 512).sum();
            assert_eq!(charged, spill.charged());
            assert!(
                charged <= bound && on_disk <= bound,
                "{charged} bytes charged, {on_disk} on disk, the bound is {bound}"
            );
            assert!(metas.len() <= 2, "{} files", metas.len());
        }
        // The modules kept longest made room; the latest two are there.
        assert!(spill.get(engine, &kept[0]).is_none());
        assert!(spill.get(engine, &kept[3]).is_none());
        assert!(spill.get(engine, &kept[4]).is_some());
        assert!(spill.get(engine, &kept[5]).is_some());
        // A module larger than the whole bound is not kept.
        let (_parent, tiny) = private_spill(one / 2);
        assert!(matches!(
            tiny.put(&kept[0], &compile(&a)),
            Err(super::super::spill::NotKept::Full(_))
        ));
        assert_eq!(std::fs::read_dir(tiny.dir()).unwrap().count(), 0);
    }

    /// A spill folder left by a process that is gone (killed) is removed;
    /// one of a live process is not.
    #[test]
    fn a_spill_folder_of_a_process_that_is_gone_is_removed() {
        use std::os::fd::AsRawFd;
        let parent = tempfile::tempdir().unwrap();
        let held = Spill::create(
            parent.path(),
            1 << 20,
            SPILL_FILES,
            &runtime().unwrap().engine,
        )
        .unwrap();
        // A live process's, perhaps making it now (not locked yet).
        let live = parent.path().join(format!(
            "knobeln-modules-{}-x",
            std::os::unix::process::parent_id()
        ));
        // The largest pid Linux hands out is 2^22.
        let gone = parent.path().join("knobeln-modules-4194999-y");
        // A live spill of another pid namespace's (its pid gone in ours).
        let elsewhere = parent.path().join("knobeln-modules-4194998-z");
        let other = parent.path().join("knobeln-modulesX");
        for d in [&live, &gone, &elsewhere, &other] {
            std::fs::create_dir(d).unwrap();
        }
        let lock = std::fs::File::open(&elsewhere).unwrap();
        // SAFETY: flock on an open file's descriptor.
        assert_eq!(
            unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        super::super::spill::remove_stale(parent.path());
        assert!(held.dir().exists() && live.exists() && other.exists());
        assert!(elsewhere.exists(), "held by a live spill");
        assert!(!gone.exists());
    }

    /// Hostile, where a careless organizer's `TMPDIR` lets anyone rename
    /// (no sticky bit): another user renames the spill's folder away and
    /// puts a folder of theirs at its path, a file under the module's
    /// name. The spill reads its own folder, held open; and a FIFO there
    /// under the module's name is not waited for (a read would block the
    /// game for ever), nor is a name that is not a digest looked up.
    #[test]
    fn a_spill_folder_swapped_for_another_is_never_read() {
        let (_parent, spill) = private_spill(1 << 30);
        let engine = &runtime().unwrap().engine;
        let a = distinct_module(5000);
        let sha = crate::hash::sha256_hex(&a);
        spill.put(&sha, &compile(&a)).unwrap();
        let file = only_file(spill.dir());
        let moved = spill.dir().with_extension("moved");
        std::fs::rename(spill.dir(), &moved).unwrap();
        std::fs::create_dir(spill.dir()).unwrap();
        std::fs::write(&file, b"not the module").unwrap();
        assert!(spill.get(engine, &sha).is_some(), "its own folder's file");
        assert_eq!(std::fs::read(&file).unwrap(), b"not the module");
        let own = moved.join(file.file_name().unwrap());
        std::fs::remove_file(&own).unwrap();
        let c = std::ffi::CString::new(own.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(spill.get(engine, &sha).is_none(), "a FIFO is not read");
        assert!(!own.exists(), "and is removed");
        assert!(spill.get(engine, "../../etc/passwd").is_none());
        assert!(spill.put("../x", &compile(&a)).is_err());
    }

    /// A server killed with `kill -9` by a parent that has not reaped it
    /// yet (a script that kills and starts again) is a zombie: its pid
    /// still answers `kill(pid, 0)`, yet its folder is left, not live.
    #[test]
    fn a_spill_folder_of_a_killed_process_not_reaped_yet_is_removed() {
        let parent = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("1000")
            .spawn()
            .unwrap();
        let pid = child.id();
        let left = parent.path().join(format!("knobeln-modules-{pid}-killed"));
        std::fs::create_dir(&left).unwrap();
        child.kill().unwrap();
        // SAFETY: waitid on our own child, leaving it unreaped (WNOWAIT).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        assert_eq!(
            unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT,) },
            0
        );
        super::super::spill::remove_stale(parent.path());
        let removed = !left.exists();
        child.wait().unwrap();
        assert!(removed, "the zombie's folder is removed");
    }

    /// Hostile restarts: a server killed with `kill -9` and started again
    /// under the same process id (PID 1 of a restarted container, or a pid
    /// reused after a reboot with `/var/tmp` kept) finds its last life's
    /// folder under its own pid: it is removed, not kept for ever; a
    /// folder a live spill holds is kept, whatever its pid says.
    #[test]
    fn a_spill_folder_left_under_this_processs_own_pid_is_removed() {
        let parent = tempfile::tempdir().unwrap();
        let engine = &runtime().unwrap().engine;
        let held = Spill::create(parent.path(), 1 << 20, SPILL_FILES, engine).unwrap();
        let last_life = parent
            .path()
            .join(format!("knobeln-modules-{}-lastlife", std::process::id()));
        std::fs::create_dir(&last_life).unwrap();
        std::fs::write(last_life.join("x.cwasm"), b"old code").unwrap();
        super::super::spill::remove_stale(parent.path());
        assert!(!last_life.exists(), "the last life's folder is removed");
        assert!(held.dir().exists(), "a live spill's folder is kept");
    }

    /// A file is charged its length in whole blocks: a byte over a block
    /// is two blocks.
    #[test]
    fn a_file_is_charged_in_whole_blocks() {
        use super::super::spill::charge;
        assert_eq!(charge(4096, 4096), 4096);
        assert_eq!(charge(4097, 4096), 8192);
        assert_eq!(charge(1, 4096), 4096);
        assert_eq!(charge(0, 4096), 0);
        assert_eq!(charge(15_000, 4096), 16_384);
        assert_eq!(charge(7, 0), 7);
    }

    /// Many tiny modules use up inodes long before bytes: the spill holds
    /// at most its number of files, the modules kept longest removed
    /// first.
    #[test]
    fn many_tiny_modules_hit_the_file_bound() {
        let engine = &runtime().unwrap().engine;
        let (_parent, spill) = private_spill_of(1 << 30, 3);
        let mut kept = Vec::new();
        for i in 0..7 {
            let m = distinct_module(7000 + i);
            let sha = crate::hash::sha256_hex(&m);
            spill.put(&sha, &compile(&m)).unwrap();
            kept.push(sha);
            assert!(files_in(spill.dir()) <= 3);
            assert_eq!(files_in(spill.dir()), spill.files());
        }
        assert_eq!(files_in(spill.dir()), 3);
        assert!(spill.get(engine, &kept[3]).is_none());
        for sha in &kept[4..] {
            assert!(spill.get(engine, sha).is_some());
        }
        let (_parent, none) = private_spill_of(1 << 30, 0);
        assert!(matches!(
            none.put(&kept[0], &compile(&distinct_module(7000))),
            Err(super::super::spill::NotKept::Full(_))
        ));
    }

    /// Hostile (f9): a server killed between making its spill's folder
    /// and naming it (`.knobeln-making-<pid>-…`) left it for ever, empty
    /// and charged to nothing. A cleanup removes such a folder once it is
    /// old, its process gone and nothing holds it; a young one, this
    /// process's, one held, one with a file in it, or another user's stay.
    #[test]
    fn a_folder_left_while_being_made_is_removed_once_old() {
        use super::super::spill::{remove_stale, MAKING_LEFT_SECS};
        use std::os::fd::AsRawFd;
        let parent = tempfile::tempdir().unwrap();
        let dir = |name: &str| {
            let d = parent.path().join(name);
            std::fs::create_dir(&d).unwrap();
            d
        };
        let age = |d: &Path, secs: u64| {
            let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
            std::fs::File::open(d).unwrap().set_modified(t).unwrap();
        };
        // The largest pid Linux hands out is 2^22.
        let left = dir(".knobeln-making-4194999-a");
        let young = dir(".knobeln-making-4194999-b");
        let mine = dir(&format!(".knobeln-making-{}-c", std::process::id()));
        let held = dir(".knobeln-making-4194999-d");
        let full = dir(".knobeln-making-4194999-e");
        std::fs::write(full.join("x"), "x").unwrap();
        for d in [&left, &mine, &held, &full] {
            age(d, MAKING_LEFT_SECS + 5);
        }
        age(&young, MAKING_LEFT_SECS / 2);
        let lock = std::fs::File::open(&held).unwrap();
        // SAFETY: flock on an open file's descriptor.
        assert_eq!(
            unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        remove_stale(parent.path());
        assert!(!left.exists(), "left by a process killed while making it");
        for d in [&young, &mine, &held, &full] {
            assert!(d.exists(), "{d:?}");
        }
    }

    /// Hostile (a6): a cleanup runs (in this process: the folder has its
    /// own pid, which a cleanup takes for a last life's, as a container's
    /// PID 1 sharing the parent with another container would) at every
    /// step of making a spill's folder: after it is made, once it is
    /// locked, once it has its final name. It never removes it: the folder
    /// has a name no cleanup considers until it is locked. (Before, the
    /// folder had its final name from `mkdir` on, unlocked until `flock`.)
    #[test]
    fn a_cleanup_while_a_spills_folder_is_made_never_removes_it() {
        use super::super::spill::{remove_stale, Making};
        let parent = tempfile::tempdir().unwrap();
        let mut steps = Vec::new();
        let spill = Spill::create_observed(
            parent.path(),
            1 << 20,
            SPILL_FILES,
            &runtime().unwrap().engine,
            &mut |step, dir| {
                remove_stale(parent.path());
                assert!(dir.is_dir(), "{dir:?} removed at {step:?}");
                steps.push(step);
            },
        )
        .unwrap();
        assert_eq!(steps, [Making::Made, Making::Locked, Making::Named]);
        remove_stale(parent.path());
        assert!(spill.dir().is_dir());
        assert!(spill
            .dir()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(&format!("knobeln-modules-{}-", std::process::id())));
        assert_eq!(files_in(parent.path()), 1, "only the final name is left");
        // Its lock went with it: a cleanup cannot take it.
        let a = distinct_module(7100);
        spill
            .put(&crate::hash::sha256_hex(&a), &compile(&a))
            .unwrap();
        remove_stale(parent.path());
        assert_eq!(files_in(spill.dir()), 1);
    }
}
