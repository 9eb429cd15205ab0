//! Checkpoints of the write-ahead log off the writing thread: while a
//! tournament plays, SQLite's automatic checkpoint (copying the log's pages
//! into the database file, every 1000 pages committed, on the committing
//! thread) would run on the server's thread. [`Store::checkpoint_in_background`]
//! hands it to a thread of its own with its own connection, which runs a
//! `PASSIVE` checkpoint (it never waits for, nor blocks, a writer) every
//! [`LOOK_EVERY`]; the writer's own automatic checkpoint stays as a
//! backstop at [`BACKSTOP_PAGES`], so the log stays bounded (about 40 MB of
//! 4 kB pages) even if the thread falls behind or a reader keeps it from
//! finishing.
//!
//! Deliberately not here: anything about what is written; a checkpoint
//! changes where committed pages live, never what a reader sees, so a
//! `kill -9` at any moment leaves the same committed state as before.

use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::{Result, Store};

/// The writer's own automatic checkpoint while the background thread runs:
/// a bound on the log, not the rule.
pub const BACKSTOP_PAGES: i64 = 10_000;

/// How often the background thread checkpoints (a few times a second: a
/// checkpoint syncs the database file, so not after every commit).
pub const LOOK_EVERY: Duration = Duration::from_millis(200);

/// The background checkpoints of one connection; stopped (and the
/// connection's automatic checkpoint restored) by [`Self::stop`], or
/// stopped on drop.
pub struct BackgroundCheckpoints {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    /// The connection's automatic checkpoint before.
    autocheckpoint: i64,
}

impl Store {
    /// Checkpoints the log from a thread of its own until the returned
    /// guard is stopped. `None` (nothing changed) for a database without a
    /// file (in memory) or when the second connection cannot be opened.
    pub fn checkpoint_in_background(&self) -> Result<Option<BackgroundCheckpoints>> {
        let path = match self.conn.path() {
            Some(p) if !p.is_empty() => p.to_string(),
            _ => return Ok(None),
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let Ok(other) = Connection::open_with_flags(&path, flags) else {
            return Ok(None);
        };
        other.busy_timeout(Duration::from_secs(10))?;
        let autocheckpoint: i64 =
            self.conn
                .pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))?;
        self.conn
            .pragma_update(None, "wal_autocheckpoint", BACKSTOP_PAGES)?;
        let (stop, stopped) = channel::<()>();
        let thread = std::thread::Builder::new()
            .name("wal-checkpoint".into())
            .spawn(move || {
                // Until the guard is stopped (or dropped).
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(LOOK_EVERY) {
                    // Everything committed so far, as far as no reader
                    // needs it; a failure (busy) is tried again later.
                    let _ = other.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
            .ok();
        Ok(Some(BackgroundCheckpoints {
            stop: Some(stop),
            thread,
            autocheckpoint,
        }))
    }
}

impl BackgroundCheckpoints {
    /// Stops the thread and gives `store`'s connection its automatic
    /// checkpoint back.
    pub fn stop(mut self, store: &Store) -> Result<()> {
        self.halt();
        store
            .conn
            .pragma_update(None, "wal_autocheckpoint", self.autocheckpoint)?;
        Ok(())
    }

    fn halt(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for BackgroundCheckpoints {
    fn drop(&mut self) {
        self.halt();
    }
}
