//! The pages of the results site as data (views) and their rendering from
//! the handlebars templates in `templates/site/`, with HTML escaping on:
//! team names, descriptions and failure reasons come from strangers.
//!
//! The team and round pages' views are here too, but those pages are
//! written by `direct` (no template).
//!
//! Only rendering: the views are filled in by `site::generate`; nothing
//! here reads the store or writes a file. SVG plots are passed in as
//! finished markup (drawn and escaped by `plotters`) and are the only
//! unescaped content.
//!
//! **Invariant:** every value from the store reaches a page through an
//! escaping `{{ }}`; only plot SVG uses `{{{ }}}`.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use handlebars::Handlebars;
use serde::Serialize;

const TEMPLATES: &[(&str, &str)] = &[
    ("head", include_str!("../../templates/site/head.hbs")),
    ("foot", include_str!("../../templates/site/foot.hbs")),
    (
        "team_link",
        include_str!("../../templates/site/team_link.hbs"),
    ),
    ("index", include_str!("../../templates/site/index.hbs")),
    (
        "crosstable",
        include_str!("../../templates/site/crosstable.hbs"),
    ),
    (
        "evolution",
        include_str!("../../templates/site/evolution.hbs"),
    ),
];

/// The site's style sheet, written as `style.css`.
pub const STYLE_CSS: &str = include_str!("../../templates/site/style.css");

fn registry() -> &'static Handlebars<'static> {
    static REG: OnceLock<Handlebars<'static>> = OnceLock::new();
    REG.get_or_init(|| {
        let mut h = Handlebars::new();
        h.set_strict_mode(true);
        // The crate's one escape function, the same characters as
        // handlebars' default (the directly written pages use it too).
        h.register_escape_fn(crate::draw::escape);
        for (name, text) in TEMPLATES {
            h.register_template_string(name, inline_partials(text))
                .unwrap_or_else(|e| panic!("template site/{name}.hbs: {e}"));
        }
        h
    })
}

/// The site's partials, inlined into the templates that call them when the
/// registry is made ([`inline_partial`]).
const INLINED: &[&str] = &["head", "foot", "team_link"];

/// `text` with every call of the partials in [`INLINED`] replaced by the
/// partial itself.
fn inline_partials(text: &str) -> String {
    INLINED.iter().fold(text.to_string(), |text, name| {
        let body = TEMPLATES
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, body)| *body)
            .unwrap_or_else(|| panic!("no partial {name}"));
        inline_partial(&text, name, body)
    })
}

