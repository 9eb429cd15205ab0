//! A game's throws as the store keeps them: the format numbers, the
//! compact encoding of format 1 and the digest of format 2, and reading the
//! older formats 0 and 1 back; a finished game as it goes to the store
//! ([`NewGame`]: its throws encoded).
//!
//! Not here: the games table itself (`mod.rs`) or replaying a game of
//! format 2 (`crate::engine::replay`).

use std::collections::HashMap;

use super::error::{Result, StoreError};
use crate::referee::GameRecord;
use crate::tournament::{ScheduledGame, TeamId};

/// The stored format of a game's throws (column `throws_format`): 0, i32
/// little-endian pairs; 1, [`encode_throws`]; 2, [`THROWS_REPLAY`].
pub const THROWS_FORMAT: i64 = 1;

/// Format 2: the throws are not stored; the column holds their
/// [`throws_digest`], and the game is replayed from its programs, seed and
/// the tournament's key when its throws are wanted
/// ([`crate::engine::replay`]), then checked against the digest.
pub const THROWS_REPLAY: i64 = 2;

/// The first 16 bytes of the SHA-256 of the throws' format-1 encoding.
pub fn throws_digest(throws: &[[i64; 2]]) -> [u8; 16] {
    encoded_digest(&encode_throws(throws))
}

/// [`throws_digest`] of throws already encoded ([`encode_throws`]).
pub(super) fn encoded_digest(encoded: &[u8]) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(encoded);
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}

/// A game's throws as the store writes them: their format-1 encoding
/// ([`encode_throws`]) and its [`encoded_digest`], made together (the
/// digest is always of these bytes). A pool makes them on the thread that
/// played the game, where its throws are still in the cache, so the
/// server's thread only writes them ([`crate::engine::pool::Done`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedThrows {
    bytes: Vec<u8>,
    digest: [u8; 16],
}

impl EncodedThrows {
    /// Encodes `throws` and takes the digest of the encoding.
    pub fn of(throws: &[[i64; 2]]) -> EncodedThrows {
        let bytes = encode_throws(throws);
        let digest = encoded_digest(&bytes);
        EncodedThrows { bytes, digest }
    }

    /// The digest of [`Self::bytes`] (what a game stored for replay keeps).
    pub fn digest(&self) -> [u8; 16] {
        self.digest
    }

    /// The throws in format 1.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes and their digest, taken apart.
    pub(super) fn into_parts(self) -> (Vec<u8>, [u8; 16]) {
        (self.bytes, self.digest)
    }
}

/// A finished game for [`super::Store::insert_games_at`]: its scheduled
/// game, its record, its throws encoded ([`EncodedThrows::of`] the record's throws:
/// the engine's pool encodes them on the game's thread) and its time in
/// the games' form (`store::game_time`).
pub struct NewGame<'a> {
    pub game: &'a ScheduledGame,
    pub record: &'a GameRecord,
    pub encoded: EncodedThrows,
    pub finished_at: i64,
}

/// A group's kept games by `(slot, attempt)`.
type GroupThrows = HashMap<(u32, u32), KeptGame>;

/// A game this connection stored (its row was inserted, not ignored), as
/// it stored it: its throws' encoding (format 1) and its digest (taken
/// when the game was stored), its players and its record without throws.
/// What the DGP protocols of its group are written from without reading
/// the group's rows back ([`super::Store::with_kept_games_packed`]).
#[derive(Debug)]
pub(super) struct KeptGame {
    pub(super) digest: [u8; 16],
    pub(super) encoded: Vec<u8>,
    pub(super) players: [TeamId; 2],
    /// Its seed, points and failures (`throws` empty: they are `encoded`).
    pub(super) record: GameRecord,
}

/// The games this connection stored lately (their rows inserted by it),
/// with their throws (format 1, as [`encode_throws`] gives them), each
/// group's kept until another group finishes after it: the readers of a
/// group that just finished take them from here instead of playing the
/// games again: the site's game pages checked against the stored digest,
/// the DGP protocols without reading the group's rows back at all
/// ([`super::Store::with_kept_games_packed`]). Memory: the groups being played
/// and the last one finished.
#[derive(Debug, Default)]
pub(super) struct RecentThrows {
    /// By `(tournament, round, group)`, then `(slot, attempt)`.
    groups: HashMap<(i64, u32, u32), GroupThrows>,
    /// The group that finished last (kept until the next one finishes).
    last_finished: Option<(i64, u32, u32)>,
}

impl RecentThrows {
    /// Keeps a game as it was stored (its `encoded` throws' digest is
    /// `digest`: the caller took it from these very bytes to store it).
    pub(super) fn keep(&mut self, group: (i64, u32, u32), game: (u32, u32), kept: KeptGame) {
        self.groups.entry(group).or_default().insert(game, kept);
    }

    /// The game `game` of `group` as this connection stored it, if kept.
    pub(super) fn game(&self, group: (i64, u32, u32), game: (u32, u32)) -> Option<&KeptGame> {
        self.groups.get(&group)?.get(&game)
    }

