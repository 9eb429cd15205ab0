//! The mail server loop: take mail in (spool folder or IMAP), process it,
//! send what the outbox holds (spool folder or SMTP), tend the contest;
//! until told to stop.
//!
//! With the `imap` transport, the take-in runs on a thread of its own
//! (`mail::intake`: one long-lived IMAP session waiting in IDLE, or
//! polling where the server lacks IDLE) and wakes this loop through a
//! channel when it stored mail; the loop also looks at the outbox and the
//! contest every second. Take-in and sending fail independently: an IMAP
//! server that is down does not stop replies to mail already taken in,
//! nor the contest's mails; an SMTP server that is down does not stop the
//! take-in. Each side backs off (1 s doubling to 5 minutes) and logs one
//! line per change of state (`mail::outage`).
//!
//! Compile requests are not processed in the loop: they wait in the inbox
//! (the durable queue: a request stays `new` until its result commits) and
//! `serve` hands them to compile workers, threads of their own with their
//! own database connection, at most `[limits] compiles_at_once` at a time,
//! one per team, teams in turn (`mail::compile_queue`; a stranger's
//! "please compile", without a valid `<<FROM>>` line, never queues: the
//! loop answers it). So a registration, a status request or a kit is
//! answered within a cycle whatever compiles are running; a finished
//! compile wakes the loop, which sends its reply. The loop takes other
//! mails in batches ([`crate::mail::process::QUICK_BATCH`]), proven
//! teams' mails first: a team's mail waits for one batch at most, however
//! many strangers' mails wait. A single [`Server::cycle`] (and `knobeln ingest`)
//! processes compile requests inline, in order.
//!
//! When no mail waits, the loop deletes one batch of the rows of mails
//! processed `[limits] keep_inbox_days` (90) days ago or more
//! ([`crate::mail::process::forget_processed_mails`]); a full batch, and
//! the next goes at once after the mails that arrived meanwhile. A cycle
//! deletes every batch due.
//!
//! Shutdown: `serve` stops when the shutdown flag is set (SIGTERM or Ctrl-C
//! in the binary): the current cycle finishes (a mail being processed is
//! processed and committed, a mail being sent is sent and marked), the
//! take-in thread stops (a mail being stored is committed or not at all),
//! then the loop ends; compile requests still running are not waited for
//! (they stay `new` and start again at the next start, their attempt
//! counted). A `kill -9` at any point loses nothing: every mail
//! is stored before processing, and processing and its replies commit
//! together; on restart, unprocessed mails are processed and unsent replies
//! sent.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::config::{Config, TransportKind};
use crate::mail::delivery::{flush, Deliver, DeliveryError, Flushed};
use crate::mail::intake::{take_in_all, Intake, IntakeError, Removals, Wake};
use crate::mail::outage::Side;
use crate::mail::process::{
    forget_processed_mails, pending_compiles, process_mail, process_pass, process_pending, Batches,
    Classified, Pass, ProcessError, Summary,
};
use crate::mail::transport::imap::ImapPoller;
use crate::mail::transport::smtp::{SendError, SmtpSender};
use crate::mail::transport::spool::{Spool, SpoolError};
use crate::referee::RefereeConfig;
use crate::store::mail::{OutRow, PROCESSED_ROWS_BATCH};
use crate::store::{Store, StoreError};

/// How often the loop looks at the outbox and the contest when the
/// take-in has its own thread (`imap` transport).
const TICK: Duration = Duration::from_secs(1);

/// Server faults.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Outbox(#[from] crate::outbox::OutboxError),
    #[error("imap: {0}")]
    Imap(String),
    #[error("contest: {0}")]
    Contest(String),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Admission(#[from] crate::mail::admission::AdmissionError),
}

/// What one cycle did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cycle {
    pub taken_in: usize,
    pub processed: Summary,
    pub flushed: Flushed,
    /// The take-in failed (the rest of the cycle was still done): why.
    pub take_in_failed: Option<String>,
}

impl Cycle {
    /// Whether one side of the transport failed.
    pub fn transport_failed(&self) -> bool {
        self.take_in_failed.is_some() || self.flushed.unreachable.is_some()
    }

