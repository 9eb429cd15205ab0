//! The referee: games between compiled strategies.
//!
//! Every hostile strategy of `tests/data/strategies/hostile/` plays against
//! `constant.c`, once as P and once as Q. The failure must be the hostile
//! one's, name the rule or limit it broke, at the throw its file comment
//! says, in a sentence starting `throw N:`; the game stops there; and no
//! process of either strategy is left running afterwards.

use std::time::Duration;

use knobeln::game::knobeln::{Params, RuleBreak};
use knobeln::referee::{Failure, FailureKind, RefereeConfig};
use knobeln::sandbox::player::{PlayerLimits, PlayerProcess, Start};

use crate::common::{
    compile_file, compile_unchecked, config, example_path, hostile_path, leftover_processes, play,
    processes_of, strategy_path,
};

/// Short games and a CPU limit of 1 s. The wall-clock limit is generous so
/// that, on a loaded machine, a CPU-bound strategy meets its CPU limit first;
/// games end at the first failure anyway.
fn quick() -> RefereeConfig {
    config(20, 1, Duration::from_secs(30))
}

/// Hostile strategies the compile service refuses (inline assembly, or an
/// image that cannot start): built without its checks, for the walls behind.
const UNCHECKED: &[&str] = &[
    "blocking",
    "garbage",
    "jump_runtime",
    "open_asm",
    "fork_asm",
    "execve_asm",
    "huge_static",
];

/// Plays `name` against constant.c as P and as Q and checks the failure.
fn hostile_game(
    name: &str,
    cfg: RefereeConfig,
    throw: u32,
    kind_ok: impl Fn(&FailureKind) -> bool,
    words: &[&str],
) {
    // Some hostile strategies test the walls behind the compile checks (the
    // runtime's lock-down, the kernel's limits) with what those checks
    // refuse (inline assembly, a program too large to start): they are
    // built without the checks.
    let bad = if UNCHECKED.contains(&name) {
        compile_unchecked(&hostile_path(name))
    } else {
        compile_file(&hostile_path(name))
    };
    let good = compile_file(&strategy_path("constant"));
    for hostile in [0usize, 1] {
        let (p, q) = if hostile == 0 {
            (&bad, &good)
        } else {
            (&good, &bad)
        };
        let rec = play(&cfg, p, q, 1);
        let ctx = format!("{name} as player {hostile}: {rec:#?}");
        assert_eq!(rec.failures.len(), 1, "exactly one failure: {ctx}");
        let f = &rec.failures[0];
        assert_eq!(f.player, hostile, "the hostile strategy is at fault: {ctx}");
        assert!(rec.failed(hostile) && !rec.failed(1 - hostile), "{ctx}");
        assert_eq!(f.throw, throw, "failure at the wrong throw: {ctx}");
        assert!(kind_ok(&f.kind), "wrong rule or limit: {ctx}");
        let prefix = format!("throw {throw}: ");
        assert!(
            f.reason.starts_with(&prefix),
            "reason must start with {prefix:?}: {ctx}"
        );
        for w in words {
            assert!(f.reason.contains(w), "reason must mention {w:?}: {ctx}");
        }
        // The game stopped at the failure; the throws before it are kept.
        assert_eq!(rec.throws.len() as u32, throw - 1, "{ctx}");
        assert!(rec.throws.iter().all(|t| t[1 - hostile] == 100), "{ctx}");
        assert_eq!(leftover_processes(&bad), Vec::<String>::new(), "{ctx}");
        assert_eq!(leftover_processes(&good), Vec::<String>::new(), "{ctx}");
    }
}

fn segfault(k: &FailureKind) -> bool {
    *k == FailureKind::Crashed {
        signal: libc::SIGSEGV,
    }
}

fn forbidden(k: &FailureKind) -> bool {
    *k == FailureKind::ForbiddenCall
}

const SEGFAULT_WORDS: &[&str] = &["segmentation fault", "1024 kB"];
const FORBIDDEN_WORDS: &[&str] = &["system call other than read, write or exit"];

