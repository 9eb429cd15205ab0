//! The compile service: a submitted source through the six checks of the
//! announcement, in order, to the WebAssembly module that plays.
//!
//! [`compile`] reads as the service's steps, each a short method of
//! [`Pass`]: the source's size; the header (check 1); the description
//! (check 4, pure); a single file (check 2); `gcc -E` in the jail and the
//! checks of the one preprocessed text (check 2 again, check 3); gcc
//! (check 5: "must be compilable with gcc", its front end alone, its
//! messages are what a participant reads); the names the text may not write (check 6: the
//! linker's, WebAssembly's builtins); clang for `wasm32` on the same text,
//! once clang's own preprocessing is shown to leave it as it is; the
//! routines the object needs and defines (check 6, on clang's object: what
//! is linked is what is checked); no stack frame larger than the stack;
//! wasm-ld with the runtime (the memory limit, requirement 5); the
//! module's shape ([`wasm::check_module`]); the engine's compile. A step
//! that rejects sets its verdicts and stops the pass; [`report::finish`]
//! skips the checks not reached.
//!
//! Up to five programs run in the jail, in this order: `gcc -E` (its `cc1`
//! started directly, [`GccStart`]), `gcc -fsyntax-only` (its `cc1`
//! started directly; and gcc's front end on a probe of the builtins off
//! the list the text names, only where it names one: check 6's words),
//! `clang -E` (only where the text could
//! change under it: [`wasm::clangs_preprocessing_cannot_change`]),
//! `clang -c` (its compiler in-process, no `cc1` forked) and wasm-ld; [`compile_measured`] gives
//! each one's CPU (`bench compile` prints them). Most of it is starting
//! the tools (two `cc1` starts, two of zig's; with Debian's LLVM, clang
//! and wasm-ld load and relocate libLLVM), not reading or building the
//! program: check 5 is gcc's front end alone, since gcc's object never
//! played (its back end, `-O2` passes and `as` were two thirds of a
//! small strategy's `gcc -c`). The jail's tree is made once per server ([`Jail::new`]).
//! An accepted outcome is kept by source ([`ModuleCache`], key
//! [`cache_key`]): the same source with the same settings and tools gets
//! it again without a process.
//!
//! The steps' findings are worded in the children: `check6.rs` (check 6's
//! diagnostics), `messages.rs` (LLVM crashes, memory), `report.rs` (the
//! report); `runtime.rs` makes what every strategy is linked against;
//! `cache.rs` keeps accepted outcomes;
//! `error.rs` is the service's own faults. This file holds the settings,
//! the steps in order and the example strategy, compiled once.
//!
//! A rejection is data ([`Outcome::Rejected`] with its diagnostics), never an
//! `Err`; `Err` means the server could not do its job (no jail, no gcc).
//! The trial game and authentication are not done here (see the `check`
//! command and the mail front end).

mod cache;
mod check6;
mod error;
mod messages;
mod report;
mod runtime;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Serialize;

pub use self::cache::{CacheKey, ModuleCache, MAX_CACHED_BYTES};
use self::check6::{library_problems, link_findings, names_in_text};
pub use self::error::CompileError;
use self::messages::{compiler_limit_message, llvm_crash, memory_message};
use self::report::{add_gcc_messages, add_tool_warnings, finish, FirstUses, Verdicts};
pub use self::report::{
    compiler_heading, is_tool_heading, verdict_words, Builder, CheckStatus, Outcome, Report,
    Verdict, MAX_DIAGNOSTICS_PER_CHECK,
};
pub use self::runtime::{compiler_helpers, runtime_wasm_object};
use self::runtime::{helpers_archive, runtime_symbols};
use super::diagnostic::{Check, Diagnostic};
pub use super::gcc::GccStart;
use super::gcc::{Gcc, GccRun, Input, Messages, PREPROCESSED_NAME, SOURCE_NAME};
use super::lex;
use super::source;
use super::symbols;
use super::{purec, wasm};
use crate::sandbox::jail::{Jail, JailLimits};

/// The strategy of the announcement's shell archive, unchanged.
pub const EXAMPLE_C: &str = include_str!("../runtime/example.c");

/// Which checks apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// A contest submission: all six checks, plus the static-memory check.
    Submission,
    /// The organizer's own run on a folder of sources (`knobeln tournament`):
    /// like a submission, but without the `<<FROM>>` header, which only
    /// authenticates mail.
    Organizer,
    /// Local play (`knobeln play`): no header, description or size rules;
    /// still a single file, gcc, and only the five routines.
    Local,
}

