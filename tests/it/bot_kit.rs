//! The kit of the bot disciplines (issue 26): its `referee.py` plays the
//! server's games line for line (the server through `knobeln play --json`
//! in its sandbox, the kit's referee with the same bots run on the host),
//! its `--expand` and the server's own expansion turn a stored game's moves
//! back into its transcript, and the kit arrives by mail with the
//! contest's rules.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use knobeln::discipline::flooding::rules as flooding;
use knobeln::discipline::flooding::rules::Island;
use knobeln::discipline::footsteps::rules as footsteps;
use knobeln::discipline::play::expand;
use knobeln::discipline::play::Setup;
use knobeln::discipline::transcript::{full_text, moves_of, moves_text, quote};
use knobeln::discipline::ultimatum::rules as ultimatum;
use knobeln::game::lines::{Exchange, Said};

use crate::common::{knobeln, stderr_of, stdout_of};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn referee_py(d: &str) -> PathBuf {
    crate::common::home_referee(d)
}

/// A bot as the kit's referee runs it at home: a C bot built with the
/// host's gcc, a Python bot through python3.
fn home_command(src: &Path, tmp: &Path) -> String {
    if src.extension().is_some_and(|e| e == "c") {
        let exe = tmp.join(src.file_stem().unwrap());
        let st = Command::new("gcc")
            .args(["-O2", "-o"])
            .arg(&exe)
            .arg(src)
            .status()
            .unwrap();
        assert!(st.success(), "gcc {}", src.display());
        exe.display().to_string()
    } else {
        format!("python3 {}", src.display())
    }
}

/// The exchanges of a server game, from `knobeln play --json`.
fn exchanges(v: &Value) -> Vec<Exchange> {
    serde_json::from_value(v["transcript"].clone()).expect("a transcript")
}

/// The `to`/`from` lines of a full transcript text.
fn exchange_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("to ") || l.starts_with("from "))
        .map(str::to_string)
        .collect()
}

/// One game: the discipline, its bots (paths), the setup, and the extra
/// arguments of `knobeln play` and of the referee.
struct Case {
    d: &'static str,
    bots: Vec<PathBuf>,
    setup: Setup,
    server_args: Vec<String>,
    referee_args: Vec<String>,
}

fn demo_bot(d: &str, file: &str) -> PathBuf {
    repo(&format!("src/discipline/{d}/demo/{file}"))
}

