//! A whole contest at scale ([`scale_bench`]): many distinct strategies
//! compiled, all rounds, the Evolution, the results and the results site,
//! played on the local pool or the instant runner ([`ScalePlay`]).
//!
//! Not here: the engine's games alone (`game.rs`, `tournament.rs`).

use std::time::{Duration, Instant};

use super::game::{bench_strategies, AloneAt, GameAlone};
use super::measure::{cpu_time, ms, BenchError, CpuOf};
use crate::referee::RefereeConfig;
use crate::seed::SeedKey;

/// Which results site the scale benchmark keeps up to date while playing
/// and writes at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleSite {
    /// No site: the server's own work alone.
    Skip,
    /// The site without game pages (as `[site] no_game_pages = true`).
    WithoutGamePages,
    /// The site with every game's page, as a contest writes it by default.
    WithGamePages,
}

/// Figures of a whole contest at scale: `n_teams` distinct trivial
/// strategies compiled, all rounds, the Evolution, the results and the
/// results site (regenerated as groups finish, as `[site] dir` does in a
/// contest; with or without game pages, or none: [`ScaleSite`]).
#[derive(Debug, Clone)]
pub struct ScaleBench {
    pub play_mode: ScalePlay,
    /// Which results site was kept up to date while playing and written at
    /// the end.
    pub site: ScaleSite,
    /// The file systems of the bench's folder (the site and the database,
    /// under `$TMPDIR` or `/tmp`) and of the module spill's parent
    /// (`$TMPDIR` or `/var/tmp`), with their paths: on ext4 without a
    /// journal, making their files costs a search past recent removals.
    pub folder: super::folder_fs::BenchFolder,
    pub spill: super::folder_fs::BenchFolder,
    /// The final site's files and bytes on disk.
    pub site_files: u64,
    pub site_bytes: u64,
    pub n_teams: usize,
    pub jobs: usize,
    pub compile: Duration,
    pub play: Duration,
    pub n_games: u64,
    /// One game alone on one CPU, measured in this run, × games / CPUs
    /// (the lesser of [`ScaleBench::game_alone`]'s two moments).
    pub floor: Duration,
    /// One game alone on one CPU (the median of nine of the field's
    /// strategies' medians, [`super::game::game_floor`]), measured twice,
    /// the same nine modules: just before play and just after the final
    /// results.
    pub game_alone: GameAlone,
    /// The site's last write and the final results' mails, as the contest
    /// does them after its tournament.
    pub results_and_site: Duration,
    /// Their CPU time (the server's thread).
    pub results_and_site_cpu: Duration,
    /// CPU time of the final site's write alone (after play, the
    /// tournament marked finished).
    pub final_site_cpu: Duration,
    /// Time the site observer took while the games were played (its share
    /// of `play`).
    pub site_during_play: Duration,
    /// CPU time the site observer took while the games were played (its
    /// share of `server_cpu`: wall time on a loaded machine is mostly
    /// waiting).
    pub site_cpu: Duration,
    /// CPU time the contest's mails took while the games were played
    /// (their share of `server_cpu`: the mails of each finished group),
    /// and how many mails were queued meanwhile.
    pub mails_cpu: Duration,
    pub mails_while_playing: u64,
    /// The rounds' ends ([`RoundGaps`]).
    pub round_gaps: RoundGaps,
    /// CPU time of the thread that runs the tournament (the store, the
    /// schedule, the observers: the server's own work) while playing.
    pub server_cpu: Duration,
    /// CPU time of the process's other threads (the games, and the write-ahead
    /// log's checkpoints: `store::checkpoints`) while playing.
    pub games_cpu: Duration,
    /// CPU time of the pool's game threads alone while playing (their
    /// own clocks, read as each ended: `engine::pool::game_threads_cpu`),
    /// part of `games_cpu`.
    pub referee_cpu: Duration,
    /// One game alone on one CPU × games (the CPU the games need).
    pub games_floor: Duration,
    /// What the machine's CPUs did while playing (`/proc/stat`): where
    /// play is slower than its floor with the CPUs idle or given to
    /// another machine, the machine decided, not this process.
    pub machine: super::measure::MachineCpu,
    /// Modules compiled and taken from the module spill while playing (a
    /// field larger than the module cache: `--module-cache N`).
    pub modules_while_playing: crate::wasm::CompileCounts,
    /// The same over the whole run (the field's compile included).
    pub modules_in_run: crate::wasm::CompileCounts,
    /// The contest's peak resident size (play, results and site: `VmHWM`
    /// reset after the compile), or the whole process's where the peak
    /// could not be reset (`peak_reset`).
    pub peak_rss_kb: u64,
    pub peak_reset: bool,
    /// The resident size when the contest starts (after the compile).
    pub start_rss_kb: u64,
    /// The peak resident size up to the end of the compile (or of making
    /// the instant field).
    pub compile_peak_rss_kb: u64,
    /// Where the resident memory is at the end (results and site written,
    /// every observer's cache still held: [`MemoryParts`]).
    pub memory_at_end: MemoryParts,
    pub db_bytes: u64,
    /// The database's pages by what they hold (SQLite's `dbstat`): the
    /// games (their table, and its index before schema 0025), the mails
    /// (the `outbox` tables and their indexes), and the rest (teams,
    /// strategy versions, registrations, rounds, groups, free pages).
    pub games_pages: u64,
    pub mail_pages: u64,
    pub other_pages: u64,
    /// The contest's mails to its teams (every team registered with every
    /// preference the mode can serve: LAP, GRP, GRG, GRR and the final
    /// results; with real games also LGP and DGP), as queued: how many,
    /// their bytes, and the time building them took.
    pub mails: u64,
    pub mail_bytes: u64,
    pub mail_time: Duration,
    pub mail_preferences: &'static str,
    /// The mails by kind.
    pub mail_kinds: Vec<MailKind>,
    /// The bodies the mails share, stored once: how many, their bytes.
    pub shared_bodies: u64,
    pub shared_bytes: u64,
}

