//! Diagnostics: what a compile check found wrong (or worth a warning) in a
//! submitted source. These are user errors, i.e. data that ends up in a
//! report or a mail, never a Rust `Err`.

use serde::Serialize;
use std::fmt;

/// The checks of the compile service, in the order they run. The order is the
/// order of the announcement's "Requirements for programs" as the report lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// 1. The first comment holds `<<FROM>> team_name auth_string`.
    Header,
    /// 2. A single file: no `#include` nor any other way to read another file.
    SingleFile,
    /// 3. At most 10000 lexical elements after preprocessing.
    LexicalElements,
    /// 4. A verbal description in `#if 0 … #endif` of at least 15 non-blank lines.
    Description,
    /// 5. gcc compiles it.
    Compiler,
    /// 6. Only the five library routines are called; `main` is defined.
    Library,
}

impl Check {
    pub const ALL: [Check; 6] = [
        Check::Header,
        Check::SingleFile,
        Check::LexicalElements,
        Check::Description,
        Check::Compiler,
        Check::Library,
    ];

    /// A short human title, used in reports.
    pub fn title(self) -> &'static str {
        match self {
            Check::Header => "header (<<FROM>> team_name auth_string)",
            Check::SingleFile => "single file, no #include",
            Check::LexicalElements => "at most 10000 lexical elements",
            Check::Description => "verbal description in #if 0 ... #endif",
            Check::Compiler => "compilation with gcc",
            Check::Library => "only the five library routines, main defined",
        }
    }
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The submission is rejected.
    Error,
    /// Passed on to the participant; the submission is still accepted.
    Warning,
}

/// One problem found by a check. `line` is 1-based and relative to the
/// submitted source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub check: Check,
    pub severity: Severity,
    pub line: Option<u32>,
    pub message: String,
}

impl Diagnostic {
    pub fn error(check: Check, line: Option<u32>, message: impl Into<String>) -> Self {
        Diagnostic {
            check,
            severity: Severity::Error,
            line,
            message: message.into(),
        }
    }

    pub fn warning(check: Check, line: Option<u32>, message: impl Into<String>) -> Self {
        Diagnostic {
            check,
            severity: Severity::Warning,
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}
