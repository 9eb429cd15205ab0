//! Unit tests of a sent mail's bytes kept `keep_sent_days`: the pass
//! reads only the rows due, and is resumable batch by batch.

use chrono::{Duration, Utc};

use super::*;
use crate::store::mail::due_scan::{due_steps, query_plan};
use crate::store::mail::{mark_sent, queue_outgoing, NewOutgoing, SharedPart};
use crate::store::Store;

/// Queues a reply to `to` at `created` (its own bytes, and `shared`
/// cut out of them), and marks it sent at `sent` when given. Returns
/// its id.
fn reply_sent(
    conn: &Connection,
    n: usize,
    raw: &[u8],
    shared: &[SharedPart<'_>],
    created: DateTime<Utc>,
    sent: Option<DateTime<Utc>>,
) -> i64 {
    let to = vec![format!("p{n}@x.example")];
    let id = format!("<{n}@k>");
    let m = NewOutgoing::help_for_tests(&to, &id, raw, shared);
    assert!(queue_outgoing(conn, &m, created).unwrap());
    let id = conn.last_insert_rowid();
    if let Some(at) = sent {
        mark_sent(conn, id, at).unwrap();
    }
    id
}

/// The rows whose bytes are gone: (id, full_size, body_removed_at).
fn emptied(conn: &Connection) -> Vec<(i64, i64, String)> {
    conn.prepare(
        "SELECT id, full_size, body_removed_at FROM outbox
          WHERE body_removed_at IS NOT NULL ORDER BY id",
    )
    .unwrap()
    .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
    .unwrap()
    .collect::<std::result::Result<_, _>>()
    .unwrap()
}

/// The pass reads the sent rows whose bytes are kept by their index,
/// from the oldest sent up to the first not due: with 1000 due among
/// 100,000 sent rows it makes as many steps as with the 1000 alone (and
/// one for the first row not due), and never scans the table or sorts.
/// The plan names the index.
#[test]
fn a_pass_reads_only_the_rows_due_whatever_the_outbox_holds() {
    let store = Store::open_in_memory().unwrap();
    let conn = store.conn();
    let now = Utc::now();
    // Rows as the outbox holds them, made by SQL for speed: sent
    // (`sent_at` 40 days back for the first 1000, an hour back for the
    // others), each a small body of its own.
    let rows = |from: i64, to: i64, sent_at: &str| {
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
             INSERT INTO outbox (kind, recipients, subject, message_id, raw, state,
                                 next_attempt_at, created_at, sent_at)
             SELECT 'help', '[\"a@x.example\"]', 's', '<' || i || '@k>', zeroblob(200), 'sent',
                    ?3, ?3, ?3 FROM n",
            params![from, to, sent_at],
        )
        .unwrap();
    };
    let due = now - Duration::days(30);
    rows(1, 1000, &timestamp(now - Duration::days(40)));
    let plan = query_plan(conn, SENT_BODIES_DUE_SQL, &timestamp(due));
    assert_eq!(
        plan,
        ["SEARCH outbox USING INDEX outbox_sent_bodies (sent_at<?)"],
        "one search of the index, no sort"
    );
    let steps = || due_steps(conn, SENT_BODIES_DUE_SQL, &timestamp(due));
    let alone = steps();
    assert_eq!((alone.rows, alone.full_scan, alone.sorts), (1000, 0, 0));
    rows(1001, 100_000, &timestamp(now - Duration::hours(1)));
    let among = steps();
    assert_eq!((among.rows, among.full_scan, among.sorts), (1000, 0, 0));
    // At most one step more: the first row not due, where the search stops.
    assert!(among.vm <= alone.vm + 1, "{among:?} against {alone:?}");
    // The pass empties those 1000, in batches, and then finds none.
    let mut n = 0;
    loop {
        let k = forget_sent_bodies_due(conn, due, now, SENT_BODIES_BATCH).unwrap();
        n += k;
        if k < SENT_BODIES_BATCH {
            break;
        }
    }
    assert_eq!(n, 1000);
    let left = steps();
    assert_eq!((left.rows, left.full_scan, left.sorts), (0, 0, 0));
    assert!(left.vm < 20, "{left:?}");
    let gone: Vec<(i64, i64, i64)> = conn
        .prepare(
            "SELECT min(id), max(id), sum(length(raw)) FROM outbox
              WHERE body_removed_at IS NOT NULL AND full_size = 200",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<std::result::Result<_, _>>()
        .unwrap();
    assert_eq!(gone, [(1, 1000, 0)]);
}

/// The pass is resumable: each batch is its own transaction. A kill
/// after the first batch's commit and during the second (its transaction
/// never committed) leaves the first batch emptied and the rest whole;
/// the next pass empties the rest, each row once, and a body the due
/// rows shared goes with the last of them, while one a queued mail still
/// carries stays.
#[test]
fn a_pass_killed_between_batches_goes_on_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let now = Utc::now();
    let old = now - Duration::days(31);
    let list = vec![b'L'; 3000];
    let kit = vec![b'K'; 2000];
    let (sha_l, sha_k) = ([1u8; 32], [2u8; 32]);
    let with = |body: &[u8]| [&b"Subject: s\r\n\r\n"[..], body, b"\r\n"].concat();
    let mut sizes = Vec::new();
    {
        let store = Store::open(&path).unwrap();
        let c = store.conn();
        for n in 1..=7 {
            let (raw, shared) = match n {
                1 | 4 | 7 => (
                    with(&list),
                    vec![SharedPart {
                        bytes: &list,
                        sha256: &sha_l,
                    }],
                ),
                2 => (
                    with(&kit),
                    vec![SharedPart {
                        bytes: &kit,
                        sha256: &sha_k,
                    }],
                ),
                _ => (with(b"a reply of its own"), vec![]),
            };
            reply_sent(
                c,
                n,
                &raw,
                &shared,
                old,
                Some(old + Duration::minutes(n as i64)),
            );
            sizes.push(raw.len() as i64);
        }
        // A queued mail carrying the kit: it keeps the body.
        let raw = with(&kit);
        let shared = [SharedPart {
            bytes: &kit,
            sha256: &sha_k,
        }];
        reply_sent(c, 8, &raw, &shared, old, None);
        let first = store.conn().unchecked_transaction().unwrap();
        assert_eq!(forget_sent_bodies_due(&first, now, now, 3).unwrap(), 3);
        first.commit().unwrap();
        let second = store.conn().unchecked_transaction().unwrap();
        assert_eq!(forget_sent_bodies_due(&second, now, now, 3).unwrap(), 3);
        // Killed here: the second batch never commits.
        drop(second);
    }
    let store = Store::open(&path).unwrap();
    let c = store.conn();
    let t0 = timestamp(now);
    assert_eq!(
        emptied(c),
        (1..=3)
            .map(|id| (id, sizes[id as usize - 1], t0.clone()))
            .collect::<Vec<_>>()
    );
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), 2);
    let later = now + Duration::minutes(5);
    assert_eq!(forget_sent_bodies_due(c, now, later, 3).unwrap(), 3);
    assert_eq!(forget_sent_bodies_due(c, now, later, 3).unwrap(), 1);
    assert_eq!(forget_sent_bodies_due(c, now, later, 3).unwrap(), 0);
    let t1 = timestamp(later);
    assert_eq!(
        emptied(c),
        (1..=7)
            .map(|id| (
                id,
                sizes[id as usize - 1],
                if id <= 3 { t0.clone() } else { t1.clone() }
            ))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        count("SELECT SUM(length(raw)) FROM outbox WHERE id <= 7"),
        0
    );
    // The list went with the last of its mails; the queued mail keeps
    // the kit, and goes out whole.
    assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), 1);
    assert_eq!(
        count("SELECT COUNT(*) FROM outbox_parts WHERE outbox_id <= 7"),
        0
    );
    let queued = crate::store::mail::due_outgoing(c, now, 10).unwrap();
    assert_eq!(queued.len(), 1);
    assert!(queued[0].raw == with(&kit));
}
