//! `knobeln bench bot-contest`: a bot contest of N bots run end to end
//! through the contest run itself (the discipline's planner, the jobs on
//! the local threads, the batched storing, the results table, then the
//! site), with the discipline's scripted players in this process
//! standing in for the bots ([`Players::InProcess`]): the server's own
//! work measured apart from the bots'.
//!
//! Printed at each doubling of the games stored (and at the end): games,
//! the server's own CPU per game (the process's CPU minus the players',
//! measured around each in-process game), the players' CPU per game (the
//! floor of this run), the peak resident memory and the database's bytes
//! per game, so that "flat in the number of games" is visible; then the
//! kept games' moves (bytes of text and packed, the CPU to pack and unpack
//! each), the results table's and the site's time. Then a sample of real games of
//! the discipline's C demo bot against itself in the bot sandbox: the bots'
//! CPU per game (the real floor) and the wall time a contest of this size
//! would take with real bots on this machine's CPUs (bots' CPU / CPUs),
//! and the longest game the discipline's limits allow.
//!
//! The scripted players play each distinct setup once by the pure rules
//! and answer every game of it with that game (a bounded cache; a setup
//! past it is played anew): their CPU is that answer, not a bot's.
//!
//! What it deliberately does not do: mail the results (the contest's
//! `finish`), play a contest of bots (`knobeln contest`), or assert any
//! figure.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::bench::BenchError;
use crate::bench_site::{ContestState, ScriptedContest};
use crate::config::Config;
use crate::contest::bots::{contest, play_all_by, InProcessPlayers, Players};
use crate::discipline::play::{Played, Setup, Transcript};
use crate::discipline::seam::{BotDiscipline, ScriptedPlayers};
use crate::discipline::Discipline;
use crate::sandbox::folder::FolderImage;
use crate::tournament::TeamId;

use crate::bench_site::CACHED_SETUPS;

/// A cached scripted game: its outcome and, once asked for, its transcript.
type CachedGame = (
    Option<crate::discipline::game::Outcome>,
    Option<Vec<crate::game::lines::Exchange>>,
);

/// Whether the run ends with the contest's site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteStep {
    Write,
    /// Not written (a field whose site would take longer than the run:
    /// `knobeln bench bot-site` measures it alone).
    Skip,
}

/// The site's figures: its wall time, the process's CPU while it was
/// written, its pages and bytes, and the process's peak memory after it.
#[derive(Debug, Clone, Copy)]
pub struct SiteFigures {
    pub wall: Duration,
    pub cpu: Duration,
    pub pages: u64,
    pub bytes: u64,
    pub peak_rss_kb: u64,
}

/// The figures at one point of the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checkpoint {
    pub games: u64,
    pub wall: Duration,
    /// The whole process's CPU so far.
    pub process_cpu: Duration,
    /// The in-process players' CPU so far (inside the process's).
    pub players_cpu: Duration,
    /// The process's peak resident memory so far (kB).
    pub peak_rss_kb: u64,
    /// The database's files (with its write-ahead log), in bytes.
    pub db_bytes: u64,
}

impl Checkpoint {
    fn server_cpu(&self) -> Duration {
        self.process_cpu.saturating_sub(self.players_cpu)
    }
}

/// The real floor: games of the C demo bot against itself in the sandbox.
#[derive(Debug, Clone)]
pub struct RealSample {
    pub games: usize,
    /// The bots' CPU per game (all seats), the mean.
    pub bots_cpu: Duration,
    /// The wall clock per game, the mean.
    pub wall: Duration,
}

/// The kept games' moves as stored: their text and packed bytes, and the
/// CPU to pack and to unpack them (measured again on the stored rows, one
/// thread, after the run).
#[derive(Debug, Clone, Copy, Default)]
pub struct KeptMoves {
    pub games: u64,
    pub text_bytes: u64,
    pub packed_bytes: u64,
    pub pack: Duration,
    pub unpack: Duration,
}