/// Settings of the compile service.
#[derive(Debug, Clone)]
pub struct CompileConfig {
    pub profile: Profile,
    pub jail: JailLimits,
    /// The most preprocessed text the server reads (checks 2 and 3 run on
    /// it outside the jail, in memory linear in it): far above what 10,000
    /// lexical elements make, far below what a page of macros can.
    pub max_preprocessed_bytes: u64,
    /// Requirement 4: at most this many lexical elements after preprocessing.
    pub max_lexical_elements: u64,
    /// Requirement 7: at least this many non-blank description lines.
    pub min_description_lines: u32,
    /// Requirement 5: the module's linear memory (static data and stack).
    pub memory_limit: u64,
    /// Sources larger than this are refused before anything else.
    pub max_source_bytes: usize,
    /// The wasm tools to build with; `None`: [`wasm::Toolchain::find`]'s
    /// (the newest LLVM installed, its grounds seen once per process).
    pub toolchain: Option<wasm::Toolchain>,
    /// How gcc's runs start: their programs directly (the default, one
    /// start fewer each), or through the driver (the same text, object
    /// and report: [`GccStart::Cc1`]).
    pub gcc_start: GccStart,
    /// When wasm-ld is given the builtins archive: only where an object
    /// calls one of its helpers (the same module, [`wasm::BuiltinsLink`]).
    pub builtins: wasm::BuiltinsLink,
}

impl Default for CompileConfig {
    fn default() -> Self {
        CompileConfig {
            profile: Profile::Submission,
            jail: JailLimits::default(),
            max_lexical_elements: 10_000,
            max_preprocessed_bytes: 512 << 10,
            min_description_lines: 15,
            memory_limit: 1024 * 1024,
            max_source_bytes: 256 * 1024,
            toolchain: None,
            gcc_start: GccStart::default(),
            builtins: wasm::BuiltinsLink::default(),
        }
    }
}

impl CompileConfig {
    pub fn local() -> Self {
        CompileConfig {
            profile: Profile::Local,
            ..CompileConfig::default()
        }
    }
}

/// Runs the checks on `source` and compiles it (an accepted source
/// compiled before with the same settings and tools: its stored outcome,
/// [`ModuleCache::global`]).
pub fn compile(source: &[u8], cfg: &CompileConfig) -> Result<Outcome, CompileError> {
    Ok(compile_measured(source, cfg, ModuleCache::global())?.outcome)
}

/// A process a compile ran in the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tool {
    /// `gcc -E`: the preprocessed text.
    GccPreprocess,
    /// `gcc -fsyntax-only` (its `cc1`), and again with `-w` when the
    /// errors drowned in warnings: check 5.
    Gcc,
    /// gcc's front end on a text of the server's making that calls the
    /// builtins off the list the program names: which of them gcc does not
    /// know (check 6's words; [`Gcc::unknown_builtins`]).
    GccBuiltinsProbe,
    /// `clang -E` of the preprocessed text: it is left as it is (not run
    /// where the text cannot change under it).
    ClangPreprocess,
    /// `clang -c` for `wasm32`: the object that plays.
    Clang,
    /// clang's front end once more, for the report's words alone: the
    /// warnings on [`wasm::CLANG_WARNINGS`] (only where the text names
    /// their cause, [`wasm::clang_may_warn`]).
    ClangWarnings,
    /// wasm-ld: the module.
    WasmLd,
}

/// Where a compile's outcome came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The tools ran.
    Compiled,
    /// The cache's, stored when the same inputs were compiled before.
    Cached,
}

/// A compile's outcome with what it cost: each tool's CPU time, from the
/// kernel's accounting of the jailed process (empty when cached).
#[derive(Debug, Clone)]
pub struct Measured {
    pub outcome: Outcome,
    pub origin: Origin,
    pub tools: Vec<(Tool, Duration)>,
}

/// [`compile`] with `cache`, and what each tool cost.
pub fn compile_measured(
    source: &[u8],
    cfg: &CompileConfig,
    cache: &ModuleCache,
) -> Result<Measured, CompileError> {
    // Found once for the key and the pass (a look through `/usr/lib`).
    let tools = cfg.toolchain.clone().or_else(wasm::Toolchain::find);
    let key = tools.as_ref().and_then(|t| cache_key_of(source, cfg, t));
    if let Some(mut outcome) = key.as_ref().and_then(|k| cache.get(k)) {
        // The authentification string is not kept: check 1 reads it
        // again from the source (the same bytes, so the same header).
        if let Outcome::Accepted { report, .. } = &mut outcome {
            if report.header.is_some() {
                report.header = source::parse_header(&String::from_utf8_lossy(source)).ok();
            }
        }
        return Ok(Measured {
            outcome,
            origin: Origin::Cached,
            tools: Vec::new(),
        });
    }
    let mut pass = Pass::new(source, cfg, tools);
    let module = pass.run(source)?;
    let outcome = finish(pass.r, pass.verdicts, module);
    if let (Some(key), Outcome::Accepted { binary, report }) = (key, &outcome) {
        let mut kept = report.clone();
        if let Some(h) = kept.header.as_mut() {
            h.auth.clear();
        }
        cache.insert(
            key,
            &Outcome::Accepted {
                binary: binary.clone(),
                report: kept,
            },
        );
    }
    Ok(Measured {
        outcome,
        origin: Origin::Compiled,
        tools: pass.tools,
    })
}

