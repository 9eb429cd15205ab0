//! The contest run by the server, end to end on the spool transport: teams
//! register and send strategies by mail, `knobeln contest start` runs the
//! tournament and the Evolution, and each preference produces exactly the
//! mails it should, to the right recipients and nobody else; an interrupted
//! contest resumes without repeating a game or a mail.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::common::HANG_GUARD;
use super::mail_spool::{auth_of, registration, Contest, Reply};

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

/// (team, preferences, source file in tests/data/tournament)
const TEAMS: &[(&str, &str, &str)] = &[
    ("lap_team", "LAP", "cooperator"),
    ("lgp_team", "LGP", "climber"),
    ("dgp_team", "DGP", "follower"),
    ("grp_team", "GRP", "cooperator"),
    ("grg_team", "GRG", "climber"),
    ("grr_team", "GRR", "follower"),
    ("rsm_team", "RSM", "cooperator"),
    ("all_team", "LAP,LGP,DGP,GRP,GRG,GRR,RSM", "climber"),
    ("none_team", "", "follower"),
    ("crash_team", "GRR", "crasher"),
];

fn addr(team: &str) -> String {
    format!("{team}@participants.example")
}

/// Registers every team and sends its strategy, all by mail.
fn field(c: &Contest) {
    let mut regs = Vec::new();
    for (team, prefs, _) in TEAMS {
        let body = registration(&addr(team), team, &format!("Uni {team}, City, Land")).replace(
            "mail-preference: LAP,DGP,GRG,RSM",
            &format!("mail-preference: {prefs}"),
        );
        regs.push(c.mail(&addr(team), "registration for KNOBELN", &body, ""));
    }
    let refs: Vec<&Path> = regs.iter().map(|p| p.as_path()).collect();
    let out = c.ingest(&refs);
    assert!(out.status.success());
    let acks = c.replies();
    let mut compiles = Vec::new();
    for (team, _, src) in TEAMS {
        let ack = acks
            .iter()
            .find(|r| r.to == vec![addr(team)])
            .expect("acknowledged");
        let auth = auth_of(ack);
        let code = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/tournament/{src}.c")),
        )
        .unwrap();
        let source = format!("/*\n <<FROM>> {team} {auth}\n*/\n{code}");
        compiles.push(c.mail(&addr(team), "please compile", &source, ""));
    }
    let refs: Vec<&Path> = compiles.iter().map(|p| p.as_path()).collect();
    let out = c.ingest(&refs);
    assert!(out.status.success());
    let reports = c.replies();
    let accepted = reports
        .iter()
        .filter(|r| r.subject.contains("compilation report: accepted"))
        .count();
    assert_eq!(
        accepted,
        TEAMS.len(),
        "{:?}",
        reports.iter().map(|r| &r.subject).collect::<Vec<_>>()
    );
}

fn contest_mails(c: &Contest) -> Vec<Reply> {
    c.replies()
        .into_iter()
        .filter(|r| r.subject.starts_with("KNOBELN"))
        .collect()
}

fn start(c: &Contest) -> std::process::Output {
    Command::new(BIN)
        .args(["contest", "start", "--seed", "3", "--config"])
        .arg(c.config())
        .output()
        .unwrap()
}

const RULES: &str = "[rules]\nthrows = 60\n";

