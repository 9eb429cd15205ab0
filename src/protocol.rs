//! The game protocol: every throw of one game, as compact mail-safe text
//! (the DGP mails of the contest) and as the full, one-line-per-throw text
//! people read.
//!
//! # The compact format, version 1
//!
//! Plain 7-bit ASCII, lines of at most [`WIDTH`] (72) characters, no `=`,
//! no tabs and no trailing blanks, so quoted-printable leaves it unchanged
//! and mail programs have nothing to re-wrap. One protocol is a block of
//! lines in this order:
//!
//! ```text
//! KNOBELN-PROTOCOL 1
//! team P the_heavy_lords_of_knobeln
//! team Q climbers
//! round 1 group 2 slot 17 attempt 1
//! seed 8427345982374
//! a 1 b 12288 k 8 L 1000
//! points P 12 Q 0
//! fail P 10 throw 10: threw 20000, outside the allowed range 1..12288
//! + (rule 1)
//! throws 9
//! 2s,9hc 2s*4 2t,2s 2u*3
//! KNOBELN-END 9 78ad2756
//! ```
//!
//! - `team P`/`team Q`, `fail`: free text (team names, failure reasons) is
//!   written with bytes `!`..`~` and single blanks as they are; `%`, `=`,
//!   control and non-ASCII bytes (UTF-8), and a blank followed by a blank or
//!   ending the text, as `%HH` (two upper-case hex digits). Long texts
//!   continue on lines starting with `+`; the pieces are simply
//!   concatenated. A piece is cut before a blank where possible, so a
//!   continuation line usually reads `+ next words`.
//! - `round`, `group`, `slot` (the game's position in the group's
//!   schedule) and `attempt` (1 = first try); `seed` the game seed; the
//!   rules `a`, `b`, `k`, `L`; `points` of P and Q.
//! - `fail <P|Q> <throw> <reason>`: zero or more failures, each with the
//!   player, the (1-based) throw in which it failed, and the referee's
//!   sentence.
//! - `throws N`, then the N throws in pairs, tokens separated by blanks,
//!   as many as fit on a line: a pair is `p,q` with both numbers in base 36
//!   (digits `0-9a-z`, `-` before negative numbers), or only `p` when both
//!   players threw the same number; `*n` after a pair (n decimal, n >= 2)
//!   repeats it n times in a row. `2s,9hc` is P 100, Q 12288; `2s*4` is four
//!   throws of 100 by both.
//! - `KNOBELN-END N CRC`: N again, and the CRC-32 (IEEE 802.3, as in zip and
//!   gzip, eight lower-case hex digits) of all lines of the block from the
//!   `KNOBELN-PROTOCOL` line to the last line before this one, each with a
//!   newline. A protocol without its end line, or with a wrong count or
//!   checksum, is refused: truncated or damaged mail is detected.
//!
//! The decoder finds protocols anywhere in a text (a whole mail, headers
//! and all): on every line it first ignores leading blanks, tabs, `>` and
//! `|` (quoting) and trailing blanks and carriage returns; a line that then
//! reads `KNOBELN-PROTOCOL <version>` starts a protocol. Everything outside
//! the blocks is ignored. Within a block the decoder is strict (the lines in
//! the order above, decimal numbers without sign except for `a` and `b`, at
//! most [`MAX_THROWS`] throws) but accepts several blanks or tabs between
//! words and lower-case `%hh`. [`decode_all`] returns every protocol of a
//! text; [`decode`] wants exactly one.
//!
//! The full format ([`format_full`]) has one line per throw: the throw
//! number, P's and Q's throw, the winner (`P`, `Q` or `-`), the winner's
//! points and both running totals; then the points and the failures. The
//! kit's `protocolfmt.c` prints exactly the same text, and the kit's
//! `referee.c` writes exactly what [`encode`] writes.
//!
//! This module is pure text: it neither plays, nor checks the throws against
//! the rules (the running totals of [`format_full`] are computed with
//! [`judge`], but a protocol with illegal throws is still a protocol), nor
//! decodes MIME (base64 bodies must be decoded by the caller;
//! quoted-printable needs nothing, see above).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::game::knobeln::{judge, Params, Player, Throw};
use crate::referee::GameRecord;

