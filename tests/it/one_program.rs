//! Issue 33: the program that plays is the program that was checked, and
//! only fuel decides a game. The checks read, and gcc and clang both build,
//! one preprocessed text (hostile variants of each view: `__wasm__`
//! branches, names pasted by the preprocessor, constructors, direct imports,
//! inline WebAssembly, directives made by macros, forced inlining); builds
//! do not depend on the clock; the wall-clock watchdog is an engine fault,
//! never a player's failure, and counts each player's own running time.

use std::path::Path;
use std::time::{Duration, Instant};

use knobeln::referee::{GameSeeds, Referee, RefereeError};
use knobeln::sandbox::jail::{Jail, JailLimits};
use knobeln::toolchain::compile::{
    compile_measured, CompileConfig, ModuleCache, Outcome, Profile, Tool, Verdict,
};
use knobeln::toolchain::diagnostic::Check;
use knobeln::toolchain::gcc::{
    Gcc, GccRun, GccStart, Input, Messages, PREPROCESSED_NAME, SOURCE_NAME,
};
use knobeln::toolchain::wasm::{
    check_object, clangs_preprocessing_cannot_change, preprocessing_difference, BuiltinsInput,
    BuiltinsLink, Llvm, SkipGrounds, Toolchain,
};
use knobeln::wasm::{EPOCH_TICK, HOST_CALL_FUEL};

use crate::common::{compile_source, config, install, play, thread_cpu, Strategy};

const HONEST: &str = "main() { for (;;) make_throw(100); }\n";

fn module_of(src: &str) -> Vec<u8> {
    match compile_source(src.as_bytes(), Profile::Local) {
        Outcome::Accepted { binary, .. } => binary,
        Outcome::Rejected { report } => panic!("rejected: {:?}\n{src}", report.diagnostics),
    }
}

/// Code only clang would have seen (a `__wasm__` branch, which gcc's
/// preprocessing drops) is now code nobody builds: the module is, byte for
/// byte, the one of the source without it.
#[test]
fn a_wasm_branch_is_code_that_nobody_builds() {
    let plain = module_of(HONEST);
    let branches = [
        // A constructor that throws twice before main starts.
        "#define CAT(a,b) a##b\n#ifdef __wasm__\nCAT(__attri,bute__)((constructor)) static void \
         early(void) { make_throw(5); make_throw(5); }\n#endif\n"
            .to_string(),
        // The referee's functions imported directly.
        "#define CAT(a,b) a##b\n#ifdef __wasm__\nCAT(__attri,bute__)((import_module(\"knobeln\"), \
         import_name(\"seed\"))) long long peek(void);\nint stolen(void) { return (int)peek(); }\n\
         #endif\n"
            .to_string(),
        // Inline WebAssembly.
        "#define CAT(a,b) a##b\n#ifdef __wasm__\nvoid spin(void) { CAT(__as,m__)(\".rept 1000\\n\
         nop\\n.endr\"); }\n#endif\n"
            .to_string(),
        // Lexical elements the count never saw.
        format!(
            "#ifdef __wasm__\nint big[] = {{ {}0 }};\n#endif\n",
            "1,".repeat(15_000)
        ),
    ];
    for branch in branches {
        let src = format!("{branch}{HONEST}");
        assert_eq!(module_of(&src), plain, "{}", &src[..120]);
    }
}

/// Names pasted by the preprocessor are read after pasting: every attack
/// that the branch hid is refused when it is live code, with its line.
#[test]
fn what_macros_make_is_checked_as_written_out() {
    let cases = [
        (
            "#define CAT(a,b) a##b\nCAT(__attri,bute__)((constructor)) static void early(void) { \
             make_throw(5); }\n",
            "`constructor`",
        ),
        (
            "#define CAT(a,b) a##b\nCAT(__attri,bute__)((import_module(\"knobeln\"), \
             import_name(\"seed\"))) long long peek(void);\n",
            "`import_module`",
        ),
        (
            "#define CAT(a,b) a##b\nvoid spin(void) { CAT(__as,m__)(\".rept 10\\nnop\\n.endr\"); }\n",
            "inline assembly",
        ),
        ("#define HASH #\nint x;\nHASH define Y 1\n", "directive `#define`"),
        (
            "#define AI __attribute__((always_inline))\nAI static int f(int x) { return x; }\n",
            "`always_inline`",
        ),
        (
            "__attribute__((flatten)) static int g(int x) { return x + 1; }\n",
            "`flatten`",
        ),
    ];
    for (head, words) in cases {
        let src = format!("{head}{HONEST}");
        let outcome = compile_source(src.as_bytes(), Profile::Local);
        assert!(!outcome.accepted(), "{words}: accepted");
        let report = outcome.report();
        assert!(
            report
                .errors()
                .any(|d| d.check == Check::SingleFile && d.message.contains(words)),
            "{words}: {:?}",
            report.diagnostics
        );
    }
}

/// A source over its size is refused before anything reads it.
#[test]
fn a_source_over_its_size_is_refused_unread() {
    let src = format!("{HONEST}/*{}*/\n", "x".repeat(300 << 10));
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    assert!(!outcome.accepted());
    assert!(
        outcome
            .report()
            .errors()
            .any(|d| d.message.contains("at most 262144 bytes are accepted")),
        "{:?}",
        outcome.report().diagnostics
    );
}

/// A name that means something to clang and nothing to gcc would make
/// clang's view differ: refused with its line, never built into something
/// else. Since H14 check 6 refuses it (a reserved name off the keywords
/// both compilers read alike) before clang runs; clang's `-E`, which
/// refused it before, stays behind it.
#[test]
fn a_name_only_clang_knows_is_refused() {
    let src = "int __is_identifier = 3;\nmain() { for (;;) make_throw(__is_identifier + 97); }\n";
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    assert!(!outcome.accepted());
    assert!(
        outcome.report().errors().any(|d| d.check == Check::Library
            && d.line == Some(1)
            && d.message
                .starts_with("uses `__is_identifier`: names beginning")),
        "{:?}",
        outcome.report().diagnostics
    );
}

/// clang's `-E` runs only where the text could change under it: not for
/// a text without reserved names or directives (the example strategy),
/// still for one naming a reserved name (`_Bool`), which is compiled all
/// the same; the name only clang knows is refused by check 6 before
/// clang runs at all (H14).
#[test]
fn clangs_preprocessing_runs_only_where_the_text_could_change_under_it() {
    let cfg = CompileConfig::local();
    let ran = |src: &str| {
        let m = compile_measured(src.as_bytes(), &cfg, &ModuleCache::new(1 << 20)).unwrap();
        let tools: Vec<Tool> = m.tools.iter().map(|(t, _)| *t).collect();
        (m.outcome.accepted(), tools)
    };
    let (accepted, tools) = ran(HONEST);
    assert!(accepted);
    assert_eq!(
        tools,
        [Tool::GccPreprocess, Tool::Gcc, Tool::Clang, Tool::WasmLd]
    );
    let (accepted, tools) = ran("_Bool b = 1;\nmain() { for (;;) make_throw(99 + b); }\n");
    assert!(accepted);
    assert!(tools.contains(&Tool::ClangPreprocess), "{tools:?}");
    let (accepted, tools) =
        ran("int __is_identifier = 3;\nmain() { for (;;) make_throw(__is_identifier); }\n");
    assert!(!accepted);
    assert_eq!(tools, [Tool::GccPreprocess, Tool::Gcc]);
}

/// The saved `clang -E` rests on grounds seen on the clang found (its
/// predefined names all reserved, no raw string in C; checked on clang
/// 14, while `Toolchain::find` takes the newest LLVM installed): this
/// machine's clang gives them, and a toolchain whose grounds failed runs
/// `clang -E` on every text, the plainest included, with the same verdict.
/// Before, the skip applied whatever clang was found.
#[test]
fn a_clang_without_the_grounds_runs_its_preprocessing_on_every_text() {
    let found = Toolchain::find().expect("clang, wasm-ld and the wasm32 builtins");
    let jail = Jail::new().unwrap();
    let gcc = Gcc::new(&jail, JailLimits::default());
    assert_eq!(found.skip_grounds(&gcc).unwrap(), SkipGrounds::Checked);
    let ran = |cfg: &CompileConfig| {
        let m = compile_measured(HONEST.as_bytes(), cfg, &ModuleCache::new(1 << 20)).unwrap();
        let tools: Vec<Tool> = m.tools.iter().map(|(t, _)| *t).collect();
        (m.outcome.accepted(), tools)
    };
    let (accepted, tools) = ran(&CompileConfig::local());
    assert!(accepted);
    assert!(!tools.contains(&Tool::ClangPreprocess), "{tools:?}");
    let failed = CompileConfig {
        toolchain: Some(Toolchain {
            grounds: Some(SkipGrounds::Failed(
                "it predefines `linux`, not a reserved name".into(),
            )),
            ..found
        }),
        ..CompileConfig::local()
    };
    let (accepted, tools) = ran(&failed);
    assert!(accepted);
    assert_eq!(
        tools,
        [
            Tool::GccPreprocess,
            Tool::Gcc,
            Tool::ClangPreprocess,
            Tool::Clang,
            Tool::WasmLd
        ]
    );
}

/// Red team G10: a name with a character outside ASCII (written as a
/// universal character name, or in UTF-8, which gcc writes out as one)
/// is spelled otherwise by clang's `-E` (in UTF-8): the two texts differ,
/// token for token, though no macro or directive is involved. The saved
/// run must not hide that: the verdict is the one clang's `-E` gives, the
/// same with or without another reason for that run (a `_Bool`). Before,
/// the first was accepted without the run and the second refused.
#[test]
fn a_name_outside_ascii_keeps_clangs_preprocessing_and_its_verdict() {
    let cfg = CompileConfig::local();
    let ran = |src: &str| {
        let m = compile_measured(src.as_bytes(), &cfg, &ModuleCache::new(1 << 20)).unwrap();
        let tools: Vec<Tool> = m.tools.iter().map(|(t, _)| *t).collect();
        (m.outcome.accepted(), tools)
    };
    for name in ["\\u00C0", "\u{c0}", "x\\U000000e9y"] {
        let alone = format!("int {name} = 100;\nmain() {{ for (;;) make_throw({name}); }}\n");
        let (accepted, tools) = ran(&alone);
        assert!(tools.contains(&Tool::ClangPreprocess), "{alone}: {tools:?}");
        // The rejection says what is wrong and how to fix it.
        let outcome = compile_source(alone.as_bytes(), Profile::Local);
        assert!(
            outcome.report().errors().any(|d| d
                .message
                .contains("a name with a character outside ASCII")
                && d.message.contains("ASCII letters")),
            "{alone}: {:?}",
            outcome.report().diagnostics
        );
        let with_bool = format!("_Bool b;\n{alone}");
        let (accepted_too, tools) = ran(&with_bool);
        assert!(
            tools.contains(&Tool::ClangPreprocess),
            "{with_bool}: {tools:?}"
        );
        assert_eq!(accepted, accepted_too, "{alone}");
    }
}

