//! The games of a bot contest and their playing: the discipline's
//! planner fed the stored games as they are read (each row once), the
//! games it still wants handed out in batches of at most [`PLAN_BATCH`]
//! as jobs (key, seats, setup, kept folders; checked: none stored already,
//! none of other seats or another discipline), played on local threads or by workers
//! (`BotTask`), stored under their planner keys in batches as they come
//! in (one transaction per batch: [`StoreBatch`]), with what the planner
//! needs of each (`planner_result`). Who plays is [`Players`]: the
//! entries' bots (the contest run), or in-process players standing in
//! for them (`knobeln bench bot-contest`).
//!
//! What it deliberately does not do: make the tables or send mail
//! ([`super::finish`]), or read stored games (`crate::store::bots`).

use crate::store::bots::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use crate::config::Config;
use crate::discipline::play::{play_with_folders, Played, Setup, Transcript};
pub use crate::discipline::results::Results;
use crate::discipline::seam::{BotDiscipline, ContestState, Planner};
use crate::distributed::coordinator::{NatsQueue, Task, Upload};
use crate::distributed::wire::{self, BotSeat, GameIdent, Play};
use crate::lang::build::BotProgram;
use crate::lang::{Toolchain, Toolchains};
use crate::lines::LineLimits;
use crate::sandbox::folder::{FolderImage, WIRE_MAX_BYTES};
use crate::store::Store;
use crate::tournament::TeamId;

/// One game to play: its key (the planner's, as JSON), its bots, its setup.
#[derive(Debug, Clone)]
pub(super) struct Job {
    key: String,
    seats: Vec<TeamId>,
    setup: Setup,
    /// Each seat's kept working folder, when the contest keeps them
    /// (filled just before the game is played, [`kept_folders`]).
    folders: Option<Vec<FolderImage>>,
}

impl Job {
    /// Whether this game keeps its transcript: the first
    /// `[site] transcripts_per_pairing` repetitions of its pairing.
    fn keeps_transcript(&self, seam: &dyn BotDiscipline, config: &Config) -> bool {
        seam.repetition(&self.key) < config.site.transcripts_per_pairing
    }

    /// The page the game is listed on: the two teams (lower id first), or
    /// the team and the island.
    fn pairing(&self, seam: &dyn BotDiscipline) -> String {
        seam.pairing(&self.key, &self.seats)
    }
}

/// Who plays a contest's games.
#[derive(Clone, Copy)]
pub enum Players<'a> {
    /// The entries' built bots, in the bot sandbox or on workers (the
    /// contest run: [`play_all`]).
    Entries,
    /// Players in this process standing in for the bots, on the local
    /// threads (`knobeln bench bot-contest`: the server's own work
    /// measured apart from the bots'). Nothing of the product plays so.
    InProcess(&'a dyn InProcessPlayers),
}

/// Players of a contest's games in this process ([`Players::InProcess`]).
pub trait InProcessPlayers: Sync {
    /// Plays one game of `setup` between `seats`, each seat's `/work` its
    /// kept folder when `folders` gives one (a player leaves it as it
    /// was); `transcript` says whether the game's lines are kept.
    fn play(
        &self,
        setup: &Setup,
        seats: &[TeamId],
        transcript: Transcript,
        folders: Option<&[FolderImage]>,
    ) -> std::result::Result<Played, String>;
}