fn cases(tmp: &Path) -> Vec<Case> {
    let lagoon = repo("src/discipline/flooding/test_islands/lagoon.txt");
    let island = Island::parse(&std::fs::read_to_string(&lagoon).unwrap()).unwrap();
    // A bot that breaks the ultimatum game's protocol in its third offer.
    let breaker = tmp.join("breaker.py");
    std::fs::write(
        &breaker,
        "import sys\nn = 0\nfor line in sys.stdin:\n    w = line.split()\n    \
         if not w: continue\n    if w[0] == 'START':\n        n += 1\n        \
         print('lots' if n == 3 else '400', flush=True)\n    elif w[0] == 'ANGEBOT':\n        \
         print('JA', flush=True)\n    elif w[0] == 'ENDE':\n        break\n",
    )
    .unwrap();
    // Bots that print blanks around their numbers and words (issue 27: as
    // the seeds' engines read from a stream, `500 ` is 500).
    let blanks = tmp.join("blanks.py");
    std::fs::write(
        &blanks,
        "import sys\nfor line in sys.stdin:\n    w = line.split()\n    \
         if not w: continue\n    if w[0] == 'START':\n        print(' 450 \\t', flush=True)\n    \
         elif w[0] == 'ANGEBOT':\n        print('JA  ', flush=True)\n    elif w[0] == 'ENDE':\n        break\n",
    )
    .unwrap();
    let wader = tmp.join("wader.py");
    std::fs::write(
        &wader,
        "import sys\nfor line in sys.stdin:\n    if line.startswith('ROUND'):\n        \
         for _ in range(3):\n            print(' GO   CURRENT ', flush=True)\n    \
         elif line.startswith('END'):\n        break\n",
    )
    .unwrap();
    // Bots that print a line nobody asked for (issue 27): a second offer
    // in round 2, a fourth command in round 1.
    let twice = tmp.join("twice.py");
    std::fs::write(
        &twice,
        "import sys\nn = 0\nfor line in sys.stdin:\n    w = line.split()\n    \
         if not w: continue\n    if w[0] == 'START':\n        n += 1\n        \
         print('400', flush=True)\n        if n == 2:\n            print('401', flush=True)\n    \
         elif w[0] == 'ANGEBOT':\n        print('JA', flush=True)\n    elif w[0] == 'ENDE':\n        break\n",
    )
    .unwrap();
    let four = tmp.join("four.py");
    std::fs::write(
        &four,
        "import sys\nfor line in sys.stdin:\n    if line.startswith('ROUND'):\n        \
         for _ in range(4):\n            print('DRY CURRENT', flush=True)\n    \
         elif line.startswith('END'):\n        break\n",
    )
    .unwrap();
    let lagoon = lagoon.display().to_string();
    vec![
        swimmer_case(tmp),
        Case {
            d: "ultimatum",
            bots: vec![twice, demo_bot("ultimatum", "simple.c")],
            setup: knobeln::discipline::ultimatum::setup(ultimatum::Params { rounds: 5 }),
            server_args: vec!["--set".into(), "rounds=5".into()],
            referee_args: vec!["--rounds".into(), "5".into()],
        },
        Case {
            d: "flooding",
            bots: vec![four],
            setup: knobeln::discipline::data::Tagged::new(
                knobeln::discipline::Discipline::FLOODING,
                knobeln::discipline::flooding::FloodSetup {
                    island: Island::parse(&std::fs::read_to_string(&lagoon).unwrap()).unwrap(),
                    params: flooding::Params::default(),
                    seed: 2,
                },
            ),
            server_args: vec![
                "--material".into(),
                lagoon.clone(),
                "--seed".into(),
                "2".into(),
            ],
            referee_args: vec![
                "--island".into(),
                lagoon.clone(),
                "--seed".into(),
                "2".into(),
            ],
        },
        Case {
            d: "ultimatum",
            bots: vec![demo_bot("ultimatum", "simple.c"), blanks],
            setup: knobeln::discipline::ultimatum::setup(ultimatum::Params { rounds: 12 }),
            server_args: vec!["--set".into(), "rounds=12".into()],
            referee_args: vec!["--rounds".into(), "12".into()],
        },
        Case {
            d: "flooding",
            bots: vec![wader],
            setup: knobeln::discipline::data::Tagged::new(
                knobeln::discipline::Discipline::FLOODING,
                knobeln::discipline::flooding::FloodSetup {
                    island: Island::parse(&std::fs::read_to_string(&lagoon).unwrap()).unwrap(),
                    params: flooding::Params::default(),
                    seed: 3,
                },
            ),
            server_args: vec![
                "--material".into(),
                lagoon.clone(),
                "--seed".into(),
                "3".into(),
            ],
            referee_args: vec![
                "--island".into(),
                lagoon.clone(),
                "--seed".into(),
                "3".into(),
            ],
        },
        Case {
            d: "ultimatum",
            bots: vec![
                demo_bot("ultimatum", "simple.c"),
                demo_bot("ultimatum", "adaptive.py"),
            ],
            setup: knobeln::discipline::ultimatum::setup(ultimatum::Params { rounds: 40 }),
            server_args: vec!["--set".into(), "rounds=40".into()],
            referee_args: vec!["--rounds".into(), "40".into()],
        },
        Case {
            d: "ultimatum",
            bots: vec![demo_bot("ultimatum", "more.c"), breaker],
            setup: knobeln::discipline::ultimatum::setup(ultimatum::Params { rounds: 10 }),
            server_args: vec!["--set".into(), "rounds=10".into()],
            referee_args: vec!["--rounds".into(), "10".into()],
        },
        Case {
            d: "flooding",
            bots: vec![demo_bot("flooding", "keeper.c")],
            setup: knobeln::discipline::data::Tagged::new(
                knobeln::discipline::Discipline::FLOODING,
                knobeln::discipline::flooding::FloodSetup {
                    island,
                    params: flooding::Params::default(),
                    seed: 7,
                },
            ),
            server_args: vec![
                "--material".into(),
                lagoon.clone(),
                "--seed".into(),
                "7".into(),
            ],
            referee_args: vec!["--island".into(), lagoon, "--seed".into(), "7".into()],
        },
        Case {
            d: "footsteps",
            bots: vec![
                demo_bot("footsteps", "steady.c"),
                demo_bot("footsteps", "counter.py"),
            ],
            setup: knobeln::discipline::footsteps::setup(footsteps::Params::default()),
            server_args: vec![],
            referee_args: vec![],
        },
        Case {
            d: "morabaraba",
            bots: vec![
                demo_bot("morabaraba", "first.c"),
                demo_bot("morabaraba", "miller.c"),
            ],
            setup: knobeln::discipline::morabaraba::setup(),
            server_args: vec![],
            referee_args: vec![],
        },
    ]
}

