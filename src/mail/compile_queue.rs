//! Which waiting compile requests `serve` starts next: one per sender at a
//! time, senders in turn, at most a given number at once.
//!
//! The queue itself is the inbox (a compile request stays `new` until its
//! result commits, so it survives `kill -9` and is answered exactly once);
//! this module only chooses, from data: the waiting requests, the senders
//! whose request is running, and when each sender was last served. It
//! knows no thread, store or clock.

use std::collections::HashMap;

use super::process::QueuedCompile;

/// The requests to start now, in order: of `waiting` (oldest first), at
/// most `free` of them, never two of one sender, none of a sender in
/// `running`; the senders served longest ago (`last_served`: a sequence
/// number per sender, absent = never) go first, the oldest request first
/// among equals.
pub fn next_compiles(
    waiting: &[QueuedCompile],
    running: &[String],
    last_served: &HashMap<String, u64>,
    free: usize,
) -> Vec<i64> {
    // Each sender's oldest waiting request.
    let mut firsts: Vec<&QueuedCompile> = Vec::new();
    for q in waiting {
        if running.contains(&q.sender) || firsts.iter().any(|f| f.sender == q.sender) {
            continue;
        }
        firsts.push(q);
    }
    firsts.sort_by_key(|q| (last_served.get(&q.sender).copied().unwrap_or(0), q.inbox_id));
    firsts.into_iter().take(free).map(|q| q.inbox_id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: i64, sender: &str) -> QueuedCompile {
        QueuedCompile {
            inbox_id: id,
            sender: sender.into(),
        }
    }

    #[test]
    fn one_request_per_sender_at_a_time_and_senders_in_turn() {
        let waiting = [q(1, "a"), q(2, "a"), q(3, "a"), q(4, "b"), q(5, "c")];
        let none = HashMap::new();
        // Three senders, two slots: the oldest request of the first two.
        assert_eq!(next_compiles(&waiting, &[], &none, 2), vec![1, 4]);
        // a's request runs: b and c, never a second of a.
        assert_eq!(next_compiles(&waiting, &["a".into()], &none, 5), vec![4, 5]);
        // a was just served, b and c never: they go before a's next one.
        let served: HashMap<String, u64> = [("a".to_string(), 7)].into();
        assert_eq!(next_compiles(&waiting[1..], &[], &served, 1), vec![4]);
        assert_eq!(next_compiles(&waiting[1..], &[], &served, 3), vec![4, 5, 2]);
        // Nothing free, nothing started.
        assert!(next_compiles(&waiting, &[], &none, 0).is_empty());
    }
}
