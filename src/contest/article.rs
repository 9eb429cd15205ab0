//! The final results article, in the style of the 1994 posting: a Usenet
//! article for rec.games.misc and misc.misc (headers, then the body) with an
//! introduction, the winners of the contest, the winners of the Knobeln
//! Evolution, the disqualified teams and every group of every round.
//!
//! [`article`] is a pure function of its input: it reads no clock (the
//! date is [`ArticleInput::now`]) and no store. Every line, headers
//! included, is at most [`WIDTH`] characters: long organizations and team
//! names are wrapped within their columns, long header values are folded.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::engine::results::{Placed, Results, RoundResult};

/// No line of the article is longer than this (in characters).
pub const WIDTH: usize = 76;

/// The newsgroups the article is posted to.
pub const NEWSGROUPS: &str = "rec.games.misc,misc.misc";
/// Where follow-ups go.
pub const FOLLOWUP_TO: &str = "rec.games.misc";
/// The subject line.
pub const SUBJECT: &str = "Results of the International KNOBELN contest";

/// Everything the article is made of.
pub struct ArticleInput<'a> {
    pub results: &'a Results,
    /// What is known about the teams (from their registrations); a team of
    /// the results missing here has an unknown organization.
    pub teams: &'a [TeamInfo],
    /// E.g. "International KNOBELN contest".
    pub contest_name: &'a str,
    /// The contest's mail address (the article's `From:`).
    pub contest_address: &'a str,
    /// The organizer, named in `From:` and the signature.
    pub organizer_name: &'a str,
    /// The article's date, also given as the contest's date.
    pub now: chrono::DateTime<chrono::Utc>,
}

/// A team as its registration describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamInfo {
    pub name: String,
    /// The `Organization` line of the registration, e.g. "University of X,
    /// Intellect City, Eggland"; "unknown" when there is none.
    pub organization: String,
    /// Number of team members (0 when unknown).
    pub members: usize,
}

