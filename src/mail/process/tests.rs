//! Unit tests of processing stored mails on an in-memory store.

use super::*;
use crate::tournament::TeamId;

/// The authentification string of team `name` in these tests (and the
/// admission's).
pub(crate) fn auth(name: &str) -> String {
    format!("Zq4vX9pL2mK8{name}")
}

/// A registered team `name` at `name@lords.example` whose
/// authentification string is [`auth`]`(name)`.
pub(crate) fn team(store: &Store, name: &str) -> TeamId {
    let secret = auth(name);
    let salt = crate::auth::new_salt();
    let mailbox = format!("{name}@lords.example");
    db::insert_registration(
        store.conn(),
        &db::NewRegistration {
            team_name: name,
            requested_name: name,
            mail_address: &mailbox,
            preferences: "",
            organization: name,
            members_json: "[]",
            record: "",
            auth_salt: &salt,
            auth_hash: &crate::auth::hash(&salt, &secret),
            auth_index: &crate::auth::index(&secret),
            mailbox: &mailbox,
            inbox_id: None,
            proof: db::AddressProof::Claimed,
        },
        Utc::now(),
    )
    .unwrap()
}

fn take_in(store: &Store, n: u32, from: &str, subject: &str, body: &str) -> i64 {
    let mail = format!(
        "From: {from}\r\nTo: knobeln@contest.example\r\nSubject: {subject}\r\n\
             Message-ID: <q{n}@x.example>\r\n\r\n{body}\r\n"
    );
    crate::mail::inbox::take_in(
        store.conn(),
        "test",
        None,
        mail.as_bytes(),
        usize::MAX,
        Utc::now(),
    )
    .unwrap()
    .unwrap()
}

/// Issue 35: the compile queue reads and authenticates a waiting mail
/// once, before it queues. After the first look its lane is stored
/// with it, so a later cycle finds the request without reading the
/// mail (here: its bytes replaced by garbage after the first look);
/// `status` (`Counted`) writes nothing. A "please compile" without a
/// valid `<<FROM>>` line is a stranger's and never queues.
#[test]
fn the_compile_queue_authenticates_once_before_it_queues() {
    let store = Store::open_in_memory().unwrap();
    let config = Config::default();
    let millers = team(&store, "millers");
    let source = |auth: &str| format!("/* <<FROM>> millers {auth} */\nint x;");
    let proven = take_in(
        &store,
        1,
        "joe@lords.example",
        "please compile",
        &source(&auth("millers")),
    );
    take_in(&store, 2, "joe@lords.example", "help", "hello");
    take_in(
        &store,
        3,
        "eve@forged.example",
        "please compile",
        &source("guessed"),
    );
    take_in(&store, 4, "eve@forged.example", "please compile", "int x;");
    let counted = pending_compiles(&store, &config, Classified::Counted).unwrap();
    assert_eq!(counted.len(), 1);
    let unseen: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM inbox WHERE queue_key IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unseen, 4, "status writes nothing");
    let first = pending_compiles(&store, &config, Classified::Stored).unwrap();
    assert_eq!(
        first,
        vec![QueuedCompile {
            inbox_id: proven,
            team: millers
        }]
    );
    store
        .conn()
        .execute("UPDATE inbox SET raw = x'00ff00'", [])
        .unwrap();
    let again = pending_compiles(&store, &config, Classified::Stored).unwrap();
    assert_eq!(again, first, "the mails were not read again");
}

