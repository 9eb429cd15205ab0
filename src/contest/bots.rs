//! The contest run of a bot discipline (ultimatum, flooding island,
//! FootSteps, Morabaraba): at the start the entries are fixed (every
//! registered team's latest accepted bot of the contest's discipline), the
//! discipline's planner says which games to play, the games are played in
//! the bot sandbox (on local threads, or by workers on other machines when
//! the config has `[engine] nats`: same games, same results), each result
//! is stored as it comes in (so a run killed
//! midway resumes with the games still missing), and at the end the
//! discipline's own table goes to every participant by mail, in the same
//! transaction that marks the contest finished.
//!
//! Tables (pure, [`results_text`]): the ultimatum game's `Bot Plus Minus
//! Won Draw Lost`; the flooding island's mean survived rounds per island
//! and their sum; FootSteps' games won and their percentage, then the pair
//! table; Morabaraba's points with f(V), head-to-head for ties.
//!
//! What it does not do: the rules (`crate::game`), the planners
//! (`crate::tournament`), how a bot runs (`crate::sandbox::bot`). KNOBELN's
//! own contest is [`super::run`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::config::Config;
use crate::discipline::play::{play_with_folders, Outcome, Played, Setup, Transcript};
use crate::discipline::transcript;
use crate::discipline::Discipline;
use crate::distributed::coordinator::{NatsQueue, Task, Upload};
use crate::distributed::wire::{self, BotSeat, GameIdent, Play};
use crate::game::flooding::Island;
use crate::game::ultimatum as ultimatum_game;
use crate::lang::build::BotProgram;
use crate::lang::{Toolchain, Toolchains};
use crate::lines::LineLimits;
use crate::outbox::outgoing::{OutAttachment, Outgoing};
use crate::outbox::{enqueue, Cause};
use crate::sandbox::folder::{FolderImage, WIRE_MAX_BYTES};
use crate::store::mail::all_registrations;
use crate::store::{Store, StoreError};
use crate::tournament::{flooding, footsteps, morabaraba, ultimatum, TeamId};

/// Why a bot contest could not go on (the server's trouble, or no bots).
#[derive(Debug, thiserror::Error)]
pub enum BotContestError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("no team has an accepted bot for {0}")]
    NoBots(&'static str),
    #[error("the contest is not started")]
    NotStarted,
    #[error("the {0} toolchain is missing on this machine: {1}")]
    Toolchain(String, String),
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    #[error("a game could not be refereed: {0}")]
    Match(String),
    /// The NATS queue of `[engine] nats` could not be used.
    #[error("the queue of games: {0}")]
    Queue(String),
    #[error("the planner: {0}")]
    Plan(String),
    #[error("mail: {0}")]
    Mail(String),
    #[error("island {0}: {1}")]
    Island(String, String),
    #[error("the flooding island has no island to play: `[flooding] islands` names no file, no team sent an island, and `[flooding] drawn_islands` is 0 (set it to 3, the default)")]
    NoIslands,
    /// Another process plays the contest (who, and until when).
    #[error("{0}")]
    Held(String),
}

impl From<super::lease::LeaseError> for BotContestError {
    fn from(e: super::lease::LeaseError) -> Self {
        match e {
            super::lease::LeaseError::Held(who) => BotContestError::Held(who),
            super::lease::LeaseError::Store(e) => BotContestError::Store(e),
        }
    }
}

type Result<T> = std::result::Result<T, BotContestError>;

/// An entry: the team, its bot version, its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub team: TeamId,
    pub version: i64,
    pub name: String,
}

/// A started contest as stored.
#[derive(Debug, Clone)]
pub struct BotContest {
    pub id: i64,
    pub discipline: Discipline,
    pub seed: u64,
    pub entries: Vec<Entry>,
    /// (name, text) of the islands (flooding only).
    pub islands: Vec<(String, String)>,
    pub finished: bool,
}

/// The contest, if started.
pub fn contest(conn: &Connection) -> Result<Option<BotContest>> {
    let row = conn
        .query_row(
            "SELECT id, discipline, seed, entries, islands, state FROM bot_contests \
             ORDER BY id LIMIT 1",
            [],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            },
        )
        .optional()?;
    let Some((id, d, seed, entries, islands, state)) = row else {
        return Ok(None);
    };
    let corrupt = |e: String| BotContestError::Corrupt(e);
    Ok(Some(BotContest {
        id,
        discipline: d.parse().map_err(corrupt)?,
        seed: seed as u64,
        entries: serde_json::from_str(&entries).map_err(|e| corrupt(e.to_string()))?,
        islands: serde_json::from_str(&islands).map_err(|e| corrupt(e.to_string()))?,
        finished: state == "finished",
    }))
}

