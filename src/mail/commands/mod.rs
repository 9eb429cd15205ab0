//! The commands participants send by mail, told apart by the subject line
//! (compared after trimming, case-insensitively). One file per command, each
//! with a pure part that reads the mail and an effectful part that changes
//! the store inside the caller's transaction and returns the replies.

pub mod compile;
pub mod help;
pub mod register;
pub mod software;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::message::Inbound;
use super::outgoing::Outgoing;
use crate::config::Config;

/// The commands of the 1994 mail server, plus help for anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Command {
    /// `registration for KNOBELN`
    Register,
    /// `please compile`
    Compile,
    /// `SEND knobelnsoftware`
    SendSoftware,
    /// Anything else: a short help mail.
    Help,
}

/// Which command a subject line asks for.
pub fn classify(subject: &str) -> Command {
    let s = subject.trim().to_ascii_lowercase();
    match s.as_str() {
        "registration for knobeln" => Command::Register,
        "please compile" => Command::Compile,
        "send knobelnsoftware" => Command::SendSoftware,
        _ => Command::Help,
    }
}

/// What processing a mail did: its final state, a short outcome for the
/// organizer, and the replies to queue.
#[derive(Debug, Clone)]
pub struct Effect {
    /// `done` or `ignored`.
    pub state: &'static str,
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
            subject,
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
    fn subjects_are_compared_trimmed_and_case_insensitively() {
        assert_eq!(classify("registration for KNOBELN"), Command::Register);
        assert_eq!(classify("  Registration For Knobeln \t"), Command::Register);
        assert_eq!(classify("please compile"), Command::Compile);
        assert_eq!(classify("PLEASE COMPILE"), Command::Compile);
        assert_eq!(classify("SEND knobelnsoftware"), Command::SendSoftware);
        assert_eq!(classify("Re: please compile"), Command::Help);
        assert_eq!(classify(""), Command::Help);
    }
}
