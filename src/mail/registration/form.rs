//! The registration form's parts: its limits and five keys, what an
//! accepted form becomes ([`Registration`], [`Member`], [`Preference`]),
//! an entry as found, and the [`Problem`]s with the announcement's rules
//! they quote.
//!
//! Only data and the wording of a problem: finding the entries in a form
//! is `mod.rs`, checking each entry's value `entries.rs`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// At most this many lines in the form (after the signature is cut).
pub const MAX_LINES: usize = 200;
/// At most this many bytes in one line.
pub const MAX_LINE_BYTES: usize = 4000;
/// At most this many bytes in the whole form (after the signature is cut):
/// ten members of two long lines and a long organization fit several times
/// over, and the record every acknowledgement repeats and every LAP mail
/// carries stays small.
pub const MAX_FORM_BYTES: usize = 16 * 1024;
/// At most this many characters in a team name (announcement).
pub const MAX_TEAM_NAME_CHARS: usize = 30;
/// Team size (announcement: "should be anywhere between 1 and 10"). A
/// larger team is registered with a warning (the form's line cap bounds it).
pub const MIN_MEMBERS: usize = 1;
pub const MAX_MEMBERS: usize = 10;
/// The longest mail address (RFC 5321 path limit).
pub const MAX_ADDRESS_CHARS: usize = 254;

/// The five keys, in the order of the announcement's example.
pub const KEYS: [&str; 5] = [
    "mail-address",
    "mail-preference",
    "team-name",
    "Organization",
    "team-members",
];

/// What a team wants to be mailed (the "declarators" of `mail-preference`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[allow(clippy::upper_case_acronyms)]
pub enum Preference {
    /// Send list of all participants (full registration format).
    LAP,
    /// Send list of my groups' participants (team names only).
    LGP,
    /// Send detailed game protocol for each of my games (every throw).
    DGP,
    /// Send game result (points) for each of my games.
    GRP,
    /// Send group result (all games of all participants).
    GRG,
    /// Send group result (ranking).
    GRR,
    /// Send summaries of rounds (includes all group rankings).
    RSM,
}

impl Preference {
    /// All declarators, in the order of the announcement.
    pub const ALL: [Preference; 7] = [
        Preference::LAP,
        Preference::LGP,
        Preference::DGP,
        Preference::GRP,
        Preference::GRG,
        Preference::GRR,
        Preference::RSM,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Preference::LAP => "LAP",
            Preference::LGP => "LGP",
            Preference::DGP => "DGP",
            Preference::GRP => "GRP",
            Preference::GRG => "GRG",
            Preference::GRR => "GRR",
            Preference::RSM => "RSM",
        }
    }

    /// The exact (uppercase) declarator; anything else is `None`.
    pub fn parse(s: &str) -> Option<Preference> {
        Preference::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// The announcement's explanation.
    pub fn description(self) -> &'static str {
        match self {
            Preference::LAP => "send list of all participants (full registration format)",
            Preference::LGP => "send list of my groups' participants (team names only)",
            Preference::DGP => "send detailed game protocol for each of my games (every throw)",
            Preference::GRP => "send game result (points) for each of my games",
            Preference::GRG => "send group result (all games of all participants)",
            Preference::GRR => "send group result (ranking)",
            Preference::RSM => "send summaries of rounds (includes all group rankings)",
        }
    }
}

impl fmt::Display for Preference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One team member: the two lines of the informal description, trimmed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub line1: String,
    pub line2: String,
}

/// An accepted registration form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The local part as given, the domain lowercased.
    pub mail_address: String,
    /// Without duplicates, in the order given; may be empty (no mails).
    pub preferences: Vec<Preference>,
    pub team_name: String,
    pub organization: String,
    /// At least 1; more than [`MAX_MEMBERS`] gets a warning.
    pub members: Vec<Member>,
}

impl Registration {
    /// What the acknowledgement points out without refusing the
    /// registration: the announcement's "should" rules that are not met.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let n = self.members.len();
        if n > MAX_MEMBERS {
            out.push(format!(
                "Your team has {n} members; the announcement says \"Team size should be \
                 anywhere between 1 and {MAX_MEMBERS}\". The registration is accepted, but \
                 please consider splitting the team (\"Personnel should not be shared \
                 among teams\")."
            ));
        }
        out
    }
}

/// One thing wrong with a form. `line` is 1-based in the mail body; `None`
/// for a problem of the whole form (a missing entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub line: Option<u32>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(n) => write!(f, "line {n}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

pub(super) const RULE_EXACT: &str =
    "\"Please use this format EXACTLY as shown, because the registration \
                          will be processed automatically.\"";
pub(super) const RULE_NO_EXTRA: &str =
    "\"Don't put additional information into this mail; send separate \
                             mail instead, if necessary.\"";
pub(super) const RULE_ORGANIZATION: &str =
    "\"put all of the 'Organization' entry on a single line (which \
                                 may be longer than 80 characters if necessary)\"";
pub(super) const RULE_COLON: &str = "\"don't put spaces in front of the colons\"";
pub(super) const RULE_TEAM_NAME: &str =
    "\"team-name\" can be any string that is a valid C identifier of \
                              at most 30 characters";
pub(super) const RULE_MEMBERS: &str =
    "\"team-members\" should contain a two-line informal description \
                            of each member of the team";

/// Problems, collected in line order.
pub(super) struct Problems(pub(super) Vec<Problem>);

impl Problems {
    pub(super) fn at(&mut self, line: usize, message: impl Into<String>) {
        self.0.push(Problem {
            line: Some(u32::try_from(line).unwrap_or(u32::MAX)),
            message: message.into(),
        });
    }
    pub(super) fn whole(&mut self, message: impl Into<String>) {
        self.0.push(Problem {
            line: None,
            message: message.into(),
        });
    }
}

/// A `key: value` entry as found.
pub(super) struct Entry<'a> {
    pub(super) line: usize,
    pub(super) value: &'a str,
    /// The indented lines after `team-members:` (line number, trimmed text).
    pub(super) members: Vec<(usize, &'a str)>,
}

/// A value as shown in a message: at most 60 characters.
pub(super) fn quote(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}...")
    }
}
