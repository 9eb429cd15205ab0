//! Starting and running the contest. Starting is idempotent (a contest
//! starts once; a second start finds it); running resumes wherever a
//! previous run stopped, and every mail it sends carries an event key, so
//! neither a game nor a mail is repeated.

use chrono::{DateTime, Utc};

use super::lease::{Lease, LeaseError};
use super::mails::Mailer;
use crate::config::Config;
use crate::engine::run::{run_tournament_with, Event, Observer, TournamentConfig};
use crate::engine::{Clock, EngineError};
use crate::seed::SeedKey;
use crate::store::admin::{claim_contest, discard_unplayed_tournament};
use crate::store::mail::{contest, finish_contest, teams_with_current_version};
use crate::store::{Store, StoreError, VersionId};

#[derive(Debug, thiserror::Error)]
pub enum ContestError {
    #[error("no registered team has a compiled strategy: there is no contest to run")]
    NoTeams,
    #[error("the contest has not started")]
    NotStarted,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("contest mails: {0}")]
    Mail(String),
    /// Another process plays the contest (the sentence says who).
    #[error("{0}")]
    Held(String),
}

impl From<LeaseError> for ContestError {
    fn from(e: LeaseError) -> Self {
        match e {
            LeaseError::Held(who) => ContestError::Held(who),
            LeaseError::Store(e) => ContestError::Store(e),
        }
    }
}

/// Where the key of the players' seeds comes from (`SeedKey`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayersKey {
    /// A secret of the OS random source, kept in the database only: a
    /// real contest, whose seed may be known (given on the command line)
    /// while no strategy can compute its opponent's random numbers.
    Secret,
    /// Computed from the tournament seed (`SeedKey::public_from_seed`):
    /// the seed alone reproduces every game. The demo's, whose teams are
    /// the server's own.
    FromSeed,
}

/// Starts the contest (once): closes the compile service, fixes the entries
/// (every registered team's latest accepted version) and the seed, and
/// queues the LAP mails. Returns the tournament's id.
pub fn start(
    store: &mut Store,
    config: &Config,
    seed: Option<u64>,
    players_key: PlayersKey,
    now: DateTime<Utc>,
) -> Result<i64, ContestError> {
    if let Some(c) = contest(store.conn())? {
        return Ok(c.tournament_id);
    }
    let entries: Vec<_> = teams_with_current_version(store.conn())?
        .into_iter()
        .map(|(t, v)| (t, VersionId(v)))
        .collect();
    if entries.is_empty() {
        return Err(ContestError::NoTeams);
    }
    let tc = TournamentConfig {
        referee: config.rules.referee(),
        evolution: config.rules.evolution(),
    };
    let seed = seed.unwrap_or_else(os_seed);
    // Whatever the seed (even one given on the command line), a contest's
    // players' seeds come from a secret key of the OS, kept in the database
    // only; the demo's from the seed.
    let key = match players_key {
        PlayersKey::Secret => os_key(),
        PlayersKey::FromSeed => SeedKey::public_from_seed(seed),
    };
    let tid = store.create_tournament(
        seed,
        &key,
        &serde_json::to_string(&tc).expect("json"),
        "contest",
        &entries,
        now,
    )?;
    if !claim_contest(store.conn(), tid, now)? {
        // Another start won the race: its tournament is the contest.
        discard_unplayed_tournament(store.conn(), tid)?;
        return Ok(contest(store.conn())?
            .ok_or(ContestError::NotStarted)?
            .tournament_id);
    }
    let clock = move || now;
    let mailer = Mailer {
        config,
        tournament: tid,
        now: &clock,
        cache: Default::default(),
        replayer: Default::default(),
    };
    mailer.lap(store).map_err(ContestError::Mail)?;
    super::notices::start_list(store, config, tid, now).map_err(ContestError::Mail)?;
    Ok(tid)
}

/// A seed from the OS random source (63 bits).
pub fn os_seed() -> u64 {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).expect("OS random source");
    u64::from_le_bytes(b) >> 1
}

