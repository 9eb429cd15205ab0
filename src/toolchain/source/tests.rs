//! Unit tests of the source checks: the header, the single-file rule, the
//! description, each with the diagnostics a participant reads.

use super::*;

fn errors(src: &str) -> Vec<(Option<u32>, String)> {
    check_single_file(src)
        .into_iter()
        .inspect(|d| assert_eq!(d.check, Check::SingleFile))
        .map(|d| (d.line, d.message))
        .collect()
}

fn error_lines(src: &str) -> Vec<u32> {
    errors(src).into_iter().map(|(l, _)| l.unwrap()).collect()
}

fn assert_rejected(src: &str, line: u32, word: &str) {
    let e = errors(src);
    assert!(
        e.iter().any(|(l, m)| *l == Some(line) && m.contains(word)),
        "{src:?}: expected {word:?} at line {line}, got {e:?}"
    );
}

const HEAD: &str = "/*\n <<FROM>> team_name authstring\n*/\n";

#[test]
fn include_forms_are_rejected() {
    assert_rejected("#include <stdio.h>\n", 1, "#include is not allowed");
    assert_rejected("int a;\n#  include \"x.h\"\n", 2, "single file");
    assert_rejected("int a;\n  %:include \"x.h\"\n", 2, "#include");
    assert_rejected("int a;\n%:\\\ninclude \"x.h\"\n", 2, "#include");
    assert_rejected("int a;\n#inc\\\nlude \"x.h\"\n", 2, "#include");
    assert_rejected("#define X <stdio.h>\n#include X\n", 2, "#include");
    assert_rejected("/* a */ # /* b */ include \"x\"\n", 1, "#include");
    assert_rejected("/* a\n b */ #include \"x\"\n", 2, "#include");
    assert_rejected("\u{feff}#include \"x\"\n", 1, "#include");
    assert_rejected("\0#include \"x\"\n", 1, "#include");
    assert_rejected("int a;\r#include \"x\"\n", 2, "#include");
    assert_rejected("#include_next <x>\n", 1, "#include_next");
    assert_rejected("#import \"x\"\n", 1, "#import");
    assert_rejected("#embed \"x\"\n", 1, "#embed");
    // After the #else of an #if 0: active.
    assert_rejected(
        "#if 0\ntext\n#else\n#include \"x\"\n#endif\n",
        4,
        "#include",
    );
    // Not directives.
    assert!(errors("/* #include <stdio.h> */\n// #include <x>\nint a;\n").is_empty());
    assert!(errors("char *s = \"#include <x>\";\n").is_empty());
    assert!(errors("int a; #include <x>\n").is_empty());
    assert!(errors("#define INC #include\n").is_empty());
    assert!(errors("% :include \"x\"\n").is_empty());
}

#[test]
fn splices_with_blanks_and_odd_literals_cannot_hide_an_include() {
    // gcc joins `'\   <newline>` : the char literal runs into the next line
    // and the `/*` there is inside it.
    let src = "int x = '\\   \n/* ';\n#include \"x\"\n/* */\n";
    assert_eq!(error_lines(src), vec![3]);
    // A raw string hides a comment opener from the plain dialect.
    let src = "char*s=R\"(\")/*)\";\n#include \"x\"\n/**/\n";
    assert_eq!(error_lines(src), vec![2]);
    // A digit separator hides a comment opener (C23).
    let src = "int a = 1'2' /* ';\n#include \"x\"\n/* */\n";
    assert_eq!(error_lines(src), vec![2]);
    // In a directive, even a skipped one, a raw string ends with the line.
    let src = "#if 0\n#define S R\"(\n#endif\n#include \"x\"\n";
    assert_eq!(error_lines(src), vec![4]);
    // Directive names that gcc dialects end in different places.
    let src = "#if 0\n# if\u{feff}\n#endif\n#include <x>\n#endif\n";
    assert_eq!(error_lines(src), vec![2, 4]);
    // (the include is then inside the skipped block for this reading,
    // but the odd name alone rejects the file)
    let src = "#if 0\n#if\\u00e9\n#endif\n#include <x>\n#endif\n#endif$\n";
    assert_eq!(error_lines(src), vec![2, 6]);
    assert!(errors("#if 0\n#if/**/\\u00e9\n#endif\n#endif\n").is_empty());
    // A raw string swallowing an #endif in a skipped block (gnu dialects).
    let src = "#if 0\nR\"x(\n#endif\n#include \"x\"\n#if 0\n)x\"\n#endif\n";
    assert_eq!(error_lines(src), vec![4]);
}

