//! The replay of a bot game on its page (issue 36): the data that the
//! page's small script steps through, and the panel it fills.
//!
//! [`replay_data`] is a pure function of a game's transcript: one step per
//! line a bot printed, each with its seat, the line and the number of the
//! move, round or turn it belongs to (the picture's `step-N` frame shows
//! the state after it). [`panel`] embeds that data as JSON in the page
//! (every `<`, `>` and `&` written as a `\u` escape, so that whatever a
//! bot printed, `</script>` included, stays data) with the script
//! (`templates/site/replay.js`, inline: no outside asset, no framework)
//! and a panel that is `hidden` until the script shows it: without
//! JavaScript the page is the static page it always was, the strip of
//! frames included.
//!
//! What is not per move: the CPU time (measured per bot and game) and the
//! standard error (its first bytes per bot and game); the panel says so,
//! and the page lists both per bot. What it does not do: draw frames (the
//! discipline's picture does), judge moves or read the store.

use serde::Serialize;

use crate::discipline::play::Setup;
use crate::discipline::seam::Numbering;
use crate::game::lines::{Exchange, Said};

use crate::draw::escape;

/// The script of the replay panel.
pub const SCRIPT: &str = include_str!("../../templates/site/replay.js");

/// At most this many bytes of JSON are embedded (the game page stays
/// bounded: a 2500-round ultimatum match needs about 75 kB); the steps
/// beyond are left out and the panel says so.
pub const MAX_JSON_BYTES: usize = 256 * 1024;

/// A line is shown up to this many characters (the transcript has it
/// whole).
pub const MAX_LINE_CHARS: usize = 200;

/// What the script reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayData {
    /// What a step's number counts: `move`, `round` or `turn`.
    pub unit: &'static str,
    /// Whether the page's picture has frames `step-N` to show.
    pub frames: bool,
    /// The players as pages name them: "player 1 (alice)"; flooding:
    /// "the bot (alice)".
    pub players: Vec<String>,
    /// One step per line a bot printed: [seat, line, number].
    pub steps: Vec<(usize, String, u32)>,
    /// Lines a bot printed that are left out (the size cap).
    pub left_out: usize,
}

/// How a player is named in new texts: "player 1 (alice)" (the seed's
/// numbering), on the flooding island "the bot (alice)".
pub fn player_name(setup: &Setup, names: &[String], seat: usize) -> String {
    let who = if setup.seats() == 1 {
        crate::discipline::registry::of_setup(setup)
            .replay_terms()
            .solo_name
            .to_string()
    } else {
        crate::words::player(seat)
    };
    match names.get(seat).filter(|n| !n.trim().is_empty()) {
        Some(n) => format!("{who} ({})", crate::draw::short(n, 60)),
        None => who,
    }
}

/// The replay of a game: see the module's description.
pub fn replay_data(setup: &Setup, transcript: &[Exchange], names: &[String]) -> ReplayData {
    let terms = crate::discipline::registry::of_setup(setup).replay_terms();
    let (unit, frames) = (terms.unit, terms.frames);
    let seats = names.len().max(setup.seats());
    let players = (0..seats).map(|s| player_name(setup, names, s)).collect();
    let mut steps = Vec::new();
    let mut bytes = 0usize;
    let mut left_out = 0usize;
    let mut printed = 0u32;
    let mut round = 0u32;
    for ex in transcript {
        match ex.said {
            Said::ToBot => {
                // The flooding referee opens each round with `ROUND z x,y`,
                // the ultimatum game's with `RUNDE r`.
                if let Some(z) = ex
                    .line
                    .strip_prefix("ROUND ")
                    .or_else(|| ex.line.strip_prefix("RUNDE "))
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(|z| z.parse().ok())
                {
                    round = z;
                }
            }
            Said::ByBot => {
                printed += 1;
                let number = match terms.numbering {
                    Numbering::Round => round,
                    // A turn is player 1's bid, then player 2's.
                    Numbering::Turns => printed.div_ceil(2),
                    Numbering::PrintedAfter(skip) => printed.saturating_sub(skip),
                    Numbering::Printed => printed,
                };
                // What the bot printed, made visible (a bidi override or a
                // control character as its escape: the script shows text
                // as it is), then cut.
                let line = crate::draw::short(&crate::draw::visible(&ex.line), MAX_LINE_CHARS);
                // The step's JSON as embedded: the line quoted, `<`, `>`
                // and `&` five bytes longer each, U+2028 and U+2029 three
                // (six bytes for three), the numbers, `[`, `,` twice, `]`
                // and the comma after.
                let cost = serde_json::to_string(&line).map_or(0, |j| j.len())
                    + 5 * line.matches(['<', '>', '&']).count()
                    + 3 * line.matches(['\u{2028}', '\u{2029}']).count()
                    + ex.seat.to_string().len()
                    + number.to_string().len()
                    + 5;
                if left_out > 0 || bytes + cost > MAX_JSON_BYTES {
                    left_out += 1;
                    continue;
                }
                bytes += cost;
                steps.push((ex.seat, line, number));
            }
        }
    }
    ReplayData {
        unit,
        frames,
        players,
        steps,
        left_out,
    }
}

