//! The picture of one ultimatum match for its page on the results site,
//! drawn from the match's transcript: a chart of the offers of both bots
//! over the rounds (accepted filled, rejected hollow) with the points each
//! has earned so far, the final standings as bars (`id="final"`), and a
//! table of the first rounds.
//!
//! It reads the lines as the referee recorded them (`START`, `ANGEBOT x`,
//! `RUNDE r` to a bot; offers and `JA`/`NEIN` from it) and trusts nothing
//! else: a line that is not what the protocol expects there ends the
//! reading (the referee ended the match there too), unknown lines to a bot
//! are skipped. It deliberately does not judge the match (who forfeited
//! is read from the transcript, the official result is the tournament's),
//! draws no mark for every one of a long match's rounds (every k-th round,
//! said so), and emits no script.

use std::fmt::Write;

use crate::discipline::game::Setup;
use crate::discipline::ultimatum::rules::{
    parse_answer, parse_offer, HalfRound, Params, MAX_ROUNDS, POT,
};
use crate::draw::{
    legend, num, quote_line, seat_colour, seat_mark, seat_name, shown, svg_open, thinning_note,
    thousands,
};
use crate::game::lines::{Exchange, Said};

/// Rounds in the table.
const TABLE_ROUNDS: usize = 50;
/// Rounds whose offers get a mark in the chart (more are thinned).
const MAX_MARKED_ROUNDS: usize = 500;
/// Points of each cumulative line.
const MAX_LINE_POINTS: usize = 700;

/// Chart geometry (pixels).
const W: f64 = 760.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 16.0;
const OFFERS_TOP: f64 = 24.0;
const OFFERS_H: f64 = 190.0;
const POINTS_TOP: f64 = OFFERS_TOP + OFFERS_H + 44.0;
const POINTS_H: f64 = 150.0;
const H: f64 = POINTS_TOP + POINTS_H + 34.0;

/// One round as read: the half-round with each seat as proposer.
#[derive(Debug, Clone, Copy, Default)]
struct Round {
    round: u32,
    by: [Option<HalfRound>; 2],
    /// Points of both seats after this round.
    total: [u64; 2],
}

/// What the transcript says.
#[derive(Debug, Default)]
struct Read {
    /// Rounds the match was to have.
    planned: u32,
    rounds: Vec<Round>,
    /// Points of both seats at the end.
    total: [u64; 2],
    /// The first line that broke the protocol: seat, line and round.
    broken: Option<(usize, String, u32)>,
    /// `ENDE` was sent.
    ended: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Last {
    Other,
    Start,
    Offer(u32),
}

fn read(setup: &Setup, transcript: &[Exchange]) -> Read {
    let mut r = Read {
        planned: match setup.try_get::<Params>() {
            Some(p) if p.validate().is_ok() => p.rounds,
            _ => Params::default().rounds,
        },
        ..Read::default()
    };
    let mut last = [Last::Other; 2];
    let mut round = 1u32;
    for ex in transcript {
        if ex.seat > 1 {
            continue;
        }
        let line = ex.line.as_str();
        match ex.said {
            Said::ToBot => {
                last[ex.seat] = Last::Other;
                if line == "START" {
                    last[ex.seat] = Last::Start;
                } else if line == "ENDE" {
                    r.ended = true;
                } else if let Some(x) = number_after(line, "ANGEBOT ") {
                    last[ex.seat] = Last::Offer(x.min(u64::from(POT)) as u32);
                } else if let Some(n) = number_after(line, "RUNDE ") {
                    round = n.clamp(1, u64::from(MAX_ROUNDS)) as u32;
                } else if let Some(n) = number_after(line, "RUNDEN ") {
                    r.planned = n.clamp(1, u64::from(MAX_ROUNDS)) as u32;
                }
            }
            Said::ByBot => {
                let ok = match last[ex.seat] {
                    Last::Start => parse_offer(line).is_ok(),
                    Last::Offer(offer) => match parse_answer(line) {
                        Ok(accepted) => {
                            let half = HalfRound {
                                round,
                                proposer: 1 - ex.seat,
                                offer,
                                accepted,
                            };
                            r.add(half);
                            true
                        }
                        Err(_) => false,
                    },
                    Last::Other => false,
                };
                last[ex.seat] = Last::Other;
                if !ok {
                    r.broken = Some((ex.seat, line.to_string(), round));
                    break;
                }
            }
        }
    }
    r
}

impl Read {
    fn add(&mut self, half: HalfRound) {
        let p = half.points();
        self.total[0] += p[0];
        self.total[1] += p[1];
        let joins = self
            .rounds
            .last()
            .is_some_and(|last| last.round == half.round && last.by[half.proposer].is_none());
        if !joins {
            self.rounds.push(Round {
                round: half.round,
                ..Round::default()
            });
        }
        let last = self.rounds.last_mut().expect("a round");
        last.by[half.proposer] = Some(half);
        last.total = self.total;
    }

