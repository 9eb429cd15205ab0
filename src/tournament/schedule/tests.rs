//! Unit tests of a group's schedule: the order of games, failures,
//! rescheduling and disqualification.

use super::*;

fn teams(n: u32) -> Vec<TeamId> {
    (1..=n).map(|k| TeamId(k * 10)).collect()
}

fn points_from_seed(seed: u64) -> [u64; 2] {
    [seed % 1000, (seed >> 20) % 1000]
}

/// Plays every game to the end, one at a time; `behave` decides outcomes.
fn run_sequential(
    s: &mut GroupSchedule,
    behave: &dyn Fn(&ScheduledGame) -> GameOutcome,
) -> Vec<(GameKey, GameOutcome)> {
    let mut log = Vec::new();
    while !s.is_finished() {
        let games = s.next_to_run(1);
        assert_eq!(
            games.len(),
            1,
            "an unfinished idle schedule always offers a game"
        );
        let o = behave(&games[0]);
        s.record(games[0].key, o.clone()).unwrap();
        log.push((games[0].key, o));
    }
    log
}

/// A simulated executor with `workers` workers whose games finish in a
/// random order (drawn from `order_seed`).
fn run_parallel(
    s: &mut GroupSchedule,
    behave: &dyn Fn(&ScheduledGame) -> GameOutcome,
    workers: usize,
    order_seed: u64,
) -> Vec<(GameKey, GameOutcome)> {
    let mut rng = SplitMix64::new(order_seed);
    let mut in_flight: Vec<ScheduledGame> = Vec::new();
    let mut log = Vec::new();
    loop {
        if !s.is_finished() {
            let free = workers - in_flight.len();
            in_flight.extend(s.next_to_run(free));
        }
        if in_flight.is_empty() {
            assert!(
                s.is_finished(),
                "nothing in flight, nothing to run, not finished"
            );
            break;
        }
        let k = rng.below(in_flight.len() as u64) as usize;
        let g = in_flight.swap_remove(k);
        let o = behave(&g);
        s.record(g.key, o.clone()).unwrap();
        log.push((g.key, o));
    }
    assert_eq!(s.in_flight(), 0);
    log
}

/// Deterministic chaos: each (team, game attempt) fails with probability
/// about 1/6, decided by the game's seed; points from the seed.
fn chaos(g: &ScheduledGame) -> GameOutcome {
    let mut o = GameOutcome::played(points_from_seed(g.seed));
    for side in 0..2 {
        let team = g.players[side];
        if derive(g.seed, &[u64::from(team.0), side as u64]).is_multiple_of(6) {
            o.failed[side] = true;
            o.reason[side] = Some(format!("team {team} broke a rule in slot {}", g.key.slot));
        }
    }
    o
}

fn status_of(s: &GroupSchedule, a: TeamId, b: TeamId) -> Vec<AttemptStatus> {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    s.attempts()
        .iter()
        .filter(|x| x.game.players == [lo, hi])
        .map(|x| x.status)
        .collect()
}

#[test]
fn every_pair_plays_once_including_self_games() {
    let s = GroupSchedule::new(1, 2, 3, &teams(6)).unwrap();
    assert_eq!(s.attempts().len(), 21);
    let mut seen = BTreeSet::new();
    let mut seeds = BTreeSet::new();
    for (slot, a) in s.attempts().iter().enumerate() {
        let g = &a.game;
        assert_eq!(
            g.key,
            GameKey {
                round: 2,
                group: 3,
                slot: slot as u32
            }
        );
        assert_eq!(g.attempt, 1);
        assert!(g.members[0] <= g.members[1]);
        assert!(g.players[0] <= g.players[1], "the lower id is P");
        assert_eq!(
            g.seed,
            derive(1, &[2, 3, g.members[0].into(), g.members[1].into(), 1])
        );
        assert!(seen.insert(g.players));
        assert!(seeds.insert(g.seed));
        assert_eq!(a.status, AttemptStatus::Pending);
    }
    assert_eq!(seen.iter().filter(|p| p[0] == p[1]).count(), 6);
    // The order is shuffled, and deterministic.
    let order: Vec<_> = s.attempts().iter().map(|a| a.game.members).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_ne!(order, sorted);
    let again = GroupSchedule::new(1, 2, 3, &teams(6)).unwrap();
    assert_eq!(again.report(), s.report());
    let mut shuffled_members = teams(6);
    shuffled_members.reverse();
    assert_eq!(
        GroupSchedule::new(1, 2, 3, &shuffled_members)
            .unwrap()
            .report(),
        s.report()
    );
}

