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
//!
//! This file finds the entries in the form (keys, order, indentation,
//! duplicates, what is missing) and writes the record back; `form.rs`
//! holds the form's limits, keys and types and the problems' wording;
//! `entries` checks each entry's value; the tests are in `tests.rs`.

use std::collections::HashMap;

mod entries;
mod form;

use entries::{check_address, check_members, check_preferences, check_team_name};
pub use entries::{is_c_keyword, parse_address, parse_preferences};
use form::{
    quote, Entry, Problems, RULE_COLON, RULE_EXACT, RULE_MEMBERS, RULE_NO_EXTRA, RULE_ORGANIZATION,
};
pub use form::{
    Member, Preference, Problem, Registration, KEYS, MAX_ADDRESS_CHARS, MAX_FORM_BYTES, MAX_LINES,
    MAX_LINE_BYTES, MAX_MEMBERS, MAX_TEAM_NAME_CHARS, MIN_MEMBERS,
};

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
pub(crate) mod tests;
