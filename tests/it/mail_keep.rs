//! The contest mailbox's removal of the mails taken in (`imap.keep_days`)
//! at its edges: the boundary day, one look a day (and one at a start),
//! a server without UIDPLUS, and a kill between `\Deleted` and
//! `UID EXPUNGE`.
//!
//! On the real mail stack (`deploy/mailstack.sh`; see `mailstack`), each
//! test in mailboxes of its own, except the server without UIDPLUS: Dovecot
//! cannot hide a capability from one user without a config of its own (and
//! a restart of the stack every test shares), so that one is a scripted
//! IMAP server on a loopback port that keeps its mails' flags and dates and
//! records every command.
//!
//! A mail's arrival date is set by `APPEND` with an internal date at noon
//! UTC, so the mail server's day is the same whatever its time zone within
//! eleven hours. The take-in counts days from the UTC date it runs on; a
//! test that runs across midnight UTC starts again in new mailboxes
//! ([`within_one_day`]).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use chrono::{NaiveDate, Utc};
use knobeln::config::{Config, ImapConfig, TlsMode};
use knobeln::mail::intake::{take_in_all, Removals};
use knobeln::mail::transport::imap::ImapPoller;
use knobeln::store::Store;

use crate::mailstack::{mail_stack, unique_address, MailStack};

fn today() -> NaiveDate {
    Utc::now().date_naive()
}

/// Runs `attempt` (which must start afresh, in new mailboxes) until one
/// run starts and ends on the same UTC day (at most three runs).
fn within_one_day<T>(mut attempt: impl FnMut(NaiveDate) -> T) -> T {
    for _ in 0..3 {
        let day = today();
        let out = attempt(day);
        if today() == day {
            return out;
        }
    }
    panic!("three runs across midnight UTC in a row");
}

fn message(subject: &str, to: &str) -> Vec<u8> {
    format!(
        "From: Joe Lord <joe@lords.example>\r\n\
         To: {to}\r\n\
         Subject: {subject}\r\n\
         Date: Mon, 21 Mar 1994 12:00:00 +0000\r\n\
         Message-ID: <{subject}.{to}>\r\n\
         \r\n\
         a few words\r\n"
    )
    .into_bytes()
}

/// Noon UTC of the day `days` before `today`, as an IMAP internal date.
fn noon_days_back(today: NaiveDate, days: u64) -> chrono::DateTime<chrono::FixedOffset> {
    (today - chrono::Days::new(days))
        .and_hms_opt(12, 0, 0)
        .unwrap()
        .and_utc()
        .fixed_offset()
}

fn login(stack: &MailStack, user: &str) -> imap::Session<TcpStream> {
    let tcp = TcpStream::connect((stack.host.as_str(), stack.imap_port)).unwrap();
    let mut client = imap::Client::new(tcp);
    client.read_greeting().unwrap();
    client
        .login(user, &stack.password)
        .map_err(|(e, _)| e)
        .unwrap()
}

