//! A contest of rock-paper-scissors by mail, in this process: teams
//! register, send their bots, get the compile report with the trial game,
//! the contest runs, and every team gets the final table and its summary;
//! the results site has the table and the games. Everything the server
//! knows of the discipline comes through the seam (`super::Rps`).

use std::path::{Path, PathBuf};

use chrono::Utc;
use knobeln::config::Config;
use knobeln::contest::bots;
use knobeln::mail::inbox::take_in_capped;
use knobeln::server::Server;
use knobeln::store::Store;

use crate::mail_spool::{auth_of, parse_reply, registration, Reply};

struct InProcess {
    _dir: tempfile::TempDir,
    outgoing: PathBuf,
    site: PathBuf,
    server: Server,
    n: usize,
}

impl InProcess {
    fn new(extra: &str) -> InProcess {
        super::register();
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            "database = \"{db}\"\n[contest]\ndiscipline = \"rps\"\n{extra}\n\
             [spool]\ndir = \"{spool}\"\n[site]\ndir = \"{site}\"\n",
            db = dir.path().join("k.db").display(),
            spool = dir.path().join("spool").display(),
            site = dir.path().join("site").display(),
        );
        let config = Config::parse(&text).unwrap();
        config.validate().unwrap();
        let store = Store::open(&config.database).unwrap();
        InProcess {
            outgoing: dir.path().join("spool/outgoing"),
            site: dir.path().join("site"),
            _dir: dir,
            server: Server::new(config, store),
            n: 0,
        }
    }

    /// Takes a mail in, processes it and writes the replies; returns them.
    fn send(&mut self, from: &str, subject: &str, body: &str) -> Vec<Reply> {
        self.n += 1;
        let mail = format!(
            "From: {from}\r\nTo: knobeln@contest.example\r\nSubject: {subject}\r\n\
             Message-ID: <rps{}@participants.example>\r\nMIME-Version: 1.0\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\n{}",
            self.n,
            body.replace('\n', "\r\n")
        );
        let before = self.replies().len();
        take_in_capped(
            self.server.store.conn(),
            "rps-test",
            None,
            &knobeln::mail::inbox::Capped::from_bytes(mail.as_bytes(), 1 << 20),
            Utc::now(),
        )
        .unwrap();
        self.server.process().unwrap();
        self.server.flush().unwrap();
        self.replies().split_off(before)
    }

    fn replies(&self) -> Vec<Reply> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.outgoing)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|e| e == "eml"));
        files.sort();
        files.iter().map(|p| parse_reply(p)).collect()
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_contest_of_a_discipline_from_outside_the_crate_runs_by_mail() {
    let mut c = InProcess::new("[rps]\nrounds = 5");
    let bots = [
        ("ann", super::DEMO_BOTS[0].source),
        ("bob", super::DEMO_BOTS[1].source),
        ("cat", super::DEMO_BOTS[0].source),
    ];
    let mut auths = std::collections::BTreeMap::new();
    for (who, source) in bots {
        let address = format!("{who}@participants.example");
        let team = format!("team_{who}");
        let r = c.send(
            &address,
            "registration",
            &registration(&address, &team, "Somewhere, City, Land")
                .replace("LAP,DGP,GRG,RSM", "GRP,DGP"),
        );
        let ack = r.last().expect("an acknowledgement");
        assert!(
            ack.body.contains("rock-paper-scissors"),
            "the acknowledgement names the discipline:\n{}",
            ack.body
        );
        let auth = auth_of(ack);
        auths.insert(who, auth.clone());
        let r = c.send(
            &address,
            "please compile",
            &format!("language: python\n# <<FROM>> {team} {auth}\n{source}"),
        );
        let report = r.last().expect("a compile report");
        assert!(
            report.subject.contains("accepted"),
            "{}\n{}",
            report.subject,
            report.body
        );
        assert!(
            report.body.contains("Trial game against itself: draw"),
            "the discipline's trial, in its words:\n{}",
            report.body
        );
    }
    // The discipline's own submission, by its own subject, through the
    // generic command: refused with the seam's sentence, then accepted.
    let ann_auth: String = auths["ann"].clone();
    let r = c.send(
        "ann@participants.example",
        "motto",
        &format!("<<FROM>> team_ann {ann_auth}\nmotto: {}\n", "x".repeat(41)),
    );
    let no = r.last().expect("a submission report");
    assert!(no.subject.contains("motto not accepted"), "{}", no.subject);
    assert!(no.body.contains("at most 40 letters"), "{}", no.body);
    // The command's cap on what a submission holds, whatever the seam's
    // check would take: at 64 kB the seam's check speaks, past it the cap.
    for (len, says) in [
        (64 * 1024, "at most 40 letters"),
        (
            64 * 1024 + 1,
            "is 65537 bytes long; at most 64 kB are taken",
        ),
    ] {
        let r = c.send(
            "ann@participants.example",
            "motto",
            &format!("<<FROM>> team_ann {ann_auth}\nmotto: {}\n", "y".repeat(len)),
        );
        let no = r.last().expect("a submission report");
        assert!(no.subject.contains("motto not accepted"), "{}", no.subject);
        let body = no.body.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(body.contains(says), "{len}: {body:.300}");
    }
    let r = c.send(
        "ann@participants.example",
        "Motto",
        &format!("<<FROM>> team_ann {ann_auth}\nmotto: Rock on!\n"),
    );
    let yes = r.last().expect("a submission report");
    assert!(
        yes.subject.contains("motto accepted"),
        "{}\n{}",
        yes.subject,
        yes.body
    );
    assert!(yes.body.contains("Motto: Rock on!"), "{}", yes.body);
    let r = c.send("ann@participants.example", "what now", "");
    assert!(
        r.iter()
            .any(|m| m.body.contains("your team's motto: a line motto: TEXT")),
        "the help mail lists the discipline's submission"
    );
    let config = c.server.config.clone();
    let results = bots::run_contest(&mut c.server.store, &config, 7, &Utc::now).unwrap();
    let text = bots::results_text(&results);
    // Paper beats both rocks; the rocks draw.
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].contains("team_bob") && lines[1].trim_end().ends_with('4'),
        "{text}"
    );
    assert!(
        lines[2].contains("team_ann") && lines[3].contains("team_cat"),
        "{text}"
    );
    let contest = bots::contest(c.server.store.conn(), config.contest.discipline)
        .unwrap()
        .unwrap();
    assert_eq!(
        contest.materials,
        [("team_ann".to_string(), "Rock on!".to_string())],
        "the contest took the team's motto at its start"
    );
    assert_eq!(
        bots::games_played(c.server.store.conn(), &contest).unwrap(),
        3
    );
    knobeln::site::bots::write(&c.site, &c.server.store, &contest, &config, &results).unwrap();
    c.server.flush().unwrap();
    let all = c.replies();
    for who in ["ann", "bob", "cat"] {
        let to = format!("{who}@participants.example");
        let mine: Vec<&Reply> = all.iter().filter(|r| r.to.contains(&to)).collect();
        let fin = mine
            .iter()
            .find(|r| r.subject.contains("final results"))
            .unwrap_or_else(|| panic!("{who} has no final table"));
        assert!(fin.body.contains("team_bob"), "{}", fin.body);
        let summary = mine
            .iter()
            .find(|r| r.subject.contains("your results per opponent"))
            .unwrap_or_else(|| panic!("{who} has no summary"));
        assert!(
            summary.body.contains("A game won is two points"),
            "{}",
            summary.body
        );
        let transcripts = mine
            .iter()
            .find(|r| r.subject.contains("the transcripts of your games"))
            .unwrap_or_else(|| panic!("{who} has no transcripts"));
        assert_eq!(transcripts.attachments, ["transcripts.txt"]);
    }
    let index = read(&c.site.join("index.html"));
    assert!(index.contains("Rock-paper-scissors") && index.contains("team_bob"));
    assert!(
        index.contains("its games won-drawn-lost"),
        "the default grid"
    );
    // A stored game's setup and outcome read back through the seam.
    let mut n = 0;
    bots::for_each_game(&c.server.store, &contest, &config, |g| {
        assert_eq!(g.setup.discipline(), super::RPS);
        assert_eq!(g.setup.get::<super::rules::RpsSetup>().rounds, 5);
        let o = g.played.outcome.as_ref().unwrap();
        assert_eq!(o.get::<super::rules::RpsOutcome>().rounds, 5);
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(n, 3);
}

/// The section of a registered discipline is its own: read and checked
/// by its seam, and a wrong key is refused with its words.
#[test]
fn a_registered_disciplines_section_is_read_and_checked_by_its_seam() {
    super::register();
    let bad = Config::parse("[contest]\ndiscipline = \"rps\"\n[rps]\nrounds = 0\n").unwrap();
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("rps.rounds must be in 1..=1000"), "{e}");
    let unknown = Config::parse("[contest]\ndiscipline = \"rps\"\n[rps]\nround = 3\n").unwrap();
    let e = unknown.validate().unwrap_err().to_string();
    assert!(e.contains("unknown field `round`"), "{e}");
    // Registering the same seam again is no change; the name is taken.
    knobeln::discipline::registry::register(&super::Rps).unwrap();
    assert!("rps".parse::<knobeln::discipline::Discipline>().is_ok());
}

