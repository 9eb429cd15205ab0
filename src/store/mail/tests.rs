//! Unit tests of the mail tables: a mail's words looked up by index.

use super::*;
use crate::auth::{self, StoredSecret};
use crate::mail::secrets::{seal_with, Look};

fn register(conn: &Connection, i: usize, secret: &StoredSecret) {
    let address = format!("team{i}@x.example");
    insert_registration(
        conn,
        &NewRegistration {
            team_name: &format!("team_{i}"),
            requested_name: &format!("team_{i}"),
            mail_address: &address,
            preferences: "",
            organization: "Org",
            members_json: "[]",
            record: "",
            auth_salt: &secret.salt,
            auth_hash: &secret.hash,
            auth_index: &secret.index,
            mailbox: &address,
            inbox_id: None,
            proof: AddressProof::Claimed,
        },
        Utc::now(),
    )
    .unwrap();
}

/// A contest's LAP mail to `to` with no event key: what a test varies
/// it from.
fn outgoing<'a>(
    to: &'a [String],
    message_id: &'a str,
    raw: &'a [u8],
    shared: &'a [SharedPart<'a>],
) -> NewOutgoing<'a> {
    NewOutgoing {
        kind: "lap",
        ..NewOutgoing::help_for_tests(to, message_id, raw, shared)
    }
}

/// Issue 35: the cost of a mail does not grow with the field. A mail
/// with 256 auth-shaped words is sealed against 3000 teams with one
/// indexed lookup per word and no salted hash computed; the one real
/// string among the words is masked. A team stored before the index
/// (no digest) is still found, by its salted hash.
#[test]
fn a_mails_words_are_looked_up_by_index_whatever_the_field() {
    let store = crate::store::Store::open_in_memory().unwrap();
    let conn = store.conn();
    conn.execute_batch("BEGIN").unwrap();
    let mut real = String::new();
    for i in 0..3000 {
        let secret = auth::new_auth_string();
        register(conn, i, &StoredSecret::of(&secret));
        if i == 1234 {
            real = secret;
        }
    }
    conn.execute_batch("COMMIT").unwrap();
    let mut words: Vec<String> = (0..255).map(|_| auth::new_auth_string()).collect();
    words.push(real.to_ascii_uppercase());
    let mail = format!(
        "From: x@y.example\r\nSubject: words\r\n\r\n{}\r\n",
        words.join(" ")
    );
    let mut lookup = StoredSecrets::new(conn);
    let sealed = seal_with(mail.as_bytes(), Look::Outbound, usize::MAX, &mut lookup).unwrap();
    assert_eq!(sealed.masked, 1);
    assert!(!String::from_utf8_lossy(&sealed.raw).contains(&real.to_ascii_uppercase()));
    assert_eq!(lookup.lookups, 256);
    assert_eq!(lookup.unindexed_checks, 0);

    // A secret of an older version: no index digest.
    let old = auth::new_auth_string();
    register(conn, 5000, &StoredSecret::of(&old));
    conn.execute(
        "UPDATE registrations SET auth_index = NULL WHERE mail_address = 'team5000@x.example'",
        [],
    )
    .unwrap();
    let mut lookup = StoredSecrets::new(conn);
    let mail = format!("From: x@y.example\r\n\r\nmine: {old}\r\n");
    let sealed = seal_with(mail.as_bytes(), Look::Outbound, usize::MAX, &mut lookup).unwrap();
    assert_eq!(sealed.masked, 1);
    assert_eq!(lookup.unindexed_checks, 1);
}

