//! The compile service ([`compile_bench`]): distinct small strategies
//! through every step, with the CPU and memory they cost, and Cranelift's
//! own figures.
//!
//! Not here: the compile service itself (`crate::toolchain`).

use std::time::{Duration, Instant};

use super::measure::ms;
use crate::toolchain::compile::{
    compile_measured, CompileConfig, CompileError, ModuleCache, Origin, Tool,
};

/// Figures of the compile benchmark: `n` distinct small strategies through
/// every step of the compile service (gcc in the jail, clang, check 6,
/// wasm-ld, the module's check, Cranelift), the runtime object already
/// built.
#[derive(Debug, Clone)]
pub struct CompileBench {
    pub n: usize,
    pub wall: Duration,
    /// CPU time of this process and its children (gcc, as, clang, wasm-ld)
    /// per compile.
    pub cpu_per_compile: Duration,
    /// Each tool's CPU per compile (the jailed process and what it
    /// started, from the kernel's accounting), in the order they run.
    pub tools_cpu: Vec<(Tool, Duration)>,
    /// The same sources compiled again: CPU per compile, each outcome the
    /// cache's.
    pub cached_cpu: Duration,
    /// The same for gcc alone on the same sources, in the same jail (its
    /// `-E` and its front end, `-fsyntax-only`: the two gcc steps of a
    /// compile): the floor of any compile service that checks with gcc.
    pub gcc_floor_cpu: Duration,
    /// The engine's compiler (Cranelift, in this process) on the largest
    /// function and the largest module accepted.
    pub cranelift: Vec<CraneliftFigure>,
    /// The programs the jail ran from a copy in huge pages, with the
    /// memory each took (`crate::sandbox::held`).
    pub held: Vec<(std::path::PathBuf, u64)>,
    /// Cranelift's functions kept from the example strategy
    /// (`crate::wasm::CompiledFunctions`).
    pub kept_functions: KeptFunctionsFigure,
}

/// Cranelift's functions kept from the example strategy, and how many of
/// them a compile took.
#[derive(Debug, Clone, Copy)]
pub struct KeptFunctionsFigure {
    /// Functions kept.
    pub kept: usize,
    /// Their bytes, as the cache counts them.
    pub bytes: usize,
    /// Functions taken from them per compile (a mean).
    pub taken_per_compile: f64,
}

/// What Cranelift cost on one synthetic module.
#[derive(Debug, Clone)]
pub struct CraneliftFigure {
    pub what: String,
    pub module_bytes: usize,
    pub cpu: Duration,
    /// How far the process's peak resident memory rose while it compiled.
    pub peak_rise_kb: u64,
    /// The compiled code kept while the module plays.
    pub image_kb: u64,
}

impl CompileBench {
    pub fn print(&self) {
        println!(
            "compile service, {} distinct strategies: {:.2} s wall, {:.1} ms CPU per compile \
             (gcc -E, gcc -fsyntax-only, clang -E where the text could change under it, clang -c, wasm-ld, checks, Cranelift; goal: 30 ms)",
            self.n,
            self.wall.as_secs_f64(),
            ms(self.cpu_per_compile)
        );
        let tools: Duration = self.tools_cpu.iter().map(|(_, d)| *d).sum();
        let each: Vec<String> = self
            .tools_cpu
            .iter()
            .map(|(t, d)| format!("{} {:.1}", tool_name(*t), ms(*d)))
            .collect();
        println!(
            "per step, ms CPU per compile: {}; the server's own (jail, checks, Cranelift) {:.1}",
            each.join(", "),
            ms(self.cpu_per_compile.saturating_sub(tools))
        );
        if self.held.is_empty() {
            println!("the toolchain run from the disk (no copy in huge pages)");
        }
        for (program, bytes) in &self.held {
            println!(
                "run from a copy in huge pages: {} ({:.1} MB of memory)",
                program.display(),
                *bytes as f64 / 1e6
            );
        }
        let KeptFunctionsFigure {
            kept,
            bytes,
            taken_per_compile,
        } = self.kept_functions;
        println!(
            "Cranelift's functions kept from the example strategy: {kept} ({:.1} kB), \
             {taken_per_compile:.1} taken from them per compile",
            bytes as f64 / 1024.0
        );
        println!(
            "the same sources again (cached by source): {:.3} ms CPU per compile",
            ms(self.cached_cpu)
        );
        println!(
            "floor: gcc alone in the jail (its -E and -fsyntax-only): {:.1} ms CPU per source ({:.2}x)",
            ms(self.gcc_floor_cpu),
            self.cpu_per_compile.as_secs_f64() / self.gcc_floor_cpu.as_secs_f64()
        );
        for c in &self.cranelift {
            println!(
                "Cranelift, {} ({} kB): {:.0} ms CPU, peak memory +{:.1} MB, compiled code \
                 {:.1} MB",
                c.what,
                c.module_bytes / 1024,
                ms(c.cpu),
                c.peak_rise_kb as f64 / 1024.0,
                c.image_kb as f64 / 1024.0
            );
        }
    }
}

/// A tool as the breakdown names it.
fn tool_name(t: Tool) -> &'static str {
    match t {
        Tool::GccPreprocess => "gcc -E",
        Tool::Gcc => "gcc -fsyntax-only",
        Tool::GccBuiltinsProbe => "gcc on the builtins' probe",
        Tool::ClangPreprocess => "clang -E",
        Tool::Clang => "clang -c",
        Tool::ClangWarnings => "clang -fsyntax-only (its warnings)",
        Tool::WasmLd => "wasm-ld",
    }
}

