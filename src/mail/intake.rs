//! Taking mail in from the contest's IMAP mailbox, on a thread of its own.
//!
//! [`Intake::start`] runs one long-lived IMAP session: it takes in every
//! new mail (each stored with the new mailbox position in one transaction,
//! then flagged `\Seen`; removed from the mailbox `imap.keep_days` after it
//! arrived, [`take_in_all`], looked for once a day, [`Removals`]), wakes
//! the server's loop through a channel, and
//! waits for the next mail in IMAP IDLE (RFC 2177), renewed every
//! `imap.idle_renew_secs` (25 minutes; servers may drop an idle client
//! after 30), or, where the server lacks IDLE (or `imap.idle = false`),
//! polls every `imap.poll_secs`. When anything fails (the server is down,
//! refuses the login, hangs up, the database is busy), the session is
//! dropped and a new one is tried after the [`Side`]'s backoff (1 s
//! doubling to 5 minutes), with one log line per change of state. The
//! server's loop meanwhile goes on processing and sending: the take-in and
//! the sending fail independently.
//!
//! [`take_in_all`] is the take-in itself, also used once by
//! `serve --once`.
//!
//! Deliberately not here: processing the stored mails (the server's loop
//! does it when woken), sending, and the IMAP protocol (`transport::imap`).

use std::sync::mpsc::Sender;
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use mail_parser::MessageParser;

use crate::config::{Config, ImapConfig};
use crate::mail::admission::{judge, store_judged, Taken, Verdict};
use crate::mail::inbox::Capped;
use crate::mail::outage::Side;
use crate::mail::process::{record_unreadable, ProcessError};
use crate::mail::transport::imap::{IdleOutcome, ImapError, ImapPoller, Stop};
use crate::store::mail::{imap_position, set_imap_position};
use crate::store::{Store, StoreError};

