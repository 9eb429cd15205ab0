//! `knobeln tournament --strategies DIR [--seed N] [--db FILE] [--jobs N] [--json]`:
//! runs (or resumes) a whole contest on a folder of strategy sources: the
//! grouped rounds of discipline 1, then the Knobeln Evolution. With `--nats
//! URL` its games are played by `knobeln worker`s through NATS JetStream.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use knobeln::engine::prepare::{prepare_folder, sha256_hex};
use knobeln::engine::results::{results, Results};
use knobeln::engine::run::{run_tournament_with, Event, Observer, TournamentConfig};
use knobeln::engine::{Clock, SystemClock};
use knobeln::seed::SeedKey;
use knobeln::store::Store;
use knobeln::tournament::evolution::EvolutionConfig;

use super::common::GameOpts;

#[derive(Args, Debug)]
pub struct Tournament {
    /// Folder of strategies: every *.c is one team, named after the file.
    #[arg(long, value_name = "DIR")]
    pub strategies: PathBuf,
    /// Tournament seed (default: resume the unfinished tournament of these
    /// strategies, or draw a new seed from the OS).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The secret key of the players' seeds, 32 hex digits (default: with
    /// --seed, a key derived from the seed, so that the seed alone
    /// reproduces the run; without, a key from the OS, kept in the database).
    /// `knobeln contest start` always draws its key from the OS.
    #[arg(long, value_name = "HEX")]
    pub secret: Option<String>,
    /// Database file.
    #[arg(long, default_value = "knobeln.db")]
    pub db: PathBuf,
    /// Games played in parallel (default: one per CPU).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print the results as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Exemplars per strategy in the Knobeln Evolution.
    #[arg(long, default_value_t = 5)]
    pub exemplars: u64,
    /// Generation cap of the Evolution.
    #[arg(long, default_value_t = 1000)]
    pub max_generations: u32,
    #[command(flatten)]
    pub game: GameOpts,
    /// Play the games on workers through NATS (`--nats URL`; see `knobeln worker`).
    #[command(flatten)]
    pub nats: super::worker::NatsArgs,
    #[command(flatten)]
    pub queue: super::worker::QueueArgs,
}

impl Tournament {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let jobs = self
            .jobs
            .unwrap_or_else(|| knobeln::sandbox::allowed_cpus().len())
            .max(1);
        let mut store =
            Store::open(&self.db).with_context(|| format!("opening {}", self.db.display()))?;
        let clock = SystemClock;
        let prepared = prepare_folder(&store, &self.strategies, jobs, &clock)?;
        anyhow::ensure!(
            !prepared.accepted.is_empty(),
            "no strategy in {} passed the compile checks",
            self.strategies.display()
        );
        let config = TournamentConfig {
            referee: self.game.referee_config()?,
            evolution: EvolutionConfig {
                exemplars_per_strategy: self.exemplars,
                max_generations: self.max_generations,
            },
        };
        let config_json = serde_json::to_string(&config)?;
        let mut key_text = config_json.clone();
        for a in &prepared.accepted {
            key_text.push_str(&format!("\n{} {}", a.name, a.source_sha256));
        }
        let entries_key = sha256_hex(key_text.as_bytes());
        let tid = match store.find_tournament(&entries_key, self.seed)? {
            Some(t) => {
                if !t.finished {
                    eprintln!("resuming tournament {} (seed {})", t.id, t.seed);
                }
                t.id
            }
            None => {
                let seed = self.seed.unwrap_or_else(knobeln::contest::run::os_seed);
                let key = match (&self.secret, self.seed) {
                    (Some(hex), _) => SeedKey::from_hex(hex)?,
                    (None, Some(seed)) => SeedKey::public_from_seed(seed),
                    (None, None) => knobeln::contest::run::os_key(),
                };
                let entries: Vec<_> = prepared
                    .accepted
                    .iter()
                    .map(|a| (a.team, a.version))
                    .collect();
                store.create_tournament(
                    seed,
                    &key,
                    &config_json,
                    &entries_key,
                    &entries,
                    clock.now(),
                )?
            }
        };
        let nats = match self.nats.options()? {
            Some(options) => Some((options, self.queue.settings()?)),
            None => None,
        };
        let runner = knobeln::distributed::runner_factory(nats, tid, jobs);
        let mut progress = Progress::new();
        run_tournament_with(&mut store, tid, &*runner, &clock, &mut progress)?;
        progress.finish();
        let res = results(&store, tid, prepared.rejected)?;
        if self.json {
            outln!("{}", serde_json::to_string_pretty(&res)?);
        } else {
            print_summary(&res);
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// A progress bar on a terminal, plain log lines otherwise (both on stderr).
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    last_logged: usize,
}

impl Progress {
    pub(crate) fn new() -> Progress {
        Progress {
            bar: None,
            last_logged: 0,
        }
    }