/// A bot that walks into water in round 2 (north of the lagoon's start,
/// `(4,2)`), on the lagoon with seed 5.
fn swimmer_case(tmp: &Path) -> Case {
    let swimmer = tmp.join("swimmer.py");
    std::fs::write(
        &swimmer,
        "import sys\nfor line in sys.stdin:\n    if line.startswith('ROUND 1 '):\n        \
         print('DRY CURRENT\\nDRY CURRENT\\nDRY CURRENT', flush=True)\n    \
         elif line.startswith('ROUND'):\n        \
         print('GO NORTH\\nDRY CURRENT\\nGO EAST', flush=True)\n    \
         elif line.startswith('END'):\n        break\n",
    )
    .unwrap();
    let lagoon = repo("src/discipline/flooding/test_islands/lagoon.txt");
    let args = vec![
        "--island".to_string(),
        lagoon.display().to_string(),
        "--seed".into(),
        "5".into(),
    ];
    Case {
        d: "flooding",
        bots: vec![swimmer],
        setup: knobeln::discipline::data::Tagged::new(
            knobeln::discipline::Discipline::FLOODING,
            knobeln::discipline::flooding::FloodSetup {
                island: Island::parse(&std::fs::read_to_string(&lagoon).unwrap()).unwrap(),
                params: flooding::Params::default(),
                seed: 5,
            },
        ),
        // `--island`: the hidden old name of `--material`, still read.
        server_args: args.clone(),
        referee_args: args,
    }
}

