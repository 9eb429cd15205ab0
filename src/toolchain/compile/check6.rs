//! Check 6's findings, as diagnostics at the line that names the symbol:
//! the names a program may not write (the linker's own, WebAssembly's
//! builtins, every builtin off the list both compilers know alike), and
//! what clang's object needs and defines (only the five routines, `mem*`
//! and the compiler's helpers; `main`; none of the runtime's names, none
//! of the helpers'; no constructors).
//!
//! Pure: it reads symbol lists and identifier sets that the compile
//! service gathered; it runs no tool and decides nothing about other checks.

use std::collections::HashSet;

use super::report::FirstUses;
use crate::toolchain::builtins;
use crate::toolchain::diagnostic::{Check, Diagnostic};
use crate::toolchain::symbols::{Helpers, ObjectSymbols, LIBRARY_ROUTINES, LINKER_SYMBOLS};
use crate::toolchain::wasm;

/// Types clang 22 knows in C17 and gcc 12 does not: gcc takes such a
/// name for a function, which only an unevaluated use (`__typeof__`,
/// `sizeof`) lets it compile, into another type (red team E13).
const TYPES_ONLY_CLANG_KNOWS: &[&str] = &["_BitInt", "_ExtInt"];

/// Reserved names off [`builtins::KEYWORDS`] left to clang's own words:
/// it refuses `_Float16` on wasm32 wherever it is written (inside
/// `__typeof__` too), so no second program is built.
const LEFT_TO_CLANG: &[&str] = &["_Float16"];

/// Check 6 on the text, before clang: the program names none of the
/// linker's own symbols (clang would fail on some, wasm-ld on others), nor
/// a WebAssembly builtin (`__builtin_wasm_memory_grow`: the memory is fixed
/// at `memory_limit`; any of them: gcc does not know it, so the two
/// compilers would build different programs), nor any other builtin that
/// is not on [`builtins::BUILTINS`], the ones gcc and clang both know
/// alike, wherever it is written (red team E13: inside `__typeof__` gcc
/// took an unknown builtin for a function returning `int`);
/// `unknown_to_gcc` (the `__builtin_` names gcc does not know: it takes
/// each for an unknown function, clang builds its builtin; asked of gcc
/// only for [`builtins_named_off_the_list`]) only chooses the words. Nor a type only clang knows ([`TYPES_ONLY_CLANG_KNOWS`]).
/// Nor any other reserved identifier off [`builtins::KEYWORDS`] (clang's
/// builtins outside `__builtin_`: `__c11_atomic_load`,
/// `__arithmetic_fence`, the type traits; H14), but the names other
/// findings of check 6 judge with their own words (the compiler's helpers
/// in `helpers`, the linker's names, [`LEFT_TO_CLANG`]).
/// `written`: the identifiers of the preprocessed text.
/// The `__builtin_` names of `written` off [`builtins::BUILTINS`] (but
/// WebAssembly's, which check 6 words apart).
fn builtins_off_the_list(written: &HashSet<String>) -> impl Iterator<Item = &String> {
    written
        .iter()
        .filter(|n| n.starts_with("__builtin_") && !n.starts_with("__builtin_wasm_"))
        .filter(|n| !builtins::allowed(n))
}

/// The builtins `written` names that [`names_in_text`] refuses as off
/// the list, sorted: only theirs are words chosen by what gcc knows.
pub(super) fn builtins_named_off_the_list(written: &HashSet<String>) -> Vec<&str> {
    let mut names: Vec<&str> = builtins_off_the_list(written).map(|n| n.as_str()).collect();
    names.sort_unstable();
    names
}