/// The ground of the saved run: every macro clang predefines under the
/// compile's flags is a reserved name (this clang's own list, `-dM`), and
/// for every source of the tests that gcc preprocesses and the pure check
/// lets through without clang, clang's `-E` leaves the text as it is.
#[test]
fn where_clangs_preprocessing_is_skipped_it_would_have_changed_nothing() {
    let tools = Toolchain::find().expect("clang, wasm-ld and the wasm32 builtins");
    let clang = tools.clang_argv();
    let out = std::process::Command::new(&clang[0])
        .args(&clang[1..])
        .args(["-dM", "-E", "-x", "c", "-undef"])
        .args(tools.clang_flags())
        .arg("/dev/null")
        .output()
        .unwrap();
    let defines = String::from_utf8(out.stdout).unwrap();
    assert!(defines.contains("#define __STDC__ 1"), "{defines}");
    for line in defines.lines() {
        let name = line.split_whitespace().nth(1).unwrap_or("");
        let reserved = name.starts_with("__")
            || (name.starts_with('_') && name[1..].starts_with(|c: char| c.is_ascii_uppercase()));
        assert!(reserved, "clang predefines `{name}`, not a reserved name");
    }
    let sources = test_c_sources();
    let (mut skipped, mut kept) = (0, 0);
    for path in &sources {
        let jail = Jail::new().unwrap();
        let gcc = Gcc::new(&jail, JailLimits::default());
        gcc.put(SOURCE_NAME, &std::fs::read(path).unwrap()).unwrap();
        if !gcc
            .preprocess(SOURCE_NAME, PREPROCESSED_NAME, GccStart::default())
            .unwrap()
            .ok
        {
            continue;
        }
        let text = String::from_utf8_lossy(&gcc.get(PREPROCESSED_NAME).unwrap()).into_owned();
        if !clangs_preprocessing_cannot_change(&text) {
            kept += 1;
            continue;
        }
        skipped += 1;
        let again = tools
            .preprocess_again(&gcc, PREPROCESSED_NAME, "again.i")
            .unwrap();
        assert!(again.ok, "{}: {}", path.display(), again.messages);
        let again = String::from_utf8_lossy(&gcc.get("again.i").unwrap()).into_owned();
        assert_eq!(
            preprocessing_difference(&text, &again),
            None,
            "{}",
            path.display()
        );
    }
    assert!(skipped >= 20 && kept >= 5, "skipped {skipped}, kept {kept}");
}

/// Check 5 is gcc's front end alone (`gcc -fsyntax-only`): for every C
/// source of the tests that reaches check 5 it says what `gcc -c` of the
/// same preprocessed text says, errors, warnings and fate alike (two that
/// do not reach it differ: `asm_incbin.c`'s assembler text, which only
/// `gcc -c`'s `as` reads, refused at check 2; `macro_megabytes.c`, whose
/// back end needs more than the jail's memory, refused at check 3). Where
/// the two differ is known and written here: what gcc says only while it
/// builds an object, which the front end never does.
#[test]
fn gccs_front_end_gives_every_test_source_the_messages_of_gcc_c() {
    let limits = JailLimits {
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    let mut compared = 0;
    let mut differ = Vec::new();
    for path in test_c_sources() {
        let src = std::fs::read(&path).unwrap();
        let reached = compile_source(&src, Profile::Submission)
            .report()
            .verdict(Check::Compiler)
            .is_some_and(|v| matches!(v, Verdict::Passed | Verdict::Failed));
        if !reached {
            continue;
        }
        let Some((object, front)) = gcc_c_and_its_front_end(&src, limits) else {
            // Refused at its preprocessing (check 5's verdict too).
            continue;
        };
        compared += 1;
        let fate = |r: &GccRun| (r.ok, r.messages.clone(), r.limit_hit.clone());
        if fate(&object) != fate(&front) {
            differ.push(format!(
                "{}: gcc -c {:?}, its front end {:?}",
                path.display(),
                fate(&object),
                fate(&front)
            ));
        }
    }
    assert!(compared >= 50, "only {compared} sources compared");
    assert!(differ.is_empty(), "{}", differ.join("\n"));

    // What only the optimiser and the back end say: an out-of-bounds
    // loop's warning, and a call of a function declared with an error
    // (an attribute check 2 refuses before gcc runs).
    let jail = Jail::new().unwrap();
    let gcc = Gcc::new(&jail, limits);
    for (text, words) in [
        (
            "int a[10];\nint f(void) { int i, s = 0; for (i = 0; i <= 10; i++) s += a[i] * i; return s; }\n",
            "-Waggressive-loop-optimizations",
        ),
        (
            "__attribute__((error(\"no\"))) void bad(void);\nvoid h(void) { bad(); }\n",
            "declared with attribute error",
        ),
    ] {
        gcc.put(PREPROCESSED_NAME, text.as_bytes()).unwrap();
        let object = gcc
            .compile(Input::Preprocessed, PREPROCESSED_NAME, "strategy.o")
            .unwrap();
        let front = gcc.check(Messages::All).unwrap();
        assert!(object.messages.contains(words), "{}", object.messages);
        assert!(front.ok && !front.messages.contains(words), "{}", front.messages);
    }
    // What gcc says while lowering a function, at `-O0` too (red team F1
    // of the forty-eighth session): the report has these from clang
    // (`warnings_gcc_gives_only_building_an_object_are_said_by_clang`).
    let src = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/object_time/warnings.c"),
    )
    .unwrap();
    let (object, front) = gcc_c_and_its_front_end(&src, limits).expect("preprocessed");
    for words in [
        "'noreturn' function does return",
        "declared with attribute 'warn_unused_result'",
        "is promoted to 'int' when passed through",
        "second parameter of 'va_start' not last named argument",
        "writing 44 bytes into a region of size 40",
    ] {
        assert!(
            object.messages.contains(words),
            "{words}: {}",
            object.messages
        );
        assert!(
            front.ok && !front.messages.contains(words),
            "{}",
            front.messages
        );
    }
}

/// `gcc -c` and check 5's front end of `src` preprocessed, each in the
/// jail; `None`: its preprocessing failed.
fn gcc_c_and_its_front_end(src: &[u8], limits: JailLimits) -> Option<(GccRun, GccRun)> {
    let jail = Jail::new().unwrap();
    let gcc = Gcc::new(&jail, limits);
    gcc.put(SOURCE_NAME, src).unwrap();
    let pre = gcc
        .preprocess(SOURCE_NAME, PREPROCESSED_NAME, GccStart::Cc1)
        .unwrap();
    if !pre.ok {
        return None;
    }
    let object = gcc
        .compile(Input::Preprocessed, PREPROCESSED_NAME, "strategy.o")
        .unwrap();
    Some((object, gcc.check(Messages::All).unwrap()))
}

/// Every C source of the tests and of the runtime (at any depth).
fn test_c_sources() -> Vec<std::path::PathBuf> {
    let mut sources = Vec::new();
    for dir in ["tests/data/sources", "tests/data/strategies", "src/runtime"] {
        let walk = walkdir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir));
        sources.extend(
            walk.into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "c")),
        );
    }
    sources
}

/// Whether a [`ReportSummary`] holds the compiler's output (the same
/// compiler started two ways) or not (two compilers: their words differ).
#[derive(Clone, Copy)]
enum CompilerOutput {
    Compared,
    Ignored,
}

/// What of a compile's report two ways of building a source must give
/// alike: the verdicts, the diagnostics (check, line, words), the memory
/// figure, and the compiler's output where it is compared.
#[derive(Debug, PartialEq)]
struct ReportSummary {
    accepted: bool,
    verdicts: Vec<String>,
    diagnostics: Vec<String>,
    image_bytes: Option<u64>,
    compiler_output: Option<String>,
}

fn report_summary(cfg: &CompileConfig, src: &[u8], output: CompilerOutput) -> ReportSummary {
    let m = compile_measured(src, cfg, &ModuleCache::new(1 << 20)).unwrap();
    summary_of(&m.outcome, output)
}

/// [`report_summary`] of an outcome at hand.
fn summary_of(outcome: &Outcome, output: CompilerOutput) -> ReportSummary {
    let r = outcome.report();
    ReportSummary {
        accepted: outcome.accepted(),
        verdicts: r.checks.iter().map(|c| format!("{c:?}")).collect(),
        diagnostics: r
            .diagnostics
            .iter()
            .map(|d| format!("{:?} {:?} {}", d.check, d.line, d.message))
            .collect(),
        image_bytes: r.image_bytes,
        compiler_output: match output {
            CompilerOutput::Compared => Some(r.compiler_output.clone()),
            CompilerOutput::Ignored => None,
        },
    }
}

/// The reports of many sources by two ways of building them, compared.
#[derive(Default)]
struct Comparison {
    compared: usize,
    accepted: usize,
    differ: Vec<String>,
}

impl Comparison {
    /// `path`'s reports as a submission and locally, by the first way
    /// (`want`) and the second (`got`); `names` name them.
    fn profiles(
        &mut self,
        path: &std::path::Path,
        names: [&str; 2],
        want: impl Fn(Profile) -> ReportSummary,
        got: impl Fn(Profile) -> ReportSummary,
    ) {
        for profile in [Profile::Submission, Profile::Local] {
            let (want, got) = (want(profile), got(profile));
            self.compared += 1;
            self.accepted += usize::from(want.accepted);
            if got != want {
                self.differ.push(format!(
                    "{} ({profile:?}):\n  {}: {want:?}\n  {}: {got:?}",
                    path.display(),
                    names[0],
                    names[1]
                ));
            }
        }
    }

