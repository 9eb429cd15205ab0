//! The outbox: what gets sent, to whom, and why — below both the contest
//! (its mails by preference, notices) and the mail front end (replies).
//!
//! [`enqueue`] builds one mail ([`outgoing`]: RFC 5322 bytes, loop-prevention
//! headers) and queues it in the store's outbox table on the caller's
//! connection or transaction, with its [`Cause`]: the inbox mail it
//! answers, the sender whose daily cap it counts against, the contest event
//! it belongs to (queued at most once). A text prepared for many mails
//! ([`enqueue_with`]) or an attachment of at least 1 kB is stored once
//! however many mails carry it (LAP, GRG, GRR, the final results:
//! `store::mail`'s bodies), the mail's own bytes in its row; such a text
//! is never copied into each mail: the mail is built around it
//! ([`outgoing::build_around`]) and the row says where it goes back in.
//! The bytes sent are the bytes built. Sending is `mail::delivery`'s.
//!
//! Deliberately nothing of contests or commands here: neither `contest/`
//! nor `mail/` reaches into the other for the outbox.

pub mod outgoing;

use chrono::{DateTime, Utc};

use crate::store::mail::{self as db, NewOutgoing};
use crate::store::StoreError;
use outgoing::{build_around, build_parts_owned, new_message_id, Outgoing};

/// Faults of queuing a mail (infrastructure).
#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("building a mail: {0}")]
    Build(#[from] outgoing::BuildError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("rendering a mail: {0}")]
    Render(#[from] handlebars::RenderError),
}

/// Where a queued mail comes from: the inbox mail it answers, the sender
/// whose daily cap it counts against, the contest event it belongs to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cause<'a> {
    pub inbox_id: Option<i64>,
    /// The budget it draws from (contest mails: the default).
    pub budget: db::Budget,
    pub sender_key: Option<&'a str>,
    /// The contest event it belongs to, and whether its key was looked up.
    pub event: EventKey<'a>,
}

/// The contest event a queued mail belongs to (its key queued at most
/// once: the row's unique index), and what the caller knows of the key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EventKey<'a> {
    /// No event: a reply, a digest (the default).
    #[default]
    None,
    /// The event's key, not looked up: [`enqueue`] looks it up, and a key
    /// queued before (a resumed contest) builds no mail.
    Unchecked(&'a str),
    /// The event's key, which the caller looked up already (once for all
    /// the event's mails: `store::mail::events_queued_under`) and found
    /// not queued: no look-up per mail. The row's unique index still
    /// queues a key at most once.
    KnownAbsent(&'a str),
}

impl<'a> EventKey<'a> {
    /// The key, looked up or not.
    pub fn key(self) -> Option<&'a str> {
        match self {
            EventKey::None => None,
            EventKey::Unchecked(key) | EventKey::KnownAbsent(key) => Some(key),
        }
    }
}

/// Builds one mail and queues it in the outbox (on the caller's
/// connection or transaction). `false`: its event key was queued before.
pub fn enqueue(
    conn: &rusqlite::Connection,
    contest: &crate::config::ContestConfig,
    m: &Outgoing,
    cause: Cause<'_>,
    now: DateTime<Utc>,
) -> Result<bool, OutboxError> {
    enqueue_with(conn, contest, m, None, cause, now)
}

/// [`enqueue`] with the mail's body prepared from its text already
/// ([`outgoing::prepare_body`] of `m.body`: once for a text many mails
/// carry).
pub fn enqueue_with(
    conn: &rusqlite::Connection,
    contest: &crate::config::ContestConfig,
    m: &Outgoing,
    prepared: Option<&outgoing::PreparedBody>,
    cause: Cause<'_>,
    now: DateTime<Utc>,
) -> Result<bool, OutboxError> {
    // A mail of an event queued before (a resumed contest) is not built
    // again only to be ignored.
    if let EventKey::Unchecked(key) = cause.event {
        if db::event_queued(conn, key)? {
            return Ok(false);
        }
    }
    let id = new_message_id(contest);
    let built = match prepared {
        // A text prepared for many mails: the mail is built around it
        // (its headers' bytes, not the text's, per mail), the text stored
        // once.
        Some(body) => build_around(m, body, contest, &id, now)?,
        None => build_parts_owned(m, outgoing::prepare_body(&m.body), contest, &id, now)?,
    };
    Ok(db::queue_outgoing(
        conn,
        &NewOutgoing {
            inbox_id: cause.inbox_id,
            kind: m.kind,
            recipients: &m.to,
            budget: cause.budget,
            sender_key: cause.sender_key,
            subject: &m.subject,
            message_id: &id,
            raw: &built.raw,
            text_at: built.text_at,
            // A text prepared for many mails is stored once; one of this
            // mail alone stays in its row (nothing to share, no hash).
            shared: &built.shared(prepared),
            event_key: cause.event.key(),
        },
        now,
    )?)
}
