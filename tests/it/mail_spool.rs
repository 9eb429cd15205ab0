//! The mail front end end to end on the spool transport: mails go in as
//! files through `knobeln ingest` (and `knobeln serve`), replies come out as
//! `.eml` files in `spool/outgoing/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mail_parser::MessageParser;

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

/// A contest in a temp folder: config, database, spool.
pub struct Contest {
    pub dir: tempfile::TempDir,
    n_mails: std::cell::Cell<usize>,
}

/// An outgoing mail as the participant would read it.
#[derive(Debug, Clone)]
pub struct Reply {
    pub to: Vec<String>,
    pub subject: String,
    pub body: String,
    pub in_reply_to: Option<String>,
    pub headers: String,
    pub attachments: Vec<String>,
}

impl Contest {
    pub fn new(extra_config: &str) -> Contest {
        let dir = tempfile::tempdir().unwrap();
        let cfg = format!(
            "database = \"{db}\"\n{extra_config}\n[spool]\ndir = \"{spool}\"\npoll_secs = 1\n",
            db = dir.path().join("k.db").display(),
            spool = dir.path().join("spool").display(),
        );
        std::fs::write(dir.path().join("knobeln.toml"), cfg).unwrap();
        Contest {
            dir,
            n_mails: std::cell::Cell::new(0),
        }
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("knobeln.toml")
    }

    pub fn spool(&self) -> PathBuf {
        self.dir.path().join("spool")
    }

    /// Writes a mail file and returns its path.
    pub fn mail(&self, from: &str, subject: &str, body: &str, extra_headers: &str) -> PathBuf {
        let n = self.n_mails.get() + 1;
        self.n_mails.set(n);
        let path = self.dir.path().join(format!("mail{n}.eml"));
        let text = format!(
            "From: {from}\r\nTo: knobeln@contest.example\r\nSubject: {subject}\r\nMessage-ID: <m{n}.{}@participants.example>\r\nDate: Sat, 14 May 1994 10:00:00 +0000\r\n{extra_headers}MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{}",
            std::process::id(),
            body.replace('\n', "\r\n")
        );
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Registers the announcement's team (joe@lords.example) and returns
    /// its auth string from the acknowledgement.
    /// `knobeln contest start --seed 5` on this contest's config.
    pub fn start_contest(&self) -> std::process::Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_knobeln"))
            .args(["contest", "start", "--seed", "5", "--config"])
            .arg(self.config())
            .output()
            .unwrap()
    }

    pub fn register_joe(&self) -> String {
        self.register(
            "joe@lords.example",
            "the_heavy_lords_of_knobeln",
            "University of Northeast Sacrodata, Intellect City, Eggland",
        )
    }

    /// A registration of team `team_<who>` from `<who>@participants.example`
    /// at organization `<org>, City, Land`.
    pub fn registration_mail(&self, who: &str, org: &str) -> PathBuf {
        let address = format!("{who}@participants.example");
        self.mail(
            &address,
            "registration for KNOBELN",
            &registration(
                &address,
                &format!("team_{who}"),
                &format!("{org}, City, Land"),
            ),
            "",
        )
    }

    /// Registers team `team` of organization `org` from `address` (its
    /// From line and its form's address), checks the ingest succeeded,
    /// and returns the team's auth string from the acknowledgement. The
    /// address is only claimed (a From line): see [`Self::register_and_prove`].
    pub fn register(&self, address: &str, team: &str, org: &str) -> String {
        let reg = self.mail(
            address,
            "registration for KNOBELN",
            &registration(address, team, org),
            "",
        );
        assert!(self.ingest(&[&reg]).status.success());
        auth_of(self.replies().last().expect("an acknowledgement"))
    }

    /// Registers as [`Self::register`], then proves the address: a
    /// `status` mail from it with the team's string (its answer is the
    /// last reply). Returns the auth string.
    pub fn register_and_prove(&self, address: &str, team: &str, org: &str) -> String {
        let auth = self.register(address, team, org);
        let proof = self.mail(address, "status", &format!("<<FROM>> {team} {auth}\n"), "");
        assert!(self.ingest(&[&proof]).status.success());
        auth
    }

    /// A "please compile" mail of the announcement's team.
    pub fn joe_compile(&self, auth: &str) -> PathBuf {
        self.mail(
            "joe@lords.example",
            "please compile",
            &submission("the_heavy_lords_of_knobeln", auth),
            "",
        )
    }

    pub fn ingest(&self, files: &[&Path]) -> Output {
        self.ingest_env(files, &[])
    }

    pub fn ingest_env(&self, files: &[&Path], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(BIN);
        c.arg("ingest")
            .arg("--config")
            .arg(self.config())
            .args(files);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// Every reply written so far, in order.
    pub fn replies(&self) -> Vec<Reply> {
        let out = self.spool().join("outgoing");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|e| e == "eml"));
        files.sort();
        files.iter().map(|p| parse_reply(p)).collect()
    }
}

pub fn parse_reply(path: &Path) -> Reply {
    let raw = std::fs::read(path).unwrap();
    let m = MessageParser::default().parse(&raw).unwrap();
    let header_end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    Reply {
        to: m
            .to()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.address().map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
        subject: m.subject().unwrap_or("").to_string(),
        body: m.body_text(0).map(|b| b.into_owned()).unwrap_or_default(),
        in_reply_to: m.in_reply_to().as_text().map(String::from),
        headers: String::from_utf8_lossy(&raw[..header_end]).into_owned(),
        attachments: m
            .attachments()
            .filter_map(|a| mail_parser::MimeHeaders::attachment_name(a).map(String::from))
            .collect(),
    }
}

pub const REGISTRATION: &str = "mail-address: joe@lords.example
mail-preference: LAP,DGP,GRG,RSM
team-name: the_heavy_lords_of_knobeln
Organization: University of Northeast Sacrodata, Intellect City, Eggland
team-members:
 Joe Cool, 45, professional systems programmer,
 20-year-experienced programmer
 Jane More, 20, graduate student of computer science,
 hackeress fluent in 34 programming languages
";

pub fn registration(address: &str, team: &str, org: &str) -> String {
    REGISTRATION
        .replace("joe@lords.example", address)
        .replace("the_heavy_lords_of_knobeln", team)
        .replace(
            "University of Northeast Sacrodata, Intellect City, Eggland",
            org,
        )
}

/// The auth string from an acknowledgement.
pub fn auth_of(reply: &Reply) -> String {
    // KNOBELN's "…and your\nauthentification string is X", a bot
    // contest's "Your authentification string is X".
    let marker = "authentification string is ";
    let body = reply.body.replace("\r\n", "\n");
    let at = body
        .find(marker)
        .unwrap_or_else(|| panic!("no auth string in {body}"))
        + marker.len();
    body[at..].split_whitespace().next().unwrap().to_string()
}

