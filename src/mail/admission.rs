//! The strangers' daily budget, at intake (issue 38): before a mail costs
//! a row of its full size, it is judged a participant's or a stranger's,
//! and a stranger's past the budget is kept as its de-duplication key
//! only.
//!
//! A proven mail is one carrying the authentification string of a
//! registered team (its `<<FROM>>` line, or a source's header; a
//! machine's mail only if the team's program sent it:
//! `commands::proving_team`), one that
//! answers a confirmation request (its code, from the address the request
//! went to), or the organizer's round summary with its pause token
//! (`<<RSM>>`) while the round's RSM has not gone out (a spent token proves
//! nothing). A code and a token are one-time secrets, spent when their
//! mail is processed: each proves one mail at a time, never a second
//! while a mail it proved waits to be processed (the copies of a flood are
//! the strangers' or the claims' they are); a code proves no second mail
//! at all (processing may end its mail without spending it). It never counts against strangers or mailboxes. One with a
//! team's string is charged to that team's own share,
//! `limits.team_mails_per_day` (five times the replies a team can get),
//! which only the string spends: past it, it is kept as its key only (a
//! hostile team cannot have every mail it sends stored whole); the others
//! are always stored whole. A mail whose
//! From (or Reply-To) line names the mailbox of a registered team whose
//! address proved itself (it answered a confirmation request, or the team
//! sent a mail with its string: `registrations.proven_at`), proven by
//! nothing itself, is a claim (its replies go to that team, as the reply
//! caps count it): it is charged to a share of that mailbox's own,
//! `limits.claimed_mails_per_mailbox_per_day`, which strangers' mails never
//! use up and which never uses up theirs; past it, it is kept as its key
//! only. So the claims' shares are as many as the teams that proved their
//! address, which a stranger cannot add to: a registration from a forged
//! address (a claim until its team's first mail with its string) gives its
//! mailbox no share, and mails naming it are strangers' (red team F11:
//! before, each forged registration bought its forger 50 whole mails a day
//! beside the strangers' budget). Every other mail is a stranger's: stored whole while the strangers' mails
//! taken in whole in the last 24 hours (the window the reply caps count)
//! are fewer than `limits.stranger_mails_per_day`, those of its domain
//! fewer than `stranger_mails_per_domain_per_day` and those of its sender
//! (case and `+tag` folded, as the reply caps fold it) fewer than
//! `stranger_mails_per_sender_per_day`, and then charged to its sender
//! and domain in the transaction that stores it (judged by reads before
//! that transaction, [`judge`], so that its first statement writes);
//! past any of them it is
//! stored as its key only ([`db::insert_inbox_key_only`]: no bytes,
//! `ignored`, the reason in its outcome), so the same mail delivered
//! again is still one mail, and never answered. The IMAP mailbox keeps
//! its whole text `imap.keep_days`, as every mail taken in.
//!
//! The key rows are bounded too: at most `limits.stranger_keys_per_day`
//! in 24 hours (the record of a flood), each deleted
//! [`db::KEY_ROW_DAYS`] after it came. Past that bound a mail is not
//! stored at all ([`Verdict::Unkept`]): only counted on its day
//! (`inbox_unkept`, one row a day). It was never processed, so whatever
//! delivers it again (a retry, the IMAP mailbox read again) brings a mail
//! judged again, processed at most once: nothing twice.
//!
//! Judging costs what the lanes' classification costs: one parse of a
//! mail of at most `max_mail_bytes`, one indexed look-up of a registered
//! mailbox, and one of a team or a confirmation code when the mail claims
//! one; counting costs three range reads of partial indexes holding only
//! the charged rows of the window (at most the budget's count).
//!
//! Not here: reading the mail from its transport (`intake`, the spool)
//! and the keys of the inbox (`inbox`).

use chrono::{DateTime, Duration, Utc};

use crate::config::Config;
use crate::mail::commands::{self, classify, register, rsm, Command};
use crate::mail::inbox::{arrival_keys, content_key, Capped};
use crate::mail::message;
use crate::mail::probe::{self, ProbeError, Reading};
use crate::mail::sender::sender_key;
use crate::store::mail::{self as db, Arrival, StrangerShare};
use crate::store::StoreError;
use crate::tournament::TeamId;

