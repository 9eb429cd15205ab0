//! `knobeln ingest FILE…`: processes mail files once, through the same path
//! as `serve` (stored, processed, replies queued), and leaves the replies in
//! the outbox, which on the spool transport means `spool/outgoing/`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chrono::Utc;
use clap::Args;

use knobeln::config::{Config, TransportKind};
use knobeln::mail::inbox::{read_capped, take_in_capped};
use knobeln::server::Server;
use knobeln::store::mail::inbox_state;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Ingest {
    /// Mail files (RFC 5322).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

impl Ingest {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let config = Config::load(self.config.as_deref())?;
        let store = Store::open(&config.database)
            .with_context(|| format!("opening {}", config.database.display()))?;
        let mut ids = Vec::new();
        for f in &self.files {
            let mail = read_capped(f, config.limits.max_mail_bytes)
                .with_context(|| format!("reading {}", f.display()))?;
            match take_in_capped(
                store.conn(),
                &format!("ingest:{}", f.display()),
                None,
                &mail,
                Utc::now(),
            )? {
                Some(id) => ids.push((f.clone(), Some(id))),
                None => ids.push((f.clone(), None)),
            }
        }
        let spool = config.transport == TransportKind::Spool;
        let mut server = Server::new(config, store);
        let summary = server.process()?;
        for (f, id) in &ids {
            match id {
                Some(id) => {
                    let (state, outcome, _) = inbox_state(server.store.conn(), *id)?;
                    outln!("{}: {state}: {}", f.display(), outcome.unwrap_or_default());
                }
                None => outln!(
                    "{}: already received before (not processed again)",
                    f.display()
                ),
            }
        }
        if spool {
            let flushed = server.flush()?;
            outln!(
                "{} repl{} written to {}",
                flushed.sent,
                if flushed.sent == 1 { "y" } else { "ies" },
                server.config.spool.dir.join("outgoing").display()
            );
        } else {
            outln!("replies queued in the outbox; `knobeln serve` sends them");
        }
        Ok(if summary.failed > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    }
}
