//! Requirement 1 of the announcement, "Pure C (ANSI or K&R)", as far as it
//! protects the contest: no inline assembly, no attribute or pragma that
//! changes how the program is linked, started or compiled for the processor
//! (`section`, `constructor`, `alias`, `weak`, `ifunc`, `target`, `#pragma
//! weak`, …), and no processor-specific builtins (`__builtin_ia32_…`,
//! `__builtin_cpu_…`). Harmless GNU attributes that only help the optimiser
//! or the warnings (`unused`, `noinline`, `aligned`, …) are accepted.
//!
//! The checks run on the tokens of the submitted source (with its line
//! numbers, as part of check 2) and again on the preprocessed source
//! ([`check_preprocessed`]), so that a name a macro builds (`as##m`) is
//! caught as well. What is built is checked once more, as WebAssembly
//! (clang's object by check 6 and [`super::wasm::check_object`], the
//! module by [`super::wasm::check_module`]): these are two walls, not one.
//!
//! Pure functions over text; they neither compile nor run anything.

use super::diagnostic::{Check, Diagnostic};
use super::lex::{self, LexOptions, Token, TokenKind};

/// Identifiers that start inline assembly.
const ASM_WORDS: &[&str] = &["asm", "__asm", "__asm__"];

/// Identifiers that start a GNU attribute list.
const ATTRIBUTE_WORDS: &[&str] = &["__attribute__", "__attribute"];

/// Attributes that change neither linking nor start-up nor the instruction
/// set: hints for the optimiser and the warnings, and data layout.
const HARMLESS_ATTRIBUTES: &[&str] = &[
    "unused",
    "maybe_unused",
    "noinline",
    "noclone",
    "noreturn",
    "const",
    "pure",
    "cold",
    "hot",
    "aligned",
    "packed",
    "may_alias",
    "deprecated",
    "warn_unused_result",
    "nodiscard",
    "nonnull",
    "returns_nonnull",
    "format",
    "fallthrough",
    "vector_size",
    "mode",
];

/// Builtins that read the processor or its state.
const FORBIDDEN_BUILTIN_PREFIXES: &[&str] = &[
    "__builtin_ia32_",
    "__builtin_cpu_",
    "__builtin_apply",
    "__builtin_return",
    "__builtin_readcyclecounter",
    "__builtin_readsteadycounter",
];

/// Attributes that force the compilers to copy a function into every
/// caller: a few lines of them make a program of millions of operators
/// (`always_inline` doubled twenty times), so what the lexical count
/// bounds would no longer bound the work of the compilers.
const AMPLIFYING_ATTRIBUTES: &[&str] = &["always_inline", "flatten", "gnu_inline", "artificial"];

/// Pragmas that are accepted (the first words).
const HARMLESS_PRAGMAS: &[&[&str]] = &[&["GCC", "diagnostic"], &["STDC"], &["once"]];

/// What a `#pragma GCC diagnostic` may do: silence a warning, or keep and
/// restore the state. Not `warning` or `error`: a warning only clang
/// gives, made an error by the program, would reject what gcc accepts;
/// and one turned on overrides the flags of clang's run for the report
/// (`-Wno-everything`), which would then print whatever clang can say,
/// a type of 2^16 parts among it (red team F1 and F2 of the forty-ninth
/// session; `wasm::ClangRun`).
const DIAGNOSTIC_PRAGMA_KINDS: &[&str] = &["ignored", "push", "pop"];