#[test]
fn duplicate_member_is_rejected() {
    let err = GroupSchedule::new(1, 1, 0, &[TeamId(1), TeamId(2), TeamId(1)]).unwrap_err();
    assert_eq!(err, ScheduleError::DuplicateMember(TeamId(1)));
}

#[test]
fn empty_group_is_finished() {
    let mut s = GroupSchedule::new(1, 1, 0, &[]).unwrap();
    assert!(s.is_finished());
    assert!(s.next_to_run(10).is_empty());
}

#[test]
fn first_failure_reschedules_with_attempt_2_and_a_new_seed() {
    let members = teams(4);
    let (a, b) = (members[0], members[2]);
    let mut s = GroupSchedule::new(7, 1, 0, &members).unwrap();
    let n0 = s.attempts().len();
    let failed_once = std::cell::Cell::new(false);
    run_sequential(&mut s, &|g| {
        if g.players == [a, b] && !failed_once.get() {
            failed_once.set(true);
            GameOutcome::failure(Player::Q, "throw out of range")
        } else {
            GameOutcome::played([3, 4])
        }
    });
    assert_eq!(s.attempts().len(), n0 + 1);
    let tries: Vec<&Attempt> = s
        .attempts()
        .iter()
        .filter(|x| x.game.players == [a, b])
        .collect();
    assert_eq!(tries.len(), 2);
    assert_eq!(
        tries[0].status,
        AttemptStatus::Discarded {
            rescheduled_as: n0 as u32
        }
    );
    assert_eq!(tries[1].game.key.slot, n0 as u32, "appended at the end");
    assert_eq!(tries[1].game.attempt, 2);
    assert_ne!(tries[1].game.seed, tries[0].game.seed);
    let [i, j] = tries[1].game.members;
    assert_eq!(
        tries[1].game.seed,
        derive(7, &[1, 0, i.into(), j.into(), 2])
    );
    assert_eq!(tries[1].status, AttemptStatus::Counted);
    // One failure is forgiven: nobody is disqualified, every pair counts once.
    assert!(s.disqualified().is_empty());
    assert_eq!(s.failures().len(), 1);
    assert_eq!(s.failures()[0].team, b);
    assert_eq!(s.failures()[0].reason, "throw out of range");
    assert_eq!(s.counted_games().len(), 10);
}

