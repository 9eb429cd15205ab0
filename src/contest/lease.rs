//! One process plays the contest at a time: whoever runs it (`knobeln
//! serve` at `contest_start`, or `knobeln contest start`) first takes a
//! lease in the database, renews it from a heartbeat thread every quarter of
//! `rules.lease_secs`, and gives it up when it stops. A second process finds
//! the lease held and says who holds it. A holder killed with `kill -9`
//! renews nothing, so its lease expires `lease_secs` after its last
//! heartbeat and the next start takes it over (and resumes the contest from
//! the database). On the same machine (same boot id) the next start does
//! not wait for that: the lease records the holder's pid and start time,
//! and a holder whose process is gone is taken over at once.
//!
//! A holder that stalls past its expiry (stopped, swapped out) and finds
//! the lease taken over on waking stops at the next tournament event, a
//! game finishing (see [`LeaseCheck`]); games it played meanwhile are the
//! same games the new holder plays (same seeds) and are stored once.
//!
//! The lease runs on the wall clock (`Utc::now`), which every process on
//! the machine shares; it deliberately knows nothing of the tournament.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::engine::run::{Event, Observer};
use crate::store::admin::{
    acquire_lease, release_lease, renew_lease, take_over_lease, Claimant, LeaseClaim, LeaseRow,
};
use crate::store::{Store, StoreError};

/// The contest, held by this process.
pub struct Lease {
    holder: String,
    lost: Arc<AtomicBool>,
    stop: Option<mpsc::Sender<()>>,
    heartbeat: Option<JoinHandle<()>>,
}

/// Why the lease could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another process plays the contest: a sentence saying who and until when.
    #[error("{0}")]
    Held(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Who this process is, for people: `knobeln contest start (pid 4711 on host h)`.
pub fn describe_this_process() -> String {
    let mut words: Vec<String> = Vec::new();
    for (i, a) in std::env::args().take(3).enumerate() {
        if i == 0 {
            words.push(
                std::path::Path::new(&a)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or(a),
            );
        } else if a.starts_with('-') {
            break;
        } else {
            words.push(a);
        }
    }
    format!(
        "{} (pid {} on host {})",
        words.join(" "),
        std::process::id(),
        hostname()
    )
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "?".into())
}

/// The sentence for a second process: who plays the contest, since when,
/// and when the lease would expire should that process be gone.
pub fn held_message(row: &LeaseRow, now: DateTime<Utc>) -> String {
    let d = |x: DateTime<Utc>| x.format("%Y-%m-%d %H:%M:%S UT").to_string();
    let ago = (now - row.renewed_at).num_seconds().max(0);
    format!(
        "the contest is being played by another process: {}, since {} (last heartbeat {ago} s \
         ago). This process does not play it (a contest it started is played there). If that process was killed, its lease expires at {} \
         and the next `knobeln contest start` (or `knobeln serve`) takes the contest over and \
         resumes it.",
        row.description,
        d(row.acquired_at),
        d(row.expires_at)
    )
}

/// The lease, if some process holds it: not expired at `now`, and not a
/// process of this machine that is gone.
pub fn live_lease(
    conn: &rusqlite::Connection,
    now: DateTime<Utc>,
) -> Result<Option<LeaseRow>, StoreError> {
    Ok(crate::store::admin::lease(conn)?
        .filter(|l| l.expires_at > now && liveness(&l.process) != Liveness::Gone))
}

/// This process as the lease records it: `boot_id pid start_time` (the
/// start time in clock ticks since boot, from `/proc/self/stat`), so that
/// a recycled pid is not mistaken for the holder.
pub fn process_identity() -> String {
    let pid = std::process::id();
    format!(
        "{} {pid} {}",
        boot_id().unwrap_or_else(|| "?".into()),
        start_time(pid).unwrap_or_else(|| "?".into())
    )
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Field 22 of `/proc/PID/stat`, or `None` when there is no such process
/// (or only its zombie).
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first() == Some(&"Z") || fields.first() == Some(&"X") {
        return None;
    }
    fields.get(22 - 3).map(|s| s.to_string())
}

/// Whether the process a lease names still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Running,
    /// It ran on this machine since its last boot and is gone.
    Gone,
    /// Another machine, or another boot: only the expiry tells.
    Unknown,
}

/// Whether the process `identity` (see [`process_identity`]) still runs.
pub fn liveness(identity: &str) -> Liveness {
    let mut parts = identity.split(' ');
    let (Some(boot), Some(pid), Some(started)) = (parts.next(), parts.next(), parts.next()) else {
        return Liveness::Unknown;
    };
    let (Some(ours), Ok(pid)) = (boot_id(), pid.parse::<u32>()) else {
        return Liveness::Unknown;
    };
    if boot != ours || started == "?" {
        return Liveness::Unknown;
    }
    match start_time(pid) {
        Some(t) if t == started => Liveness::Running,
        _ => Liveness::Gone,
    }
}

