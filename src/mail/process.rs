//! Processing stored mails: every raw mail is already in the inbox table
//! (stored before anything else happens); here each one is parsed, handled
//! by its command, and its state change and replies are committed in one
//! transaction.
//!
//! A processing attempt is counted (and committed) before the work starts,
//! so a mail that makes processing fail, or even kills the server, is tried
//! at most `max_processing_attempts` times; then it is set aside as
//! `failed`, kept, and the organizer is told. It never blocks the queue.
//!
//! The raw mail is needed until its result is committed: in the same
//! transaction that sets its final state (`done` or `ignored`) it is
//! sealed ([`super::secrets::seal`]): every authentification string it
//! carries is overwritten. A crash before that commit leaves the mail
//! `new` and whole, to be processed again; after it, the mail is answered
//! and sealed. A mail set aside (`failed`) is kept whole for the
//! organizer's `admin requeue`; it is sealed once it has been processed.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::commands::{self, classify, Command, Ctx, Effect};
use super::message::{self, Inbound, Limits, Unreadable};
use super::outgoing::{build, new_message_id, Outgoing};
use super::secrets::{mask_known, seal, seal_with, Look};
use super::texts::render;
use crate::config::Config;
use crate::referee::RefereeConfig;
use crate::store::mail::{self as db, InboxRow, NewOutgoing};
use crate::store::{Store, StoreError};

/// Processing faults (infrastructure). A participant's mistake is a reply.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error("{0}")]
    Command(String),
    #[error("building a reply: {0}")]
    Build(#[from] super::outgoing::BuildError),
    #[error("rendering a reply: {0}")]
    Render(#[from] handlebars::RenderError),
}

/// What a processing pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub processed: usize,
    pub ignored: usize,
    pub failed: usize,
    pub retried: usize,
}

/// Processes every mail in state `new`, oldest first.
pub fn process_pending(
    store: &mut Store,
    config: &Config,
    referee: &RefereeConfig,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Summary, ProcessError> {
    seal_backlog(store, config)?;
    let mut summary = Summary::default();
    for row in db::pending_inbox(store.conn())? {
        let attempts = db::bump_attempt(store.conn(), row.id)?;
        if attempts > config.limits.max_processing_attempts {
            // Every earlier attempt ended without a result: the server
            // stopped (or was killed) while working on this mail.
            let error = format!(
                "processing was interrupted {} times (the server stopped while working on \
                 this mail)",
                attempts - 1
            );
            db::record_inbox_error(store.conn(), row.id, &error)?;
            set_aside(store, config, &row, attempts - 1, &error, now())?;
            tracing::error!(inbox = row.id, "mail set aside: {error}");
            summary.failed += 1;
            continue;
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            process_one(store, config, referee, &row, now())
        }));
        let error = match result {
            Ok(Ok(state)) => {
                log_processed(store, row.id, state);
                if state == "ignored" {
                    summary.ignored += 1;
                } else {
                    summary.processed += 1;
                }
                continue;
            }
            Ok(Err(e)) => e.to_string(),
            Err(panic) => format!(
                "processing panicked: {}",
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            ),
        };
        db::record_inbox_error(store.conn(), row.id, &error)?;
        if attempts >= config.limits.max_processing_attempts {
            set_aside(store, config, &row, attempts, &error, now())?;
            tracing::error!(
                inbox = row.id,
                "mail set aside after {attempts} attempts: {error}"
            );
            summary.failed += 1;
        } else {
            tracing::warn!(
                inbox = row.id,
                "processing a mail failed (attempt {attempts}, it is tried again): {error}"
            );
            summary.retried += 1;
        }
    }
    if summary.processed + summary.ignored > 0 {
        // The mails sealed above leave no older page in the log (a reader
        // may keep it for now: then the next pass empties it).
        store.forget_overwritten()?;
    }
    Ok(summary)
}