/// `text` with every call of the partial `name` replaced by the partial's
/// `body`: the same output without a partial's cost at every call
/// (handlebars copies the whole view for a call without a path, the
/// page's head and foot, and parses the path of a call with one each time
/// it renders it: the team links in the rows of the team and round pages
/// were most of their rendering).
///
/// A call without a path (`{{> name}}`) alone on its line becomes the body
/// in place of the line, as handlebars renders a standalone partial (the
/// site's calls are not indented). In a call with a path
/// (`{{> name PATH}}`) the body's paths are read under `PATH`; such a body
/// may hold only `{{path}}`, `{{#if path}}`, `{{else}}` and `{{/if}}` (a
/// template of the site's own, checked when the registry is made).
fn inline_partial(text: &str, name: &str, body: &str) -> String {
    let call = format!("{{{{> {name}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&call) {
        let after = &rest[at + call.len()..];
        let end = after
            .find("}}")
            .unwrap_or_else(|| panic!("an unclosed call of the partial {name}"));
        let path = &after[..end];
        if !path.is_empty() && !path.starts_with(' ') {
            // Another partial whose name begins with this one's.
            out.push_str(&rest[..at + call.len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        rest = &after[end + 2..];
        let path = path.trim();
        if path.is_empty() {
            let line_start = out.is_empty() || out.ends_with('\n');
            if line_start && (rest.is_empty() || rest.starts_with('\n')) {
                rest = rest.strip_prefix('\n').unwrap_or(rest);
            }
            out.push_str(body);
        } else {
            out.push_str(&under_path(body, path));
        }
    }
    out.push_str(rest);
    out
}

/// The template `body` with its paths read under `path` (`this`: as they are).
fn under_path(body: &str, path: &str) -> String {
    let prefix = if path == "this" {
        String::new()
    } else {
        format!("{path}.")
    };
    let is_path = |p: &str| {
        !p.is_empty()
            && p != "else"
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    };
    let mut out = String::with_capacity(body.len() + 4 * prefix.len());
    let mut rest = body;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find("}}").expect("an unclosed mustache in a partial");
        let inner = &after[..end];
        let rewritten = match inner.strip_prefix("#if ") {
            Some(p) if is_path(p) => format!("#if {prefix}{p}"),
            None if inner == "else" || inner == "/if" => inner.to_string(),
            None if is_path(inner) => format!("{prefix}{inner}"),
            _ => panic!("a partial to inline holds {{{{{inner}}}}}"),
        };
        out.push_str("{{");
        out.push_str(&rewritten);
        out.push_str("}}");
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Renders page template `name` with `view`.
pub fn render<T: Serialize>(name: &str, view: &T) -> Result<String, handlebars::RenderError> {
    registry().render(name, view)
}

/// A team, linked to its page when it has one. Cloned by two counts, not
/// two copies: a team page's rows name their opponents from the links
/// made once per tournament.
#[derive(Debug, Clone, Serialize, PartialEq, Hash)]
pub struct TeamRef {
    pub name: Shared,
    pub href: Option<Shared>,
}

/// A text shared by every view that shows it (a team's name, its page's
/// file name): a clone counts a reference, copies nothing. Written, hashed
/// and compared as its text.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shared(Arc<str>);

impl Shared {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Shared {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Shared {
    fn from(text: &str) -> Self {
        Shared(Arc::from(text))
    }
}

impl From<String> for Shared {
    fn from(text: String) -> Self {
        Shared(Arc::from(text))
    }
}

impl PartialEq<str> for Shared {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Shared {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl std::fmt::Display for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for Shared {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// What every page has: its title and the site's navigation.
#[derive(Debug, Clone, Serialize)]
pub struct Frame {
    pub title: String,
    pub contest: String,
    pub rounds: Vec<NavRound>,
    pub has_crosstable: bool,
    pub has_evolution: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct NavRound {
    pub number: u32,
    pub href: String,
}

#[derive(Debug, Clone, Serialize, Hash)]
pub struct PlacedView {
    pub place: u32,
    pub team: TeamRef,
    pub points: String,
}

/// One ranked strategy of the Evolution, as
/// [`crate::tables::facts::EvolutionRow`] tells it.
#[derive(Debug, Clone, Serialize)]
pub struct EvolutionPlacedView {
    pub place: u32,
    pub team: TeamRef,
    /// The share it is ranked by, as a percentage.
    pub share: String,
    /// Its exemplars (the mean over the cycle for a cycle).
    pub exemplars: String,
    /// For a cycle: its exemplars in the last generation.
    pub last: Option<String>,
}

/// The column labels of the Evolution's ranking (the same as mail and article).
#[derive(Debug, Clone, Default, Serialize)]
pub struct EvolutionLabels {
    pub share: String,
    pub exemplars: String,
    /// For a cycle: the last generation's column.
    pub last: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RoundSummary {
    pub number: u32,
    pub href: String,
    pub is_final: bool,
    pub finished: bool,
    pub n_teams: usize,
    pub n_groups: usize,
    pub n_advanced: usize,
    pub n_disqualified: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct IndexView {
    pub frame: Frame,
    pub seed: u64,
    pub state: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub n_teams: usize,
    pub throws: u32,
    pub range: String,
    pub k: u32,
    pub final_ranking: Vec<PlacedView>,
    pub evolution_ranking: Vec<EvolutionPlacedView>,
    pub evolution_labels: EvolutionLabels,
    pub evolution_unranked: Vec<TeamRef>,
    pub evolution_end: Option<String>,
    pub rounds: Vec<RoundSummary>,
    pub teams: Vec<TeamRef>,
}

#[derive(Debug, Clone, Serialize, Hash)]
pub struct GameRow {
    pub slot: u32,
    pub attempt: u32,
    pub p: TeamRef,
    pub q: TeamRef,
    pub points_p: u64,
    pub points_q: u64,
    pub status: &'static str,
    /// What happened to the game, in the words of the mails ("failed:
    /// crasher (throw 6: crashed); replay cancelled (disqualification)").
    pub label: Cow<'static, str>,
    pub href: Option<String>,
    pub failures: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Hash)]
pub struct GroupView {
    pub number: u32,
    pub id: String,
    pub finished: bool,
    pub members: Vec<TeamRef>,
    pub ranking: Vec<PlacedView>,
    pub games: Vec<GameRow>,
    /// Why the group's games from some slot on have no page (the site's
    /// budget cut them), if it did.
    pub pages_note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DisqualifiedView {
    pub team: TeamRef,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RoundView {
    pub frame: Frame,
    pub number: u32,
    pub is_final: bool,
    pub finished: bool,
    pub advanced: Vec<TeamRef>,
    pub next_round: u32,
    pub disqualified: Vec<DisqualifiedView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrosstableView {
    pub frame: Frame,
    pub svg: Option<String>,
    pub teams: Vec<TeamRef>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvolutionView {
    pub frame: Frame,
    pub svg: Option<String>,
    pub end: Option<String>,
    pub population: u64,
    pub exemplars: u64,
    /// Generations computed after the initial population.
    pub generations: usize,
    pub labels: EvolutionLabels,
    pub ranking: Vec<EvolutionPlacedView>,
    pub unranked: Vec<TeamRef>,
    pub table_head: Vec<String>,
    pub table: Vec<EvolutionRow>,
}

/// One strategy's counts in the sampled generations of the Evolution table.
#[derive(Debug, Clone, Serialize)]
pub struct EvolutionRow {
    pub band: String,
    pub team: TeamRef,
    pub counts: Vec<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TeamGameRow {
    pub round: u32,
    pub group: u32,
    pub slot: u32,
    pub side: &'static str,
    pub opponent: TeamRef,
    pub own: u64,
    pub theirs: u64,
    pub status: &'static str,
    /// What happened to the game, in the words of the mails ("failed:
    /// crasher (throw 6: crashed); replay cancelled (disqualification)").
    pub label: Cow<'static, str>,
    pub href: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OpponentRow {
    pub opponent: TeamRef,
    pub games: usize,
    pub own: u64,
    pub theirs: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct FailureRow {
    pub round: u32,
    pub group: u32,
    pub slot: u32,
    pub href: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlacingRow {
    pub round: u32,
    pub href: String,
    pub group: u32,
    pub place: Option<u32>,
    pub points: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TeamView {
    pub frame: Frame,
    pub name: String,
    pub description: Option<String>,
    pub lexical_elements: Option<i64>,
    pub placings: Vec<PlacingRow>,
    pub disqualified: Option<String>,
    pub evolution: Option<EvolutionPlacedView>,
    pub games: Vec<TeamGameRow>,
    /// Why some of `games` have no page (the site's budget cut their
    /// groups' pages), if one has none for that reason.
    pub pages_note: Option<&'static str>,
    pub opponents: Vec<OpponentRow>,
    pub failures: Vec<FailureRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GameView {
    pub frame: Frame,
    pub round: u32,
    pub round_href: String,
    pub group: u32,
    pub slot: u32,
    pub attempt: u32,
    pub seed: u64,
    pub p: TeamRef,
    pub q: TeamRef,
    pub points_p: u64,
    pub points_q: u64,
    pub status: String,
    /// What happened to the game, in the words of the mails ("failed:
    /// crasher (throw 6: crashed); replay cancelled (disqualification)").
    pub label: String,
    pub n_throws: usize,
    pub wins_p: usize,
    pub wins_q: usize,
    pub failures: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> Frame {
        Frame {
            title: "<title>&".into(),
            contest: "c".into(),
            rounds: vec![],
            has_crosstable: false,
            has_evolution: false,
        }
    }

    const NASTY: &str = "<script>alert(\"x\")</script>&amp;";

    #[test]
    fn names_descriptions_and_reasons_are_escaped() {
        let nasty = TeamRef {
            name: NASTY.into(),
            href: Some("team-1.html\" onclick=\"x".into()),
        };
        let view = TeamView {
            pages_note: None,
            frame: frame(),
            name: NASTY.into(),
            description: Some(NASTY.into()),
            lexical_elements: Some(3),
            placings: vec![],
            disqualified: Some(NASTY.into()),
            evolution: None,
            games: vec![TeamGameRow {
                round: 1,
                group: 1,
                slot: 1,
                side: "P",
                opponent: nasty.clone(),
                own: 1,
                theirs: 2,
                status: "counted",
                label: "counted".into(),
                href: None,
            }],
            opponents: vec![],
            failures: vec![FailureRow {
                round: 1,
                group: 1,
                slot: 1,
                href: None,
                reason: NASTY.into(),
            }],
        };
        let html = super::super::direct::team_html(&view);
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("\" onclick"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp;"),
            "{html}"
        );
        assert!(!html.contains("<title><title>"));
    }

    #[test]
    fn an_inlined_team_link_renders_as_the_partial_does() {
        let text = "<p>{{#each teams}}{{> team_link this}}, {{/each}}</p>\
                    <p>{{> team_link one}} : {{> team_link two}}</p>";
        let inlined = inline_partial(text, "team_link", TEMPLATES[2].1);
        assert_eq!(TEMPLATES[2].0, "team_link");
        assert!(!inlined.contains("{{>"), "{inlined}");
        let mut called = Handlebars::new();
        called.set_strict_mode(true);
        called
            .register_template_string("team_link", TEMPLATES[2].1)
            .unwrap();
        let view = serde_json::json!({
            "teams": [{ "name": "a<b", "href": "team-1.html" }, { "name": "c&d", "href": null }],
            "one": { "name": "\"one\"", "href": "team-2.html" },
            "two": { "name": "two", "href": null },
        });
        let direct = called.render_template(text, &view).unwrap();
        let mut strict = Handlebars::new();
        strict.set_strict_mode(true);
        assert_eq!(strict.render_template(&inlined, &view).unwrap(), direct);
        assert!(direct.contains("<a href=\"team-1.html\">a&lt;b</a>, c&amp;d, "));
        // The registry's templates hold no partial call any more.
        for (name, text) in TEMPLATES {
            assert!(!inline_partials(text).contains("{{>"), "{name}");
        }
    }

    #[test]
    fn an_inlined_standalone_partial_renders_as_the_partial_does() {
        let part = "<p>{{frame.title}}</p>\n{{#each xs}}<i>{{this}}</i>\n{{/each}}<main>\n";
        let text =
            "{{> part}}\n<h1>{{frame.title}}</h1>\n{{> part}}\n<b>{{> part}}</b>\n{{> part}}";
        let view = serde_json::json!({ "frame": { "title": "a<b" }, "xs": [1, 2] });
        let mut called = Handlebars::new();
        called.set_strict_mode(true);
        called.register_template_string("part", part).unwrap();
        let direct = called.render_template(text, &view).unwrap();
        let inlined = inline_partial(text, "part", part);
        assert!(!inlined.contains("{{>"), "{inlined}");
        let mut strict = Handlebars::new();
        strict.set_strict_mode(true);
        assert_eq!(strict.render_template(&inlined, &view).unwrap(), direct);
    }

    #[test]
    fn every_template_renders_in_strict_mode() {
        let r = TeamRef {
            name: "a".into(),
            href: Some("team-1.html".into()),
        };
        let index = IndexView {
            frame: frame(),
            seed: 1,
            state: "finished".into(),
            started_at: None,
            finished_at: None,
            n_teams: 1,
            throws: 1000,
            range: "1..12288".into(),
            k: 8,
            final_ranking: vec![],
            evolution_ranking: vec![],
            evolution_labels: EvolutionLabels::default(),
            evolution_unranked: vec![],
            evolution_end: None,
            rounds: vec![],
            teams: vec![r.clone()],
        };
        render("index", &index).unwrap();
        let ct = CrosstableView {
            frame: frame(),
            svg: None,
            teams: vec![],
        };
        render("crosstable", &ct).unwrap();
    }
}
