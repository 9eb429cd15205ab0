//! The tournament engine end to end: a folder of strategies, SQLite,
//! parallel referees, rescheduling, disqualification, determinism across
//! thread counts, and resumption after `kill -9`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tournament")
        .join(name)
}

/// A folder with `copies` teams of each listed source (`name_1.c`, …).
fn field(dir: &Path, sources: &[(&str, usize)]) -> PathBuf {
    let d = dir.join("strategies");
    std::fs::create_dir_all(&d).unwrap();
    for (src, copies) in sources {
        let text = std::fs::read(data(&format!("{src}.c"))).unwrap();
        for i in 1..=*copies {
            std::fs::write(d.join(format!("{src}_{i}.c")), &text).unwrap();
        }
    }
    d
}

fn tournament(strategies: &Path, db: &Path, seed: u64, jobs: usize, extra: &[&str]) -> Value {
    let out = crate::common::tournament_run(strategies, db, 60, seed, jobs, extra);
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn small_field_plays_one_final_group_with_self_games_and_evolution() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(
        tmp.path(),
        &[("cooperator", 2), ("climber", 2), ("follower", 1)],
    );
    let r = tournament(&dir, &tmp.path().join("k.db"), 3, 2, &[]);
    let rounds = r["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 1, "5 teams play one final group");
    let group = &rounds[0]["groups"][0];
    assert_eq!(group["members"].as_array().unwrap().len(), 5);
    // 5 teams: 10 pairs + 5 self-games.
    let counted: Vec<&Value> = group["games"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["counted"] == true)
        .collect();
    assert_eq!(counted.len(), 15);
    let self_games = counted
        .iter()
        .filter(|g| g["players"][0] == g["players"][1])
        .count();
    assert_eq!(self_games, 5);
    // The winners are the final group's ranking; places start at 1.
    let winners = r["winners"].as_array().unwrap();
    assert_eq!(winners.len(), 5);
    assert_eq!(winners[0]["place"], 1);
    assert_eq!(r["seed"], 3);
    // Evolution: 5 exemplars each, every generation sums to 25.
    let evo = &r["evolution"];
    assert_eq!(evo["population"], 25);
    for g in evo["generations"].as_array().unwrap() {
        let total: u64 = g["counts"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(total, 25);
    }
    assert!(!evo["ranking"].as_array().unwrap().is_empty());
}

#[test]
fn a_crashing_strategy_is_rescheduled_once_then_disqualified_and_voided() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), &[("cooperator", 3), ("crasher", 1)]);
    let r = tournament(&dir, &tmp.path().join("k.db"), 11, 2, &[]);
    let round = &r["rounds"][0];
    let dq = round["disqualified"].as_array().unwrap();
    assert_eq!(dq.len(), 1);
    assert_eq!(dq[0]["team"], "crasher_1");
    assert!(
        dq[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("throw 6: crashed"),
        "{}",
        dq[0]["reason"]
    );
    let games = round["groups"][0]["games"].as_array().unwrap();
    // No counted game involves the disqualified team, for its opponents neither.
    for g in games.iter().filter(|g| g["counted"] == true) {
        assert_ne!(g["players"][0], "crasher_1");
        assert_ne!(g["players"][1], "crasher_1");
    }
    // Its first failure was rescheduled (status discarded, a later attempt 2 exists).
    assert!(games.iter().any(|g| g["status"] == "discarded"));
    // The ranking lists the other three only.
    let ranking = round["groups"][0]["ranking"].as_array().unwrap();
    assert_eq!(ranking.len(), 3);
    assert!(ranking.iter().all(|e| e["team"] != "crasher_1"));
    // Cooperators playing each other score equally: a shared first place.
    assert!(ranking.iter().all(|e| e["place"] == 1), "{ranking:?}");
}

#[test]
fn same_seed_same_results_whatever_the_number_of_workers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(
        tmp.path(),
        &[
            ("cooperator", 2),
            ("climber", 3),
            ("gambler", 3),
            ("follower", 2),
        ],
    );
    let a = tournament(&dir, &tmp.path().join("a.db"), 42, 1, &[]);
    let b = tournament(&dir, &tmp.path().join("b.db"), 42, 2, &[]);
    assert_eq!(a, b);
    // The gamblers fail now and then: rescheduled games show up.
    let games = a["rounds"][0]["groups"][0]["games"].as_array().unwrap();
    assert!(
        games.iter().any(|g| g["attempt"] != 1),
        "expected a rescheduled game"
    );
    // A different seed gives a different tournament.
    let c = tournament(&dir, &tmp.path().join("c.db"), 43, 2, &[]);
    assert_ne!(a["rounds"], c["rounds"]);
}

