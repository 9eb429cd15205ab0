//! `knobeln rsm --round N [FILE] [--config FILE]`: the organizer's round
//! summary (RSM, "a handwritten summary of all groups of this round").
//!
//! With FILE, its text becomes the summary of round N: a contest paused
//! after round N (`rules.rsm_pause_minutes`) sends the RSM with it at once
//! and goes on; a summary given before its round has finished waits for it.
//! Refused (exit 1) once the round's RSM has gone out, and for a file that
//! is empty, not UTF-8 or larger than 64 KiB. The action is written to the
//! organizer's audit log. Without FILE, it prints where round N stands (the
//! pause, the summary, whether the RSM went out) and the rankings every
//! RSM of that round carries.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chrono::Utc;
use clap::Args;

use knobeln::config::Config;
use knobeln::engine::results::results;
use knobeln::mail::commands::date;
use knobeln::mail::commands::rsm::MAX_SUMMARY_BYTES;
use knobeln::store::admin::log_action;
use knobeln::store::mail::contest;
use knobeln::store::rsm::{rsm_round, set_summary, SummaryRefused};
use knobeln::store::Store;
use knobeln::tables::knobeln::round_summary;

#[derive(Args, Debug)]
pub struct Rsm {
    /// The round the summary is of.
    #[arg(long)]
    pub round: u32,
    /// The summary, a text file (without it: show the round's state).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

impl Rsm {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let config = Config::load(self.config.as_deref())?;
        let store = super::common::open_contest(&config.database)?;
        let Some(c) = contest(store.conn())? else {
            eprintln!("knobeln rsm: the contest has not started");
            return Ok(ExitCode::from(1));
        };
        anyhow::ensure!(self.round >= 1, "--round counts from 1");
        let Some(file) = self.file else {
            return show(&store, c.tournament_id, self.round);
        };
        let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
        anyhow::ensure!(
            bytes.len() <= MAX_SUMMARY_BYTES,
            "{} has {} bytes; a summary has at most {MAX_SUMMARY_BYTES}",
            file.display(),
            bytes.len()
        );
        let text = String::from_utf8(bytes)
            .with_context(|| format!("{} is not UTF-8 text", file.display()))?;
        let text = text.trim();
        anyhow::ensure!(!text.is_empty(), "{} is empty", file.display());
        let now = Utc::now();
        let tx = store.conn().unchecked_transaction()?;
        match set_summary(&tx, c.tournament_id, self.round, text, "cli", now)? {
            Ok(()) => {}
            Err(SummaryRefused::AlreadySent) => {
                eprintln!(
                    "knobeln rsm: the summary of round {} has already gone out; nothing changed",
                    self.round
                );
                return Ok(ExitCode::from(1));
            }
        }
        log_action(
            &tx,
            now,
            &knobeln::admin::actor_from_env(),
            "rsm",
            &format!("round {}", self.round),
            &serde_json::json!({ "bytes": text.len(), "file": file.display().to_string() }),
        )?;
        tx.commit()?;
        let paused = rsm_round(store.conn(), c.tournament_id, self.round)?
            .and_then(|s| s.pause_started_at)
            .is_some();
        outln!(
            "the summary of round {} is stored; {}",
            self.round,
            if paused {
                "the paused contest sends the RSM now and goes on"
            } else {
                "it goes out with the RSM when the round is finished"
            }
        );
        Ok(ExitCode::SUCCESS)
    }
}

/// Prints where round `round` stands and its rankings.
fn show(store: &Store, tournament: i64, round: u32) -> anyhow::Result<ExitCode> {
    let state = rsm_round(store.conn(), tournament, round)?;
    outln!("round {round}:");
    match state
        .as_ref()
        .and_then(|s| s.pause_started_at.zip(s.pause_ends_at))
    {
        Some((from, until)) => outln!("  paused from {} until {}", date(from), date(until)),
        None => outln!("  no pause (yet)"),
    }
    match state.as_ref().and_then(|s| s.summary.as_ref()) {
        Some(t) => outln!(
            "  the organizer's summary: {} bytes (by {})",
            t.len(),
            state
                .as_ref()
                .and_then(|s| s.summary_source.clone())
                .unwrap_or_default()
        ),
        None => outln!("  the organizer's summary: none"),
    }
    match state.as_ref().and_then(|s| s.sent_at) {
        Some(at) => outln!(
            "  the RSM went out on {} ({})",
            date(at),
            state
                .as_ref()
                .and_then(|s| s.sent_kind.clone())
                .unwrap_or_default()
        ),
        None => outln!("  the RSM has not gone out"),
    }
    let res = results(store, tournament, vec![])?;
    match res.rounds.iter().find(|r| r.number == round) {
        Some(rr) => {
            outln!();
            out!("{}", round_summary(rr));
        }
        None => outln!("  (round {round} has not started)"),
    }
    Ok(ExitCode::SUCCESS)
}
