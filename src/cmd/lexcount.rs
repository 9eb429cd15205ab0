//! `knobeln lexcount FILE`: the lexical elements of a strategy, counted as
//! the compile service counts them (after preprocessing).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use knobeln::toolchain::compile::{compile, CompileConfig, Profile};
use knobeln::toolchain::diagnostic::Check;

#[derive(Args, Debug)]
pub struct Lexcount {
    /// The C source.
    pub file: PathBuf,
}

impl Lexcount {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let src = super::common::read_source(&self.file)?;
        let cfg = CompileConfig {
            profile: Profile::Local,
            ..CompileConfig::default()
        };
        let outcome = compile(&src, &cfg)?;
        let report = outcome.report();
        match report.lexical_elements {
            Some(n) => {
                outln!("lexical elements: {n}");
                Ok(ExitCode::SUCCESS)
            }
            None => {
                for d in report
                    .errors()
                    .filter(|d| matches!(d.check, Check::SingleFile | Check::Compiler))
                {
                    eprintln!("{}: {d}", self.file.display());
                }
                eprintln!("lexical elements: not counted (the source does not preprocess)");
                Ok(ExitCode::from(1))
            }
        }
    }
}
