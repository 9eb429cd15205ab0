//! The program that plays: a checked source compiled by clang for `wasm32`
//! and linked with the contest runtime, and the structural check of the
//! module that comes out.
//!
//! gcc keeps its role in check 5 (the announcement: "must be compilable
//! with gcc"); this module builds the same source a second time, with
//! clang and wasm-ld from Debian's `clang`, `lld` and
//! `libclang-rt-*-dev-wasm32`, inside the same jail. The module's shape is
//! the wall: [`check_module`] accepts only a module that imports exactly
//! the referee's functions, exports only `knobeln_start`, `main` and its
//! memory, has one memory no larger than the contest's limit (its static
//! data within it: the size checked is the size of what runs), no start
//! function and no table or global shared with the outside. What a module
//! can do is then fixed by the WebAssembly semantics; no scan of code is
//! needed.
//!
//! Pure except for [`Toolchain`], which runs the tools in the jail.

use std::path::{Path, PathBuf};

use wasmtime::wasmparser::{Parser, Payload};

pub use crate::wasm::check::{
    check_module, straight_line_module, straight_line_module_importing, Shape, StraightLine,
    IMPORT_MODULE, MAX_FUNCTIONS, MAX_FUNCTION_BYTES, MAX_FUNCTION_LOCALS, MAX_MODULE_BYTES,
    MAX_TABLE_ELEMENTS, MODULE_FUNCTIONS_AT_LIMIT,
};

use super::gcc::{Gcc, GccRun, Input};
use super::lex::{self, LexOptions};
use super::memo::Memo;
use super::purec::strip_line_markers;
use crate::sandbox::jail::JailError;

/// The shadow stack in the module's linear memory (arrays and variables
/// whose address is taken): the 64 kB every accepted strategy may use (as
/// the process runner of earlier versions promised).
pub const SHADOW_STACK_BYTES: u64 = 64 * 1024;

/// Where the wasm tools are: clang and wasm-ld of one LLVM ([`Llvm`]: the
/// zig toolchain's, which starts fast, where `deploy/zig.sh` installed it,
/// else Debian's newest) and the compiler-rt builtins for wasm32 (`long
/// double`, 64-bit division helpers, …) of Debian's. The paths are under
/// `/usr`, which the jail shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// clang, or the zig program whose `clang` command it is.
    pub clang: PathBuf,
    /// wasm-ld, or the zig program whose `wasm-ld` command it is.
    pub wasm_ld: PathBuf,
    pub builtins: PathBuf,
    /// Which LLVM `clang` and `wasm_ld` are: how they are started and the
    /// flags their clang needs to read C as clang 14 does.
    pub llvm: Llvm,
    /// The grounds this clang gives [`clangs_preprocessing_cannot_change`]
    /// ([`SkipGrounds`]): only where they were seen is its `-E` run saved.
    /// `None`: seen at the first compile that needs them, in its jail,
    /// once per process and clang ([`Toolchain::skip_grounds`]).
    pub grounds: Option<SkipGrounds>,
}

/// Whether a link is given the builtins archive ([`Toolchain::builtins`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinsInput {
    /// On wasm-ld's command line after the objects.
    Archive,
    /// Left off: no object calls a name it defines, so wasm-ld would take
    /// nothing from it (an archive's member is linked only for a symbol
    /// an object needs), and reading its symbol map costs about a
    /// quarter of a link (figures.md, "the builtins archive where it is called").
    Omitted,
}

/// When a compile gives wasm-ld the builtins archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BuiltinsLink {
    /// On every link.
    Always,
    /// Only where the strategy's object or the runtime's has an undefined
    /// symbol the archive defines ([`BuiltinsInput::Omitted`] otherwise):
    /// the same module, byte for byte.
    #[default]
    WhereCalled,
}

/// Whether a clang gives [`clangs_preprocessing_cannot_change`] the
/// grounds it reasons from, as seen by running that clang once with the
/// server's flags (`-E -x c -undef` and [`CLANG_FLAGS`]): every name it
/// predefines (its `-dM` list) is reserved (`__x`, `_X`), and its lexer
/// takes no raw string (`R"x(…)x"`) in C, so a macro's name between a raw
/// string's quotes is still a name to it. The reasoning was checked on
/// clang 14; [`Toolchain::find`] takes the newest LLVM it finds, and a
/// later clang may predefine a plain name or lex C like C++.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipGrounds {
    /// Both seen: `clang -E` is saved where the text cannot change.
    Checked,
    /// Not seen (the reason, in words): `clang -E` runs on every text.
    Failed(String),
}

/// Which LLVM builds the strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Llvm {
    /// Debian's `/usr/lib/llvm-N`: `bin/clang` and `bin/wasm-ld`, each
    /// loading `libLLVM-N.so` (20–25 ms of CPU a start, mostly the
    /// dynamic loader's relocations and the page faults they cause).
    Debian,
    /// The zig toolchain's LLVM ([`ZIG`], installed by `deploy/zig.sh`):
    /// one statically linked program, started as `zig clang` and `zig
    /// wasm-ld` (4 ms a start). Its clang (22) refuses by default what
    /// clang 14 took from a 1994 program (implicit `int`, implicit
    /// declarations, int-pointer conversions) and reads raw strings in C;
    /// [`ZIG_CLANG_FLAGS`] gives it clang 14's reading back.
    Zig,
}

/// The zig toolchain's program, installed by `deploy/zig.sh` (PyPI's
/// `ziglang` 0.17.0, pinned by its hash; clang and LLD 22.1.8).
pub const ZIG: &str = "/usr/local/lib/knobeln/zig-0.17.0/zig";

/// Flags the zig toolchain's clang takes after [`CLANG_FLAGS`]: what
/// clang 14 left a warning (and `-w` silenced) stays one, and a raw
/// string is no raw string in C (as in clang 14, which [`SkipGrounds`]
/// reasons from). clang 14 knows no `-fno-raw-string-literals`, so
/// Debian's clang gets none of these.
pub const ZIG_CLANG_FLAGS: &[&str] = &[
    "-fno-raw-string-literals",
    "-Wno-error=implicit-int",
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=int-conversion",
    "-Wno-error=incompatible-pointer-types",
    "-Wno-error=incompatible-function-pointer-types",
];

/// The probe of a raw string: a lexer that takes no raw string in C reads
/// `d` between two string literals and expands it.
const RAW_STRING_PROBE: &str = "#define d 1\nR\"x( \" d \" )x\"\n";