/// The log line of a processed mail: its state and the outcome stored
/// with it (what it was, what was answered).
fn log_processed(store: &Store, id: i64, state: &str) {
    let outcome: Option<String> = store
        .conn()
        .query_row("SELECT outcome FROM inbox WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap_or(None);
    let outcome = outcome.unwrap_or_default();
    if state == "ignored" {
        tracing::info!(inbox = id, "mail not answered: {outcome}");
    } else {
        tracing::info!(inbox = id, "mail answered: {outcome}");
    }
}

/// The one-time task of `schema/0008_seal_backlog.sql`: a database written
/// by an older version holds processed and sent mails, and stored sources,
/// with their strings whole. Seals them all in one transaction, then
/// rebuilds the file (VACUUM) so that no old bytes stay in free pages.
/// Returns how many rows changed; a no-op once done. When the rebuild
/// cannot run (another connection is busy), the task stays for the next
/// pass (sealing again changes nothing).
pub fn seal_backlog(store: &mut Store, config: &Config) -> Result<usize, ProcessError> {
    const TASK: &str = "seal_backlog";
    if !db::task_pending(store.conn(), TASK)? {
        return Ok(0);
    }
    let tx = store.conn_mut().transaction()?;
    let known = db::known_secrets(&tx)?;
    let mut changed = 0;
    let max = config.limits.max_mail_bytes;
    for (table, states, look) in [
        (
            db::MailTable::Inbox,
            &["done", "ignored"][..],
            Look::Inbound,
        ),
        (db::MailTable::Outbox, &["sent"][..], Look::Outbound),
    ] {
        for (id, raw) in db::raw_mails(&tx, table, states)? {
            let limit = if look == Look::Inbound {
                max
            } else {
                usize::MAX
            };
            let sealed = seal(&raw, &known, look, limit);
            if sealed.changed() {
                match table {
                    db::MailTable::Inbox => db::set_inbox_raw(&tx, id, &sealed.raw)?,
                    db::MailTable::Outbox => db::set_outbox_raw(&tx, id, &sealed.raw)?,
                }
                changed += 1;
            }
        }
    }
    for v in db::stored_sources(&tx)? {
        let source = String::from_utf8_lossy(&v.1);
        let masked = (
            v.0,
            mask_known(&source, &known).into_bytes(),
            v.2.as_deref().map(|r| mask_known(r, &known)),
            v.3.as_deref().map(|d| mask_known(d, &known)),
        );
        if masked != v {
            db::set_stored_source(&tx, &masked)?;
            changed += 1;
        }
    }
    tx.commit()?;
    match store.conn().execute_batch("VACUUM") {
        Ok(()) => {
            db::task_done(store.conn(), TASK)?;
            store.forget_overwritten()?;
        }
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::DatabaseBusy
                || e.code == rusqlite::ErrorCode::DatabaseLocked => {}
        Err(e) => return Err(e.into()),
    }
    Ok(changed)
}

/// Overwrites the secrets a processed mail carries, on the caller's
/// transaction (the one that sets its final state).
fn seal_inbox(
    conn: &rusqlite::Connection,
    config: &Config,
    row: &InboxRow,
) -> Result<(), ProcessError> {
    let sealed = seal_with(
        &row.raw,
        Look::Inbound,
        config.limits.max_mail_bytes,
        || db::known_secrets(conn),
    )?;
    if sealed.changed() {
        db::set_inbox_raw(conn, row.id, &sealed.raw)?;
    }
    Ok(())
}

/// Sets the final state of a mail that gets no reply, and seals it, in one
/// transaction.
fn finish_unanswered(
    store: &mut Store,
    config: &Config,
    row: &InboxRow,
    outcome: &str,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    let tx = store.conn_mut().transaction()?;
    seal_inbox(&tx, config, row)?;
    db::finish_inbox(&tx, row.id, "ignored", outcome, now)?;
    tx.commit()?;
    Ok("ignored")
}

/// A mail the transport could not read at all (an IMAP message whose FETCH
/// is empty or broken): kept as a `failed` inbox row with the transport's
/// words instead of its bytes, and the organizer is told, in one
/// transaction. Returns the row's id (`None` if it was recorded before).
pub fn record_unreadable(
    store: &mut Store,
    config: &Config,
    origin: &str,
    imap: Option<(u32, u32)>,
    why: &str,
    now: DateTime<Utc>,
) -> Result<Option<i64>, ProcessError> {
    let raw = format!("X-Knobeln-Unreadable: {why}\r\n\r\n").into_bytes();
    let tx = store.conn_mut().transaction()?;
    let Some(id) = crate::mail::inbox::take_in(&tx, origin, imap, &raw, now)? else {
        return Ok(None);
    };
    tx.commit()?;
    let row = InboxRow {
        id,
        origin: origin.to_string(),
        raw,
        attempts: 0,
    };
    set_aside(
        store,
        config,
        &row,
        0,
        &format!("the transport could not read this mail: {why}"),
        now,
    )?;
    Ok(Some(id))
}

/// Marks a mail failed and tells the organizer, in one transaction.
fn set_aside(
    store: &mut Store,
    config: &Config,
    row: &InboxRow,
    attempts: u32,
    error: &str,
    now: DateTime<Utc>,
) -> Result<(), ProcessError> {
    let body = render(
        "organizer_alert",
        &json!({ "attempts": attempts, "inbox_id": row.id, "origin": row.origin, "error": error }),
    )?;
    let alert = Outgoing {
        kind: "organizer_alert",
        to: vec![config.contest.organizer.clone()],
        subject: format!(
            "KNOBELN server: mail {} set aside after {attempts} failed attempts",
            row.id
        ),
        body,
        in_reply_to: None,
        references: vec![],
        attachments: vec![],
    };
    let tx = store.conn_mut().transaction()?;
    enqueue(
        &tx,
        &config.contest,
        &alert,
        Cause {
            inbox_id: Some(row.id),
            ..Cause::default()
        },
        now,
    )?;
    db::finish_inbox(&tx, row.id, "failed", &format!("set aside: {error}"), now)?;
    tx.commit()?;
    Ok(())
}

/// Where a queued mail comes from: the inbox mail it answers, the sender
/// whose daily cap it counts against, the contest event it belongs to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cause<'a> {
    pub inbox_id: Option<i64>,
    pub sender_key: Option<&'a str>,
    pub event_key: Option<&'a str>,
}

