//! The compile service's pipeline: runs the six checks of the announcement
//! in order on a submitted source and, if all pass, returns the strategy
//! binary.
//!
//! A rejection is data ([`Outcome::Rejected`] with its diagnostics), never an
//! `Err`; `Err` means the server could not do its job (no jail, no gcc).
//! The trial game and authentication are not done here (see the `check`
//! command and, later, the mail front end).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use regex::Regex;
use serde::Serialize;

use super::diagnostic::{Check, Diagnostic, Severity};
use super::gcc::{Gcc, GccRun, Input, PREPROCESSED_NAME, RUNTIME_C, SOURCE_NAME};
use super::lex;
use super::source::{self, Description, Header};
use super::symbols::{self, LIBRARY_ROUTINES};
use super::{elf, purec, wasm};
use crate::sandbox::exe::Executable;
use crate::sandbox::jail::{Jail, JailError, JailLimits};
use crate::sandbox::player::{
    describe_status, PlayerLimits, PlayerProcess, SpawnError, Start, StatusKind, PROBE_OK,
    PROBE_STACK_BYTES,
};

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

/// What the compile service builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// A WebAssembly module (what every contest path plays).
    #[default]
    Wasm,
    /// A native x86-64 program for the process runner, which only the
    /// benchmark plays (to compare with the WebAssembly engine).
    Native,
}

/// Settings of the compile service.
#[derive(Debug, Clone)]
pub struct CompileConfig {
    pub profile: Profile,
    pub target: Target,
    pub jail: JailLimits,
    /// The most preprocessed text the server reads (checks 2 and 3 run on
    /// it outside the jail, in memory linear in it): far above what 10,000
    /// lexical elements make, far below what a page of macros can.
    pub max_preprocessed_bytes: u64,
    /// Requirement 4: at most this many lexical elements after preprocessing.
    pub max_lexical_elements: u64,
    /// Requirement 7: at least this many non-blank description lines.
    pub min_description_lines: u32,
    /// Requirement 5: the process must fit into this many bytes.
    pub memory_limit: u64,
    /// Sources larger than this are refused before anything else.
    pub max_source_bytes: usize,
}

impl Default for CompileConfig {
    fn default() -> Self {
        CompileConfig {
            profile: Profile::Submission,
            target: Target::Wasm,
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

/// At most this many diagnostics of one check are listed in a report; the
/// rest are counted in one line.
pub const MAX_DIAGNOSTICS_PER_CHECK: usize = 30;

/// The verdict of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "why")]
pub enum Verdict {
    Passed,
    Failed,
    /// Not run, because an earlier check failed (the reason says which).
    Skipped(String),
    /// Does not apply to this profile.
    NotApplicable,
}

/// One line of the report: a check and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckStatus {
    pub check: Check,
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// Everything the compile service found out about a source.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub checks: Vec<CheckStatus>,
    pub lexical_elements: Option<u64>,
    pub header: Option<Header>,
    #[serde(skip)]
    pub description: Option<Description>,
    /// Errors and warnings, in check order.
    pub diagnostics: Vec<Diagnostic>,
    /// gcc's messages as it printed them (capped).
    pub compiler_output: String,
    /// Memory mapped by the program image (code, data, bss), when linked.
    pub image_bytes: Option<u64>,
}

impl Report {
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
    }

    pub fn verdict(&self, check: Check) -> Option<&Verdict> {
        self.checks
            .iter()
            .find(|c| c.check == check)
            .map(|c| &c.verdict)
    }
}

/// The result of compiling a submission.
#[derive(Debug, Clone)]
pub enum Outcome {
    Accepted { binary: Vec<u8>, report: Report },
    Rejected { report: Report },
}

impl Outcome {
    pub fn report(&self) -> &Report {
        match self {
            Outcome::Accepted { report, .. } | Outcome::Rejected { report } => report,
        }
    }