/// `knobeln play --set KEY=VALUE` through the seam: a registered
/// discipline's section takes a key like the seeds' four, its seam checks
/// it and makes a game's setup from it; it is played on no material.
#[test]
fn a_registered_disciplines_section_takes_a_set_key_and_makes_a_play_setup() {
    super::register();
    let rps = knobeln::discipline::registry::of("rps".parse().unwrap()).unwrap();
    let mut cfg = Config::default();
    cfg.set_in_section(rps.discipline(), "rounds = 7").unwrap();
    rps.validate(&cfg.sections()).unwrap();
    let setup = rps.play_setup(&cfg.sections(), 1, None).unwrap();
    assert_eq!(setup.get::<super::rules::RpsSetup>().rounds, 7);
    cfg.set_in_section(rps.discipline(), "rounds=0").unwrap();
    let e = rps.validate(&cfg.sections()).unwrap_err();
    assert!(e.contains("rps.rounds must be in 1..=1000 (got 0)"), "{e}");
    cfg.set_in_section(rps.discipline(), "round=3").unwrap();
    let e = rps.validate(&cfg.sections()).unwrap_err();
    assert!(e.contains("unknown field `round`"), "{e}");
    assert_eq!(rps.material_name(), None);
}

/// The site's benchmark asks the seam for scripted players: a discipline
/// without them is refused in a sentence, not played.
#[test]
fn the_site_benchmark_refuses_a_discipline_without_scripted_players() {
    super::register();
    let rps = "rps".parse().unwrap();
    let e = knobeln::bench_site::bot_site_bench(rps, 3, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("has no scripted players"), "{e}");
}
