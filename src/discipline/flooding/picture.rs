//! The picture of one game on the flooding island for its page on the
//! results site, drawn from the game's transcript, as the freiesMagazin
//! 2012 viewer showed a game: the island map after every round as a strip
//! of small maps (`id="step-N"`, N the round) with the bot's way in that
//! round, the fields it dried and the fields the flood took (flooded or
//! sunk) marked; and the map at the end big (`id="final"`) with the bot's
//! whole way.
//!
//! It reads the island from the lines the bot was sent (`GAMEBOARDSTART` …
//! `GAMEBOARDEND`; the setup's island when they are missing), the bot's
//! commands (`GO d`, `DRY d`) and the referee's `ROUND`, `INCRFLOOD` and
//! `FLOOD` lines, and follows the rules of `crate::discipline::flooding::rules` for what
//! a command does. A line that is not a command ends the reading (the
//! referee ended the game there too); unknown lines to the bot are
//! skipped. It deliberately does not score the game (the tournament does),
//! shows a long game's strip thinned (every k-th round, said so) with only
//! the shown round's way and marks on each small map, and emits no script.

use std::fmt::Write;

use crate::discipline::flooding::rules::{Command, Direction, Island, Tile, DEFAULT_MAX_ROUNDS};
use crate::discipline::game::Setup;
use crate::draw::{
    legend, num, quote_line, seat_colour, seat_name, shown, small_figure, strip, svg_open,
    thinning_note,
};
use crate::game::lines::{Exchange, Said};

/// Small maps in the strip (more rounds are thinned).
const MAX_STEPS: usize = 30;
/// Lines of an island's text at most (1000 rows and a few more).
const MAX_ISLAND_LINES: usize = 1010;

const WATER: &str = "#1d4f7c";
const FLOODED: &str = "#8cc4ea";
const DRY: &str = "#d9c58f";
const DRIED: &str = "#009E73";
const PATH: &str = "#111";

type At = (i32, i32);

/// The island's fields as the game goes on.
#[derive(Debug, Clone)]
struct Grid {
    w: i32,
    h: i32,
    tiles: Vec<Tile>,
}

impl Grid {
    fn of(island: &Island) -> Grid {
        let (w, h) = (i32::from(island.width()), i32::from(island.height()));
        let mut tiles = Vec::with_capacity((w * h) as usize);
        for y in 1..=h {
            for x in 1..=w {
                tiles.push(island.tile(crate::discipline::flooding::rules::Field {
                    x: x as u16,
                    y: y as u16,
                }));
            }
        }
        Grid { w, h, tiles }
    }

    fn index(&self, (x, y): At) -> Option<usize> {
        (x >= 1 && y >= 1 && x <= self.w && y <= self.h)
            .then(|| ((y - 1) * self.w + x - 1) as usize)
    }

    /// The field at `at`; off the island is water.
    fn tile(&self, at: At) -> Tile {
        self.index(at).map_or(Tile::Sunk, |i| self.tiles[i])
    }

    fn count(&self, t: Tile) -> usize {
        self.tiles.iter().filter(|&&x| x == t).count()
    }
}

/// One round as read.
#[derive(Debug, Clone, Default)]
struct Round {
    round: u32,
    /// Where the bot was at the start and after every step.
    path: Vec<At>,
    /// The commands as printed.
    commands: Vec<String>,
    dried: Vec<At>,
    flooded: Vec<At>,
    sunk: Vec<At>,
    rise: Option<u8>,
    /// The fields after the round (kept for the rounds shown only).
    after: Option<Vec<Tile>>,
}

/// How the game ended, as far as the transcript tells.
#[derive(Debug, Clone, PartialEq)]
enum End {
    WalkedIntoWater(At),
    FieldSank(At),
    /// A line that is not a command (or not expected): the line.
    Broken(String),
    RoundCap,
    /// `END` without a rule ending the game: the referee stopped it.
    Referee,
    Cut,
}

