//! Unit tests of `planner` (discipline/footsteps/planner.rs), kept beside it so the
//! module itself stays a size a person can hold.

use super::*;
use crate::discipline::footsteps::rules::{Game, Params};
use crate::game::lines::play_scripted;
use crate::seed::{derive, SplitMix64};

fn teams(n: u32) -> Vec<TeamId> {
    (1..=n).map(TeamId).collect()
}

fn name(t: TeamId) -> String {
    ["?", "A", "B", "C", "D", "E", "F"][t.0 as usize].to_string()
}

/// Plays every game a plan asks for with `decide(key) -> winner`, until
/// done; returns the table and every game played.
fn run(
    entries: &[TeamId],
    config: &Config,
    mut decide: impl FnMut(&ScheduledGame) -> Option<TeamId>,
) -> (Table, Vec<PlayedGame>) {
    let mut played = Vec::new();
    for _ in 0..200 {
        match plan(entries, config, &played, &name).unwrap() {
            Plan::Play { games, .. } => {
                assert!(!games.is_empty());
                for g in games {
                    played.push(PlayedGame {
                        key: g.key,
                        winner: decide(&g),
                    });
                }
            }
            Plan::Done(table) => return (table, played),
        }
    }
    panic!("the plan never finished");
}

#[test]
fn round_zero_is_every_pair_with_alternating_sides() {
    let entries = teams(3);
    let config = Config {
        games_per_pair: 4,
        max_tie_rounds: 3,
    };
    let Plan::Play { round, games } = plan(&entries, &config, &[], &name).unwrap() else {
        panic!("nothing to play")
    };
    assert_eq!(round, 0);
    assert_eq!(games.len(), 3 * 4);
    let seats: Vec<String> = games
        .iter()
        .map(|g| format!("{}{}", name(g.seats[0]), name(g.seats[1])))
        .collect();
    assert_eq!(
        seats,
        ["AB", "BA", "AB", "BA", "AC", "CA", "AC", "CA", "BC", "CB", "BC", "CB"]
    );
    // 300 games per pair by default, each side 150 times.
    let Plan::Play { games, .. } = plan(&entries, &Config::default(), &[], &name).unwrap() else {
        panic!()
    };
    assert_eq!(games.len(), 900);
    let a_left = games
        .iter()
        .filter(|g| g.key.pair == [TeamId(1), TeamId(2)] && g.seats[0] == TeamId(1))
        .count();
    assert_eq!(a_left, 150);
    // Only the games not played yet are asked for.
    let some: Vec<PlayedGame> = games[..10]
        .iter()
        .map(|g| PlayedGame {
            key: g.key,
            winner: None,
        })
        .collect();
    let Plan::Play { games: rest, .. } = plan(&entries, &Config::default(), &some, &name).unwrap()
    else {
        panic!()
    };
    assert_eq!(rest.len(), 890);
    assert_eq!(rest[0], games[10]);
}

#[test]
fn the_table_ranks_by_games_won_with_the_seeds_percentage() {
    // A beats everybody 3:1, B beats C 2:1 with one draw.
    let entries = teams(3);
    let config = Config {
        games_per_pair: 4,
        max_tie_rounds: 3,
    };
    let (table, _) = run(&entries, &config, |g| {
        let [a, b] = g.key.pair;
        match (a.0, b.0, g.key.game) {
            (1, _, 3) => Some(b),
            (1, _, _) => Some(a),
            (2, 3, 0) => None,
            (2, 3, 1) => Some(b),
            (2, 3, _) => Some(a),
            _ => unreachable!(),
        }
    });
    let rows: Vec<(u32, &str, u32, u32, u32)> = table
        .rows
        .iter()
        .map(|r| (r.place, r.name.as_str(), r.won, r.drawn, r.lost))
        .collect();
    assert_eq!(
        rows,
        [(1, "A", 6, 0, 2), (2, "B", 3, 1, 4), (3, "C", 2, 1, 5)]
    );
    let pct: Vec<f64> = table.rows.iter().map(|r| r.percent).collect();
    assert_eq!(
        pct,
        [6.0 * 100.0 / 11.0, 3.0 * 100.0 / 11.0, 2.0 * 100.0 / 11.0]
    );
    assert_eq!(table.tie_rounds, 0);
    assert!(table.unresolved.is_empty());
    assert_eq!(
        table.pairs,
        [
            PairRow {
                round: 0,
                pair: [TeamId(1), TeamId(2)],
                wins: [3, 1],
                no_winner: 0
            },
            PairRow {
                round: 0,
                pair: [TeamId(1), TeamId(3)],
                wins: [3, 1],
                no_winner: 0
            },
            PairRow {
                round: 0,
                pair: [TeamId(2), TeamId(3)],
                wins: [2, 1],
                no_winner: 1
            },
        ]
    );
    // The seed's own figure: Fixed won 2896 of the 28232 games won.
    assert_eq!(format!("{:.3}", percent(2896, 28232)), "10.258");
}

