//! Numbers in decimal and columns of a text, written into a `String`
//! without the formatting machinery: the site's pages and the contest's
//! tables write thousands of numbers a group, where `write!` and
//! `format!` with their padding cost most (a tenth of the site's CPU
//! with game pages; the GRP tables' lines, 5 % of the server's thread
//! while playing). The same text as `{n}`,
//! `{s:>w$}` and `{s:<w$}` write, tested against them. [`digits`] is the
//! one loop that makes the digits, for the callers that write bytes
//! (the protocols' run counts; a `/proc` path in a child that must not
//! allocate) as well.
//!
//! Not here: numbers with a fraction (each kind its own: the tables'
//! points in halves, `tables::facts`, the pictures' tenths of a pixel,
//! `site::game_svg`), and any locale (digits and `-` only).

/// `n` in decimal digits, as `{n}` writes it.
pub fn push_unsigned(out: &mut String, n: u64) {
    let mut buf = [0u8; 20];
    // Only ASCII digits.
    out.push_str(std::str::from_utf8(digits(&mut buf, n)).unwrap_or_default());
}

/// `n`'s decimal digits in ASCII, written at the end of `buf` (the digits
/// of `u64::MAX` fill it): for callers that write bytes, not a `String`
/// (the protocols' run counts, a `/proc` path in a child that must not
/// allocate). No allocation.
pub fn digits(buf: &mut [u8; 20], n: u64) -> &[u8] {
    let mut rest = n;
    let mut first = buf.len();
    loop {
        first -= 1;
        buf[first] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    &buf[first..]
}

/// `n` in decimal digits with its `-` below zero, as `{n}` writes it.
pub fn push_integer(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_unsigned(out, n.unsigned_abs());
}

/// Right-aligns what was written into `out` from `start` (a char
/// boundary) in a column of `width` characters, as `{:>width$}` would
/// have written it: spaces before it where it is shorter, nothing cut
/// where it is longer.
pub fn align_right_from(out: &mut String, start: usize, width: usize) {
    let mut pad = width.saturating_sub(out[start..].chars().count());
    while pad > 0 {
        let now = pad.min(SPACES.len());
        out.insert_str(start, &SPACES[..now]);
        pad -= now;
    }
}

/// `s` right-aligned in `width` characters, as `{s:>width$}` writes it.
pub fn push_right(out: &mut String, s: &str, width: usize) {
    push_spaces(out, width.saturating_sub(s.chars().count()));
    out.push_str(s);
}

/// `s` left-aligned in `width` characters, as `{s:<width$}` writes it:
/// spaces after it where it is shorter, nothing cut where it is longer.
pub fn push_left(out: &mut String, s: &str, width: usize) {
    out.push_str(s);
    push_spaces(out, width.saturating_sub(s.chars().count()));
}

/// `n` right-aligned in `width` characters, as `{n:>width$}` writes it.
pub fn push_unsigned_right(out: &mut String, n: u64, width: usize) {
    let mut buf = [0u8; 20];
    let d = digits(&mut buf, n);
    push_spaces(out, width.saturating_sub(d.len()));
    // Only ASCII digits.
    out.push_str(std::str::from_utf8(d).unwrap_or_default());
}

/// `n` left-aligned in `width` characters, as `{n:<width$}` writes it.
pub fn push_unsigned_left(out: &mut String, n: u64, width: usize) {
    let start = out.len();
    push_unsigned(out, n);
    let written = out.len() - start;
    push_spaces(out, width.saturating_sub(written));
}

/// `n` spaces.
pub fn push_spaces(out: &mut String, n: usize) {
    let mut rest = n;
    while rest > 0 {
        let now = rest.min(SPACES.len());
        out.push_str(&SPACES[..now]);
        rest -= now;
    }
}

/// The spaces a column's padding is cut from (wider ones in pieces).
const SPACES: &str = "                                                                ";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every function writes what the formatter writes, at the edges of
    /// the numbers and of the widths (wider than the spaces kept, names
    /// of more bytes than characters, texts longer than their column).
    #[test]
    fn the_same_text_as_the_formatter() {
        for n in [0u64, 1, 9, 10, 99, 100, 12345, u64::MAX / 7, u64::MAX] {
            assert_eq!(digits(&mut [0; 20], n), n.to_string().as_bytes());
            let mut out = String::from("x");
            push_unsigned(&mut out, n);
            assert_eq!(out, format!("x{n}"));
            for width in [0, 1, 3, 5, 7, 20, 64, 65, 100] {
                let mut out = String::from("x");
                push_unsigned_right(&mut out, n, width);
                assert_eq!(out, format!("x{n:>width$}"), "{n} in {width}");
                let mut out = String::from("x");
                push_unsigned_left(&mut out, n, width);
                assert_eq!(out, format!("x{n:<width$}"), "{n} in {width}");
            }
        }
        for n in [0i64, -1, 1, -10, 42, i64::MIN, i64::MAX] {
            let mut out = String::new();
            push_integer(&mut out, n);
            assert_eq!(out, format!("{n}"));
        }
        for s in ["", "-", "itself (both sides)", "Ölgötze", "日本語チーム"] {
            for width in [0, 1, 4, 8, 19, 30, 64, 65, 130] {
                let mut out = String::from("  ");
                push_right(&mut out, s, width);
                assert_eq!(out, format!("  {s:>width$}"), "{s:?} in {width}");
                let mut out = String::from("  ");
                out.push_str(s);
                align_right_from(&mut out, 2, width);
                assert_eq!(out, format!("  {s:>width$}"), "{s:?} aligned in {width}");
                let mut out = String::from("  ");
                push_left(&mut out, s, width);
                assert_eq!(out, format!("  {s:<width$}"), "{s:?} in {width}");
            }
        }
        let mut out = String::new();
        push_spaces(&mut out, 150);
        assert_eq!(out, " ".repeat(150));
    }
}