struct Read {
    start: Grid,
    grid: Grid,
    rounds: Vec<Round>,
    /// The rounds kept with their fields (indices into `rounds`).
    shown: Vec<usize>,
    position: Option<At>,
    level: u32,
    end: End,
}

/// The island as sent to the bot, else the setup's.
fn island(setup: &Setup, transcript: &[Exchange]) -> Option<Island> {
    let sent = transcript
        .iter()
        .filter(|e| e.said == Said::ToBot && e.seat == 0);
    let mut text = String::new();
    let mut inside = false;
    for e in sent.take(MAX_ISLAND_LINES + 2) {
        inside |= e.line.starts_with("GAMEBOARDSTART");
        if inside {
            text.push_str(&e.line);
            text.push('\n');
            if e.line == "GAMEBOARDEND" {
                break;
            }
        }
    }
    Island::parse(&text).ok().or_else(|| {
        setup
            .try_get::<super::data::FloodSetup>()
            .map(|s| s.island.clone())
    })
}

/// `X,Y` as a field.
fn pair(s: &str) -> Option<At> {
    let (a, b) = s.split_once(',')?;
    let n = |t: &str| -> Option<i32> {
        (!t.is_empty() && t.len() <= 5 && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse().ok())?
    };
    Some((n(a)?, n(b)?))
}

/// `ROUND Z X,Y`.
fn round_line(line: &str) -> Option<(u32, At)> {
    let (z, at) = line.strip_prefix("ROUND ")?.split_once(' ')?;
    if z.is_empty() || z.len() > 9 || !z.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((z.parse().ok()?, pair(at)?))
}

fn step(d: Direction, (x, y): At) -> At {
    match d {
        Direction::North => (x, y - 1),
        Direction::East => (x + 1, y),
        Direction::South => (x, y + 1),
        Direction::West => (x - 1, y),
        Direction::Current => (x, y),
    }
}

fn read(setup: &Setup, transcript: &[Exchange]) -> Read {
    let start = island(setup, transcript).map_or(
        Grid {
            w: 1,
            h: 1,
            tiles: vec![Tile::Sunk],
        },
        |i| Grid::of(&i),
    );
    let max_rounds = setup
        .try_get::<super::data::FloodSetup>()
        .map_or(DEFAULT_MAX_ROUNDS, |s| s.params.max_rounds);
    let to_bot = |e: &&Exchange| e.said == Said::ToBot && e.seat == 0;
    let n_rounds = transcript
        .iter()
        .filter(to_bot)
        .filter(|e| round_line(&e.line).is_some())
        .count();
    let shown = shown(n_rounds, MAX_STEPS);
    let mut keep = vec![false; n_rounds];
    for &i in &shown {
        keep[i] = true;
    }

    let mut grid = start.clone();
    let mut rounds: Vec<Round> = Vec::new();
    let mut position = None;
    let mut level = 0u32;
    let mut walked: Option<At> = None;
    let mut end = None;
    let mut over = false;
    for e in transcript.iter().filter(|e| e.seat == 0) {
        let line = e.line.as_str();
        if e.said == Said::ToBot {
            if let Some((z, at)) = round_line(line) {
                seal(&mut rounds, &keep, &grid.tiles);
                rounds.push(Round {
                    round: z,
                    path: vec![at],
                    ..Round::default()
                });
                position = Some(at);
            } else if let Some(z) = line.strip_prefix("INCRFLOOD ") {
                let rise = z.parse::<u8>().unwrap_or(0).min(1);
                level += u32::from(rise);
                if let Some(r) = rounds.last_mut() {
                    r.rise = Some(rise);
                }
            } else if let Some(at) = line.strip_prefix("FLOOD ").and_then(pair) {
                if let (Some(i), Some(r)) = (grid.index(at), rounds.last_mut()) {
                    match grid.tiles[i] {
                        Tile::Dry => {
                            grid.tiles[i] = Tile::Flooded;
                            r.flooded.push(at);
                        }
                        Tile::Flooded => {
                            grid.tiles[i] = Tile::Sunk;
                            r.sunk.push(at);
                        }
                        Tile::Sunk => {}
                    }
                }
            } else if line == "END" {
                over = true;
            }
            continue;
        }
        let (Some(r), Some(cmd)) = (rounds.last_mut(), Command::parse(line)) else {
            end = Some(End::Broken(line.to_string()));
            break;
        };
        if r.commands.len() >= 3 || over {
            end = Some(End::Broken(line.to_string()));
            break;
        }
        r.commands.push(line.to_string());
        let Some(at) = position.filter(|_| walked.is_none()) else {
            continue; // drowned: the rest of the round is not carried out
        };
        match cmd {
            Command::Go(d) => {
                let to = step(d, at);
                position = Some(to);
                if to != at {
                    r.path.push(to);
                }
                if grid.tile(to) == Tile::Sunk {
                    walked = Some(to);
                }
            }
            Command::Dry(d) => {
                let f = step(d, at);
                if let Some(i) = grid.index(f).filter(|&i| grid.tiles[i] == Tile::Flooded) {
                    grid.tiles[i] = Tile::Dry;
                    r.dried.push(f);
                }
            }
        }
    }
    seal(&mut rounds, &keep, &grid.tiles);
    let last_round = rounds.last().map_or(0, |r| r.round);
    let end = end.unwrap_or_else(|| match (walked, position) {
        (Some(at), _) => End::WalkedIntoWater(at),
        (None, Some(at)) if grid.tile(at) == Tile::Sunk => End::FieldSank(at),
        _ if over && last_round >= max_rounds => End::RoundCap,
        _ if over => End::Referee,
        _ => End::Cut,
    });
    Read {
        start,
        grid,
        rounds,
        shown,
        position,
        level,
        end,
    }
}

