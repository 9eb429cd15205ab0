//! The checks of the form's entries one by one: the mail address (form
//! only, never looked up), the mail preferences, the team name (a C
//! identifier that is no keyword) and the members' two-line descriptions;
//! also the checks of a single address or preference list that commands
//! other than the registration reuse ([`parse_address`],
//! [`parse_preferences`]).
//!
//! Not here: finding the entries in the form, their order, duplicates and
//! missing ones ([`super::parse_registration`]), and any I/O.

use super::form::{
    quote, Entry, Member, Preference, Problem, Problems, MAX_ADDRESS_CHARS, MAX_TEAM_NAME_CHARS,
    RULE_MEMBERS, RULE_TEAM_NAME,
};

pub(super) fn check_address(n: usize, value: &str, problems: &mut Problems) -> Option<String> {
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

pub(super) fn check_preferences(
    n: usize,
    value: &str,
    problems: &mut Problems,
) -> Option<Vec<Preference>> {
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

pub(super) fn check_team_name(n: usize, value: &str, problems: &mut Problems) -> Option<String> {
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

pub(super) fn check_members(e: &Entry<'_>, problems: &mut Problems) -> Option<Vec<Member>> {
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
