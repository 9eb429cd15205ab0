//! The IMAP and SMTP transports against a real mail stack: Postfix and
//! Dovecot as `deploy/mailstack.sh start` runs them on this machine (SMTP
//! 127.0.0.1:25, IMAP 127.0.0.1:1143, password `knobeln` for every user,
//! user name = full address; `deploy/mailstack.sh env` prints the
//! `KNOBELN_TEST_*` variables that override these).
//!
//! The test command starts the stack before `cargo test`; these tests never
//! install or start anything, and a stack that is down is a failure (with
//! the command to run), never a skip. There is one stack per machine (port
//! 25), so every test works in mailboxes of its own (`t…@contest.example`,
//! unique per test and run) and the tests run in parallel.
//!
//! The helpers are `pub` for the end-to-end tests of the server:
//! [`mail_stack`], [`unique_address`], [`swaks_send`], [`wait_for_mails`].

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use knobeln::config::{ImapConfig, SmtpConfig, TlsMode};

use super::common::HANG_GUARD;
use knobeln::mail::transport::imap::{read_mailbox, Fetched, ImapError, ImapPoller};
use knobeln::mail::transport::smtp::{SendError, SmtpSender};

/// Where the local mail stack listens.
#[derive(Debug, Clone)]
pub struct MailStack {
    pub host: String,
    pub imap_port: u16,
    pub smtp_port: u16,
    /// Every user's password.
    pub password: String,
}

impl MailStack {
    /// Config for polling `user`'s INBOX (user = full address).
    pub fn imap_config(&self, user: &str) -> ImapConfig {
        ImapConfig {
            host: self.host.clone(),
            port: self.imap_port,
            tls: TlsMode::None,
            user: user.to_string(),
            password: Some(self.password.clone()),
            password_file: None,
            mailbox: "INBOX".to_string(),
            poll_secs: 1,
            idle: true,
            idle_renew_secs: knobeln::config::DEFAULT_IDLE_RENEW_SECS,
            keep_days: knobeln::config::DEFAULT_KEEP_DAYS,
        }
    }

    /// Config for sending through Postfix (no login, no TLS: loopback).
    pub fn smtp_config(&self) -> SmtpConfig {
        SmtpConfig {
            host: self.host.clone(),
            port: self.smtp_port,
            tls: TlsMode::None,
            user: None,
            password: None,
            password_file: None,
        }
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn env_port(name: &str, default: u16) -> u16 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a port number")),
        Err(_) => default,
    }
}

/// The running stack; panics (fails the test) with what to do when it is
/// not answering.
pub fn mail_stack() -> MailStack {
    let stack = MailStack {
        host: env_or("KNOBELN_TEST_MAIL_HOST", "127.0.0.1"),
        imap_port: env_port("KNOBELN_TEST_IMAP_PORT", 1143),
        smtp_port: env_port("KNOBELN_TEST_SMTP_PORT", 25),
        password: env_or("KNOBELN_TEST_MAIL_PASSWORD", "knobeln"),
    };
    for (what, port, greeting) in [
        ("IMAP (Dovecot)", stack.imap_port, "* OK"),
        ("SMTP (Postfix)", stack.smtp_port, "220"),
    ] {
        if let Err(why) = greets(&stack.host, port, greeting) {
            panic!(
                "the local mail stack is not running: {what} on {}:{port}: {why}\n\
                 start it first with `deploy/mailstack.sh start` (as root; \
                 `deploy/mailstack.sh status` checks it)",
                stack.host
            );
        }
    }
    stack
}

/// The server on `port` answers with a line starting `prefix`.
fn greets(host: &str, port: u16, prefix: &str) -> Result<(), String> {
    let addr = format!("{host}:{port}");
    let sock: std::net::SocketAddr = addr
        .parse()
        .map_err(|e| format!("bad address {addr}: {e}"))?;
    let tcp =
        TcpStream::connect_timeout(&sock, Duration::from_secs(5)).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let mut line = String::new();
    BufReader::new(&tcp)
        .read_line(&mut line)
        .map_err(|e| format!("no greeting: {e}"))?;
    let bye: &[u8] = if prefix == "220" {
        b"QUIT\r\n"
    } else {
        b"a LOGOUT\r\n"
    };
    let _ = (&tcp).write_all(bye);
    if line.starts_with(prefix) {
        Ok(())
    } else {
        Err(format!("unexpected greeting {line:?}"))
    }
}