/// Where a process's resident memory is ([`memory_parts`]): a breakdown
/// of the peak's main parts, read at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryParts {
    /// Resident anonymous memory (the heap, the threads' arenas and
    /// stacks, the engine pool's slots) and file-backed memory (the
    /// program's own code and the libraries, SQLite's shared memory).
    pub anon_kb: u64,
    pub file_kb: u64,
    /// What the allocator (glibc's malloc, every arena) has handed out and
    /// not taken back, and what it holds free in its arenas (free chunks,
    /// resident or not: fragmentation and the room the heap keeps).
    pub malloc_in_use_kb: u64,
    pub malloc_free_kb: u64,
    /// SQLite's own allocations (its page caches, statements, schema),
    /// now and at their highest since the contest's start: part of
    /// `malloc_in_use_kb`.
    pub sqlite_kb: u64,
    pub sqlite_peak_kb: u64,
}

/// Reads [`MemoryParts`] now (`/proc/self/smaps_rollup`, `mallinfo2`,
/// `sqlite3_status64`); a part that cannot be read is 0.
pub fn memory_parts() -> MemoryParts {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let field = |name: &str| -> u64 {
        rollup
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let (rss, anon) = (field("Rss:"), field("Anonymous:"));
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let m = unsafe { libc::mallinfo2() };
    let (now, peak) = sqlite_memory(SqlitePeak::Keep);
    MemoryParts {
        anon_kb: anon,
        file_kb: rss.saturating_sub(anon),
        malloc_in_use_kb: ((m.uordblks + m.hblkhd) / 1024) as u64,
        malloc_free_kb: (m.fordblks / 1024) as u64,
        sqlite_kb: now.max(0) as u64 / 1024,
        sqlite_peak_kb: peak.max(0) as u64 / 1024,
    }
}

/// What to do with SQLite's highest memory use when it is read.
#[derive(Clone, Copy)]
enum SqlitePeak {
    Keep,
    /// Reset to the use now (the contest's own peak is then
    /// [`MemoryParts::sqlite_peak_kb`]).
    Reset,
}

/// SQLite's memory in use now and its highest since the last reset.
fn sqlite_memory(peak: SqlitePeak) -> (i64, i64) {
    let (mut now, mut highest) = (0i64, 0i64);
    // SAFETY: sqlite3_status64 writes the two integers it is given.
    unsafe {
        rusqlite::ffi::sqlite3_status64(
            rusqlite::ffi::SQLITE_STATUS_MEMORY_USED,
            &mut now,
            &mut highest,
            matches!(peak, SqlitePeak::Reset).into(),
        );
    }
    (now, highest)
}

/// The contest's mails of one kind: how many, their bytes as sent, and
/// the bytes of their own rows (without the bodies they share).
#[derive(Debug, Clone)]
pub struct MailKind {
    pub kind: String,
    pub mails: u64,
    pub sent_bytes: u64,
    pub own_bytes: u64,
}

impl ScaleBench {
    pub fn print(&self) {
        match self.play_mode {
            ScalePlay::Real => {
                println!("contest of {} teams, {} workers:", self.n_teams, self.jobs)
            }
            ScalePlay::Instant => println!(
                "contest of {} teams, games answered at once (the server's own cost; \
                 nothing compiled, no game played):",
                self.n_teams
            ),
        }
        println!(
            "  compile:          {:>9.1} s ({:.1} ms per strategy)",
            self.compile.as_secs_f64(),
            ms(self.compile) / self.n_teams as f64
        );
        println!(
            "  play:             {:>9.1} s, {} games, {:.1} games/s",
            self.play.as_secs_f64(),
            self.n_games,
            self.n_games as f64 / self.play.as_secs_f64()
        );
        println!(
            "  floor of play:    {:>9.1} s (one game alone x games / CPUs); ratio {:.2}x (goal: 1.2x)",
            self.floor.as_secs_f64(),
            self.play.as_secs_f64() / self.floor.as_secs_f64()
        );
        println!(
            "  one game alone:   {}",
            self.game_alone
                .describe("before play", "after the final results")
        );
        if let Some(m) = self.machine.shares() {
            let process = (self.server_cpu + self.games_cpu).as_secs_f64()
                / self.play.as_secs_f64().max(1e-9);
            println!(
                "  the machine's {} CPUs while playing: this process {:.2} of them, the rest of the machine {:.2}, \
                 idle {:.2}, given to other machines by the hypervisor {:.2} (where play is above its floor \
                 with CPUs not this process's, the machine decided)",
                self.machine.cpus,
                process,
                (m.busy - process).max(0.0),
                m.idle,
                m.stolen
            );
        }
        println!(
            "  CPU while playing: the server's thread {:.2} s ({:.0} us per game; goal: 20 us), \
             the games' threads {:.2} s against one game alone x games {:.2} s ({:.2}x)",
            self.server_cpu.as_secs_f64(),
            self.server_cpu.as_secs_f64() * 1e6 / self.n_games.max(1) as f64,
            self.games_cpu.as_secs_f64(),
            self.games_floor.as_secs_f64(),
            self.games_cpu.as_secs_f64() / self.games_floor.as_secs_f64().max(1e-9)
        );
        if self.play_mode == ScalePlay::Real {
            println!(
                "  of which the pool's game threads alone: {:.2} s ({:.1} us per game, {:.2}x one game alone x games; \
                 the rest, {:.2} s, the process's other threads: the watchdog, the store's checkpoints)",
                self.referee_cpu.as_secs_f64(),
                self.referee_cpu.as_secs_f64() * 1e6 / self.n_games.max(1) as f64,
                self.referee_cpu.as_secs_f64() / self.games_floor.as_secs_f64().max(1e-9),
                self.games_cpu.saturating_sub(self.referee_cpu).as_secs_f64()
            );
            println!(
                "  modules while playing: {} compiled, {} loaded from the spill, {} written to it \
                 (the whole run: {} compiled, {} loaded, {} written)",
                self.modules_while_playing.compiled,
                self.modules_while_playing.from_spill,
                self.modules_while_playing.to_spill,
                self.modules_in_run.compiled,
                self.modules_in_run.from_spill,
                self.modules_in_run.to_spill
            );
            if self.modules_while_playing.from_spill > 0 {
                println!(
                    "  a load from the spill while playing: {:.1} us of CPU of the thread that loaded it \
                     (the file's copy into a sealed memory file and its digest, deserializing, the linkers' instance pre; its `.wasm` not checked again; {:.2} s in all)",
                    self.modules_while_playing.from_spill_cpu_ns as f64
                        / 1e3
                        / self.modules_while_playing.from_spill as f64,
                    self.modules_while_playing.from_spill_cpu_ns as f64 / 1e9
                );
            }
        }
        match self.site {
            ScaleSite::Skip => println!("  site: skipped (--site skip)"),
            ScaleSite::WithoutGamePages => println!(
                "  site: without game pages ({} files, {:.1} MB; `--site game-pages` writes them too)",
                self.site_files,
                self.site_bytes as f64 / 1e6
            ),
            ScaleSite::WithGamePages => println!(
                "  site: with every game's page, as a contest writes it by default ({} files, {:.1} MB)",
                self.site_files,
                self.site_bytes as f64 / 1e6
            ),
        }
        println!("  {}", self.folder.line("the site and the database"));
        println!("  {}", self.spill.line("the module spill"));
        println!(
            "  site while playing:     {:>5.1} s ({:.1} % of play: the contest with the site takes {:.3}x the time without)",
            self.site_during_play.as_secs_f64(),
            100.0 * self.site_during_play.as_secs_f64() / self.play.as_secs_f64(),
            self.play.as_secs_f64()
                / (self.play.as_secs_f64() - self.site_during_play.as_secs_f64()).max(1e-9)
        );
        println!(
            "  the site's CPU while playing: {:.2} s ({:.0} us per game; {:.1} % of the server's thread)",
            self.site_cpu.as_secs_f64(),
            self.site_cpu.as_secs_f64() * 1e6 / self.n_games.max(1) as f64,
            100.0 * self.site_cpu.as_secs_f64() / self.server_cpu.as_secs_f64().max(1e-9)
        );
        println!(
            "  the mails' CPU while playing: {:.2} s ({:.0} us per game, {:.1} us per mail of {}; {:.1} % of the server's thread)",
            self.mails_cpu.as_secs_f64(),
            self.mails_cpu.as_secs_f64() * 1e6 / self.n_games.max(1) as f64,
            self.mails_cpu.as_secs_f64() * 1e6 / self.mails_while_playing.max(1) as f64,
            self.mails_while_playing,
            100.0 * self.mails_cpu.as_secs_f64() / self.server_cpu.as_secs_f64().max(1e-9)
        );
        println!(
            "  between rounds: {:.2} s of play in {} gaps ({:.1} % of play; from a round's last group's end to the next round's first group started), \
             of which the round's observers (its mails and site) {:.2} s",
            self.round_gaps.wall.as_secs_f64(),
            self.round_gaps.count,
            100.0 * self.round_gaps.wall.as_secs_f64() / self.play.as_secs_f64().max(1e-9),
            self.round_gaps.observers.as_secs_f64()
        );
        println!(
            "  final results and site: {:>5.2} s (CPU {:.2} s, of which the final site's {:.2} s)",
            self.results_and_site.as_secs_f64(),
            self.results_and_site_cpu.as_secs_f64(),
            self.final_site_cpu.as_secs_f64()
        );
        println!(
            "  peak RSS of the server: {} MB {} (goal: < 200 MB; resident at the contest's start: {} MB; the compile's peak: {} MB); \
             database: {:.1} MB ({:.0} bytes per game; less the mails' tables and indexes, {:.1} MB: {:.0} bytes per game, goal: 200)",
            self.peak_rss_kb / 1024,
            if self.peak_reset {
                "while playing, results and site"
            } else {
                "of the whole process, compile included"
            },
            self.start_rss_kb / 1024,
            self.compile_peak_rss_kb / 1024,
            self.db_bytes as f64 / 1e6,
            self.db_bytes as f64 / self.n_games.max(1) as f64,
            self.mail_pages as f64 / 1e6,
            self.db_bytes.saturating_sub(self.mail_pages) as f64 / self.n_games.max(1) as f64
        );
        let m = &self.memory_at_end;
        println!(
            "  resident at the end: {} MB anonymous (malloc: {} MB in use, {} MB free in its arenas; \
             SQLite's own {} MB, at most {} MB since the start), {} MB of files (the program's code, libraries)",
            m.anon_kb / 1024,
            m.malloc_in_use_kb / 1024,
            m.malloc_free_kb / 1024,
            m.sqlite_kb / 1024,
            m.sqlite_peak_kb / 1024,
            m.file_kb / 1024
        );
        for (program, bytes) in crate::sandbox::held::held_programs() {
            println!(
                "  beside its resident set: {:.1} MB of huge pages holding {} for the compile jail",
                bytes as f64 / 1e6,
                program.display()
            );
        }
        println!(
            "  the database's pages: the games {:.1} MB ({:.0} bytes per game, goal: 200), \
             the mails' tables and indexes {:.1} MB, the rest (teams, strategies, registrations, \
             rounds, the log) {:.1} MB",
            self.games_pages as f64 / 1e6,
            self.games_pages as f64 / self.n_games.max(1) as f64,
            self.mail_pages as f64 / 1e6,
            self.other_pages as f64 / 1e6
        );
        println!(
            "  contest mails ({}): {} mails, {:.1} MB stored ({:.0} kB per team), built in {:.1} s",
            self.mail_preferences,
            self.mails,
            self.mail_bytes as f64 / 1e6,
            self.mail_bytes as f64 / 1e3 / self.n_teams.max(1) as f64,
            self.mail_time.as_secs_f64()
        );
        let sent: u64 = self.mail_kinds.iter().map(|k| k.sent_bytes).sum();
        println!(
            "  the mails as sent: {:.1} MB, stored in {:.1} MB ({} shared bodies of {:.1} MB stored once, \
             the rest in the mails' own rows):",
            sent as f64 / 1e6,
            self.mail_bytes as f64 / 1e6,
            self.shared_bodies,
            self.shared_bytes as f64 / 1e6
        );
        for k in &self.mail_kinds {
            println!(
                "    {:<8} {:>6} mails, {:>8.1} MB as sent, {:>6.1} MB in their own rows",
                k.kind,
                k.mails,
                k.sent_bytes as f64 / 1e6,
                k.own_bytes as f64 / 1e6
            );
        }
    }
}

/// Registers every entry of tournament `tid` with `preferences` (a
/// plain record of the announcement's shape), for the contest's mails.
fn register_entries(
    store: &crate::store::Store,
    tid: i64,
    preferences: &str,
) -> Result<(), BenchError> {
    let now = crate::store::timestamp(chrono::Utc::now());
    for e in store.entries(tid)? {
        let address = format!("{}@participants.example", e.name);
        let record = format!(
            "mail-address: {address}\nmail-preference: {preferences}\nteam-name: {}\n\
             Organization: University of Northeast Sacrodata, Intellect City, Eggland\n\
             team-members:\n Joe Cool, 45, professional systems programmer\n \
             Jane More, 20, graduate student of computer science\n",
            e.name
        );
        store.conn().execute(
            "INSERT INTO registrations (team_id, mail_address, requested_name, preferences, \
             organization, members, record, auth_salt, auth_hash, registered_at, mailbox) \
             VALUES (?1, ?2, ?3, ?4, 'Sacrodata', '[]', ?5, x'00', x'00', ?6, ?2)",
            rusqlite::params![e.team.0, address, e.name, preferences, record, now],
        )?;
    }
    Ok(())
}

/// Two observers: the contest's mailer, then the site (timed apart; left
/// out when `site_on` is false).
struct MailsAndSite<'c, O> {
    mailer: crate::contest::mails::Mailer<'c>,
    mail_time: Duration,
    /// The mailer's CPU time on this thread.
    mail_cpu: Duration,
    site: O,
    site_on: bool,
    gaps: RoundGaps,
}

