//! `knobeln completions SHELL`: prints the shell completion script for
//! bash, zsh, fish, elvish or PowerShell, generated from the command-line
//! definition itself (`clap_complete`), so it never falls behind a new
//! command or option. Installing it is the shell's business (see
//! deploy/README.md); this command only prints.

use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Args, Debug)]
pub struct Completions {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

impl Completions {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        out!("{}", script(self.shell));
        Ok(ExitCode::SUCCESS)
    }
}

/// The completion script of `knobeln` for `shell`.
pub fn script(shell: Shell) -> String {
    let mut cmd = super::Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "knobeln", &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}