/// An address no other test (of this run or an earlier one) uses, in
/// `domain` (`contest.example`, `participants.example`, `lords.example`).
pub fn unique_address(tag: &str, domain: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos();
    format!("t{tag}-{}-{n}-{nanos:x}@{domain}", std::process::id())
}

/// Hands the message `raw` to the stack's Postfix with swaks, byte for
/// byte: no token replacement, no `\n` escapes, no added headers
/// (`--no-data-fixup`); bare LF line ends become CRLF, and a message
/// without a final line end gets one. So what arrives is `raw` (with CRLF)
/// behind the trace headers.
pub fn swaks_send(stack: &MailStack, from: &str, to: &str, raw: &[u8]) {
    let mut data = Vec::with_capacity(raw.len() + 16);
    let mut line_start = true;
    let mut prev = 0u8;
    for &b in raw {
        if line_start && b == b'.' {
            data.push(b'.');
        }
        if b == b'\n' && prev != b'\r' {
            data.push(b'\r');
        }
        data.push(b);
        line_start = b == b'\n';
        prev = b;
    }
    if !data.ends_with(b"\r\n") {
        data.extend_from_slice(b"\r\n");
    }
    // The end of DATA; swaks adds the last CRLF itself.
    data.push(b'.');
    let mut child = Command::new("swaks")
        .args(["--server", &format!("{}:{}", stack.host, stack.smtp_port)])
        .args(["--from", from, "--to", to, "--no-data-fixup", "--data", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run swaks ({e}): `deploy/mailstack.sh start` installs it")
        });
    child.stdin.take().unwrap().write_all(&data).unwrap();
    let out = child.wait_with_output().unwrap();
    let transcript = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && transcript.contains("<-  250 2.0.0 Ok: queued"),
        "swaks failed: {transcript}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `user`'s INBOX once it holds at least `n` mails (waited for: the guard
/// [`HANG_GUARD`] only ends a test that hangs).
pub fn wait_for_mails(stack: &MailStack, user: &str, n: usize) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let mails = read_mailbox(&stack.host, stack.imap_port, user, &stack.password)
            .unwrap_or_else(|e| panic!("reading {user}'s mailbox: {e}"));
        if mails.len() >= n || Instant::now() > deadline {
            assert!(
                mails.len() >= n,
                "{user} has {} mails after {} s, expected {n}",
                mails.len(),
                HANG_GUARD.as_secs()
            );
            return mails;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls until `fetch_new` returns something (within 15 s).
fn poll_until_some(
    poller: &mut ImapPoller,
    known: Option<u32>,
    after: u32,
    max: usize,
) -> (u32, Vec<Fetched>) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (v, got) = poller.fetch_new(known, after, max).expect("fetch_new");
        if !got.is_empty() {
            return (v, got);
        }
        assert!(
            Instant::now() < deadline,
            "no new mail after UID {after} within 15 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The mail `delivered` is `original` with only trace headers in front.
fn assert_delivered_unchanged(delivered: &[u8], original: &[u8]) {
    assert!(
        delivered.ends_with(original),
        "the delivered mail does not end with the sent bytes:\n--- delivered\n{}\n--- sent\n{}",
        String::from_utf8_lossy(delivered),
        String::from_utf8_lossy(original)
    );
    let added = String::from_utf8(delivered[..delivered.len() - original.len()].to_vec())
        .expect("trace headers are ASCII");
    for line in added.split("\r\n").filter(|l| !l.is_empty()) {
        assert!(
            ["Return-Path:", "Delivered-To:", "Received:", " ", "\t"]
                .iter()
                .any(|p| line.starts_with(p)),
            "the mail system added more than trace headers: {line:?}"
        );
    }
}

/// A session of `user`'s on the stack's Dovecot, logged in on a connection
/// of its own (not through the code under test).
fn imap_session(stack: &MailStack, user: &str) -> imap::Session<TcpStream> {
    let tcp = TcpStream::connect((stack.host.as_str(), stack.imap_port)).unwrap();
    let mut client = imap::Client::new(tcp);
    client.read_greeting().unwrap();
    client
        .login(user, &stack.password)
        .map_err(|(e, _)| e)
        .unwrap()
}

/// The flags of message `uid` in `user`'s INBOX, read on a connection of
/// its own (so not through the code under test).
fn flags_of(stack: &MailStack, user: &str, uid: u32) -> Vec<String> {
    let mut session = imap_session(stack, user);
    session.examine("INBOX").unwrap();
    let fetches = session.uid_fetch(uid.to_string(), "FLAGS").unwrap();
    let flags = fetches
        .iter()
        .find(|f| f.uid == Some(uid))
        .unwrap_or_else(|| panic!("no message with UID {uid}"))
        .flags()
        .iter()
        .map(|f| format!("{f:?}"))
        .collect();
    let _ = session.logout();
    flags
}

fn message(subject: &str, to: &str, body: &str) -> Vec<u8> {
    format!(
        "From: Joe Lord <joe@lords.example>\r\n\
         To: {to}\r\n\
         Subject: {subject}\r\n\
         Date: Mon, 21 Mar 1994 12:00:00 +0000\r\n\
         Message-ID: <{subject}.{}@lords.example>\r\n\
         MIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\
         Content-Transfer-Encoding: 8bit\r\n\
         \r\n\
         {body}",
        std::process::id()
    )
    .into_bytes()
}

#[test]
fn a_mail_sent_with_swaks_is_polled_with_its_exact_bytes() {
    let stack = mail_stack();
    let user = unique_address("poll", "contest.example");
    // 8-bit text, a dot line, C with `\n` and `%`, which swaks must not touch.
    let original = message(
        "registration for KNOBELN",
        &user,
        "team: Würfelfreunde\r\n.a line starting with a dot\r\n\r\n  printf(\"%d\\n\", x); %DATE%\r\nlast\r\n",
    );
    swaks_send(&stack, "joe@lords.example", &user, &original);

    let mut poller = ImapPoller::connect(&stack.imap_config(&user)).expect("connect");
    let (v, first) = poll_until_some(&mut poller, None, 0, 10);
    assert_eq!(first.len(), 1);
    let m1 = &first[0];
    assert_eq!(m1.uidvalidity, v);
    assert_delivered_unchanged(&m1.raw, &original);
    assert!(
        !flags_of(&stack, &user, m1.uid).iter().any(|f| f == "Seen"),
        "fetching must not mark the mail seen"
    );

    // Nothing after it.
    let (v2, none) = poller.fetch_new(Some(v), m1.uid, 10).unwrap();
    assert_eq!(v2, v);
    assert!(none.is_empty(), "{none:?}");

    // A second mail gets a higher UID and is the only new one.
    let sent2 = message("second", &user, "2");
    swaks_send(&stack, "joe@lords.example", &user, &sent2);
    let (_, second) = poll_until_some(&mut poller, Some(v), m1.uid, 10);
    assert_eq!(second.len(), 1);
    assert!(second[0].uid > m1.uid);
    assert_delivered_unchanged(&second[0].raw, &[sent2, b"\r\n".to_vec()].concat());

    // Stored: flagged \Seen, still there.
    poller.mark_stored(m1.uid).unwrap();
    assert!(flags_of(&stack, &user, m1.uid).iter().any(|f| f == "Seen"));
    assert!(!flags_of(&stack, &user, second[0].uid)
        .iter()
        .any(|f| f == "Seen"));
    let (_, all) = poller.fetch_new(Some(v), 0, 10).unwrap();
    assert_eq!(
        all.iter().map(|m| m.uid).collect::<Vec<_>>(),
        vec![m1.uid, second[0].uid]
    );
    poller.logout();
}

#[test]
fn a_mail_over_the_size_cap_is_not_downloaded_only_its_header_part() {
    let stack = mail_stack();
    let user = unique_address("large", "contest.example");
    let small = message("small first", &user, "a line\r\n");
    swaks_send(&stack, "joe@lords.example", &user, &small);
    // 200 kB of body behind a marker the header part does not have.
    let body = format!(
        "BODY-MARKER\r\n{}",
        format!("{}\r\n", "x".repeat(76)).repeat(2700)
    );
    let large = message("large second", &user, &body);
    swaks_send(&stack, "joe@lords.example", &user, &large);
    let small_after = message("small third", &user, "another line\r\n");
    swaks_send(&stack, "joe@lords.example", &user, &small_after);
    wait_for_mails(&stack, &user, 3);

    let mut poller = ImapPoller::connect(&stack.imap_config(&user)).expect("connect");
    poller.set_size_cap(50_000);
    let mut got = Vec::new();
    let mut after = 0;
    let mut known = None;
    while got.len() < 3 {
        let (v, batch) = poll_until_some(&mut poller, known, after, 10);
        known = Some(v);
        after = batch.last().unwrap().uid;
        got.extend(batch);
    }
    let subjects: Vec<bool> = got.iter().map(|m| m.full_size.is_some()).collect();
    assert_eq!(
        subjects,
        vec![false, true, false],
        "in the order of their UIDs"
    );
    let big = &got[1];
    assert!(big.full_size.unwrap() > 200_000, "{:?}", big.full_size);
    let text = String::from_utf8_lossy(&big.raw);
    assert!(text.contains("Subject: large second"), "{text}");
    assert!(
        !text.contains("BODY-MARKER") && big.raw.len() < 5_000,
        "only the header part: {} bytes",
        big.raw.len()
    );
    assert!(String::from_utf8_lossy(&got[2].raw).contains("another line"));
    poller.logout();
}

#[test]
fn fetch_new_pages_by_max_and_starts_over_on_a_new_uidvalidity() {
    let stack = mail_stack();
    let user = unique_address("page", "contest.example");
    // One at a time: Postfix may deliver queued mails in any order.
    for i in 0..3 {
        swaks_send(
            &stack,
            "joe@lords.example",
            &user,
            &message(&format!("m{i}"), &user, "x"),
        );
        wait_for_mails(&stack, &user, i + 1);
    }
    let mut poller = ImapPoller::connect(&stack.imap_config(&user)).unwrap();
    let (v, page1) = poller.fetch_new(None, 0, 2).unwrap();
    assert_eq!(page1.len(), 2);
    assert!(page1[0].uid < page1[1].uid);
    let (_, page2) = poller.fetch_new(Some(v), page1[1].uid, 2).unwrap();
    assert_eq!(page2.len(), 1);
    assert!(page2[0].uid > page1[1].uid);
    // Subjects in the order sent.
    for (m, i) in page1.iter().chain(&page2).zip(0..) {
        let text = String::from_utf8_lossy(&m.raw);
        assert!(text.contains(&format!("Subject: m{i}\r\n")), "{text}");
    }
    // Another UIDVALIDITY than the mailbox's: everything again.
    let (_, again) = poller
        .fetch_new(Some(v.wrapping_add(1)), u32::MAX, 10)
        .unwrap();
    assert_eq!(again.len(), 3);
    // Past the last UID and at the very end of the UID space: nothing.
    assert!(poller
        .fetch_new(Some(v), page2[0].uid, 10)
        .unwrap()
        .1
        .is_empty());
    assert!(poller
        .fetch_new(Some(v), u32::MAX, 10)
        .unwrap()
        .1
        .is_empty());
    assert!(poller.fetch_new(Some(v), 0, 0).unwrap().1.is_empty());
    poller.logout();
}

#[test]
fn an_empty_mailbox_has_no_new_mail() {
    let stack = mail_stack();
    let user = unique_address("empty", "contest.example");
    let mut poller = ImapPoller::connect(&stack.imap_config(&user)).unwrap();
    let (_, none) = poller.fetch_new(None, 0, 10).unwrap();
    assert!(none.is_empty());
    poller.logout();
}

#[test]
fn smtp_sender_delivers_a_message_readable_over_imap() {
    let stack = mail_stack();
    let sender = SmtpSender::new(&stack.smtp_config()).unwrap();
    let alice = unique_address("alice", "participants.example");
    let bob = unique_address("bob", "lords.example");
    // LF line ends (made CRLF on the wire), a dot line (stuffed and
    // unstuffed), 8-bit text, and a final line end (not doubled).
    let raw = format!(
        "From: KNOBELN <knobeln@contest.example>\nTo: {alice}, {bob}\nSubject: your registration\n\
         Date: Mon, 21 Mar 1994 12:00:00 +0000\nMessage-ID: <reg.{}@contest.example>\n\
         MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n\
         Grüße\n.\n..two dots\nend\n",
        std::process::id()
    );
    sender
        .send_raw(
            "knobeln@contest.example",
            &[alice.clone(), bob.clone()],
            raw.as_bytes(),
        )
        .expect("send");
    let expected = raw.replace('\n', "\r\n").into_bytes();
    for user in [&alice, &bob] {
        let mails = wait_for_mails(&stack, user, 1);
        assert_eq!(mails.len(), 1);
        assert_delivered_unchanged(&mails[0], &expected);
        assert!(mails[0].starts_with(b"Return-Path: <knobeln@contest.example>\r\n"));
    }
}

#[test]
fn smtp_sender_sends_with_the_null_sender() {
    let stack = mail_stack();
    let sender = SmtpSender::new(&stack.smtp_config()).unwrap();
    let user = unique_address("bounce", "participants.example");
    let raw = message("bounce", &user, "undeliverable\r\n");
    sender
        .send_raw("", std::slice::from_ref(&user), &raw)
        .expect("send");
    let mails = wait_for_mails(&stack, &user, 1);
    assert!(mails[0].starts_with(b"Return-Path: <>\r\n"));
    assert_delivered_unchanged(&mails[0], &raw);
}

#[test]
fn sending_to_a_refused_port_is_transient() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut cfg = mail_stack().smtp_config();
    cfg.port = port;
    let err = SmtpSender::new(&cfg)
        .unwrap()
        .send_raw(
            "knobeln@contest.example",
            &["x@participants.example".into()],
            b"Subject: x\r\n\r\nx\r\n",
        )
        .unwrap_err();
    assert!(matches!(err, SendError::Transient(_)), "{err:?}");
}

#[test]
fn a_message_over_postfixs_size_limit_is_permanent() {
    let stack = mail_stack();
    let user = unique_address("big", "participants.example");
    // The stack's message_size_limit is 10240000 bytes.
    let mut raw = message("big", &user, "");
    let line = "x".repeat(76) + "\r\n";
    while raw.len() < 10_300_000 {
        raw.extend_from_slice(line.as_bytes());
    }
    let err = SmtpSender::new(&stack.smtp_config())
        .unwrap()
        .send_raw("knobeln@contest.example", &[user], &raw)
        .unwrap_err();
    assert!(
        matches!(err, SendError::Permanent(ref m) if m.contains("552")),
        "{err:?}"
    );
}

#[test]
fn a_bare_user_name_is_the_contest_domain() {
    // Dovecot's auth_default_realm: `tX` and `tX@contest.example` are one mailbox.
    let stack = mail_stack();
    let user = unique_address("bare", "contest.example");
    swaks_send(
        &stack,
        "joe@lords.example",
        &user,
        &message("bare", &user, "x"),
    );
    wait_for_mails(&stack, &user, 1);
    let local = user.split('@').next().unwrap();
    let mails = read_mailbox(&stack.host, stack.imap_port, local, &stack.password).unwrap();
    assert_eq!(mails.len(), 1);
    // Upper case is the same user, too.
    let mails = read_mailbox(
        &stack.host,
        stack.imap_port,
        &user.to_uppercase(),
        &stack.password,
    )
    .unwrap();
    assert_eq!(mails.len(), 1);
}

#[test]
fn a_wrong_password_is_a_login_error() {
    let stack = mail_stack();
    let mut cfg = stack.imap_config(&unique_address("pw", "contest.example"));
    cfg.password = Some("not the password".into());
    let err = ImapPoller::connect(&cfg).unwrap_err();
    assert!(matches!(err, ImapError::Login(_)), "{err:?}");
    cfg.password = None;
    let err = ImapPoller::connect(&cfg).unwrap_err();
    assert!(matches!(err, ImapError::Login(_)), "{err:?}");
}

#[test]
fn a_missing_mailbox_is_a_protocol_error() {
    let stack = mail_stack();
    let mut cfg = stack.imap_config(&unique_address("mbox", "contest.example"));
    cfg.mailbox = "No Such Folder".into();
    let mut poller = ImapPoller::connect(&cfg).unwrap();
    let err = poller.fetch_new(None, 0, 10).unwrap_err();
    assert!(matches!(err, ImapError::Protocol(_)), "{err:?}");
    poller.logout();
}

#[test]
fn tls_where_the_server_has_none_is_a_tls_error() {
    let stack = mail_stack();
    let mut cfg = stack.imap_config(&unique_address("tls", "contest.example"));
    cfg.tls = TlsMode::Tls;
    let err = ImapPoller::connect(&cfg).unwrap_err();
    assert!(matches!(err, ImapError::Tls(_)), "{err:?}");
    cfg.tls = TlsMode::Starttls;
    let err = ImapPoller::connect(&cfg).unwrap_err();
    assert!(matches!(err, ImapError::Tls(_)), "{err:?}");
}

#[test]
fn an_imap_port_nobody_listens_on_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut cfg = mail_stack().imap_config("x@contest.example");
    cfg.port = port;
    let err = ImapPoller::connect(&cfg).unwrap_err();
    assert!(matches!(err, ImapError::Connect(_)), "{err:?}");
}

#[test]
fn smtp_starttls_checks_the_certificate() {
    // Postfix offers STARTTLS with Debian's self-signed "snakeoil"
    // certificate: a sender that checks certificates must refuse it.
    let stack = mail_stack();
    let mut cfg = stack.smtp_config();
    cfg.tls = TlsMode::Starttls;
    let user = unique_address("starttls", "participants.example");
    let err = SmtpSender::new(&cfg)
        .unwrap()
        .send_raw(
            "knobeln@contest.example",
            std::slice::from_ref(&user),
            &message("tls", &user, "x\r\n"),
        )
        .unwrap_err();
    assert!(matches!(err, SendError::Transient(_)), "{err:?}");
    // TLS from the first byte on a plain port fails as well.
    cfg.tls = TlsMode::Tls;
    let err = SmtpSender::new(&cfg)
        .unwrap()
        .send_raw(
            "knobeln@contest.example",
            std::slice::from_ref(&user),
            &message("tls", &user, "x\r\n"),
        )
        .unwrap_err();
    assert!(matches!(err, SendError::Transient(_)), "{err:?}");
    let mails = read_mailbox(&stack.host, stack.imap_port, &user, &stack.password).unwrap();
    assert!(
        mails.is_empty(),
        "nothing may be delivered without a trusted certificate"
    );
}

#[test]
fn mail_to_a_domain_outside_the_stack_is_refused_permanently() {
    // The stack relays nothing: only its own domains receive mail.
    let stack = mail_stack();
    let err = SmtpSender::new(&stack.smtp_config())
        .unwrap()
        .send_raw(
            "knobeln@contest.example",
            &["somebody@elsewhere.example".into()],
            &message("out", "somebody@elsewhere.example", "x\r\n"),
        )
        .unwrap_err();
    assert!(
        matches!(err, SendError::Permanent(ref m) if m.contains("554")),
        "{err:?}"
    );
}

/// The state dir of the stack (`deploy/mailstack.sh env`).
fn state_dir() -> std::path::PathBuf {
    env_or("KNOBELN_MAILSTACK_DIR", "/var/lib/knobeln-mailstack").into()
}

#[test]
fn a_mail_the_server_cannot_read_is_a_broken_fetch_not_no_mail() {
    let stack = mail_stack();
    let user = unique_address("broken", "contest.example");
    // One at a time: Postfix may deliver queued mails in any order.
    for i in 0..3 {
        swaks_send(
            &stack,
            "joe@lords.example",
            &user,
            &message(&format!("b{i}"), &user, "x"),
        );
        wait_for_mails(&stack, &user, i + 1);
    }
    // Make the second mail's file unreadable for Dovecot (which reads as `mail`).
    let (local, domain) = user.split_once('@').unwrap();
    let maildir = state_dir()
        .join("mail")
        .join(domain)
        .join(local)
        .join("Maildir");
    let mut files: Vec<_> = ["new", "cur"]
        .iter()
        .flat_map(|d| std::fs::read_dir(maildir.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    // Dovecot stores maildir files with LF line ends.
    files.sort_by_key(|p| {
        let text = std::fs::read_to_string(p).unwrap();
        text.contains("Subject: b1\n") || text.contains("Subject: b1\r\n")
    });
    let second = files.pop().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&second, std::fs::Permissions::from_mode(0o000)).unwrap();

    let mut poller = ImapPoller::connect(&stack.imap_config(&user)).unwrap();
    // Dovecot numbers maildir files in the order it finds them, so the broken
    // mail may have any of the three UIDs. Walk the mailbox as the server
    // does: good mails come back, the broken one is an error naming its UID
    // (never "no mail"), and past it the walk goes on.
    let mut known = None;
    let mut after = 0;
    let mut good = Vec::new();
    let mut broken = Vec::new();
    for _ in 0..10 {
        match poller.fetch_new(known, after, 10) {
            Ok((v, got)) => {
                known = Some(v);
                if got.is_empty() {
                    break;
                }
                for f in got {
                    after = after.max(f.uid);
                    good.push(String::from_utf8_lossy(&f.raw).into_owned());
                }
            }
            Err(ImapError::BrokenFetch {
                uidvalidity, uid, ..
            }) => {
                assert!(uid > after, "the broken mail is the next one");
                broken.push(uid);
                known = Some(uidvalidity);
                after = uid;
            }
            Err(e) => panic!("expected mails or BrokenFetch, got {e:?}"),
        }
    }
    assert_eq!(
        broken.len(),
        1,
        "exactly the unreadable mail is reported: {broken:?}"
    );
    assert_eq!(good.len(), 2, "the other two mails are read");
    assert!(good.iter().any(|m| m.contains("Subject: b0\r\n")));
    assert!(good.iter().any(|m| m.contains("Subject: b2\r\n")));
    poller.logout();
    std::fs::set_permissions(&second, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// D7 (F8's audit): the mailbox no longer keeps every mail. With
/// `imap.keep_days = 0` a mail leaves the mailbox at the take-in after its
/// row committed (flagged `\Deleted`, expunged by its UID). A server
/// killed between the commit and the flag (here: the first mail stored
/// with its position, as the take-in does, and nothing more) leaves it
/// there; the next take-in removes it without storing it twice, and takes
/// in the others. Before, every mail stayed, flagged `\Seen`.
#[test]
fn a_stored_mail_leaves_the_mailbox_and_one_left_by_a_kill_goes_at_the_next_take_in() {
    use knobeln::mail::inbox::{take_in_capped, Capped};
    use knobeln::store::mail::set_imap_position;
    let stack = mail_stack();
    let user = unique_address("expunge", "contest.example");
    // One at a time: Postfix may deliver queued mails in any order.
    for i in 0..3 {
        swaks_send(
            &stack,
            "joe@lords.example",
            &user,
            &message(&format!("e{i}"), &user, &format!("mail {i}")),
        );
        wait_for_mails(&stack, &user, i + 1);
    }
    let mut cfg = stack.imap_config(&user);
    cfg.keep_days = 0;
    let config = knobeln::config::Config::default();
    let mut store = knobeln::store::Store::open_in_memory().unwrap();
    let mut poller = ImapPoller::connect(&cfg).unwrap();
    // The first mail committed with its position, then the server killed.
    let (v, first) = poller.fetch_new(None, 0, 1).unwrap();
    let m0 = &first[0];
    {
        let tx = store.conn_mut().transaction().unwrap();
        let id = take_in_capped(
            &tx,
            "imap:INBOX",
            Some((v, m0.uid)),
            &Capped::from_bytes(&m0.raw, config.limits.max_mail_bytes),
            chrono::Utc::now(),
        )
        .unwrap();
        assert!(id.is_some());
        set_imap_position(&tx, "INBOX", v, m0.uid).unwrap();
        tx.commit().unwrap();
    }
    poller.logout();
    assert_eq!(wait_for_mails(&stack, &user, 3).len(), 3);

    // The next take-in: the two others stored, the first not again, and
    // the mailbox empty.
    let mut poller = ImapPoller::connect(&cfg).unwrap();
    let stored = knobeln::mail::intake::take_in_all(
        &mut store,
        &config,
        &cfg,
        &mut poller,
        &mut knobeln::mail::intake::Removals::new(),
    )
    .unwrap();
    assert_eq!(stored, 2);
    let rows: Vec<(u32, Vec<u8>)> = {
        let mut st = store
            .conn()
            .prepare("SELECT uid, raw FROM inbox ORDER BY id")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(rows.len(), 3, "each mail stored once");
    for i in 0..3 {
        let subject = format!("Subject: e{i}\r\n");
        let n = rows
            .iter()
            .filter(|(_, raw)| String::from_utf8_lossy(raw).contains(&subject))
            .count();
        assert_eq!(n, 1, "mail e{i} stored {n} times");
    }
    let left = read_mailbox(&stack.host, stack.imap_port, &user, &stack.password).unwrap();
    assert!(left.is_empty(), "{} mails left in the mailbox", left.len());
    poller.logout();
}

/// D7: with the default `imap.keep_days` (30), a mail taken in stays in the
/// mailbox, flagged `\Seen` (the database keeps a processed mail's first
/// 4 KiB, or a mail over the size cap's header part only: the mailbox
/// holds its whole text), until 30 whole days after the day it arrived;
/// then it is expunged, over the size cap or not. Mails put there with an
/// arrival date 40 days back go at the take-in; one of 10 days and one
/// arrived today stay. Before, every mail stayed for ever.
#[test]
fn a_mail_stays_in_the_mailbox_keep_days_after_it_arrived_then_goes() {
    let stack = mail_stack();
    let user = unique_address("keepdays", "contest.example");
    swaks_send(
        &stack,
        "joe@lords.example",
        &user,
        &message("today", &user, "a few words"),
    );
    wait_for_mails(&stack, &user, 1);
    let big_body = "0123456789abcdef\r\n".repeat(1500);
    {
        let mut session = imap_session(&stack, &user);
        let now = chrono::Utc::now().fixed_offset();
        for (subject, days, body) in [
            ("old", 40, "a few words"),
            ("old-large", 40, big_body.as_str()),
            ("recent", 10, "a few words"),
        ] {
            session
                .append_with_flags_and_date(
                    "INBOX",
                    message(subject, &user, body),
                    &[],
                    Some(now - chrono::Duration::days(days)),
                )
                .unwrap();
        }
        let _ = session.logout();
    }
    assert_eq!(wait_for_mails(&stack, &user, 4).len(), 4);
    let cfg = stack.imap_config(&user);
    assert_eq!(cfg.keep_days, 30);
    let (store, stored) = take_in_once(&cfg, 8 * 1024);
    assert_eq!(stored, 4, "every mail stored");
    let capped: i64 = store
        .conn()
        .query_row(
            "SELECT count(*) FROM inbox WHERE full_size IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(capped, 1, "the large one kept as its header part");
    let left = read_mailbox(&stack.host, stack.imap_port, &user, &stack.password).unwrap();
    let mut subjects: Vec<String> = left
        .iter()
        .map(|raw| {
            let text = String::from_utf8_lossy(raw);
            let line = text.lines().find(|l| l.starts_with("Subject: ")).unwrap();
            line["Subject: ".len()..].to_string()
        })
        .collect();
    subjects.sort();
    assert_eq!(subjects, ["recent", "today"]);
    let mut poller = ImapPoller::connect(&cfg).unwrap();
    let (_, mails) = poller.fetch_new(None, 0, 10).unwrap();
    poller.logout();
    for m in &mails {
        assert!(
            flags_of(&stack, &user, m.uid).iter().any(|f| f == "Seen"),
            "a mail kept is flagged \\Seen"
        );
    }
}

/// F4 of the forty-seventh session, over the real Dovecot: a mail without
/// a blank line is all header to an IMAP server, so the header part of a
/// mail over the size cap that the take-in fetches can be as large as the
/// mail. The take-in keeps at most its first 64 KiB (`MAX_HEADER_BYTES`),
/// as the spool's does; before, the whole 300 kB were stored.
#[test]
fn a_mail_over_the_size_cap_that_is_all_header_is_kept_to_64_kib() {
    use knobeln::mail::inbox::MAX_HEADER_BYTES;
    let stack = mail_stack();
    let user = unique_address("allheader", "contest.example");
    let mut raw = format!(
        "From: stranger@lords.example\r\nTo: {user}\r\nSubject: all header\r\n\
         Message-ID: <all-header@lords.example>\r\nX-Long: start"
    );
    for _ in 0..4000 {
        raw.push_str("\r\n ");
        raw.push_str(&"a".repeat(74));
    }
    raw.push_str("\r\n");
    assert!(!raw.contains("\r\n\r\n") && raw.len() > 300_000);
    {
        let mut session = imap_session(&stack, &user);
        session.append("INBOX", raw.as_bytes()).unwrap();
        let _ = session.logout();
    }
    assert_eq!(wait_for_mails(&stack, &user, 1).len(), 1);
    let (store, stored) = take_in_once(&stack.imap_config(&user), 64 * 1024);
    assert_eq!(stored, 1);
    let (raw_len, full_size): (i64, Option<i64>) = store
        .conn()
        .query_row("SELECT length(raw), full_size FROM inbox", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(
        full_size.is_some_and(|n| n > 300_000),
        "the mail's size: {full_size:?}"
    );
    assert!(
        raw_len > 0 && raw_len as usize <= MAX_HEADER_BYTES,
        "{raw_len} bytes kept of a header part of over 300 kB"
    );
}

/// One take-in of the mailbox `cfg` names into a new store, mails over
/// `max_mail_bytes` kept as their header part: the store and how many
/// mails it stored.
fn take_in_once(cfg: &ImapConfig, max_mail_bytes: usize) -> (knobeln::store::Store, usize) {
    let mut config = knobeln::config::Config::default();
    config.limits.max_mail_bytes = max_mail_bytes;
    let mut store = knobeln::store::Store::open_in_memory().unwrap();
    let mut poller = ImapPoller::connect(cfg).unwrap();
    let stored = knobeln::mail::intake::take_in_all(
        &mut store,
        &config,
        cfg,
        &mut poller,
        &mut knobeln::mail::intake::Removals::new(),
    )
    .unwrap();
    poller.logout();
    (store, stored)
}