/// A line of `/proc/self/status` in kB (`VmHWM`, `VmRSS`).
pub fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Cranelift on the largest function and the largest module the module
/// check accepts (straight-line code; each compiled once, uncached).
fn cranelift_figures() -> Result<Vec<CraneliftFigure>, CompileError> {
    use crate::toolchain::wasm::{
        straight_line_module, StraightLine, MAX_FUNCTION_BYTES, MODULE_FUNCTIONS_AT_LIMIT,
    };
    let mut out = Vec::new();
    for (what, shape, functions) in [
        ("one function at the limit, a chain", StraightLine::Chain, 1),
        ("one function at the limit, all live", StraightLine::Wide, 1),
        (
            "a module at the limit, chains",
            StraightLine::Chain,
            MODULE_FUNCTIONS_AT_LIMIT,
        ),
        (
            "a module at the limit, all live",
            StraightLine::Wide,
            MODULE_FUNCTIONS_AT_LIMIT,
        ),
    ] {
        let module = straight_line_module(shape, functions, MAX_FUNCTION_BYTES - 8);
        // Reset the peak (VmHWM) to the current resident size.
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let before = status_kb("VmRSS:");
        let c = cpu_used();
        let compiled = crate::wasm::compile_uncached(&module)
            .map_err(|e| CompileError::Runtime(e.to_string()))?;
        let cpu = cpu_used() - c;
        out.push(CraneliftFigure {
            what: what.into(),
            module_bytes: module.len(),
            cpu,
            peak_rise_kb: status_kb("VmHWM:").saturating_sub(before),
            image_kb: compiled as u64 / 1024,
        });
    }
    Ok(out)
}

/// CPU time (user + system) of this process and its waited-for children.
fn cpu_used() -> Duration {
    let get = |who| {
        // SAFETY: getrusage fills a valid struct.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        tv(u.ru_utime) + tv(u.ru_stime)
    };
    get(libc::RUSAGE_SELF) + get(libc::RUSAGE_CHILDREN)
}

/// A small distinct strategy with a description (the organizer's profile).
fn bench_source(i: usize) -> String {
    let description: String = (1..=15)
        .map(|l| format!("Line {l} of the description of benchmark strategy {i}.\n"))
        .collect();
    format!(
        "#if 0\n{description}#endif\nmain() {{ int t = {}; for (;;) {{ t = make_throw(t) % 12000 + 1; }} }}\n",
        i % 12000 + 1
    )
}

/// Runs the compile benchmark on `n` sources.
pub fn compile_bench(n: usize) -> Result<CompileBench, CompileError> {
    use crate::sandbox::jail::{Jail, JailLimits};
    use crate::toolchain::compile::Profile;
    use crate::toolchain::gcc::{Gcc, GccStart, Messages, PREPROCESSED_NAME, SOURCE_NAME};
    crate::toolchain::compile::runtime_wasm_object()?;
    crate::toolchain::compile::example_strategy()?;
    // The steady state: the toolchain's and gcc's `cc1`'s copies in huge
    // pages made (their children's CPU not counted in the compiles').
    if let Some(tools) = crate::toolchain::wasm::Toolchain::find() {
        tools.hold_in_memory();
    }
    crate::toolchain::gcc::hold_cc1_in_memory();
    crate::sandbox::held::wait_for_holds(Duration::from_secs(60));
    let cfg = CompileConfig {
        profile: Profile::Organizer,
        ..CompileConfig::default()
    };
    let n = n.max(1);
    let cache = ModuleCache::new(crate::toolchain::compile::MAX_CACHED_BYTES);
    let mut tools: Vec<(Tool, Duration)> = Vec::new();
    let functions = crate::wasm::kept_functions();
    let hits_before = functions.hits();
    let (t, c) = (Instant::now(), cpu_used());
    for i in 0..n {
        let m = compile_measured(bench_source(i).as_bytes(), &cfg, &cache)?;
        if !m.outcome.accepted() || m.origin != Origin::Compiled {
            return Err(CompileError::Runtime(format!(
                "benchmark strategy {i} rejected or not compiled: {:?}",
                m.outcome.report().diagnostics
            )));
        }
        for (tool, cpu) in m.tools {
            match tools.iter_mut().find(|(t, _)| *t == tool) {
                Some(e) => e.1 += cpu,
                None => tools.push((tool, cpu)),
            }
        }
    }
    let (wall, cpu) = (t.elapsed(), cpu_used() - c);
    let taken = (functions.hits() - hits_before) as f64 / n as f64;
    let c = cpu_used();
    for i in 0..n {
        let m = compile_measured(bench_source(i).as_bytes(), &cfg, &cache)?;
        if m.origin != Origin::Cached {
            return Err(CompileError::Runtime(format!(
                "benchmark strategy {i} was not found in the cache"
            )));
        }
    }
    let cached = cpu_used() - c;
    let c = cpu_used();
    for i in 0..n {
        let jail = Jail::new()?;
        let gcc = Gcc::new(&jail, JailLimits::default());
        gcc.put(SOURCE_NAME, bench_source(i).as_bytes())?;
        gcc.preprocess(SOURCE_NAME, PREPROCESSED_NAME, GccStart::Cc1)?;
        gcc.check(Messages::All)?;
    }
    let floor = cpu_used() - c;
    Ok(CompileBench {
        n,
        wall,
        cpu_per_compile: cpu / n as u32,
        tools_cpu: tools.into_iter().map(|(t, d)| (t, d / n as u32)).collect(),
        cached_cpu: cached / n as u32,
        gcc_floor_cpu: floor / n as u32,
        cranelift: cranelift_figures()?,
        held: crate::sandbox::held::held_programs(),
        kept_functions: KeptFunctionsFigure {
            kept: functions.len(),
            bytes: functions.bytes(),
            taken_per_compile: taken,
        },
    })
}
