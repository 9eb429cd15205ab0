//! The compile service: the six checks on the corpus in
//! `tests/data/sources/` (each `NAME.c` with its `NAME.expect`, format in
//! that folder's README), check 6 and the memory limit on the object and
//! module that play (attack by attack), and the jail around gcc.

use std::fs;
use std::path::Path;
use std::time::Duration;

use knobeln::game::Throw;
use knobeln::report::{compile_report, ReportNotes};
use knobeln::sandbox::jail::{Jail, JailLimits};
use knobeln::toolchain::compile::{
    cache_key, compile_measured, compiler_helpers, Builder, CompileConfig, ModuleCache, Origin,
    Outcome, Profile, Tool, Verdict,
};
use knobeln::toolchain::diagnostic::{Check, Diagnostic};
use knobeln::toolchain::gcc::{Gcc, GccStart, Input, MAX_PROBED_NAMES};
use knobeln::toolchain::wasm::{Llvm, Toolchain};

use crate::common::{
    compile_file, compile_source, config, example_path, install, play, repo_path, source_path,
};

/// One expected error of a case.
#[derive(Debug, Default)]
struct ExpectedError {
    check: String,
    /// `Some(None)`: the error names no line.
    line: Option<Option<u32>>,
    messages: Vec<String>,
}

/// A case's `.expect` file.
#[derive(Debug, Default)]
struct Expected {
    accepted: bool,
    lexical_elements: Option<u64>,
    n_errors: Option<usize>,
    verdicts: Vec<String>,
    errors: Vec<ExpectedError>,
}

fn load_expected(name: &str) -> Expected {
    let path = repo_path("tests/data/sources").join(format!("{name}.expect"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut exp = Expected::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("{}:{}: no `key: value`", path.display(), n + 1));
        let value = value.trim();
        let at = format!("{}:{}", path.display(), n + 1);
        match key.trim() {
            "accepted" => exp.accepted = value == "yes",
            "lexical_elements" => exp.lexical_elements = Some(number(value, &at)),
            "errors" => exp.n_errors = Some(number(value, &at)),
            "verdicts" => exp.verdicts = value.split_whitespace().map(String::from).collect(),
            "check" => exp.errors.push(ExpectedError {
                check: value.to_string(),
                ..ExpectedError::default()
            }),
            "line" => {
                let l = if value == "none" {
                    None
                } else {
                    Some(number(value, &at))
                };
                exp.errors
                    .last_mut()
                    .expect("a `check:` line must come first")
                    .line = Some(l);
            }
            "message" => exp
                .errors
                .last_mut()
                .expect("a `check:` line must come first")
                .messages
                .push(value.to_string()),
            other => panic!("{}:{}: unknown key {other:?}", path.display(), n + 1),
        }
    }
    exp
}

fn number<T: std::str::FromStr>(value: &str, at: &str) -> T {
    value
        .parse()
        .unwrap_or_else(|_| panic!("{at}: {value:?} is not a number"))
}

