//! `knobeln demo`: a complete contest on the embedded default (spool
//! transport, SQLite), from nothing: a field of teams registers by mail,
//! each sends its strategy by mail, the server compiles them, runs the
//! contest and the Evolution, and writes every mail it sends into the spool.
//!
//! The strategies are real ones written for the project
//! (`src/demo/strategies/`): cooperators, exploiters, adaptive and random
//! ones, and one that breaks a rule in every game. Each family has four
//! variants (`#define VARIANT n`), so 14 families make up to 56 teams.
//!
//! This module only plays the participants' side (writing mails, reading the
//! acknowledgements); everything else goes through the server's own paths.

pub mod bots;

use std::path::Path;

use crate::mail::registration::Preference;

/// The strategy families: (name, source with `TEAM`/`AUTH` placeholders).
pub const FAMILIES: &[(&str, &str)] = &[
    ("baiter", include_str!("strategies/baiter.c")),
    ("bandit", include_str!("strategies/bandit.c")),
    ("clan", include_str!("strategies/clan.c")),
    ("dice", include_str!("strategies/dice.c")),
    ("doubler", include_str!("strategies/doubler.c")),
    ("fairshare", include_str!("strategies/fairshare.c")),
    ("frequency", include_str!("strategies/frequency.c")),
    ("leapfrog", include_str!("strategies/leapfrog.c")),
    ("logdice", include_str!("strategies/logdice.c")),
    ("mirror", include_str!("strategies/mirror.c")),
    ("rulebreaker", include_str!("strategies/rulebreaker.c")),
    ("seesaw", include_str!("strategies/seesaw.c")),
    ("titfortat", include_str!("strategies/titfortat.c")),
    ("undercut", include_str!("strategies/undercut.c")),
];

/// Organizations of the demo field (city, country), for the results article.
const ORGANIZATIONS: &[&str] = &[
    "University of Karlsruhe, Karlsruhe, Germany",
    "University of Northeast Sacrodata, Intellect City, Eggland",
    "Technical University of Delft, Delft, Netherlands",
    "ETH Zurich, Zurich, Switzerland",
    "University of Toronto, Toronto, Canada",
    "Carnegie Mellon University, Pittsburgh, USA",
    "University of Oslo, Oslo, Norway",
    "Kyoto University, Kyoto, Japan",
    "University of Melbourne, Melbourne, Australia",
    "Charles University, Prague, Czech Republic",
];

const PREFERENCES: &[&[Preference]] = &[
    &[Preference::LAP, Preference::RSM],
    &[Preference::DGP, Preference::GRR],
    &[Preference::GRP, Preference::GRG],
    &[Preference::LGP, Preference::GRR, Preference::RSM],
    &[
        Preference::LAP,
        Preference::LGP,
        Preference::DGP,
        Preference::GRP,
        Preference::GRG,
        Preference::GRR,
        Preference::RSM,
    ],
    &[],
];

/// One demo team.
#[derive(Debug, Clone)]
pub struct DemoTeam {
    pub name: String,
    pub address: String,
    pub family: &'static str,
    pub variant: usize,
    pub organization: &'static str,
    pub preferences: &'static [Preference],
}

/// The demo field: `n` teams, families in turn, variants 0..3. Exactly one
/// team of the rule-breaking family takes part.
pub fn field(n: usize) -> Vec<DemoTeam> {
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < n && i < FAMILIES.len() * 4 {
        let (family, _) = FAMILIES[i % FAMILIES.len()];
        let variant = i / FAMILIES.len();
        i += 1;
        if family == "rulebreaker" && variant > 0 {
            continue;
        }
        let name = format!("{family}_{variant}");
        let k = out.len();
        out.push(DemoTeam {
            address: format!("{name}@participants.example"),
            name,
            family,
            variant,
            organization: ORGANIZATIONS[k % ORGANIZATIONS.len()],
            preferences: PREFERENCES[k % PREFERENCES.len()],
        });
    }
    out
}

/// The registration mail of a team (RFC 5322 text).
pub fn registration_mail(team: &DemoTeam, contest_address: &str, n: usize) -> String {
    let prefs: Vec<&str> = team.preferences.iter().map(|p| p.as_str()).collect();
    format!(
        "From: {name} <{addr}>\r\nTo: {contest_address}\r\nSubject: registration for KNOBELN\r\n\
         Message-ID: <demo-registration-{n}@participants.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n\
         mail-address: {addr}\r\nmail-preference: {prefs}\r\nteam-name: {name}\r\n\
         Organization: {org}\r\nteam-members:\r\n A. Demo, 30, strategy writer for the {family} family,\r\n \
         writes C since 1994\r\n",
        name = team.name,
        addr = team.address,
        prefs = prefs.join(","),
        org = team.organization,
        family = team.family,
    )
}

/// The strategy source of a team, with its header.
pub fn strategy_source(team: &DemoTeam, auth: &str) -> String {
    let (_, src) = FAMILIES
        .iter()
        .find(|(f, _)| *f == team.family)
        .expect("known family");
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        let l = if line.trim_start().starts_with("#define VARIANT") {
            format!("#define VARIANT {}", team.variant)
        } else if line.contains("<<FROM>>") {
            format!(" <<FROM>> {} {auth}", team.name)
        } else {
            line.to_string()
        };
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// The "please compile" mail of a team.
pub fn compile_mail(team: &DemoTeam, auth: &str, contest_address: &str, n: usize) -> String {
    format!(
        "From: {name} <{addr}>\r\nTo: {contest_address}\r\nSubject: please compile\r\n\
         Message-ID: <demo-compile-{n}@participants.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{src}",
        name = team.name,
        addr = team.address,
        src = strategy_source(team, auth).replace('\n', "\r\n"),
    )
}

/// The auth string in an acknowledgement's text ("your authentification
/// string is X").
pub fn auth_in(body: &str) -> Option<String> {
    let flat = body.replace("\r\n", "\n");
    let at = flat.find("authentification string is ")? + "authentification string is ".len();
    flat[at..].split_whitespace().next().map(str::to_string)
}

/// Drops a mail file into the spool's `incoming/new/` (maildir style:
/// written into `tmp/`, then moved).
pub fn drop_mail(spool: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let tmp = spool.join("incoming/tmp").join(name);
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, spool.join("incoming/new").join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_has_one_rule_breaker_and_distinct_names() {
        let f = field(48);
        assert_eq!(f.len(), 48);
        assert_eq!(f.iter().filter(|t| t.family == "rulebreaker").count(), 1);
        let mut names: Vec<&str> = f.iter().map(|t| t.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 48);
    }

    #[test]
    fn sources_carry_the_header_and_the_variant() {
        let t = &field(20)[15];
        let s = strategy_source(t, "secret");
        assert!(s.contains(&format!(" <<FROM>> {} secret", t.name)));
        assert!(s.contains(&format!("#define VARIANT {}", t.variant)));
        assert!(!s.contains("TEAM AUTH"));
    }

    #[test]
    fn the_auth_string_is_read_from_the_acknowledgement() {
        assert_eq!(
            auth_in("accepted and your\nauthentification string is abc123\n\nmore").as_deref(),
            Some("abc123")
        );
    }
}
