//! The whole mail path against the real stack (Dovecot + Postfix on
//! loopback, started by the test command with `deploy/mailstack.sh start`):
//! a real SMTP client (swaks) mails the contest address, `knobeln serve`
//! polls IMAP and answers by SMTP, and the test reads the participant's
//! mailbox over IMAP.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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
    fn new(stack: &MailStack, extra: &str) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let contest = unique_address("contest", "contest.example");
        let organizer = unique_address("organizer", "contest.example");
        let cfg = format!(
            "database = \"{db}\"\ntransport = \"imap\"\n{extra}\n\
             [contest]\naddress = \"{contest}\"\norganizer = \"{organizer}\"\nloop_id = \"{contest}\"\n\
             [imap]\nhost = \"{host}\"\nport = {imap}\ntls = \"none\"\nuser = \"{contest}\"\npassword_file = \"{pw}\"\npoll_secs = 1\n\
             [smtp]\nhost = \"{host}\"\nport = {smtp}\ntls = \"none\"\n",
            db = dir.path().join("k.db").display(),
            organizer = organizer,
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
}

fn mail(from: &str, to: &str, subject: &str, id: &str, body: &str) -> Vec<u8> {
    format!(
        "From: {from}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: <{id}>\r\n\
         Date: Sat, 14 May 1994 10:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{}",
        body.replace('\n', "\r\n")
    )
    .into_bytes()
}

fn text(raw: &[u8]) -> (String, String) {
    let m = MessageParser::default().parse(raw).unwrap();
    (
        m.subject().unwrap_or("").to_string(),
        m.body_text(0).map(|b| b.into_owned()).unwrap_or_default(),
    )
}

fn sigterm(child: &mut Child) {
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(
        child.wait().unwrap().success(),
        "serve stops cleanly on SIGTERM"
    );
}

#[test]
fn registration_and_compile_over_imap_and_smtp_with_a_duplicate_and_a_kill_9() {
    let stack = mail_stack();
    let server = Server::new(&stack, "");
    let joe = unique_address("joe", "lords.example");
    let team = "lords_of_imap";
    swaks_send(
        &stack,
        &joe,
        &server.contest,
        &mail(
            &joe,
            &server.contest,
            "registration for KNOBELN",
            &format!("reg-{joe}"),
            &registration(&joe, team, "Uni, City, Land"),
        ),
    );
    let mut serve = server.serve();
    let mails = wait_for_mails(&stack, &joe, 1);
    let (subject, body) = text(&mails[0]);
    assert!(subject.contains("registration accepted"), "{subject}");
    let auth = super::demo_auth(&body);
    assert!(body.replace("\r\n", "\n").contains("your registration for the International KNOBELN contest\nis accepted and your\nauthentification string is"));

    let compile = mail(
        &joe,
        &server.contest,
        "please compile",
        &format!("compile-{joe}"),
        &submission(team, &auth),
    );
    swaks_send(&stack, &joe, &server.contest, &compile);
    let mails = wait_for_mails(&stack, &joe, 2);
    let (subject, body) = text(&mails[1]);
    assert!(
        subject.contains("compilation report: accepted"),
        "{subject}"
    );
    assert!(body.contains("Lexical elements: "));
    assert!(body.contains("Trial game against the example strategy"));

    // The same mail delivered again: no second report.
    swaks_send(&stack, &joe, &server.contest, &compile);
    // kill -9, a new mail while it is down, restart: answered exactly once.
    std::thread::sleep(Duration::from_secs(3));
    serve.kill().unwrap();
    serve.wait().unwrap();
    swaks_send(
        &stack,
        &joe,
        &server.contest,
        &mail(&joe, &server.contest, "hello", &format!("hello-{joe}"), "?"),
    );
    let mut serve = server.serve();
    let mails = wait_for_mails(&stack, &joe, 3);
    std::thread::sleep(Duration::from_secs(3));
    sigterm(&mut serve);
    let mails_after = wait_for_mails(&stack, &joe, 3);
    assert_eq!(
        mails_after.len(),
        3,
        "one reply per distinct mail, none twice"
    );
    let (subject, _) = text(&mails[2]);
    assert!(subject.contains("how to talk"), "{subject}");
}