impl KeptMoves {
    /// Reads every kept game's stored moves of the contest, unpacks and
    /// packs each again under the thread's CPU clock.
    fn measure(conn: &rusqlite::Connection, contest: i64) -> Result<KeptMoves, BenchError> {
        use crate::discipline::transcript::stored_moves;
        let mut k = KeptMoves::default();
        let mut st = conn
            .prepare("SELECT moves FROM bot_games WHERE contest_id = ?1 AND moves IS NOT NULL")?;
        let mut rows = st.query([contest])?;
        while let Some(r) = rows.next()? {
            let c0 = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID);
            let text = crate::store::bots::moves_text(r.get_ref(0)?)?.ok_or("no moves")?;
            let c1 = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID);
            let again = stored_moves(text.clone()).ok_or("a kept body too long")?;
            let c2 = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID);
            k.games += 1;
            k.text_bytes += text.len() as u64;
            k.packed_bytes += again.len() as u64;
            k.unpack += c1 - c0;
            k.pack += c2 - c1;
        }
        Ok(k)
    }
}

/// The figures of one run.
#[derive(Debug, Clone)]
pub struct BotContestBench {
    pub discipline: Discipline,
    pub n_bots: usize,
    pub cpus: usize,
    pub checkpoints: Vec<Checkpoint>,
    /// The games stored (each once: the same as played).
    pub stored: u64,
    /// Playing and storing every game, the results table included.
    pub play: Duration,
    /// The kept games' moves (text, packed, CPU).
    pub kept: KeptMoves,
    /// The site, when it was written.
    pub site: Option<SiteFigures>,
    /// The real floor, or why there is none (no C toolchain, no C demo).
    pub real: Result<RealSample, String>,
    /// The longest game the limits allow: seats, each bot's wall-clock
    /// allowance per game and CPU per game.
    pub seats: usize,
    pub waited: Duration,
    pub cpu_per_bot: Duration,
}