    pub(crate) fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Observer for Progress {
    fn event(&mut self, _store: &Store, e: &Event) -> Result<(), String> {
        let tty = std::io::stderr().is_terminal();
        match e {
            Event::RoundStarted {
                round,
                n_teams,
                n_groups,
                n_games,
                is_final,
            } => {
                let what = if *is_final { " (final)" } else { "" };
                let msg = format!(
                    "round {round}{what}: {n_teams} teams in {n_groups} group(s), {n_games} games"
                );
                if tty {
                    self.finish();
                    let bar = ProgressBar::new(*n_games as u64);
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{msg} [{bar:30}] {pos}/{len} games, {per_sec}, ETA {eta}",
                        )
                        .expect("template")
                        .progress_chars("=> "),
                    );
                    bar.set_message(format!("round {round}"));
                    bar.enable_steady_tick(Duration::from_millis(200));
                    eprintln!("{msg}");
                    self.bar = Some(bar);
                } else {
                    eprintln!("{msg}");
                }
                self.last_logged = 0;
            }
            Event::GameFinished { round, done, total } => {
                if let Some(b) = &self.bar {
                    b.set_length(*total as u64);
                    b.set_position(*done as u64);
                } else if *done - self.last_logged >= (*total / 10).max(1) || done == total {
                    self.last_logged = *done;
                    eprintln!("round {round}: {done}/{total} games");
                }
            }
            Event::RoundFinished {
                round,
                advanced,
                disqualified,
            } => {
                self.finish();
                eprintln!(
                    "round {round} finished: {} advance, {} disqualified",
                    advanced.len(),
                    disqualified.len()
                );
            }
            Event::EvolutionFinished { generations } => {
                eprintln!(
                    "evolution finished: {generations} generations computed after the initial population"
                );
            }
            _ => {}
        }
        Ok(())
    }
}

fn print_summary(r: &Results) {
    outln!("tournament seed {}", r.seed);
    for rej in &r.rejected {
        outln!("rejected: {} ({})", rej.team, rej.errors.join("; "));
    }
    for round in &r.rounds {
        outln!(
            "round {}{}: {} group(s)",
            round.number,
            if round.is_final { " (final)" } else { "" },
            round.groups.len()
        );
        for d in &round.disqualified {
            outln!("  disqualified: {}: {}", d.team, d.reason);
        }
    }
    outln!("\nfinal ranking:");
    for w in &r.winners {
        outln!("  {:>3}. {:<32} {:>10}", w.place, w.team, w.points);
    }
    if let Some(evo) = &r.evolution {
        outln!(
            "\nKnobeln Evolution ({} exemplars, {} generations computed after the initial population):",
            evo.population,
            evo.generations.len().saturating_sub(1)
        );
        for e in &evo.ranking {
            outln!(
                "  {:>3}. {:<32} {:>7.2} %",
                e.place,
                e.team,
                100.0 * e.fraction
            );
        }
    }
}
