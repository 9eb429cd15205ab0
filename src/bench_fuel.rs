//! `knobeln bench fuel`: how long one unit of fuel takes here, per class of
//! WebAssembly operator, on a quiet machine and with the other CPUs busy
//! streaming memory. The worst class bounds the wall time of a game's fuel
//! (the book's table in docs/src/figures.md, and the watchdog's default,
//! come from it).
//!
//! Each class is a small C program built straight with clang and wasm-ld
//! (no contest checks: some classes use what a strategy may not, such as
//! `memory.grow` or a direct import of the referee's `seed`, to measure
//! what the weights in [`crate::wasm::operator_cost`] answer), run as the
//! lead of a game until its fuel is gone.
//!
//! It measures; it asserts nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::referee::DEFAULT_FUEL;
use crate::sandbox::jail::{Jail, JailLimits};
use crate::toolchain::compile::{runtime_wasm_object, CompileError};
use crate::toolchain::gcc::{Gcc, Input, SOURCE_NAME};
use crate::toolchain::wasm::{BuiltinsInput, Toolchain};
use crate::wasm::{lead, Ending, GameWatch, SeatLimits, StopAtFirstThrow};

/// The classes measured: (name, what it does, C source).
const CLASSES: &[(&str, &str, &str)] = &[
    (
        "alu",
        "integer arithmetic and branches",
        "volatile unsigned sink;\nmain() { unsigned x = 1; for (;;) { x = x * 1103515245u + \
         12345u; x ^= x >> 7; sink = x; } }\n",
    ),
    (
        "division",
        "dependent 64-bit divisions",
        "volatile unsigned sink;\nmain() { unsigned long long x = ~0ull; for (;;) { x = x / 3 + \
         0xFFFFFFFFFFull; sink = (unsigned)x; } }\n",
    ),
    (
        "float",
        "dependent double divisions",
        "volatile int sink;\nmain() { double d = 2; for (;;) { d = 1.0 + 1.0 / (d + 0.5); sink \
         = (int)d; } }\n",
    ),
    (
        "division by var",
        "dependent 64-bit divisions by a number the compiler cannot see (red team G18)",
        "volatile unsigned long long one = 1;\nvolatile int sink;\nmain() { unsigned long long \
         x = ~0ull, y = one; for (;;) { x = x / y / y / y / y / y / y / y / y / y / y; sink = \
         (int)x; } }\n",
    ),
    (
        "subnormal *",
        "dependent double multiplications of a subnormal number (red team G18)",
        "volatile double one = 1.0, tiny = 1e-310;\nvolatile int sink;\nmain() { double x = \
         tiny, y = one; for (;;) { x = x * y * y * y * y * y * y * y * y * y * y; sink = x != \
         0; } }\n",
    ),
    (
        "subnormal /",
        "dependent double divisions of a subnormal number (red team G18)",
        "volatile double one = 1.0, tiny = 1e-310;\nvolatile int sink;\nmain() { double x = \
         tiny, y = one; for (;;) { x = x / y / y / y / y / y / y / y / y / y / y; sink = x != \
         0; } }\n",
    ),
    (
        "pointer chase",
        "dependent loads over 900 kB in a random cycle",
        "#define N 230000\nstatic int next[N];\nvolatile int sink;\nmain() { unsigned r = 7; int \
         i, j, t; for (i = 0; i < N; i++) next[i] = i;\n for (i = N - 1; i > 0; i--) { r = r * \
         1103515245u + 12345u; j = (r >> 8) % i; t = next[i]; next[i] = next[j]; next[j] = t; \
         }\n i = 0; for (;;) { i = next[i]; sink = i; } }\n",
    ),
    (
        "split loads",
        "4-byte loads across page boundaries",
        "static char mem[900 * 1024];\nvolatile int sink;\nmain() { int k = 0; for (;;) { \
         sink = *(volatile int *)(mem + 4094 + 4096 * k); k = (k + 61) % 200; } }\n",
    ),
    (
        "calls",
        "recursive calls",
        "volatile int sink;\nint fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n\
         main() { for (;;) sink = fib(25); }\n",
    ),
    (
        "indirect calls",
        "calls through function pointers",
        "volatile int sink;\nint a(int x) { return x + 1; }\nint b(int x) { return x ^ 5; }\n\
         int (*volatile f[2])(int) = { a, b };\nmain() { int x = 0; for (;;) { x = f[x & 1](x); \
         sink = x; } }\n",
    ),
    (
        "memory.grow",
        "memory.grow (which fails: the memory is fixed)",
        "volatile int sink;\nmain() { for (;;) sink = __builtin_wasm_memory_grow(0, 1); }\n",
    ),
    (
        "host call",
        "the referee's seed(), imported directly",
        "__attribute__((import_module(\"knobeln\"), import_name(\"seed\"))) long long \
         referee_seed(void);\nvolatile int sink;\nmain() { for (;;) sink = (int)referee_seed(); \
         }\n",
    ),
];

/// One class's figures.
#[derive(Debug, Clone)]
pub struct FuelClass {
    pub name: &'static str,
    pub what: &'static str,
    pub quiet_ns: f64,
    pub loaded_ns: f64,
}

/// The figures of `bench fuel`.
#[derive(Debug, Clone)]
pub struct FuelBench {
    pub classes: Vec<FuelClass>,
}

impl FuelBench {
    /// The slowest class's nanoseconds per unit of fuel, under load.
    pub fn worst_ns(&self) -> f64 {
        self.classes
            .iter()
            .map(|c| c.quiet_ns.max(c.loaded_ns))
            .fold(0.0, f64::max)
    }