/// A secret key from the OS random source, for the players' seeds.
pub fn os_key() -> SeedKey {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("OS random source");
    SeedKey::from_bytes(b)
}

/// Forwards events to the mailer and then to another observer.
struct Both<'a, 'c> {
    mailer: Mailer<'c>,
    other: &'a mut dyn Observer,
}

impl Observer for Both<'_, '_> {
    fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
        self.mailer.event(store, event)?;
        self.other.event(store, event)
    }
}

/// Forwards events to two observers.
struct Chain<'a, 'b>(&'a mut dyn Observer, &'b mut dyn Observer);

impl Observer for Chain<'_, '_> {
    fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
        self.0.event(store, event)?;
        self.1.event(store, event)
    }
}

/// Takes the contest's lease: one process plays the contest at a time.
/// `knobeln contest start` takes it before it creates the contest, so that
/// a `serve` that sees the new contest cannot take it in between.
pub fn take_lease(store: &Store, config: &Config) -> Result<Lease, LeaseError> {
    Lease::acquire(
        store,
        config.database.clone(),
        std::time::Duration::from_secs(config.rules.lease_secs),
    )
}

/// Runs (or resumes) the started contest to its end and queues the final
/// results. `progress` sees every event after the mails for it are queued.
pub fn run(
    store: &mut Store,
    config: &Config,
    clock: &dyn Clock,
    progress: &mut dyn Observer,
) -> Result<i64, ContestError> {
    let c = contest(store.conn())?.ok_or(ContestError::NotStarted)?;
    if c.finished {
        return Ok(c.tournament_id);
    }
    let lease = take_lease(store, config)?;
    run_holding(store, config, clock, progress, &lease)
}

/// [`run`] by a process that holds the lease already.
pub fn run_holding(
    store: &mut Store,
    config: &Config,
    clock: &dyn Clock,
    progress: &mut dyn Observer,
    lease: &Lease,
) -> Result<i64, ContestError> {
    let c = contest(store.conn())?.ok_or(ContestError::NotStarted)?;
    let now = || clock.now();
    let mailer = Mailer {
        config,
        tournament: c.tournament_id,
        now: &now,
        cache: Default::default(),
        replayer: Default::default(),
    };
    if c.finished {
        return Ok(c.tournament_id);
    }
    // In case the server died right after the start.
    mailer.lap(store).map_err(ContestError::Mail)?;
    let jobs = if config.rules.jobs == 0 {
        crate::sandbox::allowed_cpus().len()
    } else {
        config.rules.jobs
    };
    // The results site, regenerated as groups finish, if configured.
    let mut site = config.site.dir.as_ref().map(|dir| {
        let mut s = crate::site::observer::SiteObserver::new(dir, c.tournament_id);
        s.options.title = Some(config.contest.name.clone());
        s.options.no_game_pages = config.site.no_game_pages;
        s.options.game_page_bytes = config.site.game_page_bytes_of(config.contest.discipline);
        s
    });
    let mut quiet = crate::engine::run::Quiet;
    let site_observer: &mut dyn Observer = match site.as_mut() {
        Some(s) => s,
        None => &mut quiet,
    };
    let mut both = Both {
        mailer,
        other: progress,
    };
    let nats = crate::distributed::from_config(&config.engine)
        .map_err(|e| ContestError::Engine(EngineError::Invalid(e.to_string())))?;
    let runner = crate::distributed::runner_factory(nats, c.tournament_id, jobs);
    run_tournament_with(
        store,
        c.tournament_id,
        &*runner,
        clock,
        &mut Chain(&mut lease.check(), &mut Chain(&mut both, site_observer)),
    )?;
    if let Some(s) = site.as_mut() {
        s.finish(store)
            .map_err(|e| ContestError::Mail(format!("results site: {e}")))?;
    }
    both.mailer
        .final_results(store)
        .map_err(ContestError::Mail)?;
    finish_contest(store.conn(), clock.now())?;
    Ok(c.tournament_id)
}
