//! Modules cached by source: an accepted compile's outcome kept under the
//! SHA-256 of everything it depends on (the source's bytes, the compile
//! settings, the toolchain's identity: see `compile::cache_key`), so that
//! the same source compiled again with the same settings and tools gets
//! the same outcome without running the tools.
//!
//! Bounded: at most [`MAX_CACHED_BYTES`] of modules and reports (each
//! entry charged its module's bytes and its report's JSON), the oldest
//! entry dropped first. Only accepted outcomes are kept: a rejection can
//! depend on the load (a wall-clock limit), an acceptance cannot, and a
//! rejected source is rarely sent again unchanged. The caller stores a
//! report without the team's authentification string (check 1 reads it
//! again from the source on a hit), so no secret stays in the cache.
//!
//! It deliberately does not compute keys (it cannot tell what a compile
//! depends on) and keeps nothing across processes.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock};

use super::report::Outcome;

/// The bytes of modules and reports the process-wide cache keeps.
pub const MAX_CACHED_BYTES: usize = 64 << 20;

/// A compile's key: SHA-256 of its inputs.
pub type CacheKey = [u8; 32];

/// A bounded store of accepted outcomes by key, oldest dropped first.
pub struct ModuleCache {
    max_bytes: usize,
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_key: HashMap<CacheKey, (Outcome, usize)>,
    /// Keys in the order they were stored (the oldest first).
    order: VecDeque<CacheKey>,
    bytes: usize,
}

impl ModuleCache {
    /// An empty cache keeping at most `max_bytes`.
    pub fn new(max_bytes: usize) -> ModuleCache {
        ModuleCache {
            max_bytes,
            inner: Mutex::new(Entries::default()),
        }
    }

    /// The process's cache, of [`MAX_CACHED_BYTES`].
    pub fn global() -> &'static ModuleCache {
        static CACHE: OnceLock<ModuleCache> = OnceLock::new();
        CACHE.get_or_init(|| ModuleCache::new(MAX_CACHED_BYTES))
    }

    /// The stored outcome for `key`, if any.
    pub fn get(&self, key: &CacheKey) -> Option<Outcome> {
        let entries = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        entries.by_key.get(key).map(|(o, _)| o.clone())
    }

    /// Stores `outcome` under `key` if it is an acceptance that fits,
    /// dropping the oldest entries until the total fits again.
    pub fn insert(&self, key: CacheKey, outcome: &Outcome) {
        let Outcome::Accepted { binary, report } = outcome else {
            return;
        };
        let report_bytes = serde_json::to_vec(report).map_or(usize::MAX, |j| j.len());
        let bytes = binary.len().saturating_add(report_bytes);
        if bytes > self.max_bytes {
            return;
        }
        let mut e = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if e.by_key.contains_key(&key) {
            return;
        }
        while e.bytes + bytes > self.max_bytes {
            let Some(oldest) = e.order.pop_front() else {
                break;
            };
            if let Some((_, b)) = e.by_key.remove(&oldest) {
                e.bytes -= b;
            }
        }
        e.by_key.insert(key, (outcome.clone(), bytes));
        e.order.push_back(key);
        e.bytes += bytes;
    }

    /// How many outcomes are stored, and their bytes as charged.
    pub fn len_and_bytes(&self) -> (usize, usize) {
        let e = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (e.by_key.len(), e.bytes)
    }
}
