//! The registration form of 1994 ("How to Announce Participation"): the body
//! of a mail with the subject `registration for KNOBELN`, parsed and
//! checked, and written back in the same format ([`render_record`], for the
//! LAP mail that lists all participants in "full registration format").
//!
//! The announcement says "Please use this format EXACTLY as shown, because
//! the registration will be processed automatically", so the parser is
//! strict about what matters (the five keys, spelled and cased as shown, no
//! space before the colon, one-line entries, two indented lines per member)
//! and tolerant only of what a mail client does on its own: CRLF line ends,
//! tabs or spaces as indentation, blank lines before, between and after the
//! entries, and a signature after a `-- ` line. A form with mistakes yields
//! *every* problem at once, each with its line and a sentence that quotes
//! the announcement's rule, so one answer mail is enough.
//!
//! Deliberately not here: whether the team may register (duplicates, limits
//! per organization, deadlines), the subject check, normalising names, and
//! any I/O. The mail address is checked for form only, never looked up.

use std::collections::HashMap;
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

const RULE_EXACT: &str = "\"Please use this format EXACTLY as shown, because the registration \
                          will be processed automatically.\"";
const RULE_NO_EXTRA: &str = "\"Don't put additional information into this mail; send separate \
                             mail instead, if necessary.\"";
const RULE_ORGANIZATION: &str = "\"put all of the 'Organization' entry on a single line (which \
                                 may be longer than 80 characters if necessary)\"";
const RULE_COLON: &str = "\"don't put spaces in front of the colons\"";
const RULE_TEAM_NAME: &str = "\"team-name\" can be any string that is a valid C identifier of \
                              at most 30 characters";
const RULE_MEMBERS: &str = "\"team-members\" should contain a two-line informal description \
                            of each member of the team";

/// Problems, collected in line order.
struct Problems(Vec<Problem>);

impl Problems {
    fn at(&mut self, line: usize, message: impl Into<String>) {
        self.0.push(Problem {
            line: Some(u32::try_from(line).unwrap_or(u32::MAX)),
            message: message.into(),
        });
    }
    fn whole(&mut self, message: impl Into<String>) {
        self.0.push(Problem {
            line: None,
            message: message.into(),
        });
    }
}

/// A `key: value` entry as found.
struct Entry<'a> {
    line: usize,
    value: &'a str,
    /// The indented lines after `team-members:` (line number, trimmed text).
    members: Vec<(usize, &'a str)>,
}

/// The part of a body [`parse_registration`] reads: up to the signature
/// line (`-- `), which is what a pending registration keeps.
pub fn form_text(body: &str) -> &str {
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "-- " || bare == "--" {
            break;
        }
        at += line.len();
    }
    &body[..at]
}