/// Whose mail a mail is, for the strangers' budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Proven by the string of `team`: charged to that team's own share.
    Team { team: TeamId },
    /// Proven by a one-time secret: a confirmation request's code or a
    /// round's pause token (`key` names which: the code's SHA-256, or
    /// `rsm:TOURNAMENT:ROUND`). Never counted, but marked with `key`, so that
    /// the secret proves no other mail while this one waits to be
    /// processed (processing spends it).
    OneTime { key: String },
    /// Naming the mailbox (folded) of a registered team whose address
    /// proved itself, proven by nothing: charged to that mailbox's share.
    Claimed { mailbox: String },
    /// A stranger's: charged to its folded sender and its domain (both
    /// empty for a mail without an address).
    Stranger { sender: String, domain: String },
}

/// How many mails a one-time secret proves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Once {
    /// The first taken in with it, whatever became of it (a confirmation
    /// code: what its answer's processing does with it is not the
    /// intake's to foresee).
    Ever,
    /// One while it waits to be processed (the pause token: a refused
    /// summary leaves room for the organizer's corrected one).
    AtATime,
}

/// Whose mail `mail` is (see the module's description).
pub fn standing(
    conn: &rusqlite::Connection,
    config: &Config,
    mail: &Capped,
    now: DateTime<Utc>,
) -> Result<Standing, StoreError> {
    let limits = message::Limits {
        max_mail_bytes: config.limits.max_mail_bytes,
        ..message::Limits::default()
    };
    let stranger = |address: &str| {
        let sender = sender_key(address);
        let domain = sender.rsplit_once('@').map_or("", |(_, d)| d).to_string();
        Standing::Stranger { sender, domain }
    };
    let Ok(parsed) = message::parse(&mail.bytes, config.contest.loop_id.as_str(), &limits) else {
        return Ok(stranger(""));
    };
    let address = match parsed.answerable_address() {
        Ok(mb) => mb.address.clone(),
        Err(_) => parsed
            .from
            .as_ref()
            .map(|mb| mb.address.clone())
            .unwrap_or_default(),
    };
    // A mail over the size cap is its header part only: no string to read.
    // A team's program's mail is the team's (`commands::proving_team`).
    let command = classify(&parsed.subject);
    if mail.full_size.is_none() {
        if let Some(team) = commands::proving_team(conn, config, &parsed, command)? {
            return Ok(Standing::Team { team });
        }
    }
    if mail.full_size.is_none() && parsed.automatic.is_none() {
        // A one-time secret proves one mail at a time: the secret is spent
        // only when its mail is processed, and the intake takes in every
        // mail waiting before that, so a copy (any number of them) taken
        // in while a mail it proved waits is the stranger's or the
        // claim's it is (red team E12). A confirmation code proves one
        // mail ever: processing may end its mail without spending it (a
        // Reply-To that cannot be answered is dropped, while the code was
        // read with the From line's address: red team E13).
        let key = match command {
            Command::Confirm => {
                register::answered_request(conn, config, &parsed.subject, &address, now)?.map(
                    |_| {
                        (
                            register::answer_code_hash(config, &parsed.subject),
                            Once::Ever,
                        )
                    },
                )
            }
            // The pause token is one time only: once the round's RSM went
            // out, a summary with it is refused and proves nothing here
            // either (a kept copy of the organizer's mail is a stranger's).
            // A refused summary leaves it unspent, so that the organizer's
            // corrected one is proven (E12's decision).
            Command::Rsm => rsm::authentic(conn, &config.contest.organizer, &parsed)?
                .filter(|(round, _)| round.sent_at.is_none())
                .map(|(round, _)| {
                    (
                        format!("rsm:{}:{}", round.tournament_id, round.round),
                        Once::AtATime,
                    )
                }),
            _ => None,
        };
        if let Some((key, once)) = key {
            let used = match once {
                Once::Ever => db::one_time_ever_proven(conn, &key)?,
                Once::AtATime => db::one_time_waiting(conn, &key)?,
            };
            if !used {
                return Ok(Standing::OneTime { key });
            }
        }
    }
    // Only a proven registration's mailbox has a share of its own: one a
    // From line alone registered is a stranger's making (red team F11), so
    // mails naming it are strangers' mails, within the strangers' budget.
    let key = sender_key(&address);
    if !key.is_empty() && db::count_proven_registrations_of_mailbox(conn, &key)? > 0 {
        return Ok(Standing::Claimed { mailbox: key });
    }
    Ok(stranger(&address))
}

