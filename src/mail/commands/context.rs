//! What every command shares: the mail and the moment ([`Ctx`]), what
//! processing a mail did ([`Effect`]), the `<<FROM>>` credentials and their
//! check, the body's lines as commands read them, dates in mails. No
//! command is told apart or run here.

use chrono::{DateTime, Utc};
use rusqlite::Connection;

use super::subject::contest_subject;
use crate::auth;
use crate::mail::message::Inbound;
use crate::outbox::outgoing::Outgoing;
use crate::store::mail::{registration_by_team, RegistrationRow};
use crate::store::StoreError;

use crate::config::Config;
pub use crate::store::mail::Budget;

/// The refusal for a team name and auth string that do not match (the same
/// words whether the team exists or not, so it tells nothing).
pub const AUTH_REFUSED: &str =
    "The team name and the authentification string in the <<FROM>> line do not match any registration.";
/// What to do about [`AUTH_REFUSED`].
pub const AUTH_REFUSED_HINT: &str =
    "Copy both exactly from the acknowledgement of your registration.";

/// The registration of `team` if `auth` is its authentification string.
/// The same work is done for an unknown team, so timing tells nothing.
pub fn authenticate(
    conn: &Connection,
    team: &str,
    auth_string: &str,
) -> Result<Option<RegistrationRow>, StoreError> {
    let reg = registration_by_team(conn, team)?;
    let authentic = match &reg {
        Some(r) => auth::verify(&r.auth_salt, &r.auth_hash, auth_string),
        None => {
            let _ = auth::verify(&[0u8; 16], &[0u8; 32], auth_string);
            false
        }
    };
    Ok(reg.filter(|_| authentic))
}

/// Why a team name and authentification string were refused, and what to
/// do: a withdrawn team's own string learns that its team was withdrawn,
/// when and why; anything else gets [`AUTH_REFUSED`], which tells nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRefusal {
    pub what: String,
    pub hint: String,
}

/// The refusal of a `team` and `auth_string` that [`authenticate`] did not
/// accept. A string is checked against a withdrawn registration of the
/// name, or (none) against nothing, so every refusal costs the same.
pub fn auth_refusal(
    conn: &Connection,
    config: &Config,
    team: &str,
    auth_string: &str,
) -> Result<AuthRefusal, StoreError> {
    let withdrawn = crate::store::mail::withdrawn_registrations(conn, team)?;
    if withdrawn.is_empty() {
        let _ = auth::verify(&[0u8; 16], &[0u8; 32], auth_string);
    }
    let own = withdrawn
        .into_iter()
        .find(|w| auth::verify(&w.auth_salt, &w.auth_hash, auth_string));
    Ok(match own {
        Some(w) => AuthRefusal {
            what: format!(
                "The team {} was withdrawn from the contest ({}): {}.",
                w.team_name,
                crate::store::admin::parse_timestamp(&w.withdrawn_at)
                    .map(date)
                    .unwrap_or(w.withdrawn_at),
                w.reason
            ),
            hint: format!(
                "Its authentification string no longer works. To take part, register \
                 again with the registration form; questions go to the organizer, {}.",
                config.contest.organizer
            ),
        },
        None => AuthRefusal {
            what: AUTH_REFUSED.into(),
            hint: AUTH_REFUSED_HINT.into(),
        },
    })
}

/// Team name and auth string from a `<<FROM>> team_name auth_string` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub team: String,
    pub auth: String,
}

/// Lines of a mail body the commands read: up to the signature (`-- `),
/// quoted lines (`>`) left out, at most this many.
pub const MAX_BODY_LINES: usize = 200;

/// The body's lines as the commands read them (see [`MAX_BODY_LINES`]).
pub fn body_lines(body: &str) -> impl Iterator<Item = &str> {
    body.lines()
        .take(MAX_BODY_LINES)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .take_while(|l| *l != "-- " && *l != "--")
        .filter(|l| !l.trim_start().starts_with('>'))
}