/// The wall between rounds, when no game of the field runs: from the end
/// of a round's last group told (its `GroupFinished`, told once the
/// group's last games and its end are stored, before its observers'
/// work) to the next round's first group started (its `GroupStarted`,
/// told just before its games are handed to the pool): that group's
/// mails and pages, the round's end stored, its observers, the next round
/// drawn, its schedules and its first group's programs made ready. Of it,
/// the observers' work at the round's end (`RoundFinished`: its mails and
/// its site's pages). Not in it: the storing of the round's last games
/// (the games' ends are not told to observers before they are stored; a
/// `GameFinished` comes up to [`crate::engine::run`]'s batch of games or
/// its wait after the game ended, so the next round's first one is no
/// mark of when its games began). A clock read a group, none a game.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoundGaps {
    /// Gaps measured (the rounds but the last).
    pub count: u32,
    pub wall: Duration,
    pub observers: Duration,
    last_group_end: Option<Instant>,
    open_since: Option<Instant>,
    /// The observers' time at the round's end whose gap is open.
    open_observers: Duration,
}

impl RoundGaps {
    /// Before an event reaches the observers.
    fn seen(&mut self, event: &crate::engine::run::Event) {
        use crate::engine::run::Event;
        match event {
            Event::GroupFinished { .. } => self.last_group_end = Some(Instant::now()),
            Event::RoundFinished { .. } => {
                self.open_since = self.last_group_end.take();
                self.open_observers = Duration::ZERO;
            }
            Event::GroupStarted { .. } => {
                if let Some(from) = self.open_since.take() {
                    self.count += 1;
                    self.wall += from.elapsed();
                    self.observers += std::mem::take(&mut self.open_observers);
                }
            }
            _ => {}
        }
    }
}

