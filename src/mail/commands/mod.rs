//! The commands participants send by mail, told apart by the subject line.
//! One file per command, each with a pure part that reads the mail and an
//! effectful part that changes the store inside the caller's transaction
//! and returns the replies.
//!
//! Subjects are matched after [`normalize_subject`]: reply and forward
//! prefixes (`Re:`, `Fwd:`, `AW:`, `WG:`, … repeated, any case, also
//! `Re[2]:`), surrounding blanks and case do not matter, and runs of blanks
//! count as one. Anything that is none of the commands gets the help text
//! and is forwarded to the organizer ([`help`]).

pub mod compile;
pub mod compile_bot;
pub mod help;
pub mod island;
pub mod preference;
pub mod register;
pub mod rsm;
pub mod software;
pub mod status;

pub use crate::store::mail::Budget;
use chrono::{DateTime, Utc};
use rusqlite::Connection;
use serde::Serialize;

use super::auth;
use super::message::Inbound;
use crate::config::Config;
use crate::outbox::outgoing::Outgoing;
use crate::store::mail::{registration_by_team, RegistrationRow};
use crate::store::StoreError;

/// The commands of the 1994 mail server, the two added for participants,
/// and help for anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Command {
    /// `registration for KNOBELN`
    Register,
    /// `please compile`
    Compile,
    /// `SEND knobelnsoftware`
    SendSoftware,
    /// `status`: the team's registered data and current version.
    Status,
    /// `mail-preference`: change which contest mails the team gets.
    Preference,
    /// `RSM round N`: the organizer's round summary ([`rsm`]).
    Rsm,
    /// `island`: an island for the flooding island contest ([`island`]).
    Island,
    /// The answer to a confirmation request (`KNOBELN: please confirm
    /// your address (CODE)`, usually with `Re:`): a registration that named
    /// this address goes through ([`register::confirm`]).
    Confirm,
    /// Anything else: a short help mail, and a copy to the organizer.
    Help,
}

/// Reply and forward prefixes, as mail programs in several languages
/// write them (`Re`, `Fwd`/`Fw`, German `AW`/`WG`, Dutch `Antw`,
/// Scandinavian and Finnish `SV`/`VS`, French `TR`).
const PREFIXES: [&str; 9] = ["re", "aw", "antw", "sv", "vs", "fwd", "fw", "wg", "tr"];

/// `s` without one leading reply or forward prefix (`Re:`, `RE :`,
/// `Re[2]:`, `Re(2):`), or `None` if it has none. Linear in the prefix.
fn strip_one_prefix(s: &str) -> Option<&str> {
    let s = s.trim_start();
    let word_end = s
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(s.len());
    let word = &s[..word_end];
    if !PREFIXES.iter().any(|p| p.eq_ignore_ascii_case(word)) {
        return None;
    }
    let mut rest = s[word_end..].trim_start_matches([' ', '\t']);
    for (open, close) in [('[', ']'), ('(', ')')] {
        if let Some(r) = rest.strip_prefix(open) {
            let digits = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            rest = r[digits..].strip_prefix(close)?;
            if digits == 0 {
                return None;
            }
            rest = rest.trim_start_matches([' ', '\t']);
            break;
        }
    }
    rest.strip_prefix(':')
}

/// The subject as commands are matched: reply/forward prefixes removed
/// (repeated), blanks trimmed and collapsed, lowercase.
pub fn normalize_subject(subject: &str) -> String {
    let mut s = subject;
    while let Some(rest) = strip_one_prefix(s) {
        s = rest;
    }
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Which command a subject line asks for.
pub fn classify(subject: &str) -> Command {
    match normalize_subject(subject).as_str() {
        // KNOBELN's own subject, and in any contest "registration" or
        // "registration for" its name (issue 36: a Morabaraba contest's
        // participants need not write KNOBELN).
        "registration" => Command::Register,
        s if s.starts_with("registration for ") => Command::Register,
        "please compile" => Command::Compile,
        "send knobelnsoftware" | "send kit" | "kit" => Command::SendSoftware,
        "status" => Command::Status,
        "mail-preference" => Command::Preference,
        "island" => Command::Island,
        s if s.starts_with("rsm round ") => Command::Rsm,
        // The answer to a confirmation request, whatever the contest's
        // name before it (the code in it is the proof).
        s if s.contains(register::CONFIRM_MARK) => Command::Confirm,
        _ => Command::Help,
    }
}

/// Faults of a command (never the participant's: those are replies).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Render(#[from] handlebars::RenderError),
    #[error(transparent)]
    Register(#[from] register::RegisterError),
    #[error("please compile is prepared outside the transaction (compile::prepare)")]
    NotHere,
}

/// Runs a command that needs no slow preparation, inside the caller's
/// transaction (`please compile` has [`compile::prepare`] and
/// [`compile::commit`] instead).
pub fn apply(conn: &Connection, ctx: &Ctx<'_>, command: Command) -> Result<Effect, CommandError> {
    match command {
        Command::Register => Ok(register::apply(conn, ctx)?),
        Command::SendSoftware => Ok(software::apply(ctx)?),
        Command::Status => status::apply(conn, ctx),
        Command::Preference => preference::apply(conn, ctx),
        Command::Rsm => rsm::apply(conn, ctx),
        Command::Island => island::apply(conn, ctx),
        Command::Help => help::apply(conn, ctx),
        Command::Confirm => Ok(register::confirm(conn, ctx)?),
        Command::Compile => Err(CommandError::NotHere),
    }
}

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
    pub outcome: String,
    pub replies: Vec<Outgoing>,
}

