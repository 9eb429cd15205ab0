//! `knobeln contest start [--seed N] [--rsm-note FILE]`: starts the contest
//! at once (instead of waiting for `contest_start` in `knobeln serve`), runs
//! the tournament and the Evolution to the end, queues every mail by
//! preference, and on the spool transport writes them to `spool/outgoing/`.
//! Running it again after an interruption resumes; a finished contest is
//! not run again. One process plays the contest at a time: while another
//! (`knobeln serve`, or a second `contest start`) holds it, this one says
//! who and exits 1.
//!
//! In a bot discipline (`[contest] discipline`) it plays the discipline's
//! tournament from the stored bots instead (resumable the same way: games
//! already stored are not played again), queues the results mail to every
//! participant, and writes the results site when `[site] dir` is set.

use knobeln::discipline::family::Family;
use std::path::PathBuf;
use std::process::ExitCode;

use chrono::Utc;
use clap::{Args, Subcommand};

use knobeln::config::{Config, TransportKind};
use knobeln::contest::lease::LeaseError;
use knobeln::contest::run::{run_holding, start, take_lease, ContestError, PlayersKey};
use knobeln::engine::SystemClock;
use knobeln::server::Server;
use knobeln::store::admin::teams_without_strategy;

use super::tournament::Progress;

#[derive(Args, Debug)]
pub struct ContestCmd {
    #[command(subcommand)]
    pub action: ContestAction,
}

#[derive(Subcommand, Debug)]
pub enum ContestAction {
    /// Start the contest now and run it to the end.
    Start(StartArgs),
}

#[derive(Args, Debug)]
pub struct StartArgs {
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Tournament seed (default: from the OS random source).
    #[arg(long)]
    pub seed: Option<u64>,
    /// A paragraph of the organizer's for the round summaries (RSM).
    #[arg(long, value_name = "FILE")]
    pub rsm_note: Option<PathBuf>,
}

impl ContestCmd {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let ContestAction::Start(args) = self.action;
        let mut config = Config::load(args.config.as_deref())?;
        if let Some(note) = args.rsm_note {
            anyhow::ensure!(note.is_file(), "no such file: {}", note.display());
            config.rules.rsm_note_file = Some(note);
        }
        let mut store = super::common::open_contest(&config.database)?;
        if let Family::Bots(_) = config.contest.discipline.family() {
            return bot_contest(config, store, args.seed);
        }
        // The lease first: a `serve` that sees the contest created cannot
        // take it over before this process plays it.
        let lease = match take_lease(&store, &config) {
            Ok(l) => l,
            Err(LeaseError::Held(who)) => {
                eprintln!("knobeln: {who}");
                return Ok(ExitCode::from(1));
            }
            Err(e) => return Err(e.into()),
        };
        let tid = start(
            &mut store,
            &config,
            args.seed,
            PlayersKey::Secret,
            Utc::now(),
        )?;
        let without = teams_without_strategy(store.conn())?;
        if !without.is_empty() {
            eprintln!(
                "{} registered team(s) have no accepted strategy and do not play:",
                without.len()
            );
            for (name, address) in &without {
                eprintln!("  {name} <{address}>");
            }
        }
        eprintln!("contest running (tournament {tid})");
        let mut progress = Progress::new();
        match run_holding(&mut store, &config, &SystemClock, &mut progress, &lease) {
            Ok(_) => {}
            Err(ContestError::Held(who)) => {
                progress.finish();
                eprintln!("knobeln: {who}");
                return Ok(ExitCode::from(1));
            }
            Err(e) => return Err(e.into()),
        }
        progress.finish();
        mails_out(config, store)?;
        outln!("the results article: knobeln results");
        Ok(ExitCode::SUCCESS)
    }
}

/// The contest of a bot discipline, to its end.
fn bot_contest(
    config: Config,
    mut store: knobeln::store::Store,
    seed: Option<u64>,
) -> anyhow::Result<ExitCode> {
    use knobeln::contest::bots;
    let seed = seed.unwrap_or_else(knobeln::contest::run::os_seed);
    eprintln!(
        "contest of {} running (seed {seed})",
        config.contest.discipline.title()
    );
    let now = || Utc::now();
    let res = match bots::run_contest(&mut store, &config, seed, &now) {
        Ok(res) => res,
        Err(bots::BotContestError::Held(who)) => {
            eprintln!("knobeln contest: {who}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(dir) = &config.site.dir {
        let c = bots::contest(store.conn(), config.contest.discipline)?
            .ok_or_else(|| anyhow::anyhow!("the contest was not started"))?;
        knobeln::site::bots::write(dir, &store, &c, &config, &res)?;
    }
    out!("{}", bots::results_text(&res));
    mails_out(config, store)?;
    Ok(ExitCode::SUCCESS)
}

/// After a contest: on the spool, the mails are written at once; over
/// SMTP, `serve` sends them.
fn mails_out(config: Config, store: knobeln::store::Store) -> anyhow::Result<()> {
    let spool = config.transport == TransportKind::Spool;
    let mut server = Server::new(config, store);
    if spool {
        let f = server.flush()?;
        outln!(
            "contest finished; {} mail(s) written to {}",
            f.sent,
            server.config.spool.dir.join("outgoing").display()
        );
    } else {
        outln!("contest finished; the mails are queued: `knobeln serve` sends them");
    }
    Ok(())
}
