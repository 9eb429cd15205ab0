//! Processing stored mails: every raw mail is already in the inbox table
//! (stored before anything else happens); here each one is parsed, handled
//! by its command, and its state change and replies are committed in one
//! transaction.
//!
//! A processing attempt is counted (and committed) before the work starts,
//! so a mail that makes processing fail, or even kills the server, is tried
//! at most `max_processing_attempts` times; then it is set aside as
//! `failed`, kept, and reported in the organizer's next digest (see
//! `digest`). It never blocks the queue.
//!
//! A mail whose sender cannot be answered (no address, or a malformed one:
//! `a..b@x`, `joe@[127.0.0.1]`, a 300-character local part) is kept and
//! dropped (`ignored`, outcome `dropped: unanswerable sender ...`): no
//! retry, no alert of its own (the digest counts them). Replies are capped
//! per sender (`user+tag@` counts as `user@`), per sender domain, and the
//! 112 kB kit harder still.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::commands::{self, classify, Command, Ctx, Effect};
use super::message::{self, Inbound, Limits, Unreadable};
use super::outgoing::{build, new_message_id, Outgoing};
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
            set_aside(store, &row, &error, now())?;
            summary.failed += 1;
            continue;
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            process_one(store, config, referee, &row, now())
        }));
        let error = match result {
            Ok(Ok(state)) => {
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
            set_aside(store, &row, &error, now())?;
            summary.failed += 1;
        } else {
            summary.retried += 1;
        }
    }
    Ok(summary)
}

/// A mail the transport could not read at all (an IMAP message whose FETCH
/// is empty or broken): kept as a `failed` inbox row with the transport's
/// words instead of its bytes (the organizer's next digest reports it), in
/// one transaction. Returns the row's id (`None` if it was recorded before).
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
    let Some(id) =
        crate::mail::inbox::take_in(&tx, origin, imap, &raw, config.limits.max_mail_bytes, now)?
    else {
        return Ok(None);
    };
    tx.commit()?;
    let row = InboxRow {
        id,
        origin: origin.to_string(),
        raw,
        attempts: 0,
        full_size: None,
    };
    set_aside(
        store,
        &row,
        &format!("the transport could not read this mail: {why}"),
        now,
    )?;
    Ok(Some(id))
}