/// Why a mail of `standing` is past its budget at `now`, or `None`: a
/// stranger's by its sender's share, then its domain's, then all
/// strangers' mails of the last 24 hours; a claimed mailbox's by that
/// mailbox's share; a team's by the team's share; another proven mail
/// never.
pub fn past_budget(
    conn: &rusqlite::Connection,
    config: &Config,
    standing: &Standing,
    now: DateTime<Utc>,
) -> Result<Option<String>, StoreError> {
    let limits = &config.limits;
    let since = now - Duration::days(1);
    let shares = match standing {
        Standing::OneTime { .. } => vec![],
        Standing::Team { team } => vec![(
            limits.team_mails_per_day,
            StrangerShare::Team(*team),
            "with this team's string",
            "the team's share",
        )],
        Standing::Claimed { mailbox } => vec![(
            limits.claimed_mails_per_mailbox_per_day,
            StrangerShare::ClaimedMailbox(mailbox),
            "naming this team's mailbox without the team's string",
            "the mailbox's share",
        )],
        Standing::Stranger { sender, domain } => vec![
            (
                limits.stranger_mails_per_sender_per_day,
                StrangerShare::Sender(sender),
                "from this sender",
                "the strangers' budget",
            ),
            (
                limits.stranger_mails_per_domain_per_day,
                StrangerShare::Domain(domain),
                "from senders at this domain",
                "the strangers' budget",
            ),
            (
                limits.stranger_mails_per_day,
                StrangerShare::Everyone,
                "from strangers in all",
                "the strangers' budget",
            ),
        ],
    };
    for (cap, share, whose, budget) in shares {
        if cap > 0 && db::strangers_taken_since(conn, share, since)? >= cap {
            return Ok(Some(format!(
                "not taken in: {cap} mails {whose} in 24 hours already ({budget}); kept as its key only"
            )));
        }
    }
    Ok(None)
}

/// What the intake does with a mail: judged by reads only, before the
/// transaction that stores it, so that the transaction's first statement
/// writes (a transaction of SQLite's WAL that read first cannot take the
/// write lock once another connection committed: it would fail, not
/// wait). Only the intake charges rows, one mail at a time, so the counts
/// cannot change between the verdict and the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Stored whole; a stranger's charged to its sender and domain, a
    /// claim to its mailbox, a team's to the team.
    Whole(Standing),
    /// A stranger's past the budget: stored as its key only, the reason
    /// its outcome.
    KeyOnly(String),
    /// A mail its probe did not read ([`probe`]), whoever sent it: stored
    /// as its key only, the reason its outcome, its keys taken without a
    /// parse (its content's SHA-256, no Message-ID: `mail-parser` never
    /// reads a byte of it in the server's process).
    Unread(String),
    /// Past the budget and past the key rows' bound: not stored, only
    /// counted on its day; the reason for the log.
    Unkept(String),
}

/// What [`store_judged`] did with a mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Stored whole: the inbox row's id.
    Whole(i64),
    /// Stored as its key only: the row's id.
    KeyOnly(i64),
    /// The same mail was stored before (whole or as its key).
    Again,
    /// Not stored: past the key rows' bound, only counted.
    Unkept,
}

impl Taken {
    /// The row stored now, if any.
    pub fn stored(self) -> Option<i64> {
        match self {
            Taken::Whole(id) | Taken::KeyOnly(id) => Some(id),
            Taken::Again | Taken::Unkept => None,
        }
    }
}

/// Why a mail could not be judged: the database, or the probe of a large
/// mail (the server's trouble: the mail stays where it came from and is
/// judged again at the next take-in).
#[derive(Debug, thiserror::Error)]
pub enum AdmissionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
}