#[test]
fn second_failure_disqualifies_and_voids_all_its_games_for_opponents_too() {
    let members = teams(6);
    let x = members[3];
    let mut s = GroupSchedule::new(11, 2, 1, &members).unwrap();
    // x fails in its 3rd and 5th game in schedule order.
    let x_slots: Vec<u32> = s
        .attempts()
        .iter()
        .filter(|a| a.game.players.contains(&x))
        .map(|a| a.game.key.slot)
        .collect();
    let (first, second) = (x_slots[2], x_slots[4]);
    run_sequential(&mut s, &|g| {
        let side = if g.players[0] == x {
            Player::P
        } else {
            Player::Q
        };
        if g.key.slot == first {
            GameOutcome::failure(side, "crashed")
        } else if g.key.slot == second {
            GameOutcome::failure(side, "timeout")
        } else {
            GameOutcome::played(points_from_seed(g.seed))
        }
    });
    assert_eq!(s.disqualified().len(), 1);
    let d = &s.disqualified()[0];
    assert_eq!(
        (d.team, d.key.slot, d.reason.as_str()),
        (x, second, "timeout")
    );
    assert_eq!(
        (d.first_key.slot, d.first_reason.as_str()),
        (first, "crashed")
    );
    assert!(s.is_disqualified(x));
    // None of x's games counts: earlier ones are void, later ones cancelled.
    for a in s.attempts().iter().filter(|a| a.game.players.contains(&x)) {
        let slot = a.game.key.slot;
        let expected = if slot == first {
            AttemptStatus::Discarded { rescheduled_as: 21 }
        } else if slot == 21 {
            // The rescheduled game came after the disqualification.
            AttemptStatus::Cancelled
        } else if slot <= second {
            // Counted until the disqualification, then void; and the
            // disqualifying game itself.
            AttemptStatus::Void
        } else {
            AttemptStatus::Cancelled
        };
        assert_eq!(a.status, expected, "slot {slot}");
        if expected == AttemptStatus::Cancelled {
            assert!(a.outcome.is_none(), "cancelled games are not played");
        }
    }
    let counted = s.counted_games();
    assert!(counted.iter().all(|g| !g.players.contains(&x)));
    // Every other pair counts exactly once: 5 teams → 15 games.
    assert_eq!(counted.len(), 15);
}

#[test]
fn cancelled_games_are_not_offered() {
    let members = teams(3);
    let x = members[0];
    let mut s = GroupSchedule::new(5, 1, 0, &members).unwrap();
    // Hand out everything at once: x's later games are already out when
    // it is disqualified, and are wasted.
    let games = s.next_to_run(100);
    assert_eq!(games.len(), 6);
    let x_games: Vec<&ScheduledGame> = games.iter().filter(|g| g.players.contains(&x)).collect();
    let fail = |g: &ScheduledGame| {
        GameOutcome::failure(
            if g.players[0] == x {
                Player::P
            } else {
                Player::Q
            },
            "bad",
        )
    };
    // Record x's first two games as failures, in reverse order.
    s.record(x_games[1].key, fail(x_games[1])).unwrap();
    s.record(x_games[0].key, fail(x_games[0])).unwrap();
    for g in &games {
        if !g.players.contains(&x) {
            s.record(g.key, GameOutcome::played([1, 1])).unwrap();
        }
    }
    // The 3rd game of x is still out; a late result is accepted and ignored.
    assert!(s.is_finished());
    assert!(s.is_disqualified(x));
    assert!(
        s.next_to_run(100).is_empty(),
        "the reschedule of x is never offered"
    );
    s.record(x_games[2].key, GameOutcome::played([9, 9]))
        .unwrap();
    assert_eq!(
        s.attempt(x_games[2].key).unwrap().status,
        AttemptStatus::Cancelled
    );
    assert_eq!(s.attempt(x_games[2].key).unwrap().outcome, None);
}

