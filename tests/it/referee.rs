//! The referee: games between compiled strategies.
//!
//! Every hostile strategy of `tests/data/strategies/hostile/` that can be
//! built into a module plays against `constant.c`, once as P and once as
//! Q. The failure must be the hostile one's, name the rule or limit it
//! broke, at the throw its file comment says, in a sentence starting
//! `throw N:`; and the game stops there. The hostile strategies that need
//! x86 assembly cannot be built into a module at all (tested here too);
//! the kit's tests play them against the kit's local referee, which plays
//! programs built at home as processes.

use std::time::Duration;

use knobeln::game::knobeln::{Params, RuleBreak};
use knobeln::referee::{Failure, FailureKind, RefereeConfig};

use crate::common::{
    compile_file, compile_source, compile_unchecked, config, example_path, hostile_path, play,
    strategy_path, try_build_unchecked,
};

/// Short games and 50 million operators of fuel (a strategy that throws
/// needs about 100 per throw). The watchdog is generous: fuel runs out
/// first on any machine.
fn quick() -> RefereeConfig {
    config(20, 50_000_000, Duration::from_secs(30))
}

/// Hostile strategies the compile service refuses (an attribute it does
/// not allow; a stack frame of 4 MB): built without its checks, for the
/// walls behind.
const UNCHECKED: &[&str] = &["import_host", "memory_hog"];

/// Plays `name` against constant.c as P and as Q and checks the failure.
fn hostile_game(
    name: &str,
    cfg: RefereeConfig,
    throw: u32,
    kind_ok: impl Fn(&FailureKind) -> bool,
    words: &[&str],
) {
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
    }
}

/// A trap on memory outside the module's own: what a native program's
/// segmentation fault was, in the same words.
fn segfault(k: &FailureKind) -> bool {
    matches!(k, FailureKind::Crashed { signal, trap: Some(t) }
        if *signal == libc::SIGSEGV && t.contains("out of bounds memory access"))
}

const SEGFAULT_WORDS: &[&str] = &["crashed", "segmentation fault", "1024 kB"];

#[test]
fn endless_loop_runs_out_of_fuel_at_throw_3() {
    hostile_game(
        "endless_loop",
        quick(),
        3,
        |k| {
            *k == FailureKind::CpuTime {
                limit_secs: 0,
                fuel: Some(50_000_000),
            }
        },
        &[
            "CPU time",
            "50000000 WebAssembly operators",
            "requirement 6",
        ],
    );
}

#[test]
fn memory_hog_crashes_on_the_memory_limit_before_its_first_throw() {
    // The compile service refuses its 4 MB local array (a frame larger
    // than the stack); built without the checks, it crashes at throw 1.
    let src = std::fs::read(hostile_path("memory_hog")).unwrap();
    let outcome = knobeln::toolchain::compile::compile(
        &src,
        &knobeln::toolchain::compile::CompileConfig::local(),
    )
    .unwrap();
    assert!(
        !outcome.accepted()
            && outcome.report().errors().any(|d| d
                .message
                .starts_with("the function `hog` needs 4096 kB of stack")),
        "{:?}",
        outcome.report().diagnostics
    );
    hostile_game("memory_hog", quick(), 1, segfault, SEGFAULT_WORDS);
}

#[test]
fn deep_recursion_with_arrays_crashes_on_the_memory_limit_at_throw_3() {
    // Frames that each fit but together overflow the stack cannot be seen
    // at compile time: the trial's words say what the stack is for.
    let words = [
        SEGFAULT_WORDS,
        &["local variables beyond its 64 kB of stack"],
    ]
    .concat();
    hostile_game("deep_recursion", quick(), 3, segfault, &words);
}

