//! The mail front end's benchmarks: registrations that all ask for one
//! team name against distinct names ([`registration_bench`]), and the
//! outbox sender's deliveries to the spool against plain file writes
//! ([`spool_bench`]).
//!
//! Not here: replies through a real mail server (`crate::bench_mail`).

use std::time::{Duration, Instant};

use super::measure::BenchError;

/// Figures of the registration benchmark: `n` registrations that all ask
/// for the same team name (each gets the next free `_N`), against `n` with
/// distinct names (the floor: the same mails without the name search).
#[derive(Debug, Clone)]
pub struct RegistrationBench {
    pub n: usize,
    pub same_name: Duration,
    pub distinct: Duration,
}

impl RegistrationBench {
    pub fn print(&self) {
        println!(
            "{} registrations, distinct names (floor): {:>7.2} s",
            self.n,
            self.distinct.as_secs_f64()
        );
        println!(
            "{} registrations, all the same name:      {:>7.2} s ({:.2}x; goal: 1.2 s at 1000)",
            self.n,
            self.same_name.as_secs_f64(),
            self.same_name.as_secs_f64() / self.distinct.as_secs_f64()
        );
    }
}

/// Stores and processes `n` registration mails on the embedded default in
/// a temporary folder; returns the time.
fn time_registrations(n: usize, same_name: bool) -> Result<Duration, BenchError> {
    let dir = tempfile::tempdir()?;
    let defaults = crate::config::Config::default();
    let config = crate::config::Config {
        database: dir.path().join("bench.db"),
        spool: crate::config::SpoolConfig {
            dir: dir.path().join("spool"),
            ..defaults.spool.clone()
        },
        // Every registration of the benchmark is to be taken.
        limits: crate::config::Limits {
            max_participants: 0,
            ..defaults.limits.clone()
        },
        ..defaults
    };
    let store = crate::store::Store::open(&config.database)?;
    let now = chrono::Utc::now();
    let t = Instant::now();
    for i in 0..n {
        let name = if same_name {
            "the_heavy_lords_of_knobeln".to_string()
        } else {
            format!("team_{i}")
        };
        let raw = format!(
            "From: u{i}@participants.example\r\nTo: knobeln@contest.example\r\n\
             Subject: registration for KNOBELN\r\nMessage-ID: <bench-{i}@participants.example>\r\n\
             \r\nmail-address: u{i}@participants.example\r\nmail-preference: GRR\r\n\
             team-name: {name}\r\nOrganization: Organization {i}, City, Land\r\n\
             team-members:\r\n A. Bench, 30, tester,\r\n writes C\r\n"
        );
        crate::mail::inbox::take_in(store.conn(), "bench", None, raw.as_bytes(), usize::MAX, now)?;
    }
    let mut server = crate::server::Server::new(config, store);
    server.process()?;
    Ok(t.elapsed())
}

/// Runs the registration benchmark.
pub fn registration_bench(n: usize) -> Result<RegistrationBench, BenchError> {
    let distinct = time_registrations(n, false)?;
    let same_name = time_registrations(n, true)?;
    Ok(RegistrationBench {
        n,
        same_name,
        distinct,
    })
}

/// Figures of the spool benchmark: `n` queued mails of a contest's size
/// (2 kB) delivered by the outbox sender to the spool, against the same
/// files written straight without any sync (the floor: what the file
/// system costs without durability) and with one `fsync` per file (how the
/// sender wrote them before it synced a batch at once).
#[derive(Debug, Clone)]
pub struct SpoolBench {
    pub n: usize,
    pub sender: Duration,
    pub floor: Duration,
    pub fsync_each: Duration,
}

impl SpoolBench {
    pub fn print(&self) {
        let per = |d: Duration| d.as_secs_f64() * 1000.0 / self.n as f64;
        println!(
            "{} mails to the spool, files without sync (floor):   {:>7.2} s ({:.2} ms per mail)",
            self.n,
            self.floor.as_secs_f64(),
            per(self.floor)
        );
        println!(
            "{} mails to the spool, one fsync per file:           {:>7.2} s ({:.2} ms per mail, {:.2}x the floor)",
            self.n,
            self.fsync_each.as_secs_f64(),
            per(self.fsync_each),
            self.fsync_each.as_secs_f64() / self.floor.as_secs_f64()
        );
        println!(
            "{} mails through the outbox sender (one syncfs per 50, database marks): {:>7.2} s ({:.2} ms per mail, {:.2}x the floor)",
            self.n,
            self.sender.as_secs_f64(),
            per(self.sender),
            self.sender.as_secs_f64() / self.floor.as_secs_f64()
        );
    }
}

/// Runs the spool benchmark in temporary folders (on the file system of
/// the system's temporary folder: use `TMPDIR` for the spool's disk).
pub fn spool_bench(n: usize) -> Result<SpoolBench, BenchError> {
    use std::io::Write;
    let body = "x".repeat(72) + "\r\n";
    let raw = |i: usize| {
        format!(
            "From: knobeln@contest.example\r\nTo: p{i}@participants.example\r\n\
             Subject: KNOBELN: group results\r\n\r\n{}",
            body.repeat(27)
        )
        .into_bytes()
    };
    let write_files = |dir: &std::path::Path, fsync_each: bool| -> std::io::Result<()> {
        for i in 0..n {
            let path = dir.join(format!("{i:06}-group.eml"));
            let tmp = path.with_extension("eml.tmp");
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&raw(i))?;
            if fsync_each {
                f.sync_all()?;
            }
            std::fs::rename(&tmp, &path)?;
        }
        Ok(())
    };
    let dir = tempfile::tempdir()?;
    let t = Instant::now();
    write_files(dir.path(), false)?;
    let floor = t.elapsed();
    let dir = tempfile::tempdir()?;
    let t = Instant::now();
    write_files(dir.path(), true)?;
    let fsync_each = t.elapsed();

    let dir = tempfile::tempdir()?;
    let store = crate::store::Store::open(&dir.path().join("bench.db"))?;
    let mut spool = crate::mail::transport::spool::Spool::open(&dir.path().join("spool"))?;
    let now = chrono::Utc::now();
    for i in 0..n {
        let to = vec![format!("p{i}@participants.example")];
        crate::store::mail::queue_outgoing(
            store.conn(),
            &crate::store::mail::NewOutgoing {
                inbox_id: None,
                kind: "group",
                recipients: &to,
                budget: Default::default(),
                sender_key: None,
                subject: "KNOBELN: group results",
                message_id: &format!("bench-{i}@contest.example"),
                raw: &raw(i),
                text_at: None,
                shared: &[],
                event_key: None,
            },
            now - chrono::Duration::seconds(1),
        )?;
    }
    let config = crate::config::Config::default();
    let t = Instant::now();
    let out = crate::mail::delivery::flush(&store, &mut spool, &config, &chrono::Utc::now)?;
    let sender = t.elapsed();
    if out.sent != n {
        return Err(format!("{} of {n} mails sent", out.sent).into());
    }
    Ok(SpoolBench {
        n,
        sender,
        floor,
        fsync_each,
    })
}
