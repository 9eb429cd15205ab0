//! Unit tests of a processed mail's row kept `keep_inbox_days`: the pass
//! reads only the rows due, never the whole outbox, and is resumable
//! batch by batch.

use chrono::{Duration, Utc};

use super::*;
use crate::store::mail::due_scan::{due_steps, query_plan};
use crate::store::mail::{
    finish_inbox, insert_inbox, insert_registration, queue_outgoing, AddressProof, Arrival,
    NewOutgoing, NewRegistration,
};
use crate::store::Store;
use rusqlite::StatementStatus;

/// Stores mail `n` (its own Message-ID and bytes) received at `at`.
fn stored(conn: &Connection, n: usize, at: DateTime<Utc>) -> i64 {
    let id = format!("<m{n}@x.example>");
    let raw = format!("Message-ID: {id}\r\nSubject: s\r\n\r\nmail {n}\r\n");
    let sha = crate::hash::sha256_hex(raw.as_bytes());
    let a = Arrival {
        origin: "test",
        imap: None,
        message_id: Some(&id),
        raw: raw.as_bytes(),
        content_sha256: &sha,
        full_size: None,
    };
    insert_inbox(conn, &a, at).unwrap().unwrap()
}

/// Queues a reply naming inbox mail `inbox` (a stranger's help).
fn reply_to(conn: &Connection, inbox: i64, at: DateTime<Utc>) -> i64 {
    let to = vec![format!("p{inbox}@x.example")];
    let mid = format!("<r{inbox}@k>");
    let m = NewOutgoing {
        inbox_id: Some(inbox),
        ..NewOutgoing::help_for_tests(&to, &mid, b"Subject: s\r\n\r\nhelp\r\n", &[])
    };
    assert!(queue_outgoing(conn, &m, at).unwrap());
    conn.last_insert_rowid()
}

/// The inbox's ids, in order.
fn inbox_ids(conn: &Connection) -> Vec<i64> {
    conn.prepare("SELECT id FROM inbox ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<std::result::Result<_, _>>()
        .unwrap()
}

/// The pass reads the processed rows by their index, from the oldest
/// processed up to the first not due: with 1000 due among 100,000
/// processed rows it makes as many steps as with the 1000 alone (and one
/// for the first row not due), and never scans the table or sorts. The
/// plan names the index. Deleting a mail with 100,000 replies in the
/// outbox reads none of them but its own (the foreign key's check and the
/// update of `outbox.inbox_id` search their index): no full scan.
#[test]
fn a_pass_reads_only_the_rows_due_whatever_the_inbox_holds() {
    let store = Store::open_in_memory().unwrap();
    let conn = store.conn();
    let now = Utc::now();
    // Rows as the inbox holds them, made by SQL for speed: processed
    // (`processed_at` 100 days back for the first 1000, an hour back for
    // the others), each with a reply naming it.
    let rows = |from: i64, to: i64, at: &str| {
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
             INSERT INTO inbox (id, origin, dedupe_key, raw, received_at, state, processed_at)
             SELECT i, 'test', 'k' || i, zeroblob(200), ?3,
                    CASE i % 2 WHEN 0 THEN 'done' ELSE 'ignored' END, ?3 FROM n",
            params![from, to, at],
        )
        .unwrap();
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
             INSERT INTO outbox (inbox_id, kind, recipients, subject, message_id, raw, state,
                                 next_attempt_at, created_at, sent_at)
             SELECT i, 'help', '[\"a@x.example\"]', 's', '<' || i || '@k>', X'', 'sent',
                    ?3, ?3, ?3 FROM n",
            params![from, to, at],
        )
        .unwrap();
    };
    let due = now - Duration::days(90);
    rows(1, 1000, &timestamp(now - Duration::days(100)));
    let plan = query_plan(conn, PROCESSED_DUE_SQL, &timestamp(due));
    assert_eq!(
        plan,
        ["SEARCH inbox USING INDEX inbox_processed (processed_at<?)"],
        "one search of the index, no sort"
    );
    let steps = || due_steps(conn, PROCESSED_DUE_SQL, &timestamp(due));
    let alone = steps();
    assert_eq!((alone.rows, alone.full_scan, alone.sorts), (1000, 0, 0));
    rows(1001, 100_000, &timestamp(now - Duration::hours(1)));
    let among = steps();
    assert_eq!((among.rows, among.full_scan, among.sorts), (1000, 0, 0));
    assert!(among.vm <= alone.vm + 1, "{among:?} against {alone:?}");
    // One mail's row deleted by hand, as the pass does, with 100,000
    // replies in the outbox: no statement scans a table.
    for sql in [
        "UPDATE outbox INDEXED BY outbox_inbox SET inbox_id = NULL WHERE inbox_id = ?1",
        "DELETE FROM inbox WHERE id = ?1",
    ] {
        let mut st = conn.prepare(sql).unwrap();
        assert_eq!(st.execute([1]).unwrap(), 1);
        assert_eq!(
            st.get_status(StatementStatus::FullscanStep),
            0,
            "{sql} scanned a table"
        );
    }
    // The pass deletes the other 999, in batches, and then finds none.
    let mut n = 0;
    loop {
        let k = forget_processed_due(conn, due, PROCESSED_ROWS_BATCH).unwrap();
        n += k;
        if k < PROCESSED_ROWS_BATCH {
            break;
        }
    }
    assert_eq!(n, 999);
    let left = steps();
    assert_eq!((left.rows, left.full_scan, left.sorts), (0, 0, 0));
    assert!(left.vm < 20, "{left:?}");
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT min(id) FROM inbox"), 1001);
    assert_eq!(count("SELECT COUNT(*) FROM inbox"), 99_000);
    // Every reply stays; those of the deleted mails name none.
    assert_eq!(count("SELECT COUNT(*) FROM outbox"), 100_000);
    assert_eq!(
        count("SELECT COUNT(*) FROM outbox WHERE inbox_id IS NULL"),
        1000
    );
    assert_eq!(count("SELECT COUNT(*) FROM pragma_foreign_key_check"), 0);
}