    /// A readable summary, for `serve --once`.
    pub fn summary(&self) -> String {
        let p = &self.processed;
        let f = &self.flushed;
        let mut out = String::new();
        let mut line = |label: &str, n: usize| out.push_str(&format!("{label:<40}{n:>6}\n"));
        line("mails taken in", self.taken_in);
        line("mails answered", p.processed);
        line("mails not answered (automatic mail)", p.ignored);
        line("mails set aside (admin set-aside)", p.failed);
        line("mails to process again", p.retried);
        line("replies sent", f.sent);
        line("replies to send again later", f.retry);
        line("replies failed (admin failed-mail)", f.failed);
        if let Some(why) = &self.take_in_failed {
            out.push_str(&format!("taking mail in failed: {why}\n"));
        }
        if let Some(why) = &f.unreachable {
            out.push_str(&format!(
                "sending stopped, the server cannot be reached: {why}\n"
            ));
        }
        out
    }
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

    fn reachable(&mut self) -> Result<(), String> {
        self.0.probe()
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
    /// The sending side (SMTP): its backoff and log lines.
    sending: Side,
    /// The spool's take-in, for its log lines.
    spool_side: Side,
    /// Compile requests being worked on (`serve` only).
    compiles: Vec<RunningCompile>,
    /// When each waiting team was last served (a sequence number), for
    /// serving teams in turn.
    served: std::collections::HashMap<crate::tournament::TeamId, u64>,
    served_seq: u64,
}

/// A compile request on a worker thread.
struct RunningCompile {
    inbox_id: i64,
    team: crate::tournament::TeamId,
    handle: std::thread::JoinHandle<Result<Summary, String>>,
}

impl Server {
    pub fn new(config: Config, store: Store) -> Server {
        let referee = config.rules.referee();
        let sending = Side::new(
            "SMTP sending to",
            config
                .smtp
                .as_ref()
                .map_or(String::new(), |s| format!("{}:{}", s.host, s.port)),
        );
        let spool_side = Side::new("spool take-in from", config.spool.dir.display().to_string());
        Server {
            config,
            store,
            referee,
            contest: None,
            spool: None,
            sending,
            spool_side,
            compiles: Vec::new(),
            served: std::collections::HashMap::new(),
            served_seq: 0,
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
                Ok(spool.take_incoming(&self.store, &self.config, Utc::now())?)
            }
            TransportKind::Imap => self.take_in_imap(),
        }
    }

