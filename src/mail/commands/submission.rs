//! A discipline's own submission beside the bot (its seam's
//! [`Submission`]: the flooding island's `island`, "Jeder
//! Wettbewerbsteilnehmer darf zusätzlich eine Insel erstellen und
//! einreichen"). The mail's subject is the submission's word; it holds the
//! line `<<FROM>> team_name authentification_string` and the submission,
//! in the body or in an attached file, found and checked by the seam. A
//! team's latest accepted one replaces its earlier one. Open while the
//! compile service is, until the contest starts.
//!
//! What it does not do: know any discipline's format (the seam does), or
//! take the submissions into a contest (`crate::contest::bots` does, at its
//! start).

use rusqlite::{params, Connection};
use serde_json::json;

use super::context::Budget;
use super::context::{credentials, date, Ctx, Effect};
use crate::discipline::registry;
use crate::discipline::seam::Submission;
use crate::discipline::Discipline;
use crate::mail::message::Body;
use crate::mail::texts::render;

/// The most a submission's text may hold (its seam's `check` may take
/// less: an island at most `MAX_ISLAND_TEXT`), whatever a registered
/// discipline's check accepts: what a team stores beside its bot.
pub const MAX_SUBMISSION_BYTES: usize = 64 * 1024;

/// The discipline whose submission a subject names, if one does
/// (compared as [`super::normalize_subject`] leaves it).
pub fn named_by(subject: &str) -> Option<Discipline> {
    registry::all()
        .into_iter()
        .find(|s| s.submission().is_some_and(|sub| sub.word == subject))
        .map(|s| s.discipline())
}

/// The submission's text in the mail: in the first attachment that holds
/// one, else in the body.
fn submitted_text(ctx: &Ctx<'_>, sub: &Submission) -> Option<String> {
    for a in &ctx.mail.attachments {
        if let Some(t) = std::str::from_utf8(&a.bytes).ok().and_then(sub.find) {
            return Some(t);
        }
    }
    match &ctx.mail.body {
        Body::Text(t) => (sub.find)(t),
        _ => None,
    }
}

/// Who a refusal is charged to: strangers until the mail has proven its
/// team, the team after.
fn refuse(
    ctx: &Ctx<'_>,
    sub: &Submission,
    budget: Budget,
    reason: String,
    hint: &str,
    outcome: String,
) -> Result<Effect, super::error::CommandError> {
    let body = render(
        "submission_refused",
        &json!({ "word": sub.word, "reason": reason, "hint": hint }),
    )?;
    Ok(Effect {
        budget,
        state: "done",
        outcome,
        replies: vec![ctx.reply(
            "submission_report",
            format!("{}: {} not accepted", ctx.config.contest.name, sub.what),
            body,
        )],
    })
}

pub fn apply(
    conn: &Connection,
    ctx: &Ctx<'_>,
    of: Discipline,
) -> Result<Effect, super::error::CommandError> {
    let sub = registry::of(of)
        .and_then(|s| s.submission())
        .expect("the command names a discipline with a submission");
    let what = sub.what;
    if ctx.config.contest.discipline != of {
        return refuse(
            ctx,
            &sub,
            Budget::Strangers,
            format!(
                "This contest plays {}; {} are sent in only in a contest of {}.",
                ctx.config.contest.discipline.title(),
                sub.whats,
                of.title()
            ),
            "Send your program with the subject \"please compile\".",
            format!("{what} refused: not a contest of {of}"),
        );
    }
    let t = &ctx.config.timeline;
    if !t.compile_open(ctx.now)
        || crate::store::mail::contest_started(conn, ctx.config.contest.discipline)?
    {
        return refuse(
            ctx,
            &sub,
            Budget::Strangers,
            format!(
                "{} are taken while the compilation service is open, from {} \
                 until {}, and not once the contest has started.",
                capitalized(sub.whats),
                date(t.compile_start),
                date(t.compile_end())
            ),
            "",
            format!("{what} refused: closed"),
        );
    }
    let body_text = match &ctx.mail.body {
        Body::Text(b) => b.clone(),
        _ => String::new(),
    };
    let Some(cred) = credentials(&body_text) else {
        return refuse(
            ctx,
            &sub,
            Budget::Strangers,
            "The mail does not say which team it is from: there is no line \
             \"<<FROM>> team_name authentification_string\"."
                .into(),
            sub.format,
            format!("{what} refused: no <<FROM>> line"),
        );
    };
    let Some(reg) = super::context::authenticate(conn, &cred.team, &cred.auth)? else {
        let why = super::context::auth_refusal(conn, ctx.config, &cred.team, &cred.auth)?;
        return refuse(
            ctx,
            &sub,
            Budget::Strangers,
            why.what,
            &why.hint,
            format!("{what} refused: authentication failed"),
        );
    };
    let Some(text) = submitted_text(ctx, &sub) else {
        return refuse(
            ctx,
            &sub,
            Budget::Team(reg.team),
            sub.missing.into(),
            sub.format,
            format!("{what} refused: no {what}"),
        );
    };
    if text.len() > MAX_SUBMISSION_BYTES {
        return refuse(
            ctx,
            &sub,
            Budget::Team(reg.team),
            format!(
                "The {what} is {} bytes long; at most {} kB are taken.",
                text.len(),
                MAX_SUBMISSION_BYTES / 1024
            ),
            sub.format,
            format!("{what} refused: too long"),
        );
    }
    let checked = match (sub.check)(&text) {
        Ok(c) => c,
        Err(e) => {
            return refuse(
                ctx,
                &sub,
                Budget::Team(reg.team),
                format!("{e}."),
                sub.format,
                format!("{what} refused: invalid"),
            )
        }
    };
    // One row per team: the table keeps the flooding island's name from
    // the first discipline that had a submission (schema/).
    conn.execute(
        "INSERT INTO bot_islands (team_id, island, submitted_at) VALUES (?1, ?2, ?3) \
         ON CONFLICT(team_id) DO UPDATE SET island = excluded.island, \
         submitted_at = excluded.submitted_at",
        params![reg.team.0, checked.text, ctx.now.to_rfc3339()],
    )?;
    let report = format!(
        "Your {what} has been accepted; every bot will play it (your latest\n\
         accepted {what} replaces an earlier one).\n\n{}",
        checked.report
    );
    Ok(Effect {
        budget: Budget::Team(reg.team),
        state: "done",
        outcome: format!("team {}: {what} accepted", reg.team_name),
        replies: vec![ctx.reply(
            "submission_report",
            format!(
                "{}: {what} accepted (team {})",
                ctx.config.contest.name, reg.team_name
            ),
            report,
        )],
    })
}

/// "island" → "Island".
fn capitalized(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
