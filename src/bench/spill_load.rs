//! A load of a module back from the module spill, measured alone
//! ([`spill_load_bench`]): CPU per load of the spill's own load (the
//! file copied by the kernel into a memory file, sealed, its length and
//! SHA-256 checked on the sealed file, the engine's mapping), beside the
//! load as it was before (the file read whole into this process's memory
//! and checked there, then written into the memory file and sealed) and
//! two floors, all in turns in the same run: the kernel's copy alone, and
//! the digest of the bytes alone.
//!
//! Not here: loads on a field while it plays (`bench scale
//! --module-cache N` prints them), or the linkers' instance pre that a
//! miss of the cache adds.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::game::family_source;
use super::measure::BenchError;
use crate::toolchain::compile::{compile, CompileConfig, CompileError, Outcome};
use crate::wasm::SpillProbe;

/// Figures of [`spill_load_bench`]: CPU of the loading thread per load,
/// one value per turn, in µs.
#[derive(Debug, Clone)]
pub struct SpillLoadBench {
    /// The module's file's length.
    pub bytes: u64,
    /// Loads per turn.
    pub loads: u32,
    /// The spill's load.
    pub load: Vec<f64>,
    /// The spill's load beside [`KEPT_BESIDE`] modules loaded before it,
    /// the oldest of them dropped at each load (as a full module cache
    /// drops one at each miss).
    pub load_beside: Vec<f64>,
    /// The load as it was (read whole, checked in memory, written into
    /// the memory file, sealed, mapped).
    pub before: Vec<f64>,
    /// The kernel's copy of the file into a new memory file alone.
    pub copy: Vec<f64>,
    /// The SHA-256 of the bytes (in memory) alone.
    pub digest: Vec<f64>,
}

impl SpillLoadBench {
    pub fn print(&self) {
        let row = |what: &str, v: &[f64]| {
            let turns: Vec<String> = v.iter().map(|x| format!("{x:7.1}")).collect();
            println!("  {what:<52} {} us", turns.join(" "));
        };
        println!(
            "a load from the module spill alone ({} bytes, {} loads a turn, CPU of the loading thread per load, turn by turn):",
            self.bytes, self.loads
        );
        row("the spill's load (copy, seal, digest, map)", &self.load);
        row(
            &format!("the same beside {KEPT_BESIDE} kept, the oldest dropped"),
            &self.load_beside,
        );
        row(
            "the load before (read, check, write, seal, map)",
            &self.before,
        );
        row("floor: the kernel's copy into a memory file", &self.copy);
        row("floor: the SHA-256 of the bytes in memory", &self.digest);
    }
}

/// Modules kept loaded beside the loads of [`SpillLoadBench::load_beside`]:
/// the default module cache's size.
pub(crate) const KEPT_BESIDE: usize = crate::wasm::CACHE_ENTRIES;