#[test]
fn other_file_reading_forms_are_rejected() {
    assert_rejected("#line 10 \"x.c\"\n", 1, "#line");
    assert_rejected("int a;\n# 123 \"file\"\n", 2, "line marker");
    assert_rejected("#pragma GCC dependency \"parse.y\"\n", 1, "dependency");
    assert_rejected("#pragma dependency \"parse.y\"\n", 1, "dependency");
    assert_rejected(
        "#pragma GCC pch_preprocess \"x.gch\"\n",
        1,
        "pch_preprocess",
    );
    assert_rejected("_Pragma(\"GCC dependency \\\"x\\\"\")\n", 1, "dependency");
    assert_rejected("_Pragma(\"GCC \" \"dependency x\")\n", 1, "dependency");
    assert_rejected("#define P(x) _Pragma(#x)\n", 1, "_Pragma must be followed");
    assert!(errors(
        "_Pragma(\"once\") int a;\n#pragma once\n#pragma GCC diagnostic ignored \"-Wall\"\n"
    )
    .is_empty());
    // Pragmas that change compilation or linking are not pure C.
    assert_rejected("#pragma GCC optimize(\"O2\")\n", 1, "#pragma GCC");
    assert_rejected("#pragma weak main\n", 1, "#pragma weak");
    assert_rejected(
        "#if __has_include(\"/etc/passwd\")\n#endif\n",
        1,
        "__has_include",
    );
    assert_rejected(
        "int a =\n __has_include_next(<x>);\n",
        2,
        "__has_include_next",
    );
    assert_rejected("#define E __has_embed\n", 1, "__has_embed");
    assert!(errors("const char *f = __FILE__;\n").is_empty());
    // #elif of an #if 0 is evaluated.
    assert_rejected(
        "#if 0\n#elif __has_include(<x>)\n#endif\n",
        2,
        "__has_include",
    );
}

#[test]
fn assembler_file_directives_are_rejected() {
    assert_rejected("asm(\".incbin \\\"/etc/passwd\\\"\");\n", 1, ".incbin");
    assert_rejected(
        "int a;\nasm(\".\" \"incbin \\\"/etc/passwd\\\"\");\n",
        2,
        ".incbin",
    );
    assert_rejected(
        "asm(\".\"\n /* c */ \"inc\" X\n \"lude x\");\n",
        1,
        ".include",
    );
    assert_rejected("asm(\"\\x2eINCBIN x\");\n", 1, ".incbin");
    assert_rejected("asm(\"\\56\\151ncbin x\");\n", 1, ".incbin");
    assert_rejected(
        "int v __attribute__((section(\".text\\n.incbin \\\"x\\\"\\n#\")));\n",
        1,
        ".incbin",
    );
    assert_rejected("#define S \".incbin\"\n", 1, ".incbin");
    // Concatenated across a directive line (it disappears before concatenation).
    assert_rejected("asm(\".inc\"\n#define X\n\"bin x\");\n", 1, ".incbin");
    // Not concatenated: different calls.
    assert!(errors("puts(\".\"); puts(\"incbin\");\n").is_empty());
    assert!(errors("char *p = \"/etc/passwd\"; char *q = \"a/b.c\";\n").is_empty());
    assert!(errors("/* .incbin */ // .include\n").is_empty());
}