impl<O: crate::engine::run::Observer> crate::engine::run::Observer for MailsAndSite<'_, O> {
    fn event(
        &mut self,
        store: &crate::store::Store,
        event: &crate::engine::run::Event,
    ) -> Result<(), String> {
        self.gaps.seen(event);
        let round_end =
            matches!(event, crate::engine::run::Event::RoundFinished { .. }).then(Instant::now);
        let r = self.mails_then_site(store, event);
        if let Some(t) = round_end {
            self.gaps.open_observers += t.elapsed();
        }
        r
    }
}

impl<O: crate::engine::run::Observer> MailsAndSite<'_, O> {
    fn mails_then_site(
        &mut self,
        store: &crate::store::Store,
        event: &crate::engine::run::Event,
    ) -> Result<(), String> {
        // A game's event is nothing to the mailer (its mails come at a
        // group's and a round's ends): not timed, since reading the
        // thread's CPU clock twice (two system calls) cost more than the
        // mailer's match, about 0.5 us a game of the server's thread this
        // benchmark measured.
        if matches!(event, crate::engine::run::Event::GameFinished { .. }) {
            crate::engine::run::Observer::event(&mut self.mailer, store, event)?;
        } else {
            let (t, c) = (Instant::now(), cpu_time(CpuOf::Thread));
            let r = crate::engine::run::Observer::event(&mut self.mailer, store, event);
            self.mail_time += t.elapsed();
            self.mail_cpu += cpu_time(CpuOf::Thread).saturating_sub(c);
            r?;
        }
        if !self.site_on {
            return Ok(());
        }
        self.site.event(store, event)
    }
}