/// The key of a compile in the [`ModuleCache`]: SHA-256 of the source, the
/// settings and the identity of every program and file the compile runs
/// or links (path, size and modification time of gcc, its `cc1` and
/// `as`, clang, wasm-ld and the builtins archive; the server's version,
/// which fixes the runtime and the checks). `None` (not cached): a tool is
/// missing.
pub fn cache_key(source: &[u8], cfg: &CompileConfig) -> Option<CacheKey> {
    let tools = cfg.toolchain.clone().or_else(wasm::Toolchain::find)?;
    cache_key_of(source, cfg, &tools)
}

/// [`cache_key`] with the wasm tools the compile runs.
fn cache_key_of(source: &[u8], cfg: &CompileConfig, tools: &wasm::Toolchain) -> Option<CacheKey> {
    use sha2::{Digest, Sha256};
    let mut files = vec![
        std::path::PathBuf::from(super::gcc::GCC),
        std::path::PathBuf::from("/usr/bin/as"),
        tools.clang.clone(),
        tools.wasm_ld.clone(),
        tools.builtins.clone(),
    ];
    // gcc's compilers proper, under /usr/lib/gcc/TARGET/VERSION/.
    for target in std::fs::read_dir("/usr/lib/gcc").ok()?.flatten() {
        for version in std::fs::read_dir(target.path()).ok()?.flatten() {
            files.push(version.path().join("cc1"));
        }
    }
    files.sort();
    let mut h = Sha256::new();
    h.update(b"knobeln compile cache 1\0");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(format!("\0{cfg:?}\0").as_bytes());
    for f in &files {
        h.update(f.to_string_lossy().as_bytes());
        if let Ok(m) = std::fs::metadata(f) {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .unwrap_or_default();
            h.update(format!(" {} {}\0", m.len(), modified.as_nanos()).as_bytes());
        } else {
            h.update(b" missing\0");
        }
    }
    h.update((source.len() as u64).to_le_bytes());
    h.update(source);
    Some(h.finalize().into())
}

/// One compile in progress: the report so far and the checks' verdicts.
struct Pass<'a> {
    cfg: &'a CompileConfig,
    /// The submitted source as text (for the pure checks and line numbers).
    text: String,
    r: Report,
    verdicts: Verdicts,
    /// The identifiers written in the preprocessed text (what the
    /// program names itself, as opposed to what the compiler calls).
    written: HashSet<String>,
    /// The CPU time of each tool run so far.
    tools: Vec<(Tool, Duration)>,
    /// Whether clang's object calls a helper of the builtins archive
    /// (read by check 6: [`Pass::library`]); the link is given the
    /// archive where it or the runtime does.
    calls_helpers: CallsHelpers,
    /// The wasm tools ([`CompileConfig::toolchain`], else the ones
    /// installed), found once for the cache's key and the pass.
    toolchain: Option<wasm::Toolchain>,
}

/// Whether an object has an undefined symbol the builtins archive defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallsHelpers {
    Yes,
    No,
}

impl CallsHelpers {
    fn of(object: &symbols::ObjectSymbols, helpers: &symbols::Helpers) -> CallsHelpers {
        if object.undefined.iter().any(|s| helpers.contains(s)) {
            CallsHelpers::Yes
        } else {
            CallsHelpers::No
        }
    }
}

/// How many times the lexical limit a program may have for the compilers
/// to be run on it anyway (check 3 failed: its report then has every later
/// check's word too, so that the rest can be fixed while it is shortened).
/// Beyond, the rest is skipped: a program that must lose more than half of
/// itself gains nothing from the compilers' messages, and `cc1 -O2` over
/// hundreds of thousands of elements can reach the jail's memory limit,
/// or not, by how the text is spread over functions, so the report would
/// say different things of programs equally far from being accepted.
const FAR_TOO_LONG: u64 = 2;
// The report's words say "twice".
const _: () = assert!(FAR_TOO_LONG == 2);

