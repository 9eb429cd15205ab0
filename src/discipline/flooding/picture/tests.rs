//! Unit tests of `picture` (discipline/flooding/picture.rs), kept beside it so the
//! module itself stays a size a person can hold.

use super::*;
use crate::discipline::flooding::rules::{FloodGame, Params};
use crate::game::lines::{play_scripted, LineGame, Recorded};

fn names() -> Vec<String> {
    vec!["noah".into()]
}

/// A bot that keeps the land around it dry: it dries its own field or
/// a flooded neighbour, else walks to the neighbour with the most dry
/// land around it. It follows the game from the lines it is sent.
struct Keeper {
    grid: Vec<Vec<char>>,
    at: At,
    read: usize,
}

impl Keeper {
    fn new() -> Keeper {
        Keeper {
            grid: Vec::new(),
            at: (0, 0),
            read: 0,
        }
    }

    fn get(&self, (x, y): At) -> char {
        if x < 1 || y < 1 {
            return '.';
        }
        let row = self.grid.get(y as usize - 1);
        row.and_then(|r| r.get(x as usize - 1))
            .copied()
            .unwrap_or('.')
    }

    fn set(&mut self, (x, y): At, c: char) {
        self.grid[y as usize - 1][x as usize - 1] = c;
    }

    fn answer(&mut self, seen: &[String]) -> String {
        for line in &seen[self.read..] {
            if line.starts_with(['#', 'o', '.']) {
                self.grid.push(line.chars().collect());
            } else if let Some((_, at)) = round_line(line) {
                self.at = at;
            } else if let Some(at) = line.strip_prefix("FLOOD ").and_then(pair) {
                let c = if self.get(at) == '#' { 'o' } else { '.' };
                self.set(at, c);
            }
        }
        self.read = seen.len();
        let dirs = [
            ("CURRENT", Direction::Current),
            ("NORTH", Direction::North),
            ("EAST", Direction::East),
            ("SOUTH", Direction::South),
            ("WEST", Direction::West),
        ];
        for (word, d) in dirs {
            let f = step(d, self.at);
            if self.get(f) == 'o' {
                self.set(f, '#');
                return format!("DRY {word}");
            }
        }
        let dry_around = |k: &Keeper, f: At| {
            dirs.iter()
                .filter(|(_, d)| k.get(step(*d, f)) != '.')
                .count()
        };
        let best = dirs
            .iter()
            .filter(|(_, d)| self.get(step(*d, self.at)) != '.')
            .max_by_key(|(_, d)| dry_around(self, step(*d, self.at)));
        match best {
            Some((word, d)) => {
                self.at = step(*d, self.at);
                format!("GO {word}")
            }
            None => "GO CURRENT".into(),
        }
    }
}

fn island(w: u16, h: u16) -> Island {
    let tiles = (0..w as usize * h as usize)
        .map(|i| {
            let (x, y) = (i % w as usize, i / w as usize);
            match (x * 7 + y * 3) % 11 {
                0 => Tile::Sunk,
                1 | 2 => Tile::Flooded,
                _ => Tile::Dry,
            }
        })
        .collect();
    Island::new(w, h, tiles, None).unwrap()
}

fn played(island: &Island, max_rounds: u32, seed: u64) -> (Setup, Recorded<FloodGame>) {
    let params = Params { max_rounds };
    let mut game = Recorded::new(FloodGame::new(island, params, seed), 10_000_000);
    let mut bot = Keeper::new();
    play_scripted(&mut game, |_, seen| bot.answer(seen), 10_000_000).unwrap();
    let setup = crate::discipline::flooding::setup(island.clone(), params, seed);
    (setup, game)
}