/// A multiplication of a subnormal number takes an x86-64 processor a
/// microcode assist, forty ordinary operators' time: one chained between
/// throws (`subnormal_products.c`, 200,000 a throw) costs its weight in
/// fuel, [`knobeln::wasm::FLOAT_ASSIST_FUEL`], and meets the CPU limit at
/// throw 4. Failed before (red team G18): each product cost one unit, the
/// game of 20 throws ended without a failure on a fifth of the fuel, and
/// the contest's fuel took 36–47 s of CPU per player, 17–23 times what
/// the server plans for (`knobeln bench fuel`, class `subnormal *`).
#[test]
fn subnormal_products_cost_their_weight_in_fuel_at_throw_4() {
    hostile_game(
        "subnormal_products",
        quick(),
        4,
        |k| {
            *k == FailureKind::CpuTime {
                limit_secs: 0,
                fuel: Some(50_000_000),
            }
        },
        &["CPU time", "50000000 WebAssembly operators"],
    );
}

/// A 64-bit division by a number the compiler cannot see takes an x86-64
/// processor about 6 ns here (a dependent chain), five times the slowest
/// ordinary operator's: chained between throws (`divisions_by_a_variable.c`,
/// 500,000 a throw) each costs its weight,
/// [`knobeln::wasm::DIVISION_FUEL`], and meets the CPU limit at throw 11.
/// Failed before (red team G18): each cost one unit and the game of 20
/// throws ended without a failure; the contest's fuel took 5.6 s of CPU
/// per player where the server planned 2.1 (`knobeln bench fuel`, class
/// `division by var`; the class `division` divides by 3, which clang makes
/// a multiplication).
#[test]
fn divisions_by_a_variable_cost_their_weight_in_fuel_at_throw_11() {
    hostile_game(
        "divisions_by_a_variable",
        quick(),
        11,
        |k| {
            *k == FailureKind::CpuTime {
                limit_secs: 0,
                fuel: Some(50_000_000),
            }
        },
        &["CPU time", "50000000 WebAssembly operators"],
    );
}

#[test]
fn endless_recursion_exhausts_the_call_stack_at_throw_3() {
    hostile_game(
        "recursion",
        quick(),
        3,
        |k| {
            *k == FailureKind::Memory {
                limit_kb: 1024,
                call_stack_kb: Some(512),
            }
        },
        &["call stack of 512 kB", "requirement 5"],
    );
}