/// The snake_case name of a check, as in reports and `.expect` files.
fn check_name(c: Check) -> String {
    serde_json::to_value(c)
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

fn verdict_name(v: &Verdict) -> String {
    serde_json::to_value(v).unwrap()["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Compiles `tests/data/sources/NAME.c` as a submission and checks the
/// outcome against `NAME.expect`.
fn run_case(name: &str) -> Outcome {
    run_case_with(name, &CompileConfig::default())
}

/// [`run_case`] with the compile's config `cfg`.
fn run_case_with(name: &str, cfg: &CompileConfig) -> Outcome {
    let src = fs::read(source_path(name)).expect("case source");
    let exp = load_expected(name);
    let outcome = knobeln::toolchain::compile::compile(&src, cfg)
        .expect("the compile service runs (jail, gcc and clang available)");
    let report = outcome.report();
    let errors: Vec<&Diagnostic> = report.errors().collect();
    let ctx = format!(
        "case {name}: errors {errors:#?}\nverdicts {:?}\ngcc said (start): {}",
        report.checks,
        report
            .compiler_output
            .chars()
            .take(1500)
            .collect::<String>()
    );
    // All six checks, in the order of the announcement.
    let checks: Vec<Check> = report.checks.iter().map(|c| c.check).collect();
    assert_eq!(checks, Check::ALL.to_vec(), "{ctx}");
    let verdicts: Vec<String> = report
        .checks
        .iter()
        .map(|c| verdict_name(&c.verdict))
        .collect();
    assert_eq!(verdicts, exp.verdicts, "{ctx}");
    assert_eq!(outcome.accepted(), exp.accepted, "{ctx}");
    if let Some(n) = exp.lexical_elements {
        assert_eq!(report.lexical_elements, Some(n), "{ctx}");
    }
    let n_errors = exp.n_errors.unwrap_or(if exp.accepted { 0 } else { 1 });
    assert_eq!(errors.len(), n_errors, "{ctx}");
    // Errors come in check order, each under a check that failed.
    assert!(errors.windows(2).all(|w| w[0].check <= w[1].check), "{ctx}");
    for e in &errors {
        assert_eq!(report.verdict(e.check), Some(&Verdict::Failed), "{ctx}");
    }
    for (i, want) in exp.errors.iter().enumerate() {
        let got = errors[i];
        assert_eq!(check_name(got.check), want.check, "error {i}: {ctx}");
        if let Some(line) = want.line {
            assert_eq!(got.line, line, "line of error {i}: {ctx}");
        }
        for m in &want.messages {
            assert!(
                got.message.contains(m.as_str()),
                "error {i} must say {m:?}: {ctx}"
            );
        }
    }
    outcome
}

#[test]
fn valid_submission_is_accepted_with_its_hand_counted_lexical_elements() {
    // After preprocessing only the code is left (no header comment, no
    // description); every special character counts, `==` and `&&` twice:
    //   main ( ) {                                         4
    //   int mine = 3000 , theirs , n = 0 ;                11  -> 15
    //   init_random ( ) ;                                  4  -> 19
    //   for ( ; ; ) {                                      6  -> 25
    //   theirs = make_throw ( mine ) ;                     7  -> 32
    //   n = n + 1 ;                                        6  -> 38
    //   if ( n = = 8 ) {                                   8  -> 46
    //   n = 0 ;                                            4  -> 50
    //   mine = next_random ( 2048 , 4096 ) ;               9  -> 59
    //   } else if ( theirs > mine & & theirs < = 2 * mine ) 16 -> 75
    //   mine = theirs ;                                    4  -> 79
    //   } }                                                2  -> 81
    let outcome = run_case("valid");
    let Outcome::Accepted { binary, report } = outcome else {
        unreachable!("run_case checked acceptance")
    };
    let header = report.header.as_ref().expect("the header is reported");
    assert_eq!(
        (header.team.as_str(), header.auth.as_str()),
        ("team_name", "authstring")
    );
    assert!(
        report.warnings().next().is_none(),
        "{:?}",
        report.diagnostics
    );
    // The accepted binary is a working strategy: it keeps the rules in a
    // trial game against the example.
    let mine = install(&binary);
    let rec = play(
        &config(100, 10_000_000, Duration::from_secs(30)),
        &mine,
        &compile_file(&example_path()),
        3,
    );
    assert!(!rec.failed(0), "{:?}", rec.failures);
    assert!(rec.throws.len() == 100 || rec.failed(1), "{rec:?}");
}

#[test]
fn missing_header_fails_check_1() {
    run_case("missing_header");
}

#[test]
fn header_without_authentification_string_fails_check_1() {
    run_case("wrong_header");
}

#[test]
fn include_stdio_fails_check_2() {
    run_case("include_stdio");
}

#[test]
fn include_through_a_macro_fails_check_2() {
    run_case("include_macro");
}

#[test]
fn has_include_fails_check_2() {
    run_case("has_include");
}

#[test]
fn line_directive_fails_check_2() {
    run_case("line_directive");
}

#[test]
fn asm_incbin_fails_check_2() {
    run_case("asm_incbin");
}

#[test]
fn inline_assembly_building_a_table_fails_check_2() {
    run_case("asm_rept");
}

#[test]
fn inline_assembly_pasted_by_a_macro_fails_check_2_after_expansion() {
    run_case("pasted_asm");
}

#[test]
fn an_interpreter_section_fails_check_2() {
    run_case("interp_section");
}

#[test]
fn weak_symbols_and_aliases_fail_check_2() {
    run_case("weak_alias");
}

#[test]
fn processor_builtins_fail_check_2() {
    run_case("cpu_builtin");
}

#[test]
fn description_of_14_lines_passes_check_4_as_about_15() {
    run_case("description_14");
}

#[test]
fn more_than_10000_lexical_elements_after_preprocessing_fail_check_3() {
    let raw = fs::read_to_string(source_path("too_many_elements")).unwrap();
    assert!(
        raw.len() < 2000,
        "the raw file is small; its macros make it big"
    );
    run_case("too_many_elements");
}

/// A program at most twice too long gets every later check's word too
/// (the compilers run, so the rest can be fixed while it is shortened);
/// one more than twice too long is only told to shorten itself: the
/// compilers are not run on it, so what the report says never depends on
/// whether `cc1 -O2` met the jail's memory limit over it. The valid
/// strategy with one `;` left out (80 elements, a syntax error for check
/// 5 to show) against limits of 40 (80 <= 80) and 39 (80 > 78).
#[test]
fn a_program_more_than_twice_too_long_is_not_compiled_one_less_far_is() {
    let src = fs::read_to_string(source_path("valid")).unwrap();
    // An apostrophe in the description: gcc -E warns of it, and that
    // noise is dropped whichever check ends the report.
    let broken = src.replacen("mine = theirs;", "mine = theirs", 1).replacen(
        "Main idea: cooperate.",
        "Main idea: don't exploit.",
        1,
    );
    assert_eq!(
        broken.len(),
        src.len() + 3,
        "the valid strategy's lines moved"
    );
    // The tools that ran beside each outcome: no compiler runs on the far one.
    let with_max = |max: u64| {
        let cfg = CompileConfig {
            max_lexical_elements: max,
            ..CompileConfig::default()
        };
        let m = compile_measured(broken.as_bytes(), &cfg, &ModuleCache::new(1 << 20)).unwrap();
        let tools: Vec<Tool> = m.tools.iter().map(|(t, _)| *t).collect();
        (m.outcome, tools)
    };
    let verdict = |o: &Outcome, c: Check| {
        o.report()
            .checks
            .iter()
            .find(|s| s.check == c)
            .map(|s| s.verdict.clone())
            .unwrap()
    };
    let (near, tools) = with_max(40);
    assert_eq!(tools, [Tool::GccPreprocess, Tool::Gcc]);
    assert_eq!(near.report().lexical_elements, Some(80));
    assert_eq!(verdict(&near, Check::LexicalElements), Verdict::Failed);
    assert_eq!(verdict(&near, Check::Compiler), Verdict::Failed, "gcc ran");
    assert!(
        !near
            .report()
            .compiler_output
            .contains("missing terminating"),
        "{}",
        near.report().compiler_output
    );
    let (far, tools) = with_max(39);
    assert_eq!(tools, [Tool::GccPreprocess]);
    assert_eq!(verdict(&far, Check::LexicalElements), Verdict::Failed);
    assert_eq!(
        verdict(&far, Check::Compiler),
        Verdict::Skipped("the program is more than twice as long as allowed (check 3)".into())
    );
    let errors: Vec<_> = far.report().errors().collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0]
            .message
            .contains("the compilers were not run on it; shorten it first"),
        "{}",
        errors[0].message
    );
    let from_compilers: Vec<_> = far
        .report()
        .diagnostics
        .iter()
        .filter(|d| d.check == Check::Compiler)
        .collect();
    assert!(from_compilers.is_empty(), "{from_compilers:#?}");
    assert!(
        !far.report().compiler_output.contains("missing terminating"),
        "{}",
        far.report().compiler_output
    );
}

/// Issue 25: megabytes after preprocessing are refused unread.
#[test]
fn megabytes_after_preprocessing_are_refused_without_being_read() {
    run_case("macro_megabytes");
}

/// Issue 25: half a million lexical elements are counted in bounded memory.
#[test]
fn a_token_flood_just_under_the_cap_is_counted() {
    run_case("token_flood");
}

/// A macro bomb is stopped by one of gcc's limits, and the rejection names
/// it: memory (the jail's 256 MiB, or 1 GiB of address space without a
/// control group), file size or CPU time. The wall clock gives no verdict
/// (`a_compile_slowed_past_the_wall_by_load_is_no_rejection`); here it is
/// set far away, so that a busy machine cannot turn the test into a
/// server problem (it failed that way under load when the wall gave one).
#[test]
fn macro_bomb_is_stopped_by_a_limit_with_a_clear_message() {
    let cfg = CompileConfig {
        jail: JailLimits {
            wall: Duration::from_secs(600),
            ..JailLimits::default()
        },
        ..CompileConfig::default()
    };
    let outcome = run_case_with("macro_bomb", &cfg);
    let e = outcome.report().errors().next().unwrap();
    assert!(
        e.message.starts_with("gcc ")
            && (e.message.contains(" MB")
                || e.message.contains(" MiB of memory")
                || e.message.contains("CPU time")),
        "the participant must learn which limit stopped gcc: {e}"
    );
    assert_eq!(outcome.report().lexical_elements, None);
}

#[test]
fn huge_compiler_output_is_cut_to_a_sane_size() {
    let outcome = run_case("huge_output");
    let report = outcome.report();
    let cap = JailLimits::default().output_cap;
    assert!(
        report.compiler_output.len() <= cap + 200,
        "{} bytes of compiler output kept",
        report.compiler_output.len()
    );
    assert!(
        report
            .compiler_output
            .contains("more bytes of compiler messages cut"),
        "the report must say that messages were cut"
    );
    assert!(report.warnings().count() < 1000);
    let text = compile_report(report, false, 10_000, None, &ReportNotes::default());
    assert!(
        text.len() <= 2 * cap,
        "the mailed report has {} bytes",
        text.len()
    );
    assert!(text.contains("REJECTED"));
}

#[test]
fn syntax_error_fails_check_5_at_its_line() {
    run_case("syntax_error");
}

#[test]
fn calling_printf_fails_check_6_at_the_call() {
    run_case("calls_printf");
}

/// The description (line 19) says "printf"; the call is at line 26.
#[test]
fn calling_printf_is_reported_at_the_call_not_at_a_mention_in_the_description() {
    run_case("calls_printf_mentioned");
}

#[test]
fn no_main_fails_check_6() {
    run_case("no_main");
}

#[test]
fn defining_start_fails_check_6() {
    run_case("defines_start");
}

#[test]
fn constructor_fails_check_6() {
    run_case("constructor");
}

#[test]
fn defining_log2_fails_check_6() {
    run_case("defines_log2");
}

#[test]
fn static_array_of_4_mb_is_rejected_for_the_memory_limit() {
    run_case("static_4mb");
    // Locally (knobeln play) too: a program that cannot start cannot play
    // (the referee's own wall behind this check is tested in
    // referee::huge_static_fails_at_throw_1_naming_the_memory_limit).
    let src = std::fs::read(source_path("static_4mb")).unwrap();
    assert!(!compile_source(&src, Profile::Local).accepted());
}

#[test]
fn several_errors_are_listed_in_check_order() {
    run_case("several_errors");
}

// ---- Check 6 and the memory limit, on what plays -------------------------

/// clang's wasm32 object of `src`, as the compile service builds it (the
/// object check 6 reads and wasm-ld links).
fn wasm_object(src: &str) -> Vec<u8> {
    let tools = Toolchain::find().expect("clang for wasm32");
    let jail = Jail::new().expect("a jail");
    let gcc = Gcc::new(&jail, JailLimits::default());
    gcc.put("strategy.c", src.as_bytes()).unwrap();
    let run = tools
        .compile(&gcc, Input::Source, "strategy.c", "strategy.o")
        .expect("clang runs");
    assert!(run.ok, "{}", run.messages);
    gcc.get("strategy.o").unwrap()
}

/// The errors of check 6 (and its verdict failed) of `src` compiled locally.
fn library_errors(src: &str) -> Vec<Diagnostic> {
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    assert!(!outcome.accepted(), "accepted: {src}");
    let report = outcome.report();
    assert_eq!(
        report.verdict(Check::Library),
        Some(&Verdict::Failed),
        "{src}"
    );
    report
        .errors()
        .filter(|d| d.check == Check::Library)
        .cloned()
        .collect()
}

/// Check 6 reads the symbols of the object that is linked into the module
/// that plays: what it needs from elsewhere, what it defines, whether it
/// has constructors; the linker's own symbols and static functions are not
/// the participant's calls or definitions.
#[test]
fn check_6_reads_the_symbols_of_clangs_object() {
    use knobeln::toolchain::symbols::inspect_object;
    let syms = inspect_object(&wasm_object(
        "extern int errno; static int helper(int x) { return x + errno; }\n\
         int table[4]; int (*pick)(int) = helper;\n\
         main() { char *p = malloc(3); printf(\"%p\", p); for (;;) make_throw(pick(next_random(1, 9))); }\n",
    ))
    .expect("the object reads");
    assert_eq!(
        syms.undefined,
        ["errno", "make_throw", "malloc", "next_random", "printf"],
        "{syms:?}"
    );
    assert_eq!(
        syms.forbidden_calls(&compiler_helpers().unwrap()),
        ["errno", "malloc", "printf"]
    );
    assert!(syms.defines("main") && syms.defines("table") && syms.defines("pick"));
    assert!(
        !syms.defines("helper"),
        "a static function is no definition of a name"
    );
    assert!(!syms.constructors);
    let ctor = inspect_object(&wasm_object(
        "__attribute__((constructor)) static void early(void) { make_throw(5); }\n\
         main() { for (;;) make_throw(100); }\n",
    ))
    .unwrap();
    assert!(ctor.constructors);
    assert!(
        inspect_object(b"\0asm\x01\0\0\0").is_err(),
        "no symbol table"
    );
}

/// Requirement 1 of 1994, attack by attack: a strategy that calls a
/// routine of the C library, a routine nobody defines, or reads a variable
/// from elsewhere is refused by check 6 with the name, at the line that
/// names it; a call whose name only the preprocessor makes is named too
/// (at no line: the source never writes it).
#[test]
fn check_6_names_every_routine_outside_the_five() {
    for (src, name, line) in [
        (
            "main() { char *p = malloc(10); for (;;) make_throw(100 + !p); }\n",
            "malloc",
            Some(1),
        ),
        (
            "main() {\n for (;;) make_throw(helper(3)); }\n",
            "helper",
            Some(2),
        ),
        (
            "main() { extern int errno; for (;;) make_throw(100 + errno); }\n",
            "errno",
            Some(1),
        ),
        (
            "#define CALL(a, b) a##b\nmain() { CALL(pri, ntf)(\"x\"); for (;;) make_throw(100); }\n",
            "printf",
            None,
        ),
    ] {
        let errors = library_errors(src);
        let want = format!("uses `{name}`, which is not one of the five library routines");
        let e = errors
            .iter()
            .find(|d| d.message.contains(&want))
            .unwrap_or_else(|| panic!("{name}: {errors:?}"));
        assert_eq!(e.line, line, "{name}");
    }
    // The runtime's entry of the module that plays is the runtime's.
    let errors =
        library_errors("void knobeln_start(void) {}\nmain() { for (;;) make_throw(100); }\n");
    assert!(
        errors
            .iter()
            .any(|d| d.message.contains("defines `knobeln_start`")),
        "{errors:?}"
    );
}

/// Requirement 5 on the module that plays: static data beyond the memory
/// limit, initialised or not, is refused by wasm-ld's layout with what it
/// needs; what fits plays.
#[test]
fn static_data_beyond_the_memory_limit_is_refused_initialised_or_not() {
    for array in [
        "static int big[300000];",
        "static int big[300000] = { 1, 2, 3 };",
    ] {
        let src = format!("{array}\nmain() {{ int i = next_random(0, 299999); big[i] = 7; for (;;) make_throw(100 + big[i] + big[1]); }}\n");
        let outcome = compile_source(src.as_bytes(), Profile::Local);
        assert!(!outcome.accepted(), "{array}");
        let report = outcome.report();
        assert!(
            report.errors().any(|d| d.check == Check::Compiler
                && d.message
                    .contains("does not fit into the memory limit of 1024 kB")
                && d.message.contains("make static arrays smaller by at least")),
            "{array}: {:?}",
            report.diagnostics
        );
        assert!(report.image_bytes.is_some_and(|n| n > 1 << 20), "{array}");
    }
    let fits = "static int big[200000] = { 1, 2, 3 };\n\
                main() { for (;;) make_throw(100 + big[next_random(0, 199999)]); }\n";
    let outcome = compile_source(fits.as_bytes(), Profile::Local);
    assert!(outcome.accepted(), "{:?}", outcome.report().diagnostics);
}

/// Static data too large are refused where the program that plays is
/// built, nothing guessed before it: with 1024 kB of memory, 4 MB and
/// 15 MB of wasm32's static data get wasm-ld's exact figure; 17 MB are
/// past what the jail lets clang write (16 MiB a file), so clang's limit
/// stops it (no module, no figure) and the words are the memory's too.
/// What such a program costs is what the jail lets clang write and hold.
#[test]
fn static_data_are_refused_with_wasm_lds_figure_up_to_clangs_limits() {
    for (bytes, exact) in [(4 << 20, true), (15 << 20, true), (17 << 20, false)] {
        let longs = bytes / 4;
        let src = format!(
            "static long big[{longs}];\n\
             main() {{ int i = next_random(0, 999); big[i] = 7; for (;;) make_throw(100 + big[i]); }}\n"
        );
        let outcome = compile_source(src.as_bytes(), Profile::Local);
        assert!(!outcome.accepted(), "{bytes}");
        let report = outcome.report();
        let errors: Vec<&Diagnostic> = report.errors().collect();
        assert_eq!(errors.len(), 1, "{bytes}: {errors:?}");
        assert!(
            errors[0]
                .message
                .starts_with("the program does not fit into the memory limit of 1024 kB"),
            "{bytes}: {errors:?}"
        );
        // wasm-ld's figure: the array and the runtime's few data.
        let figure = errors[0]
            .message
            .split_once("its static data are ")
            .and_then(|(_, rest)| rest.split_once(" kB"))
            .and_then(|(kb, _)| kb.parse::<u64>().ok());
        assert_eq!(
            figure.is_some_and(|kb| (bytes / 1024..bytes / 1024 + 8).contains(&kb)),
            exact,
            "{bytes}: {errors:?}"
        );
        assert_eq!(report.image_bytes.is_some(), exact, "{bytes}: {report:?}");
    }
}

// ---- The jail -------------------------------------------------------------

/// The first line of the host's /etc/passwd: nothing the jail runs may see it.
fn host_passwd_line() -> String {
    let text = fs::read_to_string("/etc/passwd").expect("the host has a readable /etc/passwd");
    let first = text.lines().next().unwrap_or_default().to_string();
    assert!(first.contains(':'), "unexpected /etc/passwd: {first:?}");
    first
}

#[test]
fn jailed_preprocessor_cannot_read_etc_passwd() {
    let secret = host_passwd_line();
    let jail = Jail::new().expect("jail");
    let gcc = Gcc::new(&jail, JailLimits::default());
    for path in [
        "/etc/passwd",
        "../../../../../../../../etc/passwd",
        "/proc/self/root/etc/passwd",
        "/proc/1/root/etc/passwd",
        "/dev/../etc/passwd",
    ] {
        let src = format!("#include \"{path}\"\nint x;\n");
        gcc.put("probe.c", src.as_bytes()).unwrap();
        let run = gcc
            .preprocess("probe.c", "probe.i", GccStart::Driver)
            .expect("gcc runs in the jail");
        let out = gcc.get("probe.i").unwrap_or_default();
        assert!(
            !run.ok,
            "#include \"{path}\" preprocessed: {}",
            run.messages
        );
        assert!(
            run.messages.contains("No such file or directory"),
            "{path}: {}",
            run.messages
        );
        assert!(!run.messages.contains(&secret), "{}", run.messages);
        assert!(!String::from_utf8_lossy(&out).contains(&secret));
    }
    // Nor can anything else in the jail.
    let out = jail
        .run(
            &["/bin/sh", "-c", "cat /etc/passwd"],
            &JailLimits::default(),
        )
        .expect("sh runs in the jail");
    assert!(!out.success(), "{}", out.output);
    assert!(out.output.contains("No such file"), "{}", out.output);
    assert!(!out.output.contains(&secret));
}

/// Stringification builds `.incbin "/etc/passwd"`: the compile service
/// refuses the inline assembly at check 2 (first wall); fed to the jail
/// anyway, the assembler must still not find the file (second wall).
#[test]
fn incbin_built_by_a_macro_cannot_read_etc_passwd() {
    use knobeln::sandbox::jail::{Jail, JailLimits};
    use knobeln::toolchain::gcc::{Gcc, Input, SOURCE_NAME};
    let secret = host_passwd_line();
    let src =
        "#define S(x) #x\nasm(S(.incbin \"/etc/passwd\"));\nmain() { for (;;) make_throw(100); }\n";
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    let report = outcome.report();
    assert!(!outcome.accepted(), "{:?}", report.diagnostics);
    assert_eq!(report.verdict(Check::SingleFile), Some(&Verdict::Failed));
    assert!(
        report
            .errors()
            .any(|d| d.line == Some(2) && d.message.contains("inline assembly")),
        "{:?}",
        report.diagnostics
    );
    let jail = Jail::new().expect("a jail");
    let gcc = Gcc::new(&jail, JailLimits::default());
    gcc.put(SOURCE_NAME, src.as_bytes()).unwrap();
    let run = gcc
        .compile(Input::Source, SOURCE_NAME, "strategy.o")
        .unwrap();
    assert!(!run.ok, "{}", run.messages);
    assert!(run.messages.contains("/etc/passwd"), "{}", run.messages);
    assert!(!run.messages.contains(&secret));
}

/// `__has_include` pasted together by `##` is not visible to the source
/// checks. Whatever the preprocessor can probe, /etc/passwd must not exist
/// for it. The strategy throws 200 if the probe found the file, 100 if not.
#[test]
fn has_include_built_by_a_macro_cannot_see_etc_passwd() {
    let probe = |path: &str| -> Option<i64> {
        let src = format!(
            "#define CAT(a, b) a##b\n#if CAT(__has_, include)(\"{path}\")\n#define SEEN 200\n\
             #else\n#define SEEN 100\n#endif\nmain() {{ for (;;) make_throw(SEEN); }}\n"
        );
        match compile_source(src.as_bytes(), Profile::Local) {
            Outcome::Rejected { .. } => None,
            Outcome::Accepted { binary, .. } => {
                let s = install(&binary);
                let cfg = config(2, 10_000_000, Duration::from_secs(30));
                Some(play(&cfg, &s, &s, 1).throws[0][0])
            }
        }
    };
    let secret = probe("/etc/passwd");
    assert_ne!(
        secret,
        Some(200),
        "the jailed preprocessor found /etc/passwd"
    );
    if secret == Some(100) {
        // Accepted: the probe itself must work, or this test shows nothing.
        assert_eq!(
            probe("/usr/bin/gcc"),
            Some(200),
            "the probe does not work at all"
        );
    }
}

#[test]
fn jailed_gcc_cannot_write_outside_its_work_dir() {
    let host = tempfile::tempdir().unwrap();
    let host_target = host.path().join("escape.o");
    let jail = Jail::new().expect("jail");
    let gcc = Gcc::new(&jail, JailLimits::default());
    gcc.put("ok.c", b"int x = 1;\n").unwrap();
    // Into the work folder: fine.
    let run = gcc
        .compile(Input::Source, "ok.c", "ok.o")
        .expect("gcc runs in the jail");
    assert!(run.ok, "{}", run.messages);
    assert!(jail.work_dir().join("ok.o").is_file());
    let root = jail.path().join("root");
    let attempts: [(&str, Vec<&Path>); 5] = [
        (host_target.to_str().unwrap(), vec![&host_target]),
        ("/escape.o", vec![Path::new("/escape.o")]),
        ("../escape.o", vec![Path::new("/escape.o")]),
        ("/usr/escape.o", vec![Path::new("/usr/escape.o")]),
        ("/dev/escape.o", vec![Path::new("/dev/escape.o")]),
    ];
    for (out, host_paths) in attempts {
        let run = gcc
            .compile(Input::Source, "ok.c", out)
            .expect("gcc runs in the jail");
        let in_jail = root.join(out.trim_start_matches("../").trim_start_matches('/'));
        let written: Vec<&Path> = host_paths
            .iter()
            .copied()
            .chain([in_jail.as_path()])
            .filter(|p| p.exists() && !p.starts_with(jail.work_dir()))
            .collect();
        for p in &written {
            // Do not leave it behind, then fail.
            let _ = fs::remove_file(p);
        }
        assert!(!run.ok, "gcc -o {out} succeeded: {}", run.messages);
        assert!(
            run.messages.contains("can't create"),
            "{out}: {}",
            run.messages
        );
        assert!(written.is_empty(), "gcc -o {out} wrote {written:?}");
    }
}

/// The defaults are the 1994 requirements.
#[test]
fn default_compile_config_is_the_1994_rules() {
    let cfg = CompileConfig::default();
    assert_eq!(cfg.profile, Profile::Submission);
    assert_eq!(cfg.max_lexical_elements, 10_000);
    assert_eq!(cfg.min_description_lines, 15);
    assert_eq!(cfg.memory_limit, 1024 * 1024);
}

// ---- The hostile review of issue 37 ----------------------------------------

/// `tests/data/strategies/hostile/NAME.c` compiled as a submission: the
/// report's errors, which must reject it, all under `check`.
fn hostile_errors(name: &str, check: Check) -> Vec<Diagnostic> {
    let src = fs::read(crate::common::hostile_path(name)).expect("hostile source");
    let outcome = compile_source(&src, Profile::Submission);
    let report = outcome.report();
    assert!(!outcome.accepted(), "{name} accepted");
    assert_eq!(
        report.verdict(check),
        Some(&Verdict::Failed),
        "{name}: {:?}\n{:?}",
        report.checks,
        report.diagnostics
    );
    report.errors().cloned().collect()
}

/// F1: the runtime's undefined names are the referee's imports. A strategy
/// that defined `knobeln_referee_seed` would pick its own seed, one that
/// defined `knobeln_referee_throw` would throw without the referee: check
/// 6 refuses both, naming the symbol at its line. The names are read from
/// the runtime's object, not from a list.
#[test]
fn defining_a_runtime_name_of_the_referees_fails_check_6() {
    use knobeln::toolchain::compile::runtime_wasm_object;
    use knobeln::toolchain::symbols::inspect_object;
    let runtime = inspect_object(&runtime_wasm_object().unwrap()).unwrap();
    for name in ["knobeln_referee_seed", "knobeln_referee_throw"] {
        assert!(runtime.undefined.iter().any(|u| u == name), "{runtime:?}");
    }
    for (file, name) in [
        ("defines_referee_seed", "knobeln_referee_seed"),
        ("defines_referee_throw", "knobeln_referee_throw"),
    ] {
        let errors = hostile_errors(file, Check::Library);
        assert!(
            errors.iter().any(|d| d.check == Check::Library
                && d.line == Some(20)
                && d.message
                    .starts_with(&format!("defines `{name}`, the contest runtime's"))),
            "{file}: {errors:?}"
        );
    }
}

/// F2: compiler-rt's routines are the compiler's to call, for arithmetic
/// C has no instruction for; a program that names one calls it itself
/// (declared or not) and is refused by check 6, naming it at its line.
/// What the compiler calls on its own (`long double` here) still plays.
/// A program defining a helper's name (`__multi3`) is refused too.
#[test]
fn calling_a_compiler_helper_by_name_fails_check_6() {
    for (file, names) in [
        (
            "helper_powi",
            &[("__powidf2", 20), ("__popcountsi2", 21)][..],
        ),
        (
            "helper_clz",
            &[("__clzsi2", 20), ("__ffssi2", 20), ("__paritysi2", 20)],
        ),
        ("helper_fixfn", &[("__fixdfsi", 20)]),
        ("helper_mulodi", &[("__mulodi4", 20)]),
        ("helper_implicit_fn", &[("__ffssi2", 20)]),
    ] {
        let errors = hostile_errors(file, Check::Library);
        for (name, line) in names {
            assert!(
                errors.iter().any(|d| d.line == Some(*line)
                    && d.message.starts_with(&format!("calls `{name}` by name"))),
                "{file}: {name}: {errors:?}"
            );
        }
    }
    // Which names are the compiler's is read from the builtins archive
    // wasm-ld links, not guessed from their shape.
    let helpers = compiler_helpers().unwrap();
    assert!(helpers.len() > 100, "{helpers:?}");
    for name in ["__powidf2", "__multi3", "__ffssi2", "__multf3", "__fixdfsi"] {
        assert!(helpers.contains(name), "{name}");
    }
    for name in [
        "printf",
        "memcpy",
        "make_throw",
        "__stack_pointer",
        "__mine2",
    ] {
        assert!(!helpers.contains(name), "{name}");
    }
    // Defining one replaces the compiler's routine: refused, with the way out.
    let errors = hostile_errors("helper_defined", Check::Library);
    assert!(
        errors.iter().any(|d| d.line == Some(20)
            && d.message.starts_with(
                "defines `__multi3`, the name of a routine of the compiler's own library"
            )
            && d.message.ends_with("rename your function or variable")),
        "{errors:?}"
    );
    let src =
        "main() { volatile long double x = next_random(1, 9); x = x * x / 3; for (;;) make_throw(100 + (int)x); }\n";
    let syms = knobeln::toolchain::symbols::inspect_object(&wasm_object(src)).unwrap();
    assert!(
        syms.undefined.iter().any(|u| u.starts_with("__")),
        "the compiler calls a helper: {syms:?}"
    );
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    assert!(outcome.accepted(), "{:?}", outcome.report().diagnostics);
}

/// F2: the linker's own symbols (`__stack_pointer`, a global;
/// `__indirect_function_table`, a table) are no names for a program:
/// written in the text, check 6 refuses them before clang runs; a C
/// variable of that name is the program's own symbol, not the linker's.
#[test]
fn the_linkers_own_names_fail_check_6() {
    for (file, name) in [
        ("linker_stack_pointer", "__stack_pointer"),
        ("linker_stack_pointer_defined", "__stack_pointer"),
        ("linker_function_table", "__indirect_function_table"),
    ] {
        let errors = hostile_errors(file, Check::Library);
        assert!(
            errors.iter().any(|d| d.line == Some(20)
                && d.message
                    .starts_with(&format!("uses `{name}`, a name the linker"))),
            "{file}: {errors:?}"
        );
    }
    let syms = knobeln::toolchain::symbols::inspect_object(&wasm_object(
        "extern int __stack_pointer; int f(void) { return __stack_pointer; }\n",
    ))
    .unwrap();
    assert_eq!(syms.undefined, ["__stack_pointer"], "{syms:?}");
    assert_eq!(
        syms.forbidden_calls(&compiler_helpers().unwrap()),
        ["__stack_pointer"]
    );
}

/// F3: clang's failures are told as clang's ("clang said:", never "gcc
/// failed"), and a crash of LLVM is one sentence, never its bug-report
/// request, stack dump or the server's paths.
#[test]
fn clangs_failures_are_told_as_clangs_and_a_crash_in_one_sentence() {
    let render = |name: &str| {
        let src = fs::read(crate::common::hostile_path(name)).unwrap();
        let outcome = compile_source(&src, Profile::Submission);
        assert!(!outcome.accepted(), "{name}");
        let report = outcome.report().clone();
        let text = compile_report(&report, false, 10_000, None, &ReportNotes::default());
        (report, text)
    };
    let (report, text) = render("clang_refuses_float16");
    assert!(text.contains("\nclang said:\n"), "{text}");
    assert!(
        !text.contains("gcc said:") && !text.contains("gcc failed"),
        "{text}"
    );
    assert!(
        report.errors().any(|d| d
            .message
            .starts_with("clang (which builds the program that plays)")),
        "{text}"
    );
    // Check 5 says which compiler failed: gcc compiled the program (a
    // nested function, a GNU extension gcc accepts) and clang refused it.
    let (report, text) = render("clang_refuses_nested_function");
    assert_eq!(report.failed_builder, Some(Builder::Clang), "{text}");
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            " 5. compilation with gcc: passed by gcc; FAILED when clang built the program \
             that plays (WebAssembly for the contest's machine): see clang's words below 6. "
        ),
        "{text}"
    );
    assert!(!text.contains("compilation with gcc: FAILED"), "{text}");
    assert!(
        report.errors().any(|d| d.line == Some(20)
            && d.message.starts_with(
                "clang (which builds the program that plays): function definition is not allowed here"
            )),
        "{text}"
    );
    assert!(text.contains("\nclang said:\n"), "{text}");
    let gcc_fails = compile_source(b"main() { for (;;) make_throw(100) }\n", Profile::Local);
    let gcc_text = compile_report(
        gcc_fails.report(),
        false,
        10_000,
        None,
        &ReportNotes::default(),
    );
    assert!(
        gcc_text.contains("5. compilation with gcc: FAILED\n"),
        "{gcc_text}"
    );
    // The builtin that made LLVM crash is not on the list both compilers
    // know alike: check 6 refuses it before clang runs (H13; the crash's
    // one sentence is `an_llvm_crash_is_said_in_the_back_ends_words`).
    let (report, text) = render("llvm_crash_clear_cache");
    assert_eq!(report.failed_builder, None, "{text}");
    assert_eq!(
        report.verdict(Check::Library),
        Some(&Verdict::Failed),
        "{text}"
    );
    let errors: Vec<&Diagnostic> = report.errors().collect();
    assert_eq!(errors.len(), 1, "{text}");
    assert!(
        errors[0].line == Some(20)
            && errors[0].message.starts_with(
                "uses `__builtin___clear_cache`, which is not one of the builtins a strategy \
                 may use"
            ),
        "{text}"
    );
    for never in ["PLEASE", "Stack dump", "/usr/", "gcc failed", "said:"] {
        assert!(!text.contains(never), "{never}: {text}");
    }
}