#[test]
fn skipped_blocks_are_free_text() {
    let src = "#if 0\n#include <stdio.h>\n#pragma GCC dependency \"x\"\n\"/etc/.incbin\" __has_include\n#endif\nint a;\n";
    assert!(errors(src).is_empty());
    // Nested #if 0 with #ifdef inside.
    let src = "#if 0\n#ifdef X\n#include <a>\n#endif\n#include <b>\n#endif\n#include <c>\n";
    assert_eq!(error_lines(src), vec![7]);
    // Nested conditional's #else does not end the block.
    let src = "#if 0\n#if 1\n#else\n#include <a>\n#endif\n#include <b>\n#endif\n";
    assert!(errors(src).is_empty());
    // Forms of zero.
    for z in ["0", "0L", "(0)", "0x0", "00", "0 /* off */", "((0))"] {
        let src = format!("#if {z}\n#include <a>\n#endif\n");
        assert!(errors(&src).is_empty(), "{z}");
    }
    // Other conditions count as active.
    for c in ["1", "X", "0 + 0", "0 && __LINE__", "(0) || (1)"] {
        let src = format!("#if {c}\n#include <a>\n#endif\n");
        assert_eq!(error_lines(&src), vec![2], "{c}");
    }
    // Unbalanced quotes in a description do not confuse anything.
    let src = "#if 0\nDon't worry, it's fine.\n\"Quote\n#endif\n#include <x>\n";
    assert_eq!(error_lines(src), vec![5]);
    // A /* in a description swallows the #endif, as for gcc.
    let src = "#if 0\nsee /* here\n#endif\n#include <x>\n*/\n#endif\n#include <y>\n";
    assert_eq!(error_lines(src), vec![7]);
    // A multi-line comment before # still makes it a directive (gcc).
    let src = "#if 0\n/*\n*/ #if 1\n#endif\n#include <x>\n#endif\n#include <y>\n";
    assert_eq!(error_lines(src), vec![7]);
}

#[test]
fn trigraphs_are_rejected() {
    assert_rejected("??=include <stdio.h>\n", 1, "??=");
    assert_rejected("int a;\n/* what??/ */\n", 2, "??/");
    assert!(errors("char *s = \"what??!\";\n").is_empty());
}

#[test]
fn errors_are_listed_by_line() {
    let src = format!("{HEAD}#include <a>\nint x;\n#include <b>\n#line 3\n");
    assert_eq!(error_lines(&src), vec![4, 6, 7]);
    assert!(errors(&format!("{HEAD}int main() {{ return 0; }}\n")).is_empty());
}

fn header(src: &str) -> Result<(String, String, u32), (Option<u32>, String)> {
    parse_header(src)
        .map(|h| (h.team, h.auth, h.line))
        .map_err(|d| {
            assert_eq!(d.check, Check::Header);
            (d.line, d.message)
        })
}

#[test]
fn header_forms() {
    assert_eq!(
        header(HEAD),
        Ok(("team_name".into(), "authstring".into(), 2))
    );
    assert_eq!(
        header("// <<FROM>> a b\nint x;"),
        Ok(("a".into(), "b".into(), 1))
    );
    assert_eq!(
        header("\n\n  /* Strategy X <<FROM>> a b */"),
        Ok(("a".into(), "b".into(), 3))
    );
    assert_eq!(header("/*<<FROM>> a b*/"), Ok(("a".into(), "b".into(), 1)));
    assert_eq!(
        header("/* <<FROM>>\tteam\r\n  auth more words */"),
        Ok(("team".into(), "auth".into(), 1))
    );
    assert_eq!(header("/* <<FR\\\nOM>> a b */").unwrap().0, "a");
    assert_eq!(header("\u{feff}/* <<FROM>> a b */").unwrap().1, "b");

    let (line, msg) = header("\n\nint x; /* <<FROM>> a b */").unwrap_err();
    assert_eq!(line, Some(3));
    assert!(
        msg.contains("found code at line 3 before any comment"),
        "{msg}"
    );
    assert!(
        msg.contains("/* <<FROM>> team_name auth_string */"),
        "{msg}"
    );

    let (line, msg) = header("").unwrap_err();
    assert_eq!(line, None);
    assert!(msg.contains("empty"), "{msg}");

    let (line, msg) = header("/* my\n strategy\n */\n/* <<FROM>> a b */\nint x;").unwrap_err();
    assert_eq!(line, Some(1));
    assert!(
        msg.contains("found no <<FROM>> in the first comment (lines 1-3)"),
        "{msg}"
    );
    assert!(msg.contains("line 4"), "{msg}");

    let (_, msg) = header("/* nothing */").unwrap_err();
    assert!(msg.contains("(line 1)"), "{msg}");

    let (line, msg) = header("/*\n<<FROM>> lonely */").unwrap_err();
    assert_eq!(line, Some(2));
    assert!(msg.contains("authentification string is missing"), "{msg}");
    assert!(msg.contains("<<FROM>> lonely auth_string"), "{msg}");

    let (_, msg) = header("/* <<FROM>> */").unwrap_err();
    assert!(
        msg.contains("after <<FROM>> the team name and the authentification string are missing"),
        "{msg}"
    );
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("idea {i}\n")).collect()
}