/// An observer that measures the time (and the CPU time of its thread)
/// another one takes.
struct Timed<O> {
    inner: O,
    spent: Duration,
    cpu: Duration,
}

impl<O: crate::engine::run::Observer> crate::engine::run::Observer for Timed<O> {
    fn event(
        &mut self,
        store: &crate::store::Store,
        event: &crate::engine::run::Event,
    ) -> Result<(), String> {
        // A game's event is nothing to the site (its pages come at a
        // group's and a round's ends): not timed, as for the mailer (two
        // reads of the thread's CPU clock a game were 3 % of the server's
        // thread this benchmark measured).
        if matches!(event, crate::engine::run::Event::GameFinished { .. }) {
            return self.inner.event(store, event);
        }
        let (t, c) = (Instant::now(), cpu_time(CpuOf::Thread));
        let r = self.inner.event(store, event);
        self.spent += t.elapsed();
        self.cpu += cpu_time(CpuOf::Thread).saturating_sub(c);
        r
    }
}

/// A small distinct strategy for the scale benchmark (any number of teams).
fn scale_source(i: usize) -> String {
    let description: String = (1..=15)
        .map(|l| format!("Line {l} of the description of scale strategy {i}.\n"))
        .collect();
    // A constant throw keeps every rule; the second number only makes the
    // source distinct beyond 12000 teams.
    format!(
        "#if 0\n{description}#endif\nmain() {{ int t = {}, u = {}; for (;;) make_throw(t + 0 * u); }}\n",
        i % 12000 + 1,
        i / 12000
    )
}

