//! The contest run by the server, end to end on the spool transport: teams
//! register and send strategies by mail, `knobeln contest start` runs the
//! tournament and the Evolution, and each preference produces exactly the
//! mails it should, to the right recipients and nobody else; an interrupted
//! contest resumes without repeating a game or a mail.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let conn = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    let played: usize = conn
        .query_row(
            "SELECT COUNT(*) FROM games g JOIN teams t ON t.id IN (g.player_p, g.player_q) WHERE t.name = 'dgp_team'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as usize;
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
    assert!(
        !fin.body.contains("crash_team"),
        "the disqualified team is not ranked"
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
        assert!(t.elapsed() < Duration::from_secs(120), "no progress");
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
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "the contest did not finish"
        );
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