/// F4: zero-initialised arrays of many megabytes (100 MB, 2 GB, two of
/// 3 GB) are refused with the memory message: clang writes them out as
/// zeros, and the jail's limits (16 MiB a file, 256 MiB of memory) stop it
/// long before (the words say so); an array of 20 MB the same way.
#[test]
fn huge_zero_initialised_arrays_are_refused_with_the_memory_message() {
    for file in ["static_bss_100m", "static_bss_2g_w", "static_two_arrays"] {
        let errors = hostile_errors(file, Check::Compiler);
        assert_eq!(errors.len(), 1, "{file}: {errors:?}");
        assert!(
            errors[0]
                .message
                .starts_with("the program does not fit into the memory limit of 1024 kB"),
            "{file}: {errors:?}"
        );
    }
    let src = "static int table[5000000];\n\
               main() { for (;;) { int t = make_throw(100); table[t] = t; make_throw(100 + table[t / 2]); } }\n";
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    let errors: Vec<&Diagnostic> = outcome.report().errors().collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].message.contains(
            "building it stopped at the compiler's limits (the object clang wrote grew past 16 MiB), \
             as data far larger than the memory make it"
        ),
        "{errors:?}"
    );
    // Red team P2 (2026-12-05): four bytes of static data, and a compound
    // literal of 60 MB only `sizeof` reads, which clang builds all the
    // same: told "its static data are so large" before; now the words
    // name such a literal among the data that do it.
    let src = "int n = sizeof((char[60000000]){[59999999] = 1});\n\
               main() { for (;;) make_throw(100 + n); }\n";
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    let errors: Vec<&Diagnostic> = outcome.report().errors().collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].message.starts_with(
            "the program does not fit into the memory limit of 1024 kB (requirement 5): \
             building it stopped at the compiler's limits ("
        ) && errors[0]
            .message
            .contains("a compound literal of megabytes, even one only `sizeof` reads"),
        "{errors:?}"
    );
}

