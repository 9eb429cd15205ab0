//! Unit tests of `planner` (discipline/ultimatum/planner.rs), kept beside it so the
//! module itself stays a size a person can hold.

use super::*;
use crate::discipline::ultimatum::rules::sample_bots::{play, Strategy};
use crate::seed::derive;

fn teams(n: u32) -> Vec<TeamId> {
    (1..=n).map(TeamId).collect()
}

fn abc(t: TeamId) -> String {
    ["?", "A", "B", "C", "D", "E"][t.0 as usize].to_string()
}

#[test]
fn in_each_phase_a_bot_plays_at_most_once_and_every_repetition_alike() {
    for n in 1..=9u32 {
        let entries = teams(n);
        let cfg = Config { repetitions: 3 };
        let per_rep = phases_per_repetition(n as usize);
        let mut by_phase: BTreeMap<u64, Vec<[TeamId; 2]>> = BTreeMap::new();
        for m in schedule(&entries, &cfg) {
            let p = phase(n as usize, &m.key);
            assert_eq!(p / per_rep.max(1), u64::from(m.key.repetition), "n={n}");
            by_phase.entry(p).or_default().push(m.seats);
        }
        let mut opponents_by_rep: Vec<Vec<(TeamId, TeamId)>> = Vec::new();
        for (p, matches) in &by_phase {
            let mut seen = BTreeSet::new();
            for s in matches {
                assert!(seen.insert(s[0]) && seen.insert(s[1]), "n={n} phase {p}");
            }
            let rep = (p / per_rep) as usize;
            if opponents_by_rep.len() <= rep {
                opponents_by_rep.push(Vec::new());
            }
            for s in matches {
                opponents_by_rep[rep].push((s[0], s[1]));
            }
        }
        // Each ordered pair once per repetition, in the same phase order.
        let total: usize = by_phase.values().map(Vec::len).sum();
        assert_eq!(total as u32, n_slots(n as usize) * 3);
        for r in &opponents_by_rep {
            assert_eq!(r, &opponents_by_rep[0], "n={n}");
        }
        if n >= 2 {
            // Parallel: ⌊n/2⌋ matches in every phase.
            assert!(
                by_phase.values().all(|m| m.len() == n as usize / 2),
                "n={n}"
            );
        }
    }
}

#[test]
fn the_seeds_match_order_repeated_in_the_same_order() {
    let entries = teams(3);
    let order: Vec<String> = schedule(&entries, &Config { repetitions: 2 })
        .map(|m| format!("{}-{}", abc(m.seats[0]), abc(m.seats[1])))
        .collect();
    // "A-B, A-C, B-A, B-C, C-A, C-B (siehe Datei start_contest.sh)"
    let one = ["A-B", "A-C", "B-A", "B-C", "C-A", "C-B"];
    assert_eq!(order, [one, one].concat());
    let keys: Vec<MatchKey> = schedule(&entries, &Config { repetitions: 2 })
        .map(|m| m.key)
        .collect();
    assert_eq!(
        keys[7],
        MatchKey {
            repetition: 1,
            slot: 1
        }
    );
    assert_eq!(n_slots(4), 12);
    assert_eq!(n_slots(5), 20);
    assert_eq!(n_slots(1), 0);
    assert_eq!(n_slots(0), 0);
    assert_eq!(schedule(&teams(5), &Config::default()).count(), 20 * 100);
    // Every ordered pair once per repetition, never a bot against itself.
    let pairs: BTreeSet<[TeamId; 2]> = (0..n_slots(5)).map(|s| slot_seats(&teams(5), s)).collect();
    assert_eq!(pairs.len(), 20);
    assert!(pairs.iter().all(|p| p[0] != p[1]));
}

/// Splits `total` into `parts` nearly equal parts.
fn split(total: u64, parts: u64) -> Vec<u64> {
    let mut v = vec![total / parts; parts as usize];
    v[0] += total % parts;
    v
}