#[test]
fn both_players_failing_counts_one_failure_each() {
    let members = teams(3);
    let (a, b, c) = (members[0], members[1], members[2]);
    // Both fail for the first time: rescheduled once, one failure each.
    let mut s = GroupSchedule::new(3, 1, 0, &members).unwrap();
    let n0 = s.attempts().len() as u32;
    run_sequential(&mut s, &|g| {
        if g.players == [a, b] && g.attempt == 1 {
            GameOutcome::both_failed("p broke", "q broke")
        } else {
            GameOutcome::played([1, 2])
        }
    });
    assert_eq!(
        status_of(&s, a, b),
        [
            AttemptStatus::Discarded { rescheduled_as: n0 },
            AttemptStatus::Counted
        ]
    );
    let teams_failed: Vec<TeamId> = s.failures().iter().map(|f| f.team).collect();
    assert_eq!(teams_failed, [a, b]);
    assert!(s.disqualified().is_empty());

    // a had failed before (vs c); then a and b fail together: a is
    // disqualified, b's first failure is counted, no reschedule.
    let mut s = GroupSchedule::new(3, 1, 0, &members).unwrap();
    let ac_first = s
        .attempts()
        .iter()
        .position(|x| x.game.players == [a, c])
        .unwrap();
    let ab_first = s
        .attempts()
        .iter()
        .position(|x| x.game.players == [a, b])
        .unwrap();
    let (fail_alone, fail_together) = if ac_first < ab_first {
        ([a, c], [a, b])
    } else {
        ([a, b], [a, c])
    };
    run_sequential(&mut s, &|g| {
        if g.players == fail_alone && g.attempt == 1 {
            GameOutcome::failure(Player::P, "first")
        } else if g.players == fail_together {
            GameOutcome::both_failed("second", "other's first")
        } else {
            GameOutcome::played([1, 2])
        }
    });
    assert_eq!(s.disqualified().len(), 1);
    assert_eq!(s.disqualified()[0].team, a);
    assert_eq!(s.disqualified()[0].reason, "second");
    let other = fail_together[1];
    assert_eq!(s.failures().iter().filter(|f| f.team == other).count(), 1);
    assert!(!s.is_disqualified(other));
    assert_eq!(
        status_of(&s, fail_together[0], fail_together[1]),
        [AttemptStatus::Void]
    );
    // The other one still has its forgiven failure used up: a second one
    // would disqualify it. Here it played on; b vs c counts.
    assert_eq!(status_of(&s, b, c), [AttemptStatus::Counted]);

    // Both had failed before: both disqualified by the same game.
    let mut s = GroupSchedule::new(3, 1, 0, &members).unwrap();
    run_sequential(&mut s, &|g| {
        if g.players == [a, b] {
            GameOutcome::both_failed("a again", "b again")
        } else {
            GameOutcome::played([1, 2])
        }
    });
    let dq: BTreeSet<TeamId> = s.disqualified().iter().map(|d| d.team).collect();
    assert_eq!(dq, BTreeSet::from([a, b]));
    assert_eq!(
        status_of(&s, a, b),
        [
            AttemptStatus::Discarded { rescheduled_as: 6 },
            AttemptStatus::Void
        ]
    );
    let counted = s.counted_games();
    assert_eq!(counted.len(), 1);
    assert_eq!(counted[0].players, [c, c]);
}

#[test]
fn self_game_failure_counts_once() {
    let members = teams(2);
    let a = members[0];
    let mut s = GroupSchedule::new(9, 1, 0, &members).unwrap();
    run_sequential(&mut s, &|g| {
        if g.players == [a, a] && g.attempt == 1 {
            GameOutcome::both_failed("p side", "q side")
        } else {
            GameOutcome::played([3, 4])
        }
    });
    assert!(s.disqualified().is_empty(), "one failure, not two");
    assert_eq!(s.failures().len(), 1);
    assert_eq!(s.failures()[0].reason, "p side");
    assert_eq!(
        status_of(&s, a, a),
        [
            AttemptStatus::Discarded { rescheduled_as: 3 },
            AttemptStatus::Counted
        ]
    );
    assert_eq!(s.attempts()[3].game.attempt, 2);
}

#[test]
fn self_game_second_failure_disqualifies() {
    let members = teams(2);
    let a = members[0];
    let mut s = GroupSchedule::new(9, 1, 0, &members).unwrap();
    run_sequential(&mut s, &|g| {
        if g.players == [a, a] {
            GameOutcome::failure(Player::Q, "again")
        } else {
            GameOutcome::played([3, 4])
        }
    });
    assert!(s.is_disqualified(a));
    let counted = s.counted_games();
    assert_eq!(counted.len(), 1);
    assert_eq!(counted[0].players, [members[1], members[1]]);
}

