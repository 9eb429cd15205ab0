//! The commands of `knobeln`, one file each. Each has a pure `parse` (its
//! clap definition) and an effectful `apply`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

use knobeln::config::check_memory_kb;
use knobeln::game::Params;
use knobeln::referee::PlayerLimits;
use knobeln::referee::RefereeConfig;
use knobeln::store::{Store, StoreError};

/// `print!` to stdout that ends quietly when the reader has gone away
/// (see [`stdout`]).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cmd::stdout::write(format_args!($($arg)*))
    };
}

/// `println!` to stdout that ends quietly when the reader has gone away
/// (see [`stdout`]).
macro_rules! outln {
    () => {
        $crate::cmd::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cmd::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub mod stdout;

mod admin;
mod bench;
mod check;
mod completions;
mod contest;
mod demo;
mod ingest;
mod init;
mod languages;
mod lexcount;
pub mod logging;
mod man;
mod play;
mod protocolfmt;
mod results;
mod rsm;
mod serve;
mod site;
mod status;
mod tournament;
mod worker;

#[derive(Parser, Debug)]
#[command(
    name = "knobeln",
    version,
    about = "KNOBELN game-strategy contest server",
    after_long_help = "The config file is --config PATH, else $KNOBELN_CONFIG, else \
        ./knobeln.toml, else /etc/knobeln/knobeln.toml (`knobeln init` writes one). \
        Relative paths in it are relative to its folder. See the book in docs/ and \
        deploy/README.md."
)]
pub struct Cli {
    /// More log lines on standard error (-v: debug, -vv: trace); RUST_LOG wins.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Fewer log lines (-q: warnings and errors only, -qq: errors only).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub quiet: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Count the lexical elements of a strategy (after preprocessing).
    Lexcount(lexcount::Lexcount),
    /// Run every compile check on a submission and play a trial game.
    Check(check::CheckCmd),
    /// Compile two strategies and play games between them.
    Play(play::Play),
    /// Measure a game against the machine's raw pipe round trip.
    Bench(bench::Bench),
    /// Run (or resume) a tournament on a folder of strategies.
    Tournament(tournament::Tournament),
    /// Write a commented knobeln.toml to start from.
    Init(init::Init),
    /// Process mail files once through the mail front end.
    Ingest(ingest::Ingest),
    /// Run the mail server (spool or IMAP/SMTP) until SIGTERM.
    Serve(serve::Serve),
    /// The contest: `contest start` runs it now.
    Contest(contest::ContestCmd),
    /// Where the contest stands.
    Status(status::Status),
    /// A complete contest by mail on the embedded default, from nothing.
    Demo(demo::Demo),
    /// Print game protocols (or a mail with protocols) in the full format.
    Protocolfmt(protocolfmt::Protocolfmt),
    /// Print the results article of the latest finished tournament.
    Results(results::ResultsCmd),
    /// Write the static results site into a folder.
    Site(site::Site),
    /// The organizer's levers: teams, failed and set-aside mail, the audit log.
    Admin(admin::AdminCmd),
    /// The bot languages and the toolchains found on this machine.
    Languages(languages::Languages),
    /// Play games from a coordinator's NATS JetStream queue.
    Worker(worker::Worker),
    /// The organizer's round summary (RSM): give it, or see the round.
    Rsm(rsm::Rsm),
    /// Print the shell completion script (bash, zsh, fish, …).
    Completions(completions::Completions),
    /// Print the manual page, or write every page into a folder.
    Man(man::Man),
}

impl Command {
    /// The log level of the command without `-v`/`-q`.
    pub fn usual_log(&self) -> logging::Usual {
        match self {
            Command::Serve(_) | Command::Contest(_) | Command::Worker(_) => logging::Usual::Info,
            _ => logging::Usual::Warn,
        }
    }

    pub fn apply(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Lexcount(c) => c.apply(),
            Command::Check(c) => c.apply(),
            Command::Languages(c) => c.apply(),
            Command::Play(c) => c.apply(),
            Command::Bench(c) => c.apply(),
            Command::Tournament(c) => c.apply(),
            Command::Init(c) => c.apply(),
            Command::Ingest(c) => c.apply(),
            Command::Serve(c) => c.apply(),
            Command::Contest(c) => c.apply(),
            Command::Status(c) => c.apply(),
            Command::Demo(c) => c.apply(),
            Command::Protocolfmt(c) => c.apply(),
            Command::Results(c) => c.apply(),
            Command::Site(c) => c.apply(),
            Command::Admin(c) => c.apply(),
            Command::Worker(c) => c.apply(),
            Command::Rsm(c) => c.apply(),
            Command::Completions(c) => c.apply(),
            Command::Man(c) => c.apply(),
        }
    }
}

/// Game parameters and limits, shared by the commands that play.
#[derive(Args, Debug, Clone)]
pub struct GameOpts {
    /// Smallest allowed throw.
    #[arg(long, default_value_t = 1)]
    pub a: i64,
    /// Largest allowed throw.
    #[arg(long, default_value_t = 12288)]
    pub b: i64,
    /// Minimum length of a non-decreasing series.
    #[arg(long, default_value_t = 8)]
    pub k: u32,
    /// Throws per game.
    #[arg(long = "throws", default_value_t = 1000)]
    pub l: u32,
    /// The CPU limit: fuel (WebAssembly operators) per strategy and game
    /// (default: 30 s of a SPARCstation 2).
    #[arg(long, default_value_t = knobeln::referee::DEFAULT_FUEL)]
    pub fuel: u64,
    /// Memory limit per strategy, in kB (whole 64 kB pages).
    #[arg(long, default_value_t = 1024)]
    pub memory_kb: u64,
    /// The watchdog: seconds of each player's own running time in a game;
    /// past it the game is an engine fault (never a player's failure).
    #[arg(long, default_value_t = knobeln::referee::DEFAULT_WALL.as_secs_f64())]
    pub wall_secs: f64,
}

impl GameOpts {
    pub fn referee_config(&self) -> anyhow::Result<RefereeConfig> {
        let params = Params {
            a: self.a,
            b: self.b,
            k: self.k,
            l: self.l,
        };
        params.validate().map_err(anyhow::Error::msg)?;
        anyhow::ensure!(self.fuel >= 1, "--fuel must be at least 1");
        anyhow::ensure!(self.wall_secs > 0.0, "--wall-secs must be positive");
        check_memory_kb(self.memory_kb).map_err(anyhow::Error::msg)?;
        Ok(RefereeConfig {
            params,
            limits: PlayerLimits {
                memory_bytes: self.memory_kb * 1024,
                ..Default::default()
            },
            wall: Duration::from_secs_f64(self.wall_secs),
            fuel: self.fuel,
        })
    }
}

/// Opens the contest database at `path`, which must exist (see
/// [`Store::open_existing`]): for every command that looks at or acts on a
/// contest. Only `init`, `serve`, `ingest` and `demo` create one.
pub fn open_contest(path: &Path) -> anyhow::Result<Store> {
    match Store::open_existing(path) {
        Ok(s) => Ok(s),
        Err(e @ StoreError::NoDatabase { .. }) => Err(e.into()),
        Err(e) => Err(anyhow::Error::from(e).context(format!("opening {}", path.display()))),
    }
}

pub fn read_source(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}
