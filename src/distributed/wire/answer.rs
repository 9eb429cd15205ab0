//! A worker's answer ([`ResultMessage`]) in binary: what a worker of format
//! 7 and later publishes. A KNOBELN game's record is a few numbers and its throws'
//! bytes as the store keeps them (format 1 of `store::throws`), raw: no
//! base64, no JSON per record. What is rare or large in kind (a fault's
//! text, a bot game, a record's failures) stays JSON inside the frame.
//! [`ResultMessage`]'s `encode` and `decode` live here (binary out;
//! binary or JSON in). Pure: bytes in, bytes out; the checks of what the
//! answer claims are the coordinator's ([`super::check_record`]), not here.
//!
//! The layout (varints are LEB128, signed ones zigzag first; a text is a
//! varint length and that many bytes of UTF-8):
//!
//! ```text
//! MAGIC (4 bytes)  format (varint)  session (text)  job (text)  worker (text)
//! n (varint), then n games:
//!   tournament (signed varint)  round  group  slot  attempt (varints)
//!   0  seed (8 bytes, little-endian)  points of P and Q (varints)
//!      throws' format (varint)  throws (varint length, bytes)
//!      failures (text: a JSON array; empty for none)
//!   or
//!   1  outcome (text: the outcome as JSON, as format 6 sent it)
//! ```
//!
//! A JSON answer (the form of formats up to 6) starts with `{` and never
//! with [`MAGIC`], so [`ResultMessage::decode`] reads both; format 6's
//! answers are refused for their format (each format has its own queue,
//! so a worker of format 6 never holds a job of this one).

use super::{
    GameIdent, GameResult, Outcome, ResultMessage, WireError, FORMAT, MAX_GAMES_PER_JOB,
    MAX_MESSAGE_BYTES,
};
use crate::referee::{Failure, GameRecord};
use crate::store::{decode_throws, encode_throws, put_varint, zigzag, THROWS_FORMAT};

impl ResultMessage {
    /// The answer as a worker of this format sends it: binary
    /// (this module's).
    pub fn encode(&self) -> Vec<u8> {
        encode(self)
    }

    /// The answer as JSON (the form of formats up to 6, still read: tests
    /// and tools may write it by hand).
    pub fn encode_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a result serializes")
    }

    /// The encoded result, within [`MAX_MESSAGE_BYTES`] whatever its games
    /// hold: a result that would not travel has its played games turned
    /// into faults that say so (played again elsewhere, and the run stops
    /// naming the game if it never fits) instead of a publish retried
    /// forever. By construction nothing a bot leaves makes a result this
    /// large (kept folders, moves and standard error are bounded); this is
    /// the guard should that ever be wrong.
    pub fn encode_within_limit(mut self) -> Vec<u8> {
        let bytes = self.encode();
        if bytes.len() <= MAX_MESSAGE_BYTES {
            return bytes;
        }
        let why = format!(
            "the worker's result for this job is {} bytes, more than a message carries \
             ({MAX_MESSAGE_BYTES}): an engine fault, the game is played again",
            bytes.len()
        );
        for r in &mut self.results {
            r.outcome = Outcome::Fault(why.clone());
        }
        self.encode()
    }

    /// Reads an answer, binary or JSON (told apart by its first bytes).
    pub fn decode(bytes: &[u8]) -> Result<ResultMessage, WireError> {
        if bytes.len() > MAX_MESSAGE_BYTES {
            return Err(WireError::TooLarge(bytes.len()));
        }
        if is_binary(bytes) {
            return decode(bytes);
        }
        let r: ResultMessage = super::decode(bytes)?;
        if r.format != FORMAT {
            return Err(WireError::Format(r.format));
        }
        if r.results.len() > MAX_GAMES_PER_JOB {
            return Err(WireError::Invalid(format!(
                "{} games in one answer",
                r.results.len()
            )));
        }
        Ok(r)
    }
}

/// The first bytes of a binary answer: a NUL (no JSON text starts so),
/// then `KNA` (KNOBELN answer).
pub const MAGIC: [u8; 4] = *b"\0KNA";