/// The version [`encode`] writes and [`decode`] reads.
pub const VERSION: u32 = 1;
/// The first line of a protocol is `KNOBELN-PROTOCOL <version>`.
pub const BEGIN: &str = "KNOBELN-PROTOCOL";
/// The last line of a protocol is `KNOBELN-END <throws> <crc32>`.
pub const END: &str = "KNOBELN-END";
/// No line of a compact protocol is longer than this.
pub const WIDTH: usize = 72;
/// The decoder refuses protocols announcing more throws than this (the
/// largest `L` that [`Params::validate`] allows).
pub const MAX_THROWS: u64 = 1_000_000;

/// One failure of a player, as the protocol shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtocolFailure {
    /// 0 for P, 1 for Q.
    pub player: usize,
    /// The throw (1-based) in which the player failed.
    pub throw: u32,
    /// The referee's sentence.
    pub reason: String,
}

/// Everything a game protocol says about one game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameProtocol {
    pub version: u32,
    /// Team names of P and Q.
    pub players: [String; 2],
    pub round: u32,
    pub group: u32,
    /// The game's position in its group's schedule.
    pub slot: u32,
    /// 1 for the first try of a game, 2 and 3 for rescheduled ones.
    pub attempt: u32,
    pub seed: u64,
    pub params: Params,
    /// Points of P and Q (up to the failure, if any).
    pub points: [u64; 2],
    /// Every completed throw, `[P's, Q's]`.
    pub throws: Vec<[Throw; 2]>,
    pub failures: Vec<ProtocolFailure>,
}

impl GameProtocol {
    /// The protocol of a refereed game.
    pub fn from_record(
        record: &GameRecord,
        params: Params,
        players: [String; 2],
        round: u32,
        group: u32,
        slot: u32,
        attempt: u32,
    ) -> GameProtocol {
        GameProtocol {
            version: VERSION,
            players,
            round,
            group,
            slot,
            attempt,
            seed: record.seed,
            params,
            points: record.points,
            throws: record.throws.clone(),
            failures: record
                .failures
                .iter()
                .map(|f| ProtocolFailure {
                    player: f.player,
                    throw: f.throw,
                    reason: f.reason.clone(),
                })
                .collect(),
        }
    }
}

/// Why a text holds no (good) protocol. Line numbers are 1-based lines of
/// the whole text given to the decoder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("no KNOBELN protocol found (no line \"{BEGIN} {VERSION}\")")]
    NotFound,
    #[error("{0} KNOBELN protocols found where one was expected")]
    Several(usize),
    #[error("line {line}: protocol version {version} is not supported (only {VERSION} is)")]
    Version { line: usize, version: u32 },
    #[error("line {line}: {what}")]
    Syntax { line: usize, what: String },
    #[error("the protocol starting at line {start} ends before its {END} line (truncated?)")]
    Truncated { start: usize },
    #[error(
        "line {line}: checksum {found:08x} does not match the protocol's {computed:08x} \
         (the mail was damaged on its way)"
    )]
    Checksum {
        line: usize,
        found: u32,
        computed: u32,
    },
}

// ---------------------------------------------------------------- encoding

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
fn base36(v: i64) -> String {
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

/// CRC-32 (IEEE 802.3, reflected, as zip and gzip).
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

// ---------------------------------------------------------------- decoding

/// The one protocol in `text` (see the module documentation for where it
/// may be). Several protocols are an error here: use [`decode_all`].
pub fn decode(text: &str) -> Result<GameProtocol, ProtocolError> {
    let mut all = decode_all(text)?;
    match all.len() {
        0 => Err(ProtocolError::NotFound),
        1 => Ok(all.remove(0)),
        n => Err(ProtocolError::Several(n)),
    }
}

/// Every protocol in `text`, in order; an empty list if there is none. One
/// damaged or truncated protocol makes the whole text an error.
pub fn decode_all(text: &str) -> Result<Vec<GameProtocol>, ProtocolError> {
    let lines: Vec<&str> = text.split('\n').map(normalize).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if begin_version(lines[i]).is_some() {
            let mut cur = Cursor {
                lines: &lines,
                next: i,
                start: i + 1,
                crc_text: String::new(),
            };
            found.push(cur.protocol()?);
            i = cur.next;
        } else {
            i += 1;
        }
    }
    Ok(found)
}

/// A line without quoting in front and blanks behind.
fn normalize(line: &str) -> &str {
    line.trim_start_matches([' ', '\t', '>', '|'])
        .trim_end_matches([' ', '\t', '\r', '\x0b', '\x0c'])
}

/// `Some(digits)` if the line starts a protocol.
fn begin_version(line: &str) -> Option<&str> {
    let v = line.strip_prefix(BEGIN)?.strip_prefix(' ')?;
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).then_some(v)
}