impl SkipGrounds {
    /// The grounds as clang's outputs show them: `defines`, its `-dM -E`
    /// of an empty text; `raw_probe`, its `-E` of [`RAW_STRING_PROBE`].
    /// Pure: the outputs are read, never trusted to be clang's.
    pub fn of(defines: &str, raw_probe: &str) -> SkipGrounds {
        if !defines.contains("#define __STDC__ ") {
            return SkipGrounds::Failed("its list of predefined names is not one".into());
        }
        for line in defines.lines().filter(|l| !l.trim().is_empty()) {
            let name = line
                .strip_prefix("#define ")
                .and_then(|rest| rest.split([' ', '(']).next())
                .unwrap_or("");
            let reserved = name.starts_with("__")
                || (name.starts_with('_')
                    && name[1..].starts_with(|c: char| c.is_ascii_uppercase()));
            if !reserved {
                return SkipGrounds::Failed(format!(
                    "it predefines `{}`, not a reserved name",
                    if name.is_empty() { line } else { name }
                ));
            }
        }
        let (probe, _) = strip_line_markers(raw_probe);
        let tokens: Vec<String> = lex::Lexer::new(&probe, LexOptions::PLAIN)
            .filter(|t| !t.is_comment())
            .map(|t| t.unspliced().into_owned())
            .collect();
        if tokens != ["R", "\"x( \"", "1", "\" )x\""] {
            return SkipGrounds::Failed(format!("it reads a raw string in C (`{}`)", probe.trim()));
        }
        SkipGrounds::Checked
    }

    /// Whether clang's `-E` of the checked text `checked` may be saved:
    /// these grounds were seen ([`SkipGrounds::Checked`]) and the text
    /// cannot change under it ([`clangs_preprocessing_cannot_change`]).
    /// A clang whose grounds failed runs `-E` on every text.
    pub fn may_skip(&self, checked: &str) -> bool {
        *self == SkipGrounds::Checked && clangs_preprocessing_cannot_change(checked)
    }

    /// The grounds of the clang at `clang`, seen once per process and
    /// clang (its path, size and modification time): its `-dM` list and
    /// the raw string's probe, run in the compile's jail like every run of
    /// the tools (fixed texts of the server's, nothing of a participant's).
    /// A clang whose runs fail has none.
    fn seen(gcc: &Gcc<'_>, toolchain: &Toolchain) -> Result<SkipGrounds, JailError> {
        type Key = (PathBuf, u64, Option<std::time::SystemTime>);
        static SEEN: Memo<Key, SkipGrounds> = Memo::new();
        let meta = std::fs::metadata(&toolchain.clang).ok();
        let key = (
            toolchain.clang.clone(),
            meta.as_ref().map_or(0, |m| m.len()),
            meta.and_then(|m| m.modified().ok()),
        );
        SEEN.get_or_try_compute(key, || Self::run(gcc, toolchain))
    }

    fn run(gcc: &Gcc<'_>, toolchain: &Toolchain) -> Result<SkipGrounds, JailError> {
        let clang = toolchain.clang_argv();
        let clang_e =
            |extra: &str, input: &str, name: &str| -> Result<Result<String, String>, JailError> {
                let io = |source| JailError::Io {
                    program: "clang".into(),
                    source,
                };
                gcc.put(name, input.as_bytes()).map_err(io)?;
                let out = format!("{name}.i");
                let mut argv: Vec<&str> = clang.iter().map(|a| &**a).collect();
                argv.extend_from_slice(&["-E", extra, "-x", "c", "-undef"]);
                argv.retain(|a| !a.is_empty());
                argv.extend_from_slice(toolchain.clang_flags());
                argv.extend_from_slice(&[name, "-o", &out]);
                let run = gcc.run_clang(&argv)?;
                if !run.ok {
                    return Ok(Err(format!("its `-E` failed: {}", run.messages.trim())));
                }
                Ok(Ok(
                    String::from_utf8_lossy(&gcc.get(&out).map_err(io)?).into_owned()
                ))
            };
        let defines = clang_e("-dM", "", "grounds-defines.c")?;
        let probe = clang_e("", RAW_STRING_PROBE, "grounds-raw.c")?;
        Ok(match (defines, probe) {
            (Ok(defines), Ok(probe)) => SkipGrounds::of(&defines, &probe),
            (Err(why), _) | (_, Err(why)) => SkipGrounds::Failed(why),
        })
    }
}

impl Toolchain {
    /// The zig toolchain's LLVM where it is installed ([`ZIG`]), else the
    /// newest LLVM under `/usr/lib/llvm-*` that has clang and wasm-ld;
    /// either with the builtins of the newest Debian LLVM that has them
    /// (`None` without them). The grounds its clang gives the saved `-E`
    /// ([`SkipGrounds`]) are seen at the first compile.
    pub fn find() -> Option<Toolchain> {
        let debian = Self::find_debian();
        let zig = Path::new(ZIG);
        match debian {
            Some(debian) if zig.is_file() => Some(Toolchain {
                clang: zig.to_path_buf(),
                wasm_ld: zig.to_path_buf(),
                llvm: Llvm::Zig,
                ..debian
            }),
            debian => debian,
        }
    }

