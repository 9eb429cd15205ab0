//! `knobeln site DIR [--config FILE] [--db FILE] [--tournament ID]`: writes
//! the static results site of a tournament (the latest by default) into
//! DIR, from the database of the config or the one given with `--db`
//! (after `knobeln demo --dir X`: `--db X/knobeln.db`; the config, if one is
//! found, then gives only the title and the discipline).
//! See `knobeln::site`. It only reads the database. In a bot discipline it
//! writes the discipline's results page (`knobeln::site::bots`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rusqlite::OptionalExtension;

use knobeln::config::{Config, ConfigError};
use knobeln::site::{generate, SiteOptions};

#[derive(Args, Debug)]
pub struct Site {
    /// Folder to write the site into (created if missing; nothing in it is deleted).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Database file (default: the config's `database`, ./knobeln.db).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// The tournament to show (default: the latest).
    #[arg(long, value_name = "ID")]
    pub tournament: Option<i64>,
    /// Leave out the pages of single games (the bulk of the site).
    #[arg(long)]
    pub no_game_pages: bool,
    /// The bytes of disk the game pages may take (default: the config's
    /// `[site] game_page_bytes`, else 1 GiB, a bot discipline's 8 GiB):
    /// give the contest's own budget to write the pages its site wrote.
    #[arg(long, value_name = "BYTES")]
    pub game_page_bytes: Option<u64>,
}

impl Site {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        // With --db the config is optional: it gives only the title (the
        // default contest name without one) and the discipline.
        let (db, config) = match (self.db.clone(), Config::load(self.config.as_deref())) {
            (Some(db), Ok(c)) => (db, Some(c)),
            (Some(db), Err(ConfigError::NotFound { .. })) => (db, None),
            (None, Ok(c)) => (c.database.clone(), Some(c)),
            (_, Err(e)) => return Err(e.into()),
        };
        let title = Some(
            config
                .as_ref()
                .map(|c| c.contest.name.clone())
                .unwrap_or_else(|| Config::default().contest.name),
        );
        let store = super::common::open_contest(&db)?;
        if let Some(config) = config
            .as_ref()
            .filter(|c| c.contest.discipline.family().bots().is_some())
        {
            let Some(c) = knobeln::contest::bots::contest(store.conn(), config.contest.discipline)?
            else {
                eprintln!("knobeln site: no contest in {}", db.display());
                return Ok(ExitCode::from(1));
            };
            let Some(res) = knobeln::contest::bots::results(&store, &c, config)? else {
                eprintln!("knobeln site: the contest has no results yet");
                return Ok(ExitCode::from(1));
            };
            // `--game-page-bytes` over the config's budget.
            let mut config = config.clone();
            if let Some(bytes) = self.game_page_bytes {
                config.site.game_page_bytes = Some(bytes);
            }
            knobeln::site::bots::write(&self.dir, &store, &c, &config, &res)?;
            outln!("{}", self.dir.join("index.html").display());
            return Ok(ExitCode::SUCCESS);
        }
        let id = match self.tournament {
            Some(id) => {
                let known: Option<i64> = store
                    .conn()
                    .query_row("SELECT id FROM tournaments WHERE id = ?1", [id], |r| {
                        r.get(0)
                    })
                    .optional()
                    .context("looking for the tournament")?;
                if known.is_none() {
                    eprintln!("knobeln site: no tournament {id} in {}", db.display());
                    return Ok(ExitCode::from(1));
                }
                id
            }
            None => {
                let latest: Option<i64> = store
                    .conn()
                    .query_row(
                        "SELECT id FROM tournaments ORDER BY id DESC LIMIT 1",
                        [],
                        |r| r.get(0),
                    )
                    .optional()
                    .context("looking for the latest tournament")?;
                match latest {
                    Some(id) => id,
                    None => {
                        eprintln!("knobeln site: no tournament in {}", db.display());
                        return Ok(ExitCode::from(1));
                    }
                }
            }
        };
        let opts = SiteOptions {
            title,
            no_game_pages: self.no_game_pages,
            // The same game pages as the contest's own site wrote.
            game_page_bytes: self.game_page_bytes.unwrap_or(
                config
                    .as_ref()
                    .map_or(knobeln::site::DEFAULT_GAME_PAGE_BYTES, |c| {
                        c.site.game_page_bytes_of(c.contest.discipline)
                    }),
            ),
            ..SiteOptions::default()
        };
        let summary = generate(&store, id, &self.dir, &opts)
            .with_context(|| format!("writing the site of tournament {id}"))?;
        eprintln!(
            "site of tournament {id}: {} files in {} ({} changed); open {}",
            summary.files.len(),
            self.dir.display(),
            summary.written,
            self.dir.join("index.html").display()
        );
        Ok(ExitCode::SUCCESS)
    }
}