/// `data` as JSON that is safe inside a `<script>` element: `<`, `>`,
/// `&` and the two JavaScript line separators as `\u` escapes (JSON reads
/// them back as the same characters).
pub fn script_json(data: &ReplayData) -> String {
    let json = serde_json::to_string(data).expect("replay data is JSON");
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// The replay panel of a game page (hidden until the script runs), its
/// data and its script. `cpu` is each player's CPU time for the game.
pub fn panel(data: &ReplayData, cpu_ms: &[u64]) -> String {
    let cpu: Vec<String> = data
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{} {} ms", escape(p), cpu_ms.get(i).copied().unwrap_or(0)))
        .collect();
    let cut = if data.left_out > 0 {
        format!(
            " The replay covers the first {} lines the bots printed; the other {} are in \
             the transcript.",
            data.steps.len(),
            data.left_out
        )
    } else {
        String::new()
    };
    format!(
        "<section id=\"replay\" hidden>\n<h2>Replay</h2>\n\
         <p class=\"replay-controls\">\
         <button type=\"button\" id=\"replay-first\" title=\"first line (Home)\">first</button> \
         <button type=\"button\" id=\"replay-back\" title=\"one line back (←)\">◀</button> \
         <button type=\"button\" id=\"replay-play\" title=\"play or pause (space)\">play</button> \
         <button type=\"button\" id=\"replay-next\" title=\"next line (→)\">▶</button> \
         <button type=\"button\" id=\"replay-last\" title=\"last line (End)\">last</button> \
         <input type=\"range\" id=\"replay-slider\" min=\"1\" max=\"{n}\" value=\"1\" \
         aria-label=\"line\" style=\"width:24em;vertical-align:middle\"> \
         <span id=\"replay-pos\"></span></p>\n\
         <p id=\"replay-who\"></p>\n<pre id=\"replay-line\"></pre>\n\
         <div id=\"replay-frame\"></div>\n\
         <p class=\"replay-note\"><small>Keys: ← and → step, Home and End jump, space plays. \
         CPU time is measured per game, not per move: {cpu}. What the bots wrote to standard \
         error is kept per game (below), not per move.{cut}</small></p>\n\
         <script type=\"application/json\" id=\"replay-data\">{json}</script>\n\
         <script>{SCRIPT}</script>\n</section>\n",
        n = data.steps.len().max(1),
        cpu = cpu.join(", "),
        json = script_json(data),
    )
}

/// Each player's standard error as stored (its first bytes), for the
/// page: static, shown with or without the script.
pub fn stderr_section(players: &[String], stderr: &[String]) -> String {
    if stderr.iter().all(|s| s.trim().is_empty()) {
        return String::new();
    }
    let mut out = String::from(
        "<section id=\"stderr\">\n<h2>Standard error</h2>\n<p>The first bytes each bot \
         wrote to standard error in this game (kept per game, not per move).</p>\n",
    );
    for (i, text) in stderr.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let who = players
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("player {}", i + 1));
        out.push_str(&format!(
            "<details><summary>{}</summary><pre id=\"stderr-{i}\">{}</pre></details>\n",
            escape(&who),
            escape(text)
        ));
    }
    out.push_str("</section>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(seat: usize, said: Said, line: &str) -> Exchange {
        Exchange {
            seat,
            said,
            line: line.into(),
        }
    }

    #[test]
    fn every_line_a_bot_printed_is_a_step_numbered_as_its_picture() {
        let t = vec![
            ex(0, Said::ByBot, "Alpha"),
            ex(1, Said::ByBot, "Beta"),
            ex(0, Said::ToBot, "0 0 0 0 0 0 0 0 0"),
            ex(0, Said::ByBot, "0 0 0 1 1 1 0 0 0"),
            ex(1, Said::ByBot, "0 0 0 1 3 1 0 0 0"),
        ];
        let names = vec!["a".to_string(), "b".to_string()];
        let d = replay_data(&crate::discipline::morabaraba::setup(), &t, &names);
        assert_eq!(d.unit, "move");
        assert_eq!(
            d.steps.iter().map(|s| s.2).collect::<Vec<_>>(),
            vec![0, 0, 1, 2]
        );
        assert_eq!(d.steps[2], (0, "0 0 0 1 1 1 0 0 0".to_string(), 1));
        assert_eq!(d.players, vec!["player 1 (a)", "player 2 (b)"]);
        let fs = crate::discipline::footsteps::setup(
            crate::discipline::footsteps::rules::Params::default(),
        );
        let d = replay_data(&fs, &t, &names);
        assert_eq!(
            d.steps.iter().map(|s| s.2).collect::<Vec<_>>(),
            vec![1, 1, 2, 2]
        );
    }

    #[test]
    fn ultimatum_steps_are_numbered_by_the_referees_rounds() {
        let t = vec![
            ex(0, Said::ToBot, "RUNDEN 2"),
            ex(0, Said::ToBot, "RUNDE 1"),
            ex(0, Said::ByBot, "500"),
            ex(1, Said::ByBot, "JA"),
            ex(1, Said::ByBot, "499"),
            ex(0, Said::ByBot, "NEIN"),
            ex(0, Said::ToBot, "RUNDE 2"),
            ex(0, Said::ByBot, "500"),
        ];
        let setup =
            crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
                rounds: 2,
            });
        let d = replay_data(&setup, &t, &[]);
        assert_eq!(
            d.steps.iter().map(|s| s.2).collect::<Vec<_>>(),
            vec![1, 1, 1, 1, 2]
        );
        assert!(!d.frames);
        assert_eq!(d.players, vec!["player 1", "player 2"]);
    }

    #[test]
    fn flooding_steps_are_numbered_by_the_referees_rounds() {
        let t = vec![
            ex(0, Said::ToBot, "GAMEBOARDEND"),
            ex(0, Said::ToBot, "ROUND 1 4,2"),
            ex(0, Said::ByBot, "GO NORTH"),
            ex(0, Said::ByBot, "DRY CURRENT"),
            ex(0, Said::ToBot, "ROUND 2 4,1"),
            ex(0, Said::ByBot, "GO SOUTH"),
        ];
        let setup = crate::discipline::flooding::setup(
            crate::discipline::flooding::rules::Island::parse(
                "GAMEBOARDSTART 1,1\no\nGAMEBOARDEND",
            )
            .unwrap(),
            Default::default(),
            1,
        );
        let d = replay_data(&setup, &t, &["x".to_string()]);
        assert_eq!(
            d.steps.iter().map(|s| s.2).collect::<Vec<_>>(),
            vec![1, 1, 2]
        );
        assert_eq!(d.players, vec!["the bot (x)"]);
    }

    /// A bot is hostile: whatever it prints stays data inside the JSON,
    /// which stays inside its script element.
    #[test]
    fn a_hostile_line_cannot_leave_the_json_or_the_script() {
        let evil = "</script><script>alert(1)</script><!-- \u{2028} & \"";
        let t = vec![ex(0, Said::ByBot, evil), ex(1, Said::ByBot, "NEIN")];
        let names = vec!["</script>".to_string(), "<b>".to_string()];
        let setup =
            crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
                rounds: 1,
            });
        let d = replay_data(&setup, &t, &names);
        let html = panel(&d, &[1, 2]);
        // Our two script elements, nothing more opened or closed.
        assert_eq!(html.matches("<script").count(), 2, "{html}");
        assert_eq!(html.matches("</script").count(), 2, "{html}");
        assert!(!html.contains("<!--") && !html.contains("<b>"));
        // The JSON between its tags reads back as the lines printed, made
        // visible (the line separator as its escape).
        let start = html.find("id=\"replay-data\">").unwrap() + "id=\"replay-data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        let back: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        assert_eq!(back["steps"][0][1], crate::draw::visible(evil).as_ref());
        assert!(html[start..end].contains("\\\\u{2028}"), "{html}");
        assert_eq!(back["players"][0], "player 1 (</script>)");
        let err = stderr_section(&d.players, &[evil.to_string(), String::new()]);
        assert!(!err.contains("<script") && err.contains("&lt;/script&gt;"));
    }

    /// Hostile review (issue 38's leftovers): a bot's bidi override,
    /// C1 or ANSI escape reaches the replay and the standard error of its
    /// page as a visible escape, never as the character itself (the
    /// script shows a line as text: it must not reorder or hide it).
    #[test]
    fn a_bots_bidi_override_or_control_shows_as_its_escape() {
        let hostile = crate::draw::tests::HIDING;
        let t = vec![ex(0, Said::ByBot, hostile)];
        let setup =
            crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
                rounds: 1,
            });
        let d = replay_data(&setup, &t, &["a".to_string(), "b".to_string()]);
        assert_eq!(d.steps[0].1, crate::draw::visible(hostile));
        let html = panel(&d, &[1, 2]);
        let err = stderr_section(&d.players, &[hostile.to_string()]);
        for page in [&html, &err] {
            assert_eq!(crate::draw::visible(page), page.as_str());
        }
        assert!(err.contains("ok\\u{202e}txt.exe") && html.contains("ok\\\\u{202e}txt.exe"));
    }

    /// The script is inline: nothing in it may close its element.
    #[test]
    fn the_script_stays_in_its_element() {
        let low = SCRIPT.to_ascii_lowercase();
        assert!(!low.contains("</script") && !low.contains("<!--"));
    }

    #[test]
    fn a_long_game_of_line_separators_stays_under_the_cap() {
        let line = "\u{2028}\u{2029}".repeat(500);
        let t: Vec<Exchange> = (0..5000).map(|i| ex(i % 2, Said::ByBot, &line)).collect();
        let setup =
            crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
                rounds: 2500,
            });
        let d = replay_data(&setup, &t, &[]);
        assert!(d.left_out > 0);
        assert!(script_json(&d).len() < MAX_JSON_BYTES + 1024);
    }

    #[test]
    fn a_long_game_is_cut_and_says_so() {
        let line = "<".repeat(1000);
        let t: Vec<Exchange> = (0..5000).map(|i| ex(i % 2, Said::ByBot, &line)).collect();
        let setup =
            crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
                rounds: 2500,
            });
        let d = replay_data(&setup, &t, &[]);
        assert!(d.left_out > 0 && d.steps.len() + d.left_out == 5000);
        assert!(d
            .steps
            .iter()
            .all(|s| s.1.chars().count() <= MAX_LINE_CHARS + 1));
        let html = panel(&d, &[]);
        assert!(html.len() < MAX_JSON_BYTES + 16 * 1024, "{}", html.len());
        assert!(html.contains("the other"));
    }
}