fn random_token() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("OS random source");
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Lease {
    /// Takes the contest's lease for this process (for `ttl`, renewed every
    /// `ttl / 4` on a connection of its own to `database`), or says who
    /// holds it.
    pub fn acquire(store: &Store, database: PathBuf, ttl: Duration) -> Result<Lease, LeaseError> {
        let holder = random_token();
        let ttl_chrono = chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::seconds(60));
        let now = Utc::now();
        let (description, process) = (describe_this_process(), process_identity());
        let me = Claimant {
            holder: &holder,
            description: &description,
            process: &process,
        };
        match acquire_lease(store.conn(), me, now, now + ttl_chrono)? {
            LeaseClaim::Acquired => {}
            LeaseClaim::Held(row) if liveness(&row.process) == Liveness::Gone => {
                if !take_over_lease(store.conn(), &row.holder, me, now, now + ttl_chrono)? {
                    return Err(LeaseError::Held(
                        "another process took the contest over just now; `knobeln status` says which"
                            .into(),
                    ));
                }
                tracing::warn!(previous = %row.description, "took the contest over from a process that is gone");
            }
            LeaseClaim::Held(row) => return Err(LeaseError::Held(held_message(&row, now))),
        }
        tracing::info!(ttl_secs = ttl.as_secs_f64(), "took the contest lease");
        let lost = Arc::new(AtomicBool::new(false));
        let (stop, stopped) = mpsc::channel::<()>();
        let heartbeat = {
            let holder = holder.clone();
            let lost = lost.clone();
            std::thread::Builder::new()
                .name("contest-lease".into())
                .spawn(move || heartbeat(database, holder, ttl, ttl_chrono, lost, stopped))
                .expect("spawn the lease heartbeat")
        };
        Ok(Lease {
            holder,
            lost,
            stop: Some(stop),
            heartbeat: Some(heartbeat),
        })
    }

    /// Whether another process took the contest over (this one stalled
    /// past the expiry).
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// An observer that ends the run at the next event once the lease is lost.
    pub fn check(&self) -> LeaseCheck<'_> {
        LeaseCheck(self)
    }

    /// This holder's token (tests).
    pub fn holder(&self) -> &str {
        &self.holder
    }
}

impl Drop for Lease {
    /// Stops the heartbeat, which gives the lease up.
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.heartbeat.take() {
            let _ = h.join();
        }
    }
}

fn heartbeat(
    database: PathBuf,
    holder: String,
    ttl: Duration,
    ttl_chrono: chrono::Duration,
    lost: Arc<AtomicBool>,
    stopped: mpsc::Receiver<()>,
) {
    let conn = match rusqlite::Connection::open(&database).and_then(|c| {
        c.busy_timeout(Duration::from_secs(10))?;
        Ok(c)
    }) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "the contest lease heartbeat cannot open the database");
            return;
        }
    };
    let every = (ttl / 4).max(Duration::from_millis(100));
    // Until the lease is dropped (the sender goes away).
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
        let now = Utc::now();
        match renew_lease(&conn, &holder, now, now + ttl_chrono) {
            Ok(true) => {}
            Ok(false) => {
                tracing::error!(
                    "lost the contest lease: another process took the contest over; \
                     stopping at the next event"
                );
                lost.store(true, Ordering::SeqCst);
                return;
            }
            Err(e) => tracing::warn!(error = %e, "could not renew the contest lease; retrying"),
        }
    }
    if let Err(e) = release_lease(&conn, &holder) {
        tracing::warn!(error = %e, "could not give the contest lease up (it expires by itself)");
    }
}

/// Ends a tournament run at its next event once the lease is lost.
pub struct LeaseCheck<'a>(&'a Lease);

impl Observer for LeaseCheck<'_> {
    fn event(&mut self, _store: &Store, _event: &Event) -> Result<(), String> {
        if self.0.lost() {
            Err("another process took the contest over (this one stalled past its lease)".into())
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_finished_child_is_gone() {
        assert_eq!(liveness(&process_identity()), Liveness::Running);
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        let started = start_time(pid).expect("a running child has a start time");
        let boot = boot_id().unwrap();
        let child_identity = format!("{boot} {pid} {started}");
        assert_eq!(liveness(&child_identity), Liveness::Running);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(liveness(&child_identity), Liveness::Gone);
        // The pid of a running process with another start time: a recycled
        // pid, not the holder.
        let me = std::process::id();
        assert_eq!(liveness(&format!("{boot} {me} 1")), Liveness::Gone);
        // Another machine or boot: only the expiry can tell.
        assert_eq!(liveness(&format!("other-boot {me} 1")), Liveness::Unknown);
        assert_eq!(liveness("garbage"), Liveness::Unknown);
    }
}