#[test]
fn endless_loop_runs_out_of_cpu_time_at_throw_3() {
    hostile_game(
        "endless_loop",
        quick(),
        3,
        |k| *k == FailureKind::CpuTime { limit_secs: 1 },
        &["1 s of CPU time", "requirement 6"],
    );
}

#[test]
fn memory_hog_crashes_on_the_memory_limit_before_its_first_throw() {
    hostile_game("memory_hog", quick(), 1, segfault, SEGFAULT_WORDS);
}

#[test]
fn deep_recursion_crashes_on_the_memory_limit_at_throw_3() {
    hostile_game("deep_recursion", quick(), 3, segfault, SEGFAULT_WORDS);
}

/// The kernel refuses a 4 MB image under a 1024 kB address space, today by
/// killing it during exec (SIGSEGV, no throw at all). Either way the
/// participant must read: throw 1, and the memory limit.
#[test]
fn huge_static_fails_at_throw_1_naming_the_memory_limit() {
    hostile_game(
        "huge_static",
        quick(),
        1,
        |k| segfault(k) || *k == FailureKind::Memory { limit_kb: 1024 },
        &["1024 kB"],
    );
}

#[test]
fn out_of_range_breaks_rule_1_at_throw_10() {
    hostile_game(
        "out_of_range",
        quick(),
        10,
        |k| {
            *k == FailureKind::Rule(RuleBreak::OutOfRange {
                thrown: 20000,
                a: 1,
                b: 12288,
            })
        },
        &["threw 20000", "1..12288", "rule 1"],
    );
}

#[test]
fn run_rule_breaks_rule_6_at_throw_4() {
    hostile_game(
        "run_rule",
        quick(),
        4,
        |k| {
            *k == FailureKind::Rule(RuleBreak::SeriesTooShort {
                thrown: 50,
                previous: 100,
                series_len: 3,
                k: 8,
            })
        },
        &["threw 50 after 100", "at least 8", "rule 6"],
    );
}

#[test]
fn crash_is_a_segmentation_fault_at_throw_5() {
    hostile_game("crash", quick(), 5, segfault, &["segmentation fault"]);
}

#[test]
fn early_exit_ends_before_the_game_is_over_at_throw_11() {
    hostile_game(
        "early_exit",
        quick(),
        11,
        |k| *k == FailureKind::Exited { status: 0 },
        &["before the game was over", "20 throws"],
    );
}

#[test]
fn garbage_output_is_quoted_at_throw_3() {
    hostile_game(
        "garbage",
        quick(),
        3,
        |k| {
            *k == FailureKind::Output {
                line: "hello".into(),
            }
        },
        &["printed \"hello\"", "make_throw()"],
    );
}

#[test]
fn blocking_hits_the_wall_clock_at_throw_3() {
    // It blocks without using CPU: only the wall clock can end it.
    hostile_game(
        "blocking",
        config(20, 1, Duration::from_secs(2)),
        3,
        |k| *k == FailureKind::WallClock { limit_ms: 2000 },
        &["wall-clock limit of 2 s"],
    );
}

#[test]
fn open_through_assembly_is_a_forbidden_call_at_throw_2() {
    hostile_game("open_asm", quick(), 2, forbidden, FORBIDDEN_WORDS);
}

#[test]
fn fork_through_assembly_is_a_forbidden_call_at_throw_2() {
    hostile_game("fork_asm", quick(), 2, forbidden, FORBIDDEN_WORDS);
}

#[test]
fn execve_through_assembly_is_a_forbidden_call_at_throw_2() {
    hostile_game("execve_asm", quick(), 2, forbidden, FORBIDDEN_WORDS);
}

#[test]
fn jumping_into_the_runtime_is_a_forbidden_call_at_throw_2() {
    hostile_game("jump_runtime", quick(), 2, forbidden, FORBIDDEN_WORDS);
}

