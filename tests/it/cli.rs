//! The `knobeln` binary end to end: what it prints and its exit codes.

use knobeln::game::knobeln::{replay, Params, Throw};
use knobeln::toolchain::compile::EXAMPLE_C;
use serde_json::Value;

use crate::common::{example_path, knobeln, repo_path, stderr_of, stdout_of};

const VALID: &str = "tests/data/sources/valid.c";
const REJECTED: &str = "tests/data/sources/include_stdio.c";
const CONSTANT: &str = "tests/data/strategies/constant.c";
const EXAMPLE: &str = "src/runtime/example.c";
const LIMITS: &[&str] = &["--fuel", "100000000", "--wall-secs", "20"];

fn run(args: &[&str]) -> std::process::Output {
    let mut all = args.to_vec();
    if matches!(args.first(), Some(&"check") | Some(&"play")) {
        all.extend_from_slice(LIMITS);
    }
    knobeln(&all)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn throws_of(v: &Value) -> Vec<[Throw; 2]> {
    serde_json::from_value(v["throws"].clone()).expect("throws are pairs of numbers")
}

#[test]
fn lexcount_prints_exactly_the_count() {
    let out = run(&["lexcount", VALID]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out), "lexical elements: 81\n");
}

#[test]
fn lexcount_of_a_file_that_does_not_preprocess_says_why_and_exits_1() {
    let out = run(&["lexcount", REJECTED]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout_of(&out), "");
    let err = stderr_of(&out);
    assert!(err.contains("line 4") && err.contains("#include"), "{err}");
}

#[test]
fn check_accepts_a_valid_submission_with_exit_0_and_reports_the_trial_game() {
    let out = run(&["check", VALID, "--throws", "100"]);
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr_of(&out));
    assert!(text.contains("Result: ACCEPTED"), "{text}");
    assert!(text.contains("Team: team_name"), "{text}");
    assert!(
        text.contains("Lexical elements: 81 (at most 10000)"),
        "{text}"
    );
    assert!(
        text.contains("Trial game against the example strategy"),
        "{text}"
    );
    assert!(text.contains("throws played:"), "{text}");
}

#[test]
fn check_rejects_with_exit_1_and_says_what_to_fix() {
    let out = run(&["check", REJECTED]);
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr_of(&out));
    assert!(text.contains("Result: REJECTED"), "{text}");
    assert!(text.contains("line 4: #include is not allowed"), "{text}");
    assert!(
        !text.contains("Trial game"),
        "no trial game for a rejected program: {text}"
    );
}

