//! Speed and independence of the mail sides against the real stack
//! (Postfix + Dovecot on loopback, as in `mail_e2e`): a reply that comes by
//! IMAP IDLE, with a poll interval of ten minutes, so that only IDLE can
//! explain it; and outages of one side that do not stop the other. An
//! outage is a TCP relay of the test's own in front of Dovecot or Postfix,
//! switched off and on (the shared servers are never stopped).
//!
//! The fallback to polling, for a server without the IDLE capability, is
//! tested against a scripted IMAP server of the test's own (Dovecot always
//! has IDLE, and the shared stack is not reconfigured).
//!
//! Waits are generous bounds for a mail to arrive at all, never
//! performance assertions (`knobeln bench mail` measures the speed).

use std::io::{BufRead, BufReader};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use knobeln::mail::transport::imap::read_mailbox;
use mail_parser::MessageParser;

use super::common::HANG_GUARD;
use super::mail_spool::{registration, submission};
use super::mailstack::{mail_stack, swaks_send, unique_address, wait_for_mails, MailStack};

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

/// A TCP relay from a loopback port of its own to `target`, that can be
/// switched off (the port refuses connections, open ones are cut) and on
/// again on the same port.
struct Relay {
    port: u16,
    target: u16,
    state: Arc<Mutex<RelayState>>,
}

#[derive(Default)]
struct RelayState {
    /// The accepting thread's stop flag, while on.
    running: Option<Arc<AtomicBool>>,
    /// Every relayed connection's two sockets, to cut them.
    open: Vec<TcpStream>,
}

impl Relay {
    fn new(target: u16) -> Relay {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Relay {
            port,
            target,
            state: Arc::default(),
        }
    }

    fn on(&self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let running = Arc::new(AtomicBool::new(true));
        self.state.lock().unwrap().running = Some(running.clone());
        let (state, target) = (self.state.clone(), self.target);
        std::thread::spawn(move || {
            while running.load(Ordering::SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                client.set_nonblocking(false).unwrap();
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                {
                    let mut st = state.lock().unwrap();
                    st.open.push(client.try_clone().unwrap());
                    st.open.push(server.try_clone().unwrap());
                }
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                    });
                }
            }
        });
    }

    fn off(&self) {
        let mut st = self.state.lock().unwrap();
        if let Some(r) = st.running.take() {
            r.store(false, Ordering::SeqCst);
        }
        for s in st.open.drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        drop(st);
        // The accepting thread looks at its flag every 10 ms.
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            TcpStream::connect(("127.0.0.1", self.port)).is_err(),
            "the relay's port still accepts"
        );
    }
}

/// A contest server's folder and config on the stack, with IMAP and SMTP
/// on the given ports.
struct Server {
    dir: tempfile::TempDir,
    contest: String,
}

impl Server {
    fn new(stack: &MailStack, imap_port: u16, smtp_port: u16, imap_extra: &str) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let contest = unique_address("contest", "contest.example");
        let cfg = format!(
            "database = \"{db}\"\ntransport = \"imap\"\n[rules]\nthrows = 60\n\
             [contest]\naddress = \"{contest}\"\norganizer = \"{organizer}\"\nloop_id = \"{contest}\"\n\
             [imap]\nhost = \"{host}\"\nport = {imap_port}\ntls = \"none\"\nuser = \"{contest}\"\n\
             password = \"{pw}\"\n{imap_extra}\n\
             [smtp]\nhost = \"{host}\"\nport = {smtp_port}\ntls = \"none\"\n",
            db = dir.path().join("k.db").display(),
            organizer = unique_address("organizer", "contest.example"),
            host = stack.host,
            pw = stack.password,
        );
        std::fs::write(dir.path().join("knobeln.toml"), cfg).unwrap();
        Server { dir, contest }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("knobeln.toml")
    }

    /// `knobeln -v serve`, its log collected line by line.
    fn serve(&self) -> Serving {
        let mut child = Command::new(BIN)
            .args(["-v", "serve", "--config"])
            .arg(self.config())
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = log.clone();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        });
        Serving { child, log }
    }

    fn mail(&self, from: &str, subject: &str, id: &str, body: &str) -> Vec<u8> {
        format!(
            "From: {from}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: <{id}>\r\n\
             Date: Sat, 14 May 1994 10:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{}",
            body.replace('\n', "\r\n"),
            to = self.contest,
        )
        .into_bytes()
    }

    /// Mails the contest address through the stack's Postfix.
    fn send(&self, stack: &MailStack, from: &str, subject: &str, id: &str, body: &str) {
        swaks_send(
            stack,
            from,
            &self.contest,
            &self.mail(from, subject, id, body),
        );
    }

    /// `knobeln ingest FILE` (stores and processes; replies stay queued).
    fn ingest(&self, name: &str, raw: &[u8]) {
        let path = self.dir.path().join(name);
        std::fs::write(&path, raw).unwrap();
        run_ok(&["ingest"], &path, &self.config());
    }
}