    pub fn print(&self) {
        println!("fuel: nanoseconds per unit of fuel, by class of operator (one thread)");
        println!(
            "  {:<15} {:>9} {:>11}  what",
            "class", "quiet", "other CPUs busy"
        );
        for c in &self.classes {
            println!(
                "  {:<15} {:>9.2} {:>11.2}  {}",
                c.name, c.quiet_ns, c.loaded_ns, c.what
            );
        }
        let worst = self.worst_ns();
        let seat = DEFAULT_FUEL as f64 * worst / 1e9;
        println!(
            "  worst: {worst:.2} ns per unit: the default fuel ({DEFAULT_FUEL}) takes at most \
             {seat:.1} s per player, {:.1} s per game (floor: alu {:.2} ns)",
            2.0 * seat,
            self.classes.first().map_or(0.0, |c| c.quiet_ns)
        );
    }
}

/// Builds `source` with clang and wasm-ld in the jail, without the
/// contest's checks.
fn build(tools: &Toolchain, source: &str) -> Result<Vec<u8>, CompileError> {
    let jail = Jail::new()?;
    let gcc = Gcc::new(&jail, JailLimits::default());
    gcc.put(SOURCE_NAME, source.as_bytes())?;
    gcc.put("knobellib.o", &runtime_wasm_object()?)?;
    let cc = tools.compile(&gcc, Input::Source, SOURCE_NAME, "strategy.o")?;
    if !cc.ok {
        return Err(CompileError::Runtime(cc.messages));
    }
    let ld = tools.link(
        &gcc,
        &["strategy.o", "knobellib.o"],
        "strategy.wasm",
        1 << 20,
        BuiltinsInput::Archive,
    )?;
    if !ld.ok {
        return Err(CompileError::Runtime(ld.messages));
    }
    Ok(gcc.get("strategy.wasm")?)
}

/// Seconds for `fuel` units of `strategy`, run until its fuel is gone.
fn run(strategy: &crate::wasm::Strategy, fuel: u64) -> Result<Duration, CompileError> {
    let limits = SeatLimits {
        fuel,
        wall: Duration::from_secs(3600),
    };
    let started = Instant::now();
    match lead(strategy, 1, limits, GameWatch::start(), StopAtFirstThrow).0 {
        Ending::Trapped(wasmtime::Trap::OutOfFuel) => Ok(started.elapsed()),
        other => Err(CompileError::Runtime(format!(
            "a fuel class ended otherwise: {other:?}"
        ))),
    }
}

/// Nanoseconds per unit of fuel: a run of about a quarter of a second,
/// the best of three.
fn ns_per_fuel(strategy: &crate::wasm::Strategy) -> Result<f64, CompileError> {
    let probe = 20_000_000;
    let t = run(strategy, probe)?.as_secs_f64().max(1e-6);
    let fuel = ((probe as f64) * 0.25 / t).clamp(1e6, 1e11) as u64;
    let mut best = f64::MAX;
    for _ in 0..3 {
        best = best.min(run(strategy, fuel)?.as_secs_f64() * 1e9 / fuel as f64);
    }
    Ok(best)
}

/// Streams through 64 MB on every CPU but the bench's until `stop`.
fn busy_others(stop: Arc<AtomicBool>, bench_cpu: usize) -> Vec<std::thread::JoinHandle<()>> {
    crate::sandbox::allowed_cpus()
        .into_iter()
        .filter(|c| *c != bench_cpu)
        .map(|cpu| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let _ = crate::sandbox::pin_current_thread(cpu);
                let mut buf = vec![1u64; 8 << 20];
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..(1 << 16) {
                        buf[i] = buf[i].wrapping_mul(3).wrapping_add(1);
                        i = (i + 4099) % buf.len();
                    }
                }
                std::hint::black_box(&buf);
            })
        })
        .collect()
}

/// Runs the fuel benchmark (pinned to the first allowed CPU, in a thread
/// of its own).
pub fn fuel_bench() -> Result<FuelBench, CompileError> {
    let tools = Toolchain::find().ok_or(CompileError::Runtime(Toolchain::MISSING.into()))?;
    let mut strategies = Vec::new();
    for (name, what, source) in CLASSES {
        let module = build(&tools, source)?;
        let loaded = crate::wasm::load(&module)
            .map_err(|e| CompileError::Runtime(e.to_string()))?
            .map_err(|e| CompileError::Runtime(format!("{name}: {e}")))?;
        strategies.push((*name, *what, loaded));
    }
    let cpu = *crate::sandbox::allowed_cpus().first().unwrap_or(&0);
    std::thread::scope(|s| {
        s.spawn(|| {
            crate::sandbox::pin_current_thread(cpu)?;
            let mut classes = Vec::new();
            for (name, what, strategy) in &strategies {
                let quiet_ns = ns_per_fuel(strategy)?;
                let stop = Arc::new(AtomicBool::new(false));
                let busy = busy_others(stop.clone(), cpu);
                std::thread::sleep(Duration::from_millis(50));
                let loaded_ns = ns_per_fuel(strategy);
                stop.store(true, Ordering::Relaxed);
                for b in busy {
                    let _ = b.join();
                }
                classes.push(FuelClass {
                    name,
                    what,
                    quiet_ns,
                    loaded_ns: loaded_ns?,
                });
            }
            Ok(FuelBench { classes })
        })
        .join()
        .expect("bench thread")
    })
}
