//! The compile report for people, rendered from `templates/compile_report.hbs`
//! through the mail texts' registry (strict mode, no HTML escaping): the
//! same text `knobeln check` prints and the compile service mails.
//!
//! Takes finished data (a compile [`Report`], a [`GameRecord`]) and returns
//! text; it runs nothing and decides nothing.

use serde::Serialize;

use crate::referee::GameRecord;
use crate::toolchain::compile::{compiler_heading, is_tool_heading, verdict_words, Report};
use crate::toolchain::diagnostic::Diagnostic;

/// The trial game as the report shows it. The submitted strategy is P.
#[derive(Debug, Clone, Serialize)]
pub struct TrialView {
    pub seed: u64,
    pub your_points: u64,
    pub example_points: u64,
    pub n_throws: usize,
    pub l: u32,
    /// "your strategy: throw 17: ..." / "the example strategy: ..."
    pub failures: Vec<String>,
}

impl TrialView {
    pub fn new(game: &GameRecord, l: u32) -> Self {
        TrialView {
            seed: game.seed,
            your_points: game.points[0],
            example_points: game.points[1],
            n_throws: game.throws.len(),
            l,
            failures: game
                .failures
                .iter()
                .map(|f| {
                    let who = if f.player == 0 {
                        "your strategy"
                    } else {
                        "the example strategy (not your fault)"
                    };
                    format!("{who}: {}", f.reason)
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct CheckLine {
    number: usize,
    title: &'static str,
    verdict: String,
}

#[derive(Serialize)]
struct CompileReportView<'a> {
    accepted: bool,
    accepted_note: &'a str,
    rejected_note: &'a str,
    team: Option<&'a str>,
    lexical_elements: Option<u64>,
    max_lexical_elements: u64,
    checks: Vec<CheckLine>,
    errors: Vec<String>,
    warnings: Vec<String>,
    compiler_heading: &'a str,
    compiler_output: String,
    trial: Option<&'a TrialView>,
}

/// What the report says next to the verdict.
pub struct ReportNotes<'a> {
    pub accepted: &'a str,
    pub rejected: &'a str,
}

impl Default for ReportNotes<'_> {
    fn default() -> Self {
        ReportNotes {
            accepted: "Your program passed every check.",
            rejected: "Your program was not accepted. Fix the errors below and send it again.",
        }
    }
}

fn diag_line(d: &Diagnostic) -> String {
    format!(
        "check {} ({}): {}",
        d.check as usize + 1,
        d.check.title(),
        d
    )
}

/// Renders the compile report (the text the participant will get by mail).
pub fn compile_report(
    report: &Report,
    accepted: bool,
    max_lexical_elements: u64,
    trial: Option<&TrialView>,
    notes: &ReportNotes<'_>,
) -> String {
    let view = CompileReportView {
        accepted,
        accepted_note: notes.accepted,
        rejected_note: notes.rejected,
        team: report.header.as_ref().map(|h| h.team.as_str()),
        lexical_elements: report.lexical_elements,
        max_lexical_elements,
        checks: report
            .checks
            .iter()
            .map(|c| CheckLine {
                number: c.check as usize + 1,
                title: c.check.title(),
                verdict: verdict_words(c.check, &c.verdict, report.failed_builder),
            })
            .collect(),
        errors: report.errors().map(diag_line).collect(),
        warnings: report.warnings().map(diag_line).collect(),
        // Indented, so that a long message continues deeper when wrapped.
        compiler_heading: compiler_heading(&report.compiler_output),
        compiler_output: report
            .compiler_output
            .trim_end()
            .lines()
            .map(|l| {
                if is_tool_heading(l) {
                    l.to_string()
                } else {
                    format!("  {l}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        trial,
    };
    crate::mail::texts::render("check_report", &view).expect("compile report template renders")
}