/// A mail whose parts cannot be stored (the disk full, say) is not
/// queued at all, even on a connection outside any transaction: never a
/// row cut of its body and sent without it.
#[test]
fn a_mail_whose_parts_fail_to_store_is_not_queued_cut() {
    let store = crate::store::Store::open_in_memory().unwrap();
    let conn = store.conn();
    conn.execute_batch(
        "CREATE TEMP TRIGGER full BEFORE INSERT ON main.outbox_parts
         BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
    )
    .unwrap();
    let body = vec![b'x'; 4000];
    let sha = [7u8; 32];
    let mut raw = b"Subject: s\r\n\r\n".to_vec();
    raw.extend_from_slice(&body);
    let to = vec!["a@x.example".to_string()];
    let shared = [SharedPart {
        bytes: &body,
        sha256: &sha,
    }];
    let m = NewOutgoing {
        event_key: Some("LAP:a"),
        ..outgoing(&to, "<m@x>", &raw, &shared)
    };
    assert!(queue_outgoing(conn, &m, Utc::now()).is_err());
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT COUNT(*) FROM outbox"),
        0,
        "a row without its body"
    );
    assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), 0);
    // Inside a transaction the same: the caller's transaction goes on.
    conn.execute_batch("BEGIN").unwrap();
    assert!(queue_outgoing(conn, &m, Utc::now()).is_err());
    assert!(!conn.is_autocommit());
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(count("SELECT COUNT(*) FROM outbox"), 0);
    // Once the parts can be stored, the mail is queued whole.
    conn.execute_batch("DROP TRIGGER temp.full").unwrap();
    assert!(queue_outgoing(conn, &m, Utc::now()).unwrap());
    let due = due_outgoing(conn, Utc::now() + chrono::Duration::seconds(1), 10).unwrap();
    assert!(due.len() == 1 && due[0].raw == raw);
}

/// Inside a transaction a mail that fails half-way through its parts is
/// deleted again with only what it stored itself: a body an earlier mail
/// of the same transaction stored (and refers to) stays, so that mail is
/// still sent whole; the body only the failed mail stored goes.
#[test]
fn a_failed_mail_inside_a_transaction_leaves_the_bodies_other_mails_share() {
    let store = crate::store::Store::open_in_memory().unwrap();
    let conn = store.conn();
    let (x, y) = (vec![b'x'; 4000], vec![b'y'; 4000]);
    let (sx, sy) = ([1u8; 32], [2u8; 32]);
    let mail = |parts: &[&[u8]]| {
        let mut raw = b"Subject: s\r\n\r\n".to_vec();
        for p in parts {
            raw.extend_from_slice(p);
            raw.extend_from_slice(b"\r\n--\r\n");
        }
        raw
    };
    let (raw_a, raw_b) = (mail(&[&x]), mail(&[&x, &y]));
    let parts_a = [SharedPart {
        bytes: &x,
        sha256: &sx,
    }];
    let parts_b = [
        SharedPart {
            bytes: &x,
            sha256: &sx,
        },
        SharedPart {
            bytes: &y,
            sha256: &sy,
        },
    ];
    let to = vec!["a@x.example".to_string()];
    let a = outgoing(&to, "<a@x>", &raw_a, &parts_a);
    let b = NewOutgoing {
        message_id: "<b@x>",
        raw: &raw_b,
        shared: &parts_b,
        ..a.clone()
    };
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    conn.execute_batch("BEGIN").unwrap();
    assert!(queue_outgoing(conn, &a, Utc::now()).unwrap());
    // The failed mail's second part cannot be stored (the disk full, say).
    conn.execute_batch(
        "CREATE TEMP TRIGGER full BEFORE INSERT ON main.outbox_parts WHEN NEW.seq = 1
         BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
    )
    .unwrap();
    assert!(queue_outgoing(conn, &b, Utc::now()).is_err());
    assert!(!conn.is_autocommit());
    conn.execute_batch("COMMIT; DROP TRIGGER temp.full")
        .unwrap();
    assert_eq!(count("SELECT COUNT(*) FROM outbox"), 1);
    assert_eq!(count("SELECT COUNT(*) FROM outbox_parts"), 1);
    assert_eq!(
        count("SELECT COUNT(*) FROM outbox_bodies"),
        1,
        "the shared body stays, the failed mail's own goes"
    );
    let due = due_outgoing(conn, Utc::now() + chrono::Duration::seconds(1), 10).unwrap();
    assert!(
        due.len() == 1 && due[0].raw == raw_a,
        "the earlier mail whole"
    );
}

