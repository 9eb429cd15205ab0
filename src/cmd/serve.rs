//! `knobeln serve [--config FILE] [--once]`: the mail server. Takes mail in
//! from the spool folder or the IMAP mailbox (IDLE, or polling where the
//! server lacks it), processes it, sends the outbox, tends the contest,
//! until SIGTERM or Ctrl-C; then it finishes the current cycle and exits
//! (see `knobeln::server` for what a `kill -9` does instead: nothing is
//! lost). Its log goes to standard error (`-v`, `-q`, `RUST_LOG`).
//!
//! `--once`: one cycle (take in, process, send), then a summary on
//! standard output; exit 0, or 1 when taking in or sending failed (the
//! rest of the cycle was done all the same).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use knobeln::config::{Config, TransportKind};
use knobeln::server::Server;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Serve {
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// One cycle (take in, process, send), print a summary, then exit.
    #[arg(long)]
    pub once: bool,
}

impl Serve {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let config = Config::load(self.config.as_deref())?;
        let store = Store::open(&config.database)
            .with_context(|| format!("opening {}", config.database.display()))?;
        let transport = match config.transport {
            TransportKind::Spool => format!("spool in {}", config.spool.dir.display()),
            TransportKind::Imap => {
                let (i, s) = (config.imap.as_ref(), config.smtp.as_ref());
                format!(
                    "IMAP {} mailbox {:?}, SMTP {}",
                    i.map_or(String::new(), |i| format!(
                        "{}:{} user {:?}",
                        i.host, i.port, i.user
                    )),
                    i.map_or("", |i| i.mailbox.as_str()),
                    s.map_or(String::new(), |s| format!("{}:{}", s.host, s.port)),
                )
            }
        };
        tracing::info!(
            "knobeln serve: database {}, {transport}",
            config.database.display()
        );
        // Large mails are read first by a probe of this program's own: it
        // must work before any mail is judged by it.
        knobeln::mail::probe::check_program().context("checking the mail probe")?;
        let mut server = Server::new(config, store);
        if self.once {
            let c = server.cycle()?;
            out!("{}", c.summary());
            return Ok(if c.transport_failed() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            });
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
                    tracing::info!("stopping after the current cycle");
                    flag.store(true, Ordering::SeqCst);
                })
            })
            .context("starting the signal thread")?;
        server.serve(shutdown)?;
        Ok(ExitCode::SUCCESS)
    }
}