/// A 4 MB static array that the program uses cannot be linked into 1024
/// kB: the compile service refuses it with the figure, so it never plays.
/// (huge_static.c, which uses one element of its array, is smaller than
/// that once clang has removed what it never needs.)
#[test]
fn huge_static_is_refused_with_the_memory_it_needs() {
    let src = "static int big[1 << 20];\nmain() { int i; for (i = 0; i < (1 << 20); i += 1024) \
               big[i] = 100; for (;;) make_throw(big[make_throw(100) % 1024]); }\n";
    let outcome = compile_source(src.as_bytes(), knobeln::toolchain::compile::Profile::Local);
    assert!(!outcome.accepted());
    let errors: Vec<String> = outcome
        .report()
        .errors()
        .map(|d| d.message.clone())
        .collect();
    assert!(
        errors.iter().any(|m| m.contains("memory limit of 1024 kB")
            && m.contains("needs about 4")
            && m.contains("smaller by at least")),
        "{errors:?}"
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
fn a_wild_pointer_crashes_at_throw_5() {
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

/// Jumping into the middle of code (what jump_runtime.c does with x86
/// assembly) in pure C: a module's code is not in its memory, and a call
/// through a pointer reaches only a function of its table.
#[test]
fn calling_an_address_made_from_a_number_crashes_at_throw_2() {
    hostile_game(
        "jump_code",
        quick(),
        2,
        |k| matches!(k, FailureKind::Crashed { signal, trap: Some(_) } if *signal == libc::SIGSEGV),
        &["crashed"],
    );
}

/// A module that imports anything but the referee's two functions is no
/// strategy: the referee does not start it, and it is that player's
/// failure at throw 1, not a fault that stops the contest.
#[test]
fn a_module_importing_anything_else_is_not_started() {
    hostile_game(
        "import_host",
        quick(),
        1,
        |k| matches!(k, FailureKind::Unstartable { error } if error.contains("wasi_snapshot_preview1.proc_exit")),
        &["could not be started"],
    );
}

/// What needs x86 assembly (system calls, jumps into the runtime, output
/// that is not a throw, blocking reads) cannot even be built into a module.
#[test]
fn assembly_cannot_be_built_into_a_module() {
    for name in [
        "open_asm",
        "fork_asm",
        "execve_asm",
        "jump_runtime",
        "garbage",
        "blocking",
        "fd_reader",
    ] {
        let src = std::fs::read(hostile_path(name)).unwrap();
        let built = try_build_unchecked(&src);
        assert!(built.is_err(), "{name} was built into a module");
    }
}

/// Nothing of a game survives it: far more games in a row than the
/// engine's pool has instances all play (an instance a game kept would
/// exhaust the pool).
#[test]
fn nothing_survives_a_game() {
    let c = compile_file(&strategy_path("constant"));
    let cfg = config(3, 1_000_000, Duration::from_secs(10));
    for seed in 0..(knobeln::wasm::POOL_INSTANCES as u64) {
        let rec = play(&cfg, &c, &c, seed);
        assert!(rec.failures.is_empty(), "game {seed}: {:?}", rec.failures);
    }
}

/// What a game wrote into its strategies' memories is gone in the next:
/// each instance starts as its module's data segments and zeros, however
/// the engine's pool reset the slot it reused (in place or by the kernel).
/// The strategy writes a global and 80 kB of an array, then throws what it
/// found plus one: 601 on a fresh memory, more on a reused one.
#[test]
fn every_game_starts_with_the_memory_of_its_module() {
    const WRITER: &str = "int seen = 5;\nint page[20000];\n\
        main() {\n  int i;\n  for (i = 0; i < 20000; i++) page[i] = page[i] + 1;\n  \
        seen = seen + 1;\n  for (;;) make_throw(seen * 100 + page[19999]);\n}\n";
    let writer = match compile_source(
        WRITER.as_bytes(),
        knobeln::toolchain::compile::Profile::Local,
    ) {
        knobeln::toolchain::compile::Outcome::Accepted { binary, .. } => {
            crate::common::install(&binary)
        }
        knobeln::toolchain::compile::Outcome::Rejected { report } => {
            panic!("the writer does not compile: {report:#?}")
        }
    };
    let cfg = config(3, 10_000_000, Duration::from_secs(10));
    for seed in 0..20 {
        let rec = play(&cfg, &writer, &writer, seed);
        assert!(rec.failures.is_empty(), "game {seed}: {:?}", rec.failures);
        assert!(
            rec.throws.iter().all(|t| t == &[601, 601]),
            "game {seed} saw a memory of an earlier game: {:?}",
            rec.throws
        );
    }
}

/// Compiles `source` (local rules) into a strategy, or panics with its report.
fn strategy_of(source: &str) -> crate::common::Strategy {
    match compile_source(
        source.as_bytes(),
        knobeln::toolchain::compile::Profile::Local,
    ) {
        knobeln::toolchain::compile::Outcome::Accepted { binary, .. } => {
            crate::common::install(&binary)
        }
        knobeln::toolchain::compile::Outcome::Rejected { report } => {
            panic!("{source:?} does not compile: {report:#?}")
        }
    }
}

/// Only the rules decide a game: a game's record is the same whatever the
/// games its thread played before. A seat's `make_throw` returns the
/// opponent's throw through the thread it runs on (`wasm::seat`'s reply),
/// so here the games before are the ones that could leave one behind: a
/// seat that ends before it takes its first reply, one that breaks a rule
/// mid-game, one stopped at the game's last throw. The echo strategy
/// throws back what it was answered: a reply of another game would show in
/// its throws.
#[test]
fn a_game_is_the_same_whatever_its_thread_played_before() {
    let echo = strategy_of("main() { int r = 5; for (;;) r = make_throw(r); }\n");
    let quitter = strategy_of("main() { return 3; }\n");
    let example = compile_file(&example_path());
    let constant = compile_file(&strategy_path("constant"));
    let cfg = config(200, knobeln::referee::DEFAULT_FUEL, Duration::from_secs(30));
    let games = |before: bool| {
        std::thread::scope(|s| {
            s.spawn(|| {
                if before {
                    for seed in 0..3 {
                        play(&cfg, &constant, &quitter, seed);
                        play(&cfg, &example, &echo, seed + 100);
                        play(&cfg, &echo, &quitter, seed);
                        play(&cfg, &quitter, &example, seed);
                    }
                }
                (1..=4)
                    .flat_map(|seed| {
                        [
                            play(&cfg, &example, &echo, seed),
                            play(&cfg, &echo, &example, seed),
                        ]
                    })
                    .collect::<Vec<_>>()
            })
            .join()
            .expect("the games' thread")
        })
    };
    let alone = games(false);
    assert!(
        alone.iter().any(|r| r.throws.len() > 100),
        "some game went past a hundred throws: {alone:?}"
    );
    assert_eq!(
        games(true),
        alone,
        "a game's record changed with the games before it"
    );
}

/// The lead's store owns what answers its throws (the referee's game in
/// progress, reached without a lock a throw) and gives it back with
/// everything it kept: after the lead was stopped, after it returned
/// before its first throw, and after it trapped.
#[test]
fn the_lead_gives_back_what_answered_its_throws() {
    use knobeln::wasm::{lead, Control, Ending, GameWatch, OnThrow, SeatLimits};

    /// Answers each throw with the throw plus one, stops at the fifth.
    struct Answers {
        seen: Vec<i32>,
    }
    impl OnThrow for Answers {
        fn on_throw(&mut self, thrown: i32) -> Control {
            self.seen.push(thrown);
            if self.seen.len() == 5 {
                Control::Stop
            } else {
                Control::Reply(thrown + 1)
            }
        }
    }
    let limits = SeatLimits {
        fuel: 10_000_000,
        wall: Duration::from_secs(30),
    };
    let run = |source: &str| {
        let s = strategy_of(source);
        let module = s.loaded.as_ref().expect("playable");
        lead(
            module,
            1,
            limits,
            GameWatch::start(),
            Answers { seen: vec![] },
        )
    };
    let (ending, answers) = run("main() { int r = 5; for (;;) r = make_throw(r); }\n");
    assert_eq!(ending, Ending::Stopped);
    assert_eq!(answers.seen, [5, 6, 7, 8, 9]);
    let (ending, answers) = run("main() { return 3; }\n");
    assert_eq!(ending, Ending::Returned(3));
    assert!(answers.seen.is_empty());
    let (ending, answers) = run("main() { make_throw(7); make_throw(8); for (;;) ; }\n");
    assert!(matches!(ending, Ending::Trapped(_)), "{ending:?}");
    assert_eq!(answers.seen, [7, 8]);
}

/// The announcement's example may start a series with 0 (next_random(0,
/// MAXNUM)), which is outside 1..12288; otherwise it keeps every rule.
#[test]
fn example_plays_full_games_or_fails_only_by_throwing_0() {
    let example = compile_file(&example_path());
    let constant = compile_file(&strategy_path("constant"));
    let cfg = config(
        1000,
        knobeln::referee::DEFAULT_FUEL,
        Duration::from_secs(30),
    );
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
}

#[test]
fn the_same_seed_replays_the_same_game_and_other_seeds_differ() {
    let example = compile_file(&example_path());
    let cfg = config(300, knobeln::referee::DEFAULT_FUEL, Duration::from_secs(30));
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
    let cfg = config(
        1000,
        knobeln::referee::DEFAULT_FUEL,
        Duration::from_secs(30),
    );
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
