//! `knobeln check FILE [--json]`: every compile check of a submission, then a
//! trial game against the announcement's example strategy; prints the report
//! that the compile service mails. Exit 0 when accepted, 1 when rejected.
//! `--json` also says the checker's own peak memory (`peak_rss_kb`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use knobeln::referee::{GameSeeds, Referee};
use knobeln::report::{compile_report, ReportNotes, TrialView};
use knobeln::toolchain::compile::{compile, example_strategy, CompileConfig, Outcome};

use super::common::GameOpts;

#[derive(Args, Debug)]
pub struct CheckCmd {
    /// The C source, as it would be mailed (header and description included).
    pub file: PathBuf,
    /// Print JSON instead of the report text.
    #[arg(long)]
    pub json: bool,
    /// Seed of the trial game.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub game: GameOpts,
}

impl CheckCmd {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let src = super::common::read_source(&self.file)?;
        let cfg = CompileConfig {
            memory_limit: self.game.memory_kb * 1024,
            ..CompileConfig::default()
        };
        let referee = Referee::new(self.game.referee_config()?);
        let outcome = compile(&src, &cfg)?;
        let trial = match &outcome {
            Outcome::Accepted { binary, .. } => {
                let strategy = knobeln::wasm::load(binary)
                    .context("compiling the module for the trial game")?;
                let example: knobeln::wasm::Loaded = Ok(example_strategy()?);
                Some(referee.play_loaded([&strategy, &example], GameSeeds::public(self.seed))?)
            }
            Outcome::Rejected { .. } => None,
        };
        let report = outcome.report();
        if self.json {
            let errors: Vec<_> = report.errors().collect();
            let warnings: Vec<_> = report.warnings().collect();
            let out = json!({
                "accepted": outcome.accepted(),
                "lexical_elements": report.lexical_elements,
                "header": report.header,
                "checks": report.checks,
                "errors": errors,
                "warnings": warnings,
                "compiler_output": report.compiler_output,
                "failed_builder": report.failed_builder,
                "trial_game": trial.as_ref().map(|g| super::play::game_json(g, ["submission", "example"])),
                "peak_rss_kb": peak_rss_kb(),
            });
            outln!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            let view = trial
                .as_ref()
                .map(|g| TrialView::new(g, referee.config.params.l));
            out!(
                "{}",
                compile_report(
                    report,
                    outcome.accepted(),
                    cfg.max_lexical_elements,
                    view.as_ref(),
                    &ReportNotes::default()
                )
            );
        }
        Ok(if outcome.accepted() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    }
}

/// The highest resident memory of this process so far, in KiB (the
/// checker's own: gcc and the trial run apart from it): the kernel's
/// high-water mark of this process's own memory (`VmHWM`), not
/// `getrusage`'s `ru_maxrss`, which starts at the peak of the process
/// that started it (Linux keeps the old image's high-water mark across
/// `execve`: a checker started by a large test runner or server would
/// report the starter's memory).
fn peak_rss_kb() -> i64 {
    i64::try_from(knobeln::bench::status_kb("VmHWM:")).unwrap_or(i64::MAX)
}
