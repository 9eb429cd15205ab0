//! The ultimatum game's working folder that lasts across a bot's matches
//! (issue 27; the 2011 FAQ: "a file stays until the bot that created it
//! deletes it"): kept across `play --repeat` and a contest's matches, the
//! bot's own only, within its quota, new each match when the config says
//! so, and one tournament per seed whatever the number of threads.

use serde_json::Value;

use crate::common::{knobeln, stderr_of, stdout_of};
use crate::mail_spool::{auth_of, Contest};

/// Counts its matches in `count.txt` of its working folder (and keeps an
/// empty folder `sub/empty`), and offers 10 × the count, plus 1 when the
/// empty folder was there at its start.
const COUNTER: (&str, &str) = (
    "10 * n + (1 if had_dir else 0)",
    r#"import os, sys
n = int(open('count.txt').read()) if os.path.exists('count.txt') else 0
had_dir = os.path.isdir('sub/empty')
n += 1
open('count.txt', 'w').write(str(n))
os.makedirs('sub/empty', exist_ok=True)
"#,
);

/// Looks around: offers 100 + the entries of its working folder + 10 when
/// a file it left in `/tmp` is still there, + 50 when it can see the
/// other bot's `count.txt` anywhere; leaves `mine.txt` and `/tmp/t.txt`.
const SNOOPER: (&str, &str) = (
    "min(n, 1000)",
    r#"import os, sys
n = 100 + len(os.listdir('.'))
if os.path.exists('/tmp/t.txt'): n += 10
for root in ['/', '/work', '/tmp', '..', '/proc']:
    try:
        for dirpath, dirs, files in os.walk(root):
            if 'count.txt' in files: n += 50
            if dirpath.count('/') > 3: dirs[:] = []
    except Exception:
        pass
open('mine.txt', 'w').write('x')
open('/tmp/t.txt', 'w').write('x')
"#,
);

/// Writes up to 1 MiB into its working folder (as far as the quota lets
/// it), and offers the size in KiB it found there at its start.
const FILLER: (&str, &str) = (
    "size // 1024",
    r#"import os, sys
size = os.path.getsize('big') if os.path.exists('big') else 0
try:
    with open('big', 'wb') as f:
        for _ in range(64):
            f.write(b'x' * 16384)
            f.flush()
except OSError:
    pass
"#,
);

/// A whole ultimatum bot: `bot.1` at its start, then the protocol, each
/// offer the Python expression `bot.0`, every offer accepted.
fn source((offer, start): (&str, &str)) -> String {
    format!(
        "{start}for line in sys.stdin:\n    w = line.split()\n    if not w: continue\n    \
         if w[0] == 'START':\n        print({offer}, flush=True)\n    \
         elif w[0] == 'ANGEBOT':\n        print('JA', flush=True)\n    \
         elif w[0] == 'ENDE':\n        break\n"
    )
}

/// Plays `a` against `b` (sources) `repeat` times with `config`; each
/// match's first offer of seat 0 and of seat 1 (round 2 is seat 1's).
fn first_offers(a: (&str, &str), b: (&str, &str), repeat: u32, config: &str) -> Vec<[String; 2]> {
    let tmp = tempfile::tempdir().unwrap();
    let pa = tmp.path().join("a.py");
    let pb = tmp.path().join("b.py");
    std::fs::write(&pa, source(a)).unwrap();
    std::fs::write(&pb, source(b)).unwrap();
    let cfg = tmp.path().join("knobeln.toml");
    std::fs::write(
        &cfg,
        format!("[contest]\ndiscipline = \"ultimatum\"\n[ultimatum]\n{config}"),
    )
    .unwrap();
    let repeat = repeat.to_string();
    let out = knobeln(&[
        "play",
        "--discipline",
        "ultimatum",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
        "--set",
        "rounds=2",
        "--repeat",
        &repeat,
        "--config",
        cfg.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    stdout_of(&out)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["failures"], serde_json::json!([]), "{v}");
            assert!(v.get("folders").is_none(), "no folder in the output");
            let first = |seat: u64| {
                v["transcript"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| {
                        e["seat"] == seat
                            && e["said"] == "by_bot"
                            && e["line"].as_str().unwrap().parse::<u32>().is_ok()
                    })
                    .map(|e| e["line"].as_str().unwrap().to_string())
                    .unwrap()
            };
            [first(0), first(1)]
        })
        .collect()
}

#[test]
fn an_ultimatum_bots_working_folder_lasts_across_its_matches_and_is_its_own() {
    let offers = first_offers(COUNTER, SNOOPER, 3, "");
    // The counter's file and its empty folder last; the snooper sees only
    // its own `mine.txt` (one entry), never the counter's file, and its
    // `/tmp` is new for each match.
    assert_eq!(
        offers,
        [["10", "100"], ["21", "101"], ["31", "101"]].map(|o| o.map(String::from))
    );
}

#[test]
fn a_kept_folder_holds_at_most_its_quota() {
    let offers = first_offers(FILLER, FILLER, 2, "folder_kb = 64\n");
    // 1 MiB asked for, at most 64 KiB kept (the tmpfs's size).
    let kb: u32 = offers[1][0].parse().unwrap();
    assert!(kb > 0 && kb <= 64, "{offers:?}");
    assert_eq!(offers[0], ["0", "0"].map(String::from));
}

