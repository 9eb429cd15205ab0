//! One mail processed: parsed (a mail kept only as its header part is
//! answered that it is too large), automatic mails (but a team's
//! program's, proven by the team's string) and unanswerable ones left
//! unanswered, the others handed to their command and committed with their
//! replies; and the ways a mail ends without a reply (unanswered, dropped,
//! set aside, unreadable by the transport).
//!
//! Not here: counting attempts and retrying (`process.rs`), the
//! commands themselves, and the replies' budgets (`reply.rs`).

use chrono::{DateTime, Utc};
use serde_json::json;

use super::error::ProcessError;
use super::lanes::limits;
use super::reply::{commit, finish_in};
use super::seal::seal_inbox;
use crate::config::Config;
use crate::mail::commands::{self, classify, Budget, Command, Ctx, Effect};
use crate::mail::message::{self, Inbound, Limits, Unreadable};
use crate::mail::texts::render;
use crate::referee::RefereeConfig;
use crate::store::mail::{self as db, InboxRow};
use crate::store::Store;

/// Sets the final state of a mail that gets no reply, and seals it, in one
/// transaction; it is kept as its head ([`db::keep_head_of_processed`]),
/// for [`db::STRANGERS_HEADS_KEPT_DAYS`].
pub(super) fn finish_unanswered(
    store: &mut Store,
    config: &Config,
    row: &InboxRow,
    outcome: &str,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    let tx = store.conn_mut().transaction()?;
    seal_inbox(&tx, config, row)?;
    db::finish_inbox(&tx, row.id, "ignored", outcome, now)?;
    db::keep_head_of_processed(&tx, row.id)?;
    // Unanswered mail proved nobody: its head is kept a week.
    db::forget_head_at(&tx, row.id, now + super::reply::strangers_heads_kept())?;
    tx.commit()?;
    Ok("ignored")
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
pub(super) fn set_aside(
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

/// The outcome of a mail dropped because its sender cannot be answered.
pub const DROPPED_UNANSWERABLE: &str = "dropped: unanswerable sender";

pub(super) fn drop_unanswerable(
    store: &mut Store,
    config: &Config,
    row: &InboxRow,
    why: &message::Unanswerable,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    finish_unanswered(
        store,
        config,
        row,
        &format!("{DROPPED_UNANSWERABLE} ({why})"),
        now,
    )
}

/// Processes one mail; returns its final state.
pub(super) fn process_one(
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
            return finish_unanswered(store, config, row, "unreadable: not a mail", now);
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
                return finish_unanswered(
                    store,
                    config,
                    row,
                    &format!("too large ({size} bytes), no one to answer"),
                    now,
                );
            };
            let head = head.expect("parsed above");
            let ctx = Ctx {
                config,
                mail: &head,
                inbox_id: row.id,
                now,
                reply_to: to.address.clone(),
            };
            // In the unit that shows the figure: a test's limit of 2000
            // bytes is "2.0 kB", not "0.0 MB".
            let mb = |n: usize| match n {
                n if n < 100_000 => format!("{:.1} kB", n as f64 / 1_000.0),
                n => format!("{:.1} MB", n as f64 / 1_000_000.0),
            };
            let body = render(
                "too_large",
                &json!({
                    "size": size, "limit": limit, "size_mb": mb(size), "limit_mb": mb(limit),
                    // A bot contest's mail says nothing of C's lexical elements.
                    "bots": config.contest.discipline.family().bots().is_some(),
                    "max_lexical_elements":
                        crate::toolchain::compile::CompileConfig::default().max_lexical_elements,
                }),
            )?;
            let effect = Effect {
                budget: Budget::Strangers,
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
    let command = classify(&mail.subject);
    if let Some(auto) = &mail.automatic {
        // A machine's mail is never answered, unless a team's program sent
        // it and the team's string proves it: then it is the team's mail,
        // processed as any, its answers bounded by RFC 3834's rule
        // (`reply`).
        if commands::proving_team(store.conn(), config, &mail, command)?.is_none() {
            let outcome = format!("automatic mail ({}), not answered", auto.kind());
            return finish_unanswered(store, config, row, &outcome, now);
        }
    }
    let reply_to = match mail.answerable_address() {
        Ok(m) => m.address.clone(),
        Err(why) => return drop_unanswerable(store, config, row, &why, now),
    };
    let ctx = Ctx {
        config,
        mail: &mail,
        inbox_id: row.id,
        now,
        reply_to,
    };
    match command {
        Command::Register => {
            // The answer to a registration that is kept draws from the
            // registration's budget (bounded by `max_participants` and the
            // confirmation caps), never from strangers' caps: nothing is
            // kept without the mail that tells its address, and no
            // stranger's flood keeps a participant from registering.
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