impl BotContestBench {
    pub fn print(&self) {
        let last = self.checkpoints.last().copied().unwrap_or_default();
        let n = last.games.max(1) as f64;
        println!(
            "bot contest, {} with {} bots: {} games end to end on {} CPUs \
             (scripted players in-process)",
            self.discipline.title(),
            self.n_bots,
            last.games,
            self.cpus
        );
        println!(
            "  {:>10} {:>8} {:>14} {:>14} {:>14} {:>10} {:>10}",
            "games",
            "wall s",
            "server µs/game",
            "  (this step)",
            "players µs/g",
            "peak MB",
            "db B/game"
        );
        let mut prev = Checkpoint::default();
        for p in &self.checkpoints {
            let per = |d: Duration, g: u64| d.as_secs_f64() * 1e6 / g.max(1) as f64;
            println!(
                "  {:>10} {:>8.1} {:>14.1} {:>14.1} {:>14.1} {:>10.1} {:>10.0}",
                p.games,
                p.wall.as_secs_f64(),
                per(p.server_cpu(), p.games),
                per(
                    p.server_cpu().saturating_sub(prev.server_cpu()),
                    p.games - prev.games
                ),
                per(p.players_cpu, p.games),
                p.peak_rss_kb as f64 / 1024.0,
                p.db_bytes as f64 / p.games.max(1) as f64
            );
            prev = *p;
        }
        println!(
            "  play (planner, games, storing, results table): {:.1} s wall, {:.1} µs per game; \
             the players' floor (their CPU / {} CPUs) {:.1} s",
            self.play.as_secs_f64(),
            self.play.as_secs_f64() * 1e6 / n,
            self.cpus,
            last.players_cpu.as_secs_f64() / self.cpus as f64
        );
        let k = self.kept;
        if k.games > 0 {
            let per = |x: f64| x / k.games as f64;
            println!(
                "  kept games' moves: {} games, {:.0} bytes of text a game stored as {:.0} \
                 ({:.1} %); CPU a game to pack {:.1} µs, to unpack {:.1} µs",
                k.games,
                per(k.text_bytes as f64),
                per(k.packed_bytes as f64),
                100.0 * k.packed_bytes as f64 / k.text_bytes.max(1) as f64,
                per(k.pack.as_secs_f64() * 1e6),
                per(k.unpack.as_secs_f64() * 1e6)
            );
        }
        match self.site {
            Some(f) => println!(
                "  site: {:.1} s, CPU {:.1} s, {:.1} µs of CPU per game, {} pages, {:.1} MB; \
                 peak memory after it {:.1} MB",
                f.wall.as_secs_f64(),
                f.cpu.as_secs_f64(),
                f.cpu.as_secs_f64() * 1e6 / n,
                f.pages,
                f.bytes as f64 / 1e6,
                f.peak_rss_kb as f64 / 1024.0
            ),
            None => println!("  site: not written (--site skip)"),
        }
        match &self.real {
            Ok(r) => {
                let floor = r.bots_cpu.as_secs_f64() * last.games as f64 / self.cpus as f64;
                println!(
                    "  real floor: the C demo bot against itself, {} games in the sandbox: \
                     {:.1} ms of the bots' CPU and {:.1} ms wall per game",
                    r.games,
                    r.bots_cpu.as_secs_f64() * 1e3,
                    r.wall.as_secs_f64() * 1e3
                );
                println!(
                    "  with real bots like it: {:.0} s = {:.1} h of the bots' CPU / {} CPUs \
                     (the server's own work above: {:.1} % of it)",
                    floor,
                    floor / 3600.0,
                    self.cpus,
                    100.0 * last.server_cpu().as_secs_f64() / (floor * self.cpus as f64).max(1e-9)
                );
            }
            Err(why) => println!("  real floor: none ({why})"),
        }
        println!(
            "  the longest game the limits allow: {} bot(s), each waited for at most {} s \
             of wall clock ({} s of CPU) per game: {} s",
            self.seats,
            self.waited.as_secs(),
            self.cpu_per_bot.as_secs(),
            self.seats as u64 * self.waited.as_secs()
        );
    }
}

