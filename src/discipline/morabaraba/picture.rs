//! The picture of one Morabaraba game for its page on the results site,
//! drawn from the game's transcript: the board after every move as a strip
//! of small boards (`id="step-N"`, N the move), each captioned with the
//! move ("12. alice places a1, mill, shoots d7"), with the mills standing
//! highlighted, the moved cow ringed and the shot cow crossed out; the
//! final position as a big board (`id="final"`); and the list of all moves.
//!
//! Points are named as on a 7×7 board (columns a–g from the left, rows 1–7
//! from the bottom: the protocol's `1 1 1` is a1, `2 3 1` is d7). It reads
//! the names and moves the bots printed and replays them through the
//! game's own [`Position`], so mills, shots and the end are the rules'.
//! A line that is not a legal move (or not in turn) ends the reading: the
//! referee ended the game there too. It deliberately does not decide the
//! official result (the tournament does, with the CPU times), shows a long
//! game's strip thinned (every k-th move, said so), and emits no script.

use std::fmt::Write;

use crate::discipline::game::Setup;
use crate::discipline::morabaraba::rules::{
    valid_name, Move, Played, Point, Position, Status, GAME_OVER_LINE, MILLS,
};
use crate::draw::{
    escape, legend, num, quote_line, seat_colour, seat_name, shown_of, small_figure, strip,
    svg_open, thinning_note_of, Items,
};
use crate::game::lines::{Exchange, Said};

/// Small boards in the strip (more moves are thinned).
const MAX_STEPS: usize = 150;
/// Moves in the list of all moves.
const MAX_LISTED: usize = 5000;

/// A legal move as played, with the position after it.
#[derive(Debug, Clone)]
struct Played1 {
    number: u32,
    seat: usize,
    mv: Move,
    played: Played,
    flying: bool,
    after: Position,
}

/// Why the reading stopped.
#[derive(Debug, Clone, PartialEq)]
enum End {
    /// The rules ended the game after the last move.
    Rule(Status),
    /// A line that is not a legal move: seat, line, the rule.
    Illegal(usize, String, String),
    /// A name that is not 3–9 letters or digits.
    BadName(usize, String),
    /// A line out of turn.
    OutOfTurn(usize, String),
    /// The referee sent the game-over line without a rule ending the game.
    Referee,
    /// The transcript ends before the game did.
    Cut,
}

struct Read {
    moves: Vec<Played1>,
    end: End,
}

fn read(transcript: &[Exchange]) -> Read {
    let mut pos = Position::new();
    let mut named = [false; 2];
    let mut moves = Vec::new();
    let mut over_line = false;
    let mut end = None;
    for ex in transcript {
        if ex.seat > 1 {
            continue;
        }
        let (seat, line) = (ex.seat, ex.line.as_str());
        if ex.said == Said::ToBot {
            over_line |= line == GAME_OVER_LINE;
            continue;
        }
        let expected = named.iter().position(|n| !n).unwrap_or(pos.to_move());
        if seat != expected {
            end = Some(End::OutOfTurn(seat, line.to_string()));
            break;
        }
        if !named[seat] {
            if !valid_name(line.trim()) {
                end = Some(End::BadName(seat, line.to_string()));
                break;
            }
            named[seat] = true;
            continue;
        }
        let flying = pos.flying(seat);
        match Move::parse(line).and_then(|mv| pos.play(&mv).map(|p| (mv, p))) {
            Ok((mv, played)) => {
                moves.push(Played1 {
                    number: pos.turns(),
                    seat,
                    mv,
                    played,
                    flying,
                    after: pos.clone(),
                });
                let status = pos.status();
                if status != Status::Ongoing {
                    end = Some(End::Rule(status));
                    break;
                }
            }
            Err(e) => {
                end = Some(End::Illegal(seat, line.to_string(), e.to_string()));
                break;
            }
        }
    }
    let end = end.unwrap_or(if over_line { End::Referee } else { End::Cut });
    Read { moves, end }
}

