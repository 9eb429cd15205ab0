//! `RSM round N`: the organizer's round summary by mail, while the contest
//! pauses after round N (`rules.rsm_pause_minutes`).
//!
//! The organizer's address alone proves nothing (anybody can write it into
//! `From`), so a summary is accepted only from that address *and* with the
//! line `<<RSM>> token`, where the token is the one-time string of the
//! pause mail the server sent to the organizer for that round (130 bits,
//! stored salted and hashed, compared in constant time). The summary is
//! the text after that line, up to a signature (`-- `), without quoted
//! lines (`>`). Anything else is refused by mail with the same words, and
//! pointed to `knobeln rsm --round N FILE` on the server, which needs no
//! token. A summary arriving after the round's RSM went out is refused.

use rusqlite::Connection;
use serde_json::json;

use super::context::Budget;
use super::context::{Ctx, Effect, MAX_BODY_LINES};
use super::error::CommandError;
use super::status::refused;
use super::subject::normalize_subject;
use crate::auth;
use crate::mail::message::Inbound;
use crate::mail::texts::render;
use crate::store::mail::contest;
use crate::store::rsm::{rsm_round, set_summary, RsmRound, SummaryRefused};
use crate::store::StoreError;

/// The longest summary accepted, in bytes (by mail and by `knobeln rsm`).
pub const MAX_SUMMARY_BYTES: usize = 64 * 1024;

/// The marker of the token line.
pub const TOKEN_MARKER: &str = "<<RSM>>";

/// The round an `RSM round N` subject names.
pub fn round_of(subject: &str) -> Option<u32> {
    let s = normalize_subject(subject);
    let rest = s.strip_prefix("rsm round ")?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if digits == 0 || digits > 9 || rest[digits..].starts_with(|c: char| c.is_alphanumeric()) {
        return None;
    }
    rest[..digits].parse().ok().filter(|&n| n >= 1)
}

/// Pure: the token and the summary text of the body (`None` without a
/// token line). Linear in the body.
pub fn token_and_summary(body: &str) -> Option<(String, String)> {
    let mut lines = body.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    let token = lines.by_ref().find_map(|l| {
        let at = l.find(TOKEN_MARKER)?;
        l[at + TOKEN_MARKER.len()..]
            .split_whitespace()
            .next()
            .map(String::from)
    })?;
    let text: Vec<&str> = lines
        .take_while(|l| *l != "-- " && *l != "--")
        .filter(|l| !l.trim_start().starts_with('>'))
        .collect();
    Some((token, text.join("\n").trim().to_string()))
}

const KIND: &str = "rsm_refused";

fn refuse(
    ctx: &Ctx<'_>,
    subject: &str,
    reason: &str,
    outcome: &str,
) -> Result<Effect, CommandError> {
    refused(
        ctx,
        KIND,
        subject,
        reason,
        &[],
        Some(
            "On the contest server the organizer can always give the summary with\n\n  \
             knobeln rsm --round N FILE\n\n(no token needed).",
        ),
        outcome.to_string(),
    )
}

/// The round's state and the summary text of an authentic RSM mail: one
/// from the organizer's address (`organizer`), naming a round of the
/// contest whose pause token its `<<RSM>>` line carries. `None` for any
/// other mail. Reads only; the intake asks it too (an authentic summary is
/// the organizer's, never a stranger's mail).
pub fn authentic(
    conn: &Connection,
    organizer: &str,
    mail: &Inbound,
) -> Result<Option<(RsmRound, String)>, StoreError> {
    let Some(round) = round_of(&mail.subject) else {
        return Ok(None);
    };
    let from_organizer = mail
        .from
        .as_ref()
        .is_some_and(|m| m.address.eq_ignore_ascii_case(organizer));
    let Some((token, text)) = token_and_summary(mail.body.text().unwrap_or("")) else {
        return Ok(None);
    };
    if !from_organizer {
        return Ok(None);
    }
    let Some(state) = (match contest(conn)? {
        Some(c) => rsm_round(conn, c.tournament_id, round)?,
        None => None,
    }) else {
        return Ok(None);
    };
    let verified = match (&state.token_salt, &state.token_hash) {
        (Some(salt), Some(hash)) => auth::verify(salt, hash, &token),
        _ => false,
    };
    Ok(verified.then_some((state, text)))
}

pub fn apply(conn: &Connection, ctx: &Ctx<'_>) -> Result<Effect, CommandError> {
    let subject = ctx.mail.subject.trim().to_string();
    let not_accepted = "A round summary by mail is accepted only from the organizer's address, \
         with the line <<RSM>> token from the server's pause mail of that round, while the \
         contest waits for it.";
    let Some(round) = round_of(&ctx.mail.subject) else {
        return refuse(ctx, &subject, not_accepted, "RSM mail without a round");
    };
    let Some((state, text)) = authentic(conn, &ctx.config.contest.organizer, ctx.mail)? else {
        return refuse(ctx, &subject, not_accepted, "RSM mail not authentic");
    };
    if state.sent_at.is_some() {
        return refuse(
            ctx,
            &subject,
            &format!("The summary of round {round} has already gone out; nothing was changed."),
            "RSM mail after the RSM went out",
        );
    }
    if text.is_empty() {
        return refuse(
            ctx,
            &subject,
            "The mail has no summary after the <<RSM>> line.",
            "RSM mail without text",
        );
    }
    if text.len() > MAX_SUMMARY_BYTES || text.lines().count() > 10 * MAX_BODY_LINES {
        return refuse(
            ctx,
            &subject,
            &format!("The summary is longer than {MAX_SUMMARY_BYTES} bytes."),
            "RSM mail too long",
        );
    }
    if set_summary(conn, state.tournament_id, round, &text, "mail", ctx.now)?
        == Err(SummaryRefused::AlreadySent)
    {
        return refuse(
            ctx,
            &subject,
            &format!("The summary of round {round} has already gone out; nothing was changed."),
            "RSM mail after the RSM went out",
        );
    }
    let body = render("rsm_accepted", &json!({ "round": round, "text": text }))?;
    Ok(Effect {
        budget: Budget::Strangers,
        state: "done",
        outcome: format!("RSM of round {round} from the organizer"),
        replies: vec![ctx.reply(
            "rsm_accepted",
            format!("KNOBELN RSM round {round}: summary accepted"),
            body,
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_round_comes_from_the_subject() {
        assert_eq!(round_of("RSM round 3"), Some(3));
        assert_eq!(round_of("Re: rsm  Round 12"), Some(12));
        assert_eq!(round_of("RSM round 0"), None);
        assert_eq!(round_of("RSM round x"), None);
        assert_eq!(round_of("RSM round 2 (the final)"), Some(2));
        assert_eq!(round_of("RSM round 2x"), None);
        assert_eq!(round_of("RSM"), None);
    }

    #[test]
    fn token_line_then_text_without_quotes_and_signature() {
        let body = "Hello\n<<RSM>> abc123 trailing\n\nRound 2 was wild.\n> quoted pause mail\nCrasher crashed.\n-- \nThe organizer\n";
        let (token, text) = token_and_summary(body).unwrap();
        assert_eq!(token, "abc123");
        assert_eq!(text, "Round 2 was wild.\nCrasher crashed.");
        assert!(token_and_summary("no token here").is_none());
        assert!(token_and_summary("<<RSM>>").is_none());
    }
}
