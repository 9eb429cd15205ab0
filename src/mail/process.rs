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
//! retry, no alert of its own (the digest counts them). Every reply is
//! charged to a budget ([`Budget`]): a stranger's is capped per sender
//! (`user+tag@` counts as `user@`), per sender domain and in all, the
//! 142 kB kit harder still; a registered mailbox's per address; a proven
//! team's by its own daily budget; a kept registration's never. Pending
//! mails are classified once into lanes (proven teams, registrations,
//! strangers) and taken in that order.
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

use super::commands::{self, classify, Budget, Command, Ctx, Effect};
use super::message::{self, Inbound, Limits, Unreadable};
use super::secrets::{mask_known, seal, seal_with, Look};
use super::texts::render;
use crate::config::Config;
use crate::outbox::{enqueue, Cause};
use crate::referee::RefereeConfig;
use crate::store::mail::{self as db, InboxRow};
use crate::store::{Store, StoreError};
use crate::tournament::TeamId;

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
    /// The pass stopped at its batch size with more mails waiting
    /// ([`Pass::AllButCompiles`]): the caller goes on without pausing.
    pub more_waiting: bool,
}

/// Which mails a processing pass takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Every pending mail, compile requests included, one after the other
    /// (`knobeln ingest`, a server's single cycle).
    All,
    /// Pending mails but proven teams' compile requests, which wait in the
    /// inbox (their durable queue) for the compile workers of `serve`
    /// ([`pending_compiles`], [`process_mail`]): at most [`QUICK_BATCH`]
    /// of them, proven teams' mails first (lanes, issue 35), so that a
    /// team's mail arriving during a stranger's flood waits for one batch
    /// at most.
    AllButCompiles,
}

/// The most mails one [`Pass::AllButCompiles`] takes.
pub const QUICK_BATCH: usize = 32;

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
    let ids = match pass {
        Pass::All => db::pending_inbox_ids(store.conn())?,
        Pass::AllButCompiles => {
            // Each mail is classified once, when first seen; then only its
            // key is read (an index), whatever waits.
            classify_pending(store, config, Classified::Stored)?;
            let mut ids = db::pending_by_lane(store.conn(), COMPILE_KEY, QUICK_BATCH + 1)?;
            summary.more_waiting = ids.len() > QUICK_BATCH;
            ids.truncate(QUICK_BATCH);
            ids
        }
    };
    for id in ids {
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

/// A compile request of a proven team waiting in the inbox: its mail and
/// its team (the queue takes turns by team).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedCompile {
    pub inbox_id: i64,
    pub team: TeamId,
}

/// Whether [`classify_pending`] records what it classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classified {
    /// Stored with the mail: it is never read for this again (`serve`).
    Stored,
    /// Kept in memory only (`status`, which writes nothing).
    Counted,
}

/// The key of a proven team's compile request: this and the team's id.
const COMPILE_KEY: &str = "c:t";
/// The key of a proven team's other mail (the first lane).
const TEAM_LANE: &str = "q1:";
/// The key of a registration or a confirmation (the second lane: what a
/// newcomer needs, bounded by the registration's budget).
const REGISTRATION_LANE: &str = "q2:";
/// The key of any other mail: a stranger's claim (the last lane).
const STRANGER_LANE: &str = "q3:";

/// The lane of a pending mail, from its stored bytes: a compile request
/// or another mail of a team proven by its authentification string, a
/// registration (or confirmation), or a stranger's other mail. Costs one parse of a mail of at most `max_mail_bytes` and
/// one look-up by team name, whatever the field.
fn lane_key(
    conn: &rusqlite::Connection,
    config: &Config,
    row: &InboxRow,
) -> Result<String, StoreError> {
    if row.full_size.is_some() {
        return Ok(STRANGER_LANE.into());
    }
    let Ok(mail) = message::parse(&row.raw, config.contest.loop_id.as_str(), &limits(config))
    else {
        return Ok(STRANGER_LANE.into());
    };
    if mail.automatic.is_some() || mail.answerable_address().is_err() {
        return Ok(STRANGER_LANE.into());
    }
    let command = classify(&mail.subject);
    let claim = match command {
        Command::Compile => commands::compile::claimed_credentials(config, &mail),
        _ => mail.body.text().and_then(commands::credentials),
    };
    // A fault of the store is the caller's, never a stranger's lane.
    let team = match claim {
        Some(c) => commands::authenticate(conn, &c.team, &c.auth)?.map(|r| r.team),
        None => None,
    };
    Ok(match (team, command) {
        (Some(team), Command::Compile) => format!("{COMPILE_KEY}{}", team.0),
        (Some(_), _) => TEAM_LANE.into(),
        (None, Command::Register | Command::Confirm) => REGISTRATION_LANE.into(),
        (None, _) => STRANGER_LANE.into(),
    })
}

