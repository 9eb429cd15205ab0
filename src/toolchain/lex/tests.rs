//! Unit tests of the C lexer and the lexical-element count, including the
//! cost of hostile inputs.

use super::*;

/// Hostile inputs cost work linear in their size (a `#define` line of
/// raw strings once cost quadratic time: 256 kB took 24 s).
#[test]
fn lexing_work_is_linear_on_hostile_inputs() {
    let n = 40_000;
    let cases = [
        format!("#define X {}\n", "R\"()\" ".repeat(n)),
        format!("#define X {}\n", "R\"x(".repeat(n)),
        format!("#define X {}\n", "R\"a b".repeat(n)),
        format!("int x = {};\n", "R\"()\" ".repeat(n)),
        format!("{}\n", "R\"xyz()xy\" ".repeat(n)),
        format!("#define Y {}\n", "/*\\\n*/".repeat(n)),
        "\\\n".repeat(n),
        "\"".repeat(n),
    ];
    for src in &cases {
        for options in LexOptions::ALL {
            let work = lex_work(src, options);
            assert!(
                work <= 8 * src.len() as u64,
                "{} bytes cost {work} ({options:?}): {:?}…",
                src.len(),
                &src[..40.min(src.len())]
            );
        }
    }
}

fn kinds(src: &str) -> Vec<(TokenKind, &str)> {
    tokenize(src)
        .into_iter()
        .map(|t| (t.kind, t.text))
        .collect()
}

fn count(src: &str) -> u64 {
    count_lexical_elements(src)
}

fn string(chars: usize) -> TokenKind {
    TokenKind::String {
        chars,
        terminated: true,
    }
}

fn chr(chars: usize) -> TokenKind {
    TokenKind::Char {
        chars,
        terminated: true,
    }
}

