//! Unit tests of the compile service's pure steps: check 6's findings in
//! an object's symbols, the memory message, and the verdicts of a pass.

use super::report::{finish, FirstUses, Verdicts};
use super::*;
use crate::toolchain::symbols::{Helpers, ObjectSymbols};
use std::collections::HashSet;

fn symbols(undefined: &[&str], defined: &[&str], constructors: bool) -> ObjectSymbols {
    ObjectSymbols {
        undefined: undefined.iter().map(|s| s.to_string()).collect(),
        defined: defined.iter().map(|s| s.to_string()).collect(),
        defined_data: Vec::new(),
        constructors,
    }
}

/// Helpers as the builtins archive would list them.
fn helpers() -> Helpers {
    Helpers::new(["__multf3", "__powidf2", "__multi3"].map(String::from))
}

#[test]
fn check_6_names_each_problem_at_the_line_that_names_it() {
    let src = "main() {\n  printf(\"x\");\n  make_throw(1);\n}\nint log2(int x) { return x; }\n";
    let uses = FirstUses::new(src, None);
    let runtime = symbols(
        &["knobeln_referee_seed", "knobeln_referee_throw"],
        &["knobeln_start", "log2", "make_throw", "memcpy"],
        false,
    );
    let honest = symbols(&["make_throw", "memcpy", "__multf3"], &["main"], false);
    assert_eq!(
        library_problems(&honest, &runtime, &helpers(), &HashSet::new(), &uses),
        Vec::new()
    );
    // An accepted program's source is not lexed for lines nobody asks.
    assert!(!uses.lexed());
    let found = library_problems(
        &symbols(&["make_throw", "printf"], &["log2", "knobeln_start"], true),
        &runtime,
        &helpers(),
        &HashSet::new(),
        &uses,
    );
    let said: Vec<(Option<u32>, &str)> =
        found.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(said.len(), 5, "{said:?}");
    assert_eq!(said[0].0, Some(2));
    assert!(said[0].1.starts_with("uses `printf`, which is not one of the five library routines (init_random, log2, next_random, make_throw, count_points)"));
    assert!(said[1]
        .1
        .starts_with("the program defines no function `main`"));
    assert!(said[2]
        .1
        .starts_with("defines `knobeln_start`; the contest runtime provides"));
    assert_eq!(said[3].0, Some(5));
    assert!(said[3].1.starts_with("defines its own `log2`"));
    assert!(said[4].1.starts_with("the program has constructors"));
    assert!(found.iter().all(|d| d.check == Check::Library));
}

/// The runtime's undefined names are the referee's imports: a strategy
/// that defined one would replace the import (its own seed, or throws
/// that never reach the referee).
#[test]
fn check_6_refuses_a_definition_of_the_runtimes_names_for_the_referee() {
    let src = "long long knobeln_referee_seed(void) { return 42; }\nmain() { }\n";
    let uses = FirstUses::new(src, None);
    let runtime = symbols(
        &["knobeln_referee_seed", "knobeln_referee_throw"],
        &["knobeln_start", "make_throw"],
        false,
    );
    let found = library_problems(
        &symbols(&[], &["knobeln_referee_seed", "main"], false),
        &runtime,
        &helpers(),
        &HashSet::new(),
        &uses,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, Some(1));
    assert!(found[0]
        .message
        .starts_with("defines `knobeln_referee_seed`, the contest runtime's name"));
}

/// A compiler helper is the compiler's call only when the program does not
/// name it: `__powidf2` written in the text is the program's call.
#[test]
fn check_6_refuses_a_compiler_helper_the_program_calls_by_name() {
    let src = "double __powidf2(double, int);\nmain() { make_throw(__powidf2(2.0, 3)); }\n";
    let uses = FirstUses::new(src, None);
    let runtime = symbols(&[], &["make_throw"], false);
    let object = symbols(&["__multf3", "__powidf2", "make_throw"], &["main"], false);
    let written: HashSet<String> = ["__powidf2", "make_throw", "main"].map(String::from).into();
    let found = library_problems(&object, &runtime, &helpers(), &written, &uses);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, Some(1));
    assert!(found[0].message.starts_with("calls `__powidf2` by name"));
    // Not written: the compiler's own call (as `__multf3` above).
    assert!(library_problems(&object, &runtime, &helpers(), &HashSet::new(), &uses).is_empty());
}