/// Marks a mail failed (set aside). The organizer learns of it from the
/// next digest (one mail for all failures, see `digest`), and `status`
/// counts it.
fn set_aside(
    store: &Store,
    row: &InboxRow,
    error: &str,
    now: DateTime<Utc>,
) -> Result<(), ProcessError> {
    db::finish_inbox(
        store.conn(),
        row.id,
        "failed",
        &format!("set aside: {error}"),
        now,
    )?;
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

/// The outcome of a mail dropped because its sender cannot be answered.
pub const DROPPED_UNANSWERABLE: &str = "dropped: unanswerable sender";

fn drop_unanswerable(
    store: &Store,
    row: &InboxRow,
    why: &message::Unanswerable,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    db::finish_inbox(
        store.conn(),
        row.id,
        "ignored",
        &format!("{DROPPED_UNANSWERABLE} ({why})"),
        now,
    )?;
    Ok("ignored")
}

/// The key the per-sender cap counts: the address case-folded, without a
/// `+tag` (`Joe+x@Lords.Example` counts as `joe@lords.example`).
pub fn sender_key(address: &str) -> String {
    let low = address.to_ascii_lowercase();
    match low.rsplit_once('@') {
        Some((local, domain)) => {
            let user = local
                .split('+')
                .next()
                .filter(|u| !u.is_empty())
                .unwrap_or(local);
            format!("{user}@{domain}")
        }
        None => low,
    }
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
    let parsed = match row.full_size {
        // Only the header part was kept (see `inbox`).
        Some(size) => Err(Unreadable::TooLarge {
            size: size as usize,
            limit: config.limits.max_mail_bytes,
        }),
        None => message::parse(&row.raw, loop_id, &limits(config)),
    };
    let mail: Inbound = match parsed {
        Ok(m) => m,
        Err(Unreadable::NotAMail) => {
            db::finish_inbox(
                store.conn(),
                row.id,
                "ignored",
                "unreadable: not a mail",
                now,
            )?;
            return Ok("ignored");
        }
        Err(Unreadable::TooLarge { size, limit }) => {
            let head = message::parse(
                crate::mail::inbox::header_part(&row.raw),
                loop_id,
                &Limits::default(),
            );
            let to = head
                .as_ref()
                .ok()
                .filter(|h| h.automatic.is_none())
                .and_then(|h| h.answerable_address().ok().cloned());
            let Some(to) = to else {
                db::finish_inbox(
                    store.conn(),
                    row.id,
                    "ignored",
                    &format!("too large ({size} bytes), no one to answer"),
                    now,
                )?;
                return Ok("ignored");
            };
            let head = head.expect("parsed above");
            let ctx = Ctx {
                config,
                mail: &head,
                inbox_id: row.id,
                now,
                reply_to: to.address.clone(),
            };
            let mb = |n: usize| format!("{:.1} MB", n as f64 / 1_000_000.0);
            let body = render(
                "too_large",
                &json!({ "size": size, "limit": limit, "size_mb": mb(size), "limit_mb": mb(limit) }),
            )?;
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
        db::finish_inbox(
            store.conn(),
            row.id,
            "ignored",
            &format!("automatic mail ({}), not answered", auto.kind()),
            now,
        )?;
        return Ok("ignored");
    }
    let reply_to = match mail.answerable_address() {
        Ok(m) => m.address.clone(),
        Err(why) => return drop_unanswerable(store, row, &why, now),
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

/// Queues the replies (within the daily caps per sender, per sender domain,
/// and for kits) and sets the mail's final state, on the caller's
/// transaction.
fn finish_in(
    conn: &rusqlite::Connection,
    config: &Config,
    row: &InboxRow,
    ctx: &Ctx<'_>,
    effect: Effect,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    let sender_key = sender_key(&ctx.reply_to);
    let domain = sender_key
        .rsplit_once('@')
        .map_or("", |(_, d)| d)
        .to_string();
    let limits = &config.limits;
    let mut outcome = effect.outcome;
    let since = now - Duration::days(1);
    let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
    if capped(
        limits.replies_per_sender_per_day,
        db::replies_since(conn, &sender_key, since)?,
    ) {
        outcome.push_str(&format!(
            " (no reply: {} replies to this sender today already)",
            limits.replies_per_sender_per_day
        ));
    } else if capped(
        limits.replies_per_domain_per_day,
        db::replies_to_domain_since(conn, &domain, since)?,
    ) {
        outcome.push_str(&format!(
            " (no reply: {} replies to senders at {domain} today already)",
            limits.replies_per_domain_per_day
        ));
    } else {
        for reply in &effect.replies {
            if reply.kind == "software" {
                let per_sender = db::replies_of_kind_since(
                    conn,
                    reply.kind,
                    db::ReplyTarget::Sender(&sender_key),
                    since,
                )?;
                let per_domain = db::replies_of_kind_since(
                    conn,
                    reply.kind,
                    db::ReplyTarget::Domain(&domain),
                    since,
                )?;
                if capped(limits.kits_per_sender_per_day, per_sender)
                    || capped(limits.kits_per_domain_per_day, per_domain)
                {
                    outcome.push_str(&format!(
                        " (no kit: at most {} kits a day to one sender and {} to one domain)",
                        limits.kits_per_sender_per_day, limits.kits_per_domain_per_day
                    ));
                    continue;
                }
            }
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
    db::finish_inbox(conn, row.id, effect.state, &outcome, now)?;
    Ok(effect.state)
}
