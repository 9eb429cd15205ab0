//! The compile service: a submitted source through the six checks of the
//! announcement, in order, to the WebAssembly module that plays.
//!
//! [`compile`] reads as the service's steps, each a short method of
//! [`Pass`]: the source's size; the header (check 1); the description
//! (check 4, pure); a single file (check 2); `gcc -E` in the jail and the
//! checks of the one preprocessed text (check 2 again, check 3); gcc
//! (check 5: "must be compilable with gcc", its messages are what a
//! participant reads; its object's static data beyond twice the memory
//! limit never fit); the linker's names (check 6, on the text); clang
//! for `wasm32` on the same text, once clang's
//! own preprocessing is shown to leave it as it is; the routines the
//! object needs and defines (check 6, on clang's object: what is linked
//! is what is checked); wasm-ld with the runtime (the memory limit,
//! requirement 5); the module's shape ([`wasm::check_module`]); the
//! engine's compile. A step that rejects sets its verdicts and stops the
//! pass; [`report::finish`] skips the checks not reached.
//!
//! A rejection is data ([`Outcome::Rejected`] with its diagnostics), never an
//! `Err`; `Err` means the server could not do its job (no jail, no gcc).
//! The trial game and authentication are not done here (see the `check`
//! command and the mail front end).

mod report;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::io;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use self::report::{add_gcc_messages, drop_description_noise, finish, FirstUses, Verdicts};
pub use self::report::{
    compiler_heading, is_tool_heading, verdict_words, Builder, CheckStatus, Outcome, Report,
    Verdict, MAX_DIAGNOSTICS_PER_CHECK,
};
use super::diagnostic::{Check, Diagnostic};
use super::gcc::{Gcc, GccRun, Input, PREPROCESSED_NAME, RUNTIME_C, SOURCE_NAME};
use super::lex;
use super::source;
use super::symbols::{self, Helpers, ObjectSymbols, LIBRARY_ROUTINES, LINKER_SYMBOLS};
use super::{purec, wasm};
use crate::sandbox::jail::{Jail, JailError, JailLimits};

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

/// Infrastructure faults of the compile service.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Jail(#[from] JailError),
    #[error("compile service i/o: {0}")]
    Io(#[from] io::Error),
    #[error("cannot read the object clang produced: {0}")]
    Object(String),
    #[error("the contest runtime does not compile: {0}")]
    Runtime(String),
}

/// gcc's object's static data above which the compile service refuses a
/// program before clang builds it (clang writes zero-initialised data out
/// as bytes: past about 16 MB it meets its limits). Below it, clang and
/// wasm-ld run and the report gives wasm-ld's exact figure.
const EARLY_GUARD_BYTES: u64 = 8 << 20;

/// Runs the checks on `source` and compiles it.
pub fn compile(source: &[u8], cfg: &CompileConfig) -> Result<Outcome, CompileError> {
    let mut pass = Pass::new(source, cfg);
    let module = pass.run(source)?;
    Ok(finish(pass.r, pass.verdicts, module))
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
}

