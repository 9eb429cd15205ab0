//! `please compile`: the body (or a single `.c` attachment) is a strategy
//! whose first comment is `<<FROM>> team_name auth_string`. Outside the
//! compile service's window, with an unknown team or a wrong string (the
//! reply does not say which), or over the rate limit, it is refused.
//! Otherwise the compile service runs every check, compiles, plays a trial
//! game against the example strategy, and the report goes to the team; an
//! accepted version becomes the team's current one.
//!
//! [`prepare`] does the slow part (gcc, the trial game) outside any
//! transaction; [`commit`] stores the outcome and returns the replies inside
//! the caller's transaction.

use chrono::Duration;
use rusqlite::Connection;
use serde_json::json;

use super::{date, Ctx, Effect};
use crate::engine::prepare::sha256_hex;
use crate::mail::message::strategy_source;
use crate::mail::texts::render;
use crate::referee::{Referee, RefereeConfig};
use crate::report::{compile_report, ReportNotes, TrialView};
use crate::store::mail as db;
use crate::store::{NewVersion, Store, StoreError};
use crate::toolchain::compile::{
    compile, example_binary, install_binary, CompileConfig, CompileError, Outcome,
};
use crate::toolchain::source::parse_header;
use crate::tournament::TeamId;

#[derive(Debug, thiserror::Error)]
pub enum CompileCommandError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error("trial game: {0}")]
    Trial(String),
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
    /// Compiled (accepted or rejected), with the team it belongs to.
    Compiled {
        team: TeamId,
        team_name: String,
        team_address: String,
        source: Vec<u8>,
        outcome: Box<Outcome>,
        report_text: String,
    },
}

/// Checks the window, the source, the header, authentication and the rate
/// limit; then compiles and plays the trial game.
pub fn prepare(
    store: &Store,
    ctx: &Ctx<'_>,
    referee: &RefereeConfig,
) -> Result<Prepared, CompileCommandError> {
    let t = &ctx.config.timeline;
    let refuse = |reason: String, hint: Option<String>, outcome: &str| {
        Ok(Prepared::Refused {
            reason,
            hint,
            outcome: outcome.to_string(),
        })
    };
    if ctx.now < t.compile_start {
        return refuse(
            format!(
                "The compilation service is not open yet: it opens on {}.",
                date(t.compile_start)
            ),
            None,
            "compile service not open yet",
        );
    }
    if ctx.now >= t.compile_end() {
        return refuse(
            format!(
                "The compilation service is closed: it ended on {}, two hours before the contest \
                 started, and it is disabled during the tournament. The latest version you sent \
                 before that is the one that plays.",
                date(t.compile_end())
            ),
            None,
            "compile service closed",
        );
    }
    if db::contest(store.conn())?.is_some() {
        return refuse(
            "The compilation service is closed: the contest has started, and the \
             service is disabled during the tournament. The latest version you sent \
             before the start is the one that plays."
                .into(),
            None,
            "compile service closed (contest running)",
        );
    }
    let source = match strategy_source(ctx.mail) {
        Ok(s) => s,
        Err(problem) => return refuse(
            format!("{problem}."),
            Some(
                "Put the C source into the body of a plain-text mail, or attach it as one .c file."
                    .into(),
            ),
            "no usable source",
        ),
    };
    let header = match parse_header(&source) {
        Ok(h) => h,
        Err(d) => {
            return refuse(
                format!("The source does not start with the header: {d}"),
                Some("The first comment must be /* <<FROM>> team_name authentification_string */, exactly as in the registration acknowledgement.".into()),
                "no <<FROM>> header",
            )
        }
    };
    let Some(reg) = super::authenticate(store.conn(), &header.team, &header.auth)? else {
        return refuse(
            super::AUTH_REFUSED.into(),
            Some(super::AUTH_REFUSED_HINT.into()),
            "authentication failed",
        );
    };
    let per_hour = ctx.config.limits.compiles_per_team_per_hour;
    if per_hour > 0
        && db::compile_requests_since(store.conn(), reg.team, ctx.now - Duration::hours(1))?
            >= per_hour
    {
        return refuse(
            format!("Your team has sent {per_hour} compile requests within the last hour, the most this server takes. Please try again later."),
            None,
            "compile rate limit",
        );
    }
    let cfg = CompileConfig {
        memory_limit: referee.limits.memory_bytes,
        ..CompileConfig::default()
    };
    let outcome = compile(source.as_bytes(), &cfg)?;
    let trial = match &outcome {
        Outcome::Accepted { binary, .. } => {
            let dir = tempfile::tempdir()?;
            let path = dir.path().join("strategy");
            install_binary(binary, &path)?;
            let example = example_binary()?;
            let seed = u64::from_str_radix(&sha256_hex(source.as_bytes())[..15], 16).unwrap_or(1);
            Some(
                Referee::new(*referee)
                    .play([&path, &example], seed)
                    .map_err(|e| CompileCommandError::Trial(e.to_string()))?,
            )
        }
        Outcome::Rejected { .. } => None,
    };
    let view = trial.as_ref().map(|g| TrialView::new(g, referee.params.l));
    let report_text = compile_report(
        outcome.report(),
        outcome.accepted(),
        cfg.max_lexical_elements,
        view.as_ref(),
        &ReportNotes::default(),
    );
    Ok(Prepared::Compiled {
        team: reg.team,
        team_name: reg.team_name,
        team_address: reg.mail_address,
        source: source.into_bytes(),
        outcome: Box::new(outcome),
        report_text,
    })
}