/// F5: words for three more mistakes: `int main = 5;` (check 6: `main`
/// must be a function), `_Atomic long double` (its `__atomic_*` routines),
/// and the processor's cycle counter (check 2, a forbidden builtin).
#[test]
fn main_as_a_variable_atomics_and_the_cycle_counter_are_said_in_words() {
    let errors = hostile_errors("main_a_variable", Check::Library);
    assert!(
        errors.len() == 1 && errors[0].message.starts_with("`main` must be a function"),
        "{errors:?}"
    );
    let errors = hostile_errors("atomic_long_double", Check::Library);
    assert!(
        !errors.is_empty()
            && errors.iter().all(|d| d
                .message
                .contains("_Atomic objects of this size need library routines; remove _Atomic")),
        "{errors:?}"
    );
    let errors = hostile_errors("cycle_counter", Check::SingleFile);
    assert!(
        errors.iter().any(|d| d
            .message
            .starts_with("__builtin_readcyclecounter is not allowed")),
        "{errors:?}"
    );
}

/// The memory of a strategy is fixed (initial and maximum are the limit):
/// `__builtin_wasm_memory_grow` could only fail, and `…_size` says the
/// same number to every program. Both are refused by check 6 before clang,
/// saying the figure and what to do; any other WebAssembly builtin too,
/// since gcc takes it for an unknown function (two different programs).
#[test]
fn wasm_memory_builtins_are_refused_with_the_fixed_memory() {
    let errors = hostile_errors("memory_grow", Check::Library);
    assert_eq!(errors.len(), 2, "{errors:?}");
    for (d, name) in errors
        .iter()
        .zip(["__builtin_wasm_memory_grow", "__builtin_wasm_memory_size"])
    {
        assert_eq!(d.line, Some(20), "{errors:?}");
        assert_eq!(
            d.message,
            format!(
                "uses `{name}`: the memory of a strategy is fixed at 1024 kB (its static data \
                 and 64 kB of stack, requirement 5); it can neither grow nor be asked for its \
                 size: remove it and use static arrays of a fixed size"
            )
        );
    }
    let errors = hostile_errors("wasm_builtin", Check::Library);
    assert!(
        errors.len() == 1
            && errors[0].message.starts_with(
                "uses `__builtin_wasm_max_f32`, a builtin of WebAssembly that only clang knows"
            ),
        "{errors:?}"
    );
}