impl<'a> Pass<'a> {
    fn new(source: &[u8], cfg: &'a CompileConfig) -> Pass<'a> {
        Pass {
            cfg,
            text: String::from_utf8_lossy(source).into_owned(),
            r: Report::empty(),
            verdicts: Verdicts::default(),
            written: HashSet::new(),
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
        let gcc = Gcc::new(&jail, self.cfg.jail);
        gcc.put(SOURCE_NAME, source)?;
        let Some(preprocessed) = self.preprocess(&gcc)? else {
            return Ok(None);
        };
        self.lexical_elements(&preprocessed);
        if !self.gcc(&gcc)? {
            return Ok(None);
        }
        self.written = lex::tokenize(&preprocessed)
            .into_iter()
            .filter(|t| matches!(t.kind, lex::TokenKind::Identifier))
            .map(|t| t.text.to_string())
            .collect();
        if !self.linker_names() {
            return Ok(None);
        }
        let tools = wasm::Toolchain::find()
            .ok_or_else(|| CompileError::Runtime(wasm::Toolchain::MISSING.into()))?;
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
        let pre = gcc.preprocess(SOURCE_NAME, PREPROCESSED_NAME)?;
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

    /// Check 3: the lexical elements of the preprocessed text.
    fn lexical_elements(&mut self, preprocessed: &str) {
        let (text, _) = purec::strip_line_markers(preprocessed);
        let n = lex::count_lexical_elements_with(&text, lex::LexOptions::GNU);
        self.r.lexical_elements = Some(n);
        let max = self.cfg.max_lexical_elements;
        let verdict = if self.cfg.profile != Profile::Local && n > max {
            self.r.diagnostics.push(Diagnostic::error(
                Check::LexicalElements,
                None,
                format!(
                    "the program has {n} lexical elements after preprocessing; at most {max} are allowed"
                ),
            ));
            Verdict::Failed
        } else {
            Verdict::Passed
        };
        self.verdicts.set(Check::LexicalElements, verdict);
    }

    /// Check 5: gcc compiles the preprocessed text (its messages are the
    /// report's; the object itself is not used).
    fn gcc(&mut self, gcc: &Gcc<'_>) -> Result<bool, CompileError> {
        let mut cc = gcc.compile(Input::Preprocessed, PREPROCESSED_NAME, "strategy.o")?;
        let cut_note = "more bytes of compiler messages cut";
        if !cc.ok && cc.limit_hit.is_none() && cc.messages.contains(cut_note) {
            // The errors drowned in warnings: ask again for the errors alone.
            let quiet = gcc.compile_quiet(Input::Preprocessed, PREPROCESSED_NAME, "strategy.o")?;
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
        drop_description_noise(&mut self.r);
        // A cheap guard before clang, which writes zero-initialised arrays
        // out as zeros (tens of megabytes of them cost it its limits):
        // x86-64's static data are at most twice wasm32's, so data beyond
        // twice the limit never fit. Below `EARLY_GUARD_BYTES` clang builds
        // the program and wasm-ld's exact figure is the one the report
        // gives (the guard's is only a lower bound).
        let limit = self.cfg.memory_limit;
        if let Some(x86) = super::gcc::static_data_bytes(&gcc.get("strategy.o")?) {
            if x86 > (2 * limit).max(EARLY_GUARD_BYTES) {
                let needed = x86 / 2 + wasm::SHADOW_STACK_BYTES;
                self.reject(memory_message(needed, limit, false));
                self.verdicts
                    .skip_rest("the program does not fit into memory (check 5)");
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Check 6 before clang: the program names none of the linker's own
    /// symbols (clang would fail on some, wasm-ld on others), nor a
    /// WebAssembly builtin (`__builtin_wasm_memory_grow`: the memory is
    /// fixed; any of them: gcc does not know it, so the two compilers
    /// would build different programs).
    fn linker_names(&mut self) -> bool {
        let uses = FirstUses::new(&self.text, self.r.description.as_ref());
        let mut ok = true;
        for name in LINKER_SYMBOLS {
            if self.written.contains(name) {
                ok = false;
                self.r.diagnostics.push(Diagnostic::error(
                    Check::Library,
                    uses.line(name),
                    format!(
                        "uses `{name}`, a name the linker gives to its own symbols (the stack \
                         pointer, the table of function pointers); a strategy may not use it: \
                         rename it"
                    ),
                ));
            }
        }
        let mut builtins: Vec<&String> = self
            .written
            .iter()
            .filter(|n| n.starts_with("__builtin_wasm_"))
            .collect();
        builtins.sort();
        for name in builtins {
            ok = false;
            let message = if name.starts_with("__builtin_wasm_memory_") {
                format!(
                    "uses `{name}`: the memory of a strategy is fixed at {} kB (its static \
                     data and {} kB of stack, requirement 5); it can neither grow nor be asked \
                     for its size: remove it and use static arrays of a fixed size",
                    self.cfg.memory_limit / 1024,
                    wasm::SHADOW_STACK_BYTES / 1024
                )
            } else {
                format!(
                    "uses `{name}`, a builtin of WebAssembly that only clang knows (for gcc it \
                     is an unknown function: every compiler must see the same program); write \
                     it in C"
                )
            };
            self.r
                .diagnostics
                .push(Diagnostic::error(Check::Library, uses.line(name), message));
        }
        if !ok {
            self.verdicts.set(Check::Library, Verdict::Failed);
        }
        ok
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
        let again = tools.preprocess_again(gcc, PREPROCESSED_NAME, "strategy.clang.i")?;
        if !again.ok {
            self.clang_failed(&again);
            return Ok(None);
        }
        let again = String::from_utf8_lossy(&gcc.get("strategy.clang.i")?).into_owned();
        if let Some((line, token)) = wasm::preprocessing_difference(preprocessed, &again) {
            self.r.diagnostics.push(Diagnostic::error(
                Check::Compiler,
                (line > 0).then_some(line),
                format!(
                    "`{token}` means something to clang, the compiler that builds the program \
                     that plays, that it does not mean to gcc (a name clang knows as a macro, or \
                     a directive a macro made): every compiler must see the same program; \
                     rename it or write it out"
                ),
            ));
            self.builder_failed(Builder::Clang);
            return Ok(None);
        }
        let cc = tools.compile(
            gcc,
            Input::Preprocessed,
            PREPROCESSED_NAME,
            "strategy.wasm.o",
        )?;
        if !cc.ok {
            let size_limit = cc.limit_hit.as_deref().is_some_and(|l| {
                l.contains("output grew beyond") || l.contains("MB of memory and was stopped")
            });
            if size_limit && !self.r.errors().any(|d| d.check == Check::Compiler) {
                // Static arrays clang writes out as zeros.
                self.reject(format!(
                    "the program does not fit into the memory limit of {} kB (requirement 5): \
                     its static data are so large that building it stopped at the compiler's \
                     limits; make static arrays smaller",
                    self.cfg.memory_limit / 1024
                ));
                self.compiler_failed();
                return Ok(None);
            }
            self.clang_failed(&cc);
            return Ok(None);
        }
        Ok(Some(gcc.get("strategy.wasm.o")?))
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
        for d in &mut self.r.diagnostics[before..] {
            if !d.message.starts_with("clang") {
                d.message = format!("clang (which builds the program that plays): {}", d.message);
            }
        }
        self.builder_failed(Builder::Clang);
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
        let found = library_problems(
            &syms,
            &*runtime_symbols()?,
            &*compiler_helpers()?,
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
        let uses = FirstUses::new(&self.text, self.r.description.as_ref());
        let mut ok = true;
        for frame in wasm::stack_frames(object) {
            if frame.bytes <= stack {
                continue;
            }
            ok = false;
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
        if !ok {
            self.verdicts.set(Check::Compiler, Verdict::Failed);
        }
        ok
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
        let ld = tools.link(gcc, &objects, "strategy.wasm", limit)?;
        let problems = wasm::link_problems(&ld.messages);
        let uses = FirstUses::new(&self.text, self.r.description.as_ref());
        let mut calls = Vec::new();
        let mut needed = None;
        for p in &problems {
            match p {
                wasm::LinkProblem::Memory { needed_bytes } => needed = Some(*needed_bytes),
                wasm::LinkProblem::Undefined { symbol } => calls.push(Diagnostic::error(
                    Check::Library,
                    uses.line(symbol),
                    format!(
                        "uses `{symbol}`, which nothing defines: it is not one of the five \
                         library routines ({}) nor a function of the program's own",
                        LIBRARY_ROUTINES.join(", ")
                    ),
                )),
                wasm::LinkProblem::Duplicate { symbol } => calls.push(Diagnostic::error(
                    Check::Library,
                    uses.line(symbol),
                    format!(
                        "defines `{symbol}`, which the contest runtime defines too; rename it \
                         (or make it static)"
                    ),
                )),
                wasm::LinkProblem::TypeMismatch { symbol } => calls.push(Diagnostic::error(
                    Check::Library,
                    uses.line(symbol),
                    format!(
                        "uses `{symbol}` as another kind of thing (a variable for a function, \
                         or the reverse) than the contest runtime or the linker defines by that \
                         name; rename it"
                    ),
                )),
                wasm::LinkProblem::Signature { function } => calls.push(Diagnostic::error(
                    Check::Library,
                    uses.line(function),
                    format!(
                        "calls `{function}` with other arguments than it takes (see \
                         knobellib.h for the five routines; a function of your own must be \
                         called as it is defined)"
                    ),
                )),
            }
        }
        if let Some(needed) = needed {
            self.r.image_bytes = Some(needed);
            self.reject(memory_message(needed, limit, true));
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

/// Check 6's findings in the symbols of a strategy's object, each at the
/// first line that names the symbol. `runtime`: the symbols of the
/// runtime's object it is linked with; the strategy may define none of the
/// names that object defines or needs (its undefined names are the
/// referee's imports: a definition of one would replace the import).
/// `written`: the identifiers of the preprocessed text; a compiler helper
/// is the compiler's call only when the program does not name it, and no
/// program defines one. `helpers`: the names the builtins archive defines.
fn library_problems(
    syms: &ObjectSymbols,
    runtime: &ObjectSymbols,
    helpers: &Helpers,
    written: &HashSet<String>,
    uses: &FirstUses<'_>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut error = |name: Option<&str>, message: String| {
        out.push(Diagnostic::error(
            Check::Library,
            name.and_then(|n| uses.line(n)),
            message,
        ))
    };
    for name in syms.forbidden_calls(helpers) {
        if name.starts_with("__atomic_") || name.starts_with("__sync_") {
            error(
                Some(name),
                format!(
                    "uses `{name}`: _Atomic objects of this size need library routines; remove \
                     _Atomic (a strategy runs in one thread)"
                ),
            );
            continue;
        }
        error(
            Some(name),
            format!(
                "uses `{name}`, which is not one of the five library routines ({}); \
                 a strategy may call nothing else",
                LIBRARY_ROUTINES.join(", ")
            ),
        );
    }
    for name in syms.defined.iter().filter(|d| helpers.contains(d)) {
        error(
            Some(name),
            format!(
                "defines `{name}`, the name of a routine of the compiler's own library (the \
                 compiler calls it by itself for arithmetic C has no instruction for, and a \
                 strategy may not replace it): rename your function or variable"
            ),
        );
    }
    for name in &syms.undefined {
        if helpers.contains(name) && written.contains(name) {
            error(
                Some(name),
                format!(
                    "calls `{name}` by name, a routine of the compiler's own library (the \
                     compiler may call it by itself for arithmetic; a strategy may not): write \
                     the arithmetic in C"
                ),
            );
        }
    }
    if syms.defined_data.iter().any(|d| d == "main") {
        error(
            Some("main"),
            "`main` must be a function: the program defines a variable called main; the \
             runtime calls main() to start the strategy"
                .into(),
        );
    } else if !syms.defines("main") {
        error(
            None,
            "the program defines no function `main`; the runtime calls main() to start the \
             strategy"
                .into(),
        );
    }
    const ENTRY: [&str; 4] = ["_start", "knobeln_setup", "knobeln_main", "knobeln_start"];
    for name in ENTRY {
        if syms.defines(name) {
            error(
                Some(name),
                format!("defines `{name}`; the contest runtime provides the program's entry point"),
            );
        }
    }
    let theirs = |name: &&String| name.as_str() != "main" && !ENTRY.contains(&name.as_str());
    for name in runtime.defined.iter().filter(theirs) {
        if syms.defines(name) {
            error(
                Some(name),
                format!(
                    "defines its own `{name}`, which the contest runtime provides; rename it \
                     (or make it static)"
                ),
            );
        }
    }
    for name in runtime.undefined.iter().filter(theirs) {
        if syms.defines(name) {
            error(
                Some(name),
                format!(
                    "defines `{name}`, the contest runtime's name for a function of the \
                     referee; a strategy may not replace it: rename it (or make it static)"
                ),
            );
        }
    }
    if syms.constructors {
        error(
            None,
            "the program has constructors (__attribute__((constructor)) or similar); \
             no code may run before main()"
                .into(),
        );
    }
    out
}

/// What failed when clang crashed (LLVM's "PLEASE submit a bug report",
/// a stack dump, an error in its back end), in a few words; `None`: no crash.
fn llvm_crash(messages: &str) -> Option<String> {
    let crashed = [
        "PLEASE submit a bug report",
        "Stack dump:",
        "error in backend",
    ]
    .iter()
    .any(|m| messages.contains(m));
    if !crashed {
        return None;
    }
    let why = messages
        .lines()
        .find_map(|l| l.split("error in backend: ").nth(1))
        .map(|w| w.trim().chars().take(120).collect::<String>())
        .filter(|w| !w.contains('/'))
        .unwrap_or_else(|| "the compiler crashed".into());
    Some(why)
}

/// The participant's words for a program whose static data and stack do
/// not fit into its memory (wasm-ld said it needs `needed` bytes).
/// `exact`: wasm-ld's figure; otherwise a lower bound (from gcc's object).
fn memory_message(needed: u64, limit: u64, exact: bool) -> String {
    let stack = wasm::SHADOW_STACK_BYTES;
    let (about, are) = if exact {
        ("about", "are")
    } else {
        ("at least", "are at least")
    };
    format!(
        "the program does not fit into the memory limit of {} kB (requirement 5): it needs \
         {about} {} kB (its static data {are} {} kB, and it has {} kB of stack for its own \
         use); make static arrays smaller by at least {} kB",
        limit / 1024,
        needed.div_ceil(1024),
        needed.saturating_sub(stack).div_ceil(1024),
        stack / 1024,
        needed.saturating_sub(limit).div_ceil(1024)
    )
}

/// The symbols of [`runtime_wasm_object`], read once per process.
fn runtime_symbols() -> Result<Arc<ObjectSymbols>, CompileError> {
    static SYMBOLS: OnceLock<Result<Arc<ObjectSymbols>, String>> = OnceLock::new();
    SYMBOLS
        .get_or_init(|| {
            let object = runtime_wasm_object().map_err(|e| e.to_string())?;
            symbols::inspect_object(&object).map(Arc::new)
        })
        .clone()
        .map_err(CompileError::Runtime)
}

/// The compiler's helper routines: the names the builtins archive that
/// wasm-ld links defines ([`wasm::Toolchain::builtins`]), read from its
/// symbol map once per process.
pub fn compiler_helpers() -> Result<Arc<Helpers>, CompileError> {
    static HELPERS: OnceLock<Result<Arc<Helpers>, String>> = OnceLock::new();
    HELPERS
        .get_or_init(|| {
            let tools = wasm::Toolchain::find().ok_or(wasm::Toolchain::MISSING)?;
            let archive = std::fs::read(&tools.builtins)
                .map_err(|e| format!("{}: {e}", tools.builtins.display()))?;
            symbols::archive_symbols(&archive).map(Arc::new)
        })
        .clone()
        .map_err(CompileError::Runtime)
}

/// The contest runtime compiled by clang for wasm32 (in the jail, with
/// the strategies' flags), once per process: every module links the same
/// bytes.
pub fn runtime_wasm_object() -> Result<Arc<Vec<u8>>, CompileError> {
    static OBJECT: OnceLock<Result<Arc<Vec<u8>>, String>> = OnceLock::new();
    OBJECT
        .get_or_init(|| {
            let tools = wasm::Toolchain::find().ok_or(wasm::Toolchain::MISSING)?;
            build_runtime(|gcc, out| tools.compile(gcc, Input::Source, "knobellib.c", out))
        })
        .clone()
        .map_err(CompileError::Runtime)
}

/// Compiles `knobellib.c` in a jail of its own with `compile`; the object.
fn build_runtime(
    compile: impl FnOnce(&Gcc<'_>, &str) -> Result<GccRun, JailError>,
) -> Result<Arc<Vec<u8>>, String> {
    let jail = Jail::new().map_err(|e| e.to_string())?;
    let gcc = Gcc::new(&jail, JailLimits::default());
    gcc.put("knobellib.c", RUNTIME_C.as_bytes())
        .map_err(|e| e.to_string())?;
    let rt = compile(&gcc, "knobellib.o").map_err(|e| e.to_string())?;
    if !rt.ok {
        return Err(rt.messages);
    }
    gcc.get("knobellib.o")
        .map(Arc::new)
        .map_err(|e| e.to_string())
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
