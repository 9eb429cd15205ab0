//! The picture of one FootSteps game for its page on the results site,
//! drawn from the game's transcript: the field line with the token after
//! every turn and both purses (points left) with the bids of the turn, as a
//! strip of small pictures (`id="step-N"`, N = turns played, 0 the start),
//! the final position big (`id="final"`), and a table of the turns.
//!
//! It reads only the bids the bots printed (a turn is seat 0's line, then
//! seat 1's) and judges them with the game's own [`judge_bid`], so the
//! token and the purses are what the referee saw. A bid that breaks the
//! rules, or a line out of turn, ends the reading (the referee ended the
//! game there too). It deliberately does not decide the official result
//! (the tournament does), shows a long game's strip and table thinned
//! (every k-th turn, said so), and emits no script.

use std::fmt::Write;

use crate::discipline::footsteps::rules::{judge_bid, Params};
use crate::discipline::game::Setup;
use crate::draw::{
    legend, num, quote_line, seat_colour, seat_name, shown, small_figure, strip, svg_open, swatch,
    thinning_note,
};
use crate::game::lines::{Exchange, Said};

/// Small pictures in the strip (more turns are thinned).
const MAX_STEPS: usize = 60;
/// Rows of the table (more turns are thinned).
const MAX_ROWS: usize = 200;
/// Up to this many fields are drawn one by one; longer strips as a line.
const MAX_CELLS: u32 = 31;

/// The state after a turn (turn 0: the start).
#[derive(Debug, Clone, Copy)]
struct State {
    turn: usize,
    /// The bids of this turn (none at the start).
    bids: Option<[u32; 2]>,
    position: u32,
    purses: [u32; 2],
}

/// How the game ended, as far as the transcript tells.
#[derive(Debug, Clone, PartialEq)]
enum End {
    Goal(usize),
    OutOfPoints,
    /// Seats whose bid broke a rule, with the line and the rule.
    Illegal(Vec<(usize, String, String)>),
    /// The referee said `fin` with no rule ending the game.
    Referee,
    /// The transcript ends before the game did.
    Cut,
}

struct Read {
    params: Params,
    states: Vec<State>,
    end: End,
}

fn read(setup: &Setup, transcript: &[Exchange]) -> Read {
    let params = match setup.try_get::<Params>() {
        Some(p) if p.validate().is_ok() => *p,
        _ => Params::default(),
    };
    let mut now = State {
        turn: 0,
        bids: None,
        position: params.middle(),
        purses: [params.points; 2],
    };
    let mut states = vec![now];
    let mut first: Option<&str> = None;
    let mut fin = false;
    let mut end = None;
    for ex in transcript {
        match ex.said {
            Said::ToBot => fin |= ex.line == "fin",
            Said::ByBot if ex.seat > 1 => {}
            Said::ByBot => {
                let line = ex.line.as_str();
                match (ex.seat, first) {
                    (0, None) => first = Some(line),
                    (1, Some(line0)) => {
                        first = None;
                        let judged = [
                            judge_bid(line0, now.purses[0]),
                            judge_bid(line, now.purses[1]),
                        ];
                        let lines = [line0, line];
                        if let [Ok(b0), Ok(b1)] = judged {
                            now = play(&params, now, [b0, b1]);
                            states.push(now);
                            if now.position == params.goal(0) {
                                end = Some(End::Goal(0));
                            } else if now.position == params.goal(1) {
                                end = Some(End::Goal(1));
                            } else if now.purses == [0, 0] {
                                end = Some(End::OutOfPoints);
                            }
                        } else {
                            let bad = (0..2)
                                .filter_map(|s| {
                                    let rule = judged[s].as_ref().err()?;
                                    Some((s, lines[s].to_string(), rule.clone()))
                                })
                                .collect();
                            end = Some(End::Illegal(bad));
                        }
                    }
                    (seat, _) => {
                        let rule = "printed a line when it was not its turn".to_string();
                        end = Some(End::Illegal(vec![(seat, line.to_string(), rule)]));
                    }
                }
                if end.is_some() {
                    break;
                }
            }
        }
    }
    let end = end.unwrap_or(if fin { End::Referee } else { End::Cut });
    Read {
        params,
        states,
        end,
    }
}