/// Red team E13: zig's clang 22 knows builtins that gcc 12 does not
/// (`__builtin_nondeterministic_value`, `__builtin_elementwise_abs`, …,
/// and clang 14 did not know them either): gcc compiled each as a call to
/// an implicitly declared function that no one defines, clang 22 as its
/// builtin, so check 5's gcc passed a program other than the one that
/// plays, and Debian's clang 14 refused what zig's accepted (before:
/// accepted). Now a name gcc's object calls under `__builtin_` (gcc never
/// calls a builtin it knows by that name) is refused by check 6 at its
/// line, as the WebAssembly builtins are; and so is `_BitInt`, a type
/// gcc 12 does not know, which `__typeof__` let through as `int`.
#[test]
fn builtins_only_clang_knows_are_refused_as_two_programs() {
    let errors = hostile_errors("clang_only_builtins", Check::Library);
    assert_names_said_at(
        &errors,
        &[
            ("__builtin_elementwise_abs", 21),
            ("__builtin_nondeterministic_value", 20),
        ],
        |name| format!("uses `{name}`, a builtin that gcc does not know"),
    );
    // A type gcc 12 does not know, through `__typeof__`: `int` to gcc (a
    // call it never makes), 128 bits to clang (before: accepted).
    let errors = hostile_errors("bitint_through_typeof", Check::Library);
    assert!(
        errors.len() == 1
            && errors[0].line == Some(20)
            && errors[0]
                .message
                .starts_with("uses `_BitInt`, a type that only clang knows"),
        "{errors:?}"
    );
}

/// H13 (E13's open case): a builtin off the list both compilers know
/// alike, used only where nothing is evaluated, is in no object of gcc's:
/// `__typeof__(__builtin_elementwise_abs(c))` was `int` to gcc and `char`
/// to clang, `sizeof(__builtin_elementwise_popcount(c))` 4 to gcc and 1 to
/// clang, and `__builtin_classify_type`, which both know, is not on the
/// list either (before: the program was accepted). Each is refused by
/// check 6 at its line: the two gcc does not know as such (since F2 of
/// 2026-12-05 asked of gcc by name, wherever they are written; before,
/// only a name gcc's object called got these words), the one it knows
/// saying where the list is.
#[test]
fn builtins_off_the_list_are_refused_where_nothing_is_evaluated() {
    let errors = hostile_errors("builtins_nothing_evaluates", Check::Library);
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert_names_said_at(&errors[..1], &[("__builtin_classify_type", 23)], |name| {
        format!("uses `{name}`, which is not one of the builtins a strategy may use")
    });
    assert!(
        errors[0]
            .message
            .contains("the list is in the participant guide, check 6"),
        "{}",
        errors[0].message
    );
    assert_names_said_at(
        &errors[1..],
        &[
            ("__builtin_elementwise_abs", 21),
            ("__builtin_elementwise_popcount", 22),
        ],
        |name| format!("uses `{name}`, a builtin that gcc does not know"),
    );
}

