//! `knobeln bench [game|tournament]`: figures against floors measured in the
//! same run. `game`: one 1000-throw game between two trivial strategies
//! against the raw pipe round trip ×1000. `tournament`: one group of 41
//! trivial strategies (861 games) with one worker and with all CPUs.
//! `scale --teams N`: a whole contest of N distinct trivial strategies
//! (compile, rounds, Evolution, results, site without game pages) against
//! the three-process floor × games / CPUs, with the CPU of the server's
//! thread per game while playing, peak RSS and database size
//! (`--site skip`: without the results site, the server's own work alone;
//! `--site game-pages`: the site with every game's page, as a contest
//! writes it by default; `--module-cache N`: a module cache of N modules,
//! a field larger than the cache without compiling one that large;
//! `--no-module-spill`: what the cache drops compiles again).
//! `registrations`: 1000 registrations asking for the same team name
//! against 1000 with distinct names. `spool`: 1000 mails through the
//! outbox sender to the spool against the same files without any sync
//! (floor) and with one `fsync` each. `bots`: line-protocol bots per
//! language (`crate::bench_bots`). `compile`: CPU time per compile of the
//! compile service against gcc alone (`-E`, `-fsyntax-only`) on the same sources, and the
//! engine's compiler on one function at the largest size accepted. `fuel`:
//! nanoseconds per unit of fuel by class of operator, quiet and with the
//! other CPUs busy (`knobeln::bench_fuel`).
//! `distributed`: games through the NATS queue
//! with `--workers N` worker processes against the local pool, and the
//! coordinator's ceiling with fake workers (starts its own `nats-server`
//! unless `--nats URL` is given). `mail`: the time from a participant's
//! SMTP submission until the reply is readable in its IMAP mailbox, through
//! the local Postfix + Dovecot, with IDLE and with polling, against the
//! stack's own delivery (`knobeln::bench_mail`; not part of `all`: it needs
//! the mail stack). `bot-site`: a bot contest's results site (every game
//! on its pairing's page, a page per kept game with its picture) for
//! `--teams` bots against reading the stored games (`knobeln::bench_site`).
//! `bot-contest`: a bot contest of `--teams` bots end to end through the
//! contest run with in-process scripted players, the server's own CPU per
//! game against theirs (`knobeln::bench_contest`).

use std::process::ExitCode;

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum What {
    Game,
    Tournament,
    Compile,
    /// Nanoseconds per unit of fuel, by class of operator, quiet and loaded.
    Fuel,
    Registrations,
    /// Mails through the outbox sender to the spool (batched syncfs).
    Spool,
    Scale,
    /// A load of a module back from the module spill alone, beside the
    /// load as it was and its floors, in turns (`--games` loads a turn).
    SpillLoad,
    /// Line-protocol bots per language: match, start-up, sandbox overhead.
    Bots,
    Distributed,
    /// Reply times through the local mail stack (IDLE and polling).
    Mail,
    /// The results site of a bot contest of `--teams` bots
    /// (`--discipline`, `--repetitions`), against reading the games.
    BotSite,
    /// A bot contest of `--teams` bots end to end with in-process players
    /// (`--discipline`, `--repetitions`): the server's own CPU per game
    /// against the players', memory and database per game as it grows,
    /// and `--real-games` of the C demo bot for the real floor.
    BotContest,
    All,
}

#[derive(Args, Debug)]
pub struct Bench {
    /// Which benchmark.
    #[arg(value_enum, default_value_t = What::Game)]
    pub what: What,
    /// Number of games to time (game benchmark).
    #[arg(long, default_value_t = 50)]
    pub games: usize,
    /// Teams in the group (tournament benchmark) or in the contest (scale).
    #[arg(long, default_value_t = 41)]
    pub teams: usize,
    /// Scale: answer every game at once with a canned record and compile
    /// nothing, to measure the server's own cost on fields too large to
    /// play here (the play and floor figures then mean nothing).
    #[arg(long)]
    pub instant_games: bool,
    /// Scale: let the module cache hold at most N compiled modules (it
    /// holds 1024), to measure a field larger than the cache on a field
    /// small enough to compile.
    #[arg(long, value_name = "N")]
    pub module_cache: Option<usize>,
    /// Scale: leave out the module spill (what the module cache dropped
    /// compiles again, as before the spill), for the figure without it.
    #[arg(long)]
    pub no_module_spill: bool,
    /// Registrations (registrations benchmark), mails (spool benchmark).
    #[arg(long, default_value_t = 1000)]
    pub registrations: usize,
    /// Sources to compile (compile benchmark).
    #[arg(long, default_value_t = 40)]
    pub sources: usize,
    /// Workers (tournament benchmark; default: one per CPU).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Runs of each figure, best kept (bots benchmark).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Only this language (bots benchmark; repeatable; default: all
    /// built-in languages). The C bot is built for the floor anyway.
    #[arg(long = "language", value_name = "NAME")]
    pub languages: Vec<String>,
    /// Runs of each kind, the best counts (distributed benchmark).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Worker processes (distributed benchmark).
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// A NATS server with JetStream to use (distributed benchmark; default:
    /// start one).
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
    /// Participants per way of waiting (mail benchmark).
    #[arg(long, default_value_t = 3)]
    pub participants: usize,
    /// The polling interval to compare IDLE with (mail benchmark).
    #[arg(long, default_value_t = 5)]
    pub poll_secs: u64,
    /// The mail stack's host (mail benchmark).
    #[arg(long, default_value = "127.0.0.1")]
    pub mail_host: String,
    /// The mail stack's IMAP port (mail benchmark).
    #[arg(long, default_value_t = 1143)]
    pub imap_port: u16,
    /// The mail stack's SMTP port (mail benchmark).
    #[arg(long, default_value_t = 25)]
    pub smtp_port: u16,
    /// Every mailbox's password on the mail stack (mail benchmark).
    #[arg(long, default_value = "knobeln")]
    pub mail_password: String,
    /// The bot discipline (bot-site benchmark).
    #[arg(long, default_value = "ultimatum")]
    pub discipline: knobeln::discipline::Discipline,
    /// Repetitions, runs or games per pair instead of the discipline's
    /// default (bot-site benchmark).
    #[arg(long = "repetitions")]
    pub repetitions: Option<u32>,
    /// Real games of the discipline's C demo bot in the sandbox, for the
    /// real floor (bot-contest benchmark; 0: none).
    #[arg(long, default_value_t = 4)]
    pub real_games: usize,
    /// Whether the bot-contest benchmark ends with writing the site; for
    /// the scale benchmark, whether the site is kept up to date while
    /// playing and written at the end (`skip`: the server's own work
    /// without the site).
    #[arg(long, value_enum, default_value_t = SiteStep::Write)]
    pub site: SiteStep,
}