/// Issue 35: turns are by team, not by From line. Twenty requests of
/// one team from twenty forged senders are one team's: the queue serves
/// a second team between them.
#[test]
fn compile_turns_are_by_team_whatever_the_senders() {
    let store = Store::open_in_memory().unwrap();
    let config = Config::default();
    let (millers, bakers) = (team(&store, "millers"), team(&store, "bakers"));
    for n in 0..20 {
        take_in(
            &store,
            n,
            &format!("forged{n}@x{n}.example"),
            "please compile",
            &format!("/* <<FROM>> millers {} */\nint x;", auth("millers")),
        );
    }
    let late = take_in(
        &store,
        99,
        "ann@lords.example",
        "please compile",
        &format!("/* <<FROM>> bakers {} */\nint x;", auth("bakers")),
    );
    let waiting = pending_compiles(&store, &config, Classified::Stored).unwrap();
    assert_eq!(waiting.len(), 21);
    assert!(waiting[..20].iter().all(|q| q.team == millers));
    let served = std::collections::HashMap::new();
    let next = crate::mail::compile_queue::next_compiles(&waiting, &[], &served, 2);
    assert_eq!(next, vec![waiting[0].inbox_id, late]);
    let after = crate::mail::compile_queue::next_compiles(&waiting, &[millers], &served, 2);
    assert_eq!(after, vec![late], "one request of a team at a time");
    assert_eq!(waiting[20].team, bakers);
}

