//! The bot disciplines (issue 14): the configuration's discipline and its
//! sections, `knobeln play --discipline` end to end, and every demo bot
//! playing a legal game against every demo bot (itself included) through
//! the same code `play` uses.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use knobeln::config::Config;
use knobeln::discipline::bots::{build_bot, Built, Source};
use knobeln::discipline::play::{play, Outcome, Played, Setup, Transcript};
use knobeln::discipline::Discipline;
use knobeln::game::flooding::Island;
use knobeln::lang::build::{BotProgram, BuildLimits};
use knobeln::lang::{LanguageTable, Toolchain, Toolchains};

use knobeln::demo::bots::{demo_bots, ISLANDS};

use crate::common::{knobeln, stderr_of, stdout_of};

fn toolchains() -> &'static Toolchains {
    static T: OnceLock<Toolchains> = OnceLock::new();
    T.get_or_init(|| Toolchains::resolve(&LanguageTable::builtin()))
}

/// Builds a demo bot once.
fn demo(d: Discipline, file: &str) -> (Toolchain, BotProgram) {
    static CACHE: OnceLock<Mutex<HashMap<String, (Toolchain, BotProgram)>>> = OnceLock::new();
    let key = format!("{d}/{file}");
    let cache = CACHE.get_or_init(Default::default);
    if let Some(b) = cache.lock().unwrap().get(&key) {
        return b.clone();
    }
    let bot = demo_bots(d).iter().find(|b| b.file == file).unwrap();
    let source = Source {
        file_name: Some(bot.file),
        declared: None,
        bytes: bot.source.as_bytes(),
    };
    let built = build_bot(
        &LanguageTable::builtin(),
        toolchains(),
        source,
        &BuildLimits::default(),
    )
    .unwrap();
    let b = match built {
        Built::Ready {
            toolchain, program, ..
        } => (*toolchain, program),
        Built::Refused { why, .. } => panic!("{key} was not built: {why}"),
    };
    cache.lock().unwrap().insert(key, b.clone());
    b
}

fn play_demo(setup: &Setup, d: Discipline, files: &[&str]) -> Played {
    let bots: Vec<(Toolchain, BotProgram)> = files.iter().map(|f| demo(d, f)).collect();
    let refs: Vec<(&Toolchain, &BotProgram)> = bots.iter().map(|(t, p)| (t, p)).collect();
    let limits = Config::default();
    let limits = match d {
        Discipline::Ultimatum => limits.ultimatum.limits(),
        Discipline::Flooding => knobeln::discipline::BotLimitsConfig {
            // The 0.1 s per round of the seed, with room for a busy machine.
            reply_ms: 2000,
            ..limits.flooding.limits()
        },
        Discipline::Footsteps => limits.footsteps.limits(),
        _ => limits.morabaraba.limits(),
    };
    play(setup, &refs, limits.line_limits(), Transcript::Drop).unwrap()
}

fn files(d: Discipline) -> Vec<&'static str> {
    demo_bots(d).iter().map(|b| b.file).collect()
}

#[test]
fn every_ultimatum_demo_bot_plays_a_legal_match_against_every_other() {
    let d = Discipline::Ultimatum;
    let setup = Setup::Ultimatum(knobeln::game::ultimatum::Params { rounds: 300 });
    for a in files(d) {
        for b in files(d) {
            let p = play_demo(&setup, d, &[a, b]);
            assert!(p.failures.is_empty(), "{a} vs {b}: {:?}", p.failures);
            let Some(Outcome::Ultimatum(o)) = &p.outcome else {
                panic!("{a} vs {b}: no outcome")
            };
            assert_eq!(o.rounds_completed, 300, "{a} vs {b}");
            assert_eq!(o.forfeited_by, None);
            assert!(o.points[0] + o.points[1] <= 600_000);
        }
    }
}