#[test]
fn description_length() {
    let src14 = format!("{HEAD}#if 0\n{}#endif\n", numbered(14));
    let d = find_description(&src14).unwrap();
    assert_eq!((d.n_nonblank_lines, d.first_line, d.if_line), (14, 5, 4));
    assert!(d.text.starts_with("idea 1\nidea 2\n"));
    assert!(d.text.ends_with("idea 14"));
    // "At least about 15": 14 (down to 12) passes with a warning.
    let (d, w) = check_description(&src14, 15).unwrap();
    assert_eq!(d.n_nonblank_lines, 14);
    let w = w.expect("a warning below 15");
    assert_eq!((w.check, w.line), (Check::Description, Some(4)));
    assert_eq!(w.severity, crate::toolchain::diagnostic::Severity::Warning);
    assert!(w.message.contains(
        "(line 4) has 14 non-blank lines; the announcement asks for \"at least about 15 lines\""
    ));
    assert_eq!(tolerated_description_lines(15), 12);
    let src12 = format!("{HEAD}#if 0\n{}#endif\n", numbered(12));
    assert!(check_description(&src12, 15).unwrap().1.is_some());
    let src11 = format!("{HEAD}#if 0\n{}#endif\n", numbered(11));
    let e = check_description(&src11, 15).unwrap_err();
    assert_eq!((e.check, e.line), (Check::Description, Some(4)));
    assert!(e
        .message
        .contains("(line 4) has 11 non-blank lines; at least about 15 are required (at least 12)"));

    let src15 = format!("{HEAD}#if 0\n{}#endif\n", numbered(15));
    let (d, w) = check_description(&src15, 15).unwrap();
    assert_eq!(d.n_nonblank_lines, 15);
    assert!(w.is_none());

    // Blank lines do not count.
    let spaced = format!("#if 0\n\n   \n{}\t\n\n#endif\n", numbered(14));
    assert_eq!(find_description(&spaced).unwrap().n_nonblank_lines, 14);

    let e = check_description("int main() { return 0; }\n", 15).unwrap_err();
    assert_eq!(e.line, None);
    assert!(e
        .message
        .contains("no description found: put at least 15 lines"));
}

