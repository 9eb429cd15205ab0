//! Subject lines: reading them as commands are matched (reply and forward
//! prefixes removed, blanks collapsed, lowercase) and writing a reply's
//! subject in the contest's words. Which command a subject asks for is the
//! dispatcher's ([`super::classify`]).

use crate::config::Config;

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

/// A reply's subject in this contest's words: the commands write KNOBELN's
/// (`KNOBELN registration: not accepted`); in a bot contest the leading
/// word is the contest's name (`Morabaraba 2014 registration: not
/// accepted`), so a participant never meets the name of another contest.
pub fn contest_subject(config: &Config, subject: String) -> String {
    // KNOBELN's own, and a subject already built from the contest's name
    // (which may itself begin with "KNOBELN"), stay as they are.
    if config.contest.discipline.family().bots().is_none()
        || subject.starts_with(&config.contest.name)
    {
        return subject;
    }
    match subject.strip_prefix("KNOBELN") {
        Some(rest) if rest.starts_with([' ', ':']) => format!("{}{rest}", config.contest.name),
        _ => subject,
    }
}