/// Parses and checks a registration form (the mail body). Every problem is
/// reported, not only the first.
pub fn parse_registration(body: &str) -> Result<Registration, Vec<Problem>> {
    let mut problems = Problems(Vec::new());

    // Lines with their 1-based numbers, CR stripped, up to the signature.
    let mut lines: Vec<(usize, &str)> = Vec::new();
    for (i, line) in body.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line == "-- " || line == "--" {
            break;
        }
        lines.push((i + 1, line));
    }
    if let Some((_, first)) = lines.first_mut() {
        *first = first.strip_prefix('\u{feff}').unwrap_or(first);
    }
    while lines.first().is_some_and(|(_, l)| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|(_, l)| l.trim().is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        problems.whole(format!(
            "the mail body is empty; it must hold the registration form of the announcement \
             (\"How to Announce Participation\"), starting with the line \
             `mail-address: ...`. {RULE_EXACT}"
        ));
        return Err(problems.0);
    }
    if lines.len() > MAX_LINES {
        problems.whole(format!(
            "the form has {} lines; a registration has at most {MAX_LINES}. {RULE_NO_EXTRA}",
            lines.len()
        ));
        return Err(problems.0);
    }
    let form_bytes: usize = lines.iter().map(|(_, l)| l.len() + 1).sum();
    if form_bytes > MAX_FORM_BYTES {
        problems.whole(format!(
            "the form has {form_bytes} bytes; a registration has at most {MAX_FORM_BYTES}. \
             {RULE_NO_EXTRA}"
        ));
        return Err(problems.0);
    }

    let mut entries: HashMap<&'static str, Entry<'_>> = HashMap::new();
    // The key whose entry the last key line opened (for continuation lines).
    let mut current: Option<&'static str> = None;

    for &(n, line) in &lines {
        if line.len() > MAX_LINE_BYTES {
            problems.at(
                n,
                format!(
                    "this line has {} bytes; a line may have at most {MAX_LINE_BYTES}",
                    line.len()
                ),
            );
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if line.trim() == "---" || line.trim() == "----" {
            problems.at(
                n,
                "remove the `---` line: in the announcement it only marks where the example \
                 mail begins and ends",
            );
            continue;
        }
        let indented = line.starts_with(char::is_whitespace);
        if indented {
            let text = line.trim();
            // An entry that was indented by mistake.
            if let Some(key) = key_of_indented(text) {
                problems.at(
                    n,
                    format!(
                        "`{key}:` must start at the beginning of the line, without spaces in \
                         front; only the member lines of `team-members:` are indented"
                    ),
                );
                current = handle_key_line(text, n, &mut entries, &mut problems);
                continue;
            }
            match current {
                Some("team-members") => {
                    if let Some(e) = entries.get_mut("team-members") {
                        e.members.push((n, text));
                    }
                }
                Some("Organization") => problems.at(
                    n,
                    format!(
                        "this indented line continues the Organization entry: \
                         {RULE_ORGANIZATION}"
                    ),
                ),
                Some(key) => problems.at(
                    n,
                    format!(
                        "this indented line continues the `{key}:` entry; put the whole entry \
                         on a single line (only `team-members:` is followed by indented lines)"
                    ),
                ),
                None => problems.at(
                    n,
                    "this line is indented, but only the member lines after `team-members:` \
                     are indented",
                ),
            }
            continue;
        }
        if !line.contains(':') {
            if current == Some("team-members") {
                problems.at(
                    n,
                    format!(
                        "indent each line of a member description by at least one space (or \
                         a tab), as in the announcement's example; {RULE_MEMBERS}"
                    ),
                );
                if let Some(e) = entries.get_mut("team-members") {
                    e.members.push((n, line.trim()));
                }
            } else {
                problems.at(
                    n,
                    format!("this line is not an entry of the form `key: value`. {RULE_NO_EXTRA}"),
                );
                current = None;
            }
            continue;
        }
        current = handle_key_line(line, n, &mut entries, &mut problems);
    }

    let mail_address = entries
        .get("mail-address")
        .and_then(|e| check_address(e.line, e.value, &mut problems));
    let preferences = entries
        .get("mail-preference")
        .and_then(|e| check_preferences(e.line, e.value, &mut problems));
    let team_name = entries
        .get("team-name")
        .and_then(|e| check_team_name(e.line, e.value, &mut problems));
    let organization = entries.get("Organization").and_then(|e| {
        if e.value.is_empty() {
            problems.at(
                e.line,
                "the Organization entry is empty: give the name of the institution the team \
                 is at (or something else sensible), with city and country/state",
            );
            None
        } else {
            Some(e.value.to_string())
        }
    });
    let members = entries
        .get("team-members")
        .and_then(|e| check_members(e, &mut problems));
    for key in KEYS {
        if !entries.contains_key(key) {
            problems.whole(format!(
                "the entry `{key}:` is missing; the form has the five entries mail-address, \
                 mail-preference, team-name, Organization and team-members. {RULE_EXACT}"
            ));
        }
    }

    problems.0.sort_by_key(|p| p.line.unwrap_or(u32::MAX));
    match (mail_address, preferences, team_name, organization, members) {
        (
            Some(mail_address),
            Some(preferences),
            Some(team_name),
            Some(organization),
            Some(members),
        ) if problems.0.is_empty() => Ok(Registration {
            mail_address,
            preferences,
            team_name,
            organization,
            members,
        }),
        _ => Err(problems.0),
    }
}

/// The key an indented line would be an entry of (exact key, then colon).
fn key_of_indented(text: &str) -> Option<&'static str> {
    let (key, _) = text.split_once(':')?;
    let key = key.trim_end();
    KEYS.into_iter().find(|k| *k == key)
}

/// Reads a `key: value` line (not indented); returns the key it opens.
fn handle_key_line<'a>(
    line: &'a str,
    n: usize,
    entries: &mut HashMap<&'static str, Entry<'a>>,
    problems: &mut Problems,
) -> Option<&'static str> {
    let (raw_key, value) = line.split_once(':').unwrap_or((line, ""));
    let key_text = raw_key.trim_end();
    let shown_key = quote(key_text);
    if key_text.len() != raw_key.len() {
        problems.at(
            n,
            format!("remove the space in front of the colon after `{shown_key}`: {RULE_COLON}"),
        );
    }
    let key = match KEYS.into_iter().find(|k| *k == key_text) {
        Some(k) => k,
        None => match KEYS
            .into_iter()
            .find(|k| k.eq_ignore_ascii_case(key_text) || loose_eq(k, key_text))
        {
            Some(k) => {
                problems.at(
                    n,
                    format!("write the key exactly as `{k}:` (not `{shown_key}:`). {RULE_EXACT}"),
                );
                k
            }
            None => {
                let hint = if ["to", "subject", "from", "cc"]
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(key_text))
                {
                    format!(" (`{shown_key}:` belongs in the header of the mail, not in its body)")
                } else {
                    String::new()
                };
                problems.at(
                    n,
                    format!(
                        "`{shown_key}:` is not an entry of the registration form{hint}; the \
                         entries are mail-address, mail-preference, team-name, Organization \
                         and team-members. {RULE_NO_EXTRA}"
                    ),
                );
                return None;
            }
        },
    };
    if let Some(first) = entries.get(key) {
        problems.at(
            n,
            format!(
                "the entry `{key}:` appears a second time (first in line {}); give each \
                 entry exactly once",
                first.line
            ),
        );
        // Later member lines still belong to the first entry.
        return if key == "team-members" {
            Some(key)
        } else {
            None
        };
    }
    let value = value.trim();
    if key == "team-members" && !value.is_empty() {
        problems.at(
            n,
            format!(
                "put nothing after `team-members:` on its line; each member follows on two \
                 indented lines of their own. {RULE_MEMBERS}"
            ),
        );
    }
    entries.insert(
        key,
        Entry {
            line: n,
            value,
            members: Vec::new(),
        },
    );
    Some(key)
}