fn final_svg(html: &str) -> &str {
    let start = html.find(r#"<svg id="final""#).expect("the final svg");
    let end = start + html[start..].find("</svg>").expect("closed");
    &html[start..end]
}

#[test]
fn a_sunk_island_keeps_its_outline_in_every_map() {
    let two = Grid {
        w: 3,
        h: 1,
        tiles: vec![Tile::Dry, Tile::Flooded, Tile::Sunk],
    };
    assert_eq!(outline_path(&two), "M0 0h2M0 1h2M0 0v1M2 0v1");
    let island = island(12, 8);
    let (setup, rec) = played(&island, 40, 3);
    let html = picture(&setup, &rec.transcript, &names());
    assert_eq!(html.matches(r#"id="outline""#).count(), 1, "{html}");
    assert!(html.matches(r##"<use href="#outline"/>"##).count() >= 1);
    assert!(html.contains("the island’s shore at the start"));
}

#[test]
fn the_final_map_shows_where_the_bot_ended() {
    let island = island(12, 8);
    let (setup, game) = played(&island, 25, 5);
    let o = game.outcome().unwrap();
    let html = picture(&setup, &game.transcript, &names());
    let fin = final_svg(&html);
    assert!(
        fin.contains(r#"width="448" height="320""#),
        "{}",
        &fin[..200]
    );
    let p = o.position;
    assert!(fin.contains(&format!(r#"class="bot" data-field="{},{}""#, p.x, p.y)));
    assert!(fin.contains(&format!("The island after round {}", o.rounds)));
    assert!(html.contains(&format!("the flood level is {}.", o.level)));
    // The final fields are the game's.
    let r = read(&setup, &game.transcript);
    let rows: Vec<String> = r
        .grid
        .tiles
        .chunks(12)
        .map(|row| row.iter().map(|t| t.symbol()).collect())
        .collect();
    assert_eq!(rows, game.game.rows());
    // A small map per round.
    assert_eq!(html.matches(r#"<svg id="step-"#).count(), o.rounds as usize);
    assert_eq!(r.rounds.len(), o.rounds as usize);
    assert!(!html.contains("shown, and the last"), "not thinned");
    assert_eq!(o.rounds, 25, "the keeper lives to the round cap");
    assert!(html.contains("noah was still on land after the last round, 25."));
    assert_eq!(html, picture(&setup, &game.transcript, &names()));
}

#[test]
fn walking_into_the_water_is_drawn() {
    let island = Island::parse("GAMEBOARDSTART 4,1\n.##.\nGAMEBOARDEND\nROUND 1 2,1\n").unwrap();
    let mut game = Recorded::new(FloodGame::new(&island, Params::default(), 1), 1000);
    let cmds = ["GO EAST", "GO EAST", "DRY CURRENT"];
    let mut i = 0;
    play_scripted(
        &mut game,
        |_, _| {
            i += 1;
            cmds[(i - 1) % 3].to_string()
        },
        100,
    )
    .unwrap();
    let setup = crate::discipline::flooding::setup(island, Params::default(), 1);
    let html = picture(&setup, &game.transcript, &names());
    assert!(html.contains("In round 1, noah walked into the water at 4,1 and drowned."));
    let fin = final_svg(&html);
    assert!(fin.contains(r#"data-field="4,1""#));
    assert!(fin.contains(r#"d="M1.5 0.5h1h1""#), "{fin}");
    assert!(fin.contains("#c00"), "the drowned bot is crossed out");
}

#[test]
fn a_hostile_line_is_escaped_and_garbage_does_not_panic() {
    let island = island(6, 5);
    let mut game = Recorded::new(FloodGame::new(&island, Params::default(), 3), 1000);
    let mut i = 0;
    let _ = play_scripted(
        &mut game,
        |_, _| {
            i += 1;
            if i == 5 {
                "<script>alert(1)</script>"
            } else {
                "DRY CURRENT"
            }
            .to_string()
        },
        100,
    );
    let setup = crate::discipline::flooding::setup(island.clone(), Params::default(), 3);
    let evil = vec!["<script>n</script>".to_string()];
    let html = picture(&setup, &game.transcript, &evil);
    assert!(!html.contains("<script"), "{html}");
    assert!(html.contains("printed “&lt;script&gt;alert(1)&lt;/script&gt;”"));
    for cut in 0..game.transcript.len() {
        let html = picture(&setup, &game.transcript[..cut], &names());
        assert!(html.contains(r#"<svg id="final""#));
        let html = picture(
            &crate::discipline::morabaraba::setup(),
            &game.transcript[..cut],
            &names(),
        );
        assert!(html.contains(r#"<svg id="final""#));
    }
    let garbage: Vec<Exchange> = [
        (0, Said::ByBot, "GO NORTH"),
        (0, Said::ToBot, "GAMEBOARDSTART 99999,99999"),
        (0, Said::ToBot, "ROUND 1 0,0"),
        (0, Said::ToBot, "FLOOD 99999,1"),
        (0, Said::ToBot, "INCRFLOOD 300"),
        (3, Said::ByBot, "GO NORTH"),
        (0, Said::ByBot, "GO NORTH"),
        (0, Said::ByBot, "GO WEST"),
        (0, Said::ByBot, "DRY SOUTH"),
        (0, Said::ByBot, "DRY SOUTH"),
        (0, Said::ToBot, "ROUND 4294967295 65535,65535"),
        (0, Said::ByBot, "GO SOUTH"),
        (0, Said::ToBot, "END"),
    ]
    .into_iter()
    .map(|(seat, said, line)| Exchange {
        seat,
        said,
        line: line.into(),
    })
    .collect();
    for n in 0..=garbage.len() {
        for s in [&setup, &crate::discipline::morabaraba::setup()] {
            let html = picture(s, &garbage[n..], &names());
            assert!(html.contains(r#"<svg id="final""#));
            let html = picture(s, &garbage[..n], &names());
            assert!(html.contains(r#"<svg id="final""#));
        }
    }
}

#[test]
fn a_long_game_on_a_big_island_stays_small() {
    // 1000 fields (the most an island may have), a bot that lives long.
    let island = island(40, 25);
    let (setup, game) = played(&island, DEFAULT_MAX_ROUNDS, 11);
    let o = game.outcome().unwrap();
    assert!(o.rounds > 100, "{} rounds", o.rounds);
    let html = picture(&setup, &game.transcript, &names());
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    assert!(html.contains("shown, and the last"), "thinned");
    let p = o.position;
    assert!(final_svg(&html).contains(&format!(r#"data-field="{},{}""#, p.x, p.y)));
    assert!(html.contains(&format!(r#"<svg id="step-{}""#, o.rounds)));
}

#[test]
fn the_worst_case_of_2000_rounds_stays_under_a_megabyte() {
    // Made up, to bound the size: a checkerboard of 1000 fields (the most
    // runs of one kind), 2000 rounds of three moves and seven floods.
    let tiles = (0..1000)
        .map(|i| {
            if (i % 40 + i / 40) % 2 == 0 {
                Tile::Dry
            } else {
                Tile::Flooded
            }
        })
        .collect();
    let island = Island::new(40, 25, tiles, None).unwrap();
    let to = |line: String| Exchange {
        seat: 0,
        said: Said::ToBot,
        line,
    };
    let by = |line: &str| Exchange {
        seat: 0,
        said: Said::ByBot,
        line: line.into(),
    };
    let mut t: Vec<Exchange> = island.to_text().lines().map(|l| to(l.into())).collect();
    t.pop();
    for z in 1..=DEFAULT_MAX_ROUNDS {
        let x = 2 - z % 2;
        t.push(to(format!("ROUND {z} {x},1")));
        t.push(by(if z % 2 == 1 { "GO EAST" } else { "GO WEST" }));
        t.push(by("DRY SOUTH"));
        t.push(by("DRY NORTH"));
        t.push(to("INCRFLOOD 0".into()));
        // The bottom row only, so that the checkerboard stays.
        for k in 0..7 {
            t.push(to(format!("FLOOD {},25", (z * 7 + k) % 40 + 1)));
        }
    }
    t.push(to("END".into()));
    let setup = crate::discipline::flooding::setup(island, Params::default(), 0);
    let html = picture(&setup, &t, &names());
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    assert!(html.contains("every 67th round shown"));
    assert!(html.contains("noah was still on land after the last round, 2000."));
}