    /// Offers of `seat` and how many were accepted.
    fn offers(&self, seat: usize) -> (usize, usize) {
        let halves = self.rounds.iter().filter_map(|r| r.by[seat]);
        halves.fold((0, 0), |(n, a), h| (n + 1, a + usize::from(h.accepted)))
    }
}

/// The decimal number after `prefix`, if the line is exactly that.
fn number_after(line: &str, prefix: &str) -> Option<u64> {
    let digits = line.strip_prefix(prefix)?;
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An HTML fragment (static SVG, no script) that shows the match.
pub fn picture(setup: &Setup, transcript: &[Exchange], names: &[String]) -> String {
    let r = read(setup, transcript);
    let mut out = String::from("<section class=\"game-picture ultimatum\">\n");
    let extra = [
        (
            format!(
                "{}{}",
                seat_mark(0, 4.0, 7.0, 3.0, true),
                seat_mark(1, 10.0, 7.0, 3.0, true)
            ),
            "offer accepted".to_string(),
        ),
        (
            format!(
                "{}{}",
                seat_mark(0, 4.0, 7.0, 3.0, false),
                seat_mark(1, 10.0, 7.0, 3.0, false)
            ),
            "offer rejected".to_string(),
        ),
    ];
    out.push_str(&legend(names, 2, &extra));
    out.push_str(&final_standings(&r, names));
    out.push_str(&chart(&r, names));
    out.push_str(&table(&r, names));
    out.push_str("</section>\n");
    out
}

/// What the match came to, in words.
fn verdict(r: &Read, names: &[String]) -> String {
    let played = r.rounds.last().map_or(0, |x| x.round);
    let complete = r
        .rounds
        .last()
        .is_some_and(|x| x.by.iter().all(Option::is_some));
    let done = if complete {
        played
    } else {
        played.saturating_sub(1)
    };
    let mut s = format!("{done} of {} rounds played", r.planned);
    if let Some((seat, line, round)) = &r.broken {
        let _ = write!(
            s,
            ". {} broke the protocol in round {} (it printed “{}”) and forfeits the match: it scores 0, {} wins",
            seat_name(names, *seat, 40),
            round,
            quote_line(line, 40),
            seat_name(names, 1 - seat, 40)
        );
    } else if done < r.planned {
        s.push_str(if r.ended {
            ". The referee ended the match early: a bot failed outside the protocol (it crashed, ran out of time or stopped answering)"
        } else {
            ". The transcript ends here"
        });
    } else {
        let [a, b] = r.total;
        let _ = match a.cmp(&b) {
            std::cmp::Ordering::Greater => write!(s, ". {} wins", seat_name(names, 0, 40)),
            std::cmp::Ordering::Less => write!(s, ". {} wins", seat_name(names, 1, 40)),
            std::cmp::Ordering::Equal => write!(s, ". A draw"),
        };
    }
    s.push('.');
    s
}

/// The final standings: a bar per seat (`id="final"`).
fn final_standings(r: &Read, names: &[String]) -> String {
    let height = 86u32;
    let max = r.total[0].max(r.total[1]).max(1) as f64;
    let bar_left = 170.0;
    let bar_w = W - bar_left - 140.0;
    let mut svg = svg_open(
        "final",
        W as u32,
        height,
        &format!("0 0 {} {height}", W as u32),
        &format!(
            "Final points: {} {}, {} {}",
            seat_name(names, 0, 40),
            thousands(r.total[0]),
            seat_name(names, 1, 40),
            thousands(r.total[1])
        ),
    );
    for seat in 0..2 {
        let y = 12.0 + 36.0 * seat as f64;
        let forfeited = r.broken.as_ref().is_some_and(|(s, _, _)| *s == seat);
        let w = bar_w * r.total[seat] as f64 / max;
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="end" font-size="13" font-family="sans-serif">{}</text>"#,
            num(bar_left - 8.0),
            num(y + 16.0),
            seat_name(names, seat, 22)
        );
        let _ = write!(
            svg,
            r#"<rect x="{}" y="{}" width="{}" height="24" fill="{}"{}/>"#,
            num(bar_left),
            num(y),
            num(w),
            seat_colour(seat),
            if seat == 1 {
                r#" fill-opacity="0.85""#
            } else {
                ""
            }
        );
        let _ = write!(
            svg,
            r#"<text class="points" x="{}" y="{}" font-size="13" font-family="sans-serif">{} points{}</text>"#,
            num(bar_left + w + 6.0),
            num(y + 16.0),
            thousands(r.total[seat]),
            if forfeited {
                " (forfeited: scores 0)"
            } else {
                ""
            }
        );
    }
    svg.push_str("</svg>");
    format!(
        "<figure>{svg}<figcaption>Points earned: {} {}, {} {}. {}</figcaption></figure>\n",
        seat_name(names, 0, 40),
        thousands(r.total[0]),
        seat_name(names, 1, 40),
        thousands(r.total[1]),
        verdict(r, names)
    )
}

/// The chart: offers per round (top), points so far (bottom).
fn chart(r: &Read, names: &[String]) -> String {
    let last_round = r.rounds.last().map_or(0, |x| x.round);
    let axis = r.planned.max(last_round).max(1) as f64;
    let plot_w = W - LEFT - RIGHT;
    let x = |round: u32| LEFT + (f64::from(round) - 0.5) / axis * plot_w;
    let y_offer = |offer: u32| OFFERS_TOP + OFFERS_H * (1.0 - f64::from(offer) / f64::from(POT));
    let max_points = r.total[0].max(r.total[1]).max(1) as f64;
    let y_points = |p: u64| POINTS_TOP + POINTS_H * (1.0 - p as f64 / max_points);

    let mut svg = svg_open(
        "chart",
        W as u32,
        H as u32,
        &format!("0 0 {} {}", W as u32, H as u32),
        "Offers per round and points so far",
    );
    svg.push_str(r##"<g font-family="sans-serif" font-size="11" fill="#333">"##);
    // Axes, grid and labels.
    let _ = write!(
        svg,
        r#"<text x="{}" y="14" font-size="12">offer (of {POT})</text>"#,
        num(LEFT)
    );
    let _ = write!(
        svg,
        r#"<text x="{}" y="{}" font-size="12">points so far</text>"#,
        num(LEFT),
        num(POINTS_TOP - 10.0)
    );
    let mut grid = String::new();
    for offer in [0, 250, 500, 750, 1000] {
        let y = y_offer(offer);
        let _ = write!(grid, "M{} {}H{}", num(LEFT), num(y), num(W - RIGHT));
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="end">{offer}</text>"#,
            num(LEFT - 6.0),
            num(y + 4.0)
        );
    }
    for p in [0, max_points as u64 / 2, max_points as u64] {
        let y = y_points(p);
        let _ = write!(grid, "M{} {}H{}", num(LEFT), num(y), num(W - RIGHT));
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            num(LEFT - 6.0),
            num(y + 4.0),
            thousands(p)
        );
    }
    let ends = [
        (1, LEFT, "start"),
        (
            (axis as u32).div_ceil(2),
            x((axis as u32).div_ceil(2)),
            "middle",
        ),
        (axis as u32, W - RIGHT, "end"),
    ];
    for (round, at, anchor) in ends {
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="{anchor}">round {round}</text>"#,
            num(at),
            num(H - 12.0)
        );
    }
    svg.push_str("</g>");
    let _ = write!(
        svg,
        r##"<path d="{grid}" stroke="#ddd" stroke-width="1" fill="none"/>"##
    );

    // The offers: a mark per shown round and seat, filled when accepted.
    let marked = shown(r.rounds.len(), MAX_MARKED_ROUNDS);
    for seat in 0..2 {
        for accepted in [true, false] {
            let mut g = String::new();
            for &i in &marked {
                let round = &r.rounds[i];
                if let Some(h) = round.by[seat].filter(|h| h.accepted == accepted) {
                    g.push_str(&mark_body(seat, x(round.round), y_offer(h.offer)));
                }
            }
            if !g.is_empty() {
                let fill = if accepted { seat_colour(seat) } else { "#fff" };
                let _ = write!(
                    svg,
                    r#"<g class="offers{seat}{}" fill="{fill}" stroke="{}" stroke-width="1">{g}</g>"#,
                    if accepted { "a" } else { "r" },
                    seat_colour(seat)
                );
            }
        }
    }

    // Points so far: a line per seat (seat 1 dashed).
    for seat in 0..2 {
        let mut d = format!("M{} {}", num(x(0).max(LEFT)), num(y_points(0)));
        for i in shown(r.rounds.len(), MAX_LINE_POINTS) {
            let round = &r.rounds[i];
            let _ = write!(
                d,
                "L{} {}",
                num(x(round.round)),
                num(y_points(round.total[seat]))
            );
        }
        let _ = write!(
            svg,
            r#"<path class="points{seat}" d="{d}" fill="none" stroke="{}" stroke-width="2"{}/>"#,
            seat_colour(seat),
            if seat == 1 {
                r#" stroke-dasharray="6 3""#
            } else {
                ""
            }
        );
    }
    svg.push_str("</svg>");

    let (n0, a0) = r.offers(0);
    let (n1, a1) = r.offers(1);
    format!(
        "<figure>{svg}<figcaption>Top: the offer each bot made as proposer, per round \
         ({} circles, {} squares; filled when accepted, hollow when rejected){}. \
         {} made {n0} offers, {a0} accepted; {} made {n1} offers, {a1} accepted. \
         Bottom: the points each has earned so far ({} solid, {} dashed).</figcaption></figure>\n",
        seat_name(names, 0, 40),
        seat_name(names, 1, 40),
        thinning_note(r.rounds.len(), MAX_MARKED_ROUNDS, "round"),
        seat_name(names, 0, 40),
        seat_name(names, 1, 40),
        seat_name(names, 0, 40),
        seat_name(names, 1, 40),
    )
}