/// `team_name` for `team-name`, `mail address` for `mail-address`, ...
fn loose_eq(key: &str, text: &str) -> bool {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect::<String>()
    };
    norm(key) == norm(text)
}

fn check_address(n: usize, value: &str, problems: &mut Problems) -> Option<String> {
    let rule = "it should be an internet domain style address like \
                `our.team@machine.domain.country`";
    let fail = |problems: &mut Problems, why: String| {
        problems.at(
            n,
            format!("the mail-address `{}` {why}; {rule}", quote(value)),
        );
        None
    };
    if value.is_empty() {
        problems.at(
            n,
            format!("the mail-address is empty: give the email address that identifies the team; {rule}"),
        );
        return None;
    }
    if value.contains('<') || value.contains('>') {
        return fail(
            problems,
            "has angle brackets: give only the bare address, without a name or `<>`".into(),
        );
    }
    if value.chars().any(char::is_whitespace) {
        return fail(problems, "contains spaces".into());
    }
    if value.chars().count() > MAX_ADDRESS_CHARS {
        return fail(
            problems,
            format!("is longer than {MAX_ADDRESS_CHARS} characters"),
        );
    }
    let Some((local, domain)) = value.rsplit_once('@') else {
        return fail(problems, "has no `@`".into());
    };
    if local.is_empty() || local.contains('@') {
        return fail(
            problems,
            "needs exactly one `@` with a name before it".into(),
        );
    }
    const LOCAL_SPECIALS: &str = ".!#$%&'*+/=?^_`{|}~-";
    if let Some(c) = local
        .chars()
        .find(|c| !c.is_ascii_alphanumeric() && !LOCAL_SPECIALS.contains(*c))
    {
        return fail(problems, format!("has the character `{c}` before the `@`"));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 {
        return fail(
            problems,
            format!("has no internet domain after the `@` (`{domain}` has no dot)"),
        );
    }
    for label in &labels {
        let ok = !label.is_empty()
            && label.len() <= 63
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !ok {
            return fail(
                problems,
                format!("has an invalid domain `{domain}` (letters, digits and `-` between dots)"),
            );
        }
    }
    let tld = labels[labels.len() - 1];
    if tld.chars().all(|c| c.is_ascii_digit()) {
        return fail(
            problems,
            "ends in a number: use the machine's domain name, not its IP address".into(),
        );
    }
    // One grammar: the address a reply will be built for passes the check
    // every reply passes (and the mail builder's own parse behind it).
    let address = format!("{local}@{}", domain.to_ascii_lowercase());
    if let Err(why) = crate::mail::message::check_answerable(&address) {
        return fail(problems, format!("cannot be written to: {why}"));
    }
    Some(address)
}

fn check_preferences(n: usize, value: &str, problems: &mut Problems) -> Option<Vec<Preference>> {
    let mut prefs = Vec::new();
    if value.is_empty() {
        return Some(prefs);
    }
    // Each kind of mistake is one problem, however often it occurs.
    let mut empty = false;
    let mut lowercase: Vec<(&str, Preference)> = Vec::new();
    let mut unseparated: Vec<&str> = Vec::new();
    let mut unknown: Vec<&str> = Vec::new();
    let is_declarator = |w: &str| {
        Preference::ALL
            .iter()
            .any(|p| p.as_str().eq_ignore_ascii_case(w))
    };
    for item in value.split(',') {
        let item = item.trim();
        if item.is_empty() {
            empty = true;
        } else if let Some(p) = Preference::parse(item) {
            if !prefs.contains(&p) {
                prefs.push(p);
            }
        } else if let Some(p) = Preference::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(item))
        {
            if !lowercase.iter().any(|(i, _)| *i == item) {
                lowercase.push((item, p));
            }
        } else if item.split_whitespace().count() > 1 && item.split_whitespace().all(is_declarator)
        {
            unseparated.push(item);
        } else if !unknown.contains(&item) {
            unknown.push(item);
        }
    }
    if empty {
        problems.at(
            n,
            "mail-preference has an empty item (two commas in a row, or a comma at an end); \
             it is a comma-separated list like `LAP,DGP,GRG,RSM`",
        );
    }
    if !lowercase.is_empty() {
        let given = lowercase
            .iter()
            .map(|(i, _)| format!("`{i}`"))
            .collect::<Vec<_>>();
        let meant = lowercase
            .iter()
            .map(|(_, p)| format!("`{p}`"))
            .collect::<Vec<_>>();
        let s = if given.len() == 1 { "" } else { "s" };
        problems.at(
            n,
            format!(
                "write the declarator{s} {} in all uppercase: {} (the announcement: \"a \
                 comma-separated list of some of the following declarators (in all \
                 uppercase)\")",
                given.join(", "),
                meant.join(", ")
            ),
        );
    }
    for item in &unseparated {
        problems.at(
            n,
            format!(
                "separate the declarators `{}` by commas, like `LAP,DGP,GRG,RSM`",
                quote(item)
            ),
        );
    }
    if !unknown.is_empty() {
        let shown: Vec<String> = unknown
            .iter()
            .take(5)
            .map(|i| format!("`{}`", quote(i)))
            .collect();
        let more = if unknown.len() > 5 { ", ..." } else { "" };
        let what = if unknown.len() == 1 {
            "is not a mail-preference declarator"
        } else {
            "are not mail-preference declarators"
        };
        let list = Preference::ALL.map(|p| p.as_str()).join(", ");
        problems.at(
            n,
            format!(
                "{}{more} {what}; the declarators are {list} (in all uppercase, separated \
                 by commas)",
                shown.join(", ")
            ),
        );
    }
    (!empty && lowercase.is_empty() && unseparated.is_empty() && unknown.is_empty())
        .then_some(prefs)
}