/// `--site` of the bot-contest and scale benchmarks.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SiteStep {
    /// The site (for the scale benchmark without game pages, as
    /// `[site] no_game_pages = true`).
    Write,
    /// The scale benchmark's site with every game's page, as a contest
    /// writes it by default (the bot-contest benchmark: as `write`).
    GamePages,
    /// A field whose site takes longer than its run (`bench bot-site`
    /// measures the site alone).
    Skip,
}

impl Bench {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        if matches!(self.what, What::Game | What::All) {
            knobeln::bench::game_bench(self.games)?.print();
        }
        if matches!(self.what, What::Compile | What::All) {
            knobeln::bench::compile_bench(self.sources)?.print();
        }
        if matches!(self.what, What::Fuel | What::All) {
            knobeln::bench_fuel::fuel_bench()?.print();
        }
        if matches!(self.what, What::Registrations | What::All) {
            knobeln::bench::registration_bench(self.registrations)
                .map_err(|e| anyhow::anyhow!(e))?
                .print();
        }
        if matches!(self.what, What::Spool | What::All) {
            knobeln::bench::spool_bench(self.registrations)
                .map_err(|e| anyhow::anyhow!(e))?
                .print();
        }
        if matches!(self.what, What::SpillLoad) {
            knobeln::bench::spill_load_bench(self.games as u32, 5)
                .map_err(|e| anyhow::anyhow!(e))?
                .print();
        }
        if matches!(self.what, What::Scale) {
            if let Some(n) = self.module_cache {
                knobeln::wasm::limit_cache_entries(n);
            }
            if self.no_module_spill {
                knobeln::wasm::leave_out_spill();
            }
            let jobs = self
                .jobs
                .unwrap_or_else(|| knobeln::sandbox::allowed_cpus().len());
            let play = if self.instant_games {
                knobeln::bench::ScalePlay::Instant
            } else {
                knobeln::bench::ScalePlay::Real
            };
            knobeln::bench::scale_bench(
                self.teams,
                jobs,
                play,
                match self.site {
                    SiteStep::Write => knobeln::bench::ScaleSite::WithoutGamePages,
                    SiteStep::GamePages => knobeln::bench::ScaleSite::WithGamePages,
                    SiteStep::Skip => knobeln::bench::ScaleSite::Skip,
                },
            )
            .map_err(|e| anyhow::anyhow!(e))?
            .print();
        }
        if matches!(self.what, What::Tournament | What::All) {
            let jobs = self
                .jobs
                .unwrap_or_else(|| knobeln::sandbox::allowed_cpus().len());
            knobeln::bench::tournament_bench(self.teams, jobs)?.print();
        }
        if matches!(self.what, What::Bots | What::All) {
            knobeln::bench_bots::bots_bench(self.repeats, &self.languages)?.print();
        }
        if matches!(self.what, What::Mail) {
            let stack = knobeln::bench_mail::Stack {
                host: self.mail_host.clone(),
                imap_port: self.imap_port,
                smtp_port: self.smtp_port,
                password: self.mail_password.clone(),
            };
            knobeln::bench_mail::mail_bench(&stack, self.participants, self.poll_secs)?.print();
        }
        if matches!(self.what, What::BotSite) {
            if self.discipline.family().bots().is_none() {
                anyhow::bail!("--discipline: the bot-site benchmark needs a bot discipline");
            }
            knobeln::bench_site::bot_site_bench(self.discipline, self.teams, self.repetitions)
                .map_err(|e| anyhow::anyhow!(e))?
                .print();
        }
        if matches!(self.what, What::BotContest) {
            if self.discipline.family().bots().is_none() {
                anyhow::bail!("--discipline: the bot-contest benchmark needs a bot discipline");
            }
            knobeln::bench_contest::bot_contest_bench(
                self.discipline,
                self.teams,
                self.repetitions,
                self.real_games,
                match self.site {
                    SiteStep::Write | SiteStep::GamePages => {
                        knobeln::bench_contest::SiteStep::Write
                    }
                    SiteStep::Skip => knobeln::bench_contest::SiteStep::Skip,
                },
            )
            .map_err(|e| anyhow::anyhow!(e))?
            .print();
        }
        if matches!(self.what, What::Distributed) {
            let exe = std::env::current_exe()?;
            knobeln::bench_nats::distributed_bench(
                &exe,
                self.nats.as_deref(),
                self.teams,
                self.workers,
                self.rounds,
            )?
            .print();
        }
        Ok(ExitCode::SUCCESS)
    }
}