fn cpu_clock(clock: libc::clockid_t) -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills a valid timespec.
    unsafe { libc::clock_gettime(clock, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn file_bytes(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The discipline's scripted players as the contest's players, with
/// checkpoints at each doubling of the games played.
struct Scripted {
    players: ScriptedPlayers,
    /// Each distinct setup's outcome, and its transcript once a game of it
    /// kept one, by the setup's JSON form (at most [`CACHED_SETUPS`]).
    cache: Mutex<HashMap<String, CachedGame>>,
    games: AtomicU64,
    players_ns: AtomicU64,
    next_checkpoint: AtomicU64,
    checkpoints: Mutex<Vec<Checkpoint>>,
    t0: Instant,
    db: std::path::PathBuf,
}

impl Scripted {
    fn checkpoint(&self, games: u64) -> Checkpoint {
        let wal = self.db.with_extension("db-wal");
        Checkpoint {
            games,
            wall: self.t0.elapsed(),
            process_cpu: cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID),
            players_cpu: Duration::from_nanos(self.players_ns.load(Ordering::SeqCst)),
            peak_rss_kb: crate::bench::status_kb("VmHWM:"),
            db_bytes: file_bytes(&self.db) + file_bytes(&wal),
        }
    }
}

impl InProcessPlayers for Scripted {
    fn play(
        &self,
        setup: &Setup,
        seats: &[TeamId],
        transcript: Transcript,
        folders: Option<&[FolderImage]>,
    ) -> Result<Played, String> {
        let c0 = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID);
        let k = self.games.fetch_add(1, Ordering::SeqCst) + 1;
        // Found by the setup's JSON form (one serialisation a game, not
        // a comparison with every cached setup); the transcript is kept
        // only once a game of the setup asked for it, so a cache of the
        // flooding island's 3000 setups holds 3000 outcomes and 3 transcripts.
        let key = serde_json::to_string(setup).map_err(|e| e.to_string())?;
        let keep = transcript == Transcript::Keep;
        let cached = {
            let cache = self.cache.lock().map_err(|_| "poisoned")?;
            cache.get(&key).and_then(|(o, t)| match (keep, t) {
                (false, _) => Some((o.clone(), None)),
                (true, Some(t)) => Some((o.clone(), Some(t.clone()))),
                (true, None) => None,
            })
        };
        let (outcome, lines) = match cached {
            Some(g) => g,
            None => {
                let (o, t) = (self.players.play)(setup);
                let answer = (o.clone(), keep.then(|| t.clone()));
                let mut cache = self.cache.lock().map_err(|_| "poisoned")?;
                if cache.len() < CACHED_SETUPS || cache.contains_key(&key) {
                    cache.insert(key, (o, keep.then_some(t)));
                }
                answer
            }
        };
        let n = seats.len();
        let vary = k as usize + seats.first().map_or(0, |t| t.0 as usize);
        let played = Played {
            outcome: outcome.map(|o| (self.players.vary)(&o, vary)),
            failures: Vec::new(),
            cpu_ms: vec![3; n],
            cpu_us: vec![3000; n],
            wall_ms: 10,
            stderr: vec![String::new(); n],
            transcript: lines,
            transcript_truncated: false,
            moves: None,
            // A kept folder as the player found it.
            folders: folders.map(|f| f.to_vec()),
        };
        let spent = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(c0);
        self.players_ns
            .fetch_add(spent.as_nanos() as u64, Ordering::SeqCst);
        // Outside the players' CPU: the figures at a doubling.
        let due = self.next_checkpoint.load(Ordering::SeqCst);
        if k >= due
            && self
                .next_checkpoint
                .compare_exchange(due, due * 2, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            let p = self.checkpoint(k);
            self.checkpoints.lock().map_err(|_| "poisoned")?.push(p);
        }
        Ok(played)
    }
}

/// Runs a contest of `n_bots` scripted players of `d` end to end (each
/// pairing played `repetitions` times where the discipline has such a key,
/// else its default), then writes its site, then samples real games of
/// its C demo bot.
pub fn bot_contest_bench(
    d: Discipline,
    n_bots: usize,
    repetitions: Option<u32>,
    real_games: usize,
    site: SiteStep,
) -> Result<BotContestBench, BenchError> {
    let ScriptedContest {
        seam,
        players,
        config,
        store,
        tmp,
    } = ScriptedContest::start(d, n_bots, repetitions, ContestState::Running)?;
    let c = contest(store.conn(), d)?.ok_or("no contest")?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let scripted = Scripted {
        players,
        cache: Mutex::new(HashMap::new()),
        games: AtomicU64::new(0),
        players_ns: AtomicU64::new(0),
        next_checkpoint: AtomicU64::new(1000),
        checkpoints: Mutex::new(Vec::new()),
        t0: Instant::now(),
        db: config.database.clone(),
    };
    let t0 = Instant::now();
    let results = play_all_by(
        &store,
        &c,
        &config,
        Players::InProcess(&scripted),
        &Utc::now,
    )?;
    let play = t0.elapsed();
    let mut checkpoints = scripted.checkpoints.lock().map_err(|_| "poisoned")?.clone();
    let games = scripted.games.load(Ordering::SeqCst);
    if checkpoints.last().is_none_or(|p| p.games < games) {
        checkpoints.push(scripted.checkpoint(games));
    }
    let stored = crate::contest::bots::games_played(store.conn(), &c)?;
    let kept = KeptMoves::measure(store.conn(), c.id)?;
    let site = match site {
        SiteStep::Write => {
            let t1 = Instant::now();
            let cpu1 = cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID);
            let dir = tmp.path().join("site");
            let w = crate::site::bots::write(&dir, &store, &c, &config, &results)?;
            Some(SiteFigures {
                wall: t1.elapsed(),
                cpu: cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID).saturating_sub(cpu1),
                pages: w.n_pairings + w.n_game_pages + w.n_bots,
                bytes: crate::bench_site::dir_bytes(&dir),
                peak_rss_kb: crate::bench::status_kb("VmHWM:"),
            })
        }
        SiteStep::Skip => None,
    };
    let limits = seam.limits(&config.sections());
    Ok(BotContestBench {
        discipline: d,
        n_bots,
        cpus,
        checkpoints,
        stored,
        play,
        kept,
        site,
        real: real_sample(seam, &config, real_games),
        seats: seam.seats(),
        waited: Duration::from_secs(limits.waited_secs),
        cpu_per_bot: Duration::from_secs(limits.cpu_secs),
    })
}