/// The first `<<FROM>> team_name auth_string` line of a body.
pub fn credentials(body: &str) -> Option<Credentials> {
    body_lines(body).find_map(|line| {
        let at = line.find("<<FROM>>")?;
        let mut words = line[at + "<<FROM>>".len()..].split_whitespace();
        Some(Credentials {
            team: words.next()?.to_string(),
            auth: words.next()?.to_string(),
        })
    })
}

/// What processing a mail did: its final state, a short outcome for the
/// organizer, and the replies to queue.
#[derive(Debug, Clone)]
pub struct Effect {
    /// The budget its replies draw from: [`Budget::Strangers`] for an
    /// answer to a claim (processing makes it [`Budget::Confirmed`] when
    /// the sender's mailbox is a registered team's), [`Budget::Team`] once
    /// the mail proved its team by the authentification string,
    /// [`Budget::Registration`] for the answer to a registration that is
    /// kept.
    pub budget: Budget,
    /// `done` or `ignored`.
    pub state: &'static str,
    /// What the mail asked for and what the command decided, for the
    /// organizer's log: never that a reply went out (the reply gate may
    /// still hold every reply; what was queued is said where it is).
    pub outcome: String,
    pub replies: Vec<Outgoing>,
}

/// What a command needs to know about the mail and the moment.
pub struct Ctx<'a> {
    pub config: &'a Config,
    pub mail: &'a Inbound,
    pub inbox_id: i64,
    pub now: DateTime<Utc>,
    /// Where replies to the sender go.
    pub reply_to: String,
}

impl Ctx<'_> {
    /// A reply to the sender of the mail.
    pub fn reply(&self, kind: &'static str, subject: String, body: String) -> Outgoing {
        self.reply_to_addresses(kind, vec![self.reply_to.clone()], subject, body)
    }

    /// A reply (threaded to the mail) to other addresses.
    pub fn reply_to_addresses(
        &self,
        kind: &'static str,
        to: Vec<String>,
        subject: String,
        body: String,
    ) -> Outgoing {
        Outgoing {
            kind,
            to,
            subject: contest_subject(self.config, subject),
            body,
            in_reply_to: self.mail.message_id.clone(),
            references: self.mail.references.clone(),
            attachments: Vec::new(),
        }
    }
}

/// Formats a date for mails: `1994-05-14 12:00 UT`.
pub fn date(d: DateTime<Utc>) -> String {
    d.format("%Y-%m-%d %H:%M UT").to_string()
}

/// Why a compile request of `team` is refused unrun for the hour, with
/// its outcome, or `None`: `compiles_per_team_per_hour` counts the
/// requests that were compiled (a verdict), `server_problems_per_team_per_hour`
/// those answered as a server problem, apart, so that the server's load
/// never spends a team's compiles while retries under it stay bounded
/// (each can hold a jail up to its 30 s wall).
pub(super) fn past_hourly_limits(
    conn: &Connection,
    ctx: &Ctx<'_>,
    team: crate::tournament::TeamId,
) -> Result<Option<(String, &'static str)>, StoreError> {
    use crate::store::mail::{compile_requests_since, CompileCount};
    let limits = &ctx.config.limits;
    let since = ctx.now - chrono::Duration::hours(1);
    // A limit of 0 is none.
    let reached = |limit: u32, count: CompileCount| -> Result<bool, StoreError> {
        Ok(limit > 0 && compile_requests_since(conn, team, since, count)? >= limit)
    };
    let per_hour = limits.compiles_per_team_per_hour;
    if reached(per_hour, CompileCount::Verdicts)? {
        return Ok(Some((
            format!(
                "Your team has sent {per_hour} compile requests within the last hour, the \
                 most this server takes. Please try again later."
            ),
            "compile rate limit",
        )));
    }
    let problems = limits.server_problems_per_team_per_hour;
    if reached(problems, CompileCount::ServerProblems)? {
        return Ok(Some((
            format!(
                "The server could not process {problems} of your team's compile requests \
                 within the last hour because of problems on the server (not because of \
                 anything in your programs), the most it tries for one team in an hour, so \
                 that retries do not add to its load. They did not count against your \
                 team's compiles of the hour. Please try again later; if this goes \
                 on, write to the organizer."
            ),
            "compile server-problem limit",
        )));
    }
    Ok(None)
}