/// Who plays, with what each needs (the entries' bots loaded once).
#[derive(Clone, Copy)]
pub(super) enum Seats<'a> {
    Built(&'a Bots),
    InProcess(&'a dyn InProcessPlayers),
}

/// The built bots of the entries.
pub(super) struct Bots {
    by_team: BTreeMap<TeamId, (Toolchain, BotProgram)>,
    /// Each bot's program as stored (JSON), for workers on other machines.
    stored: BTreeMap<TeamId, Arc<StoredProgram>>,
}

/// A bot's program as stored, named by its SHA-256.
pub(super) struct StoredProgram {
    sha256: String,
    bytes: Vec<u8>,
}

impl Upload for StoredProgram {
    fn sha256(&self) -> &str {
        &self.sha256
    }

    fn bytes(&self) -> std::result::Result<Vec<u8>, String> {
        Ok(self.bytes.clone())
    }
}

pub(super) fn load_bots(store: &Store, c: &BotContest, config: &Config) -> Result<Bots> {
    let table = config
        .languages()
        .map_err(|e| BotContestError::Toolchain("?".into(), e))?;
    let mut programs = Vec::new();
    let mut stored = BTreeMap::new();
    for e in &c.entries {
        let bytes = store.version_binary(crate::store::VersionId(e.version))?;
        let p = BotProgram::decode(&bytes)
            .map_err(|x| BotContestError::Corrupt(format!("bot version {}: {x}", e.version)))?;
        programs.push((e.team, p));
        let sha256 = crate::engine::prepare::sha256_hex(&bytes);
        stored.insert(e.team, Arc::new(StoredProgram { sha256, bytes }));
    }
    let langs: BTreeSet<&str> = programs.iter().map(|(_, p)| p.language.as_str()).collect();
    let langs: Vec<&str> = langs.into_iter().collect();
    let toolchains = Toolchains::resolve_only(&table, &langs);
    let mut by_team = BTreeMap::new();
    for (team, p) in programs {
        let tc = match toolchains.get(&p.language) {
            Some(Ok(t)) => t.clone(),
            Some(Err(e)) => return Err(BotContestError::Toolchain(p.language.clone(), e.clone())),
            None => {
                return Err(BotContestError::Toolchain(
                    p.language.clone(),
                    "not a language of this contest".into(),
                ))
            }
        };
        by_team.insert(team, (tc, p));
    }
    Ok(Bots { by_team, stored })
}

/// Stores a played game under its key (once: a second result of the same
/// game is ignored), with its seats, pairing and, when its transcript was
/// kept, its moves (the referee's lines follow from the rules), packed.
pub(super) fn store_game(
    conn: &Connection,
    c: &BotContest,
    config: &Config,
    job: &Job,
    mut p: Played,
    now: DateTime<Utc>,
) -> Result<()> {
    let seam = seam_of(c)?;
    let result = seam.planner_result(&config.sections(), &job.key, &job.seats, &p);
    // Packed small where that is smaller (`transcript::stored_moves`); a
    // body longer than a kept game may be is kept as a cut transcript is:
    // not at all; one whose share of a team's lines is more than a kept
    // game may hold of one team's (`TranscriptBudget`) is not kept either,
    // and the record says why.
    let (moves, not_kept) = match p.take_moves() {
        Some(body) => budgeted_moves(body, &TranscriptBudget::of(c, config)?, &job.seats),
        None => (None, None),
    };
    let folders = p.take_folders();
    let record = match not_kept {
        None => serde_json::to_string(&p).expect("json"),
        Some(note) => {
            let mut v = serde_json::to_value(&p).expect("json");
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    NOT_KEPT_FIELD.into(),
                    serde_json::to_value(note).expect("json"),
                );
            }
            v.to_string()
        }
    };
    let seats: Vec<u32> = job.seats.iter().map(|t| t.0).collect();
    // The game and its bots' folders after it, together or not at all: in
    // a transaction of its own, or in the caller's (a tool that stores
    // many games at once).
    let own = if conn.is_autocommit() {
        Some(conn.unchecked_transaction()?)
    } else {
        None
    };
    let tx: &Connection = own.as_deref().unwrap_or(conn);
    let inserted = tx.execute(
        "INSERT OR IGNORE INTO bot_games \
         (contest_id, game_key, result, record, played_at, seats, pairing, moves) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            c.id,
            job.key,
            result.to_string(),
            record,
            now.to_rfc3339(),
            serde_json::to_string(&seats).expect("json"),
            job.pairing(seam),
            moves
        ],
    )?;
    // A second result of the same game changes no folder.
    if inserted == 1 {
        for (team, folder) in job.seats.iter().zip(folders.iter().flatten()) {
            tx.execute(
                "INSERT OR REPLACE INTO bot_folders (contest_id, team_id, after_game, image) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![c.id, team.0, job.key, folder.encode()],
            )?;
        }
    }
    if let Some(own) = own {
        own.commit()?;
    }
    Ok(())
}

