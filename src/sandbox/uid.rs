//! Uids of their own, outside any namespace, for what the server confines
//! when it runs as root: a running bot ([`super::bot`]) and a compile jail
//! ([`super::jail`]) each take a slot and run under its uid, so that the
//! kernel's per-user counts (`RLIMIT_NPROC` above all: it counts the
//! processes of a uid in a user namespace) count exactly that bot's or
//! that jail's processes, never those of another one or of `nobody`.
//!
//! A uid is `UID_BASE + 256 · block + slot`: 256 slots per server, shared
//! by bots and jails, given back when their holder is dropped; the block
//! drawn at random once per server. Nothing here is used when the server
//! is not root (then every run has a user namespace of its own, which the
//! kernel counts apart).

use std::sync::{Mutex, OnceLock};

/// First uid of the range bots and jails get when the server runs as
/// root. No distribution hands out uids there.
pub const UID_BASE: u32 = 0x1000_0000;

/// Bots and jails one server runs at once (uid slots).
pub const SLOTS: usize = 256;

static SLOTS_TAKEN: Mutex<[bool; SLOTS]> = Mutex::new([false; SLOTS]);

/// A uid slot, given back on drop.
#[derive(Debug)]
pub(crate) struct UidSlot(usize);

impl UidSlot {
    /// A free slot, or `None` when all [`SLOTS`] are taken.
    pub(crate) fn take() -> Option<UidSlot> {
        let mut taken = SLOTS_TAKEN.lock().unwrap_or_else(|e| e.into_inner());
        let i = taken.iter().position(|t| !t)?;
        taken[i] = true;
        Some(UidSlot(i))
    }

    /// `UID_BASE + 256 · block + slot`, with a block drawn at random once
    /// per server: a bot sees its uid outside in its `uid_map`, and a block
    /// derived from the server's pid would tell it that pid. Two servers
    /// share a block with a chance of one in four million.
    pub(crate) fn uid(&self) -> u32 {
        static BLOCK: OnceLock<u32> = OnceLock::new();
        let block = *BLOCK.get_or_init(|| {
            let mut b = [0u8; 4];
            getrandom::fill(&mut b).map_or(std::process::id(), |()| u32::from_le_bytes(b))
                % 0x40_0000
        });
        UID_BASE + block * SLOTS as u32 + self.0 as u32
    }
}

impl Drop for UidSlot {
    fn drop(&mut self) {
        let mut taken = SLOTS_TAKEN.lock().unwrap_or_else(|e| e.into_inner());
        taken[self.0] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_held_at_once_have_different_uids_of_one_block() {
        let a = UidSlot::take().unwrap();
        let b = UidSlot::take().unwrap();
        assert_ne!(a.uid(), b.uid());
        let block = |s: &UidSlot| (s.uid() - UID_BASE) / SLOTS as u32;
        assert!(a.uid() >= UID_BASE && b.uid() >= UID_BASE);
        assert_eq!(block(&a), block(&b));
    }
}
