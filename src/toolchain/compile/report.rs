//! The compile service's report: the verdict of each check, the
//! diagnostics in check order (capped per check), gcc's messages turned
//! into diagnostics with the submitted source's line numbers, and the
//! first line where a name is used (where check 6 points).
//!
//! Pure: what [`super::compile`] found, in the form reports and mails read.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use crate::toolchain::diagnostic::{Check, Diagnostic, Severity};
use crate::toolchain::gcc::{GccRun, SOURCE_NAME};
use crate::toolchain::lex;
use crate::toolchain::source::{Description, Header};

/// At most this many diagnostics of one check are listed in a report; the
/// rest are counted in one line.
pub const MAX_DIAGNOSTICS_PER_CHECK: usize = 30;

/// The verdict of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "why")]
pub enum Verdict {
    Passed,
    Failed,
    /// Not run, because an earlier check failed (the reason says which).
    Skipped(String),
    /// Does not apply to this profile.
    NotApplicable,
}

/// One line of the report: a check and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckStatus {
    pub check: Check,
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// Everything the compile service found out about a source.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub checks: Vec<CheckStatus>,
    pub lexical_elements: Option<u64>,
    pub header: Option<Header>,
    #[serde(skip)]
    pub description: Option<Description>,
    /// Errors and warnings, in check order.
    pub diagnostics: Vec<Diagnostic>,
    /// gcc's messages as it printed them (capped).
    pub compiler_output: String,
    /// The memory the module needs (static data and stack, in its linear
    /// memory): the memory it declares when it was linked, or what wasm-ld
    /// said it needs beyond the limit.
    pub image_bytes: Option<u64>,
    /// Check 5 failed after gcc had compiled the program: the tool that
    /// refused it, so that the report says so instead of blaming gcc.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_builder: Option<Builder>,
}

/// A tool of check 5 after gcc: what builds the program that plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Builder {
    /// clang, compiling the checked text for `wasm32`.
    Clang,
    /// wasm-ld, linking clang's object with the contest runtime.
    WasmLd,
}

impl Builder {
    /// The tool's name, as its messages are headed (`clang said:`).
    pub fn name(self) -> &'static str {
        match self {
            Builder::Clang => "clang",
            Builder::WasmLd => "wasm-ld",
        }
    }

    /// The tool of a stored report's `failed_builder`.
    pub fn from_name(name: &str) -> Option<Builder> {
        [Builder::Clang, Builder::WasmLd]
            .into_iter()
            .find(|b| b.name() == name)
    }

    /// Check 5's verdict in words when this tool failed after gcc passed.
    pub fn verdict_words(self) -> String {
        match self {
            Builder::Clang => "passed by gcc; FAILED when clang built the program that plays \
                 (WebAssembly for the contest's machine): see clang's words below"
                .into(),
            Builder::WasmLd => "passed by gcc and clang; FAILED when wasm-ld linked the program \
                 that plays with the contest runtime: see wasm-ld's words below"
                .into(),
        }
    }
}

/// A check's verdict in a report's words; `builder`: the tool that failed
/// check 5 after gcc passed ([`Report::failed_builder`]).
pub fn verdict_words(check: Check, verdict: &Verdict, builder: Option<Builder>) -> String {
    match verdict {
        Verdict::Passed => "passed".into(),
        Verdict::Failed => match builder {
            Some(b) if check == Check::Compiler => b.verdict_words(),
            _ => "FAILED".into(),
        },
        Verdict::Skipped(why) => format!("not checked ({why})"),
        Verdict::NotApplicable => "not required here".into(),
    }
}

impl Report {
    /// A report of nothing yet.
    pub(super) fn empty() -> Report {
        Report {
            checks: Vec::new(),
            lexical_elements: None,
            header: None,
            description: None,
            diagnostics: Vec::new(),
            compiler_output: String::new(),
            image_bytes: None,
            failed_builder: None,
        }
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
    }

    pub fn verdict(&self, check: Check) -> Option<&Verdict> {
        self.checks
            .iter()
            .find(|c| c.check == check)
            .map(|c| &c.verdict)
    }
}

/// The result of compiling a submission.
#[derive(Debug, Clone)]
pub enum Outcome {
    Accepted { binary: Vec<u8>, report: Report },
    Rejected { report: Report },
}

impl Outcome {
    pub fn report(&self) -> &Report {
        match self {
            Outcome::Accepted { report, .. } | Outcome::Rejected { report } => report,
        }
    }

    pub fn accepted(&self) -> bool {
        matches!(self, Outcome::Accepted { .. })
    }
}