/// Puts mails into `user`'s INBOX as a mail server would have delivered
/// them `days` days before `today` (0: today), with the flags given.
fn append(
    stack: &MailStack,
    user: &str,
    today: NaiveDate,
    mails: &[(&str, u64, &[imap::types::Flag<'static>])],
) {
    let mut session = login(stack, user);
    for &(subject, days, flags) in mails {
        session
            .append_with_flags_and_date(
                "INBOX",
                message(subject, user),
                flags,
                Some(noon_days_back(today, days)),
            )
            .unwrap();
    }
    let _ = session.logout();
}

/// `user`'s INBOX: each mail's subject and flags (`Seen`, `Deleted`), in
/// UID order, read on a connection of its own.
fn mailbox(stack: &MailStack, user: &str) -> Vec<(String, Vec<String>)> {
    let mut session = login(stack, user);
    let exists = session.examine("INBOX").unwrap().exists;
    let mut out = Vec::new();
    if exists > 0 {
        let fetches = session.fetch("1:*", "(UID FLAGS BODY.PEEK[])").unwrap();
        let mut mails: Vec<_> = fetches
            .iter()
            .map(|f| {
                let text = String::from_utf8_lossy(f.body().unwrap()).into_owned();
                let subject = text
                    .lines()
                    .find_map(|l| l.strip_prefix("Subject: "))
                    .unwrap()
                    .to_string();
                let flags = f.flags().iter().map(|f| format!("{f:?}")).collect();
                (f.uid.unwrap(), subject, flags)
            })
            .collect();
        mails.sort();
        out = mails.into_iter().map(|(_, s, f)| (s, f)).collect();
    }
    let _ = session.logout();
    out
}

fn subjects(mails: &[(String, Vec<String>)]) -> Vec<&str> {
    mails.iter().map(|(s, _)| s.as_str()).collect()
}

/// One take-in, as the take-in thread makes it, with `removals` kept
/// between take-ins as the thread keeps it.
fn take_in(store: &mut Store, cfg: &ImapConfig, removals: &mut Removals) -> usize {
    let config = Config::default();
    let mut poller = ImapPoller::connect(cfg).unwrap();
    let stored = take_in_all(store, &config, cfg, &mut poller, removals).unwrap();
    poller.logout();
    stored
}

/// (1) At the default `imap.keep_days` (30), a mail stays 30 whole days
/// after the day it arrived: one that arrived 29 or 30 days ago (by the
/// day, whatever the hour) stays, one of 31 days goes, as the config page
/// and `deploy/README.md` say. The take-in's look is on the day it ran.
#[test]
fn a_mail_stays_thirty_whole_days_after_the_day_it_arrived_and_goes_on_the_thirty_first() {
    let stack = mail_stack();
    let (left, looked_on, day) = within_one_day(|day| {
        let user = unique_address("keepedge", "contest.example");
        append(
            &stack,
            &user,
            day,
            &[("d29", 29, &[]), ("d30", 30, &[]), ("d31", 31, &[])],
        );
        let cfg = stack.imap_config(&user);
        assert_eq!(cfg.keep_days, 30);
        let mut store = Store::open_in_memory().unwrap();
        let mut removals = Removals::new();
        assert_eq!(take_in(&mut store, &cfg, &mut removals), 3);
        (mailbox(&stack, &user), removals.looked_on(), day)
    });
    assert_eq!(looked_on, Some(day));
    assert_eq!(subjects(&left), ["d29", "d30"], "{left:?}");
    for (subject, flags) in &left {
        assert!(
            flags.iter().any(|f| f == "Seen") && !flags.iter().any(|f| f == "Deleted"),
            "{subject} is kept, flagged \\Seen, not \\Deleted: {flags:?}"
        );
    }
}

/// (2) The take-in looks for mails due at its first take-in of a day, not
/// at every take-in: a mail 40 days old that comes in after the day's look
/// stays until the next day's look, or the first take-in after a start
/// (a new [`Removals`]). With `keep_days = 0` every take-in looks.
#[test]
fn the_mailbox_is_looked_at_once_a_day_and_at_the_first_take_in_after_a_start() {
    let stack = mail_stack();
    let (after_first, after_second, after_start, after_zero) = within_one_day(|day| {
        let user = unique_address("keeponce", "contest.example");
        let cfg = stack.imap_config(&user);
        let mut store = Store::open_in_memory().unwrap();
        let mut removals = Removals::new();
        append(&stack, &user, day, &[("today", 0, &[]), ("old1", 40, &[])]);
        assert_eq!(take_in(&mut store, &cfg, &mut removals), 2);
        let after_first = mailbox(&stack, &user);
        // Later the same day: a mail of 40 days back comes in (moved there
        // from another folder, say); it is taken in, and it stays.
        append(&stack, &user, day, &[("old2", 40, &[])]);
        assert_eq!(take_in(&mut store, &cfg, &mut removals), 1);
        let after_second = mailbox(&stack, &user);
        // The server started again: its first take-in looks.
        let mut removals = Removals::new();
        assert_eq!(take_in(&mut store, &cfg, &mut removals), 0);
        let after_start = mailbox(&stack, &user);
        // keep_days = 0: every take-in looks, after the day's look too.
        let mut zero = cfg.clone();
        zero.keep_days = 0;
        append(&stack, &user, day, &[("new", 0, &[])]);
        assert_eq!(take_in(&mut store, &zero, &mut removals), 1);
        let after_zero = mailbox(&stack, &user);
        (after_first, after_second, after_start, after_zero)
    });
    assert_eq!(subjects(&after_first), ["today"], "{after_first:?}");
    assert_eq!(
        subjects(&after_second),
        ["today", "old2"],
        "not looked at again the same day: {after_second:?}"
    );
    assert!(
        !after_second[1].1.iter().any(|f| f == "Deleted"),
        "taken in, not flagged \\Deleted: {after_second:?}"
    );
    assert_eq!(
        subjects(&after_start),
        ["today"],
        "looked at after a start: {after_start:?}"
    );
    assert!(after_zero.is_empty(), "{after_zero:?}");
}

/// (4) A server killed between flagging a due mail `\Seen \Deleted` and
/// its `UID EXPUNGE` leaves it flagged in the mailbox (its row and the
/// position committed). The next take-in (the first after the start)
/// expunges it, stores nothing twice, and leaves alone a mail of today
/// that someone else flagged `\Deleted` (the server never sends a plain
/// `EXPUNGE`).
#[test]
fn a_mail_left_flagged_deleted_by_a_kill_is_expunged_at_the_next_take_in() {
    use imap::types::Flag;
    use knobeln::mail::inbox::{take_in_capped, Capped};
    use knobeln::store::mail::set_imap_position;
    let stack = mail_stack();
    let (left, rows) = within_one_day(|day| {
        let user = unique_address("keepkill", "contest.example");
        let cfg = stack.imap_config(&user);
        let mut store = Store::open_in_memory().unwrap();
        append(
            &stack,
            &user,
            day,
            &[("killed", 40, &[Flag::Seen, Flag::Deleted])],
        );
        // What the take-in committed before it flagged the mail and was
        // killed: the mail's row and the position.
        let mut poller = ImapPoller::connect(&cfg).unwrap();
        let (v, first) = poller.fetch_new(None, 0, 10).unwrap();
        poller.logout();
        assert_eq!(first.len(), 1);
        {
            let tx = store.conn_mut().transaction().unwrap();
            let m = &first[0];
            take_in_capped(
                &tx,
                "imap:INBOX",
                Some((v, m.uid)),
                &Capped::from_bytes(&m.raw, 1 << 20),
                Utc::now(),
            )
            .unwrap()
            .unwrap();
            set_imap_position(&tx, "INBOX", v, m.uid).unwrap();
            tx.commit().unwrap();
        }
        append(&stack, &user, day, &[("theirs", 0, &[Flag::Deleted])]);
        assert_eq!(mailbox(&stack, &user).len(), 2);
        let mut removals = Removals::new();
        assert_eq!(take_in(&mut store, &cfg, &mut removals), 1);
        let rows: i64 = store
            .conn()
            .query_row("SELECT count(*) FROM inbox", [], |r| r.get(0))
            .unwrap();
        (mailbox(&stack, &user), rows)
    });
    assert_eq!(rows, 2, "each mail stored once");
    assert_eq!(subjects(&left), ["theirs"], "{left:?}");
    assert!(
        left[0].1.iter().any(|f| f == "Deleted"),
        "another's \\Deleted mail is left as it was: {left:?}"
    );
}

/// A mail in the scripted server's mailbox.
#[derive(Debug, Clone)]
struct FakeMail {
    uid: u32,
    arrived: NaiveDate,
    flags: BTreeSet<String>,
    raw: Vec<u8>,
}

/// What the scripted server holds and was told.
#[derive(Debug, Default)]
struct FakeState {
    mails: Vec<FakeMail>,
    commands: Vec<String>,
}

/// Whether the scripted server announces UIDPLUS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UidPlus {
    Announced,
    Missing,
}

/// A UID set (`1:3,5`, `4:*`) as a test on a UID.
fn in_set(set: &str, uid: u32) -> bool {
    set.split(',').any(|part| {
        let bound = |s: &str| {
            if s == "*" {
                u32::MAX
            } else {
                s.parse().unwrap()
            }
        };
        match part.split_once(':') {
            Some((a, b)) => {
                let (a, b) = (bound(a), bound(b));
                (a.min(b)..=a.max(b)).contains(&uid)
            }
            None => bound(part) == uid,
        }
    })
}

/// A scripted IMAP server on a loopback port, speaking just what the
/// take-in says (LOGIN, CAPABILITY, SELECT, UID SEARCH with `UID` and
/// `BEFORE`, UID FETCH, UID STORE, UID EXPUNGE with UIDPLUS, EXPUNGE,
/// LOGOUT) on the mails given; it records every command.
fn fake_imap(uidplus: UidPlus, mails: Vec<FakeMail>) -> (u16, Arc<Mutex<FakeState>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let state = Arc::new(Mutex::new(FakeState {
        mails,
        commands: Vec::new(),
    }));
    let shared = state.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let state = shared.clone();
            std::thread::spawn(move || serve_fake(conn, uidplus, &state));
        }
    });
    (port, state)
}

