//! SHA-256 in lowercase hex: the name every stored program, module and
//! source goes by (the store's keys, the module cache, the workers' object
//! store). At the bottom of the layers; it knows nothing else.

use sha2::{Digest, Sha256};

/// `bytes`' SHA-256 as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}