    /// One take-in over a session of its own (for `serve --once`; `serve`
    /// keeps one session on the take-in thread).
    fn take_in_imap(&mut self) -> Result<usize, ServerError> {
        let cfg = self
            .config
            .imap
            .clone()
            .expect("validated: imap section present");
        let mut poller = ImapPoller::connect(&cfg).map_err(|e| ServerError::Imap(e.to_string()))?;
        // A run of its own: it looks for the mails due to leave the mailbox.
        let mut removals = Removals::new();
        let stored = take_in_all(
            &mut self.store,
            &self.config,
            &cfg,
            &mut poller,
            &mut removals,
        )
        .map_err(|e| match e {
            IntakeError::Imap(e) => ServerError::Imap(e.to_string()),
            IntakeError::Store(e) => ServerError::Store(e),
            IntakeError::Sql(e) => ServerError::Sql(e),
            IntakeError::Process(e) => ServerError::Process(e),
            IntakeError::Admission(e) => ServerError::Admission(e),
        })?;
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

    /// Processes every stored, unprocessed mail but compile requests.
    fn process_quick(&mut self) -> Result<Summary, ServerError> {
        Ok(process_pass(
            &mut self.store,
            &self.config,
            &self.referee,
            &Utc::now,
            Pass::AllButCompiles,
        )?)
    }

    /// Takes in finished compile workers and starts waiting compile
    /// requests on free ones ([`crate::mail::compile_queue`]).
    fn tend_compiles(&mut self, wake: &std::sync::mpsc::Sender<Wake>) -> Result<(), ServerError> {
        let mut i = 0;
        while i < self.compiles.len() {
            if !self.compiles[i].handle.is_finished() {
                i += 1;
                continue;
            }
            let done = self.compiles.swap_remove(i);
            match done.handle.join() {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::error!(
                    inbox = done.inbox_id,
                    "a compile request could not be processed: {e} (it is tried again)"
                ),
                Err(_) => tracing::error!(
                    inbox = done.inbox_id,
                    "a compile worker panicked (the request is tried again)"
                ),
            }
        }
        let at_once = self.config.limits.compiles_at_once.max(1) as usize;
        let free = at_once.saturating_sub(self.compiles.len());
        if free == 0 {
            return Ok(());
        }
        let running: Vec<_> = self.compiles.iter().map(|c| c.team).collect();
        let waiting: Vec<_> = pending_compiles(&self.store, &self.config, Classified::Stored)?
            .into_iter()
            .filter(|q| !self.compiles.iter().any(|c| c.inbox_id == q.inbox_id))
            .collect();
        // Only waiting and running teams need their turn remembered.
        self.served
            .retain(|t, _| running.contains(t) || waiting.iter().any(|q| &q.team == t));
        for id in crate::mail::compile_queue::next_compiles(&waiting, &running, &self.served, free)
        {
            let Some(team) = waiting.iter().find(|q| q.inbox_id == id).map(|q| q.team) else {
                continue;
            };
            self.served_seq += 1;
            self.served.insert(team, self.served_seq);
            let (config, referee, wake) = (self.config.clone(), self.referee, wake.clone());
            let handle = std::thread::Builder::new()
                .name("compile".into())
                .spawn(move || {
                    let result = Store::open(&config.database)
                        .map_err(|e| e.to_string())
                        .and_then(|mut store| {
                            process_mail(&mut store, &config, &referee, id, &Utc::now)
                                .map_err(|e| e.to_string())
                        });
                    let _ = wake.send(Wake::CompileDone);
                    result
                })
                .map_err(|e| ServerError::Contest(format!("starting a compile worker: {e}")))?;
            self.compiles.push(RunningCompile {
                inbox_id: id,
                team,
                handle,
            });
        }
        Ok(())
    }

    /// Sends what is due in the outbox through the configured transport.
    /// With SMTP, a server that cannot be reached stops the flush
    /// ([`Flushed::unreachable`] says why) and the sending side backs off:
    /// until its wait is over, flushes send nothing; the first one after
    /// it asks the server whether it answers before any mail is tried.
    pub fn flush(&mut self) -> Result<Flushed, ServerError> {
        match self.config.transport {
            TransportKind::Spool => {
                let mut spool = self.spool()?.clone();
                Ok(flush(&self.store, &mut spool, &self.config, &Utc::now)?)
            }
            TransportKind::Imap => {
                if !self.sending.ready(Instant::now()) {
                    return Ok(Flushed::default());
                }
                if crate::store::mail::due_outgoing(self.store.conn(), Utc::now(), 1)?.is_empty() {
                    return Ok(Flushed::default());
                }
                let cfg = self
                    .config
                    .smtp
                    .clone()
                    .expect("validated: smtp section present");
                let sender = match SmtpSender::new(&cfg) {
                    Ok(s) => s,
                    Err(e) => return Ok(self.sending_failed(e.to_string())),
                };
                if self.sending.is_down() {
                    if let Err(why) = sender.probe() {
                        return Ok(self.sending_failed(why));
                    }
                }
                let flushed = flush(&self.store, &mut Smtp(sender), &self.config, &Utc::now)?;
                match &flushed.unreachable {
                    Some(why) => {
                        self.sending.failed(why);
                    }
                    None => self.sending.succeeded(),
                }
                self.sending.save(self.store.conn(), Utc::now())?;
                Ok(flushed)
            }
        }
    }

    /// The sending side failed before any mail was tried.
    fn sending_failed(&mut self, why: String) -> Flushed {
        self.sending.failed(&why);
        if let Err(e) = self.sending.save(self.store.conn(), Utc::now()) {
            tracing::warn!("recording the sending side's outage: {e}");
        }
        Flushed {
            unreachable: Some(why),
            ..Flushed::default()
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
            let now = Utc::now();
            let stopped = match h.join() {
                Ok(Ok(())) => {
                    crate::store::mail::clear_contest_stops(self.store.conn())?;
                    return Ok(Some(
                        "the contest is over; the final results are queued".to_string(),
                    ));
                }
                Ok(Err(e)) => e,
                Err(_) => "the contest thread panicked".to_string(),
            };
            // Told to the organizer (status, the digest), not only logged.
            crate::store::mail::record_contest_stop(self.store.conn(), &stopped, now)?;
            tracing::error!("the contest stopped: {stopped} (it resumes at the next cycle)");
            return Ok(Some(format!(
                "the contest stopped: {stopped} (it resumes at the next cycle)"
            )));
        }
        let now = Utc::now();
        crate::contest::notices::queue_no_strategy_reminders(self.store.conn(), &self.config, now)?;
        if let crate::discipline::family::Family::Bots(_) = self.config.contest.discipline.family()
        {
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
        if state.is_none()
            && crate::store::mail::teams_with_current_version(self.store.conn())?.is_empty()
        {
            return Ok(Some(
                "contest start is due, but no team has a compiled strategy".into(),
            ));
        }
        if state.is_some() && crate::contest::lease::live_lease(self.store.conn(), now)?.is_some() {
            // Another process plays it (`knobeln contest start`); `status` says who.
            return Ok(None);
        }
        // The start (its LAP and start-list mails, built for every team
        // that takes part) and the play both run off the serve loop: mails
        // are answered meanwhile (issue 35: a kit request waited 44 s
        // behind LAP mails built on the loop).
        let config = self.config.clone();
        let starting = state.is_none();
        self.contest = Some(
            std::thread::Builder::new()
                .name("contest".into())
                .spawn(move || {
                    let mut store = Store::open(&config.database).map_err(|e| e.to_string())?;
                    if starting {
                        let tid = crate::contest::run::start(
                            &mut store,
                            &config,
                            None,
                            crate::contest::run::PlayersKey::Secret,
                            now,
                        )
                        .map_err(|e| e.to_string())?;
                        tracing::info!("contest started (tournament {tid})");
                    }
                    crate::contest::run::run(
                        &mut store,
                        &config,
                        &crate::engine::SystemClock,
                        &mut crate::engine::run::Logged,
                    )
                    .map(|_| ())
                    .map_err(|e| e.to_string())
                })
                .expect("spawn the contest thread"),
        );
        Ok(Some(
            if starting {
                "the contest starts and its tournament runs in the background"
            } else {
                "the tournament runs in the background"
            }
            .into(),
        ))
    }

    /// The contest of a bot discipline: started at `contest_start`, played
    /// in a background thread (resumed at the next cycle if it stopped).
    fn bot_contest_step(
        &mut self,
        now: chrono::DateTime<Utc>,
        shutdown: &AtomicBool,
    ) -> Result<Option<String>, ServerError> {
        use crate::contest::bots;
        let state = bots::contest(self.store.conn(), self.config.contest.discipline)
            .map_err(|e| ServerError::Contest(e.to_string()))?;
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

    /// One cycle: in, process, out. A failing take-in is recorded in the
    /// cycle and the rest is done all the same; so is a sending server that
    /// cannot be reached. Only the database's faults are `Err`.
    pub fn cycle(&mut self) -> Result<Cycle, ServerError> {
        let (taken_in, take_in_failed) = match self.take_in() {
            Ok(n) => (n, None),
            Err(ServerError::Imap(why)) => (0, Some(why)),
            Err(e @ ServerError::Spool(_)) => (0, Some(e.to_string())),
            Err(e) => return Err(e),
        };
        let processed = self.process()?;
        let flushed = self.flush()?;
        let keep = self.config.limits.keep_inbox_days;
        forget_processed_mails(&self.store, keep, Utc::now(), Batches::All)?;
        Ok(Cycle {
            taken_in,
            processed,
            flushed,
            take_in_failed,
        })
    }

    /// Serves until `shutdown` is set. Transport faults are logged (one
    /// line per change of state) and retried with backoff; the database's
    /// faults end the loop.
    pub fn serve(&mut self, shutdown: Arc<AtomicBool>) -> Result<(), ServerError> {
        // The templates are compiled before the first mail, not by its reply.
        crate::mail::texts::prepare();
        // Outages an earlier (killed) server recorded are its own.
        self.store
            .conn()
            .execute("DELETE FROM transport_outages", [])
            .map_err(ServerError::Sql)?;
        let (wake_tx, wake) = channel();
        let mut intake = match self.config.transport {
            TransportKind::Imap => Some(
                Intake::start(self.config.clone(), wake_tx.clone())
                    .map_err(|e| ServerError::Imap(format!("starting the take-in thread: {e}")))?,
            ),
            TransportKind::Spool => None,
        };
        let pause = match self.config.transport {
            TransportKind::Spool => Duration::from_secs(self.config.spool.poll_secs),
            TransportKind::Imap => TICK,
        }
        .max(Duration::from_millis(100));
        let result = self.serve_loop(&shutdown, &wake, pause, &mut intake, &wake_tx);
        if let Some(i) = intake.take() {
            i.stop();
        }
        if !self.compiles.is_empty() {
            tracing::info!(
                "{} compile request(s) in progress start again at the next start",
                self.compiles.len()
            );
        }
        if let Some(h) = self.contest.take() {
            tracing::info!(
                "waiting for the games in flight of the contest (it resumes at the next start)"
            );
            crate::engine::run::request_stop();
            let _ = h.join();
        }
        if result.is_ok() {
            tracing::info!("shutting down: the last cycle is complete");
        }
        result
    }

    fn serve_loop(
        &mut self,
        shutdown: &Arc<AtomicBool>,
        wake: &Receiver<Wake>,
        pause: Duration,
        intake: &mut Option<Intake>,
        wake_tx: &std::sync::mpsc::Sender<Wake>,
    ) -> Result<(), ServerError> {
        while !shutdown.load(Ordering::SeqCst) {
            if let Some(line) = self.tend_contest(shutdown)? {
                tracing::info!("{line}");
            }
            if intake.as_ref().is_some_and(Intake::is_finished) {
                tracing::error!("the IMAP take-in thread ended unexpectedly; starting it again");
                *intake = Some(
                    Intake::start(self.config.clone(), wake_tx.clone()).map_err(|e| {
                        ServerError::Imap(format!("starting the take-in thread: {e}"))
                    })?,
                );
            }
            if self.config.transport == TransportKind::Spool
                && self.spool_side.ready(Instant::now())
            {
                match self.take_in() {
                    Ok(_) => self.spool_side.succeeded(),
                    Err(e @ ServerError::Spool(_)) => {
                        self.spool_side.failed(&e.to_string());
                    }
                    Err(e) => return Err(e),
                }
                self.spool_side.save(self.store.conn(), Utc::now())?;
            }
            let processed = self.process_quick()?;
            self.tend_compiles(wake_tx)?;
            let flushed = self.flush()?;
            if processed != Summary::default() || flushed != Flushed::default() {
                tracing::debug!(?processed, ?flushed, "cycle");
            }
            if processed.more_waiting {
                // More mails wait: the next batch at once (new mail is
                // taken in first, and ranked by its lane).
                continue;
            }
            // No mail waits: one batch of the rows of mails processed
            // `keep_inbox_days` ago; a full one, and the next goes after
            // the mails that arrived meanwhile.
            let keep = self.config.limits.keep_inbox_days;
            if forget_processed_mails(&self.store, keep, Utc::now(), Batches::One)?
                >= PROCESSED_ROWS_BATCH
            {
                continue;
            }
            // Wait for the next tick, new mail, or the shutdown.
            let until = Instant::now() + pause;
            while !shutdown.load(Ordering::SeqCst) {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                match wake.recv_timeout(left.min(Duration::from_millis(100))) {
                    Ok(Wake::Stored(n)) => {
                        tracing::debug!("woken: {n} new mails stored");
                        break;
                    }
                    Ok(Wake::CompileDone) => {
                        tracing::debug!("woken: a compile request is done");
                        break;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => unreachable!("the loop holds a sender"),
                }
            }
        }
        Ok(())
    }
}