#[test]
fn chaos_actually_exercises_failures() {
    let mut s = GroupSchedule::new(1994, 1, 0, &teams(12)).unwrap();
    run_sequential(&mut s, &chaos);
    let r = s.report();
    assert!(r.disqualified.len() >= 2, "{:?}", r.disqualified);
    assert!(r
        .attempts
        .iter()
        .any(|a| matches!(a.status, AttemptStatus::Discarded { .. })));
    assert!(r
        .attempts
        .iter()
        .any(|a| a.status == AttemptStatus::Cancelled));
    assert!(r.attempts.iter().any(|a| a.status == AttemptStatus::Void));
    assert!(r
        .attempts
        .iter()
        .any(|a| a.status == AttemptStatus::Counted));
    assert!(r.attempts.iter().all(|a| a.game.attempt <= 3));
    assert!(r.attempts.len() <= s.max_slots());
    assert!(r.finished);
}

#[test]
fn parallel_executor_gives_the_sequential_result() {
    for tseed in [1994u64, 1, 2, 3] {
        let members = teams(12);
        let mut seq = GroupSchedule::new(tseed, 1, 0, &members).unwrap();
        run_sequential(&mut seq, &chaos);
        let expected = seq.report();
        for (workers, order_seed) in [(2, 1), (2, 2), (3, 3), (8, 4), (100, 5)] {
            let mut par = GroupSchedule::new(tseed, 1, 0, &members).unwrap();
            let log = run_parallel(&mut par, &chaos, workers, order_seed);
            assert_eq!(par.report(), expected, "seed {tseed}, {workers} workers");
            assert_eq!(par.counted_games(), seq.counted_games());
            // Resume: the recorded outcomes (wasted ones included),
            // shuffled, rebuild the same state.
            let mut shuffled = log.clone();
            SplitMix64::new(order_seed + 100).shuffle(&mut shuffled);
            let replayed = GroupSchedule::replay(tseed, 1, 0, &members, shuffled).unwrap();
            assert_eq!(replayed.report(), expected);
        }
    }
}

#[test]
fn killed_mid_round_resumes_from_recorded_outcomes() {
    let members = teams(10);
    let mut full = GroupSchedule::new(77, 3, 2, &members).unwrap();
    let log = run_parallel(&mut full, &chaos, 4, 9);
    let expected = full.report();
    for cut in [0, 1, log.len() / 3, log.len() / 2, log.len() - 1] {
        // The first `cut` results reached the database, in arbitrary order.
        let mut stored: Vec<_> = log[..cut].to_vec();
        SplitMix64::new(cut as u64).shuffle(&mut stored);
        let mut resumed = GroupSchedule::replay(77, 3, 2, &members, stored).unwrap();
        assert_eq!(resumed.in_flight(), 0);
        run_parallel(&mut resumed, &chaos, 3, cut as u64);
        assert_eq!(resumed.report(), expected, "cut at {cut}");
    }
}

#[test]
fn record_rejects_foreign_and_duplicate_results() {
    let mut s = GroupSchedule::new(1, 4, 2, &teams(3)).unwrap();
    let g = s.next_to_run(1).remove(0);
    let wrong = GameKey { group: 3, ..g.key };
    assert!(matches!(
        s.record(wrong, GameOutcome::default()),
        Err(ScheduleError::WrongGroup { .. })
    ));
    let far = GameKey { slot: 9, ..g.key };
    assert_eq!(
        s.record(far, GameOutcome::default()),
        Err(ScheduleError::SlotOutOfRange(far))
    );
    s.record(g.key, GameOutcome::played([1, 2])).unwrap();
    assert_eq!(
        s.record(g.key, GameOutcome::played([1, 2])),
        Err(ScheduleError::AlreadyRecorded(g.key))
    );
    // A slot that may exist later (a reschedule) is buffered; if the
    // round finishes without it, it is reported as stray.
    let later = GameKey { slot: 7, ..g.key };
    s.record(later, GameOutcome::played([1, 2])).unwrap();
    while !s.is_finished() {
        let g = s.next_to_run(1).remove(0);
        s.record(g.key, GameOutcome::played([1, 1])).unwrap();
    }
    assert_eq!(s.stray_records(), vec![later]);
}

