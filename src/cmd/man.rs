//! `knobeln man [--out DIR]`: the manual pages, generated from the
//! command-line definition (`clap_mangen`). Without `--out`, prints
//! `knobeln(1)` (`knobeln man | man -l -`); with `--out DIR`, writes
//! `knobeln.1` and one page per command and subcommand
//! (`knobeln-serve.1`, `knobeln-admin-teams.1`, …) into DIR, creating it,
//! for `/usr/local/share/man/man1`. The pages say what `--help` says, no
//! more: the guides are the book in docs/ and deploy/README.md.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

#[derive(Args, Debug)]
pub struct Man {
    /// Write every page into this folder instead of printing knobeln(1).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl Man {
    /// `cli` is the command line's definition (the dispatcher's, passed
    /// down so that this file does not import it).
    pub fn apply(self, cli: clap::Command) -> anyhow::Result<ExitCode> {
        let cmd = cli;
        match self.out {
            None => {
                let mut buf = Vec::new();
                clap_mangen::Man::new(cmd)
                    .render(&mut buf)
                    .context("rendering the manual page")?;
                out!("{}", String::from_utf8_lossy(&buf));
            }
            Some(dir) => {
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                clap_mangen::generate_to(cmd, &dir)
                    .with_context(|| format!("writing the manual pages into {}", dir.display()))?;
                let pages = std::fs::read_dir(&dir)
                    .with_context(|| format!("reading {}", dir.display()))?
                    .flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "1"))
                    .count();
                eprintln!("{pages} manual pages in {}", dir.display());
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}
