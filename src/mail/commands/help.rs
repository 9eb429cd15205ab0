//! Anything that is not one of the three commands gets a short help mail.

use serde_json::json;

use super::{Ctx, Effect};
use crate::mail::message::Body;
use crate::mail::texts::render;

pub fn apply(ctx: &Ctx<'_>) -> Result<Effect, handlebars::RenderError> {
    let body = render(
        "help",
        &json!({
            "contest_name": ctx.config.contest.name,
            "subject": ctx.mail.subject,
            "html_only": ctx.mail.body == Body::HtmlOnly,
        }),
    )?;
    Ok(Effect {
        state: "done",
        outcome: format!("help sent (subject {:?})", ctx.mail.subject),
        replies: vec![ctx.reply(
            "help",
            "KNOBELN: how to talk to the contest server".into(),
            body,
        )],
    })
}