    /// The newest LLVM under `/usr/lib/llvm-*` that has all three.
    pub fn find_debian() -> Option<Toolchain> {
        let mut found: Vec<(u32, (PathBuf, PathBuf, PathBuf))> = Vec::new();
        for entry in std::fs::read_dir("/usr/lib").ok()?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(version) = name
                .strip_prefix("llvm-")
                .and_then(|v| v.parse::<u32>().ok())
            else {
                continue;
            };
            let dir = entry.path();
            let clang = dir.join("bin/clang");
            let wasm_ld = dir.join("bin/wasm-ld");
            let Some(builtins) = builtins_under(&dir.join("lib/clang")) else {
                continue;
            };
            if clang.exists() && wasm_ld.exists() {
                found.push((version, (clang, wasm_ld, builtins)));
            }
        }
        found.sort_by_key(|(v, _)| *v);
        let (_, (clang, wasm_ld, builtins)) = found.pop()?;
        Some(Toolchain {
            clang,
            wasm_ld,
            builtins,
            llvm: Llvm::Debian,
            grounds: None,
        })
    }

    /// How clang is started: its program, and for zig the command `clang`.
    pub fn clang_argv(&self) -> Vec<String> {
        self.argv(&self.clang, "clang")
    }

    /// How wasm-ld is started: its program, and for zig the command.
    pub fn wasm_ld_argv(&self) -> Vec<String> {
        self.argv(&self.wasm_ld, "wasm-ld")
    }

    fn argv(&self, program: &Path, command: &str) -> Vec<String> {
        let program = program.to_string_lossy().into_owned();
        match self.llvm {
            Llvm::Debian => vec![program],
            Llvm::Zig => vec![program, command.to_string()],
        }
    }

    /// clang's flags for a strategy: [`CLANG_FLAGS`], and for the zig
    /// toolchain's clang [`ZIG_CLANG_FLAGS`] after them.
    pub fn clang_flags(&self) -> &'static [&'static str] {
        match self.llvm {
            Llvm::Debian => CLANG_FLAGS,
            Llvm::Zig => {
                static FLAGS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
                FLAGS.get_or_init(|| [CLANG_FLAGS, ZIG_CLANG_FLAGS].concat())
            }
        }
    }

    /// The grounds this clang gives the saved `-E`: the toolchain's own
    /// where it has them, else seen with `gcc`'s jail once per process and
    /// clang (a compile finds its tools anew; the grounds are not run
    /// again).
    pub fn skip_grounds(&self, gcc: &Gcc<'_>) -> Result<SkipGrounds, JailError> {
        match &self.grounds {
            Some(g) => Ok(g.clone()),
            None => SkipGrounds::seen(gcc, self),
        }
    }

    /// Has the jail run the zig toolchain's program from a copy in huge
    /// pages ([`crate::sandbox::held`]), made on a thread of its own once
    /// per process: its two starts a compile cost about half the CPU
    /// mapped from huge pages. Debian's LLVM is not held (its clang and
    /// wasm-ld are small programs loading a shared library).
    pub fn hold_in_memory(&self) {
        if self.llvm == Llvm::Zig {
            crate::sandbox::held::hold_in_background(&self.clang);
        }
    }

    /// What to install when [`Toolchain::find`] finds nothing.
    pub const MISSING: &'static str = "clang, wasm-ld and the wasm32 builtins are missing \
         (Debian: apt-get install clang lld libclang-rt-14-dev-wasm32)";

    /// `clang -c` for wasm32: `src` into the object `out`, its warnings
    /// silenced (`-w`): the build that plays, whose verdict is the
    /// compile's (its warnings are [`Toolchain::warnings`]'s). Preprocessed
    /// input is read with no predefined macro (`-undef`), but clang's
    /// compiler runs its preprocessor over any input (even one it is told
    /// is preprocessed), which is why the compile service first checks
    /// with [`Toolchain::preprocess_again`] that this changes nothing
    /// (or with [`clangs_preprocessing_cannot_change`] that it cannot).
    pub fn compile(
        &self,
        gcc: &Gcc<'_>,
        input: Input,
        src: &str,
        out: &str,
    ) -> Result<GccRun, JailError> {
        self.run(gcc, ClangRun::Build, input, src, Some(out))
    }

    /// `clang -E` of the preprocessed text `src` (the one the checks read
    /// and gcc compiled) into `out`: what clang's own preprocessing makes
    /// of it before it compiles it.
    pub fn preprocess_again(
        &self,
        gcc: &Gcc<'_>,
        src: &str,
        out: &str,
    ) -> Result<GccRun, JailError> {
        self.run(
            gcc,
            ClangRun::Preprocess,
            Input::Preprocessed,
            src,
            Some(out),
        )
    }

    /// clang's front end on the preprocessed text `src` once more, saying
    /// only the warnings on [`CLANG_WARNINGS`] (`-fsyntax-only
    /// -Wno-everything` and those): the report's words, never a verdict
    /// (the build's is [`Toolchain::compile`]'s). Run only where the text
    /// names what they are about ([`clang_may_warn`]).
    pub fn warnings(&self, gcc: &Gcc<'_>, src: &str) -> Result<GccRun, JailError> {
        self.run(gcc, ClangRun::Warnings, Input::Preprocessed, src, None)
    }

    fn run(
        &self,
        gcc: &Gcc<'_>,
        run: ClangRun,
        input: Input,
        src: &str,
        out: Option<&str>,
    ) -> Result<GccRun, JailError> {
        let clang = self.clang_argv();
        // Always as C: clang's driver would skip `-E` for `cpp-output`,
        // while its compiler preprocesses that input all the same.
        let mut argv: Vec<&str> = clang.iter().map(|a| &**a).collect();
        let mode = match run {
            ClangRun::Build => "-c",
            ClangRun::Preprocess => "-E",
            ClangRun::Warnings => "-fsyntax-only",
        };
        argv.extend_from_slice(&[mode, "-x", "c"]);
        if input == Input::Preprocessed {
            argv.push("-undef");
        }
        argv.extend_from_slice(self.clang_flags());
        match run {
            ClangRun::Build | ClangRun::Preprocess => argv.push("-w"),
            ClangRun::Warnings => {
                argv.push("-Wno-everything");
                argv.extend_from_slice(&CLANG_WARNINGS);
            }
        }
        argv.push(src);
        if let Some(out) = out {
            argv.extend_from_slice(&["-o", out]);
        }
        gcc.run_clang(&argv)
    }

    /// wasm-ld: the objects (and the builtins archive where `builtins`
    /// says so) into the module `out`, with `memory_bytes` of linear
    /// memory (whole pages), fixed. On one thread: its output is the same
    /// on any number, and a second thread only costs its start.
    pub fn link(
        &self,
        gcc: &Gcc<'_>,
        objects: &[&str],
        out: &str,
        memory_bytes: u64,
        builtins: BuiltinsInput,
    ) -> Result<GccRun, JailError> {
        let wasm_ld = self.wasm_ld_argv();
        let archive = self.builtins.to_string_lossy();
        let memory = format!(
            "{}",
            memory_bytes / crate::wasm::PAGE_BYTES * crate::wasm::PAGE_BYTES
        );
        let initial = format!("--initial-memory={memory}");
        let max = format!("--max-memory={memory}");
        let stack = format!("stack-size={SHADOW_STACK_BYTES}");
        let mut argv: Vec<&str> = wasm_ld.iter().map(|a| &**a).collect();
        argv.extend_from_slice(&[
            "--no-entry",
            "--export=main",
            &initial,
            &max,
            "-z",
            &stack,
            "--stack-first",
            "--strip-all",
            "--threads=1",
            "-o",
            out,
        ]);
        argv.extend_from_slice(objects);
        if builtins == BuiltinsInput::Archive {
            argv.push(&archive);
        }
        gcc.run_tool("wasm-ld", &argv)
    }
}