/// A program that defines a helper's name would replace the compiler's
/// routine: refused at its line, whether the compiler calls it or not.
#[test]
fn check_6_refuses_a_definition_of_a_compiler_helper() {
    let src = "main() { make_throw(100); }\nlong long __multi3(long long a) { return a; }\n";
    let uses = FirstUses::new(src, None);
    let runtime = symbols(&[], &["make_throw"], false);
    let object = symbols(&["make_throw"], &["__multi3", "main"], false);
    let written: HashSet<String> = ["__multi3", "make_throw", "main"].map(String::from).into();
    let found = library_problems(&object, &runtime, &helpers(), &written, &uses);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, Some(2));
    assert!(found[0]
        .message
        .starts_with("defines `__multi3`, the name of a routine of the compiler's own library"));
    // Shaped like a helper but not the archive's: the program's own name.
    let object = symbols(&["make_throw"], &["__mine2", "main"], false);
    assert!(library_problems(&object, &runtime, &helpers(), &written, &uses).is_empty());
}

/// `int main = 5;` defines `main`, but no function: said so, once.
#[test]
fn check_6_says_main_must_be_a_function() {
    let uses = FirstUses::new("int main = 5;\n", None);
    let mut object = symbols(&[], &["main"], false);
    object.defined_data = vec!["main".into()];
    let found = library_problems(
        &object,
        &ObjectSymbols::default(),
        &helpers(),
        &HashSet::new(),
        &uses,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, Some(1));
    assert!(found[0].message.starts_with("`main` must be a function"));
}

/// `_Atomic` objects larger than the machine's words need `__atomic_*`
/// routines: said in words of C.
#[test]
fn check_6_says_what_to_do_about_atomic_routines() {
    let uses = FirstUses::new("main() { }\n", None);
    let object = symbols(&["__atomic_load"], &["main"], false);
    let found = library_problems(
        &object,
        &ObjectSymbols::default(),
        &helpers(),
        &HashSet::new(),
        &uses,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0]
        .message
        .contains("_Atomic objects of this size need library routines; remove _Atomic"));
}

#[test]
fn the_memory_message_says_what_is_needed_and_by_how_much_to_shrink() {
    let m = memory_message(1_065_544, 1 << 20);
    assert_eq!(
        m,
        "the program does not fit into the memory limit of 1024 kB (requirement 5): it needs \
         about 1041 kB (its static data are 977 kB, and it has 64 kB of stack for its own use); \
         make static arrays smaller by at least 17 kB"
    );
}

#[test]
fn checks_not_reached_are_skipped_and_verdicts_come_in_check_order() {
    let mut v = Verdicts::default();
    v.set(Check::Description, Verdict::Passed);
    v.set(Check::Header, Verdict::NotApplicable);
    v.set(Check::SingleFile, Verdict::Passed);
    v.set(Check::SingleFile, Verdict::Failed);
    v.skip_rest("the source must first be pure C (check 2)");
    let mut r = Report::empty();
    r.diagnostics
        .push(Diagnostic::error(Check::SingleFile, Some(3), "asm"));
    let out = finish(r, v, Some(b"\0asm".to_vec()));
    assert!(!out.accepted(), "an error rejects, whatever was built");
    let checks: Vec<(Check, Verdict)> = out
        .report()
        .checks
        .iter()
        .map(|c| (c.check, c.verdict.clone()))
        .collect();
    let skipped = Verdict::Skipped("the source must first be pure C (check 2)".into());
    assert_eq!(
        checks,
        [
            (Check::Header, Verdict::NotApplicable),
            (Check::SingleFile, Verdict::Failed),
            (Check::LexicalElements, skipped.clone()),
            (Check::Description, Verdict::Passed),
            (Check::Compiler, skipped.clone()),
            (Check::Library, skipped),
        ]
    );
}

fn accepted(binary_bytes: usize) -> Outcome {
    Outcome::Accepted {
        binary: vec![0; binary_bytes],
        report: Report::empty(),
    }
}