/// Issue 27: after a bot walks into water, the round's flood still comes
/// (`INCRFLOOD`, as many `FLOOD` lines as the level), then `END`: the order
/// the 2012 engine sent; the kit's referee sends the same (the case is one
/// of [`the_kit_referee_plays_the_servers_games_line_for_line`]'s).
/// The failures of a game as `knobeln play --json` reports them: (seat,
/// reason).
fn failures_of(server: &Value) -> Vec<(usize, String)> {
    server["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["bot"].as_u64().unwrap() as usize,
                f["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn after_walking_into_water_the_rounds_flood_comes_before_end() {
    let tmp = tempfile::tempdir().unwrap();
    let g = server_game(&swimmer_case(tmp.path()));
    assert_eq!(g["outcome"]["end"]["end"], "walked_into_water", "{g}");
    assert_eq!(g["outcome"]["rounds"], 2, "{g}");
    let to_bot: Vec<String> = exchanges(&g)
        .into_iter()
        .filter(|e| e.said == knobeln::game::lines::Said::ToBot)
        .map(|e| e.line)
        .collect();
    let round2 = to_bot
        .iter()
        .position(|l| l.starts_with("ROUND 2 "))
        .unwrap();
    let after: Vec<&str> = to_bot[round2 + 1..].iter().map(String::as_str).collect();
    assert!(after[0].starts_with("INCRFLOOD "), "{after:?}");
    assert_eq!(after.last(), Some(&"END"), "{after:?}");
    let level = g["outcome"]["level"].as_u64().unwrap() as usize;
    assert_eq!(after.len(), 1 + level + 1, "{after:?}");
    assert!(
        after[1..=level].iter().all(|l| l.starts_with("FLOOD ")),
        "{after:?}"
    );
}

/// The server's game of a case (`knobeln play --discipline --json`).
fn server_game(c: &Case) -> Value {
    let mut args: Vec<String> = vec!["play".into(), "--discipline".into(), c.d.into()];
    args.extend(c.bots.iter().map(|b| b.display().to_string()));
    args.extend(c.server_args.iter().cloned());
    args.push("--json".into());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = knobeln(&a);
    assert!(out.status.success(), "{}", stderr_of(&out));
    serde_json::from_str(stdout_of(&out).lines().next().unwrap()).unwrap()
}

fn run_referee(d: &str, args: &[String]) -> std::process::Output {
    let out = Command::new("python3")
        .arg(referee_py(d))
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "referee.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn the_kit_referee_plays_the_servers_games_line_for_line() {
    let tmp = tempfile::tempdir().unwrap();
    for c in cases(tmp.path()) {
        let server = server_game(&c);
        if c.bots
            .iter()
            .any(|b| b.ends_with("blanks.py") || b.ends_with("wader.py"))
        {
            assert_eq!(
                server["failures"].as_array().map(Vec::len),
                Some(0),
                "blanks around a number or word break no rule: {}",
                server["failures"]
            );
        }
        let names: Vec<String> = (0..c.bots.len()).map(|i| format!("bot{i}")).collect();
        let ours = full_text(&c.setup, "lagoon", &names, &exchanges(&server), &[]);
        let transcript = tmp.path().join(format!("{}.txt", c.d));
        let mut args = c.referee_args.clone();
        args.push("--transcript".into());
        args.push(transcript.display().to_string());
        for b in &c.bots {
            args.push(home_command(b, tmp.path()));
        }
        run_referee(c.d, &args);
        let home = std::fs::read_to_string(&transcript).unwrap();
        assert!(
            home.starts_with(&format!("# knobeln transcript 2: {}\n", c.d)),
            "{home}"
        );
        let (a, b) = (exchange_lines(&ours), exchange_lines(&home));
        assert!(a.len() > 10, "{} lines only", a.len());
        assert_eq!(a, b, "{}: {:?} at home and on the server", c.d, c.bots);
    }
}

#[test]
fn a_stored_games_moves_expand_to_its_transcript_on_the_server_and_at_home() {
    let tmp = tempfile::tempdir().unwrap();
    for c in cases(tmp.path()) {
        let server = server_game(&c);
        let t = exchanges(&server);
        // A failure outside the rules (a line nobody asked for) is kept
        // with the moves, as the contest keeps it.
        let forfeits: Vec<(usize, String)> = server["failures"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["failure"] != "rule")
            .map(|f| {
                (
                    f["bot"].as_u64().unwrap() as usize,
                    f["reason"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        // Only what the bots printed is kept: the rest follows from the rules.
        let moves = moves_of(&t, &forfeits);
        assert!(moves.moves.len() < t.len());
        assert_eq!(expand(&c.setup, &moves), t, "{}", c.d);
        let names = vec!["a".to_string(), "b".to_string()][..c.bots.len()].to_vec();
        let file = tmp.path().join(format!("{}.moves", c.d));
        std::fs::write(&file, moves_text(&c.setup, "lagoon", &names, &moves)).unwrap();
        let out = run_referee(c.d, &["--expand".into(), file.display().to_string()]);
        let expanded = exchange_lines(&String::from_utf8_lossy(&out.stdout));
        let want: Vec<String> = t
            .iter()
            .map(|e| {
                let dir = if e.said == Said::ToBot { "to" } else { "from" };
                format!("{dir} {}: {}", e.seat + 1, quote(&e.line))
            })
            .collect();
        assert_eq!(expanded, want, "{}", c.d);
    }
}

#[test]
fn a_game_that_ended_with_a_bot_gone_expands_where_it_stopped() {
    // A bot that quits after its first offer: the server notices it at a
    // write or at the next read; the moves say how many lines there were.
    let tmp = tempfile::tempdir().unwrap();
    let quitter = tmp.path().join("quitter.py");
    std::fs::write(
        &quitter,
        "import sys\nfor line in sys.stdin:\n    if line.startswith('START'):\n        \
         print('500', flush=True)\n        sys.exit(0)\n",
    )
    .unwrap();
    let c = Case {
        d: "ultimatum",
        bots: vec![demo_bot("ultimatum", "simple.c"), quitter],
        setup: knobeln::discipline::ultimatum::setup(ultimatum::Params { rounds: 5 }),
        server_args: vec!["--set".into(), "rounds=5".into()],
        referee_args: vec![],
    };
    let server = server_game(&c);
    let t = exchanges(&server);
    let failures = failures_of(&server);
    assert_eq!(failures.len(), 1, "{server}");
    let moves = moves_of(&t, &failures);
    assert_eq!(moves.ends_after, Some(t.len()));
    assert_eq!(expand(&c.setup, &moves), t);
    let file = tmp.path().join("gone.moves");
    let names = vec!["simple".to_string(), "quitter".to_string()];
    std::fs::write(&file, moves_text(&c.setup, "", &names, &moves)).unwrap();
    let out = run_referee(
        "ultimatum",
        &["--expand".into(), file.display().to_string()],
    );
    assert_eq!(
        exchange_lines(&String::from_utf8_lossy(&out.stdout)).len(),
        t.len()
    );
}

#[test]
fn the_kit_of_each_bot_discipline_has_its_rules_referee_bots_and_islands() {
    use knobeln::discipline::Discipline;
    // The seeds' four (a discipline the tests register has its own kit).
    for d in knobeln::discipline::registry::built_in() {
        let mut config = knobeln::config::Config::default();
        config.contest.discipline = d;
        config.contest.name = "Test contest".into();
        config.ultimatum.rounds = 777;
        config.footsteps.points = 66;
        let kit = knobeln::kit::bot_files_for(&config);
        let names: Vec<&str> = kit.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(&names[..3], ["README", "RULES.txt", "referee.py"], "{d}");
        for b in knobeln::demo::bots::demo_bots(d) {
            assert!(names.contains(&b.file), "{d}: {}", b.file);
        }
        let rules = String::from_utf8(kit[1].bytes.clone()).unwrap();
        for l in rules.lines() {
            assert!(l.is_ascii() && l.len() <= 72, "{d}: {l:?}");
        }
        assert!(rules.contains("Test contest"), "{d}");
        match d {
            Discipline::ULTIMATUM => assert!(rules.contains("777") && rules.contains("RUNDEN")),
            Discipline::FOOTSTEPS => assert!(rules.contains("66")),
            Discipline::FLOODING => {
                // The test islands, never the contest's (checked below
                // with an organizer's island).
                let islands: Vec<&&str> =
                    names.iter().filter(|n| n.starts_with("island-")).collect();
                assert_eq!(
                    islands,
                    [
                        &"island-lagoon.txt",
                        &"island-atoll.txt",
                        &"island-ridge.txt"
                    ]
                );
                assert!(rules.contains("test islands: the contest does not play"));
                assert!(rules.contains("GAMEBOARDSTART"));
            }
            Discipline::MORABARABA => {
                assert!(rules.contains("Morabaraba"));
                // The slips of issue 36: the per-move limit is a backstop
                // beside the seed's 120 s a game; the points have six decimals.
                assert!(rules.contains("CPU time per game:        120 s (the seed's limit)\n  CPU time per move:        130000 ms, only a backstop"), "{rules}");
                assert!(rules.contains("with six decimals"));
            }
            other => unreachable!("{other} is none of the seeds' four"),
        }
        assert_eq!(
            kit[2].bytes,
            std::fs::read(referee_py(d.name())).unwrap(),
            "{d}: the referee mailed is the one tested here"
        );
        let readme = String::from_utf8(kit[0].bytes.clone()).unwrap();
        assert!(readme.contains("python3 referee.py"), "{readme}");
    }
}

/// The organizer's islands are the contest's: never in the kit (the 2012
/// seed kept its contest islands secret until the contest).
#[test]
fn the_kit_never_carries_the_organizers_islands() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "GAMEBOARDSTART 7,1\no#o#o#o\nGAMEBOARDEND\n").unwrap();
    let mut config = knobeln::config::Config::default();
    config.contest.discipline = knobeln::discipline::Discipline::FLOODING;
    config.flooding.islands = vec![secret];
    assert_eq!(config.flooding.drawn_island_count(), 0);
    let kit = knobeln::kit::bot_files_for(&config);
    for f in &kit {
        assert!(!f.name.contains("secret"), "{}", f.name);
        let text = String::from_utf8_lossy(&f.bytes);
        assert!(!text.contains("secret"), "{}: {text}", f.name);
        assert!(!text.contains("o#o#o#o"), "{}", f.name);
    }
}

/// Each kit's `referee.py` is one file joined from the discipline's part
/// (`referee_rules.py`), what the four share and its driver
/// (`src/discipline/home_referee/`): every top-level name is defined once
/// (a part that defined a driver's function again would replace it
/// silently), the file runs `main` once, at its end, and the two pairs
/// that share a driver carry it byte for byte.
#[test]
fn the_home_referees_are_joined_from_their_shared_parts() {
    let shared = std::fs::read_to_string(repo("src/discipline/home_referee/shared.py")).unwrap();
    let run_main = "\nif __name__ == \"__main__\":\n    sys.exit(main())\n";
    for (d, driver) in [
        ("ultimatum", "match_driver"),
        ("footsteps", "match_driver"),
        ("flooding", "game_driver"),
        ("morabaraba", "game_driver"),
    ] {
        let text = std::fs::read_to_string(referee_py(d)).unwrap();
        let driver_text =
            std::fs::read_to_string(repo(&format!("src/discipline/home_referee/{driver}.py")))
                .unwrap();
        assert!(text.starts_with("#!/usr/bin/env python3\n\"\"\""), "{d}");
        assert!(text.ends_with(&format!("{shared}{driver_text}")), "{d}");
        assert!(
            text.ends_with(run_main) && text.matches(run_main).count() == 1,
            "{d}"
        );
        let mut seen = std::collections::BTreeSet::new();
        for line in text.lines() {
            let name = if let Some(rest) = line.strip_prefix("def ") {
                rest.split('(').next()
            } else if let Some(rest) = line.strip_prefix("class ") {
                rest.split(['(', ':']).next()
            } else if line.starts_with(|c: char| c.is_ascii_uppercase()) && line.contains(" = ") {
                line.split(" = ").next()
            } else {
                None
            };
            if let Some(name) = name {
                assert!(
                    seen.insert(name.to_string()),
                    "{d}: `{name}` is defined twice"
                );
            }
        }
        for hook in ["DISCIPLINE", "DEFAULT_MATCH_SECS", "TRANSCRIPT_CAP", "main"] {
            assert!(seen.contains(hook), "{d}: no `{hook}`");
        }
    }
}

/// The server's words for a bot waited for more than `secs` seconds in
/// all in one match (`BotFailureKind::Waited`).
fn waited_words(secs: u64) -> String {
    format!(
        "was waited for more than {secs} s of wall clock in all in this match (its start-up, \
         its answers and its returns to its input after them, together; each bot has that \
         much per match): a bot that sleeps or blocks instead of answering is stopped there"
    )
}

/// How a demo bot sleeps: `pause` seconds before (or after) its answers
/// number `first` to `first + count - 1` (one `print` each; the first is
/// 1).
#[derive(Clone, Copy)]
struct Sleeps {
    first: u32,
    count: u32,
    pause: f64,
    at: SleepAt,
}

/// Where a demo bot sleeps: before its answer, or after it (its answer
/// printed and flushed, before it reads on).
#[derive(Clone, Copy, PartialEq, Eq)]
enum SleepAt {
    BeforeAnswer,
    AfterAnswer,
}

/// A Python demo bot that sleeps as `sleeps` says, as one file
/// `dir/name.py`: the demo's source after a prelude that shadows `print`,
/// so that the server builds it as any Python bot.
fn sleeping_bot(dir: &Path, name: &str, demo: &Path, sleeps: Sleeps) -> PathBuf {
    let Sleeps {
        first,
        count,
        pause,
        at,
    } = sleeps;
    let sleep = format!(
        "    if {first} <= _said[0] < {first} + {count}:\n        _time.sleep({pause:?})\n"
    );
    let (before, after) = match at {
        SleepAt::BeforeAnswer => (sleep.as_str(), ""),
        SleepAt::AfterAnswer => ("", sleep.as_str()),
    };
    demo_with_print(dir, name, demo, before, after)
}

/// A Python demo bot that, after its answer number `answer` (one `print`
/// each; the first is 1), prints a line longer than any line a bot may
/// send (4096 bytes), then reads on: `dir/name.py`, as [`sleeping_bot`].
fn long_line_bot(dir: &Path, name: &str, demo: &Path, answer: u32) -> PathBuf {
    let after =
        format!("    if _said[0] == {answer}:\n        _builtins.print('x' * 5000, flush=True)\n");
    demo_with_print(dir, name, demo, "", &after)
}

/// The demo's source as `dir/name.py`, after a prelude that shadows
/// `print` (counting its calls in `_said`) with `before` and `after` run
/// around each print.
fn demo_with_print(dir: &Path, name: &str, demo: &Path, before: &str, after: &str) -> PathBuf {
    let say = "    _builtins.print(*args, **kw)\n";
    let prelude = format!(
        "import builtins as _builtins\nimport time as _time\n_said = [0]\n\n\n\
         def print(*args, **kw):\n    _said[0] += 1\n{before}{say}{after}\n\n"
    );
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("{name}.py"));
    std::fs::write(&path, prelude + &std::fs::read_to_string(demo).unwrap()).unwrap();
    path
}

/// The `# failure: player P: REASON` lines of a full transcript text, as
/// (seat, reason): seats count from 0, players from 1.
fn failure_lines(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# failure: player "))
        .map(|l| {
            let (player, reason) = l.split_once(": ").unwrap();
            (player.parse::<usize>().unwrap() - 1, reason.to_string())
        })
        .collect()
}

/// A game with a sleeping bot: the discipline, the bot before it (none
/// in the flooding island), the demo the sleeping bot plays (its seat is
/// the last), and the game's options.
struct SleepCase {
    d: &'static str,
    other: Option<PathBuf>,
    sleeper: PathBuf,
    options: Vec<String>,
}

impl SleepCase {
    /// The bots, the sleeping one (`name.py` in a folder of its own) last.
    fn bots(&self, tmp: &Path, name: &str, sleeps: Sleeps) -> Vec<PathBuf> {
        self.bots_with(tmp, name, |dir| {
            sleeping_bot(dir, name, &self.sleeper, sleeps)
        })
    }

    /// The bots, the last made by `make` in a folder of its own.
    fn bots_with(
        &self,
        tmp: &Path,
        name: &str,
        make: impl FnOnce(&Path) -> PathBuf,
    ) -> Vec<PathBuf> {
        let dir = tmp.join(format!("{}-{name}", self.d));
        let mut bots: Vec<PathBuf> = self.other.iter().cloned().collect();
        bots.push(make(&dir));
        bots
    }
}

fn lagoon_options(max_rounds: u32) -> Vec<String> {
    vec![
        "--island".into(),
        repo("src/discipline/flooding/test_islands/lagoon.txt")
            .display()
            .to_string(),
        "--seed".into(),
        "1".into(),
        "--max-rounds".into(),
        max_rounds.to_string(),
    ]
}

/// The wall clock each bot may be waited for in all in a match
/// (`LineLimits::waited`): the home referees enforce it as the server
/// does (`--match-secs`). A bot that sleeps 0.3 s before each of its
/// first five answers (1.5 s in all) is stopped with the server's words
/// under `--match-secs 1`, named by its own number; the same match with
/// `--match-secs 100` has no failure.
#[test]
fn the_home_referees_stop_a_bot_waited_for_too_long_in_all_in_a_match() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cases = [
        SleepCase {
            d: "ultimatum",
            other: Some(demo_bot("ultimatum", "random.py")),
            sleeper: demo_bot("ultimatum", "adaptive.py"),
            options: vec!["--rounds".into(), "3".into()],
        },
        SleepCase {
            d: "footsteps",
            other: Some(demo_bot("footsteps", "one.py")),
            sleeper: demo_bot("footsteps", "one.py"),
            options: vec!["--points".into(), "8".into()],
        },
        SleepCase {
            d: "flooding",
            other: None,
            sleeper: demo_bot("flooding", "wanderer.py"),
            options: lagoon_options(6),
        },
        SleepCase {
            d: "morabaraba",
            other: Some(demo_bot("morabaraba", "first.py")),
            sleeper: demo_bot("morabaraba", "first.py"),
            options: vec![],
        },
    ];
    let sleeps = Sleeps {
        first: 1,
        count: 5,
        pause: 0.3,
        at: SleepAt::BeforeAnswer,
    };
    for c in &cases {
        let d = c.d;
        let bots = c.bots(t, "slow", sleeps);
        let seat = bots.len() - 1;
        for (match_secs, fails) in [("1", true), ("100", false)] {
            let transcript = t.join(format!("{d}-{match_secs}.txt"));
            let mut args = c.options.clone();
            args.extend([
                "--match-secs".to_string(),
                match_secs.to_string(),
                "--transcript".to_string(),
                transcript.display().to_string(),
            ]);
            args.extend(bots.iter().map(|b| home_command(b, t)));
            let out = run_referee(d, &args);
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            let failures = failure_lines(&std::fs::read_to_string(&transcript).unwrap());
            if fails {
                assert_eq!(failures.len(), 1, "{d}: {err}");
                let (s, reason) = &failures[0];
                assert_eq!(*s, seat, "{d}: {err}");
                assert!(
                    reason.starts_with(&format!("player {}, turn ", seat + 1)),
                    "{d}: {reason}"
                );
                assert!(
                    reason.ends_with(&format!(": {}", waited_words(1))),
                    "{d}: {reason}"
                );
                assert!(
                    err.contains(&format!("FAILURE of slow: {reason}\n")),
                    "{d}: {err}"
                );
            } else {
                assert_eq!(failures, vec![], "{d}: {err}");
                assert!(
                    !err.contains("FAILURE") && !err.contains("was waited for"),
                    "{d}: {err}"
                );
            }
        }
    }
}

/// A bot that sleeps at its third answer, far longer than its budget:
/// the server (`knobeln play` with a config whose limits give each bot 2
/// or 3 s) and the kit's referee (`--match-secs` the same) stop it in the
/// same turn, with the same reason, after the same lines.
#[test]
fn the_home_referee_and_the_server_stop_a_sleeping_bot_alike() {
    stopped_alike(Misdeed::Sleeps(SleepAt::BeforeAnswer));
}

/// A bot that prints a line longer than a bot may send right after its
/// third answer: the server and the kit's referee find it while they wait
/// for the bot to come back to its input, and fail it in the turn of that
/// answer, with the same words (the kit put it in the turn then being
/// played).
#[test]
fn the_home_referee_and_the_server_stop_a_too_long_line_after_an_answer_alike() {
    stopped_alike(Misdeed::LongLineAfterAnswer);
}

/// What the last bot of [`stopped_alike`] does wrong at its third answer.
#[derive(Clone, Copy)]
enum Misdeed {
    /// Sleeps 60 s, before or after its answer.
    Sleeps(SleepAt),
    /// Prints a line of 5000 bytes after its answer.
    LongLineAfterAnswer,
}

/// The same bot sleeping after its third answer instead of reading on:
/// the wait for it to come back to its input is waiting for it, on the
/// server and at home alike (before, the server gave up that wait at the
/// reply's wall-clock backstop, counted it nowhere, and played on).
#[test]
fn the_home_referee_and_the_server_stop_a_bot_sleeping_after_its_answer_alike() {
    stopped_alike(Misdeed::Sleeps(SleepAt::AfterAnswer));
}

/// Plays each discipline with a bot that does `misdeed` at its third
/// answer, on the server and at home, and compares the failures and the
/// lines.
fn stopped_alike(misdeed: Misdeed) {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // (the case, its config, the budget that config gives, the server's
    // options)
    let cases = [
        (
            SleepCase {
                d: "ultimatum",
                other: Some(demo_bot("ultimatum", "simple.c")),
                sleeper: demo_bot("ultimatum", "adaptive.py"),
                options: vec!["--rounds".into(), "5".into()],
            },
            "[ultimatum]\nentry_secs = 1\n",
            2,
            vec!["--set".to_string(), "rounds=5".to_string()],
        ),
        (
            SleepCase {
                d: "footsteps",
                other: Some(demo_bot("footsteps", "one.c")),
                sleeper: demo_bot("footsteps", "one.py"),
                options: vec![],
            },
            "[footsteps]\ncpu_secs = 1\nstartup_ms = 1000\n",
            3,
            vec![],
        ),
        (
            SleepCase {
                d: "flooding",
                other: None,
                sleeper: demo_bot("flooding", "wanderer.py"),
                options: lagoon_options(5),
            },
            "[flooding]\nstartup_ms = 1000\nmax_rounds = 5\n",
            2,
            [
                vec!["--material".to_string()],
                lagoon_options(5)[1..4].to_vec(),
            ]
            .concat(),
        ),
        (
            SleepCase {
                d: "morabaraba",
                other: Some(demo_bot("morabaraba", "first.c")),
                sleeper: demo_bot("morabaraba", "first.py"),
                options: vec![],
            },
            "[morabaraba]\ncpu_secs = 1\nstartup_ms = 1000\nreply_ms = 1000\n",
            3,
            vec![],
        ),
    ];
    for (c, config, budget, server_options) in &cases {
        let d = c.d;
        let (bots, words) = match misdeed {
            Misdeed::Sleeps(at) => {
                let sleeps = Sleeps {
                    first: 3,
                    count: 1,
                    pause: 60.0,
                    at,
                };
                (c.bots(t, "dozer", sleeps), waited_words(*budget))
            }
            Misdeed::LongLineAfterAnswer => (
                c.bots_with(t, "shouter", |dir| {
                    long_line_bot(dir, "shouter", &c.sleeper, 3)
                }),
                format!(
                    "sent a line longer than 4096 bytes; its line: \"{}…\"",
                    "x".repeat(200)
                ),
            ),
        };
        let config_file = t.join(format!("{d}.toml"));
        std::fs::write(&config_file, config).unwrap();
        let mut args: Vec<String> = vec![
            "play".into(),
            "--config".into(),
            config_file.display().to_string(),
            "--discipline".into(),
            d.into(),
        ];
        args.extend(bots.iter().map(|b| b.display().to_string()));
        args.extend(server_options.iter().cloned());
        args.push("--json".into());
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = knobeln(&a);
        assert!(out.status.success(), "{d}: {}", stderr_of(&out));
        let server: Value = serde_json::from_str(stdout_of(&out).lines().next().unwrap()).unwrap();
        let server_failures = failures_of(&server);
        assert_eq!(server_failures.len(), 1, "{d}: {server}");
        assert_eq!(server_failures[0].0, bots.len() - 1, "{d}: {server}");
        assert!(server_failures[0].1.ends_with(&words), "{d}: {server}");

        let transcript = t.join(format!("{d}.txt"));
        let mut args = c.options.clone();
        args.extend([
            "--match-secs".to_string(),
            budget.to_string(),
            "--transcript".to_string(),
            transcript.display().to_string(),
        ]);
        args.extend(bots.iter().map(|b| home_command(b, t)));
        run_referee(d, &args);
        let home = std::fs::read_to_string(&transcript).unwrap();
        assert_eq!(failure_lines(&home), server_failures, "{d}");
        let want: Vec<String> = exchanges(&server)
            .iter()
            .map(|e| {
                let dir = if e.said == Said::ToBot { "to" } else { "from" };
                format!("{dir} {}: {}", e.seat + 1, quote(&e.line))
            })
            .collect();
        assert_eq!(
            exchange_lines(&home),
            want,
            "{d}: at home and on the server"
        );
    }
}

/// Each home referee's default `--match-secs` is the server's budget
/// under the default config (120, 410, 30 and 370 s), and the kit's
/// rules name the configured budget and `--match-secs`.
#[test]
fn the_home_referees_match_secs_default_to_the_servers_budget() {
    use knobeln::config::Config;
    use knobeln::discipline::Discipline;
    for (d, figure) in [
        (Discipline::ULTIMATUM, 120),
        (Discipline::FLOODING, 410),
        (Discipline::FOOTSTEPS, 30),
        (Discipline::MORABARABA, 370),
    ] {
        let seam = knobeln::discipline::registry::of(d).unwrap();
        assert_eq!(
            seam.limits(&Config::default().sections()).waited_secs,
            figure,
            "{d}"
        );
        let text = std::fs::read_to_string(referee_py(d.name())).unwrap();
        assert!(
            text.contains(&format!("\nDEFAULT_MATCH_SECS = {figure}\n")),
            "{d}: DEFAULT_MATCH_SECS"
        );
        assert!(text.contains("--match-secs S"), "{d}: the options' list");
        let out = run_referee(d.name(), &["--help".into()]);
        let help = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(help.contains("--match-secs"), "{d}: {help}");
        assert!(
            help.contains(&format!("{figure}, the server's")),
            "{d}: {help}"
        );

        // Other figures in the config: the rules say those.
        let mut config = Config::default();
        config.contest.discipline = d;
        config.ultimatum.entry_secs = 30;
        config.flooding.max_rounds = 100;
        config.footsteps.cpu_secs = 20;
        config.morabaraba.speed_percent = 200;
        let waited = seam.limits(&config.sections()).waited_secs;
        assert_ne!(waited, figure, "{d}");
        let kit = knobeln::kit::bot_files_for(&config);
        let rules = String::from_utf8(kit[1].bytes.clone()).unwrap();
        let flat = rules.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(&format!("at most {waited} seconds of wall clock")),
            "{d}: {rules}"
        );
        let unit = if d == Discipline::ULTIMATUM {
            "match"
        } else {
            "game"
        };
        let who = if d == Discipline::FLOODING {
            "the"
        } else {
            "one"
        };
        assert!(
            flat.contains(&format!(
                "--match-secs S for all the waiting for {who} bot in a {unit}, {waited} s in \
                 this contest)."
            )),
            "{d}: {rules}"
        );
        for l in rules.lines() {
            assert!(l.is_ascii() && l.len() <= 72, "{d}: {l:?}");
        }
    }
}