/// F2 (red team of 2026-12-05): which builtins off the list gcc does not
/// know is asked of gcc's front end on a text of the server's making, not
/// of `gcc -c` of the program again (whose front end a program can make
/// cost up to the CPU limit: an exponential typedef chain cost its
/// rejection 14.3 s instead of 7.3). The compile runs gcc on the program
/// once (check 5) and the probe once; the probe tells the names gcc does
/// not know (`__builtin_elementwise_abs`, one of its own) from those it
/// knows (`__builtin_classify_type`, `__builtin_shuffle`, a keyword of
/// gcc's parser).
#[test]
fn the_builtins_gcc_does_not_know_are_asked_of_gcc_by_name() {
    let src = fs::read(crate::common::hostile_path("builtins_nothing_evaluates")).unwrap();
    let cfg = CompileConfig {
        jail: JailLimits {
            wall: crate::common::TEST_JAIL_WALL,
            ..JailLimits::default()
        },
        ..CompileConfig::default()
    };
    let m = compile_measured(&src, &cfg, &ModuleCache::new(1 << 20)).unwrap();
    assert!(!m.outcome.accepted());
    let tools: Vec<Tool> = m.tools.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        tools,
        [Tool::GccPreprocess, Tool::Gcc, Tool::GccBuiltinsProbe],
        "{tools:?}"
    );
    let jail = Jail::new().unwrap();
    let gcc = Gcc::new(&jail, JailLimits::default());
    let probe = gcc
        .unknown_builtins(&[
            "__builtin_classify_type",
            "__builtin_elementwise_abs",
            "__builtin_shuffle",
            "__builtin_knobeln_nothing",
        ])
        .unwrap();
    assert_eq!(
        probe.names,
        Some(vec![
            "__builtin_elementwise_abs".to_string(),
            "__builtin_knobeln_nothing".to_string()
        ])
    );
    // At its limit of 64 names every one is asked; past it, the 65th is
    // not (its words are check 6's general ones), and the probe's text
    // stays the same size.
    // Sorted as the probe's answer is.
    let mut names: Vec<String> = (0..=MAX_PROBED_NAMES)
        .map(|i| format!("__builtin_knobeln_unknown_{i:03}"))
        .collect();
    names.sort();
    let asked: Vec<&str> = names.iter().map(String::as_str).collect();
    let at = gcc.unknown_builtins(&asked[..MAX_PROBED_NAMES]).unwrap();
    assert_eq!(at.names.as_deref(), Some(&names[..MAX_PROBED_NAMES]));
    let past = gcc.unknown_builtins(&asked).unwrap();
    assert_eq!(past.names.as_deref(), Some(&names[..MAX_PROBED_NAMES]));
}

/// H14: clang's builtins outside `__builtin_` (`__c11_atomic_load`,
/// `__arithmetic_fence`, `__scoped_atomic_load_n`, the type trait
/// `__is_integral`) inside `__typeof__`, `sizeof`, `_Generic`, and a
/// participant's own reserved name, each refused at its line (all but the
/// last passed check 6 before: gcc took them for functions it never
/// calls, clang builds its builtins); `_Atomic` and `__typeof__` pass.
#[test]
fn reserved_names_off_the_keywords_are_refused_where_nothing_is_evaluated() {
    let errors = hostile_errors("reserved_names_nothing_evaluates", Check::Library);
    assert_names_said_at(
        &errors,
        &[
            ("__arithmetic_fence", 22),
            ("__c11_atomic_load", 21),
            ("__helper", 25),
            ("__is_integral", 24),
            ("__scoped_atomic_load_n", 23),
        ],
        |name| {
            format!(
                "uses `{name}`: names beginning with two underscores, or an underscore and a \
                 capital letter, are the compiler's"
            )
        },
    );
    assert!(errors[2]
        .message
        .contains("rename `__helper` to `helper` or `my_helper`"));
}

/// `errors` are exactly one per name, in this order, each at its line and
/// beginning with the words `start` gives for its name.
fn assert_names_said_at(
    errors: &[Diagnostic],
    names: &[(&str, u32)],
    start: impl Fn(&str) -> String,
) {
    let said: Vec<(Option<u32>, &str)> = errors
        .iter()
        .map(|d| (d.line, d.message.as_str()))
        .collect();
    assert_eq!(errors.len(), names.len(), "{said:?}");
    for (d, (name, line)) in errors.iter().zip(names) {
        assert_eq!(d.line, Some(*line), "{said:?}");
        assert!(d.message.starts_with(&start(name)), "{said:?}");
    }
}

/// H13: every builtin on the list a strategy may name
/// (`knobeln::toolchain::builtins::BUILTINS`) is accepted by gcc and by
/// the clang that builds the module, and gives the same value and type in
/// both: `tests/data/builtins/probe.c` names each (and no other builtin);
/// gcc builds it natively and prints its values, the compile service
/// builds it as a strategy (gcc's check 5, clang's module; zig's clang 22
/// and Debian's clang where both are installed) that throws 1 when it
/// computes exactly gcc's values, 2 + the first index that differs when
/// not.
#[test]
fn builtins_on_the_list_mean_the_same_to_gcc_and_clang() {
    use knobeln::toolchain::builtins::BUILTINS;
    use std::collections::BTreeSet;
    let probe = fs::read_to_string(repo_path("tests/data/builtins/probe.c")).unwrap();
    let named: BTreeSet<&str> = probe
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("__builtin_"))
        .collect();
    let listed: BTreeSet<&str> = BUILTINS.iter().copied().collect();
    assert_eq!(named, listed, "the probe names exactly the list");

    // gcc's values: the probe built for this machine and run.
    let dir = tempfile::tempdir().unwrap();
    let host_c = dir.path().join("probe_host.c");
    fs::write(
        &host_c,
        format!(
            "{probe}\nint printf(const char *, ...);\nvolatile int zero;\n\
             int main(void) {{ long long v[256]; int n = probe(v, zero), i;\n\
             for (i = 0; i < n; i++) printf(\"%lld\\n\", v[i]); return 0; }}\n"
        ),
    )
    .unwrap();
    let host = dir.path().join("probe_host");
    let built = std::process::Command::new("/usr/bin/gcc")
        .args([
            "-O2",
            "-fno-builtin",
            "-Werror=implicit-function-declaration",
            "-o",
        ])
        .arg(&host)
        .arg(&host_c)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = std::process::Command::new(&host).output().unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let gcc_values: Vec<i64> = String::from_utf8(ran.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(gcc_values.len() > 2 * 40, "{gcc_values:?}");

    // clang's: the same probe as a strategy, which compares.
    let want: Vec<String> = gcc_values.iter().map(|v| format!("{v}LL")).collect();
    let strategy = format!(
        "{probe}\nvolatile int zero;\nstatic const long long want[{}] = {{ {} }};\n\
         main() {{ long long v[256]; int n = probe(v, zero), i, bad = 0;\n\
         if (n != {}) bad = 1000; else for (i = 0; i < n; i++) if (v[i] != want[i]) {{ bad = i + 1; break; }}\n\
         for (;;) make_throw(1 + bad); }}\n",
        want.len(),
        want.join(", "),
        want.len()
    );
    for (llvm, thrown) in first_throw_with_every_toolchain(strategy.as_bytes(), Profile::Local) {
        assert!(
            thrown == 1,
            "{llvm:?}: the strategy threw {thrown}: the values differ from index {} on (gcc's: {:?})",
            thrown - 2,
            gcc_values.get((thrown - 2).max(0) as usize..)
        );
    }
}

/// Compiles `src` with every toolchain this machine has (the one the
/// server finds and, where that is zig's, Debian's beside it), plays the
/// module against itself for one game and returns each toolchain's first
/// throw. A rejection or a failure in play fails the calling test, naming
/// the toolchain.
fn first_throw_with_every_toolchain(src: &[u8], profile: Profile) -> Vec<(Llvm, Throw)> {
    let mut toolchains = vec![Toolchain::find().expect("clang")];
    if toolchains[0].llvm == Llvm::Zig {
        toolchains.extend(Toolchain::find_debian());
    }
    toolchains
        .into_iter()
        .map(|tools| {
            let cfg = CompileConfig {
                profile,
                toolchain: Some(tools.clone()),
                jail: JailLimits {
                    wall: crate::common::TEST_JAIL_WALL,
                    ..JailLimits::default()
                },
                ..CompileConfig::default()
            };
            let binary = match knobeln::toolchain::compile::compile(src, &cfg).unwrap() {
                Outcome::Accepted { binary, .. } => binary,
                Outcome::Rejected { report } => panic!(
                    "{:?}: {:#?}\n{}",
                    tools.llvm,
                    report.errors().collect::<Vec<_>>(),
                    report.compiler_output
                ),
            };
            let s = install(&binary);
            let rec = play(
                &config(10, knobeln::referee::DEFAULT_FUEL, Duration::from_secs(600)),
                &s,
                &s,
                1,
            );
            assert!(rec.failures.is_empty(), "{:?}: {rec:?}", tools.llvm);
            (tools.llvm, rec.throws[0][0])
        })
        .collect()
}

/// H16 (red team F16): zig's clang 22 knows about 350 library functions
/// whose names are not reserved (`fmaximum_numl`, `index`, `round`; its
/// `__has_builtin` says so without the server's flags) and, left to
/// itself, declares one called undeclared with its library type, where gcc
/// 12 makes it `int ()`: inside `sizeof` nothing is called, no object
/// shows the name, and `sizeof(fmaximum_numl(1, 2))` would be 4 to the
/// checks and 16 in the module. The server's `-ffreestanding` and
/// `-fno-builtin` (each alone is enough, for gcc and both clangs) make
/// every such name an ordinary undeclared function, `int ()`, as in a 1994
/// program: `library_builtins_nothing_evaluates.c` is accepted (its names
/// are a program's own) and its module computes gcc's sizes (3 × 4, not
/// 16 + 4 + 8), with its own function called before its definition,
/// K&R style, beside them. The strategy throws `wide() * 10 + 102`: 222
/// with gcc's types, 382 with the library's.
#[test]
fn library_functions_clang_knows_are_undeclared_functions_to_both_compilers() {
    let src = fs::read(crate::common::hostile_path(
        "library_builtins_nothing_evaluates",
    ))
    .expect("hostile source");
    for (llvm, thrown) in first_throw_with_every_toolchain(&src, Profile::Submission) {
        assert_eq!(thrown, 222, "{llvm:?}: clang's types");
    }
}