/// Builds one mail and queues it in the outbox (on the caller's
/// connection or transaction). `false`: its event key was queued before.
pub fn enqueue(
    conn: &rusqlite::Connection,
    contest: &crate::config::ContestConfig,
    m: &Outgoing,
    cause: Cause<'_>,
    now: DateTime<Utc>,
) -> Result<bool, ProcessError> {
    let id = new_message_id(contest);
    let raw = build(m, contest, &id, now)?;
    Ok(db::queue_outgoing(
        conn,
        &NewOutgoing {
            inbox_id: cause.inbox_id,
            kind: m.kind,
            recipients: &m.to,
            sender_key: cause.sender_key,
            subject: &m.subject,
            message_id: &id,
            raw: &raw,
            event_key: cause.event_key,
        },
        now,
    )?)
}

fn limits(config: &Config) -> Limits {
    Limits {
        max_mail_bytes: config.limits.max_mail_bytes,
        ..Limits::default()
    }
}

/// The header part of a raw mail (for answering mails too large to parse).
fn header_part(raw: &[u8]) -> &[u8] {
    let cap = raw.len().min(64 * 1024);
    let head = &raw[..cap];
    let end = head
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
        .or_else(|| head.windows(2).position(|w| w == b"\n\n").map(|p| p + 2))
        .unwrap_or(cap);
    &raw[..end]
}

