//! A kept game's moves body as the store keeps it: packed small, and read
//! back exactly. The body (the text [`super::moves_body`] writes, format
//! line included) is compressed with zlib (deflate with a checksum, the
//! pure-Rust `miniz_oxide`) behind one byte that says the packing
//! ([`PACKED_ZLIB`]), so that another packing can follow without guessing.
//! A body that packing would not make smaller (a few bids) is kept as text
//! ([`stored_moves`]), as every body was before packing.
//!
//! Measured on kept games (2026-11-29): a 2500-round ultimatum match's
//! 65–70 kB of moves become 0.25–0.35 kB between the demo bots that play a
//! fixed or reactive line and 7–9 kB between random ones (close to what a
//! random offer carries: 10 bits each); a Morabaraba game's 0.7–1 kB 0.2
//! kB. Level 6 costs about 1.7 ms of CPU per kept ultimatum match and 25
//! µs per Morabaraba game (`knobeln bench bot-contest`'s "kept games'
//! moves" line); the best level, 9, costs several times that for up to 10
//! % less.
//!
//! Reading is bounded: a body longer than [`MAX_MOVES_BYTES`] is never
//! kept (the store keeps such a game without its moves, as a cut
//! transcript), so a packed body that unpacks beyond it is damaged, and
//! the reader stops there instead of allocating what it says.
//!
//! What it deliberately does not do: parse the moves (the parent's
//! [`super::parse_moves`] reads the unpacked text) or know SQL (the
//! store's bot games hold the bytes; a row stored before packing holds the
//! text itself).

/// The first byte of a packed body: zlib follows.
pub const PACKED_ZLIB: u8 = 1;

/// The longest moves body a game keeps (bytes of text). A 2500-round
/// ultimatum match is 70 kB; a game at the transcript's cap of 200,000
/// lines, all the bots' and each a move of 40 bytes, 8 MB.
pub const MAX_MOVES_BYTES: usize = 8 << 20;

/// The compression level (miniz's default: level 9 makes an ultimatum match
/// up to 10 % smaller at several times the CPU).
const LEVEL: u8 = 6;

/// Why a packed body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnpackError {
    #[error("an empty packed body")]
    Empty,
    #[error("packing {0} is unknown to this version")]
    UnknownPacking(u8),
    #[error("it unpacks to more than {MAX_MOVES_BYTES} bytes, more than a kept game has")]
    TooLong,
    #[error("its compressed bytes are damaged ({0})")]
    Damaged(String),
    #[error("it unpacks to bytes that are no UTF-8 text")]
    NotText,
}

/// A moves body in the form the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredMoves {
    /// The text as it is: a body that packing would not make smaller (a
    /// FootSteps game of a few bids), as every body before packing.
    Text(String),
    /// Packed ([`pack_moves`]).
    Packed(Vec<u8>),
}

