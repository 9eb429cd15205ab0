//! What a game protocol is, as data: [`GameProtocol`] and its failures,
//! the format's constants, [`ProtocolError`] (why a text holds no good
//! protocol), and [`crc32`], the checksum both the encoder and the
//! decoder compute.
//!
//! Not here: the text itself (`encode.rs`, `decode.rs`, `full.rs`); the
//! format is described in `protocol.rs`.

use serde::{Deserialize, Serialize};

use crate::game::knobeln::{Params, Throw};
use crate::referee::GameRecord;

/// The version [`encode`](super::encode()) writes and
/// [`decode`](super::decode()) reads.
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
    /// The protocol of a refereed game. The record moves in: its throws
    /// and the referee's sentences become the protocol's, not copies.
    pub fn from_record(
        record: GameRecord,
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
            throws: record.throws,
            failures: record
                .failures
                .into_iter()
                .map(|f| ProtocolFailure {
                    player: f.player,
                    throw: f.throw,
                    reason: f.reason,
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

/// CRC-32 (IEEE 802.3, reflected, as zip and gzip).
///
/// Eight bytes a step with eight tables (slicing-by-8), not a bit at a
/// time: the contest checksums every game's protocol for the DGP mails on
/// the server's thread (a protocol of a real game is a few kB). The same
/// value as the bitwise definition (`crc32_bitwise` in the tests, checked on random
/// inputs of every length: `the_crc_by_tables_is_the_bitwise_crc`).
pub fn crc32(bytes: &[u8]) -> u32 {
    let t = &CRC_TABLES;
    let mut crc = 0xFFFF_FFFFu32;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let lo = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
        crc = t[7][(lo & 0xff) as usize]
            ^ t[6][((lo >> 8) & 0xff) as usize]
            ^ t[5][((lo >> 16) & 0xff) as usize]
            ^ t[4][(lo >> 24) as usize]
            ^ t[3][c[4] as usize]
            ^ t[2][c[5] as usize]
            ^ t[1][c[6] as usize]
            ^ t[0][c[7] as usize];
    }
    for &b in chunks.remainder() {
        crc = (crc >> 8) ^ t[0][((crc ^ b as u32) & 0xff) as usize];
    }
    !crc
}

/// The CRC-32 of one byte (`[0]`) and of a byte followed by `k` zero bytes
/// (`[k]`), for [`crc32`]; computed at compile time.
static CRC_TABLES: [[u32; 256]; 8] = crc_tables();

const fn crc_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut k = 1;
        while k < 8 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            k += 1;
        }
        i += 1;
    }
    t
}

/// CRC-32 by its definition, a bit at a time: what [`crc32`] must equal.
#[cfg(test)]
pub fn crc32_bitwise(bytes: &[u8]) -> u32 {
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
