//! A participant's status, mail-preference change and a question for the
//! organizer, through the real stack (Postfix + Dovecot on loopback, as in
//! `mail_e2e`): swaks mails the contest address, `knobeln serve` reads it
//! over IMAP and answers over SMTP, the test reads the mailboxes over IMAP.
//! An admin action queued while `serve` runs goes out through it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use mail_parser::MessageParser;

use super::mail_spool::{registration, submission};
use super::mailstack::{mail_stack, swaks_send, unique_address, wait_for_mails, MailStack};

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

struct Server {
    dir: tempfile::TempDir,
    contest: String,
    organizer: String,
}

impl Server {
    fn new(stack: &MailStack) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let contest = unique_address("contest", "contest.example");
        let organizer = unique_address("organizer", "contest.example");
        let cfg = format!(
            "database = \"{db}\"\ntransport = \"imap\"\n\
             [contest]\naddress = \"{contest}\"\norganizer = \"{organizer}\"\nloop_id = \"{contest}\"\n\
             [imap]\nhost = \"{host}\"\nport = {imap}\ntls = \"none\"\nuser = \"{contest}\"\npassword_file = \"{pw}\"\npoll_secs = 1\n\
             [smtp]\nhost = \"{host}\"\nport = {smtp}\ntls = \"none\"\n",
            db = dir.path().join("k.db").display(),
            host = stack.host,
            imap = stack.imap_port,
            smtp = stack.smtp_port,
            pw = dir.path().join("imap-password").display(),
        );
        std::fs::write(
            dir.path().join("imap-password"),
            format!("{}\n", stack.password),
        )
        .unwrap();
        std::fs::write(dir.path().join("knobeln.toml"), cfg).unwrap();
        Server {
            dir,
            contest,
            organizer,
        }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("knobeln.toml")
    }

    fn serve(&self) -> Child {
        Command::new(BIN)
            .args(["serve", "--config"])
            .arg(self.config())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    fn send(&self, stack: &MailStack, from: &str, subject: &str, id: &str, body: &str) {
        let raw = format!(
            "From: {from}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: <{id}>\r\n\
             Date: Sat, 14 May 1994 10:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{}",
            body.replace('\n', "\r\n"),
            to = self.contest,
        );
        swaks_send(stack, from, &self.contest, raw.as_bytes());
    }
}

fn text(raw: &[u8]) -> (String, String) {
    let m = MessageParser::default().parse(raw).unwrap();
    (
        m.subject().unwrap_or("").to_string(),
        m.body_text(0)
            .map(|b| b.replace("\r\n", "\n"))
            .unwrap_or_default(),
    )
}

#[test]
fn status_and_preference_by_mail_and_a_question_for_the_organizer_over_the_real_stack() {
    let stack = mail_stack();
    let server = Server::new(&stack);
    let joe = unique_address("joe", "lords.example");
    let team = "lords_of_status";
    let mut serve = server.serve();
    server.send(
        &stack,
        &joe,
        "registration for KNOBELN",
        &format!("reg-{joe}"),
        &registration(&joe, team, "Uni, City, Land"),
    );
    let auth = super::demo_auth(&text(&wait_for_mails(&stack, &joe, 1)[0]).1);
    server.send(
        &stack,
        &joe,
        "please compile",
        &format!("compile-{joe}"),
        &submission(team, &auth),
    );
    assert!(text(&wait_for_mails(&stack, &joe, 2)[1])
        .0
        .contains("compilation report: accepted"));

    // Status, as a reply to the compile report.
    server.send(
        &stack,
        &joe,
        "Re: KNOBELN compilation report",
        &format!("q-{joe}"),
        "",
    );
    server.send(
        &stack,
        &joe,
        "Re: Status",
        &format!("status-{joe}"),
        &format!("<<FROM>> {team} {auth}\n"),
    );
    let mails = wait_for_mails(&stack, &joe, 4);
    let subjects: Vec<String> = mails.iter().map(|m| text(m).0).collect();
    let status = mails
        .iter()
        .map(|m| text(m))
        .find(|(s, _)| s == &format!("KNOBELN status of team {team}"))
        .unwrap_or_else(|| panic!("no status reply: {subjects:?}"));
    assert!(
        status.1.contains(&format!("mail-address: {joe}")),
        "{}",
        status.1
    );
    assert!(status.1.contains("mail-preference: LAP,DGP,GRG,RSM"));
    assert!(status.1.contains("Result: ACCEPTED"), "{}", status.1);
    assert!(!status.1.contains(&auth));
    // The reply to the report is none of the commands: help, and the
    // organizer has it.
    assert!(
        subjects.iter().any(|s| s.contains("how to talk")),
        "{subjects:?}"
    );
    let fwd = wait_for_mails(&stack, &server.organizer, 1);
    assert!(
        text(&fwd[0]).0.contains("KNOBELN forward from"),
        "{:?}",
        text(&fwd[0])
    );

    // The preference change, and a wrong string that changes nothing.
    server.send(
        &stack,
        &joe,
        "mail-preference",
        &format!("pref-bad-{joe}"),
        &format!("<<FROM>> {team} wrongwrong\nmail-preference: LAP\n"),
    );
    server.send(
        &stack,
        &joe,
        "mail-preference",
        &format!("pref-{joe}"),
        &format!("<<FROM>> {team} {auth}\nmail-preference: GRR,RSM\n"),
    );
    let mails = wait_for_mails(&stack, &joe, 6);
    let last_two: Vec<(String, String)> = mails[4..].iter().map(|m| text(m)).collect();
    assert!(
        last_two.iter().any(|(s, b)| s.contains("not carried out")
            && b.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains("do not match any registration")),
        "{last_two:?}"
    );
    let confirmation = last_two
        .iter()
        .find(|(s, _)| s.contains("mail-preference of team"))
        .unwrap_or_else(|| panic!("{last_two:?}"));
    assert!(confirmation
        .1
        .contains("It is now:  mail-preference: GRR,RSM"));
    let conn = rusqlite::Connection::open(server.dir.path().join("k.db")).unwrap();
    let prefs: String = conn
        .query_row("SELECT preferences FROM registrations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(prefs, "GRR,RSM");

    // An admin action while serve runs: serve sends its mail.
    let out = Command::new(BIN)
        .args(["admin", "reset-auth", team, "--config"])
        .arg(server.config())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mails = wait_for_mails(&stack, &joe, 7);
    let fresh = super::demo_auth(&text(&mails[6]).1);
    assert_ne!(fresh, auth);

    Command::new("kill")
        .arg("-TERM")
        .arg(serve.id().to_string())
        .status()
        .unwrap();
    assert!(serve.wait().unwrap().success());
}
