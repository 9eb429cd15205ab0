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
//! 142 kB kit harder still (and in all, `kits_per_day`).
//!
//! The raw mail is needed until its result is committed: in the same
//! transaction that sets its final state (`done` or `ignored`) it is
//! sealed ([`super::secrets::seal`]): every authentification string it
//! carries is overwritten. A crash before that commit leaves the mail
//! `new` and whole, to be processed again; after it, the mail is answered
//! and sealed. A mail set aside (`failed`) is kept whole for the
//! organizer's `admin reprocess`; it is sealed once it has been processed.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::commands::{self, classify, Command, Ctx, Effect};
use super::message::{self, Inbound, Limits, Unreadable};
use super::secrets::{mask_known, seal, seal_with, Look};
use super::texts::render;
use crate::config::Config;
use crate::outbox::{enqueue, Cause};
use crate::referee::RefereeConfig;
use crate::store::mail::{self as db, InboxRow};
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
    Build(#[from] crate::outbox::outgoing::BuildError),
    #[error(transparent)]
    Outbox(#[from] crate::outbox::OutboxError),
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

/// Which mails a processing pass takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Every pending mail, compile requests included, one after the other
    /// (`knobeln ingest`, a server's single cycle).
    All,
    /// Every pending mail but compile requests, which wait in the inbox
    /// (their durable queue) for the compile workers of `serve`
    /// ([`pending_compiles`], [`process_mail`]).
    AllButCompiles,
}

/// Processes every mail in state `new`, oldest first.
pub fn process_pending(
    store: &mut Store,
    config: &Config,
    referee: &RefereeConfig,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Summary, ProcessError> {
    process_pass(store, config, referee, now, Pass::All)
}

/// Processes the pending mails `pass` takes, oldest first.
pub fn process_pass(
    store: &mut Store,
    config: &Config,
    referee: &RefereeConfig,
    now: &dyn Fn() -> DateTime<Utc>,
    pass: Pass,
) -> Result<Summary, ProcessError> {
    seal_backlog(store, config)?;
    let mut summary = Summary::default();
    // Heads first: a compile request waiting for a worker is looked at
    // again every cycle, and its whole mail is not read for that.
    for (id, head) in db::pending_inbox_heads(store.conn(), crate::mail::inbox::MAX_HEADER_BYTES)? {
        if pass == Pass::AllButCompiles && compile_sender(&head, config).is_some() {
            continue;
        }
        if let Some(row) = db::pending_inbox_row(store.conn(), id)? {
            handle(store, config, referee, &row, now, &mut summary)?;
        }
    }
    if summary.processed + summary.ignored > 0 {
        // The mails sealed above leave no older page in the log (a reader
        // may keep it for now: then the next pass empties it).
        store.forget_overwritten()?;
    }
    Ok(summary)
}

/// A compile request waiting in the inbox: its mail and its sender (as
/// the reply caps count senders, [`sender_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedCompile {
    pub inbox_id: i64,
    pub sender: String,
}

/// Whether [`pending_compiles`] records what it classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classified {
    /// Stored with the mail: its head is never read again (`serve`).
    Stored,
    /// Kept in memory only (`status`, which writes nothing).
    Counted,
}

/// The key a compile request is queued under: its sender.
const COMPILE_KEY: &str = "c:";
/// The key of a pending mail that is no compile request.
const NOT_A_COMPILE: &str = "-";

/// The compile requests waiting in the inbox, oldest first. A pending
/// mail's head is read and classified once, when first seen, and the
/// result stored with it: each later call reads only keys from an index,
/// so a cycle costs the same whatever heads wait (issue 35: 2000 waiting
/// 58 kB heads were all parsed again every cycle).
pub fn pending_compiles(
    store: &Store,
    config: &Config,
    classified: Classified,
) -> Result<Vec<QueuedCompile>, StoreError> {
    let conn = store.conn();
    let fresh = db::unclassified_inbox_heads(conn, crate::mail::inbox::MAX_HEADER_BYTES)?;
    let mut counted = Vec::new();
    if !fresh.is_empty() {
        let tx = match classified {
            Classified::Stored => Some(conn.unchecked_transaction()?),
            Classified::Counted => None,
        };
        for (inbox_id, head) in fresh {
            let key = match compile_sender(&head, config) {
                Some(sender) => format!("{COMPILE_KEY}{sender}"),
                None => NOT_A_COMPILE.to_string(),
            };
            match &tx {
                Some(tx) => db::set_queue_key(tx, inbox_id, &key)?,
                None => counted.push((inbox_id, key)),
            }
        }
        if let Some(tx) = tx {
            tx.commit()?;
        }
    }
    let mut queued = db::pending_with_queue_key(conn, COMPILE_KEY)?;
    queued.extend(
        counted
            .into_iter()
            .filter(|(_, k)| k.starts_with(COMPILE_KEY)),
    );
    queued.sort_by_key(|(id, _)| *id);
    Ok(queued
        .into_iter()
        .map(|(inbox_id, key)| QueuedCompile {
            inbox_id,
            sender: key[COMPILE_KEY.len()..].to_string(),
        })
        .collect())
}

