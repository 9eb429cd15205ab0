//! Sealing: a processed mail's authentification strings overwritten in the
//! transaction that sets its final state ([`seal_inbox`]), and the
//! one-time sealing of what an older version left whole
//! ([`seal_backlog`]).
//!
//! Not here: finding and masking the strings (`mail::secrets`, pure), and
//! sealing sent mails (`delivery`).

use super::error::ProcessError;
use crate::config::Config;
use crate::mail::secrets::{mask_known, seal, seal_with, Look};
use crate::store::mail::{self as db, InboxRow};
use crate::store::Store;

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
pub(super) fn seal_inbox(
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