    /// Group `group` finished: the one that finished before it is let go.
    pub(super) fn finished(&mut self, group: (i64, u32, u32)) {
        if let Some(last) = self.last_finished.replace(group) {
            if last != group {
                self.groups.remove(&last);
            }
        }
    }

    /// The throws of a game kept here whose encoding has `digest` (the
    /// stored row's): compared with the digest taken when they were kept,
    /// not hashed again. A row another record won (`INSERT OR IGNORE`: the
    /// first wins) has another digest, and its throws are not these.
    pub(super) fn throws(
        &self,
        group: (i64, u32, u32),
        game: (u32, u32),
        digest: &[u8; 16],
    ) -> Option<Vec<[i64; 2]>> {
        let kept = self.game(group, game)?;
        if &kept.digest != digest {
            return None;
        }
        decode_throws(&kept.encoded, THROWS_FORMAT).ok()
    }

    /// [`Self::throws`] in format 1's bytes, not decoded (a copy of them).
    pub(super) fn packed(
        &self,
        group: (i64, u32, u32),
        game: (u32, u32),
        digest: &[u8; 16],
    ) -> Option<Vec<u8>> {
        let kept = self.game(group, game)?;
        (&kept.digest == digest).then(|| kept.encoded.clone())
    }
}

/// Encodes the throws compactly (format 1): for each throw, each player's
/// difference to its own previous throw, zigzag-encoded as an LEB128
/// varint. Series climb in small steps, so most throws take one or two bytes.
///
/// The server's thread encodes every game it stores (for the digest), so
/// the usual case is written in blocks: [`BLOCK`] throws whose differences
/// all take one byte go out as one copy of `2 × BLOCK` bytes (differences
/// of neighbouring throws, which the compiler computes side by side); a
/// block with a larger difference is written throw by throw, as varints.
pub fn encode_throws(throws: &[[i64; 2]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(throws.len() * 2 + 16);
    let mut prev = [0i64; 2];
    let mut blocks = throws.chunks_exact(BLOCK);
    for block in &mut blocks {
        let mut bytes = [0u8; 2 * BLOCK];
        let mut all = 0u64;
        for i in 0..BLOCK {
            let before = if i == 0 { prev } else { block[i - 1] };
            let zp = zigzag(block[i][0].wrapping_sub(before[0]));
            let zq = zigzag(block[i][1].wrapping_sub(before[1]));
            all |= zp | zq;
            bytes[2 * i] = zp as u8;
            bytes[2 * i + 1] = zq as u8;
        }
        if all < 0x80 {
            out.extend_from_slice(&bytes);
        } else {
            encode_one_by_one(&mut out, prev, block);
        }
        prev = block[BLOCK - 1];
    }
    encode_one_by_one(&mut out, prev, blocks.remainder());
    out
}

/// The throws [`encode_throws`] takes together when their differences
/// are small.
const BLOCK: usize = 16;

/// [`encode_throws`] throw by throw, from `prev` (the throw before
/// `throws`), appended to `out`.
fn encode_one_by_one(out: &mut Vec<u8>, mut prev: [i64; 2], throws: &[[i64; 2]]) {
    for &[p, q] in throws {
        let zp = zigzag(p.wrapping_sub(prev[0]));
        let zq = zigzag(q.wrapping_sub(prev[1]));
        prev = [p, q];
        if (zp | zq) < 0x80 {
            out.extend_from_slice(&[zp as u8, zq as u8]);
        } else {
            put_varint(out, zp);
            put_varint(out, zq);
        }
    }
}

/// A signed number as an unsigned one for [`put_varint`], small either
/// side of zero staying small (zigzag: 0, -1, 1, -2 → 0, 1, 2, 3).
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// `v` appended to `out` as a LEB128 varint (7 bits a byte, the high bit
/// set on every byte but the last): format 1's numbers, and the queue's
/// binary answers'.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Decodes stored throws of either format; a corrupt blob is an error,
/// never a panic.
pub fn decode_throws(bytes: &[u8], format: i64) -> Result<Vec<[i64; 2]>> {
    match format {
        0 => decode_throws_v0(bytes),
        1 => decode_throws_v1(bytes),
        f => Err(StoreError::Corrupt(format!("unknown throws format {f}"))),
    }
}

/// Format 1's reader. The coordinator of a queue reads every answer's
/// throws with it (about 1000 throws a game), so the usual case is quick:
/// a difference of one byte takes one comparison, and the vector is
/// allocated once (each number takes at least a byte, so there are at
/// most half as many throws as bytes).
pub(super) fn decode_throws_v1(bytes: &[u8]) -> Result<Vec<[i64; 2]>> {
    let mut out = Vec::with_capacity(bytes.len() / 2);
    let mut prev = [0i64; 2];
    let mut i = 0usize;
    while i < bytes.len() {
        // A run of the same throw (both differences 0: two zero bytes a
        // throw, the usual case of a strategy that repeats itself) is
        // written in one step: the contest reads a just finished group's
        // throws for its DGP protocols on the server's thread.
        if bytes[i] == 0 && bytes.get(i + 1) == Some(&0) {
            let run = bytes[i..]
                .chunks_exact(2)
                .take_while(|c| c == &[0, 0])
                .count();
            out.resize(out.len() + run, prev);
            i += 2 * run;
            continue;
        }
        let (p, next) = varint_at(bytes, i)?;
        if next == bytes.len() {
            return Err(StoreError::Corrupt("throws blob with half a throw".into()));
        }
        let (q, next) = varint_at(bytes, next)?;
        i = next;
        prev[0] = prev[0].wrapping_add(p);
        prev[1] = prev[1].wrapping_add(q);
        out.push(prev);
    }
    Ok(out)
}

/// Format 1's throws as runs of the same throw, without a vector of
/// throws: how many throws there are (counted from the bytes: each number
/// ends in one byte below 0x80) and the runs in order, each a throw and
/// how many times it comes in a row. What [`crate::protocol::encode_runs`]
/// writes the contest's DGP protocols from. A corrupt blob is an error,
/// as in [`decode_throws`]: half a throw at once, the rest when its run is
/// reached.
pub fn packed_runs(bytes: &[u8]) -> Result<(usize, PackedRuns<'_>)> {
    let numbers = bytes.len() - continuation_bytes(bytes);
    if !numbers.is_multiple_of(2) || bytes.last().is_some_and(|&b| b >= 0x80) {
        return Err(StoreError::Corrupt("throws blob with half a throw".into()));
    }
    Ok((
        numbers / 2,
        PackedRuns {
            bytes,
            at: 0,
            prev: [0; 2],
        },
    ))
}

/// The runs of [`packed_runs`].
pub struct PackedRuns<'a> {
    bytes: &'a [u8],
    at: usize,
    prev: [i64; 2],
}

