//! The organizer's view and levers, end to end on the spool transport:
//! subjects behind reply prefixes, the help mail and the forward to the
//! organizer, a team's status and mail-preference by mail, the admin
//! commands (each logged), the reminder for teams without a strategy, the
//! organizer's list at the start, registration closing at the start, and
//! the contest lease (two starts at once, `serve` and `contest start`, a
//! holder killed with `kill -9`, a stale lease of another machine).

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::mail_spool::{auth_of, registration, submission, Contest, Reply, REGISTRATION};

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");
const JOE: &str = "joe@lords.example";
const JOE_TEAM: &str = "the_heavy_lords_of_knobeln";
const ORGANIZER: &str = "organizer@contest.example";
/// What `please compile`, `status` and `mail-preference` answer to a team
/// name and string that do not match.
const REFUSAL: &str =
    "The team name and the authentification string in the <<FROM>> line do not match any registration.";

/// The text with every run of blanks and line breaks as one blank (mails
/// are wrapped at 72 columns).
fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn knobeln(c: &Contest, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--config")
        .arg(c.config())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// What the server wrote of the last mail it took in.
fn last_outcome(c: &Contest) -> String {
    db(c)
        .query_row(
            "SELECT outcome FROM inbox ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

fn db(c: &Contest) -> rusqlite::Connection {
    rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap()
}

/// The replies written since `before` of them.
fn new_replies(c: &Contest, before: usize) -> Vec<Reply> {
    c.replies().into_iter().skip(before).collect()
}

/// Ingests one mail and returns the replies it caused.
fn ask(c: &Contest, from: &str, subject: &str, body: &str) -> Vec<Reply> {
    let before = c.replies().len();
    let m = c.mail(from, subject, body, "");
    let out = c.ingest(&[&m]);
    assert!(out.status.success(), "{}", text(&out));
    new_replies(c, before)
}

/// Registers `team` at `address` (preferences as given) and returns its auth string.
fn register(c: &Contest, address: &str, team: &str, prefs: &str) -> String {
    let body = registration(address, team, "Uni, City, Land").replace(
        "mail-preference: LAP,DGP,GRG,RSM",
        &format!("mail-preference: {prefs}"),
    );
    let r = ask(c, address, "registration for KNOBELN", &body);
    auth_of(r.last().expect("an acknowledgement"))
}

fn compile(c: &Contest, address: &str, source: &str) -> Reply {
    let r = ask(c, address, "please compile", source);
    assert!(
        r[0].subject.contains("accepted"),
        "{}\n{}",
        r[0].subject,
        r[0].body
    );
    r[0].clone()
}

#[test]
fn commands_are_recognized_behind_reply_and_forward_prefixes_in_any_case() {
    let c = Contest::new("");
    let r = ask(&c, JOE, "AW: WG: Registration  For KNOBELN", REGISTRATION);
    assert_eq!(r.len(), 1, "{r:?}");
    let auth = auth_of(&r[0]);
    let r = ask(
        &c,
        JOE,
        "Re[2]: RE: please   compile",
        &submission(JOE_TEAM, &auth),
    );
    assert!(r[0].body.contains("Result: ACCEPTED"), "{}", r[0].body);
    let r = ask(&c, JOE, "Fwd: send KNOBELNSOFTWARE", "");
    assert!(r[0].attachments.iter().any(|a| a == "knobellib.c"));
    let r = ask(
        &c,
        JOE,
        "re: re: Status",
        &format!("<<FROM>> {JOE_TEAM} {auth}\n"),
    );
    assert!(r[0].subject.contains("status of team"), "{}", r[0].subject);
    // None of these was forwarded to the organizer.
    assert!(c.replies().iter().all(|m| m.to != [ORGANIZER]));
}

#[test]
fn a_mail_that_is_no_command_gets_help_and_is_forwarded_within_the_cap_and_never_in_a_loop() {
    let c = Contest::new("[limits]\nforwards_per_day = 2\n");
    let r = ask(
        &c,
        "Ann Lee <ann@participants.example>",
        "question about rule 6",
        "Does a series of 8 equal throws count?\n",
    );
    assert_eq!(r.len(), 2, "{r:?}");
    let (help, fwd) = (&r[0], &r[1]);
    assert_eq!(help.to, ["ann@participants.example"]);
    assert!(help.body.contains("status"), "{}", help.body);
    assert!(help.body.contains("mail-preference"), "{}", help.body);
    assert!(help.body.contains(ORGANIZER), "{}", help.body);
    assert!(help.body.contains("passed on to the organizer"));
    assert_eq!(fwd.to, [ORGANIZER]);
    assert!(
        fwd.subject.contains("question about rule 6"),
        "{}",
        fwd.subject
    );
    assert!(fwd.subject.contains("ann@participants.example"));
    assert!(fwd.body.contains("Does a series of 8 equal throws count?"));
    assert!(fwd.body.contains("Ann Lee <ann@participants.example>"));
    assert!(fwd.headers.contains("X-Loop: knobeln@contest.example"));
    assert!(fwd.headers.contains("Auto-Submitted: auto-generated"));

    // The cap is two forwards a day, for all senders together.
    assert_eq!(ask(&c, "bob@participants.example", "hi", "?").len(), 2);
    let r = ask(&c, "cy@participants.example", "hello", "?");
    assert_eq!(r.len(), 1, "help only, the cap is reached: {r:?}");
    assert!(!r[0].body.contains("passed on to the organizer"));
    let outcome = last_outcome(&c);
    assert!(
        outcome.contains("not forwarded: 2 forwards today"),
        "{outcome}"
    );
    // Issue 35: strangers' forwards used up the day's; a registered
    // team's mailbox still has forwards of its own.
    // (Proven: since red team G19 a registration a From line alone made
    // has no forwards of its own.)
    let auth = register(&c, "dee@participants.example", "team_dee", "GRR");
    ask(
        &c,
        "dee@participants.example",
        "status",
        &format!("<<FROM>> team_dee {auth}\n"),
    );
    let r = ask(&c, "dee@participants.example", "a real question", "?");
    assert_eq!(
        r.len(),
        2,
        "a registered mailbox's question is forwarded: {r:?}"
    );
    assert_eq!(r[1].to, [ORGANIZER]);

    // The organizer's own mail (a reply to a forward) is never forwarded,
    // nor is automatic mail answered at all.
    let c = Contest::new("");
    let r = ask(&c, ORGANIZER, "Re: KNOBELN forward from x: y", "ok");
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].to, [ORGANIZER]);
    assert!(r[0].subject.contains("how to talk"));
    let before = c.replies().len();
    let m = c.mail(
        "ann@participants.example",
        "Out of office",
        "back on Monday",
        "Auto-Submitted: auto-replied\r\n",
    );
    c.ingest(&[&m]);
    assert_eq!(
        c.replies().len(),
        before,
        "automatic mail: no help, no forward"
    );
}

/// Red team G19: a registration a From line alone made is a stranger's
/// making (red team F11), and buys no forwards beside the strangers'. A
/// forger registered mailboxes by their From lines (each a claim, never
/// proven) and asked questions from each: every registered mailbox had
/// three forwards a day of its own, so the organizer got three a day per
/// forged registration (1500 at 500 places, each mail kept whole 90 days
/// as its forward says) where strangers get `forwards_per_day` in all.
/// Now only a mailbox whose registration proved its address (a mail with
/// the team's string) has forwards of its own. Before: 9 forwards.
#[test]
fn forged_registrations_buy_no_forwards_past_the_strangers_cap() {
    let c = Contest::new("[limits]\nforwards_per_day = 1\n");
    for i in 0..3 {
        register(
            &c,
            &format!("m{i}@forged{i}.example"),
            &format!("forged_{i}"),
            "GRR",
        );
    }
    let forwards = |c: &Contest| c.replies().iter().filter(|r| r.to == [ORGANIZER]).count();
    for i in 0..3 {
        for q in 0..3 {
            ask(
                &c,
                &format!("m{i}@forged{i}.example"),
                &format!("question {q}"),
                "?",
            );
        }
    }
    assert_eq!(forwards(&c), 1, "the strangers' one forward of the day");
    // A team whose string proved its mailbox asks on a lane of its own.
    let auth = register(&c, "real@team.example", "real_team", "GRR");
    let status = ask(
        &c,
        "real@team.example",
        "status",
        &format!("<<FROM>> real_team {auth}\n"),
    );
    assert_eq!(status.len(), 1, "{status:?}");
    for q in 0..4 {
        ask(&c, "real@team.example", &format!("real question {q}"), "?");
    }
    assert_eq!(forwards(&c), 1 + 3, "the proven mailbox's three");
    let outcome = last_outcome(&c);
    assert!(
        outcome.contains("not forwarded: 3 forwards today"),
        "{outcome}"
    );
}

#[test]
fn a_long_forwarded_mail_is_cut_and_its_subject_tamed() {
    let c = Contest::new("");
    let long = "x".repeat(40_000);
    let r = ask(
        &c,
        "ann@participants.example",
        "a\tvery long question",
        &long,
    );
    let fwd = &r[1];
    assert!(
        fwd.body.contains("cut after 16384 bytes"),
        "{}",
        &fwd.body[..300]
    );
    assert!(fwd.body.len() < 20_000);
    assert!(!fwd.subject.contains('\t'));
}

#[test]
fn a_team_gets_its_status_by_mail_and_a_wrong_string_the_same_refusal_as_compile() {
    let c = Contest::new("");
    let auth = register(&c, JOE, JOE_TEAM, "LAP,DGP,GRG,RSM");
    compile(&c, JOE, &submission(JOE_TEAM, &auth));
    // The team's first version is its version 1, whatever its id in the
    // database (issue 36).
    let version = 1;

    let creds = format!("Hello,\n\n<<FROM>> {JOE_TEAM} {auth}\n\nJoe\n");
    let r = ask(&c, JOE, "status", &creds);
    assert_eq!(r.len(), 1);
    let s = &r[0];
    assert_eq!(s.to, [JOE]);
    assert_eq!(
        s.subject,
        "KNOBELN status of team the_heavy_lords_of_knobeln"
    );
    for want in [
        "mail-address: joe@lords.example",
        "mail-preference: LAP,DGP,GRG,RSM",
        "Organization: Uni, City, Land",
        &format!("version {version},"),
        "Result: ACCEPTED",
        "Lexical elements: ",
        "compilation service closes:",
    ] {
        assert!(s.body.contains(want), "{want:?} missing:\n{}", s.body);
    }
    assert!(
        !s.body.contains(&auth),
        "the status never repeats the secret"
    );

    // A rejected version after it: the accepted one still plays.
    let broken = submission(JOE_TEAM, &auth).replace("main()", "main(");
    let r = ask(&c, JOE, "please compile", &broken);
    assert!(r[0].subject.contains("REJECTED"));
    let s = &ask(&c, JOE, "status", &creds)[0];
    assert!(
        s.body.contains(&format!("version {version} still plays")),
        "{}",
        s.body
    );

    // From another address: to the registered address and the sender.
    let s = &ask(&c, "joe@elsewhere.example", "status", &creds)[0];
    assert_eq!(s.to, [JOE, "joe@elsewhere.example"]);

    // A wrong string and an unknown team: the same words as compile's.
    let wrong = &ask(
        &c,
        JOE,
        "status",
        &format!("<<FROM>> {JOE_TEAM} nottheauth\n"),
    )[0];
    let unknown = &ask(&c, JOE, "status", "<<FROM>> nobody_at_all nottheauth\n")[0];
    assert_eq!(wrong.body, unknown.body);
    assert_eq!(wrong.subject, unknown.subject);
    assert!(flat(&wrong.body).contains(REFUSAL), "{}", wrong.body);
    assert!(!wrong.body.contains("mail-address"));
    let compile_refusal = &ask(
        &c,
        JOE,
        "please compile",
        &submission(JOE_TEAM, "nottheauth"),
    )[0];
    assert!(flat(&compile_refusal.body).contains(REFUSAL));
    // No <<FROM>> line at all.
    let none = &ask(&c, JOE, "status", "what is my status?\n")[0];
    assert!(none.body.contains("has no line <<FROM>>"), "{}", none.body);
}

#[test]
fn a_team_changes_its_mail_preference_by_mail_and_gets_exactly_those_mails() {
    let c = Contest::new("[rules]\nthrows = 60\n");
    let joe = register(&c, JOE, JOE_TEAM, "LAP,DGP,GRG,RSM");
    let ann_address = "ann@participants.example";
    let ann = register(&c, ann_address, "team_ann", "LAP");
    compile(&c, JOE, &submission(JOE_TEAM, &joe));
    compile(&c, ann_address, &submission("team_ann", &ann));
    let prefs = |team: &str| -> (String, String) {
        db(&c)
            .query_row(
                "SELECT r.preferences, r.record FROM registrations r JOIN teams t ON t.id = r.team_id WHERE t.name = ?1",
                [team],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    };

    // A bad list: every problem, nothing changed.
    let r = ask(
        &c,
        JOE,
        "mail-preference",
        &format!("<<FROM>> {JOE_TEAM} {joe}\nmail-preference: LAP,XYZ,dgp\n"),
    );
    assert!(r[0].subject.contains("not carried out"), "{}", r[0].subject);
    assert!(r[0].body.contains("`XYZ`"), "{}", r[0].body);
    assert!(r[0].body.contains("uppercase"), "{}", r[0].body);
    // A wrong string: the refusal, nothing changed.
    let r = ask(
        &c,
        JOE,
        "mail-preference",
        &format!("<<FROM>> {JOE_TEAM} wrong\nmail-preference: GRR\n"),
    );
    assert!(flat(&r[0].body).contains(REFUSAL));
    assert_eq!(prefs(JOE_TEAM).0, "LAP,DGP,GRG,RSM");

    // The change, confirmed to the team.
    let r = ask(
        &c,
        JOE,
        "Re: Mail-Preference",
        &format!("<<FROM>> {JOE_TEAM} {joe}\nmail-preference: GRR\n"),
    );
    assert_eq!(r[0].to, [JOE]);
    assert!(
        r[0].body
            .contains("It was:     mail-preference: LAP,DGP,GRG,RSM"),
        "{}",
        r[0].body
    );
    assert!(
        r[0].body.contains("It is now:  mail-preference: GRR"),
        "{}",
        r[0].body
    );
    let (p, record) = prefs(JOE_TEAM);
    assert_eq!(p, "GRR");
    assert!(record.contains("mail-preference: GRR\n"), "{record}");

    // The contest mails follow it.
    let before = c.replies().len();
    let out = knobeln(&c, &["contest", "start", "--seed", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    let to_joe: Vec<String> = new_replies(&c, before)
        .into_iter()
        .filter(|m| m.to == [JOE])
        .map(|m| m.subject)
        .collect();
    assert!(
        to_joe.iter().any(|s| s.starts_with("KNOBELN GRR")),
        "{to_joe:?}"
    );
    assert!(
        to_joe.iter().any(|s| s.contains("final results")),
        "{to_joe:?}"
    );
    assert_eq!(
        to_joe.len(),
        2,
        "GRR and the final results only: {to_joe:?}"
    );
    let lap = new_replies(&c, before)
        .into_iter()
        .find(|m| m.to == [ann_address] && m.subject.starts_with("KNOBELN LAP"))
        .expect("ann's LAP");
    assert!(lap.body.contains("mail-preference: GRR"), "{}", lap.body);

    // Registration is closed once the contest has started.
    let r = ask(
        &c,
        "late@participants.example",
        "registration for KNOBELN",
        &registration("late@participants.example", "late_team", "Late, City, Land"),
    );
    assert!(
        r[0].body.contains("the contest has started"),
        "{}",
        r[0].body
    );
}

/// Runs an admin command; asserts its exit status.
fn admin(c: &Contest, args: &[&str], code: i32) -> String {
    let mut all = vec!["admin"];
    all.extend_from_slice(args);
    let out = knobeln(c, &all);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out));
    text(&out)
}

fn audit_log(c: &Contest) -> Vec<(String, String, String, String)> {
    let conn = db(c);
    let mut st = conn
        .prepare("SELECT actor, action, target, details FROM admin_log ORDER BY id")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn admin_withdraw_keeps_a_team_out_of_the_contest_and_is_logged() {
    let c = Contest::new("[rules]\nthrows = 60\n");
    let joe = register(&c, JOE, JOE_TEAM, "LAP");
    let ann_address = "ann@participants.example";
    let ann = register(&c, ann_address, "team_ann", "LAP");
    compile(&c, JOE, &submission(JOE_TEAM, &joe));
    compile(&c, ann_address, &submission("team_ann", &ann));

    let list = admin(&c, &["teams"], 0);
    assert!(
        list.contains(JOE_TEAM) && list.contains("team_ann"),
        "{list}"
    );
    assert!(
        list.contains("2 registered team(s), 2 with an accepted strategy"),
        "{list}"
    );
    let out = admin(&c, &["withdraw", "nobody", "--reason", "x"], 1);
    assert!(out.contains("no registered team"), "{out}");

    let before = c.replies().len();
    let out = admin(
        &c,
        &[
            "withdraw",
            JOE_TEAM,
            "--reason",
            "two teams of the same people",
        ],
        0,
    );
    assert!(out.contains("withdrawn"), "{out}");
    let notice = &new_replies(&c, before)[0];
    assert_eq!(notice.to, [JOE]);
    assert!(notice.body.contains("withdrawn"));
    assert!(notice.body.contains("two teams of the same people"));

    // The team cannot act any more; its own string is told why (a wrong
    // one gets the refusal that tells nothing).
    let withdrawn = format!("The team {JOE_TEAM} was withdrawn from the contest");
    let r = ask(&c, JOE, "please compile", &submission(JOE_TEAM, &joe));
    let refusal = flat(&r[0].body);
    assert!(
        refusal.contains(&withdrawn) && refusal.contains("two teams of the same people"),
        "{refusal}"
    );
    assert!(!refusal.contains(REFUSAL), "{refusal}");
    let r = ask(&c, JOE, "status", &format!("<<FROM>> {JOE_TEAM} {joe}\n"));
    assert!(flat(&r[0].body).contains(&withdrawn));
    let r = ask(
        &c,
        JOE,
        "status",
        &format!("<<FROM>> {JOE_TEAM} wrong{joe}\n"),
    );
    assert!(flat(&r[0].body).contains(REFUSAL));
    // Listed only with --all, with the reason.
    assert!(!admin(&c, &["teams"], 0).contains(JOE_TEAM));
    let all = admin(&c, &["teams", "--all"], 0);
    assert!(
        all.contains("WITHDRAWN") && all.contains("two teams of the same people"),
        "{all}"
    );

    // The contest: ann alone; the LAP lists ann alone.
    let before = c.replies().len();
    let out = knobeln(&c, &["contest", "start", "--seed", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    let entries: i64 = db(&c)
        .query_row("SELECT COUNT(*) FROM tournament_entries", [], |r| r.get(0))
        .unwrap();
    assert_eq!(entries, 1);
    let mails = new_replies(&c, before);
    assert!(
        mails.iter().all(|m| m.to != [JOE]),
        "no contest mail to a withdrawn team"
    );
    let lap = mails
        .iter()
        .find(|m| m.subject.starts_with("KNOBELN LAP"))
        .unwrap();
    assert!(!lap.body.contains(JOE_TEAM), "{}", lap.body);

    // After the start, entries are fixed.
    let out = admin(&c, &["withdraw", "team_ann", "--reason", "late"], 1);
    assert!(out.contains("the contest has started"), "{out}");

    let log = audit_log(&c);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].1, "withdraw");
    assert_eq!(log[0].2, JOE_TEAM);
    assert!(log[0].3.contains("two teams of the same people"));
    assert!(!log[0].0.is_empty());
    let shown = admin(&c, &["log"], 0);
    assert!(
        shown.contains("withdraw") && shown.contains(JOE_TEAM),
        "{shown}"
    );
}

#[test]
fn admin_set_address_and_reset_auth_mail_the_team_and_are_logged() {
    let c = Contest::new("");
    let joe = register(&c, JOE, JOE_TEAM, "LAP");
    let ann_address = "ann@participants.example";
    register(&c, ann_address, "team_ann", "LAP");
    let new_address = "joe@NEW.example";

    // Refused: another team's address, not an address; nothing changes.
    let out = admin(&c, &["set-address", JOE_TEAM, ann_address], 1);
    assert!(out.contains("team_ann"), "{out}");
    let out = admin(&c, &["set-address", JOE_TEAM, "joe at lords"], 1);
    assert!(out.contains("mail-address"), "{out}");

    let before = c.replies().len();
    admin(&c, &["set-address", JOE_TEAM, new_address], 0);
    let notice = &new_replies(&c, before)[0];
    assert_eq!(notice.to, [JOE, "joe@new.example"]);
    assert!(
        notice.body.contains("from joe@lords.example"),
        "{}",
        notice.body
    );
    // The team's mail goes to the new address now; the record says so.
    let r = ask(&c, JOE, "status", &format!("<<FROM>> {JOE_TEAM} {joe}\n"));
    assert_eq!(r[0].to, ["joe@new.example", JOE]);
    assert!(
        r[0].body.contains("mail-address: joe@new.example"),
        "{}",
        r[0].body
    );

    // A new auth string, mailed to the team only; the old one stops working.
    let before = c.replies().len();
    let out = admin(&c, &["reset-auth", JOE_TEAM], 0);
    let mail = &new_replies(&c, before)[0];
    assert_eq!(mail.to, ["joe@new.example"]);
    let fresh = knobeln::demo::auth_in(&mail.body).expect("the new string");
    assert_ne!(fresh, joe);
    assert!(!out.contains(&fresh), "the organizer never sees it");
    let r = ask(
        &c,
        "joe@new.example",
        "please compile",
        &submission(JOE_TEAM, &joe),
    );
    assert!(flat(&r[0].body).contains(REFUSAL));
    compile(&c, "joe@new.example", &submission(JOE_TEAM, &fresh));
    // Stored salted and hashed only; the log has no secret.
    let conn = db(&c);
    let (salt, hash): (Vec<u8>, Vec<u8>) = conn
        .query_row(
            "SELECT auth_salt, auth_hash FROM registrations r JOIN teams t ON t.id = r.team_id WHERE t.name = ?1",
            [JOE_TEAM],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(hash, knobeln::auth::hash(&salt, &fresh));
    // The mailbox moved with the address: the old one may register again,
    // the new one holds the team (teams_per_mailbox counts mailboxes).
    let mailbox: String = conn
        .query_row(
            "SELECT mailbox FROM registrations r JOIN teams t ON t.id = r.team_id WHERE t.name = ?1",
            [JOE_TEAM],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(mailbox, "joe@new.example");
    let log = audit_log(&c);
    let actions: Vec<&str> = log.iter().map(|l| l.1.as_str()).collect();
    assert_eq!(actions, ["set-address", "reset-auth"]);
    assert!(log
        .iter()
        .all(|l| !l.3.contains(&fresh) && !l.3.contains(&joe)));
    assert!(log[0].3.contains("joe@new.example"));
}

#[test]
fn admin_resends_failed_mail_and_reprocesses_set_aside_mail() {
    let c = Contest::new("[limits]\nmax_processing_attempts = 1\n");
    let auth = register(&c, JOE, JOE_TEAM, "LAP");
    // The relay refused the acknowledgement for good.
    let conn = db(&c);
    let (id, file): (i64, String) = conn
        .query_row(
            "SELECT id, printf('%06d-%s.eml', id, kind) FROM outbox WHERE kind = 'registration_accepted'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    conn.execute(
        "UPDATE outbox SET state = 'failed', last_error = '554 5.7.1 relay refused' WHERE id = ?1",
        [id],
    )
    .unwrap();
    let spooled = c.spool().join("outgoing").join(&file);
    std::fs::remove_file(&spooled).unwrap();
    let status = text(&knobeln(&c, &["status"]));
    assert!(status.contains("0 mail(s) queued, 1 failed"), "{status}");
    let listed = admin(&c, &["failed-mail"], 0);
    assert!(
        listed.contains(&id.to_string()) && listed.contains(JOE),
        "{listed}"
    );
    assert!(listed.contains("554 5.7.1 relay refused"), "{listed}");
    // A typo changes nothing.
    admin(&c, &["resend", &id.to_string(), "999"], 1);
    admin(&c, &["resend", &id.to_string()], 0);
    assert!(admin(&c, &["failed-mail"], 0).contains("0 failed"));
    let out = knobeln(&c, &["serve", "--once"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(spooled.exists(), "the acknowledgement goes out again");

    // A mail the server set aside (how it comes to that, a mail that keeps
    // stopping the server, is tested in mail_spool): here put there directly.
    let m = c.joe_compile(&auth);
    let raw = std::fs::read(&m).unwrap();
    db(&c)
        .execute(
            "INSERT INTO inbox (origin, message_id, dedupe_key, raw, received_at, state, attempts,
                                last_error)
             VALUES ('ingest:set-aside.eml', 'set-aside@test', 'set-aside@test', ?1,
                     '2026-01-01T00:00:00Z', 'failed', 1,
                     'processing was interrupted 1 times (the server stopped while working on this mail)')",
            [raw],
        )
        .unwrap();
    let status = text(&knobeln(&c, &["status"]));
    assert!(status.contains("1 set aside"), "{status}");
    let listed = admin(&c, &["set-aside"], 0);
    assert!(
        listed.contains("from joe@lords.example") && listed.contains("please compile"),
        "{listed}"
    );
    // The cause fixed, the organizer has it processed again.
    admin(&c, &["reprocess", "--all"], 0);
    let before = c.replies().len();
    let out = knobeln(&c, &["serve", "--once"]);
    assert!(out.status.success(), "{}", text(&out));
    let r = new_replies(&c, before);
    assert!(
        r.iter()
            .any(|m| m.subject.contains("compilation report: accepted")),
        "{r:?}"
    );
    let status = text(&knobeln(&c, &["status"]));
    assert!(
        status.contains("0 set aside") && status.contains("0 failed"),
        "{status}"
    );
    admin(&c, &["reprocess", "--all"], 1);

    let actions: Vec<String> = audit_log(&c).into_iter().map(|l| l.1).collect();
    assert_eq!(actions, ["resend", "reprocess"]);
}

#[test]
fn teams_without_a_strategy_are_reminded_once_and_listed_to_the_organizer_at_the_start() {
    // The compile service closes in an hour: within the reminder's 24 hours.
    let now = Utc::now();
    let t = |d: chrono::Duration| (now + d).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let c = Contest::new(&format!(
        "[timeline]\nregistration_start = \"{}\"\ncompile_start = \"{}\"\nregistration_deadline = \"{}\"\n\
         contest_start = \"{}\"\ncompile_closes_before_minutes = 60\n[rules]\nthrows = 60\n",
        t(chrono::Duration::days(-10)),
        t(chrono::Duration::days(-10)),
        t(chrono::Duration::minutes(30)),
        t(chrono::Duration::minutes(120)),
    ));
    let joe = register(&c, JOE, JOE_TEAM, "LAP");
    let ann_address = "ann@participants.example";
    register(&c, ann_address, "team_ann", "LAP");
    compile(&c, JOE, &submission(JOE_TEAM, &joe));

    // serve queues the reminder for ann (not joe), and a second serve none.
    for _ in 0..2 {
        let mut serve = spawn(&c, &["serve"]);
        let t0 = Instant::now();
        while !reminded(&c) {
            assert!(t0.elapsed() < Duration::from_secs(60), "no reminder");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(1500));
        sigterm(&mut serve);
    }
    let reminders: Vec<Reply> = c
        .replies()
        .into_iter()
        .filter(|m| m.subject.contains("has no strategy yet"))
        .collect();
    assert_eq!(reminders.len(), 1, "{reminders:?}");
    assert_eq!(reminders[0].to, [ann_address]);
    assert!(reminders[0].body.contains("please compile"));
    assert!(reminders[0].body.contains(ORGANIZER));

    // At the start: the organizer's list names ann; so does the command.
    let out = knobeln(&c, &["contest", "start", "--seed", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("team_ann <ann@participants.example>"),
        "{}",
        text(&out)
    );
    let list = c
        .replies()
        .into_iter()
        .find(|m| m.to == [ORGANIZER] && m.subject.contains("the contest has started"))
        .expect("the organizer's list");
    assert!(
        list.subject
            .contains("1 team(s) play, 1 without a strategy"),
        "{}",
        list.subject
    );
    assert!(
        list.body.contains("team_ann <ann@participants.example>"),
        "{}",
        list.body
    );
}

fn reminded(c: &Contest) -> bool {
    db(c)
        .query_row(
            "SELECT COUNT(*) FROM outbox WHERE kind = 'no_strategy' AND state = 'sent'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap_or(0)
        > 0
}

fn spawn(c: &Contest, args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .arg("--config")
        .arg(c.config())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn sigterm(child: &mut Child) {
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(child.wait().unwrap().success(), "stops cleanly on SIGTERM");
}

/// A strategy that spends about a millisecond of CPU on every throw, so
/// that a contest lasts long enough to be caught running.
fn slow_submission(team: &str, auth: &str) -> String {
    submission(team, auth).replace(
        "main() { for (;;) make_throw(100); }",
        "main() { volatile unsigned long x = 0; unsigned long i;\n\
         for (;;) { for (i = 0; i < 1500000; i++) x += i; make_throw(100); } }",
    )
}

/// A contest of two slow teams, ready to start.
fn slow_field(extra: &str) -> Contest {
    let c = Contest::new(&format!(
        "[rules]\nthrows = 400\njobs = 1\nwall_secs = 120\n{extra}"
    ));
    for (address, team) in [(JOE, JOE_TEAM), ("ann@participants.example", "team_ann")] {
        let auth = register(&c, address, team, "");
        compile(&c, address, &slow_submission(team, &auth));
    }
    c
}

fn lease_holder(c: &Contest) -> Option<String> {
    db(c)
        .query_row("SELECT description FROM contest_lease", [], |r| r.get(0))
        .ok()
}

fn n_groups(c: &Contest) -> i64 {
    db(c)
        .query_row("SELECT COUNT(*) FROM groups", [], |r| r.get(0))
        .unwrap_or(0)
}

/// The contest ended with each game stored once and the final results
/// mailed once to each team.
fn played_once(c: &Contest) {
    let conn = db(c);
    let (tournaments, finished): (i64, String) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM tournaments), state FROM contest",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((tournaments, finished.as_str()), (1, "finished"));
    let finals: Vec<Vec<String>> = c
        .replies()
        .into_iter()
        .filter(|m| m.subject.contains("final results"))
        .map(|m| m.to)
        .collect();
    assert_eq!(finals.len(), 2, "{finals:?}");
    assert!(
        conn.query_row("SELECT description FROM contest_lease", [], |r| r
            .get::<_, String>(0))
            .is_err(),
        "the lease is given up at the end"
    );
}

#[test]
fn two_contest_starts_at_once_play_the_contest_once_and_the_second_says_who_plays() {
    let c = slow_field("");
    let a = spawn(&c, &["contest", "start", "--seed", "5"]);
    let b = spawn(&c, &["contest", "start", "--seed", "5"]);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let (winner, loser) = if a.status.success() { (a, b) } else { (b, a) };
    assert!(winner.status.success(), "{}", text(&winner));
    assert!(
        text(&winner).contains("contest finished"),
        "{}",
        text(&winner)
    );
    assert_eq!(loser.status.code(), Some(1), "{}", text(&loser));
    let said = text(&loser);
    assert!(said.contains("being played by another process"), "{said}");
    assert!(said.contains("knobeln contest start (pid"), "{said}");
    played_once(&c);
}

#[test]
fn a_holder_killed_with_kill_9_is_taken_over_and_a_live_one_is_not() {
    let c = slow_field("");
    let mut a = spawn(&c, &["contest", "start", "--seed", "5"]);
    let t0 = Instant::now();
    while lease_holder(&c).is_none() || n_groups(&c) == 0 {
        assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
        assert!(a.try_wait().unwrap().is_none(), "finished before the kill");
        std::thread::sleep(Duration::from_millis(20));
    }
    // While it runs: status shows the progress and who plays.
    let status = text(&knobeln(&c, &["status"]));
    for want in [
        "round:            1 (the final round)",
        "groups finished:  0 / 1",
        "games played:",
        "played by:        knobeln contest start (pid",
        &format!("pid {} ", a.id()),
    ] {
        assert!(status.contains(want), "{want:?} missing:\n{status}");
    }
    // A second start while it lives: refused, naming it.
    let second = knobeln(&c, &["contest", "start"]);
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    assert!(
        text(&second).contains(&format!("pid {} ", a.id())),
        "{}",
        text(&second)
    );

    a.kill().unwrap(); // SIGKILL: no heartbeat, no release
    a.wait().unwrap();
    assert!(
        lease_holder(&c).is_some(),
        "the dead holder's lease is still there"
    );
    let third = knobeln(&c, &["contest", "start"]);
    assert!(third.status.success(), "{}", text(&third));
    played_once(&c);
    let dup: i64 = db(&c)
        .query_row(
            "SELECT COUNT(*) FROM (SELECT round, grp, slot FROM games GROUP BY 1, 2, 3 HAVING COUNT(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dup, 0);
}

#[test]
fn contest_start_while_serve_plays_the_contest_says_so() {
    let c = slow_field("");
    // The contest start has come: serve starts the contest.
    let mut cfg = std::fs::read_to_string(c.config()).unwrap();
    cfg.push_str(
        "[timeline]\nregistration_start = \"2000-01-01T00:00:00Z\"\ncompile_start = \"2000-01-01T00:00:00Z\"\n\
         registration_deadline = \"2000-01-01T12:00:00Z\"\ncontest_start = \"2000-01-02T00:00:00Z\"\n",
    );
    std::fs::write(c.config(), cfg).unwrap();
    let mut serve = spawn(&c, &["serve"]);
    let t0 = Instant::now();
    while !lease_holder(&c).is_some_and(|h| h.contains("serve")) {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "serve does not play"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = knobeln(&c, &["contest", "start"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("knobeln serve (pid"), "{}", text(&out));
    sigterm(&mut serve);
}

/// A live-looking lease of `knobeln serve` on another machine (another
/// boot id), acquired a minute before `expires`.
fn plant_lease_of_another_machine(conn: &rusqlite::Connection, expires: DateTime<Utc>) {
    conn.execute(
        "INSERT OR REPLACE INTO contest_lease (id, holder, description, process, acquired_at, renewed_at, expires_at)
         VALUES (1, 'other', 'knobeln serve (pid 4711 on host elsewhere)', 'another-boot-id 4711 123',
                 ?1, ?1, ?2)",
        [
            knobeln::store::timestamp(expires - chrono::Duration::seconds(60)),
            knobeln::store::timestamp(expires),
        ],
    )
    .unwrap();
}

#[test]
fn contest_start_takes_the_lease_before_it_creates_the_contest() {
    // Another machine's process holds the lease (a `serve` that would play
    // a contest as soon as it sees one): `contest start` says who and
    // creates nothing, so the contest cannot be created by one process and
    // taken over by another in between.
    let c = slow_field("");
    plant_lease_of_another_machine(&db(&c), Utc::now() + chrono::Duration::seconds(60));
    let out = spawn(&c, &["contest", "start", "--seed", "5"])
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("pid 4711 on host elsewhere"),
        "{}",
        text(&out)
    );
    let (tournaments, contests): (i64, i64) = db(&c)
        .query_row(
            "SELECT (SELECT COUNT(*) FROM tournaments), (SELECT COUNT(*) FROM contest)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((tournaments, contests), (0, 0), "{}", text(&out));
}

#[test]
fn a_stale_lease_of_another_machine_is_taken_over_only_after_it_expires() {
    use knobeln::contest::lease::{Lease, LeaseError};
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("k.db");
    let store = knobeln::store::Store::open(&path).unwrap();
    let plant = |expires| plant_lease_of_another_machine(store.conn(), expires);
    plant(Utc::now() + chrono::Duration::seconds(30));
    match Lease::acquire(&store, path.clone(), Duration::from_secs(60)) {
        Err(LeaseError::Held(why)) => {
            assert!(why.contains("pid 4711 on host elsewhere"), "{why}");
            assert!(why.contains("expires at"), "{why}");
        }
        Ok(_) => panic!("took a live lease of another machine"),
        Err(e) => panic!("{e}"),
    }
    plant(Utc::now() - chrono::Duration::seconds(1));
    let lease = Lease::acquire(&store, path.clone(), Duration::from_secs(60)).expect("taken over");
    let holder: String = store
        .conn()
        .query_row("SELECT holder FROM contest_lease", [], |r| r.get(0))
        .unwrap();
    assert_eq!(holder, lease.holder());
    drop(lease);
    let left: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM contest_lease", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0, "dropping the lease gives it up");
}

#[test]
fn a_holder_that_lost_its_lease_stops_at_the_next_event_and_leaves_the_new_lease_alone() {
    use knobeln::contest::lease::Lease;
    use knobeln::engine::run::{Event, Observer};
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("k.db");
    let store = knobeln::store::Store::open(&path).unwrap();
    let lease = Lease::acquire(&store, path.clone(), Duration::from_millis(400)).unwrap();
    let game = Event::GameFinished {
        round: 1,
        done: 1,
        total: 3,
    };
    assert!(lease.check().event(&store, &game).is_ok());
    // Another process took it over (this one stalled past its expiry).
    store
        .conn()
        .execute(
            "UPDATE contest_lease SET holder = 'other', description = 'the other'",
            [],
        )
        .unwrap();
    let t0 = Instant::now();
    while !lease.lost() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the heartbeat never noticed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let stopped = lease.check().event(&store, &game);
    assert!(stopped
        .unwrap_err()
        .contains("another process took the contest over"));
    drop(lease);
    let holder: String = store
        .conn()
        .query_row("SELECT holder FROM contest_lease", [], |r| r.get(0))
        .unwrap();
    assert_eq!(holder, "other");
}