/// Keeps the fields after the last round read, if it is one to show.
fn seal(rounds: &mut [Round], keep: &[bool], tiles: &[Tile]) {
    let n = rounds.len();
    if let Some(last) = rounds.last_mut() {
        if last.after.is_none() && keep.get(n - 1) == Some(&true) {
            last.after = Some(tiles.to_vec());
        }
    }
}

/// The way as a path: `M` at the start and after a jump, `h`/`v` steps.
fn way(points: impl IntoIterator<Item = At>) -> String {
    let mut d = String::new();
    let mut prev: Option<At> = None;
    for (x, y) in points {
        match prev {
            Some(p) if p == (x, y) => {}
            Some((px, py)) if (x - px).abs() + (y - py).abs() == 1 => {
                if x != px {
                    let _ = write!(d, "h{}", x - px);
                } else {
                    let _ = write!(d, "v{}", y - py);
                }
            }
            _ => {
                let _ = write!(
                    d,
                    "M{} {}",
                    num(f64::from(x) - 0.5),
                    num(f64::from(y) - 0.5)
                );
            }
        }
        prev = Some((x, y));
    }
    d
}

/// What a map shows besides the fields.
struct Marks<'a> {
    way: String,
    dried: &'a [At],
    flooded: &'a [At],
    sunk: &'a [At],
    start: Option<At>,
    bot: Option<At>,
    drowned: bool,
    grid_lines: bool,
    outline: Outline,
}

/// The island's outline at the start (a dashed line around its land), so
/// that a sunk island still shows where it was: drawn once in the big map
/// (`id="outline"`) and used by every small map of the same page.
enum Outline {
    Define(String),
    Use,
}

/// The path around the fields of `start` that were land: every side of a
/// land field whose neighbour is water, runs of sides joined.
fn outline_path(start: &Grid) -> String {
    let land = |x: i32, y: i32| start.tile((x, y)) != Tile::Sunk;
    let mut d = String::new();
    // Horizontal sides: above row y (between y-1 and y), from 1-based fields.
    for y in 1..=start.h + 1 {
        let mut x = 1;
        while x <= start.w {
            if land(x, y) == land(x, y - 1) {
                x += 1;
                continue;
            }
            let from = x;
            while x <= start.w && land(x, y) != land(x, y - 1) {
                x += 1;
            }
            let _ = write!(d, "M{} {}h{}", from - 1, y - 1, x - from);
        }
    }
    for x in 1..=start.w + 1 {
        let mut y = 1;
        while y <= start.h {
            if land(x, y) == land(x - 1, y) {
                y += 1;
                continue;
            }
            let from = y;
            while y <= start.h && land(x, y) != land(x - 1, y) {
                y += 1;
            }
            let _ = write!(d, "M{} {}v{}", x - 1, from - 1, y - from);
        }
    }
    d
}