/// A mark without colours (they come from its group).
fn mark_body(seat: usize, cx: f64, cy: f64) -> String {
    if seat == 0 {
        format!(r#"<circle cx="{}" cy="{}" r="2.6"/>"#, num(cx), num(cy))
    } else {
        format!(
            r#"<rect x="{}" y="{}" width="4.6" height="4.6"/>"#,
            num(cx - 2.3),
            num(cy - 2.3)
        )
    }
}

/// The first rounds as a table.
fn table(r: &Read, names: &[String]) -> String {
    let (a, b) = (seat_name(names, 0, 24), seat_name(names, 1, 24));
    let mut out = format!(
        "<table class=\"rounds\">\n<caption>The first {} rounds{}</caption>\n\
         <thead><tr><th>Round</th><th>{a} offers</th><th>{b} answers</th>\
         <th>{b} offers</th><th>{a} answers</th><th>{a} so far</th><th>{b} so far</th></tr></thead>\n<tbody>\n",
        TABLE_ROUNDS.min(r.rounds.len()),
        if r.rounds.len() > TABLE_ROUNDS {
            format!(" of {}", r.rounds.len())
        } else {
            String::new()
        }
    );
    let cell = |h: Option<HalfRound>| match h {
        Some(h) => format!(
            "<td>{}</td><td>{}</td>",
            h.offer,
            if h.accepted { "accepts" } else { "rejects" }
        ),
        None => "<td>–</td><td>–</td>".to_string(),
    };
    for round in r.rounds.iter().take(TABLE_ROUNDS) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td>{}{}<td>{}</td><td>{}</td></tr>",
            round.round,
            cell(round.by[0]),
            cell(round.by[1]),
            thousands(round.total[0]),
            thousands(round.total[1])
        );
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::ultimatum::rules::Match;
    use crate::game::lines::{play_scripted, LineGame, Recorded};

    fn names() -> Vec<String> {
        vec!["alice".into(), "bob".into()]
    }

    /// Plays a match with per-seat answers to the last line seen.
    fn played(
        rounds: u32,
        mut answer: impl FnMut(usize, &str) -> String,
    ) -> (Setup, Recorded<Match>) {
        let params = Params { rounds };
        let mut game = Recorded::new(Match::new(params), 1_000_000);
        let _ = play_scripted(
            &mut game,
            |seat, seen| answer(seat, seen.last().map_or("", |s| s.as_str())),
            100 * rounds as usize + 10,
        );
        (crate::discipline::ultimatum::setup(params), game)
    }

    fn svg<'a>(html: &'a str, id: &str) -> &'a str {
        let start = html.find(&format!(r#"<svg id="{id}""#)).expect("the svg");
        let end = start + html[start..].find("</svg>").expect("closed");
        &html[start..end]
    }

    fn final_svg(html: &str) -> &str {
        svg(html, "final")
    }

    /// Issue 34: blanks around an answer do not count, and are not
    /// stored; a line that breaks a rule is kept cut to a stated size.
    #[test]
    fn a_transcript_keeps_lines_as_the_rules_read_them() {
        let pad = " ".repeat(4000);
        let (_, game) = played(3, |seat, last| match (seat, last) {
            (_, "START") => format!("{pad}300{pad}\r"),
            _ => format!("JA{pad}"),
        });
        let by_bot: Vec<&str> = game
            .transcript
            .iter()
            .filter(|e| e.said == Said::ByBot)
            .map(|e| e.line.as_str())
            .collect();
        assert!(!by_bot.is_empty());
        assert!(
            by_bot.iter().all(|l| *l == "300" || *l == "JA"),
            "{by_bot:?}"
        );
        let (_, game) = played(3, |_, _| format!("many {}", "x".repeat(10_000)));
        let last = &game.transcript.last().expect("the bad line").line;
        assert!(
            last.len() < crate::game::lines::STORED_LINE_BYTES + 40,
            "{last}"
        );
        assert!(last.ends_with("[... 9749 more bytes]"), "{last}");
    }

    #[test]
    fn the_final_standings_show_the_points_of_the_match() {
        // alice offers 300 and accepts all; bob offers 600 and accepts >= 400.
        let (setup, game) = played(7, |seat, last| match (seat, last) {
            (0, "START") => "300".into(),
            (1, "START") => "600".into(),
            (0, _) => "JA".into(),
            (_, l) => {
                let x: u32 = l.strip_prefix("ANGEBOT ").unwrap().parse().unwrap();
                if x >= 400 { "JA" } else { "NEIN" }.into()
            }
        });
        let o = game.outcome().unwrap();
        assert_eq!(o.points, [4200, 2800]);
        let html = picture(&setup, &game.transcript, &names());
        let fin = final_svg(&html);
        assert!(fin.contains(r#"width="760" height="86""#));
        assert!(fin.contains("4,200 points"), "{fin}");
        assert!(fin.contains("2,800 points"));
        assert!(html.contains("7 of 7 rounds played. alice wins."));
        // Every offer of alice was rejected, every one of bob accepted.
        assert_eq!(svg(&html, "chart").matches("<circle").count(), 7);
        assert_eq!(svg(&html, "chart").matches("<rect").count(), 7);
        assert!(html.contains(r#"class="offers0r""#));
        assert!(!html.contains(r#"class="offers0a""#));
        assert!(html.contains(r#"class="offers1a""#));
        assert!(html.contains("<td>300</td><td>rejects</td><td>600</td><td>accepts</td>"));
        assert!(html.contains("<td>4,200</td><td>2,800</td></tr>"));
        // Deterministic.
        assert_eq!(html, picture(&setup, &game.transcript, &names()));
    }

    #[test]
    fn a_hostile_line_and_hostile_names_are_escaped() {
        let (setup, game) = played(5, |seat, last| match (seat, last) {
            (1, "START") => "<script>alert(1)</script>".into(),
            (_, "START") => "100".into(),
            _ => "JA".into(),
        });
        assert_eq!(game.outcome().unwrap().forfeited_by, Some(1));
        let html = picture(&setup, &game.transcript, &names());
        assert!(
            html.contains("bob broke the protocol in round 1 (it printed"),
            "{html}"
        );
        let evil = vec!["<script>a</script>".to_string(), "b&\"".to_string()];
        let html = picture(&setup, &game.transcript, &evil);
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("<title>Final points: &lt;script&gt;a&lt;/script&gt; 900,"));
        assert!(!html.contains("&amp;lt;"), "escaped once");
        assert!(html.contains("forfeits the match"));
        assert!(html.contains("(forfeited: scores 0)"));
        // 900 for seat 0 from its accepted offer of round 1.
        assert!(final_svg(&html).contains("900 points"));
    }

    #[test]
    fn garbage_and_truncated_transcripts_do_not_panic() {
        let (setup, game) = played(20, |_, last| {
            if last == "START" { "500" } else { "JA" }.into()
        });
        for cut in [0, 1, 5, 17, game.transcript.len() / 2] {
            let html = picture(&setup, &game.transcript[..cut], &[]);
            assert!(html.contains(r#"<svg id="final""#));
        }
        let html = picture(&setup, &game.transcript[..60], &names());
        assert!(html.contains("The transcript ends here."), "{html}");
        let garbage: Vec<Exchange> = [
            (0, Said::ToBot, "ANGEBOT 99999999999999999999"),
            (0, Said::ByBot, "JA"),
            (9, Said::ByBot, "JA"),
            (1, Said::ToBot, "ANGEBOT 5000"),
            (1, Said::ByBot, "JA"),
            (0, Said::ToBot, "RUNDE 0"),
            (0, Said::ToBot, "RUNDEN 99999999999"),
            (0, Said::ToBot, "START"),
            (0, Said::ByBot, "ü"),
        ]
        .into_iter()
        .map(|(seat, said, line)| Exchange {
            seat,
            said,
            line: line.into(),
        })
        .collect();
        for setup in [
            crate::discipline::morabaraba::setup(),
            crate::discipline::ultimatum::setup(Params { rounds: 0 }),
        ] {
            let html = picture(&setup, &garbage, &names());
            assert!(html.contains(r#"<svg id="final""#));
        }
    }

    #[test]
    fn a_default_match_of_2500_rounds_stays_small() {
        let mut rng = crate::seed::SplitMix64::new(7);
        let (setup, game) = played(Params::default().rounds, |_, last| {
            if last == "START" {
                rng.below(1001).to_string()
            } else {
                ["JA", "NEIN"][rng.below(2) as usize].into()
            }
        });
        let o = game.outcome().unwrap();
        assert_eq!(o.rounds_completed, 2500);
        let html = picture(&setup, &game.transcript, &names());
        assert!(html.len() < 300_000, "{} bytes", html.len());
        assert!(html.contains("every 5th round shown"));
        let fin = final_svg(&html);
        assert!(fin.contains(&format!("{} points", thousands(o.points[0]))));
        assert!(fin.contains(&format!("{} points", thousands(o.points[1]))));
        assert_eq!(html.matches("<tr><td>").count(), TABLE_ROUNDS);
    }
}