/// One turn with two legal bids.
fn play(params: &Params, before: State, bids: [u32; 2]) -> State {
    use std::cmp::Ordering::*;
    let position = match bids[0].cmp(&bids[1]) {
        Greater => before.position.saturating_sub(1),
        Less => (before.position + 1).min(params.fields - 1),
        Equal => before.position,
    };
    State {
        turn: before.turn + 1,
        bids: Some(bids),
        position,
        purses: [
            before.purses[0].saturating_sub(bids[0]),
            before.purses[1].saturating_sub(bids[1]),
        ],
    }
}

/// An HTML fragment (static SVG, no script) that shows the game.
pub fn picture(setup: &Setup, transcript: &[Exchange], names: &[String]) -> String {
    let r = read(setup, transcript);
    let token = (
        swatch(r##"<circle cx="7" cy="7" r="5" fill="#222"/>"##),
        "the token".to_string(),
    );
    let mut out = String::from("<section class=\"game-picture footsteps\">\n");
    out.push_str(&legend(names, 2, &[token]));
    out.push_str(&final_figure(&r, names));
    out.push_str(&steps(&r, names));
    out.push_str(&table(&r, names));
    out.push_str("</section>\n");
    out
}

/// The end in words.
fn verdict(r: &Read, names: &[String]) -> String {
    let last = r.states.last().expect("the start at least");
    let name = |s: usize| seat_name(names, s, 40);
    match &r.end {
        End::Goal(w) => format!(
            "{} brings the token to its goal (field {}) in turn {} and wins.",
            name(*w),
            r.params.goal(*w),
            last.turn
        ),
        End::OutOfPoints => format!(
            "Both are out of points after turn {}: a draw (the token is on field {}).",
            last.turn, last.position
        ),
        End::Illegal(bad) => {
            let mut s = String::new();
            for (seat, line, rule) in bad {
                let _ = write!(
                    s,
                    "In turn {}, {} printed “{}”: {}. ",
                    last.turn + 1,
                    name(*seat),
                    quote_line(line, 40),
                    quote_line(rule, 200)
                );
            }
            match bad.as_slice() {
                [(seat, _, _)] => {
                    let _ = write!(s, "{} loses, {} wins.", name(*seat), name(1 - seat));
                }
                _ => s.push_str("Both lose."),
            }
            s
        }
        End::Referee => format!(
            "The referee ended the game in turn {}: a bot failed outside the rules (it crashed, ran out of time or stopped answering).",
            last.turn + 1
        ),
        End::Cut => format!("The transcript ends after turn {}.", last.turn),
    }
}

/// The field line with the token, drawn in the box from (`x`, `y`), `w`
/// wide and `h` high; `before` is where the token was a turn earlier.
fn field_line(
    params: &Params,
    at: u32,
    before: Option<u32>,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
) -> String {
    let n = params.fields;
    let mut s = String::new();
    let goal_w = if n <= MAX_CELLS { w / f64::from(n) } else { h };
    // The goals in the colour of the seat that wants the token there.
    let _ = write!(
        s,
        r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity="0.35"/><rect x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity="0.35"/>"#,
        num(x),
        num(y),
        num(goal_w),
        num(h),
        seat_colour(0),
        num(x + w - goal_w),
        num(y),
        num(goal_w),
        num(h),
        seat_colour(1)
    );
    let centre = |field: u32| -> f64 {
        if n <= MAX_CELLS {
            x + (f64::from(field) + 0.5) * w / f64::from(n)
        } else if field == 0 {
            x + goal_w / 2.0
        } else if field + 1 >= n {
            x + w - goal_w / 2.0
        } else {
            x + goal_w + (f64::from(field) - 0.5) / f64::from(n - 2) * (w - 2.0 * goal_w)
        }
    };
    if n <= MAX_CELLS {
        let mut d = format!("M{} {}h{}v{}h-{}z", num(x), num(y), num(w), num(h), num(w));
        for i in 1..n {
            let cx = x + f64::from(i) * w / f64::from(n);
            let _ = write!(d, "M{} {}v{}", num(cx), num(y), num(h));
        }
        let _ = write!(
            s,
            r##"<path d="{d}" fill="none" stroke="#888" stroke-width="1"/>"##
        );
    } else {
        let _ = write!(
            s,
            r##"<path d="M{} {}h{}v{}h-{}z M{} {}H{}" fill="none" stroke="#888" stroke-width="1"/>"##,
            num(x),
            num(y),
            num(w),
            num(h),
            num(w),
            num(x + goal_w),
            num(y + h / 2.0),
            num(x + w - goal_w)
        );
    }
    let r = (h * 0.32).min(w / f64::from(n.min(MAX_CELLS)) * 0.4);
    if let Some(b) = before.filter(|&b| b != at) {
        let _ = write!(
            s,
            r##"<circle cx="{}" cy="{}" r="{}" fill="none" stroke="#999" stroke-dasharray="2 2"/>"##,
            num(centre(b)),
            num(y + h / 2.0),
            num(r)
        );
    }
    let _ = write!(
        s,
        r##"<circle class="token" data-field="{at}" cx="{}" cy="{}" r="{}" fill="#222"/>"##,
        num(centre(at)),
        num(y + h / 2.0),
        num(r)
    );
    s
}

/// A purse as a bar in the seat's colour over a grey one of the start.
fn purse(params: &Params, seat: usize, left: u32, x: f64, y: f64, w: f64, h: f64) -> String {
    let filled = w * f64::from(left) / f64::from(params.points.max(1));
    format!(
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#e4e4e4"/><rect class="purse{seat}" x="{}" y="{}" width="{}" height="{}" fill="{}"/>"##,
        num(x),
        num(y),
        num(w),
        num(h),
        num(x),
        num(y),
        num(filled),
        num(h),
        seat_colour(seat)
    )
}

/// The small picture of one state.
fn step_svg(r: &Read, i: usize) -> String {
    let st = r.states[i];
    let before = i.checked_sub(1).map(|j| r.states[j].position);
    let mut svg = svg_open(
        &format!("step-{}", st.turn),
        200,
        70,
        "0 0 200 70",
        &format!("Turn {}: token on field {}", st.turn, st.position),
    );
    svg.push_str(&field_line(
        &r.params,
        st.position,
        before,
        4.0,
        4.0,
        192.0,
        24.0,
    ));
    for seat in 0..2 {
        let y = 36.0 + 16.0 * seat as f64;
        svg.push_str(&purse(
            &r.params,
            seat,
            st.purses[seat],
            4.0,
            y,
            110.0,
            11.0,
        ));
        let bid = st
            .bids
            .map_or(String::new(), |b| format!(", bid {}", b[seat]));
        let _ = write!(
            svg,
            r#"<text x="118" y="{}" font-size="10" font-family="sans-serif">{} left{bid}</text>"#,
            num(y + 9.5),
            st.purses[seat]
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The strip of the turns.
fn steps(r: &Read, names: &[String]) -> String {
    let items: Vec<String> = shown(r.states.len(), MAX_STEPS)
        .into_iter()
        .map(|i| {
            let st = r.states[i];
            let caption = match st.bids {
                None => format!(
                    "Start: field {}, {} points each",
                    st.position, r.params.points
                ),
                Some([a, b]) => format!(
                    "{}. {} bids {a}, {} bids {b}: field {}",
                    st.turn,
                    seat_name(names, 0, 16),
                    seat_name(names, 1, 16),
                    st.position
                ),
            };
            small_figure(&step_svg(r, i), &caption)
        })
        .collect();
    format!(
        "<figure>{}<figcaption>The token and the purses after every turn{}: the fields run \
         from 0 ({}’s goal) to {} ({}’s goal); the bars are the points each has left.\
         </figcaption></figure>\n",
        strip(&items),
        thinning_note(r.states.len(), MAX_STEPS, "turn"),
        seat_name(names, 0, 40),
        r.params.fields - 1,
        seat_name(names, 1, 40),
    )
}

/// The final position, big.
fn final_figure(r: &Read, names: &[String]) -> String {
    let last = r.states.last().expect("the start at least");
    let before = r.states.len().checked_sub(2).map(|j| r.states[j].position);
    let mut svg = svg_open(
        "final",
        640,
        170,
        "0 0 640 170",
        &format!(
            "After turn {}: token on field {}, {} has {} points left, {} has {}",
            last.turn,
            last.position,
            seat_name(names, 0, 40),
            last.purses[0],
            seat_name(names, 1, 40),
            last.purses[1]
        ),
    );
    svg.push_str(r#"<g font-family="sans-serif" font-size="13">"#);
    let _ = write!(
        svg,
        r#"<text x="10" y="16">{}’s goal: field 0</text><text x="630" y="16" text-anchor="end">{}’s goal: field {}</text>"#,
        seat_name(names, 0, 30),
        seat_name(names, 1, 30),
        r.params.fields - 1
    );
    svg.push_str(&field_line(
        &r.params,
        last.position,
        before,
        10.0,
        24.0,
        620.0,
        56.0,
    ));
    if r.params.fields <= MAX_CELLS {
        let cw = 620.0 / f64::from(r.params.fields);
        for i in 0..r.params.fields {
            let _ = write!(
                svg,
                r##"<text x="{}" y="94" font-size="11" fill="#666" text-anchor="middle">{i}</text>"##,
                num(10.0 + (f64::from(i) + 0.5) * cw)
            );
        }
    }
    for seat in 0..2 {
        let y = 100.0 + 32.0 * seat as f64;
        let _ = write!(
            svg,
            r#"<text x="10" y="{}">{}</text>"#,
            num(y + 15.0),
            seat_name(names, seat, 18)
        );
        svg.push_str(&purse(
            &r.params,
            seat,
            last.purses[seat],
            160.0,
            y,
            300.0,
            20.0,
        ));
        let bid = last
            .bids
            .map_or(String::new(), |b| format!(" (last bid {})", b[seat]));
        let _ = write!(
            svg,
            r#"<text class="left{seat}" x="470" y="{}">{} of {} left{bid}</text>"#,
            num(y + 15.0),
            last.purses[seat],
            r.params.points
        );
    }
    svg.push_str("</g></svg>");
    format!(
        "<figure>{svg}<figcaption>After turn {}: the token is on field {}; {} has {} points \
         left, {} has {}. {}</figcaption></figure>\n",
        last.turn,
        last.position,
        seat_name(names, 0, 40),
        last.purses[0],
        seat_name(names, 1, 40),
        last.purses[1],
        verdict(r, names)
    )
}

/// The turns as a table.
fn table(r: &Read, names: &[String]) -> String {
    let (a, b) = (seat_name(names, 0, 24), seat_name(names, 1, 24));
    let turns = &r.states[1..];
    let mut out = format!(
        "<table class=\"turns\">\n<caption>The turns{}</caption>\n<thead><tr><th>Turn</th>\
         <th>{a} bids</th><th>{b} bids</th><th>Token on field</th><th>{a} has left</th>\
         <th>{b} has left</th></tr></thead>\n<tbody>\n",
        thinning_note(turns.len(), MAX_ROWS, "turn")
    );
    for i in shown(turns.len(), MAX_ROWS) {
        let st = turns[i];
        let [x, y] = st.bids.unwrap_or([0, 0]);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{x}</td><td>{y}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            st.turn, st.position, st.purses[0], st.purses[1]
        );
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::footsteps::rules::Game;
    use crate::game::lines::{play_scripted, LineGame, Recorded};

    fn names() -> Vec<String> {
        vec!["alice".into(), "bob".into()]
    }

    /// Plays a game where each seat bids from its list (the last repeated).
    fn played(params: Params, bids: [&[&str]; 2]) -> Recorded<Game> {
        let mut game = Recorded::new(Game::new(params), 1_000_000);
        let mut next = [0usize; 2];
        let _ = play_scripted(
            &mut game,
            |seat, _| {
                let list = bids[seat];
                let bid = list[next[seat].min(list.len() - 1)];
                next[seat] += 1;
                bid.to_string()
            },
            100_000,
        );
        game
    }

    fn final_svg(html: &str) -> &str {
        let start = html.find(r#"<svg id="final""#).expect("the final svg");
        let end = start + html[start..].find("</svg>").expect("closed");
        &html[start..end]
    }

    #[test]
    fn the_final_token_and_purses_match_the_game() {
        // 1:20 → field 4; 2:1 three times → field 1; 43:27 → field 0.
        let game = played(
            Params::default(),
            [&["1", "2", "2", "2", "43"], &["20", "1", "1", "1", "27"]],
        );
        let o = game.outcome().unwrap();
        assert_eq!((o.position, o.winner, o.turns), (0, Some(0), 5));
        let setup = crate::discipline::footsteps::setup(Params::default());
        let html = picture(&setup, &game.transcript, &names());
        let fin = final_svg(&html);
        assert!(fin.contains(r#"width="640" height="170""#));
        assert!(fin.contains(r#"class="token" data-field="0""#), "{fin}");
        assert!(fin.contains(r#"<text class="left0" x="470" y="115">0 of 50 left (last bid 43)"#));
        assert!(html.contains("alice brings the token to its goal (field 0) in turn 5 and wins."));
        // A small picture per turn and the start, and a table row per turn.
        for turn in 0..=5 {
            assert!(html.contains(&format!(r#"<svg id="step-{turn}""#)));
        }
        assert!(!html.contains("step-6"));
        assert!(html
            .contains("<tr><td>2</td><td>2</td><td>1</td><td>3</td><td>47</td><td>29</td></tr>"));
        assert_eq!(html, picture(&setup, &game.transcript, &names()));
    }

    #[test]
    fn a_hostile_bid_is_escaped_and_loses() {
        let game = played(
            Params::default(),
            [&["3"], &["2", "<script>alert(1)</script>"]],
        );
        let evil = vec!["<b>x</b>".to_string(), "<script>".to_string()];
        let html = picture(
            &crate::discipline::footsteps::setup(Params::default()),
            &game.transcript,
            &evil,
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<b>"));
        assert!(html.contains("printed “&lt;script&gt;alert(1)&lt;/script&gt;”"));
        assert!(html.contains("&lt;script&gt; loses, &lt;b&gt;x&lt;/b&gt; wins."));
        assert!(final_svg(&html).contains(r#"data-field="2""#));
    }

    #[test]
    fn garbage_and_truncated_transcripts_do_not_panic() {
        let setup = crate::discipline::footsteps::setup(Params::default());
        let game = played(Params::default(), [&["1"], &["1"]]);
        assert_eq!(game.outcome().unwrap().turns, 50);
        for cut in [0, 1, 2, 3, 7, game.transcript.len() - 1] {
            let html = picture(&setup, &game.transcript[..cut], &[]);
            assert!(html.contains(r#"<svg id="final""#));
        }
        let garbage: Vec<Exchange> = [
            (1, Said::ByBot, "5"),
            (0, Said::ByBot, "99999999999999999999999"),
            (3, Said::ByBot, "x"),
            (0, Said::ToBot, "fin"),
        ]
        .into_iter()
        .map(|(seat, said, line)| Exchange {
            seat,
            said,
            line: line.into(),
        })
        .collect();
        let bad = crate::discipline::footsteps::setup(Params {
            fields: 4,
            points: 0,
        });
        for setup in [setup, crate::discipline::morabaraba::setup(), bad] {
            for n in 0..=garbage.len() {
                let html = picture(&setup, &garbage[..n], &names());
                assert!(html.contains(r#"<svg id="final""#));
            }
        }
    }

    #[test]
    fn a_long_game_stays_small_and_wide_fields_are_drawn_as_a_line() {
        let params = Params {
            fields: 1001,
            points: 5000,
        };
        let game = played(params, [&["1"], &["1"]]);
        assert_eq!(game.outcome().unwrap().turns, 5000);
        let html = picture(
            &crate::discipline::footsteps::setup(params),
            &game.transcript,
            &names(),
        );
        assert!(html.len() < 200_000, "{} bytes", html.len());
        assert!(html.contains("every 84th turn shown"));
        assert!(html.contains(r#"<svg id="step-5000""#));
        assert!(final_svg(&html).contains(r#"data-field="500""#));
        // The default game: at most 100 turns, all shown.
        let game = played(Params::default(), [&["1"], &["1"]]);
        let html = picture(
            &crate::discipline::footsteps::setup(Params::default()),
            &game.transcript,
            &names(),
        );
        assert!(html.contains(r#"<svg id="step-50""#));
        assert!(html.len() < 100_000, "{} bytes", html.len());
        assert!(html.contains("Both are out of points after turn 50: a draw"));
    }
}
