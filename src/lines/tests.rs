//! Unit tests of the line referee that need no bot: bounded, escaped output.

use super::*;

#[test]
fn a_bots_stderr_and_lines_stay_bounded_after_escaping() {
    for flood in [
        vec![1u8; 3 * STDERR_KEEP],
        vec![0xffu8; 3 * STDERR_KEEP],
        vec![b'"'; 3 * STDERR_KEEP],
        vec![b'\n'; 3 * STDERR_KEEP],
        b"ordinary text\n".repeat(1000),
    ] {
        let kept = kept_stderr(&flood);
        let stored = serde_json::to_string(&kept).unwrap();
        assert!(
            stored.len() <= STDERR_KEEP + 2,
            "{} bytes stored",
            stored.len()
        );
        assert!(kept.ends_with(" [cut]"), "{kept:?}");
    }
    assert_eq!(kept_stderr(b"a\x01b\n"), "a\\u{1}b\n");
    let shown = show_line(&"\u{1}".repeat(1000));
    assert!(shown.chars().count() <= SHOWN_LINE_CHARS + 1, "{shown}");
    assert_eq!(show_line("abc"), "abc");
}

#[test]
fn lines_are_shown_escaped_and_short() {
    assert_eq!(show_line("a\tb\u{1b}"), "a\\tb\\u{1b}");
    assert_eq!(show_line(&"x".repeat(300)).chars().count(), 201);
}