/// The leftover check must be able to see a live strategy, or the
/// "nothing left running" assertions above prove nothing.
#[test]
fn leftover_check_sees_a_running_strategy() {
    let s = compile_file(&strategy_path("constant"));
    assert!(processes_of(&s).is_empty());
    // Started as the referee starts it: it throws once, then waits for the
    // opponent.
    let mut child = PlayerProcess::spawn(&s.exe, Start::Game { seed: 1 }, &PlayerLimits::default())
        .expect("start the strategy");
    let found = processes_of(&s);
    let pid = child.pid();
    child.finish().expect("kill and reap our own child");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with(&format!("{pid}: ")), "{found:?}");
    assert_eq!(leftover_processes(&s), Vec::<String>::new());
}

/// The announcement's example may start a series with 0 (next_random(0,
/// MAXNUM)), which is outside 1..12288; otherwise it keeps every rule.
#[test]
fn example_plays_full_games_or_fails_only_by_throwing_0() {
    let example = compile_file(&example_path());
    let constant = compile_file(&strategy_path("constant"));
    let cfg = config(1000, 2, Duration::from_secs(30));
    let mut full_games = 0;
    for seed in 1..=4 {
        for ex in [0usize, 1] {
            let (p, q) = if ex == 0 {
                (&example, &constant)
            } else {
                (&constant, &example)
            };
            let rec = play(&cfg, p, q, seed);
            let ctx = format!("seed {seed}, example as player {ex}: {:?}", rec.failures);
            match rec.failures.as_slice() {
                [] => {
                    assert_eq!(rec.throws.len(), 1000, "{ctx}");
                    full_games += 1;
                }
                [f] => {
                    assert_eq!(f.player, ex, "{ctx}");
                    assert_eq!(
                        f.kind,
                        FailureKind::Rule(RuleBreak::OutOfRange {
                            thrown: 0,
                            a: 1,
                            b: 12288
                        }),
                        "{ctx}"
                    );
                    assert_eq!(f.throw as usize, rec.throws.len() + 1, "{ctx}");
                }
                _ => panic!("more than one failure: {ctx}"),
            }
        }
    }
    assert!(
        full_games > 0,
        "no game of the example went the full 1000 throws"
    );
    assert!(leftover_processes(&example).is_empty());
}

#[test]
fn the_same_seed_replays_the_same_game_and_other_seeds_differ() {
    let example = compile_file(&example_path());
    let cfg = config(300, 2, Duration::from_secs(30));
    let (p, q) = (&example, &example);
    let first = play(&cfg, p, q, 42);
    let again = play(&cfg, p, q, 42);
    assert_eq!(
        first, again,
        "the same seed must give the same game, bit for bit"
    );
    assert!(first.throws.len() > 10, "{:?}", first.failures);
    let other = play(&cfg, p, q, 43);
    assert_ne!(
        first.throws, other.throws,
        "another seed must give another game"
    );
    assert_eq!(other.seed, 43);
    // P and Q draw from different seeds: two copies of a random strategy
    // do not throw alike.
    assert!(first.throws.iter().any(|t| t[0] != t[1]));
}

#[test]
fn points_are_the_rules_applied_to_the_recorded_throws() {
    // `play` checks every game against game::knobeln::replay; here a game in
    // which both sides score, so that the check means something.
    let example = compile_file(&example_path());
    let cfg = config(1000, 2, Duration::from_secs(30));
    let rec = play(&cfg, &example, &example, 7);
    assert!(rec.points[0] > 0 && rec.points[1] > 0, "{:?}", rec.points);
}

#[test]
fn both_players_failing_in_the_same_throw_gives_two_failures() {
    let s = compile_file(&hostile_path("out_of_range"));
    let rec = play(&quick(), &s, &s, 1);
    assert_eq!(rec.failures.len(), 2, "{rec:#?}");
    let mut players: Vec<usize> = rec.failures.iter().map(|f| f.player).collect();
    players.sort();
    assert_eq!(players, vec![0, 1]);
    for f in &rec.failures {
        assert_eq!(f.throw, 10, "{f:?}");
        assert!(matches!(
            f.kind,
            FailureKind::Rule(RuleBreak::OutOfRange { thrown: 20000, .. })
        ));
        assert!(f.reason.starts_with("throw 10: "), "{f:?}");
    }
    assert_eq!(rec.throws.len(), 9);
    assert!(leftover_processes(&s).is_empty());
}