/// A function whose local variables take more than the whole 64 kB stack
/// (a local array of a megabyte) would crash whenever it is called:
/// refused at compile time, with its figure, the limit and the way out,
/// read from the prologue of clang's object (`__stack_pointer` minus a
/// constant). A frame that fits is accepted.
#[test]
fn a_stack_frame_larger_than_the_stack_is_refused_with_its_figure() {
    let frames = knobeln::toolchain::wasm::stack_frames(&wasm_object(
        "int fill(int t) { int a[262144]; int i; for (i = 0; i < 262144; i++) a[i] = next_random(1, 9) + i; return a[t % 262144]; }\n",
    ));
    assert_eq!(
        frames,
        [knobeln::toolchain::wasm::StackFrame {
            function: Some("fill".into()),
            bytes: 1 << 20
        }]
    );
    for (file, function, kb) in [
        ("big_stack_frame", "fill", "1024"),
        ("big_stack_in_main", "main", "79"),
    ] {
        // (`fill` is inlined into `main` too: both are named.)
        let errors = hostile_errors(file, Check::Compiler);
        assert_eq!(errors[0].line, Some(20), "{file}: {errors:?}");
        assert!(
            errors[0].message.starts_with(&format!(
                "the function `{function}` needs {kb} kB of stack for its local variables, \
                 more than the 64 kB of stack a strategy has (requirement 5: the memory is \
                 fixed at 1024 kB); it would crash whenever it is called: make its large local \
                 arrays static"
            )),
            "{file}: {errors:?}"
        );
    }
    // At the limit: a frame of exactly the stack passes the check (it is
    // the whole stack, its callees excepted), one 16 bytes more does not.
    for (bytes, accepted) in [(65536usize, true), (65552, false)] {
        let words = bytes / 4;
        let src = format!(
            "int fill(int t) {{ volatile int a[{words}]; a[t % {words}] = t; return a[(t + 1) % {words}]; }}\n"
        );
        let frames = knobeln::toolchain::wasm::stack_frames(&wasm_object(&src));
        assert_eq!(frames.len(), 1, "{frames:?}");
        assert_eq!(frames[0].bytes, bytes as u64, "{src}: {frames:?}");
        let strategy = format!(
            "{src}main() {{ int n = 0; for (;;) {{ n = fill(n) % 7; make_throw(100 + n); }} }}\n"
        );
        let outcome = compile_source(strategy.as_bytes(), Profile::Local);
        assert_eq!(
            outcome.accepted(),
            accepted,
            "a frame of {bytes} bytes: {:?}",
            outcome.report().diagnostics
        );
    }
    let fits = "main() { int seen[10000]; int n = 0, i; for (i = 0; i < 10000; i++) seen[i] = 0;\n\
                for (;;) { int t = make_throw(100 + seen[n % 10000] % 10); seen[n++ % 10000] = t; } }\n";
    let outcome = compile_source(fits.as_bytes(), Profile::Local);
    assert!(outcome.accepted(), "{:?}", outcome.report().diagnostics);
}

/// Modules cached by source: the same source with the same settings is
/// the stored outcome (the same module, the same report), without a tool
/// run; another setting compiles again; a rejection is compiled again.
#[test]
fn the_same_source_compiled_again_is_the_caches_outcome_and_another_setting_misses() {
    let cache = ModuleCache::new(64 << 20);
    let src = fs::read(example_path()).unwrap();
    let cfg = CompileConfig::local();
    let first = compile_measured(&src, &cfg, &cache).unwrap();
    assert_eq!(first.origin, Origin::Compiled);
    let ran: Vec<Tool> = first.tools.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        ran,
        [Tool::GccPreprocess, Tool::Gcc, Tool::Clang, Tool::WasmLd]
    );
    let again = compile_measured(&src, &cfg, &cache).unwrap();
    assert_eq!(again.origin, Origin::Cached);
    assert!(again.tools.is_empty());
    let (
        Outcome::Accepted {
            binary: a,
            report: ra,
        },
        Outcome::Accepted {
            binary: b,
            report: rb,
        },
    ) = (&first.outcome, &again.outcome)
    else {
        panic!("the example is accepted");
    };
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(ra).unwrap(),
        serde_json::to_string(rb).unwrap()
    );
    let other = CompileConfig {
        memory_limit: cfg.memory_limit * 2,
        ..cfg.clone()
    };
    assert_eq!(
        compile_measured(&src, &other, &cache).unwrap().origin,
        Origin::Compiled
    );
    let rejected = b"main() { printf(\"x\"); }\n";
    for _ in 0..2 {
        let m = compile_measured(rejected, &cfg, &cache).unwrap();
        assert!(!m.outcome.accepted());
        assert_eq!(m.origin, Origin::Compiled);
    }
}

/// The cache keeps no authentification string: a submission's report is
/// stored without it, and a hit reads it again from the source.
#[test]
fn the_cache_keeps_no_authentification_string_and_a_hit_reads_it_again() {
    let cache = ModuleCache::new(64 << 20);
    let src = fs::read(source_path("valid")).unwrap();
    let cfg = CompileConfig::default();
    let first = compile_measured(&src, &cfg, &cache).unwrap();
    assert!(first.outcome.accepted());
    let stored = cache.get(&cache_key(&src, &cfg).unwrap()).unwrap();
    let kept = format!("{:?}", stored.report());
    assert!(!kept.contains("authstring"), "{kept}");
    assert_eq!(stored.report().header.as_ref().unwrap().auth, "");
    let again = compile_measured(&src, &cfg, &cache).unwrap();
    assert_eq!(again.origin, Origin::Cached);
    assert_eq!(
        serde_json::to_string(again.outcome.report()).unwrap(),
        serde_json::to_string(first.outcome.report()).unwrap()
    );
    let header = again.outcome.report().header.clone().unwrap();
    assert_eq!(header.auth, "authstring");
}

/// Red team (F9): a program whose own diagnostic says `No space left on
/// device` (an `#error`, a failed static assertion) is rejected for what
/// it says, at its line: the report never says that gcc filled its work
/// folder, which it did not (the folder's free pages and inodes are the
/// measure; the words alone are the program's). Before, the jail chose
/// the work folder's sentence by finding these words in a failed tool's
/// output, and the report carried it beside the program's own error.
#[test]
fn a_program_saying_no_space_left_is_not_reported_as_a_full_work_folder() {
    let base = fs::read_to_string(source_path("syntax_error")).unwrap();
    for (what, line) in [
        ("#error", "#error No space left on device\n"),
        (
            "a static assertion",
            "_Static_assert(0, \"No space left on device\");\n",
        ),
    ] {
        let src = base
            .replace("x = = 3;", "x = 3;")
            .replace("main()\n", &format!("{line}main()\n"));
        let outcome = compile_source(src.as_bytes(), Profile::Submission);
        let report = outcome.report();
        assert!(!outcome.accepted(), "{what}");
        let errors: Vec<String> = report.errors().map(|e| e.message.clone()).collect();
        assert!(
            errors.iter().all(|e| !e.contains("filled its work folder")),
            "{what}: {errors:#?}"
        );
        assert!(
            errors.iter().any(|e| e.contains("No space left on device")),
            "{what}: the program's own words: {errors:#?}"
        );
    }
}

/// Red team (G18): a program whose own warning says the words of a limit
/// (`#warning CPU time limit exceeded`, `File size limit exceeded`, `out
/// of memory`, `memory exhausted`) is accepted with its warning: gcc ran
/// within every limit. Before, the jail chose the limit's sentence by
/// finding these words anywhere in a tool's output, so the preprocessor's
/// warning made check 5 fail with "gcc used more than 10 s of CPU time
/// and was stopped" (or its file size's or memory's sentence) for a
/// program that passed everything: F9's kind of error for the other
/// limits. Only a tool's own line says a limit now (`gcc: fatal error: …
/// signal terminated program cc1`), never a diagnostic of the program's.
#[test]
fn a_program_saying_a_limits_words_is_not_stopped_by_that_limit() {
    let base = fs::read_to_string(source_path("syntax_error"))
        .unwrap()
        .replace("x = = 3;", "x = 3;");
    for words in [
        "CPU time limit exceeded",
        "File size limit exceeded",
        "out of memory",
        "memory exhausted",
    ] {
        let src = base.replace("main()\n", &format!("#warning {words}\nmain()\n"));
        let outcome = compile_source(src.as_bytes(), Profile::Submission);
        let report = outcome.report();
        let errors: Vec<String> = report.errors().map(|e| e.message.clone()).collect();
        assert!(outcome.accepted(), "{words}: {errors:#?}");
        assert!(
            report
                .diagnostics
                .iter()
                .any(|d| d.message.contains(&format!("#warning {words}"))),
            "{words}: its own warning is reported: {:#?}",
            report.diagnostics
        );
    }
}

/// A compile whose tools the server's load slows past the jail's wall
/// limit (here a wall of 1 ms, below what any run takes) is a problem of
/// the server's, an `Err` the mail answers as "not compiled (server
/// problem)", never a rejection of the program: the verdict never depends
/// on the machine's load.
#[test]
fn a_compile_slowed_past_the_wall_by_load_is_no_rejection() {
    let cfg = CompileConfig {
        jail: JailLimits {
            wall: Duration::from_millis(1),
            ..JailLimits::default()
        },
        ..CompileConfig::default()
    };
    let src = fs::read(source_path("valid")).unwrap();
    match knobeln::toolchain::compile::compile(&src, &cfg) {
        Err(knobeln::toolchain::compile::CompileError::Jail(
            knobeln::sandbox::jail::JailError::Overloaded { .. },
        )) => {}
        Err(e) => panic!("another error: {e}"),
        Ok(o) => panic!(
            "a verdict from the clock: {:#?}",
            o.report().errors().collect::<Vec<_>>()
        ),
    }
}

