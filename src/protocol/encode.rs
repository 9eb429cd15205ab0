//! Writing the compact format ([`encode`]): the lines of a protocol,
//! free text escaped and continued on `+` lines, throws in base 36 with
//! repeats, the end line with its checksum.
//!
//! Not here: reading it back (`decode.rs`) and the full format
//! (`full.rs`); the format is described in `protocol.rs`.

use std::fmt::Write as _;

use super::model::{crc32, GameProtocol, BEGIN, END, WIDTH};
use crate::game::knobeln::Throw;

/// The compact protocol (see the module documentation), ending with a newline.
///
/// Written into one string as it goes (the contest encodes every game of
/// a group for its DGP mails on the server's thread): no string per line
/// or per throw.
pub fn encode(p: &GameProtocol) -> String {
    let runs = RepeatRuns {
        throws: &p.throws,
        at: 0,
    };
    match encode_runs(
        p,
        p.throws.len(),
        runs.map(Ok::<_, std::convert::Infallible>),
    ) {
        Ok(text) => text,
        Err(never) => match never {},
    }
}

/// [`encode`] with the throws given as runs instead of `p.throws` (which
/// is not read): `count` throws in all, each run a throw and how many
/// times it comes in a row (at least once), the runs of the throws in
/// order. Runs of the same throw that follow each other are written as
/// one token, so the text is [`encode`]'s of the same throws however they
/// are cut into runs. The contest writes its DGP protocols from the
/// stored throws' bytes this way (`store::throws::packed_runs`), without
/// turning them into a vector of throws first.
///
/// The first fault the runs give ends it. `count` must be the runs'
/// total (the `throws` line and the end line carry it).
pub fn encode_runs<E>(
    p: &GameProtocol,
    count: usize,
    runs: impl Iterator<Item = Result<([Throw; 2], usize), E>>,
) -> Result<String, E> {
    // About 8 characters a pair where the throws vary, far fewer when
    // they repeat: a contest's protocol is a few hundred bytes, so the
    // text starts small and grows (a group's protocols are kept together
    // for its mails; room for 8 characters a throw each touched a fresh
    // page of memory per protocol).
    let mut out = String::with_capacity(256 + count.min(32) * 8);
    let _ = writeln!(out, "{BEGIN} {}", p.version);
    push_text(&mut out, "team P", &p.players[0]);
    push_text(&mut out, "team Q", &p.players[1]);
    let _ = writeln!(
        out,
        "round {} group {} slot {} attempt {}",
        p.round, p.group, p.slot, p.attempt
    );
    let _ = writeln!(out, "seed {}", p.seed);
    let _ = writeln!(
        out,
        "a {} b {} k {} L {}",
        p.params.a, p.params.b, p.params.k, p.params.l
    );
    let _ = writeln!(out, "points P {} Q {}", p.points[0], p.points[1]);
    for f in &p.failures {
        let head = format!("fail {} {}", player_token(f.player), f.throw);
        push_text(&mut out, &head, &f.reason);
    }
    let _ = writeln!(out, "throws {count}");
    // The throws' line being written: where it starts in `out`.
    let mut line_start = out.len();
    let mut token = Token::default();
    // The run being gathered (runs of the same throw joined).
    let mut pending: Option<([Throw; 2], usize)> = None;
    let mut write = |out: &mut String, pair: [Throw; 2], n: usize| {
        token.set(pair, n);
        let line_len = out.len() - line_start;
        if line_len > 0 && line_len + 1 + token.len > WIDTH {
            out.push('\n');
            line_start = out.len();
        }
        if out.len() > line_start {
            out.push(' ');
        }
        out.push_str(token.as_str());
    };
    for run in runs {
        let (pair, n) = run?;
        if n == 0 {
            continue;
        }
        match &mut pending {
            Some((p, m)) if *p == pair => *m += n,
            _ => {
                if let Some((p, m)) = pending.replace((pair, n)) {
                    write(&mut out, p, m);
                }
            }
        }
    }
    if let Some((p, m)) = pending {
        write(&mut out, p, m);
    }
    if out.len() > line_start {
        out.push('\n');
    }
    let crc = crc32(out.as_bytes());
    let _ = writeln!(out, "{END} {count} {crc:08x}");
    Ok(out)
}

/// The runs of the same throw in a slice of throws, in order.
struct RepeatRuns<'a> {
    throws: &'a [[Throw; 2]],
    at: usize,
}

impl Iterator for RepeatRuns<'_> {
    type Item = ([Throw; 2], usize);

    fn next(&mut self) -> Option<Self::Item> {
        let pair = *self.throws.get(self.at)?;
        let n = self.throws[self.at..]
            .iter()
            .take_while(|&&t| t == pair)
            .count();
        self.at += n;
        Some((pair, n))
    }
}