#[test]
fn the_seeds_example_table() {
    // Bot Plus Minus Won Draw Lost
    // 1. "simple" 6682555 4515445 2 0 2
    // 2. "more"   5631484 4344516 4 0 0
    // 3. "random" 3859961 7314039 0 0 4
    //
    // Over two repetitions, the points each bot scored against each
    // other bot (both orders together) are chosen so that the averages
    // are the seed's: simple vs more 4,990,000 : 5,010,000, simple vs
    // random 8,375,110 : 4,020,890, more vs random 6,252,968 :
    // 3,699,032; every match is split evenly over its two slots and two
    // repetitions.
    let (simple, more, random) = (TeamId(1), TeamId(2), TeamId(3));
    let entries = [simple, more, random];
    let name = |t: TeamId| ["", "simple", "more", "random"][t.0 as usize].to_string();
    let against: BTreeMap<(TeamId, TeamId), u64> = [
        ((simple, more), 4_990_000),
        ((more, simple), 5_010_000),
        ((simple, random), 8_375_110),
        ((random, simple), 4_020_890),
        ((more, random), 6_252_968),
        ((random, more), 3_699_032),
    ]
    .into();
    let config = Config { repetitions: 2 };
    let mut parts: BTreeMap<(TeamId, TeamId), Vec<u64>> =
        against.iter().map(|(&k, &v)| (k, split(v, 4))).collect();
    let played: Vec<PlayedMatch> = schedule(&entries, &config)
        .map(|m| {
            let [a, b] = m.seats;
            PlayedMatch {
                key: m.key,
                points: [
                    parts.get_mut(&(a, b)).unwrap().pop().unwrap(),
                    parts.get_mut(&(b, a)).unwrap().pop().unwrap(),
                ],
                forfeited_by: None,
            }
        })
        .collect();
    let t = table(&entries, &config, &played, &name).unwrap();
    let rows: Vec<(u32, &str, u64, u64, u32, u32, u32)> = t
        .rows
        .iter()
        .map(|r| {
            (
                r.place,
                r.name.as_str(),
                r.plus,
                r.minus,
                r.won,
                r.drawn,
                r.lost,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (1, "simple", 6682555, 4515445, 2, 0, 2),
            (2, "more", 5631484, 4344516, 4, 0, 0),
            (3, "random", 3859961, 7314039, 0, 0, 4),
        ]
    );
    assert_eq!(t.rows[0].plus_total, 2 * 6682555);
    assert_eq!(t.repetitions, 2);
}

/// Plays a whole tournament of sample bots (seeded per match and seat).
fn play_tournament(bots: &[Strategy], rounds: u32, config: &Config) -> Table {
    let entries = teams(bots.len() as u32);
    let strategy = |t: TeamId| bots[t.0 as usize - 1];
    let played: Vec<PlayedMatch> = schedule(&entries, config)
        .map(|m| {
            let seed = |seat| derive(42, &[m.key.repetition as u64, m.key.slot as u64, seat]);
            let o = play(
                rounds,
                [strategy(m.seats[0]), strategy(m.seats[1])],
                [seed(0), seed(1)],
            );
            PlayedMatch {
                key: m.key,
                points: o.scored(),
                forfeited_by: o.forfeited_by,
            }
        })
        .collect();
    table(&entries, config, &played, &|t| strategy(t).name().into()).unwrap()
}

#[test]
fn the_seeds_dummy_bots_reproduce_its_won_draw_lost() {
    let t = play_tournament(
        &[Strategy::Simple, Strategy::More, Strategy::Random],
        2500,
        &Config { repetitions: 2 },
    );
    let rows: Vec<(&str, u32, u32, u32)> = t
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.won, r.drawn, r.lost))
        .collect();
    assert_eq!(
        rows,
        [("simple", 2, 0, 2), ("more", 4, 0, 0), ("random", 0, 0, 4)]
    );
    // Our reading of the unpublished `simple` and `random` comes within
    // 2 % of the seed's Plus and Minus (6,724,589 for simple's Plus
    // with these seeds, against the seed's 6,682,555).
    let seed_table = [(6682555, 4515445), (5631484, 4344516), (3859961, 7314039)];
    for (row, (plus, minus)) in t.rows.iter().zip(seed_table) {
        let near = |x: u64, y: u64| x.abs_diff(y) * 50 < y;
        assert!(near(row.plus, plus), "{}: Plus {}", row.name, row.plus);
        assert!(near(row.minus, minus), "{}: Minus {}", row.name, row.minus);
    }
    // Plus of all = Minus of all: every point is someone's Minus.
    let plus: u64 = t.rows.iter().map(|r| r.plus_total).sum();
    let minus: u64 = t.rows.iter().map(|r| r.minus_total).sum();
    assert_eq!(plus, minus);
}

