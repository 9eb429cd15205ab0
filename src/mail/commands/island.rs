//! `island` (flooding island contests only): a participant sends an island
//! that every bot then plays ("Jeder Wettbewerbsteilnehmer darf zusätzlich
//! eine Insel erstellen und einreichen"). The mail holds the line
//! `<<FROM>> team_name authentification_string` and the island in the
//! seed's text format (`GAMEBOARDSTART X,Y`, the rows, `GAMEBOARDEND`, an
//! optional start line `ROUND 1 X,Y`), in the body or as an attached file.
//! It is checked by [`crate::discipline::flooding::rules::Island::parse`] (at most 1000
//! fields, a valid start field); a team's latest accepted island replaces
//! its earlier one. Open while the compile service is, until the contest
//! starts.

use rusqlite::{params, Connection};
use serde_json::json;

use super::context::Budget;
use super::context::{credentials, date, Ctx, Effect};
use crate::discipline::flooding::rules::Island;
use crate::discipline::Discipline;
use crate::mail::message::Body;
use crate::mail::texts::render;

/// The island text of a mail: from its `GAMEBOARDSTART` line on, in the
/// single attachment, else in the body.
fn island_text(ctx: &Ctx<'_>) -> Option<String> {
    let from_text = |t: &str| {
        let t = t.replace("\r\n", "\n");
        let at = t.find("GAMEBOARDSTART")?;
        let rest = &t[at..];
        let end = rest
            .find("GAMEBOARDEND")
            .map(|e| {
                let after = &rest[e..];
                // Keep the optional start line after GAMEBOARDEND.
                let mut lines = after.lines();
                let first = lines.next().map_or(0, |l| l.len() + 1);
                match lines.next() {
                    Some(l) if l.trim_start().starts_with("ROUND") => e + first + l.len() + 1,
                    _ => e + first,
                }
            })
            .unwrap_or(rest.len())
            .min(rest.len());
        Some(rest[..end].to_string())
    };
    for a in &ctx.mail.attachments {
        if let Some(t) = std::str::from_utf8(&a.bytes).ok().and_then(from_text) {
            return Some(t);
        }
    }
    match &ctx.mail.body {
        Body::Text(t) => from_text(t),
        _ => None,
    }
}

fn refuse(
    ctx: &Ctx<'_>,
    reason: String,
    hint: &str,
    outcome: &str,
) -> Result<Effect, super::error::CommandError> {
    let body = render(
        "compile_refused",
        &json!({ "reason": reason, "hint": hint }),
    )
    .map(|b| b.replace("\"please compile\"", "\"island\""))?;
    Ok(Effect {
        budget: Budget::Strangers,
        state: "done",
        outcome: outcome.to_string(),
        replies: vec![ctx.reply(
            "island_report",
            format!("{}: island not accepted", ctx.config.contest.name),
            body,
        )],
    })
}

pub fn apply(conn: &Connection, ctx: &Ctx<'_>) -> Result<Effect, super::error::CommandError> {
    const FORMAT: &str = "Send the island in the text format of the rules: a line \
        GAMEBOARDSTART X,Y, then Y rows of X symbols (# dry, o flooded, . water), \
        then GAMEBOARDEND and, if you like, ROUND 1 X,Y for the start field; with \
        the line <<FROM>> team_name authentification_string in the mail.";
    if ctx.config.contest.discipline != Discipline::FLOODING {
        return refuse(
            ctx,
            format!(
                "This contest plays {}; islands are sent in only in a contest of \
                 the flooding island.",
                ctx.config.contest.discipline.title()
            ),
            "Send your program with the subject \"please compile\".",
            "island refused: not a flooding contest",
        );
    }
    let t = &ctx.config.timeline;
    if !t.compile_open(ctx.now) || crate::store::mail::bot_contest_started(conn)? {
        return refuse(
            ctx,
            format!(
                "Islands are taken while the compilation service is open, from {} \
                 until {}, and not once the contest has started.",
                date(t.compile_start),
                date(t.compile_end())
            ),
            "",
            "island refused: closed",
        );
    }
    let body_text = match &ctx.mail.body {
        Body::Text(b) => b.clone(),
        _ => String::new(),
    };
    let Some(cred) = credentials(&body_text) else {
        return refuse(
            ctx,
            "The mail does not say which team it is from: there is no line \
             \"<<FROM>> team_name authentification_string\"."
                .into(),
            FORMAT,
            "island refused: no <<FROM>> line",
        );
    };
    let Some(reg) = super::context::authenticate(conn, &cred.team, &cred.auth)? else {
        return refuse(
            ctx,
            super::context::AUTH_REFUSED.into(),
            super::context::AUTH_REFUSED_HINT,
            "island refused: authentication failed",
        );
    };
    let Some(text) = island_text(ctx) else {
        return refuse(
            ctx,
            "The mail holds no island: no line GAMEBOARDSTART.".into(),
            FORMAT,
            "island refused: no island",
        );
    };
    let island = match Island::parse(&text) {
        Ok(i) => i,
        Err(e) => {
            return refuse(
                ctx,
                format!("The island is not valid: {e}."),
                FORMAT,
                "island refused: invalid",
            )
        }
    };
    conn.execute(
        "INSERT INTO bot_islands (team_id, island, submitted_at) VALUES (?1, ?2, ?3) \
         ON CONFLICT(team_id) DO UPDATE SET island = excluded.island, \
         submitted_at = excluded.submitted_at",
        params![reg.team.0, island.to_text(), ctx.now.to_rfc3339()],
    )?;
    let report = format!(
        "Your island has been accepted; every bot will play it (your latest\n\
         accepted island replaces an earlier one).\n\n\
         Size: {} x {} = {} fields, {} of them land.\n\
         Start field: {}{}\n",
        island.width(),
        island.height(),
        island.width() as usize * island.height() as usize,
        island.n_land(),
        island.start(),
        if island.start_given() {
            " (given)"
        } else {
            " (the first dry field)"
        }
    );
    Ok(Effect {
        budget: Budget::Team(reg.team),
        state: "done",
        outcome: format!("team {}: island accepted", reg.team_name),
        replies: vec![ctx.reply(
            "island_report",
            format!(
                "{}: island accepted (team {})",
                ctx.config.contest.name, reg.team_name
            ),
            report,
        )],
    })
}
