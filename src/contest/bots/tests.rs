//! Unit tests of the bot contest (`contest/bots`): the tables and the
//! per-opponent rows agree, names fit, pairings keep their order.

use super::*;
use crate::config::Config;
use crate::discipline::flooding::planner::{self as flooding, FloodKey};
use crate::discipline::flooding::rules::Island;
use crate::discipline::footsteps::planner as footsteps;
use crate::discipline::morabaraba::planner as morabaraba;
use crate::discipline::morabaraba::tables::{head_to_head_shown, SELF_GAME_NOTE};
use crate::discipline::play::{Played, Setup};
use crate::discipline::results::summary_text;
use crate::discipline::results::{opponent_table, table_rows};
use crate::discipline::seam::{ContestState, ContestView, Planner};
use crate::discipline::table::OpponentRow;
use crate::discipline::table::{columns_text, fit_name, millionths_text, TextColumn, TEXT_WIDTH};
use crate::discipline::ultimatum::planner as ultimatum;
use crate::discipline::Discipline;
use crate::tournament::TeamId;
use rusqlite::Connection;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

fn row(place: u32, team: u32, name: &str, plus: u64) -> ultimatum::Row {
    ultimatum::Row {
        place,
        team: TeamId(team),
        name: name.into(),
        plus,
        minus: 1000,
        plus_total: plus,
        minus_total: 1000,
        won: 1,
        drawn: 0,
        lost: 1,
        forfeits: 0,
    }
}

/// The seed's own example table (2011): with `[ultimatum] prize` the
/// first three places get P / (20000 · (N − 1)) euros.
#[test]
fn the_ultimatum_prize_column_is_the_seeds_rule_when_asked_for() {
    let table = ultimatum::Table {
        repetitions: 1,
        rows: vec![
            row(1, 1, "simple", 6_682_555),
            row(2, 2, "more", 5_631_484),
            row(3, 3, "random", 3_859_961),
            row(4, 4, "fourth", 100),
        ],
        prizes: vec![],
    };
    let plain = Results::new(crate::discipline::Discipline::ULTIMATUM, table.clone());
    assert!(!results_text(&plain).contains("Prize"));
    assert!(!table_rows(&plain).0.contains(&"Prize".to_string()));
    let with = Results::new(
        crate::discipline::Discipline::ULTIMATUM,
        table.with_prizes(),
    );
    let text = results_text(&with);
    // N = 4: 6682555 / 60000 = 111.38 EUR.
    assert!(text.contains("111.38 EUR"), "{text}");
    assert!(
        text.contains(" 93.86 EUR") && text.contains(" 64.33 EUR"),
        "{text}"
    );
    let fourth = text.lines().find(|l| l.contains("fourth")).unwrap();
    assert!(
        !fourth.contains("EUR"),
        "only the first three places: {fourth}"
    );
    let (head, rows) = table_rows(&with);
    assert_eq!(head.last().map(String::as_str), Some("Prize"));
    assert_eq!(rows[0].last().map(String::as_str), Some("111.38 EUR"));
    assert_eq!(rows[3].last().map(String::as_str), Some(""));
}

/// A stored game of `setup` between `seats`, counted as `result`
/// says, with a failure of `failed` (a seat) if given.
fn game_of(
    setup: Setup,
    seats: &[u32],
    pairing: String,
    result: serde_json::Value,
    failed: Option<usize>,
) -> StoredGame {
    let failures = failed
        .map(|bot| crate::lines::BotFailure {
            bot,
            turn: 1,
            kind: crate::lines::BotFailureKind::Rule {
                rule: "a rule".into(),
            },
            line: None,
            reason: "broke a rule".into(),
        })
        .into_iter()
        .collect();
    StoredGame {
        key: result.to_string(),
        seats: seats.iter().map(|&t| TeamId(t)).collect(),
        pairing,
        setup,
        subject: "lagoon".into(),
        moves_not_kept: None,
        played: Played {
            outcome: None,
            failures,
            cpu_ms: vec![0; seats.len()],
            cpu_us: vec![0; seats.len()],
            wall_ms: 0,
            stderr: vec![String::new(); seats.len()],
            transcript: None,
            transcript_truncated: false,
            moves: None,
            folders: None,
        },
        result: result.to_string(),
        moves: None,
    }
}

fn pair(a: TeamId, b: TeamId) -> String {
    format!("{}-{}", a.0.min(b.0), a.0.max(b.0))
}

fn long_name(t: TeamId) -> String {
    // The registration's limit: 30 characters.
    format!("{:0>30}", format!("a_rather_long_team_name_{}", t.0))
}

fn tally_of(games: &[StoredGame]) -> Tally {
    let seam = crate::discipline::registry::of_setup(&games[0].setup);
    let mut tally = Tally::new(seam);
    for g in games {
        tally.add(g, &|t: &TeamId| long_name(*t));
    }
    tally
}

/// Every line of a mail's table fits into 72 columns and ends without
/// a blank.
fn fits(text: &str) {
    for l in text.lines() {
        assert!(
            l.chars().count() <= TEXT_WIDTH,
            "{} > 72: {l}\n{text}",
            l.len()
        );
        assert_eq!(l, l.trim_end(), "{text}");
    }
}

/// Morabaraba (issue 36): a game against itself counts for both of its
/// sides in the table, the mail, the bot's page and the grid alike, so
/// a bot's rows add up to its row of the table, draws and points
/// included, and the mail says why under the table.
#[test]
fn morabaraba_rows_add_up_to_the_table_self_games_twice() {
    let teams = [TeamId(1), TeamId(2), TeamId(3)];
    let mut results = Vec::new();
    let mut games = Vec::new();
    for (i, p) in morabaraba::plan(&teams).into_iter().enumerate() {
        let winner = [Some(0), None, Some(1)][i % 3];
        let r = morabaraba::GameResult {
            pairing: p,
            winner,
            cpu_micros: [1_000_000 + i as u64 * 7_777, 2_000_000 + i as u64 * 333],
        };
        games.push(game_of(
            crate::discipline::morabaraba::setup(),
            &[p.first.0, p.second.0],
            pair(p.first, p.second),
            json!(r),
            (i == 4).then_some(1),
        ));
        results.push(r);
    }
    let table = morabaraba::rank(&teams, &results, &long_name).unwrap();
    let tally = tally_of(&games);
    let res = Results::new(crate::discipline::Discipline::MORABARABA, table.clone());
    for row in &table.rows {
        let rows = tally.rows_of(row.team);
        assert_eq!(rows.len(), 3);
        let me = rows.iter().find(|r| r.itself).expect("a self-game row");
        assert_eq!(me.games, 2, "both sides of the game against itself");
        assert_eq!(me.won + me.drawn + me.lost, 2);
        let sum = |f: fn(&OpponentRow) -> u64| rows.iter().map(f).sum::<u64>();
        assert_eq!(sum(|r| r.games), u64::from(row.sides));
        assert_eq!(sum(|r| r.won), u64::from(row.won));
        assert_eq!(sum(|r| r.drawn), u64::from(row.drawn));
        assert_eq!(sum(|r| r.lost), u64::from(row.lost));
        assert_eq!(sum(|r| r.cpu_micros), row.cpu_micros);
        let points: i64 = rows.iter().map(|r| r.points).sum();
        assert_eq!(points, row.points.millionths());
        let t = opponent_table(&res, &rows);
        assert_eq!(
            t.total,
            vec![
                "total".to_string(),
                row.sides.to_string(),
                row.won.to_string(),
                row.drawn.to_string(),
                row.lost.to_string(),
                millionths_text(row.points.millionths()),
                format!("{:.3}", row.cpu_micros as f64 / 1e6),
                sum(|r| r.failures).to_string(),
            ]
        );
        let text = summary_text(&res, &rows);
        fits(&text);
        assert!(text.contains("(itself)"), "{text}");
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(SELF_GAME_NOTE), "{text}");
    }
    let text = results_text(&res);
    fits(&text);
    assert!(text.contains(&long_name(TeamId(1))), "{text}");
    let under = text.split_once("\nPlace").unwrap().1;
    let flat = under.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.ends_with(SELF_GAME_NOTE), "under the table: {text}");
    // No two bots have equal points here: no head-to-head column.
    assert!(!head_to_head_shown(&table));
    assert!(!text.contains("  H2H"), "{text}");
    assert!(!table_rows(&res).0.contains(&"Head-to-head".to_string()));
}

