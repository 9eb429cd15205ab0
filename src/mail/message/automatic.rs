//! Telling a machine's mail (bounces, reports, auto-replies, lists, our
//! own mail looping back): the first [`Automatic`] reason that applies,
//! from the headers, the parts and the senders' local parts.
//!
//! Not here: what is done with such a mail (`process` answers none but a
//! team's program's mail its string proves, once a day)
//! and the rest of reading a mail (`parse.rs`).

use mail_parser::{Message, MimeHeaders, PartType};

use super::headers::raw_values;
use super::model::{Automatic, Mailbox, AUTO_GENERATED};

/// Local parts (compared case-insensitively) that mark a sender as a
/// machine.
pub const DAEMON_LOCAL_PARTS: &[&str] = &[
    "mailer-daemon",
    "mailer_daemon",
    "mail-daemon",
    "postmaster",
    "mailer",
    "listserv",
    "majordomo",
];

/// Prefixes of local parts (compared case-insensitively) that mark a
/// sender as a machine: `noreply`, `no-reply+abc`, `no_reply.shop`,
/// `donotreply-x`, ...
pub const DAEMON_LOCAL_PREFIXES: &[&str] = &[
    "noreply",
    "no-reply",
    "no_reply",
    "do-not-reply",
    "do_not_reply",
    "donotreply",
];

/// Whether a local part is a machine's (see [`DAEMON_LOCAL_PARTS`],
/// [`DAEMON_LOCAL_PREFIXES`]).
pub fn is_daemon_local_part(local: &str) -> bool {
    let low = local.to_ascii_lowercase();
    DAEMON_LOCAL_PARTS.contains(&low.as_str())
        || DAEMON_LOCAL_PREFIXES.iter().any(|p| low.starts_with(p))
}

/// Whether a local part is a bounce address: `bounce`, `bounces`,
/// `bounce-…`, `bounces+…`, `…-bounces+…`, `…-bounce-…` (VERP addresses
/// such as `list-bounces+joe=x.example` included), and `owner-…` (the list
/// owner's address, majordomo style).
pub fn is_bounce_local_part(local: &str) -> bool {
    let low = local.to_ascii_lowercase();
    let base = low.split(['+', '=']).next().unwrap_or("");
    let words: Vec<&str> = base.split(['-', '.', '_']).collect();
    words.iter().any(|w| *w == "bounce" || *w == "bounces") || low.starts_with("owner-")
}

/// Whether a part (or a part nested anywhere below it, in a multipart or a
/// forwarded `message/rfc822`) is a delivery report: `multipart/report`,
/// `message/delivery-status`, `message/disposition-notification` or
/// `message/feedback-report`.
fn has_report_part(msg: &Message<'_>, depth: usize) -> bool {
    msg.parts.iter().any(|part| {
        let is_report = part.content_type().is_some_and(|ct| {
            let sub = ct.subtype().unwrap_or("").to_ascii_lowercase();
            let ty = ct.ctype().to_ascii_lowercase();
            (ty == "multipart" && sub == "report")
                || (ty == "message"
                    && matches!(
                        sub.as_str(),
                        "delivery-status"
                            | "global-delivery-status"
                            | "disposition-notification"
                            | "feedback-report"
                    ))
        });
        is_report
            || match &part.body {
                PartType::Message(inner) if depth < 8 => has_report_part(inner, depth + 1),
                _ => false,
            }
    })
}

/// The first of the [`Automatic`] reasons that applies, in the order of the
/// enum; `Auto-Submitted: auto-generated` only if no other reason applies.
pub(super) fn automatic(
    msg: &Message<'_>,
    our_loop_id: &str,
    senders: [Option<&Mailbox>; 3],
    return_path: Option<&str>,
) -> Option<Automatic> {
    let loop_id = our_loop_id.trim();
    if !loop_id.is_empty()
        && raw_values(msg, "X-Loop")
            .iter()
            .any(|v| v.eq_ignore_ascii_case(loop_id))
    {
        return Some(Automatic::OurLoop);
    }
    if has_report_part(msg, 0) {
        return Some(Automatic::Report);
    }
    if raw_values(msg, "Return-Path")
        .iter()
        .any(|v| v.split_whitespace().collect::<String>() == "<>")
    {
        return Some(Automatic::NullReturnPath);
    }
    // A program's own mail (`auto-generated`: not an answer to a mail) is
    // named only when nothing below marks the mail as a machine's too: a
    // team's string may then make it the team's (`Automatic::provable`).
    let mut generated = None;
    for v in raw_values(msg, "Auto-Submitted") {
        // `auto-replied; owner-email="..."` or `auto-generated (comment)`.
        let token = v
            .split([';', '(', ' '])
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if token == AUTO_GENERATED {
            generated = Some(token);
        } else if token != "no" {
            return Some(Automatic::AutoSubmitted(token));
        }
    }
    let return_local = return_path.and_then(|a| a.rsplit_once('@')).map(|(l, _)| l);
    let locals = senders
        .into_iter()
        .flatten()
        .map(|mb| mb.local_part())
        .chain(return_local);
    for local in locals.clone() {
        if is_daemon_local_part(local) {
            return Some(Automatic::DaemonSender(local.to_string()));
        }
    }
    for v in raw_values(msg, "Precedence") {
        let v = v.to_ascii_lowercase();
        if matches!(
            v.as_str(),
            "bulk" | "junk" | "list" | "auto_reply" | "auto-reply"
        ) {
            return Some(Automatic::Precedence(v));
        }
    }
    if !raw_values(msg, "List-Id").is_empty() {
        return Some(Automatic::ListId);
    }
    if let Some(h) = msg.headers().iter().find(|h| {
        // As bytes: a hostile header name with a multibyte character
        // across byte 5 once panicked here (fuzz corpus, from_line).
        let n = h.name.as_str().as_bytes();
        n.len() > 5 && n[..5].eq_ignore_ascii_case(b"list-")
    }) {
        return Some(Automatic::ListHeader(h.name.as_str().to_ascii_lowercase()));
    }
    for name in ["X-Autoreply", "X-Autorespond", "X-Autoresponder"] {
        if raw_values(msg, name)
            .iter()
            .any(|v| !v.eq_ignore_ascii_case("no"))
        {
            return Some(Automatic::AutoReplyHeader(name.to_ascii_lowercase()));
        }
    }
    for local in locals {
        if is_bounce_local_part(local) {
            return Some(Automatic::BounceSender(local.to_string()));
        }
    }
    generated.map(Automatic::AutoSubmitted)
}