/// Checks a stream of non-comment tokens of active code: inline assembly,
/// attributes, forbidden builtins. Findings go to `found` as (line, message).
pub(crate) fn check_tokens(tokens: &[&Token<'_>], found: &mut Vec<(u32, String)>) {
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if t.kind == TokenKind::Identifier {
            let name = t.unspliced();
            if ASM_WORDS.contains(&&*name) {
                found.push((t.line, asm_message(&name)));
            } else if ATTRIBUTE_WORDS.contains(&&*name) {
                let (names, next) = attribute_names(tokens, i + 1, 2);
                report_attributes(t.line, &names, found);
                i = next;
                continue;
            } else if let Some(p) = FORBIDDEN_BUILTIN_PREFIXES
                .iter()
                .find(|p| name.starts_with(*p))
            {
                found.push((
                    t.line,
                    format!(
                        "{name} is not allowed: builtins starting with {p} read or depend on \
                         the processor, and a strategy's play must depend only on the game \
                         (requirement 1: pure C); remove it"
                    ),
                ));
            }
        } else if t.is_punct(b'[') && tokens.get(i + 1).is_some_and(|n| n.is_punct(b'[')) {
            // A C23 attribute list [[...]] (`[[gnu::section(".x")]]`).
            let (names, next) = attribute_names(tokens, i, 2);
            report_attributes(t.line, &names, found);
            i = next;
            continue;
        }
        i += 1;
    }
}

fn asm_message(word: &str) -> String {
    format!(
        "{word} (inline assembly) is not allowed: a strategy must be pure C \
         (requirement 1); write it in C"
    )
}