/// Games of the discipline's C demo bot against itself in the bot sandbox,
/// with the contest's setup and limits.
fn real_sample(
    seam: &dyn BotDiscipline,
    config: &Config,
    games: usize,
) -> Result<RealSample, String> {
    if games == 0 {
        return Err("no real games asked for".into());
    }
    use crate::lang::build::{build, Build, BuildLimits};
    use crate::lang::{choose, LanguageTable, Toolchains};
    let demo = seam
        .demo_bots()
        .iter()
        .find(|b| b.file.ends_with(".c"))
        .ok_or("the discipline has no C demo bot")?;
    let table = LanguageTable::builtin();
    let choice = choose(&table, Some(demo.file), None)?;
    let toolchains = Toolchains::resolve(&table);
    let tc = match toolchains.get(&choice.language) {
        Some(Ok(tc)) => tc,
        Some(Err(why)) => return Err(why.clone()),
        None => return Err("no C toolchain".into()),
    };
    let program = match build(
        tc,
        &choice.assumed,
        demo.source.as_bytes(),
        &BuildLimits::default(),
    )
    .map_err(|e| e.to_string())?
    {
        Build::Built { program, .. } => program,
        Build::Rejected { report } => return Err(report.text()),
    };
    let sections = config.sections();
    let limits = seam.limits(&sections).line_limits();
    let seats = vec![(tc, &program); seam.seats()];
    let (mut cpu, mut wall) = (Duration::ZERO, Duration::ZERO);
    for k in 0..games {
        let setup = seam.play_setup(&sections, 1 + k as u64, None)?;
        let folders = seam
            .keeps_folders(&sections)
            .then(|| vec![FolderImage::empty(); seam.seats()]);
        let t = Instant::now();
        let played = crate::discipline::play::play_with_folders(
            &setup,
            &seats,
            limits,
            Transcript::Drop,
            folders.as_deref(),
        )
        .map_err(|e| e.to_string())?;
        wall += t.elapsed();
        cpu += Duration::from_micros(played.cpu_us.iter().sum());
    }
    Ok(RealSample {
        games,
        bots_cpu: cpu / games as u32,
        wall: wall / games as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The contest benchmark plays a tiny contest of every seed discipline
    /// end to end through the contest run (the results table made, the
    /// site written), and every game played is stored once, in batches:
    /// the last checkpoint counts the games stored.
    #[test]
    fn every_seed_discipline_runs_its_contest_end_to_end() {
        for d in crate::discipline::registry::built_in() {
            let b = bot_contest_bench(d, 3, Some(2), 0, SiteStep::Write)
                .unwrap_or_else(|e| panic!("{d}: {e}"));
            let last = b.checkpoints.last().expect("a checkpoint");
            assert!(last.games > 0, "{d}: {b:?}");
            assert!(b.site.is_some_and(|f| f.pages > 0), "{d}: {b:?}");
            assert_eq!(last.games, b.stored, "{d}: {b:?}");
            assert!(last.db_bytes > 0, "{d}: {b:?}");
            assert!(b.kept.games > 0, "{d}: games keep their moves: {b:?}");
            assert!(b.kept.packed_bytes < b.kept.text_bytes, "{d}: {b:?}");
        }
    }
}
