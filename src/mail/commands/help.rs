//! Anything that is none of the commands gets a short help mail that names
//! the organizer's address for questions, and is forwarded to the organizer
//! so that a question to the robot reaches a person.
//!
//! Forwarding never loops and never floods: automatic mail never gets here
//! (it is ignored before the commands), mail from the organizer's or the
//! contest's own address is never forwarded, at most
//! `limits.forwards_per_day` forwards of strangers' mails go out per day
//! (all strangers together), a registered team's mailbox whose
//! registration proved its address has [`FORWARDS_PER_MAILBOX_PER_DAY`]
//! of its own, and a forward counts
//! against its sender's daily reply cap like a reply. The forward carries the mail's text (cut at
//! [`FORWARD_TEXT_BYTES`]), never its attachments, and never an
//! authentification string (masked, as in the stored mail); the mail stays
//! in the inbox table.

use chrono::Duration;
use rusqlite::Connection;
use serde_json::json;

use super::context::Budget;
use super::context::{Ctx, Effect};
use super::error::CommandError;
use crate::mail::message::Body;
use crate::mail::secrets::mask_in_text;
use crate::mail::texts::render;
use crate::outbox::outgoing::Outgoing;
use crate::store::mail as db;
use crate::store::mail::StoredSecrets;

/// The most of a forwarded mail's text the organizer gets.
pub const FORWARD_TEXT_BYTES: usize = 16 * 1024;

/// The outbox kind of a forward.
pub const FORWARD_KIND: &str = "forward";

/// Why a mail was not forwarded (for the inbox outcome).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotForwarded {
    FromOrganizer,
    Capped(u32),
    Disabled,
}

/// Whether to forward: not the organizer's or our own mail, within the cap.
pub fn should_forward(
    conn: &Connection,
    ctx: &Ctx<'_>,
) -> Result<Option<NotForwarded>, CommandError> {
    let contest = &ctx.config.contest;
    let ours = |a: &str| {
        a.eq_ignore_ascii_case(&contest.organizer) || a.eq_ignore_ascii_case(&contest.address)
    };
    let from_us = ours(&ctx.reply_to) || ctx.mail.from.as_ref().is_some_and(|m| ours(&m.address));
    if from_us {
        return Ok(Some(NotForwarded::FromOrganizer));
    }
    let cap = ctx.config.limits.forwards_per_day;
    if cap == 0 {
        return Ok(Some(NotForwarded::Disabled));
    }
    let day_ago = ctx.now - Duration::days(1);
    // A registered team's mailbox has forwards of its own (issue 35:
    // strangers' floods used up the day's forwards for everybody): a few
    // a day, counted per mailbox. Only once its registration proved its
    // address (a confirmation's answer, or a mail with the team's
    // string): one a From line alone made is a stranger's making, and
    // bought its forger three forwards a day each beside the strangers'
    // (red team G19, as F11 for the intake's shares).
    let mailbox = crate::mail::sender::sender_key(&ctx.reply_to);
    if db::count_proven_registrations_of_mailbox(conn, &mailbox)? > 0 {
        let sent = db::replies(db::ReplyTarget::Sender(&mailbox))
            .of_kind(FORWARD_KIND)
            .since(conn, day_ago)?;
        return Ok((sent >= FORWARDS_PER_MAILBOX_PER_DAY)
            .then_some(NotForwarded::Capped(FORWARDS_PER_MAILBOX_PER_DAY)));
    }
    // Every forward of the day counts here, whoever's: a mailbox
    // registered but not proven draws on the confirmed budget, and its
    // forwards are the strangers' (a proven mailbox's few count too,
    // which only brings the day's cap nearer).
    if db::replies(db::ReplyTarget::Everyone)
        .of_kind(FORWARD_KIND)
        .since(conn, day_ago)?
        >= cap
    {
        return Ok(Some(NotForwarded::Capped(cap)));
    }
    Ok(None)
}

/// Forwards a day from one registered team's mailbox, apart from the
/// strangers' `forwards_per_day`.
pub const FORWARDS_PER_MAILBOX_PER_DAY: u32 = 3;