impl<'a> Pass<'a> {
    fn new(source: &[u8], cfg: &'a CompileConfig, toolchain: Option<wasm::Toolchain>) -> Pass<'a> {
        Pass {
            cfg,
            text: String::from_utf8_lossy(source).into_owned(),
            r: Report::empty(),
            verdicts: Verdicts::default(),
            written: HashSet::new(),
            tools: Vec::new(),
            calls_helpers: CallsHelpers::Yes,
            toolchain,
        }
    }

    /// The steps in order; `None`: rejected (the report says why).
    fn run(&mut self, source: &[u8]) -> Result<Option<Vec<u8>>, CompileError> {
        if !self.size_fits(source.len()) {
            return Ok(None);
        }
        self.header();
        self.description();
        if !self.single_file() {
            return Ok(None);
        }
        let jail = Jail::new()?;
        let gcc = Gcc::new(&jail, self.cfg.jail).started(self.cfg.gcc_start);
        gcc.put(SOURCE_NAME, source)?;
        let Some(preprocessed) = self.preprocess(&gcc)? else {
            return Ok(None);
        };
        if !self.lexical_elements(&preprocessed) {
            return Ok(None);
        }
        if !self.gcc(&gcc)? {
            return Ok(None);
        }
        if !self.reserved_names(&gcc)? {
            return Ok(None);
        }
        let tools = (self.toolchain.clone())
            .ok_or_else(|| CompileError::Runtime(wasm::Toolchain::MISSING.into()))?;
        // A process that compiles more than once (a server, a contest, a
        // benchmark) runs the toolchain from a copy in huge pages from its
        // second compile on (asked at every compile after the first, held
        // once: a first compile with another toolchain holds nothing); a
        // one-off check does not pay for the copy.
        static CLANG_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        if CLANG_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 1 {
            tools.hold_in_memory();
            super::gcc::hold_cc1_in_memory();
        }
        let Some(object) = self.clang(&gcc, &tools, &preprocessed)? else {
            return Ok(None);
        };
        if !self.library(&object)? || self.r.errors().next().is_some() {
            // Rejected (by check 6, or earlier by check 1, 3 or 4):
            // nothing is linked.
            return Ok(None);
        }
        if !self.object_shape(&object) || !self.stack_frames_fit(&object) {
            return Ok(None);
        }
        let Some(module) = self.link(&gcc, &tools)? else {
            return Ok(None);
        };
        if !self.module_shape(&module) || !self.engine_compiles(&module)? {
            return Ok(None);
        }
        Ok(Some(module))
    }

    /// Sources over the size limit are refused unread.
    fn size_fits(&mut self, len: usize) -> bool {
        if len <= self.cfg.max_source_bytes {
            return true;
        }
        self.r.diagnostics.push(Diagnostic::error(
            Check::SingleFile,
            None,
            format!(
                "the source is {len} bytes long; at most {} bytes are accepted",
                self.cfg.max_source_bytes
            ),
        ));
        self.verdicts.set(Check::SingleFile, Verdict::Failed);
        self.verdicts.skip_rest("the source is too large");
        false
    }

    /// Check 1: the `<<FROM>>` header (submissions only).
    fn header(&mut self) {
        if self.cfg.profile != Profile::Submission {
            self.verdicts.set(Check::Header, Verdict::NotApplicable);
            return;
        }
        let verdict = match source::parse_header(&self.text) {
            Ok(h) => {
                self.r.header = Some(h);
                Verdict::Passed
            }
            Err(d) => {
                self.r.diagnostics.push(d);
                Verdict::Failed
            }
        };
        self.verdicts.set(Check::Header, verdict);
    }

    /// Check 4 (pure, so always run): the description.
    fn description(&mut self) {
        if self.cfg.profile == Profile::Local {
            self.r.description = source::find_description(&self.text);
            self.verdicts
                .set(Check::Description, Verdict::NotApplicable);
            return;
        }
        let verdict = match source::check_description(&self.text, self.cfg.min_description_lines) {
            Ok((d, warning)) => {
                self.r.description = Some(d);
                self.r.diagnostics.extend(warning);
                Verdict::Passed
            }
            Err(d) => {
                self.r.diagnostics.push(d);
                Verdict::Failed
            }
        };
        self.verdicts.set(Check::Description, verdict);
    }

    /// Check 2 on the source as written.
    fn single_file(&mut self) -> bool {
        let problems = source::check_single_file(&self.text);
        let ok = problems.is_empty();
        self.r.diagnostics.extend(problems);
        if ok {
            self.verdicts.set(Check::SingleFile, Verdict::Passed);
        } else {
            self.verdicts.set(Check::SingleFile, Verdict::Failed);
            self.verdicts
                .skip_rest("the source must first be a single file (check 2)");
        }
        ok
    }

    /// `gcc -E` in the jail: the one text that everything below checks,
    /// counts and compiles (never the source again), and check 2 again on
    /// what the macros made of the source. `None`: rejected.
    fn preprocess(&mut self, gcc: &Gcc<'_>) -> Result<Option<String>, CompileError> {
        let pre = gcc.preprocess(SOURCE_NAME, PREPROCESSED_NAME, self.cfg.gcc_start)?;
        self.tools.push((Tool::GccPreprocess, pre.cpu));
        add_gcc_messages(&mut self.r, &pre, Check::Compiler, "gcc");
        if !pre.ok {
            let why = "the preprocessor failed (see check 5)";
            self.verdicts
                .set(Check::LexicalElements, Verdict::Skipped(why.into()));
            self.verdicts.set(Check::Compiler, Verdict::Failed);
            self.verdicts.skip_rest("gcc failed (check 5)");
            return Ok(None);
        }
        let size = gcc.size(PREPROCESSED_NAME)?;
        if size > self.cfg.max_preprocessed_bytes {
            // Not read at all: a few lines of macros can make megabytes.
            self.r.diagnostics.push(Diagnostic::error(
                Check::LexicalElements,
                None,
                format!(
                    "after preprocessing the program is {size} bytes long, more than {} \
                     lexical elements could make (at most {} bytes are read): \
                     write it out instead of letting macros multiply it",
                    self.cfg.max_lexical_elements, self.cfg.max_preprocessed_bytes
                ),
            ));
            self.verdicts.set(Check::LexicalElements, Verdict::Failed);
            self.verdicts
                .skip_rest("the program is too long after preprocessing (check 3)");
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&gcc.get(PREPROCESSED_NAME)?).into_owned();
        let expanded = purec::check_preprocessed(&text);
        if !expanded.is_empty() {
            self.r.diagnostics.extend(expanded);
            self.verdicts.set(Check::SingleFile, Verdict::Failed);
            self.verdicts
                .skip_rest("the source must first be pure C (check 2)");
            return Ok(None);
        }
        Ok(Some(text))
    }

    /// Check 3: the lexical elements of the preprocessed text. `false`:
    /// more than [`FAR_TOO_LONG`] times the limit, the rest skipped (a
    /// program only somewhat too long gets every later check's word too).
    fn lexical_elements(&mut self, preprocessed: &str) -> bool {
        let (text, _) = purec::strip_line_markers(preprocessed);
        // One pass, with the same rules for the count and for the names
        // check 6 reads (`written`): the text gcc and clang compile, its
        // line markers off, GNU's raw strings as gcc reads them.
        let mut n = 0;
        let mut written = HashSet::new();
        for t in lex::tokenize_with(&text, lex::LexOptions::GNU) {
            n += t.lexical_elements();
            if matches!(t.kind, lex::TokenKind::Identifier) {
                written.insert(t.text.to_string());
            }
        }
        self.written = written;
        self.r.lexical_elements = Some(n);
        let max = self.cfg.max_lexical_elements;
        if self.cfg.profile == Profile::Local || n <= max {
            self.verdicts.set(Check::LexicalElements, Verdict::Passed);
            return true;
        }
        let far = n > max.saturating_mul(FAR_TOO_LONG);
        self.r.diagnostics.push(Diagnostic::error(
            Check::LexicalElements,
            None,
            if far {
                format!(
                    "the program has {n} lexical elements after preprocessing; at most {max} are \
                     allowed (more than twice that many: the compilers were not run on it; shorten \
                     it first)"
                )
            } else {
                format!(
                    "the program has {n} lexical elements after preprocessing; at most {max} are allowed"
                )
            },
        ));
        self.verdicts.set(Check::LexicalElements, Verdict::Failed);
        if far {
            self.verdicts
                .skip_rest("the program is more than twice as long as allowed (check 3)");
        }
        !far
    }

    /// Check 5: gcc's front end reads the preprocessed text (its
    /// messages are the report's; `gcc -fsyntax-only`, nothing written).
    /// Static data too large for the memory are refused where the program
    /// that plays is built: by wasm-ld's layout with its exact figure, or,
    /// past what the jail lets clang write or hold, by clang's limits
    /// ([`Pass::clang`]), which bound what such a program costs.
    fn gcc(&mut self, gcc: &Gcc<'_>) -> Result<bool, CompileError> {
        let mut cc = gcc.check(Messages::All)?;
        self.tools.push((Tool::Gcc, cc.cpu));
        let cut_note = super::gcc::MESSAGES_CUT;
        if !cc.ok && cc.limit_hit.is_none() && cc.messages.contains(cut_note) {
            // The errors drowned in warnings: ask again for the errors alone.
            let quiet = gcc.check(Messages::ErrorsOnly)?;
            self.tools.push((Tool::Gcc, quiet.cpu));
            let cut = cc.messages.lines().rev().find(|l| l.contains(cut_note));
            cc.messages = format!(
                "{}\n{}\n[gcc printed too many warnings; here are its errors alone:]\n{}",
                cc.messages.lines().take(20).collect::<Vec<_>>().join("\n"),
                cut.unwrap_or(""),
                quiet.messages
            );
        }
        add_gcc_messages(&mut self.r, &cc, Check::Compiler, "gcc");
        if !cc.ok {
            self.verdicts.set(Check::Compiler, Verdict::Failed);
            self.verdicts.skip_rest("gcc failed (check 5)");
            return Ok(false);
        }
        self.verdicts.set(Check::Compiler, Verdict::Passed);
        Ok(true)
    }

    /// The builtins gcc does not know among those the text names off the
    /// list (check 6's words for them): asked of gcc's front end on a
    /// text of the server's making that calls each
    /// ([`Gcc::unknown_builtins`]), only where the text names such a
    /// builtin, so only on a rejection's way.
    fn unknown_to_gcc(&mut self, gcc: &Gcc<'_>) -> Result<Vec<String>, CompileError> {
        let names = check6::builtins_named_off_the_list(&self.written);
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let probe = gcc.unknown_builtins(&names)?;
        self.tools.push((Tool::GccBuiltinsProbe, probe.cpu));
        Ok(probe.names.unwrap_or_default())
    }

    /// Check 6 before clang: the program names none of the linker's own
    /// symbols (clang would fail on some, wasm-ld on others), nor a
    /// WebAssembly builtin (`__builtin_wasm_memory_grow`: the memory is
    /// fixed; any of them: gcc does not know it, so the two compilers
    /// would build different programs), nor names any other builtin off
    /// the list both compilers know alike ([`super::builtins`]; clang 22's
    /// `__builtin_elementwise_abs`, called or inside `__typeof__`: red
    /// team E13).
    /// Nor any other reserved identifier off the keywords both read alike
    /// (clang's `__c11_atomic_load` inside `__typeof__`: H14).
    fn reserved_names(&mut self, gcc: &Gcc<'_>) -> Result<bool, CompileError> {
        let unknown_to_gcc = self.unknown_to_gcc(gcc)?;
        let uses = FirstUses::new(&self.text, self.r.description.as_ref());
        let helpers = compiler_helpers()?;
        let found = names_in_text(
            &self.written,
            &unknown_to_gcc,
            &helpers,
            &uses,
            self.cfg.memory_limit,
        );
        let ok = found.is_empty();
        self.r.diagnostics.extend(found);
        if !ok {
            self.verdicts.set(Check::Library, Verdict::Failed);
        }
        Ok(ok)
    }

    /// clang builds the program that plays from the same preprocessed text,
    /// once its own preprocessing is shown to leave that text token for
    /// token as it is; its wasm32 object. `None`: rejected (check 5).
    fn clang(
        &mut self,
        gcc: &Gcc<'_>,
        tools: &wasm::Toolchain,
        preprocessed: &str,
    ) -> Result<Option<Vec<u8>>, CompileError> {
        if !tools.skip_grounds(gcc)?.may_skip(preprocessed)
            && !self.clang_sees_it(gcc, tools, preprocessed)?
        {
            return Ok(None);
        }
        let cc = tools.compile(
            gcc,
            Input::Preprocessed,
            PREPROCESSED_NAME,
            "strategy.wasm.o",
        )?;
        self.tools.push((Tool::Clang, cc.cpu));
        if !cc.ok {
            let size_limit = cc.limit_hit.as_ref().filter(|l| l.is_size());
            if let Some(limit) =
                size_limit.filter(|_| !self.r.errors().any(|d| d.check == Check::Compiler))
            {
                // Static arrays clang writes out as zeros; a compound
                // literal clang builds though only `sizeof` reads it.
                self.reject(compiler_limit_message(
                    limit.limit,
                    self.cfg.memory_limit,
                    self.cfg.jail.file_size,
                ));
                self.compiler_failed();
                return Ok(None);
            }
            self.clang_failed(&cc);
            return Ok(None);
        }
        let object = gcc.get("strategy.wasm.o")?;
        if wasm::clang_may_warn(preprocessed) {
            // The warnings gcc gives only while building an object, in
            // the words of the compiler that built it: a run of their own,
            // whose verdict is not the compile's.
            let said = tools.warnings(gcc, PREPROCESSED_NAME)?;
            self.tools.push((Tool::ClangWarnings, said.cpu));
            if said.limit_hit.is_none() {
                let quoted = wasm::clang_warnings_to_report(&said.messages);
                let before = self.r.diagnostics.len();
                add_tool_warnings(&mut self.r, &quoted, Check::Compiler, "clang");
                self.mark_as_clangs(before);
            }
        }
        Ok(Some(object))
    }

    /// `clang -E` of the checked text, compared token for token with it
    /// (where [`wasm::clangs_preprocessing_cannot_change`] cannot show
    /// that nothing would differ). `false`: rejected (check 5).
    fn clang_sees_it(
        &mut self,
        gcc: &Gcc<'_>,
        tools: &wasm::Toolchain,
        preprocessed: &str,
    ) -> Result<bool, CompileError> {
        let again = tools.preprocess_again(gcc, PREPROCESSED_NAME, "strategy.clang.i")?;
        self.tools.push((Tool::ClangPreprocess, again.cpu));
        if !again.ok {
            self.clang_failed(&again);
            return Ok(false);
        }
        let again = String::from_utf8_lossy(&gcc.get("strategy.clang.i")?).into_owned();
        if let Some((line, token)) = wasm::preprocessing_difference(preprocessed, &again) {
            // gcc compiled the text, so a `\` outside a literal in it is
            // the start of a universal character name: gcc's spelling of a
            // name's character outside ASCII, which clang writes as UTF-8.
            let universal_name =
                lex::Lexer::new(preprocessed, lex::LexOptions::GNU).any(|t| t.is_punct(b'\\'));
            let message = if universal_name {
                "a name with a character outside ASCII (gcc writes it as `\\U000000c0`, \
                 clang as the character itself): the compilers spell such a name differently, \
                 so the program cannot be shown to be the same for both; write names with \
                 the ASCII letters a-z and A-Z, digits and `_` only"
                    .to_string()
            } else {
                format!(
                    "`{token}` means something to clang, the compiler that builds the program \
                     that plays, that it does not mean to gcc (a name clang knows as a macro, or \
                     a directive a macro made): every compiler must see the same program; \
                     rename it or write it out"
                )
            };
            self.r.diagnostics.push(Diagnostic::error(
                Check::Compiler,
                (line > 0).then_some(line),
                message,
            ));
            self.builder_failed(Builder::Clang);
            return Ok(false);
        }
        Ok(true)
    }

    /// clang refused the text gcc compiled: its messages, marked as its;
    /// a crash of LLVM's (a bug report request, a stack dump, the server's
    /// paths) is never quoted: one sentence says what failed.
    fn clang_failed(&mut self, run: &GccRun) {
        if let Some(why) = llvm_crash(&run.messages) {
            self.r.diagnostics.push(Diagnostic::error(
                Check::Compiler,
                None,
                format!(
                    "clang could not build this program for the contest's machine ({why}); \
                     this is a limit of the compiler for WebAssembly, not a rule of the \
                     contest: write the part it chokes on differently (a compiler builtin \
                     or a construct WebAssembly lacks?)"
                ),
            ));
            self.builder_failed(Builder::Clang);
            return;
        }
        let before = self.r.diagnostics.len();
        add_gcc_messages(&mut self.r, run, Check::Compiler, "clang");
        self.mark_as_clangs(before);
        self.builder_failed(Builder::Clang);
    }

    /// The diagnostics from `before` on are clang's: each says so.
    fn mark_as_clangs(&mut self, before: usize) {
        for d in &mut self.r.diagnostics[before..] {
            if !d.message.starts_with("clang") {
                d.message = format!("clang (which builds the program that plays): {}", d.message);
            }
        }
    }

    /// Check 5 failed in `tool` after gcc passed: the report says which.
    fn builder_failed(&mut self, tool: Builder) {
        self.r.failed_builder = Some(tool);
        self.compiler_failed();
    }

    /// Check 5 failed after gcc passed: check 6 has nothing to read.
    fn compiler_failed(&mut self) {
        self.verdicts.set(Check::Compiler, Verdict::Failed);
        self.verdicts
            .skip_rest("the program that plays could not be built (check 5)");
    }

    /// A problem of the program that plays, found after clang: check 5's.
    fn reject(&mut self, message: String) {
        self.r
            .diagnostics
            .push(Diagnostic::error(Check::Compiler, None, message));
        self.verdicts.set(Check::Compiler, Verdict::Failed);
    }

    /// Check 6 on clang's object, the one linked into the module: it calls
    /// only the five routines (and the compiler's helpers), defines `main`
    /// and none of the runtime's names, and has no constructors.
    fn library(&mut self, object: &[u8]) -> Result<bool, CompileError> {
        let syms = symbols::inspect_object(object).map_err(CompileError::Object)?;
        let helpers = compiler_helpers()?;
        self.calls_helpers = CallsHelpers::of(&syms, &helpers);
        let found = library_problems(
            &syms,
            &*runtime_symbols()?,
            &helpers,
            &self.written,
            &FirstUses::new(&self.text, self.r.description.as_ref()),
        );
        let ok = found.is_empty();
        self.r.diagnostics.extend(found);
        let verdict = if ok { Verdict::Passed } else { Verdict::Failed };
        self.verdicts.set(Check::Library, verdict);
        Ok(ok)
    }

    /// clang's object imports nothing but through the linker's `env`.
    fn object_shape(&mut self, object: &[u8]) -> bool {
        let problems = wasm::check_object(object);
        let ok = problems.is_empty();
        for p in problems {
            self.reject(format!("the program {p}"));
        }
        ok
    }

    /// No function's frame is larger than the whole shadow stack (a local
    /// array of a megabyte): it would crash whenever it is called, so it
    /// is refused here, with its figure and the limit (requirement 5).
    fn stack_frames_fit(&mut self, object: &[u8]) -> bool {
        let stack = wasm::SHADOW_STACK_BYTES;
        let too_big: Vec<_> = wasm::stack_frames(object)
            .into_iter()
            .filter(|f| f.bytes > stack)
            .collect();
        if too_big.is_empty() {
            return true;
        }
        // Where each function is first used: only for a refusal.
        let uses = FirstUses::new(&self.text, self.r.description.as_ref());
        for frame in too_big {
            // clang's names for `main` by its prototype.
            let function = frame.function.as_deref().map(|f| match f {
                "__main_void" | "__main_argc_argv" => "main",
                f => f,
            });
            let (what, line) = match function {
                Some(f) => (format!("the function `{f}`"), uses.line(f)),
                None => ("a function".to_string(), None),
            };
            self.r.diagnostics.push(Diagnostic::error(
                Check::Compiler,
                line,
                format!(
                    "{what} needs {} kB of stack for its local variables, more than the {} kB \
                     of stack a strategy has (requirement 5: the memory is fixed at {} kB); it \
                     would crash whenever it is called: make its large local arrays static \
                     (declare them `static` or outside the function: static data count \
                     against the memory, not the stack)",
                    frame.bytes.div_ceil(1024),
                    stack / 1024,
                    self.cfg.memory_limit / 1024
                ),
            ));
        }
        self.verdicts.set(Check::Compiler, Verdict::Failed);
        false
    }

    /// wasm-ld links the object with the runtime into a module with the
    /// contest's memory: static data and the stack must fit into it
    /// (requirement 5), and every call must match its function.
    fn link(
        &mut self,
        gcc: &Gcc<'_>,
        tools: &wasm::Toolchain,
    ) -> Result<Option<Vec<u8>>, CompileError> {
        gcc.put("knobellib.wasm.o", &runtime_wasm_object()?)?;
        let objects = ["strategy.wasm.o", "knobellib.wasm.o"];
        let limit = self.cfg.memory_limit;
        // Left off only where the helpers read are the archive's that
        // this link would be given, and neither object calls one.
        let builtins = match (self.cfg.builtins, self.calls_helpers) {
            (wasm::BuiltinsLink::WhereCalled, CallsHelpers::No)
                if tools.builtins == helpers_archive()?
                    && CallsHelpers::of(&*runtime_symbols()?, &*compiler_helpers()?)
                        == CallsHelpers::No =>
            {
                wasm::BuiltinsInput::Omitted
            }
            _ => wasm::BuiltinsInput::Archive,
        };
        let ld = tools.link(gcc, &objects, "strategy.wasm", limit, builtins)?;
        self.tools.push((Tool::WasmLd, ld.cpu));
        let problems = wasm::link_problems(&ld.messages);
        let uses = FirstUses::new(&self.text, self.r.description.as_ref());
        let (needed, calls) = link_findings(&problems, &uses);
        if let Some(needed) = needed {
            self.r.image_bytes = Some(needed);
            self.reject(memory_message(needed, limit));
        }
        if !calls.is_empty() {
            self.r.diagnostics.extend(calls);
            self.verdicts.set(Check::Library, Verdict::Failed);
        }
        if !problems.is_empty() {
            return Ok(None);
        }
        if !ld.ok {
            add_gcc_messages(&mut self.r, &ld, Check::Compiler, "wasm-ld");
            self.r.failed_builder = Some(Builder::WasmLd);
            self.verdicts.set(Check::Compiler, Verdict::Failed);
            return Ok(None);
        }
        Ok(Some(gcc.get("strategy.wasm")?))
    }

    /// The wall: the module's shape ([`wasm::check_module`]).
    fn module_shape(&mut self, module: &[u8]) -> bool {
        match wasm::check_module(module, self.cfg.memory_limit) {
            Ok(shape) => {
                self.r.image_bytes = Some(shape.memory_bytes);
                true
            }
            Err(problems) => {
                for p in problems {
                    self.reject(format!("the program {p}"));
                }
                false
            }
        }
    }

    /// The engine compiles the module as the referee will.
    fn engine_compiles(&mut self, module: &[u8]) -> Result<bool, CompileError> {
        match crate::wasm::load(module).map_err(|e| CompileError::Runtime(e.to_string()))? {
            Ok(_) => Ok(true),
            Err(e) => {
                self.reject(format!("the program does not compile for the referee: {e}"));
                Ok(false)
            }
        }
    }
}

/// The announcement's example strategy as a module, compiled once per
/// process.
pub fn example_module() -> Result<Arc<Vec<u8>>, CompileError> {
    static EXAMPLE: OnceLock<Result<Arc<Vec<u8>>, String>> = OnceLock::new();
    let r = EXAMPLE.get_or_init(|| {
        let outcome =
            compile(EXAMPLE_C.as_bytes(), &CompileConfig::local()).map_err(|e| e.to_string())?;
        let Outcome::Accepted { binary, .. } = outcome else {
            return Err("the example strategy does not compile".into());
        };
        // Its code is public: every later compile takes the runtime's
        // functions and the trampolines compiled for it.
        crate::wasm::keep_functions_of(&binary).map_err(|e| e.to_string())?;
        Ok(Arc::new(binary))
    });
    r.clone().map_err(CompileError::Runtime)
}

/// The announcement's example strategy, ready to play (compiled once per
/// process).
pub fn example_strategy() -> Result<Arc<crate::wasm::Strategy>, CompileError> {
    let module = example_module()?;
    match crate::wasm::load(&module).map_err(|e| CompileError::Runtime(e.to_string()))? {
        Ok(s) => Ok(s),
        Err(e) => Err(CompileError::Runtime(format!(
            "the example strategy does not load: {e}"
        ))),
    }
}
