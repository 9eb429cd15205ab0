//! `knobeln serve [--config FILE] [--once]`: the mail server. Polls the
//! spool folder or the IMAP mailbox, processes mails, sends the outbox, until
//! SIGTERM or Ctrl-C; then it finishes the current cycle and exits (see
//! `knobeln::server` for what a `kill -9` does instead: nothing is lost).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use knobeln::config::Config;
use knobeln::server::Server;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Serve {
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// One cycle (take in, process, send), then exit.
    #[arg(long)]
    pub once: bool,
}

impl Serve {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let config = Config::load(self.config.as_deref())?;
        let store = Store::open(&config.database)
            .with_context(|| format!("opening {}", config.database.display()))?;
        eprintln!(
            "knobeln serve: database {}, transport {:?}{}",
            config.database.display(),
            config.transport,
            match config.transport {
                knobeln::config::TransportKind::Spool =>
                    format!(" in {}", config.spool.dir.display()),
                knobeln::config::TransportKind::Imap => String::new(),
            }
        );
        let mut server = Server::new(config, store);
        if self.once {
            let c = server.cycle()?;
            eprintln!("{c:?}");
            return Ok(ExitCode::SUCCESS);
        }
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the signal handler")?;
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                rt.block_on(async {
                    let mut term = match tokio::signal::unix::signal(
                        tokio::signal::unix::SignalKind::terminate(),
                    ) {
                        Ok(t) => t,
                        Err(_) => return,
                    };
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    }
                    eprintln!("knobeln serve: stopping after the current cycle");
                    flag.store(true, Ordering::SeqCst);
                })
            })
            .context("starting the signal thread")?;
        server.serve(shutdown, &mut |line| eprintln!("knobeln serve: {line}"))?;
        Ok(ExitCode::SUCCESS)
    }
}