/// Issue 38 (schema 0024): a contest mail, which has no sender, adds no
/// entry to the per-sender and per-domain indexes, and the reply caps
/// still look senders up by those indexes and count what they did.
#[test]
fn contest_mails_stay_out_of_the_per_sender_indexes() {
    let store = crate::store::Store::open_in_memory().unwrap();
    let conn = store.conn();
    let to = vec!["team@x.example".to_string()];
    let mail = |id: &str, budget: Budget, sender_key: Option<&str>| {
        let m = NewOutgoing {
            kind: "software",
            budget,
            sender_key,
            ..outgoing(&to, id, b"Subject: s\r\n\r\nhi\r\n", &[])
        };
        assert!(queue_outgoing(conn, &m, Utc::now()).unwrap());
    };
    mail("<1@x>", Budget::Contest, None);
    mail("<2@x>", Budget::Strangers, Some("joe@lords.example"));
    for (sql, index) in [
        (
            "SELECT COUNT(*) FROM outbox WHERE sender_key = ?1 AND created_at >= ?2",
            "outbox_sender",
        ),
        (
            "SELECT COUNT(*) FROM outbox WHERE sender_domain = ?1 AND created_at >= ?2",
            "outbox_sender_domain",
        ),
    ] {
        let plan: String = conn
            .query_row(&format!("EXPLAIN QUERY PLAN {sql}"), ["a", "b"], |r| {
                r.get(3)
            })
            .unwrap();
        assert!(plan.contains(index), "{plan}");
    }
    // The partial indexes hold the one mail with a sender.
    let indexed: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM outbox INDEXED BY outbox_sender WHERE sender_key IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 1);
    let day_ago = Utc::now() - chrono::Duration::days(1);
    // Both counts in one look-up, each as its own count counts.
    for to in [
        ReplyTarget::Sender("joe@lords.example"),
        ReplyTarget::Everyone,
    ] {
        assert_eq!(
            replies(to)
                .since_with_kind(conn, day_ago, "software")
                .unwrap(),
            (
                replies(to).since(conn, day_ago).unwrap(),
                replies(to)
                    .of_kind("software")
                    .since(conn, day_ago)
                    .unwrap()
            )
        );
    }
    assert_eq!(
        replies(ReplyTarget::Sender("joe@lords.example"))
            .on(&[Budget::Strangers, Budget::Confirmed])
            .since(conn, day_ago)
            .unwrap(),
        1
    );
    assert_eq!(
        replies(ReplyTarget::Domain("lords.example"))
            .on(&[Budget::Strangers])
            .since(conn, day_ago)
            .unwrap(),
        1
    );
    assert_eq!(
        replies(ReplyTarget::Everyone)
            .of_kind("software")
            .since(conn, day_ago)
            .unwrap(),
        2
    );
}