/// The ultimatum game: a pairing's two orders, each decided over all
/// repetitions, and Plus and Minus summed, as in the table.
#[test]
fn ultimatum_rows_add_up_to_the_table() {
    let teams = [TeamId(1), TeamId(2), TeamId(3)];
    let tc = ultimatum::Config { repetitions: 3 };
    let mut played = Vec::new();
    let mut games = Vec::new();
    for (i, m) in ultimatum::schedule(&teams, &tc).enumerate() {
        let forfeited_by = (i % 7 == 3).then_some(i % 2);
        let mut points = [(i as u64 * 37) % 100, (i as u64 * 53) % 100];
        if let Some(f) = forfeited_by {
            points[f] = 0;
        }
        let pm = ultimatum::PlayedMatch {
            key: m.key,
            points,
            forfeited_by,
        };
        games.push(game_of(
            crate::discipline::ultimatum::setup(Default::default()),
            &[m.seats[0].0, m.seats[1].0],
            pair(m.seats[0], m.seats[1]),
            json!(pm),
            forfeited_by,
        ));
        played.push(pm);
    }
    let table = ultimatum::table(&teams, &tc, &played, &long_name).unwrap();
    let tally = tally_of(&games);
    let res = Results::new(crate::discipline::Discipline::ULTIMATUM, table.clone());
    for row in &table.rows {
        let rows = tally.rows_of(row.team);
        assert_eq!(rows.len(), 2);
        let sum = |f: fn(&OpponentRow) -> u64| rows.iter().map(f).sum::<u64>();
        assert_eq!(sum(|r| r.won), u64::from(row.won));
        assert_eq!(sum(|r| r.drawn), u64::from(row.drawn));
        assert_eq!(sum(|r| r.lost), u64::from(row.lost));
        assert_eq!(sum(|r| r.points as u64), row.plus_total);
        assert_eq!(sum(|r| r.minus), row.minus_total);
        assert_eq!(sum(|r| r.failures), u64::from(row.forfeits));
        fits(&summary_text(&res, &rows));
    }
    fits(&results_text(&res));
    fits(&results_text(&Results::new(
        crate::discipline::Discipline::ULTIMATUM,
        table.with_prizes(),
    )));
}

/// FootSteps: the round robin's games as in the table, the replays'
/// wins as its replay column.
#[test]
fn footsteps_rows_add_up_to_the_table_and_its_replays() {
    let teams = [TeamId(1), TeamId(2), TeamId(3)];
    let config = footsteps::Config {
        games_per_pair: 4,
        max_tie_rounds: 2,
    };
    // 1 beats everybody; 2 and 3 draw, so they play again.
    let winner = |k: &footsteps::GameKey| {
        if k.pair.contains(&TeamId(1)) {
            Some(TeamId(1))
        } else if k.round == 2 && k.game == 0 {
            Some(k.pair[1])
        } else {
            None
        }
    };
    let mut played = Vec::new();
    let table = loop {
        match footsteps::plan(&teams, &config, &played, &long_name).unwrap() {
            footsteps::Plan::Done(t) => break t,
            footsteps::Plan::Play { games, .. } => {
                for g in games {
                    played.push(footsteps::PlayedGame {
                        key: g.key,
                        winner: winner(&g.key),
                    });
                }
            }
        }
    };
    let games: Vec<StoredGame> = played
        .iter()
        .map(|p| {
            let s = p.key.seats();
            game_of(
                crate::discipline::footsteps::setup(Default::default()),
                &[s[0].0, s[1].0],
                pair(s[0], s[1]),
                json!(p),
                None,
            )
        })
        .collect();
    let tally = tally_of(&games);
    let res = Results::new(crate::discipline::Discipline::FOOTSTEPS, table.clone());
    assert!(table.rows.iter().any(|r| !r.tie_wins.is_empty()));
    for row in &table.rows {
        let rows = tally.rows_of(row.team);
        let sum = |f: fn(&OpponentRow) -> u64| rows.iter().map(f).sum::<u64>();
        assert_eq!(sum(|r| r.won), u64::from(row.won));
        assert_eq!(sum(|r| r.drawn), u64::from(row.drawn));
        assert_eq!(sum(|r| r.lost), u64::from(row.lost));
        assert_eq!(
            sum(|r| r.replay_won),
            row.tie_wins.iter().map(|&w| u64::from(w)).sum::<u64>()
        );
        fits(&summary_text(&res, &rows));
    }
    fits(&results_text(&res));
}

