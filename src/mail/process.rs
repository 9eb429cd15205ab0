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
//! charged to a budget ([`Budget`](super::commands::Budget)): a
//! stranger's is capped per sender (`user+tag@` counts as `user@`), per
//! sender domain and in all, the 142 kB kit harder still; a registered
//! mailbox's per address; a proven
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
//!
//! A mail done or ignored keeps its row `limits.keep_inbox_days` (90)
//! days after its processing; then [`forget_processed_mails`], called by
//! the server when no mail waits, deletes it, its key with it.
//!
//! The files: this one runs passes and counts each mail's attempts;
//! `lanes.rs` classifies pending mails into lanes and lists the queued
//! compile requests; `one.rs` processes one mail; `reply.rs` charges and
//! queues its replies; `seal.rs` seals; `error.rs` is [`ProcessError`].

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::referee::RefereeConfig;
use crate::store::mail as db;
use crate::store::mail::InboxRow;
use crate::store::Store;

mod error;
mod lanes;
mod one;
mod reply;
mod seal;

pub use error::ProcessError;
use lanes::{classify_pending, COMPILE_KEY};
pub use lanes::{pending_compiles, Classified, QueuedCompile};
use one::{process_one, set_aside};
pub use one::{record_unreadable, DROPPED_UNANSWERABLE};
pub use seal::seal_backlog;

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
    // Strangers' heads that are due (an index of them: nothing else read).
    db::forget_heads_due(store.conn(), now())?;
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

/// How many batches one call of [`forget_processed_mails`] deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batches {
    /// One batch (the serve loop, when no mail waits: the next batch goes
    /// after the mails that arrived meanwhile).
    One,
    /// Every batch due (a single cycle: `serve --once`, the demo).
    All,
}

/// Deletes the rows of the mails done or ignored `keep_inbox_days` or
/// more days before `now` (`store::mail::forget_processed_due`), in
/// batches of [`db::PROCESSED_ROWS_BATCH`], each its own transaction: a
/// kill between two leaves the batches before it done and the rest due for
/// the next pass, one during a batch leaves that batch undone. Reads only
/// the rows due. A `keep_inbox_days` reaching before the calendar's start
/// keeps every mail. Then the key rows of mails past their budget kept
/// [`db::KEY_ROW_DAYS`] days or more, the same way. Returns how many rows
/// were deleted: with [`Batches::One`], at least
/// [`db::PROCESSED_ROWS_BATCH`] when a batch was full (more may be due).
pub fn forget_processed_mails(
    store: &Store,
    keep_inbox_days: u32,
    now: DateTime<Utc>,
    batches: Batches,
) -> Result<usize, crate::store::StoreError> {
    let deleted = match now.checked_sub_signed(chrono::Duration::days(i64::from(keep_inbox_days))) {
        Some(due) => in_batches(store, batches, |tx| {
            db::forget_processed_due(tx, due, db::PROCESSED_ROWS_BATCH)
        })?,
        None => 0,
    };
    if deleted > 0 {
        tracing::info!("{deleted} mails processed {keep_inbox_days} days ago or more deleted");
    }
    // One batch a call, and it was full: the rest (and the key rows) next.
    if batches == Batches::One && deleted == db::PROCESSED_ROWS_BATCH {
        return Ok(deleted);
    }
    // The key rows of mails past their budget go sooner (never answered:
    // they only outlive a mailer's retries), in batches as above.
    let due = now - chrono::Duration::days(db::KEY_ROW_DAYS);
    let keys = in_batches(store, batches, |tx| {
        db::forget_key_rows_due(tx, due, db::PROCESSED_ROWS_BATCH)
    })?;
    if keys > 0 {
        tracing::info!(
            "{keys} key rows of mails past their budget, {} days old or more, deleted",
            db::KEY_ROW_DAYS
        );
    }
    Ok(deleted + keys)
}

/// Runs `batch` (which deletes at most [`db::PROCESSED_ROWS_BATCH`] rows
/// and says how many) each on a transaction of its own, once or until a
/// batch is not full; returns the rows deleted.
fn in_batches(
    store: &Store,
    batches: Batches,
    mut batch: impl FnMut(&rusqlite::Connection) -> Result<usize, crate::store::StoreError>,
) -> Result<usize, crate::store::StoreError> {
    let mut deleted = 0;
    loop {
        let tx = store.conn().unchecked_transaction()?;
        let n = batch(&tx)?;
        tx.commit()?;
        deleted += n;
        if n < db::PROCESSED_ROWS_BATCH || batches == Batches::One {
            return Ok(deleted);
        }
    }
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

pub use super::sender::sender_key;

#[cfg(test)]
pub(crate) mod tests;