/// Every reply cap's count is one indexed look-up, never a scan of the
/// outbox: the builder writes the budgets as literals, so the strangers'
/// lane finds its partial index (schema 0020), and a sender, a domain or a
/// team is looked up by its own.
#[test]
fn every_reply_count_looks_its_replies_up_by_an_index() {
    let store = crate::store::Store::open_in_memory().unwrap();
    let conn = store.conn();
    let day_ago = Utc::now() - chrono::Duration::days(1);
    let team = TeamId(7);
    for (count, index) in [
        (
            replies(ReplyTarget::Sender("joe@lords.example")),
            Some("outbox_sender"),
        ),
        (
            replies(ReplyTarget::Domain("lords.example")).on(&[Budget::Strangers]),
            Some("outbox_sender_domain"),
        ),
        (
            replies(ReplyTarget::Everyone).on(&[Budget::Strangers]),
            Some("outbox_strangers"),
        ),
        (replies(ReplyTarget::Team(team)), Some("outbox_team")),
        (
            replies(ReplyTarget::Everyone).of_kind("software"),
            Some("outbox_kind"),
        ),
        (
            replies(ReplyTarget::Everyone)
                .on(&[Budget::Confirmed])
                .of_kind("software"),
            None,
        ),
        (
            replies(ReplyTarget::Sender("joe@lords.example")).of_kind("software"),
            None,
        ),
        (
            replies(ReplyTarget::Domain("lords.example")).of_kind("software"),
            None,
        ),
        (replies(ReplyTarget::Team(team)).of_kind("software"), None),
    ] {
        let (sql, values) = count.query(day_ago);
        let plan: String = conn
            .query_row(
                &format!("EXPLAIN QUERY PLAN {sql}"),
                rusqlite::params_from_iter(values),
                |r| r.get(3),
            )
            .unwrap();
        assert!(
            plan.contains("USING") && plan.contains("INDEX"),
            "{sql}: {plan}"
        );
        if let Some(index) = index {
            assert!(plan.contains(index), "{sql}: {plan}");
        }
        // And the count runs.
        assert_eq!(count.since(conn, day_ago).unwrap(), 0, "{sql}");
    }
}

