//! `knobeln completions SHELL`: prints the shell completion script for
//! bash, zsh, fish, elvish or PowerShell, generated from the command-line
//! definition itself (`clap_complete`), so it never falls behind a new
//! command or option. Installing it is the shell's business (see
//! deploy/README.md); this command only prints.

use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

#[derive(Args, Debug)]
pub struct Completions {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

impl Completions {
    /// `cli` is the command line's definition (the dispatcher's, passed
    /// down so that this file does not import it).
    pub fn apply(self, cli: clap::Command) -> anyhow::Result<ExitCode> {
        out!("{}", script(cli, self.shell));
        Ok(ExitCode::SUCCESS)
    }
}

/// The completion script of `knobeln` for `shell`.
pub fn script(mut cmd: clap::Command, shell: Shell) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "knobeln", &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}