/// How the scale benchmark plays its games.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalePlay {
    /// Every game played by the referee and the compiled strategies.
    Real,
    /// Every game answered at once with a canned record and the strategies
    /// not compiled (one trivial binary for all): what the server itself
    /// costs around the games (store, schedule, observers, site), for
    /// fields too large to play here.
    Instant,
}

/// The database's pages (SQLite's `dbstat`, the write-ahead log's pages
/// included) by what they hold: the games' table and its indexes, the
/// mails' (`outbox*`) tables and indexes, and the rest; the write-ahead
/// log's own file beyond them is in [`ScaleBench::db_bytes`] only.
fn pages_by_part(conn: &rusqlite::Connection) -> Result<(u64, u64, u64), BenchError> {
    let (games, mails, all): (i64, i64, i64) = conn.query_row(
        "SELECT COALESCE(SUM(CASE WHEN s.tbl_name = 'games' THEN d.pgsize END), 0),
                COALESCE(SUM(CASE WHEN s.tbl_name LIKE 'outbox%' THEN d.pgsize END), 0),
                (SELECT page_count * page_size FROM pragma_page_count, pragma_page_size)
         FROM dbstat d LEFT JOIN sqlite_schema s ON s.name = d.name",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok((
        games as u64,
        mails as u64,
        (all - games - mails).max(0) as u64,
    ))
}