/// The mends (one builder for every reply cap's count) count exactly what
/// each cap counted before them: every count the reply gate and the kit
/// lanes make, against the SQL it replaced (copied from 0eb443b), over an
/// outbox of every budget, kind, sender, domain (in either case), team and
/// age, contest mails with their event keys among them.
#[test]
fn every_reply_count_counts_what_its_sql_counted_before_the_builder() {
    let store = crate::store::Store::open_in_memory().unwrap();
    let conn = store.conn();
    let now = Utc::now();
    let day_ago = now - chrono::Duration::days(1);
    let budgets = [
        Budget::Strangers,
        Budget::Confirmed,
        Budget::Team(TeamId(7)),
        Budget::Team(TeamId(8)),
        Budget::Contest,
        Budget::Registration,
    ];
    let senders = [
        None,
        Some("joe@lords.example"),
        Some("ann@LORDS.example"),
        Some("bob@other.example"),
    ];
    let mut n = 0;
    for (age, at) in [(2, now - chrono::Duration::days(2)), (0, now)] {
        for kind in ["software", "help", "lap"] {
            for budget in budgets {
                for sender in senders {
                    // Several of a kind, so that a count off by a lane shows.
                    for copy in 0..=(n % 3) {
                        n += 1;
                        let to = [format!("r{n}@x.example")];
                        let key = format!("EV:{n}");
                        let id = format!("<{n}.{age}.{copy}@x>");
                        let mut m = outgoing(&to, &id, b"x", &[]);
                        m.kind = kind;
                        m.budget = budget;
                        m.sender_key = sender;
                        m.event_key = (budget == Budget::Contest && kind == "lap").then_some(&key);
                        assert!(queue_outgoing(conn, &m, at).unwrap());
                    }
                }
            }
        }
    }
    let old = |sql: &str, values: &[&dyn rusqlite::ToSql]| -> u32 {
        conn.query_row(sql, values, |r| r.get(0)).unwrap()
    };
    let since = timestamp(day_ago);
    let mut checked = 0;
    for key in [
        "joe@lords.example",
        "ann@LORDS.example",
        "bob@other.example",
        "nobody@x.example",
    ] {
        assert_eq!(
            replies(ReplyTarget::Sender(key))
                .on(&[Budget::Strangers, Budget::Confirmed])
                .since(conn, day_ago)
                .unwrap(),
            old(
                "SELECT COUNT(*) FROM outbox WHERE sender_key = ?1 AND created_at >= ?2
                 AND budget IN ('strangers', 'confirmed')",
                &[&key, &since]
            ),
            "replies_since {key}"
        );
        assert_eq!(
            replies(ReplyTarget::Sender(key))
                .of_kind("software")
                .since(conn, day_ago)
                .unwrap(),
            old(
                "SELECT COUNT(*) FROM outbox WHERE kind = ?1 AND sender_key = ?2 AND created_at >= ?3",
                &[&"software", &key, &since]
            ),
            "replies_of_kind_since Sender {key}"
        );
        checked += 2;
    }
    for domain in [
        "lords.example",
        "LORDS.Example",
        "other.example",
        "x.example",
    ] {
        let lower = domain.to_ascii_lowercase();
        assert_eq!(
            replies(ReplyTarget::Domain(domain))
                .on(&[Budget::Strangers])
                .since(conn, day_ago)
                .unwrap(),
            old(
                "SELECT COUNT(*) FROM outbox WHERE sender_domain = ?1 AND created_at >= ?2
                 AND budget = 'strangers'",
                &[&lower, &since]
            ),
            "replies_to_domain_since {domain}"
        );
        assert_eq!(
            replies(ReplyTarget::Domain(domain))
                .of_kind("software")
                .since(conn, day_ago)
                .unwrap(),
            old(
                "SELECT COUNT(*) FROM outbox WHERE kind = ?1 AND sender_domain = ?2 AND created_at >= ?3",
                &[&"software", &lower, &since]
            ),
            "replies_of_kind_since Domain {domain}"
        );
        checked += 2;
    }
    assert_eq!(
        replies(ReplyTarget::Everyone)
            .on(&[Budget::Strangers])
            .since(conn, day_ago)
            .unwrap(),
        old(
            "SELECT COUNT(*) FROM outbox WHERE budget = 'strangers' AND created_at >= ?1",
            &[&since]
        ),
        "stranger_replies_since"
    );
    for team in [TeamId(7), TeamId(8), TeamId(9)] {
        let id = i64::from(team.0);
        assert_eq!(
            replies(ReplyTarget::Team(team))
                .since(conn, day_ago)
                .unwrap(),
            old(
                "SELECT COUNT(*) FROM outbox WHERE team_id = ?1 AND created_at >= ?2",
                &[&id, &since]
            ),
            "team_replies_since {team:?}"
        );
        assert_eq!(
            replies(ReplyTarget::Team(team))
                .of_kind("software")
                .since(conn, day_ago)
                .unwrap(),
            old(
                "SELECT COUNT(*) FROM outbox WHERE team_id = ?1 AND kind = ?2 AND created_at >= ?3",
                &[&id, &"software", &since]
            ),
            "team_replies_of_kind_since {team:?}"
        );
        checked += 2;
    }
    for budget in budgets {
        assert_eq!(
            replies(ReplyTarget::Everyone)
                .on(&[budget])
                .of_kind("software")
                .since(conn, day_ago)
                .unwrap(),
            old(
                "SELECT COUNT(*) FROM outbox WHERE budget = ?1 AND kind = ?2 AND created_at >= ?3",
                &[&budget.column(), &"software", &since]
            ),
            "budget_replies_of_kind_since {budget:?}"
        );
        checked += 1;
    }
    assert_eq!(checked, 28);
    // And the counts are not all zero: the outbox is the one meant.
    assert!(
        replies(ReplyTarget::Everyone)
            .on(&[Budget::Strangers])
            .since(conn, day_ago)
            .unwrap()
            > 10
    );
}