/// Gives every pending mail not seen yet its lane ([`lane_key`]), once:
/// stored with it ([`Classified::Stored`]) or only returned
/// ([`Classified::Counted`]). Returns the (id, key) of what it classified.
fn classify_pending(
    store: &Store,
    config: &Config,
    classified: Classified,
) -> Result<Vec<(i64, String)>, StoreError> {
    let conn = store.conn();
    let fresh = db::unclassified_inbox_ids(conn)?;
    let mut keys = Vec::with_capacity(fresh.len());
    // Read and classify first, then write every key in one short
    // transaction: the compile workers' commits never wait for the
    // parsing of a flood.
    for id in fresh {
        let Some(row) = db::pending_inbox_row(conn, id)? else {
            continue;
        };
        keys.push((id, lane_key(conn, config, &row)?));
    }
    if classified == Classified::Stored && !keys.is_empty() {
        let tx = conn.unchecked_transaction()?;
        for (id, key) in &keys {
            db::set_queue_key(&tx, *id, key)?;
        }
        tx.commit()?;
    }
    Ok(keys)
}

/// The compile requests of proven teams waiting in the inbox, oldest
/// first. A pending mail is read and authenticated once, when first seen,
/// and its lane stored with it: each later call reads only keys from an
/// index, so a cycle costs the same whatever waits (issue 35: 2000
/// waiting 58 kB heads were all parsed again every cycle). A stranger's
/// "please compile" (no valid `<<FROM>>` line) never queues: the quick
/// pass answers it.
pub fn pending_compiles(
    store: &Store,
    config: &Config,
    classified: Classified,
) -> Result<Vec<QueuedCompile>, StoreError> {
    let counted = classify_pending(store, config, classified)?;
    let mut queued = db::pending_with_queue_key(store.conn(), COMPILE_KEY)?;
    if classified == Classified::Counted {
        queued.extend(counted);
    }
    queued.sort_by_key(|(id, _)| *id);
    Ok(queued
        .into_iter()
        .filter_map(|(inbox_id, key)| {
            let team = key.strip_prefix(COMPILE_KEY)?.parse().ok()?;
            Some(QueuedCompile {
                inbox_id,
                team: TeamId(team),
            })
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

pub use super::sender::sender_key;

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

/// Why no reply of `budget` may go to `sender_key` now, or `None`:
/// strangers' replies are capped per sender (`+tag` and case folded), per
/// domain and in all; a registered mailbox's per sender only; a proven
/// team's by its own daily budget; a kept registration's and contest mails
/// never.
fn reply_gate(
    conn: &rusqlite::Connection,
    config: &Config,
    budget: Budget,
    sender_key: &str,
    now: DateTime<Utc>,
) -> Result<Option<String>, ProcessError> {
    let domain = sender_key.rsplit_once('@').map_or("", |(_, d)| d);
    let limits = &config.limits;
    let since = now - Duration::days(1);
    let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
    let per_sender = || -> Result<Option<String>, ProcessError> {
        Ok(capped(
            limits.replies_per_sender_per_day,
            db::replies_since(conn, sender_key, since)?,
        )
        .then(|| {
            format!(
                "{} replies to this sender today already",
                limits.replies_per_sender_per_day
            )
        }))
    };
    Ok(match budget {
        Budget::Contest | Budget::Registration => None,
        Budget::Team(team) => capped(
            limits.replies_per_team_per_day,
            db::team_replies_since(conn, team, since)?,
        )
        .then(|| {
            format!(
                "{} replies to this team today already",
                limits.replies_per_team_per_day
            )
        }),
        Budget::Confirmed => per_sender()?,
        Budget::Strangers => {
            if let Some(why) = per_sender()? {
                Some(why)
            } else if capped(
                limits.replies_per_domain_per_day,
                db::replies_to_domain_since(conn, domain, since)?,
            ) {
                Some(format!(
                    "{} replies to senders at {domain} today already",
                    limits.replies_per_domain_per_day
                ))
            } else if capped(
                limits.stranger_replies_per_day,
                db::stranger_replies_since(conn, since)?,
            ) {
                Some(format!(
                    "{} replies to strangers today already, the most in a day",
                    limits.stranger_replies_per_day
                ))
            } else {
                None
            }
        }
    })
}

/// Queues the replies (within the budget they draw from, and the kits'
/// caps) and sets the mail's final state, on the caller's transaction.
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
    // A From line naming a registered team's mailbox is still a claim,
    // but its replies go to that team: strangers' caps on its domain and
    // in all do not apply to it.
    let budget = match effect.budget {
        Budget::Strangers if db::count_registrations_of_mailbox(conn, &sender_key)? > 0 => {
            Budget::Confirmed
        }
        b => b,
    };
    let limits = &config.limits;
    let mut outcome = effect.outcome;
    let since = now - Duration::days(1);
    let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
    if let Some(why) = reply_gate(conn, config, budget, &sender_key, now)? {
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
            let counted_for = matches!(budget, Budget::Strangers | Budget::Confirmed)
                .then_some(sender_key.as_str());
            enqueue(
                conn,
                &config.contest,
                reply,
                Cause {
                    inbox_id: Some(row.id),
                    budget,
                    sender_key: counted_for,
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

    /// The authentification string of team `name` in these tests.
    fn auth(name: &str) -> String {
        format!("Zq4vX9pL2mK8{name}")
    }

    /// A registered team `name` at `name@lords.example` whose
    /// authentification string is [`auth`]`(name)`.
    fn team(store: &Store, name: &str) -> TeamId {
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
}
