//! `SEND knobelnsoftware`: the participant kit, as attachments (with
//! `RULES.txt` rendered from this contest's configuration).

use serde_json::json;

use super::{Ctx, Effect};
use crate::mail::texts::render;
use crate::outbox::outgoing::OutAttachment;

pub fn apply(ctx: &Ctx<'_>) -> Result<Effect, handlebars::RenderError> {
    let files: Vec<OutAttachment> = crate::kit::files_for(ctx.config)
        .into_iter()
        .map(|f| OutAttachment {
            filename: f.name,
            content_type: f.content_type,
            bytes: f.bytes,
        })
        .collect();
    let body = render(
        "software",
        &json!({ "files": files.iter().map(|f| json!({"name": f.filename})).collect::<Vec<_>>() }),
    )?;
    let mut reply = ctx.reply(
        "software",
        "KNOBELN software: the participant kit".into(),
        body,
    );
    reply.attachments = files;
    Ok(Effect {
        state: "done",
        outcome: "participant kit sent".into(),
        replies: vec![reply],
    })
}