impl StoredMoves {
    /// Its bytes in the store.
    pub fn len(&self) -> usize {
        match self {
            StoredMoves::Text(t) => t.len(),
            StoredMoves::Packed(p) => p.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The smaller of the body and its packed form, or `None` if it is longer
/// than a kept game may be ([`MAX_MOVES_BYTES`]).
pub fn stored_moves(body: String) -> Option<StoredMoves> {
    let packed = pack_moves(&body)?;
    Some(if packed.len() < body.len() {
        StoredMoves::Packed(packed)
    } else {
        StoredMoves::Text(body)
    })
}

/// The body packed for the store, or `None` if it is longer than a kept
/// game may be ([`MAX_MOVES_BYTES`]).
pub fn pack_moves(body: &str) -> Option<Vec<u8>> {
    if body.len() > MAX_MOVES_BYTES {
        return None;
    }
    let z = miniz_oxide::deflate::compress_to_vec_zlib(body.as_bytes(), LEVEL);
    let mut packed = Vec::with_capacity(1 + z.len());
    packed.push(PACKED_ZLIB);
    packed.extend_from_slice(&z);
    Some(packed)
}

/// What `text` alone packs to for the store (the packing byte included):
/// the measure of one team's lines in a kept game (a transcript's budget,
/// `crate::store::bots::TranscriptBudget`).
pub fn packed_len(text: &str) -> usize {
    1 + miniz_oxide::deflate::compress_to_vec_zlib(text.as_bytes(), LEVEL).len()
}

/// The body a packed one holds, byte for byte; never more than
/// [`MAX_MOVES_BYTES`] allocated.
pub fn unpack_moves(packed: &[u8]) -> Result<String, UnpackError> {
    let (&tag, z) = packed.split_first().ok_or(UnpackError::Empty)?;
    if tag != PACKED_ZLIB {
        return Err(UnpackError::UnknownPacking(tag));
    }
    let bytes = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(z, MAX_MOVES_BYTES)
        .map_err(|e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => UnpackError::TooLong,
            _ => UnpackError::Damaged(e.to_string()),
        })?;
    String::from_utf8(bytes).map_err(|_| UnpackError::NotText)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_body_reads_back_byte_for_byte() {
        let body: String = (0..2500)
            .map(|k| format!("1: {}\n2: JA\r\\x00\n", (k * 37) % 1001))
            .collect();
        let body = format!("{}\n{body}= 9\n", super::super::STORED_MOVES_LINE);
        let packed = pack_moves(&body).unwrap();
        assert_eq!(packed[0], PACKED_ZLIB);
        assert!(packed.len() * 10 < body.len(), "{}", packed.len());
        assert_eq!(unpack_moves(&packed).unwrap(), body);
        assert_eq!(unpack_moves(&pack_moves("").unwrap()).unwrap(), "");
        assert_eq!(
            stored_moves(body.clone()),
            Some(StoredMoves::Packed(packed))
        );
        // A short body (a FootSteps game of a few bids) stays text: packing
        // adds 7 bytes (the packing, zlib's header and checksum).
        let short = "# knobeln moves 2\n1: 3\n2: 5\n1: 0\n".to_string();
        assert_eq!(stored_moves(short.clone()), Some(StoredMoves::Text(short)));
    }

    /// A body that would unpack beyond the longest a kept game has is an
    /// error, found without allocating it: 9 MB of one byte pack into a
    /// few kB.
    #[test]
    fn a_body_that_unpacks_beyond_the_longest_kept_game_is_refused() {
        let long = "1: 5\n".repeat(MAX_MOVES_BYTES / 5 + 1);
        assert!(pack_moves(&long).is_none(), "never kept");
        assert!(stored_moves(long.clone()).is_none());
        let mut bomb = vec![PACKED_ZLIB];
        bomb.extend(miniz_oxide::deflate::compress_to_vec_zlib(
            long.as_bytes(),
            LEVEL,
        ));
        assert!(bomb.len() < 100_000, "{}", bomb.len());
        assert_eq!(unpack_moves(&bomb), Err(UnpackError::TooLong));
        // Exactly the longest still reads.
        let longest = &long[..MAX_MOVES_BYTES];
        assert_eq!(
            unpack_moves(&pack_moves(longest).unwrap()).unwrap(),
            longest
        );
    }

    #[test]
    fn damaged_or_unknown_packings_are_errors() {
        assert_eq!(unpack_moves(&[]), Err(UnpackError::Empty));
        assert_eq!(
            unpack_moves(&[7, 1, 2]),
            Err(UnpackError::UnknownPacking(7))
        );
        let mut packed = pack_moves("# knobeln moves 2\n1: 500\n2: JA\n").unwrap();
        let n = packed.len();
        packed[n - 2] ^= 0x55; // the checksum
        assert!(matches!(
            unpack_moves(&packed),
            Err(UnpackError::Damaged(_))
        ));
        assert!(matches!(
            unpack_moves(&[PACKED_ZLIB, 0x78]),
            Err(UnpackError::Damaged(_))
        ));
        let mut not_text = vec![PACKED_ZLIB];
        not_text.extend(miniz_oxide::deflate::compress_to_vec_zlib(&[0xff, 0xfe], 6));
        assert_eq!(unpack_moves(&not_text), Err(UnpackError::NotText));
    }
}