/// A kept game's moves body as the store keeps it (`None`: not kept), and
/// why it is not kept when a team's lines in it are more than the
/// contest's transcript budget lets one game hold ([`TranscriptBudget::
/// judge`]). A body no longer than the share is kept unmeasured.
fn budgeted_moves(
    body: String,
    budget: &TranscriptBudget,
    seats: &[TeamId],
) -> (Option<rusqlite::types::Value>, Option<MovesNotKept>) {
    use crate::discipline::transcript::{stored_moves, StoredMoves};
    use rusqlite::types::Value;
    // Measured only where the stored bytes could be more than the share
    // (they are at most the body's).
    let measure = (body.len() as u64 > budget.per_game).then(|| body.clone());
    let Some(stored) = stored_moves(body) else {
        return (None, None);
    };
    if let Some(note) = measure.and_then(|b| budget.judge(&b, stored.len(), seats)) {
        return (None, Some(note));
    }
    let value = match stored {
        StoredMoves::Text(t) => Value::Text(t),
        StoredMoves::Packed(b) => Value::Blob(b),
    };
    (Some(value), None)
}

/// Each of `seats`' kept folder as its bot left it after its last stored
/// game (empty before its first).
pub(super) fn kept_folders(
    conn: &Connection,
    c: &BotContest,
    seats: &[TeamId],
) -> Result<Vec<FolderImage>> {
    let mut st = conn
        .prepare_cached("SELECT image FROM bot_folders WHERE contest_id = ?1 AND team_id = ?2")?;
    seats
        .iter()
        .map(|t| {
            let image: Option<Vec<u8>> =
                st.query_row(params![c.id, t.0], |r| r.get(0)).optional()?;
            match image {
                Some(bytes) => FolderImage::decode(&bytes, WIRE_MAX_BYTES)
                    .map_err(|e| BotContestError::Corrupt(format!("team {}'s folder: {e}", t.0))),
                None => Ok(FolderImage::empty()),
            }
        })
        .collect()
}

/// A planned game, for tools that fill a contest without playing it (the
/// site benchmark): its key, its teams in seat order, its setup, and
/// whether it keeps its transcript.
#[derive(Debug, Clone)]
pub struct PlannedGame {
    pub key: String,
    pub seats: Vec<TeamId>,
    pub setup: Setup,
    pub keeps_transcript: bool,
}

/// Stores a game the caller played (or made up: the site benchmark) as the
/// contest run stores its games.
pub fn store_planned_game(
    conn: &Connection,
    c: &BotContest,
    config: &Config,
    g: &PlannedGame,
    played: Played,
    now: DateTime<Utc>,
) -> Result<()> {
    let job = Job {
        key: g.key.clone(),
        seats: g.seats.clone(),
        setup: g.setup.clone(),
        folders: None,
    };
    store_game(conn, c, config, &job, played, now)
}