/// The checks' verdicts as a compile goes on: each set once (or
/// changed by a later step), the checks never reached skipped at the end.
#[derive(Debug, Default)]
pub(super) struct Verdicts(Vec<(Check, Verdict)>);

impl Verdicts {
    pub(super) fn set(&mut self, check: Check, verdict: Verdict) {
        match self.0.iter_mut().find(|(c, _)| *c == check) {
            Some(e) => e.1 = verdict,
            None => self.0.push((check, verdict)),
        }
    }

    /// Every check without a verdict yet is skipped, for `why`.
    pub(super) fn skip_rest(&mut self, why: &str) {
        for c in Check::ALL {
            if !self.0.iter().any(|(d, _)| *d == c) {
                self.0.push((c, Verdict::Skipped(why.into())));
            }
        }
    }
}

/// The report with its verdicts in check order and its diagnostics sorted
/// and capped, the description's noise dropped whichever check ended it;
/// accepted with `binary` only if no check found an error.
pub(super) fn finish(mut r: Report, mut verdicts: Verdicts, binary: Option<Vec<u8>>) -> Outcome {
    verdicts.skip_rest("an earlier check failed");
    drop_description_noise(&mut r);
    verdicts.0.sort_by_key(|(c, _)| *c);
    r.checks = verdicts
        .0
        .into_iter()
        .map(|(check, verdict)| CheckStatus { check, verdict })
        .collect();
    r.diagnostics
        .sort_by_key(|d| (d.check, d.severity == Severity::Warning));
    cap_diagnostics(&mut r.diagnostics);
    let rejected = r.errors().next().is_some();
    match binary {
        Some(binary) if !rejected => Outcome::Accepted { binary, report: r },
        _ => Outcome::Rejected { report: r },
    }
}

/// gcc warns about apostrophes ("don't") in the skipped `#if 0` description
/// block; that is prose, not code, so those warnings are not passed on.
fn drop_description_noise(r: &mut Report) {
    let Some(d) = &r.description else { return };
    let first = d.first_line;
    let last = first + d.text.lines().count() as u32;
    let noisy = |line: u32, msg: &str| {
        (first..=last).contains(&line) && msg.starts_with("missing terminating")
    };
    r.diagnostics.retain(|x| {
        !(x.check == Check::Compiler
            && x.severity == Severity::Warning
            && x.line.is_some_and(|l| noisy(l, &x.message)))
    });
    let kept: Vec<&str> = r
        .compiler_output
        .lines()
        .filter(|l| {
            let mut parts = l.splitn(4, ':');
            let (Some(file), Some(line), Some(_col), Some(rest)) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return true;
            };
            let msg = rest.trim_start().strip_prefix("warning: ").unwrap_or("");
            !(file == SOURCE_NAME && line.parse::<u32>().is_ok_and(|n| noisy(n, msg)))
        })
        .collect();
    // Where all of gcc's lines were such noise, a tool's heading after
    // them comes first (`compiler_heading` reads the first line).
    r.compiler_output = kept.join("\n").trim_start_matches('\n').to_string();
}

/// Keeps at most [`MAX_DIAGNOSTICS_PER_CHECK`] diagnostics of each check and
/// severity, and says how many more there were (sorted input).
fn cap_diagnostics(diagnostics: &mut Vec<Diagnostic>) {
    let mut out: Vec<Diagnostic> = Vec::with_capacity(diagnostics.len().min(256));
    let mut i = 0;
    while i < diagnostics.len() {
        let (check, severity) = (diagnostics[i].check, diagnostics[i].severity);
        let n = diagnostics[i..]
            .iter()
            .take_while(|d| d.check == check && d.severity == severity)
            .count();
        out.extend(
            diagnostics[i..i + n]
                .iter()
                .take(MAX_DIAGNOSTICS_PER_CHECK)
                .cloned(),
        );
        if n > MAX_DIAGNOSTICS_PER_CHECK {
            let more = n - MAX_DIAGNOSTICS_PER_CHECK;
            let what = if severity == Severity::Error {
                "problems"
            } else {
                "warnings"
            };
            out.push(Diagnostic {
                check,
                severity,
                line: None,
                message: format!("... and {more} more {what} of this check"),
            });
        }
        i += n;
    }
    *diagnostics = out;
}

