//! The lexical-element counter (requirement 4) on tricky inputs, through
//! the public function, and through the compile service (which counts after
//! preprocessing).
//!
//! Lexical elements are identifiers, keywords, numbers, each character in a
//! string or char denoter, and each special character; blanks, tabs,
//! newlines and comments are not.

use knobeln::toolchain::compile::Profile;
use knobeln::toolchain::lex::count_lexical_elements;

use crate::common::compile_source;

fn count(src: &str) -> u64 {
    count_lexical_elements(src)
}

#[test]
fn operators_count_one_per_special_character() {
    assert_eq!(count("x <<= 2;"), 6);
    assert_eq!(count("p->next"), 4);
    assert_eq!(count("i++ && j--"), 8);
    assert_eq!(count("f(a, ...)"), 8);
}

#[test]
fn literals_count_one_per_denoted_character() {
    assert_eq!(count(r#""a\tb""#), 3);
    assert_eq!(count(r#""""#), 0);
    assert_eq!(count(r#""\"""#), 1);
    assert_eq!(count(r#""\x41\101\n""#), 3);
    assert_eq!(count(r"'\n' '\'' 'ab'"), 4);
    // Adjacent strings stay two denoters.
    assert_eq!(count(r#""ab" "cd""#), 4);
    // A character, not a byte.
    assert_eq!(count("\"\u{e9}\""), 1);
}

#[test]
fn comments_and_blanks_do_not_count_but_comment_lookalikes_in_literals_do() {
    assert_eq!(count("a /* b c */ d // e f\ng"), 3);
    assert_eq!(count("/* /* */ x"), 1);
    assert_eq!(count("/* a */ */"), 2);
    assert_eq!(count("\"/* x */\" '//'"), 7 + 2);
    assert_eq!(count(" \t\r\n\x0c x \r\n"), 1);
    assert_eq!(count(""), 0);
}

#[test]
fn numbers_are_one_element_however_they_are_spelled() {
    assert_eq!(count("1e+5 0x1p-3 .5 1. 10L 0777"), 6);
    // But a sign outside an exponent is a special character.
    assert_eq!(count("1+5"), 3);
}

#[test]
fn line_splices_join_what_they_split() {
    assert_eq!(count("re\\\nturn x;"), 3);
    assert_eq!(count("\"ab\\\ncd\""), 4);
    assert_eq!(count("a\\\r\n+b"), 3);
}

/// The count a participant gets is taken after preprocessing: directives,
/// the description and comments vanish, macros are expanded.
#[test]
fn the_compile_service_counts_after_preprocessing() {
    let src = "/* comment */\n#if 0\nA description of\nthree lines, not counted.\n#endif\n\
               #define N 100\n#define TWICE(x) ((x) + (x))\n\
               main() { for (;;) make_throw(TWICE(N)); } // end\n";
    let outcome = compile_source(src.as_bytes(), Profile::Local);
    assert!(outcome.accepted(), "{:?}", outcome.report().diagnostics);
    // main ( ) { for ( ; ; ) make_throw ( ( ( 100 ) + ( 100 ) ) ) ; }
    //   4       +   5         +  2        +        9            + 2 + 1
    assert_eq!(outcome.report().lexical_elements, Some(23));
}
