//! The mail server loop: take mail in (spool folder or IMAP), process it,
//! send what the outbox holds (spool folder or SMTP); again and again until
//! told to stop.
//!
//! Shutdown: `serve` stops when the shutdown flag is set (SIGTERM or Ctrl-C
//! in the binary): the current cycle finishes (a mail being processed is
//! processed and committed, a mail being sent is sent and marked), then the
//! loop ends. A `kill -9` at any point loses nothing: every mail is stored
//! before processing, and processing and its replies commit together; on
//! restart, unprocessed mails are processed and unsent replies sent.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;

use crate::config::{Config, TransportKind};
use crate::mail::delivery::{flush, Deliver, DeliveryError, Flushed};
use crate::mail::inbox::take_in;
use crate::mail::process::{process_pending, ProcessError, Summary};
use crate::mail::transport::imap::ImapPoller;
use crate::mail::transport::smtp::{SendError, SmtpSender};
use crate::mail::transport::spool::{Spool, SpoolError};
use crate::referee::RefereeConfig;
use crate::store::mail::{imap_position, set_imap_position, OutRow};
use crate::store::{Store, StoreError};

/// Server faults.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("imap: {0}")]
    Imap(String),
    #[error("smtp: {0}")]
    Smtp(String),
    #[error("contest: {0}")]
    Contest(String),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

/// What one cycle did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cycle {
    pub taken_in: usize,
    pub processed: Summary,
    pub flushed: Flushed,
}

/// SMTP as a [`Deliver`] transport.
pub struct Smtp(pub SmtpSender);

impl Deliver for Smtp {
    fn deliver(&mut self, row: &OutRow, envelope_from: &str) -> Result<(), DeliveryError> {
        self.0
            .send_raw(envelope_from, &row.recipients, &row.raw)
            .map_err(|e| match e {
                SendError::Transient(m) => DeliveryError::Transient(m),
                SendError::Permanent(m) => DeliveryError::Permanent(m),
            })
    }
}

/// The running server's state.
pub struct Server {
    pub config: Config,
    pub store: Store,
    pub referee: RefereeConfig,
    /// The contest running in the background, if any.
    contest: Option<std::thread::JoinHandle<Result<(), String>>>,
    spool: Option<Spool>,
}

impl Server {
    pub fn new(config: Config, store: Store) -> Server {
        let referee = config.rules.referee();
        Server {
            config,
            store,
            referee,
            contest: None,
            spool: None,
        }
    }

    /// The spool, opened (its folders created) once.
    fn spool(&mut self) -> Result<&Spool, ServerError> {
        if self.spool.is_none() {
            self.spool = Some(Spool::open(&self.config.spool.dir)?);
        }
        Ok(self.spool.as_ref().expect("opened"))
    }

    /// Takes new mail in from the configured transport.
    pub fn take_in(&mut self) -> Result<usize, ServerError> {
        match self.config.transport {
            TransportKind::Spool => {
                let spool = self.spool()?.clone();
                Ok(spool.take_incoming(&self.store, Utc::now())?)
            }
            TransportKind::Imap => self.take_in_imap(),
        }
    }

