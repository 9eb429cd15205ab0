//! The compile service's own faults: what keeps it from doing its job (no
//! jail, no clang, an unreadable object). A participant's mistake is never
//! one of these: it is a diagnostic in a report.

use std::io;

use crate::sandbox::jail::JailError;

/// Infrastructure faults of the compile service.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Jail(#[from] JailError),
    #[error("compile service i/o: {0}")]
    Io(#[from] io::Error),
    #[error("cannot read the object clang produced: {0}")]
    Object(String),
    #[error("the contest runtime does not compile: {0}")]
    Runtime(String),
}