fn builtins_under(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|v| {
        let p = v.path().join("lib/wasi/libclang_rt.builtins-wasm32.a");
        p.exists().then_some(p)
    })
}

/// clang's flags for a strategy: freestanding C for WebAssembly 1.0 (no
/// bulk memory, no sign-extension operators: `-mcpu=mvp`), no headers, no
/// builtins (`log2` is the runtime's). Each run adds what it says
/// ([`ClangRun`]): the build and its `-E` errors alone (`-w`), the run
/// for the report's words only [`CLANG_WARNINGS`]. `-ffreestanding` and `-fno-builtin` (each alone is
/// enough) also keep the checked program and the one that plays alike:
/// without them clang declares a library function called undeclared
/// (about 350 names that are not reserved: `fmaximum_numl`, `index`,
/// `round`) with its library type where gcc 12 says `int ()`, and inside
/// `sizeof` no object shows the name (red team F16; the test
/// `library_functions_clang_knows_are_undeclared_functions_to_both_compilers`).
pub const CLANG_FLAGS: &[&str] = &[
    "--target=wasm32",
    "-mcpu=mvp",
    "-O2",
    "-ffreestanding",
    "-fno-builtin",
    "-nostdinc",
    "-nostdlib",
    "-fno-color-diagnostics",
    "-fno-caret-diagnostics",
    "-ferror-limit=30",
    // One process, whose wait status is the verdict on a limit
    // (`Gcc::run_clang`): the compiler in the driver's process (each
    // clang's default, made sure), and no reproducer started after a
    // crash (a `-cc1 -E` child, and files in `/tmp`).
    "-fintegrated-cc1",
    "-fno-crash-diagnostics",
];

/// The warnings of clang's the report gives beside gcc's: those gcc 12
/// gives only while it builds an object (its lowering and
/// gimplification, at `-O0` too), which check 5's `gcc -fsyntax-only`
/// never reaches, said by the compiler that builds the program that
/// plays. Each is about undefined behaviour clang's optimiser takes at
/// its word: a `noreturn` function that returns (clang builds its caller
/// as an endless loop, the code after the call deleted), an ignored
/// `warn_unused_result` value, `va_arg` of a type promoted when passed
/// (and `va_start` of a parameter not the last), a `__builtin_mem*`
/// that always writes past its buffer. Every one is on by default in
/// clang 14 and 22 alike; a warning of gcc's front end (a `return` in a
/// `noreturn` function) may be said by both. Named in [`CLANG_FLAGS`]
/// too, so that they are on whatever a clang's defaults.
pub const CLANG_WARNINGS: [&str; 4] = [
    "-Winvalid-noreturn",
    "-Wunused-result",
    "-Wvarargs",
    "-Wfortify-source",
];

/// How a clang run adds to the compile: [`Toolchain::compile`],
/// [`Toolchain::preprocess_again`], [`Toolchain::warnings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClangRun {
    /// `-c` with `-w`: the object that plays and the verdict. `-w`, not
    /// `-Wno-everything`: it silences every warning but keeps the ones
    /// clang makes errors by default (and clang formats no warning, so a
    /// warning's text costs nothing: red team F1 of the forty-ninth
    /// session, a typedef chain whose type clang printed in 2^16 parts).
    Build,
    /// `-E` with `-w`.
    Preprocess,
    /// `-fsyntax-only -Wno-everything` and [`CLANG_WARNINGS`]: words for
    /// the report, no verdict.
    Warnings,
}

/// At most this many bytes of [`Toolchain::warnings`]'s messages are
/// quoted (whole lines), the rest counted in a line of their own: a
/// report keeps room for gcc's words whatever the program repeats.
pub const MAX_QUOTED_CLANG_WARNINGS: usize = 8 * 1024;

/// Whether the preprocessed text `text` can give a warning on
/// [`CLANG_WARNINGS`]: it names what each is about, an attribute
/// (`noreturn`, `_Noreturn`, `warn_unused_result`, `nodiscard`) or a
/// builtin (`__builtin_va_arg`, `__builtin_memset`, …). clang knows no
/// library function as a builtin here (`-ffreestanding -fno-builtin`),
/// and the text is macro-expanded, so nothing else makes one. `false`:
/// [`Toolchain::warnings`] is not run (a compile keeps its four tool
/// starts). A name in a comment or a string only runs it for nothing.
/// Linear in the text's size.
pub fn clang_may_warn(text: &str) -> bool {
    const TRIGGERS: [&[u8]; 4] = [
        b"noreturn",
        b"warn_unused_result",
        b"nodiscard",
        b"__builtin_",
    ];
    let bytes = text.as_bytes();
    (0..bytes.len()).any(|i| {
        TRIGGERS.iter().any(|t| {
            bytes[i..]
                .get(..t.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(t))
        })
    })
}