    fn take_in_imap(&mut self) -> Result<usize, ServerError> {
        let cfg = self
            .config
            .imap
            .clone()
            .expect("validated: imap section present");
        let mut poller = ImapPoller::connect(&cfg).map_err(|e| ServerError::Imap(e.to_string()))?;
        let mut stored = 0;
        loop {
            let pos = imap_position(self.store.conn(), &cfg.mailbox)?;
            let (known, after) = match pos {
                Some((v, u)) => (Some(v), u),
                None => (None, 0),
            };
            let fetched = poller.fetch_new(known, if known.is_some() { after } else { 0 }, 50);
            let (uidvalidity, batch) = match fetched {
                Ok(x) => x,
                Err(crate::mail::transport::imap::ImapError::BrokenFetch {
                    uidvalidity: v,
                    uid,
                    why,
                }) => {
                    // Never "no mail", never stuck on it: keep a record, tell
                    // the organizer, and move past it.
                    crate::mail::process::record_unreadable(
                        &mut self.store,
                        &self.config,
                        &format!("imap:{}", cfg.mailbox),
                        Some((v, uid)),
                        &why,
                        Utc::now(),
                    )?;
                    set_imap_position(self.store.conn(), &cfg.mailbox, v, uid)?;
                    continue;
                }
                Err(e) => return Err(ServerError::Imap(e.to_string())),
            };
            if batch.is_empty() {
                if known != Some(uidvalidity) {
                    set_imap_position(self.store.conn(), &cfg.mailbox, uidvalidity, 0)?;
                }
                break;
            }
            for f in &batch {
                // Store the mail and the new position together; then flag it.
                let tx = self.store.conn_mut().transaction()?;
                if take_in(
                    &tx,
                    &format!("imap:{}", cfg.mailbox),
                    Some((f.uidvalidity, f.uid)),
                    &f.raw,
                    Utc::now(),
                )?
                .is_some()
                {
                    stored += 1;
                }
                set_imap_position(&tx, &cfg.mailbox, f.uidvalidity, f.uid)?;
                tx.commit()?;
                poller
                    .mark_stored(f.uid)
                    .map_err(|e| ServerError::Imap(e.to_string()))?;
            }
        }
        poller.logout();
        Ok(stored)
    }

    /// Processes every stored, unprocessed mail.
    pub fn process(&mut self) -> Result<Summary, ServerError> {
        Ok(process_pending(
            &mut self.store,
            &self.config,
            &self.referee,
            &Utc::now,
        )?)
    }

    /// Sends what is due in the outbox through the configured transport.
    pub fn flush(&mut self) -> Result<Flushed, ServerError> {
        match self.config.transport {
            TransportKind::Spool => {
                let mut spool = self.spool()?.clone();
                Ok(flush(&self.store, &mut spool, &self.config, &Utc::now)?)
            }
            TransportKind::Imap => {
                let cfg = self
                    .config
                    .smtp
                    .clone()
                    .expect("validated: smtp section present");
                let sender = SmtpSender::new(&cfg).map_err(|e| ServerError::Smtp(e.to_string()))?;
                Ok(flush(
                    &self.store,
                    &mut Smtp(sender),
                    &self.config,
                    &Utc::now,
                )?)
            }
        }
    }

    /// At the contest start (or when a started contest is not finished, after
    /// a restart), runs the contest in a background thread with its own
    /// database connection; this loop goes on taking in mail and sending what
    /// the contest queues. Returns a line for the log when something happened.
    pub fn tend_contest(
        &mut self,
        shutdown: &Arc<AtomicBool>,
    ) -> Result<Option<String>, ServerError> {
        if let Some(h) = &self.contest {
            if !h.is_finished() {
                return Ok(None);
            }
            let h = self.contest.take().expect("checked");
            return Ok(Some(match h.join() {
                Ok(Ok(())) => "the contest is over; the final results are queued".to_string(),
                Ok(Err(e)) => format!("the contest stopped: {e} (it resumes at the next cycle)"),
                Err(_) => "the contest thread panicked (it resumes at the next cycle)".to_string(),
            }));
        }
        let now = Utc::now();
        crate::contest::notices::queue_no_strategy_reminders(self.store.conn(), &self.config, now)?;
        if self.config.contest.discipline.is_bot_discipline() {
            return self.bot_contest_step(now, shutdown);
        }
        let state = crate::store::mail::contest(self.store.conn())?;
        let due = match &state {
            Some(c) => !c.finished,
            None => now >= self.config.timeline.contest_start,
        };
        if !due || shutdown.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let mut line = String::new();
        if state.is_none() {
            match crate::contest::run::start(&mut self.store, &self.config, None, now) {
                Ok(tid) => line = format!("contest started (tournament {tid}); "),
                Err(crate::contest::run::ContestError::NoTeams) => {
                    return Ok(Some(
                        "contest start is due, but no team has a compiled strategy".into(),
                    ))
                }
                Err(e) => return Err(ServerError::Contest(e.to_string())),
            }
        }
        if crate::contest::lease::live_lease(self.store.conn(), now)?.is_some() {
            // Another process plays it (`knobeln contest start`); `status` says who.
            return Ok((!line.is_empty()).then_some(line));
        }
        let config = self.config.clone();
        self.contest = Some(
            std::thread::Builder::new()
                .name("contest".into())
                .spawn(move || {
                    let mut store = Store::open(&config.database).map_err(|e| e.to_string())?;
                    crate::contest::run::run(
                        &mut store,
                        &config,
                        &crate::engine::SystemClock,
                        &mut crate::engine::run::Quiet,
                    )
                    .map(|_| ())
                    .map_err(|e| e.to_string())
                })
                .expect("spawn the contest thread"),
        );
        line.push_str("the tournament runs in the background");
        Ok(Some(line))
    }

