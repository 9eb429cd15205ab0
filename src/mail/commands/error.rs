//! The faults of a command: the server could not do its job. A
//! participant's mistake is never one of these; it is a reply.

use super::register;
use crate::store::StoreError;

/// Faults of a command (never the participant's: those are replies).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Render(#[from] handlebars::RenderError),
    #[error(transparent)]
    Register(#[from] register::RegisterError),
    #[error("please compile is prepared outside the transaction (compile::prepare)")]
    NotHere,
}
