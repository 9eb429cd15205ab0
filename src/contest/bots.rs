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
//! table; Morabaraba's points with f(V), head-to-head for ties. Every text
//! table keeps to 72 columns whatever the names ([`columns_text`]).
//!
//! Per-opponent rows ([`Tally`], [`opponent_table`]) are counted from the
//! same stored results as the table and by its rules, so a bot's rows add
//! up to its row of the table; a game against itself (Morabaraba) counts
//! for both of its sides, there as in the table ([`SELF_GAME_NOTE`]).
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
use crate::discipline::flooding::planner as flooding;
use crate::discipline::flooding::rules::Island;
use crate::discipline::footsteps::planner as footsteps;
use crate::discipline::morabaraba::planner as morabaraba;
use crate::discipline::play::{play_with_folders, Outcome, Played, Setup, Transcript};
use crate::discipline::transcript;
use crate::discipline::ultimatum::planner as ultimatum;
use crate::discipline::Discipline;
use crate::distributed::coordinator::{NatsQueue, Task, Upload};
use crate::distributed::wire::{self, BotSeat, GameIdent, Play};
use crate::lang::build::BotProgram;
use crate::lang::{Toolchain, Toolchains};
use crate::lines::LineLimits;
use crate::outbox::outgoing::{OutAttachment, Outgoing};
use crate::outbox::{enqueue, Cause};
use crate::sandbox::folder::{FolderImage, WIRE_MAX_BYTES};
use crate::store::mail::all_registrations;
use crate::store::{Store, StoreError};
use crate::tournament::TeamId;

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
        // Only the islands of teams that play (registered, with a bot):
        // a registration without a bot, or a withdrawn team, adds nothing.
        for (team, text) in sent {
            if entries.iter().any(|e| e.name == team) {
                islands.push((team, text));
            }
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
        for (name, island) in crate::discipline::flooding::islands::drawn_islands(
            seed,
            config.flooding.drawn_island_count(),
        ) {
            islands.push((name, island.to_text()));
        }
        if islands.is_empty() {
            return Err(BotContestError::NoIslands);
        }
        // Every island's name is its own (a column of the tables, a file
        // of the site): an organizer's file named like a team is refused.
        let mut names: Vec<&str> = islands.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(BotContestError::Island(
                w[0].to_string(),
                "two islands have this name (a team's island is named after the team): \
                 rename the organizer's island file"
                    .into(),
            ));
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
                        "table": summary_text(results, &rows).trim_end(),
                        "played": !rows.is_empty(),
                    }),
                )?,
                vec![],
            ));
        }
        let (parts, n_in, n_out) = moves.remove(&r.team).unwrap_or_default();
        // DGP: only when a transcript of the team's games was kept (with
        // `transcripts_per_pairing = 0` none is; a mail would describe an
        // attachment that is not there).
        if w.transcripts && n_in + n_out > 0 {
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
                            "one_kept": config.site.transcripts_per_pairing == 1,
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

/// Place cells as the text tables show them ("1.").
fn place_cells(places: impl Iterator<Item = u32>) -> Vec<String> {
    places.map(|p| format!("{p}.")).collect()
}

/// How many of the flooding island's islands get a column of their own
/// in the text table: as many as leave a bot's name 12 characters.
fn island_columns(islands: &[String]) -> usize {
    let fixed = 5 + 2 + 12 + 2 + 6; // Place, Bot, Score
    let mut used = fixed;
    let mut n = 0;
    for name in islands {
        let w = name.chars().count().clamp(6, ISLAND_HEAD) + 2;
        if used + w > TEXT_WIDTH {
            break;
        }
        used += w;
        n += 1;
    }
    n
}

/// An island's column head is cut to this many characters (its start
/// kept, marked "..."; the table names the cut islands in full below).
const ISLAND_HEAD: usize = 12;

/// A column head cut to `width` characters, its start kept and marked
/// "..." when cut.
fn fit_head(head: &str, width: usize) -> String {
    if head.chars().count() <= width {
        return head.to_string();
    }
    let mut s: String = head.chars().take(width.saturating_sub(3)).collect();
    s.push_str("...");
    s
}

/// Whether Morabaraba's head-to-head decided or shared a place: it is
/// only shown when two bots have equal points.
pub fn head_to_head_shown(t: &morabaraba::MorabarabaTable) -> bool {
    t.rows.iter().any(|r| r.head_to_head.is_some())
}

/// The results table as text (7-bit, at most 72 columns whatever the
/// names: longer names are cut and marked "..."), in the discipline's own
/// form.
pub fn results_text(results: &Results) -> String {
    let mut t = String::new();
    match results {
        Results::Ultimatum(table) => {
            t.push_str(&wrapped(&format!(
                "Every bot played every other in both orders, {} times; Plus and \
                 Minus are the mean points per repetition: Plus what the bot \
                 scored, Minus what its opponents scored against it. Won, Draw \
                 and Lost count the two orders of each pairing, each decided over \
                 all its repetitions. Ranked by Plus, then by the higher Minus.",
                table.repetitions
            )));
            t.push('\n');
            let prize = !table.prizes.is_empty();
            let rows = &table.rows;
            let mut cols = vec![
                TextColumn::numbers("Place", place_cells(rows.iter().map(|r| r.place))),
                TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
                TextColumn::numbers("Plus", rows.iter().map(|r| r.plus.to_string()).collect()),
                TextColumn::numbers("Minus", rows.iter().map(|r| r.minus.to_string()).collect()),
                TextColumn::numbers("Won", rows.iter().map(|r| r.won.to_string()).collect()),
                TextColumn::numbers("Draw", rows.iter().map(|r| r.drawn.to_string()).collect()),
                TextColumn::numbers("Lost", rows.iter().map(|r| r.lost.to_string()).collect()),
            ];
            if prize {
                cols.push(TextColumn::numbers(
                    "Prize",
                    rows.iter()
                        .map(|r| match table.prize_of(r.team) {
                            Some(c) => format!("{}.{:02} EUR", c / 100, c % 100),
                            None => String::new(),
                        })
                        .collect(),
                ));
            }
            t.push_str(&columns_text(&cols));
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
                t.push('\n');
                t.push_str(&wrapped(&format!(
                    "Matches forfeited (a broken rule or limit): {}",
                    forfeits.join(", ")
                )));
            }
        }
        Results::Flooding { islands, table } => {
            t.push_str(
                "Every bot played every island the same number of times with the\n\
                 same flood cards. Per island the mean number of rounds it\n\
                 survived; the score is their sum.\n\n",
            );
            let rows = &table.rows;
            let shown = island_columns(islands);
            // Every bot's mean on island `k`, as a column's cells.
            let means_on = |k: usize| -> Vec<String> {
                rows.iter()
                    .map(|r| {
                        r.islands
                            .get(k)
                            .map(|s| format!("{:.2}", s.mean.as_f64()))
                            .unwrap_or_default()
                    })
                    .collect()
            };
            let mut cols = vec![
                TextColumn::numbers("Place", place_cells(rows.iter().map(|r| r.place))),
                TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
            ];
            for (k, n) in islands.iter().enumerate().take(shown) {
                cols.push(TextColumn::numbers(&fit_head(n, ISLAND_HEAD), means_on(k)));
            }
            cols.push(TextColumn::numbers(
                "Score",
                rows.iter()
                    .map(|r| format!("{:.2}", r.score.as_f64()))
                    .collect(),
            ));
            t.push_str(&columns_text(&cols));
            if islands
                .iter()
                .take(shown)
                .any(|n| n.chars().count() > ISLAND_HEAD)
            {
                t.push('\n');
                t.push_str(&wrapped(&format!(
                    "The islands of the columns: {}.",
                    islands[..shown].join(", ")
                )));
            }
            for (k, n) in islands.iter().enumerate().skip(shown) {
                t.push_str(&format!("\nMean rounds on the island {n}:\n"));
                t.push_str(&columns_text(&[
                    TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
                    TextColumn::numbers("Mean rounds", means_on(k)),
                ]));
            }
        }
        Results::Footsteps(table) => {
            t.push_str(
                "Every pair played the same number of games, each bot on each side\n\
                 equally often. Ranked by games won; Percent is the share of all\n\
                 games won. Tied bots played again among themselves.\n\n",
            );
            let rows = &table.rows;
            t.push_str(&columns_text(&[
                TextColumn::numbers("Place", place_cells(rows.iter().map(|r| r.place))),
                TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
                TextColumn::numbers("Won", rows.iter().map(|r| r.won.to_string()).collect()),
                TextColumn::numbers(
                    "Percent",
                    rows.iter().map(|r| format!("{:.2}%", r.percent)).collect(),
                ),
                TextColumn::numbers("Drawn", rows.iter().map(|r| r.drawn.to_string()).collect()),
                TextColumn::numbers("Lost", rows.iter().map(|r| r.lost.to_string()).collect()),
                TextColumn::numbers(
                    "Replays",
                    rows.iter()
                        .map(|r| {
                            if r.tie_wins.is_empty() {
                                "-".to_string()
                            } else {
                                let w: Vec<String> =
                                    r.tie_wins.iter().map(u32::to_string).collect();
                                w.join(" ")
                            }
                        })
                        .collect(),
                ),
            ]));
            let name = |id: TeamId| {
                table
                    .rows
                    .iter()
                    .find(|r| r.team == id)
                    .map(|r| r.name.clone())
                    .unwrap_or_else(|| id.to_string())
            };
            t.push_str("\nThe pairs (round 0 is the round robin, then the replays):\n\n");
            let pairs = &table.pairs;
            t.push_str(&columns_text(&[
                TextColumn::numbers("Round", pairs.iter().map(|p| p.round.to_string()).collect()),
                TextColumn::names("Bot A", pairs.iter().map(|p| name(p.pair[0])).collect()),
                TextColumn::names("Bot B", pairs.iter().map(|p| name(p.pair[1])).collect()),
                TextColumn::numbers(
                    "A won",
                    pairs.iter().map(|p| p.wins[0].to_string()).collect(),
                ),
                TextColumn::numbers(
                    "B won",
                    pairs.iter().map(|p| p.wins[1].to_string()).collect(),
                ),
                TextColumn::numbers(
                    "None",
                    pairs.iter().map(|p| p.no_winner.to_string()).collect(),
                ),
            ]));
            for set in &table.unresolved {
                let names: Vec<String> = set.iter().map(|&t| name(t)).collect();
                t.push('\n');
                t.push_str(&wrapped(&format!(
                    "Still tied after the last replay, sharing a place: {}",
                    names.join(", ")
                )));
            }
        }
        Results::Morabaraba(table) => {
            let h2h = head_to_head_shown(table);
            t.push_str(&wrapped(&format!(
                "Every bot played every bot in both colours, itself included. A \
                 winner gets f(V) points, a loser loses 1 - f(H), a draw scores 0, \
                 with f(x) = 2/(1+exp(x*x/100)) and V, H the CPU seconds the winner \
                 and the loser used in that game. Equal points are decided by \
                 the games among the tied bots (H2H, {}).",
                if h2h {
                    "shown only for bots with equal points"
                } else {
                    "not shown: no two bots have equal points"
                }
            )));
            t.push('\n');
            let rows = &table.rows;
            let mut cols = vec![
                TextColumn::numbers("Place", place_cells(rows.iter().map(|r| r.place))),
                TextColumn::names("Bot", rows.iter().map(|r| r.name.clone()).collect()),
                TextColumn::numbers(
                    "Points",
                    rows.iter()
                        .map(|r| millionths_text(r.points.millionths()))
                        .collect(),
                ),
            ];
            if h2h {
                cols.push(TextColumn::numbers(
                    "H2H",
                    rows.iter()
                        .map(|r| {
                            r.head_to_head
                                .map_or("-".to_string(), |h| millionths_text(h.millionths()))
                        })
                        .collect(),
                ));
            }
            cols.extend([
                TextColumn::numbers("Won", rows.iter().map(|r| r.won.to_string()).collect()),
                TextColumn::numbers("Draw", rows.iter().map(|r| r.drawn.to_string()).collect()),
                TextColumn::numbers("Lost", rows.iter().map(|r| r.lost.to_string()).collect()),
                TextColumn::numbers(
                    "CPU s",
                    rows.iter()
                        .map(|r| format!("{:.3}", r.cpu_micros as f64 / 1e6))
                        .collect(),
                ),
            ]);
            t.push_str(&columns_text(&cols));
            t.push('\n');
            t.push_str(&wrapped(SELF_GAME_NOTE));
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

/// The ranking as headers and rows of cells, for the site's table: the
/// text table's columns (the flooding island's one column per island,
/// Morabaraba's head-to-head only when two bots have equal points).
pub fn table_rows(results: &Results) -> (Vec<String>, Vec<Vec<String>>) {
    let heads = |h: &[&str]| h.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    match results {
        Results::Ultimatum(t) => {
            let prize = !t.prizes.is_empty();
            let mut head = heads(&["Place", "Bot", "Plus", "Minus", "Won", "Draw", "Lost"]);
            if prize {
                head.push("Prize".into());
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
        Results::Flooding { islands, table } => {
            let mut head = heads(&["Place", "Bot"]);
            head.extend(islands.iter().map(|n| format!("Island {n}")));
            head.push("Score".into());
            (
                head,
                table
                    .rows
                    .iter()
                    .map(|r| {
                        let mut row = vec![r.place.to_string(), r.name.clone()];
                        row.extend(r.islands.iter().map(|s| format!("{:.2}", s.mean.as_f64())));
                        row.push(format!("{:.2}", r.score.as_f64()));
                        row
                    })
                    .collect(),
            )
        }
        Results::Footsteps(t) => (
            heads(&["Place", "Bot", "Won", "Percent", "Drawn", "Lost"]),
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
        Results::Morabaraba(t) => {
            let h2h = head_to_head_shown(t);
            let mut head = heads(&["Place", "Bot", "Points"]);
            if h2h {
                head.push("Head-to-head".into());
            }
            head.extend(heads(&["Won", "Draw", "Lost", "CPU s"]));
            (
                head,
                t.rows
                    .iter()
                    .map(|r| {
                        let mut row = vec![
                            r.place.to_string(),
                            r.name.clone(),
                            millionths_text(r.points.millionths()),
                        ];
                        if h2h {
                            row.push(
                                r.head_to_head
                                    .map(|s| millionths_text(s.millionths()))
                                    .unwrap_or_else(|| "-".into()),
                            );
                        }
                        row.extend([
                            r.won.to_string(),
                            r.drawn.to_string(),
                            r.lost.to_string(),
                            format!("{:.3}", r.cpu_micros as f64 / 1e6),
                        ]);
                        row
                    })
                    .collect(),
            )
        }
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
    /// What the results table counts of it: the planner's result (JSON).
    pub result: String,
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

/// The order of a pairing's games: by the numbers of their keys (run 2
/// before run 10), then by the key.
const GAME_ORDER: &str = "json_extract(game_key, '$.round'), \
     json_extract(game_key, '$.repetition'), json_extract(game_key, '$.island'), \
     json_extract(game_key, '$.run'), json_extract(game_key, '$.game'), \
     json_extract(game_key, '$.slot'), game_key";

/// Calls `each` with every stored game of the contest, ordered by pairing
/// and then by the numbers of its key (round, repetition, run, game, slot:
/// run 2 before run 10), one at a time (memory independent of the number
/// of games).
pub fn for_each_game(
    store: &Store,
    c: &BotContest,
    config: &Config,
    mut each: impl FnMut(StoredGame) -> Result<()>,
) -> Result<()> {
    fill_pairings(store, c, config)?;
    let islands = parse_islands(c)?;
    let mut st = store.conn().prepare(&format!(
        "SELECT game_key, record, seats, pairing, moves, result FROM bot_games \
             WHERE contest_id = ?1 ORDER BY pairing, {GAME_ORDER}"
    ))?;
    let mut rows = st.query([c.id])?;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        let record: String = r.get(1)?;
        let seats: Option<String> = r.get(2)?;
        let pairing: Option<String> = r.get(3)?;
        let moves: Option<String> = r.get(4)?;
        let result: String = r.get(5)?;
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
            result,
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
/// the stored games from the results the table is made of and by the
/// table's own rules, so that a bot's rows add up to its row of the table:
/// the per-opponent mail (GRP), the bot's page and the index's grid show
/// them. A game against itself counts for both of its sides, as in the
/// table: two games, one won and one lost (or two draws), with the points
/// and the CPU time of both sides.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OpponentRow {
    pub pairing: String,
    /// The opponent (none on the flooding island).
    pub opponent: Option<TeamId>,
    /// The opponent's name, or `island NAME`.
    pub against: String,
    /// Whether the opponent is the bot itself.
    pub itself: bool,
    /// Games counted: a game against itself twice (both its sides); the
    /// ultimatum game's matches; FootSteps' games of round 0.
    pub games: u64,
    pub won: u64,
    pub drawn: u64,
    pub lost: u64,
    /// Failures of this bot in these games.
    pub failures: u64,
    /// Morabaraba: the points, in millionths; the ultimatum game: Plus,
    /// summed over the repetitions.
    pub points: i64,
    /// The ultimatum game: Minus, summed over the repetitions.
    pub minus: u64,
    /// Morabaraba: the CPU time as the table counts it, in microseconds.
    pub cpu_micros: u64,
    /// Flooding: rounds survived in all.
    pub rounds: u64,
    /// FootSteps: games played and won in the tie replays.
    pub replay_games: u64,
    pub replay_won: u64,
    /// The ultimatum game: per slot, this bot's and its opponent's points
    /// and forfeits, decided over all repetitions in [`Tally::rows_of`].
    slots: BTreeMap<u32, ([u64; 2], [u32; 2])>,
}

impl OpponentRow {
    /// The total row of `rows`: every count and sum added up, named
    /// "total" (a discipline's table shows the columns it has).
    fn total(rows: &[OpponentRow]) -> OpponentRow {
        let sum = |f: fn(&OpponentRow) -> u64| rows.iter().map(f).sum::<u64>();
        OpponentRow {
            against: "total".into(),
            games: sum(|r| r.games),
            won: sum(|r| r.won),
            drawn: sum(|r| r.drawn),
            lost: sum(|r| r.lost),
            failures: sum(|r| r.failures),
            points: rows.iter().map(|r| r.points).sum(),
            minus: sum(|r| r.minus),
            cpu_micros: sum(|r| r.cpu_micros),
            rounds: sum(|r| r.rounds),
            replay_games: sum(|r| r.replay_games),
            replay_won: sum(|r| r.replay_won),
            ..Default::default()
        }
    }
}

/// What the table counts of a stored game: its planner result.
enum Counted {
    Ultimatum(ultimatum::PlayedMatch),
    Flooding(flooding::RunResult),
    Footsteps(footsteps::PlayedGame),
    Morabaraba(morabaraba::GameResult),
    Nothing,
}

fn counted(g: &StoredGame) -> Counted {
    let r = g.result.as_str();
    let parsed = match &g.setup {
        Setup::Ultimatum(_) => serde_json::from_str(r).map(Counted::Ultimatum),
        Setup::Flooding { .. } => serde_json::from_str(r).map(Counted::Flooding),
        Setup::Footsteps(_) => serde_json::from_str(r).map(Counted::Footsteps),
        Setup::Morabaraba => serde_json::from_str(r).map(Counted::Morabaraba),
    };
    parsed.unwrap_or(Counted::Nothing)
}

/// Per-opponent rows of every bot, filled one game at a time (memory:
/// one row per bot and pairing).
#[derive(Debug, Default)]
pub struct Tally {
    rows: BTreeMap<(TeamId, String), OpponentRow>,
}

impl Tally {
    pub fn add(&mut self, g: &StoredGame, name_of: &dyn Fn(&TeamId) -> String) {
        let counted = counted(g);
        for (seat, team) in g.seats.iter().enumerate() {
            let opponent = g.seats.get(1 - seat.min(1)).filter(|_| g.seats.len() == 2);
            let row = self
                .rows
                .entry((*team, g.pairing.clone()))
                .or_insert_with(|| OpponentRow {
                    pairing: g.pairing.clone(),
                    opponent: opponent.copied(),
                    against: match &g.setup {
                        Setup::Flooding { .. } => format!("island {}", g.island_name),
                        _ => opponent.map(name_of).unwrap_or_default(),
                    },
                    itself: opponent == Some(team),
                    ..Default::default()
                });
            row.failures += g.played.failures.iter().filter(|f| f.bot == seat).count() as u64;
            match &counted {
                Counted::Morabaraba(r) => {
                    let points = morabaraba::game_points(r);
                    row.games += 1;
                    match r.winner {
                        None => row.drawn += 1,
                        Some(w) if w == seat => row.won += 1,
                        Some(_) => row.lost += 1,
                    }
                    row.points += points[seat].millionths();
                    row.cpu_micros += r.cpu_micros[seat];
                }
                Counted::Ultimatum(m) => {
                    let other = 1 - seat.min(1);
                    row.games += 1;
                    row.points += m.points[seat] as i64;
                    row.minus += m.points[other];
                    let slot = row.slots.entry(m.key.slot).or_default();
                    slot.0[0] += m.points[seat];
                    slot.0[1] += m.points[other];
                    match m.forfeited_by {
                        Some(f) if f == seat => slot.1[0] += 1,
                        Some(_) => slot.1[1] += 1,
                        None => {}
                    }
                }
                Counted::Footsteps(p) if p.key.round == 0 => {
                    row.games += 1;
                    match p.winner {
                        None => row.drawn += 1,
                        Some(w) if w == *team => row.won += 1,
                        Some(_) => row.lost += 1,
                    }
                }
                Counted::Footsteps(p) => {
                    row.replay_games += 1;
                    if p.winner == Some(*team) {
                        row.replay_won += 1;
                    }
                }
                Counted::Flooding(r) => {
                    row.games += 1;
                    row.rounds += u64::from(r.rounds);
                }
                Counted::Nothing => row.games += 1,
            }
        }
    }

    /// The rows of `team`, by pairing (the ultimatum game's orders decided).
    pub fn rows_of(&self, team: TeamId) -> Vec<OpponentRow> {
        self.rows
            .range((team, String::new())..)
            .take_while(|((t, _), _)| *t == team)
            .map(|(_, r)| {
                let mut r = r.clone();
                for (points, forfeits) in r.slots.values() {
                    match ultimatum::slot_result(*points, *forfeits) {
                        std::cmp::Ordering::Greater => r.won += 1,
                        std::cmp::Ordering::Equal => r.drawn += 1,
                        std::cmp::Ordering::Less => r.lost += 1,
                    }
                }
                r
            })
            .collect()
    }
}

/// The sentence under every table where a bot's game against itself is
/// counted (Morabaraba's).
pub const SELF_GAME_NOTE: &str = "A game against itself counts for both of its sides: \
     two games, one won and one lost (or two draws), with the points and the CPU time of \
     both sides.";

/// A bot's per-opponent table: column heads, one row of cells per
/// opponent (the name first), the total (which equals the bot's row of
/// the results table) and the sentences that go under it. The same model
/// makes the mail's text and the bot's page.
#[derive(Debug, Clone, PartialEq)]
pub struct OpponentTable {
    pub heads: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    pub total: Vec<String>,
    pub notes: Vec<String>,
}

/// `n / d`: a whole number when it is one, else with two decimals,
/// rounded half up (0 for no `d`).
fn hundredths(n: u64, d: u64) -> String {
    if d == 0 {
        return "0".into();
    }
    if n.is_multiple_of(d) {
        return (n / d).to_string();
    }
    let h = (u128::from(n) * 200 + u128::from(d)) / (2 * u128::from(d));
    format!("{}.{:02}", h / 100, h % 100)
}

/// Millionths as a number with six decimals (Morabaraba's points).
pub fn millionths_text(m: i64) -> String {
    let sign = if m < 0 { "-" } else { "" };
    let a = m.unsigned_abs();
    format!("{sign}{}.{:06}", a / 1_000_000, a % 1_000_000)
}

/// The per-opponent table of one bot, in its discipline's form.
pub fn opponent_table(results: &Results, rows: &[OpponentRow]) -> OpponentTable {
    let name = |r: &OpponentRow| {
        if r.itself {
            format!("{} (itself)", r.against)
        } else {
            r.against.clone()
        }
    };
    let mut notes = Vec::new();
    let (heads, cells, total): (Vec<&'static str>, Vec<Vec<String>>, Vec<String>) = match results {
        Results::Ultimatum(t) => {
            let reps = u64::from(t.repetitions.max(1));
            let line = |r: &OpponentRow| {
                vec![
                    name(r),
                    r.games.to_string(),
                    hundredths(r.points.max(0) as u64, reps),
                    hundredths(r.minus, reps),
                    r.won.to_string(),
                    r.drawn.to_string(),
                    r.lost.to_string(),
                    r.failures.to_string(),
                ]
            };
            let all = OpponentRow::total(rows);
            notes.push(
                "Plus and Minus are the mean points per repetition; the results table \
                 shows their totals rounded to whole points. Won, Draw and Lost count \
                 the two orders of each pairing, each decided over all its repetitions."
                    .to_string(),
            );
            (
                vec![
                    "Opponent", "Matches", "Plus", "Minus", "Won", "Draw", "Lost", "Failures",
                ],
                rows.iter().map(line).collect(),
                line(&all),
            )
        }
        Results::Flooding { .. } => {
            let mean = |r: &OpponentRow| flooding::Rounds::mean(r.rounds, r.games);
            let line = |r: &OpponentRow, m: flooding::Rounds| {
                vec![
                    name(r),
                    r.games.to_string(),
                    format!("{:.2}", m.as_f64()),
                    r.failures.to_string(),
                ]
            };
            let score: u64 = rows.iter().map(|r| mean(r).millionths()).sum();
            let all = OpponentRow {
                against: "score (the sum)".into(),
                ..OpponentRow::total(rows)
            };
            (
                vec!["Island", "Runs", "Mean rounds", "Failures"],
                rows.iter().map(|r| line(r, mean(r))).collect(),
                line(&all, flooding::Rounds::from_millionths(score)),
            )
        }
        Results::Footsteps(_) => {
            let line = |r: &OpponentRow| {
                vec![
                    name(r),
                    r.games.to_string(),
                    r.won.to_string(),
                    r.drawn.to_string(),
                    r.lost.to_string(),
                    if r.replay_games == 0 {
                        "-".to_string()
                    } else {
                        format!("{} of {}", r.replay_won, r.replay_games)
                    },
                    r.failures.to_string(),
                ]
            };
            let all = OpponentRow::total(rows);
            notes.push(
                "Games, Won, Draw and Lost are those of the round robin (round 0), as in \
                 the results table; Replays: the games won of those played in tie replays."
                    .to_string(),
            );
            (
                vec![
                    "Opponent", "Games", "Won", "Draw", "Lost", "Replays", "Failures",
                ],
                rows.iter().map(line).collect(),
                line(&all),
            )
        }
        Results::Morabaraba(_) => {
            let line = |r: &OpponentRow| {
                vec![
                    name(r),
                    r.games.to_string(),
                    r.won.to_string(),
                    r.drawn.to_string(),
                    r.lost.to_string(),
                    millionths_text(r.points),
                    format!("{:.3}", r.cpu_micros as f64 / 1e6),
                    r.failures.to_string(),
                ]
            };
            let all = OpponentRow::total(rows);
            if rows.iter().any(|r| r.itself) {
                notes.push(SELF_GAME_NOTE.to_string());
            }
            (
                vec![
                    "Opponent", "Games", "Won", "Draw", "Lost", "Points", "CPU s", "Failures",
                ],
                rows.iter().map(line).collect(),
                line(&all),
            )
        }
    };
    OpponentTable {
        heads,
        rows: cells,
        total,
        notes,
    }
}

/// The width of every text table of the mails and `results.txt`.
pub const TEXT_WIDTH: usize = 72;

/// A name cut to `width` characters in its middle, marked with "...":
/// its start and its end stay (names that differ only at their ends stay
/// apart, "NAME (itself)" keeps its "(itself)").
pub fn fit_name(name: &str, width: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= width {
        return name.to_string();
    }
    let keep = width.saturating_sub(3);
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut s: String = chars[..head].iter().collect();
    s.push_str(&".".repeat(width.min(3)));
    s.extend(&chars[chars.len() - tail..]);
    s
}

/// One column of a text table: names (left-aligned, sharing what is left
/// of [`TEXT_WIDTH`] and cut with a marker) or numbers (right-aligned, as
/// wide as their widest cell).
pub struct TextColumn {
    pub head: String,
    pub cells: Vec<String>,
    pub names: bool,
}

impl TextColumn {
    pub fn names(head: &str, cells: Vec<String>) -> TextColumn {
        TextColumn {
            head: head.to_string(),
            cells,
            names: true,
        }
    }

    pub fn numbers(head: &str, cells: Vec<String>) -> TextColumn {
        TextColumn {
            head: head.to_string(),
            cells,
            names: false,
        }
    }

    fn natural(&self) -> usize {
        self.cells
            .iter()
            .map(|c| c.chars().count())
            .chain([self.head.chars().count()])
            .max()
            .unwrap_or(0)
    }
}

/// The columns as lines of at most [`TEXT_WIDTH`] characters (two blanks
/// between columns, no blank at a line's end), whatever the names.
pub fn columns_text(cols: &[TextColumn]) -> String {
    const GAP: usize = 2;
    let fixed: usize = cols.iter().filter(|c| !c.names).map(|c| c.natural()).sum();
    let n_names = cols.iter().filter(|c| c.names).count().max(1);
    let room = TEXT_WIDTH.saturating_sub(fixed + GAP * cols.len().saturating_sub(1)) / n_names;
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| {
            if c.names {
                c.natural().min(room.max(c.head.chars().count()))
            } else {
                c.natural()
            }
        })
        .collect();
    let n_rows = cols.iter().map(|c| c.cells.len()).max().unwrap_or(0);
    let mut t = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (k, (c, cell)) in cols.iter().zip(cells).enumerate() {
            if k > 0 {
                l.push_str(&" ".repeat(GAP));
            }
            let w = widths[k];
            if c.names {
                l.push_str(&format!("{:<w$}", fit_name(cell, w)));
            } else {
                l.push_str(&format!("{cell:>w$}"));
            }
        }
        t.push_str(l.trim_end());
        t.push('\n');
    };
    line(cols.iter().map(|c| c.head.as_str()).collect());
    for i in 0..n_rows {
        line(
            cols.iter()
                .map(|c| c.cells.get(i).map(String::as_str).unwrap_or(""))
                .collect(),
        );
    }
    t
}

/// Sentences wrapped at [`TEXT_WIDTH`].
pub fn wrapped(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > TEXT_WIDTH {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The per-opponent summary as text (the mail's table, with its total
/// and notes), at most [`TEXT_WIDTH`] columns whatever the names.
pub fn summary_text(results: &Results, rows: &[OpponentRow]) -> String {
    let table = opponent_table(results, rows);
    let mut all = table.rows.clone();
    all.push(table.total.clone());
    let cols: Vec<TextColumn> = table
        .heads
        .iter()
        .enumerate()
        .map(|(k, h)| {
            let cells = all.iter().map(|r| r[k].clone()).collect();
            if k == 0 {
                TextColumn::names(h, cells)
            } else {
                TextColumn::numbers(h, cells)
            }
        })
        .collect();
    let mut t = columns_text(&cols);
    for n in &table.notes {
        t.push('\n');
        t.push_str(&wrapped(n));
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
        assert!(!table_rows(&plain).0.contains(&"Prize".to_string()));
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
        assert_eq!(head.last().map(String::as_str), Some("Prize"));
        assert_eq!(rows[0].last().map(String::as_str), Some("111.38 EUR"));
        assert_eq!(rows[3].last().map(String::as_str), Some(""));
    }

    /// A stored game of `setup` between `seats`, counted as `result`
    /// says, with a failure of `failed` (a seat) if given.
    fn game_of(
        setup: Setup,
        seats: &[u32],
        pairing: String,
        result: serde_json::Value,
        failed: Option<usize>,
    ) -> StoredGame {
        let failures = failed
            .map(|bot| crate::lines::BotFailure {
                bot,
                turn: 1,
                kind: crate::lines::BotFailureKind::Rule {
                    rule: "a rule".into(),
                },
                line: None,
                reason: "broke a rule".into(),
            })
            .into_iter()
            .collect();
        StoredGame {
            key: result.to_string(),
            seats: seats.iter().map(|&t| TeamId(t)).collect(),
            pairing,
            setup,
            island_name: "lagoon".into(),
            played: Played {
                outcome: None,
                failures,
                cpu_ms: vec![0; seats.len()],
                cpu_us: vec![0; seats.len()],
                wall_ms: 0,
                stderr: vec![String::new(); seats.len()],
                transcript: None,
                transcript_truncated: false,
                moves: None,
                folders: None,
            },
            result: result.to_string(),
            moves: None,
        }
    }

    fn pair(a: TeamId, b: TeamId) -> String {
        format!("{}-{}", a.0.min(b.0), a.0.max(b.0))
    }

    fn long_name(t: TeamId) -> String {
        // The registration's limit: 30 characters.
        format!("{:0>30}", format!("a_rather_long_team_name_{}", t.0))
    }

    fn tally_of(games: &[StoredGame]) -> Tally {
        let mut tally = Tally::default();
        for g in games {
            tally.add(g, &|t: &TeamId| long_name(*t));
        }
        tally
    }

    /// Every line of a mail's table fits into 72 columns and ends without
    /// a blank.
    fn fits(text: &str) {
        for l in text.lines() {
            assert!(
                l.chars().count() <= TEXT_WIDTH,
                "{} > 72: {l}\n{text}",
                l.len()
            );
            assert_eq!(l, l.trim_end(), "{text}");
        }
    }

    /// Morabaraba (issue 36): a game against itself counts for both of its
    /// sides in the table, the mail, the bot's page and the grid alike, so
    /// a bot's rows add up to its row of the table, draws and points
    /// included, and the mail says why under the table.
    #[test]
    fn morabaraba_rows_add_up_to_the_table_self_games_twice() {
        let teams = [TeamId(1), TeamId(2), TeamId(3)];
        let mut results = Vec::new();
        let mut games = Vec::new();
        for (i, p) in morabaraba::plan(&teams).into_iter().enumerate() {
            let winner = [Some(0), None, Some(1)][i % 3];
            let r = morabaraba::GameResult {
                pairing: p,
                winner,
                cpu_micros: [1_000_000 + i as u64 * 7_777, 2_000_000 + i as u64 * 333],
            };
            games.push(game_of(
                Setup::Morabaraba,
                &[p.first.0, p.second.0],
                pair(p.first, p.second),
                json!(r),
                (i == 4).then_some(1),
            ));
            results.push(r);
        }
        let table = morabaraba::rank(&teams, &results, &long_name).unwrap();
        let tally = tally_of(&games);
        let res = Results::Morabaraba(table.clone());
        for row in &table.rows {
            let rows = tally.rows_of(row.team);
            assert_eq!(rows.len(), 3);
            let me = rows.iter().find(|r| r.itself).expect("a self-game row");
            assert_eq!(me.games, 2, "both sides of the game against itself");
            assert_eq!(me.won + me.drawn + me.lost, 2);
            let sum = |f: fn(&OpponentRow) -> u64| rows.iter().map(f).sum::<u64>();
            assert_eq!(sum(|r| r.games), u64::from(row.sides));
            assert_eq!(sum(|r| r.won), u64::from(row.won));
            assert_eq!(sum(|r| r.drawn), u64::from(row.drawn));
            assert_eq!(sum(|r| r.lost), u64::from(row.lost));
            assert_eq!(sum(|r| r.cpu_micros), row.cpu_micros);
            let points: i64 = rows.iter().map(|r| r.points).sum();
            assert_eq!(points, row.points.millionths());
            let t = opponent_table(&res, &rows);
            assert_eq!(
                t.total,
                vec![
                    "total".to_string(),
                    row.sides.to_string(),
                    row.won.to_string(),
                    row.drawn.to_string(),
                    row.lost.to_string(),
                    millionths_text(row.points.millionths()),
                    format!("{:.3}", row.cpu_micros as f64 / 1e6),
                    sum(|r| r.failures).to_string(),
                ]
            );
            let text = summary_text(&res, &rows);
            fits(&text);
            assert!(text.contains("(itself)"), "{text}");
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(SELF_GAME_NOTE), "{text}");
        }
        let text = results_text(&res);
        fits(&text);
        assert!(text.contains(&long_name(TeamId(1))), "{text}");
        let under = text.split_once("\nPlace").unwrap().1;
        let flat = under.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.ends_with(SELF_GAME_NOTE), "under the table: {text}");
        // No two bots have equal points here: no head-to-head column.
        assert!(!head_to_head_shown(&table));
        assert!(!text.contains("  H2H"), "{text}");
        assert!(!table_rows(&res).0.contains(&"Head-to-head".to_string()));
    }

    /// The ultimatum game: a pairing's two orders, each decided over all
    /// repetitions, and Plus and Minus summed, as in the table.
    #[test]
    fn ultimatum_rows_add_up_to_the_table() {
        let teams = [TeamId(1), TeamId(2), TeamId(3)];
        let tc = ultimatum::Config { repetitions: 3 };
        let mut played = Vec::new();
        let mut games = Vec::new();
        for (i, m) in ultimatum::schedule(&teams, &tc).enumerate() {
            let forfeited_by = (i % 7 == 3).then_some(i % 2);
            let mut points = [(i as u64 * 37) % 100, (i as u64 * 53) % 100];
            if let Some(f) = forfeited_by {
                points[f] = 0;
            }
            let pm = ultimatum::PlayedMatch {
                key: m.key,
                points,
                forfeited_by,
            };
            games.push(game_of(
                Setup::Ultimatum(Default::default()),
                &[m.seats[0].0, m.seats[1].0],
                pair(m.seats[0], m.seats[1]),
                json!(pm),
                forfeited_by,
            ));
            played.push(pm);
        }
        let table = ultimatum::table(&teams, &tc, &played, &long_name).unwrap();
        let tally = tally_of(&games);
        let res = Results::Ultimatum(table.clone());
        for row in &table.rows {
            let rows = tally.rows_of(row.team);
            assert_eq!(rows.len(), 2);
            let sum = |f: fn(&OpponentRow) -> u64| rows.iter().map(f).sum::<u64>();
            assert_eq!(sum(|r| r.won), u64::from(row.won));
            assert_eq!(sum(|r| r.drawn), u64::from(row.drawn));
            assert_eq!(sum(|r| r.lost), u64::from(row.lost));
            assert_eq!(sum(|r| r.points as u64), row.plus_total);
            assert_eq!(sum(|r| r.minus), row.minus_total);
            assert_eq!(sum(|r| r.failures), u64::from(row.forfeits));
            fits(&summary_text(&res, &rows));
        }
        fits(&results_text(&res));
        fits(&results_text(&Results::Ultimatum(table.with_prizes())));
    }

    /// FootSteps: the round robin's games as in the table, the replays'
    /// wins as its replay column.
    #[test]
    fn footsteps_rows_add_up_to_the_table_and_its_replays() {
        let teams = [TeamId(1), TeamId(2), TeamId(3)];
        let config = footsteps::Config {
            games_per_pair: 4,
            max_tie_rounds: 2,
        };
        // 1 beats everybody; 2 and 3 draw, so they play again.
        let winner = |k: &footsteps::GameKey| {
            if k.pair.contains(&TeamId(1)) {
                Some(TeamId(1))
            } else if k.round == 2 && k.game == 0 {
                Some(k.pair[1])
            } else {
                None
            }
        };
        let mut played = Vec::new();
        let table = loop {
            match footsteps::plan(&teams, &config, &played, &long_name).unwrap() {
                footsteps::Plan::Done(t) => break t,
                footsteps::Plan::Play { games, .. } => {
                    for g in games {
                        played.push(footsteps::PlayedGame {
                            key: g.key,
                            winner: winner(&g.key),
                        });
                    }
                }
            }
        };
        let games: Vec<StoredGame> = played
            .iter()
            .map(|p| {
                let s = p.key.seats();
                game_of(
                    Setup::Footsteps(Default::default()),
                    &[s[0].0, s[1].0],
                    pair(s[0], s[1]),
                    json!(p),
                    None,
                )
            })
            .collect();
        let tally = tally_of(&games);
        let res = Results::Footsteps(table.clone());
        assert!(table.rows.iter().any(|r| !r.tie_wins.is_empty()));
        for row in &table.rows {
            let rows = tally.rows_of(row.team);
            let sum = |f: fn(&OpponentRow) -> u64| rows.iter().map(f).sum::<u64>();
            assert_eq!(sum(|r| r.won), u64::from(row.won));
            assert_eq!(sum(|r| r.drawn), u64::from(row.drawn));
            assert_eq!(sum(|r| r.lost), u64::from(row.lost));
            assert_eq!(
                sum(|r| r.replay_won),
                row.tie_wins.iter().map(|&w| u64::from(w)).sum::<u64>()
            );
            fits(&summary_text(&res, &rows));
        }
        fits(&results_text(&res));
    }

    /// The flooding island: a bot's islands' means add up to its score, and
    /// an organizer's island with a long name keeps the table in 72
    /// columns, the islands named.
    #[test]
    fn flooding_rows_add_up_to_the_score_and_long_islands_fit() {
        let teams = [TeamId(1), TeamId(2)];
        let ids = [flooding::IslandId(0), flooding::IslandId(1)];
        let format = flooding::FloodingFormat { runs: 3 };
        let island = Island::parse(crate::demo::bots::TEST_ISLANDS[0].1).unwrap();
        let mut results = Vec::new();
        let mut games = Vec::new();
        for &team in &teams {
            for island_id in ids {
                for run in 0..3 {
                    let r = flooding::RunResult {
                        team,
                        island: island_id,
                        run,
                        rounds: 10 + run * 7 + team.0,
                    };
                    let mut g = game_of(
                        Setup::Flooding {
                            island: island.clone(),
                            params: Default::default(),
                            seed: 1,
                        },
                        &[team.0],
                        format!("{}@{}", team.0, island_id.0),
                        json!(r),
                        None,
                    );
                    g.island_name = format!("island{}", island_id.0);
                    games.push(g);
                    results.push(r);
                }
            }
        }
        let table = flooding::rank(&teams, &ids, format, &results, &long_name).unwrap();
        let tally = tally_of(&games);
        let islands = vec![
            "lagoon".to_string(),
            "the_organizers_very_long_island_name".to_string(),
            "atoll".into(),
            "ridge".into(),
            "a_team_island_named_at_length_too".into(),
        ];
        let res = Results::Flooding {
            islands: islands[..2].to_vec(),
            table: table.clone(),
        };
        for row in &table.rows {
            let rows = tally.rows_of(row.team);
            let t = opponent_table(&res, &rows);
            assert_eq!(t.total[2], format!("{:.2}", row.score.as_f64()));
            fits(&summary_text(&res, &rows));
        }
        let text = results_text(&res);
        fits(&text);
        let head = text.lines().find(|l| l.starts_with("Place")).unwrap();
        assert!(head.ends_with("Score"), "Score on the head's line: {text}");
        assert!(
            text.contains("the_organizers_very_long_island_name"),
            "the cut island is named in full: {text}"
        );
        // Five islands, two of them long: still 72 columns.
        let mut wide = table.clone();
        for r in &mut wide.rows {
            let first = r.islands[0].clone();
            while r.islands.len() < islands.len() {
                r.islands.push(first.clone());
            }
        }
        let text = results_text(&Results::Flooding {
            islands: islands.clone(),
            table: wide,
        });
        fits(&text);
        assert!(text.contains("a_team_island_named_at_length_too"), "{text}");
    }

    #[test]
    fn a_long_name_is_cut_in_its_middle_and_marked() {
        assert_eq!(fit_name("short", 10), "short");
        assert_eq!(
            fit_name("a_team_name_1 (itself)", 20),
            "a_team_na...(itself)"
        );
        assert_eq!(fit_name("abcdefghijkl", 8), "abc...kl");
        let cols = [
            TextColumn::names("Bot", vec!["x".repeat(100)]),
            TextColumn::numbers("Points", vec!["1.000000".into()]),
        ];
        let text = columns_text(&cols);
        assert!(
            text.lines().all(|l| l.chars().count() <= TEXT_WIDTH),
            "{text}"
        );
        assert!(text.contains("xxx...xxx"), "{text}");
    }

    /// Issue 36: a pairing's runs in the order of their numbers, not as
    /// text (0, 1, 10, …, 19, 2).
    #[test]
    fn a_pairings_games_are_in_the_order_of_their_numbers() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute("CREATE TABLE bot_games (game_key TEXT)", [])
            .unwrap();
        for run in 0..12 {
            let key = format!(r#"{{"island":0,"run":{run},"team":1}}"#);
            conn.execute("INSERT INTO bot_games VALUES (?1)", [key])
                .unwrap();
        }
        let mut st = conn
            .prepare(&format!(
                "SELECT game_key FROM bot_games ORDER BY {GAME_ORDER}"
            ))
            .unwrap();
        let runs: Vec<u32> = st
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(|k| serde_json::from_str::<FloodKey>(&k.unwrap()).unwrap().run)
            .collect();
        assert_eq!(runs, (0..12).collect::<Vec<u32>>());
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