/// Issue 34: what the tmpfs counts that content bytes do not. Each leaves
/// 2000 entries that cost the tmpfs nothing (sparse files of 3000 bytes, hard links
/// to one byte, empty files with 250-byte names) and offers how many
/// entries it found at its start.
const SPARSE: (&str, &str) = (
    "min(found, 5000)",
    r#"import os, sys
found = len(os.listdir('.'))
for i in range(2000):
    try:
        with open('s%04d' % i, 'wb') as f:
            f.truncate(3000)
    except OSError:
        break
"#,
);
const LINKS: (&str, &str) = (
    "min(found, 5000)",
    r#"import os, sys
found = len(os.listdir('.'))
try:
    open('one', 'w').write('x')
    for i in range(2000):
        os.link('one', 'l%04d' % i)
except OSError:
    pass
"#,
);
const NAMES: (&str, &str) = (
    "min(found, 5000)",
    r#"import os, sys
found = len(os.listdir('.'))
for i in range(2000):
    try:
        open(('%04d' % i) + 'n' * 246, 'w').close()
    except OSError:
        break
"#,
);

/// A kept folder is measured as the tmpfs holds it when written back
/// (pages per file, a copy per hard link, inodes, name bytes): whatever a
/// bot leaves, its next match starts (before, 2000 sparse files or hard
/// links passed a quota of content bytes and the next match could not
/// start: a server error that stopped the contest), and what is kept
/// stays within the entries and names an image may hold.
#[test]
fn a_kept_folder_that_the_tmpfs_would_not_hold_never_stops_a_match() {
    use knobeln::sandbox::folder::{MAX_ENTRIES, MAX_NAME_BYTES};
    for (bot, most) in [
        // 256 KiB: 64 pages, one for each file written back (and an empty
        // file costs none).
        (SPARSE, 2 * 64),
        (LINKS, 2 * 64),
        (NAMES, MAX_NAME_BYTES / 250),
    ] {
        let offers = first_offers(bot, COUNTER, 3, "");
        assert_eq!(offers[0][0], "0");
        for o in &offers[1..] {
            let found: usize = o[0].parse().unwrap();
            assert!(found > 0 && found <= most.min(MAX_ENTRIES), "{offers:?}");
        }
        // The other bot's folder is its own, whatever this one did.
        assert_eq!(offers[2][1], "31", "{offers:?}");
    }
}

#[test]
fn with_fresh_folders_every_match_starts_empty() {
    let offers = first_offers(COUNTER, SNOOPER, 3, "folders = \"fresh\"\n");
    assert!(
        offers.iter().all(|o| o == &["10", "100"].map(String::from)),
        "{offers:?}"
    );
}

/// How a test contest is run.
enum Run {
    /// To its end.
    Whole,
    /// Killed (`kill -9`) once this many games are stored, then started
    /// again.
    KilledAfter(i64),
}

/// A contest of three counters (each offers by how many matches it has
/// played), under `jobs` threads: its table text, and whether kept folders
/// are left in the database afterwards.
fn counters_contest(jobs: u32, extra: &str) -> (String, i64) {
    counters_contest_run(jobs, extra, Run::Whole)
}

fn counters_contest_run(jobs: u32, extra: &str, run: Run) -> (String, i64) {
    let c = Contest::new(&format!(
        "[contest]\ndiscipline = \"ultimatum\"\n[rules]\njobs = {jobs}\n\
         [ultimatum]\nrounds = 5\nrepetitions = 2\n{extra}"
    ));
    for who in ["ann", "bob", "cy"] {
        let reg = c.registration_mail(who, who);
        assert!(c.ingest(&[&reg]).status.success());
        let auth = auth_of(c.replies().last().unwrap());
        let body = format!(
            "language: python\n# <<FROM>> team_{who} {auth}\n{}",
            source((&format!("10 * n + {}", who.len()), COUNTER.1))
        );
        let m = c.mail(
            &format!("{who}@participants.example"),
            "please compile",
            &body,
            "",
        );
        assert!(c.ingest(&[&m]).status.success());
        let r = c.replies().last().unwrap().clone();
        assert!(r.subject.contains("accepted"), "{}", r.body);
    }
    let db = c.dir.path().join("k.db");
    let count = |table: &str| -> i64 {
        rusqlite::Connection::open(&db)
            .and_then(|conn| {
                conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            })
            .unwrap_or(0)
    };
    let start = || {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_knobeln"));
        cmd.args(["contest", "start", "--seed", "4", "--config"])
            .arg(c.config());
        cmd
    };
    if let Run::KilledAfter(n) = run {
        let mut child = start()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        while count("bot_games") < n {
            assert!(
                child.try_wait().unwrap().is_none(),
                "ended before {n} games"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let stored = count("bot_games");
        assert!(stored < 12, "killed midway ({stored} of 12 games)");
        assert!(count("bot_folders") > 0, "folders kept so far");
    }
    let out = start().output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let left = count("bot_folders");
    let table = stdout_of(&out)
        .lines()
        .filter(|l| l.contains("team_"))
        .collect::<Vec<_>>()
        .join("\n");
    (table, left)
}

#[test]
fn kept_folders_give_one_tournament_per_seed_whatever_the_threads() {
    let (one, left) = counters_contest(1, "");
    let (two, _) = counters_contest(2, "");
    assert!(one.contains("team_ann"), "{one}");
    assert_eq!(one, two, "the same tournament on one thread and on two");
    assert_eq!(left, 0, "the kept folders go when the contest ends");
    // The folders made a difference: with fresh ones the counters never
    // count past one.
    let (fresh, _) = counters_contest(2, "folders = \"fresh\"\n");
    assert_ne!(one, fresh);
    // Killed midway (`kill -9`) and started again: the folders stored go
    // with the games stored, so the tournament is the same.
    let (resumed, _) = counters_contest_run(2, "", Run::KilledAfter(4));
    assert_eq!(one, resumed, "resumed after kill -9");
}