/// Plays the jobs (on `jobs` threads, or by workers through NATS when the
/// config has `[engine] nats`) and stores the results as they come (in
/// batches on local threads: [`StoreBatch`]), played by `players`.
pub(super) fn play_jobs(
    store: &Store,
    c: &BotContest,
    config: &Config,
    players: Seats<'_>,
    todo: Vec<Job>,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<()> {
    if todo.is_empty() {
        return Ok(());
    }
    // A game's kept folders are read just before it is handed out, so that
    // at most the games in flight hold theirs.
    let seam = seam_of(c)?;
    let kept = seam.keeps_folders(&config.sections());
    let load = |job: &mut Job| -> Result<()> {
        if kept {
            job.folders = Some(kept_folders(store.conn(), c, &job.seats)?);
        }
        Ok(())
    };
    let limits = seam.limits(&config.sections()).line_limits();
    let mut first_error = None;
    let nats = match players {
        Seats::Built(_) => crate::distributed::from_config(&config.engine)
            .map_err(|e| BotContestError::Queue(e.to_string()))?,
        Seats::InProcess(_) => None,
    };
    match (nats, players) {
        (Some((options, settings)), Seats::Built(bots)) => {
            let queue =
                NatsQueue::<BotTask>::start(&options, &settings, wire::Discipline::Bots, c.id)
                    .map_err(|e| BotContestError::Queue(e.to_string()))?;
            let mut waiting = todo.into_iter().enumerate();
            let mut in_flight = 0usize;
            loop {
                while in_flight < queue.capacity() {
                    let Some((i, mut job)) = waiting.next() else {
                        break;
                    };
                    load(&mut job)?;
                    let keep = job.keeps_transcript(seam, config);
                    queue.submit(BotTask::new(c.id, i as u32, job, bots, limits, keep));
                    in_flight += 1;
                }
                if in_flight == 0 {
                    break;
                }
                let (job, r) = queue.next_done().ok_or_else(|| {
                    BotContestError::Queue(
                        "stopped with games in the queue (they are played when the contest resumes)"
                            .into(),
                    )
                })?;
                in_flight -= 1;
                // Each result in a transaction of its own: the queue's
                // wait has no deadline to commit a batch by.
                match r {
                    Ok(p) => store_game(store.conn(), c, config, &job, p, now())?,
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        _ => {
            let threads = match config.rules.jobs {
                0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
                n => n,
            }
            .min(todo.len());
            let n_cpus = crate::sandbox::allowed_cpus().len();
            if threads > n_cpus {
                eprintln!(
                    "knobeln: {threads} matches at once on {n_cpus} CPUs: matches share CPUs, \
                     so a bot's reply may meet its wall-clock backstop while another \
                     match's bot computes (jobs = 0 plays one match per CPU)"
                );
            }
            // At most two games a thread are handed out at once (one
            // playing, one waiting): bounded, also with kept folders.
            let (job_tx, job_rx) = crossbeam_channel::bounded::<Job>(threads);
            let (tx, rx) = mpsc::channel::<(Job, std::result::Result<Played, String>)>();
            let mut batch = StoreBatch::new(store.conn());
            std::thread::scope(|s| -> Result<()> {
                for _ in 0..threads {
                    let tx = tx.clone();
                    let job_rx = job_rx.clone();
                    s.spawn(move || {
                        for job in job_rx.iter() {
                            let keep = if job.keeps_transcript(seam, config) {
                                Transcript::Keep
                            } else {
                                Transcript::Drop
                            };
                            let r = match players {
                                Seats::Built(bots) => {
                                    let seats: Vec<(&Toolchain, &BotProgram)> = job
                                        .seats
                                        .iter()
                                        .map(|t| {
                                            let (tc, p) = &bots.by_team[t];
                                            (tc, p)
                                        })
                                        .collect();
                                    play_with_folders(
                                        &job.setup,
                                        &seats,
                                        limits,
                                        keep,
                                        job.folders.as_deref(),
                                    )
                                    .map_err(|e| e.to_string())
                                }
                                Seats::InProcess(p) => {
                                    p.play(&job.setup, &job.seats, keep, job.folders.as_deref())
                                }
                            };
                            if tx.send((job, r)).is_err() {
                                break;
                            }
                        }
                    });
                }
                drop((tx, job_rx));
                let mut waiting = todo.into_iter();
                let mut in_flight = 0usize;
                let fed = (|| -> Result<()> {
                    loop {
                        while in_flight < 2 * threads {
                            let Some(mut job) = waiting.next() else {
                                break;
                            };
                            load(&mut job)?;
                            if job_tx.send(job).is_err() {
                                break; // every game thread is gone
                            }
                            in_flight += 1;
                        }
                        if in_flight == 0 {
                            return Ok(());
                        }
                        // An open batch is committed by its deadline even
                        // while no result comes in.
                        let next = match batch.time_left() {
                            Some(left) => match rx.recv_timeout(left) {
                                Ok(next) => next,
                                Err(mpsc::RecvTimeoutError::Timeout) => {
                                    batch.commit()?;
                                    continue;
                                }
                                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
                            },
                            None => match rx.recv() {
                                Ok(next) => next,
                                Err(_) => return Ok(()),
                            },
                        };
                        let (job, r) = next;
                        in_flight -= 1;
                        match r {
                            Ok(p) => batch.store(c, config, &job, p, now())?,
                            Err(e) => {
                                first_error.get_or_insert(e);
                            }
                        }
                    }
                })();
                // The game threads end once the channel is closed.
                drop(job_tx);
                fed
            })?;
            batch.commit()?;
        }
    }
    match first_error {
        Some(e) => Err(BotContestError::Match(e)),
        None => Ok(()),
    }
}

/// Games stored at most this long after the first of their batch came in.
const BATCH_TIME: std::time::Duration = std::time::Duration::from_millis(50);

/// Games stored at most per transaction.
const BATCH_GAMES: usize = 1000;

/// Played games stored together: one transaction per batch of results
/// that came in (at most [`BATCH_GAMES`], committed at most [`BATCH_TIME`]
/// after its first result came in, and at the end of a run's games). A
/// crash loses at most the open batch's games (played again when the
/// contest resumes: they are not stored), and a game is stored once
/// (`INSERT OR IGNORE` by its key). Dropped uncommitted (an error), its
/// games are not stored.
struct StoreBatch<'c> {
    conn: &'c Connection,
    open: Option<OpenBatch<'c>>,
}

struct OpenBatch<'c> {
    tx: rusqlite::Transaction<'c>,
    games: usize,
    since: std::time::Instant,
}

impl<'c> StoreBatch<'c> {
    fn new(conn: &'c Connection) -> StoreBatch<'c> {
        StoreBatch { conn, open: None }
    }

    /// Stores a played game in the open batch (opening one), and commits
    /// the batch when it is full or due.
    fn store(
        &mut self,
        c: &BotContest,
        config: &Config,
        job: &Job,
        p: Played,
        now: DateTime<Utc>,
    ) -> Result<()> {
        let open = match &mut self.open {
            Some(open) => open,
            None => self.open.insert(OpenBatch {
                tx: self.conn.unchecked_transaction()?,
                games: 0,
                since: std::time::Instant::now(),
            }),
        };
        store_game(&open.tx, c, config, job, p, now)?;
        open.games += 1;
        if open.games >= BATCH_GAMES || open.since.elapsed() >= BATCH_TIME {
            self.commit()?;
        }
        Ok(())
    }

    /// How long the open batch may still wait for more (`None`: none open).
    fn time_left(&self) -> Option<std::time::Duration> {
        self.open
            .as_ref()
            .map(|o| BATCH_TIME.saturating_sub(o.since.elapsed()))
    }

    /// Commits the open batch, if any.
    fn commit(&mut self) -> Result<()> {
        if let Some(open) = self.open.take() {
            open.tx.commit()?;
        }
        Ok(())
    }
}

/// A bot game played by a worker on another machine.
pub(super) struct BotTask {
    contest: i64,
    /// Its place in this run's list of games (its identity in the queue).
    index: u32,
    job: Job,
    programs: Vec<Arc<StoredProgram>>,
    seats: Vec<BotSeat>,
    limits: LineLimits,
    /// Whether the worker sends the game's moves.
    keep_transcript: bool,
}

impl BotTask {
    fn new(
        contest: i64,
        index: u32,
        job: Job,
        bots: &Bots,
        limits: LineLimits,
        keep_transcript: bool,
    ) -> BotTask {
        let programs: Vec<Arc<StoredProgram>> =
            job.seats.iter().map(|t| bots.stored[t].clone()).collect();
        let seats = job
            .seats
            .iter()
            .zip(&programs)
            .map(|(t, p)| BotSeat {
                program: p.sha256.clone(),
                language: bots.by_team[t].0.language.clone(),
            })
            .collect();
        BotTask {
            contest,
            index,
            job,
            programs,
            seats,
            limits,
            keep_transcript,
        }
    }
}

impl Task for BotTask {
    type Done = (Job, std::result::Result<Played, String>);

    fn ident(&self) -> GameIdent {
        GameIdent {
            tournament: self.contest,
            round: 0,
            group: 0,
            slot: self.index,
            attempt: 1,
        }
    }

    fn play(&self) -> Play {
        Play::Bots {
            setup: self.job.setup.clone(),
            limits: self.limits,
            seats: self.seats.clone(),
            keep_transcript: self.keep_transcript,
            folders: self.job.folders.clone(),
        }
    }

    fn programs(&self) -> Vec<Arc<dyn Upload>> {
        self.programs
            .iter()
            .map(|p| p.clone() as Arc<dyn Upload>)
            .collect()
    }

    fn accept(&self, outcome: wire::Outcome) -> std::result::Result<Self::Done, String> {
        match outcome {
            wire::Outcome::BotGame(p) => {
                let p = wire::check_bot_game(&self.job.setup, *p)?;
                let sent = self
                    .job
                    .folders
                    .as_ref()
                    .map(|f| (f.len(), self.limits.work_bytes()));
                wire::check_folders(&p, sent)?;
                Ok((self.job.clone(), Ok(p)))
            }
            _ => Err("the result of another kind of game".into()),
        }
    }

    fn failed(self, error: String) -> Self::Done {
        (self.job, Err(error))
    }
}

/// Plays every game still missing; returns the results table (without
/// storing or mailing it: [`super::finish::finish`]).
pub fn play_all(
    store: &Store,
    c: &BotContest,
    config: &Config,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Results> {
    play_all_by(store, c, config, Players::Entries, now)
}

/// The games a planner hands out at once: enough that both game threads
/// (or the workers' queue) stay busy between two looks at the store (a
/// batch of the cheapest games, Morabaraba's or the flooding island's at
/// 50 µs each, is a second of play), few enough that what they hold is
/// small and the same whatever the contest's size (the flooding island's
/// 600,000 runs each carry their island's setup).
pub const PLAN_BATCH: usize = 20_000;

/// Plays every game still missing with `players` (the contest run: the
/// entries' bots, [`play_all`]); returns the results table.
pub fn play_all_by(
    store: &Store,
    c: &BotContest,
    config: &Config,
    players: Players<'_>,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Results> {
    play_all_in_batches(store, c, config, players, now, PLAN_BATCH)
}

/// [`play_all_by`] with the planner handing out at most `batch` games at
/// once (the tests' small batches).
pub(super) fn play_all_in_batches(
    store: &Store,
    c: &BotContest,
    config: &Config,
    players: Players<'_>,
    now: &dyn Fn() -> DateTime<Utc>,
    batch: usize,
) -> Result<Results> {
    let bots;
    let seats = match players {
        Players::Entries => {
            bots = load_bots(store, c, config)?;
            Seats::Built(&bots)
        }
        Players::InProcess(p) => Seats::InProcess(p),
    };
    let seam = seam_of(c)?;
    with_view(c, config, |view| {
        let mut planner = seam.planner(view).map_err(BotContestError::Plan)?;
        let mut read = StoredResults::default();
        loop {
            feed(store, c, &mut read, planner.as_mut())?;
            let todo = next_jobs(store.conn(), c, planner.as_mut(), batch)?;
            if todo.is_empty() {
                break;
            }
            play_jobs(store, c, config, seats, todo, now)?;
        }
        // The table from what the planner was fed (every game is stored):
        // the stored results are not read a second time.
        planner
            .results(ContestState::Finished)
            .map_err(BotContestError::Plan)?
            .ok_or_else(|| {
                BotContestError::Plan("every game is played, yet the results are incomplete".into())
            })
    })
}

/// Feeds the planner the games stored since `read` last read.
pub(super) fn feed(
    store: &Store,
    c: &BotContest,
    read: &mut StoredResults,
    planner: &mut dyn Planner,
) -> Result<()> {
    read.refresh(store.conn(), c.id, |key, result| {
        planner
            .add(key, result)
            .map_err(|e| BotContestError::Plan(format!("the stored game {key}: {e}")))
    })
}

/// The next games to play, at most `limit`: those the discipline's planner
/// hands out, each checked not stored yet (a look-up by its key in the
/// store, not a set of every stored key kept in memory) and of this
/// contest's discipline and entries.
pub(super) fn next_jobs(
    conn: &Connection,
    c: &BotContest,
    planner: &mut dyn Planner,
    limit: usize,
) -> Result<Vec<Job>> {
    let seam = seam_of(c)?;
    let games = planner.next_games(limit).map_err(BotContestError::Plan)?;
    if games.len() > limit {
        return Err(BotContestError::Plan(format!(
            "the planner of {} handed out {} games, asked for at most {limit}",
            c.discipline,
            games.len()
        )));
    }
    let entered: BTreeSet<TeamId> = team_ids(c).into_iter().collect();
    let mut is_stored = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM bot_games WHERE contest_id = ?1 AND game_key = ?2)",
    )?;
    let mut jobs = Vec::with_capacity(games.len());
    let mut keys = BTreeSet::new();
    for g in games {
        // A game twice in one batch would be played twice and stored once
        // (a stored contest naming a team twice makes Morabaraba's and the
        // flooding island's planners do so).
        if !keys.insert(g.key.clone()) {
            return Err(BotContestError::Plan(format!(
                "the planner of {} handed out the game {} twice in one batch \
                 (is a team entered twice?)",
                c.discipline, g.key
            )));
        }
        // What a planner hands out is checked before a game is played: a
        // stored game again would never end the run, a game of another
        // discipline or of other seats could not be played or stored.
        let fits = g.setup.discipline() == c.discipline
            && g.seats.len() == seam.seats()
            && g.seats.iter().all(|t| entered.contains(t))
            && !is_stored.query_row(params![c.id, g.key], |r| r.get::<_, bool>(0))?;
        if !fits {
            return Err(BotContestError::Plan(format!(
                "the planner of {} asked for the game {} ({} seats, a game of {}), \
                 which is stored already or none of this contest's",
                c.discipline,
                g.key,
                g.seats.len(),
                g.setup.discipline()
            )));
        }
        jobs.push(Job {
            key: g.key,
            seats: g.seats,
            setup: g.setup,
            folders: None,
        });
    }
    Ok(jobs)
}

/// Hands the games still to play to `f` in batches of at most
/// [`PLAN_BATCH`] (the planner's first pass, then FootSteps' tie replays),
/// for tools that fill a contest without playing it: `f` stores them
/// ([`store_planned_game`]) before the next batch is planned, from what
/// was stored since.
pub fn for_each_planned_batch<E: From<BotContestError>>(
    store: &Store,
    c: &BotContest,
    config: &Config,
    mut f: impl FnMut(Vec<PlannedGame>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let seam = seam_of(c)?;
    with_view(c, config, |view| {
        let mut planner = seam.planner(view).map_err(BotContestError::Plan)?;
        let mut read = StoredResults::default();
        loop {
            feed(store, c, &mut read, planner.as_mut())?;
            let batch: Vec<PlannedGame> = next_jobs(store.conn(), c, planner.as_mut(), PLAN_BATCH)?
                .into_iter()
                .map(|j| PlannedGame {
                    keeps_transcript: j.keeps_transcript(seam, config),
                    key: j.key,
                    seats: j.seats,
                    setup: j.setup,
                })
                .collect();
            if batch.is_empty() {
                return Ok(());
            }
            f(batch)?;
        }
    })
}