/// The pass is resumable: each batch is its own transaction. A kill
/// after the first batch's commit and during the second (its transaction
/// never committed) leaves the first batch deleted and the rest whole;
/// the next pass deletes the rest, each row once. A mail waiting and a
/// mail set aside, however old, stay; the reply and the registration
/// that named a deleted mail stay, naming none.
#[test]
fn a_pass_killed_between_batches_goes_on_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let now = Utc::now();
    let old = now - Duration::days(100);
    let (reply, team);
    {
        let store = Store::open(&path).unwrap();
        let c = store.conn();
        for n in 1..=9 {
            let id = stored(c, n, old);
            let at = old + Duration::minutes(n as i64);
            match n {
                // Waiting, set aside: never due.
                1 => {}
                2 => finish_inbox(c, id, "failed", "set aside", at).unwrap(),
                _ => {
                    let state = if n % 2 == 0 { "done" } else { "ignored" };
                    finish_inbox(c, id, state, "ok", at).unwrap();
                }
            }
        }
        reply = reply_to(c, 4, old);
        let secret = "Zq4vX9pL2mK8millers";
        let salt = crate::auth::new_salt();
        team = insert_registration(
            c,
            &NewRegistration {
                team_name: "millers",
                requested_name: "millers",
                mail_address: "millers@lords.example",
                preferences: "",
                organization: "millers",
                members_json: "[]",
                record: "",
                auth_salt: &salt,
                auth_hash: &crate::auth::hash(&salt, secret),
                auth_index: &crate::auth::index(secret),
                mailbox: "millers@lords.example",
                inbox_id: Some(7),
                proof: AddressProof::Claimed,
            },
            old,
        )
        .unwrap();
        let first = store.conn().unchecked_transaction().unwrap();
        assert_eq!(forget_processed_due(&first, now, 3).unwrap(), 3);
        first.commit().unwrap();
        let second = store.conn().unchecked_transaction().unwrap();
        assert_eq!(forget_processed_due(&second, now, 3).unwrap(), 3);
        // Killed here: the second batch never commits.
        drop(second);
    }
    let store = Store::open(&path).unwrap();
    let c = store.conn();
    // The first batch: the three processed first (3, 4, 5).
    assert_eq!(inbox_ids(c), [1, 2, 6, 7, 8, 9]);
    let named =
        |sql: &str, id: i64| -> Option<i64> { c.query_row(sql, [id], |r| r.get(0)).unwrap() };
    assert_eq!(
        named("SELECT inbox_id FROM outbox WHERE id = ?1", reply),
        None
    );
    assert_eq!(
        named(
            "SELECT inbox_id FROM registrations WHERE team_id = ?1",
            team.0 as i64
        ),
        Some(7),
        "the second batch never committed"
    );
    assert_eq!(forget_processed_due(c, now, 3).unwrap(), 3);
    assert_eq!(forget_processed_due(c, now, 3).unwrap(), 1);
    assert_eq!(forget_processed_due(c, now, 3).unwrap(), 0);
    assert_eq!(inbox_ids(c), [1, 2]);
    assert_eq!(
        named(
            "SELECT inbox_id FROM registrations WHERE team_id = ?1",
            team.0 as i64
        ),
        None
    );
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT COUNT(*) FROM outbox"), 1);
    assert_eq!(count("SELECT COUNT(*) FROM registrations"), 1);
    assert_eq!(count("SELECT COUNT(*) FROM pragma_foreign_key_check"), 0);
}