/// What the report quotes of [`Toolchain::warnings`]'s messages: the
/// warnings on [`CLANG_WARNINGS`] (a line ending in its option,
/// `[-Wvarargs]`) and the notes that follow each, at most
/// [`MAX_QUOTED_CLANG_WARNINGS`] bytes of them and a line counting the
/// rest. Nothing else: the run's verdict is not the compile's, so an
/// error line is never quoted (it would count as one), nor a line that
/// is not clang's own message (the rest of a string a message quotes
/// with its newlines, which the program writes: red team F3), nor the
/// count ("3 warnings generated."). Pure; linear in the messages.
pub fn clang_warnings_to_report(messages: &str) -> String {
    let mut kept = String::new();
    let mut keeping = false;
    let mut cut = 0usize;
    for line in messages.lines() {
        let Some(message) = clang_message(line) else {
            continue;
        };
        keeping = if let Some(warning) = message.strip_prefix("warning: ") {
            warning
                .rsplit_once(" [")
                .and_then(|(_, tag)| tag.strip_suffix(']'))
                .and_then(|tag| tag.split(',').next())
                .is_some_and(|option| CLANG_WARNINGS.contains(&option))
        } else {
            keeping && message.starts_with("note: ")
        };
        if !keeping {
            continue;
        }
        if cut > 0 || kept.len() + line.len() + 1 > MAX_QUOTED_CLANG_WARNINGS {
            cut += line.len() + 1;
        } else {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    if cut > 0 {
        kept.push_str(&format!("[... {cut} more bytes of clang's warnings cut]\n"));
    }
    kept
}

/// The message of a line where clang begins one on the program's file
/// (`strategy.c:21:63: warning: …` gives `warning: …`), read as the
/// report reads a line (the column may be missing).
fn clang_message(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("strategy.c:")
        .or_else(|| line.strip_prefix("strategy.i:"))?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (line_number, rest) = rest.split_once(':')?;
    if !digits(line_number) {
        return None;
    }
    let rest = match rest.split_once(':') {
        Some((column, message)) if digits(column) => message,
        _ => rest,
    };
    Some(rest.trim_start())
}

/// Where clang's preprocessing of the checked text `checked` (gcc's, with
/// its line markers) made something else of it (`again`): the first token
/// that differs, as (line of the submitted source, 0 when unknown; the
/// token in the checked text). `None`: clang builds exactly the text the
/// checks read. Linear in the texts' size.
pub fn preprocessing_difference(checked: &str, again: &str) -> Option<(u32, String)> {
    let (a, lines) = strip_line_markers(checked);
    let (b, _) = strip_line_markers(again);
    let source_line = |l: u32| lines.get(l as usize - 1).copied().unwrap_or(0);
    // Two token streams side by side: no token list is kept.
    let code = |text| lex::Lexer::new(text, LexOptions::GNU).filter(|t| !t.is_comment());
    let (mut a, mut b) = (code(&a), code(&b));
    let mut last_line = 0;
    loop {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (Some(x), Some(y)) if x.unspliced() == y.unspliced() => last_line = x.line,
            (Some(x), _) => return Some((source_line(x.line), x.unspliced().into_owned())),
            (None, Some(_)) => {
                return Some((
                    source_line(last_line.max(1)),
                    "(the end of the program)".into(),
                ))
            }
        }
    }
}

/// Whether clang's own preprocessing (`-x c -undef`, no header) is shown,
/// without running it, to leave the checked text `checked` (gcc's, with
/// its line markers) token for token as it is: then `clang -E` and
/// [`preprocessing_difference`] could only agree, and the compile service
/// saves their process. Without a predefined macro a preprocessor changes
/// a text only by a directive or by a macro, and every macro clang has
/// under `-undef` (`__STDC__`, `__STDC_VERSION__`, …, and its built-in
/// ones: `__LINE__`, `_Pragma`, `__has_feature`, `__is_identifier`, …)
/// is a reserved name (`__x`, `_X`). So `true` only when no line is a
/// directive but gcc's own line markers (`# N "file"`, no flags), no name
/// anywhere (strings included) starts with `__` or `_` and a capital,
/// nothing can join or split lines the way clang reads them (a
/// backslash at a line's end, a carriage return, a comment's start, a
/// trigraph's `??`), and no universal character name (`\u`, `\U`,
/// strings included): gcc writes each character outside ASCII of a name
/// as one, clang's `-E` writes it in UTF-8, so the two texts differ in
/// spelling though not in meaning, and the run decides as it always did
/// (red team G10).
/// `false` says nothing: clang runs and is compared, as before.
/// Linear in the text's size.
pub fn clangs_preprocessing_cannot_change(checked: &str) -> bool {
    if checked.contains('\r')
        || checked.contains("/*")
        || checked.contains("??")
        || checked.contains("\\u")
        || checked.contains("\\U")
    {
        return false;
    }
    checked.split('\n').all(|line| {
        let code = line.trim_start_matches([' ', '\t', '\x0b', '\x0c']);
        if code.starts_with('#') || code.starts_with("%:") {
            return is_plain_line_marker(line);
        }
        !code
            .trim_end_matches([' ', '\t', '\x0b', '\x0c'])
            .ends_with('\\')
            && !names_a_reserved_identifier(line)
    })
}

/// `# N "file"` exactly as gcc writes it for a source without headers: a
/// line number clang reads as it is (decimal, no leading zero, below
/// 2^31), a file name without quote or backslash, no flags.
fn is_plain_line_marker(line: &str) -> bool {
    let Some((number, file)) = line
        .strip_prefix("# ")
        .and_then(|rest| rest.split_once(' '))
    else {
        return false;
    };
    let number_ok = !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && (number == "0" || !number.starts_with('0'))
        && number.parse::<u32>().is_ok_and(|n| n < 1 << 31);
    let file_ok = file.len() >= 2
        && file.starts_with('"')
        && file.ends_with('"')
        && !file[1..file.len() - 1].contains(['"', '\\']);
    number_ok && file_ok
}

/// Whether a run of name characters (`A-Z a-z 0-9 _`) in `line` starts
/// with `__` or `_` and a capital: a name the implementation may define.
fn names_a_reserved_identifier(line: &str) -> bool {
    let b = line.as_bytes();
    let name_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (0..b.len()).any(|i| {
        b[i] == b'_'
            && (i == 0 || !name_char(b[i - 1]))
            && b.get(i + 1)
                .is_some_and(|&c| c == b'_' || c.is_ascii_uppercase())
    })
}

/// What the strategy's wasm object (clang's output, before wasm-ld)
/// imports and runs that a strategy may not: functions from another module
/// than the linker's `env` (a direct import of the referee's functions),
/// or constructors. Each in words for the participant.
pub fn check_object(object: &[u8]) -> Vec<String> {
    use wasmtime::wasmparser::{KnownCustom, Linking};
    let mut problems = Vec::new();
    for payload in Parser::new(0).parse_all(object) {
        let Ok(payload) = payload else {
            problems.push("clang's object cannot be read as WebAssembly".into());
            break;
        };
        match payload {
            Payload::ImportSection(r) => {
                for import in r.into_imports().flatten() {
                    if import.module != "env" {
                        problems.push(format!(
                            "imports `{}.{}` directly; a strategy reaches the referee only \
                             through the five library routines",
                            import.module, import.name
                        ));
                    }
                }
            }
            Payload::CustomSection(c) => {
                if let KnownCustom::Linking(l) = c.as_known() {
                    for sub in l.subsections().flatten() {
                        if let Linking::InitFuncs(map) = sub {
                            if map.count() > 0 {
                                problems
                                    .push("has constructors; no code may run before main()".into());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    problems
}

/// A function's frame on the shadow stack, read from its prologue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackFrame {
    /// The function's name in clang's object (`None`: it has none).
    pub function: Option<String>,
    /// The bytes its prologue takes from `__stack_pointer` at once.
    pub bytes: u64,
}

/// The constant stack frames of the functions of clang's `wasm32` object:
/// each place where a body subtracts a constant from the linker's
/// `__stack_pointer` (`global.get`, `i32.const N`, `i32.sub`, or adding
/// `-N`): its local arrays and the variables whose address is taken, at
/// most one per function (the largest). A frame larger than the shadow
/// stack can never be right: the function would crash when called.
/// Frames whose size is computed at run time (a variable-length array)
/// are not seen. One linear pass over the code.
pub fn stack_frames(object: &[u8]) -> Vec<StackFrame> {
    use wasmtime::wasmparser::{KnownCustom, Linking, Operator, SymbolFlags, SymbolInfo, TypeRef};
    let (mut imported_funcs, mut imported_globals) = (0u32, 0u32);
    let mut stack_pointer = None;
    let mut names = std::collections::HashMap::new();
    let mut frames: Vec<(u32, u64)> = Vec::new();
    let mut body_index = 0u32;
    for payload in Parser::new(0).parse_all(object) {
        let Ok(payload) = payload else { break };
        match payload {
            Payload::ImportSection(r) => {
                for import in r.into_imports().flatten() {
                    match import.ty {
                        TypeRef::Func(_) => imported_funcs += 1,
                        TypeRef::Global(_) => {
                            if import.name == "__stack_pointer" {
                                stack_pointer = Some(imported_globals);
                            }
                            imported_globals += 1;
                        }
                        _ => {}
                    }
                }
            }
            Payload::CodeSectionEntry(body) => {
                let function = imported_funcs + body_index;
                body_index += 1;
                let Some(sp) = stack_pointer else { continue };
                let Ok(ops) = body.get_operators_reader() else {
                    continue;
                };
                // The last three operators, oldest first.
                let mut window: [Option<Operator<'_>>; 3] = [None, None, None];
                let mut largest = 0u64;
                for op in ops.into_iter() {
                    let Ok(op) = op else { break };
                    window.rotate_left(1);
                    window[2] = Some(op);
                    let [Some(Operator::GlobalGet { global_index }), Some(Operator::I32Const { value }), Some(last)] =
                        &window
                    else {
                        continue;
                    };
                    if *global_index != sp {
                        continue;
                    }
                    let bytes = match last {
                        Operator::I32Sub => u64::from(*value as u32),
                        Operator::I32Add if *value < 0 => u64::from(value.unsigned_abs()),
                        _ => continue,
                    };
                    largest = largest.max(bytes);
                }
                if largest > 0 {
                    frames.push((function, largest));
                }
            }
            Payload::CustomSection(c) => {
                if let KnownCustom::Linking(l) = c.as_known() {
                    for sub in l.subsections().flatten() {
                        if let Linking::SymbolTable(map) = sub {
                            for symbol in map.into_iter().flatten() {
                                if let SymbolInfo::Func {
                                    flags,
                                    index,
                                    name: Some(name),
                                } = symbol
                                {
                                    if !flags.contains(SymbolFlags::UNDEFINED) {
                                        names.insert(index, name.to_string());
                                    }
                                }
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    frames
        .into_iter()
        .map(|(index, bytes)| StackFrame {
            function: names.get(&index).cloned(),
            bytes,
        })
        .collect()
}

/// What wasm-ld said that a participant can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkProblem {
    /// Static data and the shadow stack need more than the memory limit.
    Memory { needed_bytes: u64 },
    /// A function is called with other arguments than it takes (wasm-ld
    /// would link a trap in its place).
    Signature { function: String },
    /// A symbol nothing defines.
    Undefined { symbol: String },
    /// A symbol defined twice (by the program and the runtime).
    Duplicate { symbol: String },
    /// A symbol of one kind (data, function, global) used as another.
    TypeMismatch { symbol: String },
}

/// The problems in wasm-ld's messages.
pub fn link_problems(messages: &str) -> Vec<LinkProblem> {
    let mut out = Vec::new();
    for line in messages.lines() {
        if let Some(rest) = line.split("initial memory too small, ").nth(1) {
            if let Some(n) = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
            {
                out.push(LinkProblem::Memory { needed_bytes: n });
            }
        } else if let Some(name) = line.split("undefined symbol: ").nth(1) {
            out.push(LinkProblem::Undefined {
                symbol: name.trim().to_string(),
            });
        } else if let Some(name) = line.split("duplicate symbol: ").nth(1) {
            out.push(LinkProblem::Duplicate {
                symbol: name.trim().to_string(),
            });
        } else if let Some(name) = line.split("symbol type mismatch: ").nth(1) {
            out.push(LinkProblem::TypeMismatch {
                symbol: name.trim().to_string(),
            });
        } else if let Some(name) = line.split("function signature mismatch: ").nth(1) {
            let function = name.trim().to_string();
            if function != "main" {
                out.push(LinkProblem::Signature { function });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report quotes the allowlist's warnings with their notes alone:
    /// not clang's other warnings, their notes or their count, not an
    /// error (the run's verdict is not the compile's), not a line that is
    /// no message of clang's (a string's next line, which the program
    /// writes: F3's forged error, with and without a column).
    #[test]
    fn clangs_warnings_quoted_are_the_allowlists_alone() {
        let messages = "strategy.c:19:1: warning: type specifier missing, defaults to 'int' [-Wimplicit-int]\n\
            strategy.c:20:3: note: did you mean 'h'?\n\
            strategy.c:21:63: warning: function declared 'noreturn' should not return [-Winvalid-noreturn]\n\
            strategy.c:22:9: warning: 'memset' will always overflow [-Wfortify-source,-Werror]\n\
            strategy.c:22:9: note: the buffer\n\
            strategy.c:23:1: error: something only clang refuses\n\
            strategy.c:23:1: note: declared here\n\
            strategy.c:24:1: warning: ignoring return value: a line\n\
            strategy.c:1:1: error: forged\n\
            strategy.c:1: error: forged without a column\n\
            multiple definition of `main'\n\
            its string's last line [-Wunused-result]\n\
            4 warnings and 1 error generated.\n\
            [... 20 more bytes of compiler messages cut]\n";
        assert_eq!(
            clang_warnings_to_report(messages),
            "strategy.c:21:63: warning: function declared 'noreturn' should not return [-Winvalid-noreturn]\n\
             strategy.c:22:9: warning: 'memset' will always overflow [-Wfortify-source,-Werror]\n\
             strategy.c:22:9: note: the buffer\n"
        );
        assert_eq!(clang_warnings_to_report("1 warning generated.\n"), "");
        assert_eq!(clang_warnings_to_report(""), "");
    }

    /// At most [`MAX_QUOTED_CLANG_WARNINGS`] bytes of whole lines, the
    /// rest counted: F4's 1200 ignored results, F5's report of 146 kB.
    #[test]
    fn clangs_warnings_quoted_are_at_most_8_kib() {
        let line = "strategy.c:30:5: warning: ignoring return value of function declared with \
                    'warn_unused_result' attribute [-Wunused-result]\n";
        let messages = line.repeat(1200);
        let quoted = clang_warnings_to_report(&messages);
        let whole = MAX_QUOTED_CLANG_WARNINGS / line.len();
        let cut = (1200 - whole) * line.len();
        assert_eq!(
            quoted,
            format!(
                "{}[... {cut} more bytes of clang's warnings cut]\n",
                line.repeat(whole)
            )
        );
        assert!(quoted.len() <= MAX_QUOTED_CLANG_WARNINGS + 64);
        // At the limit, nothing is cut.
        let at = line.repeat(whole);
        assert_eq!(clang_warnings_to_report(&at), at);
    }

    /// The warnings run is asked only where the text names what an
    /// allowlisted warning is about.
    #[test]
    fn clang_is_asked_for_its_warnings_only_where_the_text_names_their_cause() {
        for text in [
            "_Noreturn void f(void);",
            "__attribute__((noreturn)) void f(void);",
            "__attribute__((__noreturn__)) void f(void);",
            "[[noreturn]] void f(void);",
            "__attribute__((warn_unused_result)) int f(void);",
            "[[nodiscard]] int f(void);",
            "x = __builtin_va_arg(ap, char);",
            "__builtin_memset(b, 0, 44);",
            "noreturn",
        ] {
            assert!(clang_may_warn(text), "{text}");
        }
        for text in [
            "",
            "main() { for (;;) make_throw(next_random(0, 9)); }",
            "int no_return, nodis, builtin_va, __built;",
        ] {
            assert!(!clang_may_warn(text), "{text}");
        }
    }

    /// F8: the module's other limits of the security table's row, each at
    /// it and one past it: 4096 functions, and 1 MiB of module.
    #[test]
    fn a_module_at_its_function_and_byte_limits_is_accepted_and_one_past_is_not() {
        // `knobeln_start` and the functions asked for: one more.
        let at = straight_line_module(StraightLine::Chain, MAX_FUNCTIONS as usize - 1, 16);
        assert_eq!(check_module(&at, 1 << 20).map(|s| s.main_params), Ok(0));
        let past = straight_line_module(StraightLine::Chain, MAX_FUNCTIONS as usize, 16);
        let problems = check_module(&past, 1 << 20).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.contains("has 4097 functions; at most 4096")),
            "{problems:?}"
        );
        let big = straight_line_module(
            StraightLine::Chain,
            MAX_MODULE_BYTES / (MAX_FUNCTION_BYTES - 8) + 1,
            MAX_FUNCTION_BYTES - 8,
        );
        assert!(big.len() > MAX_MODULE_BYTES);
        let problems = check_module(&big, 1 << 20).unwrap_err();
        assert!(
            problems[0].contains(&format!(
                "is {} bytes long; at most {MAX_MODULE_BYTES}",
                big.len()
            )),
            "{problems:?}"
        );
    }

    #[test]
    fn a_function_past_the_limit_is_refused_and_one_at_it_is_not() {
        for shape in [StraightLine::Chain, StraightLine::Wide] {
            let at = straight_line_module(shape, 1, MAX_FUNCTION_BYTES - 8);
            assert_eq!(check_module(&at, 1 << 20).map(|s| s.main_params), Ok(0));
            let full =
                straight_line_module(shape, MODULE_FUNCTIONS_AT_LIMIT, MAX_FUNCTION_BYTES - 8);
            assert!(full.len() <= MAX_MODULE_BYTES);
            assert_eq!(check_module(&full, 1 << 20).map(|s| s.main_params), Ok(0));
        }
        let past = straight_line_module(StraightLine::Chain, 1, MAX_FUNCTION_BYTES + 64);
        let problems = check_module(&past, 1 << 20).unwrap_err();
        assert!(
            problems.iter().any(|p| p.contains("a function of 65 kB")),
            "{problems:?}"
        );
    }

    /// Exactly the referee's imports: a module without one of them (the
    /// strategy defined the runtime's name for it, so wasm-ld made no
    /// import) is refused, naming the import.
    #[test]
    fn a_module_missing_a_referee_import_is_refused() {
        for (imports, missing) in [
            (&["seed"][..], "make_throw"),
            (&["make_throw"][..], "seed"),
            (&[][..], "make_throw"),
        ] {
            let m = straight_line_module_importing(StraightLine::Chain, 1, 64, imports);
            let problems = check_module(&m, 1 << 20).unwrap_err();
            let want = format!("does not import the referee's `knobeln.{missing}`");
            assert!(
                problems.iter().any(|p| p.starts_with(&want)),
                "{imports:?}: {problems:?}"
            );
        }
        let both =
            straight_line_module_importing(StraightLine::Chain, 1, 64, &["make_throw", "seed"]);
        assert!(check_module(&both, 1 << 20).is_ok());
    }

    /// Static data must lie within the memory the module declares: the
    /// check reads the data segments of the module that plays.
    #[test]
    fn static_data_beyond_the_memory_is_refused() {
        let module = straight_line_module(StraightLine::Chain, 1, 64);
        let shape = check_module(&module, 1 << 20).expect("the contest's shape");
        assert_eq!((shape.memory_bytes, shape.data_bytes), (1 << 20, 0));
        assert!(shape.code_bytes > 0);
        // One active segment of 4 bytes at `offset` of memory 0.
        let with_data = |offset: u32| {
            let mut content = vec![0x01, 0x00, 0x41];
            let mut n = offset as i32 as i64;
            loop {
                let byte = (n & 0x7f) as u8;
                n >>= 7;
                let done = (n == 0 && byte & 0x40 == 0) || (n == -1 && byte & 0x40 != 0);
                content.push(if done { byte } else { byte | 0x80 });
                if done {
                    break;
                }
            }
            content.extend_from_slice(&[0x0b, 0x04, 1, 2, 3, 4]);
            let mut m = module.clone();
            m.push(11);
            m.push(content.len() as u8);
            m.extend_from_slice(&content);
            m
        };
        let inside = check_module(&with_data((1 << 20) - 4), 1 << 20).expect("fits");
        assert_eq!(inside.data_bytes, 1 << 20);
        let problems = check_module(&with_data((1 << 20) - 2), 1 << 20).unwrap_err();
        assert_eq!(
            problems,
            ["has static data up to byte 1048578, beyond its memory of 1024 kB"]
        );
    }

    #[test]
    fn clangs_preprocessing_must_leave_the_checked_text_as_it_is() {
        let checked = "# 1 \"strategy.c\"\nint a;\n# 7 \"strategy.c\"\nint b = __is_wasm;\n";
        assert_eq!(preprocessing_difference(checked, checked), None);
        // Whitespace and line markers do not count, tokens do.
        let same = "# 1 \"strategy.c\"\nint   a ;\n\n\nint b =\n __is_wasm;\n";
        assert_eq!(preprocessing_difference(checked, same), None);
        let expanded = "# 1 \"strategy.c\"\nint a;\n# 7 \"strategy.c\"\nint b = 1;\n";
        assert_eq!(
            preprocessing_difference(checked, expanded),
            Some((7, "__is_wasm".into()))
        );
        // A directive obeyed by clang: its line is gone from clang's text.
        let directive = "# 1 \"strategy.c\"\n# define X 1\nint a;\n";
        assert_eq!(
            preprocessing_difference(directive, "int a;\n"),
            Some((1, "#".into()))
        );
    }

    /// Where nothing in the text can change under clang's preprocessing,
    /// its run is saved; anything that could (a reserved name, a
    /// directive, a forged marker, a joined line) keeps it.
    #[test]
    fn clangs_preprocessing_is_skipped_only_where_it_cannot_change_the_text() {
        let plain = "# 0 \"strategy.c\"\n# 0 \"<built-in>\"\n# 0 \"<command-line>\"\n\
                     # 1 \"strategy.c\"\n# 19 \"strategy.c\"\nint x__y, a1__B;\n\
                     main() { char *s = \"a_b\"; for (;;) make_throw(100 + x__y); }\n";
        assert!(clangs_preprocessing_cannot_change(plain));
        assert!(clangs_preprocessing_cannot_change(""));
        for (why, text) in [
            ("a built-in macro", "int a = __LINE__;\n"),
            ("a name clang knows", "int __is_identifier = 3;\n"),
            ("_Pragma", "_Pragma(\"x\") int a;\n"),
            ("a reserved keyword, kept to be safe", "_Bool b;\n"),
            ("a reserved name in a string", "char *s = \"__FILE__\";\n"),
            ("after a dollar", "int $__COUNTER__;\n"),
            ("after a dot", "double d = 1.__LINE__;\n"),
            ("a directive a macro made", "# define X 1\nint a = X;\n"),
            ("an indented directive", "  \t#pragma clang x\n"),
            ("a digraph's directive", "%: define X 1\n"),
            ("a marker with a flag", "# 1 \"strategy.c\" 2\n"),
            ("a marker with a leading zero", "# 012 \"strategy.c\"\n"),
            ("a marker past 2^31", "# 2147483648 \"strategy.c\"\n"),
            ("a marker with an escape", "# 1 \"a\\\"b\"\n"),
            ("a marker with more", "# 1 \"strategy.c\" x\n"),
            ("a joined line", "int a = _\\\n_LINE__;\n"),
            ("a joined line, blanks after", "int a; \\ \n"),
            ("a carriage return", "int a;\r#define X\n"),
            ("a comment", "int a; /* */\n"),
            ("a trigraph's start", "??=define X 1\n"),
            (
                "a name outside ASCII, as gcc writes it",
                "int \\U000000c0 = 1;\n",
            ),
            ("a short universal character name", "int x\\u00e9 = 1;\n"),
        ] {
            assert!(!clangs_preprocessing_cannot_change(text), "{why}: {text:?}");
        }
    }

    #[test]
    fn wasm_ld_messages_become_problems() {
        let m = "wasm-ld: error: initial memory too small, 1065544 bytes needed\n\
                 wasm-ld: warning: function signature mismatch: next_random\n\
                 >>> defined as (i32) -> i32 in strategy.o\n\
                 wasm-ld: warning: function signature mismatch: main\n\
                 wasm-ld: error: strategy.wasm.o: undefined symbol: helper\n\
                 wasm-ld: error: duplicate symbol: log2\n\
                 >>> defined in strategy.wasm.o\n\
                 wasm-ld: error: symbol type mismatch: __stack_pointer\n";
        assert_eq!(
            link_problems(m),
            vec![
                LinkProblem::Memory {
                    needed_bytes: 1_065_544
                },
                LinkProblem::Signature {
                    function: "next_random".into()
                },
                LinkProblem::Undefined {
                    symbol: "helper".into()
                },
                LinkProblem::Duplicate {
                    symbol: "log2".into()
                },
                LinkProblem::TypeMismatch {
                    symbol: "__stack_pointer".into()
                },
            ]
        );
    }

    /// clang 14's outputs under the server's flags give the grounds; a
    /// clang predefining a plain name, or reading a raw string in C, does
    /// not, and a toolchain without them never saves `clang -E`, however
    /// plain the text.
    #[test]
    fn the_saved_run_needs_the_grounds_seen_on_the_clang_found() {
        let defines = "#define __STDC_HOSTED__ 0\n#define __STDC_VERSION__ 201710L\n\
                       #define __STDC__ 1\n#define __wasm32__ 1\n#define _ILP32 1\n";
        let probe = "# 1 \"<stdin>\"\n# 1 \"<built-in>\" 1\n# 1 \"<stdin>\" 2\n\n\
                     R\"x( \" 1 \" )x\"\n";
        assert_eq!(SkipGrounds::of(defines, probe), SkipGrounds::Checked);
        let plain_name = format!("{defines}#define linux 1\n");
        assert!(matches!(
            SkipGrounds::of(&plain_name, probe),
            SkipGrounds::Failed(why) if why.contains("`linux`")
        ));
        let function_like = format!("{defines}#define wasm(x) x\n");
        assert!(matches!(
            SkipGrounds::of(&function_like, probe),
            SkipGrounds::Failed(why) if why.contains("`wasm`")
        ));
        let raw = "# 1 \"<stdin>\"\n\nR\"x( \" d \" )x\"\n";
        assert!(matches!(
            SkipGrounds::of(defines, raw),
            SkipGrounds::Failed(why) if why.contains("raw string")
        ));
        assert!(matches!(SkipGrounds::of("", probe), SkipGrounds::Failed(_)));
        let plain = "# 1 \"strategy.c\"\nmain() { for (;;) make_throw(100); }\n";
        assert!(SkipGrounds::Checked.may_skip(plain));
        assert!(!SkipGrounds::Failed("linux".into()).may_skip(plain));
        assert!(!SkipGrounds::Checked.may_skip("int a = __LINE__;\n"));
    }
}