/// Judges a mail read within its cap (reads only): whose it is, and for a
/// stranger's whether the budget has room. A mail over
/// [`probe::PROBED_FROM_BYTES`] is first parsed in a probe under a CPU
/// budget ([`probe`]); one the probe could not parse within it is never
/// parsed here: whoever sent it, it is kept as its key only (or, past
/// the key rows' bound, only counted), never answered.
pub fn judge(
    conn: &rusqlite::Connection,
    config: &Config,
    mail: &Capped,
    now: DateTime<Utc>,
) -> Result<Verdict, AdmissionError> {
    let reading = probe::reading(&mail.bytes)?;
    if let Some(why) = reading.why_unread(mail.bytes.len()) {
        if let Reading::Ended { .. } = reading {
            tracing::warn!("a mail's probe ended otherwise than by its budget: {why}");
        }
        let why = format!("not taken in: {why}; kept as its key only");
        return Ok(match key_only_or_unkept(conn, config, why, now)? {
            Verdict::KeyOnly(why) => Verdict::Unread(why),
            unkept => unkept,
        });
    }
    let standing = standing(conn, config, mail, now)?;
    if let Some(why) = past_budget(conn, config, &standing, now)? {
        return Ok(key_only_or_unkept(conn, config, why, now)?);
    }
    Ok(Verdict::Whole(standing))
}

/// A mail not taken in whole for `why`: its key row, or past the key rows'
/// bound only its count.
fn key_only_or_unkept(
    conn: &rusqlite::Connection,
    config: &Config,
    why: String,
    now: DateTime<Utc>,
) -> Result<Verdict, StoreError> {
    let cap = config.limits.stranger_keys_per_day;
    if cap > 0 && db::keys_kept_since(conn, now - Duration::days(1))? >= cap {
        return Ok(Verdict::Unkept(why));
    }
    Ok(Verdict::KeyOnly(why))
}

/// Stores a judged mail on the caller's transaction: whole, and charged
/// when a stranger's; or as its key only; or, past the key rows' bound,
/// only counts it.
pub fn store_judged(
    conn: &rusqlite::Connection,
    verdict: &Verdict,
    origin: &str,
    imap: Option<(u32, u32)>,
    mail: &Capped,
    now: DateTime<Utc>,
) -> Result<Taken, StoreError> {
    // Its keys: a mail its probe did not read is never parsed, not even
    // its header part (a header field of encoded-word starts is quadratic).
    let (message_id, content) = match verdict {
        Verdict::Unread(_) => (None, content_key(mail)),
        Verdict::Unkept(_) => (None, String::new()),
        Verdict::Whole(_) | Verdict::KeyOnly(_) => arrival_keys(mail),
    };
    let arrival = Arrival {
        origin,
        imap,
        message_id: message_id.as_deref(),
        raw: &mail.bytes,
        content_sha256: &content,
        full_size: mail.full_size,
    };
    match verdict {
        Verdict::Whole(standing) => {
            let id = db::insert_inbox(conn, &arrival, now)?;
            match (id, standing) {
                (Some(id), Standing::Stranger { sender, domain }) => {
                    db::charge_stranger(conn, id, sender, domain)?
                }
                (Some(id), Standing::Claimed { mailbox }) => db::charge_claimed(conn, id, mailbox)?,
                (Some(id), Standing::Team { team }) => db::charge_team(conn, id, *team)?,
                (Some(id), Standing::OneTime { key }) => db::mark_one_time(conn, id, key)?,
                _ => {}
            }
            Ok(id.map_or(Taken::Again, Taken::Whole))
        }
        Verdict::KeyOnly(why) | Verdict::Unread(why) => {
            let id = db::insert_inbox_key_only(conn, &arrival, mail.size(), why, now)?;
            if id.is_some() {
                tracing::info!(origin, "a mail kept as its key only: {why}");
            }
            Ok(id.map_or(Taken::Again, Taken::KeyOnly))
        }
        Verdict::Unkept(why) => {
            // One line a day, not one a mail: the log is disk too.
            if db::count_unkept(conn, mail.size(), now)? {
                tracing::warn!(
                    origin,
                    "mails past their budget and past {} key rows in 24 hours: not stored, \
                     only counted today (knobeln status); this one: {why}",
                    "`stranger_keys_per_day`"
                );
            }
            Ok(Taken::Unkept)
        }
    }
}

/// [`judge`], then [`store_judged`] on one transaction of its own.
pub fn take_in_within_budget(
    conn: &rusqlite::Connection,
    config: &Config,
    origin: &str,
    imap: Option<(u32, u32)>,
    mail: &Capped,
    now: DateTime<Utc>,
) -> Result<Taken, AdmissionError> {
    let verdict = judge(conn, config, mail, now)?;
    let tx = conn.unchecked_transaction().map_err(StoreError::from)?;
    let id = store_judged(&tx, &verdict, origin, imap, mail, now)?;
    tx.commit().map_err(StoreError::from)?;
    Ok(id)
}

#[cfg(test)]
mod tests;