fn run_ok(args: &[&str], file: &Path, config: &Path) {
    let out = Command::new(BIN)
        .args(args)
        .arg(file)
        .arg("--config")
        .arg(config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "knobeln {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A running `serve` and its log.
struct Serving {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Serving {
    fn lines(&self, needle: &str) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(needle))
            .cloned()
            .collect()
    }

    /// Waits (at most `secs`) for a log line containing `needle`.
    fn wait_for_line(&self, needle: &str, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(l) = self.lines(needle).into_iter().next() {
                return l;
            }
            assert!(
                Instant::now() < deadline,
                "no log line with {needle:?} after {secs} s; the log:\n{}",
                self.log.lock().unwrap().join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(mut self) -> Vec<String> {
        Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(self.child.wait().unwrap().success(), "serve stops cleanly");
        std::thread::sleep(Duration::from_millis(100));
        let log = self.log.lock().unwrap().clone();
        log
    }
}

fn subject(raw: &[u8]) -> String {
    MessageParser::default()
        .parse(raw)
        .and_then(|m| m.subject().map(str::to_string))
        .unwrap_or_default()
}

fn body(raw: &[u8]) -> String {
    MessageParser::default()
        .parse(raw)
        .and_then(|m| m.body_text(0).map(|b| b.into_owned()))
        .unwrap_or_default()
}

/// `user`'s mails once one has a subject containing `needle` (within
/// `secs`).
fn wait_for_subject(stack: &MailStack, user: &str, needle: &str, secs: u64) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let mails = read_mailbox(&stack.host, stack.imap_port, user, &stack.password)
            .unwrap_or_else(|e| panic!("reading {user}'s mailbox: {e}"));
        if mails.iter().any(|m| subject(m).contains(needle)) {
            return mails;
        }
        assert!(
            Instant::now() < deadline,
            "{user} has no mail with {needle:?} in its subject after {secs} s: {:?}",
            mails.iter().map(|m| subject(m)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_reply_comes_by_idle_without_waiting_for_a_poll() {
    let stack = mail_stack();
    // Polling once a day, beyond every wait below (their guard is
    // [`HANG_GUARD`]): a reply is IDLE's.
    let server = Server::new(
        &stack,
        stack.imap_port,
        stack.smtp_port,
        "poll_secs = 86400",
    );
    let serving = server.serve();
    serving.wait_for_line("with IDLE", 30);
    // The first look at the mailbox is over: from now on only IDLE (or a
    // poll a day away) can take a mail in.
    let joe = unique_address("idle", "lords.example");
    let team = "lords_of_idle";
    server.send(
        &stack,
        &joe,
        "registration for KNOBELN",
        &format!("reg-{joe}"),
        &registration(&joe, team, "Uni, City, Land"),
    );
    let mails = wait_for_mails(&stack, &joe, 1);
    assert!(
        subject(&mails[0]).contains("registration accepted"),
        "{}",
        subject(&mails[0])
    );
    // A second mail: the IDLE went on after the first change.
    let auth = super::demo_auth(&body(&mails[0]));
    server.send(
        &stack,
        &joe,
        "please compile",
        &format!("compile-{joe}"),
        &submission(team, &auth),
    );
    let mails = wait_for_mails(&stack, &joe, 2);
    assert!(
        subject(&mails[1]).contains("compilation report: accepted"),
        "{}",
        subject(&mails[1])
    );
    let log = serving.stop();
    // One line per mail taken in, answered and sent, with a timestamp and
    // a level.
    let taken: Vec<_> = log
        .iter()
        .filter(|l| l.contains("mail taken in:"))
        .collect();
    assert_eq!(taken.len(), 2, "{log:#?}");
    assert!(
        taken[0].contains(&joe) && taken[0].contains("INFO"),
        "{}",
        taken[0]
    );
    assert!(
        taken[0].starts_with("20"),
        "a timestamp first: {}",
        taken[0]
    );
    assert_eq!(
        log.iter().filter(|l| l.contains("mail answered:")).count(),
        2,
        "{log:#?}"
    );
    assert!(
        log.iter()
            .filter(|l| l.contains(&format!("mail sent to {joe}")))
            .count()
            >= 2,
        "{log:#?}"
    );
    // IDLE was announced once: one session, never logged in again.
    assert_eq!(
        log.iter().filter(|l| l.contains("with IDLE")).count(),
        1,
        "{log:#?}"
    );
}

/// The outage tests' waits for an event whose time depends on the load (a
/// reply, a contest played, a log line): [`HANG_GUARD`], a guard against a
/// hang only. Under load the outage lasts longer and the backoff's next
/// try comes later (up to its five minutes); nothing here is asserted of
/// how long anything took.
const GUARD: u64 = HANG_GUARD.as_secs();

#[test]
fn an_imap_outage_stops_no_outgoing_mail() {
    let stack = mail_stack();
    let imap = Relay::new(stack.imap_port);
    imap.on();
    let server = Server::new(&stack, imap.port, stack.smtp_port, "");
    let teams: Vec<(String, String)> = (0..2)
        .map(|i| {
            (
                format!("outage_team_{i}"),
                unique_address(&format!("outage{i}"), "participants.example"),
            )
        })
        .collect();
    // Registered while everything works.
    let serving = server.serve();
    let mut auths = Vec::new();
    for (name, addr) in &teams {
        server.send(
            &stack,
            addr,
            "registration for KNOBELN",
            &format!("r-{addr}"),
            &registration(addr, name, "Uni, City, Land"),
        );
        let ack = wait_for_mails(&stack, addr, 1);
        auths.push(super::demo_auth(&body(&ack[0])));
    }
    serving.stop();
    // Mail taken in by another way while the server is stopped: replies
    // wait in the outbox.
    for ((name, addr), auth) in teams.iter().zip(&auths) {
        server.ingest(
            &format!("compile-{name}.eml"),
            &server.mail(
                addr,
                "please compile",
                &format!("c-{addr}"),
                &submission(name, auth),
            ),
        );
    }

    // IMAP goes down; SMTP stays up.
    imap.off();
    let serving = server.serve();
    let fails = format!("IMAP take-in from 127.0.0.1:{} fails", imap.port);
    let first = serving.wait_for_line(&fails, GUARD);
    assert!(
        first.contains("WARN") && first.contains("onnection refused"),
        "the line names the host and the cause: {first}"
    );
    for (_, addr) in &teams {
        let mails = wait_for_subject(&stack, addr, "compilation report", GUARD);
        assert_eq!(mails.len(), 2, "the acknowledgement and the report");
    }
    // A mail that arrives during the outage waits in the mailbox.
    let (_, addr0) = &teams[0];
    server.send(&stack, addr0, "hello", &format!("hello-{addr0}"), "?");
    // The contest is played meanwhile; its mails go out by SMTP. (`serve`
    // may take the contest over between `contest start`'s start and its
    // lease; then `serve` plays it: either way one process does.)
    let out = Command::new(BIN)
        .args(["contest", "start", "--seed", "7", "--config"])
        .arg(server.config())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() || stderr.contains("being played by another process"),
        "{stderr}"
    );
    for (_, addr) in &teams {
        wait_for_subject(&stack, addr, "final results", GUARD);
    }
    // Retries happened, logged at debug level; the warning came once.
    serving.wait_for_line(
        &format!("IMAP take-in from 127.0.0.1:{} still fails", imap.port),
        30,
    );
    assert_eq!(serving.lines(&fails).len(), 1, "one warning per outage");
    assert!(
        !subject_seen(&stack, addr0, "how to talk"),
        "the mail sent during the outage cannot have been taken in"
    );

    // IMAP comes back: the mail that waited is answered.
    imap.on();
    wait_for_subject(&stack, addr0, "how to talk", GUARD);
    let log = serving.stop();
    let back = format!("IMAP take-in from 127.0.0.1:{} works again", imap.port);
    assert_eq!(
        log.iter().filter(|l| l.contains(&back)).count(),
        1,
        "{log:#?}"
    );
    imap.off();
}

fn subject_seen(stack: &MailStack, user: &str, needle: &str) -> bool {
    read_mailbox(&stack.host, stack.imap_port, user, &stack.password)
        .unwrap()
        .iter()
        .any(|m| subject(m).contains(needle))
}

#[test]
fn an_smtp_outage_stops_no_take_in_and_charges_no_mail() {
    let stack = mail_stack();
    let smtp = Relay::new(stack.smtp_port);
    let server = Server::new(&stack, stack.imap_port, smtp.port, "");
    // SMTP is down from the start; IMAP works.
    let serving = server.serve();
    serving.wait_for_line("with IDLE", GUARD);
    let people: Vec<String> = (0..3)
        .map(|i| unique_address(&format!("smtpdown{i}"), "participants.example"))
        .collect();
    for p in &people {
        server.send(&stack, p, "hello", &format!("h-{p}"), "?");
    }
    // Every mail is taken in and answered (the replies are queued).
    let deadline = Instant::now() + HANG_GUARD;
    while serving.lines("mail answered:").len() < 3 {
        assert!(
            Instant::now() < deadline,
            "not all mails were taken in and answered"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let fails = format!("SMTP sending to 127.0.0.1:{} fails", smtp.port);
    serving.wait_for_line(&fails, GUARD);
    serving.wait_for_line(
        &format!("SMTP sending to 127.0.0.1:{} still fails", smtp.port),
        30,
    );
    // The operator sees it where he looks (issue 25), not only in the log.
    let status = || {
        let o = Command::new(BIN)
            .args(["status", "--config"])
            .arg(server.config())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let down = format!("SMTP sending to 127.0.0.1:{} FAILS since", smtp.port);
    let s = status();
    assert!(s.contains(&down), "{s}");
    // SMTP comes back: every reply goes out.
    smtp.on();
    for p in &people {
        wait_for_subject(&stack, p, "how to talk", GUARD);
    }
    // The line goes once the flush that found it working is over.
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let s = status();
        if !s.contains("FAILS since") {
            break;
        }
        assert!(Instant::now() < deadline, "{s}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = serving.stop();
    assert_eq!(
        log.iter().filter(|l| l.contains(&fails)).count(),
        1,
        "{log:#?}"
    );
    assert_eq!(
        log.iter()
            .filter(|l| l.contains(&format!(
                "SMTP sending to 127.0.0.1:{} works again",
                smtp.port
            )))
            .count(),
        1,
        "{log:#?}"
    );
    // The outage was charged to no mail: every reply went out at its
    // first counted attempt.
    let db = rusqlite::Connection::open(server.dir.path().join("k.db")).unwrap();
    let charged: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM outbox WHERE attempts > 1 AND state = 'sent'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(charged, 0, "mails charged an attempt for the outage");
    smtp.off();
}

#[test]
fn serve_once_prints_a_summary_and_sends_while_imap_is_down() {
    let stack = mail_stack();
    // Nothing listens on the IMAP side.
    let imap = Relay::new(stack.imap_port);
    let server = Server::new(&stack, imap.port, stack.smtp_port, "");
    let joe = unique_address("once", "lords.example");
    server.ingest(
        "hello.eml",
        &server.mail(&joe, "hello", &format!("once-{joe}"), "?"),
    );
    let out = Command::new(BIN)
        .args(["serve", "--once", "--config"])
        .arg(server.config())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed side is exit 1\n{stdout}\n{stderr}"
    );
    let figure = |label: &str| -> usize {
        stdout
            .lines()
            .find(|l| l.starts_with(label))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {label:?} line in {stdout}"))
    };
    assert_eq!(figure("mails taken in"), 0, "{stdout}");
    // The help reply and the organizer's copy went out all the same.
    assert_eq!(figure("replies sent"), 2, "{stdout}");
    assert_eq!(figure("replies failed"), 0, "{stdout}");
    assert!(
        stdout.contains("taking mail in failed: ")
            && stdout.contains(&format!("127.0.0.1:{}", imap.port))
            && stdout.contains("onnection refused"),
        "{stdout}"
    );
    assert!(!stdout.contains("Cycle {"), "not a debug dump: {stdout}");
    wait_for_subject(&stack, &joe, "how to talk", 60);
}

/// A scripted IMAP server on a loopback port: an empty INBOX, with or
/// without the IDLE capability; it records every command it gets.
fn fake_imap(with_idle: bool) -> (u16, Arc<Mutex<Vec<String>>>) {
    use std::io::Write;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let commands = Arc::new(Mutex::new(Vec::new()));
    let seen = commands.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut out = conn.try_clone().unwrap();
                let caps = if with_idle {
                    "IMAP4rev1 IDLE"
                } else {
                    "IMAP4rev1"
                };
                let _ = write!(out, "* OK fake ready\r\n");
                let mut idle_tag = None;
                for line in BufReader::new(conn).lines() {
                    let Ok(line) = line else { return };
                    seen.lock().unwrap().push(line.clone());
                    if line == "DONE" {
                        if let Some(tag) = idle_tag.take() {
                            let _ = write!(out, "{tag} OK IDLE done\r\n");
                        }
                        continue;
                    }
                    let mut words = line.splitn(3, ' ');
                    let tag = words.next().unwrap_or("*").to_string();
                    let command = words.next().unwrap_or("").to_ascii_uppercase();
                    let reply = match command.as_str() {
                        "CAPABILITY" => format!("* CAPABILITY {caps}\r\n{tag} OK done\r\n"),
                        "LOGIN" => format!("{tag} OK logged in\r\n"),
                        "SELECT" => format!(
                            "* 0 EXISTS\r\n* 0 RECENT\r\n* OK [UIDVALIDITY 7] ok\r\n\
                             * OK [UIDNEXT 1] ok\r\n{tag} OK [READ-WRITE] selected\r\n"
                        ),
                        "UID" => format!("* SEARCH\r\n{tag} OK done\r\n"),
                        "IDLE" if with_idle => {
                            idle_tag = Some(tag);
                            "+ idling\r\n".to_string()
                        }
                        "LOGOUT" => format!("* BYE\r\n{tag} OK bye\r\n"),
                        _ => format!("{tag} BAD unknown command\r\n"),
                    };
                    if out.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, commands)
}

fn fake_config(
    port: u16,
    poll_secs: u64,
    idle_renew_secs: u64,
) -> (tempfile::TempDir, knobeln::config::Config) {
    let dir = tempfile::tempdir().unwrap();
    let config = knobeln::config::Config::parse(&format!(
        "database = {:?}\ntransport = \"imap\"\n\
         [imap]\nhost = \"127.0.0.1\"\nport = {port}\ntls = \"none\"\nuser = \"u\"\n\
         password = \"p\"\npoll_secs = {poll_secs}\nidle_renew_secs = {idle_renew_secs}\n\
         [smtp]\nhost = \"127.0.0.1\"\nport = 1\ntls = \"none\"\n",
        dir.path().join("k.db").display().to_string()
    ))
    .unwrap();
    knobeln::store::Store::open(&config.database).unwrap();
    (dir, config)
}

fn count(commands: &Mutex<Vec<String>>, word: &str) -> usize {
    commands
        .lock()
        .unwrap()
        .iter()
        .filter(|l| {
            l.split(' ')
                .nth(1)
                .is_some_and(|c| c.eq_ignore_ascii_case(word))
        })
        .count()
}

#[test]
fn a_server_without_idle_is_polled_and_one_with_idle_is_not() {
    use knobeln::mail::intake::Intake;
    // Without IDLE: polled every second over one session.
    let (port, commands) = fake_imap(false);
    let (_dir, config) = fake_config(port, 1, 1500);
    let (tx, _rx) = std::sync::mpsc::channel();
    let intake = Intake::start(config, tx).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&commands, "SELECT") < 3 {
        assert!(
            Instant::now() < deadline,
            "not polled: {:?}",
            commands.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    intake.stop();
    assert_eq!(
        count(&commands, "IDLE"),
        0,
        "{:?}",
        commands.lock().unwrap()
    );
    assert_eq!(
        count(&commands, "LOGIN"),
        1,
        "one session: {:?}",
        commands.lock().unwrap()
    );

    // With IDLE: one look, then it idles (a poll every second would have
    // selected again meanwhile), and a stop ends the IDLE at once.
    let (port, commands) = fake_imap(true);
    let (_dir, config) = fake_config(port, 1, 1500);
    let (tx, _rx) = std::sync::mpsc::channel();
    let intake = Intake::start(config, tx).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&commands, "IDLE") < 1 {
        assert!(
            Instant::now() < deadline,
            "no IDLE: {:?}",
            commands.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(
        count(&commands, "SELECT"),
        1,
        "{:?}",
        commands.lock().unwrap()
    );
    let stopping = Instant::now();
    intake.stop();
    assert!(
        stopping.elapsed() < Duration::from_secs(10),
        "a stop ends the IDLE, without waiting for its renewal in 25 minutes (took {:?})",
        stopping.elapsed()
    );
}

#[test]
fn an_idle_is_renewed_in_time_over_the_same_session() {
    use knobeln::mail::intake::Intake;
    // Renewed every second: DONE, a look at the mailbox, IDLE again.
    let (port, commands) = fake_imap(true);
    let (_dir, config) = fake_config(port, 600, 1);
    let (tx, _rx) = std::sync::mpsc::channel();
    let intake = Intake::start(config, tx).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&commands, "IDLE") < 3 {
        assert!(
            Instant::now() < deadline,
            "not renewed: {:?}",
            commands.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    intake.stop();
    let seen = commands.lock().unwrap().clone();
    assert!(
        seen.iter().filter(|l| *l == "DONE").count() >= 2,
        "{seen:?}"
    );
    assert_eq!(count(&commands, "LOGIN"), 1, "one session: {seen:?}");
}