#[test]
fn every_flooding_demo_bot_survives_legally_on_every_demo_island() {
    let d = Discipline::Flooding;
    for (name, text) in ISLANDS {
        let island = Island::parse(text).unwrap();
        for a in files(d) {
            let setup = Setup::Flooding {
                island: island.clone(),
                params: Default::default(),
                seed: 7,
            };
            let p = play_demo(&setup, d, &[a]);
            assert!(p.failures.is_empty(), "{a} on {name}: {:?}", p.failures);
            let Some(Outcome::Flooding(o)) = &p.outcome else {
                panic!("{a} on {name}: no outcome")
            };
            assert!(o.rounds >= 1, "{a} on {name}");
            assert!(
                !matches!(
                    o.end,
                    knobeln::game::flooding::FloodEnd::RuleBroken { .. }
                        | knobeln::game::flooding::FloodEnd::WalkedIntoWater { .. }
                ),
                "{a} on {name}: {:?}",
                o.end
            );
        }
    }
}

#[test]
fn every_footsteps_demo_bot_bids_legally_against_every_other() {
    let d = Discipline::Footsteps;
    let setup = Setup::Footsteps(Default::default());
    for a in files(d) {
        for b in files(d) {
            let p = play_demo(&setup, d, &[a, b]);
            assert!(p.failures.is_empty(), "{a} vs {b}: {:?}", p.failures);
            let Some(Outcome::Footsteps(o)) = &p.outcome else {
                panic!("{a} vs {b}: no outcome")
            };
            assert!(
                !matches!(
                    o.ending,
                    knobeln::game::footsteps::Ending::IllegalBid { .. }
                ),
                "{a} vs {b}: {:?}",
                o.ending
            );
        }
    }
    // The trivial bot against itself: both spend one point a turn, so both
    // are out of points after 50 turns with the token in the middle: a draw.
    let p = play_demo(&setup, d, &["one.c", "one.py"]);
    let Some(Outcome::Footsteps(o)) = &p.outcome else {
        panic!("no outcome")
    };
    assert_eq!((o.winner, o.turns, o.position), (None, 50, 3));
}

#[test]
fn every_morabaraba_demo_bot_moves_legally_against_every_other() {
    let d = Discipline::Morabaraba;
    for a in files(d) {
        for b in files(d) {
            let p = play_demo(&Setup::Morabaraba, d, &[a, b]);
            assert!(p.failures.is_empty(), "{a} vs {b}: {:?}", p.failures);
            let Some(Outcome::Morabaraba(o)) = &p.outcome else {
                panic!("{a} vs {b}: no outcome")
            };
            assert!(
                !matches!(
                    o.end,
                    knobeln::game::morabaraba::MorabarabaEnd::IllegalMove { .. }
                ),
                "{a} vs {b}: {:?}",
                o.end
            );
            assert!(o.turns >= 24, "{a} vs {b}: the placing phase is 24 turns");
        }
    }
    // The stronger bot beats the trivial one in both colours.
    for (seats, miller) in [(["miller.c", "first.py"], 0), (["first.c", "miller.c"], 1)] {
        let p = play_demo(&Setup::Morabaraba, d, &seats);
        let Some(Outcome::Morabaraba(o)) = &p.outcome else {
            panic!("no outcome")
        };
        assert_eq!(o.winner, Some(miller), "{seats:?}: {:?}", o.end);
    }
}