#[test]
fn literals_and_escapes() {
    assert_eq!(
        kinds(r#""\x41\101\n""#),
        vec![(string(3), r#""\x41\101\n""#)]
    );
    assert_eq!(count(r#""\x41\101\n""#), 3);
    assert_eq!(kinds(r"'\''"), vec![(chr(1), r"'\''")]);
    assert_eq!(kinds(r#"L"ab""#), vec![(string(2), r#"L"ab""#)]);
    assert_eq!(kinds("u8\"é\""), vec![(string(1), "u8\"é\"")]);
    assert_eq!(kinds(r#""""#), vec![(string(0), r#""""#)]);
    assert_eq!(count(r#""""#), 0);
    assert_eq!(count(r#"u"x" U"y" L'z' u8'w'"#), 4);
    // Octal: at most three digits; hex: any number of digits.
    assert_eq!(count(r#""\0123""#), 2);
    assert_eq!(count(r#""\x0123456789abcdefg""#), 2);
    assert_eq!(count(r#""\u00e9x\U0001F600y""#), 4);
    assert_eq!(count(r#""\\\"\?\q\a""#), 5);
    assert_eq!(count("\"héllo wörld ☺\""), 13);
    // A prefix-like identifier not followed by a quote is an identifier.
    assert_eq!(
        kinds("u8 \"a\""),
        vec![(TokenKind::Identifier, "u8"), (string(1), "\"a\"")]
    );
    assert_eq!(
        kinds("Lx\"a\""),
        vec![(TokenKind::Identifier, "Lx"), (string(1), "\"a\"")]
    );
    // '\\' and escaped quote inside a char.
    assert_eq!(kinds(r"'\\'"), vec![(chr(1), r"'\\'")]);
    assert_eq!(kinds(r#"'"'"#), vec![(chr(1), r#"'"'"#)]);
}

#[test]
fn literal_values() {
    let t = tokenize(r#""\x2e\151nc\142in\n" L'a'"#);
    assert_eq!(t[0].literal_value().as_deref(), Some(".incbin\n"));
    assert_eq!(t[1].literal_value().as_deref(), Some("a"));
    let t = tokenize("\"abc");
    assert_eq!(t[0].literal_value().as_deref(), Some("abc"));
    let t = tokenize(r#""\xffffffffff\777""#);
    assert_eq!(t[0].literal_value().as_deref(), Some("\u{fffd}\u{1ff}"));
    assert_eq!(tokenize("x")[0].literal_value(), None);
}

#[test]
fn punctuators_are_single_characters() {
    assert_eq!(count("a += b;"), 5);
    assert_eq!(count("p->q"), 4);
    assert_eq!(count("f(...)"), 6);
    assert_eq!(count("<: :> <% %> %: %:%:"), 14);
    let t = kinds("->");
    assert_eq!(t, vec![(TokenKind::Punct, "-"), (TokenKind::Punct, ">")]);
    assert_eq!(count("a ## b # c @ ` \\"), 9);
}

#[test]
fn numbers() {
    for n in [
        "1e+5", "0x1p-3f", ".5", "1.2.3", "0x1e+5", "1E-7L", "08", "1.e+", "0b101u",
    ] {
        assert_eq!(kinds(n), vec![(TokenKind::Number, n)], "{n}");
    }
    assert_eq!(count("1+5"), 3);
    assert_eq!(count("1 .x"), 3);
    assert_eq!(count("x.5"), 2);
    assert_eq!(count("a.b"), 3);
    // Digit separators only when enabled.
    assert_eq!(tokenize("1'000'000").len(), 3);
    let c23 = tokenize_with("1'000'000 x", LexOptions::C23);
    assert_eq!(c23[0].text, "1'000'000");
    assert_eq!(c23.len(), 2);
    // A trailing separator is given back: it starts a char literal.
    let c23 = tokenize_with("1'2' /* ';", LexOptions::C23);
    assert_eq!(c23[0].text, "1'2");
    assert_eq!(c23[1].text, "' /* '");
    assert_eq!(c23[2].text, ";");
}

#[test]
fn identifiers() {
    assert_eq!(
        kinds("$a_1 é"),
        vec![
            (TokenKind::Identifier, "$a_1"),
            (TokenKind::Identifier, "é")
        ]
    );
    assert_eq!(count("int main(void){return 0;}"), 10);
}

#[test]
fn line_splices() {
    // Inside an identifier.
    let t = tokenize("ab\\\ncd e");
    assert_eq!(t[0].kind, TokenKind::Identifier);
    assert_eq!(t[0].text, "ab\\\ncd");
    assert_eq!(t[0].unspliced(), "abcd");
    assert_eq!(t[1].line, 2);
    // CRLF splice and splice with blanks after the backslash (gcc).
    let t = tokenize("ab\\\r\ncd ef\\  \t\ngh");
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].unspliced(), "efgh");
    // Inside a // comment: continues the comment.
    let t = tokenize("// comment \\\n still comment\nx");
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].kind, TokenKind::Comment { block: false });
    assert_eq!(t[1].text, "x");
    assert_eq!(t[1].line, 3);
    // Inside a string.
    let t = tokenize("\"ab\\\ncd\" x");
    assert_eq!(t[0].kind, string(4));
    assert_eq!(t[1].line, 2);
    // Inside a comment opener and a punctuator sequence.
    let t = tokenize("a /\\\n* c *\\\n/ b");
    assert_eq!(t.len(), 3);
    assert_eq!(t[1].kind, TokenKind::Comment { block: true });
    // Inside a number's sign pair.
    assert_eq!(kinds("1e\\\n+5").len(), 1);
    // Splice inside an escape sequence.
    assert_eq!(count("\"\\\\\nn\""), 1);
    // A splice after a token is not part of it.
    let t = tokenize("abc\\\n def");
    assert_eq!(t[0].text, "abc");
    assert_eq!(t[1].line, 2);
    // A splice at the very start and at the very end.
    assert_eq!(tokenize("\\\nx\\\n").len(), 1);
    // A backslash not followed by a line end is a punctuator.
    assert_eq!(count("a \\ b"), 3);
}

#[test]
fn comments_in_odd_places() {
    assert_eq!(count("a/**/b"), 2);
    assert_eq!(kinds("\"/*\""), vec![(string(2), "\"/*\"")]);
    assert_eq!(count("\"/*\" x \"*/\""), 5);
    assert_eq!(count("'//' x"), 3);
    assert_eq!(count("a /* b */ c // d\ne"), 3);
    assert_eq!(count("/*/ x */ y"), 1);
    assert_eq!(count("a//b\n/* // */c"), 2);
}

#[test]
fn small_program_counted_by_hand() {
    let src = r#"/* <<FROM>> team secret */
#include <stdio.h>
int main(void)
{
    int i = 0;          /* 5 */
    printf("%d\n", i);  /* printf ( "%d\n" , i ) ; = 1+1+3+1+1+1+1 = 9 */
    return i += 1;      /* 6 */
}
"#;
    // # include < stdio . h > = 7; int main ( void ) = 5; { = 1; } = 1
    assert_eq!(count(src), 7 + 5 + 1 + 5 + 9 + 6 + 1);
}

#[test]
fn unterminated_string_and_comment() {
    let t = tokenize("\"abc\nx");
    assert_eq!(
        t[0].kind,
        TokenKind::String {
            chars: 3,
            terminated: false
        }
    );
    assert_eq!(t[0].text, "\"abc");
    assert_eq!((t[1].text, t[1].line, t[1].at_line_start), ("x", 2, true));
    let t = tokenize("don't panic\nx");
    assert_eq!(
        t[1].kind,
        TokenKind::Char {
            chars: 7,
            terminated: false
        }
    );
    assert_eq!(t[2].line, 2);
    let t = tokenize("a /* never\nclosed");
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].text, "/* never\nclosed");
    let t = tokenize("\"abc\\");
    assert_eq!(
        t[0].kind,
        TokenKind::String {
            chars: 4,
            terminated: false
        }
    );
    assert_eq!(tokenize("'").len(), 1);
    assert_eq!(tokenize("/*").len(), 1);
    assert_eq!(tokenize("/").len(), 1);
}

#[test]
fn crlf_and_lone_cr() {
    let t = tokenize("a\r\n\"b\r\n// c\r\nd");
    assert_eq!(t[1].text, "\"b");
    assert_eq!(t[2].text, "// c");
    assert_eq!((t[3].text, t[3].line), ("d", 4));
    let t = tokenize("a\rb\r\rc");
    assert_eq!(t.iter().map(|t| t.line).collect::<Vec<_>>(), vec![1, 2, 4]);
    assert!(t[2].at_line_start);
    assert_eq!(count("x\r\n\r\n y"), 2);
}

#[test]
fn line_numbers_and_line_starts() {
    let src = "a /* 1\n2\n3 */ b\n  c \\\n d\n/* x\n*/ # e\n";
    let t = tokenize(src);
    let got: Vec<_> = t
        .iter()
        .map(|t| (t.text, t.line, t.at_line_start))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a", 1, true),
            ("/* 1\n2\n3 */", 1, false),
            ("b", 3, false),
            ("c", 4, true),
            ("d", 5, false),
            ("/* x\n*/", 6, true),
            ("#", 7, true),
            ("e", 7, false),
        ]
    );
}

#[test]
fn bom_and_nul_are_blanks() {
    let t = tokenize("\u{feff}#x\0y");
    assert_eq!(t[0].text, "#");
    assert!(t[0].at_line_start);
    assert_eq!(t.len(), 3);
    assert!(tokenize("\0#")[0].at_line_start);
}

#[test]
fn raw_strings() {
    let src = "char*s=R\"(\")/*)\";\n#x\n/**/";
    let plain = tokenize(src);
    assert!(plain.iter().any(|t| t.text.starts_with("/*)")));
    let gnu = tokenize_with(src, LexOptions::GNU);
    assert_eq!(gnu[4].text, "R\"(\")/*)\"");
    assert_eq!(gnu[4].kind, string(4));
    assert!(gnu[6].is_punct(b'#') && gnu[6].at_line_start && gnu[6].line == 2);
    // Multi-line, with a delimiter; splices are kept inside.
    let t = tokenize_with("u8R\"xy(a\n)\"\\\n)xy\" z", LexOptions::GNU);
    assert_eq!(t[0].kind, string(6));
    assert_eq!((t[1].text, t[1].line), ("z", 3));
    // Invalid delimiter: up to the next quote, even on another line.
    let t = tokenize_with("R\"a b(\n#x\n\" y", LexOptions::GNU);
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].line, 3);
    // Delimiter too long.
    let t = tokenize_with("R\"aaaaaaaaaaaaaaaa\"\nx\n\" y", LexOptions::GNU);
    assert_eq!(t.len(), 2);
    // In a directive line a raw string ends at the line end (gcc), but
    // a splice does not end the line.
    let t = tokenize_with("#define S R\"(\n#x\n", LexOptions::GNU);
    assert_eq!(
        t[3].kind,
        TokenKind::String {
            chars: 0,
            terminated: false
        }
    );
    assert!(t[4].is_punct(b'#') && t[4].at_line_start);
    let t = tokenize_with("%:define S R\"(a\\\nb)\" c\nd", LexOptions::GNU);
    assert_eq!(t[4].text, "R\"(a\\\nb)\"");
    assert_eq!(t[6].line, 3);
    let t = tokenize_with("x R\"(\n#y\n)\"", LexOptions::GNU);
    assert_eq!(t.len(), 2);
    // Unterminated: to the end.
    let t = tokenize_with("R\"(abc\n", LexOptions::GNU);
    assert_eq!(
        t[0].kind,
        TokenKind::String {
            chars: 4,
            terminated: false
        }
    );
    assert_eq!(tokenize_with("R\"", LexOptions::GNU).len(), 1);
    assert_eq!(tokenize_with("R\"abc", LexOptions::GNU).len(), 1);
}

#[test]
fn never_panics_on_odd_input() {
    let samples = [
        "",
        "\\",
        "\\\r",
        "'\\",
        "\"\\\r\n",
        "R\"",
        "u8",
        "u8'",
        "1e",
        "1e\\",
        ".",
        "..",
        "/*\\",
        "é\"é",
        "\"é\\é\"",
        "x\u{0}\u{1}\u{7f}",
        "1'",
        "1'''",
        "'\\x",
        "'\\u12",
        "R\"(\u{e9})\u{e9}\"",
        "\u{feff}",
        "\u{feff}\\\n",
    ];
    for s in samples {
        for o in LexOptions::ALL {
            let t = tokenize_with(s, o);
            // The tokens cover the input in order, without overlap.
            let mut last = 0;
            for tok in &t {
                let at = tok.text.as_ptr() as usize - s.as_ptr() as usize;
                assert!(at >= last && !tok.text.is_empty(), "{s:?}");
                last = at + tok.text.len();
            }
            let _ = count_lexical_elements_with(s, o);
        }
    }
}

#[test]
fn all_byte_pairs_and_triples() {
    let alphabet = [
        "\\", "\n", "\r", " ", "\"", "'", "/", "*", "R", "u8", "1", "e", "+", ".", "(", ")", "é",
        "\0", "x",
    ];
    for a in alphabet {
        for b in alphabet {
            for c in alphabet {
                let s = format!("{a}{b}{c}{a}");
                for o in LexOptions::ALL {
                    let _ = tokenize_with(&s, o);
                }
            }
        }
    }
}

#[test]
fn large_input_is_linear() {
    let unit = "int f(int x) { return x += 0x1p-3 * 'a' + \"s\\n\"; } /* c */ // d\n";
    let src = unit.repeat(1 << 14);
    assert_eq!(count(&src), 19 * (1 << 14));
    let nasty = format!("\"{}", "\\\n".repeat(100_000));
    assert_eq!(tokenize(&nasty).len(), 1);
    let quotes = format!("1{}", "'".repeat(100_000));
    assert!(!tokenize_with(&quotes, LexOptions::C23).is_empty());
}