impl Iterator for PackedRuns<'_> {
    type Item = Result<([i64; 2], usize)>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.bytes;
        if self.at >= bytes.len() {
            return None;
        }
        // One throw (its differences to the one before), then the throws
        // that repeat it: two zero bytes each.
        let step = varint_at(bytes, self.at).and_then(|(p, next)| {
            if next == bytes.len() {
                return Err(StoreError::Corrupt("throws blob with half a throw".into()));
            }
            varint_at(bytes, next).map(|(q, next)| ([p, q], next))
        });
        let ([p, q], next) = match step {
            Ok(s) => s,
            Err(e) => {
                self.at = bytes.len();
                return Some(Err(e));
            }
        };
        self.prev = [self.prev[0].wrapping_add(p), self.prev[1].wrapping_add(q)];
        let repeats = leading_zero_bytes(&bytes[next..]) / 2;
        self.at = next + 2 * repeats;
        Some(Ok((self.prev, 1 + repeats)))
    }
}

/// How many of `bytes` have their high bit set (a number's bytes but its
/// last), eight bytes at a time: [`packed_runs`] counts a game's throws
/// from this before the DGP protocol's text is written (a byte at a time
/// it was about a third of writing the protocols).
fn continuation_bytes(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut n = 0usize;
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        n += (w & 0x8080_8080_8080_8080).count_ones() as usize;
    }
    n + words.remainder().iter().filter(|&&b| b >= 0x80).count()
}

/// How many bytes at the start of `bytes` are zero, eight at a time: a
/// run of the same throw is a pair of zero bytes per repeat (a contest's
/// strategies repeat a throw hundreds of times in a row).
fn leading_zero_bytes(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut n = 0usize;
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        if w != 0 {
            // The first byte in memory is the word's lowest.
            return n + (w.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + words.remainder().iter().take_while(|&&b| b == 0).count()
}

/// The zigzag varint at `bytes[i]` (`i` in bounds) and where the next
/// one starts.
#[inline(always)]
fn varint_at(bytes: &[u8], i: usize) -> Result<(i64, usize)> {
    let b = bytes[i];
    if b < 0x80 {
        let z = u64::from(b);
        return Ok((((z >> 1) as i64) ^ -((z & 1) as i64), i + 1));
    }
    let mut z = 0u64;
    let mut shift = 0u32;
    let mut i = i;
    loop {
        let Some(&b) = bytes.get(i) else {
            return Err(StoreError::Corrupt(
                "throws blob ends inside a number".into(),
            ));
        };
        i += 1;
        if shift >= 64 {
            return Err(StoreError::Corrupt(
                "throws blob holds an overlong number".into(),
            ));
        }
        z |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok((((z >> 1) as i64) ^ -((z & 1) as i64), i));
        }
    }
}

pub(super) fn decode_throws_v0(bytes: &[u8]) -> Result<Vec<[i64; 2]>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(StoreError::Corrupt(format!(
            "throws blob of {} bytes",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| {
            [
                i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64,
                i32::from_le_bytes([c[4], c[5], c[6], c[7]]) as i64,
            ]
        })
        .collect())
}
