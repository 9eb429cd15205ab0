//! Authentification strings (the announcement's spelling): 128 bits from
//! the OS random source, shown to the team once, stored only salted and
//! hashed, compared in constant time; and [`SecretLookup`], how the
//! store answers whether a word is one (the masking of mails is
//! `crate::mail::secrets`). At the bottom of the layers, beside
//! `crate::hash`: the store and the mail both use it.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Alphabet of auth strings: lowercase letters and digits without the
/// easily confused ones (0/o, 1/l/i).
pub const ALPHABET: &[u8; 32] = b"abcdefghjkmnpqrstuvwxyz23456789_";

/// A new auth string: 26 characters of a 32-letter alphabet (130 bits).
pub fn new_auth_string() -> String {
    let mut b = [0u8; 26];
    getrandom::fill(&mut b).expect("OS random source");
    b.iter()
        .map(|x| ALPHABET[(x & 31) as usize] as char)
        .collect()
}

/// A new random salt.
pub fn new_salt() -> [u8; 16] {
    let mut s = [0u8; 16];
    getrandom::fill(&mut s).expect("OS random source");
    s
}

/// SHA-256(salt || auth).
pub fn hash(salt: &[u8], auth: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(salt);
    h.update(auth.as_bytes());
    h.finalize().into()
}

/// The index digest of a secret: SHA-256 of a fixed label and the secret
/// in lower case. Stored beside the salted hash and indexed, so that a word
/// of a mail is found among the stored secrets by one indexed read, at the
/// same cost whatever the number of teams. Unsalted on purpose: a secret
/// is 130 random bits, so there is no dictionary to precompute, and a
/// digest that two stores would share tells nothing either.
pub fn index(secret: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"knobeln secret index v1\0");
    h.update(secret.to_ascii_lowercase().as_bytes());
    h.finalize().into()
}

/// What the server stores of a new secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSecret {
    pub salt: [u8; 16],
    /// SHA-256(salt || secret): what `<<FROM>>` is verified against.
    pub hash: [u8; 32],
    /// [`index`]: how the secret is found in a mail.
    pub index: [u8; 32],
}

impl StoredSecret {
    pub fn of(secret: &str) -> StoredSecret {
        let salt = new_salt();
        StoredSecret {
            salt,
            hash: hash(&salt, secret),
            index: index(secret),
        }
    }
}

/// Whether `auth` matches the stored salt and hash, in constant time.
pub fn verify(salt: &[u8], stored_hash: &[u8], auth: &str) -> bool {
    let h = hash(salt, auth);
    h.ct_eq(stored_hash).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_strings_are_long_random_and_verify() {
        let a = new_auth_string();
        assert_eq!(a.len(), 26);
        assert_ne!(a, new_auth_string());
        let salt = new_salt();
        let h = hash(&salt, &a);
        assert!(verify(&salt, &h, &a));
        assert!(!verify(&salt, &h, "wrong"));
        assert!(!verify(&new_salt(), &h, &a));
    }
}

/// A stored salted hash of a secret: (salt, SHA-256(salt || secret)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownSecret {
    pub salt: Vec<u8>,
    pub hash: Vec<u8>,
}

impl KnownSecret {
    /// Whether `word` is this secret.
    pub fn matches(&self, word: &str) -> bool {
        verify(&self.salt, &self.hash, word)
    }
}

/// Where the stored secrets are looked up, one auth-shaped word of a mail
/// at a time (at most `crate::mail::secrets::MAX_WORDS` a mail). The store's answers it by
/// the secret's index digest, one indexed read whatever the number of
/// teams (`store::mail::StoredSecrets`); a list answers it by salted hash
/// (tests, and the one-time sealing of an old backlog).
pub trait SecretLookup {
    type Error;
    /// Whether `word` (lower case) is a stored secret.
    fn is_secret(&mut self, word: &str) -> Result<bool, Self::Error>;
}

impl<L: SecretLookup> SecretLookup for &mut L {
    type Error = L::Error;
    fn is_secret(&mut self, word: &str) -> Result<bool, Self::Error> {
        (**self).is_secret(word)
    }
}
