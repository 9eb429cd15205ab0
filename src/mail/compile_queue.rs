//! Which waiting compile requests `serve` starts next: one per team at a
//! time, teams in turn, at most a given number at once. Only teams proven
//! by their authentification string queue (a From line is a claim: turns
//! by sender let one stranger take twenty turns).
//!
//! The queue itself is the inbox (a compile request stays `new` until its
//! result commits, so it survives `kill -9` and is answered exactly once);
//! this module only chooses, from data: the waiting requests, the teams
//! whose request is running, and when each team was last served. It
//! knows no thread, store or clock.

use std::collections::HashMap;

use super::process::QueuedCompile;
use crate::tournament::TeamId;

/// The requests to start now, in order: of `waiting` (oldest first), at
/// most `free` of them, never two of one team, none of a team in
/// `running`; the teams served longest ago (`last_served`: a sequence
/// number per team, absent = never) go first, the oldest request first
/// among equals.
pub fn next_compiles(
    waiting: &[QueuedCompile],
    running: &[TeamId],
    last_served: &HashMap<TeamId, u64>,
    free: usize,
) -> Vec<i64> {
    // Each team's oldest waiting request.
    let mut firsts: Vec<&QueuedCompile> = Vec::new();
    for q in waiting {
        if running.contains(&q.team) || firsts.iter().any(|f| f.team == q.team) {
            continue;
        }
        firsts.push(q);
    }
    firsts.sort_by_key(|q| (last_served.get(&q.team).copied().unwrap_or(0), q.inbox_id));
    firsts.into_iter().take(free).map(|q| q.inbox_id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: i64, team: u32) -> QueuedCompile {
        QueuedCompile {
            inbox_id: id,
            team: TeamId(team),
        }
    }

    #[test]
    fn one_request_per_team_at_a_time_and_teams_in_turn() {
        let (a, b, c) = (1, 2, 3);
        let waiting = [q(1, a), q(2, a), q(3, a), q(4, b), q(5, c)];
        let none = HashMap::new();
        // Three teams, two slots: the oldest request of the first two.
        assert_eq!(next_compiles(&waiting, &[], &none, 2), vec![1, 4]);
        // a's request runs: b and c, never a second of a.
        assert_eq!(next_compiles(&waiting, &[TeamId(a)], &none, 5), vec![4, 5]);
        // a was just served, b and c never: they go before a's next one.
        let served: HashMap<TeamId, u64> = [(TeamId(a), 7)].into();
        assert_eq!(next_compiles(&waiting[1..], &[], &served, 1), vec![4]);
        assert_eq!(next_compiles(&waiting[1..], &[], &served, 3), vec![4, 5, 2]);
        // Nothing free, nothing started.
        assert!(next_compiles(&waiting, &[], &none, 0).is_empty());
    }
}
