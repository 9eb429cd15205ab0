//! Building a bot from its source for a bot discipline: the language from
//! the file name or a `language:` value ([`crate::lang::choose`]), the
//! toolchain found on this machine, and the build in the compile jail
//! ([`crate::lang::build`]). A participant's mistake is a [`Built::Refused`]
//! with a sentence and, where the compiler ran, its report; `Err` is the
//! server's trouble.

use crate::lang::build::{build, BotProgram, Build, BuildLimits, BuildReport};
use crate::lang::{choose, LanguageTable, Toolchain, Toolchains};
use crate::sandbox::jail::JailError;

/// A source file as submitted.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The file name (its extension says the language), if any.
    pub file_name: Option<&'a str>,
    /// An explicit `language:` value (wins over the extension).
    pub declared: Option<&'a str>,
    pub bytes: &'a [u8],
}

/// The outcome of building a submitted source.
#[derive(Debug, Clone)]
pub enum Built {
    Ready {
        toolchain: Box<Toolchain>,
        program: BotProgram,
        report: BuildReport,
    },
    /// What was wrong, for the participant (the language, a missing
    /// toolchain, the compiler's verdict).
    Refused {
        why: String,
        report: Option<BuildReport>,
    },
}

/// Builds `source` with the contest's languages.
pub fn build_bot(
    table: &LanguageTable,
    toolchains: &Toolchains,
    source: Source<'_>,
    limits: &BuildLimits,
) -> Result<Built, JailError> {
    let choice = match choose(table, source.file_name, source.declared) {
        Ok(c) => c,
        Err(why) => return Ok(Built::Refused { why, report: None }),
    };
    let toolchain = match toolchains.get(&choice.language) {
        Some(Ok(t)) => t.clone(),
        Some(Err(missing)) => {
            return Ok(Built::Refused {
                why: format!(
                    "{} is not installed on the contest machine ({missing}); \
                     please use another language",
                    choice.language
                ),
                report: None,
            })
        }
        None => {
            return Ok(Built::Refused {
                why: format!("no language {}", choice.language),
                report: None,
            })
        }
    };
    Ok(
        match build(&toolchain, &choice.assumed, source.bytes, limits)? {
            Build::Built { program, report } => Built::Ready {
                toolchain: Box::new(toolchain),
                program,
                report,
            },
            Build::Rejected { report } => Built::Refused {
                why: report.problems.join("; "),
                report: Some(report),
            },
        },
    )
}
