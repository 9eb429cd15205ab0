//! The commands of `knobeln`, one file each. Each has a pure `parse` (its
//! clap definition) and an effectful `apply`.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

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
mod common;
mod completions;
mod contest;
mod demo;
mod ingest;
mod init;
mod languages;
mod lexcount;
pub mod logging;
mod mail_probe;
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
    /// The server's probe of a large mail (reads standard input).
    #[command(hide = true, name = "mail-probe")]
    MailProbe(mail_probe::MailProbe),
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
            Command::Completions(c) => c.apply(Cli::command()),
            Command::Man(c) => c.apply(Cli::command()),
            Command::MailProbe(c) => c.apply(),
        }
    }
}