fn with_params(params: Params) -> RefereeConfig {
    RefereeConfig { params, ..quick() }
}

#[test]
fn custom_number_of_throws_is_honoured() {
    let c = compile_file(&strategy_path("constant"));
    let rec = play(
        &with_params(Params {
            l: 7,
            ..Params::default()
        }),
        &c,
        &c,
        1,
    );
    assert!(rec.failures.is_empty(), "{rec:?}");
    assert_eq!(rec.throws, vec![[100, 100]; 7]);
    assert_eq!(rec.points, [0, 0]);
}

#[test]
fn custom_series_length_is_honoured() {
    let run_rule = compile_file(&hostile_path("run_rule"));
    let c = compile_file(&strategy_path("constant"));
    // k = 3: 100, 100, 100 is long enough, so 50 may follow.
    let k3 = with_params(Params {
        k: 3,
        l: 30,
        ..Params::default()
    });
    let rec = play(&k3, &run_rule, &c, 1);
    assert!(rec.failures.is_empty(), "{rec:?}");
    assert_eq!(rec.throws.len(), 30);
    assert_eq!(rec.throws[3], [50, 100]);
    // Throws 4..=30: 50 against 100; 100 is not more than twice 50, so the
    // higher number wins: Q, floor(log2 100) = 6 points, 27 times.
    assert_eq!(rec.points, [0, 27 * 6]);
    // k = 4: too short.
    let k4 = with_params(Params {
        k: 4,
        ..Params::default()
    });
    let rec = play(&k4, &run_rule, &c, 1);
    assert_eq!(rec.failures.len(), 1, "{rec:?}");
    assert_eq!(rec.failures[0].throw, 4);
    assert_eq!(
        rec.failures[0].kind,
        FailureKind::Rule(RuleBreak::SeriesTooShort {
            thrown: 50,
            previous: 100,
            series_len: 3,
            k: 4
        })
    );
    assert!(rec.failures[0].reason.contains("at least 4 long"));
}

#[test]
fn custom_range_is_honoured() {
    let out_of_range = compile_file(&hostile_path("out_of_range"));
    let c = compile_file(&strategy_path("constant"));
    // b = 20000: the 20000 of throw 10 is allowed.
    let wide = with_params(Params {
        b: 20000,
        l: 15,
        ..Params::default()
    });
    let rec = play(&wide, &out_of_range, &c, 1);
    assert!(rec.failures.is_empty(), "{rec:?}");
    assert_eq!(rec.throws[9], [20000, 100]);
    // 20000 > 2 * 100: Q wins with floor(log2 100) = 6, six times.
    assert_eq!(rec.points, [0, 36]);
    // a = 101: constant's 100 is too low, for both players, at throw 1.
    let high = with_params(Params {
        a: 101,
        ..Params::default()
    });
    let rec = play(&high, &c, &c, 1);
    assert_eq!(rec.failures.len(), 2, "{rec:?}");
    for f in &rec.failures {
        assert_eq!(f.throw, 1);
        assert_eq!(
            f.kind,
            FailureKind::Rule(RuleBreak::OutOfRange {
                thrown: 100,
                a: 101,
                b: 12288
            })
        );
        assert!(f.reason.contains("101..12288"), "{}", f.reason);
    }
    assert!(rec.throws.is_empty());
}

/// A failure goes into stored records and JSON output: it must keep the
/// throw number in which it happened, also for rule breaks (whose own data
/// has the thrown number).
#[test]
fn a_failure_keeps_its_throw_number_through_json() {
    let s = compile_file(&hostile_path("out_of_range"));
    let c = compile_file(&strategy_path("constant"));
    let rec = play(&quick(), &s, &c, 1);
    let failure = &rec.failures[0];
    assert_eq!(failure.throw, 10);
    let value = serde_json::to_value(failure).expect("a failure serializes");
    assert_eq!(
        value["throw"], 10,
        "the JSON of a failure at throw 10 says {value}"
    );
    let back: Result<Failure, _> = serde_json::from_value(value.clone());
    assert_eq!(
        back.ok().as_ref(),
        Some(failure),
        "a failure must survive a JSON round trip: {value}"
    );
}