/// Turns the messages of `tool` (gcc, clang or wasm-ld) into diagnostics
/// (with the submitted source's line numbers) and keeps its raw output
/// for the report, under a line `TOOL said:` unless the tool is gcc.
pub(super) fn add_gcc_messages(r: &mut Report, run: &GccRun, check: Check, tool: &str) {
    quote_messages(r, &run.messages, tool);
    let mut errors = 0;
    for line in run.messages.lines() {
        if let Some((n, severity, msg)) = message_line(line) {
            if severity == Severity::Warning {
                r.diagnostics.push(Diagnostic::warning(check, Some(n), msg));
            } else {
                errors += 1;
                r.diagnostics.push(Diagnostic::error(check, Some(n), msg));
            }
        } else if line.contains("multiple definition of") || line.contains("undefined reference to")
        {
            errors += 1;
            let msg = line.rsplit(": ").next().unwrap_or(line).to_string();
            r.diagnostics.push(Diagnostic::error(check, None, msg));
        }
    }
    if let Some(limit) = &run.limit_hit {
        r.diagnostics
            .push(Diagnostic::error(check, None, limit.sentence.clone()));
    } else if !run.ok && errors == 0 {
        r.diagnostics.push(Diagnostic::error(
            check,
            None,
            format!("{tool} failed; its messages are quoted below"),
        ));
    }
}

/// [`add_gcc_messages`] for a run whose verdict is not the compile's (the
/// words of [`super::wasm::Toolchain::warnings`]): its messages quoted,
/// and only its warning lines made diagnostics, each a warning. No line
/// of it can reject the program.
pub(super) fn add_tool_warnings(r: &mut Report, messages: &str, check: Check, tool: &str) {
    quote_messages(r, messages, tool);
    for line in messages.lines() {
        if let Some((n, Severity::Warning, msg)) = message_line(line) {
            r.diagnostics.push(Diagnostic::warning(check, Some(n), msg));
        }
    }
}

/// A tool's messages into the report's compiler output, under a line
/// `TOOL said:` unless the tool is gcc.
fn quote_messages(r: &mut Report, messages: &str, tool: &str) {
    if !messages.trim().is_empty() {
        if !r.compiler_output.trim().is_empty() {
            r.compiler_output.push('\n');
        }
        if tool != "gcc" {
            r.compiler_output.push_str(&format!("{tool} said:\n"));
        }
        r.compiler_output.push_str(messages);
    }
}

/// A line where a compiler begins a message on the program's file: its
/// line in the submitted source, an error or a warning, and its words.
fn message_line(line: &str) -> Option<(u32, Severity, String)> {
    static LINE: OnceLock<Regex> = OnceLock::new();
    let re = LINE.get_or_init(|| {
        Regex::new(r"^strategy\.[ci]:(\d+):(?:\d+:)? (fatal error|error|warning): (.*)$")
            .expect("regex")
    });
    let c = re.captures(line)?;
    let severity = if &c[2] == "warning" {
        Severity::Warning
    } else {
        Severity::Error
    };
    Some((c[1].parse().unwrap_or(0), severity, c[3].to_string()))
}

/// The heading of a report's compiler output: `gcc said:`, unless the
/// output starts with another tool's own heading (`clang said:`).
pub fn compiler_heading(output: &str) -> &'static str {
    if output.lines().next().is_some_and(is_tool_heading) {
        ""
    } else {
        "gcc said:"
    }
}

/// Whether a line of the compiler output is a tool's heading.
pub fn is_tool_heading(line: &str) -> bool {
    matches!(line, "clang said:" | "wasm-ld said:")
}

/// The first line where each identifier appears in the code (not in a
/// comment, nor in the `#if 0` description): one pass over the source,
/// made at the first question. Only a refusal asks (a diagnostic's line),
/// so an accepted compile never lexes the source for it.
pub(super) struct FirstUses<'a> {
    text: &'a str,
    description: Option<&'a Description>,
    lines: std::cell::OnceCell<HashMap<&'a str, u32>>,
}

impl<'a> FirstUses<'a> {
    pub(super) fn new(text: &'a str, description: Option<&'a Description>) -> FirstUses<'a> {
        FirstUses {
            text,
            description,
            lines: std::cell::OnceCell::new(),
        }
    }

    fn lines(&self) -> &HashMap<&'a str, u32> {
        self.lines.get_or_init(|| {
            let skipped = |line: u32| {
                self.description.is_some_and(|d| {
                    let first = d.first_line.saturating_sub(1);
                    let last = d.first_line + d.text.lines().count() as u32;
                    (first..=last).contains(&line)
                })
            };
            let mut lines = HashMap::new();
            for t in lex::tokenize(self.text) {
                if matches!(t.kind, lex::TokenKind::Identifier) && !skipped(t.line) {
                    lines.entry(t.text).or_insert(t.line);
                }
            }
            lines
        })
    }

    pub(super) fn line(&self, name: &str) -> Option<u32> {
        self.lines().get(name).copied()
    }

    /// Whether the source has been lexed for a question (tests).
    #[cfg(test)]
    pub(super) fn lexed(&self) -> bool {
        self.lines.get().is_some()
    }
}
