//! A process-wide memo: a value computed once per key and kept for the
//! process's life, for the toolchain's answers about the programs
//! installed (what gcc's driver runs for a command, its words on a
//! signal, a clang's grounds for saving its `-E`), which do not change
//! while the server runs and cost a process to ask.
//!
//! A key's value is computed at most once at a time, outside the lock of
//! the whole memo (a caller asking for another key never waits for it):
//! callers of the same key wait for the first one's answer instead of
//! asking again. What it deliberately doesn't do: forget (no bound: its
//! keys are the server's own fixed commands and the programs installed, a
//! handful a process), or keep a failure ([`Memo::get_or_try_compute`]:
//! an error is returned to its caller and the next caller computes again).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, OnceLock};

/// Values of type `V` computed once per key `K` (see the module's
/// documentation); made in a `static`.
pub struct Memo<K, V> {
    slots: OnceLock<Mutex<HashMap<K, Slot<V>>>>,
}

/// A key's slot: empty until its value is computed; locked while it is.
type Slot<V> = Arc<Mutex<Option<V>>>;

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// An empty memo.
    pub const fn new() -> Self {
        Memo {
            slots: OnceLock::new(),
        }
    }

    /// `key`'s value: the one computed before, else `compute`'s, kept.
    pub fn get_or_compute(&self, key: K, compute: impl FnOnce() -> V) -> V {
        match self.get_or_try_compute(key, || Ok::<V, std::convert::Infallible>(compute())) {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    /// `key`'s value: the one computed before, else `compute`'s, kept
    /// where it is `Ok` (an error is not kept: the next caller computes
    /// again).
    pub fn get_or_try_compute<E>(
        &self,
        key: K,
        compute: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        let slot = {
            let mut slots = self
                .slots
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            slots.entry(key).or_default().clone()
        };
        // A caller that panicked while computing left the slot empty.
        let mut value = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = &*value {
            return Ok(v.clone());
        }
        let v = compute()?;
        *value = Some(v.clone());
        Ok(v)
    }
}

impl<K: Eq + Hash, V: Clone> Default for Memo<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A key's value is computed once, by many threads asking at once;
    /// another key has its own.
    #[test]
    fn a_keys_value_is_computed_once() {
        static MEMO: Memo<u32, String> = Memo::new();
        let computed = AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let v = MEMO.get_or_compute(1, || {
                        computed.fetch_add(1, Ordering::SeqCst);
                        std::thread::yield_now();
                        "one".to_string()
                    });
                    assert_eq!(v, "one");
                });
            }
        });
        assert_eq!(computed.load(Ordering::SeqCst), 1);
        assert_eq!(MEMO.get_or_compute(2, || "two".into()), "two");
        assert_eq!(MEMO.get_or_compute(1, || "again".into()), "one");
    }

    /// An error is returned and not kept: the next caller computes again.
    #[test]
    fn an_error_is_not_kept() {
        let memo: Memo<&str, u32> = Memo::new();
        assert_eq!(memo.get_or_try_compute("k", || Err("no")), Err("no"));
        assert_eq!(memo.get_or_try_compute("k", || Ok::<_, &str>(7)), Ok(7));
        assert_eq!(memo.get_or_try_compute("k", || Err("no")), Ok(7));
    }

    /// A computation that panicked leaves its key to the next caller.
    #[test]
    fn a_panic_while_computing_leaves_the_key_empty() {
        let memo: Memo<u8, u8> = Memo::new();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            memo.get_or_compute(0, || panic!("in compute"))
        }));
        assert!(r.is_err());
        assert_eq!(memo.get_or_compute(0, || 5), 5);
    }
}
