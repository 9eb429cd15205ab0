//! Pages written straight into a string, without the template machinery:
//! the four the site writes most often while a contest runs. The index
//! ([`index_html_with`]): every team's link (made once a tournament,
//! [`index_teams_html`]), written about log2(groups) times a round; a
//! test holds it equal to its template, `index.hbs`. The game
//! page ([`game_html`], with its plot from `super::game_svg`): one for
//! every game. The team page
//! ([`team_html`]): a group's members' pages after every group, every
//! team's page at the Evolution's end and in the final site, with a row
//! per game the team played so far. The round page ([`round_head_html`],
//! [`round_group_html`] for each group, [`ROUND_FOOT`]): written in parts
//! so that a group's part, once settled, is copied from the page written
//! before instead of built again. Through handlebars a row cost a walk of
//! the view's JSON for every field; here it is a few `push_str`.
//!
//! These functions but the index are their pages' one definition (there
//! are no templates): their output for views with every branch and hostile text
//! is held by golden files (`tests/data/snapshots/site/team-page-N.html`,
//! `round-page-N.html`, `game-page-N.html`). The frame is the templates' `head.hbs` and
//! `foot.hbs`, which the other pages share: a test holds the head written
//! here equal to the template's. Texts are escaped by
//! [`crate::draw::escape_into`], the function the templates' `{{ }}` use
//! too.
//!
//! Not here: building the views (`views`, `super::generate_from`), writing
//! files (`super::Writer`).

use crate::decimal::push_unsigned;
use crate::draw::escape_into as escape;

use super::game_svg::write_game_svg;
use super::pages::{Frame, GameView, GroupView, IndexView, RoundView, TeamRef, TeamView};
use super::views::RowsBefore;

/// A number as `{{n}}` renders it.
fn num(out: &mut String, n: impl Integer) {
    let (negative, magnitude) = n.sign_and_magnitude();
    decimal(out, negative, magnitude);
}