/// A strategy submission for team/auth.
pub fn submission(team: &str, auth: &str) -> String {
    let mut s = format!("/*\n <<FROM>> {team} {auth}\n*/\n#if 0\n");
    for i in 1..=15 {
        s.push_str(&format!(
            "Description line {i}: this strategy cooperates by throwing 100.\n"
        ));
    }
    s.push_str("#endif\nmain() { for (;;) make_throw(100); }\n");
    s
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn register_then_compile_by_mail() {
    let c = Contest::new("");
    let reg = c.mail(
        "Joe Cool <joe@lords.example>",
        "registration for KNOBELN",
        REGISTRATION,
        "",
    );
    let out = c.ingest(&[&reg]);
    assert!(out.status.success(), "{}", stdout(&out));
    let replies = c.replies();
    assert_eq!(replies.len(), 1, "{replies:?}");
    let ack = &replies[0];
    assert_eq!(ack.to, vec!["joe@lords.example"]);
    assert!(
        ack.body
            .replace("\r\n", "\n")
            .contains("your registration for the International KNOBELN contest\nis accepted and your\nauthentification string is"),
        "{}",
        ack.body
    );
    assert!(ack.headers.contains("Auto-Submitted: auto-replied"));
    assert!(ack.headers.contains("X-Loop: knobeln@contest.example"));
    assert!(
        ack.in_reply_to.as_deref().unwrap().starts_with('m'),
        "{:?}",
        ack.in_reply_to
    );
    let auth = auth_of(ack);
    assert!(
        auth.len() >= 22,
        "auth string {auth:?} is too short for 128 bits"
    );

    // The strategy, with the header from the acknowledgement.
    let src = submission("the_heavy_lords_of_knobeln", &auth);
    let compile = c.mail("joe@lords.example", "please compile", &src, "");
    let out = c.ingest(&[&compile]);
    assert!(out.status.success(), "{}", stdout(&out));
    let replies = c.replies();
    assert_eq!(replies.len(), 2);
    let report = &replies[1];
    assert_eq!(report.to, vec!["joe@lords.example"]);
    assert!(report.subject.contains("accepted"), "{}", report.subject);
    assert!(report.body.contains("Result: ACCEPTED"), "{}", report.body);
    assert!(
        report.body.contains("Lexical elements: "),
        "{}",
        report.body
    );
    assert!(
        report
            .body
            .contains("Trial game against the example strategy"),
        "{}",
        report.body
    );
    // The database has it as the team's current version.
    let conn = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM strategy_versions WHERE accepted = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn the_same_mail_delivered_twice_is_answered_once() {
    let c = Contest::new("");
    let reg = c.mail(
        "joe@lords.example",
        "registration for KNOBELN",
        REGISTRATION,
        "",
    );
    c.ingest(&[&reg]);
    let out = c.ingest(&[&reg]);
    assert!(
        stdout(&out).contains("already received before"),
        "{}",
        stdout(&out)
    );
    assert_eq!(c.replies().len(), 1);
}

#[test]
fn a_second_registration_for_a_registered_address_changes_nothing() {
    let c = Contest::new("");
    let a = c.mail(
        "joe@lords.example",
        "registration for KNOBELN",
        REGISTRATION,
        "",
    );
    let b = c.mail(
        "joe@lords.example",
        "registration for KNOBELN",
        &registration("joe@lords.example", "other_name", "Elsewhere, Town, Land"),
        "",
    );
    c.ingest(&[&a, &b]);
    let replies = c.replies();
    assert_eq!(replies.len(), 2);
    assert!(
        replies[1].body.contains("already registered"),
        "{}",
        replies[1].body
    );
    assert!(!replies[1].body.contains("authentification string is"));
    let conn = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM registrations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_clashing_team_name_is_modified_and_the_reply_says_so() {
    let c = Contest::new("");
    let a = c.mail(
        "joe@lords.example",
        "registration for KNOBELN",
        REGISTRATION,
        "",
    );
    let b = c.mail(
        "ann@participants.example",
        "registration for KNOBELN",
        &registration(
            "ann@participants.example",
            "the_heavy_lords_of_knobeln",
            "Other Uni, City, Land",
        ),
        "",
    );
    c.ingest(&[&a, &b]);
    let replies = c.replies();
    assert_eq!(replies[1].to, vec!["ann@participants.example"]);
    assert!(
        replies[1].body.contains("slightly modified"),
        "{}",
        replies[1].body
    );
    assert!(
        replies[1].body.contains("the_heavy_lords_of_knobeln_2"),
        "{}",
        replies[1].body
    );
}

#[test]
fn a_malformed_registration_gets_every_problem_at_once() {
    let c = Contest::new("");
    let body = "mail-address: not an address\nmail-preference: LAP,XYZ\nteam-name: 9lives\nOrganization: Somewhere\nteam-members:\n";
    let m = c.mail("joe@lords.example", "registration for KNOBELN", body, "");
    c.ingest(&[&m]);
    let r = &c.replies()[0];
    assert!(r.subject.contains("not accepted"));
    assert_eq!(r.to, vec!["joe@lords.example"]);
    let problems = r
        .body
        .lines()
        .filter(|l| l.trim_start().starts_with("- "))
        .count();
    assert!(problems >= 4, "expected every problem at once:\n{}", r.body);
}

#[test]
fn wrong_auth_and_unknown_team_get_the_same_refusal() {
    let c = Contest::new("");
    c.register_joe();
    let wrong = c.mail(
        "joe@lords.example",
        "please compile",
        &submission("the_heavy_lords_of_knobeln", "notthestring"),
        "",
    );
    let unknown = c.mail(
        "joe@lords.example",
        "please compile",
        &submission("nobody", "x"),
        "",
    );
    c.ingest(&[&wrong, &unknown]);
    let r = c.replies();
    assert_eq!(r.len(), 3);
    assert!(
        r[1].body
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("do not match any registration"),
        "{}",
        r[1].body
    );
    assert_eq!(
        r[1].body, r[2].body,
        "the refusal must not tell which part was wrong"
    );
}

#[test]
fn automatic_mails_are_never_answered() {
    let c = Contest::new("");
    let auto = c.mail(
        "joe@lords.example",
        "please compile",
        "x",
        "Auto-Submitted: auto-replied\r\n",
    );
    let list = c.mail(
        "joe@lords.example",
        "help",
        "x",
        "List-Id: <knobeln.lists.example>\r\n",
    );
    let daemon = c.mail("MAILER-DAEMON@lords.example", "Undelivered Mail", "x", "");
    let looped = c.mail(
        "joe@lords.example",
        "help",
        "x",
        "X-Loop: knobeln@contest.example\r\n",
    );
    let out = c.ingest(&[&auto, &list, &daemon, &looped]);
    assert!(
        stdout(&out).matches("ignored").count() >= 4,
        "{}",
        stdout(&out)
    );
    assert!(c.replies().is_empty());
}

#[test]
fn anything_else_gets_help_and_the_kit_comes_as_attachments() {
    let c = Contest::new("");
    let hello = c.mail("joe@lords.example", "hello there", "what is this?", "");
    let kit = c.mail("joe@lords.example", "SEND knobelnsoftware", "", "");
    c.ingest(&[&hello, &kit]);
    // The help, its forward to the organizer, the kit.
    let r: Vec<Reply> = c
        .replies()
        .into_iter()
        .filter(|m| m.to != ["organizer@contest.example"])
        .collect();
    assert!(r[0].body.contains("registration for KNOBELN"));
    assert!(r[0].body.contains("please compile"));
    assert!(r[0].body.contains("SEND knobelnsoftware"));
    for name in [
        "knobellib.c",
        "knobellib.h",
        "referee.c",
        "protocolfmt.c",
        "RULES.txt",
        "RULES-1994.txt",
    ] {
        assert!(
            r[1].attachments.iter().any(|a| a == name),
            "{name} missing: {:?}",
            r[1].attachments
        );
    }
}

#[test]
fn the_compile_service_is_closed_outside_its_window() {
    let c = Contest::new(
        "[timeline]\nregistration_start = \"1994-03-22T12:00:00Z\"\ncompile_start = \"1994-03-23T12:00:00Z\"\n\
         registration_deadline = \"1994-05-12T12:00:00Z\"\ncontest_start = \"1994-05-14T12:00:00Z\"\n",
    );
    let reg = c.mail(
        "joe@lords.example",
        "registration for KNOBELN",
        REGISTRATION,
        "",
    );
    let compile = c.mail(
        "joe@lords.example",
        "please compile",
        &submission("x", "y"),
        "",
    );
    c.ingest(&[&reg, &compile]);
    let r = c.replies();
    assert!(
        r[0].body
            .contains("deadline (1994-05-12 12:00 UT) has passed"),
        "{}",
        r[0].body
    );
    assert!(
        r[1].body.contains("compilation service is closed"),
        "{}",
        r[1].body
    );
}

/// The last reply the contest sent.
fn last_reply(c: &Contest) -> Reply {
    c.replies().pop().expect("a reply")
}

/// A text with its runs of blanks and line ends as one space each.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A team's `status` mail with its authentification string (shows its
/// address).
fn status_mail(c: &Contest, who: &str, auth: &str) -> PathBuf {
    c.mail(
        &format!("{who}@participants.example"),
        "status",
        &format!("<<FROM>> team_{who} {auth}\n"),
        "",
    )
}

/// Moves the registrations of `who`s back by four days (time passes).
fn registered_days_ago(c: &Contest, who: &[&str]) {
    let db = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    for w in who {
        let n = db
            .execute(
                "UPDATE registrations SET registered_at = '2000-01-01T00:00:00.000Z' \
                 WHERE mail_address = ?1",
                [format!("{w}@participants.example")],
            )
            .unwrap();
        assert_eq!(n, 1, "{w}");
    }
}

/// The answer to the last confirmation request `who` got.
fn answer_request(c: &Contest, who: &str) -> PathBuf {
    let address = format!("{who}@participants.example");
    let request = c
        .replies()
        .into_iter()
        .rev()
        .find(|r| r.to == vec![address.clone()] && r.subject.contains("please confirm"))
        .expect("a confirmation request");
    c.mail(&address, &format!("Re: {}", request.subject), "yes\n", "")
}

fn withdrawn(c: &Contest) -> Vec<String> {
    let db = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    let mut st = db
        .prepare("SELECT mail_address FROM withdrawals ORDER BY withdrawn_at")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn participant_and_organization_limits_reject_with_the_reason() {
    let c = Contest::new("[limits]\nmax_participants = 2\nmax_teams_per_organization = 1\n");
    let mails: Vec<PathBuf> = [
        ("a", "Uni A"),
        ("b", "Uni A"),
        ("d", "Uni D"),
        ("e", "Uni E"),
    ]
    .iter()
    .map(|(who, org)| c.registration_mail(who, org))
    .collect();
    let refs: Vec<&Path> = mails.iter().map(|p| p.as_path()).collect();
    c.ingest(&refs);
    let r = c.replies();
    assert!(r[0].subject.contains("accepted"));
    assert!(
        r[1].body.contains("already has 1 registered team"),
        "{}",
        r[1].body
    );
    assert!(r[2].subject.contains("accepted"));
    assert!(r[3].body.contains("too many participants"), "{}", r[3].body);
    // The teams have not shown their addresses yet: the refusal says a
    // place may come free.
    let text = r[3].body.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("2 of them have not yet sent a mail"),
        "{text}"
    );
}

/// A claim is not an identity: registrations "from" the addresses they
/// name, forged by a stranger, fill the contest; once they waited longer
/// than three days without a mail with their authentification string, a
/// newcomer who confirms its address takes one's place (the forged one is
/// withdrawn), and a forged newcomer (whose address never answers) takes
/// none. The limit itself holds: a contest full of teams that showed their
/// addresses refuses.
#[test]
fn forged_registrations_give_their_places_to_confirmed_newcomers() {
    let c = Contest::new("[limits]\nmax_participants = 2\n");
    let forged = [
        c.registration_mail("f1", "Uni F"),
        c.registration_mail("f2", "Uni F"),
    ];
    c.ingest(&[&forged[0], &forged[1]]);
    // Full, and nobody waited long: refused, with the way forward.
    c.ingest(&[&c.registration_mail("real", "Uni R")]);
    let r = last_reply(&c);
    assert!(r.body.contains("too many participants"), "{}", r.body);
    registered_days_ago(&c, &["f1", "f2"]);
    // Now a place can go to the newcomer, once its address says yes: one
    // mail, the request.
    let before = c.replies().len();
    c.ingest(&[&c.registration_mail("real", "Uni R")]);
    let r = c.replies();
    assert_eq!(r.len(), before + 1, "one mail: the request");
    let request = r.last().unwrap();
    assert!(
        request.subject.contains("please confirm"),
        "{}",
        request.subject
    );
    assert_eq!(request.to, vec!["real@participants.example".to_string()]);
    let text = flat(&request.body);
    assert!(text.contains("The contest is full"), "{text}");
    // A forged newcomer is asked too, and its address never answers.
    c.ingest(&[&c.registration_mail("f3", "Uni F")]);
    assert!(last_reply(&c).subject.contains("please confirm"));
    let f1_auth = auth_of(&c.replies()[0]);
    let before = c.replies().len();
    c.ingest(&[&answer_request(&c, "real")]);
    // Two mails: the acknowledgement, and the notice to the registration
    // that gave way.
    let r = c.replies();
    assert_eq!(r.len(), before + 2);
    let accepted = r
        .iter()
        .rev()
        .find(|m| m.subject.contains("accepted"))
        .unwrap();
    assert_eq!(accepted.to, vec!["real@participants.example".to_string()]);
    // Confirmed: its place cannot be taken, the acknowledgement says nothing of it.
    assert!(
        !accepted.body.contains("place is safe once"),
        "{}",
        accepted.body
    );
    assert_eq!(withdrawn(&c), vec!["f1@participants.example".to_string()]);
    let notice = r
        .iter()
        .rev()
        .find(|m| m.subject.contains("withdrawn"))
        .unwrap();
    assert_eq!(notice.to, vec!["f1@participants.example".to_string()]);
    // A notice, not a reply: the newcomer's mail is not named in it.
    assert_eq!(notice.in_reply_to, None);
    assert!(!notice.headers.contains("References"), "{}", notice.headers);
    let text = flat(&notice.body);
    assert!(
        text.contains("has given its place to a newcomer")
            && text.contains("within 3 days")
            && text.contains("register again"),
        "{text}"
    );
    // The withdrawn team's own string is told why it no longer works; a
    // wrong one learns nothing.
    c.ingest(&[&status_mail(&c, "f1", &f1_auth)]);
    let text = flat(&last_reply(&c).body);
    assert!(
        text.contains("The team team_f1 was withdrawn from the contest")
            && text.contains("its place went to a newcomer")
            && text.contains("register again"),
        "{text}"
    );
    c.ingest(&[&status_mail(&c, "f1", "wrong")]);
    let text = flat(&last_reply(&c).body);
    assert!(text.contains("do not match any registration"), "{text}");
    assert!(!text.contains("withdrawn"), "{text}");
    // The second forged place goes the same way; then the contest is full
    // of teams that showed their addresses.
    c.ingest(&[&c.registration_mail("second", "Uni S")]);
    c.ingest(&[&answer_request(&c, "second")]);
    let r = c.replies();
    assert!(r[r.len() - 1].subject.contains("accepted"));
    assert_eq!(
        r[r.len() - 2].to,
        vec!["f2@participants.example".to_string()]
    );
    assert_eq!(withdrawn(&c).len(), 2);
    c.ingest(&[&c.registration_mail("third", "Uni T")]);
    let refused = last_reply(&c);
    assert!(
        refused.body.contains("too many participants"),
        "{}",
        refused.body
    );
    assert!(
        !refused.body.contains("have not yet sent"),
        "{}",
        refused.body
    );
}

/// A registration keeps its place with its team's first mail that carries
/// its authentification string, however long it waited; a wrong string
/// shows nothing. A confirmation answered after the contest filled up is
/// checked again.
#[test]
fn a_teams_first_authenticated_mail_keeps_its_place() {
    let c = Contest::new("[limits]\nmax_participants = 1\n");
    c.ingest(&[&c.registration_mail("a", "Uni A")]);
    let ack = c.replies()[0].clone();
    let text = flat(&ack.body);
    assert!(
        text.contains("Your team's place is safe once the team has sent a mail"),
        "{text}"
    );
    let auth = auth_of(&ack);
    c.ingest(&[&status_mail(&c, "a", "wrong")]);
    registered_days_ago(&c, &["a"]);
    // Waited too long without a valid string: a newcomer is asked to confirm.
    c.ingest(&[&c.registration_mail("b", "Uni B")]);
    assert!(last_reply(&c).subject.contains("please confirm"));
    // The team shows its address before the newcomer answers.
    c.ingest(&[&status_mail(&c, "a", &auth)]);
    c.ingest(&[&answer_request(&c, "b")]);
    let refused = last_reply(&c);
    assert!(
        refused.body.contains("too many participants"),
        "{}",
        refused.body
    );
    assert!(withdrawn(&c).is_empty());
}

/// An organization's limit counts the same way: its own waiting
/// registration gives way to a confirmed newcomer of it; other
/// organizations are not touched.
#[test]
fn an_organizations_full_places_give_way_the_same_way() {
    let c = Contest::new("[limits]\nmax_teams_per_organization = 1\n");
    c.ingest(&[
        &c.registration_mail("x", "Uni A"),
        &c.registration_mail("o", "Uni O"),
    ]);
    registered_days_ago(&c, &["x", "o"]);
    c.ingest(&[&c.registration_mail("y", "Uni A")]);
    assert!(last_reply(&c).subject.contains("please confirm"));
    c.ingest(&[&answer_request(&c, "y")]);
    assert!(last_reply(&c).subject.contains("accepted"));
    assert_eq!(withdrawn(&c), vec!["x@participants.example".to_string()]);
    let r = c.replies();
    assert_eq!(
        r[r.len() - 2].to,
        vec!["x@participants.example".to_string()]
    );
    assert!(r[r.len() - 2].subject.contains("withdrawn"));
    c.ingest(&[&c.registration_mail("z", "Uni Z")]);
    assert!(last_reply(&c).subject.contains("accepted"));
}

/// When a full contest's newcomer cannot be asked to confirm (the day's
/// requests are spent), it is told why and to try again, never to answer
/// a request someone else may have caused.
#[test]
fn a_full_contests_newcomer_is_told_when_no_request_can_go() {
    let c = Contest::new("[limits]\nmax_participants = 1\nconfirmations_per_day = 1\n");
    c.ingest(&[&c.registration_mail("f1", "Uni F")]);
    registered_days_ago(&c, &["f1"]);
    // A stranger spends the day's one request on another address.
    let spend = c.mail(
        "attacker@evil.example",
        "registration for KNOBELN",
        &registration("victim@elsewhere.example", "t_v", "Org, City, Land"),
        "",
    );
    c.ingest(&[&spend]);
    c.ingest(&[&c.registration_mail("real", "Uni R")]);
    let r = last_reply(&c);
    assert!(
        r.subject.contains("no confirmation request sent"),
        "{}",
        r.subject
    );
    let text = flat(&r.body);
    assert!(text.contains("The contest is full"), "{text}");
    assert!(text.contains("Please try again tomorrow"), "{text}");
    assert!(!text.contains("from that address itself"), "{text}");
}

#[test]
fn compile_requests_are_rate_limited_per_team() {
    let c = Contest::new("[limits]\ncompiles_per_team_per_hour = 1\n");
    let auth = c.register_joe();
    let one = c.joe_compile(&auth);
    let two = c.joe_compile(&auth);
    c.ingest(&[&one, &two]);
    let r = c.replies();
    assert!(r[1].body.contains("Result: ACCEPTED"));
    assert!(
        r[2].body.contains("compile requests within the last hour"),
        "{}",
        r[2].body
    );
}

/// A mail whose processing keeps stopping the server (here: killed while
/// gcc works on it) is tried `max_processing_attempts` times, then set
/// aside, kept, and the organizer told; it never blocks the queue.
#[test]
fn a_mail_that_keeps_failing_is_set_aside_and_the_organizer_told() {
    let c = Contest::new("[limits]\nmax_processing_attempts = 2\n");
    let auth = c.register_joe();
    // A source that keeps gcc busy for seconds (within its limits).
    let src = std::fs::read_to_string(crate::common::repo_path("tests/data/sources/macro_bomb.c"))
        .unwrap()
        .replace(
            "team_name authstring",
            &format!("the_heavy_lords_of_knobeln {auth}"),
        );
    let compile = c.mail("joe@lords.example", "please compile", &src, "");
    for _ in 0..2 {
        let mut ingest = Command::new(BIN)
            .arg("ingest")
            .arg("--config")
            .arg(c.config())
            .arg(&compile)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Killed while the jailed gcc works on the mail.
        std::thread::sleep(Duration::from_millis(1500));
        ingest.kill().unwrap();
        ingest.wait().unwrap();
        assert_eq!(c.replies().len(), 1, "no reply for an interrupted attempt");
    }
    let third = c.ingest(&[&compile]);
    assert_eq!(third.status.code(), Some(1), "{}", stdout(&third));
    let r = c.replies();
    assert_eq!(r.len(), 2);
    assert_eq!(r[1].to, vec!["organizer@contest.example"]);
    assert!(r[1].subject.contains("set aside"), "{}", r[1].subject);
    assert!(r[1].body.contains("interrupted"), "{}", r[1].body);
    // Kept, and never retried again.
    let fourth = c.ingest(&[&compile]);
    assert!(stdout(&fourth).contains("already received before"));
    assert_eq!(c.replies().len(), 2);
    let conn = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    let state: String = conn
        .query_row(
            "SELECT state FROM inbox WHERE origin LIKE 'ingest:%mail2.eml'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(state, "failed");
}

#[test]
fn serve_answers_every_mail_exactly_once_across_a_kill_9() {
    let c = Contest::new("");
    let new = c.spool().join("incoming/new");
    std::fs::create_dir_all(&new).unwrap();
    let n = 12;
    for i in 0..n {
        let m = c.mail(
            &format!("p{i}@participants.example"),
            "hello",
            "help me",
            "",
        );
        std::fs::rename(&m, new.join(format!("{i:03}.eml"))).unwrap();
    }
    let spawn = || {
        Command::new(BIN)
            .args(["serve", "--config"])
            .arg(c.config())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // The answers to the participants (each help mail is also forwarded
    // to the organizer).
    let answers = || -> Vec<Reply> {
        c.replies()
            .into_iter()
            .filter(|m| m.to != ["organizer@contest.example"])
            .collect()
    };
    let mut child = spawn();
    let start = Instant::now();
    while answers().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "serve answers nothing"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL, wherever it is
    child.wait().unwrap();
    // Restart and let it finish.
    let mut child = spawn();
    let start = Instant::now();
    while answers().len() < n {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "only {} of {n} answered",
            answers().len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1500));
    // SIGTERM: a clean stop.
    unsafe_sigterm(child.id());
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "serve stops cleanly on SIGTERM: {status:?}"
    );
    let replies = answers();
    assert_eq!(replies.len(), n, "every mail answered exactly once");
    assert_eq!(
        c.replies().len(),
        2 * n,
        "every mail forwarded exactly once"
    );
    let mut to: Vec<String> = replies.iter().map(|r| r.to[0].clone()).collect();
    to.sort();
    to.dedup();
    assert_eq!(to.len(), n);
}

fn unsafe_sigterm(pid: u32) {
    Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
        .unwrap();
}

#[test]
fn replies_to_one_sender_are_capped_per_day() {
    let c = Contest::new("[limits]\nreplies_per_sender_per_day = 2\n");
    let mails: Vec<PathBuf> = (0..3)
        .map(|i| c.mail("joe@lords.example", &format!("hello {i}"), "?", ""))
        .collect();
    let refs: Vec<&Path> = mails.iter().map(|p| p.as_path()).collect();
    let out = c.ingest(&refs);
    assert!(
        stdout(&out).contains("no reply: 2 replies to this sender today already"),
        "{}",
        stdout(&out)
    );
    assert_eq!(c.replies().len(), 2);
    // The organizer's account says what went out: a held mail's line
    // claims neither an answer nor a forward (it claimed both before).
    let printed = stdout(&out);
    let held: Vec<&str> = printed
        .lines()
        .filter(|l| l.contains("no reply:"))
        .collect();
    assert_eq!(held.len(), 2, "{printed}");
    for line in held {
        assert!(
            !line.contains("forwarded") && !line.contains(" sent"),
            "{line}"
        );
    }
    let answered = printed
        .lines()
        .filter(|l| l.contains("help asked for") && l.contains("; forwarded to the organizer"))
        .count();
    assert_eq!(answered, 1, "{printed}");
}

#[test]
fn an_oversized_mail_gets_a_short_answer_from_its_headers() {
    let c = Contest::new("[limits]\nmax_mail_bytes = 2000\n");
    let big = c.mail("joe@lords.example", "please compile", &"x".repeat(5000), "");
    c.ingest(&[&big]);
    let r = c.replies();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].to, vec!["joe@lords.example"]);
    assert!(
        r[0].body.contains("larger than the 2000 bytes"),
        "{}",
        r[0].body
    );
    assert!(r[0].body.contains("at most 10000 lexical"), "{}", r[0].body);
    assert!(
        r[0].body.contains("(5.2 kB; the limit is 2.0 kB)"),
        "{}",
        r[0].body
    );
}

/// A bot contest's answer to an oversized mail speaks of a bot, not of a
/// C strategy's lexical elements (red team G19's note).
#[test]
fn an_oversized_mail_in_a_bot_contest_is_told_how_to_send_a_bot() {
    let c =
        Contest::new("[contest]\ndiscipline = \"ultimatum\"\n[limits]\nmax_mail_bytes = 2000\n");
    let big = c.mail("joe@lords.example", "please compile", &"x".repeat(5000), "");
    c.ingest(&[&big]);
    let r = c.replies();
    assert_eq!(r.len(), 1);
    assert!(r[0].body.contains("send your bot as one"), "{}", r[0].body);
    assert!(!r[0].body.contains("lexical"), "{}", r[0].body);
}

#[test]
fn an_html_only_submission_is_refused_with_the_reason() {
    let c = Contest::new("");
    let path = c.dir.path().join("html.eml");
    std::fs::write(
        &path,
        "From: joe@lords.example\r\nSubject: please compile\r\nMessage-ID: <html1@lords.example>\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>main() {}</p>\r\n",
    )
    .unwrap();
    c.ingest(&[&path]);
    let r = c.replies();
    assert!(r[0].body.contains("only an HTML body"), "{}", r[0].body);
}

#[test]
fn init_writes_a_commented_config_that_loads_and_never_overwrites() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("knobeln.toml");
    let out = Command::new(BIN).arg("init").arg(&path).output().unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("# knobeln.toml"));
    knobeln::config::Config::load(Some(&path)).expect("the written config loads");
    let again = Command::new(BIN).arg("init").arg(&path).output().unwrap();
    assert!(
        !again.status.success(),
        "an existing config is not overwritten"
    );
    let status = Command::new(BIN)
        .args(["status", "--config"])
        .arg(&path)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(String::from_utf8_lossy(&status.stdout)
        .contains("registration and compilation service open"));
}