struct Cursor<'a> {
    lines: &'a [&'a str],
    /// Index of the next line to read.
    next: usize,
    /// 1-based line number of the begin line.
    start: usize,
    /// The lines read so far, each with a newline (for the checksum).
    crc_text: String,
}

type Res<T> = Result<T, ProtocolError>;

impl<'a> Cursor<'a> {
    /// 1-based number of the line read last.
    fn line_no(&self) -> usize {
        self.next
    }

    fn syntax<T>(&self, what: impl Into<String>) -> Res<T> {
        Err(ProtocolError::Syntax {
            line: self.line_no(),
            what: what.into(),
        })
    }

    fn take(&mut self) -> Res<&'a str> {
        let Some(&l) = self.lines.get(self.next) else {
            return Err(ProtocolError::Truncated { start: self.start });
        };
        // The last element of a text ending with a newline is empty: the
        // text ended there.
        if self.next + 1 == self.lines.len() && l.is_empty() {
            return Err(ProtocolError::Truncated { start: self.start });
        }
        self.next += 1;
        Ok(l)
    }

    /// Takes a line and adds it to the checksum.
    fn take_counted(&mut self) -> Res<&'a str> {
        let l = self.take()?;
        self.crc_text.push_str(l);
        self.crc_text.push('\n');
        Ok(l)
    }

    /// A line of blank-separated words starting with `keyword`.
    fn words(&mut self, keyword: &str) -> Res<Vec<&'a str>> {
        let l = self.take_counted()?;
        let w: Vec<&str> = l.split([' ', '\t']).filter(|s| !s.is_empty()).collect();
        if w.first() != Some(&keyword) {
            return self.syntax(format!("expected a \"{keyword}\" line, found \"{l}\""));
        }
        Ok(w)
    }

    /// A line `[keyword] label1 n1 label2 n2 ...` (no keyword if it is
    /// empty): the numbers' texts.
    fn labelled(&mut self, keyword: &str, labels: &[&str]) -> Res<Vec<&'a str>> {
        let l = self.take_counted()?;
        let w: Vec<&str> = l.split([' ', '\t']).filter(|s| !s.is_empty()).collect();
        let skip = usize::from(!keyword.is_empty());
        let ok = w.len() == skip + 2 * labels.len()
            && (skip == 0 || w[0] == keyword)
            && labels
                .iter()
                .enumerate()
                .all(|(i, lb)| w[skip + 2 * i] == *lb);
        if !ok {
            let shape: Vec<String> = labels.iter().map(|lb| format!("{lb} N")).collect();
            let want = format!("{keyword} {}", shape.join(" "));
            return self.syntax(format!("expected \"{}\", found \"{l}\"", want.trim_start()));
        }
        Ok((0..labels.len()).map(|i| w[skip + 1 + 2 * i]).collect())
    }

    fn unsigned(&self, s: &str, max: u64) -> Res<u64> {
        parse_unsigned(s, max).map_or_else(
            || self.syntax(format!("\"{s}\" is not a number in 0..{max}")),
            Ok,
        )
    }

    fn u32(&self, s: &str) -> Res<u32> {
        self.unsigned(s, u32::MAX as u64).map(|v| v as u32)
    }

    fn signed(&self, s: &str) -> Res<i64> {
        let (neg, digits) = match s.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, s),
        };
        let max = if neg { 1u64 << 63 } else { i64::MAX as u64 };
        let v = parse_unsigned(digits, max).map_or_else(
            || self.syntax(format!("\"{s}\" is not a 64-bit number")),
            Ok,
        )?;
        Ok(if neg {
            (v as i64).wrapping_neg()
        } else {
            v as i64
        })
    }

    /// Free text: the rest of the current line after `rest_start` and the
    /// `+` lines that follow.
    fn text(&mut self, first: &str) -> Res<String> {
        let mut e = first.to_string();
        while let Some(l) = self.lines.get(self.next) {
            let Some(piece) = l.strip_prefix('+') else {
                break;
            };
            self.take_counted()?;
            e.push_str(piece);
        }
        let mut bytes = Vec::with_capacity(e.len());
        let b = e.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                let h = b.get(i + 1..i + 3).and_then(|h| {
                    std::str::from_utf8(h)
                        .ok()
                        .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                });
                match h {
                    Some(v) => bytes.push(v),
                    None => return self.syntax("a % not followed by two hex digits"),
                }
                i += 3;
            } else {
                bytes.push(b[i]);
                i += 1;
            }
        }
        String::from_utf8(bytes).map_or_else(|_| self.syntax("text is not UTF-8"), Ok)
    }

    /// `head rest`: the rest (empty if the line is just `head`).
    fn headed(&mut self, head: &str) -> Res<String> {
        let l = self.take_counted()?;
        let first = if l == head {
            ""
        } else if let Some(r) = l.strip_prefix(head).and_then(|r| r.strip_prefix(' ')) {
            r
        } else {
            return self.syntax(format!("expected a \"{head}\" line, found \"{l}\""));
        };
        self.text(first)
    }

    fn protocol(&mut self) -> Res<GameProtocol> {
        let begin = self.take_counted()?;
        let v = begin_version(begin).expect("called on a begin line");
        let version = match parse_unsigned(v, u32::MAX as u64) {
            Some(v) if v == VERSION as u64 => v as u32,
            Some(v) => {
                return Err(ProtocolError::Version {
                    line: self.line_no(),
                    version: v as u32,
                })
            }
            None => return self.syntax(format!("version \"{v}\" is not a number")),
        };
        let p_name = self.headed("team P")?;
        let q_name = self.headed("team Q")?;
        let g = self.labelled("", &["round", "group", "slot", "attempt"])?;
        let (round, group, slot, attempt) = (
            self.u32(g[0])?,
            self.u32(g[1])?,
            self.u32(g[2])?,
            self.u32(g[3])?,
        );
        let s = self.words("seed")?;
        if s.len() != 2 {
            return self.syntax("expected \"seed N\"");
        }
        let seed = self.unsigned(s[1], u64::MAX)?;
        let pa = self.labelled("", &["a", "b", "k", "L"])?;
        let params = Params {
            a: self.signed(pa[0])?,
            b: self.signed(pa[1])?,
            k: self.u32(pa[2])?,
            l: self.u32(pa[3])?,
        };
        let pts = self.labelled("points", &["P", "Q"])?;
        let points = [
            self.unsigned(pts[0], u64::MAX)?,
            self.unsigned(pts[1], u64::MAX)?,
        ];
        let mut failures = Vec::new();
        while self
            .lines
            .get(self.next)
            .is_some_and(|l| *l == "fail" || l.starts_with("fail "))
        {
            let l = self.take_counted()?;
            let mut parts = l.splitn(4, ' ');
            parts.next();
            let who = parts.next().unwrap_or("");
            let throw = parts.next().unwrap_or("");
            let first = parts.next().unwrap_or("");
            let player = match who {
                "P" => 0,
                "Q" => 1,
                _ => match parse_unsigned(who, u32::MAX as u64) {
                    Some(n) if n > 1 => n as usize,
                    _ => return self.syntax(format!("\"{who}\" is not a player (P or Q)")),
                },
            };
            let throw = self.u32(throw)?;
            let reason = self.text(first)?;
            failures.push(ProtocolFailure {
                player,
                throw,
                reason,
            });
        }
        let t = self.words("throws")?;
        if t.len() != 2 {
            return self.syntax("expected \"throws N\"");
        }
        let n = self.unsigned(t[1], MAX_THROWS)?;
        let mut throws: Vec<[Throw; 2]> = Vec::with_capacity(n.min(1 << 16) as usize);
        while (throws.len() as u64) < n {
            let l = self.take_counted()?;
            if l.is_empty() || l.starts_with(END) {
                return self.syntax(format!(
                    "{} throws announced, the protocol has only {}",
                    n,
                    throws.len()
                ));
            }
            for token in l.split([' ', '\t']).filter(|w| !w.is_empty()) {
                let (pair, count) = match token.split_once('*') {
                    Some((pair, c)) => (pair, parse_unsigned(c, MAX_THROWS).filter(|&c| c >= 1)),
                    None => (token, Some(1)),
                };
                let Some(count) = count else {
                    return self.syntax(format!("bad repeat count in \"{token}\""));
                };
                let (p, q) = match pair.split_once(',') {
                    Some((p, q)) => (p, q),
                    None => (pair, pair),
                };
                let (Some(p), Some(q)) = (parse_base36(p), parse_base36(q)) else {
                    return self.syntax(format!("\"{token}\" is not a pair of base-36 throws"));
                };
                if throws.len() as u64 + count > n {
                    return self.syntax(format!("more throws than the {n} announced"));
                }
                throws.extend(std::iter::repeat_n([p, q], count as usize));
            }
        }
        let computed = crc32(self.crc_text.as_bytes());
        let l = self.take()?;
        let w: Vec<&str> = l.split([' ', '\t']).filter(|s| !s.is_empty()).collect();
        if w.len() != 3 || w[0] != END {
            return self.syntax(format!(
                "expected \"{END} {n} <crc32>\" after the {n} throws, found \"{l}\""
            ));
        }
        if parse_unsigned(w[1], MAX_THROWS) != Some(n) {
            return self.syntax(format!(
                "the end line counts {} throws, the protocol has {n}",
                w[1]
            ));
        }
        let found = match (w[2].len(), u32::from_str_radix(w[2], 16)) {
            (8, Ok(v)) if w[2].bytes().all(|c| c.is_ascii_hexdigit()) => v,
            _ => return self.syntax(format!("\"{}\" is not a CRC-32 (8 hex digits)", w[2])),
        };
        if found != computed {
            return Err(ProtocolError::Checksum {
                line: self.line_no(),
                found,
                computed,
            });
        }
        Ok(GameProtocol {
            version,
            players: [p_name, q_name],
            round,
            group,
            slot,
            attempt,
            seed,
            params,
            points,
            throws,
            failures,
        })
    }
}

