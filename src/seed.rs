//! Deterministic seeds and random numbers for the pure core.
//!
//! Everything random in a contest (grouping, game seeds, rescheduling seeds)
//! derives from one tournament seed through [`derive()`]; the players' own
//! generators get seeds from a keyed pseudo-random function of the game seed
//! ([`SeedKey::player_seed`], SipHash-2-4 under a per-tournament secret key).
//! The split matters: `derive` is built from SplitMix64's mixer, which is
//! invertible, so a strategy that found its own seed in memory could compute
//! its opponent's if player seeds were derived with it. Under a secret key, a
//! player's seed tells nothing about the key, the game seed or the other
//! player's seed.
//!
//! These are fixed algorithms, written out (with reference test vectors) so
//! that a crate upgrade can never change a replayed tournament. No global
//! RNG, no clock, no OS entropy here: the contest's secret key is drawn from
//! the OS at the edge and passed in.

/// The SplitMix64 generator (Steele, Lea, Flood 2014).
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.state)
    }

    /// Uniform in `0..n` (n > 0), without modulo bias (Lemire's method with rejection).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let x = self.next_u64();
            let m = (x as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// The SplitMix64 output function: a bijective 64-bit mixer.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives a child seed from a parent seed and a path of integers, e.g.
/// `derive(tournament_seed, &[round, group, game, attempt])`. Different paths
/// give independent-looking seeds; the same path always gives the same seed.
pub fn derive(seed: u64, path: &[u64]) -> u64 {
    let mut h = mix(seed ^ 0x4B4E_4F42_454C_4E00); // "KNOBELN\0"
    for (i, &p) in path.iter().enumerate() {
        h = mix(h ^ mix(p.wrapping_add((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))));
    }
    h
}

/// SipHash-2-4 (Aumasson, Bernstein 2012) of `msg` under the 128-bit key
/// `(k0, k1)`: a keyed pseudo-random function.
pub fn siphash24(k0: u64, k1: u64, msg: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }
    let compress = |m: u64, v: &mut [u64; 4]| {
        v[3] ^= m;
        round(v);
        round(v);
        v[0] ^= m;
    };
    let mut chunks = msg.chunks_exact(8);
    for c in &mut chunks {
        compress(u64::from_le_bytes(c.try_into().expect("8 bytes")), &mut v);
    }
    let rest = chunks.remainder();
    let mut last = [0u8; 8];
    last[..rest.len()].copy_from_slice(rest);
    last[7] = msg.len() as u8;
    compress(u64::from_le_bytes(last), &mut v);
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// The secret key under which the players' seeds of a tournament are drawn.
///
/// A contest draws it from the OS and keeps it in its database (never in a
/// mail, a protocol, the results or a strategy's memory); with the tournament
/// seed it reproduces every game. Local runs (`play`, the compile service's
/// trial game, `tournament --seed` without `--secret`) use
/// [`SeedKey::public_from_seed`]: reproducible from the seed alone, and not
/// secret.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SeedKey {
    k0: u64,
    k1: u64,
}

impl std::fmt::Debug for SeedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeedKey(<secret>)")
    }
}

/// A key given as text that is not 32 hexadecimal digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a secret key is 32 hexadecimal digits (128 bits)")]
pub struct BadKey;

impl SeedKey {
    /// The key of 16 bytes (e.g. from the OS random source).
    pub fn from_bytes(bytes: [u8; 16]) -> SeedKey {
        SeedKey {
            k0: u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
            k1: u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes")),
        }
    }

    pub fn to_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.k0.to_le_bytes());
        b[8..].copy_from_slice(&self.k1.to_le_bytes());
        b
    }

    /// 32 lowercase hexadecimal digits.
    pub fn to_hex(&self) -> String {
        self.to_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn from_hex(text: &str) -> Result<SeedKey, BadKey> {
        let text = text.trim();
        if text.len() != 32 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(BadKey);
        }
        let mut bytes = [0u8; 16];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| BadKey)?;
        }
        Ok(SeedKey::from_bytes(bytes))
    }

    /// A key computed from a seed, for runs that must be reproducible from
    /// the seed alone. Anybody who knows the seed knows this key.
    pub fn public_from_seed(seed: u64) -> SeedKey {
        SeedKey {
            k0: derive(seed, &[KEY_TAG, 0]),
            k1: derive(seed, &[KEY_TAG, 1]),
        }
    }

    /// The seed of `player`'s (0 = P, 1 = Q) generator in the game with
    /// `game_seed`.
    pub fn player_seed(&self, game_seed: u64, player: usize) -> u64 {
        let mut msg = [0u8; 24];
        msg[..8].copy_from_slice(b"KNOBELN\0");
        msg[8..16].copy_from_slice(&game_seed.to_le_bytes());
        msg[16..].copy_from_slice(&(player as u64).to_le_bytes());
        siphash24(self.k0, self.k1, &msg)
    }
}

/// Path tag of the public keys ("KEY").
const KEY_TAG: u64 = 0x4B_45_59;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siphash_reference_vectors() {
        // The paper's test vectors: key 00 01 .. 0f, messages 00 01 .. (n-1).
        let key: Vec<u8> = (0u8..16).collect();
        let k0 = u64::from_le_bytes(key[..8].try_into().unwrap());
        let k1 = u64::from_le_bytes(key[8..].try_into().unwrap());
        let msg: Vec<u8> = (0u8..64).collect();
        assert_eq!(siphash24(k0, k1, &msg[..0]), 0x726f_db47_dd0e_0e31);
        assert_eq!(siphash24(k0, k1, &msg[..1]), 0x74f8_39c5_93dc_67fd);
        assert_eq!(siphash24(k0, k1, &msg[..8]), 0x93f5_f579_9a93_2462);
        assert_eq!(siphash24(k0, k1, &msg[..15]), 0xa129_ca61_49be_45e5);
    }

    #[test]
    fn player_seeds_depend_on_key_game_and_player() {
        let k = SeedKey::from_bytes([7; 16]);
        let other = SeedKey::from_bytes([8; 16]);
        assert_eq!(k.player_seed(5, 0), k.player_seed(5, 0));
        assert_ne!(k.player_seed(5, 0), k.player_seed(5, 1));
        assert_ne!(k.player_seed(5, 0), k.player_seed(6, 0));
        assert_ne!(k.player_seed(5, 0), other.player_seed(5, 0));
    }

    #[test]
    fn keys_read_back_from_hex_and_never_print() {
        let k = SeedKey::from_bytes(*b"0123456789abcdef");
        assert_eq!(SeedKey::from_hex(&k.to_hex()), Ok(k));
        assert_eq!(SeedKey::from_hex("xyz"), Err(BadKey));
        assert!(!format!("{k:?}").contains(&k.to_hex()));
    }

    #[test]
    fn splitmix_reference_values() {
        // Reference outputs of SplitMix64 seeded with 1234567.
        let mut g = SplitMix64::new(1234567);
        assert_eq!(g.next_u64(), 6457827717110365317);
        assert_eq!(g.next_u64(), 3203168211198807973);
    }

    #[test]
    fn derive_depends_on_every_part_of_the_path() {
        let a = derive(7, &[1, 2, 3]);
        assert_eq!(a, derive(7, &[1, 2, 3]));
        assert_ne!(a, derive(7, &[1, 2, 4]));
        assert_ne!(a, derive(7, &[2, 1, 3]));
        assert_ne!(a, derive(8, &[1, 2, 3]));
        assert_ne!(derive(7, &[0]), derive(7, &[0, 0]));
    }

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut g = SplitMix64::new(42);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let x = g.below(7) as usize;
            seen[x] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
