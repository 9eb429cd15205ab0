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

use crate::discipline::family::Family;
use rusqlite::Connection;
use serde_json::json;

use super::context::{date, Budget, Credentials, Ctx, Effect};
use crate::config::Config;
use crate::engine::prepare::sha256_hex;
use crate::mail::message::strategy_source;
use crate::mail::message::Inbound;
use crate::mail::secrets::mask_text;
use crate::mail::texts::render;
use crate::referee::{GameRecord, GameSeeds, Referee, RefereeConfig};
use crate::report::{compile_report, ReportNotes, TrialView};
use crate::store::mail as db;
use crate::store::{NewVersion, Store};
use crate::toolchain::compile::{compile, example_strategy, CompileConfig, Outcome};
use crate::toolchain::source::parse_header;

pub use super::prepared::{CompileCommandError, Prepared};

/// The team name and authentification string a compile request gives,
/// read as [`prepare`] reads them (the source's header, or a bot's
/// `<<FROM>>` line), or `None`. The compile queue authenticates with it
/// before it queues (issue 35).
pub fn claimed_credentials(config: &Config, mail: &Inbound) -> Option<Credentials> {
    if let Family::Bots(_) = config.contest.discipline.family() {
        let source = super::compile_bot::bot_source(mail).ok()?;
        let (team, auth) = super::compile_bot::claimed(mail, &source)?;
        return Some(Credentials { team, auth });
    }
    let header = parse_header(&strategy_source(mail).ok()?).ok()?;
    Some(Credentials {
        team: header.team,
        auth: header.auth,
    })
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
    if let Family::Bots(_) = ctx.config.contest.discipline.family() {
        return super::compile_bot::prepare(store, ctx);
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
    let Some(reg) = super::context::authenticate(store.conn(), &header.team, &header.auth)? else {
        let why =
            super::context::auth_refusal(store.conn(), ctx.config, &header.team, &header.auth)?;
        return refuse(why.what, Some(why.hint), "authentication failed");
    };
    // Authenticated: from here on the string is masked, so it reaches
    // neither the compile jail nor anything stored or mailed (the header
    // is a comment: the program is the same).
    let source = mask_text(&source, &header.auth);
    if let Some((reason, outcome)) =
        super::context::past_hourly_limits(store.conn(), ctx, reg.team)?
    {
        return refuse(reason, None, outcome);
    }
    let cfg = CompileConfig {
        memory_limit: referee.limits.memory_bytes,
        ..CompileConfig::default()
    };
    // From here on every request is answered and counted, whatever happens.
    let outcome = match compile(source.as_bytes(), &cfg) {
        Ok(o) => o,
        Err(e) => {
            return Ok(Prepared::Failed {
                team: reg.team,
                team_name: reg.team_name,
                problem: e.to_string(),
            })
        }
    };
    let trial = match &outcome {
        Outcome::Accepted { binary, .. } => {
            let seed = u64::from_str_radix(&sha256_hex(source.as_bytes())[..15], 16).unwrap_or(1);
            Some(trial_game(binary, referee, seed))
        }
        Outcome::Rejected { .. } => None,
    };
    let view = match &trial {
        Some(Ok(g)) => Some(TrialView::new(g, referee.params.l)),
        _ => None,
    };
    let mut report_text = compile_report(
        outcome.report(),
        outcome.accepted(),
        cfg.max_lexical_elements,
        view.as_ref(),
        &ReportNotes::default(),
    );
    if let Some(Err(problem)) = &trial {
        report_text.push_str(&format!(
            "\nThe trial game against the example strategy could not be played\n\
             because of a problem on the server ({problem}).\n\
             Your program passed every check and is stored; the trial game is\n\
             only for your information.\n"
        ));
    }
    Ok(Prepared::Compiled {
        auth: header.auth,
        team: reg.team,
        team_name: reg.team_name,
        team_address: reg.mail_address,
        source: source.into_bytes(),
        outcome: Box::new(outcome),
        report_text,
    })
}

/// The trial game against the announcement's example; `Err` is a problem of
/// the server (the strategy's own failures are in the record).
fn trial_game(binary: &[u8], referee: &RefereeConfig, seed: u64) -> Result<GameRecord, String> {
    let strategy = crate::wasm::load(binary).map_err(|e| e.to_string())?;
    let example: crate::wasm::Loaded = Ok(example_strategy().map_err(|e| e.to_string())?);
    Referee::new(*referee)
        .play_loaded([&strategy, &example], GameSeeds::public(seed))
        .map_err(|e| e.to_string())
}

/// Stores the outcome and returns the replies.
pub fn commit(
    conn: &Connection,
    ctx: &Ctx<'_>,
    prepared: Prepared,
) -> Result<Effect, CompileCommandError> {
    match prepared {
        Prepared::Bot(b) => super::compile_bot::commit(conn, ctx, *b),
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
                budget: Budget::Strangers,
                state: "done",
                outcome,
                replies: vec![ctx.reply(
                    "compile_refused",
                    "KNOBELN compilation: not compiled".into(),
                    body,
                )],
            })
        }
        Prepared::Failed {
            team,
            team_name,
            problem,
        } => {
            db::insert_compile_request(conn, team, None, ctx.now)?;
            let body = render(
                "compile_refused",
                &json!({
                    "reason": "The compilation service could not process your program \
                               because of a problem on the server, not because of \
                               anything in your program.",
                    "hint": "Please send it again later. If this happens again, write \
                             to the organizer.",
                }),
            )?;
            Ok(Effect {
                budget: Budget::Team(team),
                state: "done",
                outcome: format!("team {team_name}: compile service failed: {problem}"),
                replies: vec![ctx.reply(
                    "compile_refused",
                    "KNOBELN compilation: not compiled (server problem)".into(),
                    body,
                )],
            })
        }
        Prepared::Compiled {
            auth,
            team,
            team_name,
            team_address,
            source,
            outcome,
            report_text,
        } => {
            // The stored source and report keep the header's shape, with the
            // authentification string masked; so does the mailed report.
            let source = mask_text(&String::from_utf8_lossy(&source), &auth).into_bytes();
            let report_text = mask_text(&report_text, &auth);
            let report = outcome.report();
            let report_json = mask_text(
                &serde_json::to_string(report).expect("report serializes"),
                &auth,
            );
            let description = report
                .description
                .as_ref()
                .map(|d| mask_text(&d.text, &auth));
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
                    description: description.as_deref(),
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
                    "program": "strategy",
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
                budget: Budget::Team(team),
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