fn count_games(db: &Path) -> i64 {
    let Ok(conn) = rusqlite::Connection::open(db) else {
        return 0;
    };
    conn.query_row("SELECT COUNT(*) FROM games", [], |r| r.get(0))
        .unwrap_or(0)
}

#[test]
fn killed_with_sigkill_mid_round_resumes_to_identical_results() {
    let tmp = tempfile::tempdir().unwrap();
    // 45 teams: two groups in round 1, then a final.
    let dir = field(
        tmp.path(),
        &[("cooperator", 15), ("climber", 15), ("follower", 15)],
    );
    let reference = tournament(&dir, &tmp.path().join("ref.db"), 5, 2, &[]);
    assert_eq!(reference["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(
        reference["rounds"][0]["groups"].as_array().unwrap().len(),
        2
    );

    let db = tmp.path().join("killed.db");
    let mut child = Command::new(BIN)
        .args([
            "tournament",
            "--json",
            "--throws",
            "60",
            "--seed",
            "5",
            "--jobs",
            "2",
            "--strategies",
        ])
        .arg(&dir)
        .arg("--db")
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while count_games(&db) < 100 {
        assert!(start.elapsed() < Duration::from_secs(120), "no progress");
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let stored = count_games(&db);
    assert!(
        (100..529 + 276).contains(&stored),
        "killed mid-run ({stored} games)"
    );

    // Running the same command again resumes (with another worker count, even).
    let resumed = tournament(&dir, &db, 5, 1, &[]);
    assert_eq!(resumed, reference);
    // Nothing was played twice: one row per slot.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let dup: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM (SELECT 1 FROM games GROUP BY tournament_id, round, grp, slot HAVING COUNT(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dup, 0);
}

#[test]
fn rejected_strategies_are_listed_and_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), &[("cooperator", 2)]);
    std::fs::write(dir.join("broken.c"), "main() { for (;;) make_throw(1) }\n").unwrap();
    let r = tournament(&dir, &tmp.path().join("k.db"), 1, 1, &[]);
    let rejected = r["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0]["team"], "broken");
    let errors: Vec<&str> = rejected[0]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("description")),
        "{errors:?}"
    );
    assert_eq!(r["winners"].as_array().unwrap().len(), 2);
}

#[test]
fn a_finished_tournament_is_not_played_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(tmp.path(), &[("cooperator", 2), ("climber", 1)]);
    let db = tmp.path().join("k.db");
    let a = tournament(&dir, &db, 9, 2, &[]);
    let before = count_games(&db);
    let b = tournament(&dir, &db, 9, 2, &[]);
    assert_eq!(a, b);
    assert_eq!(count_games(&db), before);
}

/// Issue 23: a game is stored as its outcome and a 16-byte digest of its
/// throws, not its throws; whoever wants the throws gets them by replay,
/// checked against what was stored, so a changed record or program is
/// found, never shown.
#[test]
fn games_are_stored_for_replay_and_replay_to_their_record() {
    use knobeln::engine::replay::Replayer;
    use knobeln::store::Store;
    let tmp = tempfile::tempdir().unwrap();
    let dir = field(
        tmp.path(),
        &[("gambler", 2), ("climber", 1), ("crasher", 1)],
    );
    let db = tmp.path().join("k.db");
    tournament(&dir, &db, 5, 2, &[]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (n, bytes): (i64, i64) = conn
        .query_row(
            "SELECT count(*), max(length(throws)) FROM games WHERE throws_format = 2",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(n, count_games(&db), "every game is stored for replay");
    assert_eq!(bytes, 16);
    let store = Store::open(&db).unwrap();
    let tid: i64 = conn
        .query_row("SELECT id FROM tournaments", [], |r| r.get(0))
        .unwrap();
    let mut replayer = Replayer::new(&store, tid).unwrap();
    let games = replayer.group_games(&store, 1, 1).unwrap();
    assert_eq!(games.len() as i64, n);
    for g in &games {
        let played = g.record.failures.first().map_or(60, |f| f.throw - 1);
        assert_eq!(g.record.throws.len() as u32, played, "{g:?}");
        assert_eq!(
            knobeln::game::knobeln::replay(
                &knobeln::game::Params {
                    l: 60,
                    ..Default::default()
                },
                &g.record.throws
            ),
            Ok(g.record.points)
        );
    }
    // A record changed behind the replay's back is found.
    conn.execute(
        "UPDATE games SET points_p = points_p + 1 WHERE slot = (SELECT min(slot) FROM games)",
        [],
    )
    .unwrap();
    let err = Replayer::new(&store, tid)
        .unwrap()
        .group_games(&store, 1, 1)
        .unwrap_err();
    assert!(err.to_string().contains("does not replay"), "{err}");
}