/// Issue 25, the stall: while a slow compile request runs (a bot that
/// answers every line after 1.5 s, its entry match budgeted at 8 s), a
/// registration that comes in after it is answered first, and the compile
/// request is answered too, once, when it is done.
#[test]
fn a_registration_is_answered_while_a_slow_compile_runs() {
    let c = Contest::new("[contest]\ndiscipline = \"ultimatum\"\n[ultimatum]\nentry_secs = 8\n");
    let auth = c.register_joe();
    let slow = "import sys, time\nfor l in sys.stdin:\n    time.sleep(1.5)\n    \
                if l.startswith('START'):\n        print(500, flush=True)\n    \
                elif l.startswith('ANGEBOT'):\n        print('JA', flush=True)\n";
    let compile = c.mail(
        "joe@lords.example",
        "please compile",
        &format!("language: python\n# <<FROM>> the_heavy_lords_of_knobeln {auth}\n{slow}"),
        "",
    );
    let new = c.spool().join("incoming/new");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::rename(&compile, new.join("001.eml")).unwrap();
    let before = c.replies().len();
    let mut server = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(c.config())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let is_compile_reply = |r: &Reply| r.subject.contains("compilation report");
    // The compile request is taken up; then a stranger registers.
    std::thread::sleep(Duration::from_secs(2));
    let reg = c.registration_mail("ann", "Ann's Lab");
    std::fs::rename(&reg, new.join("002.eml")).unwrap();
    let start = Instant::now();
    let (registered, compiled) = loop {
        let replies = c.replies()[before..].to_vec();
        let registered = replies
            .iter()
            .position(|r| r.to.iter().any(|t| t.contains("ann@participants.example")));
        let compiled = replies.iter().position(is_compile_reply);
        if let (Some(reg), Some(comp)) = (registered, compiled) {
            break (reg, comp);
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "not both answered: {replies:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        registered < compiled,
        "the registration waited for the compile request: {:?}",
        c.replies()[before..]
            .iter()
            .map(|r| (&r.subject, &r.body))
            .collect::<Vec<_>>()
    );
    let compile_replies: Vec<Reply> = c.replies()[before..]
        .iter()
        .filter(|r| is_compile_reply(r))
        .cloned()
        .collect();
    assert_eq!(compile_replies.len(), 1, "{compile_replies:?}");
    assert!(
        compile_replies[0].body.contains("stopped there"),
        "{}",
        compile_replies[0].body
    );
}

/// Issue 25, the operator's view: above 40 teams `knobeln status` sums the
/// teams up in one line (the mail lines follow at once), and `--teams`
/// lists every one.
#[test]
fn status_sums_up_a_large_field_and_lists_it_on_request() {
    let c = Contest::new("");
    let mails: Vec<PathBuf> = (0..41)
        .map(|i| c.registration_mail(&format!("p{i}"), &format!("Org {i}")))
        .collect();
    let refs: Vec<&Path> = mails.iter().map(PathBuf::as_path).collect();
    let out = c.ingest(&refs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = |extra: &[&str]| {
        let o = Command::new(BIN)
            .args(["status", "--config"])
            .arg(c.config())
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let short = status(&[]);
    assert!(
        short.contains(
            "41 registered team(s): 0 with an accepted version, 41 without \
             (each one: knobeln status --teams)"
        ),
        "{short}"
    );
    assert!(!short.contains("team_p7 "), "{short}");
    assert!(short.contains("outbox:"), "{short}");
    let long = status(&["--teams"]);
    assert!(long.contains("41 registered team(s):\n"), "{long}");
    for i in [0, 7, 40] {
        assert!(long.contains(&format!("team_p{i} ")), "{long}");
    }
}

/// Issue 25, the relay: registrations from one sender that name addresses
/// at a third party's domain send that domain nothing of the sender's text
/// (no team name, organization or members, no attachment), at most
/// `confirmations_per_domain_per_day` requests, one per address; the
/// sender hears about each. An answer from the address registers the
/// team there; an answer from anywhere else does nothing.
#[test]
fn registrations_naming_a_third_partys_addresses_relay_nothing() {
    let c = Contest::new("[limits]\nconfirmations_per_domain_per_day = 5\n");
    let payload = "Cheap Pills Inc, Pillcity, Pillland";
    let mails: Vec<PathBuf> = (0..12)
        .map(|i| {
            let victim = format!("victim{i}@third.example");
            c.mail(
                "attacker@evil.example",
                "registration for KNOBELN",
                &registration(&victim, &format!("team_{i}"), payload),
                "",
            )
        })
        .collect();
    // One address named twice.
    let again = c.mail(
        "attacker@evil.example",
        "registration for KNOBELN",
        &registration("victim0@third.example", "team_again", payload),
        "",
    );
    let mut refs: Vec<&Path> = mails.iter().map(PathBuf::as_path).collect();
    refs.push(&again);
    let out = c.ingest(&refs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replies = c.replies();
    let to_third: Vec<&Reply> = replies
        .iter()
        .filter(|r| r.to.iter().any(|t| t.ends_with("@third.example")))
        .collect();
    assert_eq!(to_third.len(), 5, "the domain's cap: {to_third:?}");
    let mut addresses: Vec<&String> = to_third.iter().flat_map(|r| &r.to).collect();
    addresses.sort();
    addresses.dedup();
    assert_eq!(addresses.len(), 5, "one request per address");
    for r in &to_third {
        assert!(r.attachments.is_empty(), "{r:?}");
        for stranger in [payload, "team_", "attacker@evil.example"] {
            assert!(!r.body.contains(stranger), "{stranger} in {}", r.body);
            assert!(!r.subject.contains(stranger), "{}", r.subject);
        }
        assert!(
            r.subject
                .starts_with("KNOBELN: please confirm your address ("),
            "{}",
            r.subject
        );
    }
    let to_sender = replies
        .iter()
        .filter(|r| r.to == ["attacker@evil.example"])
        .count();
    assert_eq!(to_sender, 13, "the sender hears about each registration");

    // An answer from elsewhere does nothing; from the address, it registers.
    let request = to_third
        .iter()
        .find(|r| r.to == ["victim3@third.example"])
        .expect("a request to victim3");
    let answer = |from: &str| {
        c.mail(
            from,
            &format!("Re: {}", request.subject),
            "yes, that was us",
            "",
        )
    };
    let forged = answer("attacker@evil.example");
    assert!(c.ingest(&[&forged]).status.success());
    let last = last_reply(&c);
    assert_eq!(last.to, ["attacker@evil.example"]);
    assert!(
        last.subject.contains("confirmation not known"),
        "{}",
        last.subject
    );
    let real = answer("victim3@third.example");
    assert!(c.ingest(&[&real]).status.success());
    let last = last_reply(&c);
    assert_eq!(last.to, ["victim3@third.example"]);
    assert!(
        last.subject.contains("registration accepted: team team_3"),
        "{}",
        last.subject
    );
    assert!(!auth_of(&last).is_empty());
    // The request was used: a second answer does nothing.
    let twice = answer("victim3@third.example");
    assert!(c.ingest(&[&twice]).status.success());
    let last = last_reply(&c);
    assert!(
        last.subject.contains("confirmation not known"),
        "{}",
        last.subject
    );
}

/// Red team G19: a refusal says what was wrong. A confirmation request
/// answered from another address than the one it went to (a forwarded
/// mailbox) was told "the answer does not come from the address the
/// request went to (ADDRESS)", naming the answer's own address as if the
/// request had gone there. Now it names both and says to answer from the
/// request's address, whose answer then registers the team. Before: no
/// "came from", and the request's address not named.
#[test]
fn an_answer_from_another_address_is_told_where_the_request_went() {
    let c = Contest::new("");
    let reg = c.mail(
        "sam@sender.example",
        "registration for KNOBELN",
        &registration("joe@team.example", "joes_team", "Joe's Org"),
        "",
    );
    assert!(c.ingest(&[&reg]).status.success());
    let request = c
        .replies()
        .into_iter()
        .find(|r| r.to == ["joe@team.example"] && r.subject.contains("please confirm"))
        .expect("a confirmation request");
    let answer = |from: &str| c.mail(from, &format!("Re: {}", request.subject), "yes\n", "");
    let elsewhere = answer("joe@forwarded.example");
    assert!(c.ingest(&[&elsewhere]).status.success());
    let told = last_reply(&c);
    assert_eq!(told.to, ["joe@forwarded.example"]);
    let body = flat(&told.body);
    assert!(
        body.contains("The request went to joe@team.example")
            && body.contains("this answer came from joe@forwarded.example")
            && body.contains("answer the request from joe@team.example itself"),
        "{body}"
    );
    let from_there = answer("joe@team.example");
    assert!(c.ingest(&[&from_there]).status.success());
    let last = last_reply(&c);
    assert!(
        last.subject
            .contains("registration accepted: team joes_team"),
        "{}",
        last.subject
    );
    // Answered: the code names no request any more.
    let again = answer("joe@forwarded.example");
    assert!(c.ingest(&[&again]).status.success());
    let body = flat(&last_reply(&c).body);
    assert!(body.contains("not known (any more)"), "{body}");
    assert!(!body.contains("joe@team.example"), "{body}");
}

/// Issue 35: a mailbox holds one team, however many `+tag`s and letter
/// cases a sender invents. The first registration from the mailbox is a
/// team; every tag after it (from the mailbox itself, which needs no
/// confirmation) is refused with the reason, and no confirmation request
/// goes anywhere.
#[test]
fn one_mailbox_holds_one_team_whatever_its_tags() {
    let c = Contest::new("");
    let mails: Vec<PathBuf> = (0..6)
        .map(|i| {
            let address = match i {
                0 => "Joe@Lords.Example".to_string(),
                5 => "JOE+Shout@lords.example".to_string(),
                _ => format!("joe+{i}@lords.example"),
            };
            c.mail(
                "joe@lords.example",
                "registration for KNOBELN",
                &registration(&address, &format!("tagged_{i}"), "Lords of Tags"),
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = mails.iter().map(PathBuf::as_path).collect();
    let out = c.ingest(&refs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replies = c.replies();
    let accepted: Vec<&Reply> = replies
        .iter()
        .filter(|r| r.subject.contains("registration accepted"))
        .collect();
    assert_eq!(accepted.len(), 1, "{replies:#?}");
    assert!(
        accepted[0].subject.contains("tagged_0"),
        "{}",
        accepted[0].subject
    );
    let refused: Vec<&Reply> = replies
        .iter()
        .filter(|r| {
            r.body
                .contains("The mailbox joe@lords.example already has 1 registered team")
        })
        .collect();
    assert_eq!(refused.len(), 5, "{replies:#?}");
    for r in &refused {
        assert!(
            !r.body.contains("tagged_0"),
            "a stranger learns no team: {}",
            r.body
        );
    }
    assert!(
        !replies.iter().any(|r| r.subject.contains("please confirm")),
        "{replies:#?}"
    );
}

/// Issue 35, lanes: strangers' mail never uses up what a participant
/// needs. Forged help mails use up the replies to a domain (two
/// strangers at mail.example), to a victim's own address (two mails
/// "from" ann) and to strangers in all (three strangers elsewhere):
/// ann's registration is kept and answered all the same (its answer
/// draws from the registration's budget, not the strangers'). Then, with
/// every stranger's budget still used up: ann's mailbox is a registered
/// team's, so a help mail from it is answered (a claim, but capped per
/// address only, never by its domain's strangers); a status request
/// proven by her authentification string is answered even after forged
/// mails "from" her used up her address's replies (the team's own
/// budget); and a new stranger gets nothing.
#[test]
fn strangers_floods_never_silence_a_participant() {
    let c = Contest::new(
        "[limits]\nreplies_per_sender_per_day = 2\nreplies_per_domain_per_day = 2\n\
         stranger_replies_per_day = 5\n",
    );
    let mut flood: Vec<PathBuf> = (0..2)
        .map(|i| c.mail(&format!("r{i}@mail.example"), "help", "hello", ""))
        .collect();
    flood.extend((0..2).map(|i| c.mail("Ann+x@Mail.Example", &format!("help {i}"), "hi", "")));
    flood.extend((0..3).map(|i| c.mail(&format!("s{i}@x{i}.example"), "help", "hello", "")));
    let refs: Vec<&Path> = flood.iter().map(PathBuf::as_path).collect();
    assert!(c.ingest(&refs).status.success());
    let before = c.replies().len();
    let stranger = c.mail("late@elsewhere.example", "help", "hello", "");
    let o = c.ingest(&[&stranger]);
    assert!(
        stdout(&o).contains("no reply: 5 replies to strangers today already"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        c.replies().len(),
        before,
        "the strangers' budget is used up"
    );

    let auth = c.register("ann@mail.example", "ann_team", "Ann's Org");
    let ack = last_reply(&c);
    assert!(
        ack.subject.contains("registration accepted"),
        "{}",
        ack.subject
    );
    assert_eq!(ack.to, ["ann@mail.example"]);

    // Her address's two replies a day were used by the forged mails; the
    // registration's answer did not count there. Her mailbox is a team's
    // now: one more reply to her address may go out, whatever the
    // strangers at mail.example and elsewhere used.
    let db = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    db.execute(
        "UPDATE outbox SET created_at = '1990-01-01T00:00:00Z' WHERE recipients LIKE '%nn%'",
        [],
    )
    .unwrap();
    drop(db);
    let help = c.mail("ann@mail.example", "help", "a question", "");
    let n = c.replies().len();
    assert!(c.ingest(&[&help]).status.success());
    let got = c.replies();
    assert!(
        got[n..].iter().any(|r| r.to == ["ann@mail.example"]),
        "a registered mailbox is no stranger: {:?}",
        &got[n..]
    );
    // Forged mails "from" her use up her address's replies again ...
    let forged: Vec<PathBuf> = (0..3)
        .map(|i| c.mail("ann@mail.example", &format!("forged {i}"), "x", ""))
        .collect();
    let refs: Vec<&Path> = forged.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert!(
        stdout(&o).contains("no reply: 2 replies to this sender today already"),
        "{}",
        stdout(&o)
    );
    // ... but what her authentification string proves has its own budget.
    let status = c.mail(
        "ann@mail.example",
        "status",
        &format!("<<FROM>> ann_team {auth}\n"),
        "",
    );
    let n = c.replies().len();
    assert!(c.ingest(&[&status]).status.success());
    let got = c.replies();
    assert_eq!(got.len(), n + 1, "the team's status is answered");
    assert!(
        got[n].subject.to_lowercase().contains("status"),
        "{}",
        got[n].subject
    );
}

/// Lanes for the kit: strangers at many domains (and at the participant's
/// own domain) use up the kits of a day, yet a proven team's mailbox
/// still gets the kit (its kits are its own: its per-mailbox cap, no
/// domain's and no day's in all, like its other replies), and a new
/// stranger still gets none.
#[test]
fn strangers_kits_never_use_up_a_participants_kit() {
    let c = Contest::new(
        "[limits]\nkits_per_day = 2\nkits_per_domain_per_day = 2\nkits_per_sender_per_day = 5\n",
    );
    // Ann's address proves itself by her team's string (a mailbox only a
    // From line registered is a stranger's for kits: the next test).
    c.register_and_prove("ann@mail.example", "ann_team", "Ann's Org");
    let flood: Vec<PathBuf> = (0..3)
        .map(|i| {
            c.mail(
                &format!("s{i}@mail.example"),
                "SEND knobelnsoftware",
                "",
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = flood.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert!(
        stdout(&o).contains("no participant kit: 2 kits went to strangers today"),
        "{}",
        stdout(&o)
    );
    let kits = |c: &Contest, to: &str| {
        c.replies()
            .into_iter()
            .filter(|r| r.subject.contains("participant kit") && r.to == [to])
            .count()
    };
    let ask = c.mail("ann@mail.example", "SEND knobelnsoftware", "", "");
    let o = c.ingest(&[&ask]);
    assert_eq!(kits(&c, "ann@mail.example"), 1, "{}", stdout(&o));
    // A proven mailbox's kits are its own: not counted among the day's 2
    // (issue 35/38: no pool shared by proven mailboxes), capped per
    // mailbox (5 here).
    let again: Vec<PathBuf> = (0..5)
        .map(|_| c.mail("ann@mail.example", "SEND knobelnsoftware", "", ""))
        .collect();
    let refs: Vec<&Path> = again.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert_eq!(kits(&c, "ann@mail.example"), 5, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("no participant kit: at most 5 kits a day to one mailbox"),
        "{}",
        stdout(&o)
    );
    // A participant at its cap is told why, in the kit's place, and that
    // its team's line has kits nobody else can spend.
    let note = last_reply(&c);
    assert!(
        note.subject.contains("kit request: not sent")
            && note.to == ["ann@mail.example"]
            && note.attachments.is_empty()
            && flat(&note.body).contains("<<FROM>> team_name auth_string"),
        "{note:?}"
    );
    let late = c.mail("late@elsewhere.example", "SEND knobelnsoftware", "", "");
    let o = c.ingest(&[&late]);
    assert!(
        stdout(&o).contains("no participant kit: 2 kits went to strangers today"),
        "{}",
        stdout(&o)
    );
    assert!(
        c.replies()
            .iter()
            .all(|r| r.to != ["late@elsewhere.example"]),
        "a stranger at a kit cap gets no mail at all"
    );
}

/// Issue 38 (a claim is not an identity): registrations from forged From
/// lines prove nothing, so kits asked for in their mailboxes' names are
/// strangers' kits, charged to the strangers' budget. Before, each such
/// mailbox drew on the registered mailboxes' kit lane (`kits_per_day` in
/// all), so a forger's registrations and one kit request each used up the
/// kits of every team whose address had proved itself: Ann's request from
/// her proven mailbox then got none. Now the forged mailboxes' kits use up
/// the strangers' lane (a stranger then gets none), Ann's lane is
/// untouched, and her team's string has its own lane besides.
#[test]
fn forged_registrations_never_spend_a_proven_mailboxs_kit() {
    let c = Contest::new(
        "[limits]\nkits_per_day = 2\nkits_per_domain_per_day = 20\nkits_per_sender_per_day = 2\n",
    );
    let auth = c.register_and_prove("ann@mail.example", "ann_team", "Ann's Org");
    // The forger registers three teams from forged From lines, then asks
    // for a kit in each mailbox's name.
    let forged: Vec<PathBuf> = (0..3)
        .map(|i| {
            c.mail(
                &format!("f{i}@forged.example"),
                "registration for KNOBELN",
                &registration(
                    &format!("f{i}@forged.example"),
                    &format!("forged_team_{i}"),
                    &format!("Forged Org {i}"),
                ),
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = forged.iter().map(PathBuf::as_path).collect();
    assert!(c.ingest(&refs).status.success());
    let requests: Vec<PathBuf> = (0..3)
        .map(|i| {
            c.mail(
                &format!("f{i}@forged.example"),
                "SEND knobelnsoftware",
                "",
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = requests.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert!(
        stdout(&o).contains("no participant kit: 2 kits went to strangers today"),
        "{}",
        stdout(&o)
    );
    let kits = |c: &Contest, to: &str| {
        c.replies()
            .into_iter()
            .filter(|r| r.subject.contains("participant kit") && r.to == [to])
            .count()
    };
    let ask = c.mail("ann@mail.example", "SEND knobelnsoftware", "", "");
    let o = c.ingest(&[&ask]);
    assert_eq!(
        kits(&c, "ann@mail.example"),
        1,
        "a proven mailbox's kit, whatever forged registrations asked: {}",
        stdout(&o)
    );
    let with_string = c.mail(
        "ann@mail.example",
        "SEND knobelnsoftware",
        &format!("<<FROM>> ann_team {auth}\n"),
        "",
    );
    let o = c.ingest(&[&with_string]);
    assert_eq!(kits(&c, "ann@mail.example"), 2, "{}", stdout(&o));
    // The forged mailboxes' kits were the strangers': a stranger finds
    // their lane spent.
    let stranger = c.mail("late@elsewhere.example", "SEND knobelnsoftware", "", "");
    let o = c.ingest(&[&stranger]);
    assert!(
        stdout(&o).contains("no participant kit: 2 kits went to strangers today"),
        "{}",
        stdout(&o)
    );
    assert_eq!(kits(&c, "late@elsewhere.example"), 0);
}

/// Issue 35/38 (a claim is not an identity): a forger who knows proven
/// teams' addresses (the LAP list publishes them) asks for a kit From
/// each. Before, a proven mailbox's kits came out of one pool of
/// `kits_per_day` shared by every proven mailbox, so three forged
/// requests at `kits_per_day` 2 spent the day's pool and Ann's own
/// request from her proven mailbox got no kit. Now a proven mailbox's
/// kits are its own (per mailbox, sent only to it): the forged requests
/// each send their named mailbox its kit (within that mailbox's 2), and
/// Ann still gets hers; a stranger finds the strangers' lane untouched.
#[test]
fn a_forger_naming_proven_mailboxes_never_spends_another_proven_mailboxs_kit() {
    let c = Contest::new(
        "[limits]\nkits_per_day = 2\nkits_per_domain_per_day = 20\nkits_per_sender_per_day = 2\n",
    );
    c.register_and_prove("ann@mail.example", "ann_team", "Ann's Org");
    let named: Vec<String> = (0..3).map(|i| format!("p{i}@team{i}.example")).collect();
    for (i, address) in named.iter().enumerate() {
        c.register_and_prove(address, &format!("team_{i}"), &format!("Org {i}"));
    }
    let kits = |c: &Contest, to: &str| {
        c.replies()
            .into_iter()
            .filter(|r| r.subject.contains("participant kit") && r.to == [to])
            .count()
    };
    // The forger's requests, each From a proven mailbox it does not own.
    let forged: Vec<PathBuf> = named
        .iter()
        .map(|a| c.mail(a, "SEND knobelnsoftware", "", ""))
        .collect();
    let refs: Vec<&Path> = forged.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert!(o.status.success(), "{}", stdout(&o));
    let ask = c.mail("ann@mail.example", "SEND knobelnsoftware", "", "");
    let o = c.ingest(&[&ask]);
    assert_eq!(
        kits(&c, "ann@mail.example"),
        1,
        "Ann's proven mailbox gets its kit whatever was asked in other proven mailboxes' names: {}",
        stdout(&o)
    );
    // The forged requests' kits went to the mailboxes they named.
    for address in &named {
        assert_eq!(
            kits(&c, address),
            1,
            "the forged request's kit goes to the mailbox it names, counted there"
        );
    }
    let stranger = c.mail("late@elsewhere.example", "SEND knobelnsoftware", "", "");
    let o = c.ingest(&[&stranger]);
    assert_eq!(kits(&c, "late@elsewhere.example"), 1, "{}", stdout(&o));
}

/// Issue 38 (proof is an auth string): a team's program may send the
/// team's mails (a script that sends its strategy marks them
/// `Auto-Submitted: auto-generated`, as RFC 3834 asks). Such a mail with
/// the team's string is the team's: processed, and answered once in 24
/// hours, to the team's mailbox only, the answer saying why (RFC 3834: no
/// automatic answer to automatic mail, so that no two programs answer each
/// other for ever). Before, it was dropped unanswered and the team never
/// learnt what became of it. An auto-responder's answer (`auto-replied`)
/// quoting the string, and a program's mail without it, still get none.
#[test]
fn a_teams_programs_mail_is_processed_and_answered_once_a_day() {
    let c = Contest::new("");
    let auth = c.register("ann@mail.example", "ann_team", "Ann's Org");
    let sent = c.replies().len();
    let generated = "Auto-Submitted: auto-generated\r\n";
    let first = c.mail(
        "ann@mail.example",
        "status",
        &format!("<<FROM>> ann_team {auth}\n"),
        &format!("Reply-To: victim@elsewhere.example\r\n{generated}"),
    );
    let o = c.ingest(&[&first]);
    let replies = c.replies();
    assert_eq!(replies.len(), sent + 1, "{}", stdout(&o));
    let answer = replies.last().unwrap();
    assert_eq!(answer.to, ["ann@mail.example"], "the team's mailbox only");
    assert!(
        answer.body.contains("\"Auto-Submitted: auto-generated\"")
            && answer.body.contains("at most once in 24 hours"),
        "{}",
        answer.body
    );
    assert!(
        stdout(&o).contains("(no copy outside the team's mailbox"),
        "{}",
        stdout(&o)
    );
    // The next of the day is processed, not answered, and says why.
    let second = c.mail(
        "ann@mail.example",
        "mail-preference",
        &format!("<<FROM>> ann_team {auth}\nmail-preference: GRR\n"),
        generated,
    );
    let o = c.ingest(&[&second]);
    assert_eq!(c.replies().len(), sent + 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains(": done: ")
            && stdout(&o).contains("(no reply: a team's program is answered once in 24 hours"),
        "{}",
        stdout(&o)
    );
    // An auto-responder's answer quoting the string, and a program's mail
    // without it, are never answered.
    let auto_reply = c.mail(
        "ann@mail.example",
        "status",
        &format!("> <<FROM>> ann_team {auth}\n<<FROM>> ann_team {auth}\n"),
        "Auto-Submitted: auto-replied\r\n",
    );
    let stranger = c.mail("bot@elsewhere.example", "status", "", generated);
    let o = c.ingest(&[&auto_reply, &stranger]);
    assert_eq!(c.replies().len(), sent + 1, "{}", stdout(&o));
    assert_eq!(
        stdout(&o)
            .matches("automatic mail (auto_submitted), not answered")
            .count(),
        2,
        "{}",
        stdout(&o)
    );
}

/// Hostile review (issue 38's leftovers): mails forged "from" a registered
/// team's mailbox use up that mailbox's kits (the registered mailboxes'
/// lane, 2 a day), yet a request carrying the team's authentification
/// string still gets the kit: it draws on the team's own budget, which no
/// stranger can spend (before, it shared the forged mails' lane). The
/// team's lane has its own cap, and a wrong string is a stranger's.
#[test]
fn a_kit_request_with_the_teams_string_draws_on_the_teams_own_budget() {
    let c = Contest::new(
        "[limits]\nkits_per_day = 2\nkits_per_domain_per_day = 2\nkits_per_sender_per_day = 2\n",
    );
    let auth = c.register("ann@mail.example", "ann_team", "Ann's Org");
    let kits = |c: &Contest| {
        c.replies()
            .into_iter()
            .filter(|r| r.subject.contains("participant kit") && r.to == ["ann@mail.example"])
            .count()
    };
    let forged: Vec<PathBuf> = (0..3)
        .map(|_| c.mail("ann@mail.example", "SEND knobelnsoftware", "", ""))
        .collect();
    let refs: Vec<&Path> = forged.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert_eq!(kits(&c), 2, "{}", stdout(&o));
    assert!(stdout(&o).contains("no participant kit:"), "{}", stdout(&o));
    let wrong = c.mail(
        "ann@mail.example",
        "SEND knobelnsoftware",
        "<<FROM>> ann_team not_the_string\n",
        "",
    );
    let o = c.ingest(&[&wrong]);
    assert_eq!(
        kits(&c),
        2,
        "a wrong string is a stranger's: {}",
        stdout(&o)
    );
    let proven: Vec<PathBuf> = (0..3)
        .map(|_| {
            c.mail(
                "ann@mail.example",
                "SEND knobelnsoftware",
                &format!("<<FROM>> ann_team {auth}\n"),
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = proven.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert_eq!(kits(&c), 4, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("no participant kit: at most 2 kits a day to one team (team ann_team)"),
        "{}",
        stdout(&o)
    );
    // The team asked with its string: it is told why, in the kit's place
    // (a stranger at a cap, the forged requests above, is told nothing).
    let notes: Vec<Reply> = c
        .replies()
        .into_iter()
        .filter(|r| r.subject.contains("kit request: not sent"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", stdout(&o));
    assert_eq!(notes[0].to, ["ann@mail.example"]);
    assert!(
        flat(&notes[0].body).contains("at most 2 kits a day to one team")
            && notes[0].attachments.is_empty(),
        "{}",
        notes[0].body
    );
}

/// Red team G19: a team's string proves the team, not the address its
/// mail names in `Reply-To`. A hostile team sent `status` with its string
/// and `Reply-To: victim@elsewhere.example`: every reply went to the
/// victim too, charged to the team's 200 a day only, so one team made the
/// server send four times what a stranger's word can make it send to an
/// address (50 a day), and its teams together 200 times as many. Now a
/// copy to an address outside the team's mailbox counts among that
/// address's replies of the day, whoever pays for it: past the cap the
/// team's own address still gets its reply, the victim none, and a
/// stranger's mail "from" the victim finds the day's replies spent.
/// Before: 5 copies to the victim, and the stranger's help a sixth mail.
#[test]
fn a_teams_string_sends_no_more_to_another_address_than_a_strangers_word() {
    let c = Contest::new("[limits]\nreplies_per_sender_per_day = 3\n");
    let auth = c.register("mal@mail.example", "mal_team", "Mal's Org");
    let victim = "victim@elsewhere.example";
    let to = |c: &Contest, who: &str| {
        c.replies()
            .into_iter()
            .filter(|r| r.to.iter().any(|t| t == who))
            .count()
    };
    let mal_before = to(&c, "mal@mail.example");
    let reflected: Vec<PathBuf> = (0..5)
        .map(|_| {
            c.mail(
                "mal@mail.example",
                "status",
                &format!("<<FROM>> mal_team {auth}\n"),
                &format!("Reply-To: {victim}\r\n"),
            )
        })
        .collect();
    let refs: Vec<&Path> = reflected.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert!(o.status.success(), "{}", stdout(&o));
    assert_eq!(to(&c, victim), 3, "{}", stdout(&o));
    assert_eq!(
        to(&c, "mal@mail.example"),
        mal_before + 5,
        "the team's own address gets every reply: {}",
        stdout(&o)
    );
    assert_eq!(
        stdout(&o)
            .matches(&format!(
                "(no copy to {victim}: 3 replies to this address today already)"
            ))
            .count(),
        2,
        "{}",
        stdout(&o)
    );
    // The team's copies spent the address's day, as a stranger's replies
    // would have: its own mail gets no fourth.
    let stranger = c.mail(victim, "help", "hello", "");
    let o = c.ingest(&[&stranger]);
    assert!(
        stdout(&o).contains("no reply: 3 replies to this sender today already"),
        "{}",
        stdout(&o)
    );
    assert_eq!(to(&c, victim), 3);
    // A copy to another spelling of the team's own mailbox is the team's.
    let own: Vec<PathBuf> = (0..4)
        .map(|_| {
            c.mail(
                "mal@mail.example",
                "status",
                &format!("<<FROM>> mal_team {auth}\n"),
                "Reply-To: Mal+Box@Mail.Example\r\n",
            )
        })
        .collect();
    let refs: Vec<&Path> = own.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert!(!stdout(&o).contains("no copy"), "{}", stdout(&o));
    assert_eq!(to(&c, "Mal+Box@mail.example"), 4, "{}", stdout(&o));
}

/// Red team G19: the kit is the largest reply; a team's kit goes where the
/// mail's `Reply-To` says, counted only among the team's own two a day.
/// Two teams sent two kits each to one victim: four kits reached it,
/// where a stranger's word gets an address two. Now a team's kit to an
/// address outside its mailbox counts among that address's kits of the
/// day: the victim gets two in all. Before: four.
#[test]
fn teams_kits_to_another_address_count_among_its_kits() {
    let c = Contest::new("[limits]\nkits_per_sender_per_day = 2\n");
    let victim = "victim@elsewhere.example";
    let mut auths = Vec::new();
    for who in ["mal", "eve"] {
        let address = format!("{who}@mail{who}.example");
        auths.push((
            who,
            c.register(&address, &format!("{who}_team"), &format!("{who}'s Org")),
        ));
    }
    let kits = |c: &Contest| {
        c.replies()
            .into_iter()
            .filter(|r| r.subject.contains("participant kit") && r.to.iter().any(|t| t == victim))
            .count()
    };
    let requests: Vec<PathBuf> = auths
        .iter()
        .flat_map(|(who, auth)| {
            let c = &c;
            (0..2).map(move |_| {
                c.mail(
                    &format!("{who}@mail{who}.example"),
                    "SEND knobelnsoftware",
                    &format!("<<FROM>> {who}_team {auth}\n"),
                    &format!("Reply-To: {victim}\r\n"),
                )
            })
        })
        .collect();
    let refs: Vec<&Path> = requests.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert!(o.status.success(), "{}", stdout(&o));
    assert_eq!(kits(&c), 2, "{}", stdout(&o));
    assert_eq!(
        stdout(&o)
            .matches(&format!(
                "(no kit to {victim}: at most 2 kits a day to one address)"
            ))
            .count(),
        2,
        "{}",
        stdout(&o)
    );
}

/// Issue 35, nothing kept without its answer, bounded in all: confirmation
/// requests (a registration naming another address) are capped in all per
/// day, whatever the number of domains, and the refusal says how to
/// register anyway (from the address itself). A pending registration
/// keeps the form only, never what follows the signature.
#[test]
fn confirmation_requests_are_capped_in_all_and_pending_forms_are_bounded() {
    let c = Contest::new("[limits]\nconfirmations_per_day = 3\n");
    let padding = format!("-- \n{}\n", "x".repeat(200_000));
    let mails: Vec<PathBuf> = (0..5)
        .map(|i| {
            c.mail(
                "attacker@evil.example",
                "registration for KNOBELN",
                &format!(
                    "{}{padding}",
                    registration(&format!("v{i}@d{i}.example"), &format!("t{i}"), "Org")
                ),
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = mails.iter().map(PathBuf::as_path).collect();
    assert!(c.ingest(&refs).status.success());
    let replies = c.replies();
    let requests = replies
        .iter()
        .filter(|r| r.subject.contains("please confirm"))
        .count();
    assert_eq!(requests, 3, "the day's confirmation requests in all");
    let refused: Vec<_> = replies
        .iter()
        .filter(|r| r.subject.contains("no confirmation request sent"))
        .collect();
    assert_eq!(refused.len(), 2);
    assert!(
        refused[0]
            .body
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("from that address itself"),
        "{}",
        refused[0].body
    );
    let db = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    let (rows, bytes): (i64, i64) = db
        .query_row(
            "SELECT COUNT(*), SUM(length(body)) FROM pending_registrations",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(rows, 3);
    assert!(bytes < 3 * 1000, "only the forms are kept: {bytes} bytes");
}

/// One confirmation request a day per mailbox, whatever the spelling of
/// its address (case, `+tag`): a stranger cannot send ten to one person.
#[test]
fn one_confirmation_request_a_day_per_mailbox_whatever_its_spelling() {
    let c = Contest::new("");
    let mails: Vec<PathBuf> = [
        "Victim@d.example",
        "victim+1@d.example",
        "VICTIM+2@D.example",
    ]
    .iter()
    .enumerate()
    .map(|(i, address)| {
        c.mail(
            "attacker@evil.example",
            "registration for KNOBELN",
            &registration(address, &format!("t{i}"), "Org, City, Land"),
            "",
        )
    })
    .collect();
    let refs: Vec<&Path> = mails.iter().map(PathBuf::as_path).collect();
    c.ingest(&refs);
    let requests = c
        .replies()
        .iter()
        .filter(|r| r.subject.contains("please confirm"))
        .count();
    assert_eq!(requests, 1);
}

/// Issue 35, replies no larger than needed: a 150 kB registration form is
/// refused in a few lines (its record is never stored, acknowledged or put
/// into a LAP mail), and a form of 190 bad lines draws a rejection that
/// lists a dozen problems and counts the rest, not one quoting every line.
#[test]
fn a_large_or_long_bad_form_draws_a_short_answer() {
    let c = Contest::new("");
    let members: String = (0..40)
        .map(|i| format!(" Member {i}, 30, {}\n writes C\n", "x".repeat(3800)))
        .collect();
    let big = format!(
        "mail-address: big@participants.example\nmail-preference: LAP\nteam-name: big_team\n\
         Organization: Big Org, City, Land\nteam-members:\n{members}"
    );
    let bad: String = (0..190)
        .map(|i| format!("nonsense line {i}: {}\n", "y".repeat(40)))
        .collect();
    let mails = [
        c.mail(
            "big@participants.example",
            "registration for KNOBELN",
            &big,
            "",
        ),
        c.mail(
            "bad@participants.example",
            "registration for KNOBELN",
            &bad,
            "",
        ),
    ];
    let refs: Vec<&Path> = mails.iter().map(PathBuf::as_path).collect();
    assert!(c.ingest(&refs).status.success());
    let replies = c.replies();
    assert_eq!(replies.len(), 2, "{replies:#?}");
    for r in &replies {
        assert!(r.subject.contains("not accepted"), "{}", r.subject);
        assert!(
            r.body.len() < 16 * 1024,
            "a reply of {} bytes",
            r.body.len()
        );
    }
    let to = |who: &str| {
        replies
            .iter()
            .find(|r| r.to == [format!("{who}@participants.example")])
            .unwrap()
    };
    assert!(
        to("big").body.contains("a registration has at most 16384"),
        "{}",
        to("big").body
    );
    assert!(
        to("bad").body.contains("more problem(s)"),
        "{}",
        to("bad").body
    );
}

/// Hostile review (the mends' one count builder): a team proven by its
/// string that mails more than `replies_per_team_per_day` in a day gets
/// that many replies and no more, the rest logged as capped; mails forged
/// from its address without the string never use up the team's replies.
#[test]
fn replies_to_one_team_are_capped_per_day() {
    let c = Contest::new("[limits]\nreplies_per_team_per_day = 3\n");
    let auth = c.register("bea@mail.example", "bea_team", "Bea's Org");
    let to_bea = |c: &Contest| {
        c.replies()
            .into_iter()
            .filter(|r| r.to == ["bea@mail.example"])
            .count()
    };
    let before = to_bea(&c);
    let forged = c.mail("bea@mail.example", "status", "", "");
    let o = c.ingest(&[&forged]);
    assert!(o.status.success(), "{}", stdout(&o));
    let after_forged = to_bea(&c);
    let proven: Vec<PathBuf> = (0..5)
        .map(|_| {
            c.mail(
                "bea@mail.example",
                "status",
                &format!("<<FROM>> bea_team {auth}\n"),
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = proven.iter().map(PathBuf::as_path).collect();
    let o = c.ingest(&refs);
    assert_eq!(to_bea(&c), after_forged + 3, "{}", stdout(&o));
    assert!(after_forged <= before + 1);
    assert_eq!(
        stdout(&o)
            .matches("(no reply: 3 replies to this team today already)")
            .count(),
        2,
        "{}",
        stdout(&o)
    );
}

/// Issue 38: the strangers' budget at intake, on the spool through
/// `serve --once`. 60 mails of 20 kB from forged senders at 12 domains,
/// then a proven team's compile request and the answer to a confirmation
/// request: the inbox keeps 10 of the flood whole (the budget), every
/// other as a key row under 1 KiB, never answered; the compile request and
/// the confirmation are answered in the same cycle. The flood's rows 24
/// hours older, a stranger is taken whole and answered again. Before the
/// budget, all 60 were stored whole and answered.
#[test]
fn a_strangers_flood_past_the_budget_keeps_keys_and_participants_are_answered_at_once() {
    let c = Contest::new(
        "[limits]\nstranger_mails_per_day = 10\nstranger_mails_per_domain_per_day = 4\n\
         stranger_mails_per_sender_per_day = 2\nstranger_keys_per_day = 40\n",
    );
    let auth = c.register_joe();
    // A registration naming another address: a request to bob.
    let reg = c.mail(
        "ann@newcomer.example",
        "registration for KNOBELN",
        &registration("bob@newcomer.example", "bobs_team", "Bob's Lab, City, Land"),
        "",
    );
    assert!(c.ingest(&[&reg]).status.success());
    let request = c
        .replies()
        .into_iter()
        .find(|r| r.to == ["bob@newcomer.example"])
        .expect("a confirmation request to bob");
    let new = c.spool().join("incoming/new");
    std::fs::create_dir_all(&new).unwrap();
    let filler = "x".repeat(20_000);
    for i in 0..60 {
        let m = c.mail(&format!("s{i}@d{}.example", i % 12), "help", &filler, "");
        std::fs::rename(&m, new.join(format!("a{i:03}.eml"))).unwrap();
    }
    // Taken in after the flood (files go in name order).
    std::fs::rename(c.joe_compile(&auth), new.join("z1.eml")).unwrap();
    let answer = c.mail(
        "bob@newcomer.example",
        &format!("Re: {}", request.subject),
        "yes, that was us",
        "",
    );
    std::fs::rename(&answer, new.join("z2.eml")).unwrap();
    let before = c.replies().len();
    let serve_once = || {
        let o = Command::new(BIN)
            .args(["serve", "--once", "--config"])
            .arg(c.config())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stdout(&o));
    };
    serve_once();
    let got = c.replies()[before..].to_vec();
    assert!(
        got.iter()
            .any(|r| r.to == ["joe@lords.example"] && r.subject.contains("compilation report")),
        "the team's compile request is answered: {got:?}"
    );
    assert!(
        got.iter().any(|r| r.to == ["bob@newcomer.example"]
            && r.subject.contains("registration accepted: team bobs_team")),
        "the confirmation registers bob: {got:?}"
    );
    let to_flood = got
        .iter()
        .filter(|r| r.to.iter().any(|t| t.starts_with('s')))
        .count();
    assert_eq!(
        to_flood, 10,
        "only the mails within the budget are answered"
    );

    let db = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    let count = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT COUNT(*) FROM inbox WHERE origin LIKE 'spool:a%' AND stranger_sender IS NOT NULL"),
        10
    );
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM inbox WHERE origin LIKE 'spool:a%' AND length(CAST(raw AS BLOB)) = 0
                AND state = 'ignored' AND outcome LIKE 'not taken in: %the strangers'' budget%'"
        ),
        40,
        "key rows up to their bound"
    );
    // Past the key rows' bound: not stored, counted on its day.
    assert_eq!(
        count("SELECT COUNT(*) FROM inbox WHERE origin LIKE 'spool:a%'"),
        50
    );
    assert_eq!(count("SELECT sum(mails) FROM inbox_unkept"), 10);
    let status = Command::new(BIN)
        .args(["status", "--config"])
        .arg(c.config())
        .output()
        .unwrap();
    assert!(
        stdout(&status).contains(
            "past their budget in 24 hours: 40 mail(s) kept as their keys only, 10 not stored"
        ),
        "{}",
        stdout(&status)
    );
    let widest_key_row = count(
        "SELECT max(length(origin) + coalesce(length(message_id), 0) + length(dedupe_key)
                    + length(received_at) + length(outcome) + length(processed_at) + 64)
           FROM inbox WHERE origin LIKE 'spool:a%' AND length(CAST(raw AS BLOB)) = 0",
    );
    assert!(widest_key_row < 1024, "{widest_key_row}");
    assert!(
        count("SELECT sum(length(CAST(raw AS BLOB))) FROM inbox WHERE origin LIKE 'spool:a%'")
            <= 10 * 21_000,
        "the flood's bytes in the inbox"
    );
    assert_eq!(
        std::fs::read_dir(&new).unwrap().count(),
        0,
        "every file taken in"
    );

    // A day later (the flood's rows 24 hours older): a stranger again.
    db.execute(
        "UPDATE inbox SET received_at = '2000-01-01T00:00:00.000Z' WHERE stranger_sender IS NOT NULL",
        [],
    )
    .unwrap();
    drop(db);
    let late = c.mail("late@fresh.example", "help", "hello", "");
    std::fs::rename(&late, new.join("b001.eml")).unwrap();
    let n = c.replies().len();
    serve_once();
    assert!(
        c.replies()[n..]
            .iter()
            .any(|r| r.to == ["late@fresh.example"]),
        "the budget renews"
    );
}