    pub fn accepted(&self) -> bool {
        matches!(self, Outcome::Accepted { .. })
    }
}

/// Infrastructure faults of the compile service.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Jail(#[from] JailError),
    #[error("compile service i/o: {0}")]
    Io(#[from] io::Error),
    #[error("cannot read the object file gcc produced: {0}")]
    Object(#[from] object::Error),
    #[error("the contest runtime does not compile: {0}")]
    Runtime(String),
    #[error("cannot start the program for its start-up probe: {0}")]
    Probe(String),
}

/// Runs the checks on `source` and compiles it.
pub fn compile(source: &[u8], cfg: &CompileConfig) -> Result<Outcome, CompileError> {
    let text = String::from_utf8_lossy(source);
    let submission = cfg.profile != Profile::Local;
    let needs_header = cfg.profile == Profile::Submission;
    let mut r = Report {
        checks: Vec::new(),
        lexical_elements: None,
        header: None,
        description: None,
        diagnostics: Vec::new(),
        compiler_output: String::new(),
        image_bytes: None,
    };
    let mut verdicts: Vec<(Check, Verdict)> = Vec::new();

    if source.len() > cfg.max_source_bytes {
        r.diagnostics.push(Diagnostic::error(
            Check::SingleFile,
            None,
            format!(
                "the source is {} bytes long; at most {} bytes are accepted",
                source.len(),
                cfg.max_source_bytes
            ),
        ));
        for c in Check::ALL {
            let v = if c == Check::SingleFile {
                Verdict::Failed
            } else {
                Verdict::Skipped("the source is too large".into())
            };
            verdicts.push((c, v));
        }
        return Ok(finish(r, verdicts, None));
    }

    // 1. Header.
    if needs_header {
        match source::parse_header(&text) {
            Ok(h) => {
                r.header = Some(h);
                verdicts.push((Check::Header, Verdict::Passed));
            }
            Err(d) => {
                r.diagnostics.push(d);
                verdicts.push((Check::Header, Verdict::Failed));
            }
        }
    } else {
        verdicts.push((Check::Header, Verdict::NotApplicable));
    }

    // 2. Single file.
    let single = source::check_single_file(&text);
    let single_ok = single.is_empty();
    r.diagnostics.extend(single);
    verdicts.push((
        Check::SingleFile,
        if single_ok {
            Verdict::Passed
        } else {
            Verdict::Failed
        },
    ));

    // 4 (pure, so always run): description.
    let description_verdict = if submission {
        match source::check_description(&text, cfg.min_description_lines) {
            Ok((d, warning)) => {
                r.description = Some(d);
                r.diagnostics.extend(warning);
                Verdict::Passed
            }
            Err(d) => {
                r.diagnostics.push(d);
                Verdict::Failed
            }
        }
    } else {
        r.description = source::find_description(&text);
        Verdict::NotApplicable
    };

    if !single_ok {
        skip_after_check_2(
            &mut verdicts,
            description_verdict,
            "the source must first be a single file (check 2)",
        );
        return Ok(finish(r, verdicts, None));
    }

    let jail = Jail::new()?;
    let gcc = Gcc::new(&jail, cfg.jail);
    gcc.put(SOURCE_NAME, source)?;

    // 3. Lexical elements after preprocessing.
    // One text: everything below checks, counts and compiles the
    // preprocessed text, never the source again.
    let pre = gcc.preprocess(SOURCE_NAME, PREPROCESSED_NAME)?;
    let mut lex_verdict = Verdict::Passed;
    if !pre.ok {
        add_gcc_messages(&mut r, &pre, Check::Compiler);
        lex_verdict = Verdict::Skipped("the preprocessor failed (see check 5)".into());
    } else if gcc.size(PREPROCESSED_NAME)? > cfg.max_preprocessed_bytes {
        // Not read at all: a few lines of macros can make megabytes.
        r.diagnostics.push(Diagnostic::error(
            Check::LexicalElements,
            None,
            format!(
                "after preprocessing the program is {} bytes long, more than {} \
                 lexical elements could make (at most {} bytes are read): \
                 write it out instead of letting macros multiply it",
                gcc.size(PREPROCESSED_NAME)?,
                cfg.max_lexical_elements,
                cfg.max_preprocessed_bytes
            ),
        ));
        verdicts.push((Check::LexicalElements, Verdict::Failed));
        verdicts.push((Check::Description, description_verdict));
        verdicts.push((
            Check::Compiler,
            Verdict::Skipped("the program is too long after preprocessing (check 3)".into()),
        ));
        verdicts.push((
            Check::Library,
            Verdict::Skipped("the program is too long after preprocessing (check 3)".into()),
        ));
        return Ok(finish(r, verdicts, None));
    }
    let mut pre_raw = String::new();
    if pre.ok {
        // gcc -E's warnings (the compile of the text below cannot repeat them).
        add_gcc_messages(&mut r, &pre, Check::Compiler);
        pre_raw = String::from_utf8_lossy(&gcc.get(PREPROCESSED_NAME)?).into_owned();
        // Check 2 again, on what the macros made of the source.
        let expanded = purec::check_preprocessed(&pre_raw);
        if !expanded.is_empty() {
            r.diagnostics.extend(expanded);
            set_verdict(&mut verdicts, Check::SingleFile, Verdict::Failed);
            skip_after_check_2(
                &mut verdicts,
                description_verdict,
                "the source must first be pure C (check 2)",
            );
            return Ok(finish(r, verdicts, None));
        }
        let (pre_text, _) = purec::strip_line_markers(&pre_raw);
        let n = lex::count_lexical_elements_with(&pre_text, lex::LexOptions::GNU);
        r.lexical_elements = Some(n);
        if submission && n > cfg.max_lexical_elements {
            r.diagnostics.push(Diagnostic::error(
                Check::LexicalElements,
                None,
                format!(
                    "the program has {n} lexical elements after preprocessing; at most {} are allowed",
                    cfg.max_lexical_elements
                ),
            ));
            lex_verdict = Verdict::Failed;
        }
    }
    verdicts.push((Check::LexicalElements, lex_verdict));
    verdicts.push((Check::Description, description_verdict));
    if !pre.ok {
        verdicts.push((Check::Compiler, Verdict::Failed));
        verdicts.push((
            Check::Library,
            Verdict::Skipped("gcc failed (check 5)".into()),
        ));
        return Ok(finish(r, verdicts, None));
    }

    // 5. gcc.
    let mut cc = gcc.compile(Input::Preprocessed, PREPROCESSED_NAME, "strategy.o")?;
    if !cc.ok
        && cc.limit_hit.is_none()
        && cc.messages.contains("more bytes of compiler messages cut")
    {
        // The errors drowned in warnings: ask again for the errors alone.
        let quiet = gcc.compile_quiet(Input::Preprocessed, PREPROCESSED_NAME, "strategy.o")?;
        let cut = cc
            .messages
            .lines()
            .rev()
            .find(|l| l.contains("more bytes of compiler messages cut"))
            .unwrap_or("")
            .to_string();
        cc.messages = format!(
            "{}\n{cut}\n[gcc printed too many warnings; here are its errors alone:]\n{}",
            cc.messages.lines().take(20).collect::<Vec<_>>().join("\n"),
            quiet.messages
        );
    }
    add_gcc_messages(&mut r, &cc, Check::Compiler);
    if !cc.ok {
        verdicts.push((Check::Compiler, Verdict::Failed));
        verdicts.push((
            Check::Library,
            Verdict::Skipped("gcc failed (check 5)".into()),
        ));
        return Ok(finish(r, verdicts, None));
    }
    verdicts.push((Check::Compiler, Verdict::Passed));

    drop_description_noise(&mut r);

    // 6. Library routines.
    let syms = symbols::inspect_object(&gcc.get("strategy.o")?)?;
    let before = r.diagnostics.len();
    let uses = FirstUses::new(&text, r.description.as_ref());
    for name in syms.forbidden_calls() {
        r.diagnostics.push(Diagnostic::error(
            Check::Library,
            uses.line(name),
            format!(
                "uses `{name}`, which is not one of the five library routines ({}); \
                 a strategy may call nothing else",
                LIBRARY_ROUTINES.join(", ")
            ),
        ));
    }
    if !syms.defines("main") {
        r.diagnostics.push(Diagnostic::error(
            Check::Library,
            None,
            "the program defines no function `main`; the runtime calls main() to start the strategy",
        ));
    }
    for name in ["_start", "knobeln_setup", "knobeln_main"] {
        if syms.defines(name) {
            r.diagnostics.push(Diagnostic::error(
                Check::Library,
                uses.line(name),
                format!("defines `{name}`; the contest runtime provides the program's entry point"),
            ));
        }
    }
    for name in LIBRARY_ROUTINES
        .iter()
        .chain(symbols::COMPILER_ROUTINES.iter())
    {
        if syms.defines(name) {
            r.diagnostics.push(Diagnostic::error(
                Check::Library,
                uses.line(name),
                format!(
                    "defines its own `{name}`, which the contest runtime provides; rename it \
                     (or make it static)"
                ),
            ));
        }
    }
    if syms.constructors {
        r.diagnostics.push(Diagnostic::error(
            Check::Library,
            None,
            "the program has constructors (__attribute__((constructor)) or similar); \
             no code may run before main()",
        ));
    }
    if r.diagnostics.len() > before {
        verdicts.push((Check::Library, Verdict::Failed));
        return Ok(finish(r, verdicts, None));
    }

    if r.errors().next().is_some() {
        // Rejected already (too many lexical elements, a description
        // missing): nothing is built.
        verdicts.push((Check::Library, Verdict::Passed));
        return Ok(finish(r, verdicts, None));
    }
    match cfg.target {
        Target::Wasm => build_wasm(&gcc, r, verdicts, cfg, &text, &pre_raw),
        Target::Native => link_native(&gcc, r, verdicts, cfg),
    }
}

/// Checks 1 to 6 passed: the program that plays is the same preprocessed
/// text (`preprocessed`, which the checks read and gcc compiled) compiled
/// by clang for wasm32 and linked with the runtime, if clang's own
/// preprocessing leaves that text as it is, clang's object imports and
/// runs nothing a strategy may not, and the module has the contest's
/// shape. A problem here is the Compiler check's (5).
fn build_wasm(
    gcc: &Gcc<'_>,
    mut r: Report,
    mut verdicts: Vec<(Check, Verdict)>,
    cfg: &CompileConfig,
    text: &str,
    preprocessed: &str,
) -> Result<Outcome, CompileError> {
    verdicts.push((Check::Library, Verdict::Passed));
    let tools = wasm::Toolchain::find()
        .ok_or_else(|| CompileError::Runtime(wasm::Toolchain::MISSING.into()))?;
    let reject = |r: &mut Report, verdicts: &mut Vec<(Check, Verdict)>, message: String| {
        r.diagnostics
            .push(Diagnostic::error(Check::Compiler, None, message));
        set_verdict(verdicts, Check::Compiler, Verdict::Failed);
    };
    let clang_failed = |mut r: Report, mut verdicts: Vec<(Check, Verdict)>, run: &GccRun| {
        let before = r.diagnostics.len();
        add_gcc_messages(&mut r, run, Check::Compiler);
        for d in &mut r.diagnostics[before..] {
            d.message = format!("clang (which builds the program that plays): {}", d.message);
        }
        set_verdict(&mut verdicts, Check::Compiler, Verdict::Failed);
        finish(r, verdicts, None)
    };
    // clang runs its preprocessor over any input: it must find nothing to do.
    let again = tools.preprocess_again(gcc, PREPROCESSED_NAME, "strategy.clang.i")?;
    if !again.ok {
        return Ok(clang_failed(r, verdicts, &again));
    }
    let again = String::from_utf8_lossy(&gcc.get("strategy.clang.i")?).into_owned();
    if let Some((line, token)) = wasm::preprocessing_difference(preprocessed, &again) {
        r.diagnostics.push(Diagnostic::error(
            Check::Compiler,
            (line > 0).then_some(line),
            format!(
                "`{token}` means something to clang, the compiler that builds the program that \
                 plays, that it does not mean to gcc (a name clang knows as a macro, or a \
                 directive a macro made): every compiler must see the same program; rename it \
                 or write it out"
            ),
        ));
        set_verdict(&mut verdicts, Check::Compiler, Verdict::Failed);
        return Ok(finish(r, verdicts, None));
    }
    let cc = tools.compile(
        gcc,
        Input::Preprocessed,
        PREPROCESSED_NAME,
        "strategy.wasm.o",
    )?;
    if !cc.ok {
        return Ok(clang_failed(r, verdicts, &cc));
    }
    let object_problems = wasm::check_object(&gcc.get("strategy.wasm.o")?);
    if !object_problems.is_empty() {
        for p in object_problems {
            reject(&mut r, &mut verdicts, format!("the program {p}"));
        }
        return Ok(finish(r, verdicts, None));
    }
    gcc.put("knobellib.wasm.o", &runtime_wasm_object()?)?;
    let ld = tools.link(
        gcc,
        &["strategy.wasm.o", "knobellib.wasm.o"],
        "strategy.wasm",
        cfg.memory_limit,
    )?;
    let problems = wasm::link_problems(&ld.messages);
    let uses = FirstUses::new(text, r.description.as_ref());
    for p in &problems {
        match p {
            wasm::LinkProblem::Memory { needed_bytes } => {
                let data = needed_bytes.saturating_sub(wasm::SHADOW_STACK_BYTES);
                r.image_bytes = Some(data);
                reject(
                    &mut r,
                    &mut verdicts,
                    memory_message(data, Some(*needed_bytes), cfg.memory_limit),
                );
            }
            wasm::LinkProblem::Signature { function } => {
                r.diagnostics.push(Diagnostic::error(
                    Check::Library,
                    uses.line(function),
                    format!(
                        "calls `{function}` with other arguments than it takes (see \
                         knobellib.h for the five routines; a function of your own must be \
                         called as it is defined)"
                    ),
                ));
                set_verdict(&mut verdicts, Check::Library, Verdict::Failed);
            }
        }
    }
    if !problems.is_empty() {
        return Ok(finish(r, verdicts, None));
    }
    if !ld.ok {
        add_gcc_messages(&mut r, &ld, Check::Compiler);
        if !r.errors().any(|d| d.check == Check::Compiler) {
            reject(
                &mut r,
                &mut verdicts,
                "linking with the contest runtime (wasm-ld) failed; its messages are quoted below"
                    .into(),
            );
        }
        set_verdict(&mut verdicts, Check::Compiler, Verdict::Failed);
        return Ok(finish(r, verdicts, None));
    }
    let module = gcc.get("strategy.wasm")?;
    // The wall: the module's shape, then the engine compiles it.
    match wasm::check_module(&module, cfg.memory_limit) {
        Ok(shape) => r.image_bytes = Some(shape.memory_bytes),
        Err(problems) => {
            for p in problems {
                reject(&mut r, &mut verdicts, format!("the program {p}"));
            }
            return Ok(finish(r, verdicts, None));
        }
    }
    match crate::wasm::load(&module).map_err(|e| CompileError::Runtime(e.to_string()))? {
        Ok(_) => Ok(finish(r, verdicts, Some(module))),
        Err(e) => {
            reject(
                &mut r,
                &mut verdicts,
                format!("the program does not compile for the referee: {e}"),
            );
            Ok(finish(r, verdicts, None))
        }
    }
}

/// The native program of the process runner (`bench` compares it with the
/// WebAssembly engine; no contest path plays it): linked with the runtime
/// by gcc, checked for the shape of plain C, and started under the real
/// limits.
fn link_native(
    gcc: &Gcc<'_>,
    mut r: Report,
    mut verdicts: Vec<(Check, Verdict)>,
    cfg: &CompileConfig,
) -> Result<Outcome, CompileError> {
    // Link with the runtime (compiled once per process).
    gcc.put("knobellib.o", &runtime_object()?)?;
    let ld = gcc.link(&["strategy.o", "knobellib.o"], "strategy")?;
    if !ld.ok {
        add_gcc_messages(&mut r, &ld, Check::Compiler);
        if !r.errors().any(|d| d.check == Check::Compiler) {
            r.diagnostics.push(Diagnostic::error(
                Check::Compiler,
                None,
                "linking with the contest runtime failed",
            ));
        }
        set_verdict(&mut verdicts, Check::Compiler, Verdict::Failed);
        verdicts.push((
            Check::Library,
            Verdict::Skipped("linking failed (check 5)".into()),
        ));
        return Ok(finish(r, verdicts, None));
    }
    let binary = gcc.get("strategy")?;
    r.image_bytes = Some(symbols::image_size(&binary)?);
    // The second wall: the program must be what plain C and the runtime make.
    let problems = elf::check_program(&binary);
    if !problems.is_empty() {
        for p in problems {
            r.diagnostics
                .push(Diagnostic::error(Check::Compiler, None, p));
        }
        set_verdict(&mut verdicts, Check::Compiler, Verdict::Failed);
        verdicts.push((Check::Library, Verdict::Passed));
        return Ok(finish(r, verdicts, None));
    }
    // Requirement 5, measured: the program must start under the real limits.
    let exe = Executable::from_bytes("knobeln-probe", &binary)?;
    if let Some(needed) = probe_fits(&exe, cfg.memory_limit)? {
        r.diagnostics.push(Diagnostic::error(
            Check::Compiler,
            None,
            memory_message(r.image_bytes.unwrap_or(0), needed, cfg.memory_limit),
        ));
        set_verdict(&mut verdicts, Check::Compiler, Verdict::Failed);
        verdicts.push((Check::Library, Verdict::Passed));
        return Ok(finish(r, verdicts, None));
    }
    verdicts.push((Check::Library, Verdict::Passed));
    Ok(finish(r, verdicts, Some(binary)))
}

/// The participant's words for a program that does not start in its memory.
fn memory_message(image: u64, needed: Option<u64>, limit: u64) -> String {
    let need = match needed {
        Some(n) => format!(
            "it needs about {} kB to start (its code and static data are {} kB; the stack and \
             the system's own mappings need the rest)",
            n.div_ceil(1024),
            image.div_ceil(1024)
        ),
        None => format!(
            "it does not start even with much more memory (its code and static data are {} kB)",
            image.div_ceil(1024)
        ),
    };
    let over = needed.map_or(String::new(), |n| {
        format!(" by at least {} kB", n.saturating_sub(limit).div_ceil(1024))
    });
    format!(
        "the program does not fit into the memory limit of {} kB (requirement 5): {need}, \
         with {} kB of stack for its own use; make static arrays smaller{over}",
        limit / 1024,
        PROBE_STACK_BYTES / 1024
    )
}

/// Starts the program's runtime under `memory_limit` (and nothing of the
/// participant's code): `None` when it starts and has its stack, otherwise
/// `Some(the memory it needs)` (found by trying larger limits; `None` inside
/// when even 64 MB are not enough).
fn probe_fits(exe: &Executable, memory_limit: u64) -> Result<Option<Option<u64>>, CompileError> {
    if probe_once(exe, memory_limit)? {
        return Ok(None);
    }
    // How much would it need? Binary search in pages up to 64 MB.
    let page = 4096u64;
    let (mut lo, mut hi) = (memory_limit / page, (64u64 << 20) / page);
    if !probe_once(exe, hi * page)? {
        return Ok(Some(None));
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if probe_once(exe, mid * page)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Some(Some(hi * page)))
}

fn probe_once(exe: &Executable, memory_bytes: u64) -> Result<bool, CompileError> {
    let limits = PlayerLimits {
        cpu_secs: 1,
        memory_bytes,
    };
    let mut p = match PlayerProcess::spawn(exe, Start::Probe, &limits) {
        Ok(p) => p,
        Err(SpawnError::Memory { .. }) => return Ok(false),
        Err(e) => return Err(CompileError::Probe(e.to_string())),
    };
    let status = p
        .status_within(Duration::from_secs(2))
        .map_err(|e| CompileError::Probe(e.to_string()))?;
    match status.map(|s| describe_status(&s)) {
        Some(StatusKind::Exited(PROBE_OK)) => Ok(true),
        // Out of memory at exec, or the stack cannot grow: SIGSEGV/SIGKILL.
        Some(StatusKind::Signaled(_)) => Ok(false),
        other => Err(CompileError::Probe(format!(
            "the runtime's start-up ended unexpectedly ({other:?})"
        ))),
    }
}

/// gcc warns about apostrophes ("don't") in the skipped `#if 0` description
/// block; that is prose, not code, so those warnings are not passed on.
fn drop_description_noise(r: &mut Report) {
    let Some(d) = &r.description else { return };
    let first = d.first_line;
    let last = first + d.text.lines().count() as u32;
    let noisy = |line: u32, msg: &str| {
        (first..=last).contains(&line) && msg.starts_with("missing terminating")
    };
    r.diagnostics.retain(|x| {
        !(x.check == Check::Compiler
            && x.severity == Severity::Warning
            && x.line.is_some_and(|l| noisy(l, &x.message)))
    });
    let kept: Vec<&str> = r
        .compiler_output
        .lines()
        .filter(|l| {
            let mut parts = l.splitn(4, ':');
            let (Some(file), Some(line), Some(_col), Some(rest)) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return true;
            };
            let msg = rest.trim_start().strip_prefix("warning: ").unwrap_or("");
            !(file == SOURCE_NAME && line.parse::<u32>().is_ok_and(|n| noisy(n, msg)))
        })
        .collect();
    r.compiler_output = kept.join("\n");
}

/// Check 2 failed: check 4 keeps its verdict, checks 3, 5 and 6 are skipped.
fn skip_after_check_2(verdicts: &mut Vec<(Check, Verdict)>, description: Verdict, why: &str) {
    verdicts.push((Check::LexicalElements, Verdict::Skipped(why.into())));
    verdicts.push((Check::Description, description));
    verdicts.push((Check::Compiler, Verdict::Skipped(why.into())));
    verdicts.push((Check::Library, Verdict::Skipped(why.into())));
}

fn set_verdict(verdicts: &mut [(Check, Verdict)], check: Check, v: Verdict) {
    if let Some(e) = verdicts.iter_mut().find(|(c, _)| *c == check) {
        e.1 = v;
    }
}

fn finish(mut r: Report, mut verdicts: Vec<(Check, Verdict)>, binary: Option<Vec<u8>>) -> Outcome {
    verdicts.sort_by_key(|(c, _)| *c);
    r.checks = verdicts
        .into_iter()
        .map(|(check, verdict)| CheckStatus { check, verdict })
        .collect();
    r.diagnostics
        .sort_by_key(|d| (d.check, d.severity == Severity::Warning));
    cap_diagnostics(&mut r.diagnostics);
    let rejected = r.errors().next().is_some();
    match binary {
        Some(binary) if !rejected => Outcome::Accepted { binary, report: r },
        _ => Outcome::Rejected { report: r },
    }
}

/// Keeps at most [`MAX_DIAGNOSTICS_PER_CHECK`] diagnostics of each check and
/// severity, and says how many more there were (sorted input).
fn cap_diagnostics(diagnostics: &mut Vec<Diagnostic>) {
    let mut out: Vec<Diagnostic> = Vec::with_capacity(diagnostics.len().min(256));
    let mut i = 0;
    while i < diagnostics.len() {
        let (check, severity) = (diagnostics[i].check, diagnostics[i].severity);
        let n = diagnostics[i..]
            .iter()
            .take_while(|d| d.check == check && d.severity == severity)
            .count();
        out.extend(
            diagnostics[i..i + n]
                .iter()
                .take(MAX_DIAGNOSTICS_PER_CHECK)
                .cloned(),
        );
        if n > MAX_DIAGNOSTICS_PER_CHECK {
            let more = n - MAX_DIAGNOSTICS_PER_CHECK;
            let what = if severity == Severity::Error {
                "problems"
            } else {
                "warnings"
            };
            out.push(Diagnostic {
                check,
                severity,
                line: None,
                message: format!("... and {more} more {what} of this check"),
            });
        }
        i += n;
    }
    *diagnostics = out;
}

/// Turns gcc's messages into diagnostics (with the submitted source's line
/// numbers) and keeps its raw output for the report.
fn add_gcc_messages(r: &mut Report, run: &GccRun, check: Check) {
    static LINE: OnceLock<Regex> = OnceLock::new();
    let re = LINE.get_or_init(|| {
        Regex::new(r"^strategy\.[ci]:(\d+):(?:\d+:)? (fatal error|error|warning): (.*)$")
            .expect("regex")
    });
    if !r.compiler_output.is_empty() && !run.messages.is_empty() {
        r.compiler_output.push('\n');
    }
    r.compiler_output.push_str(&run.messages);
    let mut errors = 0;
    for line in run.messages.lines() {
        if let Some(c) = re.captures(line) {
            let n: u32 = c[1].parse().unwrap_or(0);
            let msg = c[3].to_string();
            if &c[2] == "warning" {
                r.diagnostics.push(Diagnostic::warning(check, Some(n), msg));
            } else {
                errors += 1;
                r.diagnostics.push(Diagnostic::error(check, Some(n), msg));
            }
        } else if line.contains("multiple definition of") || line.contains("undefined reference to")
        {
            errors += 1;
            let msg = line.rsplit(": ").next().unwrap_or(line).to_string();
            r.diagnostics.push(Diagnostic::error(check, None, msg));
        }
    }
    if let Some(limit) = &run.limit_hit {
        r.diagnostics
            .push(Diagnostic::error(check, None, limit.clone()));
    } else if !run.ok && errors == 0 {
        r.diagnostics.push(Diagnostic::error(
            check,
            None,
            "gcc failed; its messages are quoted below",
        ));
    }
}

/// The first line where each identifier appears in the code (not in a
/// comment, nor in the `#if 0` description): one pass over the source.
struct FirstUses<'a> {
    lines: HashMap<&'a str, u32>,
}

