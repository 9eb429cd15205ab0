//! Sending what the outbox holds, with retries and backoff.
//!
//! A queued mail is marked sent only after the transport accepted it (the
//! spool file is in place, or the SMTP server said 250). A transient
//! failure is retried later (backoff doubling from one minute up to an
//! hour); a permanent one, or too many attempts, marks it failed. After a
//! crash between acceptance and marking, the mail is sent again with the
//! same Message-ID (receivers can tell it is the same mail); the spool
//! transport overwrites the same file, so it never duplicates.
//!
//! A permanent failure is never silent: after sending, [`flush`] queues the
//! organizer's digest when one is due (see `digest`) and sends it in the
//! same flush.

use chrono::{DateTime, Duration, Utc};

use crate::config::Config;
use crate::mail::digest;
use crate::mail::process::ProcessError;
use crate::store::mail::{due_outgoing, mark_failed, mark_retry, mark_sent, OutRow};
use crate::store::{Store, StoreError};

/// Why a transport did not take a mail.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DeliveryError {
    /// Try again later (connection refused, 4xx).
    #[error("{0}")]
    Transient(String),
    /// Give up (5xx, invalid recipient).
    #[error("{0}")]
    Permanent(String),
}

/// A way to get a queued mail out.
pub trait Deliver {
    fn deliver(&mut self, row: &OutRow, envelope_from: &str) -> Result<(), DeliveryError>;
}

/// What a flush did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Flushed {
    pub sent: usize,
    pub retry: usize,
    pub failed: usize,
}

/// The wait before the next attempt after `attempts` failed ones.
pub fn backoff(attempts: u32) -> Duration {
    let minutes = 1i64 << attempts.min(6);
    Duration::minutes(minutes.min(60))
}

/// Sends every due mail once; then, when a digest for the organizer is
/// due (failed or set-aside mails to report), queues it and sends it too.
pub fn flush(
    store: &Store,
    transport: &mut dyn Deliver,
    config: &Config,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Flushed, ProcessError> {
    let mut out = Flushed::default();
    send_due(store, transport, config, now, &mut out)?;
    if digest::queue_if_due(store.conn(), config, now())?.is_some() {
        send_due(store, transport, config, now, &mut out)?;
    }
    Ok(out)
}

fn send_due(
    store: &Store,
    transport: &mut dyn Deliver,
    config: &Config,
    now: &dyn Fn() -> DateTime<Utc>,
    out: &mut Flushed,
) -> Result<(), StoreError> {
    loop {
        let due = due_outgoing(store.conn(), now(), 50)?;
        if due.is_empty() {
            break;
        }
        let mut progressed = false;
        for row in &due {
            match transport.deliver(row, &config.contest.address) {
                Ok(()) => {
                    mark_sent(store.conn(), row.id, now())?;
                    out.sent += 1;
                    progressed = true;
                }
                Err(DeliveryError::Transient(e))
                    if row.attempts + 1 < config.limits.max_send_attempts =>
                {
                    mark_retry(store.conn(), row.id, &e, now() + backoff(row.attempts))?;
                    out.retry += 1;
                }
                Err(e) => {
                    mark_failed(store.conn(), row.id, &e.to_string())?;
                    out.failed += 1;
                    progressed = true;
                }
            }
        }
        if !progressed {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_an_hour() {
        assert_eq!(backoff(0), Duration::minutes(1));
        assert_eq!(backoff(1), Duration::minutes(2));
        assert_eq!(backoff(5), Duration::minutes(32));
        assert_eq!(backoff(6), Duration::minutes(60));
        assert_eq!(backoff(40), Duration::minutes(60));
    }
}
