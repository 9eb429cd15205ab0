//! `knobeln status`: the phase of the contest, the timeline, the teams with
//! their current versions, and what comes next.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chrono::Utc;
use clap::Args;

use knobeln::config::Config;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Status {
    /// Config file (default: ./knobeln.toml if present, else the embedded default).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

impl Status {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let config = Config::load(self.config.as_deref())?;
        let store = Store::open(&config.database)
            .with_context(|| format!("opening {}", config.database.display()))?;
        print!(
            "{}",
            knobeln::contest::status::report(&store, &config, Utc::now())?
        );
        Ok(ExitCode::SUCCESS)
    }
}
