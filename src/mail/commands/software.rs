//! `SEND knobelnsoftware` (or `send kit`, `kit`): the participant kit, as
//! attachments (with `RULES.txt` rendered from this contest's
//! configuration); in a contest of a bot discipline that discipline's kit
//! (rules and protocol, `referee.py`, demo bots, islands).

use crate::discipline::family::Family;
use serde_json::json;

use super::context::Budget;
use super::context::{Ctx, Effect};
use crate::mail::texts::render;
use crate::outbox::outgoing::OutAttachment;

pub fn apply(ctx: &Ctx<'_>) -> Result<Effect, handlebars::RenderError> {
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
    let mut reply = ctx.reply("software", subject, body);
    reply.attachments = files;
    Ok(Effect {
        budget: Budget::Strangers,
        state: "done",
        outcome: "participant kit sent".into(),
        replies: vec![reply],
    })
}