/// Whether `bytes` are a binary answer (else they are read as JSON).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The binary form of `m` (its `format` field is not written: a binary
/// answer is always of this program's [`FORMAT`]).
pub fn encode(m: &ResultMessage) -> Vec<u8> {
    // Room for about a 1000-throw record per game (2 kB of throws), so
    // the buffer is not grown by doubling and copied.
    let mut out = Vec::with_capacity(64 + m.session.len() + m.job.len() + 2304 * m.results.len());
    out.extend_from_slice(&MAGIC);
    put_varint(&mut out, u64::from(FORMAT));
    put_bytes(&mut out, m.session.as_bytes());
    put_bytes(&mut out, m.job.as_bytes());
    put_bytes(&mut out, m.worker.as_bytes());
    put_varint(&mut out, m.results.len() as u64);
    for r in &m.results {
        let g = r.game;
        put_varint(&mut out, zigzag(g.tournament));
        for n in [g.round, g.group, g.slot, g.attempt] {
            put_varint(&mut out, u64::from(n));
        }
        match &r.outcome {
            Outcome::Played(record) => {
                out.push(0);
                out.extend_from_slice(&record.seed.to_le_bytes());
                put_varint(&mut out, record.points[0]);
                put_varint(&mut out, record.points[1]);
                put_varint(&mut out, THROWS_FORMAT as u64);
                put_bytes(&mut out, &encode_throws(&record.throws));
                if record.failures.is_empty() {
                    put_varint(&mut out, 0);
                } else {
                    let json = serde_json::to_vec(&record.failures).expect("failures serialize");
                    put_bytes(&mut out, &json);
                }
            }
            other => {
                out.push(1);
                let json = serde_json::to_vec(other).expect("an outcome serializes");
                put_bytes(&mut out, &json);
            }
        }
    }
    out
}

/// Reads a binary answer (`bytes` start with [`MAGIC`]). Whatever the
/// bytes, an error, never a panic, and never more games than a job has.
pub fn decode(bytes: &[u8]) -> Result<ResultMessage, WireError> {
    let mut r = Reader {
        bytes,
        at: MAGIC.len(),
    };
    let format = r.varint()?;
    if format != u64::from(FORMAT) {
        return Err(WireError::Format(u32::try_from(format).unwrap_or(u32::MAX)));
    }
    let session = r.text()?.to_string();
    let job = r.text()?.to_string();
    let worker = r.text()?.to_string();
    let n = r.varint()?;
    if n > MAX_GAMES_PER_JOB as u64 {
        return Err(WireError::Invalid(format!("{n} games in one answer")));
    }
    let mut results = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let tournament = unzigzag(r.varint()?);
        let mut ns = [0u32; 4];
        for x in &mut ns {
            *x = u32::try_from(r.varint()?).map_err(|_| unreadable("a game's number"))?;
        }
        let game = GameIdent {
            tournament,
            round: ns[0],
            group: ns[1],
            slot: ns[2],
            attempt: ns[3],
        };
        let outcome = match r.byte()? {
            0 => {
                let seed = u64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"));
                let points = [r.varint()?, r.varint()?];
                let format =
                    i64::try_from(r.varint()?).map_err(|_| unreadable("throws' format"))?;
                let throws = decode_throws(r.bytes()?, format)
                    .map_err(|e| WireError::Unreadable(format!("throws: {e}")))?;
                let failures = match r.bytes()? {
                    [] => Vec::new(),
                    json => serde_json::from_slice::<Vec<Failure>>(json)
                        .map_err(|e| WireError::Unreadable(format!("failures: {e}")))?,
                };
                Outcome::Played(GameRecord {
                    seed,
                    points,
                    throws,
                    failures,
                })
            }
            1 => serde_json::from_slice(r.bytes()?)
                .map_err(|e| WireError::Unreadable(format!("an outcome: {e}")))?,
            k => return Err(unreadable(&format!("an outcome of kind {k}"))),
        };
        results.push(GameResult { game, outcome });
    }
    if r.at != bytes.len() {
        return Err(unreadable("bytes after the last game"));
    }
    Ok(ResultMessage {
        format: FORMAT,
        session,
        job,
        worker,
        results,
    })
}

fn unreadable(what: &str) -> WireError {
    WireError::Unreadable(format!("binary message: {what}"))
}

pub(super) fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

pub(super) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Reads the frame front to back; every read checks the bytes are there.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn byte(&mut self) -> Result<u8, WireError> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| unreadable("cut short"))?;
        self.at += 1;
        Ok(b)
    }

    pub(super) fn varint(&mut self) -> Result<u64, WireError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(unreadable("a number too long"))
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| unreadable("cut short"))?;
        let b = &self.bytes[self.at..end];
        self.at = end;
        Ok(b)
    }

    pub(super) fn bytes(&mut self) -> Result<&'a [u8], WireError> {
        let n = usize::try_from(self.varint()?).map_err(|_| unreadable("a length"))?;
        self.take(n)
    }

    pub(super) fn text(&mut self) -> Result<&'a str, WireError> {
        std::str::from_utf8(self.bytes()?).map_err(|_| unreadable("a text not in UTF-8"))
    }
}
