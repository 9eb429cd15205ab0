//! `knobeln results [--config FILE] [--out FILE]`: the results article of
//! the latest finished tournament in the store, ready for posting to
//! rec.games.misc and misc.misc (see `knobeln::contest::article`).
//!
//! Organizations and member counts come from the registrations; a team
//! without one (a tournament run from a folder) has the organization
//! "unknown".

use knobeln::discipline::family::Family;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chrono::Utc;
use clap::Args;
use rusqlite::OptionalExtension;

use knobeln::config::Config;
use knobeln::contest::article::{article, team_infos, ArticleInput};
use knobeln::engine::results::results;

#[derive(Args, Debug)]
pub struct ResultsCmd {
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Write the article to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The organizer's name for `From:` and the signature (default: the
    /// contest's name from the config).
    #[arg(long, value_name = "NAME")]
    pub organizer: Option<String>,
}

impl ResultsCmd {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let config = Config::load(self.config.as_deref())?;
        let store = super::common::open_contest(&config.database)?;
        if let Family::Bots(_) = config.contest.discipline.family() {
            use knobeln::contest::bots;
            let c = bots::contest(store.conn(), config.contest.discipline)?;
            let res = match &c {
                Some(c) if c.finished => bots::results(&store, c, &config)?,
                _ => None,
            };
            let (Some(c), Some(res)) = (c, res) else {
                eprintln!("knobeln results: no finished contest in the store");
                return Ok(ExitCode::from(1));
            };
            let games = bots::games_played(store.conn(), &c)?;
            let text = bots::article(&config.contest.name, c.discipline, &res, games);
            match &self.out {
                Some(p) => std::fs::write(p, text)?,
                None => out!("{text}"),
            }
            return Ok(ExitCode::SUCCESS);
        }
        let id: Option<i64> = store
            .conn()
            .query_row(
                "SELECT id FROM tournaments WHERE state = 'finished' ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()
            .context("looking for a finished tournament")?;
        let Some(id) = id else {
            eprintln!(
                "knobeln results: no finished tournament in {}",
                config.database.display()
            );
            return Ok(ExitCode::from(1));
        };
        let res = results(&store, id, vec![])
            .with_context(|| format!("rebuilding the results of tournament {id}"))?;

        let teams = team_infos(&store, &res)?;

        let organizer = self
            .organizer
            .unwrap_or_else(|| config.contest.name.clone());
        let text = article(&ArticleInput {
            results: &res,
            teams: &teams,
            contest_name: &config.contest.name,
            contest_address: &config.contest.address,
            organizer_name: &organizer,
            now: Utc::now(),
        });
        match &self.out {
            Some(path) => {
                std::fs::write(path, &text)
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!(
                    "results article of tournament {id} written to {}",
                    path.display()
                );
            }
            None => out!("{text}"),
        }
        Ok(ExitCode::SUCCESS)
    }
}