#[test]
fn requeue_offers_a_game_again() {
    let mut s = GroupSchedule::new(1, 1, 0, &teams(3)).unwrap();
    let first = s.next_to_run(2);
    assert_eq!(first.len(), 2);
    assert_eq!(s.in_flight(), 2);
    s.requeue(first[1].key).unwrap();
    let again = s.next_to_run(1);
    assert_eq!(again, vec![first[1].clone()]);
    assert_eq!(
        s.requeue(GameKey {
            slot: 5,
            ..first[0].key
        }),
        Err(ScheduleError::NotHandedOut(GameKey {
            slot: 5,
            ..first[0].key
        }))
    );
}

#[test]
fn report_serializes() {
    let mut s = GroupSchedule::new(1, 1, 0, &teams(3)).unwrap();
    run_sequential(&mut s, &chaos);
    let json = serde_json::to_value(s.report()).unwrap();
    assert!(json["attempts"][0]["status"]["kind"].is_string());
    let back: GroupReport = serde_json::from_value(json).unwrap();
    assert_eq!(back, s.report());
}

/// What a walk of every slot from `applied` on hands out (the form
/// `next_to_run` had before its cursor), without handing it out.
fn walked_from_applied(s: &GroupSchedule, limit: usize) -> Vec<GameKey> {
    (s.applied..s.attempts.len())
        .filter(|&slot| {
            let slot32 = slot as u32;
            let [i, j] = s.attempts[slot].game.members;
            !s.handed_out.contains(&slot32)
                && !s.recorded.contains_key(&slot32)
                && !s.is_disqualified[i as usize]
                && !s.is_disqualified[j as usize]
        })
        .take(limit)
        .map(|slot| s.attempts[slot].game.key)
        .collect()
}

/// `next_to_run` looks on from a cursor and offers given-back games first;
/// it hands out exactly the games, in exactly the order, that a walk of
/// every slot from the first unapplied one would: with failures,
/// rescheduled games, disqualifications, games given back and outcomes in
/// any order, at every step of many random runs.
#[test]
fn the_cursor_hands_out_what_a_walk_from_the_first_unapplied_slot_would() {
    for run in 0..200u64 {
        let mut s = GroupSchedule::new(run, 1, 1, &teams(2 + (run % 9) as u32)).unwrap();
        let mut rng = SplitMix64::new(run ^ 0x5eed);
        let mut in_flight: Vec<ScheduledGame> = Vec::new();
        let mut steps = 0;
        while !s.is_finished() || !in_flight.is_empty() {
            steps += 1;
            assert!(steps < 100_000, "run {run} does not end");
            let limit = 1 + rng.below(5) as usize;
            let walked = walked_from_applied(&s, limit);
            let offered: Vec<GameKey> = s.next_to_run(limit).iter().map(|g| g.key).collect();
            assert_eq!(offered, walked, "run {run}, step {steps}");
            in_flight.extend(
                offered
                    .iter()
                    .map(|k| s.attempts[k.slot as usize].game.clone()),
            );
            if in_flight.is_empty() {
                continue;
            }
            let k = rng.below(in_flight.len() as u64) as usize;
            let g = in_flight.swap_remove(k);
            // A game cancelled meanwhile (a disqualification applied) is
            // no longer handed out: it cannot be given back, only recorded.
            if rng.below(4) == 0 && s.handed_out.contains(&g.key.slot) {
                s.requeue(g.key).unwrap();
            } else {
                s.record(g.key, chaos(&g)).unwrap();
            }
        }
    }
}