    /// No report differs, and enough sources were compared and accepted
    /// (the test sources did not go missing).
    fn assert_alike(&self) {
        assert!(self.differ.is_empty(), "{}", self.differ.join("\n"));
        assert!(
            self.compared >= 60 && self.accepted >= 10,
            "{} compared, {} accepted",
            self.compared,
            self.accepted
        );
    }
}

/// The files under `dir`, at any depth.
fn walkdir(dir: std::path::PathBuf) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walkdir(p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Behind the one text, clang's object is checked too: a constructor or a
/// direct import of the referee's functions is refused there as well.
#[test]
fn clangs_object_may_not_import_the_referee_or_run_constructors() {
    let tools = Toolchain::find().expect("clang, wasm-ld and the wasm32 builtins");
    let object = |src: &str| {
        let jail = Jail::new().unwrap();
        let gcc = Gcc::new(&jail, JailLimits::default());
        gcc.put(SOURCE_NAME, src.as_bytes()).unwrap();
        let run = tools
            .compile(&gcc, Input::Source, SOURCE_NAME, "s.o")
            .unwrap();
        assert!(run.ok, "{}", run.messages);
        gcc.get("s.o").unwrap()
    };
    assert_eq!(check_object(&object(HONEST)), Vec::<String>::new());
    let ctor = object(&format!(
        "__attribute__((constructor)) static void early(void) {{ make_throw(5); }}\n{HONEST}"
    ));
    assert!(
        check_object(&ctor)
            .iter()
            .any(|p| p.contains("constructors")),
        "{:?}",
        check_object(&ctor)
    );
    let import = object(
        "__attribute__((import_module(\"knobeln\"), import_name(\"seed\"))) long long peek(void);\n\
         main() { for (;;) make_throw((int)peek() & 1023); }\n",
    );
    assert!(
        check_object(&import)
            .iter()
            .any(|p| p.contains("`knobeln.seed` directly")),
        "{:?}",
        check_object(&import)
    );
}

/// Reproducible builds: `__DATE__`, `__TIME__` and `__TIMESTAMP__`
/// (written out or pasted) say 1 January 1970, so the same source gives the
/// same module bytes whenever it is built.
#[test]
fn the_same_source_builds_the_same_module_at_any_time() {
    let src =
        "#define CAT(a,b) a##b\nstatic const char *volatile when = __DATE__ \" \" __TIME__ \" \" \
               __TIMESTAMP__ \" \" __FILE__;\nstatic const char *volatile also = CAT(__TI,ME__);\n\
               main() { int h = 0; const char *p;\n for (p = when; *p; p++) h = h * 31 + *p;\n \
               for (p = also; *p; p++) h = h * 31 + *p;\n for (;;) make_throw(1 + (h & 4095)); }\n";
    let first = module_of(src);
    std::thread::sleep(Duration::from_millis(1100));
    let second = module_of(src);
    assert_eq!(first, second, "two builds a second apart differ");
    let text = String::from_utf8_lossy(&first);
    assert!(
        text.contains("Jan  1 1970 00:00:00 Thu Jan  1 00:00:00 1970 strategy.c"),
        "the module's strings: {text:?}"
    );
}

/// A process that compiles more than once runs the zig toolchain and
/// gcc's `cc1` from their read-only copies in huge pages
/// (`knobeln::sandbox::held`) from its second compile that reaches clang
/// on, and builds there
/// what it builds from the disk: a strategy's module, byte for byte, built
/// with the copy and with the program reached by another path (which no
/// run mounts the copy over, so it is read from the disk); a compile whose
/// `cc1` runs from the copy gives the report and the module of one whose
/// gcc starts it through the driver (from the disk), for a strategy gcc
/// warns about too.
#[test]
fn the_toolchain_held_in_huge_pages_builds_the_module_the_disk_builds() {
    use knobeln::sandbox::held;
    use knobeln::toolchain::wasm::ZIG;
    let held_tools = Toolchain::find().expect("a toolchain");
    assert_eq!(held_tools.llvm, Llvm::Zig, "bash deploy/zig.sh install");
    let src = "main() { int i = 0; for (;;) make_throw(1 + (i++ * 7) % 100); }\n";
    let twice = "main() { int i = 3; for (;;) make_throw(1 + (i++ * 11) % 100); }\n";
    let _ = module_of(src);
    let _ = module_of(twice);
    assert!(
        held::wait_for_holds(Duration::from_secs(120)),
        "the copy is slow"
    );
    let held_now = held::held_programs();
    assert!(
        held_now
            .iter()
            .any(|(p, bytes)| p == Path::new(ZIG) && *bytes >= 100 << 20),
        "after two compiles: {held_now:?}"
    );
    // gcc -E's and gcc -c's `cc1` are one program by one path, the path a
    // run's program must be for the jail to mount the copy over it.
    let cc1 = knobeln::toolchain::gcc::cc1_programs();
    assert_eq!(cc1.len(), 1, "{cc1:?}");
    assert!(
        held_now
            .iter()
            .any(|(p, bytes)| *p == cc1[0] && *bytes >= 10 << 20),
        "after two compiles: {held_now:?}"
    );
    let warned =
        "int big = 2147483647 + 1;\nmain() { int i = big; for (;;) make_throw(1 + (i & 63)); }\n";
    let by_start = |start: GccStart, source: &str| {
        let cfg = CompileConfig {
            profile: Profile::Local,
            gcc_start: start,
            ..CompileConfig::default()
        };
        let outcome = compile_measured(source.as_bytes(), &cfg, &ModuleCache::new(1 << 20))
            .unwrap()
            .outcome;
        let report = outcome.report().clone();
        match outcome {
            Outcome::Accepted { binary, .. } => {
                (binary, report.diagnostics, report.compiler_output)
            }
            Outcome::Rejected { report } => panic!("rejected: {:?}", report.diagnostics),
        }
    };
    assert!(
        by_start(GccStart::Cc1, warned).2.contains("overflow"),
        "gcc warns"
    );
    for source in [src, warned] {
        assert_eq!(
            by_start(GccStart::Cc1, source),
            by_start(GccStart::Driver, source),
            "{source}"
        );
    }
    let dir = Path::new(ZIG).parent().unwrap();
    let by_another_path = dir.join("..").join(dir.file_name().unwrap()).join("zig");
    let from_disk = Toolchain {
        clang: by_another_path.clone(),
        wasm_ld: by_another_path,
        ..held_tools.clone()
    };
    let build = |tools: &Toolchain| {
        let cfg = CompileConfig {
            profile: Profile::Local,
            toolchain: Some(tools.clone()),
            ..CompileConfig::default()
        };
        match compile_measured(src.as_bytes(), &cfg, &ModuleCache::new(1 << 20))
            .unwrap()
            .outcome
        {
            Outcome::Accepted { binary, .. } => binary,
            Outcome::Rejected { report } => panic!("rejected: {:?}", report.diagnostics),
        }
    };
    assert_eq!(build(&held_tools), build(&from_disk));
}

/// The engine takes the functions every module shares (the runtime's,
/// the trampolines) from its cache of compiled functions, filled from the
/// example strategy alone, and the code is the code compiled anew: a
/// strategy's module (with functions of its own before and after the
/// runtime's) serializes to the same bytes as by an engine without the
/// cache, and Cranelift's own check of every function taken (compiled
/// again and compared) passes. A participant's module leaves nothing in
/// the cache.
#[test]
fn a_module_compiled_with_functions_from_the_cache_is_the_module_compiled_anew() {
    use knobeln::wasm::{
        config_with, keep_functions_with, CompiledFunctions, FunctionCache, FUNCTION_CACHE_BYTES,
    };
    use std::sync::Arc;
    let example = knobeln::toolchain::compile::example_module().unwrap();
    let strategy = module_of(
        "int n;\nint twice(int x) { return 2 * x; }\nint next(void) { n = twice(n) + 3; \
         return n % 100 + 1; }\nmain() { for (;;) make_throw(next()); }\n",
    );
    let kept = Arc::new(CompiledFunctions::new(FUNCTION_CACHE_BYTES));
    // Both engines with Cranelift's check of every function taken from a
    // cache (a setting that changes no code, and is part of what a module
    // serializes).
    let engine = |cache| {
        let mut config = config_with(cache).unwrap();
        // SAFETY: a Cranelift setting that only adds a check.
        unsafe {
            config.cranelift_flag_enable("enable_incremental_compilation_cache_checks");
        }
        wasmtime::Engine::new(&config).unwrap()
    };
    let cached = engine(FunctionCache::Kept(kept.clone()));
    // A participant's module compiled first keeps nothing.
    wasmtime::Module::new(&cached, &strategy).unwrap();
    assert!(kept.is_empty(), "a participant's functions were kept");
    keep_functions_with(&cached, &example).unwrap();
    assert!(!kept.is_empty(), "the example kept nothing");
    let (len, hits) = (kept.len(), kept.hits());
    let from_cache = wasmtime::Module::new(&cached, &strategy)
        .unwrap()
        .serialize()
        .unwrap();
    assert!(kept.hits() > hits, "no function came from the cache");
    assert_eq!(kept.len(), len, "the participant's functions were kept");
    let anew = engine(FunctionCache::None);
    let compiled_anew = wasmtime::Module::new(&anew, &strategy)
        .unwrap()
        .serialize()
        .unwrap();
    assert!(from_cache == compiled_anew, "the code differs");
}

/// A strategy that burns `per_throw` iterations of a volatile loop before
/// each throw.
fn burner(per_throw: u64) -> Strategy {
    install(&module_of(&format!(
        "main() {{ volatile long i; for (;;) {{ for (i = 0; i < {per_throw}; i++); \
         make_throw(100); }} }}\n"
    )))
}

/// Only fuel decides a game: the watchdog that ends a strategy running
/// past its wall-clock budget is an engine fault (the game is played
/// again), never a failure of either player, whoever runs when it fires.
#[test]
fn the_watchdog_is_an_engine_fault_never_a_players_failure() {
    let endless = install(&module_of(
        "main() { volatile int x = 0; make_throw(100); for (;;) x++; }\n",
    ));
    let honest = install(&module_of(HONEST));
    let cfg = config(20, u64::MAX / 2, Duration::from_millis(300));
    for (p, q) in [(&endless, &honest), (&honest, &endless)] {
        let result = Referee::new(cfg).play_loaded([&p.loaded, &q.loaded], GameSeeds::public(1));
        match result {
            Err(RefereeError::Engine(why)) => assert!(why.contains("watchdog"), "{why}"),
            other => panic!("the watchdog must be an engine fault: {other:?}"),
        }
    }
}

/// Each player's watchdog counts its own running time from its own start:
/// two strategies that each need most of the budget both finish, though
/// the game takes longer than the budget (before, the first player's
/// clock ran through the other's turns as well).
///
/// The watchdog's clock is the wall (its ticks), so how long a burner runs
/// by it depends on the machine's load, which changes between two games.
/// Nothing here compares a wall time measured in one game with another's:
/// the burner is sized by its CPU time (what the load does not change, and
/// never more than its wall time), and the budget of the game of two
/// burners is searched until a game finished although it took longer than
/// its budget (and the watchdog's slack of two ticks): what a clock of the
/// whole game can never give, at any load. A try the watchdog ended (the
/// machine slowed down) raises the budget, a game within it lowers it.
#[test]
fn each_players_watchdog_counts_its_own_running_time() {
    let honest = install(&module_of(HONEST));
    // A burner that runs at least 0.6 s of CPU in a game of 20 throws
    // (many ticks of the watchdog), measured here.
    let generous = config(20, u64::MAX / 2, Duration::from_secs(600));
    let mut per_throw = 4_000_000;
    let (heavy, cpu) = loop {
        let heavy = burner(per_throw);
        let before = thread_cpu();
        let rec = play(&generous, &heavy, &honest, 1);
        let cpu = thread_cpu() - before;
        assert!(rec.failures.is_empty(), "{rec:?}");
        if cpu > Duration::from_millis(600) {
            break (heavy, cpu);
        }
        per_throw *= 2;
    };
    let slack = EPOCH_TICK * 3;
    let mut budget = cpu.mul_f64(1.5);
    let mut tries = Vec::new();
    loop {
        assert!(
            tries.len() < 40,
            "no game of two burners finished past its budget: {tries:?}"
        );
        let cfg = config(20, u64::MAX / 2, budget);
        let started = Instant::now();
        let result =
            Referee::new(cfg).play_loaded([&heavy.loaded, &heavy.loaded], GameSeeds::public(2));
        let took = started.elapsed();
        tries.push((budget, took, result.is_ok()));
        match result {
            Ok(rec) => {
                assert!(rec.failures.is_empty(), "{rec:?}");
                assert_eq!(rec.throws.len(), 20);
                if took > budget + slack {
                    break;
                }
                budget = budget.mul_f64(0.8);
            }
            Err(RefereeError::Engine(why)) if why.contains("watchdog") => {
                budget = budget.mul_f64(1.25)
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    eprintln!("one burner: {cpu:?} of CPU; (budget, the game's time, finished): {tries:?}");
    // The budget is enforced: a third of one burner's CPU time is too
    // little, at any load (its running time is never less than its CPU).
    let tight = config(20, u64::MAX / 2, cpu / 3);
    for (p, q) in [(&heavy, &honest), (&honest, &heavy)] {
        let result = Referee::new(tight).play_loaded([&p.loaded, &q.loaded], GameSeeds::public(3));
        assert!(
            matches!(result, Err(RefereeError::Engine(ref why)) if why.contains("watchdog")),
            "{result:?}"
        );
    }
}

/// A call of the referee's `seed` costs [`HOST_CALL_FUEL`]: a module
/// that calls it in a loop (a checked strategy cannot; a module of an
/// older version could) runs out of fuel by the calls' weight.
#[test]
fn calls_of_the_referee_cost_their_weight_in_fuel() {
    let caller = install(&crate::common::build_unchecked(
        b"__attribute__((import_module(\"knobeln\"), import_name(\"seed\"))) long long s(void);\n\
          main() { volatile long long x = 0; int i; for (i = 0; i < 50; i++) x += s();\n\
          for (;;) make_throw(100); }\n",
    ));
    let honest = install(&module_of(HONEST));
    let enough = config(20, 60 * HOST_CALL_FUEL, Duration::from_secs(30));
    assert!(play(&enough, &caller, &honest, 1).failures.is_empty());
    let short = config(20, 40 * HOST_CALL_FUEL, Duration::from_secs(30));
    let rec = play(&short, &caller, &honest, 1);
    assert_eq!(rec.failures.len(), 1, "{rec:?}");
    assert_eq!((rec.failures[0].player, rec.failures[0].throw), (0, 1));
    assert!(rec.failures[0].reason.contains("CPU time"), "{rec:?}");
}

/// A game the engine keeps failing to referee stops the contest, and that
/// reaches the organizer: `knobeln status` says so and the digest reports
/// it once, while `serve` resumes the contest at every cycle (here the
/// watchdog is set far below what a strategy needs, so every try of the
/// burner's first game is an engine fault). No game is counted against
/// anybody.
#[test]
fn a_contest_stopped_by_engine_faults_reaches_the_organizer() {
    use crate::mail_spool::{auth_of, registration, submission, Contest};
    use std::process::{Command, Stdio};
    const BIN: &str = env!("CARGO_BIN_EXE_knobeln");
    // Fuel far beyond the burner's loop: the watchdog, not the fuel, ends
    // it, whatever the machine's speed (with the default fuel the two
    // raced: a fast run spent the fuel before the watchdog's second tick).
    let c = Contest::new("[rules]\nthrows = 20\nwall_secs = 0.05\nfuel = 1000000000000\n");
    let teams = ["honest_team", "burner_team"];
    let addr = |t: &str| format!("{t}@participants.example");
    let regs: Vec<_> = teams
        .iter()
        .map(|t| {
            c.mail(
                &addr(t),
                "registration for KNOBELN",
                &registration(&addr(t), t, "Uni, City, Land"),
                "",
            )
        })
        .collect();
    assert!(c
        .ingest(&regs.iter().map(|p| p.as_path()).collect::<Vec<_>>())
        .status
        .success());
    let acks = c.replies();
    let compiles: Vec<_> = teams
        .iter()
        .map(|t| {
            let ack = acks.iter().find(|r| r.to == vec![addr(t)]).unwrap();
            let mut src = submission(t, &auth_of(ack));
            if *t == "burner_team" {
                src = src.replace(
                    "main() { for (;;) make_throw(100); }",
                    "main() { volatile long i; for (i = 0; i < 4000000000L; i++); \
                     for (;;) make_throw(100); }",
                );
            }
            c.mail(&addr(t), "please compile", &src, "")
        })
        .collect();
    assert!(c
        .ingest(&compiles.iter().map(|p| p.as_path()).collect::<Vec<_>>())
        .status
        .success());
    let accepted = c
        .replies()
        .iter()
        .filter(|r| r.subject.contains("compilation report: accepted"))
        .count();
    assert_eq!(accepted, 2);
    let mut cfg = std::fs::read_to_string(c.config()).unwrap();
    cfg.push_str(
        "[timeline]\nregistration_start = \"2000-01-01T00:00:00Z\"\ncompile_start = \
         \"2000-01-01T00:00:00Z\"\nregistration_deadline = \"2000-01-01T12:00:00Z\"\n\
         contest_start = \"2000-01-02T00:00:00Z\"\n",
    );
    std::fs::write(c.config(), cfg).unwrap();
    let mut serve = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(c.config())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let digest = loop {
        if let Some(d) = c
            .replies()
            .into_iter()
            .find(|r| r.subject.contains("the contest stopped"))
        {
            break d;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no digest about the stopped contest"
        );
        assert!(serve.try_wait().unwrap().is_none(), "serve died");
        std::thread::sleep(Duration::from_millis(200));
    };
    let status = Command::new(BIN)
        .args(["status", "--config"])
        .arg(c.config())
        .output()
        .unwrap();
    Command::new("kill")
        .arg("-TERM")
        .arg(serve.id().to_string())
        .status()
        .unwrap();
    assert!(serve.wait().unwrap().success());
    let body = digest.body.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        body.contains("could not be refereed (3 tries)") && body.contains("watchdog"),
        "{body}"
    );
    assert!(body.contains("never counted against a team"), "{body}");
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("the contest STOPPED"), "{status}");
    // One digest for it, however often serve tried again meanwhile.
    let digests = c
        .replies()
        .iter()
        .filter(|r| r.subject.contains("the contest stopped"))
        .count();
    assert_eq!(digests, 1);
    // Nobody failed a game.
    let db = rusqlite::Connection::open(c.config().with_file_name("k.db")).unwrap();
    let failed: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM games WHERE failures != '[]'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let failures: Vec<String> = db
        .prepare("SELECT failures FROM games WHERE failures != '[]'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(failed, 0, "{failures:?}");
}

/// `gcc -E` started as its `cc1` (without the driver, [`GccStart::Cc1`])
/// gives every C source of the tests the report the driver gives: the
/// same verdicts, diagnostics, memory figure and compiler output, and
/// the same preprocessed text, byte for byte (the text the checks read and
/// both compilers build, where it is read: where the run failed, it is
/// not). Sources that end `cc1` by a signal or a limit
/// (the macro bombs among them) are run again through the driver: their
/// reports are the driver's by construction, and compared here too.
#[test]
fn cc1_directly_gives_every_test_source_the_report_of_the_driver() {
    let far_wall = || JailLimits {
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    let mut sources = test_c_sources();
    sources.sort();
    let report = |start: GccStart, profile: Profile, src: &[u8]| {
        // The tools' wall far away: a source at the CPU limit, run beside
        // the rest of the suite, must meet that limit, not the wall.
        let cfg = CompileConfig {
            profile,
            gcc_start: start,
            jail: far_wall(),
            ..CompileConfig::default()
        };
        report_summary(&cfg, src, CompilerOutput::Compared)
    };
    let preprocessed = |start: GccStart, src: &[u8]| {
        let jail = Jail::new().unwrap();
        let gcc = Gcc::new(&jail, far_wall());
        gcc.put(SOURCE_NAME, src).unwrap();
        let run = gcc
            .preprocess(SOURCE_NAME, PREPROCESSED_NAME, start)
            .unwrap();
        // A failed run's text is never read (and where the kernel killed
        // it at the jail's memory, its length is the moment's).
        let text = if run.ok {
            gcc.get(PREPROCESSED_NAME).unwrap()
        } else {
            Vec::new()
        };
        (run.ok, run.messages, text)
    };
    let mut reports = Comparison::default();
    for path in &sources {
        let src = std::fs::read(path).unwrap();
        let (want, got) = (
            preprocessed(GccStart::Driver, &src),
            preprocessed(GccStart::Cc1, &src),
        );
        if got != want {
            reports.differ.push(format!(
                "{}: the preprocessed text: the driver's {:?} {:?} {} bytes, cc1's {:?} {:?} {} bytes",
                path.display(),
                want.0,
                want.1,
                want.2.len(),
                got.0,
                got.1,
                got.2.len()
            ));
        }
        reports.profiles(
            path,
            ["the driver's", "cc1's"],
            |profile| report(GccStart::Driver, profile, &src),
            |profile| report(GccStart::Cc1, profile, &src),
        );
    }
    reports.assert_alike();

    // cc1 stopped by a limit (its output past the jail's file size, the
    // kernel's SIGXFSZ): the report is the driver's, words and all.
    let bomb = b"#define A x x x x x x x x x x\n#define B A A A A A A A A A A\n\
        #define C B B B B B B B B B B\n#define D C C C C C C C C C C\n\
        #define E D D D D D D D D D D\n#define F E E E E E E E E E E\nF F F F F F F F F F\n";
    let small = |start: GccStart| {
        let cfg = CompileConfig {
            profile: Profile::Local,
            gcc_start: start,
            jail: JailLimits {
                file_size: 1 << 20,
                ..JailLimits::default()
            },
            ..CompileConfig::default()
        };
        let m = compile_measured(bomb, &cfg, &ModuleCache::new(1 << 20)).unwrap();
        let r = m.outcome.report().clone();
        (
            format!("{:?} {:?}", r.diagnostics, r.checks),
            r.compiler_output,
        )
    };
    let (driver, cc1) = (small(GccStart::Driver), small(GccStart::Cc1));
    assert_eq!(driver, cc1);
    assert!(
        cc1.1
            .contains("File size limit exceeded signal terminated program cc1"),
        "{}",
        cc1.1
    );
}

/// wasm-ld is given the builtins archive only where the strategy's object
/// or the runtime's calls a helper it defines ([`BuiltinsLink::WhereCalled`]):
/// for every C source of the tests, as a submission and locally, the same
/// report (verdicts, diagnostics, memory figure, the compilers' output)
/// and the same module, byte for byte, as with the archive on every link.
/// A program whose `long double` arithmetic makes clang call compiler-rt
/// (`__multf3`, …) still gets the archive: it links and plays alike.
#[test]
fn the_builtins_archive_left_off_where_nothing_calls_it_gives_the_same_module() {
    let mut sources = test_c_sources();
    sources.sort();
    let long_double = b"main() { volatile long double x = next_random(1, 9); x = x * x / 3; \
        for (;;) make_throw(100 + (int)x); }\n";
    let outcome = |builtins: BuiltinsLink, profile: Profile, src: &[u8]| {
        let cfg = CompileConfig {
            profile,
            builtins,
            ..CompileConfig::default()
        };
        let outcome = compile_measured(src, &cfg, &ModuleCache::new(1 << 20))
            .unwrap()
            .outcome;
        let summary = summary_of(&outcome, CompilerOutput::Compared);
        let module = match outcome {
            Outcome::Accepted { binary, .. } => Some(binary),
            Outcome::Rejected { .. } => None,
        };
        (summary, module)
    };
    let mut differ = Vec::new();
    let (mut compared, mut accepted) = (0, 0);
    let mut sources: Vec<(String, Vec<u8>)> = sources
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read(p).unwrap()))
        .collect();
    sources.push(("long double".into(), long_double.to_vec()));
    for (name, src) in &sources {
        for profile in [Profile::Submission, Profile::Local] {
            let want = outcome(BuiltinsLink::Always, profile, src);
            let got = outcome(BuiltinsLink::WhereCalled, profile, src);
            compared += 1;
            accepted += usize::from(want.1.is_some());
            if got != want {
                differ.push(format!(
                    "{name} ({profile:?}):\n  always: {:?} module {:?}\n  where called: {:?} \
                     module {:?}",
                    want.0,
                    want.1.as_ref().map(Vec::len),
                    got.0,
                    got.1.as_ref().map(Vec::len)
                ));
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(compared >= 60 && accepted >= 10, "{compared} {accepted}");
    let (_, module) = outcome(BuiltinsLink::WhereCalled, Profile::Local, long_double);
    assert!(module.is_some(), "the long double program links");
}

/// The compile's `gcc -E` command through the driver, and the `cc1`
/// command the driver names for it.
fn gcc_e_by_driver_and_by_cc1() -> (Vec<&'static str>, Vec<&'static str>) {
    use knobeln::toolchain::gcc::{cc1_preprocess_argv, preprocess_command};
    let driver = preprocess_command();
    let cc1 = cc1_preprocess_argv(&driver)
        .expect("the compile's own gcc -E command has a cc1 start")
        .iter()
        .map(String::as_str)
        .collect();
    (driver, cc1)
}

/// `gcc -E`'s `cc1` started directly predefines exactly the driver's
/// macros and searches exactly its include folders (red team E14): the
/// checks read a text that the other start would have made too, whatever
/// the source asks of `__GNUC__`, `__x86_64__`, `__OPTIMIZE__`, `__PIC__`,
/// `__STDC_HOSTED__` and the rest (a source cannot list them, so `-dM`
/// lists them here, of an empty source, each start in the jail), and
/// `-v` names the same folders (none: `-nostdinc`). The driver's command
/// is the compile's own (`cc1_preprocess_argv` answers only that one).
#[test]
fn cc1_directly_predefines_and_searches_what_the_driver_does() {
    let (driver, cc1) = gcc_e_by_driver_and_by_cc1();
    let run = |argv: &[&str], extra: &str| {
        let jail = Jail::new().unwrap();
        let gcc = Gcc::new(&jail, JailLimits::default());
        gcc.put(SOURCE_NAME, b"").unwrap();
        let mut argv = argv.to_vec();
        argv.push(extra);
        let out = jail.run(&argv, &JailLimits::default()).unwrap();
        assert!(out.success(), "{argv:?}: {}", out.output);
        (
            String::from_utf8(gcc.get(PREPROCESSED_NAME).unwrap()).unwrap(),
            out.output,
        )
    };
    let (by_driver, by_cc1) = (run(&driver, "-dM").0, run(&cc1, "-dM").0);
    assert!(by_cc1.lines().count() > 300, "{by_cc1}");
    assert!(by_cc1.contains("#define __x86_64__ 1"), "{by_cc1}");
    assert_eq!(by_driver, by_cc1, "the predefined macros differ");
    // The include search: the lines between gcc's two markers.
    let folders = |messages: &str| -> Vec<String> {
        messages
            .lines()
            .skip_while(|l| !l.starts_with("#include \"...\" search starts here"))
            .take_while(|l| !l.starts_with("End of search list"))
            .map(str::to_string)
            .collect()
    };
    let (by_driver, by_cc1) = (run(&driver, "-v").1, run(&cc1, "-v").1);
    assert!(!folders(&by_cc1).is_empty(), "{by_cc1}");
    assert_eq!(
        folders(&by_driver),
        folders(&by_cc1),
        "{by_driver}\n---\n{by_cc1}"
    );
}

/// The file size limit stops the compile's `gcc -E` by its signal (red
/// team E14): through the driver, the process that writes the
/// preprocessed text is the driver's child, which the kernel's `SIGXFSZ`
/// ends at its first write past the limit. `cc1` started directly
/// (`GccStart::Cc1`, the compile's) is stopped the same way: the jail's first process is its init, and `cc1` an ordinary
/// process of the namespace (before, it was the first process, which the
/// kernel gives no signal of default action: it wrote its limit's worth,
/// went on expanding the macro bomb with every write refused and was ended
/// by the jail's memory, 1.7 s of CPU against 0.09 s; this test's last
/// assertion failed then).
#[test]
fn the_compiles_gcc_e_is_stopped_by_the_file_size_limit() {
    use knobeln::toolchain::gcc::ToolLimit;
    let (driver, cc1) = gcc_e_by_driver_and_by_cc1();
    let bomb = b"#define A x x x x x x x x x x\n#define B A A A A A A A A A A\n\
        #define C B B B B B B B B B B\n#define D C C C C C C C C C C\n\
        #define E D D D D D D D D D D\n#define F E E E E E E E E E E\nF F F F F F F F F F\n";
    fn gcc_of<'j>(jail: &'j Jail, bomb: &[u8]) -> Gcc<'j> {
        let limits = JailLimits {
            file_size: 1 << 20,
            wall: crate::common::TEST_JAIL_WALL,
            ..JailLimits::default()
        };
        let gcc = Gcc::new(jail, limits);
        gcc.put(SOURCE_NAME, bomb).unwrap();
        gcc
    }
    let stopped_by = |argv: &[&str]| {
        let jail = Jail::new().unwrap();
        let run = gcc_of(&jail, bomb).run_tool("gcc", argv).unwrap();
        (run.limit_hit.map(|l| l.limit), run.messages)
    };
    // Through the driver: its `cc1` ended by the signal, in the driver's
    // words (the driver's start of the compile's `gcc -E`, whose end is
    // read from the driver's own line).
    assert_eq!(driver, knobeln::toolchain::gcc::preprocess_command());
    let jail = Jail::new().unwrap();
    let run = gcc_of(&jail, bomb)
        .preprocess(SOURCE_NAME, PREPROCESSED_NAME, GccStart::Driver)
        .unwrap();
    let (limit, messages) = (run.limit_hit.map(|l| l.limit), run.messages);
    assert_eq!(limit, Some(ToolLimit::OutputSize), "{messages}");
    assert!(
        messages.contains("File size limit exceeded signal terminated program cc1"),
        "{messages}"
    );
    // `cc1` as the jail's command, the compile's start: `SIGXFSZ` too (the
    // init is PID 1).
    assert_eq!(GccStart::default(), GccStart::Cc1);
    let (limit, messages) = stopped_by(&cc1);
    assert_eq!(limit, Some(ToolLimit::OutputSize), "{messages}");
    // The compile's `gcc -E` as a whole: stopped by the file size, told in
    // the driver's words (a `cc1` run ended by a signal runs again through
    // the driver).
    let jail = Jail::new().unwrap();
    let run = gcc_of(&jail, bomb)
        .preprocess(SOURCE_NAME, PREPROCESSED_NAME, GccStart::default())
        .unwrap();
    assert_eq!(
        run.limit_hit.map(|l| l.limit),
        Some(ToolLimit::OutputSize),
        "{}",
        run.messages
    );
    assert!(
        run.messages
            .contains("File size limit exceeded signal terminated program cc1"),
        "{}",
        run.messages
    );
}

/// `gcc -c` of `src` (as [`SOURCE_NAME`], into `strategy.o`) under
/// `limits`, started as `start`, in a jail of its own, returned beside the
/// run (its work folder holds what the run left).
fn compiled(limits: JailLimits, start: GccStart, src: &str) -> (Jail, GccRun) {
    let jail = Jail::new().unwrap();
    let gcc = Gcc::new(&jail, limits).started(start);
    gcc.put(SOURCE_NAME, src.as_bytes()).unwrap();
    let run = gcc
        .compile(Input::Source, SOURCE_NAME, "strategy.o")
        .unwrap();
    (jail, run)
}

/// A program whose optimisation takes `cc1` more than a second of CPU
/// (2,000 small functions with a loop each, at `-O2`).
const CC1_PAST_A_SECOND: &str = "#define G(n) int f##n(int *a) { int s = 0; \
    for (int i = 0; i < 64; i++) s += a[i] * i + (s >> 3); return s; }\n\
    #define F(n) G(n)\n\
    #define A F(__COUNTER__) F(__COUNTER__) F(__COUNTER__) F(__COUNTER__) \
    F(__COUNTER__) F(__COUNTER__) F(__COUNTER__) F(__COUNTER__) F(__COUNTER__) \
    F(__COUNTER__)\n#define B A A A A A A A A A A\n#define C B B B B B B B B B B\n\
    C C\n";

/// `cc1` started by gcc's driver ([`GccStart::Driver`]: a command whose
/// programs the driver does not name plainly, and the run again after a
/// program's internal error) that meets the CPU limit for real gives the
/// CPU verdict, in the driver's words ("gcc: internal compiler error: CPU
/// time limit exceeded signal terminated program cc1", exit 4), the same
/// verdict and report as `cc1` started directly; so does one whose
/// program's warnings fill the output cap (64 KiB) before it, and one
/// that meets the file size limit after them. Before, the driver's line
/// came after the cap and was dropped unread: through the driver those
/// programs failed with no limit ("gcc failed"), at the CPU and at the
/// file size, where `cc1` started directly was stopped at its limit. The
/// driver's line is now read from the end of its output kept past the cap
/// ([`knobeln::sandbox::jail::JailOutput::output_tail`]). The driver itself
/// meeting the limit is its own `SIGXCPU`, read like any program's wait
/// status; it only waits for its programs, so no source can make it.
#[test]
fn cc1_under_gccs_driver_meets_its_cpu_limit_as_cc1_started_directly() {
    use knobeln::toolchain::gcc::ToolLimit;
    // 1,000 warnings, about 370 KB of messages, before `cc1` optimises.
    let flood = "#define W2(n) int *p##n = 1;\n#define W(n) W2(n)\n#define V W(__COUNTER__)\n\
                 #define X V V V V V V V V V V\n#define Y X X X X X X X X X X\n\
                 Y Y Y Y Y Y Y Y Y Y\n";
    let ints = "#define A 1,1,1,1,1,1,1,1,1,1\n#define B A,A,A,A,A,A,A,A,A,A\n\
                #define C B,B,B,B,B,B,B,B,B,B\n#define D C,C,C,C,C,C,C,C,C,C\n\
                #define E D,D,D,D,D,D,D,D,D,D\nint x[] = {E,E,E};\n";
    let brief = JailLimits {
        cpu_secs: 1,
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    let small = JailLimits {
        file_size: 1 << 20,
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    for (what, src, limits, limit, sentence) in [
        (
            "cc1's CPU",
            CC1_PAST_A_SECOND.to_string(),
            brief,
            ToolLimit::Cpu,
            "gcc used more than 1 s of CPU time and was stopped",
        ),
        (
            "cc1's CPU after the cap",
            format!("{flood}{CC1_PAST_A_SECOND}"),
            brief,
            ToolLimit::Cpu,
            "gcc used more than 1 s of CPU time and was stopped",
        ),
        (
            "cc1's text after the cap",
            format!("{flood}{ints}"),
            small,
            ToolLimit::OutputSize,
            "gcc's output grew beyond 1 MB and was stopped (a macro that expands without end?)",
        ),
    ] {
        let run = |start: GccStart| {
            let (_, run) = compiled(limits, start, &src);
            (run.ok, run.limit_hit, run.messages)
        };
        let driver = run(GccStart::Driver);
        let hit = driver.1.as_ref();
        assert_eq!(hit.map(|l| l.limit), Some(limit), "{what}: {}", driver.2);
        assert_eq!(hit.map(|l| l.sentence.as_str()), Some(sentence), "{what}");
        assert!(!driver.0, "{what}");
        if what == "cc1's CPU" {
            assert!(
                driver.2.contains(
                    "gcc: internal compiler error: CPU time limit exceeded signal terminated \
                     program cc1"
                ),
                "{what}: the driver's words: {}",
                driver.2
            );
        } else {
            assert!(driver.2.len() >= 64 << 10, "{what}: the cap is full");
        }
        assert_eq!(
            driver,
            run(GccStart::Cc1),
            "{what}: the direct start's report"
        );
    }
}

/// `gcc -E` (the preprocessing that every check and both compilers read)
/// that meets the CPU limit gives the CPU verdict, started directly
/// ([`GccStart::Cc1`], the compile's: `cc1 -E`, judged by its own
/// `SIGXCPU`) or through gcc's driver (its line on its child's signal),
/// with the same report either way. The source includes itself twice at
/// each of 17 levels (2^18 inclusions, about 4 s of CPU and 10 MB of
/// line markers here): it meets the second of CPU long before the file
/// size limit (16 MB) or the address space (1 GiB).
#[test]
fn gcc_e_meets_its_cpu_limit_started_directly_or_by_the_driver() {
    use knobeln::toolchain::gcc::ToolLimit;
    let src = "#if __INCLUDE_LEVEL__ < 17\n#include __FILE__\n#include __FILE__\n#endif\n";
    let brief = JailLimits {
        cpu_secs: 1,
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    let run = |start: GccStart| {
        let jail = Jail::new().unwrap();
        let gcc = Gcc::new(&jail, brief).started(start);
        gcc.put(SOURCE_NAME, src.as_bytes()).unwrap();
        let run = gcc
            .preprocess(SOURCE_NAME, PREPROCESSED_NAME, start)
            .unwrap();
        (run.ok, run.limit_hit, run.messages)
    };
    let direct = run(GccStart::Cc1);
    let hit = direct.1.as_ref();
    assert_eq!(hit.map(|l| l.limit), Some(ToolLimit::Cpu), "{}", direct.2);
    assert_eq!(
        hit.map(|l| l.sentence.as_str()),
        Some("gcc used more than 1 s of CPU time and was stopped")
    );
    assert!(!direct.0);
    assert!(
        direct.2.contains(
            "gcc: internal compiler error: CPU time limit exceeded signal terminated program cc1"
        ),
        "the driver's words: {}",
        direct.2
    );
    assert_eq!(direct, run(GccStart::Driver), "the driver's report");
}

/// `gcc -c` runs its `cc1` and then `as` directly, each the jail init's
/// child (`GccStart::Cc1`, the compile's): a program whose assembler text
/// passes the file size limit ends `cc1` by `SIGXFSZ`, one whose object
/// does (a small text of a large `.zero`) ends `as` by it, and one whose
/// optimisation takes longer than the CPU limit ends `cc1` by `SIGXCPU`.
/// Each verdict is the limit's, read from that program's wait status, and
/// the report is the driver's, words and all: the same messages (the
/// driver's line on the signal, asked of the driver itself), the same
/// limit, the same files left (the driver leaves what a program it
/// stopped at a signal wrote, and no assembler text). Before, `gcc -c` went
/// through its driver and the verdict was read from its words
/// (`tool_says`); this test did not build (no start for `gcc -c`).
#[test]
fn gcc_cs_cc1_and_as_meet_their_limits_by_their_own_signals() {
    use knobeln::toolchain::gcc::ToolLimit;
    let ints = "#define A 1,1,1,1,1,1,1,1,1,1\n#define B A,A,A,A,A,A,A,A,A,A\n\
                #define C B,B,B,B,B,B,B,B,B,B\n#define D C,C,C,C,C,C,C,C,C,C\n\
                #define E D,D,D,D,D,D,D,D,D,D\nint x[] = {E,E,E};\n";
    let zeros = "int x[1000000] = {1};\n";
    let slow = CC1_PAST_A_SECOND;
    let small = JailLimits {
        file_size: 1 << 20,
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    let brief = JailLimits {
        cpu_secs: 1,
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    for (what, src, limits, limit, words) in [
        (
            "cc1's text",
            ints,
            small,
            ToolLimit::OutputSize,
            "File size limit exceeded signal terminated program cc1",
        ),
        (
            "as's object",
            zeros,
            small,
            ToolLimit::OutputSize,
            "File size limit exceeded signal terminated program as",
        ),
        (
            "cc1's CPU",
            slow,
            brief,
            ToolLimit::Cpu,
            "CPU time limit exceeded signal terminated program cc1",
        ),
    ] {
        let run = |start: GccStart| {
            let (jail, run) = compiled(limits, start, src);
            let mut left: Vec<String> = std::fs::read_dir(jail.work_dir())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            left.sort();
            (run.ok, run.limit_hit, run.messages, left)
        };
        let direct = run(GccStart::Cc1);
        assert_eq!(
            direct.1.as_ref().map(|l| l.limit),
            Some(limit),
            "{what}: {}",
            direct.2
        );
        assert!(direct.2.contains(words), "{what}: {}", direct.2);
        assert!(
            !direct.3.contains(&"strategy.s".to_string()),
            "{what}: no assembler text left: {:?}",
            direct.3
        );
        assert_eq!(direct, run(GccStart::Driver), "{what}: the driver's report");
    }
}

/// A line of `cc1`'s own (not a diagnostic of the program's file) that
/// carries the program's words chooses no limit: `#pragma GCC target
/// ("File size limit exceeded")` makes `cc1` say "cc1: error: attribute
/// 'target' argument 'File size limit exceeded' is unknown" and exit 1, a
/// compile error, not a limit. Before, `gcc -c` went through its driver
/// and a limit was read from any line that did not name the program's
/// file (`tool_says`): this program was "stopped" at the file size (and
/// at the CPU or the memory for those words). The compile service's check
/// 2 refuses the pragma before gcc runs; `Gcc` itself no longer reads a
/// limit from `cc1`'s or `as`'s words, only from their wait status (and
/// the address space's refusal from a line the tool begins itself).
/// Through the driver (`GccStart::Driver`, also the start a program that
/// exits with another status than 0 or 1 is run again with) a limit is
/// read only from a line the driver begins with its own name ("gcc: …
/// signal terminated program cc1"): before, any line that did not begin
/// with `strategy.` said it, this pragma's among them.
#[test]
fn a_cc1_line_with_the_programs_words_chooses_no_limit() {
    for (words, start) in [
        "File size limit exceeded",
        "CPU time limit exceeded",
        "out of memory",
        "memory exhausted",
        "File size limit exceeded signal terminated program cc1",
    ]
    .into_iter()
    .flat_map(|w| [(w, GccStart::Cc1), (w, GccStart::Driver)])
    {
        let src = format!("#pragma GCC target (\"{words}\")\nint f(void) {{ return 1; }}\n");
        let said = format!("cc1: error: attribute 'target' argument '{words}'");
        fails_with_no_limit(start, &src, &format!("{words} ({start:?})"), |messages| {
            messages.contains(&said)
        });
    }
}

/// `gcc -c` of `src` with the compile's limits, started as `start`: a
/// failure with no limit, whose messages `shown` finds the program's words
/// in (`what` names the case in a failed assertion).
fn fails_with_no_limit(start: GccStart, src: &str, what: &str, shown: impl Fn(&str) -> bool) {
    let (_, run) = compiled(JailLimits::default(), start, src);
    assert!(!run.ok, "{what}: {}", run.messages);
    assert!(
        shown(&run.messages),
        "{what}: the program's words: {}",
        run.messages
    );
    assert_eq!(
        run.limit_hit.as_ref().map(|l| l.limit),
        None,
        "{what}: {}",
        run.messages
    );
}

/// A line of the assembler's carries the program's words at its start:
/// `.error "x\nas: out of memory allocating …"` in an `__asm__` makes `as`
/// print "strategy.s:2: Error: x" and then a line of the program's alone,
/// and exit 1. With `cc1` and `as` started directly ([`GccStart::Cc1`]),
/// only `cc1` says the address space's refusal (its lines never begin
/// with the program's words), and only where it ended the run, `as` not
/// started: a line of libiberty's ("as: out of memory allocating …",
/// "cc1: …", gcc's collector's "virtual memory exhausted: …") after `as`
/// ran chooses no limit. Through gcc's driver ([`GccStart::Driver`]) `as`
/// is the driver's child and its lines are in the driver's output, so a
/// line may also be the driver's own words on a child's signal: those
/// count only where the driver exited 4 (its status when a program it
/// started ended by a signal; after `as`'s `.error` it exits 1) and only
/// as its last such line, and a refusal of memory only where `as` never
/// spoke. Before, the run's whole text was read for one and this program
/// was "stopped" at the memory with `cc1` and `as` started directly, and
/// at the memory, the file size or the CPU through the driver (red team
/// 20). The compile service's check 2 refuses `__asm__` before gcc runs.
#[test]
fn an_assemblers_line_with_the_programs_words_chooses_no_limit() {
    let words = [
        "as: out of memory allocating 8 bytes after a total of 0 bytes",
        "cc1: out of memory allocating 8 bytes after a total of 0 bytes",
        "virtual memory exhausted: Cannot allocate memory",
        "gcc: internal compiler error: File size limit exceeded signal terminated program as",
        "gcc: fatal error: CPU time limit exceeded signal terminated program cc1",
        "gcc: internal compiler error: CPU time limit exceeded signal terminated program cc1",
    ];
    let starts = [GccStart::Cc1, GccStart::Driver];
    for (words, start) in words.iter().flat_map(|w| starts.map(|s| (*w, s))) {
        let src =
            format!("__asm__(\".error \\\"x\\\\n{words}\\\"\");\nint f(void) {{ return 1; }}\n");
        // The program's words on a line of their own.
        fails_with_no_limit(start, &src, &format!("{words} ({start:?})"), |messages| {
            messages.lines().any(|l| l == words)
        });
    }
}

/// A line of clang's or wasm-ld's that carries the program's words (not
/// a diagnostic that names the program's file first) chooses no limit:
/// clang prints the string of `__attribute__((unavailable("…")))` with its
/// newlines as they are, so "strategy.c:2:22: error: 'g' is unavailable:
/// x" is followed by a line that is the program's words alone, and
/// wasm-ld names an undefined symbol, whose name an `__asm__` label makes
/// any text ("wasm-ld: error: strategy.wasm.o: undefined symbol: CPU time
/// limit exceeded"). Each run exits 1, a failure with no limit. Before,
/// clang and wasm-ld were judged like gcc's driver, a limit read from any
/// line that did not begin with `strategy.` (`tool_says`, gone): these programs
/// were "stopped" at the CPU, the file size or the memory. The compile
/// service's check 2 refuses both attributes and `__asm__` before clang
/// runs; the toolchain itself (`Gcc::run_clang`, `Gcc::run_tool`) now
/// reads a limit only from the wait status, and clang's address space's
/// refusal only from its driver's exit status `128 + SIGABRT` with LLVM's
/// line, which a program's words alone (even "LLVM ERROR: out of memory"
/// at a line's start) do not give.
#[test]
fn a_clang_line_with_the_programs_words_chooses_no_limit() {
    let tools = Toolchain::find().expect("clang and wasm-ld");
    for words in [
        "File size limit exceeded",
        "CPU time limit exceeded",
        "out of memory",
        "memory exhausted",
        "LLVM ERROR: out of memory",
    ] {
        let jail = Jail::new().unwrap();
        let gcc = Gcc::new(
            &jail,
            JailLimits {
                wall: crate::common::TEST_JAIL_WALL,
                ..JailLimits::default()
            },
        );
        let src = format!(
            "int g(void) __attribute__((unavailable(\"x\\n{words}\")));\n\
             int f(void) {{ return g(); }}\n"
        );
        gcc.put(SOURCE_NAME, src.as_bytes()).unwrap();
        let run = tools
            .compile(&gcc, Input::Source, SOURCE_NAME, "strategy.wasm.o")
            .unwrap();
        assert!(!run.ok, "{words}: {}", run.messages);
        assert!(
            run.messages.lines().any(|l| l == words),
            "{words}: the program's words on a line of their own: {}",
            run.messages
        );
        assert_eq!(
            run.limit_hit.as_ref().map(|l| l.limit),
            None,
            "clang, {words}: {}",
            run.messages
        );
        let src = format!("int g(void) __asm__(\"{words}\");\nint main(void) {{ return g(); }}\n");
        gcc.put(SOURCE_NAME, src.as_bytes()).unwrap();
        let cc = tools
            .compile(&gcc, Input::Source, SOURCE_NAME, "strategy.wasm.o")
            .unwrap();
        assert!(cc.ok, "{words}: {}", cc.messages);
        let ld = tools
            .link(
                &gcc,
                &["strategy.wasm.o"],
                "strategy.wasm",
                1 << 20,
                BuiltinsInput::Omitted,
            )
            .unwrap();
        assert!(!ld.ok, "{words}: {}", ld.messages);
        assert!(
            ld.messages.contains(&format!("undefined symbol: {words}")),
            "{words}: {}",
            ld.messages
        );
        assert_eq!(
            ld.limit_hit.as_ref().map(|l| l.limit),
            None,
            "wasm-ld, {words}: {}",
            ld.messages
        );
    }
}

/// clang, its compiler in its own process, meets its limits by its own
/// wait status, each with its verdict: past the CPU limit (1 s; 2,000
/// optimised functions) by `SIGXCPU`, past the file size (1 MiB; an object
/// of 2 MiB of data) by `SIGXFSZ`; refused memory by its address space
/// (256 MiB: the zig program alone maps 177 MiB) its compiler aborts and
/// the driver exits with `128 + SIGABRT` after LLVM's line "LLVM ERROR:
/// out of memory": the memory's verdict. And it is one process: with a
/// limit of one process for the command, clang compiles and wasm-ld links
/// (a shell that starts a program is refused its child under the same
/// limit).
#[test]
fn clang_meets_its_limits_by_its_own_wait_status_as_one_process() {
    use knobeln::sandbox::jail::JailExit;
    use knobeln::toolchain::gcc::ToolLimit;
    let tools = Toolchain::find().expect("clang and wasm-ld");
    let slow = CC1_PAST_A_SECOND;
    let data = "char big[2097152] = {1};\nint main(void) { return big[7]; }\n";
    let base = JailLimits {
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    for (what, src, limits, limit) in [
        (
            "CPU",
            slow,
            JailLimits {
                cpu_secs: 1,
                ..base
            },
            ToolLimit::Cpu,
        ),
        (
            "file size",
            data,
            JailLimits {
                file_size: 1 << 20,
                ..base
            },
            ToolLimit::OutputSize,
        ),
        (
            "address space",
            slow,
            JailLimits {
                address_space: 256 << 20,
                ..base
            },
            ToolLimit::Memory,
        ),
    ] {
        let jail = Jail::new().unwrap();
        let gcc = Gcc::new(&jail, limits);
        gcc.put(SOURCE_NAME, src.as_bytes()).unwrap();
        let run = tools
            .compile(&gcc, Input::Source, SOURCE_NAME, "strategy.wasm.o")
            .unwrap();
        assert_eq!(
            run.limit_hit.as_ref().map(|l| l.limit),
            Some(limit),
            "{what}: {}",
            run.messages
        );
        if limit == ToolLimit::Memory {
            assert!(
                run.messages
                    .lines()
                    .any(|l| l == "LLVM ERROR: out of memory"),
                "{}",
                run.messages
            );
        }
    }
    // One process each: the command may start none.
    let one = JailLimits {
        processes: 1,
        ..base
    };
    let jail = Jail::new().unwrap();
    let out = jail
        .run(&["/bin/sh", "-c", "/bin/true && echo started"], &one)
        .unwrap();
    assert!(!out.output.contains("started"), "{}", out.output);
    assert_ne!(out.exit, JailExit::Exited(0), "{}", out.output);
    let gcc = Gcc::new(&jail, one);
    gcc.put(SOURCE_NAME, b"int main(void) { return 3; }\n")
        .unwrap();
    let cc = tools
        .compile(&gcc, Input::Source, SOURCE_NAME, "strategy.wasm.o")
        .unwrap();
    assert!(cc.ok, "{}", cc.messages);
    let ld = tools
        .link(
            &gcc,
            &["strategy.wasm.o"],
            "strategy.wasm",
            1 << 20,
            BuiltinsInput::Omitted,
        )
        .unwrap();
    assert!(ld.ok, "{}", ld.messages);
}

/// A tool the jail starts as its command (clang -c, which compiles in its
/// own process, and wasm-ld) meets its CPU limit: the verdict is the CPU
/// limit's, in its words (red team E14: before, "stopped because it
/// needed more than its limits", as for a kill of unknown cause). The
/// command was then the first process of the jail's PID namespace, which
/// gets no `SIGXCPU` (the kernel gives it no signal of default action),
/// and the hard limit's `SIGKILL` a second later was judged by the CPU the
/// run used; now the jail's init is that process and the command gets its
/// `SIGXCPU` ([`a_tool_as_the_jails_command_is_stopped_by_sigxfsz`]).
#[test]
fn a_tool_started_as_the_jails_first_process_meets_its_cpu_limit() {
    use knobeln::toolchain::gcc::ToolLimit;
    let jail = Jail::new().unwrap();
    let limits = JailLimits {
        cpu_secs: 1,
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    let spin = ["/bin/sh", "-c", "while :; do :; done"];
    // The soft limit's SIGXCPU, not the hard limit's SIGKILL a second later.
    let out = jail.run(&spin, &limits).unwrap();
    assert_eq!(
        out.exit,
        knobeln::sandbox::jail::JailExit::Signaled(libc::SIGXCPU),
        "{}",
        out.output
    );
    let gcc = Gcc::new(&jail, limits);
    let run = gcc.run_tool("clang", &spin).unwrap();
    let hit = run.limit_hit.expect("stopped by a limit");
    assert_eq!(hit.limit, ToolLimit::Cpu, "{}", hit.sentence);
    assert_eq!(
        hit.sentence,
        "clang used more than 1 s of CPU time and was stopped"
    );
}

/// clang -c and wasm-ld started as the jail's command, writing past the
/// file size limit (16 MiB): an object of 17 MiB of data, a module linked
/// from two objects of 9 MiB. Each ends by the kernel's `SIGXFSZ`, and the
/// report says so in the limit's words. Before the jail's init, the
/// command was the first process of its PID namespace, which the kernel
/// gives no signal of default action: each saw its writes fail with
/// `EFBIG` and ended in its own words (exit 1, no limit named).
#[test]
fn a_tool_as_the_jails_command_is_stopped_by_sigxfsz() {
    use knobeln::sandbox::jail::JailExit;
    use knobeln::toolchain::gcc::ToolLimit;
    let tools = Toolchain::find().expect("clang and wasm-ld");
    let jail = Jail::new().unwrap();
    let limits = JailLimits {
        wall: crate::common::TEST_JAIL_WALL,
        ..JailLimits::default()
    };
    assert_eq!(limits.file_size, 16 << 20, "the limit security.md names");
    let gcc = Gcc::new(&jail, limits);
    gcc.put("big.c", b"char big[17825792] = {1};\n").unwrap();
    gcc.put("a.c", b"char a[9437184] = {1};\n").unwrap();
    gcc.put("b.c", b"char b[9437184] = {1};\n").unwrap();
    let clang = tools.clang_argv();
    let clang_c = |src: &str, obj: &str| -> Vec<String> {
        let mut argv = clang.clone();
        argv.extend(["--target=wasm32", "-c", src, "-o", obj].map(String::from));
        argv
    };
    let mut link = tools.wasm_ld_argv();
    link.extend(
        [
            "--no-entry",
            "--no-gc-sections",
            "a.o",
            "b.o",
            "-o",
            "big.wasm",
        ]
        .map(String::from),
    );
    fn strs(argv: &[String]) -> Vec<&str> {
        argv.iter().map(String::as_str).collect()
    }
    for (tool, argv) in [
        ("clang", clang_c("a.c", "a.o")),
        ("clang", clang_c("b.c", "b.o")),
    ] {
        let out = jail.run(&strs(&argv), &limits).unwrap();
        assert!(out.success(), "{tool} {argv:?}: {}", out.output);
    }
    for (tool, argv) in [("clang", clang_c("big.c", "big.o")), ("wasm-ld", link)] {
        let out = jail.run(&strs(&argv), &limits).unwrap();
        assert_eq!(
            out.exit,
            JailExit::Signaled(libc::SIGXFSZ),
            "{tool}: {}",
            out.output
        );
        let run = match tool {
            "clang" => gcc.run_clang(&strs(&argv)).unwrap(),
            _ => gcc.run_tool(tool, &strs(&argv)).unwrap(),
        };
        let hit = run.limit_hit.expect("stopped by a limit");
        assert_eq!(hit.limit, ToolLimit::OutputSize, "{}", hit.sentence);
        assert_eq!(
            hit.sentence,
            format!(
                "{tool}'s output grew beyond 16 MB and was stopped (a macro that expands \
                 without end?)"
            )
        );
    }
}

/// Zig's LLVM (clang 22 and its wasm-ld, one static program that starts
/// fast, `deploy/zig.sh`) is the toolchain found where it is installed;
/// its reports must be the ones Debian's clang 14 gives: for every C
/// source of the tests, the same verdicts, the same diagnostics (check,
/// line, words) and the same memory figure. Without `ZIG_CLANG_FLAGS`
/// its clang refuses the 1994 forms (implicit `int`, implicit
/// declarations) that clang 14 only warned about, and reads raw strings
/// in C (its grounds fail): both are tried here too.
#[test]
fn zigs_llvm_gives_every_test_source_the_report_of_debians() {
    use knobeln::toolchain::wasm::{Llvm, ZIG};
    let debian = Toolchain::find_debian().expect("Debian's clang, wasm-ld and the builtins");
    assert!(
        std::path::Path::new(ZIG).is_file(),
        "zig's LLVM is missing: bash deploy/zig.sh install"
    );
    let zig = Toolchain {
        clang: ZIG.into(),
        wasm_ld: ZIG.into(),
        llvm: Llvm::Zig,
        ..debian.clone()
    };
    assert_eq!(Toolchain::find().map(|t| t.llvm), Some(Llvm::Zig));
    let mut sources = test_c_sources();
    sources.sort();
    let report = |tools: &Toolchain, profile: Profile, src: &[u8]| {
        let cfg = CompileConfig {
            profile,
            toolchain: Some(tools.clone()),
            ..CompileConfig::default()
        };
        report_summary(&cfg, src, CompilerOutput::Ignored)
    };
    let mut reports = Comparison::default();
    for path in &sources {
        let src = std::fs::read(path).unwrap();
        reports.profiles(
            path,
            ["Debian's", "zig's"],
            |profile| report(&debian, profile, &src),
            |profile| report(&zig, profile, &src),
        );
    }
    reports.assert_alike();

    // The flags are what makes it so: without them the example strategy
    // (implicit `int`, implicit declarations) is clang's error, and the
    // raw string's probe gives no grounds.
    let clang = zig.clang_argv();
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime/example.c");
    let bare = std::process::Command::new(&clang[0])
        .args(&clang[1..])
        .args(["-fsyntax-only", "-x", "c"])
        .args(knobeln::toolchain::wasm::CLANG_FLAGS)
        .arg(&example)
        .output()
        .unwrap();
    assert!(!bare.status.success());
    assert!(
        String::from_utf8_lossy(&bare.stderr).contains("[-Wimplicit-int]"),
        "{}",
        String::from_utf8_lossy(&bare.stderr)
    );
    let dir = std::env::temp_dir().join(format!("knobeln-raw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("raw.c"), "#define d 1\nR\"x( \" d \" )x\"\n").unwrap();
    let raw = |flags: &[&str]| {
        let out = std::process::Command::new(&clang[0])
            .args(&clang[1..])
            .args(["-E", "-x", "c", "-undef"])
            .args(flags)
            .arg(dir.join("raw.c"))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let defines = String::from_utf8(
        std::process::Command::new(&clang[0])
            .args(&clang[1..])
            .args(["-dM", "-E", "-x", "c", "-undef"])
            .args(zig.clang_flags())
            .arg("/dev/null")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let bare = SkipGrounds::of(&defines, &raw(knobeln::toolchain::wasm::CLANG_FLAGS));
    assert!(
        matches!(&bare, SkipGrounds::Failed(why) if why.contains("raw string")),
        "{bare:?}"
    );
    assert_eq!(
        SkipGrounds::of(&defines, &raw(zig.clang_flags())),
        SkipGrounds::Checked
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