/// Processes one mail; returns its final state.
fn process_one(
    store: &mut Store,
    config: &Config,
    referee: &RefereeConfig,
    row: &InboxRow,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    let loop_id = config.contest.loop_id.as_str();
    let parsed = message::parse(&row.raw, loop_id, &limits(config));
    let mail: Inbound = match parsed {
        Ok(m) => m,
        Err(Unreadable::NotAMail) => {
            return finish_unanswered(store, config, row, "unreadable: not a mail", now);
        }
        Err(Unreadable::TooLarge { size, limit }) => {
            let head = message::parse(header_part(&row.raw), loop_id, &Limits::default());
            let to = head
                .as_ref()
                .ok()
                .filter(|h| h.automatic.is_none())
                .and_then(|h| h.reply_address().cloned());
            let Some(to) = to else {
                return finish_unanswered(store, config, row, "too large, no one to answer", now);
            };
            let head = head.expect("parsed above");
            let ctx = Ctx {
                config,
                mail: &head,
                inbox_id: row.id,
                now,
                reply_to: to.address.clone(),
            };
            let body = render("too_large", &json!({ "size": size, "limit": limit }))?;
            let effect = Effect {
                state: "done",
                outcome: format!("too large ({size} bytes)"),
                replies: vec![ctx.reply(
                    "too_large",
                    "KNOBELN: your mail is too large".into(),
                    body,
                )],
            };
            return commit(store, config, row, &ctx, effect, now);
        }
    };
    if let Some(auto) = &mail.automatic {
        let outcome = format!("automatic mail ({}), not answered", auto.kind());
        return finish_unanswered(store, config, row, &outcome, now);
    }
    let Some(reply_to) = mail.reply_address().map(|m| m.address.clone()) else {
        return finish_unanswered(store, config, row, "no sender address to answer", now);
    };
    let ctx = Ctx {
        config,
        mail: &mail,
        inbox_id: row.id,
        now,
        reply_to,
    };
    let command = classify(&mail.subject);
    match command {
        Command::Register => {
            // Checks and insertion happen in the same transaction as the reply.
            let tx = store.conn_mut().transaction()?;
            let effect = commands::register::apply(&tx, &ctx)
                .map_err(|e| ProcessError::Command(e.to_string()))?;
            let state = finish_in(&tx, config, row, &ctx, effect, now)?;
            tx.commit()?;
            Ok(state)
        }
        Command::Compile => {
            let prepared = commands::compile::prepare(store, &ctx, referee)
                .map_err(|e| ProcessError::Command(e.to_string()))?;
            let tx = store.conn_mut().transaction()?;
            let effect = commands::compile::commit(&tx, &ctx, prepared)
                .map_err(|e| ProcessError::Command(e.to_string()))?;
            let state = finish_in(&tx, config, row, &ctx, effect, now)?;
            tx.commit()?;
            Ok(state)
        }
        other => {
            // The other commands change the store (if at all) in the same
            // transaction as their replies.
            let tx = store.conn_mut().transaction()?;
            let effect = commands::apply(&tx, &ctx, other)
                .map_err(|e| ProcessError::Command(e.to_string()))?;
            let state = finish_in(&tx, config, row, &ctx, effect, now)?;
            tx.commit()?;
            Ok(state)
        }
    }
}

fn commit(
    store: &mut Store,
    config: &Config,
    row: &InboxRow,
    ctx: &Ctx<'_>,
    effect: Effect,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    let tx = store.conn_mut().transaction()?;
    let state = finish_in(&tx, config, row, ctx, effect, now)?;
    tx.commit()?;
    Ok(state)
}

/// Queues the replies (within the per-sender daily cap) and sets the mail's
/// final state, on the caller's transaction.
fn finish_in(
    conn: &rusqlite::Connection,
    config: &Config,
    row: &InboxRow,
    ctx: &Ctx<'_>,
    effect: Effect,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    let sender_key = ctx.reply_to.to_ascii_lowercase();
    let cap = config.limits.replies_per_sender_per_day;
    let mut outcome = effect.outcome;
    let sent_today = db::replies_since(conn, &sender_key, now - Duration::days(1))?;
    if cap > 0 && sent_today >= cap {
        outcome.push_str(&format!(
            " (no reply: {cap} replies to this sender today already)"
        ));
    } else {
        for reply in &effect.replies {
            enqueue(
                conn,
                &config.contest,
                reply,
                Cause {
                    inbox_id: Some(row.id),
                    sender_key: Some(&sender_key),
                    event_key: None,
                },
                now,
            )?;
        }
    }
    seal_inbox(conn, config, row)?;
    db::finish_inbox(conn, row.id, effect.state, &outcome, now)?;
    Ok(effect.state)
}