fn serve_fake(conn: TcpStream, uidplus: UidPlus, state: &Mutex<FakeState>) {
    let caps = match uidplus {
        UidPlus::Announced => "IMAP4rev1 UIDPLUS",
        UidPlus::Missing => "IMAP4rev1",
    };
    let mut out = conn.try_clone().unwrap();
    let _ = write!(out, "* OK fake ready\r\n");
    let mut lines = BufReader::new(conn);
    loop {
        let mut line = String::new();
        match lines.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = line.trim_end().to_string();
        let mut st = state.lock().unwrap();
        st.commands.push(line.clone());
        let mut words = line.splitn(3, ' ');
        let tag = words.next().unwrap_or("*").to_string();
        let mut command = words.next().unwrap_or("").to_ascii_uppercase();
        let mut rest = words.next().unwrap_or("").to_string();
        if command == "UID" {
            let (sub, tail) = rest.split_once(' ').unwrap_or((rest.as_str(), ""));
            command = format!("UID {}", sub.to_ascii_uppercase());
            rest = tail.to_string();
        }
        let mut reply: Vec<u8> = Vec::new();
        match command.as_str() {
            "CAPABILITY" => write!(reply, "* CAPABILITY {caps}\r\n{tag} OK done\r\n").unwrap(),
            "LOGIN" | "NOOP" => write!(reply, "{tag} OK done\r\n").unwrap(),
            "SELECT" | "EXAMINE" => {
                let next = st.mails.iter().map(|m| m.uid).max().unwrap_or(0) + 1;
                write!(
                    reply,
                    "* {} EXISTS\r\n* 0 RECENT\r\n* OK [UIDVALIDITY 7] ok\r\n\
                     * OK [UIDNEXT {next}] ok\r\n{tag} OK [READ-WRITE] selected\r\n",
                    st.mails.len()
                )
                .unwrap();
            }
            "UID SEARCH" => {
                let words: Vec<&str> = rest.split(' ').collect();
                let mut set = "1:*";
                let mut before: Option<NaiveDate> = None;
                let mut i = 0;
                while i < words.len() {
                    match words[i].to_ascii_uppercase().as_str() {
                        "UID" => set = words[i + 1],
                        "BEFORE" => {
                            before =
                                Some(NaiveDate::parse_from_str(words[i + 1], "%d-%b-%Y").unwrap())
                        }
                        other => panic!("the fake does not search {other}"),
                    }
                    i += 2;
                }
                let found: Vec<String> = st
                    .mails
                    .iter()
                    .filter(|m| in_set(set, m.uid) && before.is_none_or(|d| m.arrived < d))
                    .map(|m| m.uid.to_string())
                    .collect();
                let found: String = found.iter().map(|u| format!(" {u}")).collect();
                write!(reply, "* SEARCH{found}\r\n{tag} OK done\r\n").unwrap();
            }
            "UID FETCH" => {
                let (set, items) = rest.split_once(' ').unwrap();
                for (i, m) in st.mails.iter().enumerate() {
                    if !in_set(set, m.uid) {
                        continue;
                    }
                    if items.contains("RFC822.SIZE") {
                        write!(
                            reply,
                            "* {} FETCH (UID {} RFC822.SIZE {})\r\n",
                            i + 1,
                            m.uid,
                            m.raw.len()
                        )
                        .unwrap();
                    } else {
                        write!(
                            reply,
                            "* {} FETCH (UID {} BODY[] {{{}}}\r\n",
                            i + 1,
                            m.uid,
                            m.raw.len()
                        )
                        .unwrap();
                        reply.extend_from_slice(&m.raw);
                        reply.extend_from_slice(b")\r\n");
                    }
                }
                write!(reply, "{tag} OK done\r\n").unwrap();
            }
            "UID STORE" => {
                let (set, what) = rest.split_once(' ').unwrap();
                assert!(what.starts_with("+FLAGS"), "{what}");
                let flags: Vec<String> = what[what.find('(').unwrap() + 1..what.len() - 1]
                    .split(' ')
                    .map(str::to_string)
                    .collect();
                for m in st.mails.iter_mut().filter(|m| in_set(set, m.uid)) {
                    m.flags.extend(flags.iter().cloned());
                }
                write!(reply, "{tag} OK done\r\n").unwrap();
            }
            "UID EXPUNGE" if uidplus == UidPlus::Announced => {
                let set = rest.clone();
                expunge(&mut st.mails, &mut reply, |m| in_set(&set, m.uid));
                write!(reply, "{tag} OK done\r\n").unwrap();
            }
            "EXPUNGE" => {
                expunge(&mut st.mails, &mut reply, |_| true);
                write!(reply, "{tag} OK done\r\n").unwrap();
            }
            "LOGOUT" => write!(reply, "* BYE\r\n{tag} OK bye\r\n").unwrap(),
            _ => write!(reply, "{tag} BAD unknown command\r\n").unwrap(),
        }
        drop(st);
        if out.write_all(&reply).is_err() {
            return;
        }
    }
}