/// The attribute names of an attribute list starting at `tokens[start]`
/// (the first opening bracket), at bracket depth `depth`, and the index
/// after the list. For `gnu::name`, the name is the last identifier.
fn attribute_names(tokens: &[&Token<'_>], start: usize, depth: usize) -> (Vec<String>, usize) {
    let mut names = Vec::new();
    let mut level = 0usize;
    let mut i = start;
    let mut expect_name = false;
    while i < tokens.len() {
        let t = tokens[i];
        if t.is_punct(b'(') || t.is_punct(b'[') {
            level += 1;
            expect_name = level == depth;
        } else if t.is_punct(b')') || t.is_punct(b']') {
            if level == 0 {
                break;
            }
            level -= 1;
            if level == 0 {
                return (names, i + 1);
            }
        } else if level == depth {
            if t.is_punct(b',') {
                expect_name = true;
            } else if t.kind == TokenKind::Identifier && expect_name {
                let is_scope = tokens.get(i + 1).is_some_and(|n| n.is_punct(b':'))
                    && tokens.get(i + 2).is_some_and(|n| n.is_punct(b':'));
                if is_scope {
                    i += 3;
                    continue;
                }
                names.push(t.unspliced().into_owned());
                expect_name = false;
            }
        } else if level == 0 {
            // `__attribute__` not followed by a bracket: gcc will complain.
            break;
        }
        i += 1;
    }
    (names, i.max(start + 1))
}

fn report_attributes(line: u32, names: &[String], found: &mut Vec<(u32, String)>) {
    for name in names {
        let bare = name.trim_start_matches("__").trim_end_matches("__");
        if AMPLIFYING_ATTRIBUTES.contains(&bare) {
            found.push((
                line,
                format!(
                    "the attribute `{bare}` is not allowed: it forces the compiler to copy a \
                     function into every call, which can multiply a short program into \
                     millions of operators; remove it (the compiler inlines small functions \
                     by itself)"
                ),
            ));
        } else if !HARMLESS_ATTRIBUTES.contains(&bare) {
            found.push((
                line,
                format!(
                    "the attribute `{bare}` is not allowed: attributes that change how the \
                     program is linked, started or compiled (section, constructor, destructor, \
                     alias, weak, ifunc, target, …) are not pure C (requirement 1); remove it \
                     (accepted: {})",
                    HARMLESS_ATTRIBUTES.join(", ")
                ),
            ));
        }
    }
}

/// Checks the words of a `#pragma` (or of a `_Pragma` string).
pub(crate) fn check_pragma_words(line: u32, words: &[&str], found: &mut Vec<(u32, String)>) {
    let allowed = HARMLESS_PRAGMAS
        .iter()
        .any(|p| words.len() >= p.len() && words.iter().zip(p.iter()).all(|(w, p)| w == p));
    if !allowed {
        found.push((
            line,
            format!(
                "#pragma {} is not allowed: pragmas can change how the program is \
                 compiled or linked (weak symbols, other instructions); only \
                 #pragma GCC diagnostic (ignored, push, pop), STDC and once are accepted",
                words.first().copied().unwrap_or("")
            ),
        ));
    } else if words.starts_with(&["GCC", "diagnostic"])
        && !words
            .get(2)
            .is_some_and(|kind| DIAGNOSTIC_PRAGMA_KINDS.contains(kind))
    {
        let kind = words.get(2).copied().unwrap_or("(nothing)");
        found.push((
            line,
            format!(
                "#pragma GCC diagnostic {kind} is not allowed: a program may silence a \
                 warning (`ignored`) and keep and restore that state (`push`, `pop`), but \
                 not turn a warning on or make it an error, since clang, which builds the \
                 program that plays, would obey it where gcc does not; remove the pragma \
                 (the server decides which warnings the report gives)"
            ),
        ));
    }
}

/// Check 2 on the preprocessed source (`gcc -E` output with its line
/// markers): catches what macros build. Line numbers are those of the
/// submitted source.
pub fn check_preprocessed(preprocessed: &str) -> Vec<Diagnostic> {
    let (text, lines) = strip_line_markers(preprocessed);
    let tokens = lex::tokenize_with(&text, LexOptions::GNU);
    let mut found: Vec<(u32, String)> = Vec::new();
    let mut code: Vec<&Token<'_>> = Vec::new();
    let mut line_start = true;
    let mut in_pragma: Option<(u32, Vec<String>)> = None;
    let source_line = |l: u32| lines.get(l as usize - 1).copied().unwrap_or(0);
    let mut last_line = 0;
    let pragma = |line: u32, words: Vec<String>, found: &mut Vec<(u32, String)>| {
        match words.first().map(String::as_str) {
            Some("pragma") => {
                let w: Vec<&str> = words[1..].iter().map(String::as_str).collect();
                check_pragma_words(line, &w, found);
            }
            // A line marker (`# 12 "strategy.c" 2`) has no identifier.
            None => {}
            Some(word) => found.push((
                line,
                format!(
                    "a macro made the directive `#{word}`; the preprocessor has already run, \
                     so nothing would obey it but a second compiler: write the directive out \
                     (requirement 1: pure C)"
                ),
            )),
        }
    };
    for t in &tokens {
        if t.line != last_line {
            if let Some((line, words)) = in_pragma.take() {
                pragma(line, words, &mut found);
            }
            line_start = true;
            last_line = t.line;
        }
        if t.is_comment() {
            continue;
        }
        if let Some((_, words)) = in_pragma.as_mut() {
            if t.kind == TokenKind::Identifier {
                words.push(t.unspliced().into_owned());
            }
            continue;
        }
        if line_start && t.is_punct(b'#') {
            in_pragma = Some((source_line(t.line), Vec::new()));
            line_start = false;
            continue;
        }
        line_start = false;
        code.push(t);
    }
    if let Some((line, words)) = in_pragma.take() {
        pragma(line, words, &mut found);
    }
    let mut code_found = Vec::new();
    check_tokens(&code, &mut code_found);
    found.extend(
        code_found
            .into_iter()
            .map(|(line, message)| (source_line(line), message)),
    );
    found.sort();
    found.dedup();
    found
        .into_iter()
        .map(|(line, message)| {
            Diagnostic::error(
                Check::SingleFile,
                (line > 0).then_some(line),
                format!("after macro expansion: {message}"),
            )
        })
        .collect()
}

/// Replaces gcc's line markers (`# 12 "strategy.c" 2`) by blank lines and
/// returns, for every line of the result (1-based index − 1), the line of
/// the submitted source it comes from (0 for other origins).
pub fn strip_line_markers(preprocessed: &str) -> (String, Vec<u32>) {
    let mut out = String::with_capacity(preprocessed.len());
    let mut map = Vec::new();
    let mut next: u32 = 1;
    let mut from_source = true;
    for line in preprocessed.split('\n') {
        if let Some((n, file)) = line_marker(line) {
            next = n;
            from_source = file == super::gcc::SOURCE_NAME;
            out.push('\n');
            map.push(0);
            continue;
        }
        out.push_str(line);
        out.push('\n');
        map.push(if from_source { next } else { 0 });
        next = next.saturating_add(1);
    }
    (out, map)
}

/// `# N "file" flags…` → (N, file).
fn line_marker(line: &str) -> Option<(u32, &str)> {
    let rest = line.strip_prefix("# ")?;
    let (num, rest) = rest.split_once(' ')?;
    let n: u32 = num.parse().ok()?;
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    Some((n, &rest[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found_in(src: &str) -> Vec<(u32, String)> {
        let tokens = lex::tokenize_with(src, LexOptions::GNU);
        let code: Vec<&Token<'_>> = tokens.iter().filter(|t| !t.is_comment()).collect();
        let mut found = Vec::new();
        check_tokens(&code, &mut found);
        found
    }

    #[test]
    fn assembly_attributes_and_cpu_builtins_are_found_with_their_lines() {
        let f =
            found_in("int x;\n__asm__(\"nop\");\nint y __attribute__((section(\".interp\")));\n");
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].0, 2);
        assert!(f[0].1.contains("inline assembly"));
        assert_eq!(f[1].0, 3);
        assert!(f[1].1.contains("`section`"));
        let f = found_in("void f(void) __attribute__((__constructor__, unused));");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].1.contains("`constructor`"));
        let f = found_in("[[gnu::weak]] int main(void);");
        assert!(f[0].1.contains("`weak`"), "{f:?}");
        let f = found_in("int r = __builtin_ia32_rdrand32_step(&x);");
        assert!(f[0].1.contains("__builtin_ia32_"), "{f:?}");
        for clock in ["__builtin_readcyclecounter", "__builtin_readsteadycounter"] {
            let f = found_in(&format!("long long r = {clock}();"));
            assert!(
                f[0].1.starts_with(&format!("{clock} is not allowed")),
                "{f:?}"
            );
        }
    }

    #[test]
    fn harmless_attributes_and_plain_c_pass() {
        assert!(found_in("static int f(int a) __attribute__((unused, noinline));").is_empty());
        assert!(found_in("int a[2][3]; int b = a[1][2]; int c = x[y[0]];").is_empty());
        assert!(found_in("struct s { char c; } __attribute__((packed, aligned(4)));").is_empty());
    }

    #[test]
    fn pragmas_other_than_diagnostics_are_refused() {
        let mut found = Vec::new();
        check_pragma_words(4, &["GCC", "diagnostic", "ignored"], &mut found);
        check_pragma_words(5, &["weak", "main"], &mut found);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 5);
    }

    /// A diagnostic pragma may silence and keep state, never turn a
    /// warning on or make it an error (F2 of the forty-ninth session).
    #[test]
    fn a_diagnostic_pragma_may_only_silence() {
        let mut found = Vec::new();
        for (line, kind) in [(1, "ignored"), (2, "push"), (3, "pop")] {
            check_pragma_words(line, &["GCC", "diagnostic", kind], &mut found);
        }
        assert!(found.is_empty(), "{found:?}");
        for (line, kind) in [(4, "error"), (5, "warning"), (6, "ignored_attributes")] {
            check_pragma_words(line, &["GCC", "diagnostic", kind], &mut found);
        }
        check_pragma_words(7, &["GCC", "diagnostic"], &mut found);
        let lines: Vec<u32> = found.iter().map(|f| f.0).collect();
        assert_eq!(lines, [4, 5, 6, 7]);
        assert!(found[0]
            .1
            .contains("#pragma GCC diagnostic error is not allowed"));
        assert!(found[3]
            .1
            .contains("#pragma GCC diagnostic (nothing) is not allowed"));
    }

    #[test]
    fn preprocessed_text_maps_back_to_source_lines() {
        let pre = "# 1 \"strategy.c\"\n# 1 \"<built-in>\"\n# 1 \"strategy.c\"\n\nint a;\n\n# 7 \"strategy.c\"\n__asm__(\"nop\");\n#pragma weak main\n";
        let d = check_preprocessed(pre);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d
            .iter()
            .any(|d| d.line == Some(7) && d.message.contains("inline assembly")));
        assert!(d
            .iter()
            .any(|d| d.line == Some(8) && d.message.contains("#pragma weak")));
    }
}