/// Starts the contest once: fixes the entries and the islands. Returns the
/// contest (the one already started, if any).
pub fn start(
    store: &mut Store,
    config: &Config,
    seed: u64,
    now: DateTime<Utc>,
) -> Result<BotContest> {
    if let Some(c) = contest(store.conn())? {
        return Ok(c);
    }
    let d = config.contest.discipline;
    let mut entries = Vec::new();
    for reg in all_registrations(store.conn())? {
        let version: Option<i64> = store
            .conn()
            .query_row(
                "SELECT v.id FROM strategy_versions v JOIN bot_programs b ON b.version_id = v.id \
                 WHERE v.team_id = ?1 AND v.accepted = 1 AND b.discipline = ?2 \
                 ORDER BY v.id DESC LIMIT 1",
                params![reg.team.0, d.name()],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(version) = version {
            entries.push(Entry {
                team: reg.team,
                version,
                name: reg.team_name,
            });
        }
    }
    if entries.is_empty() {
        return Err(BotContestError::NoBots(d.title()));
    }
    let mut islands: Vec<(String, String)> = Vec::new();
    if d == Discipline::Flooding {
        // The contest's islands: the organizer's files, the teams' islands
        // and those drawn from the seed; never the kit's test islands.
        let sent: Vec<(String, String)> = {
            let mut st = store.conn().prepare(
                "SELECT t.name, i.island FROM bot_islands i JOIN teams t ON t.id = i.team_id \
                 ORDER BY i.team_id",
            )?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<std::result::Result<_, _>>()?
        };
        for (team, text) in sent {
            islands.push((team, text));
        }
        for path in &config.flooding.islands {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(path)
                .map_err(|e| BotContestError::Island(name.clone(), e.to_string()))?;
            Island::parse(&text)
                .map_err(|e| BotContestError::Island(name.clone(), e.to_string()))?;
            islands.push((name, text));
        }
        for (name, island) in
            crate::tournament::islands::drawn_islands(seed, config.flooding.drawn_island_count())
        {
            islands.push((name, island.to_text()));
        }
        if islands.is_empty() {
            return Err(BotContestError::NoIslands);
        }
    }
    let section = crate::discipline::seam::of(d)
        .map(|b| b.section(config))
        .unwrap_or_else(|| json!({}));
    store.conn().execute(
        "INSERT INTO bot_contests (discipline, seed, config, entries, islands, state, started_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6)",
        params![
            d.name(),
            seed as i64,
            section.to_string(),
            serde_json::to_string(&entries).expect("json"),
            serde_json::to_string(&islands).expect("json"),
            now.to_rfc3339()
        ],
    )?;
    contest(store.conn())?.ok_or(BotContestError::NotStarted)
}

/// One game to play: its key (the planner's, as JSON), its bots, its setup.
#[derive(Debug, Clone)]
struct Job {
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
    fn keeps_transcript(&self, d: Discipline, config: &Config) -> bool {
        repetition_of(d, &self.key) < config.site.transcripts_per_pairing
    }

    /// The page the game is listed on: the two teams (lower id first), or
    /// the team and the island.
    fn pairing(&self) -> String {
        pairing_of(&self.setup, &self.key, &self.seats)
    }
}

/// Which repetition of its pairing a game is (0 for the first): the
/// ultimatum game's repetition, FootSteps' game of the pair, the flooding
/// island's run; Morabaraba plays each pairing once.
fn repetition_of(d: Discipline, key: &str) -> u32 {
    match d {
        Discipline::Ultimatum => serde_json::from_str::<ultimatum::MatchKey>(key)
            .map(|k| k.repetition)
            .unwrap_or(u32::MAX),
        Discipline::Flooding => serde_json::from_str::<FloodKey>(key)
            .map(|k| k.run)
            .unwrap_or(u32::MAX),
        Discipline::Footsteps => serde_json::from_str::<footsteps::GameKey>(key)
            .map(|k| k.game)
            .unwrap_or(u32::MAX),
        _ => 0,
    }
}

/// A game's pairing: `LO-HI` (team ids) for two seats, `TEAM@ISLAND` for
/// the flooding island.
fn pairing_of(setup: &Setup, key: &str, seats: &[TeamId]) -> String {
    match (setup, seats) {
        (Setup::Flooding { .. }, [t, ..]) => {
            let island = serde_json::from_str::<FloodKey>(key)
                .map(|k| k.island)
                .unwrap_or(0);
            format!("{}@{island}", t.0)
        }
        (_, [a, b]) => format!("{}-{}", a.0.min(b.0), a.0.max(b.0)),
        _ => String::new(),
    }
}

/// The result table of a bot contest.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "discipline", rename_all = "snake_case")]
pub enum Results {
    Ultimatum(ultimatum::Table),
    Flooding {
        islands: Vec<String>,
        table: flooding::FloodingTable,
    },
    Footsteps(footsteps::Table),
    Morabaraba(morabaraba::MorabarabaTable),
}

/// The built bots of the entries.
struct Bots {
    by_team: BTreeMap<TeamId, (Toolchain, BotProgram)>,
    /// Each bot's program as stored (JSON), for workers on other machines.
    stored: BTreeMap<TeamId, Arc<StoredProgram>>,
}

/// A bot's program as stored, named by its SHA-256.
struct StoredProgram {
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

fn load_bots(store: &Store, c: &BotContest, config: &Config) -> Result<Bots> {
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

/// The stored results of the contest: key → result JSON.
fn stored(conn: &Connection, contest: i64) -> Result<BTreeMap<String, String>> {
    let mut st = conn.prepare("SELECT game_key, result FROM bot_games WHERE contest_id = ?1")?;
    let rows = st.query_map([contest], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

fn parse<T: for<'de> Deserialize<'de>>(s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| BotContestError::Corrupt(e.to_string()))
}

/// Stores a played game under its key (once: a second result of the same
/// game is ignored), with its seats, pairing and, when its transcript was
/// kept, its moves (the referee's lines follow from the rules).
fn store_game(
    conn: &Connection,
    c: &BotContest,
    config: &Config,
    job: &Job,
    mut p: Played,
    now: DateTime<Utc>,
) -> Result<()> {
    let result = planner_result(c.discipline, config, job, &p);
    let moves = p.take_moves();
    let folders = p.take_folders();
    let record = serde_json::to_string(&p).expect("json");
    let seats: Vec<u32> = job.seats.iter().map(|t| t.0).collect();
    // The game and its bots' folders after it, together or not at all.
    let tx = conn.unchecked_transaction()?;
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
            job.pairing(),
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
    tx.commit()?;
    Ok(())
}

/// Each of `seats`' kept folder as its bot left it after its last stored
/// game (empty before its first).
fn kept_folders(conn: &Connection, c: &BotContest, seats: &[TeamId]) -> Result<Vec<FolderImage>> {
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

/// FootSteps' planned games as jobs.
fn footsteps_jobs<'a>(
    games: Vec<footsteps::ScheduledGame>,
    config: &'a Config,
) -> impl Iterator<Item = Job> + 'a {
    games.into_iter().map(move |g| Job {
        key: serde_json::to_string(&g.key).expect("json"),
        seats: g.seats.to_vec(),
        setup: Setup::Footsteps(config.footsteps.params()),
        folders: None,
    })
}

/// Every game of the first pass of the contest's planner.
fn first_jobs(c: &BotContest, config: &Config) -> Result<Vec<Job>> {
    let teams = team_ids(c);
    Ok(match c.discipline {
        Discipline::Ultimatum => {
            let tc = ultimatum::Config {
                repetitions: config.ultimatum.repetitions,
            };
            ultimatum::schedule(&teams, &tc)
                .map(|m| Job {
                    key: serde_json::to_string(&m.key).expect("json"),
                    seats: m.seats.to_vec(),
                    setup: Setup::Ultimatum(config.ultimatum.params()),
                    folders: None,
                })
                .collect()
        }
        Discipline::Flooding => {
            let islands = parse_islands(c)?;
            let ids: Vec<flooding::IslandId> =
                (0..islands.len() as u32).map(flooding::IslandId).collect();
            let format = flooding::FloodingFormat {
                runs: config.flooding.runs,
            };
            flooding::plan(c.seed, &teams, &ids, format)
                .into_iter()
                .map(|r| Job {
                    key: serde_json::to_string(&FloodKey {
                        island: r.island.0,
                        run: r.run,
                        team: r.team,
                    })
                    .expect("json"),
                    seats: vec![r.team],
                    setup: Setup::Flooding {
                        island: islands[r.island.0 as usize].clone(),
                        params: config.flooding.params(),
                        seed: r.seed,
                    },
                    folders: None,
                })
                .collect()
        }
        Discipline::Footsteps => {
            let names = names_of(c);
            match footsteps::plan(&teams, &config.footsteps.tournament(), &[], &names)
                .map_err(|e| BotContestError::Plan(e.to_string()))?
            {
                footsteps::Plan::Done(_) => Vec::new(),
                footsteps::Plan::Play { games, .. } => footsteps_jobs(games, config).collect(),
            }
        }
        Discipline::Morabaraba | Discipline::Knobeln => morabaraba::plan(&teams)
            .into_iter()
            .map(|p| Job {
                key: serde_json::to_string(&p).expect("json"),
                seats: vec![p.first, p.second],
                setup: Setup::Morabaraba,
                folders: None,
            })
            .collect(),
    })
}

/// Plays the jobs (on `jobs` threads, or by workers through NATS when the
/// config has `[engine] nats`) and stores each result as it comes.
fn play_jobs(
    store: &Store,
    c: &BotContest,
    config: &Config,
    bots: &Bots,
    todo: Vec<Job>,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<()> {
    if todo.is_empty() {
        return Ok(());
    }
    // A game's kept folders are read just before it is handed out, so that
    // at most the games in flight hold theirs.
    let kept = crate::discipline::keeps_folders(c.discipline, config);
    let load = |job: &mut Job| -> Result<()> {
        if kept {
            job.folders = Some(kept_folders(store.conn(), c, &job.seats)?);
        }
        Ok(())
    };
    let limits = crate::discipline::seam::of(c.discipline)
        .ok_or(BotContestError::NoBots("KNOBELN"))?
        .limits(config)
        .line_limits();
    let mut first_error = None;
    let mut keep = |job: Job, r: std::result::Result<Played, String>| -> Result<()> {
        match r {
            Ok(p) => store_game(store.conn(), c, config, &job, p, now())?,
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
        Ok(())
    };
    let nats = crate::distributed::from_config(&config.engine)
        .map_err(|e| BotContestError::Queue(e.to_string()))?;
    match nats {
        Some((options, settings)) => {
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
                    let keep = job.keeps_transcript(c.discipline, config);
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
                keep(job, r)?;
            }
        }
        None => {
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
            std::thread::scope(|s| -> Result<()> {
                for _ in 0..threads {
                    let tx = tx.clone();
                    let job_rx = job_rx.clone();
                    s.spawn(move || {
                        for job in job_rx.iter() {
                            let seats: Vec<(&Toolchain, &BotProgram)> = job
                                .seats
                                .iter()
                                .map(|t| {
                                    let (tc, p) = &bots.by_team[t];
                                    (tc, p)
                                })
                                .collect();
                            let keep = if job.keeps_transcript(c.discipline, config) {
                                Transcript::Keep
                            } else {
                                Transcript::Drop
                            };
                            let r = play_with_folders(
                                &job.setup,
                                &seats,
                                limits,
                                keep,
                                job.folders.as_deref(),
                            )
                            .map_err(|e| e.to_string());
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
                        let Ok((job, r)) = rx.recv() else {
                            return Ok(());
                        };
                        in_flight -= 1;
                        keep(job, r)?;
                    }
                })();
                // The game threads end once the channel is closed.
                drop(job_tx);
                fed
            })?;
        }
    }
    match first_error {
        Some(e) => Err(BotContestError::Match(e)),
        None => Ok(()),
    }
}

/// A bot game played by a worker on another machine.
struct BotTask {
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

/// What the planner needs of a played game.
fn planner_result(d: Discipline, config: &Config, job: &Job, p: &Played) -> serde_json::Value {
    let failed_seat = p.failures.first().map(|f| f.bot);
    match (d, &p.outcome) {
        (Discipline::Ultimatum, o) => {
            let key: ultimatum::MatchKey = serde_json::from_str(&job.key).expect("own key");
            let (points, forfeited_by) = match o {
                Some(Outcome::Ultimatum(o)) => (o.scored(), o.forfeited_by.or(failed_seat)),
                _ => ([0, 0], failed_seat),
            };
            let mut points = points;
            if let Some(f) = forfeited_by {
                points[f] = 0;
            }
            json!(ultimatum::PlayedMatch {
                key,
                points,
                forfeited_by
            })
        }
        (Discipline::Flooding, o) => {
            let k: FloodKey = serde_json::from_str(&job.key).expect("own key");
            let rounds = match o {
                Some(Outcome::Flooding(o)) => o.rounds,
                _ => 0,
            };
            json!(flooding::RunResult {
                team: k.team,
                island: flooding::IslandId(k.island),
                run: k.run,
                rounds
            })
        }
        (Discipline::Footsteps, o) => {
            let key: footsteps::GameKey = serde_json::from_str(&job.key).expect("own key");
            let winner = match o {
                Some(Outcome::Footsteps(o)) => o.winner.map(|w| job.seats[w]),
                _ => failed_seat.map(|f| job.seats[1 - f]),
            };
            json!(footsteps::PlayedGame { key, winner })
        }
        (_, o) => {
            let pairing: morabaraba::Pairing = serde_json::from_str(&job.key).expect("own key");
            let winner = match o {
                Some(Outcome::Morabaraba(o)) => o.winner,
                _ => failed_seat.map(|f| 1 - f),
            };
            // f(V) is the seed's: CPU time as its 2.0 GHz machine's.
            let cpu = |i: usize| {
                config
                    .morabaraba
                    .seed_micros(p.cpu_us.get(i).copied().unwrap_or(0))
            };
            json!(morabaraba::GameResult {
                pairing,
                winner,
                cpu_micros: [cpu(0), cpu(1)]
            })
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct FloodKey {
    island: u32,
    run: u32,
    team: TeamId,
}

fn team_ids(c: &BotContest) -> Vec<TeamId> {
    c.entries.iter().map(|e| e.team).collect()
}

fn names_of(c: &BotContest) -> impl Fn(TeamId) -> String + '_ {
    move |t| {
        c.entries
            .iter()
            .find(|e| e.team == t)
            .map(|e| e.name.clone())
            .unwrap_or_else(|| format!("team {}", t.0))
    }
}

/// Plays every game still missing; returns the results table (without
/// storing or mailing it: [`finish`]).
pub fn play_all(
    store: &Store,
    c: &BotContest,
    config: &Config,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Results> {
    let bots = load_bots(store, c, config)?;
    loop {
        let todo = next_jobs(store, c, config)?;
        if todo.is_empty() {
            break;
        }
        play_jobs(store, c, config, &bots, todo, now)?;
    }
    complete_results(store, c, config)?.ok_or_else(|| {
        BotContestError::Plan("every game is played, yet the results are incomplete".into())
    })
}

/// The games still to play: of the planner's first pass those not stored
/// yet, then (FootSteps) the tie replays the stored results call for.
fn next_jobs(store: &Store, c: &BotContest, config: &Config) -> Result<Vec<Job>> {
    let done = stored(store.conn(), c.id)?;
    let mut first: Vec<Job> = first_jobs(c, config)?
        .into_iter()
        .filter(|j| !done.contains_key(&j.key))
        .collect();
    if crate::discipline::keeps_folders(c.discipline, config) {
        // One phase at a time: each bot's matches in one fixed order.
        let n = c.entries.len();
        let phase_of = |j: &Job| {
            serde_json::from_str::<ultimatum::MatchKey>(&j.key)
                .map(|k| ultimatum::phase(n, &k))
                .unwrap_or(u64::MAX)
        };
        if let Some(next) = first.iter().map(phase_of).min() {
            first.retain(|j| phase_of(j) == next);
        }
    }
    if !first.is_empty() || c.discipline != Discipline::Footsteps {
        return Ok(first);
    }
    let played: Vec<footsteps::PlayedGame> =
        done.values().map(|v| parse(v)).collect::<Result<_>>()?;
    let names = names_of(c);
    Ok(
        match footsteps::plan(
            &team_ids(c),
            &config.footsteps.tournament(),
            &played,
            &names,
        )
        .map_err(|e| BotContestError::Plan(e.to_string()))?
        {
            footsteps::Plan::Done(_) => Vec::new(),
            footsteps::Plan::Play { games, .. } => footsteps_jobs(games, config)
                .filter(|j| !done.contains_key(&j.key))
                .collect(),
        },
    )
}

/// The games still to play (the planner's first pass, then FootSteps' tie
/// replays), for tools that fill a contest without playing it.
pub fn next_planned_games(
    store: &Store,
    c: &BotContest,
    config: &Config,
) -> Result<Vec<PlannedGame>> {
    Ok(next_jobs(store, c, config)?
        .into_iter()
        .map(|j| PlannedGame {
            keeps_transcript: j.keeps_transcript(c.discipline, config),
            key: j.key,
            seats: j.seats,
            setup: j.setup,
        })
        .collect())
}

fn parse_islands(c: &BotContest) -> Result<Vec<Island>> {
    c.islands
        .iter()
        .map(|(n, t)| {
            Island::parse(t).map_err(|e| BotContestError::Island(n.clone(), e.to_string()))
        })
        .collect()
}

fn ultimatum_table(store: &Store, c: &BotContest, config: &Config) -> Result<ultimatum::Table> {
    let played: Vec<ultimatum::PlayedMatch> = stored(store.conn(), c.id)?
        .values()
        .map(|v| parse(v))
        .collect::<Result<_>>()?;
    let tc = ultimatum::Config {
        repetitions: config.ultimatum.repetitions,
    };
    let table = ultimatum::table(&team_ids(c), &tc, &played, &names_of(c))
        .map_err(|e| BotContestError::Plan(e.to_string()))?;
    Ok(if config.ultimatum.prize {
        table.with_prizes()
    } else {
        table
    })
}

fn flooding_results(store: &Store, c: &BotContest, config: &Config) -> Result<Results> {
    let results: Vec<flooding::RunResult> = stored(store.conn(), c.id)?
        .values()
        .map(|v| parse(v))
        .collect::<Result<_>>()?;
    let ids: Vec<flooding::IslandId> = (0..c.islands.len() as u32)
        .map(flooding::IslandId)
        .collect();
    let format = flooding::FloodingFormat {
        runs: config.flooding.runs,
    };
    let table = flooding::rank(&team_ids(c), &ids, format, &results, &names_of(c))
        .map_err(|e| BotContestError::Plan(e.to_string()))?;
    Ok(Results::Flooding {
        islands: c.islands.iter().map(|(n, _)| n.clone()).collect(),
        table,
    })
}

fn morabaraba_results(store: &Store, c: &BotContest) -> Result<Results> {
    let results: Vec<morabaraba::GameResult> = stored(store.conn(), c.id)?
        .values()
        .map(|v| parse(v))
        .collect::<Result<_>>()?;
    let table = morabaraba::rank(&team_ids(c), &results, &names_of(c))
        .map_err(|e| BotContestError::Plan(e.to_string()))?;
    Ok(Results::Morabaraba(table))
}

/// The results so far, from the stored games (for status and the site;
/// FootSteps only once finished).
pub fn results(store: &Store, c: &BotContest, config: &Config) -> Result<Option<Results>> {
    if c.discipline == Discipline::Ultimatum && !c.finished {
        return Ok(None);
    }
    complete_results(store, c, config)
}

/// The table from the stored games, whether or not the contest is marked
/// finished (the ultimatum game's table needs every match).
fn complete_results(store: &Store, c: &BotContest, config: &Config) -> Result<Option<Results>> {
    Ok(match c.discipline {
        Discipline::Ultimatum => Some(Results::Ultimatum(ultimatum_table(store, c, config)?)),
        Discipline::Flooding => Some(flooding_results(store, c, config)?),
        Discipline::Footsteps => {
            let played: Vec<footsteps::PlayedGame> = stored(store.conn(), c.id)?
                .values()
                .map(|v| parse(v))
                .collect::<Result<_>>()?;
            match footsteps::plan(
                &team_ids(c),
                &config.footsteps.tournament(),
                &played,
                &names_of(c),
            ) {
                Ok(footsteps::Plan::Done(t)) => Some(Results::Footsteps(t)),
                _ => None,
            }
        }
        _ => Some(morabaraba_results(store, c)?),
    })
}

/// Games stored so far.
pub fn games_played(conn: &Connection, c: &BotContest) -> Result<u64> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM bot_games WHERE contest_id = ?1",
        [c.id],
        |r| r.get(0),
    )?;
    Ok(n as u64)
}

/// Marks the contest finished and queues the results mail to every
/// team that took part (an entry of the contest: a team without a bot
/// gets no contest mail, issue 35), in one transaction (a mail already
/// queued is not queued twice).
pub fn finish(
    store: &mut Store,
    c: &BotContest,
    config: &Config,
    results: &Results,
    now: DateTime<Utc>,
) -> Result<()> {
    let text = results_text(results);
    let names = entry_names(c);
    let regs: Vec<_> = all_registrations(store.conn())?
        .into_iter()
        .filter(|r| names.contains_key(&r.team))
        .collect();
    // One pass over the stored games: every bot's summary rows, and the
    // moves of the kept games for the teams that asked for transcripts.
    let want: BTreeMap<TeamId, BotMailWishes> = regs
        .iter()
        .map(|r| (r.team, wishes(&r.preferences)))
        .collect();
    let name_of = |t: &TeamId| name_in(&names, t);
    let mut tally = Tally::default();
    // Per team: the parts (each at most one protocol mail's size), games
    // attached, games left out.
    let mut moves: BTreeMap<TeamId, (Vec<String>, u64, u64)> = BTreeMap::new();
    let part_cap = config.rules.max_protocol_mail_bytes.max(4096);
    for_each_game(store, c, config, |g| {
        tally.add(&g, &name_of);
        if let Some(m) = &g.moves {
            let seat_names: Vec<String> = g.seats.iter().map(&name_of).collect();
            let text = transcript::moves_text(&g.setup, &g.island_name, &seat_names, m);
            // The game's name (its anchor on the site) after the first line.
            let text = match text.split_once('\n') {
                Some((first, rest)) => format!("{first}\n# game: {}\n{rest}", g.slug()),
                None => text,
            };
            let mut seen = BTreeSet::new();
            for t in &g.seats {
                if !seen.insert(*t) || !want.get(t).is_some_and(|w| w.transcripts) {
                    continue;
                }
                let (parts, n_in, n_out) = moves.entry(*t).or_default();
                let fits_last = parts
                    .last()
                    .is_some_and(|p| p.len() + text.len() <= part_cap);
                if fits_last {
                    parts.last_mut().expect("a part").push_str(&text);
                    *n_in += 1;
                } else if parts.len() < TRANSCRIPT_MAIL_PARTS && text.len() <= part_cap {
                    parts.push(text.clone());
                    *n_in += 1;
                } else {
                    *n_out += 1;
                }
            }
        }
        Ok(())
    })?;
    let heading = contest_heading(&config.contest.name, c.discipline);
    let tx = store.conn_mut().transaction()?;
    tx.execute(
        "UPDATE bot_contests SET state = 'finished', finished_at = ?2, results = ?3 \
         WHERE id = ?1 AND state = 'running'",
        params![
            c.id,
            now.to_rfc3339(),
            serde_json::to_string(results).expect("json")
        ],
    )?;
    // The kept folders last until the contest ends.
    tx.execute("DELETE FROM bot_folders WHERE contest_id = ?1", [c.id])?;
    let body = crate::mail::texts::render(
        "bot_results",
        &json!({
            "heading": heading,
            "table": text.trim_end(),
        }),
    )
    .map_err(|e| BotContestError::Mail(e.to_string()))?;
    let render = |name: &str, data: serde_json::Value| {
        crate::mail::texts::render(name, &data).map_err(|e| BotContestError::Mail(e.to_string()))
    };
    for r in regs {
        let w = &want[&r.team];
        let mut extra: Vec<(&str, String, String, Vec<OutAttachment>)> = Vec::new();
        if w.summary {
            let rows = tally.rows_of(r.team);
            extra.push((
                "bot_summary",
                format!(
                    "{}: your results per {}",
                    config.contest.name,
                    if c.discipline == Discipline::Flooding {
                        "island"
                    } else {
                        "opponent"
                    }
                ),
                render(
                    "bot_summary",
                    json!({
                        "heading": heading,
                        "islands": c.discipline == Discipline::Flooding,
                        "transcripts": w.transcripts,
                        "team": r.team_name,
                        "table": summary_text(c.discipline, &rows).trim_end(),
                        "played": !rows.is_empty(),
                    }),
                )?,
                vec![],
            ));
        }
        if w.transcripts {
            let (parts, n_in, n_out) = moves.remove(&r.team).unwrap_or_default();
            let n_parts = parts.len().max(1);
            let mut parts = parts.into_iter();
            for i in 1..=n_parts {
                let part = parts.next();
                let subject = if n_parts > 1 {
                    format!(
                        "{}: the transcripts of your games (part {i} of {n_parts})",
                        config.contest.name
                    )
                } else {
                    format!("{}: the transcripts of your games", config.contest.name)
                };
                extra.push((
                    "bot_transcripts",
                    subject,
                    render(
                        "bot_transcripts",
                        json!({
                            "heading": heading,
                            "team": r.team_name,
                            "first": i == 1,
                            "n_attached": n_in,
                            "one_game": n_in == 1,
                            "n_parts": n_parts,
                            "one_part": n_parts == 1,
                            "n_left_out": n_out,
                            "kept_per_pairing": config.site.transcripts_per_pairing,
                            "one_bot": c.discipline == Discipline::Flooding,
                            "attachment": if n_parts > 1 {
                                format!("transcripts-{i}.txt")
                            } else {
                                "transcripts.txt".into()
                            },
                        }),
                    )?,
                    part.map(|p| OutAttachment {
                        filename: if n_parts > 1 {
                            format!("transcripts-{i}.txt")
                        } else {
                            "transcripts.txt".into()
                        },
                        content_type: "text/plain; charset=utf-8".into(),
                        bytes: p.into_bytes(),
                    })
                    .into_iter()
                    .collect(),
                ));
            }
        }
        for (kind, subject, body, attachments) in extra {
            let key = format!(
                "BOT{}:{}:{}:{subject}",
                kind.to_uppercase(),
                c.id,
                r.team_name
            );
            let m = Outgoing {
                kind,
                to: vec![r.mail_address.clone()],
                subject,
                body,
                in_reply_to: None,
                references: vec![],
                attachments,
            };
            let cause = Cause {
                event_key: Some(&key),
                ..Cause::default()
            };
            enqueue(&tx, &config.contest, &m, cause, now)
                .map_err(|e| BotContestError::Mail(e.to_string()))?;
        }
        let m = Outgoing {
            kind: "final",
            to: vec![r.mail_address.clone()],
            subject: format!("{}: the final results", config.contest.name),
            body: body.clone(),
            in_reply_to: None,
            references: vec![],
            attachments: vec![],
        };
        let key = format!("BOTFINAL:{}:{}", c.id, r.team_name);
        let cause = Cause {
            event_key: Some(&key),
            ..Cause::default()
        };
        enqueue(&tx, &config.contest, &m, cause, now)
            .map_err(|e| BotContestError::Mail(e.to_string()))?;
    }
    tx.commit()?;
    Ok(())
}

/// Starts (if needed), plays and finishes the contest of a bot discipline.
pub fn run_contest(
    store: &mut Store,
    config: &Config,
    seed: u64,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<Results> {
    // One process plays the contest at a time, as KNOBELN's (a game is
    // stored once whoever plays it; the lease keeps a second process from
    // playing them all again). Taken before the contest is created, so
    // that a `serve` seeing it created cannot take it in between.
    let lease = super::run::take_lease(store, config)?;
    let c = start(store, config, seed, now())?;
    let results = play_all(store, &c, config, now)?;
    if lease.lost() {
        return Err(BotContestError::Held(
            "another process took the contest over (this one stalled past its lease)".into(),
        ));
    }
    if !c.finished {
        finish(store, &c, config, &results, now())?;
    }
    drop(lease);
    Ok(results)
}

fn cut(name: &str, width: usize) -> String {
    name.chars().take(width).collect()
}

/// The results table as text (7-bit, at most 72 columns), in the
/// discipline's own form.
pub fn results_text(results: &Results) -> String {
    let mut t = String::new();
    match results {
        Results::Ultimatum(table) => {
            t.push_str(&format!(
                "Every bot played every other in both orders, {} times; Plus and\n\
                 Minus are the mean points per repetition: Plus what the bot\n\
                 scored, Minus what its opponents scored against it. Ranked by\n\
                 Plus, then by the higher Minus.\n\n",
                table.repetitions
            ));
            let prize = !table.prizes.is_empty();
            t.push_str(&format!(
                "{:>5}  {:<20} {:>10} {:>10} {:>4} {:>4} {:>4}{}\n",
                "Place",
                "Bot",
                "Plus",
                "Minus",
                "Won",
                "Draw",
                "Lost",
                if prize { "      Prize" } else { "" }
            ));
            for r in &table.rows {
                t.push_str(&format!(
                    "{:>5}  {:<20} {:>10} {:>10} {:>4} {:>4} {:>4}{}\n",
                    format!("{}.", r.place),
                    cut(&r.name, 20),
                    r.plus,
                    r.minus,
                    r.won,
                    r.drawn,
                    r.lost,
                    match table.prize_of(r.team) {
                        Some(c) => format!(" {:>6}.{:02} EUR", c / 100, c % 100),
                        None if prize => String::new(),
                        None => String::new(),
                    }
                ));
            }
            if prize {
                t.push_str(&format!(
                    "\nPrize (the 2011 rule): the first {} places get P / (20000 * (N - 1))\n\
                     euros, P their Plus, N = {} bots.\n",
                    ultimatum::PRIZE_PLACES,
                    table.rows.len()
                ));
            }
            let forfeits: Vec<String> = table
                .rows
                .iter()
                .filter(|r| r.forfeits > 0)
                .map(|r| format!("{} ({})", r.name, r.forfeits))
                .collect();
            if !forfeits.is_empty() {
                t.push_str(&format!(
                    "\nMatches forfeited (a broken rule or limit): {}\n",
                    forfeits.join(", ")
                ));
            }
        }
        Results::Flooding { islands, table } => {
            t.push_str(
                "Every bot played every island the same number of times with the\n\
                 same flood cards. Per island the mean number of rounds it\n\
                 survived; the score is their sum.\n\n",
            );
            let w = 9;
            let shown = islands.len().min(4);
            let mut head = format!("{:>5}  {:<16}", "Place", "Bot");
            for n in islands.iter().take(shown) {
                head.push_str(&format!(" {:>w$}", cut(n, w)));
            }
            head.push_str(&format!(" {:>10}\n", "Score"));
            t.push_str(&head);
            for r in &table.rows {
                let mut line = format!("{:>5}  {:<16}", format!("{}.", r.place), cut(&r.name, 16));
                for s in r.islands.iter().take(shown) {
                    line.push_str(&format!(" {:>w$.2}", s.mean.as_f64()));
                }
                line.push_str(&format!(" {:>10.2}\n", r.score.as_f64()));
                t.push_str(&line);
            }
            if islands.len() > shown {
                t.push_str("\nThe other islands, mean rounds per bot:\n");
                for (k, n) in islands.iter().enumerate().skip(shown) {
                    t.push_str(&format!("{n}:\n"));
                    for r in &table.rows {
                        if let Some(s) = r.islands.get(k) {
                            t.push_str(&format!(
                                "  {:<20} {:.2}\n",
                                cut(&r.name, 20),
                                s.mean.as_f64()
                            ));
                        }
                    }
                }
            }
        }
        Results::Footsteps(table) => {
            t.push_str(
                "Every pair played the same number of games, each bot on each side\n\
                 equally often. Ranked by games won; Percent is the share of all\n\
                 games won. Tied bots played again among themselves.\n\n",
            );
            t.push_str(&format!(
                "{:>5}  {:<20} {:>6} {:>8} {:>6} {:>6}  {}\n",
                "Place", "Bot", "Won", "Percent", "Drawn", "Lost", "Replays"
            ));
            for r in &table.rows {
                let replays: Vec<String> = r.tie_wins.iter().map(|w| w.to_string()).collect();
                t.push_str(&format!(
                    "{:>5}  {:<20} {:>6} {:>7.2}% {:>6} {:>6}  {}\n",
                    format!("{}.", r.place),
                    cut(&r.name, 20),
                    r.won,
                    r.percent,
                    r.drawn,
                    r.lost,
                    if replays.is_empty() {
                        "-".into()
                    } else {
                        replays.join(" ")
                    }
                ));
            }
            let name = |id: TeamId| {
                table
                    .rows
                    .iter()
                    .find(|r| r.team == id)
                    .map(|r| r.name.clone())
                    .unwrap_or_else(|| id.to_string())
            };
            t.push_str("\nThe pairs (round 0 is the round robin, then the replays):\n\n");
            t.push_str(&format!(
                "{:>5}  {:<16} {:<16} {:>6} {:>6} {:>6}\n",
                "Round", "Bot A", "Bot B", "A won", "B won", "None"
            ));
            for p in &table.pairs {
                t.push_str(&format!(
                    "{:>5}  {:<16} {:<16} {:>6} {:>6} {:>6}\n",
                    p.round,
                    cut(&name(p.pair[0]), 16),
                    cut(&name(p.pair[1]), 16),
                    p.wins[0],
                    p.wins[1],
                    p.no_winner
                ));
            }
            for set in &table.unresolved {
                let names: Vec<String> = set.iter().map(|&t| name(t)).collect();
                t.push_str(&format!(
                    "\nStill tied after the last replay, sharing a place: {}\n",
                    names.join(", ")
                ));
            }
        }
        Results::Morabaraba(table) => {
            t.push_str(
                "Every bot played every bot in both colours, itself included. A\n\
                 winner gets f(V) points, a loser loses 1 - f(H), a draw scores\n\
                 0, with f(x) = 2/(1+exp(x*x/100)) and V, H the CPU seconds the\n\
                 winner and the loser used in that game. Equal points are\n\
                 decided by the games among the tied bots (H2H).\n\n",
            );
            t.push_str(&format!(
                "{:>5}  {:<16} {:>10} {:>9} {:>4} {:>4} {:>4} {:>8}\n",
                "Place", "Bot", "Points", "H2H", "Won", "Draw", "Lost", "CPU s"
            ));
            for r in &table.rows {
                t.push_str(&format!(
                    "{:>5}  {:<16} {:>10.6} {:>9} {:>4} {:>4} {:>4} {:>8.3}\n",
                    format!("{}.", r.place),
                    cut(&r.name, 16),
                    r.points.as_f64(),
                    r.head_to_head
                        .map_or("-".to_string(), |h| format!("{:.3}", h.as_f64())),
                    r.won,
                    r.drawn,
                    r.lost,
                    r.cpu_micros as f64 / 1e6
                ));
            }
        }
    }
    t
}

/// The results article of a bot contest (plain text, 72 columns).
pub fn article(contest_name: &str, d: Discipline, results: &Results, games: u64) -> String {
    format!(
        "Results of the {contest_name}: {}\n\n{games} games were played.\n\n{}",
        d.title(),
        results_text(results)
    )
}

/// The ranking as headers and rows of cells, for the site's table.
pub fn table_rows(results: &Results) -> (Vec<&'static str>, Vec<Vec<String>>) {
    match results {
        Results::Ultimatum(t) => {
            let prize = !t.prizes.is_empty();
            let mut head = vec!["Place", "Bot", "Plus", "Minus", "Won", "Draw", "Lost"];
            if prize {
                head.push("Prize");
            }
            (
                head,
                t.rows
                    .iter()
                    .map(|r| {
                        let mut row = vec![
                            r.place.to_string(),
                            r.name.clone(),
                            r.plus.to_string(),
                            r.minus.to_string(),
                            r.won.to_string(),
                            r.drawn.to_string(),
                            r.lost.to_string(),
                        ];
                        if prize {
                            row.push(
                                t.prize_of(r.team)
                                    .map(|c| format!("{}.{:02} EUR", c / 100, c % 100))
                                    .unwrap_or_default(),
                            );
                        }
                        row
                    })
                    .collect(),
            )
        }
        Results::Flooding { table, .. } => (
            vec!["Place", "Bot", "Mean rounds per island", "Score"],
            table
                .rows
                .iter()
                .map(|r| {
                    let per: Vec<String> = r
                        .islands
                        .iter()
                        .map(|s| format!("{:.2}", s.mean.as_f64()))
                        .collect();
                    vec![
                        r.place.to_string(),
                        r.name.clone(),
                        per.join(" / "),
                        format!("{:.2}", r.score.as_f64()),
                    ]
                })
                .collect(),
        ),
        Results::Footsteps(t) => (
            vec!["Place", "Bot", "Won", "Percent", "Drawn", "Lost"],
            t.rows
                .iter()
                .map(|r| {
                    vec![
                        r.place.to_string(),
                        r.name.clone(),
                        r.won.to_string(),
                        format!("{:.2} %", r.percent),
                        r.drawn.to_string(),
                        r.lost.to_string(),
                    ]
                })
                .collect(),
        ),
        Results::Morabaraba(t) => (
            vec![
                "Place",
                "Bot",
                "Points",
                "Head-to-head",
                "Won",
                "Draw",
                "Lost",
                "CPU s",
            ],
            t.rows
                .iter()
                .map(|r| {
                    vec![
                        r.place.to_string(),
                        r.name.clone(),
                        format!("{:.6}", r.points.as_f64()),
                        r.head_to_head
                            .map(|s| format!("{:.6}", s.as_f64()))
                            .unwrap_or_default(),
                        r.won.to_string(),
                        r.drawn.to_string(),
                        r.lost.to_string(),
                        format!("{:.3}", r.cpu_micros as f64 / 1e6),
                    ]
                })
                .collect(),
        ),
    }
}

/// What `knobeln status` says about a bot contest.
pub fn status_text(store: &Store, config: &Config) -> Result<Option<String>> {
    let Some(c) = contest(store.conn())? else {
        return Ok(None);
    };
    let mut t = format!(
        "The contest ({}) {}: {} bot(s), {} game(s) played.\n",
        c.discipline.title(),
        if c.finished {
            "is finished"
        } else {
            "is running"
        },
        c.entries.len(),
        games_played(store.conn(), &c)?
    );
    for e in &c.entries {
        t.push_str(&format!("  {} (bot version {})\n", e.name, e.version));
    }
    if let Some(r) = results(store, &c, config)? {
        t.push('\n');
        t.push_str(&results_text(&r));
    }
    Ok(Some(t))
}

/// A stored game as its page, its bots' pages and the mails show it.
#[derive(Debug, Clone)]
pub struct StoredGame {
    /// The planner's key (JSON): the game's identity in its contest.
    pub key: String,
    /// Its teams in seat order.
    pub seats: Vec<TeamId>,
    /// The page it is listed on (`LO-HI`, or `TEAM@ISLAND`).
    pub pairing: String,
    /// The game and its parameters (the flooding island's seed included).
    pub setup: Setup,
    /// The island's name (flooding), else empty.
    pub island_name: String,
    pub played: Played,
    /// The moves form, for the games that keep their transcript.
    pub moves: Option<transcript::Moves>,
}

impl StoredGame {
    /// The full transcript, replayed from the moves (kept games only).
    pub fn transcript(&self) -> Option<Vec<crate::game::lines::Exchange>> {
        self.moves
            .as_ref()
            .map(|m| transcript::expand(&self.setup, m))
    }

    /// A short name for files and anchors, from the key: only letters,
    /// digits and dashes.
    pub fn slug(&self) -> String {
        slug(&self.key)
    }
}

/// A key as a file name: letters and digits kept, runs of anything else one
/// dash.
pub fn slug(key: &str) -> String {
    let mut s = String::new();
    for c in key.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

/// A game's teams in seat order, from its key (for games stored before
/// seats were, and to check the stored ones).
fn seats_of_key(c: &BotContest, key: &str) -> Result<Vec<TeamId>> {
    let bad = |e: serde_json::Error| BotContestError::Corrupt(format!("game key {key}: {e}"));
    Ok(match c.discipline {
        Discipline::Ultimatum => {
            let k: ultimatum::MatchKey = serde_json::from_str(key).map_err(bad)?;
            ultimatum::slot_seats(&team_ids(c), k.slot).to_vec()
        }
        Discipline::Flooding => {
            let k: FloodKey = serde_json::from_str(key).map_err(bad)?;
            vec![k.team]
        }
        Discipline::Footsteps => {
            let k: footsteps::GameKey = serde_json::from_str(key).map_err(bad)?;
            k.seats().to_vec()
        }
        _ => {
            let p: morabaraba::Pairing = serde_json::from_str(key).map_err(bad)?;
            vec![p.first, p.second]
        }
    })
}

/// The setup a stored game was played with (the contest's parameters; the
/// flooding island's island and seed from the key).
fn setup_of_key(
    c: &BotContest,
    config: &Config,
    islands: &[Island],
    key: &str,
) -> Result<(Setup, String)> {
    Ok(match c.discipline {
        Discipline::Ultimatum => (Setup::Ultimatum(config.ultimatum.params()), String::new()),
        Discipline::Flooding => {
            let k: FloodKey = serde_json::from_str(key)
                .map_err(|e| BotContestError::Corrupt(format!("game key {key}: {e}")))?;
            let island = islands
                .get(k.island as usize)
                .ok_or_else(|| BotContestError::Corrupt(format!("no island {}", k.island)))?;
            (
                Setup::Flooding {
                    island: island.clone(),
                    params: config.flooding.params(),
                    seed: flooding::game_seed(c.seed, flooding::IslandId(k.island), k.run),
                },
                c.islands[k.island as usize].0.clone(),
            )
        }
        Discipline::Footsteps => (Setup::Footsteps(config.footsteps.params()), String::new()),
        _ => (Setup::Morabaraba, String::new()),
    })
}

/// Gives every stored game its seats and pairing where it has none (games
/// stored before schema 0015).
fn fill_pairings(store: &Store, c: &BotContest, config: &Config) -> Result<()> {
    let keys: Vec<String> = {
        let mut st = store
            .conn()
            .prepare("SELECT game_key FROM bot_games WHERE contest_id = ?1 AND pairing IS NULL")?;
        let rows = st.query_map([c.id], |r| r.get(0))?;
        rows.collect::<std::result::Result<_, _>>()?
    };
    if keys.is_empty() {
        return Ok(());
    }
    let islands = parse_islands(c)?;
    for key in keys {
        let seats = seats_of_key(c, &key)?;
        let (setup, _) = setup_of_key(c, config, &islands, &key)?;
        let pairing = pairing_of(&setup, &key, &seats);
        let seats: Vec<u32> = seats.iter().map(|t| t.0).collect();
        store.conn().execute(
            "UPDATE bot_games SET seats = ?3, pairing = ?4 WHERE contest_id = ?1 AND game_key = ?2",
            params![
                c.id,
                key,
                serde_json::to_string(&seats).expect("json"),
                pairing
            ],
        )?;
    }
    Ok(())
}

/// Calls `each` with every stored game of the contest, ordered by pairing
/// and key, one at a time (memory independent of the number of games).
pub fn for_each_game(
    store: &Store,
    c: &BotContest,
    config: &Config,
    mut each: impl FnMut(StoredGame) -> Result<()>,
) -> Result<()> {
    fill_pairings(store, c, config)?;
    let islands = parse_islands(c)?;
    let mut st = store.conn().prepare(
        "SELECT game_key, record, seats, pairing, moves FROM bot_games \
         WHERE contest_id = ?1 ORDER BY pairing, game_key",
    )?;
    let mut rows = st.query([c.id])?;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        let record: String = r.get(1)?;
        let seats: Option<String> = r.get(2)?;
        let pairing: Option<String> = r.get(3)?;
        let moves: Option<String> = r.get(4)?;
        let seats: Vec<TeamId> = match seats {
            Some(s) => parse::<Vec<u32>>(&s)?.into_iter().map(TeamId).collect(),
            None => seats_of_key(c, &key)?,
        };
        let (setup, island_name) = setup_of_key(c, config, &islands, &key)?;
        let moves = match moves {
            Some(m) => Some(
                transcript::parse_moves(&m, setup.seats())
                    .map_err(|e| BotContestError::Corrupt(format!("moves of {key}: {e}")))?,
            ),
            None => None,
        };
        each(StoredGame {
            pairing: pairing.unwrap_or_else(|| pairing_of(&setup, &key, &seats)),
            played: parse(&record)?,
            key,
            seats,
            setup,
            island_name,
            moves,
        })?;
    }
    Ok(())
}

/// The name of every entry by team.
pub fn entry_names(c: &BotContest) -> BTreeMap<TeamId, String> {
    c.entries.iter().map(|e| (e.team, e.name.clone())).collect()
}

/// A team's name as rows and mails show it (`team N` for a team that is no
/// entry).
pub fn name_in(names: &BTreeMap<TeamId, String>, t: &TeamId) -> String {
    names
        .get(t)
        .cloned()
        .unwrap_or_else(|| format!("team {}", t.0))
}

/// A bot's results against one opponent (or on one island), summed over
/// the stored games: the per-opponent summary mail and the bot's page.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OpponentRow {
    pub pairing: String,
    /// The opponent's name, or `island NAME`.
    pub against: String,
    pub games: u64,
    pub won: u64,
    pub lost: u64,
    /// Failures of this bot in these games.
    pub failures: u64,
    /// Flooding: rounds survived in all.
    pub rounds: u64,
}

/// Won (`Some(true)`), lost (`Some(false)`) or neither, for `seat`.
pub fn won_by(p: &Played, seat: usize) -> Option<bool> {
    match &p.outcome {
        Some(Outcome::Ultimatum(o)) => match o.result_for(seat) {
            ultimatum_game::MatchResult::Won => Some(true),
            ultimatum_game::MatchResult::Lost => Some(false),
            _ => None,
        },
        Some(Outcome::Flooding(_)) => None,
        Some(Outcome::Footsteps(o)) => o.winner.map(|w| w == seat),
        Some(Outcome::Morabaraba(o)) => o.winner.map(|w| w == seat),
        None => Some(false),
    }
}

/// Per-opponent rows of every bot, filled one game at a time (memory:
/// one row per bot and pairing).
#[derive(Debug, Default)]
pub struct Tally {
    rows: BTreeMap<(TeamId, String), OpponentRow>,
}

impl Tally {
    pub fn add(&mut self, g: &StoredGame, name_of: &dyn Fn(&TeamId) -> String) {
        for (seat, team) in g.seats.iter().enumerate() {
            // A self-match counts once on its row.
            if seat == 1 && g.seats[0] == g.seats[1] {
                continue;
            }
            let against = match &g.setup {
                Setup::Flooding { .. } => format!("island {}", g.island_name),
                _ => g.seats.get(1 - seat).map(name_of).unwrap_or_default(),
            };
            let row = self
                .rows
                .entry((*team, g.pairing.clone()))
                .or_insert_with(|| OpponentRow {
                    pairing: g.pairing.clone(),
                    against,
                    ..Default::default()
                });
            row.games += 1;
            match won_by(&g.played, seat) {
                Some(true) => row.won += 1,
                Some(false) => row.lost += 1,
                None => {}
            }
            if let Some(Outcome::Flooding(o)) = &g.played.outcome {
                row.rounds += u64::from(o.rounds);
            }
            row.failures += g.played.failures.iter().filter(|f| f.bot == seat).count() as u64;
        }
    }

    /// The rows of `team`, by pairing.
    pub fn rows_of(&self, team: TeamId) -> Vec<&OpponentRow> {
        self.rows
            .range((team, String::new())..)
            .take_while(|((t, _), _)| *t == team)
            .map(|(_, r)| r)
            .collect()
    }
}

/// The per-opponent summary as text (the mail's table).
pub fn summary_text(d: Discipline, rows: &[&OpponentRow]) -> String {
    let mut t = String::new();
    if d == Discipline::Flooding {
        t.push_str(&format!(
            "{:<28} {:>6} {:>12} {:>8}\n",
            "Island", "Games", "Mean rounds", "Failures"
        ));
        for r in rows {
            t.push_str(&format!(
                "{:<28} {:>6} {:>12.2} {:>8}\n",
                r.against,
                r.games,
                r.rounds as f64 / r.games.max(1) as f64,
                r.failures
            ));
        }
    } else {
        t.push_str(&format!(
            "{:<28} {:>6} {:>5} {:>5} {:>8}\n",
            "Opponent", "Games", "Won", "Lost", "Failures"
        ));
        for r in rows {
            t.push_str(&format!(
                "{:<28} {:>6} {:>5} {:>5} {:>8}\n",
                r.against, r.games, r.won, r.lost, r.failures
            ));
        }
    }
    t
}

/// The heading of a bot contest's mails: the contest's name, and the
/// discipline's title only where the name does not already say it.
pub fn contest_heading(contest_name: &str, d: Discipline) -> String {
    let name = contest_name.to_lowercase();
    let title = d.title().trim_start_matches("the ").to_lowercase();
    if name.contains(&title) || name.contains(d.name()) {
        contest_name.to_string()
    } else {
        format!("{contest_name} ({})", d.title())
    }
}

/// What each team asked for, by preference (the 1994 declarators, read
/// for bot contests as: `DGP` the transcripts of its games, `GRP` its
/// summary per opponent; everyone gets the final table). A team that named
/// none gets the seeds' default: the summary and the table.
struct BotMailWishes {
    transcripts: bool,
    summary: bool,
}

fn wishes(preferences: &str) -> BotMailWishes {
    let prefs = crate::mail::registration::parse_preferences(preferences).unwrap_or_default();
    use crate::mail::registration::Preference;
    if prefs.is_empty() {
        return BotMailWishes {
            transcripts: false,
            summary: true,
        };
    }
    BotMailWishes {
        transcripts: prefs.contains(&Preference::DGP),
        summary: prefs.contains(&Preference::GRP),
    }
}

/// Transcript mails per team at most, each at most `[rules]
/// max_protocol_mail_bytes` of moves forms; the other games' transcripts
/// are on the results site.
pub const TRANSCRIPT_MAIL_PARTS: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;

    fn row(place: u32, team: u32, name: &str, plus: u64) -> ultimatum::Row {
        ultimatum::Row {
            place,
            team: TeamId(team),
            name: name.into(),
            plus,
            minus: 1000,
            plus_total: plus,
            minus_total: 1000,
            won: 1,
            drawn: 0,
            lost: 1,
            forfeits: 0,
        }
    }

    /// The seed's own example table (2011): with `[ultimatum] prize` the
    /// first three places get P / (20000 · (N − 1)) euros.
    #[test]
    fn the_ultimatum_prize_column_is_the_seeds_rule_when_asked_for() {
        let table = ultimatum::Table {
            repetitions: 1,
            rows: vec![
                row(1, 1, "simple", 6_682_555),
                row(2, 2, "more", 5_631_484),
                row(3, 3, "random", 3_859_961),
                row(4, 4, "fourth", 100),
            ],
            prizes: vec![],
        };
        let plain = Results::Ultimatum(table.clone());
        assert!(!results_text(&plain).contains("Prize"));
        assert!(!table_rows(&plain).0.contains(&"Prize"));
        let with = Results::Ultimatum(table.with_prizes());
        let text = results_text(&with);
        // N = 4: 6682555 / 60000 = 111.38 EUR.
        assert!(text.contains("111.38 EUR"), "{text}");
        assert!(
            text.contains(" 93.86 EUR") && text.contains(" 64.33 EUR"),
            "{text}"
        );
        let fourth = text.lines().find(|l| l.contains("fourth")).unwrap();
        assert!(
            !fourth.contains("EUR"),
            "only the first three places: {fourth}"
        );
        let (head, rows) = table_rows(&with);
        assert_eq!(head.last(), Some(&"Prize"));
        assert_eq!(rows[0].last().map(String::as_str), Some("111.38 EUR"));
        assert_eq!(rows[3].last().map(String::as_str), Some(""));
    }

    #[test]
    fn a_contests_name_says_its_discipline_once() {
        assert_eq!(
            contest_heading(
                "freiesMagazin ultimatum demo contest",
                Discipline::Ultimatum
            ),
            "freiesMagazin ultimatum demo contest"
        );
        assert_eq!(
            contest_heading("Spring contest", Discipline::Flooding),
            "Spring contest (the flooding island)"
        );
    }
}