#[test]
fn a_description_in_a_comment_passes_with_a_warning_naming_the_form() {
    // A block comment of 15 lines, decorated with stars.
    let body: String = (1..=15).map(|i| format!(" * idea {i}\n")).collect();
    let src = format!("{HEAD}/*\n{body} */\nmain() {{ }}\n");
    let (d, w) = check_description(&src, 15).unwrap();
    assert_eq!((d.n_nonblank_lines, d.if_line), (15, 4));
    let w = w.unwrap();
    assert_eq!(w.line, Some(4));
    assert!(w.message.contains("no description in #if 0 ... #endif: the comment at line 4 (15 non-blank lines) is taken as the description; the announcement asks: \"Please enclose the description in #if 0 ..... #endif\""), "{}", w.message);
    // Line comments on consecutive lines, 13 of them: also the length.
    let body: String = (1..=13).map(|i| format!("// idea {i}\n")).collect();
    let src = format!("{HEAD}{body}main() {{ }}\n");
    let (d, w) = check_description(&src, 15).unwrap();
    assert_eq!(d.n_nonblank_lines, 13);
    assert!(w
        .unwrap()
        .message
        .contains("and for \"at least about 15 lines\""));
    // A too short #if 0 block and a long comment: the comment, named so.
    let body: String = (1..=15).map(|i| format!("// idea {i}\n")).collect();
    let src = format!("{HEAD}#if 0\nshort\n#endif\n{body}main() {{ }}\n");
    let (_, w) = check_description(&src, 15).unwrap();
    assert!(w
        .unwrap()
        .message
        .contains("long enough (the one at line 4 has 1 non-blank line)"));
    // The header line and star-only lines do not count; 11 is too few.
    let body: String = (1..=11).map(|i| format!(" * idea {i}\n *\n")).collect();
    let src = format!("/*\n <<FROM>> t a\n{body}*/\nmain() {{ }}\n");
    assert_eq!(find_comment_description(&src).unwrap().n_nonblank_lines, 11);
    assert!(check_description(&src, 15).is_err());
}

#[test]
fn description_longest_block_and_nesting() {
    let src = format!(
        "#if 0\n{}#endif\nint a;\n#if 0\n{}#endif\n#if 0\n{}#endif\n",
        numbered(3),
        numbered(16),
        numbered(16)
    );
    let d = find_description(&src).unwrap();
    assert_eq!((d.n_nonblank_lines, d.if_line), (16, 7));

    // Nested #if 1 ... #endif inside, quotes, and an #ifdef.
    let src = "#if 0\nI don't cooperate.\n#if 1\nnested\n#endif\n\"open\n#ifdef X\n#endif\nlast\n#endif\nint a;\n";
    let d = find_description(src).unwrap();
    assert_eq!(d.n_nonblank_lines, 8);
    assert!(d.text.ends_with("last"));

    // #else ends the description part.
    let src = "#if 0\none\ntwo\n#else\nint a;\n#endif\n";
    assert_eq!(find_description(src).unwrap().text, "one\ntwo");

    // Unterminated: to the end; CRLF lines.
    let src = "#if 0\r\none\r\ntwo\r\n";
    let d = find_description(src).unwrap();
    assert_eq!((d.text.as_str(), d.n_nonblank_lines), ("one\ntwo\n", 2));

    // Empty block; #if 1 is no description; #if 0 inside #if 0 is text.
    assert_eq!(
        find_description("#if 0\n#endif\n")
            .unwrap()
            .n_nonblank_lines,
        0
    );
    assert!(find_description("#if 1\na\n#endif\n").is_none());
    let d = find_description("#if 0\na\n#if 0\nb\n#endif\nc\n#endif\n").unwrap();
    assert_eq!(d.n_nonblank_lines, 5);

    // Comment after #if 0 spanning lines; spliced #endif.
    let d = find_description("#if 0 /* x\ny */\na\n#end\\\nif\nint b;\n").unwrap();
    assert_eq!((d.text.as_str(), d.first_line), ("a", 3));
}

#[test]
fn hostile_inputs_do_not_panic() {
    let samples = [
        "",
        "#",
        "%:",
        "%",
        "#if",
        "#if 0",
        "#endif",
        "#else\n#elif",
        "_Pragma",
        "_Pragma(",
        "_Pragma(\"",
        "\"",
        "??",
        "??=",
        "/*",
        "\\",
        "#if 0\n#if 0\n",
        "\u{feff}",
        "\r\r\r",
    ];
    for s in samples {
        let _ = check_single_file(s);
        let _ = parse_header(s);
        let _ = find_description(s);
    }
}