/// The flooding island: a bot's islands' means add up to its score, and
/// an organizer's island with a long name keeps the table in 72
/// columns, the islands named.
#[test]
fn flooding_rows_add_up_to_the_score_and_long_islands_fit() {
    let teams = [TeamId(1), TeamId(2)];
    let ids = [flooding::IslandId(0), flooding::IslandId(1)];
    let format = flooding::FloodingFormat { runs: 3 };
    let island = Island::parse(crate::discipline::flooding::TEST_ISLANDS[0].1).unwrap();
    let mut results = Vec::new();
    let mut games = Vec::new();
    for &team in &teams {
        for island_id in ids {
            for run in 0..3 {
                let r = flooding::RunResult {
                    team,
                    island: island_id,
                    run,
                    rounds: 10 + run * 7 + team.0,
                };
                let mut g = game_of(
                    crate::discipline::data::Tagged::new(
                        crate::discipline::Discipline::FLOODING,
                        crate::discipline::flooding::FloodSetup {
                            island: island.clone(),
                            params: Default::default(),
                            seed: 1,
                        },
                    ),
                    &[team.0],
                    format!("{}@{}", team.0, island_id.0),
                    json!(r),
                    None,
                );
                g.subject = format!("island{}", island_id.0);
                games.push(g);
                results.push(r);
            }
        }
    }
    let table = flooding::rank(&teams, &ids, format, &results, &long_name).unwrap();
    let tally = tally_of(&games);
    let islands = vec![
        "lagoon".to_string(),
        "the_organizers_very_long_island_name".to_string(),
        "atoll".into(),
        "ridge".into(),
        "a_team_island_named_at_length_too".into(),
    ];
    let res = Results::new(
        crate::discipline::Discipline::FLOODING,
        crate::discipline::flooding::FloodResults {
            islands: islands[..2].to_vec(),
            table: table.clone(),
        },
    );
    for row in &table.rows {
        let rows = tally.rows_of(row.team);
        let t = opponent_table(&res, &rows);
        assert_eq!(t.total[2], format!("{:.2}", row.score.as_f64()));
        fits(&summary_text(&res, &rows));
    }
    let text = results_text(&res);
    fits(&text);
    let head = text.lines().find(|l| l.starts_with("Place")).unwrap();
    assert!(head.ends_with("Score"), "Score on the head's line: {text}");
    assert!(
        text.contains("the_organizers_very_long_island_name"),
        "the cut island is named in full: {text}"
    );
    // Five islands, two of them long: still 72 columns.
    let mut wide = table.clone();
    for r in &mut wide.rows {
        let first = r.islands[0].clone();
        while r.islands.len() < islands.len() {
            r.islands.push(first.clone());
        }
    }
    let text = results_text(&Results::new(
        crate::discipline::Discipline::FLOODING,
        crate::discipline::flooding::FloodResults {
            islands: islands.clone(),
            table: wide,
        },
    ));
    fits(&text);
    assert!(text.contains("a_team_island_named_at_length_too"), "{text}");
}

#[test]
fn a_long_name_is_cut_in_its_middle_and_marked() {
    assert_eq!(fit_name("short", 10), "short");
    assert_eq!(
        fit_name("a_team_name_1 (itself)", 20),
        "a_team_na...(itself)"
    );
    assert_eq!(fit_name("abcdefghijkl", 8), "abc...kl");
    let cols = [
        TextColumn::names("Bot", vec!["x".repeat(100)]),
        TextColumn::numbers("Points", vec!["1.000000".into()]),
    ];
    let text = columns_text(&cols);
    assert!(
        text.lines().all(|l| l.chars().count() <= TEXT_WIDTH),
        "{text}"
    );
    assert!(text.contains("xxx...xxx"), "{text}");
}

/// The keys of a pairing's games as [`game_order`] lists them for `seam`.
fn ordered_keys(seam: &dyn crate::discipline::seam::BotDiscipline, keys: &[String]) -> Vec<String> {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute("CREATE TABLE bot_games (game_key TEXT)", [])
        .unwrap();
    for key in keys {
        conn.execute("INSERT INTO bot_games VALUES (?1)", [key])
            .unwrap();
    }
    let mut st = conn
        .prepare(&format!(
            "SELECT game_key FROM bot_games ORDER BY {}",
            game_order(seam.key_order()).unwrap()
        ))
        .unwrap();
    let keys = st
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|k| k.unwrap())
        .collect();
    keys
}