/// The board coordinates (0..=6, y down) of a point.
fn xy(q: Point) -> (f64, f64) {
    let o = f64::from(q.square() - 1);
    let along = |v: u8| match v {
        1 => o,
        2 => 3.0,
        _ => 6.0 - o,
    };
    (along(q.x()), 6.0 - along(q.y()))
}

/// The point's name on a 7×7 board: `a1` … `g7`.
fn name(q: Point) -> String {
    let (x, y) = xy(q);
    format!("{}{}", (b'a' + x as u8) as char, 7 - y as u8)
}

/// The move in words, e.g. "places a1, mill, shoots d7".
fn move_words(m: &Played1) -> String {
    let to = m.mv.to.map_or("?".to_string(), name);
    let mut s = match m.mv.from {
        None => format!("places {to}"),
        Some(from) if m.flying => format!("flies {}–{to}", name(from)),
        Some(from) => format!("moves {}–{to}", name(from)),
    };
    match m.played.formed.count_ones() {
        0 => {}
        1 => s.push_str(", mill"),
        n => {
            let _ = write!(s, ", {n} mills");
        }
    }
    if let Some(shot) = m.mv.shot {
        let _ = write!(s, ", shoots {}", name(shot));
    }
    s
}

/// The lines of the board as one path (three squares, the midlines, the
/// corner diagonals).
const BOARD_LINES: &str =
    "M0 0H6V6H0ZM1 1H5V5H1ZM2 2H4V4H2ZM3 0V2M3 4V6M0 3H2M4 3H6M0 0L2 2M6 0L4 2M0 6L2 4M6 6L4 4";

