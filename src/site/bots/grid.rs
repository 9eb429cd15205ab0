//! The tables of the bot site that link to the pairings' pages: a bot's
//! per-opponent table, and the index's grid of every bot against every
//! bot (a one-seat discipline's: every material against every bot), each
//! in its discipline's words (the seam's grid sentence, cells and notes).
//!
//! What it deliberately does not do: count the games (`Tally`, through
//! the seam) or write files (the parent module).

use std::collections::BTreeMap;

use crate::discipline::results::{opponent_table, table_rows, Results};
use crate::discipline::table::OpponentRow;
use crate::draw::escape;
use crate::store::bots::{slug, BotContest, Tally};
use crate::tournament::TeamId;

/// A bot's per-opponent table (the model of the mail's, with links to the
/// pairings), its total and the sentences under it.
pub(super) fn opponents_html(results: &Results, rows: &[OpponentRow]) -> String {
    let t = opponent_table(results, rows);
    let mut h = String::from("<h2>Games</h2>\n<table class=\"opponents\"><tr>");
    for (k, head) in t.heads.iter().enumerate() {
        let class = if k == 0 { " class=\"l\"" } else { "" };
        h.push_str(&format!("<th{class}>{}</th>", escape(head)));
    }
    h.push_str("</tr>\n");
    for (r, cells) in rows.iter().zip(&t.rows) {
        h.push_str(&format!(
            "<tr><td class=\"l\"><a href=\"../pairing/{}.html\">{}</a></td>",
            slug(&r.pairing),
            escape(&cells[0])
        ));
        for cell in &cells[1..] {
            h.push_str(&format!("<td>{}</td>", escape(cell)));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("<tr class=\"total\">");
    for (k, cell) in t.total.iter().enumerate() {
        let class = if k == 0 { " class=\"l\"" } else { "" };
        h.push_str(&format!("<th{class}>{}</th>", escape(cell)));
    }
    h.push_str("</tr>\n</table>\n");
    for n in &t.notes {
        h.push_str(&format!("<p>{}</p>\n", escape(n)));
    }
    h
}

/// The grid of the index: every bot (rows, in the order of the ranking)
/// against every bot (columns), each cell the result of that pairing and a
/// link to its games; for the flooding island every island (rows) against
/// every bot (columns), each cell the mean rounds survived.
pub(super) fn grid_html(c: &BotContest, results: &Results, tally: &Tally) -> String {
    let (_, ranked) = table_rows(results);
    let team_of: BTreeMap<&str, TeamId> = c
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.team))
        .collect();
    let bots: Vec<(TeamId, &str)> = ranked
        .iter()
        .filter_map(|r| {
            let name = r.get(1)?.as_str();
            Some((*team_of.get(name)?, name))
        })
        .collect();
    let mut h = String::new();
    let head = |h: &mut String, corner: &str| {
        h.push_str(&format!(
            "<table class=\"grid\">\n<tr><th class=\"l\">{corner}</th>"
        ));
        for (t, name) in &bots {
            h.push_str(&format!(
                "<th><a href=\"bot/{}.html\">{}</a></th>",
                t.0,
                escape(name)
            ));
        }
        h.push_str("</tr>\n");
    };
    let cell = |r: Option<&OpponentRow>, text: String| match r {
        Some(r) => format!(
            "<td><a href=\"pairing/{}.html\">{text}</a></td>",
            slug(&r.pairing)
        ),
        None => "<td>-</td>".to_string(),
    };
    let seam = tally.seam();
    if let Some(grid) = seam.material_grid() {
        h.push_str(&format!(
            "<h2>{}</h2>\n<p>{}</p>\n",
            escape(grid.heading),
            escape(grid.sentence)
        ));
        head(&mut h, grid.corner);
        let rows: BTreeMap<TeamId, Vec<OpponentRow>> =
            bots.iter().map(|(t, _)| (*t, tally.rows_of(*t))).collect();
        for (k, (material, _)) in c.materials.iter().enumerate() {
            h.push_str(&format!("<tr><th class=\"l\">{}</th>", escape(material)));
            for (t, _) in &bots {
                let pairing = (grid.pairing)(*t, k);
                let r = rows[t].iter().find(|r| r.pairing == pairing);
                h.push_str(&cell(r, r.map(grid.cell).unwrap_or_default()));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
        return h;
    }
    let what = seam.grid_sentence();
    h.push_str(&format!(
        "<h2>Bot against bot</h2>\n<p>Each cell: the bot of its row against the bot \
         of its column, {what}; it opens their games.</p>\n"
    ));
    head(&mut h, "Bot");
    for (t, name) in &bots {
        let rows = tally.rows_of(*t);
        h.push_str(&format!(
            "<tr><th class=\"l\"><a href=\"bot/{}.html\">{}</a></th>",
            t.0,
            escape(name)
        ));
        for (o, _) in &bots {
            let r = rows.iter().find(|r| r.opponent == Some(*o));
            let text = r.map_or(String::new(), |r| seam.grid_cell(results, r));
            h.push_str(&cell(r, text));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h.push_str(&seam.grid_note_html(results));
    h
}
