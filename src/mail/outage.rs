//! One side of the mail transport, taking mail in (IMAP) or sending it
//! (SMTP), seen as up or down: when it fails, the side waits before its
//! next try with an exponential backoff (1 s, 2 s, 4 s, … capped at 5
//! minutes, back to 1 s after a success), and the log gets one line when
//! the side goes down (naming the host and the error), one when the cause
//! changes, and one when it works again (with how long it was down and how
//! many tries it took), never a line per retry.
//!
//! The two sides keep one [`Side`] each and fail independently: an IMAP
//! server that is down stops nothing but the take-in, an SMTP server that
//! is down nothing but the sending.
//!
//! Deliberately not here: the per-mail retries of the outbox (a mail the
//! SMTP server refuses with 4xx waits its own backoff of minutes, see
//! `delivery`), and the waiting itself (the caller sleeps, interruptibly).

use std::time::{Duration, Instant};

/// The first wait after a failure.
pub const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait between two tries.
pub const MAX_WAIT: Duration = Duration::from_secs(5 * 60);

/// Exponential backoff: [`FIRST_WAIT`] doubling up to [`MAX_WAIT`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { next: FIRST_WAIT }
    }
}

impl Backoff {
    /// The wait after this failure; the next one is twice as long (capped).
    pub fn failed(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(MAX_WAIT);
        wait
    }

    /// After a success: the next failure waits [`FIRST_WAIT`] again.
    pub fn reset(&mut self) {
        self.next = FIRST_WAIT;
    }
}

/// What a failure or a success changed, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The side was up and failed: log it (warning).
    WentDown,
    /// Still down, but for another reason: log it (warning).
    NewCause,
    /// Still down, same cause: nothing to log.
    StillDown,
    /// It works again after `down_for` and `tries` failed tries: log it.
    CameBack { down_for: Duration, tries: u32 },
    /// It was up and still is.
    StillUp,
}

#[derive(Debug, Clone)]
struct Down {
    since: Instant,
    cause: String,
    tries: u32,
}

/// One side (`IMAP take-in from host:port`, `SMTP sending to host:port`):
/// up or down, when to try again, and the log lines of its changes.
#[derive(Debug, Clone)]
pub struct Side {
    what: &'static str,
    addr: String,
    backoff: Backoff,
    down: Option<Down>,
    retry_at: Option<Instant>,
    /// Whether the side went down, came back or changed its cause since
    /// [`Side::save`] last wrote it.
    changed: bool,
}

impl Side {
    /// `what` and `addr` start its log lines: `IMAP take-in from`,
    /// `127.0.0.1:1143`.
    pub fn new(what: &'static str, addr: impl Into<String>) -> Side {
        Side {
            what,
            addr: addr.into(),
            backoff: Backoff::default(),
            down: None,
            retry_at: None,
            changed: false,
        }
    }

    /// `IMAP take-in from 127.0.0.1:1143`: what the log and the status say.
    pub fn label(&self) -> String {
        format!("{} {}", self.what, self.addr)
    }

    /// Writes the side's state for `knobeln status` (another process) if
    /// it changed: a row while it is down (since when, the cause), none
    /// once it works.
    pub fn save(
        &mut self,
        conn: &rusqlite::Connection,
        now: chrono::DateTime<chrono::Utc>,
    ) -> crate::store::Result<()> {
        if !self.changed {
            return Ok(());
        }
        match &self.down {
            Some(d) => crate::store::mail::record_outage(conn, &self.label(), &d.cause, now)?,
            None => crate::store::mail::record_side_works(conn, &self.label())?,
        }
        self.changed = false;
        Ok(())
    }

    /// Whether the side is down (since its last failure, no success).
    pub fn is_down(&self) -> bool {
        self.down.is_some()
    }

    /// Whether it is time to use the side (it is up, or its wait is over).
    pub fn ready(&self, now: Instant) -> bool {
        self.retry_at.is_none_or(|t| now >= t)
    }

    /// Records a failure at `now`: returns the wait before the next try and
    /// what changed (pure; [`Side::failed`] also logs).
    pub fn record_failure(&mut self, cause: &str, now: Instant) -> (Duration, Change) {
        let wait = self.backoff.failed();
        self.retry_at = Some(now + wait);
        let change = match &mut self.down {
            None => {
                self.down = Some(Down {
                    since: now,
                    cause: cause.to_string(),
                    tries: 1,
                });
                self.changed = true;
                Change::WentDown
            }
            Some(d) => {
                d.tries += 1;
                if d.cause == cause {
                    Change::StillDown
                } else {
                    d.cause = cause.to_string();
                    self.changed = true;
                    Change::NewCause
                }
            }
        };
        (wait, change)
    }

    /// Records a success at `now` (pure; [`Side::succeeded`] also logs).
    pub fn record_success(&mut self, now: Instant) -> Change {
        self.backoff.reset();
        self.retry_at = None;
        match self.down.take() {
            Some(d) => {
                self.changed = true;
                Change::CameBack {
                    down_for: now.saturating_duration_since(d.since),
                    tries: d.tries,
                }
            }
            None => Change::StillUp,
        }
    }

    /// A failure: logs a line when the side went down or the cause
    /// changed; returns the wait before the next try.
    pub fn failed(&mut self, cause: &str) -> Duration {
        let (wait, change) = self.record_failure(cause, Instant::now());
        let (what, addr) = (self.what, &self.addr);
        match change {
            Change::WentDown => tracing::warn!(
                "{what} {addr} fails: {cause}; trying again in {} s, then doubling up to {} min",
                wait.as_secs(),
                MAX_WAIT.as_secs() / 60
            ),
            Change::NewCause => tracing::warn!("{what} {addr} still fails, now: {cause}"),
            _ => tracing::debug!(
                "{what} {addr} still fails; next try in {} s",
                wait.as_secs()
            ),
        }
        wait
    }

    /// A success: logs a line when the side was down.
    pub fn succeeded(&mut self) {
        if let Change::CameBack { down_for, tries } = self.record_success(Instant::now()) {
            tracing::info!(
                "{} {} works again (it failed for {} s, {tries} tries)",
                self.what,
                self.addr,
                down_for.as_secs()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_a_second_to_five_minutes_and_resets() {
        let mut b = Backoff::default();
        let waits: Vec<u64> = (0..11).map(|_| b.failed().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
        b.reset();
        assert_eq!(b.failed(), Duration::from_secs(1));
    }

    #[test]
    fn a_side_logs_changes_not_retries() {
        let t0 = Instant::now();
        let mut side = Side::new("IMAP take-in from", "127.0.0.1:1143");
        assert!(side.ready(t0));
        assert_eq!(side.record_success(t0), Change::StillUp);
        let (wait, change) = side.record_failure("connection refused", t0);
        assert_eq!((wait, change), (FIRST_WAIT, Change::WentDown));
        assert!(side.is_down());
        assert!(!side.ready(t0));
        assert!(side.ready(t0 + FIRST_WAIT));
        for _ in 0..5 {
            assert_eq!(
                side.record_failure("connection refused", t0).1,
                Change::StillDown
            );
        }
        assert_eq!(side.record_failure("login refused", t0).1, Change::NewCause);
        assert_eq!(
            side.record_success(t0 + Duration::from_secs(90)),
            Change::CameBack {
                down_for: Duration::from_secs(90),
                tries: 7
            }
        );
        assert!(!side.is_down());
        assert!(side.ready(t0));
        // The backoff starts again at one second.
        assert_eq!(side.record_failure("x", t0).0, FIRST_WAIT);
    }
}
