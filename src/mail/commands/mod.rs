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
//!
//! This file only tells the commands apart and dispatches; what the
//! commands share is in [`context`] (the mail, the moment, the effect,
//! credentials), [`subject`] and [`error`], which import no command, so no
//! command imports its dispatcher.

pub mod compile;
pub mod compile_bot;
pub mod help;
pub mod preference;
pub mod register;
pub mod rsm;
pub mod software;
pub mod status;
pub mod submission;

pub mod context;
pub mod error;
pub mod prepared;
pub mod subject;

use rusqlite::Connection;
use serde::Serialize;

pub use context::{
    auth_refusal, authenticate, body_lines, credentials, date, AuthRefusal, Budget, Credentials,
    Ctx, Effect, AUTH_REFUSED, AUTH_REFUSED_HINT, MAX_BODY_LINES,
};
pub use error::CommandError;
pub use subject::{contest_subject, normalize_subject};

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
    /// A discipline's own submission beside the bot, by the word its seam
    /// gives (the flooding island's `island`, [`submission`]).
    Submission(crate::discipline::Discipline),
    /// The answer to a confirmation request (`KNOBELN: please confirm
    /// your address (CODE)`, usually with `Re:`): a registration that named
    /// this address goes through ([`register::confirm`]).
    Confirm,
    /// Anything else: a short help mail, and a copy to the organizer.
    Help,
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
        s if s.starts_with("rsm round ") => Command::Rsm,
        // The answer to a confirmation request, whatever the contest's
        // name before it (the code in it is the proof).
        s if s.contains(register::CONFIRM_MARK) => Command::Confirm,
        // A discipline's own submission (the flooding island's `island`).
        s => submission::named_by(s).map_or(Command::Help, Command::Submission),
    }
}

/// Runs a command that needs no slow preparation, inside the caller's
/// transaction (`please compile` has [`compile::prepare`] and
/// [`compile::commit`] instead).
pub fn apply(conn: &Connection, ctx: &Ctx<'_>, command: Command) -> Result<Effect, CommandError> {
    match command {
        Command::Register => Ok(register::apply(conn, ctx)?),
        Command::SendSoftware => software::apply(conn, ctx),
        Command::Status => status::apply(conn, ctx),
        Command::Preference => preference::apply(conn, ctx),
        Command::Rsm => rsm::apply(conn, ctx),
        Command::Submission(of) => submission::apply(conn, ctx, of),
        Command::Help => help::apply(conn, ctx),
        Command::Confirm => Ok(register::confirm(conn, ctx)?),
        Command::Compile => Err(CommandError::NotHere),
    }
}

/// The team whose authentification string proves `mail`, asking for
/// `command` (its `<<FROM>>` line, or a compile request's source header),
/// if one does. A machine's mail is proven only if a program sent it
/// ([`Automatic::provable`](crate::mail::message::Automatic::provable))
/// and it asks what a team's program may ask: never a registration, a
/// confirmation or a round summary (those are a person's word). Costs one
/// look-up by team name, whatever the mail.
pub fn proving_team(
    conn: &Connection,
    config: &crate::config::Config,
    mail: &crate::mail::message::Inbound,
    command: Command,
) -> Result<Option<crate::tournament::TeamId>, crate::store::StoreError> {
    if let Some(automatic) = &mail.automatic {
        if !automatic.provable()
            || matches!(command, Command::Register | Command::Confirm | Command::Rsm)
        {
            return Ok(None);
        }
    }
    let claim = match command {
        Command::Compile => compile::claimed_credentials(config, mail),
        _ => mail.body.text().and_then(credentials),
    };
    Ok(match claim {
        Some(c) => authenticate(conn, &c.team, &c.auth)?.map(|r| r.team),
        None => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn a_bot_contests_subjects_name_it_once() {
        let mut config = Config::default();
        config.contest.discipline = crate::discipline::Discipline::MORABARABA;
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
        config.contest.discipline = crate::discipline::Discipline::KNOBELN;
        assert_eq!(
            contest_subject(&config, "KNOBELN: help".into()),
            "KNOBELN: help"
        );
    }

    #[test]
    fn one_word_subjects_are_their_commands_and_submissions_take_none() {
        for word in crate::discipline::registry::COMMAND_WORDS {
            let c = classify(word);
            assert!(
                !matches!(c, Command::Help | Command::Submission(_)),
                "{word}: {c:?}"
            );
        }
        for seam in crate::discipline::registry::all() {
            if let Some(sub) = seam.submission() {
                assert_eq!(
                    classify(&sub.word.to_uppercase()),
                    Command::Submission(seam.discipline())
                );
            }
        }
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