fn bot_path(d: &str, f: &str) -> String {
    format!("src/demo/bots/{d}/{f}")
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(out));
    stdout_of(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The lines a seat printed, from a `--json` transcript.
fn said_by(v: &Value, seat: u64) -> Vec<String> {
    v["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["said"] == "by_bot" && e["seat"] == seat)
        .map(|e| e["line"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn play_an_ultimatum_match_prints_points_and_with_json_every_offer_and_answer() {
    let (a, b) = (
        bot_path("ultimatum", "simple.c"),
        bot_path("ultimatum", "more.c"),
    );
    let out = knobeln(&[
        "play",
        "--discipline",
        "ultimatum",
        &a,
        &b,
        "--rounds",
        "40",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    // simple offers 500 (more refuses it), more offers 499 (simple takes it).
    assert!(text.contains("simple: 19960 points (Lost)"), "{text}");
    assert!(text.contains("more: 20040 points (Won)"), "{text}");
    let out = knobeln(&[
        "play",
        "--discipline",
        "ultimatum",
        &a,
        &b,
        "--rounds",
        "40",
        "--json",
    ]);
    let v = &json_lines(&out)[0];
    assert_eq!(v["players"], serde_json::json!(["simple", "more"]));
    assert_eq!(v["outcome"]["discipline"], "ultimatum");
    assert_eq!(v["outcome"]["points"], serde_json::json!([19960, 20040]));
    // Each round: simple offers and answers once, and so does more.
    let simple = said_by(v, 0);
    assert_eq!(simple.len(), 80);
    assert_eq!(simple.iter().filter(|l| *l == "500").count(), 40);
    assert_eq!(simple.iter().filter(|l| *l == "JA").count(), 40);
    let more = said_by(v, 1);
    assert_eq!(more.iter().filter(|l| *l == "NEIN").count(), 40);
}

#[test]
fn play_the_flooding_island_with_one_bot_on_a_given_island() {
    let out = knobeln(&[
        "play",
        "--discipline",
        "flooding",
        &bot_path("flooding", "stand.py"),
        "--island",
        "src/demo/islands/ridge.txt",
        "--seed",
        "3",
        "--json",
    ]);
    let v = &json_lines(&out)[0];
    assert_eq!(v["outcome"]["discipline"], "flooding");
    let rounds = v["outcome"]["rounds"].as_u64().unwrap();
    // The standing bot: three times GO CURRENT a round, on its start field.
    let said = said_by(v, 0);
    assert!(said.iter().all(|l| l == "GO CURRENT"));
    assert_eq!(said.len() as u64, 3 * rounds);
    assert_eq!(
        v["outcome"]["position"],
        serde_json::json!({"x": 10, "y": 4})
    );
    let first = &v["transcript"][0]["line"];
    assert_eq!(first, "GAMEBOARDSTART 20,5");
    // Two bots for a single-player game is the user's mistake, said so.
    let out = knobeln(&[
        "play",
        "--discipline",
        "flooding",
        &bot_path("flooding", "stand.py"),
        &bot_path("flooding", "stand.c"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("played by 1 bot; give 1 source file"));
}

#[test]
fn play_footsteps_and_morabaraba_with_json_every_move() {
    let out = knobeln(&[
        "play",
        "--discipline",
        "footsteps",
        &bot_path("footsteps", "steady.c"),
        &bot_path("footsteps", "one.py"),
        "--json",
    ]);
    let v = &json_lines(&out)[0];
    assert_eq!(v["outcome"]["winner"], 0);
    // steady spreads 50 points over 3 steps (16, 17, 25), one bids 1.
    assert_eq!(said_by(v, 1), ["1", "1", "1"]);
    let out = knobeln(&[
        "play",
        "--discipline",
        "morabaraba",
        &bot_path("morabaraba", "miller.c"),
        &bot_path("morabaraba", "first.py"),
        "--json",
    ]);
    let v = &json_lines(&out)[0];
    assert_eq!(
        v["outcome"]["names"],
        serde_json::json!(["miller", "firstpy"])
    );
    let turns = v["outcome"]["turns"].as_u64().unwrap();
    let moves = said_by(v, 0).len() + said_by(v, 1).len();
    assert_eq!(moves as u64, turns + 2, "every move and the two names");
    assert!(v["cpu_us"].as_array().unwrap().len() == 2);
}

#[test]
fn the_discipline_and_its_parameters_come_from_the_config_and_are_validated() {
    let cfg =
        Config::parse("[contest]\ndiscipline = \"footsteps\"\n[footsteps]\ngames_per_pair = 20\n")
            .unwrap();
    cfg.validate().unwrap();
    assert_eq!(cfg.contest.discipline, Discipline::Footsteps);
    assert_eq!(cfg.footsteps.games_per_pair, 20);
    assert_eq!(cfg.footsteps.points, 50, "the seed's default");
    assert_eq!(Config::default().contest.discipline, Discipline::Knobeln);
    for (text, says) in [
        ("[contest]\ndiscipline = \"chess\"\n", "unknown variant"),
        ("[ultimatum]\nrounds = 0\n", "ultimatum.rounds"),
        ("[footsteps]\nfields = 8\n", "footsteps.fields must be odd"),
        ("[flooding]\nround_ms = 0\n", "flooding.round_ms"),
        ("[morabaraba]\nmemory_mb = 1\n", "morabaraba.memory_mb"),
        ("[ultimatum]\nwhat = 1\n", "unknown field"),
    ] {
        let err = Config::parse(text)
            .and_then(|c| c.validate().map(|_| c))
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{text}: {err}");
    }
}
