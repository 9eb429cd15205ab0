//! Unit tests of the results article.

use super::*;

#[test]
fn country_is_the_last_part() {
    assert_eq!(
        country_of("University of X, Intellect City, Eggland"),
        "Eggland"
    );
    assert_eq!(country_of("  MIT  "), "MIT");
    assert_eq!(country_of("a, b ,  Germany "), "Germany");
    assert_eq!(country_of(""), "");
}

#[test]
fn points_show_halves() {
    assert_eq!(points_text(12.0), "12");
    assert_eq!(points_text(12.5), "12.5");
    assert_eq!(points_text(0.0), "0");
}

#[test]
fn wrap_respects_width_and_cuts_long_words() {
    assert_eq!(wrap("a bb ccc", 4), vec!["a bb", "ccc"]);
    assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
    assert_eq!(wrap("", 4), vec![""]);
    for l in wrap(&"word ".repeat(100), 76) {
        assert!(l.chars().count() <= 76);
    }
}

#[test]
fn long_headers_fold() {
    let mut out = String::new();
    header(&mut out, "Organization", &"Very long name ".repeat(20));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 1);
    assert!(lines.iter().all(|l| l.chars().count() <= WIDTH));
    assert!(lines[1..].iter().all(|l| l.starts_with(' ')));
}