/// Issue 36: a pairing's runs in the order of their numbers, not as
/// text (0, 1, 10, …, 19, 2): the order the flooding island's seam names.
#[test]
fn a_pairings_games_are_in_the_order_of_their_numbers() {
    let keys: Vec<String> = (0..12)
        .rev()
        .map(|run| format!(r#"{{"island":0,"run":{run},"team":1}}"#))
        .collect();
    let runs: Vec<u32> = ordered_keys(&crate::discipline::flooding::Flooding, &keys)
        .iter()
        .map(|k| serde_json::from_str::<FloodKey>(k).unwrap().run)
        .collect();
    assert_eq!(runs, (0..12).collect::<Vec<u32>>());
    // The ultimatum game: by repetition, then by slot.
    let keys: Vec<String> = [(10, 0), (2, 5), (2, 10), (0, 3)]
        .iter()
        .map(|&(repetition, slot)| {
            serde_json::to_string(&ultimatum::MatchKey { repetition, slot }).unwrap()
        })
        .collect();
    let order: Vec<(u32, u32)> = ordered_keys(&crate::discipline::ultimatum::Ultimatum, &keys)
        .iter()
        .map(|k| {
            let k: ultimatum::MatchKey = serde_json::from_str(k).unwrap();
            (k.repetition, k.slot)
        })
        .collect();
    assert_eq!(order, [(0, 3), (2, 5), (2, 10), (10, 0)]);
}

/// Each seam's key order names numeric fields of its own keys (a field
/// renamed in a key would order nothing).
#[test]
fn every_key_order_field_is_a_number_of_the_disciplines_key() {
    let keys = [
        (
            crate::discipline::registry::of(Discipline::ULTIMATUM).unwrap(),
            serde_json::to_value(ultimatum::MatchKey {
                repetition: 1,
                slot: 2,
            })
            .unwrap(),
        ),
        (
            crate::discipline::registry::of(Discipline::FLOODING).unwrap(),
            serde_json::to_value(FloodKey {
                island: 1,
                run: 2,
                team: TeamId(3),
            })
            .unwrap(),
        ),
        (
            crate::discipline::registry::of(Discipline::FOOTSTEPS).unwrap(),
            serde_json::to_value(footsteps::GameKey {
                round: 1,
                pair: [TeamId(1), TeamId(2)],
                game: 3,
            })
            .unwrap(),
        ),
    ];
    for (seam, key) in keys {
        assert!(!seam.key_order().is_empty(), "{}", seam.discipline());
        for field in seam.key_order() {
            assert!(
                key[field].is_u64(),
                "{}: {field} in {key}",
                seam.discipline()
            );
        }
    }
    let morabaraba = crate::discipline::registry::of(Discipline::MORABARABA).unwrap();
    assert!(morabaraba.key_order().is_empty(), "one game per pairing");
}

/// A seam's key field reaches the SQL only as a plain name.
#[test]
fn a_key_field_that_is_no_plain_name_is_refused() {
    assert_eq!(
        game_order(&["round", "_2", "run_10"]).unwrap(),
        "json_extract(game_key, '$.round'), json_extract(game_key, '$._2'), \
         json_extract(game_key, '$.run_10'), game_key"
    );
    assert_eq!(game_order(&[]).unwrap(), "game_key");
    for bad in ["", "2run", "run'), game_key --", "a.b", "run ", "rün"] {
        let e = game_order(&["round", bad]).unwrap_err();
        assert!(e.contains("no plain name"), "{bad}: {e}");
    }
}

#[test]
fn a_contests_name_says_its_discipline_once() {
    assert_eq!(
        contest_heading(
            "freiesMagazin ultimatum demo contest",
            Discipline::ULTIMATUM
        ),
        "freiesMagazin ultimatum demo contest"
    );
    assert_eq!(
        contest_heading("Spring contest", Discipline::FLOODING),
        "Spring contest (the flooding island)"
    );
}

// --- the planners, fed one stored game at a time -------------------------

/// A number from a game's key (FNV-1a), to make up varied results.
fn key_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A made-up planner result of a game of `d` (varied by its key: wins,
/// draws, CPU times, points, forfeits).
fn made_up_result(d: Discipline, key: &str) -> String {
    let h = key_hash(key);
    let json = if d == Discipline::MORABARABA {
        json!(morabaraba::GameResult {
            pairing: serde_json::from_str(key).unwrap(),
            winner: [None, Some(0), Some(1)][(h % 3) as usize],
            cpu_micros: [h % 5_000_000, (h >> 24) % 5_000_000],
        })
    } else if d == Discipline::FLOODING {
        let k: FloodKey = serde_json::from_str(key).unwrap();
        json!(flooding::RunResult {
            team: k.team,
            island: flooding::IslandId(k.island),
            run: k.run,
            rounds: (h % 60) as u32,
        })
    } else if d == Discipline::ULTIMATUM {
        json!(ultimatum::PlayedMatch {
            key: serde_json::from_str(key).unwrap(),
            points: [h % 1000, (h >> 16) % 1000],
            forfeited_by: h.is_multiple_of(11).then_some(((h >> 8) % 2) as usize),
        })
    } else if d == Discipline::FOOTSTEPS {
        let key: footsteps::GameKey = serde_json::from_str(key).unwrap();
        // Each side wins every other game of a pair, but the first bot
        // draws its first games: the others tie, and tie again in every
        // replay (until the last allowed).
        let winner = if key.round == 0 && key.game == 0 && key.pair[0] == TeamId(2) {
            None
        } else {
            Some(key.pair[(key.game % 2) as usize])
        };
        json!(footsteps::PlayedGame { key, winner })
    } else {
        panic!("no made-up results for {d}")
    };
    json.to_string()
}

/// Plays a contest of `d` through its planner alone, handing out at most
/// `limit` games at a time: the (key, result) of each game in the order
/// handed out. Checks that a batch is never longer than asked and that a
/// batch handed out again before it is stored is the same.
fn planned_in_batches(p: &mut dyn Planner, d: Discipline, limit: usize) -> Vec<(String, String)> {
    let mut order = Vec::new();
    loop {
        let batch = p.next_games(limit).unwrap();
        assert!(
            batch.len() <= limit,
            "{d}: {} games for {limit}",
            batch.len()
        );
        if batch.is_empty() {
            return order;
        }
        let again: Vec<String> = p
            .next_games(limit)
            .unwrap()
            .into_iter()
            .map(|g| g.key)
            .collect();
        let keys: Vec<String> = batch.iter().map(|g| g.key.clone()).collect();
        assert_eq!(again, keys, "{d}: not stored, handed out again alike");
        for key in keys {
            let result = made_up_result(d, &key);
            p.add(&key, &result).unwrap();
            order.push((key, result));
        }
    }
}

/// The planner of `d` with `n` teams under `config`: its games in batches
/// give the same games as one batch of all (in the same order, unless
/// the ultimatum game's folders are kept: then phase by phase); fed the
/// results in another order it makes the same table, which is today's
/// table from all the results at once; a game added twice is refused.
fn check_planner(d: Discipline, n: u32, config: &Config) -> usize {
    let seam = crate::discipline::registry::of(d).unwrap();
    // Team ids other than their places; names shared by some, so that
    // their order decides.
    let teams: Vec<TeamId> = (0..n).map(|i| TeamId(3 * i + 2)).collect();
    let names = |t: TeamId| format!("bot {}", t.0 % 4);
    let sections = config.sections();
    let materials = seam.materials(&sections, 7, &[]).unwrap();
    let view = ContestView {
        seed: 7,
        teams: &teams,
        names: &names,
        materials: &materials,
        sections: &sections,
    };
    let mut p = seam.planner(&view).unwrap();
    let order = planned_in_batches(p.as_mut(), d, 7);
    assert!(order.len() > 7, "{d}: more than one batch");
    let keys: Vec<&str> = order.iter().map(|(k, _)| k.as_str()).collect();
    let distinct: BTreeSet<&str> = keys.iter().copied().collect();
    assert_eq!(distinct.len(), keys.len(), "{d}: each game handed out once");
    let kept = d == Discipline::ULTIMATUM && config.ultimatum.kept_folder_bytes().is_some();
    if kept {
        // One phase at a time, in order: each bot at most once a batch.
        let phases: Vec<u64> = order
            .iter()
            .map(|(k, _)| ultimatum::phase(teams.len(), &serde_json::from_str(k).unwrap()))
            .collect();
        assert!(phases.windows(2).all(|w| w[0] <= w[1]), "{d}: {phases:?}");
        assert_eq!(
            phases.last().map(|p| p + 1),
            Some(
                u64::from(config.ultimatum.repetitions)
                    * ultimatum::phases_per_repetition(teams.len())
            )
        );
    } else {
        let all: Vec<String> = seam
            .planner(&view)
            .unwrap()
            .next_games(usize::MAX)
            .unwrap()
            .into_iter()
            .map(|g| g.key)
            .collect();
        // FootSteps: the round robin first (the tie replays follow from it).
        assert_eq!(
            all,
            keys[..all.len()],
            "{d}: the same order whatever the batch"
        );
        if d != Discipline::FOOTSTEPS {
            assert_eq!(all.len(), keys.len());
        }
    }
    let (key, result) = &order[order.len() / 2];
    assert!(p.add(key, result).is_err(), "{d}: a game added twice");
    let table = p.results(ContestState::Finished).unwrap().expect("a table");

    // Fed in another order (by a hash of the key), the same table.
    let mut shuffled = order.clone();
    shuffled.sort_by_key(|(k, _)| key_hash(k));
    assert_ne!(shuffled, order);
    let mut q = seam.planner(&view).unwrap();
    for (k, r) in &shuffled {
        q.add(k, r).unwrap();
    }
    assert!(q.next_games(5).unwrap().is_empty(), "{d}: complete");
    assert_eq!(
        q.results(ContestState::Finished).unwrap().as_ref(),
        Some(&table)
    );

    // Today's table: the pure planner's, from every result at once.
    let parse = |r: &String| -> serde_json::Value { serde_json::from_str(r).unwrap() };
    let results: Vec<serde_json::Value> = order.iter().map(|(_, r)| parse(r)).collect();
    if d == Discipline::MORABARABA {
        let all: Vec<morabaraba::GameResult> = results
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        let today = morabaraba::rank(&teams, &all, &names).unwrap();
        assert_eq!(table.get::<morabaraba::MorabarabaTable>(), &today);
    } else if d == Discipline::FLOODING {
        let all: Vec<flooding::RunResult> = results
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        let islands: Vec<flooding::IslandId> = (0..materials.len() as u32)
            .map(flooding::IslandId)
            .collect();
        let format = flooding::FloodingFormat {
            runs: config.flooding.runs,
        };
        let today = flooding::rank(&teams, &islands, format, &all, &names).unwrap();
        let got = table.get::<crate::discipline::flooding::data::FloodResults>();
        assert_eq!(got.table, today);
        assert!(got.table.complete);
    } else if d == Discipline::FOOTSTEPS {
        let all: Vec<footsteps::PlayedGame> = results
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        let today = footsteps::plan(&teams, &config.footsteps.tournament(), &all, &names).unwrap();
        let footsteps::Plan::Done(today) = today else {
            panic!("{d}: not done: {today:?}")
        };
        assert!(today.tie_rounds > 0, "{d}: replays played");
        assert_eq!(table.get::<footsteps::Table>(), &today);
    } else {
        let all: Vec<ultimatum::PlayedMatch> = results
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        let tournament = ultimatum::Config {
            repetitions: config.ultimatum.repetitions,
        };
        let today = ultimatum::table(&teams, &tournament, &all, &names).unwrap();
        assert_eq!(table.get::<ultimatum::Table>(), &today);
    }
    order.len()
}

#[test]
fn a_planner_fed_in_any_order_makes_todays_table_and_hands_out_bounded_batches() {
    let mut config = Config::default();
    config.flooding.runs = 3;
    config.ultimatum.repetitions = 3;
    assert_eq!(check_planner(Discipline::MORABARABA, 5, &config), 25);
    assert_eq!(check_planner(Discipline::FLOODING, 4, &config), 4 * 3 * 3);
    assert_eq!(check_planner(Discipline::ULTIMATUM, 5, &config), 3 * 5 * 4);
    assert_eq!(check_planner(Discipline::ULTIMATUM, 6, &config), 3 * 6 * 5);
    config.footsteps.games_per_pair = 4;
    assert!(check_planner(Discipline::FOOTSTEPS, 6, &config) > 4 * 15);
    config.ultimatum.folders = crate::discipline::ultimatum::config::FolderKeeping::Fresh;
    assert_eq!(check_planner(Discipline::ULTIMATUM, 5, &config), 3 * 5 * 4);
}

/// An unfinished ultimatum contest has no table yet, and a finished one
/// with a match missing names it.
#[test]
fn the_ultimatum_planner_names_the_first_missing_match() {
    let mut config = Config::default();
    config.ultimatum.folders = crate::discipline::ultimatum::config::FolderKeeping::Fresh;
    let seam = crate::discipline::registry::of(Discipline::ULTIMATUM).unwrap();
    let teams = [TeamId(1), TeamId(2), TeamId(3)];
    let names = |t: TeamId| format!("bot {}", t.0);
    let sections = config.sections();
    let view = ContestView {
        seed: 1,
        teams: &teams,
        names: &names,
        materials: &[],
        sections: &sections,
    };
    let mut p = seam.planner(&view).unwrap();
    let first = p.next_games(1).unwrap().remove(0);
    p.add(
        &first.key,
        &made_up_result(Discipline::ULTIMATUM, &first.key),
    )
    .unwrap();
    assert_eq!(p.results(ContestState::Running).unwrap(), None);
    let e = p.results(ContestState::Finished).unwrap_err();
    assert!(
        e.contains("matches are not played yet (the first is repetition 1 match 2)"),
        "{e}"
    );
    assert!(p.add("{\"repetition\":0,\"slot\":99}", "{}").is_err());
}

/// The small fields and the smallest formats, one game at a time: one
/// team, two, three; the flooding island with one run; the ultimatum game
/// with one repetition (folders kept or not); FootSteps with one game per
/// pair and several tie replays. Each game is handed out once, the run
/// ends, and the table is the one of every result at once.
#[test]
fn the_planners_end_on_small_fields_one_game_at_a_time() {
    let mut config = Config::default();
    config.flooding.runs = 1;
    config.ultimatum.repetitions = 1;
    config.footsteps.games_per_pair = 1;
    config.footsteps.max_tie_rounds = 3;
    for fresh in [false, true] {
        if fresh {
            config.ultimatum.folders = crate::discipline::ultimatum::config::FolderKeeping::Fresh;
        }
        for d in [
            Discipline::MORABARABA,
            Discipline::FLOODING,
            Discipline::ULTIMATUM,
            Discipline::FOOTSTEPS,
        ] {
            for n in 1..=3u32 {
                let seam = crate::discipline::registry::of(d).unwrap();
                let teams: Vec<TeamId> = (0..n).map(|i| TeamId(i + 2)).collect();
                let names = |t: TeamId| format!("bot {}", t.0);
                let sections = config.sections();
                let materials = seam.materials(&sections, 7, &[]).unwrap();
                let view = ContestView {
                    seed: 7,
                    teams: &teams,
                    names: &names,
                    materials: &materials,
                    sections: &sections,
                };
                let mut p = seam.planner(&view).unwrap();
                let order = planned_in_batches(p.as_mut(), d, 1);
                let distinct: BTreeSet<&String> = order.iter().map(|(k, _)| k).collect();
                assert_eq!(distinct.len(), order.len(), "{d} {n}: each game once");
                let table = p.results(ContestState::Finished).unwrap();
                assert!(table.is_some(), "{d} {n}: a table");
                let mut q = seam.planner(&view).unwrap();
                for (k, r) in order.iter().rev() {
                    q.add(k, r).unwrap();
                }
                assert!(q.next_games(3).unwrap().is_empty(), "{d} {n}: complete");
                assert_eq!(q.results(ContestState::Finished).unwrap(), table, "{d} {n}");
            }
        }
    }
}

/// With kept folders, asking the ultimatum planner for no games changes
/// nothing: the next ask still hands out the earliest phase (the planner
/// must not step past a phase it handed nothing of).
#[test]
fn the_ultimatum_planner_asked_for_no_games_still_plays_every_phase() {
    let config = Config::default();
    assert!(
        config.ultimatum.kept_folder_bytes().is_some(),
        "kept folders"
    );
    let seam = crate::discipline::registry::of(Discipline::ULTIMATUM).unwrap();
    let teams = [TeamId(1), TeamId(2), TeamId(3), TeamId(4)];
    let names = |t: TeamId| format!("bot {}", t.0);
    let sections = config.sections();
    let view = ContestView {
        seed: 1,
        teams: &teams,
        names: &names,
        materials: &[],
        sections: &sections,
    };
    let mut p = seam.planner(&view).unwrap();
    assert!(p.next_games(0).unwrap().is_empty());
    let first: Vec<String> = p
        .next_games(10)
        .unwrap()
        .into_iter()
        .map(|g| g.key)
        .collect();
    let phase0: Vec<String> = ultimatum::phase_matches(&teams, 0)
        .into_iter()
        .map(|m| serde_json::to_string(&m.key).unwrap())
        .collect();
    assert_eq!(first, phase0);
}

/// A planner for the guard's tests: hands out `0` whatever it is asked,
/// counts nothing, makes no table.
struct HandsOut(Vec<crate::discipline::seam::PlannedGame>);

impl Planner for HandsOut {
    fn add(&mut self, _key: &str, _result: &str) -> std::result::Result<(), String> {
        Ok(())
    }
    fn next_games(
        &mut self,
        _limit: usize,
    ) -> std::result::Result<Vec<crate::discipline::seam::PlannedGame>, String> {
        Ok(self.0.clone())
    }
    fn results(&self, _state: ContestState) -> std::result::Result<Option<Results>, String> {
        Ok(None)
    }
}

/// A planner that hands out one game twice in a batch is refused before
/// either is played (the game would be played twice, stored once).
#[test]
fn the_contest_run_refuses_a_batch_with_a_game_twice() {
    use crate::bench_site::{ContestState as Stored, ScriptedContest};
    let s = ScriptedContest::start(Discipline::MORABARABA, 2, None, Stored::Running).unwrap();
    let c = contest(s.store.conn(), s.config.contest.discipline)
        .unwrap()
        .unwrap();
    let teams = team_ids(&c);
    let game = crate::discipline::seam::PlannedGame {
        key: serde_json::to_string(&morabaraba::Pairing {
            first: teams[0],
            second: teams[1],
        })
        .unwrap(),
        seats: vec![teams[0], teams[1]],
        setup: crate::discipline::morabaraba::data::setup(),
    };
    let e = next_jobs(
        s.store.conn(),
        &c,
        &mut HandsOut(vec![game.clone(), game]),
        10,
    )
    .unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
}

/// A contest whose stored entries name a team twice (a damaged or
/// hand-edited store: registrations are one per team) plays no game
/// twice: Morabaraba's and the flooding island's planners would hand out
/// the same key twice in one batch.
#[test]
fn a_contest_with_a_team_entered_twice_plays_no_game_twice() {
    use crate::bench_site::{ContestState as Stored, ScriptedContest};
    for d in [Discipline::MORABARABA, Discipline::FLOODING] {
        let s = ScriptedContest::start(d, 2, None, Stored::Running).unwrap();
        let mut c = contest(s.store.conn(), s.config.contest.discipline)
            .unwrap()
            .unwrap();
        let again = c.entries[0].clone();
        c.entries.push(again);
        let players = Recording {
            players: s.players,
            fail: None,
            played: Default::default(),
        };
        let r = play_all_in_batches(
            &s.store,
            &c,
            &s.config,
            Players::InProcess(&players),
            &chrono::Utc::now,
            1000,
        );
        assert!(r.is_err(), "{d}: a damaged contest is refused");
        let played = players.played.lock().unwrap().len();
        let stored = stored_results(s.store.conn()).len();
        assert_eq!(played, stored, "{d}: every game played is stored, once");
    }
}

/// A scripted player for the contest run's tests: records the seats of
/// every game it plays, and fails the game of `fail`'s seats.
struct Recording {
    players: crate::discipline::seam::ScriptedPlayers,
    fail: Option<Vec<TeamId>>,
    played: std::sync::Mutex<Vec<Vec<TeamId>>>,
}

impl InProcessPlayers for Recording {
    fn play(
        &self,
        setup: &Setup,
        seats: &[TeamId],
        _transcript: crate::discipline::play::Transcript,
        folders: Option<&[crate::sandbox::folder::FolderImage]>,
    ) -> std::result::Result<Played, String> {
        self.played.lock().unwrap().push(seats.to_vec());
        if self.fail.as_deref() == Some(seats) {
            return Err("the test's failing game".into());
        }
        let (outcome, _) = (self.players.play)(setup);
        let n = seats.len();
        Ok(Played {
            outcome: outcome.map(|o| (self.players.vary)(&o, seats[0].0 as usize)),
            failures: Vec::new(),
            cpu_ms: vec![3; n],
            // CPU times by seat and team: Morabaraba's points differ.
            cpu_us: seats
                .iter()
                .enumerate()
                .map(|(i, t)| 100_000 * u64::from(t.0) + 7_000 * i as u64)
                .collect(),
            wall_ms: 10,
            stderr: vec![String::new(); n],
            transcript: None,
            transcript_truncated: false,
            moves: None,
            folders: folders.map(|f| f.to_vec()),
        })
    }
}

/// Every stored game of the contest: (key, planner result), by key.
fn stored_results(conn: &Connection) -> Vec<(String, String)> {
    let mut st = conn
        .prepare("SELECT game_key, result FROM bot_games ORDER BY game_key")
        .unwrap();
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.collect::<std::result::Result<_, _>>().unwrap()
}

/// A run stopped in the middle of a batch (one game of it failed, the
/// others stored) resumes with the missing games only, each played once,
/// and ends with the stored results and the table of a run in one go.
#[test]
fn a_run_stopped_mid_batch_resumes_playing_each_missing_game_once() {
    use crate::bench_site::{ContestState as Stored, ScriptedContest};
    let d = Discipline::MORABARABA;
    let whole = ScriptedContest::start(d, 4, None, Stored::Running).unwrap();
    let c = contest(whole.store.conn(), whole.config.contest.discipline)
        .unwrap()
        .unwrap();
    let teams = team_ids(&c);
    let once = Recording {
        players: whole.players,
        fail: None,
        played: Default::default(),
    };
    let expected = play_all_by(
        &whole.store,
        &c,
        &whole.config,
        Players::InProcess(&once),
        &chrono::Utc::now,
    )
    .unwrap();
    assert_eq!(once.played.lock().unwrap().len(), 16);

    let stopped = ScriptedContest::start(d, 4, None, Stored::Running).unwrap();
    let c = contest(stopped.store.conn(), stopped.config.contest.discipline)
        .unwrap()
        .unwrap();
    assert_eq!(team_ids(&c), teams);
    // Batches of 4, first player by first player: the game of the second
    // bot against the first is the second game of the second batch.
    let failing = Recording {
        players: stopped.players,
        fail: Some(vec![teams[1], teams[0]]),
        played: Default::default(),
    };
    let run = |players: &Recording| {
        play_all_in_batches(
            &stopped.store,
            &c,
            &stopped.config,
            Players::InProcess(players),
            &chrono::Utc::now,
            4,
        )
    };
    assert!(matches!(run(&failing), Err(BotContestError::Match(_))));
    assert_eq!(failing.played.lock().unwrap().len(), 8);
    let before = stored_results(stopped.store.conn());
    assert_eq!(before.len(), 7);

    let resumed = Recording {
        players: stopped.players,
        fail: None,
        played: Default::default(),
    };
    let results = run(&resumed).unwrap();
    let played = resumed.played.lock().unwrap().clone();
    assert_eq!(played.len(), 9, "{played:?}");
    let distinct: BTreeSet<&Vec<TeamId>> = played.iter().collect();
    assert_eq!(distinct.len(), 9, "each missing game once: {played:?}");
    assert!(played.contains(&vec![teams[1], teams[0]]));
    for (key, _) in &before {
        let p: morabaraba::Pairing = serde_json::from_str(key).unwrap();
        assert!(!played.contains(&vec![p.first, p.second]), "{key} again");
    }
    assert_eq!(results, expected);
    assert_eq!(
        stored_results(stopped.store.conn()),
        stored_results(whole.store.conn())
    );
}

/// A planner that hands out a stored game, or one of another contest's
/// teams, is refused before the game is played.
#[test]
fn the_contest_run_refuses_a_planner_asking_for_a_stored_or_foreign_game() {
    use crate::bench_site::{ContestState as Stored, ScriptedContest};
    let d = Discipline::MORABARABA;
    let s = ScriptedContest::start(d, 2, None, Stored::Running).unwrap();
    let c = contest(s.store.conn(), s.config.contest.discipline)
        .unwrap()
        .unwrap();
    let teams = team_ids(&c);
    let game = |first: TeamId, second: TeamId| crate::discipline::seam::PlannedGame {
        key: serde_json::to_string(&morabaraba::Pairing { first, second }).unwrap(),
        seats: vec![first, second],
        setup: crate::discipline::morabaraba::data::setup(),
    };
    let fresh = game(teams[0], teams[1]);
    assert_eq!(
        next_jobs(s.store.conn(), &c, &mut HandsOut(vec![fresh.clone()]), 10)
            .unwrap()
            .len(),
        1
    );
    let played = Played {
        outcome: None,
        failures: Vec::new(),
        cpu_ms: vec![0; 2],
        cpu_us: vec![0; 2],
        wall_ms: 0,
        stderr: vec![String::new(); 2],
        transcript: None,
        transcript_truncated: false,
        moves: None,
        folders: None,
    };
    let planned = PlannedGame {
        key: fresh.key.clone(),
        seats: fresh.seats.clone(),
        setup: fresh.setup.clone(),
        keeps_transcript: false,
    };
    store_planned_game(
        s.store.conn(),
        &c,
        &s.config,
        &planned,
        played,
        chrono::Utc::now(),
    )
    .unwrap();
    for asked in [fresh, game(teams[0], TeamId(999))] {
        let e = next_jobs(s.store.conn(), &c, &mut HandsOut(vec![asked.clone()]), 10).unwrap_err();
        assert!(
            e.to_string()
                .contains("which is stored already or none of this contest's"),
            "{}: {e}",
            asked.key
        );
    }
    // More games than asked for are refused too.
    let e = next_jobs(
        s.store.conn(),
        &c,
        &mut HandsOut(vec![game(teams[1], teams[0])]),
        0,
    )
    .unwrap_err();
    assert!(e.to_string().contains("asked for at most 0"), "{e}");
}

/// A scripted player that hands over its game's transcript when the
/// contest keeps it, as the referee does.
struct Keeping {
    players: crate::discipline::seam::ScriptedPlayers,
}

impl InProcessPlayers for Keeping {
    fn play(
        &self,
        setup: &Setup,
        seats: &[TeamId],
        transcript: crate::discipline::play::Transcript,
        folders: Option<&[crate::sandbox::folder::FolderImage]>,
    ) -> std::result::Result<Played, String> {
        let (outcome, lines) = (self.players.play)(setup);
        let n = seats.len();
        Ok(Played {
            outcome: outcome.map(|o| (self.players.vary)(&o, seats[0].0 as usize)),
            failures: Vec::new(),
            cpu_ms: vec![3; n],
            cpu_us: vec![3000; n],
            wall_ms: 10,
            stderr: vec![String::new(); n],
            transcript: (transcript == crate::discipline::play::Transcript::Keep).then_some(lines),
            transcript_truncated: false,
            moves: None,
            folders: folders.map(|f| f.to_vec()),
        })
    }
}

/// Every kept game's moves are stored packed (a BLOB, schema 0023) and read
/// back as the very transcript played, in every discipline; a row stored
/// before, with the moves as text, reads as the same game; a packed body
/// that would unpack beyond the longest kept game is damaged data, not an
/// allocation.
#[test]
fn kept_moves_are_stored_packed_and_read_back_exactly_old_text_rows_too() {
    use crate::bench_site::{ContestState as Stored, ScriptedContest};
    use crate::discipline::transcript;
    for d in crate::discipline::registry::built_in() {
        let s = ScriptedContest::start(d, 2, Some(1), Stored::Running).unwrap();
        let c = contest(s.store.conn(), s.config.contest.discipline)
            .unwrap()
            .unwrap();
        let players = Keeping { players: s.players };
        play_all_by(
            &s.store,
            &c,
            &s.config,
            Players::InProcess(&players),
            &chrono::Utc::now,
        )
        .unwrap();
        let conn = s.store.conn();
        let packed: Vec<(String, Vec<u8>)> = {
            let mut st = conn
                .prepare("SELECT game_key, moves FROM bot_games WHERE typeof(moves) = 'blob'")
                .unwrap();
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
            rows.collect::<std::result::Result<_, _>>().unwrap()
        };
        let text_rows: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM bot_games WHERE typeof(moves) = 'text'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!packed.is_empty(), "{d}: games keep their moves packed");
        let read = |what: &str| {
            let mut games = Vec::new();
            crate::store::bots::for_each_game(&s.store, &c, &s.config, |g| {
                games.push(g);
                Ok(())
            })
            .map(|()| games)
            .map_err(|e| format!("{d}, {what}: {e}"))
        };
        let games = read("packed").unwrap();
        let mut kept = 0;
        for g in &games {
            let Some(m) = &g.moves else { continue };
            kept += 1;
            let (_, played) = (players.players.play)(&g.setup);
            assert_eq!(g.transcript().unwrap(), played, "{d} {}", g.key);
            assert_eq!(*m, transcript::moves_of(&played, &[]), "{d} {}", g.key);
        }
        assert_eq!(kept, packed.len() + text_rows as usize, "{d}");
        // As an older version stored them: the moves body as text.
        for (key, bytes) in &packed {
            assert_eq!(bytes[0], transcript::packed::PACKED_ZLIB, "{d} {key}");
            let text = transcript::unpack_moves(bytes).unwrap();
            assert!(text.starts_with(transcript::STORED_MOVES_LINE), "{d}");
            conn.execute(
                "UPDATE bot_games SET moves = ?2 WHERE game_key = ?1",
                rusqlite::params![key, text],
            )
            .unwrap();
        }
        let texts = read("text").unwrap();
        assert_eq!(texts.len(), games.len());
        for (a, b) in texts.iter().zip(&games) {
            assert_eq!((&a.key, &a.moves), (&b.key, &b.moves), "{d}");
        }
        // A body that unpacks beyond the longest a kept game has.
        let mut bomb = vec![transcript::packed::PACKED_ZLIB];
        bomb.extend(miniz_oxide::deflate::compress_to_vec_zlib(
            &vec![b'1'; transcript::MAX_MOVES_BYTES + 1],
            1,
        ));
        conn.execute(
            "UPDATE bot_games SET moves = ?2 WHERE game_key = ?1",
            rusqlite::params![packed[0].0, bomb],
        )
        .unwrap();
        let e = read("a bomb").unwrap_err();
        assert!(e.contains("stored data is damaged: moves of"), "{e}");
        assert!(e.contains("more than 8388608 bytes"), "{e}");
    }
}

/// [`Keeping`], but one team's bot prints the most a line may hold (256
/// bytes that do not pack: chance from a fixed seed) wherever it prints.
struct Loud {
    keeping: Keeping,
    loud: TeamId,
}

impl InProcessPlayers for Loud {
    fn play(
        &self,
        setup: &Setup,
        seats: &[TeamId],
        transcript: crate::discipline::play::Transcript,
        folders: Option<&[crate::sandbox::folder::FolderImage]>,
    ) -> std::result::Result<Played, String> {
        let mut p = self.keeping.play(setup, seats, transcript, folders)?;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for e in p.transcript.iter_mut().flatten() {
            if e.said == crate::game::lines::Said::ByBot && seats.get(e.seat) == Some(&self.loud) {
                e.line = (0..256)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        char::from(b'a' + ((x >> 33) % 26) as u8)
                    })
                    .collect();
            }
        }
        Ok(p)
    }
}

