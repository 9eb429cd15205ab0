//! `knobeln init [FILE] [--force]`: writes a commented `knobeln.toml` to
//! start from (the same text as `deploy/knobeln.toml`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Args;

#[derive(Args, Debug)]
pub struct Init {
    /// Where to write the config.
    #[arg(default_value = "knobeln.toml")]
    pub file: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

impl Init {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        if self.file.exists() && !self.force {
            bail!(
                "{} exists; use --force to overwrite it",
                self.file.display()
            );
        }
        std::fs::write(&self.file, knobeln::config::EXAMPLE)
            .with_context(|| format!("writing {}", self.file.display()))?;
        println!(
            "wrote {}: edit it, then run `knobeln serve --config {}`",
            self.file.display(),
            self.file.display()
        );
        Ok(ExitCode::SUCCESS)
    }
}