#[test]
fn check_json_has_the_documented_keys() {
    let out = run(&["check", VALID, "--json", "--throws", "100"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v = json_of(&stdout_of(&out));
    assert_eq!(v["accepted"], true);
    assert_eq!(v["lexical_elements"], 81);
    assert_eq!(v["errors"], Value::Array(vec![]));
    assert_eq!(v["warnings"], Value::Array(vec![]));
    let trial = &v["trial_game"];
    let points = trial["points"].as_array().expect("points: [P, Q]");
    assert_eq!(points.len(), 2);
    let throws = throws_of(trial);
    assert!(trial.get("failure").is_some(), "{trial}");
    if trial["failure"].is_null() {
        assert_eq!(throws.len(), 100);
    }
    let params = Params {
        l: 100,
        ..Params::default()
    };
    let want = replay(&params, &throws).expect("the recorded throws are legal");
    assert_eq!(points[0], want[0]);
    assert_eq!(points[1], want[1]);

    let out = run(&["check", REJECTED, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&stdout_of(&out));
    assert_eq!(v["accepted"], false);
    assert!(v["trial_game"].is_null(), "{v}");
    let errors = v["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{v}");
    assert_eq!(errors[0]["check"], "single_file");
    assert_eq!(errors[0]["line"], 4);
    assert!(v["lexical_elements"].is_null(), "{v}");
}

#[test]
fn play_json_repeat_prints_one_line_per_game_with_consecutive_seeds() {
    let out = run(&[
        "play", EXAMPLE, CONSTANT, "--json", "--seed", "5", "--repeat", "3", "--throws", "100",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let params = Params {
        l: 100,
        ..Params::default()
    };
    for (i, line) in lines.iter().enumerate() {
        let v = json_of(line);
        for key in ["seed", "points", "throws", "failure"] {
            assert!(v.get(key).is_some(), "no {key:?} in {line}");
        }
        assert_eq!(v["seed"], 5 + i as u64, "{line}");
        let throws = throws_of(&v);
        let points = replay(&params, &throws).expect("legal throws");
        assert_eq!(v["points"], serde_json::json!(points), "{line}");
        if v["failure"].is_null() {
            assert_eq!(throws.len(), 100, "{line}");
        }
    }
}

#[test]
fn play_text_names_players_points_and_throws() {
    let out = run(&["play", CONSTANT, CONSTANT, "--throws", "50", "--seed", "9"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(
        stdout_of(&out),
        "game seed 9: constant 0 : 0 constant (50 throws)\n"
    );
}

/// The JSON a participant gets must say in which throw the failure was.
#[test]
fn play_json_failure_names_player_and_throw_number() {
    let out = run(&[
        "play",
        "tests/data/strategies/hostile/out_of_range.c",
        CONSTANT,
        "--json",
        "--throws",
        "20",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v = json_of(&stdout_of(&out));
    let f = &v["failure"];
    assert_eq!(f["player"], 0, "{f}");
    assert!(
        f["reason"].as_str().unwrap_or("").starts_with("throw 10: "),
        "{f}"
    );
    assert_eq!(f["throw"], 10, "the failure happened at throw 10: {f}");
}

#[test]
fn play_refuses_a_strategy_that_does_not_compile() {
    let out = run(&["play", "tests/data/sources/calls_printf.c", CONSTANT]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout_of(&out), "");
    // The report is wrapped at 72 columns, as the mail is.
    let err = stderr_of(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(err.contains("line 26: uses `printf`"), "{err}");
    assert!(err.contains("does not compile"), "{err}");
}

/// The example of the 1994 announcement, as shipped, plays a whole game
/// against itself; its only possible failure is a throw of 0.
#[test]
fn example_plays_unchanged() {
    let shipped = std::fs::read_to_string(example_path()).unwrap();
    assert_eq!(
        shipped, EXAMPLE_C,
        "the file is the example the server embeds"
    );
    assert!(repo_path(EXAMPLE).is_file());
    let out = run(&["play", EXAMPLE, EXAMPLE, "--json", "--seed", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v = json_of(&stdout_of(&out));
    let throws = throws_of(&v);
    if v["failure"].is_null() {
        assert_eq!(throws.len(), 1000);
    } else {
        let f = &v["failure"];
        assert_eq!(f["kind"], "out_of_range", "{f}");
        assert!(
            f["reason"].as_str().unwrap_or("").contains("threw 0,"),
            "{f}"
        );
    }
    assert_eq!(v["players"], serde_json::json!(["example", "example"]));
}

/// Issue 25, memory outside the jail: a page of macros that makes megabytes
/// after preprocessing is refused without being read, and one that makes
/// just under what the server reads (half a million lexical elements) is
/// counted; either way the checker itself stays under 100 MB.
#[test]
fn a_check_stays_under_100_mb_whatever_the_macros_make() {
    // The checker counts its own memory, not its starter's: this test
    // process holds 160 MB when it starts the checker (`ru_maxrss`
    // kept the starter's high-water mark across `execve` and said so).
    let ballast = std::hint::black_box(vec![1u8; 160 << 20]);
    for (file, says) in [
        (
            "tests/data/sources/macro_megabytes.c",
            "after preprocessing the program is",
        ),
        (
            "tests/data/sources/token_flood.c",
            "lexical elements after preprocessing",
        ),
    ] {
        let out = run(&["check", file, "--json"]);
        let v = json_of(&stdout_of(&out));
        assert_eq!(v["accepted"], false, "{file}");
        assert!(
            v["errors"].to_string().contains(says),
            "{file}: {}",
            v["errors"]
        );
        let peak_kb = v["peak_rss_kb"].as_i64().expect("peak_rss_kb");
        assert!(
            (1..100 * 1024).contains(&peak_kb),
            "{file}: the checker peaked at {peak_kb} KiB"
        );
    }
    drop(ballast);
}

/// The bot contest benchmark runs a contest end to end through the
/// contest run (in-process scripted players in place of the bots, the
/// results table, the site) and one real game of the C demo bot: it runs
/// to the end for every bot discipline at a small size (benchmarks assert
/// no figure, but they must run).
#[test]
fn the_bot_contest_benchmark_runs_for_every_bot_discipline() {
    for d in ["ultimatum", "flooding", "footsteps", "morabaraba"] {
        let out = run(&[
            "bench",
            "bot-contest",
            "--discipline",
            d,
            "--teams",
            "3",
            "--repetitions",
            "2",
            "--real-games",
            "1",
        ]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{d}: {text}");
        assert!(text.contains("games end to end"), "{d}: {text}");
        assert!(
            text.contains("the longest game the limits allow"),
            "{d}: {text}"
        );
    }
}

/// The bot contests' site benchmark fills a contest's store with games
/// made up from each discipline's template, as the contest run stores
/// them (many in one transaction), then writes the site: it runs to the
/// end for every bot discipline at a small size (benchmarks assert no
/// figure, but they must run).
#[test]
fn the_bot_site_benchmark_runs_for_every_bot_discipline() {
    for d in ["ultimatum", "flooding", "footsteps", "morabaraba"] {
        let out = run(&[
            "bench",
            "bot-site",
            "--discipline",
            d,
            "--teams",
            "4",
            "--repetitions",
            "2",
        ]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{d}: {text}");
        assert!(text.contains("games"), "{d}: {text}");
    }
}
