//! Sending what the outbox holds, with retries and backoff.
//!
//! A queued mail is marked sent only after the transport accepted it (the
//! spool file is in place and on disk, or the SMTP server said 250). The
//! spool makes a whole batch (up to 50 mails) durable with one `syncfs`
//! before any of them is marked ([`Durability::OnSync`]) instead of one
//! `fsync` per file (`knobeln bench spool`: about three times as fast). A transient
//! failure is retried later (backoff doubling from one minute up to an
//! hour); a permanent one, or too many attempts, marks it failed. After a
//! crash between acceptance and marking, the mail is sent again with the
//! same Message-ID (receivers can tell it is the same mail); the spool
//! transport overwrites the same file, so it never duplicates.
//!
//! When a mail fails transiently, the transport is asked whether its server
//! is reachable at all ([`Deliver::reachable`]); if not, the flush stops
//! there and says why ([`Flushed::unreachable`]), and that mail and the
//! others wait, uncharged, for the sending side's own backoff (`outage`):
//! an SMTP server that is down for a day costs no mail an attempt.
//! Every mail sent, put off or given up on is one log line.
//!
//! A mail that carries a secret (the acknowledgement of a registration, a
//! reset authentification string, the organizer's RSM token) needs it only
//! until the transport has it: marking it sent also seals the stored copy
//! ([`crate::mail::secrets::seal`]), in one transaction. A mail that failed
//! keeps its secret for `admin resend`.
//!
//! A permanent failure is never silent: after sending, [`flush`] queues the
//! organizer's digest when one is due (see `digest`) and sends it in the
//! same flush.
//!
//! A sent mail keeps its bytes `limits.keep_sent_days` (30) days: each
//! flush ends by emptying those that are due ([`forget_sent_bodies`]),
//! their rows kept (what the reply caps count, the keys, times and size).

use chrono::{DateTime, Duration, Utc};

use crate::config::Config;
use crate::mail::digest;
use crate::mail::process::ProcessError;
use crate::mail::secrets::{seal_with, Look};
use crate::store::mail::{
    due_outgoing, forget_sent_bodies_due, mark_failed, mark_retry, mark_sent, set_outbox_raw,
    OutRow, StoredSecrets, SENT_BODIES_BATCH,
};
use crate::store::{Store, StoreError};

/// Why a transport did not take a mail.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DeliveryError {
    /// Try again later (connection refused, 4xx).
    #[error("{0}")]
    Transient(String),
    /// Give up (5xx, invalid recipient).
    #[error("{0}")]
    Permanent(String),
}

/// When a delivered mail is safe from a crash of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// As soon as `deliver` returns (an SMTP server's 250).
    OnDeliver,
    /// Only after [`Deliver::sync`], which covers every mail delivered
    /// since the last one (the spool: one `syncfs` per batch).
    OnSync,
}

/// A way to get a queued mail out.
pub trait Deliver {
    fn deliver(&mut self, row: &OutRow, envelope_from: &str) -> Result<(), DeliveryError>;

    /// When a delivered mail is durable. The default: at once.
    fn durability(&self) -> Durability {
        Durability::OnDeliver
    }

    /// Makes every mail delivered since the last call durable (for
    /// [`Durability::OnSync`]); the mails are marked sent only after it.
    fn sync(&mut self) -> Result<(), DeliveryError> {
        Ok(())
    }

