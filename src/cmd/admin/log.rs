//! `knobeln admin log [--last N]`: the audit log of admin actions, oldest
//! first: when, which OS user, what, on what, the details.

use std::process::ExitCode;

use clap::Args;

use knobeln::store::admin::admin_log;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Log {
    /// Show the last N entries.
    #[arg(long, default_value_t = 50)]
    pub last: usize,
}

impl Log {
    pub fn apply(self, store: &Store) -> anyhow::Result<ExitCode> {
        let rows = admin_log(store.conn(), self.last)?;
        for r in &rows {
            outln!(
                "{:<5} {}  {:<12} {:<12} {:<30} {}",
                r.id,
                r.at,
                r.actor,
                r.action,
                r.target,
                r.details
            );
        }
        if rows.is_empty() {
            outln!("no admin action logged yet");
        }
        Ok(ExitCode::SUCCESS)
    }
}
