//! What the slow half of `please compile` hands to its committing half:
//! [`Prepared`] for a KNOBELN strategy or a bot, and the faults of either
//! half. Only data; preparing is [`super::compile`]'s and
//! [`super::compile_bot`]'s.

use crate::lang::build::BotProgram;
use crate::store::StoreError;
use crate::toolchain::compile::{CompileError, Outcome};
use crate::tournament::TeamId;

#[derive(Debug, thiserror::Error)]
pub enum CompileCommandError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error(transparent)]
    Render(#[from] handlebars::RenderError),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// The slow part's result.
pub enum Prepared {
    /// Refused before compiling: the reason (and a hint).
    Refused {
        reason: String,
        hint: Option<String>,
        outcome: String,
    },
    /// The compile service itself failed (an infrastructure fault, not the
    /// participant's): answered all the same, and counted against the
    /// hourly limit like any compile request.
    Failed {
        team: TeamId,
        team_name: String,
        problem: String,
    },
    /// Compiled (accepted or rejected), with the team it belongs to.
    Compiled {
        /// The team's authentification string (from the verified header):
        /// masked in everything stored and mailed.
        auth: String,
        team: TeamId,
        team_name: String,
        team_address: String,
        source: Vec<u8>,
        outcome: Box<Outcome>,
        report_text: String,
    },
    /// A bot of a bot discipline, built (accepted or rejected).
    Bot(Box<PreparedBot>),
}

/// A bot built (or not) for a team.
pub struct PreparedBot {
    pub team: TeamId,
    pub team_name: String,
    pub team_address: String,
    pub source: Vec<u8>,
    pub language: String,
    /// The built program, if the build and the trial passed.
    pub program: Option<BotProgram>,
    pub report_text: String,
    pub report_json: String,
}