/// A reply's subject in this contest's words: the commands write KNOBELN's
/// (`KNOBELN registration: not accepted`); in a bot contest the leading
/// word is the contest's name (`Morabaraba 2014 registration: not
/// accepted`), so a participant never meets the name of another contest.
pub fn contest_subject(config: &Config, subject: String) -> String {
    // KNOBELN's own, and a subject already built from the contest's name
    // (which may itself begin with "KNOBELN"), stay as they are.
    if config.contest.discipline == crate::discipline::Discipline::Knobeln
        || subject.starts_with(&config.contest.name)
    {
        return subject;
    }
    match subject.strip_prefix("KNOBELN") {
        Some(rest) if rest.starts_with([' ', ':']) => format!("{}{rest}", config.contest.name),
        _ => subject,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bot_contests_subjects_name_it_once() {
        let mut config = Config::default();
        config.contest.discipline = crate::discipline::Discipline::Morabaraba;
        config.contest.name = "KNOBELN Morabaraba 2026".into();
        let s = |t: &str| contest_subject(&config, t.to_string());
        assert_eq!(
            s("KNOBELN registration: not accepted"),
            "KNOBELN Morabaraba 2026 registration: not accepted"
        );
        // Built from the name already: kept, not named twice.
        assert_eq!(
            s("KNOBELN Morabaraba 2026 compilation report: accepted"),
            "KNOBELN Morabaraba 2026 compilation report: accepted"
        );
        assert_eq!(s("KNOBELNISH"), "KNOBELNISH");
        config.contest.discipline = crate::discipline::Discipline::Knobeln;
        assert_eq!(
            contest_subject(&config, "KNOBELN: help".into()),
            "KNOBELN: help"
        );
    }

    #[test]
    fn subjects_are_compared_trimmed_and_case_insensitively() {
        assert_eq!(classify("registration for KNOBELN"), Command::Register);
        assert_eq!(classify("  Registration For Knobeln \t"), Command::Register);
        assert_eq!(classify("registration  for\tKNOBELN"), Command::Register);
        assert_eq!(classify("please compile"), Command::Compile);
        assert_eq!(classify("PLEASE COMPILE"), Command::Compile);
        assert_eq!(classify("SEND knobelnsoftware"), Command::SendSoftware);
        assert_eq!(classify("send kit"), Command::SendSoftware);
        assert_eq!(classify("Re: KIT"), Command::SendSoftware);
        assert_eq!(classify("Status"), Command::Status);
        assert_eq!(classify("MAIL-PREFERENCE"), Command::Preference);
        assert_eq!(classify(""), Command::Help);
        assert_eq!(classify("please compile this"), Command::Help);
        assert_eq!(classify("compile"), Command::Help);
    }

    #[test]
    fn reply_and_forward_prefixes_are_stripped_repeatedly_in_any_case() {
        for s in [
            "Re: please compile",
            "RE: please compile",
            "re:please compile",
            "Re: Re: RE: please compile",
            "Fwd: please compile",
            "FW: Re: please compile",
            "AW: please compile",
            "WG: AW: please compile",
            "Re[2]: please compile",
            "Re(3): please compile",
            "RE : please compile",
            "Antw: SV: VS: TR: please compile",
            "  Re:   please   compile  ",
        ] {
            assert_eq!(classify(s), Command::Compile, "{s:?}");
        }
        assert_eq!(classify("Re: status"), Command::Status);
        assert_eq!(classify("aw: Mail-Preference"), Command::Preference);
        // Not prefixes: a word that merely starts like one, a prefix without
        // its colon, an empty or non-numeric counter.
        for s in [
            "Reply: please compile",
            "Re please compile",
            "Re[]: please compile",
            "Re[x]: please compile",
            "please compile Re:",
        ] {
            assert_eq!(classify(s), Command::Help, "{s:?}");
        }
        assert_eq!(normalize_subject("Re: Re:"), "");
    }

    #[test]
    fn stripping_a_long_chain_of_prefixes_is_linear() {
        let subject = format!("{}please compile", "Re: ".repeat(200_000));
        assert_eq!(classify(&subject), Command::Compile);
        let junk = "Re[".repeat(200_000);
        assert_eq!(classify(&junk), Command::Help);
    }

    #[test]
    fn credentials_come_from_the_first_from_line_outside_quotes_and_signature() {
        let body =
            "> <<FROM>> quoted wrong\nhello\n/* <<FROM>> team_a s3cret */\n<<FROM>> team_b other\n";
        assert_eq!(
            credentials(body),
            Some(Credentials {
                team: "team_a".into(),
                auth: "s3cret".into()
            })
        );
        assert_eq!(credentials("<<FROM>> only_team\n"), None);
        assert_eq!(credentials("hi\n-- \n<<FROM>> team_a s3cret\n"), None);
        let late = format!("{}<<FROM>> team_a s3cret\n", "x\n".repeat(MAX_BODY_LINES));
        assert_eq!(credentials(&late), None);
    }
}
