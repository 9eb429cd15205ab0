//! Reading the compact format: [`decode_all`] finds every protocol in a
//! text (quoting and blanks around lines ignored) and reads each strictly,
//! line by line, checking the count and the checksum; [`decode`] wants
//! exactly one.
//!
//! Not here: writing it (`encode.rs`), checking the throws against the
//! rules, and MIME; the format is described in `protocol.rs`.

use super::model::{
    crc32, GameProtocol, ProtocolError, ProtocolFailure, BEGIN, END, MAX_THROWS, VERSION,
};
use crate::game::knobeln::{Params, Throw};

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
pub(super) fn parse_base36(s: &str) -> Option<i64> {
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