/// `text` cut to at most `max` bytes on a character boundary.
fn cut(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// A subject line safe to put into ours: no control characters, at most
/// 200 characters.
fn tame(subject: &str) -> String {
    subject
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect()
}

/// The forward of the mail to the organizer.
/// An authentification string in it (or a near miss after `<<FROM>>`) is
/// masked: the organizer never sees one.
fn forward(ctx: &Ctx<'_>, known: &mut StoredSecrets<'_>) -> Result<Outgoing, CommandError> {
    let mail = ctx.mail;
    let text = match &mail.body {
        Body::Text(t) => t.as_str(),
        Body::HtmlOnly => "(the mail has only an HTML part)",
        Body::Empty => "(the mail has no text)",
    };
    let (text, truncated) = cut(text, FORWARD_TEXT_BYTES);
    // Every text of the sender's that the forward shows is masked: the
    // body, the subject, the sender's name and address, the ids.
    let mut masked = |t: &str| mask_in_text(t, &mut *known);
    let text = masked(text)?;
    let subject = tame(&masked(&mail.subject)?);
    let from = match &mail.from {
        Some(m) => {
            let address = masked(&m.address)?;
            match &m.name {
                Some(n) => format!("{} <{address}>", tame(&masked(n)?)),
                None => address,
            }
        }
        None => "(none)".into(),
    };
    let message_id = match &mail.message_id {
        Some(id) => tame(&masked(id)?),
        None => "(none)".into(),
    };
    let reply_to = masked(&ctx.reply_to)?;
    let body = render(
        "forward",
        &json!({
            "contest_address": ctx.config.contest.address,
            "from": from,
            "subject": subject,
            "message_id": message_id,
            "inbox_id": ctx.inbox_id,
            "reply_to": reply_to,
            "text": text.trim_end(),
            "truncated": truncated,
            "limit": FORWARD_TEXT_BYTES,
            "keep_days": ctx.config.limits.keep_inbox_days,
        }),
    )?;
    Ok(Outgoing {
        kind: FORWARD_KIND,
        to: vec![ctx.config.contest.organizer.clone()],
        subject: super::subject::contest_subject(
            ctx.config,
            format!("KNOBELN forward from {reply_to}: {subject}"),
        ),
        body,
        in_reply_to: None,
        references: vec![],
        attachments: vec![],
    })
}

pub fn apply(conn: &Connection, ctx: &Ctx<'_>) -> Result<Effect, CommandError> {
    let not_forwarded = should_forward(conn, ctx)?;
    let mut known = StoredSecrets::new(conn);
    let d = ctx.config.contest.discipline;
    let table = ctx.config.languages().ok();
    let languages: Vec<String> = table
        .iter()
        .flat_map(|t| t.languages.iter().map(|l| l.name.clone()))
        .collect();
    // Per language: its line in the body, or the file name to attach.
    let ways: Vec<serde_json::Value> = table
        .iter()
        .flat_map(|t| t.languages.iter())
        .map(|l| {
            json!({
                "line": format!("language: {}", l.name),
                "file": l
                    .extensions
                    .first()
                    .map_or_else(|| "mybot".to_string(), |e| format!("mybot.{e}")),
                "title": l.title,
            })
        })
        .collect();
    let body = render(
        "help",
        &json!({
            "contest_name": ctx.config.contest.name,
            "bots": d.family().bots().is_some(),
            "discipline": d.title(),
            "submission": d.family().submission().map(|s| s.help),
            "languages": languages.join(", "),
            "ways": ways,
            "contest_address": ctx.config.contest.address,
            "organizer": ctx.config.contest.organizer,
            "subject": tame(&ctx.mail.subject),
            "html_only": ctx.mail.body == Body::HtmlOnly,
            "forwarded": not_forwarded.is_none(),
        }),
    )?;
    // In a bot contest the reply's subject begins with the contest's name
    // (`contest_subject`).
    let subject = "KNOBELN: how to talk to the contest server".to_string();
    let mut replies = vec![ctx.reply("help", subject, body)];
    // What was sent is said where it is queued (`process::reply`): the
    // reply gate may still hold both the answer and the forward.
    let note = match &not_forwarded {
        None => {
            replies.push(forward(ctx, &mut known)?);
            String::new()
        }
        Some(NotForwarded::FromOrganizer) => {
            "; not forwarded: from the organizer's or our own address".into()
        }
        Some(NotForwarded::Capped(cap)) => format!("; not forwarded: {cap} forwards today already"),
        Some(NotForwarded::Disabled) => "; not forwarded: forwarding is off".into(),
    };
    Ok(Effect {
        budget: Budget::Strangers,
        state: "done",
        outcome: format!(
            "help asked for (subject {:?}){note}",
            mask_in_text(&ctx.mail.subject, &mut known)?
        ),
        replies,
    })
}