#[test]
fn more_wins_every_slot_with_semirandom_in_the_field() {
    let t = play_tournament(
        &[
            Strategy::Simple,
            Strategy::More,
            Strategy::Random,
            Strategy::SemiRandom,
        ],
        500,
        &Config { repetitions: 3 },
    );
    let more = t.rows.iter().find(|r| r.name == "more").unwrap();
    assert_eq!((more.won, more.drawn, more.lost), (6, 0, 0));
    for r in &t.rows {
        assert_eq!(r.won + r.drawn + r.lost, 6);
        assert_eq!(r.forfeits, 0);
    }
    // Deterministic: the same seeds give the same table.
    let again = play_tournament(
        &[
            Strategy::Simple,
            Strategy::More,
            Strategy::Random,
            Strategy::SemiRandom,
        ],
        500,
        &Config { repetitions: 3 },
    );
    assert_eq!(t, again);
}

fn one_repetition(entries: &[TeamId], points: &[[u64; 2]]) -> Vec<PlayedMatch> {
    schedule(entries, &Config { repetitions: 1 })
        .zip(points)
        .map(|(m, &points)| PlayedMatch {
            key: m.key,
            points,
            forfeited_by: None,
        })
        .collect()
}

fn places(t: &Table) -> Vec<(u32, &str, u64, u64)> {
    t.rows
        .iter()
        .map(|r| (r.place, r.name.as_str(), r.plus, r.minus))
        .collect()
}

#[test]
fn ranking_by_plus_then_by_the_higher_minus() {
    let entries = teams(3);
    let one = Config { repetitions: 1 };
    // Slots: A-B, A-C, B-A, B-C, C-A, C-B.
    let played = one_repetition(
        &entries,
        &[[100, 50], [100, 0], [0, 0], [100, 10], [0, 0], [0, 0]],
    );
    let t = table(&entries, &one, &played, &abc).unwrap();
    assert_eq!(
        places(&t),
        [(1, "A", 200, 50), (2, "B", 150, 110), (3, "C", 10, 200)]
    );
    // A and B both have 100 Plus; B let its opponents have more (210
    // against A's 0), so B ranks before A.
    let played = one_repetition(
        &entries,
        &[[50, 0], [50, 0], [0, 0], [50, 90], [0, 0], [70, 50]],
    );
    let t = table(&entries, &one, &played, &abc).unwrap();
    assert_eq!(
        places(&t),
        [(1, "C", 160, 150), (2, "B", 100, 210), (3, "A", 100, 0)]
    );
}

#[test]
fn equal_plus_and_minus_share_the_place_listed_by_name() {
    let entries = teams(2);
    let played = one_repetition(&entries, &[[10, 10], [5, 5]]);
    let name = |t: TeamId| ["", "zeta", "alpha"][t.0 as usize].to_string();
    let t = table(&entries, &Config { repetitions: 1 }, &played, &name).unwrap();
    assert_eq!(places(&t), [(1, "alpha", 15, 15), (1, "zeta", 15, 15)]);
    assert!(t.rows.iter().all(|r| (r.won, r.drawn, r.lost) == (0, 2, 0)));
}