pub(super) fn names_in_text(
    written: &HashSet<String>,
    unknown_to_gcc: &[String],
    helpers: &Helpers,
    uses: &FirstUses<'_>,
    memory_limit: u64,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for name in LINKER_SYMBOLS {
        if written.contains(name) {
            out.push(Diagnostic::error(
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
    let mut builtins: Vec<&String> = written
        .iter()
        .filter(|n| n.starts_with("__builtin_wasm_"))
        .collect();
    builtins.sort();
    for name in builtins {
        let message = if name.starts_with("__builtin_wasm_memory_") {
            format!(
                "uses `{name}`: the memory of a strategy is fixed at {} kB (its static \
                 data and {} kB of stack, requirement 5); it can neither grow nor be asked \
                 for its size: remove it and use static arrays of a fixed size",
                memory_limit / 1024,
                wasm::SHADOW_STACK_BYTES / 1024
            )
        } else {
            format!(
                "uses `{name}`, a builtin of WebAssembly that only clang knows (for gcc it \
                 is an unknown function: every compiler must see the same program); write \
                 it in C"
            )
        };
        out.push(Diagnostic::error(Check::Library, uses.line(name), message));
    }
    for name in TYPES_ONLY_CLANG_KNOWS {
        if written.contains(*name) {
            out.push(Diagnostic::error(
                Check::Library,
                uses.line(name),
                format!(
                    "uses `{name}`, a type that only clang knows (gcc reads `{name}(128)` as a \
                     call of a function no one defines, so `__typeof__({name}(128))` is `int` \
                     to it and a 128-bit integer to clang, which builds the program that \
                     plays): every compiler must see the same program; use `int`, `long` or \
                     `long long`"
                ),
            ));
        }
    }
    // Every other builtin the text names must be on the list of those
    // both compilers know alike: wherever it is written, evaluated or not
    // (inside `__typeof__` or `sizeof` gcc calls nothing, red team E13).
    let mut off_list: Vec<&String> = builtins_off_the_list(written).collect();
    off_list.sort();
    for name in off_list {
        let message = if unknown_to_gcc.contains(name) {
            format!(
                "uses `{name}`, a builtin that gcc does not know (it compiles it as a call \
                 to a function no one defines) and clang, which builds the program that \
                 plays, does: every compiler must see the same program; write it in C"
            )
        } else {
            format!(
                "uses `{name}`, which is not one of the builtins a strategy may use (those \
                 gcc and clang both know with the same meaning and that give the same \
                 result on every machine: `__builtin_popcount`, `__builtin_expect`, \
                 `__builtin_memcpy`, `__builtin_add_overflow`, … the list is in the \
                 participant guide, check 6): every compiler must see the same program; \
                 write it in C or with one of those"
            )
        };
        out.push(Diagnostic::error(Check::Library, uses.line(name), message));
    }
    // Every other reserved name must be a keyword both compilers read
    // alike: clang's builtins outside `__builtin_` are in no object of
    // gcc's inside `__typeof__` or `sizeof` (H14).
    let mut reserved: Vec<&String> = written
        .iter()
        .filter(|n| builtins::reserved(n) && !n.starts_with("__builtin_"))
        .filter(|n| !builtins::keyword(n) && !helpers.contains(n))
        .filter(|n| {
            !LINKER_SYMBOLS.contains(&n.as_str())
                && !TYPES_ONLY_CLANG_KNOWS.contains(&n.as_str())
                && !LEFT_TO_CLANG.contains(&n.as_str())
        })
        .collect();
    reserved.sort();
    for name in reserved {
        let plain = name.trim_matches('_');
        let plain = if plain.is_empty() { "x" } else { plain };
        out.push(Diagnostic::error(
            Check::Library,
            uses.line(name),
            format!(
                "uses `{name}`: names beginning with two underscores, or an underscore and \
                 a capital letter, are the compiler's, and gcc and clang do not know this \
                 one alike (clang may know it as a builtin or a type trait, gcc as nothing): \
                 every compiler must see the same program; if it is your own name, rename \
                 `{name}` to `{plain}` or `my_{plain}`; only C's keywords of that form \
                 (`_Bool`, `__typeof__`, `__attribute__`, …, listed in the participant \
                 guide, check 6) may be written"
            ),
        ));
    }
    out
}

/// Check 6's findings in the symbols of a strategy's object, each at the
/// first line that names the symbol. `runtime`: the symbols of the
/// runtime's object it is linked with; the strategy may define none of the
/// names that object defines or needs (its undefined names are the
/// referee's imports: a definition of one would replace the import).
/// `written`: the identifiers of the preprocessed text; a compiler helper
/// is the compiler's call only when the program does not name it, and no
/// program defines one. `helpers`: the names the builtins archive defines.
pub(super) fn library_problems(
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

/// What wasm-ld said, in the participant's words: the memory the program
/// needs when its static data and stack do not fit (for check 5), and
/// check 6's findings (undefined, duplicate, mismatched symbols; calls
/// with other arguments than the function takes), each at its line.
pub(super) fn link_findings(
    problems: &[wasm::LinkProblem],
    uses: &FirstUses<'_>,
) -> (Option<u64>, Vec<Diagnostic>) {
    let mut calls = Vec::new();
    let mut needed = None;
    for p in problems {
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
    (needed, calls)
}
