//! `knobeln bench mail`: how fast a participant gets a reply through a
//! real mail stack (Postfix + Dovecot on this machine, as
//! `deploy/mailstack.sh start` runs them).
//!
//! A participant submits a registration and then a "please compile" by
//! SMTP, byte for byte as swaks would, to a contest address of the bench's
//! own; the clock runs from the submission until the reply is readable in
//! the participant's IMAP mailbox (watched every 5 ms over one session).
//! The server runs in this process, as `knobeln serve` runs it: once with
//! IMAP IDLE, once polling every `poll_secs` (5 s, the old default: the
//! reference), each with a database and a contest address of its own. The
//! floor, measured in the same run, is the stack alone: a mail submitted
//! by SMTP until it is readable by IMAP, without knobeln.
//!
//! Then, with a bot contest (the ultimatum game) on IDLE: a burst of
//! registrations submitted at once (registrations answered per second,
//! until the last acknowledgement is readable), and the acknowledgement
//! time of one more registration while four slow compile requests run
//! (bots that answer every line after 1.5 s; `compiles_at_once = 4`).
//! Last, a stranger's flood (issue 35): 300 mails from forged senders
//! (help mails, "please compile" with a guessed string) submitted at once,
//! then a proven team's status request and a newcomer's registration:
//! until each reply is readable, and until the flood is all answered.
//!
//! Prints figures (the goal: each reply within 1 s of submission, also
//! while compiles run); it asserts nothing. Deliberately not here: starting the mail stack (the
//! bench fails with the command that starts it).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::{Config, ImapConfig, TlsMode, DEFAULT_IDLE_RENEW_SECS, DEFAULT_KEEP_DAYS};
use crate::mail::transport::imap::ImapPoller;
use crate::mail::transport::smtp::SmtpSender;
use crate::server::Server;
use crate::store::Store;

/// Where the mail stack listens.
#[derive(Debug, Clone)]
pub struct Stack {
    pub host: String,
    pub imap_port: u16,
    pub smtp_port: u16,
    /// Every user's password (user name = full address).
    pub password: String,
}

/// How the server under test waits for mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    Idle,
    Polling { secs: u64 },
}

/// One participant's two replies.
#[derive(Debug, Clone, Copy)]
pub struct Replies {
    pub acknowledgement: Duration,
    pub report: Duration,
}

/// The figures.
#[derive(Debug, Clone)]
pub struct MailBench {
    pub stack: Stack,
    /// The stack alone, per run.
    pub floor: Vec<Duration>,
    pub idle: Vec<Replies>,
    pub polling: Vec<Replies>,
    pub poll_secs: u64,
    pub load: Load,
}

/// The bot contest's figures.
#[derive(Debug, Clone)]
pub struct Load {
    /// Registrations submitted at once, and until the last acknowledgement
    /// was readable.
    pub burst: usize,
    pub burst_took: Duration,
    /// One registration's acknowledgement while four slow compile requests
    /// run.
    pub under_compiles: Duration,
    /// Strangers' mails submitted at once (help mails and "please compile"
    /// mails with a guessed string, from forged senders), and how long
    /// until the server had answered or dropped them all.
    pub flood: usize,
    pub flood_took: Duration,
    /// A proven team's status request submitted right after the flood:
    /// until its reply was readable.
    pub status_under_flood: Duration,
    /// A newcomer's registration submitted right after the flood: until
    /// its acknowledgement was readable.
    pub registration_under_flood: Duration,
}

/// Registrations of the burst.
const BURST: usize = 20;
/// Slow compile requests running while a registration is timed.
const SLOW_COMPILES: usize = 4;
/// Strangers' mails of the flood.
const FLOOD: usize = 300;

/// How long to wait for any one mail before giving up.
const PATIENCE: Duration = Duration::from_secs(120);

