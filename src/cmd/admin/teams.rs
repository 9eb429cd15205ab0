//! `knobeln admin teams [--all]`: every registered team with its address,
//! organization, mail preferences, versions and the one that plays; with
//! `--all` also the withdrawn teams (when and why).

use std::process::ExitCode;

use clap::Args;

use knobeln::store::admin::{teams, Withdrawn};
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Teams {
    /// Also the withdrawn teams.
    #[arg(long)]
    pub all: bool,
}

impl Teams {
    pub fn apply(self, store: &Store) -> anyhow::Result<ExitCode> {
        let which = if self.all {
            Withdrawn::Included
        } else {
            Withdrawn::Excluded
        };
        let rows = teams(store.conn(), which)?;
        outln!(
            "{:<5} {:<30} {:<32} {:<8} {:<10} mail-preference / organization",
            "id",
            "team",
            "mail-address",
            "versions",
            "plays"
        );
        for t in &rows {
            let plays = match (&t.withdrawn, t.current_version) {
                (Some(_), _) => "WITHDRAWN".to_string(),
                (None, Some(v)) => format!("v{v}"),
                (None, None) => "-".to_string(),
            };
            outln!(
                "{:<5} {:<30} {:<32} {:<8} {:<10} {} / {}",
                t.team.0,
                t.name,
                t.mail_address,
                t.n_versions,
                plays,
                if t.preferences.is_empty() {
                    "-"
                } else {
                    &t.preferences
                },
                t.organization
            );
            if let Some((at, reason)) = &t.withdrawn {
                outln!("      withdrawn {at}: {reason}");
            }
        }
        let n_playing = rows
            .iter()
            .filter(|t| t.withdrawn.is_none() && t.current_version.is_some())
            .count();
        let n_registered = rows.iter().filter(|t| t.withdrawn.is_none()).count();
        outln!(
            "{n_registered} registered team(s), {n_playing} with an accepted strategy{}",
            if self.all {
                format!(", {} withdrawn", rows.len() - n_registered)
            } else {
                String::new()
            }
        );
        Ok(ExitCode::SUCCESS)
    }
}