/// Issue 35, lanes: a proven team's mail waits for one batch at most,
/// however many strangers' mails came before it, and a newcomer's
/// registration goes before strangers' other mails.
#[test]
fn a_proven_teams_mail_goes_before_strangers_waiting_mails() {
    let mut store = Store::open_in_memory().unwrap();
    let config = Config::default();
    team(&store, "millers");
    for n in 0..(QUICK_BATCH as u32 * 3) {
        take_in(&store, n, &format!("r{n}@gmail.example"), "help", "hello");
    }
    let status = take_in(
        &store,
        1000,
        "joe@lords.example",
        "status",
        &format!("<<FROM>> millers {}", auth("millers")),
    );
    let registration = take_in(
        &store,
        1001,
        "newcomer@new.example",
        "registration for KNOBELN",
        "mail-address: newcomer@new.example",
    );
    let referee = RefereeConfig::default();
    let summary = process_pass(
        &mut store,
        &config,
        &referee,
        &Utc::now,
        Pass::AllButCompiles,
    )
    .unwrap();
    assert!(summary.more_waiting);
    assert_eq!(summary.processed + summary.ignored, QUICK_BATCH);
    let state: String = store
        .conn()
        .query_row("SELECT state FROM inbox WHERE id = ?1", [status], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(state, "done", "the team's mail was in the first batch");
    let outcome: String = store
        .conn()
        .query_row(
            "SELECT outcome FROM inbox WHERE id = ?1",
            [registration],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        outcome.starts_with("registration"),
        "a registration goes before strangers' other mails: {outcome}"
    );
}

/// What a registration mail's processing said (`inbox.outcome`) on a
/// server running `discipline` whose database holds a flooding contest
/// (`state`: running or finished), started before.
fn registration_outcome_beside_a_flooding_contest(
    discipline: crate::discipline::Discipline,
    state: &str,
) -> String {
    let mut store = Store::open_in_memory().unwrap();
    let mut config = Config::default();
    config.contest.discipline = discipline;
    crate::testing::a_bot_contest_runs(store.conn());
    store
        .conn()
        .execute("UPDATE bot_contests SET state = ?1", [state])
        .unwrap();
    let id = take_in(
        &store,
        1,
        "newcomer@new.example",
        "registration for KNOBELN",
        "mail-address: newcomer@new.example",
    );
    process_pass(
        &mut store,
        &config,
        &RefereeConfig::default(),
        &Utc::now,
        Pass::AllButCompiles,
    )
    .unwrap();
    store
        .conn()
        .query_row("SELECT outcome FROM inbox WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap()
}

/// A bot discipline's contest is not in KNOBELN's `contest` table; once it
/// has started, the registration is closed all the same (a team that
/// registered then would not play: the entries are fixed at the start),
/// and it stays closed once that contest has finished (the database is
/// that contest's; the next contest takes a new one).
#[test]
fn a_registration_after_a_bot_contest_started_is_refused() {
    use crate::discipline::Discipline;
    for state in ["running", "finished"] {
        assert_eq!(
            registration_outcome_beside_a_flooding_contest(Discipline::FLOODING, state),
            "registration after the contest start",
            "{state}"
        );
    }
}

/// Hostile review (issue 38's leftovers): a database that holds a contest
/// of another discipline (used before for it) does not close the
/// registration of the contest the server runs now, KNOBELN's or another
/// bot discipline's; before, any `bot_contests` row closed it for ever.
#[test]
fn another_disciplines_contest_in_the_database_leaves_the_registration_open() {
    use crate::discipline::Discipline;
    for d in [Discipline::KNOBELN, Discipline::MORABARABA] {
        for state in ["running", "finished"] {
            let outcome = registration_outcome_beside_a_flooding_contest(d, state);
            assert!(
                outcome.starts_with("registration") && !outcome.contains("contest start"),
                "{d} beside a {state} flooding contest: {outcome}"
            );
        }
    }
}

/// The `status` mail of a bot discipline tells the contest's phase from
/// its `bot_contests` row: before its start, that the contest starts
/// soon; running, that it runs; finished, that it is over.
#[test]
fn the_status_mail_of_a_bot_discipline_tells_that_the_contest_runs() {
    let mut store = Store::open_in_memory().unwrap();
    let mut config = Config::default();
    config.contest.discipline = crate::discipline::Discipline::FLOODING;
    config.timeline.contest_start = Utc::now() - chrono::Duration::hours(1);
    team(&store, "millers");
    let ask = |store: &mut Store, n: u32| -> String {
        take_in(
            store,
            n,
            "joe@lords.example",
            "status",
            &format!("<<FROM>> millers {}", auth("millers")),
        );
        process_pass(
            store,
            &config,
            &RefereeConfig::default(),
            &Utc::now,
            Pass::AllButCompiles,
        )
        .unwrap();
        let raw: Vec<u8> = store
            .conn()
            .query_row(
                "SELECT raw FROM outbox WHERE kind = 'status' ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let text = String::from_utf8_lossy(&raw).replace("=\r\n", "");
        let at = text.find("The contest: ").expect("a phase line");
        text[at..].lines().next().unwrap().to_string()
    };
    assert_eq!(
        ask(&mut store, 1),
        "The contest: the compilation service is closed; the contest starts soon."
    );
    crate::testing::a_bot_contest_runs(store.conn());
    assert_eq!(ask(&mut store, 2), "The contest: it is running.");
    store
        .conn()
        .execute("UPDATE bot_contests SET state = 'finished'", [])
        .unwrap();
    assert_eq!(ask(&mut store, 3), "The contest: it is over.");
}

/// The inbox rows: (id, raw's length, full_size, whether a time to forget
/// the head is set).
fn heads(store: &Store) -> Vec<(i64, i64, Option<i64>, bool)> {
    let mut st = store
        .conn()
        .prepare(
            "SELECT id, length(raw), full_size, forget_head_at IS NOT NULL FROM inbox ORDER BY id",
        )
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<std::result::Result<_, _>>()
        .unwrap()
}

/// A stranger's mail and an automatic one keep their heads 7 days, then
/// only their rows (key, real size); a proven team's mail keeps its head. The clock is the pass's `now`, moved forward.
#[test]
fn a_strangers_processed_mail_keeps_only_its_key_after_7_days() {
    let mut store = Store::open_in_memory().unwrap();
    let mut config = Config::default();
    // Not passed on to the organizer (a forwarded mail stays whole).
    config.limits.forwards_per_day = 0;
    let referee = RefereeConfig::default();
    team(&store, "millers");
    let filler = "x".repeat(5000);
    let stranger = take_in(&store, 1, "r1@gmail.example", "help", &filler);
    let automatic = {
        let mail = format!(
            "From: r2@gmail.example\r\nTo: knobeln@contest.example\r\nSubject: away\r\n\
             Auto-Submitted: auto-replied\r\nMessage-ID: <q2@x.example>\r\n\r\n{filler}\r\n"
        );
        crate::mail::inbox::take_in(
            store.conn(),
            "test",
            None,
            mail.as_bytes(),
            usize::MAX,
            Utc::now(),
        )
        .unwrap()
        .unwrap()
    };
    let proven = take_in(
        &store,
        3,
        "joe@lords.example",
        "status",
        &format!("<<FROM>> millers {}\n{filler}", auth("millers")),
    );
    let t0 = Utc::now();
    let at = |days: i64, hours: i64| {
        move || t0 + chrono::Duration::days(days) + chrono::Duration::hours(hours)
    };
    process_pass(&mut store, &config, &referee, &at(0, 0), Pass::All).unwrap();
    let kept = heads(&store);
    let marked: Vec<i64> = kept.iter().filter(|h| h.3).map(|h| h.0).collect();
    assert_eq!(marked, vec![stranger, automatic], "{kept:?}");
    assert!(
        kept.iter().all(|h| h.1 == 4096),
        "every head cut at 4 KiB: {kept:?}"
    );
    // Six days and 23 hours later: still kept.
    process_pass(&mut store, &config, &referee, &at(6, 23), Pass::All).unwrap();
    assert_eq!(heads(&store), kept);
    // Seven days after: the strangers' heads are gone, the others stay.
    process_pass(&mut store, &config, &referee, &at(7, 0), Pass::All).unwrap();
    let after = heads(&store);
    for (id, len, size, due) in &after {
        if [stranger, automatic].contains(id) {
            assert_eq!((*len, *due), (0, false), "{after:?}");
            assert!(size.unwrap() > 5000, "its real size stays: {after:?}");
        } else {
            assert_eq!(*id, proven);
            assert_eq!(*len, 4096, "{after:?}");
        }
    }
    // What de-duplication needs stays: the same mail again is one mail.
    let again = format!(
        "From: r1@gmail.example\r\nTo: knobeln@contest.example\r\nSubject: help\r\n\
         Message-ID: <q1@x.example>\r\n\r\n{filler}\r\n"
    );
    let taken = crate::mail::inbox::take_in(
        store.conn(),
        "again",
        None,
        again.as_bytes(),
        usize::MAX,
        at(30, 0)(),
    )
    .unwrap();
    assert_eq!(taken, None, "the same mail a month later is still one mail");
}

/// A processed mail keeps its row, its key with it, `keep_inbox_days`
/// (90) days after its processing, then the row goes; a mail waiting or
/// set aside stays however old. A pass 89 days and 23 hours after
/// changes nothing (the same mail delivered again then is still one
/// mail), one 90 days after deletes the stranger's help and the proven
/// team's status, each in its own state; their replies stay (what the
/// caps count), naming no mail. The same mail delivered after that is a
/// new mail: nothing but its sender can deliver it so late (the mailbox
/// holds a mail `imap.keep_days` + 1 days at most).
#[test]
fn a_processed_mail_keeps_its_row_90_days_and_a_waiting_or_set_aside_one_stays() {
    let mut store = Store::open_in_memory().unwrap();
    let mut config = Config::default();
    config.limits.forwards_per_day = 0;
    let referee = RefereeConfig::default();
    team(&store, "millers");
    let stranger = take_in(&store, 1, "r1@gmail.example", "help", "hello");
    let proven = take_in(
        &store,
        2,
        "joe@lords.example",
        "status",
        &format!("<<FROM>> millers {}\n", auth("millers")),
    );
    let t0 = Utc::now();
    let at =
        |days: i64, hours: i64| t0 + chrono::Duration::days(days) + chrono::Duration::hours(hours);
    process_pass(&mut store, &config, &referee, &|| at(0, 0), Pass::All).unwrap();
    // Set aside by hand (as after its last attempt), and one still waiting.
    let set_aside = take_in(&store, 3, "r3@gmail.example", "help", "hello");
    db::finish_inbox(store.conn(), set_aside, "failed", "set aside", at(0, 0)).unwrap();
    let waiting = take_in(&store, 4, "r4@gmail.example", "help", "hello");
    let rows = |store: &Store| -> Vec<(i64, String)> {
        store
            .conn()
            .prepare("SELECT id, state FROM inbox ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let before = rows(&store);
    assert_eq!(
        before.iter().map(|r| r.0).collect::<Vec<_>>(),
        [stranger, proven, set_aside, waiting]
    );
    assert_eq!(
        (before[0].1.as_str(), before[1].1.as_str()),
        ("done", "done")
    );
    let replies = |store: &Store| -> Vec<Option<i64>> {
        store
            .conn()
            .prepare("SELECT inbox_id FROM outbox ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(replies(&store), [Some(stranger), Some(proven)]);
    let again = |when| {
        let mail = "From: r1@gmail.example\r\nTo: knobeln@contest.example\r\nSubject: help\r\n\
                    Message-ID: <q1@x.example>\r\n\r\nhello\r\n";
        crate::mail::inbox::take_in(
            store.conn(),
            "again",
            None,
            mail.as_bytes(),
            usize::MAX,
            when,
        )
        .unwrap()
    };
    // 89 days and 23 hours after: nothing goes, the same mail is one mail.
    let keep = config.limits.keep_inbox_days;
    assert_eq!(
        forget_processed_mails(&store, keep, at(89, 23), Batches::All).unwrap(),
        0
    );
    assert_eq!(rows(&store), before);
    assert_eq!(again(at(89, 23)), None, "still one mail");
    // 90 days after: the processed mails go, the others stay.
    assert_eq!(
        forget_processed_mails(&store, keep, at(90, 0), Batches::All).unwrap(),
        2
    );
    assert_eq!(rows(&store), before[2..]);
    assert_eq!(
        replies(&store),
        [None, None],
        "the replies stay, naming no mail"
    );
    // The same mail now is a new mail.
    assert!(again(at(90, 1)).is_some());
}

/// A stranger cannot get more replies by waiting for the bytes of those
/// sent to go: the reply caps count the outbox's rows, which stay. With
/// `keep_sent_days = 0` each flush empties the replies it sent; the
/// sender's third mail of the day still finds its two replies counted
/// and gets none.
#[test]
fn the_caps_count_a_strangers_replies_after_their_bytes_are_gone() {
    let mut store = Store::open_in_memory().unwrap();
    let mut config = Config::default();
    config.limits.replies_per_sender_per_day = 2;
    config.limits.forwards_per_day = 0;
    config.limits.keep_sent_days = 0;
    let referee = RefereeConfig::default();
    let dir = tempfile::tempdir().unwrap();
    let mut spool = crate::mail::transport::spool::Spool::open(dir.path()).unwrap();
    let mut ids = Vec::new();
    for n in 1..=3 {
        ids.push(take_in(&store, n, "eve@strangers.example", "help", "hello"));
        process_pass(&mut store, &config, &referee, &Utc::now, Pass::All).unwrap();
        crate::mail::delivery::flush(&store, &mut spool, &config, &Utc::now).unwrap();
    }
    let (rows, emptied, bytes): (i64, i64, i64) = store
        .conn()
        .query_row(
            "SELECT COUNT(*), COUNT(body_removed_at), coalesce(SUM(length(raw)), 0) FROM outbox",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (rows, emptied, bytes),
        (2, 2, 0),
        "two replies, both emptied"
    );
    let (_, outcome, _) = db::inbox_state(store.conn(), ids[2]).unwrap();
    let outcome = outcome.unwrap_or_default();
    assert!(
        outcome.contains("2 replies to this sender today already"),
        "{outcome}"
    );
}