impl<'a> FirstUses<'a> {
    fn new(text: &'a str, description: Option<&Description>) -> FirstUses<'a> {
        let skipped = |line: u32| {
            description.is_some_and(|d| {
                let first = d.first_line.saturating_sub(1);
                let last = d.first_line + d.text.lines().count() as u32;
                (first..=last).contains(&line)
            })
        };
        let mut lines = HashMap::new();
        for t in lex::tokenize(text) {
            if matches!(t.kind, lex::TokenKind::Identifier) && !skipped(t.line) {
                lines.entry(t.text).or_insert(t.line);
            }
        }
        FirstUses { lines }
    }

    fn line(&self, name: &str) -> Option<u32> {
        self.lines.get(name).copied()
    }
}

/// The contest runtime's object file, compiled (in the jail, with the
/// strategies' flags) once per process: every strategy links the same bytes.
pub fn runtime_object() -> Result<Arc<Vec<u8>>, CompileError> {
    static OBJECT: OnceLock<Result<Arc<Vec<u8>>, String>> = OnceLock::new();
    OBJECT
        .get_or_init(|| build_runtime(|gcc, out| gcc.compile(Input::Source, "knobellib.c", out)))
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

/// The announcement's example strategy as a native program for the
/// process runner (the benchmark's comparison only), compiled once per
/// process and held sealed in memory.
pub fn example_native() -> Result<Arc<Executable>, CompileError> {
    static EXAMPLE: OnceLock<Result<Arc<Executable>, String>> = OnceLock::new();
    let r = EXAMPLE.get_or_init(|| {
        let cfg = CompileConfig {
            target: Target::Native,
            ..CompileConfig::local()
        };
        let outcome = compile(EXAMPLE_C.as_bytes(), &cfg).map_err(|e| e.to_string())?;
        let Outcome::Accepted { binary, .. } = outcome else {
            return Err("the example strategy does not compile".into());
        };
        Executable::from_bytes("knobeln-example", &binary)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    });
    r.clone().map_err(CompileError::Runtime)
}
