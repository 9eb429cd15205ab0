//! `knobeln admin …`: the organizer's levers, one file per command. The
//! listings (`teams`, `failed-mail`, `set-aside`, `log`) only read; the
//! actions (`withdraw`, `set-address`, `reset-auth`, `resend`,
//! `reprocess`) change the store, log themselves in the audit table with
//! the OS user who ran them, and queue their mails, in one transaction
//! (`knobeln::admin`). On the spool transport the command writes the mails
//! to `spool/outgoing/` at once; on IMAP/SMTP `knobeln serve` sends them.
//!
//! Exit status: 0 done, 1 refused (nothing changed; the reason is printed),
//! 2 the store failed.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use knobeln::admin::Outcome;
use knobeln::config::{Config, TransportKind};
use knobeln::server::Server;

mod failed_mail;
mod ids;
mod log;
mod reprocess;
mod resend;
mod reset_auth;
mod set_address;
mod set_aside;
mod teams;
mod withdraw;

#[derive(Args, Debug)]
pub struct AdminCmd {
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub action: AdminAction,
}

#[derive(Subcommand, Debug)]
pub enum AdminAction {
    /// List the registered teams (with --all also the withdrawn ones).
    Teams(teams::Teams),
    /// Withdraw a team before the contest starts (logged; the team is told).
    Withdraw(withdraw::Withdraw),
    /// Change a team's mail address (logged; both addresses are told).
    SetAddress(set_address::SetAddress),
    /// Give a team a new authentification string, mailed to the team (logged).
    ResetAuth(reset_auth::ResetAuth),
    /// List outgoing mails given up on.
    FailedMail(failed_mail::FailedMail),
    /// Queue failed outgoing mails again (logged).
    Resend(resend::Resend),
    /// List incoming mails set aside after failed processing.
    SetAside(set_aside::SetAsideList),
    /// Process set-aside incoming mails again (logged).
    Reprocess(reprocess::Reprocess),
    /// The audit log of admin actions.
    Log(log::Log),
}

impl AdminCmd {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let config = Config::load(self.config.as_deref())?;
        let mut store = super::common::open_contest(&config.database)?;
        let outcome = match self.action {
            AdminAction::Teams(c) => return c.apply(&store),
            AdminAction::FailedMail(c) => return c.apply(&store),
            AdminAction::SetAside(c) => return c.apply(&store, &config),
            AdminAction::Log(c) => return c.apply(&store),
            AdminAction::Withdraw(c) => c.apply(&mut store, &config)?,
            AdminAction::SetAddress(c) => c.apply(&mut store, &config)?,
            AdminAction::ResetAuth(c) => c.apply(&mut store, &config)?,
            AdminAction::Resend(c) => c.apply(&mut store)?,
            AdminAction::Reprocess(c) => c.apply(&mut store)?,
        };
        match outcome {
            Outcome::Done(line) => {
                outln!("{line}");
                if config.transport == TransportKind::Spool {
                    let f = Server::new(config, store).flush()?;
                    if f.sent > 0 {
                        outln!("{} mail(s) written to the spool", f.sent);
                    }
                }
                Ok(ExitCode::SUCCESS)
            }
            Outcome::Refused(why) => {
                eprintln!("knobeln admin: not done: {why}");
                Ok(ExitCode::from(1))
            }
        }
    }
}