#[test]
fn each_preference_gets_exactly_its_mails() {
    let c = Contest::new(RULES);
    field(&c);
    let out = start(&c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mails = contest_mails(&c);
    // kind (the code at the start of the subject) -> recipients
    let mut by_kind: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in &mails {
        let kind = m
            .subject
            .split(':')
            .next()
            .unwrap()
            .trim_start_matches("KNOBELN ")
            .to_string();
        let kind = if m.subject.contains("disqualified") {
            "DQ".to_string()
        } else if m.subject.contains("final results") {
            "FINAL".to_string()
        } else {
            kind
        };
        by_kind.entry(kind).or_default().extend(m.to.clone());
    }
    let want = |code: &str| -> Vec<String> {
        let mut v: Vec<String> = TEAMS
            .iter()
            .filter(|(_, p, _)| p.split(',').any(|x| x == code))
            .map(|(t, _, _)| addr(t))
            .collect();
        v.sort();
        v
    };
    let got = |code: &str| -> Vec<String> {
        let mut v = by_kind.get(code).cloned().unwrap_or_default();
        v.sort();
        v
    };
    // 10 teams: one final group, one round: one mail per recipient per event.
    for code in ["LAP", "LGP", "DGP", "GRP", "GRG", "GRR", "RSM"] {
        assert_eq!(
            got(code),
            want(code),
            "{code} mails go to exactly the teams that asked for them"
        );
    }
    assert_eq!(
        got("DQ"),
        vec![addr("crash_team")],
        "the disqualified team is told"
    );
    let mut everyone: Vec<String> = TEAMS.iter().map(|(t, _, _)| addr(t)).collect();
    everyone.sort();
    assert_eq!(got("FINAL"), everyone, "everyone gets the final results");

    // Contents: the DGP mail holds protocols that protocolfmt reads; the
    // disqualification names the rule and the throw.
    let dgp = mails
        .iter()
        .find(|m| m.subject.starts_with("KNOBELN DGP"))
        .unwrap();
    assert!(dgp.body.contains("KNOBELN-PROTOCOL 1"));
    // The team's games that were played in their turn: a game the pool
    // played ahead whose player was disqualified before its turn is
    // stored, but cancelled, and has no protocol.
    let store = knobeln::store::Store::open(&c.dir.path().join("k.db")).unwrap();
    let tid: i64 = store
        .conn()
        .query_row("SELECT MAX(id) FROM tournaments", [], |r| r.get(0))
        .unwrap();
    let res = knobeln::engine::results::results(&store, tid, vec![]).unwrap();
    let played = res
        .rounds
        .iter()
        .flat_map(|r| &r.groups)
        .flat_map(|g| &g.games)
        .filter(|g| g.status != "cancelled" && g.players.iter().any(|p| &**p == "dgp_team"))
        .count();
    assert!(played >= TEAMS.len() - 1, "{played}");
    assert_eq!(
        dgp.body.matches("KNOBELN-PROTOCOL 1").count(),
        played,
        "one protocol per played game of the team"
    );
    let dq = mails
        .iter()
        .find(|m| m.subject.contains("disqualified"))
        .unwrap();
    assert!(dq.body.contains("throw 6: crashed"), "{}", dq.body);
    assert!(dq.body.contains("KNOBELN-PROTOCOL 1"));
    let fin = mails
        .iter()
        .find(|m| m.subject.contains("final results"))
        .unwrap();
    assert!(fin.body.contains("Knobeln Evolution"));
    let ranking = fin.body.split("Disqualified").next().unwrap();
    assert!(
        !ranking.contains("crash_team"),
        "the disqualified team is not ranked: {}",
        fin.body
    );
    assert!(
        fin.body.contains("crash_team disqualified in game"),
        "and it is named as disqualified: {}",
        fin.body
    );

    // The compile service is closed now.
    let late = c.mail(
        &addr("lap_team"),
        "please compile",
        "/* <<FROM>> lap_team x */",
        "",
    );
    c.ingest(&[&late]);
    let last = c.replies().pop().unwrap();
    assert!(
        last.body.contains("the contest has started"),
        "{}",
        last.body
    );

    // Running it again changes nothing.
    let before = c.replies().len();
    let again = start(&c);
    assert!(again.status.success());
    assert_eq!(c.replies().len(), before);
}

#[test]
fn an_interrupted_contest_resumes_without_repeating_a_game_or_a_mail() {
    let c = Contest::new("[rules]\nthrows = 400\njobs = 1\n");
    field(&c);
    let db = c.dir.path().join("k.db");
    let mut child = Command::new(BIN)
        .args(["contest", "start", "--seed", "3", "--config"])
        .arg(c.config())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let games = || -> i64 {
        rusqlite::Connection::open(&db)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM games", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let t = Instant::now();
    while games() < 12 {
        assert!(t.elapsed() < HANG_GUARD, "no progress");
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before the kill"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let out = start(&c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let dup_games: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM (SELECT 1 FROM games GROUP BY tournament_id, round, grp, slot HAVING COUNT(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dup_games, 0);
    let mails = contest_mails(&c);
    let mut seen = std::collections::HashSet::new();
    for m in &mails {
        assert!(
            seen.insert((m.subject.clone(), m.to.clone())),
            "mail sent twice: {} to {:?}",
            m.subject,
            m.to
        );
    }
    assert!(mails.iter().any(|m| m.subject.contains("final results")));
    let tournaments: i64 = conn
        .query_row("SELECT COUNT(*) FROM tournaments", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tournaments, 1);
}

/// The latest tournament's results with the games that count (a game the
/// pool played ahead of a disqualification is stored or not, as the timing
/// was, and is cancelled either way).
fn counted_results(db: &Path) -> Vec<knobeln::engine::results::RoundResult> {
    let store = knobeln::store::Store::open(db).unwrap();
    let tid: i64 = store
        .conn()
        .query_row("SELECT MAX(id) FROM tournaments", [], |r| r.get(0))
        .unwrap();
    let mut res = knobeln::engine::results::results(&store, tid, vec![]).unwrap();
    for g in res.rounds.iter_mut().flat_map(|r| &mut r.groups) {
        g.games.retain(|g| g.status != "cancelled");
    }
    res.rounds
}

/// Each group's games that count, as (slot, attempt), by round and group.
fn counted_games(db: &Path) -> BTreeMap<(i64, i64), Vec<(i64, i64)>> {
    let mut out = BTreeMap::new();
    for r in counted_results(db) {
        for g in &r.groups {
            let games = g.games.iter();
            out.insert(
                (r.number as i64, g.number as i64),
                games.map(|g| (g.slot as i64, g.attempt as i64)).collect(),
            );
        }
    }
    out
}

/// The groups that break the engine's commit boundary at a kill, against
/// the games that count in the contest played to its end (`all`): one
/// marked finished without all of them stored, or one with all of them
/// stored and not marked finished (a group's last games and its end are
/// one commit, `engine::run::Unstored::store_ending`).
fn groups_torn_apart(db: &Path, all: &BTreeMap<(i64, i64), Vec<(i64, i64)>>) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let groups: Vec<(i64, i64, bool)> = conn
        .prepare("SELECT round, number, finished_at IS NOT NULL FROM groups")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut torn = Vec::new();
    for (round, group, finished) in groups {
        let stored: std::collections::HashSet<(i64, i64)> = conn
            .prepare("SELECT slot, attempt FROM games WHERE round = ?1 AND grp = ?2")
            .unwrap()
            .query_map([round, group], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let counted = &all[&(round, group)];
        let have = counted.iter().filter(|k| stored.contains(k)).count();
        if finished != (have == counted.len()) {
            torn.push(format!(
                "round {round} group {group}: finished {finished}, {have} of its {} games stored",
                counted.len()
            ));
        }
    }
    torn
}

/// Copies the database's files and the spool's folders of the contest in
/// `from` into `to` (each configuration names its own folders).
fn copy_into(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        let (src, dst) = (e.path(), to.join(&name));
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
            copy_into(&src, &dst);
        } else if name != "knobeln.toml" {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// `kill -9` at the engine's commit boundaries: a contest killed as soon
/// as a batch of its games is committed (up to 256 games, or 100 ms of
/// them, a group's end in its last batch), again after each resume, ends
/// as the same contest never killed does (copied before it started: the
/// same secret key, so the same games): the same results, every game
/// stored once, no group's end apart from its games at any kill, every
/// mail once and the same mails.
#[test]
fn a_contest_killed_at_its_commits_again_and_again_ends_as_one_never_killed() {
    const RULES: &str = "[rules]\nthrows = 400\njobs = 1\n";
    let c = Contest::new(RULES);
    field(&c);
    // The same contest started, with its secret key, and killed before
    // its first game: copied to both, one played to its end, the other
    // killed again and again.
    let reference = Contest::new(RULES);
    let count = |c: &Contest, table: &str| -> i64 {
        rusqlite::Connection::open(c.dir.path().join("k.db"))
            .and_then(|c| c.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)))
            .unwrap_or(0)
    };
    loop {
        for f in ["k.db-wal", "k.db-shm"] {
            let _ = std::fs::remove_file(reference.dir.path().join(f));
        }
        copy_into(c.dir.path(), reference.dir.path());
        let mut child = start_in_background(&reference);
        let t = Instant::now();
        while count(&reference, "tournaments") == 0 {
            assert!(t.elapsed() < HANG_GUARD, "no tournament");
            std::thread::sleep(Duration::from_millis(1));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        if count(&reference, "games") == 0 {
            break;
        }
    }
    copy_into(reference.dir.path(), c.dir.path());
    let out = start(&reference);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = counted_games(&reference.dir.path().join("k.db"));

    let db = c.dir.path().join("k.db");
    let games = || -> usize {
        rusqlite::Connection::open(&db)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM games", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let mut kills = Vec::new();
    'runs: while kills.len() < 4 {
        let mut child = start_in_background(&c);
        let before = games();
        let t = Instant::now();
        // Killed as soon as a commit of games is seen.
        while games() == before {
            assert!(t.elapsed() < HANG_GUARD, "no progress");
            if child.try_wait().unwrap().is_some() {
                break 'runs;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills.push(games());
        assert_eq!(
            groups_torn_apart(&db, &all),
            Vec::<String>::new(),
            "killed at {kills:?} games"
        );
    }
    assert!(!kills.is_empty(), "finished before the first kill");
    let out = start(&c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    assert_eq!(
        counted_results(&db),
        counted_results(&reference.dir.path().join("k.db")),
        "killed at {kills:?} games"
    );
    let dup_games: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM (SELECT 1 FROM games GROUP BY tournament_id, round, grp, slot, attempt HAVING COUNT(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dup_games, 0);
    let key = |m: &Reply| (m.subject.clone(), m.to.clone(), m.body.clone());
    let mut mails: Vec<_> = contest_mails(&c).iter().map(key).collect();
    let n = mails.len();
    mails.sort();
    mails.dedup_by(|a, b| (&a.0, &a.1) == (&b.0, &b.1));
    assert_eq!(mails.len(), n, "a mail sent twice");
    let mut want: Vec<_> = contest_mails(&reference).iter().map(key).collect();
    want.sort();
    assert_eq!(mails, want, "killed at {kills:?} games");
}

#[test]
fn serve_starts_the_contest_at_its_time_and_status_tells_the_phase() {
    let c = Contest::new(RULES);
    let status = || {
        let o = Command::new(BIN)
            .args(["status", "--config"])
            .arg(c.config())
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    field(&c);
    let s = status();
    assert!(
        s.contains("phase: registration and compilation service open"),
        "{s}"
    );
    assert!(s.contains("lap_team"), "{s}");
    assert!(s.contains("version "), "{s}");
    // The contest start has come.
    let mut cfg = std::fs::read_to_string(c.config()).unwrap();
    cfg.push_str(
        "[timeline]\nregistration_start = \"2000-01-01T00:00:00Z\"\ncompile_start = \"2000-01-01T00:00:00Z\"\n\
         registration_deadline = \"2000-01-01T12:00:00Z\"\ncontest_start = \"2000-01-02T00:00:00Z\"\n",
    );
    std::fs::write(c.config(), cfg).unwrap();
    let mut serve = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(c.config())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while contest_mails(&c)
        .iter()
        .filter(|m| m.subject.contains("final results"))
        .count()
        < TEAMS.len()
    {
        assert!(t.elapsed() < HANG_GUARD, "the contest did not finish");
        assert!(serve.try_wait().unwrap().is_none(), "serve died");
        std::thread::sleep(Duration::from_millis(100));
    }
    Command::new("kill")
        .arg("-TERM")
        .arg(serve.id().to_string())
        .status()
        .unwrap();
    assert!(serve.wait().unwrap().success());
    let s = status();
    assert!(s.contains("phase: the contest is over"), "{s}");
}

/// The snapshot field: rock, paper, scissors in constants (their Evolution
/// ends in a cycle), a strategy that fails only against itself (a
/// self-game failure, then its disqualification "against itself"), and
/// one that crashes in every game (a replay cancelled by its
/// disqualification). Everybody asks for every mail.
const SNAPSHOT_TEAMS: &[(&str, &str)] = &[
    ("high_team", "high"),
    ("middle_team", "middle"),
    ("low_team", "low"),
    ("narcissus_team", "narcissus"),
    ("crash_team", "crasher"),
];

fn snapshot_field(c: &Contest) {
    let mut regs = Vec::new();
    for (team, _) in SNAPSHOT_TEAMS {
        let body = registration(&addr(team), team, &format!("Uni {team}, City, Land")).replace(
            "mail-preference: LAP,DGP,GRG,RSM",
            "mail-preference: LAP,LGP,DGP,GRP,GRG,GRR,RSM",
        );
        regs.push(c.mail(&addr(team), "registration for KNOBELN", &body, ""));
    }
    let refs: Vec<&Path> = regs.iter().map(|p| p.as_path()).collect();
    assert!(c.ingest(&refs).status.success());
    let acks = c.replies();
    let mut compiles = Vec::new();
    for (team, src) in SNAPSHOT_TEAMS {
        let ack = acks.iter().find(|r| r.to == vec![addr(team)]).unwrap();
        let code = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/tournament/{src}.c")),
        )
        .unwrap();
        let source = format!("/*\n <<FROM>> {team} {}\n*/\n{code}", auth_of(ack));
        compiles.push(c.mail(&addr(team), "please compile", &source, ""));
    }
    let refs: Vec<&Path> = compiles.iter().map(|p| p.as_path()).collect();
    assert!(c.ingest(&refs).status.success());
    let accepted = c
        .replies()
        .iter()
        .filter(|r| r.subject.contains("compilation report: accepted"))
        .count();
    assert_eq!(accepted, SNAPSHOT_TEAMS.len());
}

/// The snapshot contest after its end: its folder, config and mails.
struct Finished {
    dir: tempfile::TempDir,
    config: std::path::PathBuf,
    mails: Vec<Reply>,
}

/// Every contest mail of the snapshot field, run once for all the tests
/// that read them.
fn snapshot_contest() -> &'static Finished {
    static RUN: std::sync::OnceLock<Finished> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let c = Contest::new(RULES);
        snapshot_field(&c);
        let out = start(&c);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mails = contest_mails(&c);
        let config = c.config();
        let Contest { dir, .. } = c;
        Finished { dir, config, mails }
    })
}

/// The one mail with a subject starting with `subject` to `team`.
fn mail_to<'a>(mails: &'a [Reply], subject: &str, team: &str) -> &'a Reply {
    let found: Vec<&Reply> = mails
        .iter()
        .filter(|m| m.subject.starts_with(subject) && m.to == vec![addr(team)])
        .collect();
    assert_eq!(found.len(), 1, "{subject} to {team}");
    found[0]
}

#[test]
fn every_contest_mail_kind_matches_its_snapshot() {
    let mails = &snapshot_contest().mails;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/snapshots/contest");
    let update = std::env::var_os("KNOBELN_UPDATE_SNAPSHOTS").is_some();
    let cases = [
        ("lap", "KNOBELN LAP", "high_team"),
        ("lgp", "KNOBELN LGP", "high_team"),
        ("dgp", "KNOBELN DGP", "narcissus_team"),
        ("grp", "KNOBELN GRP", "high_team"),
        ("grp-disqualified", "KNOBELN GRP", "crash_team"),
        ("grg", "KNOBELN GRG", "high_team"),
        ("grr", "KNOBELN GRR", "high_team"),
        ("rsm", "KNOBELN RSM", "high_team"),
        (
            "disqualified-self-game",
            "KNOBELN: team narcissus_team disqualified",
            "narcissus_team",
        ),
        (
            "disqualified",
            "KNOBELN: team crash_team disqualified",
            "crash_team",
        ),
        ("final", "KNOBELN: the final results", "high_team"),
    ];
    let mut mismatches = Vec::new();
    for (name, subject, team) in cases {
        let m = mail_to(mails, subject, team);
        let text = format!("Subject: {}\n\n{}", m.subject, m.body.replace("\r\n", "\n"));
        let path = dir.join(format!("{name}.txt"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("missing snapshot {}", path.display()));
        if want != text {
            mismatches.push(format!("--- {name}: want\n{want}\n--- got\n{text}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn every_contest_mail_is_7_bit_within_72_columns_and_says_what_happened() {
    let mails = &snapshot_contest().mails;
    assert!(!mails.is_empty());
    for m in mails {
        super::announcement::assert_mail_text(&m.subject, &m.body.replace("\r\n", "\n"));
    }
    let body = |subject: &str, team: &str| mail_to(mails, subject, team).body.replace("\r\n", "\n");
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    // The self-game failure and the disqualification against itself.
    let grp = flat(&body("KNOBELN GRP", "narcissus_team"));
    assert!(
        grp.contains("failed: narcissus_team against itself"),
        "{grp}"
    );
    assert!(grp.contains("disqualified (against itself)"), "{grp}");
    assert!(
        grp.contains("total: none; your team was disqualified in game"),
        "{grp}"
    );
    // Everybody else's games against the disqualified say so.
    let grp = flat(&body("KNOBELN GRP", "high_team"));
    assert!(
        grp.contains("void: narcissus_team disqualified in game"),
        "{grp}"
    );
    assert!(grp.contains("its games are not counted"), "{grp}");
    let grr = flat(&body("KNOBELN GRR", "high_team"));
    assert!(grr.contains("Disqualified (not ranked"), "{grr}");
    assert!(grr.contains("narcissus_team disqualified in game"), "{grr}");
    assert!(grr.contains("crash_team disqualified in game"), "{grr}");
    // The crasher's first failed game: its replay was cancelled.
    let grg = flat(&body("KNOBELN GRG", "high_team"));
    assert!(grg.contains("replay cancelled (disqualification)"), "{grg}");
    assert!(
        !grg.contains("replayed as game") || grg.contains("narcissus_team against itself"),
        "{grg}"
    );
    // The Evolution ends in a cycle: means and the last generation, labelled.
    let fin = body("KNOBELN: the final results", "high_team");
    assert!(flat(&fin).contains("ended in a cycle"), "{fin}");
    assert!(fin.contains("Mean share"), "{fin}");
    assert!(fin.contains("Mean exemplars"), "{fin}");
    assert!(fin.contains(" %"), "{fin}");
}

/// (team, total) from a GRP mail's last table line.
fn grp_total(body: &str) -> Option<String> {
    body.lines()
        .find(|l| l.starts_with("  total"))
        .map(|l| l.split_whitespace().last().unwrap().to_string())
}

#[test]
fn grp_totals_equal_grr_points_for_every_team() {
    let mails = &snapshot_contest().mails;
    let grr = mail_to(mails, "KNOBELN GRR", "high_team")
        .body
        .replace("\r\n", "\n");
    let mut checked = 0;
    for (team, _) in SNAPSHOT_TEAMS {
        let grp = mail_to(mails, "KNOBELN GRP", team)
            .body
            .replace("\r\n", "\n");
        let ranked = grr
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(team));
        match ranked {
            Some(line) => {
                let points = line.split_whitespace().nth(2).unwrap().to_string();
                assert_eq!(
                    grp_total(&grp),
                    Some(points.clone()),
                    "{team}:\n{grp}\n{grr}"
                );
                // And the counted column adds up to it.
                let sum: f64 = grp
                    .lines()
                    .filter(|l| {
                        l.split_whitespace()
                            .next()
                            .is_some_and(|w| w.parse::<u32>().is_ok())
                    })
                    .filter_map(|l| l.split_whitespace().last()?.parse::<f64>().ok())
                    .sum();
                assert_eq!(sum, points.parse::<f64>().unwrap(), "{team}:\n{grp}");
                checked += 1;
            }
            None => {
                assert!(grp.contains("total: none"), "{team} is not ranked:\n{grp}");
            }
        }
    }
    assert_eq!(checked, 3, "the three ranked teams");
}

#[test]
fn mail_article_and_site_report_the_same_number_of_generations() {
    let run = snapshot_contest();
    let mails = &run.mails;
    let computed = |text: &str| -> Vec<usize> {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        flat.match_indices(" generations computed after the initial population")
            .map(|(i, _)| {
                flat[..i]
                    .rsplit(|ch: char| !ch.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect()
    };
    let fin = mail_to(mails, "KNOBELN: the final results", "high_team")
        .body
        .clone();
    let in_mail = computed(&fin);
    assert_eq!(in_mail.len(), 1, "{fin}");
    let out = Command::new(BIN)
        .args(["results", "--config"])
        .arg(&run.config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let in_article = computed(&String::from_utf8_lossy(&out.stdout));
    let site = run.dir.path().join("site");
    let out = Command::new(BIN)
        .arg("site")
        .arg(&site)
        .args(["--no-game-pages", "--config"])
        .arg(&run.config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = |p: &str| std::fs::read_to_string(site.join(p)).unwrap();
    let in_site: Vec<usize> = ["index.html", "evolution.html"]
        .iter()
        .flat_map(|p| computed(&page(p)))
        .collect();
    assert_eq!(in_article, in_mail, "article and mail");
    assert_eq!(in_site, vec![in_mail[0], in_mail[0]], "site and mail");
    // The site's table of generations ends with that generation.
    assert!(
        page("evolution.html").contains(&format!("gen. {}</th>", in_mail[0])),
        "the last generation in the site's table"
    );
}

const PAUSED: &str = "[rules]\nthrows = 60\nrsm_pause_minutes = 30\n";

/// Starts `contest start` in the background (what it says on its standard
/// error: [`contest_stderr`]).
fn start_in_background(c: &Contest) -> std::process::Child {
    let err = std::fs::File::create(c.dir.path().join("contest.stderr")).unwrap();
    Command::new(BIN)
        .args(["contest", "start", "--seed", "3", "--config"])
        .arg(c.config())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap()
}

/// What the contests [`start_in_background`] started said on their
/// standard error.
fn contest_stderr(c: &Contest) -> String {
    std::fs::read_to_string(c.dir.path().join("contest.stderr")).unwrap_or_default()
}

fn db(c: &Contest) -> rusqlite::Connection {
    rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap()
}

/// Waits until the contest pauses after round 1; returns the pause mail's
/// text (still in the outbox: `contest start` writes the spool at its end).
fn wait_for_the_pause(c: &Contest, child: &mut std::process::Child) -> String {
    let t = Instant::now();
    loop {
        let conn = db(c);
        let row: Option<(i64, Vec<u8>)> = conn
            .query_row(
                "SELECT id, raw FROM outbox WHERE kind = 'rsm_pause'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .ok();
        if let Some((id, raw)) = row {
            // The mail whole (a long text is stored apart from its row).
            let raw = knobeln::store::mail::assemble(&conn, id, raw).unwrap();
            return String::from_utf8_lossy(&raw).replace("\r\n", "\n");
        }
        assert!(t.elapsed() < HANG_GUARD, "no pause");
        assert!(child.try_wait().unwrap().is_none(), "ended without a pause");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn count(c: &Contest, sql: &str) -> i64 {
    db(c).query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn the_organizers_summary_ends_the_pause_even_after_a_kill_9() {
    let c = Contest::new(PAUSED);
    field(&c);
    let mut child = start_in_background(&c);
    let pause = wait_for_the_pause(&c, &mut child);
    assert!(pause.contains("To: organizer@contest.example"), "{pause}");
    assert!(pause.contains("knobeln rsm --round 1 FILE"), "{pause}");
    assert!(pause.contains("<<RSM>> "), "{pause}");
    // The contest waits: no RSM yet, no final results.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "the contest waits");
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM outbox WHERE kind = 'rsm'"),
        0
    );
    // The organizer sees the pause and what ends it.
    let status = Command::new(BIN)
        .args(["status", "--config"])
        .arg(c.config())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        status.contains("PAUSED after round 1 for the organizer's summary until")
            && status.contains("knobeln rsm --round 1 FILE"),
        "{status}"
    );
    // kill -9 during the pause; the pause is in the database.
    child.kill().unwrap();
    child.wait().unwrap();
    let summary = c.dir.path().join("summary.txt");
    std::fs::write(
        &summary,
        "Round 1 in a nutshell: the crasher crashed \u{2014} twice.\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["rsm", "--round", "1", "--config"])
        .arg(c.config())
        .arg(&summary)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Resumed: the summary is there, so the RSM goes out and the contest ends.
    let out = start(&c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mails = contest_mails(&c);
    let rsm: Vec<&Reply> = mails
        .iter()
        .filter(|m| m.subject.starts_with("KNOBELN RSM: summary of round 1"))
        .collect();
    assert_eq!(rsm.len(), 2, "rsm_team and all_team");
    for m in &rsm {
        assert!(
            m.body
                .contains("Round 1 in a nutshell: the crasher crashed -- twice."),
            "{}",
            m.body
        );
        assert!(m.body.contains("The rankings of all groups of round 1:"));
    }
    // One pause mail, to the organizer only; the token is in it alone.
    let everything = c.replies();
    let pauses: Vec<&Reply> = everything
        .iter()
        .filter(|m| m.subject == "RSM round 1")
        .collect();
    assert_eq!(pauses.len(), 1);
    assert_eq!(pauses[0].to, vec!["organizer@contest.example".to_string()]);
    assert!(everything
        .iter()
        .filter(|m| m.to != vec!["organizer@contest.example".to_string()])
        .all(|m| !m.body.contains("<<RSM>>")));
    assert!(mails.iter().any(|m| m.subject.contains("final results")));
    // A second summary for the round is refused now.
    let out = Command::new(BIN)
        .args(["rsm", "--round", "1", "--config"])
        .arg(c.config())
        .arg(&summary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // Logged for the organizer.
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM admin_log WHERE action = 'rsm'"),
        1
    );
}

#[test]
fn a_summary_by_mail_needs_the_organizers_address_and_the_pause_mails_token() {
    let c = Contest::new(PAUSED);
    field(&c);
    let mut child = start_in_background(&c);
    let pause = wait_for_the_pause(&c, &mut child);
    let token = pause
        .lines()
        .find_map(|l| l.trim().strip_prefix("<<RSM>> "))
        .expect("the token line")
        .trim()
        .to_string();
    let before = c.replies().len();
    let organizer = "organizer@contest.example";
    let attempts = [
        // The organizer's address alone is forgeable: refused.
        (
            organizer,
            "RSM round 1",
            "No token.\nForged summary.\n".to_string(),
        ),
        // A wrong token: refused.
        (
            organizer,
            "RSM round 1",
            "<<RSM>> wrongtoken\nForged summary.\n".to_string(),
        ),
        // The right token from somebody else: refused.
        (
            "lap_team@participants.example",
            "RSM round 1",
            format!("<<RSM>> {token}\nForged summary.\n"),
        ),
        // The right token for another round: refused.
        (
            organizer,
            "RSM round 2",
            format!("<<RSM>> {token}\nForged summary.\n"),
        ),
    ];
    for (from, subject, body) in &attempts {
        let m = c.mail(from, subject, body, "");
        assert!(c.ingest(&[&m]).status.success());
    }
    // (ingest also writes what the paused contest has queued so far.)
    let refusals: Vec<Reply> = c
        .replies()
        .split_off(before)
        .into_iter()
        .filter(|r| r.subject.contains("RSM round") && r.subject.contains("not carried out"))
        .collect();
    assert_eq!(refusals.len(), attempts.len());
    for r in &refusals {
        assert!(r.subject.contains("not carried out"), "{}", r.subject);
        let flat = r.body.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("knobeln rsm --round N FILE"), "{}", r.body);
        assert_eq!(
            r.body.replace("round 2", "round 1"),
            refusals[0].body,
            "the same words for every refusal"
        );
    }
    assert!(child.try_wait().unwrap().is_none(), "still waiting");
    // The real one, replying to the pause mail (quoted lines are left out).
    let body = format!(
        "<<RSM>> {token}\nA fine first round.\n\n> Round 1 of the contest is finished.\n-- \nThe organizer\n"
    );
    let m = c.mail(organizer, "Re: RSM round 1", &body, "");
    assert!(c.ingest(&[&m]).status.success());
    let ok = c
        .replies()
        .into_iter()
        .find(|r| r.subject.contains("summary accepted"))
        .expect("the organizer is told");
    assert_eq!(ok.to, vec![organizer.to_string()]);
    // The contest goes on and ends.
    let t = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(t.elapsed() < HANG_GUARD, "the contest did not go on");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        status.success(),
        "the contest ended with {status}: {}",
        contest_stderr(&c)
    );
    let rsm = contest_mails(&c)
        .into_iter()
        .find(|m| m.subject.starts_with("KNOBELN RSM: summary of round 1"))
        .unwrap_or_else(|| {
            panic!(
                "no RSM among {:?}; the contest said: {}",
                contest_mails(&c)
                    .iter()
                    .map(|m| &m.subject)
                    .collect::<Vec<_>>(),
                contest_stderr(&c)
            )
        });
    assert!(rsm.body.contains("A fine first round."), "{}", rsm.body);
    assert!(!rsm.body.contains("Forged"), "{}", rsm.body);
    assert!(
        !rsm.body.contains("The organizer\n"),
        "signature cut: {}",
        rsm.body
    );
    // The token is kept only salted and hashed: the pause mail (sent) and
    // the mails that carried it (processed) are sealed.
    let db = std::fs::read(c.dir.path().join("k.db"))
        .unwrap()
        .to_ascii_lowercase();
    let token = token.to_ascii_lowercase();
    assert!(
        !db.windows(token.len()).any(|w| w == token.as_bytes()),
        "the token is in the database"
    );
}

#[test]
fn when_the_pause_ends_without_a_summary_the_automatic_one_goes_out() {
    let c = Contest::new(PAUSED);
    field(&c);
    let mut child = start_in_background(&c);
    wait_for_the_pause(&c, &mut child);
    // Thirty minutes pass (in the database, where the pause lives).
    db(&c)
        .execute(
            "UPDATE rsm_rounds SET pause_ends_at = '2000-01-01T00:00:00.000Z'",
            [],
        )
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < HANG_GUARD, "the contest did not go on");
        std::thread::sleep(Duration::from_millis(100));
    }
    let kind: String = db(&c)
        .query_row(
            "SELECT sent_kind FROM rsm_rounds WHERE round = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kind, "automatic");
    let out = start(&c); // writes the spool; the contest is over
    assert!(out.status.success());
    let rsm = contest_mails(&c)
        .into_iter()
        .find(|m| m.subject.starts_with("KNOBELN RSM: summary of round 1"))
        .expect("the automatic RSM");
    assert!(
        rsm.body.contains("The rankings of all groups of round 1:"),
        "{}",
        rsm.body
    );
}

/// Issue 35, contest mails bounded: a team that registered (asking for
/// LAP and RSM) but sent no strategy takes no part, so it neither gets the
/// list of participants nor is in it, and gets no summary and no final
/// results: 1000 registrations without strategies cost no contest mail.
#[test]
fn only_teams_that_take_part_get_the_lap_and_are_in_it() {
    let c = Contest::new(RULES);
    field(&c);
    let idle = c.mail(
        &addr("idle_team"),
        "registration for KNOBELN",
        &registration(&addr("idle_team"), "idle_team", "Idle Org, City, Land").replace(
            "mail-preference: LAP,DGP,GRG,RSM",
            "mail-preference: LAP,RSM",
        ),
        "",
    );
    assert!(c.ingest(&[&idle]).status.success());
    let out = start(&c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let laps: Vec<Reply> = contest_mails(&c)
        .into_iter()
        .filter(|m| m.subject.starts_with("KNOBELN LAP"))
        .collect();
    let mut to: Vec<String> = laps.iter().flat_map(|m| m.to.clone()).collect();
    to.sort();
    assert_eq!(to, vec![addr("all_team"), addr("lap_team")]);
    for m in &laps {
        assert!(!m.body.contains("idle_team"), "{}", m.body);
        assert!(m.body.contains("lap_team"), "{}", m.body);
    }
    let to_idle: Vec<String> = contest_mails(&c)
        .iter()
        .filter(|m| m.to == [addr("idle_team")] && !m.subject.contains("registration"))
        .map(|m| m.subject.clone())
        .collect();
    assert!(
        to_idle.is_empty(),
        "contest mails to a team that took no part: {to_idle:?}"
    );
}
