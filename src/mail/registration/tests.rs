//! The unit tests of the registration form: the announcement's example, every
//! kind of mistake with its line and rule, and the record written back.

use super::*;

/// The announcement's example, as printed but for its address, where
/// it prints an ellipsis (`our...@`), which no reply could go to (also
/// the admission tests' newcomer's form, under its own address and name).
pub(crate) const EXAMPLE: &str = "\
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
