//! What goes wrong in the store ([`StoreError`]) and the [`Result`] of
//! every store call.
//!
//! Not here: any database access; the store's own files return these.

/// Store faults (infrastructure, never a participant's mistake).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(
        "database holds schema version {found}, newer than this program's {known}; upgrade knobeln"
    )]
    TooNew { found: i64, known: i64 },
    #[error("database record is corrupt: {0}")]
    Corrupt(String),
    #[error("database file {path}: {source}")]
    File {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("no contest database at {} (run `knobeln init` or check --config)", path.display())]
    NoDatabase { path: std::path::PathBuf },
}

pub type Result<T> = std::result::Result<T, StoreError>;