/// The calling thread's CPU time.
fn thread_cpu() -> Duration {
    // SAFETY: a zeroed timespec is a valid value of a plain C struct.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: clock_gettime writes the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Microseconds of the thread's CPU per call of `f`, over `n` calls.
fn per_call(n: u32, mut f: impl FnMut() -> bool) -> Result<f64, BenchError> {
    let started = thread_cpu();
    for _ in 0..n {
        if !f() {
            return Err(BenchError::from("a step of the spill's load failed"));
        }
    }
    Ok((thread_cpu() - started).as_secs_f64() * 1e6 / f64::from(n))
}

fn memory_file() -> Option<std::fs::File> {
    // SAFETY: memfd_create with a NUL-terminated name; the descriptor is
    // owned by the `File` alone.
    let fd = unsafe {
        libc::memfd_create(
            c"knobeln-module".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    // SAFETY: `fd` is a new descriptor, open, owned by nothing else.
    (fd >= 0).then(|| unsafe { std::fs::File::from_raw_fd(fd) })
}

/// The load as it was before this benchmark's branch (`Spill::get` at
/// 15d5a55): the file read whole, checked in memory, written into a
/// memory file, sealed and mapped by the engine.
fn load_before(file: &std::path::Path, len: u64, digest: &[u8; 32]) -> bool {
    let Ok(engine) = SpillProbe::engine() else {
        return false;
    };
    let Ok(f) = std::fs::File::open(file) else {
        return false;
    };
    if f.metadata().map(|m| m.len()).ok() != Some(len) {
        return false;
    }
    let mut b = Vec::with_capacity(len as usize);
    if f.take(len + 1).read_to_end(&mut b).is_err()
        || b.len() as u64 != len
        || <[u8; 32]>::from(Sha256::digest(&b)) != *digest
    {
        return false;
    }
    let Some(mut m) = memory_file() else {
        return false;
    };
    if m.write_all(&b).is_err() {
        return false;
    }
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on an open descriptor.
    if unsafe { libc::fcntl(m.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return false;
    }
    // SAFETY: the bytes are those the spill wrote (checked above, in this
    // process's memory), sealed in the memory file.
    unsafe { wasmtime::Module::deserialize_open_file(engine, m) }.is_ok()
}

/// The kernel's copy of `len` bytes of `file` into a new memory file.
fn copy_alone(file: &std::path::Path, len: u64) -> bool {
    let (Ok(f), Some(m)) = (std::fs::File::open(file), memory_file()) else {
        return false;
    };
    let mut offset: libc::off_t = 0;
    while (offset as u64) < len {
        // SAFETY: sendfile between two open descriptors.
        let n = unsafe {
            libc::sendfile(
                m.as_raw_fd(),
                f.as_raw_fd(),
                &mut offset,
                (len - offset as u64) as usize,
            )
        };
        if n <= 0 {
            return false;
        }
    }
    true
}

/// Compiles a demo strategy, keeps its module in a spill of its own, and
/// loads it back `loads` times a turn, for `turns` turns, each turn the
/// spill's load, the load before and the two floors in turn.
pub fn spill_load_bench(loads: u32, turns: u32) -> Result<SpillLoadBench, BenchError> {
    let Outcome::Accepted { binary, .. } = compile(
        family_source("frequency").as_bytes(),
        &CompileConfig::local(),
    )?
    else {
        return Err(CompileError::Runtime("a bench strategy does not compile".into()).into());
    };
    let probe = SpillProbe::new(&binary).map_err(|e| BenchError::from(e.to_string()))?;
    let file = probe
        .file()
        .ok_or_else(|| BenchError::from("the spill holds no file"))?;
    let bytes = std::fs::read(&file)?;
    let len = bytes.len() as u64;
    let digest: [u8; 32] = Sha256::digest(&bytes).into();
    let loads = loads.max(1);
    let mut b = SpillLoadBench {
        bytes: len,
        loads,
        load: Vec::new(),
        load_beside: Vec::new(),
        before: Vec::new(),
        copy: Vec::new(),
        digest: Vec::new(),
    };
    for _ in 0..turns.max(1) {
        b.load.push(per_call(loads, || probe.load())?);
        let mut kept = std::collections::VecDeque::with_capacity(KEPT_BESIDE + 1);
        for _ in 0..KEPT_BESIDE {
            if !probe.load_beside(&mut kept, KEPT_BESIDE) {
                return Err(BenchError::from("a step of the spill's load failed"));
            }
        }
        b.load_beside.push(per_call(loads, || {
            probe.load_beside(&mut kept, KEPT_BESIDE)
        })?);
        drop(kept);
        b.before
            .push(per_call(loads, || load_before(&file, len, &digest))?);
        b.copy.push(per_call(loads, || copy_alone(&file, len))?);
        b.digest.push(per_call(loads, || {
            std::hint::black_box(Sha256::digest(std::hint::black_box(&bytes)));
            true
        })?);
    }
    Ok(b)
}