/// A `mail-preference` value checked as the registration form checks it
/// (the list after the colon; empty means none).
pub fn parse_preferences(value: &str) -> Result<Vec<Preference>, Vec<Problem>> {
    let mut problems = Problems(Vec::new());
    match check_preferences(1, value.trim(), &mut problems) {
        Some(p) => Ok(p),
        None => Err(problems.0),
    }
}

/// A mail address checked as the registration form checks `mail-address`;
/// the domain comes back lowercased.
pub fn parse_address(value: &str) -> Result<String, Vec<Problem>> {
    let mut problems = Problems(Vec::new());
    match check_address(1, value.trim(), &mut problems) {
        Some(a) => Ok(a),
        None => Err(problems.0),
    }
}

/// A registration record (as [`render_record`] writes it) with the entry
/// `key` set to `value` (`key:` alone when `value` is empty).
pub fn with_entry(record: &str, key: &str, value: &str) -> String {
    let line = if value.is_empty() {
        format!("{key}:")
    } else {
        format!("{key}: {value}")
    };
    let mut done = false;
    let mut out = String::with_capacity(record.len() + line.len());
    for l in record.split_inclusive('\n') {
        let bare = l.trim_end_matches(['\n', '\r']);
        if !done && bare.split(':').next() == Some(key) {
            out.push_str(&line);
            out.push_str(&l[bare.len()..]);
            done = true;
        } else {
            out.push_str(l);
        }
    }
    out
}

/// A value as shown in a message: at most 60 characters.
fn quote(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}...")
    }
}

fn check_team_name(n: usize, value: &str, problems: &mut Problems) -> Option<String> {
    let before = problems.0.len();
    if value.is_empty() {
        problems.at(
            n,
            format!(
                "the team-name is empty; {RULE_TEAM_NAME} and should be a funny name for the team"
            ),
        );
        return None;
    }
    let shown = quote(value);
    let chars = value.chars().count();
    if chars > MAX_TEAM_NAME_CHARS {
        problems.at(
            n,
            format!(
                "the team-name `{shown}` has {chars} characters, more than 30: {RULE_TEAM_NAME}"
            ),
        );
    }
    if value.chars().any(char::is_whitespace) {
        problems.at(
            n,
            format!(
                "the team-name `{shown}` contains spaces: \"It must in particular not contain \
                 any spaces\"; use `_` instead, e.g. `{}`",
                quote(&value.split_whitespace().collect::<Vec<_>>().join("_"))
            ),
        );
    }
    let bad: String = value
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_ascii_alphanumeric() && *c != '_')
        .fold(String::new(), |mut acc, c| {
            if !acc.contains(c) {
                acc.push(c);
            }
            acc
        });
    if !bad.is_empty() {
        problems.at(
            n,
            format!(
                "the team-name `{shown}` contains `{}`: {RULE_TEAM_NAME}, i.e. letters \
                 A-Z and a-z, digits and `_` only",
                quote(&bad)
            ),
        );
    }
    if value.starts_with(|c: char| c.is_ascii_digit()) {
        problems.at(
            n,
            format!("the team-name `{shown}` starts with a digit: {RULE_TEAM_NAME}, and a C identifier starts with a letter or `_`"),
        );
    }
    if is_c_keyword(value) {
        problems.at(
            n,
            format!(
                "the team-name `{shown}` is a keyword of C, not an identifier: {RULE_TEAM_NAME}"
            ),
        );
    }
    (problems.0.len() == before).then(|| value.to_string())
}

