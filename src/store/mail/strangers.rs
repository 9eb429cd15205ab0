//! The strangers' daily budget's rows (schema 0031): a stranger's mail
//! taken in whole is charged to its folded sender and domain; past the
//! budget a stranger's mail is kept as its de-duplication key only
//! (`insert_inbox_key_only`, beside `insert_inbox` in `store/mail.rs`).
//! A mail that only claims a registered team's mailbox is charged to that
//! mailbox's share instead (`claimed_mailbox`), and a mail proven by a
//! team's string to that team's share (`proven_team`, schema 0032).
//! Which mail is a stranger's and what the budget is: `mail::admission`.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};

use crate::store::{timestamp, Result};
use crate::tournament::TeamId;

/// Whose share of the strangers' budget a count reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrangerShare<'a> {
    /// Every stranger's mail.
    Everyone,
    /// The mails of one folded sender address.
    Sender(&'a str),
    /// The mails of every sender at one domain.
    Domain(&'a str),
    /// The mails that only claim one registered team's mailbox (a share
    /// of its own, apart from the strangers': neither uses up the other).
    ClaimedMailbox(&'a str),
    /// The mails proven by one team's string (a share of the team's own,
    /// which only the string spends).
    Team(TeamId),
}

/// How many strangers' mails were taken in whole, charged to `share`,
/// since `since` (one of the partial indexes of 0031: only charged rows
/// of that window are read).
pub fn strangers_taken_since(
    conn: &Connection,
    share: StrangerShare<'_>,
    since: DateTime<Utc>,
) -> Result<u32> {
    let since = timestamp(since);
    // Each filter names its partial index's condition, so that the count
    // reads only the charged rows of that index.
    let (filter, key): (_, Option<&dyn rusqlite::ToSql>) = match &share {
        StrangerShare::Everyone => ("stranger_sender IS NOT NULL", None),
        StrangerShare::Sender(s) => (
            "stranger_sender IS NOT NULL AND stranger_sender = ?2",
            Some(s),
        ),
        StrangerShare::Domain(d) => (
            "stranger_sender IS NOT NULL AND stranger_domain = ?2",
            Some(d),
        ),
        StrangerShare::ClaimedMailbox(m) => (
            "claimed_mailbox IS NOT NULL AND claimed_mailbox = ?2",
            Some(m),
        ),
        StrangerShare::Team(t) => ("proven_team IS NOT NULL AND proven_team = ?2", Some(&t.0)),
    };
    let sql = format!("SELECT COUNT(*) FROM inbox WHERE {filter} AND received_at >= ?1");
    let mut st = conn.prepare_cached(&sql)?;
    let n = match key {
        None => st.query_row([&since], |r| r.get(0))?,
        Some(k) => st.query_row(params![since, k], |r| r.get(0))?,
    };
    Ok(n)
}

/// Charges the stored mail `id`, which only claims the registered mailbox
/// `mailbox`, to that mailbox's share (on the transaction that stored it).
pub fn charge_claimed(conn: &Connection, id: i64, mailbox: &str) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET claimed_mailbox = ?2 WHERE id = ?1",
        params![id, mailbox],
    )?;
    Ok(())
}

/// Charges the stored mail `id`, proven by the string of `team`, to that
/// team's share (on the transaction that stored it).
pub fn charge_team(conn: &Connection, id: i64, team: TeamId) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET proven_team = ?2 WHERE id = ?1",
        params![id, team.0],
    )?;
    Ok(())
}

/// Charges the stored mail `id` to the strangers' budget of `sender` and
/// `domain` (on the transaction that stored it).
pub fn charge_stranger(conn: &Connection, id: i64, sender: &str, domain: &str) -> Result<()> {
    conn.execute(
        "UPDATE inbox SET stranger_sender = ?2, stranger_domain = ?3 WHERE id = ?1",
        params![id, sender, domain],
    )?;
    Ok(())
}
