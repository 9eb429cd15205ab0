//! `knobeln bench`: one 1000-throw game between two trivial strategies
//! against the raw pipe round trip ×1000 measured in the same run.

use std::process::ExitCode;

use clap::Args;

#[derive(Args, Debug)]
pub struct Bench {
    /// Number of games to time.
    #[arg(long, default_value_t = 50)]
    pub games: usize,
}

impl Bench {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        knobeln::bench::game_bench(self.games)?.print();
        Ok(ExitCode::SUCCESS)
    }
}