    /// Whether the server can be reached at all (asked after a transient
    /// failure); `Err` says why not. The default: always.
    fn reachable(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// What a flush did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Flushed {
    pub sent: usize,
    pub retry: usize,
    pub failed: usize,
    /// The flush stopped because the server cannot be reached: why.
    pub unreachable: Option<String>,
}

/// The wait before the next attempt after `attempts` failed ones.
pub fn backoff(attempts: u32) -> Duration {
    let minutes = 1i64 << attempts.min(6);
    Duration::minutes(minutes.min(60))
}

/// Sends every due mail once; then, when a digest for the organizer is
/// due (failed or set-aside mails to report), queues it and sends it too.
pub fn flush(
    store: &Store,
    transport: &mut dyn Deliver,
    config: &Config,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Flushed, ProcessError> {
    let mut out = Flushed::default();
    send_due(store, transport, config, now, &mut out)?;
    // (Not while the server cannot be reached: the digest waits too.)
    if out.unreachable.is_none() && digest::queue_if_due(store.conn(), config, now())?.is_some() {
        send_due(store, transport, config, now, &mut out)?;
    }
    if out.sent > 0 {
        // No page from before a seal stays in the log.
        store.forget_overwritten()?;
    }
    forget_sent_bodies(store, config.limits.keep_sent_days, now())?;
    Ok(out)
}

/// Empties the bytes of every sent mail sent `keep_sent_days` or more
/// days before `now` (`store::mail::forget_sent_bodies_due`: each keeps
/// its row, what the reply caps count), in batches of
/// [`SENT_BODIES_BATCH`], each its own transaction: a kill between two
/// leaves the batches before it done and the rest due for the next pass,
/// and one during a batch leaves that batch undone. Reads only the rows
/// due. A `keep_sent_days` reaching before the calendar's start keeps
/// every mail. Returns how many mails were emptied.
pub fn forget_sent_bodies(
    store: &Store,
    keep_sent_days: u32,
    now: DateTime<Utc>,
) -> Result<usize, StoreError> {
    let Some(due) = now.checked_sub_signed(Duration::days(i64::from(keep_sent_days))) else {
        return Ok(0);
    };
    let mut emptied = 0;
    loop {
        let tx = store.conn().unchecked_transaction()?;
        let n = forget_sent_bodies_due(&tx, due, now, SENT_BODIES_BATCH)?;
        tx.commit()?;
        emptied += n;
        if n < SENT_BODIES_BATCH {
            break;
        }
    }
    if emptied > 0 {
        tracing::info!("bytes of {emptied} mails sent {keep_sent_days} days ago or more removed");
    }
    Ok(emptied)
}

fn send_due(
    store: &Store,
    transport: &mut dyn Deliver,
    config: &Config,
    now: &dyn Fn() -> DateTime<Utc>,
    out: &mut Flushed,
) -> Result<(), StoreError> {
    loop {
        let due = due_outgoing(store.conn(), now(), 50)?;
        if due.is_empty() {
            break;
        }
        let mut progressed = false;
        let deferred = transport.durability() == Durability::OnSync;
        // Delivered, waiting for the transport's sync before being marked.
        let mut unsynced: Vec<&OutRow> = Vec::new();
        for row in &due {
            let to = row.recipients.join(", ");
            let result = match transport.deliver(row, &config.contest.address) {
                Err(DeliveryError::Transient(e)) => match transport.reachable() {
                    // The server is down, not this mail's fault: nothing
                    // is charged, the sending side backs off.
                    Err(why) => {
                        out.unreachable = Some(why);
                        break;
                    }
                    Ok(()) => Err(DeliveryError::Transient(e)),
                },
                other => other,
            };
            match result {
                Ok(()) if deferred => unsynced.push(row),
                Ok(()) => {
                    mark_delivered(store, row, now())?;
                    out.sent += 1;
                    progressed = true;
                }
                Err(DeliveryError::Transient(e))
                    if row.attempts + 1 < config.limits.max_send_attempts =>
                {
                    let at = now() + backoff(row.attempts);
                    mark_retry(store.conn(), row.id, &e, at)?;
                    out.retry += 1;
                    tracing::warn!(
                        outbox = row.id,
                        kind = %row.kind,
                        "mail to {to} put off until {}: {e}",
                        at.format("%Y-%m-%d %H:%M:%S UTC")
                    );
                }
                Err(e) => {
                    mark_failed(store.conn(), row.id, &e.to_string())?;
                    tracing::error!(outbox = row.id, kind = %row.kind, "mail to {to} failed, given up: {e}");
                    out.failed += 1;
                    progressed = true;
                }
            }
        }
        if !unsynced.is_empty() {
            match transport.sync() {
                Ok(()) => {
                    for row in unsynced {
                        mark_delivered(store, row, now())?;
                        out.sent += 1;
                    }
                    progressed = true;
                }
                // Nothing is marked: the whole batch is delivered again
                // (the spool overwrites the same files).
                Err(e) => {
                    tracing::warn!("mails delivered but not made durable, to be sent again: {e}");
                    out.retry += unsynced.len();
                }
            }
        }
        if !progressed || out.unreachable.is_some() {
            break;
        }
    }
    Ok(())
}

/// Marks a delivered (and durable) mail sent, sealing its stored copy, in
/// one transaction.
fn mark_delivered(store: &Store, row: &OutRow, now: DateTime<Utc>) -> Result<(), StoreError> {
    let tx = store.conn().unchecked_transaction()?;
    mark_sent(&tx, row.id, now)?;
    // The server's own mail: read whatever its size.
    let sealed = seal_with(
        &row.raw,
        Look::Outbound,
        usize::MAX,
        StoredSecrets::new(&tx),
    )?;
    if sealed.changed() {
        set_outbox_raw(&tx, row.id, &sealed.raw)?;
    }
    tx.commit()?;
    tracing::info!(
        outbox = row.id,
        kind = %row.kind,
        "mail sent to {}",
        row.recipients.join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::mail::{queue_outgoing, NewOutgoing};

    /// A transport whose every mail fails transiently, and whose server
    /// answers probes or not.
    struct Down {
        server_answers: bool,
        tried: usize,
    }

    impl Deliver for Down {
        fn deliver(&mut self, _row: &OutRow, _from: &str) -> Result<(), DeliveryError> {
            self.tried += 1;
            Err(DeliveryError::Transient("421 try later".into()))
        }
        fn reachable(&mut self) -> Result<(), String> {
            if self.server_answers {
                Ok(())
            } else {
                Err("127.0.0.1:25: Connection refused".into())
            }
        }
    }

    fn three_queued() -> Store {
        let store = Store::open_in_memory().unwrap();
        let now = Utc::now();
        for i in 0..3 {
            let to = vec![format!("p{i}@x.example")];
            queue_outgoing(
                store.conn(),
                &NewOutgoing::help_for_tests(
                    &to,
                    &format!("m{i}@x"),
                    b"Subject: s\r\n\r\nx\r\n",
                    &[],
                ),
                now - Duration::seconds(1),
            )
            .unwrap();
        }
        store
    }

    #[test]
    fn a_server_that_cannot_be_reached_stops_the_flush_and_charges_no_mail() {
        let store = three_queued();
        let mut t = Down {
            server_answers: false,
            tried: 0,
        };
        let out = flush(&store, &mut t, &Config::default(), &Utc::now).unwrap();
        assert_eq!(t.tried, 1, "the first failure stops the flush");
        assert_eq!(
            out.unreachable.as_deref(),
            Some("127.0.0.1:25: Connection refused")
        );
        assert_eq!((out.sent, out.retry, out.failed), (0, 0, 0));
        let due = due_outgoing(store.conn(), Utc::now(), 10).unwrap();
        assert_eq!(due.len(), 3, "all still due");
        assert!(due.iter().all(|r| r.attempts == 0), "none charged");
    }

    #[test]
    fn a_mail_refused_by_a_server_that_answers_waits_its_own_backoff() {
        let store = three_queued();
        let mut t = Down {
            server_answers: true,
            tried: 0,
        };
        let out = flush(&store, &mut t, &Config::default(), &Utc::now).unwrap();
        assert_eq!((t.tried, out.retry, out.unreachable), (3, 3, None));
        assert!(due_outgoing(store.conn(), Utc::now(), 10)
            .unwrap()
            .is_empty());
    }

    /// A transport that delivers into memory and makes mails durable only
    /// when asked to sync (which may fail).
    struct Batched {
        delivered: usize,
        syncs: usize,
        sync_fails: bool,
    }

    impl Deliver for Batched {
        fn deliver(&mut self, _row: &OutRow, _from: &str) -> Result<(), DeliveryError> {
            self.delivered += 1;
            Ok(())
        }
        fn durability(&self) -> Durability {
            Durability::OnSync
        }
        fn sync(&mut self) -> Result<(), DeliveryError> {
            self.syncs += 1;
            if self.sync_fails {
                Err(DeliveryError::Transient("EIO".into()))
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn a_batch_is_marked_sent_only_after_one_sync_and_not_at_all_if_it_fails() {
        let store = three_queued();
        let mut t = Batched {
            delivered: 0,
            syncs: 0,
            sync_fails: true,
        };
        let out = flush(&store, &mut t, &Config::default(), &Utc::now).unwrap();
        assert_eq!((t.delivered, t.syncs, out.sent), (3, 1, 0));
        let due = due_outgoing(store.conn(), Utc::now(), 10).unwrap();
        assert_eq!(due.len(), 3, "nothing marked: all sent again");
        t.sync_fails = false;
        let out = flush(&store, &mut t, &Config::default(), &Utc::now).unwrap();
        assert_eq!((t.delivered, t.syncs, out.sent), (6, 2, 3));
        assert!(due_outgoing(store.conn(), Utc::now(), 10)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn the_spool_delivers_a_batch_complete_with_no_temporary_file_left() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = crate::mail::transport::spool::Spool::open(dir.path()).unwrap();
        let store = three_queued();
        let out = flush(&store, &mut spool, &Config::default(), &Utc::now).unwrap();
        assert_eq!(out.sent, 3);
        let mut names: Vec<String> = std::fs::read_dir(spool.outgoing_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["000001-help.eml", "000002-help.eml", "000003-help.eml"]
        );
        for n in names {
            let text = std::fs::read(spool.outgoing_dir().join(n)).unwrap();
            assert_eq!(text, b"Subject: s\r\n\r\nx\r\n");
        }
    }

    /// A LAP-like text of 400 lines, and the same with a first line too
    /// long for 8bit (that body is encoded otherwise).
    fn lap_texts() -> (String, String) {
        let text: String = (0..400)
            .map(|i| format!("team_{i:04}  Uni {i}, City, Land\n"))
            .collect();
        let odd_text = format!("{}\n{text}", "x".repeat(2000));
        (text, odd_text)
    }

    /// A LAP mail to participant `i` with `body`, and `evolution.svg`
    /// (twice `svg`'s text) attached if given.
    fn lap_mail(i: usize, body: &str, svg: Option<&String>) -> crate::outbox::outgoing::Outgoing {
        use crate::outbox::outgoing::{OutAttachment, Outgoing};
        Outgoing {
            kind: "lap",
            to: vec![format!("p{i}@x.example")],
            subject: "KNOBELN LAP: list of all participants".into(),
            body: body.to_string(),
            in_reply_to: None,
            references: vec![],
            attachments: svg
                .map(|t| OutAttachment {
                    filename: "evolution.svg".into(),
                    content_type: "image/svg+xml".into(),
                    bytes: t.repeat(2).into_bytes(),
                })
                .into_iter()
                .collect(),
        }
    }

    /// Schema 0022: mails that share a body (LAP's list to every team, an
    /// attachment) keep it once in the store, and each reaches the spool
    /// byte for byte as it was built; a mail rewritten (sealed) lets go
    /// of the bodies it no longer carries unchanged, and a body no mail
    /// carries is deleted.
    #[test]
    fn mails_sharing_a_body_reach_the_spool_byte_for_byte() {
        use crate::outbox::outgoing::{build_parts, prepare_body};
        let store = Store::open_in_memory().unwrap();
        let contest = crate::config::ContestConfig::default();
        let now = Utc::now() - Duration::seconds(1);
        let (text, odd_text) = lap_texts();
        let shared = prepare_body(&text);
        let odd = prepare_body(&odd_text);
        let mut built = Vec::new();
        for i in 0..5 {
            let (m, body) = match i {
                3 => (lap_mail(i, &odd_text, None), &odd),
                // Too short to keep apart.
                4 => (lap_mail(i, "short\n", None), &shared),
                _ => (lap_mail(i, &text, (i == 2).then_some(&text)), &shared),
            };
            let own = prepare_body(&m.body);
            let body = if i == 4 { &own } else { body };
            let id = format!("<m{i}@contest.example>");
            let b = build_parts(&m, body, &contest, &id, now).unwrap();
            let shared = b.shared(Some(body));
            let queued = queue_outgoing(
                store.conn(),
                &NewOutgoing {
                    inbox_id: None,
                    kind: "lap",
                    recipients: &m.to,
                    budget: Default::default(),
                    sender_key: None,
                    subject: &m.subject,
                    message_id: &id,
                    raw: &b.raw,
                    text_at: None,
                    shared: &shared,
                    event_key: Some(&format!("LAP:{i}")),
                },
                now,
            )
            .unwrap();
            assert!(queued);
            // Queued again (a resumed contest): ignored, nothing stored.
            assert!(!queue_outgoing(
                store.conn(),
                &NewOutgoing {
                    inbox_id: None,
                    kind: "lap",
                    recipients: &m.to,
                    budget: Default::default(),
                    sender_key: None,
                    subject: &m.subject,
                    message_id: &format!("<again{i}@contest.example>"),
                    raw: &b.raw,
                    text_at: None,
                    shared: &shared,
                    event_key: Some(&format!("LAP:{i}")),
                },
                now,
            )
            .unwrap());
            built.push(b.raw);
        }
        let count = |sql: &str| -> i64 { store.conn().query_row(sql, [], |r| r.get(0)).unwrap() };
        // The list, the attachment, the odd body: three bodies for four
        // mails that carry one; the rows keep their headers only.
        assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), 3);
        assert_eq!(count("SELECT COUNT(*) FROM outbox_parts"), 5);
        let own: i64 = count("SELECT SUM(length(raw)) FROM outbox");
        let whole: usize = built.iter().map(Vec::len).sum();
        assert!(own < 5 * 1024, "{own} of {whole}");
        let dir = tempfile::tempdir().unwrap();
        let mut spool = crate::mail::transport::spool::Spool::open(dir.path()).unwrap();
        let out = flush(&store, &mut spool, &Config::default(), &Utc::now).unwrap();
        assert_eq!(out.sent, 5);
        for (i, raw) in built.iter().enumerate() {
            let file = spool.outgoing_dir().join(format!("{:06}-lap.eml", i + 1));
            assert!(std::fs::read(&file).unwrap() == *raw, "mail {i}");
        }
        // Sealed unchanged: the bodies stay shared.
        set_outbox_raw(store.conn(), 1, &built[0]).unwrap();
        assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), 3);
        assert_eq!(count("SELECT COUNT(*) FROM outbox_parts"), 5);
        // Sealed with the list changed (a word masked in it), one by one:
        // the list is no part of those mails any more, and goes with the
        // last of them (the attachment too: its text, 7bit, carries the
        // word as well).
        let masked = |raw: &[u8]| -> Vec<u8> {
            String::from_utf8_lossy(raw)
                .replace("team_0001", "*********")
                .into_bytes()
        };
        let mut sealed = built.clone();
        for (i, raw) in sealed.iter_mut().enumerate().take(3) {
            *raw = masked(raw);
            assert!(*raw != built[i]);
            set_outbox_raw(store.conn(), i as i64 + 1, raw).unwrap();
            let left = if i < 2 { 3 } else { 1 };
            assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), left, "{i}");
        }
        assert_eq!(count("SELECT COUNT(*) FROM outbox_parts"), 1);
        let raws = crate::store::mail::raw_mails(
            store.conn(),
            crate::store::mail::MailTable::Outbox,
            &["sent"],
        )
        .unwrap();
        let raws: Vec<Vec<u8>> = raws.into_iter().map(|(_, r)| r).collect();
        assert!(raws == sealed);
    }

    /// A mail built around a text shared by many (LAP's list: the text
    /// left out when it is built, `outgoing::build_around`) is queued
    /// without the text ever copied into it, and reaches the spool as the
    /// mail built whole would: byte for byte, but for a multipart's
    /// boundary (random per mail). Texts encoded otherwise than 8bit, one
    /// before an attachment and one too short to share keep to that too.
    #[test]
    fn mails_built_around_a_shared_text_reach_the_spool_as_built_whole() {
        use crate::outbox::outgoing::{build_around, build_parts, prepare_body};
        use crate::store::mail::join;
        let store = Store::open_in_memory().unwrap();
        let contest = crate::config::ContestConfig::default();
        let now = Utc::now() - Duration::seconds(1);
        let (text, odd_text) = lap_texts();
        let boundary = |raw: &[u8]| -> Option<String> {
            let s = String::from_utf8_lossy(raw);
            let at = s.find("boundary=\"")? + "boundary=\"".len();
            Some(s[at..at + s[at..].find('"')?].to_string())
        };
        let mut sent = Vec::new();
        for i in 0..4 {
            let m = match i {
                1 => lap_mail(i, &odd_text, None),
                3 => lap_mail(i, "short\n", None),
                _ => lap_mail(i, &text, (i == 2).then_some(&text)),
            };
            let body = prepare_body(&m.body);
            let id = format!("<m{i}@contest.example>");
            let whole = build_parts(&m, &body, &contest, &id, now).unwrap().raw;
            let b = build_around(&m, &body, &contest, &id, now).unwrap();
            let shared = b.shared(Some(&body));
            let joined = match b.text_at {
                Some(at) => join(&b.raw, &[(at, shared[0].bytes.to_vec())]),
                None => b.raw.clone(),
            };
            // Left out but where it is too short to share.
            assert_eq!(b.text_at.is_some(), i != 3, "mail {i}");
            match (boundary(&whole), boundary(&joined)) {
                (Some(w), Some(j)) => assert!(
                    String::from_utf8_lossy(&joined)
                        .replace(&j, &w)
                        .into_bytes()
                        == whole,
                    "mail {i}"
                ),
                _ => assert!(joined == whole, "mail {i}"),
            }
            assert!(queue_outgoing(
                store.conn(),
                &NewOutgoing {
                    inbox_id: None,
                    kind: "lap",
                    recipients: &m.to,
                    budget: Default::default(),
                    sender_key: None,
                    subject: &m.subject,
                    message_id: &id,
                    raw: &b.raw,
                    text_at: b.text_at,
                    shared: &shared,
                    event_key: Some(&format!("LAP:{i}")),
                },
                now,
            )
            .unwrap());
            sent.push(joined);
        }
        let count = |sql: &str| -> i64 { store.conn().query_row(sql, [], |r| r.get(0)).unwrap() };
        // The list (twice), the odd text, the attachment: stored once each.
        assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), 3);
        assert_eq!(count("SELECT COUNT(*) FROM outbox_parts"), 4);
        let dir = tempfile::tempdir().unwrap();
        let mut spool = crate::mail::transport::spool::Spool::open(dir.path()).unwrap();
        let out = flush(&store, &mut spool, &Config::default(), &Utc::now).unwrap();
        assert_eq!(out.sent, 4);
        for (i, raw) in sent.iter().enumerate() {
            let file = spool.outgoing_dir().join(format!("{:06}-lap.eml", i + 1));
            assert!(std::fs::read(&file).unwrap() == *raw, "mail {i}");
        }
    }

    /// A sent mail whose stored copy is sealed (an acceptance: its text
    /// names the team's auth string) keeps sharing the parts sealing left
    /// alone (the kit's files, carried by every acceptance): sealing does
    /// not store them whole again in each row. A part sealing changed (a
    /// secret in a shared text) is no longer shared by that mail, and a
    /// body no mail carries any more is deleted.
    #[test]
    fn a_sealed_mail_keeps_sharing_what_sealing_left_alone() {
        use crate::auth::{new_auth_string, StoredSecret};
        use crate::outbox::outgoing::{build_parts, prepare_body, OutAttachment, Outgoing};
        use crate::store::mail::{insert_registration, AddressProof, NewRegistration};
        let store = Store::open_in_memory().unwrap();
        let contest = crate::config::ContestConfig::default();
        let now = Utc::now() - Duration::seconds(1);
        let secrets: Vec<String> = (0..3).map(|_| new_auth_string()).collect();
        for (i, secret) in secrets.iter().enumerate() {
            let s = StoredSecret::of(secret);
            let address = format!("p{i}@x.example");
            insert_registration(
                store.conn(),
                &NewRegistration {
                    team_name: &format!("team_{i}"),
                    requested_name: &format!("team_{i}"),
                    mail_address: &address,
                    preferences: "",
                    organization: "Org",
                    members_json: "[]",
                    record: "",
                    auth_salt: &s.salt,
                    auth_hash: &s.hash,
                    auth_index: &s.index,
                    mailbox: &address,
                    inbox_id: None,
                    proof: AddressProof::Claimed,
                },
                now,
            )
            .unwrap();
        }
        let kit: String = (0..300)
            .map(|i| format!("int knobel_{i}(void);\n"))
            .collect();
        // A text many mails carry with team 2's string in it (a careless
        // record in a list): sealing masks it there.
        let list: String = (0..100)
            .map(|i| format!("team_{i:04}  Uni {i}, {}\n", secrets[2]))
            .collect();
        let list = prepare_body(&list);
        let mut built = Vec::new();
        for (i, secret) in secrets.iter().enumerate() {
            let text = format!("Welcome, team_{i}. Your string: {secret}\n");
            let m = Outgoing {
                kind: "registration_accepted",
                to: vec![format!("p{i}@x.example")],
                subject: "KNOBELN: registration accepted".into(),
                body: if i == 2 { String::new() } else { text },
                in_reply_to: None,
                references: vec![],
                attachments: vec![OutAttachment {
                    filename: "knobellib.h".into(),
                    content_type: "text/plain".into(),
                    bytes: kit.clone().into_bytes(),
                }],
            };
            let own = prepare_body(&m.body);
            let body = if i == 2 { &list } else { &own };
            let id = format!("<a{i}@contest.example>");
            let b = build_parts(&m, body, &contest, &id, now).unwrap();
            let shared = b.shared((i == 2).then_some(&list));
            assert!(queue_outgoing(
                store.conn(),
                &NewOutgoing {
                    inbox_id: None,
                    kind: m.kind,
                    recipients: &m.to,
                    budget: Default::default(),
                    sender_key: None,
                    subject: &m.subject,
                    message_id: &id,
                    raw: &b.raw,
                    text_at: None,
                    shared: &shared,
                    event_key: None,
                },
                now,
            )
            .unwrap());
            built.push(b.raw);
        }
        let count = |sql: &str| -> i64 { store.conn().query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), 2);
        assert_eq!(count("SELECT COUNT(*) FROM outbox_parts"), 4);
        let dir = tempfile::tempdir().unwrap();
        let mut spool = crate::mail::transport::spool::Spool::open(dir.path()).unwrap();
        let out = flush(&store, &mut spool, &Config::default(), &Utc::now).unwrap();
        assert_eq!(out.sent, 3);
        let stored = crate::store::mail::raw_mails(
            store.conn(),
            crate::store::mail::MailTable::Outbox,
            &["sent"],
        )
        .unwrap();
        for (i, raw) in built.iter().enumerate() {
            // Sent as built, stored sealed.
            let file = spool
                .outgoing_dir()
                .join(format!("{:06}-registration_accepted.eml", i + 1));
            assert!(std::fs::read(&file).unwrap() == *raw, "mail {i} as sent");
            let kept = String::from_utf8_lossy(&stored[i].1);
            for s in &secrets {
                assert!(!kept.contains(s.as_str()), "mail {i} kept a string");
            }
            assert_eq!(stored[i].1.len(), raw.len(), "mail {i} sealed in place");
        }
        // The kit is still stored once, carried by all three; the list
        // (sealing changed it) is no part of any mail any more, and gone.
        assert_eq!(count("SELECT COUNT(*) FROM outbox_parts"), 3);
        assert_eq!(count("SELECT COUNT(*) FROM outbox_bodies"), 1);
        let own: i64 = count("SELECT SUM(length(raw)) FROM outbox");
        let list_len = list.shared().unwrap().bytes.len() as i64;
        assert!(
            own < 3 * 1024 + list_len,
            "the rows hold {own} bytes: the kit stored again in each"
        );
    }

    /// A sent mail keeps its bytes `keep_sent_days` (30) days: sent 29
    /// days before the pass it is whole, sent 30 or 31 days before only
    /// its row is left (state, recipients, keys, times, its size); a
    /// queued and a failed mail created 40 days before keep theirs.
    /// `keep_sent_days = 0` empties every sent mail at the next pass, and
    /// one reaching before the calendar's start keeps every mail.
    #[test]
    fn a_sent_mail_keeps_its_bytes_30_days_and_a_mail_not_sent_keeps_them() {
        use crate::store::mail::{queue_outgoing, raw_mails, MailTable};
        let dir = tempfile::tempdir().unwrap();
        let mut spool = crate::mail::transport::spool::Spool::open(dir.path()).unwrap();
        let store = Store::open_in_memory().unwrap();
        let config = Config::default();
        assert_eq!(config.limits.keep_sent_days, 30);
        let now = Utc::now();
        let queue = |n: i64, created: DateTime<Utc>| {
            let to = vec![format!("p{n}@x.example")];
            let raw = format!("Subject: s{n}\r\n\r\nreply {n}\r\n");
            assert!(queue_outgoing(
                store.conn(),
                &NewOutgoing::help_for_tests(&to, &format!("<m{n}@x>"), raw.as_bytes(), &[]),
                created,
            )
            .unwrap());
            raw.len() as i64
        };
        // Sent 31, 30 and 29 days before `now`, each by the flush of its day.
        let mut size = Vec::new();
        for (n, days) in [(1, 31), (2, 30), (3, 29)] {
            let then = now - Duration::days(days);
            size.push(queue(n, then));
            let out = flush(&store, &mut spool, &config, &|| then).unwrap();
            assert_eq!(out.sent, 1);
        }
        size.push(queue(4, now - Duration::days(40)));
        mark_retry(store.conn(), 4, "421 later", now + Duration::hours(1)).unwrap();
        size.push(queue(5, now - Duration::days(40)));
        mark_failed(store.conn(), 5, "550 no such user").unwrap();
        // Reported to the organizer already: no digest in this test.
        store
            .conn()
            .execute(
                "UPDATE outbox SET reported_at = created_at WHERE id = 5",
                [],
            )
            .unwrap();
        let rows = || -> Vec<(i64, String, i64, Option<i64>, bool)> {
            let mut st = store
                .conn()
                .prepare(
                    "SELECT id, state, length(raw), full_size, body_removed_at IS NOT NULL
                       FROM outbox ORDER BY id",
                )
                .unwrap();
            st.query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .collect::<std::result::Result<_, _>>()
            .unwrap()
        };
        let whole =
            |id: i64, state: &str| (id, state.to_string(), size[id as usize - 1], None, false);
        let emptied = |id: i64| (id, "sent".to_string(), 0, Some(size[id as usize - 1]), true);
        // A day before `now` mail 1 is 30 days old, mail 2 29: only 1 is due.
        let out = flush(&store, &mut spool, &config, &|| now - Duration::days(1)).unwrap();
        assert_eq!(out.sent, 0);
        assert_eq!(rows().iter().filter(|r| r.4).count(), 1);
        assert_eq!(rows()[0], emptied(1));
        flush(&store, &mut spool, &config, &|| now).unwrap();
        assert_eq!(
            rows(),
            [
                emptied(1),
                emptied(2),
                whole(3, "sent"),
                whole(4, "queued"),
                whole(5, "failed")
            ]
        );
        // The sent mails' recipients, ids and times stay.
        let kept: Vec<(String, String, bool)> = store
            .conn()
            .prepare("SELECT recipients, message_id, sent_at IS NOT NULL FROM outbox WHERE id <= 2")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<std::result::Result<_, _>>()
            .unwrap();
        assert_eq!(
            kept,
            [
                ("[\"p1@x.example\"]".to_string(), "<m1@x>".to_string(), true),
                ("[\"p2@x.example\"]".to_string(), "<m2@x>".to_string(), true)
            ]
        );
        // Only mail 3 is left to seal among the sent ones.
        let sent: Vec<i64> = raw_mails(store.conn(), MailTable::Outbox, &["sent"])
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(sent, [3]);
        // A keep_sent_days reaching before the calendar's start keeps it.
        assert_eq!(forget_sent_bodies(&store, u32::MAX, now).unwrap(), 0);
        let mut at_once = config.clone();
        at_once.limits.keep_sent_days = 0;
        flush(&store, &mut spool, &at_once, &|| now).unwrap();
        assert_eq!(
            rows(),
            [
                emptied(1),
                emptied(2),
                emptied(3),
                whole(4, "queued"),
                whole(5, "failed")
            ]
        );
        // The failed mail goes out whole when it is sent again.
        assert!(crate::store::admin::requeue_outgoing(store.conn(), 5, now).unwrap());
        let out = flush(&store, &mut spool, &at_once, &|| now).unwrap();
        assert_eq!(out.sent, 1);
        let file = spool.outgoing_dir().join("000005-help.eml");
        assert_eq!(std::fs::read(file).unwrap().len() as i64, size[4]);
        assert_eq!(rows()[4], emptied(5));
    }

    #[test]
    fn backoff_doubles_up_to_an_hour() {
        assert_eq!(backoff(0), Duration::minutes(1));
        assert_eq!(backoff(1), Duration::minutes(2));
        assert_eq!(backoff(5), Duration::minutes(32));
        assert_eq!(backoff(6), Duration::minutes(60));
        assert_eq!(backoff(40), Duration::minutes(60));
    }
}