/// A board: `pos` with the mills highlighted; `last` the move that led to
/// it (its cow ringed, its shot crossed out). `big` adds the points and the
/// coordinates.
fn board(
    id: &str,
    px: u32,
    pos: &Position,
    last: Option<&Played1>,
    big: bool,
    title: &str,
) -> String {
    let view = if big {
        "-1 -1 8 8"
    } else {
        "-0.55 -0.55 7.1 7.1"
    };
    let mut s = svg_open(id, px, px, view, title);
    let _ = write!(
        s,
        r##"<rect x="-1" y="-1" width="8" height="8" fill="#f3ead7"/><path d="{BOARD_LINES}" fill="none" stroke="#6b5b45" stroke-width="0.06"/>"##
    );
    if big {
        s.push_str(r##"<g fill="#6b5b45">"##);
        for q in Point::all() {
            let (x, y) = xy(q);
            let _ = write!(s, r#"<circle cx="{}" cy="{}" r="0.1"/>"#, num(x), num(y));
        }
        s.push_str(r##"</g><g font-family="sans-serif" font-size="0.36" fill="#333" text-anchor="middle">"##);
        for i in 0..7u8 {
            let _ = write!(
                s,
                r#"<text x="{i}" y="6.85">{}</text><text x="-0.6" y="{}">{}</text>"#,
                (b'a' + i) as char,
                num(f64::from(i) + 0.13),
                7 - i
            );
        }
        s.push_str("</g>");
    }
    // Mills standing, the ones just formed stronger.
    for (i, line) in MILLS.iter().enumerate() {
        let owner = pos.at(line[0]);
        let Some(owner) = owner.filter(|&o| line.iter().all(|&q| pos.at(q) == Some(o))) else {
            continue;
        };
        let new = last.is_some_and(|m| m.played.formed & (1 << i) != 0);
        let (a, b) = (xy(line[0]), xy(line[2]));
        let _ = write!(
            s,
            r#"<path class="mill{}" d="M{} {}L{} {}" stroke="{}" stroke-width="0.36" stroke-linecap="round" stroke-opacity="{}"/>"#,
            if new { " new" } else { "" },
            num(a.0),
            num(a.1),
            num(b.0),
            num(b.1),
            seat_colour(owner),
            if new { "0.75" } else { "0.35" }
        );
    }
    // Where the moved cow came from.
    if let Some(m) = last {
        if let (Some(from), Some(to)) = (m.mv.from, m.mv.to) {
            let ((x0, y0), (x1, y1)) = (xy(from), xy(to));
            let _ = write!(
                s,
                r#"<circle cx="{}" cy="{}" r="0.28" fill="none" stroke="{c}" stroke-width="0.06" stroke-dasharray="0.12 0.08"/><path d="M{} {}L{} {}" stroke="{c}" stroke-width="0.07" stroke-dasharray="0.15 0.1"/>"#,
                num(x0),
                num(y0),
                num(x0),
                num(y0),
                num(x1),
                num(y1),
                c = seat_colour(m.seat)
            );
        }
    }
    // The cows.
    for seat in 0..2 {
        let _ = write!(
            s,
            r##"<g fill="{}" stroke="#fff" stroke-width="0.06">"##,
            seat_colour(seat)
        );
        for q in Point::all().filter(|&q| pos.at(q) == Some(seat)) {
            let (x, y) = xy(q);
            if seat == 0 {
                let _ = write!(
                    s,
                    r#"<circle class="cow0" cx="{}" cy="{}" r="0.3"/>"#,
                    num(x),
                    num(y)
                );
            } else {
                let _ = write!(
                    s,
                    r#"<rect class="cow1" x="{}" y="{}" width="0.54" height="0.54"/>"#,
                    num(x - 0.27),
                    num(y - 0.27)
                );
            }
        }
        s.push_str("</g>");
    }
    if let Some(m) = last {
        if let Some(to) = m.mv.to {
            let (x, y) = xy(to);
            let _ = write!(
                s,
                r##"<circle class="moved" cx="{}" cy="{}" r="0.42" fill="none" stroke="#000" stroke-width="0.07"/>"##,
                num(x),
                num(y)
            );
        }
        if let Some(shot) = m.mv.shot {
            let (x, y) = xy(shot);
            let _ = write!(
                s,
                r##"<g class="shot"><circle cx="{}" cy="{}" r="0.3" fill="#fff" stroke="{}" stroke-width="0.06" stroke-dasharray="0.1 0.07"/><path d="M{} {}l0.44 0.44m0 -0.44l-0.44 0.44" stroke="#000" stroke-width="0.09"/></g>"##,
                num(x),
                num(y),
                seat_colour(1 - m.seat),
                num(x - 0.22),
                num(y - 0.22)
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// An HTML fragment (static SVG, no script) that shows the game.
pub fn picture(_setup: &Setup, transcript: &[Exchange], names: &[String]) -> String {
    let r = read(transcript);
    let extra = [
        (
            r##"<path d="M1 7H13" stroke="#777" stroke-width="5" stroke-opacity="0.5"/>"##
                .to_string(),
            "a mill".to_string(),
        ),
        (
            r##"<circle cx="7" cy="7" r="5.5" fill="none" stroke="#000" stroke-width="1.5"/>"##
                .to_string(),
            "the cow just moved".to_string(),
        ),
        (
            r##"<path d="M3 3l8 8m0 -8l-8 8" stroke="#000" stroke-width="2"/>"##.to_string(),
            "the cow just shot".to_string(),
        ),
    ];
    let mut out = String::from("<section class=\"game-picture morabaraba\">\n");
    out.push_str(&legend(names, 2, &extra));
    out.push_str(&final_figure(&r, names));
    out.push_str(&steps(&r, names));
    out.push_str(&move_list(&r, names));
    out.push_str("</section>\n");
    out
}

/// A move's caption: "12. alice places a1, mill, shoots d7".
fn caption(m: &Played1, names: &[String], max_name: usize) -> String {
    format!(
        "{}. {} {}",
        m.number,
        seat_name(names, m.seat, max_name),
        move_words(m)
    )
}

/// How the game ended, in words.
fn verdict(r: &Read, names: &[String]) -> String {
    let name = |s: usize| seat_name(names, s, 40);
    let next = r.moves.last().map_or(1, |m| m.number + 1);
    match &r.end {
        End::Rule(Status::TwoCowsLeft { loser }) => format!(
            "{} has only two cows left: {} wins.",
            name(*loser),
            name(1 - loser)
        ),
        End::Rule(Status::NoLegalMove { loser }) => format!(
            "{} has no legal move: {} wins.",
            name(*loser),
            name(1 - loser)
        ),
        End::Rule(Status::ThreeCowsNoMill) => {
            "A player has three cows and ten turns formed no mill: a draw.".into()
        }
        End::Rule(Status::NoMillIn200Turns) => "Two hundred turns formed no mill: a draw.".into(),
        End::Rule(Status::Ongoing) | End::Cut => {
            format!("The transcript ends after move {}.", next - 1)
        }
        End::Illegal(seat, line, rule) => format!(
            "In turn {next}, {} printed “{}”, an illegal move ({}): {} wins.",
            name(*seat),
            quote_line(line, 40),
            escape(rule),
            name(1 - seat)
        ),
        End::BadName(seat, line) => format!(
            "{} answered “{}” instead of a name of 3 to 9 letters or digits: {} wins.",
            name(*seat),
            quote_line(line, 40),
            name(1 - seat)
        ),
        End::OutOfTurn(seat, line) => format!(
            "{} printed “{}” when it was not its turn: {} wins.",
            name(*seat),
            quote_line(line, 40),
            name(1 - seat)
        ),
        End::Referee => format!(
            "The referee ended the game in turn {next}: a bot failed outside the rules (it crashed or ran out of CPU time or memory)."
        ),
    }
}

/// The final position, big.
fn final_figure(r: &Read, names: &[String]) -> String {
    let start = Position::new();
    let (pos, last) = match r.moves.last() {
        Some(m) => (&m.after, Some(m)),
        None => (&start, None),
    };
    let count = |seat: usize| {
        let in_hand = pos.cows(seat) - pos.on_board(seat);
        let hand = if in_hand > 0 {
            format!(" ({in_hand} still to place)")
        } else {
            String::new()
        };
        format!(
            "{} has {} cow{} on the board{hand}",
            seat_name(names, seat, 40),
            pos.on_board(seat),
            if pos.on_board(seat) == 1 { "" } else { "s" }
        )
    };
    let title = format!("The board after move {}", pos.turns());
    let svg = board("final", 440, pos, last, true, &title);
    let last_words = last.map_or(String::new(), |m| {
        format!(" The last move: {}.", caption(m, names, 40))
    });
    format!(
        "<figure>{svg}<figcaption>After {} move{}: {}; {}.{last_words} {}</figcaption></figure>\n",
        pos.turns(),
        if pos.turns() == 1 { "" } else { "s" },
        count(0),
        count(1),
        verdict(r, names)
    )
}

/// The strip of small boards.
fn steps(r: &Read, names: &[String]) -> String {
    let items: Vec<String> = shown_of(r.moves.len(), MAX_STEPS, Items::Alternating)
        .into_iter()
        .map(|i| {
            let m = &r.moves[i];
            let text = caption(m, names, 14);
            let svg = board(
                &format!("step-{}", m.number),
                132,
                &m.after,
                Some(m),
                false,
                &format!("After move {}", m.number),
            );
            small_figure(&svg, &text)
        })
        .collect();
    format!(
        "<figure>{}<figcaption>The board after every move{}. Points are named as on a 7×7 \
         board: columns a–g from the left, rows 1–7 from the bottom (the protocol’s \
         <code>1 1 1</code> is a1, <code>2 3 1</code> is d7).</figcaption></figure>\n",
        strip(&items),
        thinning_note_of(r.moves.len(), MAX_STEPS, "move", Items::Alternating),
    )
}

/// Every move as a list.
fn move_list(r: &Read, names: &[String]) -> String {
    let mut out = String::from("<details class=\"moves\"><summary>All moves</summary>\n<ol>\n");
    for m in r.moves.iter().take(MAX_LISTED) {
        let _ = writeln!(
            out,
            "<li>{} {}</li>",
            seat_name(names, m.seat, 24),
            move_words(m)
        );
    }
    out.push_str("</ol>\n");
    if r.moves.len() > MAX_LISTED {
        let _ = writeln!(out, "<p>… and {} more.</p>", r.moves.len() - MAX_LISTED);
    }
    out.push_str("</details>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::morabaraba::rules::MorabarabaGame;
    use crate::game::lines::{play_scripted, LineGame, Recorded};

    fn names() -> Vec<String> {
        vec!["alice".into(), "bob".into()]
    }

    /// A whole game between two greedy bots (a mill when they can, else
    /// the n-th legal move), recorded.
    fn greedy(variant: usize) -> Recorded<MorabarabaGame> {
        let mut game = Recorded::new(MorabarabaGame::new(), 1_000_000);
        let mut mirror = Position::new();
        let mut named = [false; 2];
        play_scripted(
            &mut game,
            |seat, _| {
                if !named[seat] {
                    named[seat] = true;
                    return format!("Greedy{seat}");
                }
                let moves = mirror.legal_moves();
                let m = moves
                    .iter()
                    .find(|m| m.shot.is_some())
                    .copied()
                    .unwrap_or(moves[(variant * 7 + mirror.turns() as usize) % moves.len()]);
                mirror.play(&m).unwrap();
                m.to_line()
            },
            100_000,
        )
        .unwrap();
        game
    }

    fn final_svg(html: &str) -> &str {
        let start = html.find(r#"<svg id="final""#).expect("the final svg");
        let end = start + html[start..].find("</svg>").expect("closed");
        &html[start..end]
    }

    #[test]
    fn the_final_board_has_the_cows_of_the_game() {
        for variant in 0..6 {
            let game = greedy(variant);
            let pos = game.game.position();
            let html = picture(
                &crate::discipline::morabaraba::setup(),
                &game.transcript,
                &names(),
            );
            let fin = final_svg(&html);
            assert!(fin.contains(r#"width="440" height="440""#));
            assert_eq!(
                fin.matches(r#"class="cow0""#).count(),
                pos.on_board(0) as usize
            );
            assert_eq!(
                fin.matches(r#"class="cow1""#).count(),
                pos.on_board(1) as usize
            );
            // A small board per move (the strip is not thinned here).
            let turns = pos.turns() as usize;
            assert!(turns <= MAX_STEPS, "{turns}");
            assert!(html.contains(&format!(r#"<svg id="step-{turns}""#)));
            assert_eq!(html.matches(r#"<svg id="step-"#).count(), turns);
            assert_eq!(html.matches("<li>").count(), turns);
            let outcome = game.outcome().unwrap();
            if let Some(w) = outcome.winner {
                assert!(html.contains(&format!("{} wins.", names()[w])), "{html}");
            }
            assert_eq!(
                html,
                picture(
                    &crate::discipline::morabaraba::setup(),
                    &game.transcript,
                    &names()
                )
            );
        }
    }

    #[test]
    fn moves_are_captioned_and_mills_and_shots_marked() {
        let lines = [
            "0 0 0 1 1 1 0 0 0", // 1. a1
            "0 0 0 1 3 1 0 0 0", // 2. a7
            "0 0 0 2 1 1 0 0 0", // 3. d1
            "0 0 0 2 3 1 0 0 0", // 4. d7
            "0 0 0 3 1 1 2 3 1", // 5. g1: mill a1-d1-g1, shoots d7
        ];
        let mut game = Recorded::new(MorabarabaGame::new(), 1000);
        let mut i = 0;
        let mut named = [false; 2];
        let _ = play_scripted(
            &mut game,
            |seat, _| {
                if !named[seat] {
                    named[seat] = true;
                    return "Cow".into();
                }
                i += 1;
                lines.get(i - 1).map_or("bad", |l| *l).to_string()
            },
            100,
        );
        let html = picture(
            &crate::discipline::morabaraba::setup(),
            &game.transcript,
            &names(),
        );
        assert!(
            html.contains("5. alice places g1, mill, shoots d7"),
            "{html}"
        );
        assert!(html.contains("2. bob places a7"));
        let fin = final_svg(&html);
        assert_eq!(fin.matches(r#"class="mill new""#).count(), 1);
        assert_eq!(fin.matches(r#"class="shot""#).count(), 1);
        assert_eq!(fin.matches(r#"class="cow0""#).count(), 3);
        assert_eq!(fin.matches(r#"class="cow1""#).count(), 1);
        // bob's sixth line, "bad", is no move: it loses.
        assert!(html.contains("In turn 6, bob printed “bad”, an illegal move"));
        assert!(html.contains(": alice wins."));
    }

    #[test]
    fn hostile_lines_and_names_are_escaped() {
        let mut game = Recorded::new(MorabarabaGame::new(), 1000);
        let mut named = false;
        let _ = play_scripted(
            &mut game,
            |seat, _| match (seat, named) {
                (0, false) => {
                    named = true;
                    "Alpha".into()
                }
                _ => "<script>alert('x')</script>".into(),
            },
            100,
        );
        let evil = vec!["<img src=x>".to_string(), "<script>".to_string()];
        let html = picture(
            &crate::discipline::morabaraba::setup(),
            &game.transcript,
            &evil,
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"));
        assert!(html.contains("answered “&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;”"));
        assert!(html.contains(r#"<svg id="final""#));
    }

    #[test]
    fn garbage_and_truncated_transcripts_do_not_panic() {
        let game = greedy(3);
        for cut in [
            0,
            1,
            2,
            3,
            4,
            9,
            game.transcript.len() / 2,
            game.transcript.len() - 1,
        ] {
            let html = picture(
                &crate::discipline::morabaraba::setup(),
                &game.transcript[..cut],
                &[],
            );
            assert!(html.contains(r#"<svg id="final""#));
        }
        let html = picture(
            &crate::discipline::morabaraba::setup(),
            &game.transcript[..20],
            &names(),
        );
        assert!(html.contains("The transcript ends after move"));
        let garbage: Vec<Exchange> = [
            (0, Said::ByBot, "Alpha"),
            (7, Said::ByBot, "Beta"),
            (1, Said::ByBot, "Beta"),
            (0, Said::ByBot, "0 0 0 2 2 1 0 0 0"),
            (0, Said::ByBot, "9 9 9 9 9 9 9 9 9 9"),
            (1, Said::ToBot, GAME_OVER_LINE),
        ]
        .into_iter()
        .map(|(seat, said, line)| Exchange {
            seat,
            said,
            line: line.into(),
        })
        .collect();
        for n in 0..=garbage.len() {
            let html = picture(
                &crate::discipline::morabaraba::setup(),
                &garbage[..n],
                &names(),
            );
            assert!(html.contains(r#"<svg id="final""#));
        }
    }

    #[test]
    fn a_long_game_is_thinned_and_stays_small() {
        let (t, n) = long_game(18);
        assert!(n > 1000, "{n} moves");
        let html = picture(&crate::discipline::morabaraba::setup(), &t, &names());
        assert!(html.len() < 1_000_000, "{} bytes", html.len());
        assert!(html.matches(r#"<svg id="step-"#).count() <= MAX_STEPS + 1);
        assert!(html.contains(&format!(r#"<svg id="step-{n}""#)));
        assert!(html.contains("every "), "thinned");
        assert_eq!(html.matches("<li>").count(), n);
    }

    /// A transcript of a long game: quiet moves until the 200-turn rule is
    /// near, then a mill when there is one. Returns it and its moves.
    fn long_game(seed: u64) -> (Vec<Exchange>, usize) {
        let by = |seat: usize, line: String| Exchange {
            seat,
            said: Said::ByBot,
            line,
        };
        let mut t = vec![by(0, "Alpha".into()), by(1, "Beta".into())];
        let mut pos = Position::new();
        let mut rng = crate::seed::SplitMix64::new(seed);
        loop {
            let moves = pos.legal_moves();
            let quiet: Vec<&Move> = moves.iter().filter(|m| m.shot.is_none()).collect();
            let mills: Vec<&Move> = moves.iter().filter(|m| m.shot.is_some()).collect();
            let want_mill = pos.placing() || pos.turns_since_mill() > 180;
            let pick = if want_mill && !mills.is_empty() || quiet.is_empty() {
                &mills
            } else {
                &quiet
            };
            let Some(m) = pick
                .get(rng.below(pick.len().max(1) as u64) as usize)
                .copied()
            else {
                break;
            };
            let seat = pos.to_move();
            pos.play(m).unwrap();
            t.push(by(seat, m.to_line()));
            if pos.status() != Status::Ongoing {
                break;
            }
        }
        (t, pos.turns() as usize)
    }
}