/// A group's registrations are read in one query (in chunks for a group
/// larger than SQLite's parameters), the same rows one look-up per team
/// gives, and read again at each call: an address, preferences or a
/// withdrawal changed while a contest runs count from the next event on.
#[test]
fn a_groups_registrations_are_read_at_once_and_fresh() {
    let store = crate::store::Store::open_in_memory().unwrap();
    let conn = store.conn();
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..1200 {
        register(conn, i, &StoredSecret::of(&auth::new_auth_string()));
    }
    conn.execute_batch("COMMIT").unwrap();
    // More names than one query takes, some not registered.
    let mut names: Vec<String> = (0..1100).map(|i| format!("team_{i}")).collect();
    names.push("nobody".into());
    let mut got = mailing_of(conn, &names).unwrap();
    got.sort_by_key(|r| r.team_name[5..].parse::<u32>().unwrap());
    assert_eq!(got.len(), 1100);
    for (i, r) in got.iter().enumerate() {
        let one = registration_by_team(conn, &names[i]).unwrap().unwrap();
        assert_eq!(r.team_name, one.team_name);
        assert_eq!(r.mail_address, one.mail_address);
        assert_eq!(r.preferences, one.preferences);
    }
    assert!(mailing_of(conn, &[]).unwrap().is_empty());

    let group = ["team_3".to_string(), "team_4".to_string()];
    let t3 = registration_by_team(conn, "team_3").unwrap().unwrap().team;
    let t4 = registration_by_team(conn, "team_4").unwrap().unwrap().team;
    crate::store::admin::set_address(conn, t3, "new@x.example", "new@x.example", "").unwrap();
    crate::store::admin::set_preferences(conn, t3, "GRP,GRR", "").unwrap();
    crate::store::admin::withdraw_team(conn, t4, "test", Utc::now()).unwrap();
    let got = mailing_of(conn, &group).unwrap();
    assert_eq!(
        got,
        vec![MailingRow {
            team_name: "team_3".into(),
            mail_address: "new@x.example".into(),
            preferences: "GRP,GRR".into(),
        }]
    );
}

/// The statements prepared on `conn` (the statement cache's included)
/// whose text starts with `start`.
fn prepared_statements(conn: &rusqlite::Connection, start: &str) -> usize {
    let mut n = 0;
    // SAFETY: the handle is the live connection's; the statements are only
    // walked and their texts read (owned by SQLite, copied at once), on
    // this thread, with nothing preparing or finalizing meanwhile.
    unsafe {
        let db = conn.handle();
        let mut st = rusqlite::ffi::sqlite3_next_stmt(db, std::ptr::null_mut());
        while !st.is_null() {
            let sql = rusqlite::ffi::sqlite3_sql(st);
            if !sql.is_null()
                && std::ffi::CStr::from_ptr(sql)
                    .to_string_lossy()
                    .starts_with(start)
            {
                n += 1;
            }
            st = rusqlite::ffi::sqlite3_next_stmt(db, st);
        }
    }
    n
}

/// A field of groups of every size from 1 to 600 teams reads their
/// registrations with at most one statement per [`MAILING_SIZES`] (a
/// chunk padded with NULLs), so they do not push the per-game statements
/// out of the connection's cache; the rows are those of the names asked
/// for, whatever the padding.
#[test]
fn the_registrations_of_groups_of_any_size_use_a_few_statements() {
    use super::registrations::{mailing_size, MAILING_SIZES};
    let store = crate::store::Store::open_in_memory().unwrap();
    let conn = store.conn();
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..600 {
        register(conn, i, &StoredSecret::of(&auth::new_auth_string()));
    }
    conn.execute_batch("COMMIT").unwrap();
    let start = "SELECT t.name, r.mail_address, r.preferences FROM registrations";
    assert_eq!(prepared_statements(conn, start), 0);
    for n in 1..=600usize {
        // Every other name registered (odd ones are not).
        let names: Vec<String> = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    format!("team_{i}")
                } else {
                    format!("nobody_{i}")
                }
            })
            .collect();
        let mut got: Vec<String> = mailing_of(conn, &names)
            .unwrap()
            .into_iter()
            .map(|r| r.team_name)
            .collect();
        got.sort_by_key(|name| name[5..].parse::<u32>().unwrap());
        let want: Vec<String> = (0..n).step_by(2).map(|i| format!("team_{i}")).collect();
        assert_eq!(got, want, "{n} names");
    }
    let used = prepared_statements(conn, start);
    assert!(
        (1..=MAILING_SIZES.len()).contains(&used),
        "{used} statements prepared"
    );
    assert_eq!(used, MAILING_SIZES.len(), "every size was needed");
    for n in 1..=500 {
        let size = mailing_size(n);
        assert!(size >= n && MAILING_SIZES.contains(&size), "{n}: {size}");
    }
    assert_eq!(mailing_size(9), 16);
    assert_eq!(mailing_size(64), 64);
    assert_eq!(mailing_size(65), 500);
}