/// Processes the one pending mail `inbox_id` (a compile worker's job); a
/// mail that is no longer pending is left alone.
pub fn process_mail(
    store: &mut Store,
    config: &Config,
    referee: &RefereeConfig,
    inbox_id: i64,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Summary, ProcessError> {
    let mut summary = Summary::default();
    if let Some(row) = db::pending_inbox_row(store.conn(), inbox_id)? {
        handle(store, config, referee, &row, now, &mut summary)?;
    }
    Ok(summary)
}

/// If the stored mail whose start is `head` is a compile request (by its
/// subject), its sender as the caps count senders ([`sender_key`]; empty
/// for one that cannot be answered). A mail whose head cannot be read is
/// none: the quick pass answers it.
fn compile_sender(head: &[u8], config: &Config) -> Option<String> {
    let h = message::parse(
        crate::mail::inbox::header_part(head),
        config.contest.loop_id.as_str(),
        &Limits::default(),
    )
    .ok()?;
    (h.automatic.is_none() && classify(&h.subject) == Command::Compile).then(|| {
        h.answerable_address()
            .map(|a| sender_key(&a.address))
            .unwrap_or_default()
    })
}

/// One mail: its attempt counted, processed, its failure recorded (and the
/// mail set aside after the last attempt).
fn handle(
    store: &mut Store,
    config: &Config,
    referee: &RefereeConfig,
    row: &InboxRow,
    now: &dyn Fn() -> DateTime<Utc>,
    summary: &mut Summary,
) -> Result<(), ProcessError> {
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
        set_aside(store, row, &error, now())?;
        tracing::error!(inbox = row.id, "mail set aside: {error}");
        summary.failed += 1;
        return Ok(());
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        process_one(store, config, referee, row, now())
    }));
    let error = match result {
        Ok(Ok(state)) => {
            log_processed(store, row.id, state);
            if state == "ignored" {
                summary.ignored += 1;
            } else {
                summary.processed += 1;
            }
            return Ok(());
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
        set_aside(store, row, &error, now())?;
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
    Ok(())
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

/// The one-time task of `schema/0008_seal_backlog.sql` (asked again by
/// `0012_seal_bot_programs.sql`): a database written by an older version
/// holds processed and sent mails, stored sources and bots' programs, with
/// their strings whole. Seals them all in one transaction, then
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
    // A bot's program holds its files; an interpreted bot's file is its
    // source, `<<FROM>>` line included (before schema 0012).
    for (id, binary) in db::bot_program_binaries(&tx)? {
        let Ok(mut program) = crate::lang::build::BotProgram::decode(&binary) else {
            continue;
        };
        let mut masked_any = false;
        for f in &mut program.files {
            if let Ok(text) = std::str::from_utf8(f.bytes()) {
                let masked = mask_known(text, &known);
                if masked != text {
                    f.set_bytes(masked.into_bytes());
                    masked_any = true;
                }
            }
        }
        if masked_any {
            db::set_version_binary(&tx, id, &program.encode())?;
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
        db::StoredSecrets::new(conn),
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

fn limits(config: &Config) -> Limits {
    Limits {
        max_mail_bytes: config.limits.max_mail_bytes,
        ..Limits::default()
    }
}

/// The outcome of a mail dropped because its sender cannot be answered.
pub const DROPPED_UNANSWERABLE: &str = "dropped: unanswerable sender";

fn drop_unanswerable(
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
        let outcome = format!("automatic mail ({}), not answered", auto.kind());
        return finish_unanswered(store, config, row, &outcome, now);
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
    let command = classify(&mail.subject);
    match command {
        Command::Register => {
            // Checks and insertion happen in the same transaction as the
            // reply; a registration whose reply may not go out (a daily
            // cap) is not kept at all: nothing is stored without the mail
            // that tells its address.
            let tx = store.conn_mut().transaction()?;
            if let Some(why) = reply_gate(&tx, config, &ctx.reply_to, now)? {
                db::finish_inbox(
                    &tx,
                    row.id,
                    "ignored",
                    &format!("{REGISTRATION_NOT_KEPT} ({why})"),
                    now,
                )?;
                seal_inbox(&tx, config, row)?;
                tx.commit()?;
                return Ok("ignored");
            }
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

/// The outcome of a registration that was not kept because no reply to
/// its sender may go out today.
pub const REGISTRATION_NOT_KEPT: &str = "registration not kept: no reply may go out";

/// Why no reply may go to `reply_to` now (its daily cap per sender, with
/// `+tag` and case folded, or per domain), or `None`.
fn reply_gate(
    conn: &rusqlite::Connection,
    config: &Config,
    reply_to: &str,
    now: DateTime<Utc>,
) -> Result<Option<String>, ProcessError> {
    let sender_key = sender_key(reply_to);
    let domain = sender_key.rsplit_once('@').map_or("", |(_, d)| d);
    let limits = &config.limits;
    let since = now - Duration::days(1);
    let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
    Ok(
        if capped(
            limits.replies_per_sender_per_day,
            db::replies_since(conn, &sender_key, since)?,
        ) {
            Some(format!(
                "{} replies to this sender today already",
                limits.replies_per_sender_per_day
            ))
        } else if capped(
            limits.replies_per_domain_per_day,
            db::replies_to_domain_since(conn, domain, since)?,
        ) {
            Some(format!(
                "{} replies to senders at {domain} today already",
                limits.replies_per_domain_per_day
            ))
        } else {
            None
        },
    )
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
    if let Some(why) = reply_gate(conn, config, &ctx.reply_to, now)? {
        outcome.push_str(&format!(" (no reply: {why})"));
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
                let per_day =
                    db::replies_of_kind_since(conn, reply.kind, db::ReplyTarget::Everyone, since)?;
                if capped(limits.kits_per_day, per_day) {
                    outcome.push_str(&format!(
                        " (no kit: {} kits went out today, the most in a day)",
                        limits.kits_per_day
                    ));
                    continue;
                }
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
    seal_inbox(conn, config, row)?;
    db::finish_inbox(conn, row.id, effect.state, &outcome, now)?;
    Ok(effect.state)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: the compile queue reads a waiting mail's head once. After
    /// the first look its class is stored with it, so a later cycle finds
    /// the request without reading the mail (here: its bytes replaced by
    /// garbage after the first look); `status` (`Counted`) writes nothing.
    #[test]
    fn the_compile_queue_reads_each_waiting_head_once() {
        let store = Store::open_in_memory().unwrap();
        let config = Config::default();
        let now = Utc::now();
        let mail = |n: u32, subject: &str| {
            format!(
                "From: joe{n}@lords.example\r\nTo: knobeln@contest.example\r\n\
                 Subject: {subject}\r\nMessage-ID: <q{n}@lords.example>\r\n\r\nint x;\r\n"
            )
        };
        let compile = crate::mail::inbox::take_in(
            store.conn(),
            "test",
            None,
            mail(1, "please compile").as_bytes(),
            usize::MAX,
            now,
        )
        .unwrap()
        .unwrap();
        crate::mail::inbox::take_in(
            store.conn(),
            "test",
            None,
            mail(2, "help").as_bytes(),
            usize::MAX,
            now,
        )
        .unwrap();
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
        assert_eq!(unseen, 2, "status writes nothing");
        let first = pending_compiles(&store, &config, Classified::Stored).unwrap();
        assert_eq!(
            first,
            vec![QueuedCompile {
                inbox_id: compile,
                sender: "joe1@lords.example".into()
            }]
        );
        store
            .conn()
            .execute("UPDATE inbox SET raw = x'00ff00'", [])
            .unwrap();
        let again = pending_compiles(&store, &config, Classified::Stored).unwrap();
        assert_eq!(again, first, "the heads were not read again");
    }
}