#[test]
fn a_forfeit_loses_the_slot_even_with_more_points() {
    let entries = teams(2);
    let config = Config { repetitions: 2 };
    let m = |repetition, slot, points, forfeited_by| PlayedMatch {
        key: MatchKey { repetition, slot },
        points,
        forfeited_by,
    };
    let played = [
        // A-B: A broke the protocol in the first repetition.
        m(0, 0, [0, 300], Some(0)),
        m(1, 0, [2000, 100], None),
        m(0, 1, [10, 10], None),
        m(1, 1, [10, 10], None),
    ];
    let t = table(&entries, &config, &played, &abc).unwrap();
    let a = &t.rows[0];
    assert_eq!((a.name.as_str(), a.plus, a.minus), ("A", 1010, 210));
    assert_eq!((a.won, a.drawn, a.lost, a.forfeits), (0, 1, 1, 1));
    let b = &t.rows[1];
    assert_eq!((b.won, b.drawn, b.lost, b.forfeits), (1, 1, 0, 0));
}

#[test]
fn averages_round_halves_up() {
    assert_eq!(mean_rounded(5, 2), 3);
    assert_eq!(mean_rounded(4, 3), 1);
    assert_eq!(mean_rounded(5, 3), 2);
    assert_eq!(mean_rounded(668_255_500, 100), 6_682_555);
    assert_eq!(mean_rounded(u64::MAX, 1), u64::MAX);
    assert_eq!(mean_rounded(7, 0), 0);
}

#[test]
fn incomplete_or_foreign_results_are_refused() {
    let entries = teams(3);
    let config = Config { repetitions: 2 };
    let all: Vec<PlayedMatch> = schedule(&entries, &config)
        .map(|m| PlayedMatch {
            key: m.key,
            points: [1, 1],
            forfeited_by: None,
        })
        .collect();
    assert!(table(&entries, &config, &all, &abc).is_ok());
    let mut missing = all.clone();
    missing.remove(7);
    missing.remove(0);
    assert_eq!(
        table(&entries, &config, &missing, &abc),
        Err(TableError::NotFinished {
            missing: 2,
            first: MatchKey {
                repetition: 0,
                slot: 0
            }
        })
    );
    let mut twice = all.clone();
    twice.push(all[3]);
    assert_eq!(
        table(&entries, &config, &twice, &abc),
        Err(TableError::DuplicateMatch(all[3].key))
    );
    let mut foreign = all.clone();
    foreign[0].key.slot = 6;
    assert_eq!(
        table(&entries, &config, &foreign, &abc),
        Err(TableError::UnknownMatch(foreign[0].key))
    );
    let mut bad = all.clone();
    bad[0].forfeited_by = Some(2);
    assert!(matches!(
        table(&entries, &config, &bad, &abc),
        Err(TableError::BadSeat(_, 2))
    ));
    assert_eq!(
        table(&[TeamId(1), TeamId(1)], &config, &[], &abc),
        Err(TableError::DuplicateEntry(TeamId(1)))
    );
    // No bots, or one: an empty round robin, a table without matches.
    assert_eq!(table(&[], &config, &[], &abc).unwrap().rows.len(), 0);
    let alone = table(&teams(1), &config, &[], &abc).unwrap();
    assert_eq!((alone.rows[0].place, alone.rows[0].won), (1, 0));
}

/// The matches of a phase made directly are those of the whole schedule
/// in that phase, in the same order, and the phases cover the schedule.
#[test]
fn phase_matches_are_the_schedules_matches_of_that_phase() {
    for n in 1..=9u32 {
        let entries: Vec<TeamId> = (1..=n).map(TeamId).collect();
        let config = Config { repetitions: 2 };
        let all: Vec<ScheduledMatch> = schedule(&entries, &config).collect();
        let phases = 2 * phases_per_repetition(entries.len());
        let mut covered = 0;
        for p in 0..phases {
            let want: Vec<(MatchKey, [TeamId; 2])> = all
                .iter()
                .filter(|m| phase(entries.len(), &m.key) == p)
                .map(|m| (m.key, m.seats))
                .collect();
            let got: Vec<(MatchKey, [TeamId; 2])> = phase_matches(&entries, p)
                .into_iter()
                .map(|m| (m.key, m.seats))
                .collect();
            assert_eq!(got, want, "{n} entries, phase {p}");
            covered += got.len();
        }
        assert_eq!(covered, all.len(), "{n} entries");
    }
}