/// The cache's bound: past it the oldest outcome goes first, and an
/// outcome larger than the whole cache is not kept.
#[test]
fn the_module_cache_drops_the_oldest_outcome_past_its_bound() {
    let report_bytes = serde_json::to_vec(&Report::empty()).unwrap().len();
    let each = 1000 + report_bytes;
    let cache = ModuleCache::new(2 * each + each / 2);
    cache.insert([1; 32], &accepted(1000));
    cache.insert([2; 32], &accepted(1000));
    assert_eq!(cache.len_and_bytes(), (2, 2 * each));
    cache.insert([3; 32], &accepted(1000));
    assert_eq!(cache.len_and_bytes(), (2, 2 * each));
    assert!(cache.get(&[1; 32]).is_none(), "the oldest is dropped");
    assert!(cache.get(&[2; 32]).is_some() && cache.get(&[3; 32]).is_some());
    cache.insert([4; 32], &accepted(3 * each));
    assert!(
        cache.get(&[4; 32]).is_none(),
        "larger than the cache: not kept"
    );
    assert_eq!(cache.len_and_bytes(), (2, 2 * each));
}

/// A rejection is never stored (it may have been the load's: a
/// wall-clock limit).
#[test]
fn the_module_cache_keeps_only_acceptances() {
    let cache = ModuleCache::new(1 << 20);
    cache.insert(
        [7; 32],
        &Outcome::Rejected {
            report: Report::empty(),
        },
    );
    assert_eq!(cache.len_and_bytes(), (0, 0));
}

/// The key covers the source's bytes and every setting: one byte or one
/// setting changed is another key.
#[test]
fn the_cache_key_changes_with_the_source_and_each_setting() {
    let cfg = CompileConfig::default();
    let key = |src: &[u8], cfg: &CompileConfig| cache_key(src, cfg).expect("the toolchain");
    let base = key(b"main() { }\n", &cfg);
    assert_eq!(base, key(b"main() { }\n", &cfg));
    assert_ne!(base, key(b"main() { } \n", &cfg));
    let others = [
        CompileConfig {
            memory_limit: cfg.memory_limit / 2,
            ..cfg.clone()
        },
        CompileConfig {
            profile: Profile::Organizer,
            ..cfg.clone()
        },
        CompileConfig {
            max_lexical_elements: cfg.max_lexical_elements + 1,
            ..cfg.clone()
        },
        CompileConfig {
            jail: crate::sandbox::jail::JailLimits {
                cpu_secs: cfg.jail.cpu_secs + 1,
                ..cfg.jail
            },
            ..cfg.clone()
        },
    ];
    for other in &others {
        assert_ne!(base, key(b"main() { }\n", other), "{other:?}");
    }
}

/// An LLVM crash in one sentence: the back end's words, never its request
/// for a bug report, its stack dump or the server's paths. (The strategy
/// that made clang 14 and 22 crash, `__builtin___clear_cache`, is refused
/// by check 6 before clang now: it is not on the list of builtins.)
#[test]
fn an_llvm_crash_is_said_in_the_back_ends_words() {
    let crash = "fatal error: error in backend: llvm.clear_cache is not supported on wasm\n\
                 PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ \
                 and include the crash backtrace.\nStack dump:\n0.\tProgram arguments: \
                 /usr/lib/llvm-14/bin/clang -cc1 -triple wasm32\n";
    assert_eq!(
        llvm_crash(crash).as_deref(),
        Some("llvm.clear_cache is not supported on wasm")
    );
    let pathy = "error in backend: cannot open /usr/lib/x\nStack dump:\n";
    assert_eq!(llvm_crash(pathy).as_deref(), Some("the compiler crashed"));
    assert_eq!(
        llvm_crash("PLEASE submit a bug report\n").as_deref(),
        Some("the compiler crashed")
    );
    assert_eq!(llvm_crash("strategy.c:3:1: error: expected ';'\n"), None);
}

/// The link is given the builtins archive where an object has an undefined
/// symbol it defines (a helper the compiler calls), and only there: what
/// the object defines, or calls elsewhere, does not count.
#[test]
fn an_object_calls_the_builtins_only_by_an_undefined_helper() {
    let calls = |undefined: &[&str], defined: &[&str]| {
        CallsHelpers::of(&symbols(undefined, defined, false), &helpers())
    };
    assert_eq!(
        calls(&["__multf3", "make_throw"], &["main"]),
        CallsHelpers::Yes
    );
    assert_eq!(
        calls(&["make_throw", "memcpy"], &["main"]),
        CallsHelpers::No
    );
    assert_eq!(
        calls(&["make_throw"], &["__multi3", "main"]),
        CallsHelpers::No
    );
    assert_eq!(calls(&[], &[]), CallsHelpers::No);
}