/// The country of an organization: its last comma-separated part, trimmed
/// ("University of X, Intellect City, Eggland" gives "Eggland").
pub fn country_of(organization: &str) -> String {
    organization
        .rsplit(',')
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Points as the article shows them (see [`crate::tables::facts::points_text`]).
pub use crate::tables::facts::points_text;

/// The whole article: headers, an empty line, the body, the signature.
pub fn article(input: &ArticleInput) -> String {
    let r = input.results;
    let teams = TeamIndex::new(input.teams);
    let mut out = String::new();

    // ------------------------------------------------------------ headers
    header(&mut out, "Newsgroups", NEWSGROUPS);
    header(&mut out, "Subject", SUBJECT);
    let from = if clean(input.organizer_name).is_empty() {
        clean(input.contest_address)
    } else {
        format!(
            "{} ({})",
            clean(input.contest_address),
            clean(input.organizer_name).replace(['(', ')'], "")
        )
    };
    header(&mut out, "From", &from);
    header(&mut out, "Organization", &clean(input.contest_name));
    header(&mut out, "Followup-To", FOLLOWUP_TO);
    header(&mut out, "Date", &input.now.to_rfc2822());
    out.push('\n');

    // ------------------------------------------------------- introduction
    let title = format!("Results of the {}", clean(input.contest_name));
    centered_banner(&mut out, &title);
    out.push('\n');

    let participants = participants(r);
    let n = participants.len();
    let mut countries: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut unknown = 0;
    let mut people = 0;
    let mut people_known = true;
    for t in &participants {
        let info = teams.get(t);
        let country = info
            .map(|i| country_of(&i.organization))
            .unwrap_or_default();
        let country = clean(&country);
        if country.is_empty() || country.eq_ignore_ascii_case("unknown") {
            unknown += 1;
        } else if seen.insert(country.to_lowercase()) {
            countries.push(country);
        }
        match info.map(|i| i.members) {
            Some(m) if m > 0 => people += m,
            _ => people_known = false,
        }
    }
    countries.sort_by_key(|c| c.to_lowercase());
    let mut intro = format!(
        "The {} took place on {}. ",
        clean(input.contest_name),
        input.now.format("%A, %B %-d, %Y")
    );
    let team_words = if people_known && people > 0 {
        format!("{} ({} people)", plural(n, "team", "teams"), people)
    } else {
        plural(n, "team", "teams")
    };
    match (countries.len(), unknown) {
        (0, _) => {
            let _ = write!(intro, "{team_words} took part.");
        }
        (m, 0) => {
            let _ = write!(
                intro,
                "{team_words} from {} took part: {}.",
                plural(m, "country", "countries"),
                countries.join(", ")
            );
        }
        (m, u) => {
            let _ = write!(
                intro,
                "{team_words} took part, from {} ({}) and {} of unknown origin.",
                plural(m, "country", "countries"),
                countries.join(", "),
                plural(u, "team", "teams")
            );
        }
    }
    if !r.rejected.is_empty() {
        let _ = write!(
            intro,
            " {} did not pass the compile checks.",
            plural(
                r.rejected.len(),
                "further submission",
                "further submissions"
            )
        );
    }
    paragraph(&mut out, &intro);
    paragraph(
        &mut out,
        "The game: in every throw both players choose a number at the same \
         time, and the higher number wins floor(log2(N)) points, unless it is \
         more than twice the lower one (then the lower number wins); each \
         player must throw non-decreasing series of a minimum length. The \
         contest: in groups of at most 41 strategies every strategy played \
         one game against every other one and against itself, and the better \
         half of every group advanced to the next round, until one final \
         group was left.",
    );
    let final_size = r
        .rounds
        .iter()
        .find(|rr| rr.is_final)
        .map(|rr| rr.groups.iter().map(|g| g.members.len()).sum::<usize>());
    let mut course = format!(
        "The contest took {}",
        plural(r.rounds.len(), "round", "rounds")
    );
    match final_size {
        Some(s) => {
            let _ = write!(
                course,
                "; {} played in the final group.",
                plural(s, "team", "teams")
            );
        }
        None => course.push('.'),
    }
    let _ = write!(course, " The tournament seed was {}.", r.seed);
    paragraph(&mut out, &course);

    // ------------------------------------------------------------ winners
    section(&mut out, "The winners of the International KNOBELN contest");
    if r.winners.is_empty() {
        paragraph(
            &mut out,
            "There is no final ranking: the final round has not finished.",
        );
    } else {
        winners_table(&mut out, &r.winners, &teams);
        out.push('\n');
    }

    // ---------------------------------------------------------- evolution
    section(&mut out, "The winners of Knobeln Evolution");
    evolution(&mut out, r);

    // ------------------------------------------------------- disqualified
    section(&mut out, "Disqualified teams");
    disqualified(&mut out, r);

    // ------------------------------------------------------------- rounds
    section(&mut out, "Group results of every round");
    for rr in &r.rounds {
        round(&mut out, rr, r.rounds.len());
    }

    // ---------------------------------------------------------- signature
    out.push_str("Thanks to all participants!\n\n-- \n");
    let sig = if clean(input.organizer_name).is_empty() {
        clean(input.contest_address)
    } else {
        format!(
            "{} <{}>",
            clean(input.organizer_name),
            clean(input.contest_address)
        )
    };
    for l in wrap(&sig, WIDTH) {
        let _ = writeln!(out, "{l}");
    }
    if clean(input.contest_name) != clean(input.organizer_name) {
        for l in wrap(&clean(input.contest_name), WIDTH) {
            let _ = writeln!(out, "{l}");
        }
    }
    out
}

// ---------------------------------------------------------------- sections

fn winners_table(out: &mut String, winners: &[Placed], teams: &TeamIndex) {
    let orgs: Vec<String> = winners
        .iter()
        .map(|w| {
            teams
                .get(&w.team)
                .map(|i| clean(&i.organization))
                .filter(|o| !o.is_empty())
                .unwrap_or_else(|| "unknown".to_string())
        })
        .collect();
    // Without a single known organization the column says nothing.
    let with_orgs = orgs.iter().any(|o| !o.eq_ignore_ascii_case("unknown"));
    let rows: Vec<Vec<String>> = winners
        .iter()
        .zip(orgs)
        .map(|(w, org)| {
            let mut row = vec![format!("{}.", w.place), clean(&w.team)];
            if with_orgs {
                row.push(org);
            }
            row.push(points_text(w.points));
            row
        })
        .collect();
    let mut cols = vec![
        Col::new("Place", Align::Right),
        Col::new("Team", Align::Left),
    ];
    if with_orgs {
        cols.push(Col::new("Organization", Align::Left));
    }
    cols.push(Col::new("Points", Align::Right));
    let flexible: &[usize] = if with_orgs { &[2, 1] } else { &[1] };
    table(out, 2, &cols, &rows, flexible);
}

fn evolution(out: &mut String, r: &Results) {
    let Some(e) = &r.evolution else {
        paragraph(
            out,
            "There was no Knobeln Evolution: no strategy was ranked in the final round.",
        );
        return;
    };
    let strategies = e.ranking.len() + e.unranked.len();
    paragraph(
        out,
        &format!(
            "In the Knobeln Evolution the {} of the final round started with \
             {} each, {} in all. In every generation each exemplar plays every \
             other one, with the payoffs of the final round's games, and each \
             strategy's share of all points sets its number of exemplars in the \
             next generation.",
            plural(strategies, "strategy", "strategies"),
            plural(e.exemplars_per_strategy as usize, "exemplar", "exemplars"),
            e.population
        ),
    );
    let facts = crate::tables::facts::evolution_facts(e);
    paragraph(out, &facts.end);
    if facts.rows.is_empty() {
        paragraph(out, "No strategy survived.");
    } else {
        let rows: Vec<Vec<String>> = facts
            .rows
            .iter()
            .map(|p| {
                let mut row = vec![
                    format!("{}.", p.place),
                    clean(&p.team),
                    p.share.clone(),
                    p.exemplars.clone(),
                ];
                if facts.is_cycle {
                    row.push(p.last_exemplars.to_string());
                }
                row
            })
            .collect();
        let mut cols = vec![
            Col::new("Place", Align::Right),
            Col::new("Team", Align::Left),
            Col::new(facts.share_label, Align::Right),
            Col::new(facts.exemplars_label, Align::Right),
        ];
        if facts.is_cycle {
            cols.push(Col::new(facts.last_label.clone(), Align::Right));
        }
        table(out, 2, &cols, &rows, &[1]);
        out.push('\n');
    }
    if !e.unranked.is_empty() {
        let names: Vec<String> = e.unranked.iter().map(|t| clean(t)).collect();
        paragraph(out, &format!("Died out: {}.", names.join(", ")));
    }
}

fn disqualified(out: &mut String, r: &Results) {
    let mut any = false;
    for rr in &r.rounds {
        for d in &rr.disqualified {
            any = true;
            hanging(
                out,
                &format!("- {} (round {}): ", clean(&d.team), rr.number),
                &clean(&d.reason),
            );
        }
    }
    if any {
        out.push('\n');
    } else {
        paragraph(out, "No team was disqualified.");
    }
    if !r.rejected.is_empty() {
        paragraph(
            out,
            "Not admitted (the source did not pass the compile checks):",
        );
        for rej in &r.rejected {
            let why = rej
                .errors
                .first()
                .map(|e| clean(e))
                .unwrap_or_else(|| "rejected".to_string());
            hanging(out, &format!("- {}: ", clean(&rej.team)), &why);
        }
        out.push('\n');
    }
}

fn round(out: &mut String, rr: &RoundResult, rounds: usize) {
    let title = if rr.is_final {
        format!("Round {} (final)", rr.number)
    } else {
        format!("Round {}", rr.number)
    };
    let _ = writeln!(out, "{title}\n{}", "-".repeat(title.chars().count()));
    let field: usize = rr.groups.iter().map(|g| g.members.len()).sum();
    let mut about = format!(
        "{} in {}.",
        plural(field, "team", "teams"),
        plural(rr.groups.len(), "group", "groups")
    );
    let marks = !rr.is_final && !rr.advanced.is_empty();
    if marks {
        let next = if (rr.number as usize) < rounds {
            format!("round {}", rr.number + 1)
        } else {
            "the next round".to_string()
        };
        let _ = write!(
            about,
            " {} advanced to {next} (marked *).",
            plural(rr.advanced.len(), "team", "teams")
        );
    }
    paragraph(out, &about);
    let advanced: HashSet<&str> = rr.advanced.iter().map(String::as_str).collect();
    for g in &rr.groups {
        let _ = writeln!(
            out,
            "Group {} ({}):",
            g.number,
            plural(g.members.len(), "team", "teams")
        );
        if g.ranking.is_empty() {
            out.push_str("  (not finished)\n");
        } else {
            let rows: Vec<Vec<String>> = g
                .ranking
                .iter()
                .map(|p| {
                    let mark = if marks && advanced.contains(p.team.as_str()) {
                        "*"
                    } else {
                        ""
                    };
                    vec![
                        format!("{}.", p.place),
                        clean(&p.team),
                        points_text(p.points),
                        mark.to_string(),
                    ]
                })
                .collect();
            let mut cols = vec![
                Col::new("Place", Align::Right),
                Col::new("Team", Align::Left),
                Col::new("Points", Align::Right),
            ];
            let rows: Vec<Vec<String>> = if marks {
                cols.push(Col::new("", Align::Left));
                rows
            } else {
                rows.into_iter()
                    .map(|mut r| {
                        r.pop();
                        r
                    })
                    .collect()
            };
            table(out, 2, &cols, &rows, &[1]);
        }
        let dq: Vec<String> = rr
            .disqualified
            .iter()
            .filter(|d| g.members.contains(&d.team))
            .map(|d| clean(&d.team))
            .collect();
        if !dq.is_empty() {
            hanging(out, "  disqualified: ", &dq.join(", "));
        }
        out.push('\n');
    }
}

/// The teams that played: the first round's field (the winners when there
/// is no round), in group order.
fn participants(r: &Results) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let names: Vec<&String> = match r.rounds.first() {
        Some(first) => first.groups.iter().flat_map(|g| g.members.iter()).collect(),
        None => r.winners.iter().map(|w| &w.team).collect(),
    };
    for n in names {
        if seen.insert(n.clone()) {
            out.push(n.clone());
        }
    }
    out
}

