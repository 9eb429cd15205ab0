//! Writing the compact format ([`encode`]): the lines of a protocol,
//! free text escaped and continued on `+` lines, throws in base 36 with
//! repeats, the end line with its checksum.
//!
//! Not here: reading it back (`decode.rs`) and the full format
//! (`full.rs`); the format is described in `protocol.rs`.

use std::fmt::Write as _;

use super::model::{crc32, GameProtocol, BEGIN, END, WIDTH};

/// The compact protocol (see the module documentation), ending with a newline.
pub fn encode(p: &GameProtocol) -> String {
    let mut lines: Vec<String> = vec![format!("{BEGIN} {}", p.version)];
    push_text(&mut lines, "team P", &p.players[0]);
    push_text(&mut lines, "team Q", &p.players[1]);
    lines.push(format!(
        "round {} group {} slot {} attempt {}",
        p.round, p.group, p.slot, p.attempt
    ));
    lines.push(format!("seed {}", p.seed));
    lines.push(format!(
        "a {} b {} k {} L {}",
        p.params.a, p.params.b, p.params.k, p.params.l
    ));
    lines.push(format!("points P {} Q {}", p.points[0], p.points[1]));
    for f in &p.failures {
        let head = format!("fail {} {}", player_token(f.player), f.throw);
        push_text(&mut lines, &head, &f.reason);
    }
    lines.push(format!("throws {}", p.throws.len()));
    let mut line = String::new();
    let mut i = 0;
    while i < p.throws.len() {
        let pair = p.throws[i];
        let mut n = 1;
        while i + n < p.throws.len() && p.throws[i + n] == pair {
            n += 1;
        }
        let mut token = base36(pair[0]);
        if pair[1] != pair[0] {
            token.push(',');
            token.push_str(&base36(pair[1]));
        }
        if n > 1 {
            let _ = write!(token, "*{n}");
        }
        if !line.is_empty() && line.len() + 1 + token.len() > WIDTH {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
        i += n;
    }
    if !line.is_empty() {
        lines.push(line);
    }
    let mut out = String::new();
    for l in &lines {
        out.push_str(l);
        out.push('\n');
    }
    let crc = crc32(out.as_bytes());
    let _ = writeln!(out, "{END} {} {crc:08x}", p.throws.len());
    out
}

fn player_token(player: usize) -> String {
    match player {
        0 => "P".to_string(),
        1 => "Q".to_string(),
        n => n.to_string(),
    }
}

/// A number in base 36, lower-case, `-` before negative numbers.
pub(super) fn base36(v: i64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut u = v.unsigned_abs();
    let mut buf = Vec::with_capacity(14);
    loop {
        buf.push(DIGITS[(u % 36) as usize]);
        u /= 36;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        buf.push(b'-');
    }
    buf.reverse();
    String::from_utf8(buf).expect("ASCII")
}

/// Escapes free text: see the module documentation.
fn escape_text(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        let plain = match c {
            b' ' => i + 1 < b.len() && b[i + 1] != b' ',
            b'%' | b'=' => false,
            0x21..=0x7e => true,
            _ => false,
        };
        if plain {
            out.push(c as char);
        } else {
            let _ = write!(out, "%{c:02X}");
        }
    }
    out
}

/// Cuts escaped text into pieces of at most `room` characters: the longest
/// piece followed by a blank, else (no blank in reach) `room` characters,
/// without splitting a `%HH`.
fn next_piece(e: &[u8], room: usize) -> usize {
    if e.len() <= room {
        return e.len();
    }
    for len in (1..=room).rev() {
        if e[len] == b' ' {
            return len;
        }
    }
    let mut len = room;
    if e[len - 1] == b'%' {
        len -= 1;
    } else if len >= 2 && e[len - 2] == b'%' {
        len -= 2;
    }
    len.max(1)
}

/// `head text`, continued on `+` lines.
fn push_text(lines: &mut Vec<String>, head: &str, text: &str) {
    let e = escape_text(text);
    let e = e.as_bytes();
    if e.is_empty() {
        lines.push(head.to_string());
        return;
    }
    let room = WIDTH.saturating_sub(head.len() + 1).max(3);
    let n = next_piece(e, room);
    lines.push(format!("{head} {}", ascii(&e[..n])));
    let mut rest = &e[n..];
    while !rest.is_empty() {
        let n = next_piece(rest, WIDTH - 1);
        lines.push(format!("+{}", ascii(&rest[..n])));
        rest = &rest[n..];
    }
}

fn ascii(b: &[u8]) -> &str {
    std::str::from_utf8(b).expect("escaped text is ASCII")
}