/// A map of the island: `tiles` of `grid`'s size, `cell` pixels a field.
fn map(id: &str, title: &str, grid: &Grid, tiles: &[Tile], cell: f64, m: &Marks) -> String {
    let (w, h) = (grid.w, grid.h);
    let px = |n: i32| (f64::from(n + 2) * cell).round() as u32;
    let mut s = svg_open(
        id,
        px(w),
        px(h),
        &format!("-1 -1 {} {}", w + 2, h + 2),
        title,
    );
    let _ = write!(
        s,
        r#"<rect x="-1" y="-1" width="{}" height="{}" fill="{WATER}"/>"#,
        w + 2,
        h + 2
    );
    for (kind, colour) in [(Tile::Dry, DRY), (Tile::Flooded, FLOODED)] {
        let mut d = String::new();
        for y in 0..h {
            let mut x = 0;
            while x < w {
                if tiles.get((y * w + x) as usize) != Some(&kind) {
                    x += 1;
                    continue;
                }
                let from = x;
                while x < w && tiles.get((y * w + x) as usize) == Some(&kind) {
                    x += 1;
                }
                let _ = write!(d, "M{from} {y}h{}v1h-{}z", x - from, x - from);
            }
        }
        if !d.is_empty() {
            let _ = write!(s, r#"<path d="{d}" fill="{colour}"/>"#);
        }
    }
    match &m.outline {
        Outline::Define(d) if !d.is_empty() => {
            let _ = write!(
                s,
                r##"<path id="outline" class="outline" d="{d}" fill="none" stroke="#fff" stroke-opacity="0.75" stroke-width="0.08" stroke-dasharray="0.3 0.2"/>"##
            );
        }
        Outline::Define(_) => {}
        Outline::Use => s.push_str(r##"<use href="#outline"/>"##),
    }
    if m.grid_lines {
        let mut d = String::new();
        for x in 0..=w {
            let _ = write!(d, "M{x} 0V{h}");
        }
        for y in 0..=h {
            let _ = write!(d, "M0 {y}H{w}");
        }
        let _ = write!(
            s,
            r##"<path d="{d}" stroke="#000" stroke-opacity="0.15" stroke-width="0.04"/>"##
        );
    }
    let fields = |list: &[At], each: &dyn Fn(f64, f64) -> String| -> String {
        list.iter()
            .map(|&(x, y)| each(f64::from(x - 1), f64::from(y - 1)))
            .collect()
    };
    if !m.flooded.is_empty() {
        let d = fields(m.flooded, &|x, y| {
            format!("M{} {}l0.6 -0.6", num(x + 0.2), num(y + 0.8))
        });
        let _ = write!(
            s,
            r#"<path class="flooded" d="{d}" stroke="{WATER}" stroke-width="0.14"/>"#
        );
    }
    if !m.sunk.is_empty() {
        let d = fields(m.sunk, &|x, y| {
            format!("M{} {}l0.6 0.6m0 -0.6l-0.6 0.6", num(x + 0.2), num(y + 0.2))
        });
        let _ = write!(
            s,
            r##"<path class="sunk" d="{d}" stroke="#fff" stroke-width="0.14"/>"##
        );
    }
    if !m.dried.is_empty() {
        let d = fields(m.dried, &|x, y| {
            format!("M{} {}h0.7v0.7h-0.7z", num(x + 0.15), num(y + 0.15))
        });
        let _ = write!(
            s,
            r#"<path class="dried" d="{d}" fill="none" stroke="{DRIED}" stroke-width="0.14"/>"#
        );
    }
    if let Some((x, y)) = m.start {
        let _ = write!(
            s,
            r##"<rect class="start" x="{}" y="{}" width="0.6" height="0.6" fill="none" stroke="#fff" stroke-width="0.1"/>"##,
            num(f64::from(x) - 0.8),
            num(f64::from(y) - 0.8)
        );
    }
    if !m.way.is_empty() {
        // A light halo under the way, so that it reads on water too.
        let _ = write!(
            s,
            r##"<g fill="none" stroke-linejoin="round" stroke-linecap="round"><path d="{w}" stroke="#fff" stroke-opacity="0.6" stroke-width="0.3"/><path class="way" d="{w}" stroke="{PATH}" stroke-width="0.14"/></g>"##,
            w = m.way
        );
    }
    if let Some((x, y)) = m.bot {
        let (cx, cy) = (f64::from(x) - 0.5, f64::from(y) - 0.5);
        let _ = write!(
            s,
            r##"<circle class="bot" data-field="{x},{y}" cx="{}" cy="{}" r="0.32" fill="#fff" stroke="{}" stroke-width="0.14"/>"##,
            num(cx),
            num(cy),
            seat_colour(0)
        );
        if m.drowned {
            let _ = write!(
                s,
                r##"<path d="M{} {}l0.6 0.6m0 -0.6l-0.6 0.6" stroke="#c00" stroke-width="0.16"/>"##,
                num(cx - 0.3),
                num(cy - 0.3)
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// An HTML fragment (static SVG, no script) that shows the game.
pub fn picture(setup: &Setup, transcript: &[Exchange], names: &[String]) -> String {
    let r = read(setup, transcript);
    let square =
        |fill: &str| format!(r#"<rect x="1" y="1" width="12" height="12" fill="{fill}"/>"#);
    let extra = [
        (square(DRY), "dry".to_string()),
        (square(FLOODED), "flooded".to_string()),
        (square(WATER), "water".to_string()),
        (
            format!(
                r#"{}<rect x="3" y="3" width="8" height="8" fill="none" stroke="{DRIED}" stroke-width="2"/>"#,
                square(FLOODED)
            ),
            "dried in the round".to_string(),
        ),
        (
            format!(
                r#"{}<path d="M3 11L11 3" stroke="{WATER}" stroke-width="2"/>"#,
                square(FLOODED)
            ),
            "flooded in the round".to_string(),
        ),
        (
            format!(
                r##"{}<path d="M3 3l8 8m0 -8l-8 8" stroke="#fff" stroke-width="2"/>"##,
                square(WATER)
            ),
            "sunk in the round".to_string(),
        ),
        (
            format!(r#"<path d="M1 7H13" stroke="{PATH}" stroke-width="2"/>"#),
            "the bot’s way".to_string(),
        ),
        (
            format!(
                r##"<circle cx="7" cy="7" r="4.5" fill="#fff" stroke="{}" stroke-width="2"/>"##,
                seat_colour(0)
            ),
            "where the bot is (crossed out in red: drowned)".to_string(),
        ),
    ];
    let mut out = String::from("<section class=\"game-picture flooding\">\n");
    out.push_str(&legend(names, 1, &extra));
    out.push_str(&final_figure(&r, names));
    out.push_str(&steps(&r));
    out.push_str("</section>\n");
    out
}

/// How the game ended, in words.
fn verdict(r: &Read, names: &[String]) -> String {
    let bot = seat_name(names, 0, 40);
    let round = r.rounds.last().map_or(0, |x| x.round);
    match &r.end {
        End::WalkedIntoWater((x, y)) => {
            format!("In round {round}, {bot} walked into the water at {x},{y} and drowned.")
        }
        End::FieldSank((x, y)) => {
            format!("In round {round}, the field {x},{y} under {bot} sank: it drowned.")
        }
        End::Broken(line) => format!(
            "In round {round}, {bot} printed “{}”, which is not a command (GO or DRY and NORTH, EAST, SOUTH, WEST or CURRENT): the game ends.",
            quote_line(line, 40)
        ),
        End::RoundCap => format!("{bot} was still on land after the last round, {round}."),
        End::Referee => format!(
            "The referee ended the game in round {round}: the bot failed outside the rules (it crashed or ran out of time)."
        ),
        End::Cut => format!("The transcript ends in round {round}."),
    }
}

fn final_figure(r: &Read, names: &[String]) -> String {
    let (w, h) = (r.grid.w, r.grid.h);
    let cell = (640.0 / f64::from(w.max(h) + 2)).clamp(4.0, 32.0);
    let start = r.rounds.first().and_then(|x| x.path.first().copied());
    let marks = Marks {
        way: way(r.rounds.iter().flat_map(|x| x.path.iter().copied())),
        dried: &[],
        flooded: &[],
        sunk: &[],
        start,
        bot: r.position,
        drowned: matches!(r.end, End::WalkedIntoWater(_) | End::FieldSank(_)),
        grid_lines: cell >= 8.0,
        outline: Outline::Define(outline_path(&r.start)),
    };
    let round = r.rounds.last().map_or(0, |x| x.round);
    let at = r
        .position
        .map_or("nowhere yet".to_string(), |(x, y)| format!("on {x},{y}"));
    let title = format!("The island after round {round}, the bot {at}");
    let svg = map("final", &title, &r.grid, &r.grid.tiles, cell, &marks);
    let land = r.start.count(Tile::Dry) + r.start.count(Tile::Flooded);
    format!(
        "<figure>{svg}<figcaption>After round {round}: {} is {at}{}; the flood level is {}. \
         Of the {land} fields of land at the start, {} are dry, {} flooded and {} gone. \
         The black line is the bot’s whole way, the white square where it started, the dashed line the island’s shore at the start. {}\
         </figcaption></figure>\n",
        seat_name(names, 0, 40),
        start.map_or(String::new(), |(x, y)| format!(" (it started on {x},{y})")),
        r.level,
        r.grid.count(Tile::Dry),
        r.grid.count(Tile::Flooded),
        land - (r.grid.count(Tile::Dry) + r.grid.count(Tile::Flooded)).min(land),
        verdict(r, names)
    )
}

fn steps(r: &Read) -> String {
    let (w, h) = (r.grid.w, r.grid.h);
    let cell = (150.0 / f64::from(w.max(h) + 2)).clamp(2.0, 14.0);
    let items: Vec<String> = r
        .shown
        .iter()
        .filter_map(|&i| {
            let round = r.rounds.get(i)?;
            let tiles = round.after.as_deref()?;
            let marks = Marks {
                way: way(round.path.iter().copied()),
                dried: &round.dried,
                flooded: &round.flooded,
                sunk: &round.sunk,
                start: None,
                bot: round.path.last().copied(),
                drowned: i + 1 == r.rounds.len()
                    && matches!(r.end, End::WalkedIntoWater(_) | End::FieldSank(_)),
                grid_lines: false,
                outline: Outline::Use,
            };
            let svg = map(
                &format!("step-{}", round.round),
                &format!("The island after round {}", round.round),
                &r.grid,
                tiles,
                cell,
                &marks,
            );
            let commands: Vec<String> = round.commands.iter().map(|c| quote_line(c, 16)).collect();
            let mut caption = format!("{}. {}", round.round, commands.join(", "));
            if let Some(rise) = round.rise {
                let _ = write!(
                    caption,
                    "; flood{}: {} flooded, {} sunk",
                    if rise > 0 { " rises" } else { "" },
                    round.flooded.len(),
                    round.sunk.len()
                );
            }
            Some(small_figure(&svg, &caption))
        })
        .collect();
    format!(
        "<figure>{}<figcaption>The island after every round{}, with the bot’s way in that \
         round, the fields it dried and those the flood took.</figcaption></figure>\n",
        strip(&items),
        thinning_note(r.rounds.len(), MAX_STEPS, "round"),
    )
}

#[cfg(test)]
mod tests;
