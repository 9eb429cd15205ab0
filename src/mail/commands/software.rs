//! `SEND knobelnsoftware` (or `send kit`, `kit`): the participant kit, as
//! attachments (with `RULES.txt` rendered from this contest's
//! configuration); in a contest of a bot discipline that discipline's kit
//! (rules and protocol, `referee.py`, demo bots, islands).
//!
//! A request carrying its team's `<<FROM>> team_name auth_string` line
//! draws on that team's own budget (its kits and replies, which no
//! stranger can spend); any other, its From line a claim, on the
//! strangers' or the registered mailboxes' (`mail::process::reply`).
//! What it deliberately does not do: refuse a wrong string (the kit is
//! public; such a request is a stranger's).

use crate::discipline::family::Family;
use serde_json::json;

use rusqlite::Connection;

use super::context::Budget;
use super::context::{authenticate, credentials, Ctx, Effect};
use super::error::CommandError;
use crate::mail::texts::render;
use crate::outbox::outgoing::OutAttachment;

/// The kind of the kit's mail (the outbox's `kind`), by which the kits'
/// own caps count it.
pub const KIT_KIND: &str = "software";

/// The kind of the short answer sent in a kit's place to a participant
/// whose kit a cap held back (a reply, not a kit: the kits' caps never
/// count it).
pub const KIT_REFUSED_KIND: &str = "kit_refused";

/// A kit request's outcome once its kit is queued; processing puts
/// [`NO_KIT`] and the reason in its place when a cap holds the kit back.
pub const KIT_SENT: &str = "participant kit sent";

/// A kit request's outcome when a cap held its kit back (before the
/// reason).
pub const NO_KIT: &str = "no participant kit";

pub fn apply(conn: &Connection, ctx: &Ctx<'_>) -> Result<Effect, CommandError> {
    let d = ctx.config.contest.discipline;
    let kit = match d.family() {
        Family::Bots(_) => crate::kit::bot_files_for(ctx.config),
        Family::Strategies(_) => crate::kit::files_for(ctx.config),
    };
    let files: Vec<OutAttachment> = kit
        .into_iter()
        .map(|f| OutAttachment {
            filename: f.name,
            content_type: f.content_type,
            bytes: f.bytes,
        })
        .collect();
    let body = render(
        "software",
        &json!({
            "files": files.iter().map(|f| json!({"name": f.filename})).collect::<Vec<_>>(),
            "bots": d.family().bots().is_some(),
            "discipline": d.title(),
            "contest_name": ctx.config.contest.name,
        }),
    )?;
    // The 1994 kit was "knobelnsoftware"; a bot contest's reply begins
    // with the contest's name (`contest_subject`).
    let subject = match d.family() {
        Family::Strategies(_) => "KNOBELN software: the participant kit",
        Family::Bots(_) => "KNOBELN: the participant kit",
    }
    .to_string();
    let mut reply = ctx.reply(KIT_KIND, subject, body);
    reply.attachments = files;
    let body = ctx.mail.body.text().unwrap_or("");
    let team = match credentials(body) {
        Some(cred) => authenticate(conn, &cred.team, &cred.auth)?,
        None => None,
    };
    let (budget, outcome) = match team {
        Some(reg) => (
            Budget::Team(reg.team),
            format!("{KIT_SENT} (team {})", reg.team_name),
        ),
        None => (Budget::Strangers, KIT_SENT.to_string()),
    };
    Ok(Effect {
        budget,
        state: "done",
        outcome,
        replies: vec![reply],
    })
}
