//! `mail-preference`: a team changes which contest mails it gets. The body
//! holds `<<FROM>> team_name auth_string` and a line
//! `mail-preference: LAP,DGP` in the registration form's syntax (uppercase
//! declarators separated by commas; nothing after the colon for none). A
//! wrong team or string gets the same refusal as `please compile`; a bad
//! list gets every problem at once and changes nothing. The change and its
//! confirmation (to the registered address, and to the sender if
//! different) commit together; the registration record (the one LAP
//! lists) changes with it. It applies to every contest mail queued after
//! it, also while the contest runs.

use rusqlite::Connection;
use serde_json::json;

use super::context::Budget;
use super::context::{authenticate, body_lines, credentials, Ctx, Effect};
use super::error::CommandError;
use super::status::{no_credentials, not_authentic, refused};
use crate::mail::registration::{parse_preferences, with_entry, Preference};
use crate::mail::texts::render;
use crate::store::admin::set_preferences;

const SUBJECT: &str = "mail-preference";
const KEY: &str = "mail-preference";

/// Pure: the value of the first `mail-preference:` line of the body.
pub fn requested(body: &str) -> Option<&str> {
    body_lines(body).find_map(|line| {
        let line = line.trim();
        let key = line.get(..KEY.len())?;
        if !key.eq_ignore_ascii_case(KEY) {
            return None;
        }
        line[KEY.len()..]
            .trim_start()
            .strip_prefix(':')
            .map(str::trim)
    })
}

pub fn apply(conn: &Connection, ctx: &Ctx<'_>) -> Result<Effect, CommandError> {
    let kind = "preference_refused";
    let body = ctx.mail.body.text().unwrap_or("");
    let Some(cred) = credentials(body) else {
        return no_credentials(ctx, kind, SUBJECT);
    };
    let Some(reg) = authenticate(conn, &cred.team, &cred.auth)? else {
        return not_authentic(conn, ctx, kind, SUBJECT, &cred);
    };
    let Some(value) = requested(body) else {
        return refused(
            ctx,
            kind,
            SUBJECT,
            "The mail has no line mail-preference: ... saying what you want.",
            &[],
            Some("Add a line like\n\nmail-preference: LAP,DGP,GRG,RSM\n\nwith any of LAP, LGP, DGP, GRP, GRG, GRR, RSM separated by commas (nothing after the colon for no contest mails)."),
            format!("team {}: no mail-preference line", reg.team_name),
        );
    };
    let prefs = match parse_preferences(value) {
        Ok(p) => p,
        Err(problems) => {
            let problems: Vec<String> = problems.into_iter().map(|p| p.message).collect();
            return refused(
                ctx,
                kind,
                SUBJECT,
                "Your mail-preference line has these problems; nothing was changed:",
                &problems,
                None,
                format!("team {}: bad mail-preference", reg.team_name),
            );
        }
    };
    let new = prefs
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let record = with_entry(&reg.record, KEY, &new);
    set_preferences(conn, reg.team, &new, &record)?;
    let described: Vec<String> = prefs
        .iter()
        .map(|p: &Preference| format!("{}  {}", p.as_str(), p.description()))
        .collect();
    let text = render(
        "preference",
        &json!({
            "team": reg.team_name,
            "old": reg.preferences,
            "new": new,
            "described": described,
        }),
    )?;
    let mut to = vec![reg.mail_address.clone()];
    if !ctx.reply_to.eq_ignore_ascii_case(&reg.mail_address) {
        to.push(ctx.reply_to.clone());
    }
    Ok(Effect {
        budget: Budget::Team(reg.team),
        state: "done",
        outcome: format!(
            "team {}: mail-preference {:?} -> {new:?}",
            reg.team_name, reg.preferences
        ),
        replies: vec![ctx.reply_to_addresses(
            "preference",
            to,
            format!("KNOBELN mail-preference of team {} changed", reg.team_name),
            text,
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requested_list_is_the_first_mail_preference_line() {
        assert_eq!(
            requested("<<FROM>> t a\nmail-preference: LAP,DGP\nmail-preference: RSM\n"),
            Some("LAP,DGP")
        );
        assert_eq!(requested("  Mail-Preference :  \n"), Some(""));
        assert_eq!(requested("> mail-preference: LAP\n"), None);
        assert_eq!(requested("mail-preferences: LAP\n"), None);
        assert_eq!(requested("nothing\n"), None);
    }
}