/// Stores the outcome and returns the replies.
pub fn commit(
    conn: &Connection,
    ctx: &Ctx<'_>,
    prepared: Prepared,
) -> Result<Effect, CompileCommandError> {
    match prepared {
        Prepared::Refused {
            reason,
            hint,
            outcome,
        } => {
            let body = render(
                "compile_refused",
                &json!({ "reason": reason, "hint": hint }),
            )?;
            Ok(Effect {
                state: "done",
                outcome,
                replies: vec![ctx.reply(
                    "compile_refused",
                    "KNOBELN compilation: not compiled".into(),
                    body,
                )],
            })
        }
        Prepared::Compiled {
            team,
            team_name,
            team_address,
            source,
            outcome,
            report_text,
        } => {
            let report = outcome.report();
            let report_json = serde_json::to_string(report).expect("report serializes");
            let sha = sha256_hex(&source);
            let binary = match outcome.as_ref() {
                Outcome::Accepted { binary, .. } => Some(binary.as_slice()),
                Outcome::Rejected { .. } => None,
            };
            let version = crate::store::insert_version_conn(
                conn,
                &NewVersion {
                    team,
                    source: &source,
                    source_sha256: &sha,
                    binary,
                    lexical_elements: report.lexical_elements,
                    description: report.description.as_ref().map(|d| d.text.as_str()),
                    report_json: &report_json,
                },
                ctx.now,
            )?;
            db::insert_compile_request(conn, team, Some(version.0), ctx.now)?;
            let has_current = db::current_version(conn, team)?.is_some();
            let body = render(
                "compile_report",
                &json!({
                    "team": team_name,
                    "received": date(ctx.now),
                    "accepted": outcome.accepted(),
                    "has_current": has_current,
                    "report": report_text,
                }),
            )?;
            let mut to = vec![team_address.clone()];
            if !ctx.reply_to.eq_ignore_ascii_case(&team_address) {
                to.push(ctx.reply_to.clone());
            }
            let verdict = if outcome.accepted() {
                "accepted"
            } else {
                "REJECTED"
            };
            Ok(Effect {
                state: "done",
                outcome: format!("team {team_name}: version {} {verdict}", version.0),
                replies: vec![ctx.reply_to_addresses(
                    "compile_report",
                    to,
                    format!("KNOBELN compilation report: {verdict} (team {team_name})"),
                    body,
                )],
            })
        }
    }
}