/// Runs a whole contest of `n_teams` in a temporary folder, with the
/// results site `which_site` (kept up to date while playing, then written).
pub fn scale_bench(
    n_teams: usize,
    jobs: usize,
    mode: ScalePlay,
    which_site: ScaleSite,
) -> Result<ScaleBench, BenchError> {
    use crate::engine::prepare::prepare_folder;
    use crate::engine::run::{run_tournament, TournamentConfig};
    use crate::engine::SystemClock;
    use crate::site::observer::SiteObserver;
    use crate::site::SiteOptions;
    use crate::store::Store;

    let dir = tempfile::tempdir()?;
    let field = dir.path().join("field");
    std::fs::create_dir(&field)?;
    for i in 0..n_teams {
        std::fs::write(field.join(format!("t{i:05}.c")), scale_source(i))?;
    }
    let db = dir.path().join("scale.db");
    let mut store = Store::open(&db)?;
    let clock = SystemClock;
    crate::toolchain::compile::runtime_wasm_object()?;
    let t = Instant::now();
    let entries: Vec<_> = match mode {
        ScalePlay::Real => {
            let prepared = prepare_folder(&store, &field, jobs, &clock)?;
            if !prepared.rejected.is_empty() {
                return Err(format!("{} strategies rejected", prepared.rejected.len()).into());
            }
            prepared
                .accepted
                .iter()
                .map(|a| (a.team, a.version))
                .collect()
        }
        ScalePlay::Instant => {
            let now = chrono::Utc::now();
            let mut entries = Vec::with_capacity(n_teams);
            for i in 0..n_teams {
                let team = store.ensure_team(&format!("t{i:05}"), now)?;
                let source = scale_source(i);
                let version = store.insert_version(
                    &crate::store::NewVersion {
                        team,
                        source: source.as_bytes(),
                        source_sha256: "instant",
                        binary: Some(b"instant"),
                        lexical_elements: None,
                        description: None,
                        report_json: "{}",
                    },
                    now,
                )?;
                entries.push((team, version));
            }
            entries
        }
    };
    let compile = t.elapsed();
    // The bound is on the contest (play, results and site; compile
    // apart): the compile phase's peak is kept, and the peak (`VmHWM`) is
    // reset to what is resident now, so that the contest's peak is its own.
    let compile_peak_rss_kb = super::compile::status_kb("VmHWM:");
    let peak_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    // What the contest starts with: the field's compile leaves freed memory
    // in the allocator's arenas, resident until it is used again.
    let start_rss_kb = super::compile::status_kb("VmRSS:");
    sqlite_memory(SqlitePeak::Reset);
    let config = TournamentConfig {
        referee: RefereeConfig::default(),
        evolution: Default::default(),
    };
    let tid = store.create_tournament(
        1,
        &SeedKey::public_from_seed(1),
        &serde_json::to_string(&config)?,
        "scale",
        &entries,
        chrono::Utc::now(),
    )?;
    let mail_preferences = match mode {
        ScalePlay::Real => "LAP,LGP,DGP,GRP,GRG,GRR",
        // Protocols replay games: instant games have none.
        ScalePlay::Instant => "LAP,GRP,GRG,GRR",
    };
    register_entries(&store, tid, mail_preferences)?;
    let mail_config = crate::config::Config::default();
    let mail_now = chrono::Utc::now;
    let mailer = crate::contest::mails::Mailer {
        config: &mail_config,
        tournament: tid,
        now: &mail_now,
        cache: Default::default(),
        replayer: Default::default(),
    };
    let t = Instant::now();
    mailer.lap(&store)?;
    let lap_time = t.elapsed();
    let mut site_inner = SiteObserver::new(dir.path().join("site"), tid);
    site_inner.options = SiteOptions {
        no_game_pages: which_site != ScaleSite::WithGamePages,
        ..SiteOptions::default()
    };
    let mut site = MailsAndSite {
        mailer,
        mail_time: lap_time,
        mail_cpu: Duration::ZERO,
        site: Timed {
            inner: site_inner,
            spent: Duration::ZERO,
            cpu: Duration::ZERO,
        },
        site_on: which_site != ScaleSite::Skip,
        gaps: RoundGaps::default(),
    };
    let mails_before: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM outbox", [], |r| r.get(0))?;
    // One game alone, the first of its two moments: with the field
    // compiled and nothing else running. Nine of the field's strategies,
    // each its own module, compiled once: the same modules at both
    // moments.
    let floor_strategies = bench_strategies(&(0..9).map(scale_source).collect::<Vec<_>>())?;
    let alone_before = AloneAt::now(&floor_strategies, 40)?;
    let t = Instant::now();
    let (thread_at_start, process_at_start) = (cpu_time(CpuOf::Thread), cpu_time(CpuOf::Process));
    let referee_at_start = crate::engine::pool::game_threads_cpu();
    let machine_at_start = super::measure::MachineCpu::now();
    let modules_at_start = crate::wasm::compile_counts();
    match mode {
        ScalePlay::Real => run_tournament(&mut store, tid, jobs, &clock, &mut site)?,
        ScalePlay::Instant => {
            let instant = |referee: &RefereeConfig| -> Result<
                Box<dyn crate::engine::pool::Runner>,
                crate::engine::EngineError,
            > {
                Ok(Box::new(crate::distributed::instant::InstantRunner::new(
                    *referee,
                )))
            };
            crate::engine::run::run_tournament_with(&mut store, tid, &instant, &clock, &mut site)?
        }
    }
    let play = t.elapsed();
    let machine = super::measure::MachineCpu::now().since(machine_at_start);
    let server_cpu = cpu_time(CpuOf::Thread).saturating_sub(thread_at_start);
    let modules_now = crate::wasm::compile_counts();
    let modules_while_playing = crate::wasm::CompileCounts {
        compiled: modules_now.compiled - modules_at_start.compiled,
        from_spill: modules_now.from_spill - modules_at_start.from_spill,
        to_spill: modules_now.to_spill - modules_at_start.to_spill,
        from_spill_cpu_ns: modules_now.from_spill_cpu_ns - modules_at_start.from_spill_cpu_ns,
    };
    let games_cpu = cpu_time(CpuOf::Process)
        .saturating_sub(process_at_start)
        .saturating_sub(server_cpu);
    let referee_cpu = crate::engine::pool::game_threads_cpu().saturating_sub(referee_at_start);
    let mails_after: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM outbox", [], |r| r.get(0))?;
    let mails_cpu = site.mail_cpu;
    let round_gaps = site.gaps;
    // What the contest does after its tournament (`contest::run`): the
    // site's last write, then the final results' mails, from the results
    // the observers kept group by group (every group settled: none is
    // ranked again from the store but the final one, whose schedule the
    // Evolution needs). Not a rebuild of the results from the store.
    let t = Instant::now();
    let site_cpu_at_start = cpu_time(CpuOf::Thread);
    if site.site_on {
        site.site.inner.finish(&store)?;
    }
    let final_site_cpu = cpu_time(CpuOf::Thread).saturating_sub(site_cpu_at_start);
    let t_final = Instant::now();
    site.mailer.final_results(&store)?;
    let final_mails = t_final.elapsed();
    let results_and_site = t.elapsed();
    let results_and_site_cpu = cpu_time(CpuOf::Thread).saturating_sub(site_cpu_at_start);
    let (site_files, site_bytes) = super::measure::dir_size(&dir.path().join("site"));
    let mail_time = site.mail_time + final_mails;
    let site_during_play = site.site.spent;
    let site_cpu = site.site.cpu;
    // The mails as stored: each row's own bytes and the bodies they share,
    // stored once (`store::mail`'s bodies).
    let (mails, mail_bytes): (i64, i64) = store.conn().query_row(
        "SELECT COUNT(*), COALESCE(SUM(length(raw)), 0)
                + (SELECT COALESCE(SUM(length(bytes)), 0) FROM outbox_bodies)
         FROM outbox",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mail_kinds = {
        let mut st = store.conn().prepare(
            "SELECT o.kind, COUNT(*), SUM(length(o.raw)), SUM(length(o.raw) + COALESCE(s.bytes, 0))
             FROM outbox o LEFT JOIN
                  (SELECT p.outbox_id AS id, SUM(length(b.bytes)) AS bytes
                   FROM outbox_parts p JOIN outbox_bodies b ON b.id = p.body_id
                   GROUP BY p.outbox_id) s ON s.id = o.id
             GROUP BY o.kind ORDER BY 4 DESC",
        )?;
        let rows = st.query_map([], |r| {
            Ok(MailKind {
                kind: r.get(0)?,
                mails: r.get::<_, i64>(1)? as u64,
                own_bytes: r.get::<_, i64>(2)? as u64,
                sent_bytes: r.get::<_, i64>(3)? as u64,
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>()?
    };
    let (shared_bodies, shared_bytes): (i64, i64) = store.conn().query_row(
        "SELECT COUNT(*), COALESCE(SUM(length(bytes)), 0) FROM outbox_bodies",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let n_games: u64 = store.conn().query_row(
        "SELECT COUNT(*) FROM games WHERE tournament_id = ?1",
        [tid],
        |r| r.get(0),
    )?;
    // The floor: one game alone on one CPU (the median of nine of the
    // field's strategies' medians of 40 games against themselves), its
    // second moment, the lesser of the two, x games / CPUs.
    // Read before the floor's game (its engine and modules come on top),
    // with the observers' caches still held.
    let memory_at_end = memory_parts();
    let game_alone = GameAlone {
        before: alone_before,
        after: AloneAt::now(&floor_strategies, 40)?,
    };
    let per_game = game_alone.least();
    let floor = per_game.mul_f64(n_games as f64 / jobs.max(1) as f64);
    let games_floor = per_game.mul_f64(n_games as f64);
    let (games_pages, mail_pages, other_pages) = pages_by_part(store.conn())?;
    drop(store);
    let db_bytes = [db.clone(), db.with_extension("db-wal")]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    // Where the peak could not be reset, the whole process's (compile
    // included), from the kernel's accounting.
    let peak_rss_kb = if peak_reset {
        super::compile::status_kb("VmHWM:")
    } else {
        // SAFETY: getrusage fills a valid struct.
        unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut u);
            u.ru_maxrss as u64
        }
    };
    Ok(ScaleBench {
        play_mode: mode,
        site: which_site,
        folder: super::folder_fs::BenchFolder::of(dir.path()),
        spill: super::folder_fs::BenchFolder::of(&crate::wasm::modules::spill_folder()),
        site_files,
        site_bytes,
        n_teams,
        jobs,
        compile,
        play,
        n_games,
        floor,
        game_alone,
        results_and_site,
        results_and_site_cpu,
        final_site_cpu,
        site_during_play,
        site_cpu,
        mails_cpu,
        mails_while_playing: (mails_after - mails_before).max(0) as u64,
        round_gaps,
        server_cpu,
        games_cpu,
        referee_cpu,
        games_floor,
        machine,
        modules_while_playing,
        modules_in_run: modules_now,
        peak_rss_kb,
        peak_reset,
        start_rss_kb,
        compile_peak_rss_kb,
        memory_at_end,
        db_bytes,
        games_pages,
        mail_pages,
        other_pages,
        mails: mails as u64,
        mail_bytes: mail_bytes as u64,
        mail_time,
        mail_preferences,
        mail_kinds,
        shared_bodies: shared_bodies as u64,
        shared_bytes: shared_bytes as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::run::Event;

    /// A gap is counted from a round's last group's end to the next round's
    /// first group started, once, with the observers' time at that
    /// round's end; the last round's end, which no group follows, is no
    /// gap, nor its observers'.
    #[test]
    fn round_gaps_count_only_the_ends_a_round_follows() {
        let group_end = |round| Event::GroupFinished {
            round,
            group: 1,
            outcome: None,
        };
        let end = |round| Event::RoundFinished {
            round,
            advanced: Vec::new(),
            disqualified: Vec::new(),
        };
        let start = |round| Event::GroupStarted {
            round,
            group: 1,
            members: Vec::new(),
        };
        let mut gaps = RoundGaps::default();
        for round in 1..=3 {
            gaps.seen(&start(round));
            gaps.seen(&group_end(round));
            gaps.seen(&start(round));
            gaps.seen(&group_end(round));
            gaps.seen(&end(round));
            gaps.open_observers += Duration::from_millis(7);
        }
        assert_eq!(gaps.count, 2);
        assert_eq!(gaps.observers, Duration::from_millis(14));
    }
}
