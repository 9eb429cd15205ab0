//! The spool transport, the embedded default: no mail server needed.
//!
//! Incoming mails are RFC 5322 files in `spool/incoming/` (maildir style:
//! writers put a file into `tmp/` and move it into `new/`; files dropped
//! straight into `incoming/` are taken too). Each file is stored in the
//! inbox table first and only then removed (the database holds it, and
//! seals it once processed: the spool keeps no copy of an authentification
//! string), so a crash in between at worst stores it again, which the
//! inbox's de-duplication ignores. Files left in `incoming/cur/` by older
//! versions (which moved them there) are removed at open.
//! Outgoing mails are written as `spool/outgoing/NNNNNN-kind.eml`, through a
//! temporary file and a rename, so a file is either complete or absent;
//! the sender makes each batch durable with one `syncfs` ([`Spool::sync`])
//! before it marks the batch's mails sent.
//! `outgoing/` stands for the participants' mailboxes: what is there has
//! been delivered, and is no longer the server's state.
//!
//! Folders the spool creates are mode 0700, files it writes 0600.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::mail::admission::{take_in_within_budget, Taken};
use crate::mail::delivery::{Deliver, DeliveryError, Durability};
use crate::mail::inbox::read_capped;
use crate::store::mail::OutRow;
use crate::store::{Store, StoreError};

/// Spool faults.
#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("spool {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Admission(#[from] crate::mail::admission::AdmissionError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A spool folder.
#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> SpoolError + '_ {
    move |source| SpoolError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Spool {
    /// Opens the spool at `dir`, creating its folders.
    pub fn open(dir: &Path) -> Result<Spool, SpoolError> {
        for sub in ["incoming/tmp", "incoming/new", "outgoing"] {
            let p = dir.join(sub);
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&p)
                .map_err(io_err(&p))?;
        }
        // Older versions kept every taken mail here, secrets and all; the
        // database holds them.
        let cur = dir.join("incoming/cur");
        if cur.is_dir() {
            fs::remove_dir_all(&cur).map_err(io_err(&cur))?;
        }
        Ok(Spool {
            dir: dir.to_path_buf(),
        })
    }

    pub fn outgoing_dir(&self) -> PathBuf {
        self.dir.join("outgoing")
    }

    pub fn incoming_new(&self) -> PathBuf {
        self.dir.join("incoming/new")
    }

    /// Stores every waiting incoming file in the inbox and removes it.
    /// Returns how many new mails were stored. A file of more than
    /// `max_mail_bytes` is never read whole: its header part and size are
    /// stored. A stranger's mail past the strangers' budget is stored as
    /// its key only (`admission`) and its file removed, as a duplicate's.
    pub fn take_incoming(
        &self,
        store: &Store,
        config: &Config,
        now: DateTime<Utc>,
    ) -> Result<usize, SpoolError> {
        let cap = config.limits.max_mail_bytes;
        let mut files = Vec::new();
        for d in [self.dir.join("incoming/new"), self.dir.join("incoming")] {
            let rd = fs::read_dir(&d).map_err(io_err(&d))?;
            for e in rd.flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') || !p.is_file() {
                    continue;
                }
                files.push((p, name));
            }
        }
        files.sort_by(|a, b| a.1.cmp(&b.1));
        let mut stored = 0;
        for (path, name) in files {
            let mail = read_capped(&path, cap).map_err(io_err(&path))?;
            let origin = format!("spool:{name}");
            // Judged by reads, then the row and its charge to the
            // strangers' budget on one transaction (`admission`).
            match take_in_within_budget(store.conn(), config, &origin, None, &mail, now)? {
                Taken::Whole(id) => {
                    stored += 1;
                    tracing::info!(
                        inbox = id,
                        file = %name,
                        "mail taken in: {}",
                        crate::mail::intake::headline(&mail.bytes)
                    );
                }
                // Said by `admission::store_judged` (a key row), or once a
                // day (not stored past the key rows' bound).
                Taken::KeyOnly(_) => stored += 1,
                Taken::Again | Taken::Unkept => {}
            }
            // Stored, known or counted: the database has what it keeps.
            fs::remove_file(&path).map_err(io_err(&path))?;
        }
        Ok(stored)
    }

    /// The file an outgoing mail is written to.
    pub fn outgoing_path(&self, row: &OutRow) -> PathBuf {
        self.outgoing_dir()
            .join(format!("{:06}-{}.eml", row.id, row.kind))
    }
}

impl Deliver for Spool {
    /// Writes the file (a temporary name, then renamed: complete or
    /// absent), not yet synced: [`Spool::sync`] makes a batch durable.
    fn deliver(&mut self, row: &OutRow, _envelope_from: &str) -> Result<(), DeliveryError> {
        let path = self.outgoing_path(row);
        let tmp = path.with_extension("eml.tmp");
        fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&row.raw))
            .and_then(|()| fs::rename(&tmp, &path))
            .map_err(|e| DeliveryError::Transient(format!("{}: {e}", path.display())))
    }

    fn durability(&self) -> Durability {
        Durability::OnSync
    }

    /// One `syncfs` of the spool's file system: the files written since
    /// the last one, and their renames, are on disk when it returns.
    fn sync(&mut self) -> Result<(), DeliveryError> {
        let dir = self.outgoing_dir();
        let d = fs::File::open(&dir)
            .map_err(|e| DeliveryError::Transient(format!("{}: {e}", dir.display())))?;
        // SAFETY: syncfs on a descriptor we own.
        if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&d)) } != 0 {
            let e = io::Error::last_os_error();
            return Err(DeliveryError::Transient(format!("{}: {e}", dir.display())));
        }
        Ok(())
    }
}
