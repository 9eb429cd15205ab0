//! An outgoing mail's state ([`OutState`]): the values of the outbox's
//! `state` column, which the code, not the table, keeps to three (schema
//! 0027 dropped the table's `CHECK`).
//!
//! Not here: any database access (`store::mail` and `store::admin` write
//! and read the column).

use crate::store::{Result, StoreError};

/// Where an outgoing mail is: the outbox's `state` column. Its three
/// values are the code's, not the table's (schema 0027 dropped the
/// table's `CHECK`): every write binds one of them, and a value read back
/// that is none of them is [`StoreError::Corrupt`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutState {
    /// Waiting for its time (`next_attempt_at`) to be sent.
    Queued,
    /// Handed to the relay or the spool.
    Sent,
    /// Given up on (the organizer may queue it again).
    Failed,
}

impl OutState {
    /// The column's value.
    pub fn as_str(self) -> &'static str {
        match self {
            OutState::Queued => "queued",
            OutState::Sent => "sent",
            OutState::Failed => "failed",
        }
    }

    /// The state a column's value names; any other value is corrupt.
    pub fn parse(s: &str) -> Result<OutState> {
        match s {
            "queued" => Ok(OutState::Queued),
            "sent" => Ok(OutState::Sent),
            "failed" => Ok(OutState::Failed),
            other => Err(StoreError::Corrupt(format!(
                "an outgoing mail in the unknown state {other:.40?}"
            ))),
        }
    }
}