/// An integer a page shows: whether it is below zero, and its magnitude
/// (every integer type up to 64 bits has its magnitude in a `u64`).
trait Integer: Copy {
    fn sign_and_magnitude(self) -> (bool, u64);
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Integer for $t {
            fn sign_and_magnitude(self) -> (bool, u64) {
                (false, self as u64)
            }
        }
    )*};
}
macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Integer for $t {
            fn sign_and_magnitude(self) -> (bool, u64) {
                (self < 0, self.unsigned_abs() as u64)
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64, usize);
signed!(i8, i16, i32, i64, isize);

/// A number in decimal, as `{n}` writes it (a minus sign, no padding):
/// the digits made in a buffer, not through the formatter (about six
/// numbers a game row, 41 rows and more a team page).
fn decimal(out: &mut String, negative: bool, magnitude: u64) {
    if negative {
        out.push('-');
    }
    push_unsigned(out, magnitude);
}

/// Whether `{{#if}}` takes an optional text as true: present and not empty.
fn text_is_true<T: std::ops::Deref<Target = str>>(s: &Option<T>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// `{{> team_link x}}`: the team, linked to its page when it has one.
fn team_link(out: &mut String, t: &TeamRef) {
    match text_is_true(&t.href) {
        Some(href) => {
            out.push_str("<a href=\"");
            escape(out, href);
            out.push_str("\">");
            escape(out, &t.name);
            out.push_str("</a>");
        }
        None => escape(out, &t.name),
    }
}

/// `{{> head}}` (`templates/site/head.hbs`), up to and with `<main>`.
pub(super) fn head(out: &mut String, frame: &Frame) {
    out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
    );
    escape(out, &frame.title);
    out.push_str(" — ");
    escape(out, &frame.contest);
    out.push_str(
        "</title>\n<link rel=\"stylesheet\" href=\"style.css\">\n</head>\n<body>\n<header>\n\
         <p class=\"site-name\"><a href=\"index.html\">",
    );
    escape(out, &frame.contest);
    out.push_str(
        "</a></p>\n<nav aria-label=\"site\">\n<ul>\n<li><a href=\"index.html\">Ranking</a></li>\n",
    );
    for r in &frame.rounds {
        out.push_str("<li><a href=\"");
        escape(out, &r.href);
        out.push_str("\">Round ");
        num(out, r.number);
        out.push_str("</a></li>\n");
    }
    if frame.has_crosstable {
        out.push_str("<li><a href=\"final-crosstable.html\">Final cross-table</a></li>\n");
    }
    if frame.has_evolution {
        out.push_str("<li><a href=\"evolution.html\">Evolution</a></li>\n");
    }
    out.push_str("</ul>\n</nav>\n</header>\n<main>\n");
}

/// `{{> foot}}` (`templates/site/foot.hbs`).
const FOOT: &str = include_str!("../../templates/site/foot.hbs");

/// A team's page from its view (the page's one definition): its head
/// ([`team_head_html`]) and its tail ([`team_tail_html`]), as the site
/// writes a page it renders whole.
#[cfg(test)]
pub(super) fn team_html(view: &TeamView) -> String {
    // About 300 bytes a game row.
    let mut out = String::with_capacity(4096 + 320 * view.games.len());
    team_head_html(&mut out, view);
    team_tail_html(&mut out, view);
    out
}

/// A team's page up to its placings' section's end (not included): the
/// frame, the name, the disqualification, the placings and the
/// Evolution's row. What the rounds that follow the team's last group
/// change on its page is all here ([`team_tail_html`] is the rest).
pub(super) fn team_head_html(o: &mut String, view: &TeamView) {
    head(o, &view.frame);
    o.push_str("<h1 id=\"title\">");
    escape(o, &view.name);
    o.push_str("</h1>\n");
    if let Some(d) = text_is_true(&view.disqualified) {
        o.push_str("<p class=\"disqualified\"><strong>Disqualified:</strong> ");
        escape(o, d);
        o.push_str("</p>");
    }
    o.push_str(
        "\n\n<section id=\"placings\">\n<h2>Placings</h2>\n<table>\n\
         <thead><tr><th scope=\"col\">Round</th><th scope=\"col\" class=\"num\">Group</th>\
         <th scope=\"col\" class=\"num\">Place</th><th scope=\"col\" class=\"num\">Points</th>\
         </tr></thead>\n<tbody>\n",
    );
    for p in &view.placings {
        o.push_str("<tr><td><a href=\"");
        escape(o, &p.href);
        o.push_str("\">Round ");
        num(o, p.round);
        o.push_str("</a></td><td class=\"num\">");
        num(o, p.group);
        o.push_str("</td><td class=\"num\">");
        match p.place.filter(|&p| p != 0) {
            Some(place) => num(o, place),
            None => o.push('–'),
        }
        o.push_str("</td><td class=\"num\">");
        match text_is_true(&p.points) {
            Some(points) => escape(o, points),
            None => o.push('–'),
        }
        o.push_str("</td></tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
    if let Some(e) = &view.evolution {
        o.push_str("<p>Knobeln Evolution: place ");
        num(o, e.place);
        o.push_str(", ");
        escape(o, &e.share);
        o.push_str(" of the population (");
        escape(o, &e.exemplars);
        o.push_str(" exemplars");
        if let Some(last) = text_is_true(&e.last) {
            o.push_str(", the mean over the cycle; ");
            escape(o, last);
            o.push_str(" in the last generation");
        }
        o.push_str(").</p>");
    }
}

/// A team's page from its placings' section's end on: the description,
/// the points per opponent, the failures and the games, all from the
/// team's groups' results and the version's row (nothing of the frame,
/// the placings or the Evolution).
#[cfg(test)]
pub(super) fn team_tail_html(o: &mut String, view: &TeamView) {
    team_tail_marked(o, view, None, RowsBefore::default());
}

/// What a team page's tail takes from the page written before instead of
/// its view ([`team_tail_marked`]): the description's section, and the
/// failures' and games' rows of the team's first groups (the view has the
/// rows of the groups after them only).
pub(super) struct CopiedRows<'a> {
    /// From the tail's start to the description's end.
    pub description: &'a str,
    /// The failures' items (`<li>…</li>` lines).
    pub failures: &'a str,
    /// The games' rows (`<tr>…</tr>` lines).
    pub games: &'a str,
}

/// Where the pieces of a team page's tail lie in the string written
/// ([`team_tail_marked`]), as offsets into it: the description's end, the
/// failures' items from their first to the end of the first groups' (those
/// counted by the [`RowsBefore`] given, with the copied ones), the games'
/// rows likewise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TailMarks {
    pub description_end: usize,
    pub failures: (usize, usize),
    pub games: (usize, usize),
}

impl TailMarks {
    /// The marks of the same tail moved from offset `from` to `to` (its
    /// bytes copied whole into a page whose head has another length).
    pub(super) fn moved(self, from: usize, to: usize) -> TailMarks {
        let at = |n: usize| n - from + to;
        TailMarks {
            description_end: at(self.description_end),
            failures: (at(self.failures.0), at(self.failures.1)),
            games: (at(self.games.0), at(self.games.1)),
        }
    }
}

/// [`team_tail_html`], with the description and the first groups' rows
/// `copied` from the page written before (`None`: all from the view), and
/// where its pieces lie; `before` counts the view's rows that belong to
/// the groups whose end is marked.
pub(super) fn team_tail_marked(
    o: &mut String,
    view: &TeamView,
    copied: Option<&CopiedRows<'_>>,
    before: RowsBefore,
) -> TailMarks {
    match copied {
        Some(c) => o.push_str(c.description),
        None => {
            o.push_str("\n</section>\n\n<section id=\"description\">\n<h2>Description</h2>\n");
            match text_is_true(&view.description) {
                Some(d) => {
                    o.push_str("<pre class=\"description\">");
                    escape(o, d);
                    o.push_str("</pre>");
                }
                None => o.push_str("<p>No description stored.</p>"),
            }
            o.push('\n');
            if let Some(n) = view.lexical_elements.filter(|&n| n != 0) {
                o.push_str("<p>");
                num(o, n);
                o.push_str(" lexical elements.</p>");
            }
        }
    }
    let description_end = o.len();
    o.push_str(
        "\n</section>\n\n<section id=\"opponents\">\n<h2>Points per opponent</h2>\n\
         <p>Counted games only.</p>\n<table>\n\
         <thead><tr><th scope=\"col\">Opponent</th><th scope=\"col\" class=\"num\">Games</th>\
         <th scope=\"col\" class=\"num\">Own points</th>\
         <th scope=\"col\" class=\"num\">Opponent's points</th></tr></thead>\n<tbody>\n",
    );
    for r in &view.opponents {
        o.push_str("<tr><td>");
        team_link(o, &r.opponent);
        o.push_str("</td><td class=\"num\">");
        num(o, r.games);
        o.push_str("</td><td class=\"num\">");
        num(o, r.own);
        o.push_str("</td><td class=\"num\">");
        num(o, r.theirs);
        o.push_str("</td></tr>\n");
    }
    o.push_str("</tbody>\n</table>\n</section>\n\n<section id=\"failures\">\n<h2>Failures</h2>\n");
    let copied_failures = copied.map_or("", |c| c.failures);
    let failures = if view.failures.is_empty() && copied_failures.is_empty() {
        o.push_str("<p>None.</p>\n");
        (o.len(), o.len())
    } else {
        o.push_str("<ul>\n");
        let start = o.len();
        o.push_str(copied_failures);
        let mut split = o.len();
        for (i, f) in view.failures.iter().enumerate() {
            o.push_str("<li>Round ");
            num(o, f.round);
            o.push_str(", group ");
            num(o, f.group);
            o.push_str(", ");
            match text_is_true(&f.href) {
                Some(href) => {
                    o.push_str("<a href=\"");
                    escape(o, href);
                    o.push_str("\">game ");
                    num(o, f.slot);
                    o.push_str("</a>");
                }
                None => {
                    o.push_str("game ");
                    num(o, f.slot);
                }
            }
            o.push_str(": ");
            escape(o, &f.reason);
            o.push_str("</li>\n");
            if i + 1 == before.failures {
                split = o.len();
            }
        }
        o.push_str("</ul>\n");
        (start, split)
    };
    o.push_str("</section>\n\n<section id=\"games\">\n<h2>Games</h2>\n");
    if let Some(note) = view.pages_note {
        o.push_str("<p class=\"pages-note\">");
        escape(o, note);
        o.push_str("</p>\n");
    }
    o.push_str(
        "<table class=\"games\">\n\
         <thead><tr><th scope=\"col\">Round</th><th scope=\"col\" class=\"num\">Group</th>\
         <th scope=\"col\" class=\"num\">Game</th><th scope=\"col\">Side</th>\
         <th scope=\"col\">Opponent</th><th scope=\"col\" class=\"num\">Points</th>\
         <th scope=\"col\">Status</th></tr></thead>\n<tbody>\n",
    );
    let games_start = o.len();
    o.push_str(copied.map_or("", |c| c.games));
    let mut games_split = o.len();
    for (i, g) in view.games.iter().enumerate() {
        o.push_str("<tr class=\"status-");
        escape(o, g.status);
        o.push_str("\"><td>");
        num(o, g.round);
        o.push_str("</td><td class=\"num\">");
        num(o, g.group);
        o.push_str("</td><td class=\"num\">");
        match text_is_true(&g.href) {
            Some(href) => {
                o.push_str("<a href=\"");
                escape(o, href);
                o.push_str("\">");
                num(o, g.slot);
                o.push_str("</a>");
            }
            None => num(o, g.slot),
        }
        o.push_str("</td><td>");
        escape(o, g.side);
        o.push_str("</td><td>");
        team_link(o, &g.opponent);
        o.push_str("</td><td class=\"num\">");
        num(o, g.own);
        o.push_str(" : ");
        num(o, g.theirs);
        o.push_str("</td><td>");
        escape(o, &g.label);
        o.push_str("</td></tr>\n");
        if i + 1 == before.games {
            games_split = o.len();
        }
    }
    o.push_str("</tbody>\n</table>\n</section>\n");
    o.push_str(FOOT);
    TailMarks {
        description_end,
        failures,
        games: (games_start, games_split),
    }
}

/// The index (`templates/site/index.hbs`, which the test
/// `the_index_is_its_template` holds this equal to): it lists every team,
/// and is written about log2(groups) times a round while a contest runs;
/// through handlebars each team link was a walk of the view's JSON.
#[cfg(test)]
pub(super) fn index_html(view: &IndexView) -> String {
    index_html_with(view, &index_teams_html(&view.teams))
}

/// The index's list of every team (its `<li>` lines): fixed for a
/// tournament, so made once and kept for the index's writes
/// ([`index_html_with`]) instead of about log2(groups) times a round.
pub(super) fn index_teams_html(teams: &[TeamRef]) -> String {
    let mut out = String::with_capacity(64 * teams.len());
    for t in teams {
        out.push_str("<li>");
        team_link(&mut out, t);
        out.push_str("</li>\n");
    }
    out
}

/// The index with `teams`, its list of every team as [`index_teams_html`]
/// makes it, in place of `view.teams`.
pub(super) fn index_html_with(view: &IndexView, teams: &str) -> String {
    let mut out = String::with_capacity(8192 + teams.len());
    let o = &mut out;
    head(o, &view.frame);
    o.push_str("<h1 id=\"title\">");
    escape(o, &view.frame.title);
    o.push_str("</h1>\n<p class=\"facts\">Tournament seed <code>");
    num(o, view.seed);
    o.push_str("</code> · ");
    escape(o, &view.state);
    o.push_str(" · ");
    num(o, view.n_teams);
    o.push_str(" teams · ");
    num(o, view.throws);
    o.push_str(" throws per game in ");
    escape(o, &view.range);
    o.push_str(", series of at least ");
    num(o, view.k);
    if let Some(started) = text_is_true(&view.started_at) {
        o.push_str(" · started ");
        escape(o, started);
    }
    if let Some(finished) = text_is_true(&view.finished_at) {
        o.push_str(" · finished ");
        escape(o, finished);
    }
    o.push_str("</p>\n\n<section id=\"final-ranking\">\n<h2>Final ranking (discipline 1)</h2>\n");
    if view.final_ranking.is_empty() {
        o.push_str(
            "<p class=\"pending\">The final round has not finished yet. The rounds so far are below.</p>\n",
        );
    } else {
        o.push_str(
            "<table class=\"ranking\">\n<thead><tr><th scope=\"col\">Place</th>\
             <th scope=\"col\">Team</th><th scope=\"col\" class=\"num\">Points</th></tr></thead>\n\
             <tbody>\n",
        );
        for p in &view.final_ranking {
            o.push_str("<tr><td class=\"num\">");
            num(o, p.place);
            o.push_str("</td><td>");
            team_link(o, &p.team);
            o.push_str("</td><td class=\"num\">");
            escape(o, &p.points);
            o.push_str("</td></tr>\n");
        }
        o.push_str("</tbody>\n</table>\n");
    }
    o.push_str(
        "</section>\n\n<section id=\"evolution-ranking\">\n\
         <h2>Knobeln Evolution ranking (discipline 2)</h2>\n",
    );
    if view.evolution_ranking.is_empty() {
        o.push_str("<p class=\"pending\">The Evolution runs after the final round.</p>\n");
    } else {
        o.push_str("<p>");
        if let Some(end) = &view.evolution_end {
            escape(o, end);
        }
        o.push_str(
            " <a href=\"evolution.html\">The Evolution, generation by generation</a>.</p>\n\
             <table class=\"ranking\">\n<thead><tr><th scope=\"col\">Place</th>\
             <th scope=\"col\">Team</th><th scope=\"col\" class=\"num\">",
        );
        let labels = &view.evolution_labels;
        escape(o, &labels.share);
        o.push_str("</th><th scope=\"col\" class=\"num\">");
        escape(o, &labels.exemplars);
        o.push_str("</th>");
        if let Some(last) = text_is_true(&labels.last) {
            o.push_str("<th scope=\"col\" class=\"num\">");
            escape(o, last);
            o.push_str("</th>");
        }
        o.push_str("</tr></thead>\n<tbody>\n");
        for p in &view.evolution_ranking {
            o.push_str("<tr><td class=\"num\">");
            num(o, p.place);
            o.push_str("</td><td>");
            team_link(o, &p.team);
            o.push_str("</td><td class=\"num\">");
            escape(o, &p.share);
            o.push_str("</td><td class=\"num\">");
            escape(o, &p.exemplars);
            o.push_str("</td>");
            if let Some(last) = text_is_true(&p.last) {
                o.push_str("<td class=\"num\">");
                escape(o, last);
                o.push_str("</td>");
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</tbody>\n</table>\n");
        if !view.evolution_unranked.is_empty() {
            o.push_str("<p>Died out (no place): ");
            for (i, t) in view.evolution_unranked.iter().enumerate() {
                if i > 0 {
                    o.push_str(", ");
                }
                team_link(o, t);
            }
            o.push_str(".</p>");
        }
        o.push('\n');
    }
    o.push_str(
        "</section>\n\n<section id=\"rounds\">\n<h2>Rounds</h2>\n<table>\n\
         <thead><tr><th scope=\"col\">Round</th><th scope=\"col\" class=\"num\">Teams</th>\
         <th scope=\"col\" class=\"num\">Groups</th><th scope=\"col\" class=\"num\">Advanced</th>\
         <th scope=\"col\" class=\"num\">Disqualified</th><th scope=\"col\">State</th></tr></thead>\n\
         <tbody>\n",
    );
    for r in &view.rounds {
        o.push_str("<tr><td><a href=\"");
        escape(o, &r.href);
        o.push_str("\">Round ");
        num(o, r.number);
        if r.is_final {
            o.push_str(" (final)");
        }
        o.push_str("</a></td><td class=\"num\">");
        num(o, r.n_teams);
        o.push_str("</td><td class=\"num\">");
        num(o, r.n_groups);
        o.push_str("</td><td class=\"num\">");
        num(o, r.n_advanced);
        o.push_str("</td><td class=\"num\">");
        num(o, r.n_disqualified);
        o.push_str("</td><td>");
        o.push_str(if r.finished { "finished" } else { "running" });
        o.push_str("</td></tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
    if view.frame.has_crosstable {
        o.push_str(
            "<p><a href=\"final-crosstable.html\">Cross-table of the final round</a> \
             (points of every team against every other).</p>",
        );
    }
    o.push_str("\n</section>\n\n<section id=\"teams\">\n<h2>Teams</h2>\n<ul class=\"teams\">\n");
    o.push_str(teams);
    o.push_str("</ul>\n</section>\n");
    o.push_str(FOOT);
    out
}

/// The head of a round's page, up to its first group: the frame, the
/// facts, the advancing and the disqualified teams. A round's page is
/// written in parts, so that its groups can be written one at a time and
/// a group's part kept: this, then [`round_group_html`] for every group,
/// then [`ROUND_FOOT`].
pub(super) fn round_head_html(out: &mut String, view: &RoundView) {
    let o = out;
    head(o, &view.frame);
    o.push_str("<h1 id=\"title\">");
    escape(o, &view.frame.title);
    o.push_str("</h1>\n<p class=\"facts\">");
    o.push_str(if view.is_final {
        "The final round: one group, everyone against everyone (and against itself)."
    } else {
        "A preliminary round: the better half of each group advances."
    });
    o.push_str(if view.finished {
        " Finished.</p>\n\n"
    } else {
        " Still running.</p>\n\n"
    });
    if !view.advanced.is_empty() {
        o.push_str("<section id=\"advanced\">\n<h2>Advancing to round ");
        num(o, view.next_round);
        o.push_str("</h2>\n<ul class=\"teams\">\n");
        for t in &view.advanced {
            o.push_str("<li>");
            team_link(o, t);
            o.push_str("</li>\n");
        }
        o.push_str("</ul>\n</section>\n");
    }
    o.push('\n');
    if !view.disqualified.is_empty() {
        o.push_str(
            "<section id=\"disqualified\">\n<h2>Disqualified</h2>\n<table>\n\
             <thead><tr><th scope=\"col\">Team</th><th scope=\"col\">Reason</th></tr></thead>\n\
             <tbody>\n",
        );
        for d in &view.disqualified {
            o.push_str("<tr><td>");
            team_link(o, &d.team);
            o.push_str("</td><td>");
            escape(o, &d.reason);
            o.push_str("</td></tr>\n");
        }
        o.push_str("</tbody>\n</table>\n</section>\n");
    }
    o.push('\n');
}

/// One group's part of a round's page: its members, its ranking (or that
/// it is still playing) and a row per game.
pub(super) fn round_group_html(out: &mut String, g: &GroupView) {
    let o = out;
    o.push_str("<section class=\"group\" id=\"");
    escape(o, &g.id);
    o.push_str("\">\n<h2>Group ");
    num(o, g.number);
    o.push_str("</h2>\n<p>Members: ");
    for (i, m) in g.members.iter().enumerate() {
        if i > 0 {
            o.push_str(", ");
        }
        team_link(o, m);
    }
    o.push_str(".</p>\n");
    if g.ranking.is_empty() {
        o.push_str("<p class=\"pending\">The group is still playing.</p>\n");
    } else {
        o.push_str(
            "<h3>Ranking</h3>\n<table class=\"ranking\">\n\
             <thead><tr><th scope=\"col\">Place</th><th scope=\"col\">Team</th>\
             <th scope=\"col\" class=\"num\">Points</th></tr></thead>\n<tbody>\n",
        );
        for p in &g.ranking {
            o.push_str("<tr><td class=\"num\">");
            num(o, p.place);
            o.push_str("</td><td>");
            team_link(o, &p.team);
            o.push_str("</td><td class=\"num\">");
            escape(o, &p.points);
            o.push_str("</td></tr>\n");
        }
        o.push_str("</tbody>\n</table>\n");
    }
    if let Some(note) = &g.pages_note {
        o.push_str("<p class=\"pages-note\">");
        escape(o, note);
        o.push_str("</p>\n");
    }
    o.push_str(
        "<h3>Games</h3>\n<table class=\"games\">\n\
         <thead><tr><th scope=\"col\" class=\"num\">Game</th><th scope=\"col\">P</th>\
         <th scope=\"col\">Q</th><th scope=\"col\" class=\"num\">Points</th>\
         <th scope=\"col\">Status</th><th scope=\"col\">Failures</th></tr></thead>\n<tbody>\n",
    );
    for x in &g.games {
        o.push_str("<tr class=\"status-");
        escape(o, x.status);
        o.push_str("\"><td class=\"num\">");
        match text_is_true(&x.href) {
            Some(href) => {
                o.push_str("<a href=\"");
                escape(o, href);
                o.push_str("\">");
                num(o, x.slot);
                o.push_str("</a>");
            }
            None => num(o, x.slot),
        }
        o.push_str("</td><td>");
        team_link(o, &x.p);
        o.push_str("</td><td>");
        team_link(o, &x.q);
        o.push_str("</td><td class=\"num\">");
        num(o, x.points_p);
        o.push_str(" : ");
        num(o, x.points_q);
        o.push_str("</td><td>");
        escape(o, &x.label);
        o.push_str("</td><td>");
        for f in &x.failures {
            o.push_str("<span class=\"failure\">");
            escape(o, f);
            o.push_str("</span> ");
        }
        o.push_str("</td></tr>\n");
    }
    o.push_str("</tbody>\n</table>\n</section>\n");
}

/// A game's page from its view and its throws (allowed in `a..=b`): the
/// facts, the score, the failures and the plot of the throws
/// ([`write_game_svg`]). The site writes its pages with [`write_game_html`].
#[cfg(test)]
pub(super) fn game_html(view: &GameView, throws: &[[i64; 2]], a: i64, b: i64) -> String {
    let mut out = String::new();
    write_game_html(&mut out, view, throws, a, b);
    out
}

/// [`game_html`] into `out`, cleared first: the site writes every game's
/// page into one string, grown to the longest page and not allocated again.
/// Returns the bytes of each side's own series in the plot
/// ([`write_game_svg`]).
pub(super) fn write_game_html(
    out: &mut String,
    view: &GameView,
    throws: &[[i64; 2]],
    a: i64,
    b: i64,
) -> [usize; 2] {
    out.clear();
    // The plot is most of the page: about 8 bytes a point of each of its
    // two upper lines, fewer for the lower ones, 8 a won throw's marker.
    out.reserve(8192 + 32 * throws.len());
    let o = out;
    head(o, &view.frame);
    o.push_str("<h1 id=\"title\">");
    escape(o, &view.frame.title);
    o.push_str("</h1>\n<p class=\"facts\"><a href=\"");
    escape(o, &view.round_href);
    o.push_str("\">Round ");
    num(o, view.round);
    o.push_str("</a>, group ");
    num(o, view.group);
    o.push_str(", game ");
    num(o, view.slot);
    o.push_str(" (attempt ");
    num(o, view.attempt);
    o.push_str("), seed <code>");
    num(o, view.seed);
    o.push_str("</code> · ");
    escape(o, &view.label);
    o.push_str(
        "</p>\n<table class=\"score\">\n<thead><tr><th scope=\"col\">Side</th>\
         <th scope=\"col\">Team</th><th scope=\"col\" class=\"num\">Points</th>\
         <th scope=\"col\" class=\"num\">Throws won</th></tr></thead>\n<tbody>\n",
    );
    for (side, mark, team, points, wins) in [
        (
            "P",
            "p\" aria-hidden=\"true\">●",
            &view.p,
            view.points_p,
            view.wins_p,
        ),
        (
            "Q",
            "q\" aria-hidden=\"true\">▲",
            &view.q,
            view.points_q,
            view.wins_q,
        ),
    ] {
        o.push_str("<tr><td>");
        o.push_str(side);
        o.push_str(" <span class=\"mark-");
        o.push_str(mark);
        o.push_str("</span></td><td>");
        team_link(o, team);
        o.push_str("</td><td class=\"num\">");
        num(o, points);
        o.push_str("</td><td class=\"num\">");
        num(o, wins);
        o.push_str("</td></tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
    if !view.failures.is_empty() {
        o.push_str("<section id=\"failures\">\n<h2>Failures</h2>\n<ul>\n");
        for f in &view.failures {
            o.push_str("<li>");
            escape(o, f);
            o.push_str("</li>\n");
        }
        o.push_str("</ul>\n</section>\n");
    }
    o.push_str("<figure id=\"throws\" class=\"plot\">\n");
    let own = write_game_svg(o, &view.p.name, &view.q.name, throws, a, b);
    o.push_str("\n<figcaption>");
    num(o, view.n_throws);
    o.push_str(
        " throws. Upper plot: the number each side threw (logarithmic scale); \
         a won throw is marked on the winner's number (P: circle, Q: triangle). \
         Lower plot: the points so far.</figcaption>\n</figure>\n",
    );
    o.push_str(FOOT);
    own
}

/// The end of a round's page, after its last group.
pub(super) const ROUND_FOOT: &str = FOOT;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::pages::{
        render, CrosstableView, DisqualifiedView, EvolutionLabels, EvolutionPlacedView, FailureRow,
        GameRow, GameView, NavRound, OpponentRow, PlacedView, PlacingRow, RoundSummary,
        TeamGameRow,
    };

    /// A number is written as the formatter writes it, at every type's
    /// ends and around each power of ten.
    #[test]
    fn a_number_is_written_as_the_formatter_writes_it() {
        fn check<T: Integer + std::fmt::Display>(n: T) {
            let mut out = String::from("x");
            num(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
        for k in 0..20u32 {
            let p = 10u64.pow(k);
            for n in [p - 1, p, p + 1] {
                check(n);
                if let Ok(s) = i64::try_from(n) {
                    check(s);
                    check(-s);
                }
            }
        }
        check(u64::MAX);
        check(i64::MIN);
        check(i64::MAX);
        check(u32::MAX);
        check(i32::MIN);
        check(usize::MAX);
        check(isize::MIN);
        check(0u8);
        check(i8::MIN);
        check(u16::MAX);
        check(i16::MIN);
    }

    const NASTY: &str = "<a href='x'>`=\"&amp;</a> ü —";

    fn team(name: &str, href: Option<&str>) -> TeamRef {
        TeamRef {
            name: name.into(),
            href: href.map(Into::into),
        }
    }

    /// Views that take every branch of the template: empty and full lists,
    /// absent, empty and present texts, zero and non-zero numbers, text
    /// that needs escaping everywhere it can come from.
    fn views() -> Vec<TeamView> {
        let frame = |n: u32, ct: bool, evo: bool| Frame {
            title: NASTY.into(),
            contest: format!("contest {NASTY}"),
            rounds: (1..=n)
                .map(|r| NavRound {
                    number: r,
                    href: format!("round-{r}.html"),
                })
                .collect(),
            has_crosstable: ct,
            has_evolution: evo,
        };
        let empty = TeamView {
            pages_note: None,
            frame: frame(0, false, false),
            name: "plain".into(),
            description: None,
            lexical_elements: None,
            placings: vec![],
            disqualified: None,
            evolution: None,
            games: vec![],
            opponents: vec![],
            failures: vec![],
        };
        let full = TeamView {
            pages_note: None,
            frame: frame(3, true, true),
            name: NASTY.into(),
            description: Some(format!("line 1\n{NASTY}\n\nline 4\n")),
            lexical_elements: Some(1234),
            placings: vec![
                PlacingRow {
                    round: 1,
                    href: "round-1.html".into(),
                    group: 7,
                    place: Some(3),
                    points: Some("1234.5".into()),
                },
                PlacingRow {
                    round: 2,
                    href: "round-2.html".into(),
                    group: 1,
                    place: None,
                    points: None,
                },
                PlacingRow {
                    round: 3,
                    href: "round-3.html".into(),
                    group: 1,
                    place: Some(0),
                    points: Some(String::new()),
                },
            ],
            disqualified: Some(format!("round 1: {NASTY}")),
            evolution: Some(EvolutionPlacedView {
                place: 2,
                team: team(NASTY, Some("team-1.html")),
                share: "12.5 %".into(),
                exemplars: "50".into(),
                last: Some("48 <".into()),
            }),
            games: vec![
                TeamGameRow {
                    round: 1,
                    group: 7,
                    slot: 12,
                    side: "P",
                    opponent: team(NASTY, Some("team-2.html")),
                    own: 123,
                    theirs: 0,
                    status: "counted",
                    label: "counted".into(),
                    href: Some("game-r1-g7-s12.html".into()),
                },
                TeamGameRow {
                    round: 1,
                    group: 7,
                    slot: 13,
                    side: "both",
                    opponent: team("other", None),
                    own: 0,
                    theirs: u64::MAX,
                    status: "failed",
                    label: format!("failed: {NASTY}").into(),
                    href: None,
                },
                TeamGameRow {
                    round: 2,
                    group: 1,
                    slot: 1,
                    side: "Q",
                    opponent: team("x", Some("")),
                    own: 5,
                    theirs: 6,
                    status: "cancelled",
                    label: "replay cancelled".into(),
                    href: Some(String::new()),
                },
            ],
            opponents: vec![
                OpponentRow {
                    opponent: team(NASTY, Some("team-2.html")),
                    games: 2,
                    own: 10,
                    theirs: 0,
                },
                OpponentRow {
                    opponent: team("other", None),
                    games: 0,
                    own: 0,
                    theirs: 7,
                },
            ],
            failures: vec![
                FailureRow {
                    round: 1,
                    group: 7,
                    slot: 13,
                    href: None,
                    reason: NASTY.into(),
                },
                FailureRow {
                    round: 1,
                    group: 7,
                    slot: 14,
                    href: Some("game-r1-g7-s14.html".into()),
                    reason: "crashed in throw 1".into(),
                },
            ],
        };
        let mut some = TeamView {
            pages_note: None,
            frame: frame(1, false, true),
            description: Some(String::new()),
            lexical_elements: Some(0),
            disqualified: Some(String::new()),
            ..full.clone()
        };
        some.evolution.as_mut().expect("set above").last = None;
        some.failures.clear();
        let mut cycle_empty_last = full.clone();
        cycle_empty_last.evolution.as_mut().expect("set above").last = Some(String::new());
        cycle_empty_last.frame = frame(2, true, false);
        vec![empty, full, some, cycle_empty_last]
    }

    /// The pages of [`views`], against the golden files
    /// `tests/data/snapshots/site/team-page-N.html` (written with
    /// `KNOBELN_UPDATE_SNAPSHOTS=1`; review their diff): this function is
    /// the team page's only definition, so its output is held here, with
    /// every branch and hostile text in every field that shows one.
    #[test]
    fn the_team_page_is_its_golden_file() {
        for (i, view) in views().iter().enumerate() {
            let page = team_html(view);
            let name = format!("team-page-{i}.html");
            crate::testing::assert_golden("site", &name, &page, &format!("view {i}"));
            // The participants' texts never show raw.
            for raw in ["<a href='x'>", "`=\"", "&amp;</a>"] {
                assert!(!page.contains(raw), "view {i}: {raw} raw");
            }
        }
    }

    /// Round pages that take every branch: final and preliminary,
    /// finished and running, with and without advancing and disqualified
    /// teams, a group still playing and finished ones, games with and
    /// without pages and failures, hostile text everywhere it can come
    /// from.
    fn round_views() -> Vec<(RoundView, Vec<GroupView>)> {
        let teams = views();
        let frame = |i: usize| teams[i].frame.clone();
        let game = |slot: u32, href: Option<&str>, failures: Vec<String>| GameRow {
            slot,
            attempt: 1,
            p: team(NASTY, Some("team-1.html")),
            q: team("plain", None),
            points_p: u64::MAX,
            points_q: 0,
            status: if failures.is_empty() {
                "counted"
            } else {
                "failed"
            },
            label: format!("label {NASTY}").into(),
            href: href.map(Into::into),
            failures,
        };
        let pending = GroupView {
            pages_note: None,
            number: 1,
            id: "group-1".into(),
            finished: false,
            members: vec![team(NASTY, Some("team-1.html")), team("plain", None)],
            ranking: vec![],
            games: vec![game(1, None, vec![])],
        };
        let finished = GroupView {
            pages_note: None,
            number: 12,
            id: format!("group-12{NASTY}"),
            finished: true,
            members: vec![
                team("a", Some("team-3.html")),
                team("b", Some("")),
                team(NASTY, None),
            ],
            ranking: vec![
                PlacedView {
                    place: 1,
                    team: team(NASTY, Some("team-1.html")),
                    points: "12.5".into(),
                },
                PlacedView {
                    place: 0,
                    team: team("b", None),
                    points: NASTY.into(),
                },
            ],
            games: vec![
                game(1, Some("game-r1-g12-s1.html"), vec![]),
                game(
                    2,
                    Some(""),
                    vec![format!("P: {NASTY}"), "Q: crashed in throw 3".into()],
                ),
                game(3, None, vec!["P: timeout".into()]),
            ],
        };
        let empty = GroupView {
            pages_note: None,
            number: 2,
            id: "group-2".into(),
            finished: false,
            members: vec![],
            ranking: vec![],
            games: vec![],
        };
        let round = |i: usize, is_final: bool, finished: bool| RoundView {
            frame: frame(i),
            number: 2,
            is_final,
            finished,
            advanced: vec![],
            next_round: 3,
            disqualified: vec![],
        };
        let mut full = round(1, false, true);
        full.advanced = vec![team(NASTY, Some("team-1.html")), team("plain", None)];
        full.disqualified = vec![
            DisqualifiedView {
                team: team(NASTY, Some("team-1.html")),
                reason: NASTY.into(),
            },
            DisqualifiedView {
                team: team("x", Some("")),
                reason: String::new(),
            },
        ];
        let mut only_dq = round(2, true, false);
        only_dq.disqualified = full.disqualified.clone();
        vec![
            (round(0, false, false), vec![]),
            (full, vec![pending.clone(), finished.clone(), empty.clone()]),
            (only_dq, vec![finished]),
            (round(3, true, true), vec![empty, pending]),
        ]
    }

    /// A round's page as the site writes it.
    fn round_page_html(view: &RoundView, groups: &[GroupView]) -> String {
        let mut page = String::new();
        round_head_html(&mut page, view);
        for g in groups {
            round_group_html(&mut page, g);
        }
        page.push_str(ROUND_FOOT);
        page
    }

    /// The round pages of [`round_views`], against the golden files
    /// `tests/data/snapshots/site/round-page-N.html` (written with
    /// `KNOBELN_UPDATE_SNAPSHOTS=1`; review their diff): the functions
    /// here are the round page's only definition.
    #[test]
    fn the_round_page_is_its_golden_file() {
        for (i, (view, groups)) in round_views().iter().enumerate() {
            let page = round_page_html(view, groups);
            let name = format!("round-page-{i}.html");
            crate::testing::assert_golden("site", &name, &page, &format!("view {i}"));
            for raw in ["<a href='x'>", "`=\"", "&amp;</a>"] {
                assert!(!page.contains(raw), "view {i}: {raw} raw");
            }
        }
    }

    /// A game's throws from a seed: `n` throws in `a..=b`, spread over
    /// the decades (a small linear congruential generator: the same
    /// throws on every machine).
    fn throws(n: usize, seed: u64, a: i64, b: i64) -> Vec<[i64; 2]> {
        let mut x = seed;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // A number of 1 to 14 bits, then into the range.
            let bits = 1 + (x >> 60) as u32 % 14;
            let v = ((x >> 20) & ((1 << bits) - 1)) as i64;
            v.clamp(a, b)
        };
        (0..n).map(|_| [next(), next()]).collect()
    }

    /// Game pages that take every branch, with the throws and the range
    /// of each: hostile names and failures, a game of one throw, of no
    /// throw, a long game, and numbers at both ends of the range (and
    /// beyond it, drawn at its edge).
    #[allow(clippy::type_complexity)]
    fn game_views() -> Vec<(GameView, Vec<[i64; 2]>, i64, i64)> {
        let teams = views();
        let view =
            |frame: usize, p: TeamRef, q: TeamRef, failures: Vec<String>, n: usize| GameView {
                frame: Frame {
                    title: format!("{} against {}", p.name, q.name),
                    ..teams[frame].frame.clone()
                },
                round: 2,
                round_href: "round-2.html".into(),
                group: 17,
                slot: 123,
                attempt: 2,
                seed: u64::MAX,
                p,
                q,
                points_p: 0,
                points_q: 0,
                status: "counted".into(),
                label: "counted".into(),
                n_throws: n,
                wins_p: 0,
                wins_q: 0,
                failures,
            };
        // The score as the site takes it: points from the record, wins
        // counted from the throws.
        let scored = |mut v: GameView, t: Vec<[i64; 2]>, a: i64, b: i64| {
            for &[p, q] in &t {
                let o = crate::game::knobeln::judge(p, q);
                let pts = o.points_of();
                v.points_p += u64::from(pts[0]);
                v.points_q += u64::from(pts[1]);
                match o.winner {
                    Some(crate::game::Player::P) => v.wins_p += 1,
                    Some(crate::game::Player::Q) => v.wins_q += 1,
                    None => {}
                }
            }
            v.n_throws = t.len();
            (v, t, a, b)
        };
        let mut hostile = view(
            1,
            team(NASTY, Some("team-1.html")),
            team(&format!("Q {NASTY}"), None),
            vec![
                format!("P ({NASTY}): crashed in throw 50: {NASTY}"),
                "Q (plain): timeout".into(),
            ],
            0,
        );
        hostile.label = format!("failed: {NASTY}");
        hostile.status = "failed".into();
        hostile.round_href = format!("round-2.html{NASTY}");
        let one = view(
            0,
            team("p", Some("team-1.html")),
            team("q", Some("")),
            vec![],
            0,
        );
        let none = view(
            2,
            team("p", Some("team-1.html")),
            team("crasher", Some("team-2.html")),
            vec!["Q (crasher): crashed in throw 1".into()],
            0,
        );
        let long = view(
            3,
            team("a", Some("team-1.html")),
            team("b", Some("team-2.html")),
            vec![],
            0,
        );
        let extreme = view(
            0,
            team("min", Some("team-1.html")),
            team("max", None),
            vec![],
            0,
        );
        vec![
            scored(hostile, throws(50, 1, 1, 12288), 1, 12288),
            scored(one, vec![[3, 5]], 1, 12288),
            scored(none, vec![], 1, 12288),
            scored(long, throws(1000, 2, 1, 12288), 1, 12288),
            scored(
                extreme,
                vec![
                    [i64::MIN, i64::MAX],
                    [i64::MAX, i64::MAX - 1],
                    [1, 2],
                    [0, -5],
                    [i64::MAX, 1],
                    [1 << 40, 1 << 41],
                ],
                i64::MIN,
                i64::MAX,
            ),
            scored(
                view(1, team("x", None), team("y", None), vec![], 0),
                vec![[0, 12289], [i64::MIN, i64::MAX], [12288, 12288]],
                1,
                12288,
            ),
        ]
    }

    /// The game pages of [`game_views`], against the golden files
    /// `tests/data/snapshots/site/game-page-N.html` (written with
    /// `KNOBELN_UPDATE_SNAPSHOTS=1`; review their diff): these functions
    /// are the game page's and its plot's only definition.
    #[test]
    fn the_game_page_is_its_golden_file() {
        for (i, (view, throws, a, b)) in game_views().iter().enumerate() {
            let page = game_html(view, throws, *a, *b);
            let name = format!("game-page-{i}.html");
            crate::testing::assert_golden("site", &name, &page, &format!("view {i}"));
            for raw in ["<a href='x'>", "`=\"", "&amp;</a>"] {
                assert!(!page.contains(raw), "view {i}: {raw} raw");
            }
            assert_eq!(page, game_html(view, throws, *a, *b), "deterministic");
            // Every number in the plot is finite and has at most one
            // decimal.
            let svg = &page[page.find("<svg").unwrap()..page.find("</svg>").unwrap()];
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "view {i}");
            assert!(
                !svg.split(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .any(|t| t.split('.').nth(1).is_some_and(|d| d.len() > 1)),
                "view {i}: more than one decimal"
            );
        }
    }

    /// Index views that take every branch of `index.hbs`: a contest just
    /// started (no ranking, no Evolution, optional texts absent or
    /// empty) and a finished one (the final ranking, an Evolution with and
    /// without a cycle's column and strategies that died out, the
    /// cross-table), hostile text in every field that shows one.
    fn index_views() -> Vec<IndexView> {
        let teams = views();
        let summary = |number: u32, is_final: bool, finished: bool| RoundSummary {
            number,
            href: format!("round-{number}.html{NASTY}"),
            is_final,
            finished,
            n_teams: 41,
            n_groups: 1,
            n_advanced: 0,
            n_disqualified: 3,
        };
        let placed = |place: u32, t: TeamRef| PlacedView {
            place,
            team: t,
            points: format!("{place}.5{NASTY}"),
        };
        let evolution = |place: u32, last: Option<&str>| EvolutionPlacedView {
            place,
            team: team(NASTY, Some("team-2.html")),
            share: format!("{NASTY} %"),
            exemplars: "12.5".into(),
            last: last.map(Into::into),
        };
        let started = IndexView {
            frame: teams[0].frame.clone(),
            seed: u64::MAX,
            state: "running".into(),
            started_at: Some(String::new()),
            finished_at: None,
            n_teams: 0,
            throws: 10,
            range: format!("1..6{NASTY}"),
            k: 0,
            final_ranking: vec![],
            evolution_ranking: vec![],
            evolution_labels: EvolutionLabels::default(),
            evolution_unranked: vec![],
            evolution_end: None,
            rounds: vec![],
            teams: vec![],
        };
        let finished = IndexView {
            frame: teams[1].frame.clone(),
            seed: 7,
            state: format!("finished{NASTY}"),
            started_at: Some(format!("2026-11-30 {NASTY}")),
            finished_at: Some("2026-11-30 10:00".into()),
            n_teams: 3,
            throws: 10,
            range: "1..6".into(),
            k: 3,
            final_ranking: vec![
                placed(1, team(NASTY, Some("team-1.html"))),
                placed(0, team("b", None)),
            ],
            evolution_ranking: vec![
                evolution(1, Some(NASTY)),
                evolution(2, None),
                evolution(3, Some("")),
            ],
            evolution_labels: EvolutionLabels {
                share: format!("Share{NASTY}"),
                exemplars: "Exemplars".into(),
                last: Some(format!("Last{NASTY}")),
            },
            evolution_unranked: vec![
                team(NASTY, Some("team-1.html")),
                team("x", Some("")),
                team("y", None),
            ],
            evolution_end: Some(format!("Ended {NASTY}.")),
            rounds: vec![
                summary(1, false, true),
                summary(2, true, false),
                summary(3, true, true),
            ],
            teams: vec![
                team(NASTY, Some("team-1.html")),
                team("b", None),
                team("c", Some("")),
            ],
        };
        let mut no_cycle = finished.clone();
        no_cycle.frame = teams[2].frame.clone();
        no_cycle.evolution_labels.last = None;
        no_cycle.evolution_unranked = vec![team("alone", None)];
        no_cycle.evolution_end = None;
        no_cycle.finished_at = Some(String::new());
        let mut empty_label = no_cycle.clone();
        empty_label.evolution_labels.last = Some(String::new());
        empty_label.evolution_unranked = vec![];
        vec![started, finished, no_cycle, empty_label]
    }

    /// The index written here is the template's (`index.hbs`, rendered by
    /// handlebars) byte for byte, for views that take every branch.
    #[test]
    fn the_index_is_its_template() {
        for (i, view) in index_views().iter().enumerate() {
            let ours = index_html(view);
            let theirs = render("index", view).unwrap();
            assert!(
                ours == theirs,
                "view {i}\n--- ours\n{ours}\n--- template\n{theirs}"
            );
            for raw in ["<a href='x'>", "`=\"", "&amp;</a>"] {
                assert!(!ours.contains(raw), "view {i}: {raw} raw");
            }
        }
    }

    /// The frame written here is the templates' (`head.hbs`, `foot.hbs`):
    /// a page rendered from a template with the same frame starts with the
    /// same head and ends with the same foot.
    #[test]
    fn the_head_and_foot_are_the_templates() {
        for view in views() {
            let mut ours = String::new();
            head(&mut ours, &view.frame);
            let theirs = render(
                "crosstable",
                &CrosstableView {
                    frame: view.frame.clone(),
                    svg: None,
                    teams: vec![],
                },
            )
            .unwrap();
            assert!(
                theirs.starts_with(&ours),
                "--- ours\n{ours}\n--- template\n{theirs}"
            );
            assert!(theirs.ends_with(FOOT));
        }
    }
}
