//! The stored mails and programs that sealing a backlog rewrites (raw
//! mails, sources, bot programs), and the one-time maintenance tasks that
//! ask for it.
//!
//! Not here: what sealing does to a mail (`mail::secrets`) or when it runs
//! (`mail::process::seal_backlog`).

use rusqlite::{params, Connection, OptionalExtension};

use crate::store::Result;

/// Replaces the stored bytes of an incoming mail (its sealed form).
pub fn set_inbox_raw(conn: &Connection, id: i64, raw: &[u8]) -> Result<()> {
    conn.execute("UPDATE inbox SET raw = ?2 WHERE id = ?1", params![id, raw])?;
    Ok(())
}

/// Replaces the stored bytes of an outgoing mail (its sealed form): the
/// shared parts it still carries unchanged stay shared, the others are
/// forgotten, and a body no other mail carries is deleted with them
/// (`bodies::reshare`).
pub fn set_outbox_raw(conn: &Connection, id: i64, raw: &[u8]) -> Result<()> {
    let rest = super::bodies::reshare(conn, id, raw)?;
    conn.execute(
        "UPDATE outbox SET raw = ?2 WHERE id = ?1",
        params![id, rest],
    )?;
    Ok(())
}

/// Whether a one-time maintenance task (see `schema/0008_seal_backlog.sql`)
/// is still to be done.
pub fn task_pending(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM maintenance_tasks WHERE name = ?1",
            [name],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

pub fn task_done(conn: &Connection, name: &str) -> Result<()> {
    conn.execute("DELETE FROM maintenance_tasks WHERE name = ?1", [name])?;
    Ok(())
}

/// Stored raw mails in the given states: (id, raw), for sealing a backlog
/// (an outgoing mail only while its bytes are kept).
pub fn raw_mails(
    conn: &Connection,
    table: MailTable,
    states: &[&str],
) -> Result<Vec<(i64, Vec<u8>)>> {
    // A sent mail whose bytes were removed (`keep_sent_days`, schema
    // 0029) has nothing left to seal.
    let (name, kept) = match table {
        MailTable::Inbox => ("inbox", ""),
        MailTable::Outbox => ("outbox", " AND body_removed_at IS NULL"),
    };
    let list = states
        .iter()
        .map(|s| format!("'{}'", s.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ");
    let mut st = conn.prepare(&format!(
        "SELECT id, raw FROM {name} WHERE state IN ({list}){kept} ORDER BY id"
    ))?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let rows: Vec<(i64, Vec<u8>)> = rows.collect::<std::result::Result<_, _>>()?;
    match table {
        MailTable::Inbox => Ok(rows),
        // An outgoing mail whole, its shared parts put back.
        MailTable::Outbox => rows
            .into_iter()
            .map(|(id, raw)| Ok((id, super::bodies::assemble(conn, id, raw)?)))
            .collect(),
    }
}

/// The two tables of raw mails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailTable {
    Inbox,
    Outbox,
}

/// What a strategy version stores of its source: (id, source, report
/// JSON, description).
pub type StoredSource = (i64, Vec<u8>, Option<String>, Option<String>);

pub fn stored_sources(conn: &Connection) -> Result<Vec<StoredSource>> {
    let mut st =
        conn.prepare("SELECT id, source, report, description FROM strategy_versions ORDER BY id")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The built programs of bots (JSON): (version id, program).
pub fn bot_program_binaries(conn: &Connection) -> Result<Vec<(i64, Vec<u8>)>> {
    let mut st = conn.prepare(
        "SELECT v.id, v.binary FROM strategy_versions v JOIN bot_programs b \
         ON b.version_id = v.id WHERE v.binary IS NOT NULL ORDER BY v.id",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub fn set_version_binary(conn: &Connection, id: i64, binary: &[u8]) -> Result<()> {
    conn.execute(
        "UPDATE strategy_versions SET binary = ?2 WHERE id = ?1",
        params![id, binary],
    )?;
    Ok(())
}

pub fn set_stored_source(conn: &Connection, v: &StoredSource) -> Result<()> {
    conn.execute(
        "UPDATE strategy_versions SET source = ?2, report = ?3, description = ?4 WHERE id = ?1",
        params![v.0, v.1, v.2, v.3],
    )?;
    Ok(())
}