#[test]
fn a_contest_over_the_real_stack_mails_by_preference() {
    let stack = mail_stack();
    let server = Server::new(&stack, "[rules]\nthrows = 60\n");
    let teams: Vec<(String, String, &str)> = ["GRR", "LAP,RSM", ""]
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                format!("imap_team_{i}"),
                unique_address(&format!("team{i}"), "participants.example"),
                *p,
            )
        })
        .collect();
    for (name, addr, prefs) in &teams {
        let body = registration(addr, name, "Uni, City, Land").replace(
            "mail-preference: LAP,DGP,GRG,RSM",
            &format!("mail-preference: {prefs}"),
        );
        swaks_send(
            &stack,
            addr,
            &server.contest,
            &mail(
                addr,
                &server.contest,
                "registration for KNOBELN",
                &format!("r-{addr}"),
                &body,
            ),
        );
    }
    let mut serve = server.serve();
    for (name, addr, _) in &teams {
        let ack = wait_for_mails(&stack, addr, 1);
        let auth = super::demo_auth(&text(&ack[0]).1);
        swaks_send(
            &stack,
            addr,
            &server.contest,
            &mail(
                addr,
                &server.contest,
                "please compile",
                &format!("c-{addr}"),
                &submission(name, &auth),
            ),
        );
        wait_for_mails(&stack, addr, 2);
    }
    sigterm(&mut serve);
    crate::common::contest_start(&server.config(), 7);
    let once = Command::new(BIN)
        .args(["serve", "--once", "--config"])
        .arg(server.config())
        .output()
        .unwrap();
    assert!(
        once.status.success(),
        "{}",
        String::from_utf8_lossy(&once.stderr)
    );
    let subjects = |addr: &str, n: usize| -> Vec<String> {
        wait_for_mails(&stack, addr, n)
            .iter()
            .skip(2)
            .map(|m| text(m).0)
            .collect()
    };
    // GRR: the ranking and the final results.
    let s0 = subjects(&teams[0].1, 4);
    assert!(s0.iter().any(|s| s.starts_with("KNOBELN GRR")), "{s0:?}");
    assert!(s0.iter().any(|s| s.contains("final results")), "{s0:?}");
    assert_eq!(s0.len(), 2, "{s0:?}");
    // LAP,RSM: the list, the summary, the final results.
    let s1 = subjects(&teams[1].1, 5);
    assert!(s1.iter().any(|s| s.starts_with("KNOBELN LAP")), "{s1:?}");
    assert!(s1.iter().any(|s| s.starts_with("KNOBELN RSM")), "{s1:?}");
    assert_eq!(s1.len(), 3, "{s1:?}");
    // No preferences: only the final results.
    let s2 = subjects(&teams[2].1, 3);
    assert_eq!(s2.len(), 1, "{s2:?}");
}

/// The registration acknowledgement (the only copy of the auth string)
/// to an address the relay refuses with 554: the outbox gives it up, and
/// the organizer learns of it from the digest in their mailbox.
#[test]
fn an_undeliverable_acknowledgement_reaches_the_organizers_digest() {
    let stack = mail_stack();
    let server = Server::new(&stack, "");
    let envelope = unique_address("joe", "lords.example");
    // A domain the stack's Postfix does not relay to: 554 5.7.1.
    let stranded = unique_address("joe", "unrouted.example");
    swaks_send(
        &stack,
        &envelope,
        &server.contest,
        &mail(
            &stranded,
            &server.contest,
            "registration for KNOBELN",
            &format!("reg-{stranded}"),
            &registration(&stranded, "stranded_lords", "Uni, City, Land"),
        ),
    );
    let mut serve = server.serve();
    let digest = wait_for_mails(&stack, &server.organizer, 1);
    sigterm(&mut serve);
    let (subject, body) = text(&digest[0]);
    assert!(subject.contains("1 undelivered"), "{subject}");
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(body.contains(&format!("to: {stranded}")), "{body}");
    assert!(body.contains("registration accepted"), "{body}");
    assert!(body.contains("554"), "{body}");
    assert!(body.contains("Relay access denied"), "{body}");
    assert!(body.contains("knobeln admin resend 1"), "{body}");
    let status = Command::new(BIN)
        .args(["status", "--config"])
        .arg(server.config())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(status.contains("1 failed"), "{status}");
    assert!(
        status.contains(&format!("failed: outbox 1 to {stranded}")),
        "{status}"
    );
}