/// clang's warnings never hide its error: a program gcc accepts and clang
/// refuses (a nested function), its error between more than the jail
/// keeps of clang's output (64 kB from the start, 4 kB from the end) of
/// warnings gcc does not give (`x == 1;`: clang's `-Wunused-comparison`),
/// is refused with clang's error at its line: the build says its errors
/// alone (`-w`); none of those warnings is quoted.
#[test]
fn clangs_error_is_said_when_its_warnings_drown_it() {
    let base =
        fs::read_to_string(crate::common::hostile_path("clang_refuses_nested_function")).unwrap();
    let (head, main) = base.split_at(base.find("main()").unwrap());
    let flood = |name: &str, lines: usize| {
        format!(
            "void {name}(int x) {{\n{}}}\n",
            "    x == 1;\n".repeat(lines)
        )
    };
    let src = format!(
        "{head}{}{main}{}",
        flood("before", 1200),
        flood("after", 100)
    );
    let main_line = 1 + src[..src.find("main()").unwrap()].lines().count() as u32;
    let outcome = compile_source(src.as_bytes(), Profile::Submission);
    let report = outcome.report();
    let ctx = format!("{:#?}", report.errors().collect::<Vec<_>>());
    assert!(!outcome.accepted(), "{ctx}");
    assert_eq!(report.failed_builder, Some(Builder::Clang), "{ctx}");
    assert!(
        report.errors().any(|d| d.line == Some(main_line)
            && d.message.starts_with(
                "clang (which builds the program that plays): function definition is not allowed here"
            )),
        "line {main_line}: {ctx}"
    );
    assert!(
        !report.compiler_output.contains("unused-comparison")
            && report.warnings().all(|d| !d.message.contains("unused")),
        "{}",
        report.compiler_output
    );
}

/// A `#pragma GCC diagnostic` may silence a warning and keep and restore
/// that state, never turn one on or make it an error (check 2): clang,
/// which builds the program that plays, would obey it where gcc does not
/// know the option, and a warning turned on overrides the flags of
/// clang's run for the report's words. Before (2026-12-05, F2 of the
/// forty-ninth session) `error "-Wunused-comparison"` rejected the
/// program with clang's error, and behind a flood of such warnings with
/// "clang failed" and no reason; before that, with `-w`, it was accepted
/// and the pragma ignored. Each form is refused at its line, in words;
/// `push`, `ignored` and `pop` are accepted.
#[test]
fn a_pragma_turning_a_warning_on_or_into_an_error_is_refused_at_check_2() {
    let valid = fs::read_to_string(source_path("valid")).unwrap();
    let head: String = valid.lines().take(20).map(|l| format!("{l}\n")).collect();
    let program = |pragma: &str, flood: usize| {
        format!(
            "{head}{pragma}\n\
             void f(int x) {{ {} }}\n\
             main() {{ for (;;) make_throw(100); }}\n",
            "x == 1; ".repeat(flood)
        )
    };
    for (pragma, kind, flood) in [
        (
            "#pragma GCC diagnostic error \"-Wunused-comparison\"",
            "error",
            1,
        ),
        (
            "#pragma GCC diagnostic warning \"-Wunused-comparison\"",
            "warning",
            1,
        ),
        (
            "_Pragma(\"GCC diagnostic error \\\"-Wunused-comparison\\\"\")",
            "error",
            1,
        ),
        (
            "#pragma GCC diagnostic error \"-Wunused-comparison\"",
            "error",
            2000,
        ),
    ] {
        let outcome = compile_source(program(pragma, flood).as_bytes(), Profile::Submission);
        let report = outcome.report();
        let errors: Vec<&Diagnostic> = report.errors().collect();
        let ctx = format!("{pragma}: {errors:#?}");
        assert!(!outcome.accepted(), "{ctx}");
        assert!(
            errors.iter().any(|d| d.check == Check::SingleFile
                && d.line == Some(21)
                && d.message.contains(&format!(
                    "#pragma GCC diagnostic {kind} is not allowed: a program may silence a warning"
                ))),
            "{ctx}"
        );
        assert!(errors.iter().all(|d| d.check != Check::Compiler), "{ctx}");
    }
    let silenced = program(
        "#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wunused-value\"",
        1,
    ) + "#pragma GCC diagnostic pop\n";
    let outcome = compile_source(silenced.as_bytes(), Profile::Submission);
    assert!(outcome.accepted(), "{:#?}", outcome.report().diagnostics);
}

/// A warning clang would write with a type of 2^16 parts (a chain of
/// typedefs each doubling the one before, and one comparison of distinct
/// pointer types: about 150 tokens; red team F1 of the forty-ninth
/// session) costs the compile nothing: the build that plays says no
/// warning (`-w`), and the run for the report's words says only the
/// allowlist's (`-Wno-everything`), so the result of `pick()` the
/// program ignores after the comparison is still said at its line, with
/// both clangs. Before: clang wrote the type past its limits (15 s of
/// CPU and 900 MB by hand) and the program was rejected, "its static
/// data are so large" (it has none); with the allowlist run formatting
/// it, its limit would leave the report without `pick()`'s warning.
#[test]
fn a_warning_naming_a_huge_type_neither_rejects_nor_hides_the_allowlists() {
    let src = fs::read(repo_path("tests/data/object_time/huge_type.c")).unwrap();
    for (tools, cfg) in each_clang() {
        let cache = ModuleCache::new(64 << 20);
        let measured = compile_measured(&src, &cfg, &cache).unwrap();
        let report = measured.outcome.report();
        let ctx = format!("{:?}: {:#?}", tools.llvm, report.diagnostics);
        assert!(measured.outcome.accepted(), "{ctx}");
        let ran: Vec<Tool> = measured.tools.iter().map(|(t, _)| *t).collect();
        assert!(ran.contains(&Tool::ClangWarnings), "{ran:?}");
        let clangs: Vec<&Diagnostic> = report
            .warnings()
            .filter(|d| d.message.starts_with("clang (which builds"))
            .collect();
        assert!(
            clangs.len() == 1
                && clangs[0].line == Some(38)
                && clangs[0].message.contains("'warn_unused_result'"),
            "{ctx}"
        );
        assert!(!report.compiler_output.contains("aka"), "{ctx}");
    }
}

/// Each clang a compile may build with, zig's and Debian's, and the
/// compile's settings with it (the tests' wall).
fn each_clang() -> [(Toolchain, CompileConfig); 2] {
    let zig = Toolchain::find().expect("a wasm toolchain");
    let debian = Toolchain::find_debian().expect("Debian's clang, wasm-ld and the builtins");
    [zig, debian].map(|tools| {
        let cfg = CompileConfig {
            toolchain: Some(tools.clone()),
            jail: JailLimits {
                wall: crate::common::TEST_JAIL_WALL,
                ..JailLimits::default()
            },
            ..CompileConfig::default()
        };
        (tools, cfg)
    })
}

/// The warnings gcc 12 gives only while it builds an object, which check
/// 5's `gcc -fsyntax-only` never reaches (red team F1 of the forty-eighth
/// session), are said by clang, the compiler that builds the program
/// that plays, each at its line, with both clangs (zig's and Debian's):
/// a `noreturn` function that returns (clang builds `main` as an endless
/// loop of `play`'s throws: the 700s written after the call are gone),
/// an ignored `warn_unused_result` value, `va_arg` of a promoted type,
/// `va_start` of a parameter not the last, a `memset` past its buffer.
/// Before: none of them, and the report said nothing. clang's other
/// warnings (implicit `int` and declarations, which gcc's front end
/// judges) are not quoted.
#[test]
fn warnings_gcc_gives_only_building_an_object_are_said_by_clang() {
    let src = fs::read(repo_path("tests/data/object_time/warnings.c")).unwrap();
    let expected = [
        (21, "'noreturn' should not return"),
        (23, "promotable type 'char'"),
        (24, "'va_start' is not the last"),
        (26, "'memset' will always overflow"),
        (27, "'warn_unused_result'"),
    ];
    for (tools, cfg) in each_clang() {
        let outcome = knobeln::toolchain::compile::compile(&src, &cfg).unwrap();
        let report = outcome.report();
        let ctx = format!("{:?}: {:#?}", tools.llvm, report.diagnostics);
        assert!(outcome.accepted(), "{ctx}");
        let clangs: Vec<(Option<u32>, &str)> = report
            .warnings()
            .filter(|d| {
                d.message
                    .starts_with("clang (which builds the program that plays): ")
            })
            .map(|d| (d.line, d.message.as_str()))
            .collect();
        assert_eq!(clangs.len(), expected.len(), "{ctx}");
        for (line, words) in expected {
            assert!(
                clangs
                    .iter()
                    .any(|(l, m)| *l == Some(line) && m.contains(words)),
                "line {line}, {words:?}: {ctx}"
            );
        }
        // gcc's front end said none of them.
        assert!(
            report
                .warnings()
                .all(|d| d.message.starts_with("clang") || !d.message.contains("noreturn")),
            "{ctx}"
        );
        assert!(
            report.compiler_output.starts_with("clang said:\n"),
            "{:?}",
            report.compiler_output
        );
    }
}