/// Runs the benchmark: `runs` participants per way of waiting.
pub fn mail_bench(stack: &Stack, runs: usize, poll_secs: u64) -> anyhow::Result<MailBench> {
    use anyhow::Context;
    let smtp = SmtpSender::new(&crate::config::SmtpConfig {
        host: stack.host.clone(),
        port: stack.smtp_port,
        tls: TlsMode::None,
        user: None,
        password: None,
        password_file: None,
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    smtp.probe().map_err(|e| {
        anyhow::anyhow!(
            "the mail stack does not answer ({e}); start it with `deploy/mailstack.sh start`"
        )
    })?;
    let runs = runs.max(1);
    let mut floor = Vec::new();
    for _ in 0..runs {
        let to = unique("floor", "participants.example");
        let mut watch = Watcher::new(stack, &to)?;
        let t0 = Instant::now();
        submit(&smtp, "bench@lords.example", &to, "floor", "hello\r\n")?;
        watch.until(1, t0)?;
        floor.push(t0.elapsed());
    }
    let idle = run_server(stack, &smtp, Waiting::Idle, runs).context("with IDLE")?;
    let polling =
        run_server(stack, &smtp, Waiting::Polling { secs: poll_secs }, runs).context("polling")?;
    let load = load(stack, &smtp).context("a bot contest under load")?;
    Ok(MailBench {
        stack: stack.clone(),
        floor,
        idle,
        polling,
        poll_secs,
        load,
    })
}

/// A server of a bot contest on IDLE: a burst of registrations, then one
/// more while slow compile requests run.
fn load(stack: &Stack, smtp: &SmtpSender) -> anyhow::Result<Load> {
    let server = BenchServer::start(
        stack,
        Waiting::Idle,
        &format!(
            "discipline = \"ultimatum\"\n[ultimatum]\nentry_secs = 30\n\
             [limits]\nreplies_per_sender_per_day = 1000\nreplies_per_domain_per_day = 10000\n\
             compiles_at_once = {SLOW_COMPILES}\n"
        ),
    )?;
    let contest = server.contest.clone();
    let result = (|| {
        // The burst: every registration submitted, then every
        // acknowledgement awaited.
        let teams: Vec<crate::demo::DemoTeam> =
            (0..BURST).map(|i| bench_team(i, "burst")).collect();
        let mut watchers = teams
            .iter()
            .map(|t| Watcher::new(stack, &t.address))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let t0 = Instant::now();
        for (i, t) in teams.iter().enumerate() {
            let raw = crate::demo::registration_mail(t, &contest, i);
            submit_raw(smtp, &t.address, &contest, &with_unique_id(&raw))?;
        }
        let mut auths = Vec::new();
        for w in &mut watchers {
            let mails = w.until(1, t0)?;
            auths.push(auth_of(&mails[0])?);
        }
        let burst_took = t0.elapsed();
        // Four slow compile requests of four of those teams.
        let slow = "import sys, time\nfor l in sys.stdin:\n    time.sleep(1.5)\n    \
                    if l.startswith('START'):\n        print(500, flush=True)\n    \
                    elif l.startswith('ANGEBOT'):\n        print('JA', flush=True)\n";
        for (t, auth) in teams.iter().zip(&auths).take(SLOW_COMPILES) {
            let body = format!("language: python\n# <<FROM>> {} {auth}\n{slow}", t.name)
                .replace('\n', "\r\n");
            submit(smtp, &t.address, &contest, "please compile", &body)?;
        }
        // They are taken in and running; then a newcomer registers.
        std::thread::sleep(Duration::from_secs(3));
        let newcomer = bench_team(BURST, "newcomer");
        let mut watch = Watcher::new(stack, &newcomer.address)?;
        let raw = crate::demo::registration_mail(&newcomer, &contest, BURST);
        let t1 = Instant::now();
        submit_raw(smtp, &newcomer.address, &contest, &with_unique_id(&raw))?;
        watch.until(1, t1)?;
        let under_compiles = t1.elapsed();
        // A stranger's flood (issue 35): forged senders, help mails and
        // compile requests with a guessed string; then a proven team's
        // status request and a newcomer's registration.
        let t2 = Instant::now();
        for i in 0..FLOOD {
            let from = unique("stranger", "participants.example");
            if i % 2 == 0 {
                submit(smtp, &from, &contest, "help", "hello\r\n")?;
            } else {
                let body = format!(
                    "language: python\r\n# <<FROM>> {} guessed{i}\r\n{slow}",
                    teams[0].name
                )
                .replace('\n', "\r\n");
                submit(smtp, &from, &contest, "please compile", &body)?;
            }
        }
        let t3 = Instant::now();
        let team = &teams[SLOW_COMPILES];
        let mut watch_team = Watcher::new(stack, &team.address)?;
        let before = watch_team.until(1, t3)?.len();
        submit(
            smtp,
            &team.address,
            &contest,
            "status",
            &format!("<<FROM>> {} {}\r\n", team.name, auths[SLOW_COMPILES]),
        )?;
        let late = bench_team(BURST + 1, "late");
        let mut watch_late = Watcher::new(stack, &late.address)?;
        let raw = crate::demo::registration_mail(&late, &contest, BURST + 1);
        submit_raw(smtp, &late.address, &contest, &with_unique_id(&raw))?;
        let t4 = Instant::now();
        watch_team.until(before + 1, t3)?;
        let status_under_flood = t3.elapsed();
        watch_late.until(1, t4)?;
        let registration_under_flood = t4.elapsed();
        // Read only (WAL: a reader never blocks the server's writes).
        let db = rusqlite::Connection::open_with_flags(
            &server.database,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        db.busy_timeout(Duration::from_secs(5))?;
        loop {
            let waiting: i64 = db.query_row(
                // The four slow compile requests of before still run.
                "SELECT COUNT(*) FROM inbox WHERE state = 'new' \
                 AND (queue_key IS NULL OR queue_key NOT LIKE 'c:%')",
                [],
                |r| r.get(0),
            )?;
            if waiting == 0 {
                break;
            }
            anyhow::ensure!(
                t2.elapsed() < PATIENCE,
                "the flood was not done within {} s",
                PATIENCE.as_secs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        anyhow::Ok(Load {
            burst: BURST,
            burst_took,
            under_compiles,
            flood: FLOOD,
            flood_took: t2.elapsed(),
            status_under_flood,
            registration_under_flood,
        })
    })();
    server.stop(result)
}

/// A demo team with an address and a name of its own.
fn bench_team(i: usize, tag: &str) -> crate::demo::DemoTeam {
    let mut team = crate::demo::field(1)
        .into_iter()
        .next()
        .expect("one demo team");
    team.address = unique(tag, "participants.example");
    team.name = format!("{tag}_{i}_{}", std::process::id() % 100_000);
    team
}

/// The authentification string in an acknowledgement.
fn auth_of(raw: &[u8]) -> anyhow::Result<String> {
    let text = mail_parser::MessageParser::default()
        .parse(raw)
        .and_then(|m| m.body_text(0).map(|b| b.into_owned()))
        .unwrap_or_default();
    crate::demo::auth_in(&text)
        .ok_or_else(|| anyhow::anyhow!("no authentification string in the reply: {text}"))
}

/// A server under test, in this process as `serve` runs it, with a
/// database and a contest address of its own; `extra` is more of its
/// config (TOML sections).
struct BenchServer {
    contest: String,
    /// Its database (read by the bench to see what still waits).
    database: std::path::PathBuf,
    shutdown: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Result<(), crate::server::ServerError>>,
    _dir: tempfile::TempDir,
}

impl BenchServer {
    fn start(stack: &Stack, waiting: Waiting, extra: &str) -> anyhow::Result<BenchServer> {
        let dir = tempfile::tempdir()?;
        let contest = unique("bench-contest", "contest.example");
        let (idle, poll_secs) = match waiting {
            Waiting::Idle => (true, 600),
            Waiting::Polling { secs } => (false, secs),
        };
        let mut config = Config::parse(&format!(
            "database = {db:?}\ntransport = \"imap\"\n\
             [contest]\naddress = \"{contest}\"\norganizer = \"{org}\"\nloop_id = \"{contest}\"\n\
             {extra}\n\
             [smtp]\nhost = \"{host}\"\nport = {smtp}\ntls = \"none\"\n",
            db = dir.path().join("bench.db").display().to_string(),
            org = unique("bench-organizer", "contest.example"),
            host = stack.host,
            smtp = stack.smtp_port,
        ))?;
        config.imap = Some(ImapConfig {
            host: stack.host.clone(),
            port: stack.imap_port,
            tls: TlsMode::None,
            user: contest.clone(),
            password: Some(stack.password.clone()),
            password_file: None,
            mailbox: "INBOX".into(),
            poll_secs,
            idle,
            idle_renew_secs: DEFAULT_IDLE_RENEW_SECS,
            keep_days: DEFAULT_KEEP_DAYS,
        });
        let store = Store::open(&config.database)?;
        let database = config.database.clone();
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        let thread = std::thread::Builder::new()
            .name("bench-serve".into())
            .spawn(move || Server::new(config, store).serve(flag))?;
        // Logged in and waiting (IDLE) before the first mail.
        std::thread::sleep(Duration::from_millis(1500));
        Ok(BenchServer {
            contest,
            database,
            shutdown,
            thread,
            _dir: dir,
        })
    }

    /// Stops the server; `result` is what the bench got from it.
    fn stop<T>(self, result: anyhow::Result<T>) -> anyhow::Result<T> {
        self.shutdown.store(true, Ordering::SeqCst);
        match self.thread.join() {
            Ok(Ok(())) => result,
            Ok(Err(e)) => Err(anyhow::anyhow!("the server failed: {e}")),
            Err(_) => Err(anyhow::anyhow!("the server panicked")),
        }
    }
}

/// One server (in this process) and `runs` participants, one after the
/// other.
fn run_server(
    stack: &Stack,
    smtp: &SmtpSender,
    waiting: Waiting,
    runs: usize,
) -> anyhow::Result<Vec<Replies>> {
    let server = BenchServer::start(
        stack,
        waiting,
        "[limits]\nreplies_per_sender_per_day = 1000\n",
    )?;
    let result = (|| {
        let mut out = Vec::new();
        for r in 0..runs {
            out.push(one_participant(stack, smtp, &server.contest, r)?);
        }
        anyhow::Ok(out)
    })();
    server.stop(result)
}

/// A registration and a "please compile" of a new team: the time until
/// each reply is readable.
fn one_participant(
    stack: &Stack,
    smtp: &SmtpSender,
    contest: &str,
    run: usize,
) -> anyhow::Result<Replies> {
    let team = bench_team(run, "bench");
    let mut watch = Watcher::new(stack, &team.address)?;
    let registration = crate::demo::registration_mail(&team, contest, run);
    let t0 = Instant::now();
    submit_raw(smtp, &team.address, contest, &with_unique_id(&registration))?;
    let mails = watch.until(1, t0)?;
    let acknowledgement = t0.elapsed();
    let auth = auth_of(&mails[0])?;
    let compile = crate::demo::compile_mail(&team, &auth, contest, run);
    let t1 = Instant::now();
    submit_raw(smtp, &team.address, contest, &with_unique_id(&compile))?;
    let mails = watch.until(2, t1)?;
    let report = t1.elapsed();
    let subject = mail_parser::MessageParser::default()
        .parse(&mails[1])
        .and_then(|m| m.subject().map(str::to_string))
        .unwrap_or_default();
    anyhow::ensure!(
        subject.contains("compilation report: accepted"),
        "the second reply is {subject:?}"
    );
    Ok(Replies {
        acknowledgement,
        report,
    })
}

/// The demo's mails carry fixed Message-IDs; each run needs its own.
fn with_unique_id(raw: &str) -> String {
    let id = unique("msg", "bench.example");
    let mut out = String::with_capacity(raw.len() + 64);
    for line in raw.split_inclusive("\r\n") {
        if line.to_ascii_lowercase().starts_with("message-id:") {
            out.push_str(&format!("Message-ID: <{id}>\r\n"));
        } else {
            out.push_str(line);
        }
    }
    out
}

fn submit(
    smtp: &SmtpSender,
    from: &str,
    to: &str,
    subject: &str,
    body: &str,
) -> anyhow::Result<()> {
    let raw = format!(
        "From: {from}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: <{}>\r\n\r\n{body}",
        unique("msg", "bench.example")
    );
    submit_raw(smtp, from, to, &raw)
}

fn submit_raw(smtp: &SmtpSender, from: &str, to: &str, raw: &str) -> anyhow::Result<()> {
    smtp.send_raw(from, &[to.to_string()], raw.as_bytes())
        .map_err(|e| anyhow::anyhow!("submitting to {to}: {e}"))
}

/// A participant's mailbox, looked at every 5 ms over one IMAP session.
struct Watcher {
    poller: ImapPoller,
}

impl Watcher {
    fn new(stack: &Stack, user: &str) -> anyhow::Result<Watcher> {
        let poller = ImapPoller::connect(&ImapConfig {
            host: stack.host.clone(),
            port: stack.imap_port,
            tls: TlsMode::None,
            user: user.to_string(),
            password: Some(stack.password.clone()),
            password_file: None,
            mailbox: "INBOX".into(),
            poll_secs: 1,
            idle: false,
            idle_renew_secs: DEFAULT_IDLE_RENEW_SECS,
            keep_days: DEFAULT_KEEP_DAYS,
        })?;
        Ok(Watcher { poller })
    }

    /// The mailbox's mails once it holds `n`.
    fn until(&mut self, n: usize, since: Instant) -> anyhow::Result<Vec<Vec<u8>>> {
        loop {
            let (_, mails) = self.poller.fetch_new(None, 0, usize::MAX)?;
            if mails.len() >= n {
                return Ok(mails.into_iter().map(|m| m.raw).collect());
            }
            anyhow::ensure!(
                since.elapsed() < PATIENCE,
                "no reply within {} s",
                PATIENCE.as_secs()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn unique(tag: &str, domain: &str) -> String {
    use std::sync::atomic::AtomicUsize;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{tag}-{}-{n}-{nanos:x}@{domain}", std::process::id())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

impl MailBench {
    pub fn print(&self) {
        let s = &self.stack;
        println!(
            "mail: replies through the local Postfix + Dovecot (SMTP {}:{}, IMAP {}:{}), {} participants each",
            s.host,
            s.smtp_port,
            s.host,
            s.imap_port,
            self.idle.len()
        );
        println!(
            "floor, the stack alone (SMTP submission until readable by IMAP): median {} ({})",
            ms(median(self.floor.clone())),
            self.floor
                .iter()
                .map(|d| ms(*d))
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!(
            "{:<24}{:>22}{:>22}",
            "server waits by", "registration -> ack", "compile -> report"
        );
        let rows = [
            ("IMAP IDLE".to_string(), &self.idle),
            (format!("polling every {} s", self.poll_secs), &self.polling),
        ];
        for (label, runs) in rows {
            for (i, r) in runs.iter().enumerate() {
                println!(
                    "{:<24}{:>22}{:>22}",
                    if i == 0 { label.as_str() } else { "" },
                    ms(r.acknowledgement),
                    ms(r.report)
                );
            }
            println!(
                "{:<24}{:>22}{:>22}",
                "  median",
                ms(median(runs.iter().map(|r| r.acknowledgement).collect())),
                ms(median(runs.iter().map(|r| r.report).collect()))
            );
        }
        let worst = self
            .idle
            .iter()
            .map(|r| r.acknowledgement.max(r.report))
            .max()
            .unwrap_or_default();
        println!(
            "goal: every reply readable within 1 s of submission; with IDLE the slowest took {} ({})",
            ms(worst),
            if worst <= Duration::from_secs(1) {
                "met"
            } else {
                "missed"
            }
        );
        let l = &self.load;
        println!(
            "a bot contest (ultimatum) on IMAP IDLE: {} registrations submitted at once, all \
             acknowledgements readable after {} ({:.1} registrations answered per second)",
            l.burst,
            ms(l.burst_took),
            l.burst as f64 / l.burst_took.as_secs_f64().max(1e-9)
        );
        println!(
            "a registration while {SLOW_COMPILES} slow compile requests run: acknowledgement \
             readable after {} (goal: 1 s, {})",
            ms(l.under_compiles),
            if l.under_compiles <= Duration::from_secs(1) {
                "met"
            } else {
                "missed"
            }
        );
        println!(
            "a stranger's flood of {} mails (help, \"please compile\" with a guessed string, \
             forged senders): all answered or dropped after {}",
            l.flood,
            ms(l.flood_took)
        );
        println!(
            "submitted right after it: a team's status request answered after {}, a \
             newcomer's registration after {} (goal: 1 s each, {})",
            ms(l.status_under_flood),
            ms(l.registration_under_flood),
            if l.status_under_flood.max(l.registration_under_flood) <= Duration::from_secs(1) {
                "met"
            } else {
                "missed"
            }
        );
    }
}
