//! `knobeln status`: the phase of the contest, the timeline, the teams with
//! their current versions, and what comes next.

use std::path::PathBuf;
use std::process::ExitCode;

use chrono::Utc;
use clap::Args;

use knobeln::config::Config;

#[derive(Args, Debug)]
pub struct Status {
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// List every team, however many (else a summary above 40).
    #[arg(long)]
    pub teams: bool,
}

impl Status {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let config = Config::load(self.config.as_deref())?;
        let store = super::common::open_contest(&config.database)?;
        out!(
            "{}",
            knobeln::contest::status::report(
                &store,
                &config,
                Utc::now(),
                if self.teams {
                    knobeln::contest::status::TeamList::All
                } else {
                    knobeln::contest::status::TeamList::UpTo
                }
            )?
        );
        Ok(ExitCode::SUCCESS)
    }
}