/// Stores `raw` as a pending mail of its own and returns its id.
fn arrived(conn: &Connection, raw: &[u8], message_id: &str) -> i64 {
    let sha = crate::hash::sha256_hex(raw);
    insert_inbox(
        conn,
        &Arrival {
            origin: "test",
            imap: None,
            message_id: Some(message_id),
            raw,
            content_sha256: &sha,
            full_size: None,
        },
        Utc::now(),
    )
    .unwrap()
    .expect("a new mail")
}

/// What a processed mail's row keeps: (raw, full_size).
fn kept(conn: &Connection, id: i64) -> (Vec<u8>, Option<i64>) {
    keep_head_of_processed(conn, id).unwrap();
    conn.query_row(
        "SELECT CAST(raw AS BLOB), full_size FROM inbox WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

#[test]
fn the_processed_cut_keeps_4096_bytes_whole_and_cuts_4097_at_byte_4096() {
    let s = crate::store::Store::open_in_memory().unwrap();
    let conn = s.conn();
    // 4096 bytes: whole, its size still "the whole mail" (NULL).
    let exact: Vec<u8> = (0..4096u32).map(|i| b'a' + (i % 26) as u8).collect();
    let id = arrived(conn, &exact, "<exact@x.example>");
    assert_eq!(kept(conn, id), (exact.clone(), None));
    // 4097 bytes: the first 4096, with the real size.
    let mut one_more = exact.clone();
    one_more.push(b'!');
    let id = arrived(conn, &one_more, "<one-more@x.example>");
    assert_eq!(kept(conn, id), (exact.clone(), Some(4097)));
    // A CRLF across the edge: the CR is kept, the LF is not.
    let mut crlf = exact[..4095].to_vec();
    crlf.extend_from_slice(b"\r\nrest");
    let id = arrived(conn, &crlf, "<crlf@x.example>");
    let (raw, size) = kept(conn, id);
    assert_eq!((raw.len(), raw[4095], size), (4096, b'\r', Some(4101)));
    // A three-byte character across the edge: cut inside it, by bytes.
    let mut euro = exact[..4095].to_vec();
    euro.extend_from_slice("€ rest".as_bytes());
    let id = arrived(conn, &euro, "<euro@x.example>");
    let (raw, size) = kept(conn, id);
    assert_eq!((raw.len(), raw[4095], size), (4096, 0xE2, Some(4103)));
    // Cutting again changes nothing.
    assert_eq!(kept(conn, id), (raw, size));
}

#[test]
fn a_row_held_as_text_is_cut_by_its_bytes_not_its_characters() {
    let s = crate::store::Store::open_in_memory().unwrap();
    let conn = s.conn();
    // 2000 characters of two bytes each, 4000 characters in all: 8000
    // bytes SQLite would count as 4000 on a text value.
    let text = "é".repeat(4000);
    let id = arrived(conn, text.as_bytes(), "<text@x.example>");
    conn.execute(
        "UPDATE inbox SET raw = CAST(raw AS TEXT) WHERE id = ?1",
        [id],
    )
    .unwrap();
    let typ: String = conn
        .query_row("SELECT typeof(raw) FROM inbox WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(typ, "text");
    let (raw, size) = kept(conn, id);
    assert_eq!((raw.len(), size), (4096, Some(8000)));
    assert_eq!(raw, text.as_bytes()[..4096]);
}

#[test]
fn a_long_message_id_stored_whole_before_the_hashed_keys_is_still_found() {
    let s = crate::store::Store::open_in_memory().unwrap();
    let conn = s.conn();
    let long_id = format!("<{}@forged.example>", "i".repeat(50_000));
    let raw = format!("Message-ID: {long_id}\r\n\r\nhello\r\n");
    let sha = crate::hash::sha256_hex(raw.as_bytes());
    // The row as a version before the hashed keys wrote it: the whole id
    // in the key and in the column.
    conn.execute(
        "INSERT INTO inbox (origin, message_id, dedupe_key, raw, received_at, state)
         VALUES ('old', ?1, ?2, ?3, 'x', 'done')",
        params![
            long_id,
            format!("mid:{long_id} sha256:{sha}"),
            raw.as_bytes()
        ],
    )
    .unwrap();
    let again = |origin: &str, body: &str| {
        let sha = crate::hash::sha256_hex(body.as_bytes());
        insert_inbox(
            conn,
            &Arrival {
                origin,
                imap: None,
                message_id: Some(&long_id),
                raw: body.as_bytes(),
                content_sha256: &sha,
                full_size: None,
            },
            Utc::now(),
        )
        .unwrap()
    };
    // The same mail delivered again after the upgrade: one mail.
    assert_eq!(again("new", &raw), None, "the old row is the same mail");
    // Another mail reusing the id: a second mail, keyed the new way, once.
    let other = format!("Message-ID: {long_id}\r\n\r\nanother\r\n");
    assert!(again("new", &other).is_some());
    assert_eq!(again("new", &other), None);
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM inbox", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
}

/// An event's keys looked up by prefix are exactly the queued keys that
/// begin with it: a group's prefix does not take in a group whose number
/// begins with the same digits (`g1:` against `g10:`), nor another kind
/// or round; a prefix not ending in ASCII is refused.
#[test]
fn an_events_keys_are_found_by_their_prefix_and_only_theirs() {
    let s = crate::store::Store::open_in_memory().unwrap();
    let c = s.conn();
    let to = vec!["a@example.org".to_string()];
    let keys = [
        "GRP:r1:g1:a",
        "GRP:r1:g1:b:c",
        "GRP:r1:g10:a",
        "GRP:r1:g1",
        "GRP:r11:g1:a",
        "GRG:r1:g1:a",
        "GRP:r1:g1;",
        "LAP:a",
    ];
    for (i, key) in keys.iter().enumerate() {
        let id = format!("<{i}@k>");
        let m = NewOutgoing {
            event_key: Some(key),
            ..outgoing(&to, &id, b"Subject: s\r\n\r\nx\r\n", &[])
        };
        assert!(queue_outgoing(c, &m, Utc::now()).unwrap());
    }
    let found = |p: &str| {
        let mut v: Vec<String> = events_queued_under(c, p).unwrap().into_iter().collect();
        v.sort();
        v
    };
    assert_eq!(found("GRP:r1:g1:"), ["GRP:r1:g1:a", "GRP:r1:g1:b:c"]);
    assert_eq!(found("GRP:r1:g10:"), ["GRP:r1:g10:a"]);
    assert_eq!(found("GRG:r1:g1:"), ["GRG:r1:g1:a"]);
    assert_eq!(found("LAP:"), ["LAP:a"]);
    assert!(found("DGP:r1:g1:").is_empty());
    for p in &["GRP:r1:g1:", "LAP:"] {
        for k in found(p) {
            assert!(event_queued(c, &k).unwrap());
        }
    }
    assert!(matches!(
        events_queued_under(c, "GRP:r1:é"),
        Err(StoreError::Corrupt(_))
    ));
    assert!(matches!(
        events_queued_under(c, ""),
        Err(StoreError::Corrupt(_))
    ));
}
