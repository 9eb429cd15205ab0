//! The results site of a bot discipline: `index.html` with the ranking as
//! an HTML table and the full text of the results (the pair table of
//! FootSteps, the islands of the flooding island). Only reads what it is
//! given; writes one folder.

use std::path::Path;

use crate::contest::bots::{results_text, table_rows, Results};
use crate::discipline::Discipline;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page, as HTML.
pub fn index_html(contest_name: &str, d: Discipline, results: &Results) -> String {
    let (headers, rows) = table_rows(results);
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{name}: results</title>\
         <style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #999;padding:.2em .6em}}\
         td{{text-align:right}}td:nth-child(2){{text-align:left}}</style></head><body>\n\
         <h1>{name}</h1>\n<h2>Results: {disc}</h2>\n<table class=\"results\">\n<tr>",
        name = escape(contest_name),
        disc = escape(d.title())
    );
    for head in headers {
        h.push_str(&format!("<th>{}</th>", escape(head)));
    }
    h.push_str("</tr>\n");
    for r in rows {
        h.push_str("<tr>");
        for c in r {
            h.push_str(&format!("<td>{}</td>", escape(&c)));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n<h2>In full</h2>\n<pre>");
    h.push_str(&escape(&results_text(results)));
    h.push_str("</pre>\n</body></html>\n");
    h
}

/// Writes `index.html` into `dir` (created).
pub fn write(
    dir: &Path,
    contest_name: &str,
    d: Discipline,
    results: &Results,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(".index.html.tmp");
    std::fs::write(&tmp, index_html(contest_name, d, results))?;
    std::fs::rename(tmp, dir.join("index.html"))
}