#[test]
fn tied_bots_play_again_and_wins_accumulate_only_among_them() {
    // Round 0: A 5, B 1, C 1, D 5 wins (A and D tied, B and C tied).
    // Replays: D beats A; B and C tie again in round 1, then C wins.
    let entries = teams(4);
    let config = Config {
        games_per_pair: 2,
        max_tie_rounds: 3,
    };
    let (table, played) = run(&entries, &config, |g| {
        let [a, b] = g.key.pair;
        match (g.key.round, a.0, b.0) {
            (0, 1, 4) => Some(if g.key.game == 0 { a } else { b }),
            (0, 1, _) => Some(a),
            (0, 2, 3) => Some(if g.key.game == 0 { a } else { b }),
            (0, _, 4) => Some(b),
            (1, 1, 4) => Some(b),
            (1, 2, 3) => Some(if g.key.game == 0 { a } else { b }),
            (2, 2, 3) => Some(b),
            k => panic!("unexpected game {k:?}"),
        }
    });
    let rows: Vec<(u32, &str, u32, Vec<u32>)> = table
        .rows
        .iter()
        .map(|r| (r.place, r.name.as_str(), r.won, r.tie_wins.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            (1, "D", 5, vec![2]),
            (2, "A", 5, vec![0]),
            (3, "C", 1, vec![1, 2]),
            (4, "B", 1, vec![1, 0]),
        ]
    );
    assert_eq!(table.tie_rounds, 2);
    assert!(table.unresolved.is_empty());
    // Round 1 had both tied sets, round 2 only B and C.
    let rounds: Vec<(u32, [TeamId; 2])> = table.pairs.iter().map(|p| (p.round, p.pair)).collect();
    assert_eq!(
        rounds[6..],
        [
            (1, [TeamId(1), TeamId(4)]),
            (1, [TeamId(2), TeamId(3)]),
            (2, [TeamId(2), TeamId(3)])
        ]
    );
    assert_eq!(played.len(), 12 + 4 + 2);
}

#[test]
fn replays_never_move_a_bot_past_one_it_was_not_tied_with() {
    // Round 0: A beats B and C once each, all other games are draws:
    // A 2, B 0, C 0. B wins its replay with C 4:0, so its cumulative
    // count (4) passes A's (2); A stays first all the same.
    let entries = teams(3);
    let config = Config {
        games_per_pair: 4,
        max_tie_rounds: 3,
    };
    let (table, _) = run(&entries, &config, |g| {
        let [a, b] = g.key.pair;
        match (g.key.round, a.0, b.0) {
            (0, 1, _) => (g.key.game == 0).then_some(a),
            (0, 2, 3) => None,
            (1, 2, 3) => Some(a),
            k => panic!("unexpected game {k:?}"),
        }
    });
    let order: Vec<(u32, &str, u32, Vec<u32>)> = table
        .rows
        .iter()
        .map(|r| (r.place, r.name.as_str(), r.won, r.tie_wins.clone()))
        .collect();
    assert_eq!(
        order,
        [
            (1, "A", 2, vec![]),
            (2, "B", 0, vec![4]),
            (3, "C", 0, vec![0])
        ]
    );
}

#[test]
fn a_tie_that_persists_is_shared_after_the_cap() {
    // Everything is a draw, forever: three replays, then a shared place.
    let entries = teams(3);
    let config = Config {
        games_per_pair: 2,
        max_tie_rounds: 3,
    };
    let (table, played) = run(&entries, &config, |_| None);
    assert_eq!(table.tie_rounds, 3);
    assert_eq!(table.unresolved, vec![entries.clone()]);
    assert!(table.rows.iter().all(|r| r.place == 1));
    assert!(table.rows.iter().all(|r| r.tie_wins == [0, 0, 0]));
    assert!(table.rows.iter().all(|r| r.percent == 0.0));
    assert_eq!(played.len(), 4 * 6);
    // No replays allowed: shared at once.
    let (table, played) = run(
        &entries,
        &Config {
            games_per_pair: 2,
            max_tie_rounds: 0,
        },
        |_| None,
    );
    assert_eq!((table.tie_rounds, played.len()), (0, 6));
    assert_eq!(table.unresolved.len(), 1);
}