/// One token of the throws' lines (`p`, `p,q`, either with `*n`), written
/// on the stack: two numbers in base 36 of at most 14 characters each, a
/// repeat count of at most 20 digits.
struct Token {
    buf: [u8; 64],
    len: usize,
}

impl Default for Token {
    fn default() -> Self {
        Token {
            buf: [0; 64],
            len: 0,
        }
    }
}

impl Token {
    fn set(&mut self, pair: [i64; 2], n: usize) {
        self.len = 0;
        self.push_base36(pair[0]);
        if pair[1] != pair[0] {
            self.buf[self.len] = b',';
            self.len += 1;
            self.push_base36(pair[1]);
        }
        if n > 1 {
            self.buf[self.len] = b'*';
            self.len += 1;
            let mut buf = [0u8; 20];
            let d = crate::decimal::digits(&mut buf, n as u64);
            self.buf[self.len..self.len + d.len()].copy_from_slice(d);
            self.len += d.len();
        }
    }

    fn push_base36(&mut self, v: i64) {
        let mut digits = [0u8; 14];
        let k = base36_into(v, &mut digits);
        let d = &digits[k..];
        self.buf[self.len..self.len + d.len()].copy_from_slice(d);
        self.len += d.len();
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).expect("ASCII")
    }
}

/// `v` in base 36 at the end of `buf`; returns where it starts.
fn base36_into(v: i64, buf: &mut [u8; 14]) -> usize {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut u = v.unsigned_abs();
    let mut k = buf.len();
    loop {
        k -= 1;
        buf[k] = DIGITS[(u % 36) as usize];
        u /= 36;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        k -= 1;
        buf[k] = b'-';
    }
    k
}

fn player_token(player: usize) -> String {
    match player {
        0 => "P".to_string(),
        1 => "Q".to_string(),
        n => n.to_string(),
    }
}

/// A number in base 36, lower-case, `-` before negative numbers.
#[cfg(test)]
pub(super) fn base36(v: i64) -> String {
    let mut buf = [0u8; 14];
    let k = base36_into(v, &mut buf);
    std::str::from_utf8(&buf[k..]).expect("ASCII").to_string()
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

/// `head text`, continued on `+` lines, each line ended.
fn push_text(out: &mut String, head: &str, text: &str) {
    let e = escape_text(text);
    let e = e.as_bytes();
    out.push_str(head);
    if e.is_empty() {
        out.push('\n');
        return;
    }
    let room = WIDTH.saturating_sub(head.len() + 1).max(3);
    let n = next_piece(e, room);
    out.push(' ');
    out.push_str(ascii(&e[..n]));
    out.push('\n');
    let mut rest = &e[n..];
    while !rest.is_empty() {
        let n = next_piece(rest, WIDTH - 1);
        out.push('+');
        out.push_str(ascii(&rest[..n]));
        out.push('\n');
        rest = &rest[n..];
    }
}

fn ascii(b: &[u8]) -> &str {
    std::str::from_utf8(b).expect("escaped text is ASCII")
}

/// Hostile review (F6): the encoder writing into one string gives the
/// very text of the encoder before it (a string per line and per token),
/// kept here as it was.
#[cfg(test)]
mod as_before {
    use std::fmt::Write as _;

    use super::super::model::{crc32, GameProtocol, ProtocolFailure, BEGIN, END, WIDTH};
    use super::{ascii, base36, escape_text, next_piece, player_token};

    fn encode_before(p: &GameProtocol) -> String {
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

    #[test]
    fn the_encoding_is_the_encoding_before_it() {
        let mut g = crate::seed::SplitMix64::new(6);
        for _ in 0..3000 {
            let p = crate::protocol::tests::random_protocol(&mut g);
            assert_eq!(super::encode(&p), encode_before(&p));
        }
        // Extremes: a run of a million, the widest tokens on every line,
        // a hostile reason of every byte value and far beyond a line, a
        // player number of 20 digits, a throw index at its largest.
        let mut p = crate::protocol::tests::random_protocol(&mut g);
        let hostile: String = (0..=0x2ffu32)
            .filter_map(char::from_u32)
            .cycle()
            .take(100_000)
            .collect();
        p.players = [hostile.clone(), " ".repeat(200)];
        p.failures = vec![ProtocolFailure {
            player: usize::MAX,
            throw: u32::MAX,
            reason: hostile,
        }];
        for throws in [
            vec![[7, 7]; 1_000_000],
            vec![[i64::MIN, i64::MAX]; 1],
            (0..5000)
                .map(|i| [i64::MIN + i, if i % 3 == 0 { i64::MAX } else { -i }])
                .collect(),
        ] {
            p.throws = throws;
            assert_eq!(super::encode(&p), encode_before(&p));
        }
    }
}