fn check_members(e: &Entry<'_>, problems: &mut Problems) -> Option<Vec<Member>> {
    let lines = &e.members;
    let count = lines.len();
    if count == 0 {
        problems.at(
            e.line,
            format!(
                "team-members has no member: {RULE_MEMBERS}, two lines each, indented, after \
                 the line `team-members:`; \"Team size should be anywhere between 1 and 10\""
            ),
        );
        return None;
    }
    let mut ok = true;
    if count % 2 == 1 {
        problems.at(
            e.line,
            format!(
                "team-members has {count} lines, an odd number: {RULE_MEMBERS} (exactly two \
                 lines per member: name, age, occupation; then the computer science and \
                 programming background)"
            ),
        );
        ok = false;
    }
    // More than MAX_MEMBERS is a warning in the acknowledgement
    // ([`Registration::warnings`]): "should be", not "must be".
    ok.then(|| {
        lines
            .chunks(2)
            .map(|pair| Member {
                line1: pair[0].1.to_string(),
                line2: pair[1].1.to_string(),
            })
            .collect()
    })
}

/// Whether `s` is a keyword of C89, C99, C11 or C23 (so not an identifier).
pub fn is_c_keyword(s: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        // C89
        "auto",
        "break",
        "case",
        "char",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "goto",
        "if",
        "int",
        "long",
        "register",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
        // C99
        "inline",
        "restrict",
        "_Bool",
        "_Complex",
        "_Imaginary",
        // C11
        "_Alignas",
        "_Alignof",
        "_Atomic",
        "_Generic",
        "_Noreturn",
        "_Static_assert",
        "_Thread_local",
        // C23
        "alignas",
        "alignof",
        "bool",
        "constexpr",
        "false",
        "nullptr",
        "static_assert",
        "thread_local",
        "true",
        "typeof",
        "typeof_unqual",
        "_BitInt",
        "_Decimal32",
        "_Decimal64",
        "_Decimal128",
    ];
    KEYWORDS.contains(&s)
}