/// Removes the mails flagged `\Deleted` that `which` names, each reported
/// by its sequence number.
fn expunge(mails: &mut Vec<FakeMail>, reply: &mut Vec<u8>, which: impl Fn(&FakeMail) -> bool) {
    let mut i = 0;
    while i < mails.len() {
        if mails[i].flags.contains("\\Deleted") && which(&mails[i]) {
            mails.remove(i);
            write!(reply, "* {} EXPUNGE\r\n", i + 1).unwrap();
        } else {
            i += 1;
        }
    }
}

fn fake_mails(today: NaiveDate) -> Vec<FakeMail> {
    let mail = |uid, days, flags: &[&str]| FakeMail {
        uid,
        arrived: today - chrono::Days::new(days),
        flags: flags.iter().map(|f| f.to_string()).collect(),
        raw: message(&format!("m{uid}"), "knobeln@contest.example"),
    };
    vec![
        mail(1, 40, &[]),
        mail(2, 40, &[]),
        mail(3, 0, &[]),
        // Flagged `\Deleted` by someone else (the organizer's client).
        mail(4, 0, &["\\Deleted"]),
    ]
}

fn fake_config(port: u16) -> ImapConfig {
    ImapConfig {
        host: "127.0.0.1".into(),
        port,
        tls: TlsMode::None,
        user: "u".into(),
        password: Some("p".into()),
        password_file: None,
        mailbox: "INBOX".into(),
        poll_secs: 1,
        idle: false,
        idle_renew_secs: knobeln::config::DEFAULT_IDLE_RENEW_SECS,
        keep_days: knobeln::config::DEFAULT_KEEP_DAYS,
    }
}