struct TeamIndex<'a> {
    exact: HashMap<&'a str, &'a TeamInfo>,
    folded: HashMap<String, &'a TeamInfo>,
}

impl<'a> TeamIndex<'a> {
    fn new(teams: &'a [TeamInfo]) -> Self {
        let mut exact = HashMap::new();
        let mut folded = HashMap::new();
        for t in teams {
            exact.entry(t.name.as_str()).or_insert(t);
            folded.entry(t.name.to_lowercase()).or_insert(t);
        }
        TeamIndex { exact, folded }
    }

    fn get(&self, name: &str) -> Option<&'a TeamInfo> {
        self.exact
            .get(name)
            .or_else(|| self.folded.get(&name.to_lowercase()))
            .copied()
    }
}

// ---------------------------------------------------------------- text

fn plural(n: usize, one: &str, many: &str) -> String {
    crate::words::counted(n as u64, one, many)
}

/// One line: control characters (newlines, tabs, …) become blanks, runs of
/// blanks one blank, no blanks at the ends.
fn clean(s: &str) -> String {
    s.split(|c: char| c.is_control() || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn len(s: &str) -> usize {
    s.chars().count()
}

/// Greedy word wrap into lines of at most `width` characters; a word longer
/// than `width` is cut.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = len(&line);
            let sep = usize::from(used > 0);
            if used + sep + word.len() <= width {
                if sep == 1 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            // An empty line and a word wider than it: cut the word.
            let rest = word.split_off(width);
            line.extend(word.iter());
            lines.push(std::mem::take(&mut line));
            word = rest;
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `Name: value`, folded (continuation lines start with a blank).
fn header(out: &mut String, name: &str, value: &str) {
    let value = clean(value);
    let head = format!("{name}: ");
    let first = WIDTH - head.len();
    let lines = wrap(&value, first);
    let _ = writeln!(out, "{}", format!("{head}{}", lines[0]).trim_end());
    let rest: Vec<String> = lines[1..].to_vec();
    if !rest.is_empty() {
        for l in wrap(&rest.join(" "), WIDTH - 1) {
            let _ = writeln!(out, " {l}");
        }
    }
}

/// A wrapped paragraph and an empty line.
fn paragraph(out: &mut String, text: &str) {
    for l in wrap(&clean(text), WIDTH) {
        let _ = writeln!(out, "{l}");
    }
    out.push('\n');
}

/// `head` then `text`, continuation lines indented under the text (by at
/// most half the width: a longer head stands on a line of its own).
fn hanging(out: &mut String, head: &str, text: &str) {
    let (first, indent) = if len(head) <= WIDTH / 2 {
        (head.to_string(), len(head))
    } else {
        let lead = len(head) - len(head.trim_start());
        for l in wrap(head.trim(), WIDTH - lead) {
            let _ = writeln!(out, "{}{l}", " ".repeat(lead));
        }
        let indent = lead + 4;
        (" ".repeat(indent), indent)
    };
    let mut lines = wrap(text, WIDTH - indent).into_iter();
    let _ = writeln!(
        out,
        "{}",
        format!("{first}{}", lines.next().unwrap_or_default()).trim_end()
    );
    for l in lines {
        let _ = writeln!(out, "{}{l}", " ".repeat(indent));
    }
}

fn section(out: &mut String, title: &str) {
    let _ = writeln!(out, "{title}\n{}\n", "=".repeat(len(title).min(WIDTH)));
}

fn centered_banner(out: &mut String, title: &str) {
    let lines = wrap(title, WIDTH - 4);
    let inner = lines.iter().map(|l| len(l)).max().unwrap_or(0);
    let rule = "=".repeat(inner + 4);
    let pad = (WIDTH - rule.len()) / 2;
    let _ = writeln!(out, "{}{rule}", " ".repeat(pad));
    for l in &lines {
        let extra = (inner - len(l)) / 2;
        let _ = writeln!(out, "{}{l}", " ".repeat(pad + 2 + extra));
    }
    let _ = writeln!(out, "{}{rule}", " ".repeat(pad));
}

#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}

struct Col {
    head: String,
    align: Align,
}

impl Col {
    fn new(head: impl Into<String>, align: Align) -> Col {
        Col {
            head: head.into(),
            align,
        }
    }
}

/// A table: a header line, a rule, then the rows. Columns are as wide as
/// their widest cell; when that is wider than [`WIDTH`], the columns in
/// `flexible` (most willing first) shrink down to 10 characters, and their
/// cells wrap onto further lines.
fn table(out: &mut String, indent: usize, cols: &[Col], rows: &[Vec<String>], flexible: &[usize]) {
    const GAP: usize = 2;
    const MIN: usize = 10;
    let mut widths: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter()
                .map(|r| len(&r[i]))
                .chain(std::iter::once(len(&c.head)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let total = |w: &[usize]| indent + w.iter().sum::<usize>() + GAP * w.len().saturating_sub(1);
    for &f in flexible {
        let over = total(&widths).saturating_sub(WIDTH);
        if over == 0 {
            break;
        }
        let floor = MIN.max(len(&cols[f].head)).min(widths[f]);
        widths[f] -= over.min(widths[f] - floor);
    }
    let line = |cells: &[String]| -> String {
        let mut s = " ".repeat(indent);
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str(&" ".repeat(GAP));
            }
            let pad = widths[i].saturating_sub(len(c));
            match cols[i].align {
                Align::Left => {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                }
                Align::Right => {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
            }
        }
        s.trim_end().to_string()
    };
    let heads: Vec<String> = cols.iter().map(|c| c.head.clone()).collect();
    let _ = writeln!(out, "{}", line(&heads));
    let rules: Vec<String> = cols
        .iter()
        .zip(&widths)
        .map(|(c, &w)| {
            if c.head.is_empty() {
                String::new()
            } else {
                "-".repeat(w)
            }
        })
        .collect();
    let _ = writeln!(out, "{}", line(&rules));
    for r in rows {
        let cells: Vec<Vec<String>> = r
            .iter()
            .zip(&widths)
            .map(|(c, &w)| {
                if len(c) <= w {
                    vec![c.clone()]
                } else {
                    wrap(c, w)
                }
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let row: Vec<String> = cells
                .iter()
                .map(|c| c.get(k).cloned().unwrap_or_default())
                .collect();
            let _ = writeln!(out, "{}", line(&row));
        }
    }
}

/// The teams of `results` with their organizations and member counts, from
/// the registrations; teams without one (a tournament run from a folder)
/// get the organization "unknown".
pub fn team_infos(
    store: &crate::store::Store,
    results: &Results,
) -> Result<Vec<TeamInfo>, crate::store::StoreError> {
    let mut st = store.conn().prepare(
        "SELECT t.name, r.organization, r.members FROM registrations r JOIN teams t ON t.id = r.team_id",
    )?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let mut teams = Vec::new();
    for row in rows {
        let (name, organization, members) = row?;
        let members =
            serde_json::from_str::<Vec<serde_json::Value>>(&members).map_or(0, |v| v.len());
        teams.push(TeamInfo {
            name,
            organization,
            members,
        });
    }
    let mut names: Vec<String> = results
        .rounds
        .iter()
        .flat_map(|r| r.groups.iter().flat_map(|g| g.members.iter().cloned()))
        .chain(results.winners.iter().map(|w| w.team.clone()))
        .collect();
    names.sort();
    names.dedup();
    for n in names {
        if !teams.iter().any(|t| t.name == n) {
            teams.push(TeamInfo {
                name: n,
                organization: "unknown".to_string(),
                members: 0,
            });
        }
    }
    Ok(teams)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn country_is_the_last_part() {
        assert_eq!(
            country_of("University of X, Intellect City, Eggland"),
            "Eggland"
        );
        assert_eq!(country_of("  MIT  "), "MIT");
        assert_eq!(country_of("a, b ,  Germany "), "Germany");
        assert_eq!(country_of(""), "");
    }

    #[test]
    fn points_show_halves() {
        assert_eq!(points_text(12.0), "12");
        assert_eq!(points_text(12.5), "12.5");
        assert_eq!(points_text(0.0), "0");
    }

    #[test]
    fn wrap_respects_width_and_cuts_long_words() {
        assert_eq!(wrap("a bb ccc", 4), vec!["a bb", "ccc"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), vec![""]);
        for l in wrap(&"word ".repeat(100), 76) {
            assert!(l.chars().count() <= 76);
        }
    }

    #[test]
    fn long_headers_fold() {
        let mut out = String::new();
        header(&mut out, "Organization", &"Very long name ".repeat(20));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH));
        assert!(lines[1..].iter().all(|l| l.starts_with(' ')));
    }
}
