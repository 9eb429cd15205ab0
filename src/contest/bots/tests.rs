//! Unit tests of the bot contest (`contest/bots`): the tables and the
//! per-opponent rows agree, names fit, pairings keep their order.

use super::*;
use crate::discipline::flooding::planner::{self as flooding, FloodKey};
use crate::discipline::flooding::rules::Island;
use crate::discipline::footsteps::planner as footsteps;
use crate::discipline::morabaraba::planner as morabaraba;
use crate::discipline::morabaraba::tables::{head_to_head_shown, SELF_GAME_NOTE};
use crate::discipline::play::{Played, Setup};
use crate::discipline::results::summary_text;
use crate::discipline::results::{opponent_table, table_rows};
use crate::discipline::table::OpponentRow;
use crate::discipline::table::{columns_text, fit_name, millionths_text, TextColumn, TEXT_WIDTH};
use crate::discipline::ultimatum::planner as ultimatum;
use crate::tournament::TeamId;
use rusqlite::Connection;
use serde_json::json;

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