/// Decimal digits only (no sign), at most `max`.
fn parse_unsigned(s: &str, max: u64) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for b in s.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
        if v > max {
            return None;
        }
    }
    Some(v)
}

/// Lower-case base 36, optional `-`, within i64.
fn parse_base36(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let max = if neg { 1u64 << 63 } else { i64::MAX as u64 };
    let mut v: u64 = 0;
    for b in digits.bytes() {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'z' => b - b'a' + 10,
            _ => return None,
        };
        v = v.checked_mul(36)?.checked_add(d as u64)?;
        if v > max {
            return None;
        }
    }
    Some(if neg {
        (v as i64).wrapping_neg()
    } else {
        v as i64
    })
}

// ---------------------------------------------------------------- full format

fn label(player: usize) -> String {
    match player {
        0 => "P".to_string(),
        1 => "Q".to_string(),
        n => format!("player {n}"),
    }
}

/// The full format: a header, one line per throw (number, P's and Q's
/// throw, winner, the winner's points, running totals of P and Q), then the
/// points and the failures.
pub fn format_full(p: &GameProtocol) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "KNOBELN game protocol (version {})", p.version);
    let _ = writeln!(out, "P: {}", p.players[0]);
    let _ = writeln!(out, "Q: {}", p.players[1]);
    let _ = writeln!(
        out,
        "round {}, group {}, slot {}, attempt {}, seed {}",
        p.round, p.group, p.slot, p.attempt, p.seed
    );
    let _ = writeln!(
        out,
        "rules: a {}, b {}, k {}, L {}",
        p.params.a, p.params.b, p.params.k, p.params.l
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "{:>5} {:>6} {:>6} {:>3} {:>4} {:>8} {:>8}",
        "throw", "P", "Q", "won", "pts", "total P", "total Q"
    );
    let mut total = [0u64; 2];
    for (i, t) in p.throws.iter().enumerate() {
        let o = judge(t[0], t[1]);
        let pts = o.points_of();
        total[0] += pts[0] as u64;
        total[1] += pts[1] as u64;
        let won = match o.winner {
            Some(Player::P) => "P",
            Some(Player::Q) => "Q",
            None => "-",
        };
        let _ = writeln!(
            out,
            "{:>5} {:>6} {:>6} {:>3} {:>4} {:>8} {:>8}",
            i + 1,
            t[0],
            t[1],
            won,
            o.points,
            total[0],
            total[1]
        );
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{} throws; points: P {}, Q {}",
        p.throws.len(),
        p.points[0],
        p.points[1]
    );
    if total != p.points {
        let _ = writeln!(
            out,
            "(but the throws add up to P {}, Q {})",
            total[0], total[1]
        );
    }
    if p.failures.is_empty() {
        out.push_str("no failure\n");
    }
    for f in &p.failures {
        let who = match p.players.get(f.player) {
            Some(name) => format!("{} ({name})", label(f.player)),
            None => label(f.player),
        };
        let _ = writeln!(out, "failure of {who} in throw {}:", f.throw);
        let _ = writeln!(out, "  {}", f.reason);
    }
    out
}

/// [`format_full`] of several protocols, separated by an empty line: what
/// the kit's `protocolfmt` prints for a mail with several protocols.
pub fn format_all(ps: &[GameProtocol]) -> String {
    ps.iter().map(format_full).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests;