/// The commands the scripted server got whose name (after the tag) is
/// `name` (`EXPUNGE`, `UID EXPUNGE`, `UID STORE`).
fn commands_named(state: &Mutex<FakeState>, name: &str) -> Vec<String> {
    state
        .lock()
        .unwrap()
        .commands
        .iter()
        .filter(|l| {
            l.split_once(' ')
                .is_some_and(|(_, c)| c.to_ascii_uppercase().starts_with(&format!("{name} ")))
                || l.split_once(' ')
                    .is_some_and(|(_, c)| c.eq_ignore_ascii_case(name))
        })
        .cloned()
        .collect()
}

/// (3) A server without UIDPLUS: the mails due are flagged `\Seen
/// \Deleted` and stay; no `EXPUNGE` of any kind is sent (a plain one would
/// take along a mail someone else flagged `\Deleted`), at the first
/// take-in or after a start. The same mailbox on a server with UIDPLUS:
/// `UID EXPUNGE` of exactly the due mails.
#[test]
fn without_uidplus_the_mails_due_stay_flagged_deleted_and_nothing_is_expunged() {
    let (outcomes, day) = within_one_day(|day| {
        let mut outcomes = Vec::new();
        for uidplus in [UidPlus::Missing, UidPlus::Announced] {
            let (port, state) = fake_imap(uidplus, fake_mails(day));
            let cfg = fake_config(port);
            let mut store = Store::open_in_memory().unwrap();
            assert_eq!(take_in(&mut store, &cfg, &mut Removals::new()), 4);
            assert_eq!(take_in(&mut store, &cfg, &mut Removals::new()), 0);
            let mails = state.lock().unwrap().mails.clone();
            outcomes.push((uidplus, mails, state));
        }
        (outcomes, day)
    });
    for (uidplus, mails, state) in &outcomes {
        let stores = commands_named(state, "UID STORE");
        let before = (day - chrono::Days::new(30))
            .format("%-d-%b-%Y")
            .to_string();
        let searches = commands_named(state, "UID SEARCH");
        assert!(
            searches
                .iter()
                .any(|s| s.ends_with(&format!("UID SEARCH UID 1:4 BEFORE {before}"))),
            "{searches:?}"
        );
        assert!(
            stores
                .iter()
                .any(|s| s.ends_with("UID STORE 1:2 +FLAGS.SILENT (\\Seen \\Deleted)")),
            "{uidplus:?}: {stores:?}"
        );
        assert!(
            commands_named(state, "EXPUNGE").is_empty(),
            "{uidplus:?}: never a plain EXPUNGE"
        );
        let uids: Vec<u32> = mails.iter().map(|m| m.uid).collect();
        match uidplus {
            UidPlus::Missing => {
                assert!(
                    commands_named(state, "UID EXPUNGE").is_empty(),
                    "{:?}",
                    state.lock().unwrap().commands
                );
                assert_eq!(uids, [1, 2, 3, 4], "nothing expunged");
                for m in &mails[..2] {
                    assert!(m.flags.contains("\\Deleted"), "{m:?}");
                    assert!(m.flags.contains("\\Seen"), "{m:?}");
                }
                assert!(!mails[2].flags.contains("\\Deleted"), "{:?}", mails[2]);
            }
            UidPlus::Announced => {
                let expunges = commands_named(state, "UID EXPUNGE");
                assert!(
                    !expunges.is_empty() && expunges.iter().all(|c| c.ends_with("UID EXPUNGE 1:2")),
                    "{expunges:?}"
                );
                assert_eq!(uids, [3, 4], "the due mails expunged, another's left");
            }
        }
    }
}