/// Why a take-in stopped.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error(transparent)]
    Imap(#[from] ImapError),
    #[error(transparent)]
    Admission(#[from] crate::mail::admission::AdmissionError),
    #[error("storing a mail: {0}")]
    Store(#[from] StoreError),
    #[error("storing a mail: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("recording an unreadable mail: {0}")]
    Process(#[from] ProcessError),
}

/// What the intake tells the server's loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// This many new mails are stored: process them.
    Stored(usize),
    /// A compile worker is done: its reply waits in the outbox, and its
    /// slot is free.
    CompileDone,
}

/// How many mails one FETCH asks for.
const BATCH: usize = 50;

/// Takes in every mail above the stored position of the configured
/// mailbox: each is stored with the new position in one transaction, then
/// flagged `\Seen`. Then the mails taken in (at or below the position)
/// that arrived more than `imap.keep_days` whole days ago (by the day of
/// their arrival, IMAP's `BEFORE`; 0: all of them at once) leave
/// the mailbox ([`ImapPoller::remove_taken`]; looked for at the first
/// take-in of each day only, [`Removals`]): the database keeps a
/// processed mail's first 4 KiB only, so the mailbox is where its whole
/// text is read for those days, and what a restored backup takes in again;
/// after, the mailbox holds no more than those days' mail. A server killed
/// between a mail's commit and its flag or removal leaves nothing behind:
/// the next take-in removes what is due. A mail the server cannot deliver is recorded as
/// unreadable (the organizer is told) and passed. Returns how many new
/// mails were stored (duplicates are not counted).
pub fn take_in_all(
    store: &mut Store,
    config: &Config,
    cfg: &ImapConfig,
    poller: &mut ImapPoller,
    removals: &mut Removals,
) -> Result<usize, IntakeError> {
    let origin = format!("imap:{}", cfg.mailbox);
    // A mail over the cap is not downloaded, only its header part.
    poller.set_size_cap(config.limits.max_mail_bytes);
    let mut stored = 0;
    loop {
        let pos = imap_position(store.conn(), &cfg.mailbox)?;
        let (known, after) = match pos {
            Some((v, u)) => (Some(v), u),
            None => (None, 0),
        };
        let (uidvalidity, batch) = match poller.fetch_new(known, after, BATCH) {
            Ok(x) => x,
            Err(ImapError::BrokenFetch {
                uidvalidity,
                uid,
                why,
            }) => {
                // Never "no mail", never stuck on it: keep a record, tell
                // the organizer, and move past it.
                tracing::warn!(
                    uid,
                    "IMAP: a mail the server cannot deliver is set aside: {why}"
                );
                record_unreadable(
                    store,
                    config,
                    &origin,
                    Some((uidvalidity, uid)),
                    &why,
                    Utc::now(),
                )?;
                set_imap_position(store.conn(), &cfg.mailbox, uidvalidity, uid)?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if batch.is_empty() {
            if known != Some(uidvalidity) {
                set_imap_position(store.conn(), &cfg.mailbox, uidvalidity, 0)?;
            }
            if let Some((v, upto)) = imap_position(store.conn(), &cfg.mailbox)? {
                let removed = removals.remove_due(poller, cfg.keep_days, v, upto, Utc::now())?;
                if removed > 0 {
                    tracing::info!(removed, "IMAP: mails taken in left the mailbox");
                }
            }
            return Ok(stored);
        }
        for f in &batch {
            let mail = match f.full_size {
                // Only its header part was downloaded.
                // As the spool's: at most `MAX_HEADER_BYTES` of it (a mail
                // without a blank line is all header to an IMAP server).
                Some(size) => Capped {
                    bytes: crate::mail::inbox::header_part(&f.raw).to_vec(),
                    full_size: Some(size),
                },
                None => Capped::from_bytes(&f.raw, config.limits.max_mail_bytes),
            };
            // Within the strangers' budget (`admission`), judged by reads
            // before the transaction: a stranger's mail past it is stored
            // as its key only, and the position moves past it all the same
            // (the mailbox keeps its text).
            let now = Utc::now();
            let verdict = judge(store.conn(), config, &mail, now)?;
            // Store the mail and the new position together; then flag it.
            let tx = store.conn_mut().transaction()?;
            let id = store_judged(
                &tx,
                &verdict,
                &origin,
                Some((f.uidvalidity, f.uid)),
                &mail,
                now,
            )?;
            set_imap_position(&tx, &cfg.mailbox, f.uidvalidity, f.uid)?;
            tx.commit()?;
            match id {
                Taken::Whole(id) => {
                    stored += 1;
                    tracing::info!(
                        inbox = id,
                        uid = f.uid,
                        "mail taken in: {}",
                        headline(&f.raw)
                    );
                }
                // Said by `store_judged` (a key row), or once a day (unkept).
                Taken::KeyOnly(_) => stored += 1,
                Taken::Unkept => {}
                // A mail its probe did not read is not parsed for a log line.
                Taken::Again => tracing::info!(
                    uid = f.uid,
                    "mail taken in again, a duplicate: {}",
                    match verdict {
                        Verdict::Whole(_) | Verdict::KeyOnly(_) => headline(&f.raw),
                        Verdict::Unread(_) | Verdict::Unkept(_) => "(not read)".into(),
                    }
                ),
            }
            poller.mark_stored(f.uid)?;
        }
    }
}

/// When the take-in last looked for mails due to leave the mailbox. A mail
/// falls due when a day begins (`imap.keep_days` whole days after the day
/// it arrived), so one look a day finds every mail due: the first take-in
/// of each day (UTC, the day `BEFORE` is counted from) looks, the others
/// of that day do not (a take-in runs at every poll and every IDLE
/// wake-up). Kept in memory by the take-in thread: a start looks at its
/// first take-in. With `keep_days = 0` every take-in looks (a mail goes at
/// the take-in after its own).
#[derive(Debug, Clone, Default)]
pub struct Removals {
    /// The day of the last look that went through (`None`: none yet).
    looked_on: Option<NaiveDate>,
}

impl Removals {
    /// No look yet: the first take-in looks.
    pub fn new() -> Removals {
        Removals::default()
    }

    /// The day (UTC) of the last look that went through.
    pub fn looked_on(&self) -> Option<NaiveDate> {
        self.looked_on
    }

    /// Removes the mails at or below the committed position `upto` (of
    /// UIDVALIDITY `uidvalidity`) that are due at `now`, unless this day's
    /// look was made already. Returns how many were flagged `\Deleted`.
    fn remove_due(
        &mut self,
        poller: &mut ImapPoller,
        keep_days: u32,
        uidvalidity: u32,
        upto: u32,
        now: DateTime<Utc>,
    ) -> Result<usize, ImapError> {
        let today = now.date_naive();
        if upto == 0 {
            // Nothing taken in: nothing to look for.
            return Ok(0);
        }
        let removed = match keep_days {
            0 => poller.remove_taken(uidvalidity, upto, None)?,
            _ if self.looked_on == Some(today) => 0,
            // A `keep_days` reaching before the calendar's start keeps
            // every mail.
            days => match today.checked_sub_days(chrono::Days::new(u64::from(days))) {
                Some(day) => poller.remove_taken(uidvalidity, upto, Some(day))?,
                None => 0,
            },
        };
        self.looked_on = Some(today);
        Ok(removed)
    }
}

/// `from …, "subject"` of a raw mail, for a log line (bounded work; the
/// subject cut at 80 characters, control characters escaped).
pub fn headline(raw: &[u8]) -> String {
    let cap = raw.len().min(64 * 1024);
    let Some(msg) = MessageParser::new().parse_headers(&raw[..cap]) else {
        return "(no headers)".into();
    };
    let from = msg
        .from()
        .and_then(|a| a.first())
        .and_then(|a| a.address())
        .unwrap_or("(no From)");
    let subject: String = msg.subject().unwrap_or("").chars().take(80).collect();
    format!("from {:?}, subject {:?}", truncate(from, 120), subject)
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// The take-in thread: started by the server for the `imap` transport.
pub struct Intake {
    handle: JoinHandle<()>,
    stop: Stop,
}

impl Intake {
    /// Starts the thread. It opens its own connection to the database and
    /// wakes the server's loop through `wake` whenever it stored mail.
    pub fn start(config: Config, wake: Sender<Wake>) -> std::io::Result<Intake> {
        let stop = Stop::new();
        let thread_stop = stop.clone();
        let handle = std::thread::Builder::new()
            .name("imap-intake".into())
            .spawn(move || run(&config, &wake, &thread_stop))?;
        Ok(Intake { handle, stop })
    }

    /// Stops the thread (a wait in IDLE ends at once: the socket is
    /// closed; a mail being stored is committed or not at all) and waits
    /// for it.
    pub fn stop(self) {
        self.stop.stop();
        let _ = self.handle.join();
    }

    /// Whether the thread ended (it ends only when stopped, or on a panic).
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }
}

/// How the thread waits for the next mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    Idle,
    Polling,
}

fn run(config: &Config, wake: &Sender<Wake>, stop: &Stop) {
    let cfg = config
        .imap
        .clone()
        .expect("validated: transport imap has an [imap] section");
    let addr = format!("{}:{}", cfg.host, cfg.port);
    let mut side = Side::new("IMAP take-in from", addr.clone());
    let mut store: Option<Store> = None;
    let mut poller: Option<ImapPoller> = None;
    // Over reconnections: a new session does not look again the same day.
    let mut removals = Removals::new();
    // How this connection waits, once it was said in the log.
    let mut announced: Option<Waiting> = None;
    while !stop.is_stopped() {
        let result = (|| -> Result<(), IntakeError> {
            if store.is_none() {
                store = Some(Store::open(&config.database)?);
            }
            let store = store.as_mut().expect("opened");
            if poller.is_none() {
                announced = None;
                poller = Some(ImapPoller::connect_with_stop(&cfg, stop.clone())?);
            }
            let p = poller.as_mut().expect("connected");
            let n = take_in_all(store, config, &cfg, p, &mut removals)?;
            side.succeeded();
            side.save(store.conn(), chrono::Utc::now())?;
            if n > 0 {
                let _ = wake.send(Wake::Stored(n));
            }
            let waiting = if cfg.idle && p.supports_idle()? {
                Waiting::Idle
            } else {
                Waiting::Polling
            };
            if announced != Some(waiting) {
                announced = Some(waiting);
                match waiting {
                    Waiting::Idle => tracing::info!(
                        "IMAP {addr}: logged in as {:?}; waiting for mail in {:?} with IDLE (renewed every {} s)",
                        cfg.user,
                        cfg.mailbox,
                        cfg.idle_renew_secs
                    ),
                    Waiting::Polling => tracing::info!(
                        "IMAP {addr}: logged in as {:?}; polling {:?} every {} s ({})",
                        cfg.user,
                        cfg.mailbox,
                        cfg.poll_secs,
                        if cfg.idle {
                            "the server has no IDLE"
                        } else {
                            "imap.idle = false"
                        }
                    ),
                }
            }
            match waiting {
                Waiting::Idle => {
                    let outcome = p.idle(Duration::from_secs(cfg.idle_renew_secs))?;
                    tracing::debug!("IMAP {addr}: IDLE ended: {outcome:?}");
                    if outcome == IdleOutcome::TimedOut {
                        tracing::debug!("IMAP {addr}: renewing IDLE");
                    }
                }
                Waiting::Polling => {
                    stop.sleep(Duration::from_secs(cfg.poll_secs.max(1)));
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            if stop.is_stopped() {
                break;
            }
            poller = None;
            if matches!(e, IntakeError::Store(_) | IntakeError::Sql(_)) {
                store = None;
            }
            let wait = side.failed(&e.to_string());
            if let Some(s) = &store {
                if let Err(e) = side.save(s.conn(), chrono::Utc::now()) {
                    tracing::warn!("recording the take-in's outage: {e}");
                }
            }
            stop.sleep(wait);
        }
    }
    if let Some(p) = poller {
        p.logout();
    }
}
