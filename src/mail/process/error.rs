//! [`ProcessError`]: what makes processing a mail fail (the store, a
//! command's infrastructure, building or queuing a reply), which every file
//! of `process` returns.
//!
//! Only the type: a participant's mistake is never one (it becomes a
//! reply), and what is done about one (retry, set aside) is `process.rs`'s.

use crate::store::StoreError;

/// Processing faults (infrastructure). A participant's mistake is a reply.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error("{0}")]
    Command(String),
    #[error("building a reply: {0}")]
    Build(#[from] crate::outbox::outgoing::BuildError),
    #[error(transparent)]
    Outbox(#[from] crate::outbox::OutboxError),
    #[error("rendering a reply: {0}")]
    Render(#[from] handlebars::RenderError),
}