/// The registration in the announcement's format (what a participant sends,
/// and what the LAP list shows): the five entries in the order of the
/// example, members indented by one space. `parse_registration` of the
/// result gives back the same registration.
pub fn render_record(r: &Registration) -> String {
    let prefs = r
        .preferences
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let mut out = String::new();
    out.push_str(&format!("mail-address: {}\n", r.mail_address));
    if prefs.is_empty() {
        out.push_str("mail-preference:\n");
    } else {
        out.push_str(&format!("mail-preference: {prefs}\n"));
    }
    out.push_str(&format!("team-name: {}\n", r.team_name));
    out.push_str(&format!("Organization: {}\n", r.organization));
    out.push_str("team-members:\n");
    for m in &r.members {
        out.push_str(&format!(" {}\n {}\n", m.line1, m.line2));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The announcement's example, as printed but for its address, where
    /// it prints an ellipsis (`our...@`), which no reply could go to.
    const EXAMPLE: &str = "\
mail-address: our.team@machine.domain.alfdkj
mail-preference: LAP,DGP,GRG,RSM
team-name: the_heavy_lords_of_knobeln
Organization: University of Northeast Sacrodata, Intellect City, Eggland
team-members:
 Joe Cool, 45, professional systems programmer,
 20-year-experienced programmer
 Jane More, 20, graduate student of computer science,
 hackeress fluent in 34 programming languages
 Mona Morn, 35, Professor of CS,
 hobby game strategy programmer
 Bill Neat, 24, undergraduate student of psychology,
 advanced beginner (will be my first C program!)
";

    fn problems(body: &str) -> Vec<Problem> {
        parse_registration(body).expect_err("problems expected")
    }

    /// A change to one line (1-based) of the example.
    #[derive(Debug, Clone, Copy)]
    enum Edit<'a> {
        Replace(usize, &'a str),
        Remove(usize),
        /// The new line gets this number.
        Insert(usize, &'a str),
    }

    fn edited(edit: Edit<'_>) -> String {
        let mut lines: Vec<&str> = EXAMPLE.lines().collect();
        match edit {
            Edit::Replace(n, s) => lines[n - 1] = s,
            Edit::Remove(n) => {
                lines.remove(n - 1);
            }
            Edit::Insert(n, s) => lines.insert(n - 1, s),
        }
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Issue 35: one address grammar. An address the form took but no
    /// reply could be written to (two dots, a 65-character local part, the
    /// announcement's `our...@` ellipsis) is a problem of the form.
    #[test]
    fn the_form_takes_only_addresses_a_reply_can_go_to() {
        for bad in [
            "a..b@x.example",
            ".a@x.example",
            "a.@x.example",
            &format!("{}@x.example", "a".repeat(65)),
            "our...@machine.domain.alfdkj",
        ] {
            let form = EXAMPLE.replace("our.team@machine.domain.alfdkj", bad);
            let ps = problems(&form);
            assert_eq!(ps.len(), 1, "{bad}: {ps:#?}");
            assert!(ps[0].message.contains("mail-address"), "{ps:#?}");
            assert!(
                crate::mail::message::check_answerable(bad).is_err(),
                "{bad}"
            );
        }
        let ok = EXAMPLE.replace("our.team@", "a.b+tag@");
        assert!(parse_registration(&ok).is_ok());
    }

    fn assert_one(body: &str, line: Option<u32>, needle: &str) {
        let ps = problems(body);
        assert_eq!(ps.len(), 1, "{ps:#?}");
        assert_eq!(ps[0].line, line, "{ps:#?}");
        assert!(ps[0].message.contains(needle), "{ps:#?}");
    }

    /// The announcement's example with a real address: its `our...@` is an
    /// ellipsis, not an address a reply could be written to.
    #[test]
    fn announcement_example_is_accepted() {
        let r = parse_registration(EXAMPLE).unwrap();
        assert_eq!(r.mail_address, "our.team@machine.domain.alfdkj");
        assert_eq!(
            r.preferences,
            vec![
                Preference::LAP,
                Preference::DGP,
                Preference::GRG,
                Preference::RSM
            ]
        );
        assert_eq!(r.team_name, "the_heavy_lords_of_knobeln");
        assert_eq!(
            r.organization,
            "University of Northeast Sacrodata, Intellect City, Eggland"
        );
        assert_eq!(r.members.len(), 4);
        assert_eq!(
            r.members[3].line1,
            "Bill Neat, 24, undergraduate student of psychology,"
        );
        assert_eq!(
            r.members[3].line2,
            "advanced beginner (will be my first C program!)"
        );
    }

    #[test]
    fn tolerated_variations() {
        // CRLF, tabs, blank lines around and between, a signature, keys in
        // another order, no space after a colon, spaces around commas,
        // duplicate declarators, an upper-case domain.
        let body = "\r\n\r\nteam-name:the_heavy_lords_of_knobeln\r\n\
                    mail-preference: LAP , DGP,LAP\r\n\
                    mail-address: our.team@Machine.Domain.EDU\r\n\
                    \r\n\
                    Organization: Universität Karlsruhe, Karlsruhe, Germany\r\n\
                    team-members:\r\n\
                    \tJoe Cool, 45, professional systems programmer,\r\n\
                    \t\t20-year-experienced programmer\r\n\
                    \r\n\r\n-- \r\nJoe Cool\r\nteam-name: ignored\r\n";
        let r = parse_registration(body).unwrap();
        assert_eq!(r.mail_address, "our.team@machine.domain.edu");
        assert_eq!(r.preferences, vec![Preference::LAP, Preference::DGP]);
        assert_eq!(r.members.len(), 1);
        assert_eq!(r.members[0].line2, "20-year-experienced programmer");
        assert_eq!(r.organization, "Universität Karlsruhe, Karlsruhe, Germany");
    }

    #[test]
    fn empty_preferences_are_allowed() {
        let r = parse_registration(&edited(Edit::Replace(2, "mail-preference:"))).unwrap();
        assert!(r.preferences.is_empty());
        assert_eq!(parse_registration(&render_record(&r)).unwrap(), r);
    }

    #[test]
    fn round_trip() {
        let r = parse_registration(EXAMPLE).unwrap();
        let text = render_record(&r);
        assert_eq!(text, EXAMPLE);
        assert_eq!(parse_registration(&text).unwrap(), r);
    }

    #[test]
    fn each_problem_alone() {
        use Edit::{Insert, Remove, Replace};
        // (change, the line the problem names, a substring of its message)
        let cases: &[(Edit<'_>, Option<u32>, &str)] = &[
            (
                Replace(1, "mail-address : our@x.example"),
                Some(1),
                "don't put spaces in front of the colons",
            ),
            (
                Replace(1, "Mail-Address: our@x.example"),
                Some(1),
                "exactly as `mail-address:`",
            ),
            (
                Replace(3, "team_name: lords"),
                Some(3),
                "exactly as `team-name:`",
            ),
            (
                Replace(4, "organization: Uni"),
                Some(4),
                "exactly as `Organization:`",
            ),
            (
                Replace(1, "mail-address: our team@x.example"),
                Some(1),
                "contains spaces",
            ),
            (
                Replace(1, "mail-address: ourteam@localhost"),
                Some(1),
                "no dot",
            ),
            (Replace(1, "mail-address: ourteam"), Some(1), "has no `@`"),
            (
                Replace(1, "mail-address: a@b@x.example"),
                Some(1),
                "exactly one `@`",
            ),
            (
                Replace(1, "mail-address: a,b@x.example"),
                Some(1),
                "the character `,`",
            ),
            (
                Replace(1, "mail-address: Joe <joe@x.example>"),
                Some(1),
                "angle brackets",
            ),
            (
                Replace(1, "mail-address: joe@x..example"),
                Some(1),
                "invalid domain",
            ),
            (
                Replace(1, "mail-address: joe@10.0.0.1"),
                Some(1),
                "IP address",
            ),
            (
                Replace(1, "mail-address:"),
                Some(1),
                "mail-address is empty",
            ),
            (
                Replace(2, "mail-preference: LAP,dgp"),
                Some(2),
                "in all uppercase: `DGP`",
            ),
            (
                Replace(2, "mail-preference: LAP,XYZ"),
                Some(2),
                "`XYZ` is not a mail-preference declarator",
            ),
            (
                Replace(2, "mail-preference: LAP DGP"),
                Some(2),
                "separate the declarators",
            ),
            (
                Replace(2, "mail-preference: LAP,,DGP"),
                Some(2),
                "empty item",
            ),
            (
                Replace(3, "team-name: the heavy lords"),
                Some(3),
                "must in particular not contain any spaces",
            ),
            (
                Replace(3, "team-name: the_heavy_lords_of_knobeln_and_more_x"),
                Some(3),
                "more than 30",
            ),
            (
                Replace(3, "team-name: 4lords"),
                Some(3),
                "starts with a digit",
            ),
            (
                Replace(3, "team-name: lords-of-knobeln"),
                Some(3),
                "contains `-`",
            ),
            (Replace(3, "team-name: while"), Some(3), "keyword"),
            (Replace(3, "team-name: _Bool"), Some(3), "keyword"),
            (Replace(3, "team-name:"), Some(3), "team-name is empty"),
            (Remove(3), None, "`team-name:` is missing"),
            (Remove(4), None, "`Organization:` is missing"),
            (
                Replace(4, "Organization:"),
                Some(4),
                "Organization entry is empty",
            ),
            (
                Insert(5, "  Intellect City, Eggland"),
                Some(5),
                "put all of the 'Organization' entry on a single line",
            ),
            (
                Insert(4, "  more"),
                Some(4),
                "continues the `team-name:` entry",
            ),
            (
                Replace(5, "team-members: 4"),
                Some(5),
                "put nothing after `team-members:`",
            ),
            (Remove(6), Some(5), "odd number"),
            (
                Replace(6, "Joe Cool, 45, professional systems programmer,"),
                Some(6),
                "indent each line",
            ),
            (Insert(1, "---"), Some(1), "remove the `---` line"),
            (Insert(1, " indented"), Some(1), "only the member lines"),
            (
                Insert(5, "Phone: 555 1234"),
                Some(5),
                "Don't put additional information into this mail",
            ),
            (
                Insert(1, "Subject: registration for KNOBELN"),
                Some(1),
                "belongs in the header",
            ),
            (
                Insert(5, "just a remark"),
                Some(5),
                "not an entry of the form",
            ),
            (
                Insert(14, "team-name: again"),
                Some(14),
                "appears a second time (first in line 3)",
            ),
        ];
        for &(edit, line, needle) in cases {
            let ps = problems(&edited(edit));
            assert_eq!(ps.len(), 1, "{edit:?}: {ps:#?}");
            assert_eq!(ps[0].line, line, "{edit:?}: {ps:#?}");
            assert!(ps[0].message.contains(needle), "{edit:?}: {ps:#?}");
        }
        // An entry indented by mistake is read as the entry, and said so.
        let ps = problems(&edited(Replace(3, " team-name: lords")));
        assert_eq!(ps.len(), 1, "{ps:#?}");
        assert!(ps[0]
            .message
            .contains("must start at the beginning of the line"));
    }

    #[test]
    fn organization_on_two_lines() {
        let body = EXAMPLE.replace(
            "Organization: University of Northeast Sacrodata, Intellect City, Eggland\n",
            "Organization: University of Northeast Sacrodata,\n  Intellect City, Eggland\n",
        );
        assert_one(
            &body,
            Some(5),
            "put all of the 'Organization' entry on a single line",
        );
    }

    #[test]
    fn duplicate_and_continued_entries() {
        let body = format!("{EXAMPLE}team-name: second\n");
        assert_one(&body, Some(14), "appears a second time (first in line 3)");
        let body = EXAMPLE.replace(
            "team-name: the_heavy_lords_of_knobeln\n",
            "team-name: a\n  b\n",
        );
        assert_one(&body, Some(4), "continues the `team-name:` entry");
        let body = format!(" indented first line\n{EXAMPLE}");
        assert_one(&body, Some(1), "only the member lines");
    }

    #[test]
    fn member_counts() {
        let mut body = String::from(
            "mail-address: a@b.example\nmail-preference:\nteam-name: t\nOrganization: O\nteam-members:\n",
        );
        assert_one(&body, Some(5), "has no member");
        for i in 0..11 {
            body.push_str(&format!(" member {i}\n background {i}\n"));
        }
        // Eleven members: registered, with a warning (a "should" rule).
        let eleven = parse_registration(&body).expect("more than ten is not refused");
        assert_eq!(eleven.members.len(), 11);
        assert_eq!(eleven.warnings().len(), 1);
        assert!(eleven.warnings()[0].contains("has 11 members"));
        let ten: String = body
            .lines()
            .take(5 + 20)
            .map(|l| format!("{l}\n"))
            .collect();
        let ten = parse_registration(&ten).unwrap();
        assert_eq!(ten.members.len(), 10);
        assert!(ten.warnings().is_empty());
    }

    #[test]
    fn several_problems_at_once() {
        let body = "mail-address : nobody\n\
                    mail-preference: lap,XYZ\n\
                    team-name: the heavy lords\n\
                    Organization: Uni\n  Karlsruhe\n\
                    Phone: 1234\n\
                    team-members:\n Joe\n";
        let ps = problems(body);
        let expect = [
            (Some(1), "don't put spaces in front of the colons"),
            (Some(1), "has no `@`"),
            (Some(2), "in all uppercase: `LAP`"),
            (Some(2), "`XYZ` is not"),
            (Some(3), "not contain any spaces"),
            (Some(5), "single line"),
            (Some(6), "Don't put additional information"),
            (Some(7), "odd number"),
        ];
        for (line, needle) in expect {
            assert!(
                ps.iter()
                    .any(|p| p.line == line && p.message.contains(needle)),
                "{line:?} {needle:?} not in {ps:#?}"
            );
        }
        assert_eq!(ps.len(), expect.len(), "{ps:#?}");
        // In line order.
        assert!(ps.windows(2).all(|w| w[0].line <= w[1].line));
    }

    #[test]
    fn empty_and_missing() {
        let ps = problems("\n\n-- \nsig\n");
        assert_eq!(ps.len(), 1);
        assert!(ps[0].message.contains("body is empty"));
        let ps = problems("hello, please register us\n");
        // The stray line, and all five entries missing.
        assert_eq!(ps.len(), 6, "{ps:#?}");
    }

    #[test]
    fn size_caps() {
        let body: String = (0..MAX_LINES + 1).map(|i| format!(" line {i}\n")).collect();
        assert_one(&body, None, "at most 200");
        let long = "x".repeat(MAX_LINE_BYTES + 1);
        let org = format!("Organization: {long}");
        let body = edited(Edit::Replace(4, &org));
        let ps = problems(&body);
        assert!(ps
            .iter()
            .any(|p| p.line == Some(4) && p.message.contains("at most 4000")));
    }

    #[test]
    fn one_problem_per_kind_of_preference_mistake() {
        let ps = problems(&edited(Edit::Replace(
            2,
            "mail-preference: LAP,,,dgp,grg,FOO,BAR,,FOO",
        )));
        let shown: Vec<String> = ps.iter().map(|p| p.to_string()).collect();
        assert_eq!(shown.len(), 3, "{shown:#?}");
        assert!(shown[0].contains("empty item"));
        assert!(shown[1].contains("declarators `dgp`, `grg` in all uppercase: `DGP`, `GRG`"));
        assert!(shown[2].contains("`FOO`, `BAR` are not mail-preference declarators"));
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        let name = format!("team-name: {}", "x y".repeat(1000));
        let ps = problems(&edited(Edit::Replace(3, &name)));
        assert!(ps.iter().all(|p| p.message.len() < 400), "{ps:#?}");
    }

    #[test]
    fn keywords_and_preferences() {
        for k in [
            "int",
            "while",
            "inline",
            "_Atomic",
            "constexpr",
            "nullptr",
            "typeof_unqual",
        ] {
            assert!(is_c_keyword(k), "{k}");
        }
        for k in ["main", "Int", "knobeln", "log2", "asm_", "_"] {
            assert!(!is_c_keyword(k), "{k}");
        }
        for p in Preference::ALL {
            assert_eq!(Preference::parse(p.as_str()), Some(p));
        }
        assert_eq!(Preference::parse("lap"), None);
        assert_eq!(serde_json::to_string(&Preference::GRG).unwrap(), "\"GRG\"");
    }
}