    /// The contest of a bot discipline: started at `contest_start`, played
    /// in a background thread (resumed at the next cycle if it stopped).
    fn bot_contest_step(
        &mut self,
        now: chrono::DateTime<Utc>,
        shutdown: &AtomicBool,
    ) -> Result<Option<String>, ServerError> {
        use crate::contest::bots;
        let state =
            bots::contest(self.store.conn()).map_err(|e| ServerError::Contest(e.to_string()))?;
        let due = match &state {
            Some(c) => !c.finished,
            None => now >= self.config.timeline.contest_start,
        };
        if !due || shutdown.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let config = self.config.clone();
        let seed = crate::contest::run::os_seed();
        self.contest = Some(
            std::thread::Builder::new()
                .name("contest".into())
                .spawn(move || {
                    let mut store = Store::open(&config.database).map_err(|e| e.to_string())?;
                    let clock = Utc::now;
                    bots::run_contest(&mut store, &config, seed, &clock)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
                .expect("spawn the contest thread"),
        );
        Ok(Some(format!(
            "the contest of {} runs in the background",
            self.config.contest.discipline.title()
        )))
    }

    /// One cycle: in, process, out.
    pub fn cycle(&mut self) -> Result<Cycle, ServerError> {
        let taken_in = self.take_in()?;
        let processed = self.process()?;
        let flushed = self.flush()?;
        Ok(Cycle {
            taken_in,
            processed,
            flushed,
        })
    }

    /// Cycles until `shutdown` is set. Transport errors are logged and
    /// retried at the next cycle (a mail server that is down for a while must
    /// not stop the contest server); store errors end the loop.
    pub fn serve(
        &mut self,
        shutdown: Arc<AtomicBool>,
        log: &mut dyn FnMut(&str),
    ) -> Result<(), ServerError> {
        let pause = Duration::from_secs(match self.config.transport {
            TransportKind::Spool => self.config.spool.poll_secs,
            TransportKind::Imap => self.config.imap.as_ref().map_or(5, |i| i.poll_secs),
        })
        .max(Duration::from_millis(100));
        while !shutdown.load(Ordering::SeqCst) {
            if let Some(line) = self.tend_contest(&shutdown)? {
                log(&line);
            }
            match self.cycle() {
                Ok(c) => {
                    if c != Cycle::default() {
                        log(&format!(
                            "in {}, processed {} (ignored {}, set aside {}, to retry {}), sent {} (retry {}, failed {})",
                            c.taken_in,
                            c.processed.processed,
                            c.processed.ignored,
                            c.processed.failed,
                            c.processed.retried,
                            c.flushed.sent,
                            c.flushed.retry,
                            c.flushed.failed
                        ));
                    }
                }
                Err(e @ (ServerError::Imap(_) | ServerError::Smtp(_) | ServerError::Spool(_))) => {
                    log(&format!("transport problem, retrying later: {e}"));
                }
                Err(e) => return Err(e),
            }
            let mut waited = Duration::ZERO;
            while waited < pause && !shutdown.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                waited += Duration::from_millis(50);
            }
        }
        if let Some(h) = self.contest.take() {
            log("waiting for the games in flight of the contest (it resumes at the next start)");
            crate::engine::run::request_stop();
            let _ = h.join();
        }
        log("shutting down: the last cycle is complete");
        Ok(())
    }
}