/// A hostile bot printing the most it may in every game of a small field
/// meets its transcript budget: each of its kept games is stored without
/// its moves, the record saying it was its lines (never the other team's)
/// and the pairing page saying so in words; the other teams' kept games
/// keep their moves byte for byte; the results and every stored result are
/// the unbudgeted run's. In every discipline.
#[test]
fn a_loud_bot_meets_its_transcript_budget_and_nobody_elses_game_changes() {
    use crate::bench_site::{ContestState as Stored, ScriptedContest};
    let loud = TeamId(1);
    for d in crate::discipline::registry::built_in() {
        // Each run: (results, stored (key, result), games by key).
        let run = |budget: Option<u64>| {
            let mut s = ScriptedContest::start(d, 4, Some(2), Stored::Running).unwrap();
            s.config.site.transcripts_per_pairing = 2;
            let c = contest(s.store.conn(), d).unwrap().unwrap();
            let b = TranscriptBudget::of(&c, &s.config).unwrap();
            s.config.site.transcript_bytes_per_team = match budget {
                Some(per_game) => per_game * b.kept_games,
                None => u64::MAX,
            };
            let players = Loud {
                keeping: Keeping { players: s.players },
                loud,
            };
            let results = play_all_by(
                &s.store,
                &c,
                &s.config,
                Players::InProcess(&players),
                &chrono::Utc::now,
            )
            .unwrap();
            let mut games = BTreeMap::new();
            for_each_game(&s.store, &c, &s.config, |g| {
                games.insert(g.key.clone(), g);
                Ok(())
            })
            .unwrap();
            let stored = stored_results(s.store.conn());
            (
                s,
                c,
                serde_json::to_string(&results).unwrap(),
                stored,
                games,
                results,
                b,
            )
        };
        let (_s0, _, results0, stored0, games0, _, b) = run(None);
        // The budget is shared by at least as many games as a team keeps.
        for t in 1..=4 {
            let kept = games0
                .values()
                .filter(|g| g.moves.is_some() && g.seats.contains(&TeamId(t)))
                .count() as u64;
            assert!(
                kept > 0 && kept <= b.kept_games,
                "{d}: team {t} keeps {kept} of {b:?}"
            );
        }
        // The budget: each game may hold what the largest quiet game stores
        // (its two teams' lines together).
        let stored_len = |g: &StoredGame| {
            let m = g.moves.as_ref().unwrap();
            crate::discipline::transcript::stored_moves(crate::discipline::transcript::moves_body(
                m,
            ))
            .unwrap()
            .len() as u64
        };
        let quiet_max = games0
            .values()
            .filter(|g| g.moves.is_some() && !g.seats.contains(&loud))
            .map(stored_len)
            .max()
            .unwrap();
        let loud_kept = games0
            .values()
            .filter(|g| g.moves.is_some() && g.seats.contains(&loud))
            .count();
        assert!(loud_kept > 0, "{d}: the loud bot's games keep transcripts");
        assert!(games0.values().all(|g| g.moves_not_kept.is_none()), "{d}");
        let (s, c, results, stored, games, table, _) = run(Some(quiet_max));
        assert_eq!(results, results0, "{d}: the same results");
        assert_eq!(stored, stored0, "{d}: the same stored results");
        let mut notes = 0;
        for (key, g0) in &games0 {
            let g = &games[key];
            assert_eq!(g.played, g0.played, "{d} {key}");
            if g0.moves.is_none() {
                assert_eq!(
                    g.moves_not_kept, None,
                    "{d} {key}: a game keeping no transcript"
                );
                continue;
            }
            if g.seats.contains(&loud) {
                let note = g.moves_not_kept.as_ref().expect("a note");
                assert_eq!(g.moves, None, "{d} {key}");
                let seats: Vec<usize> =
                    (0..g.seats.len()).filter(|&i| g.seats[i] == loud).collect();
                assert_eq!(
                    note.over, seats,
                    "{d} {key}: the loud team's lines, nobody else's"
                );
                assert_eq!(note.per_game, quiet_max, "{d}");
                notes += 1;
            } else {
                assert_eq!(g.moves, g0.moves, "{d} {key}: a quiet game keeps its moves");
                assert_eq!(g.moves_not_kept, None, "{d} {key}");
            }
        }
        assert_eq!(notes, loud_kept, "{d}");
        // The loud team's lines take nothing of the database.
        let loud_bytes: i64 = s
            .store
            .conn()
            .query_row(
                "SELECT COALESCE(SUM(length(moves)), 0) FROM bot_games \
                 WHERE seats LIKE '[1,%' OR seats LIKE '%,1]' OR seats = '[1]'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(loud_bytes, 0, "{d}");
        // The pairing page says whose lines, in words.
        let dir = s.tmp.path().join("site");
        crate::site::bots::write(&dir, &s.store, &c, &s.config, &table).unwrap();
        let (key, g) = games
            .iter()
            .find(|(_, g)| g.moves_not_kept.is_some())
            .unwrap();
        let page = std::fs::read_to_string(dir.join(format!(
            "pairing/{}.html",
            crate::store::bots::slug(&g.pairing)
        )))
        .unwrap();
        let words =
            crate::draw::escape("This game's moves were not kept: team bot0001's lines take");
        assert!(page.contains(&words), "{d} {key}: {page}");
    }
}