#[test]
fn foreign_duplicate_and_impossible_results_are_refused() {
    let entries = teams(3);
    let config = Config {
        games_per_pair: 2,
        max_tie_rounds: 1,
    };
    let key = |round, a, b, game| GameKey {
        round,
        pair: [TeamId(a), TeamId(b)],
        game,
    };
    let g = |k: GameKey, w: Option<u32>| PlayedGame {
        key: k,
        winner: w.map(TeamId),
    };
    assert_eq!(
        plan(&entries, &config, &[g(key(0, 1, 2, 0), Some(3))], &name),
        Err(PlanError::WinnerNotInPair(key(0, 1, 2, 0), TeamId(3)))
    );
    assert_eq!(
        plan(
            &entries,
            &config,
            &[g(key(0, 1, 2, 0), None), g(key(0, 1, 2, 0), Some(1))],
            &name
        ),
        Err(PlanError::DuplicateGame(key(0, 1, 2, 0)))
    );
    // Wrong pair order, game number out of range, a replay before its time.
    for k in [
        key(0, 2, 1, 0),
        key(0, 1, 2, 2),
        key(1, 1, 2, 0),
        key(0, 1, 9, 0),
    ] {
        assert_eq!(
            plan(&entries, &config, &[g(k, None)], &name),
            Err(PlanError::UnknownGame(k)),
            "{k}"
        );
    }
    // A replay that the finished round 0 did not call for.
    let (_, mut played) = run(&entries, &config, |g| Some(g.key.pair[0]));
    played.push(g(key(1, 1, 2, 0), None));
    assert_eq!(
        plan(&entries, &config, &played, &name),
        Err(PlanError::UnknownGame(key(1, 1, 2, 0)))
    );
    assert_eq!(
        plan(&[TeamId(1), TeamId(1)], &config, &[], &name),
        Err(PlanError::DuplicateEntry(TeamId(1)))
    );
    assert!(matches!(
        plan(
            &entries,
            &Config {
                games_per_pair: 0,
                max_tie_rounds: 1
            },
            &[],
            &name
        ),
        Err(PlanError::Config(_))
    ));
    // One bot or none: nothing to play.
    let Plan::Done(t) = plan(&teams(1), &config, &[], &name).unwrap() else {
        panic!()
    };
    assert_eq!((t.rows.len(), t.rows[0].place, t.rows[0].won), (1, 1, 0));
    assert!(matches!(plan(&[], &config, &[], &name), Ok(Plan::Done(_))));
}

/// A whole tournament of real games between scripted bidders: the
/// planner, the game and the seat assignment together.
#[test]
fn a_tournament_of_scripted_bots() {
    // A: always 1; B: 2 until out; C: random legal; D: all in at once.
    let entries = teams(4);
    let config = Config {
        games_per_pair: 30,
        max_tie_rounds: 2,
    };
    let bid = |team: TeamId, has: u32, rng: &mut SplitMix64| -> u32 {
        if has == 0 {
            return 0;
        }
        match team.0 {
            1 => 1,
            2 => has.min(2),
            3 => 1 + rng.below(has.min(10) as u64) as u32,
            _ => has,
        }
    };
    let (table, played) = run(&entries, &config, |g| {
        let mut game = Game::new(Params::default());
        let mut rng = SplitMix64::new(derive(7, &[g.key.round as u64, g.key.game as u64]));
        let mut purse = [50u32; 2];
        let o = play_scripted(
            &mut game,
            |seat, _| {
                let b = bid(g.seats[seat], purse[seat], &mut rng);
                purse[seat] -= b;
                b.to_string()
            },
            1000,
        )
        .unwrap();
        o.winner.map(|s| g.seats[s])
    });
    assert_eq!(played.iter().filter(|p| p.key.round == 0).count(), 6 * 30);
    let sum: f64 = table.rows.iter().map(|r| r.percent).sum();
    assert!((sum - 100.0).abs() < 1e-9);
    for r in &table.rows {
        assert_eq!(r.won + r.drawn + r.lost, 3 * 30);
    }
    // Deterministic bots playing both sides equally: A (always 1) against
    // D (all in) — D wins its first bid, then A walks home from 2 with
    // D bidding 0: A wins every game.
    let ad = table
        .pairs
        .iter()
        .find(|p| p.round == 0 && p.pair == [TeamId(1), TeamId(4)])
        .unwrap();
    assert_eq!((ad.wins, ad.no_winner), ([30, 0], 0));
    // Ranks are strictly increasing unless a tie is unresolved.
    if table.unresolved.is_empty() {
        let places: Vec<u32> = table.rows.iter().map(|r| r.place).collect();
        assert_eq!(places, [1, 2, 3, 4]);
    }
}
