//! Unit tests of `rules` (discipline/flooding/rules.rs), kept beside it so the
//! module itself stays a size a person can hold.

use super::*;
use crate::game::lines::play_scripted;

const SEED_ISLAND: &str = "GAMEBOARDSTART 8,1\n...o#...\nGAMEBOARDEND\nROUND 1 4,1\n";

fn f(x: u16, y: u16) -> Field {
    Field { x, y }
}

/// Everything the bot received, and the outcome.
fn transcript(
    game: &mut FloodGame,
    mut bot: impl FnMut(&[String]) -> Vec<&'static str>,
) -> (Vec<String>, FloodOutcome) {
    let mut seen = Vec::new();
    let mut queue: Vec<&str> = Vec::new();
    for _ in 0..1_000_000 {
        match game.next() {
            Step::Send { lines, .. } => seen.extend(lines),
            Step::Expect { .. } => {
                if queue.is_empty() {
                    queue = bot(&seen);
                    queue.reverse();
                }
                let line = queue.pop().expect("three commands");
                game.reply(0, line).expect("a legal command");
            }
            Step::Over { farewell } => {
                assert_eq!(farewell, vec![(0, vec!["END".to_string()])]);
                seen.push("END".into());
                return (seen, game.outcome().unwrap());
            }
        }
    }
    panic!("no end");
}

/// Plays one round with `commands`; returns what the bot got meanwhile
/// (from what was still unsent before the round up to the next `ROUND`,
/// or `END`).
fn play_round(game: &mut FloodGame, commands: [&str; 3]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut given = 0;
    while given < 3 {
        match game.next() {
            Step::Send { lines: l, .. } => lines.extend(l),
            Step::Expect { .. } => {
                game.reply(0, commands[given]).unwrap();
                given += 1;
            }
            Step::Over { .. } => panic!("over before the round's commands"),
        }
    }
    if let Step::Send { lines: l, .. } = game.next() {
        lines.extend(l);
    }
    if game.outcome.is_some() {
        assert!(matches!(game.next(), Step::Over { .. }));
        lines.push("END".into());
    }
    lines
}

fn all_dry(width: u16, height: u16) -> Island {
    Island::new(
        width,
        height,
        vec![Tile::Dry; width as usize * height as usize],
        None,
    )
    .unwrap()
}

fn check_piles(game: &FloodGame) {
    let mut on_piles: Vec<u16> = game
        .piles
        .draw
        .iter()
        .chain(&game.piles.discard)
        .copied()
        .collect();
    on_piles.sort_unstable();
    let land: Vec<u16> = (0..game.tiles.len() as u16)
        .filter(|&i| game.tiles[i as usize] != Tile::Sunk)
        .collect();
    assert_eq!(on_piles, land, "the piles hold exactly the land, once each");
}

#[test]
fn the_seeds_example_island() {
    let island = Island::parse(SEED_ISLAND).unwrap();
    assert_eq!((island.width(), island.height()), (8, 1));
    assert_eq!(island.start(), f(4, 1));
    assert!(island.start_given());
    assert_eq!(island.tile(f(4, 1)), Tile::Flooded);
    assert_eq!(island.tile(f(5, 1)), Tile::Dry);
    assert_eq!(island.tile(f(3, 1)), Tile::Sunk);
    assert_eq!(island.tile(f(9, 1)), Tile::Sunk);
    assert_eq!(island.n_land(), 2);
    assert_eq!(island.to_text(), SEED_ISLAND);
    assert_eq!(Island::parse(&island.to_text()).unwrap(), island);
}

#[test]
fn default_start_is_the_first_dry_field_else_the_first_flooded() {
    let i = Island::parse("GAMEBOARDSTART 3,2\n.o.\noo#\nGAMEBOARDEND").unwrap();
    assert_eq!(i.start(), f(3, 2));
    assert!(!i.start_given());
    let i = Island::parse("GAMEBOARDSTART 3,2\n...\n.oo\nGAMEBOARDEND\n").unwrap();
    assert_eq!(i.start(), f(2, 2));
    // The canonical text names the start, so it survives a round trip.
    assert_eq!(Island::parse(&i.to_text()).unwrap().start(), f(2, 2));
}

#[test]
fn the_parser_is_lenient_about_layout_only() {
    let text = "\u{feff}\r\n  GAMEBOARDSTART 8,1 \r\n...o#...\r\n\r\nGAMEBOARDEND\r\n\r\nROUND 1 5,1\r\n\n";
    let i = Island::parse(text).unwrap();
    assert_eq!(i.start(), f(5, 1));
    let i = Island::parse(&format!(
        "GAMEBOARDSTART 1000,1\n{}\nGAMEBOARDEND",
        "#".repeat(1000)
    ))
    .unwrap();
    assert_eq!(i.n_land(), 1000);
}

#[test]
fn the_parser_refuses_broken_islands_with_clear_words() {
    use IslandError::*;
    let err = |t: &str| Island::parse(t).unwrap_err();
    assert_eq!(err(""), Empty);
    assert_eq!(err("\n \n"), Empty);
    assert!(matches!(err("GAMEBOARD 8,1\n"), BadHeader { line: 1, .. }));
    assert!(matches!(err("GAMEBOARDSTART 8x1\n"), BadHeader { .. }));
    assert!(matches!(err("GAMEBOARDSTART 8,\n"), BadHeader { .. }));
    assert!(matches!(err("GAMEBOARDSTART 123456,1\n"), BadHeader { .. }));
    assert!(matches!(err("GAMEBOARDSTART 0,1\n"), BadSize { .. }));
    assert_eq!(
        err("GAMEBOARDSTART 1001,1\n"),
        BadSize {
            line: 1,
            width: 1001,
            height: 1,
            fields: 1001
        }
    );
    assert!(matches!(
        err("GAMEBOARDSTART 50,21\n"),
        BadSize { fields: 1050, .. }
    ));
    assert!(matches!(
        err("GAMEBOARDSTART 99999,99999\n"),
        BadSize { .. }
    ));
    assert_eq!(
        err("GAMEBOARDSTART 3,2\n##\n###\nGAMEBOARDEND"),
        RowLength {
            line: 2,
            row: 1,
            expected: 3,
            found: 2
        }
    );
    assert!(matches!(
        err("GAMEBOARDSTART 3,1\n####\nGAMEBOARDEND"),
        RowLength { found: 4, .. }
    ));
    assert_eq!(
        err("GAMEBOARDSTART 3,1\n#x#\nGAMEBOARDEND"),
        BadSymbol {
            line: 2,
            column: 2,
            found: 'x'
        }
    );
    assert_eq!(
        err("GAMEBOARDSTART 3,2\n###\nGAMEBOARDEND"),
        MissingRows {
            expected: 2,
            found: 1
        }
    );
    assert_eq!(
        err("GAMEBOARDSTART 3,2\n###\n"),
        MissingRows {
            expected: 2,
            found: 1
        }
    );
    assert_eq!(err("GAMEBOARDSTART 3,1\n###\n"), EndMissing { rows: 1 });
    assert!(matches!(
        err("GAMEBOARDSTART 3,1\n###\n###\nGAMEBOARDEND"),
        MissingEnd { line: 3, .. }
    ));
    assert!(matches!(
        err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 2 1,1"),
        BadStartLine { line: 4, .. }
    ));
    assert!(matches!(
        err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nSTART 1,1"),
        BadStartLine { .. }
    ));
    assert!(matches!(
        err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 1 4,1"),
        StartOffBoard { x: 4, y: 1, .. }
    ));
    assert!(matches!(
        err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 1 0,1"),
        StartOffBoard { .. }
    ));
    assert_eq!(
        err("GAMEBOARDSTART 3,1\n#.#\nGAMEBOARDEND\nROUND 1 2,1"),
        StartSunk { x: 2, y: 1 }
    );
    assert!(matches!(
        err("GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 1 1,1\nROUND 1 2,1"),
        TrailingText { line: 5, .. }
    ));
    assert_eq!(err("GAMEBOARDSTART 3,1\n...\nGAMEBOARDEND"), NoLand);
    let long = "GAMEBOARDSTART 3,1\n".to_string() + &" ".repeat(MAX_ISLAND_TEXT);
    assert!(matches!(err(&long), TooLong { .. }));
    // Messages quote at most a short piece of a hostile line.
    let hostile = format!("GAMEBOARDSTART {}", "9".repeat(5000));
    let msg = err(&hostile).to_string();
    assert!(
        msg.contains("GAMEBOARDSTART X,Y") && msg.len() < 300,
        "{msg}"
    );
    let msg = err("GAMEBOARDSTART 3,1\n#x#\nGAMEBOARDEND").to_string();
    assert!(
        msg.contains("line 2, column 2") && msg.contains("`#`"),
        "{msg}"
    );
}

#[test]
fn commands_are_exactly_as_the_seed_writes_them() {
    assert_eq!(
        Command::parse("GO NORTH"),
        Some(Command::Go(Direction::North))
    );
    assert_eq!(
        Command::parse("DRY CURRENT"),
        Some(Command::Dry(Direction::Current))
    );
    assert_eq!(
        Command::parse("DRY WEST\r"),
        Some(Command::Dry(Direction::West))
    );
    for good in ["GO  NORTH", "GO NORTH ", " GO NORTH", "\tGO NORTH\r\r"] {
        assert_eq!(
            Command::parse(good),
            Some(Command::Go(Direction::North)),
            "{good:?}"
        );
    }
    for bad in [
        "go north",
        "GO NORTH NOW",
        "GONORTH",
        "GO",
        "WALK EAST",
        "DRY UP",
        "",
    ] {
        assert_eq!(Command::parse(bad), None, "{bad:?}");
    }
}

/// The seed's two example rounds are a lost figure; this is the same
/// exchange rebuilt from the text, on the seed's example island, with
/// the cards laid out by hand.
#[test]
fn two_example_rounds_on_the_seeds_island() {
    let island = Island::parse(SEED_ISLAND).unwrap();
    let mut game = FloodGame::new(&island, Params::default(), 1);
    let idx = |x: u16| x - 1;
    // Round 1 draws a raising card, round 2 a blank one.
    game.deck.cards = vec![
        false, false, false, false, false, false, false, true, false, true,
    ];
    // (5,1) lies on top of the draw pile, (4,1) below it.
    game.piles.draw = vec![idx(4), idx(5)];
    let mut round = 0;
    let (seen, outcome) = transcript(&mut game, |_| {
        round += 1;
        match round {
            1 => vec!["DRY CURRENT", "GO EAST", "GO WEST"],
            2 => vec!["GO CURRENT", "DRY EAST", "GO EAST"],
            _ => vec!["GO WEST", "GO WEST", "DRY CURRENT"],
        }
    });
    assert_eq!(
        seen,
        [
            "GAMEBOARDSTART 8,1",
            "...o#...",
            "GAMEBOARDEND",
            "ROUND 1 4,1",
            // DRY CURRENT dried (4,1); the bot went east and back.
            "INCRFLOOD 1",
            "FLOOD 5,1",
            "ROUND 2 4,1",
            // (5,1) dried again, the bot stands on it.
            "INCRFLOOD 0",
            "FLOOD 4,1",
            "ROUND 3 5,1",
            // GO WEST onto the flooded (4,1), GO WEST into the water;
            // the round's flood still comes (a raising card: level 2).
            "INCRFLOOD 1",
            "FLOOD 4,1",
            "FLOOD 5,1",
            "END",
        ]
    );
    assert_eq!(outcome.rounds, 3);
    assert_eq!(outcome.end, FloodEnd::WalkedIntoWater { field: f(3, 1) });
    assert_eq!(outcome.position, f(3, 1));
    assert_eq!(outcome.level, 2, "the flood of round 3 rose too");
    // DRY CURRENT after drowning was not carried out and is no warning.
    assert_eq!(outcome.n_warnings, 0);
}

/// The seed's dummy bot stands still until it drowns.
#[test]
fn the_standing_bot_drowns_when_its_field_sinks() {
    let island = all_dry(10, 10);
    for seed in 0..20 {
        let mut game = FloodGame::new(&island, Params::default(), seed);
        let outcome = play_scripted(&mut game, |_, _| "GO CURRENT".into(), 100_000).unwrap();
        assert_eq!(outcome.end, FloodEnd::FieldSank { field: f(1, 1) });
        assert_eq!(outcome.position, f(1, 1));
        // Its field had to be drawn twice: not before round 2.
        assert!(outcome.rounds >= 2 && outcome.rounds < DEFAULT_MAX_ROUNDS);
    }
}

/// Every ten rounds exactly two raising cards, until level 7; the
/// number of FLOOD lines follows the level; the piles keep their
/// invariant.
#[test]
fn the_flood_rises_twice_every_ten_rounds_up_to_seven() {
    // A bot that keeps its own field dry, on the largest island: it
    // lives long enough to see level 7.
    let mut tiles = vec![Tile::Dry; 1000];
    tiles[0] = Tile::Sunk;
    let island = Island::new(40, 25, tiles, Some(f(20, 12))).unwrap();
    let dance = [
        ["DRY NORTH", "GO EAST", "DRY CURRENT"],
        ["DRY SOUTH", "GO WEST", "DRY CURRENT"],
    ];
    for seed in 0..10 {
        let mut game = FloodGame::new(&island, Params { max_rounds: 100 }, seed);
        let mut level = 0u8;
        let mut rises = Vec::new();
        while game.outcome.is_none() {
            let round = game.round;
            let lines = play_round(&mut game, dance[round as usize % 2]);
            // One card a round; all ten shuffled again every ten rounds.
            assert_eq!(game.deck.cards.len(), 9 - ((round - 1) % 10) as usize);
            let rise: u8 = lines
                .iter()
                .find_map(|l| l.strip_prefix("INCRFLOOD "))
                .unwrap()
                .parse()
                .unwrap();
            rises.push(rise);
            level += rise;
            assert_eq!(game.level(), level);
            let floods = lines.iter().filter(|l| l.starts_with("FLOOD ")).count();
            assert_eq!(floods, level as usize, "seed {seed} round {round}");
            check_piles(&game);
        }
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.end, FloodEnd::RoundCap, "seed {seed}");
        assert_eq!(outcome.rounds, 100);
        assert_eq!(outcome.level, MAX_LEVEL);
        let per_block: Vec<u8> = rises.chunks(10).map(|c| c.iter().sum()).collect();
        assert_eq!(per_block, [2, 2, 2, 1, 0, 0, 0, 0, 0, 0], "seed {seed}");
    }
}

#[test]
fn the_flood_deck_has_two_raising_cards_in_every_ten() {
    let mut deck = FloodDeck::new();
    let mut rng = SplitMix64::new(7);
    let draws: Vec<bool> = (0..1000).map(|_| deck.draw(&mut rng)).collect();
    for block in draws.chunks(10) {
        assert_eq!(block.iter().filter(|&&c| c).count(), 2);
    }
    // and the positions vary
    let firsts: std::collections::BTreeSet<usize> = draws
        .chunks(10)
        .map(|b| b.iter().position(|&c| c).unwrap())
        .collect();
    assert!(firsts.len() > 3);
}

#[test]
fn a_rise_puts_the_shuffled_discard_pile_on_top() {
    let mut rng = SplitMix64::new(3);
    let mut piles = FieldPiles {
        draw: vec![10, 11, 12],
        discard: vec![1, 2, 3, 4],
    };
    piles.discard_on_top(&mut rng);
    assert!(piles.discard.is_empty());
    let mut first: Vec<u16> = (0..4).map(|_| piles.draw(&mut rng).unwrap()).collect();
    first.sort_unstable();
    assert_eq!(first, [1, 2, 3, 4]);
    assert_eq!(piles.draw(&mut rng), Some(12));
}

/// "Das heißt, dass kürzlich überflutete Felder sehr schnell erneut
/// überflutet werden."
#[test]
fn after_a_rise_recently_flooded_fields_come_first() {
    let island = Island::parse("GAMEBOARDSTART 5,1\n#####\nGAMEBOARDEND\nROUND 1 5,1").unwrap();
    let mut game = FloodGame::new(&island, Params::default(), 5);
    game.level = 1;
    // Round 1 a blank card, round 2 a raising one.
    game.deck.cards = vec![true, false];
    // Top of the draw pile: (1,1), then (2,1), (3,1), (4,1), (5,1).
    game.piles.draw = vec![4, 3, 2, 1, 0];
    let stand = ["GO CURRENT"; 3];
    let round1 = play_round(&mut game, stand);
    assert!(round1.ends_with(&[
        "INCRFLOOD 0".into(),
        "FLOOD 1,1".into(),
        "ROUND 2 5,1".into()
    ]));
    let round2 = play_round(&mut game, stand);
    // (1,1) came back from the discard pile first and sank.
    assert_eq!(
        round2,
        ["INCRFLOOD 1", "FLOOD 1,1", "FLOOD 2,1", "ROUND 3 5,1"]
    );
    assert_eq!(game.tile(f(1, 1)), Tile::Sunk);
    assert_eq!(game.tile(f(2, 1)), Tile::Flooded);
    check_piles(&game);
}

#[test]
fn an_empty_draw_pile_takes_the_shuffled_discard_pile() {
    let mut rng = SplitMix64::new(3);
    let mut piles = FieldPiles {
        draw: vec![5],
        discard: vec![1, 2],
    };
    assert_eq!(piles.draw(&mut rng), Some(5));
    piles.discard.push(5);
    let mut rest: Vec<u16> = (0..3).map(|_| piles.draw(&mut rng).unwrap()).collect();
    rest.sort_unstable();
    assert_eq!(rest, [1, 2, 5]);
    assert_eq!(piles.draw(&mut rng), None);
}

/// 13.12.2012: "Dies kann dazu führen, dass ein Feld zweimal pro Runde
/// überflutet wird."
#[test]
fn a_field_can_be_flooded_twice_in_one_round() {
    let island = Island::parse("GAMEBOARDSTART 1,1\n#\nGAMEBOARDEND").unwrap();
    let mut game = FloodGame::new(&island, Params::default(), 5);
    game.level = 1;
    game.deck.cards = vec![true];
    let (seen, outcome) = transcript(&mut game, |_| vec!["GO CURRENT"; 3]);
    assert_eq!(
        seen,
        [
            "GAMEBOARDSTART 1,1",
            "#",
            "GAMEBOARDEND",
            "ROUND 1 1,1",
            "INCRFLOOD 1",
            "FLOOD 1,1",
            "FLOOD 1,1",
            "END"
        ]
    );
    assert_eq!(outcome.end, FloodEnd::FieldSank { field: f(1, 1) });
    assert_eq!(outcome.rounds, 1);
}

#[test]
fn at_level_seven_a_raising_card_changes_nothing() {
    let island = all_dry(5, 5);
    let mut game = FloodGame::new(&island, Params::default(), 5);
    game.level = MAX_LEVEL;
    game.deck.cards = vec![true];
    game.piles.discard = game.piles.draw.split_off(10);
    let top_seven: Vec<String> = game.piles.draw[3..]
        .iter()
        .rev()
        .map(|&i| format!("FLOOD {}", game.field_at(i)))
        .collect();
    let lines = play_round(&mut game, ["GO CURRENT"; 3]);
    assert!(lines.contains(&"INCRFLOOD 0".to_string()));
    assert_eq!(game.level(), MAX_LEVEL);
    // The seven fields came from the top of the draw pile, not from the
    // discard pile: it was not put on top.
    let flooded: Vec<String> = lines
        .into_iter()
        .filter(|l| l.starts_with("FLOOD "))
        .collect();
    assert_eq!(flooded, top_seven);
}

#[test]
fn walking_off_the_board_is_walking_into_water() {
    let island = Island::parse("GAMEBOARDSTART 2,1\n##\nGAMEBOARDEND\nROUND 1 1,1").unwrap();
    let mut game = FloodGame::new(&island, Params::default(), 1);
    let (seen, outcome) = transcript(&mut game, |_| vec!["GO NORTH", "GO SOUTH", "GO EAST"]);
    assert_eq!(outcome.end, FloodEnd::WalkedIntoWater { field: f(1, 0) });
    assert_eq!(outcome.rounds, 1);
    // As the 2012 engine: the round's flood still comes, then `END`.
    assert_eq!(seen.last().unwrap(), "END");
    let incr = seen
        .iter()
        .position(|l| l.starts_with("INCRFLOOD "))
        .expect("the round's flood card is sent");
    let rise: usize = seen[incr]["INCRFLOOD ".len()..].parse().unwrap();
    assert_eq!(seen.len(), incr + 1 + rise + 1, "{seen:?}");
    assert!(seen[incr + 1..seen.len() - 1]
        .iter()
        .all(|l| l.starts_with("FLOOD ")));
}

#[test]
fn drying_water_is_a_warning_not_an_abort() {
    let island = Island::parse("GAMEBOARDSTART 3,1\n.o#\nGAMEBOARDEND\nROUND 1 2,1").unwrap();
    let mut game = FloodGame::new(&island, Params { max_rounds: 2 }, 1);
    game.deck.cards = vec![false; 10];
    let (_, outcome) = transcript(&mut game, |_| vec!["DRY WEST", "DRY CURRENT", "DRY EAST"]);
    assert_eq!(outcome.end, FloodEnd::RoundCap);
    assert_eq!(outcome.rounds, 2);
    assert_eq!(outcome.n_warnings, 2);
    assert_eq!(
        outcome.warnings[0],
        FloodWarning {
            round: 1,
            command: 1,
            field: f(1, 1)
        }
    );
    assert_eq!(game.tile(f(2, 1)), Tile::Dry);
    // Off the board counts as water too.
    let island = Island::parse("GAMEBOARDSTART 1,1\n#\nGAMEBOARDEND").unwrap();
    let mut game = FloodGame::new(&island, Params { max_rounds: 1 }, 1);
    let (_, outcome) = transcript(&mut game, |_| vec!["DRY NORTH", "DRY EAST", "DRY SOUTH"]);
    assert_eq!(outcome.n_warnings, 3);
}

#[test]
fn a_malformed_command_breaks_the_rules_and_scores_the_completed_rounds() {
    let island = all_dry(5, 5);
    let mut game = FloodGame::new(&island, Params::default(), 1);
    let mut n = 0;
    let err = play_scripted(
        &mut game,
        |_, _| {
            n += 1;
            if n == 8 {
                "GO NORTHEAST".into()
            } else {
                "GO CURRENT".into()
            }
        },
        1000,
    )
    .unwrap_err();
    assert_eq!(err.seat, 0);
    assert_eq!(err.line, "GO NORTHEAST");
    assert!(
        err.rule.contains("exactly three commands") && err.rule.contains("round 3"),
        "{}",
        err.rule
    );
    let outcome = game.outcome().unwrap();
    assert_eq!(outcome.rounds, 2);
    assert!(matches!(outcome.end, FloodEnd::RuleBroken { .. }));
    assert!(matches!(game.next(), Step::Over { .. }));
    assert!(game.reply(0, "GO CURRENT").is_err());
}

#[test]
fn a_forfeit_scores_the_completed_rounds() {
    let island = all_dry(5, 5);
    let mut game = FloodGame::new(&island, Params::default(), 1);
    game.forfeit("no answer within 0.1 s");
    let outcome = game.outcome().unwrap();
    assert_eq!(outcome.rounds, 0);
    assert_eq!(
        outcome.end,
        FloodEnd::Forfeit {
            reason: "no answer within 0.1 s".into()
        }
    );
    assert!(matches!(game.next(), Step::Over { .. }));
}

#[test]
fn the_round_cap_ends_every_game() {
    let island = all_dry(40, 25);
    let mut game = FloodGame::new(&island, Params { max_rounds: 5 }, 9);
    let outcome = play_scripted(&mut game, |_, _| "DRY CURRENT".into(), 1000).unwrap();
    assert_eq!(outcome.end, FloodEnd::RoundCap);
    assert_eq!(outcome.rounds, 5);
    assert_eq!(game.turn(), 5);
}

/// A bot walking at random (from its own seeded generator) on a small
/// island: every game ends, the piles keep their invariant, and the same
/// seed gives the same game.
#[test]
fn games_are_deterministic_from_the_seed() {
    let island = Island::parse(
        "GAMEBOARDSTART 6,4\n.####.\n##oo##\n#o##o#\n.####.\nGAMEBOARDEND\nROUND 1 3,2",
    )
    .unwrap();
    let play = |seed: u64| {
        let mut game = FloodGame::new(&island, Params::default(), seed);
        let mut bot = SplitMix64::new(99);
        let mut lines = Vec::new();
        for _ in 0..100_000 {
            match game.next() {
                Step::Send { lines: l, .. } => lines.extend(l),
                Step::Expect { .. } => {
                    let verb = ["GO", "DRY", "DRY"][bot.below(3) as usize];
                    let dir = ["NORTH", "EAST", "SOUTH", "WEST", "CURRENT"][bot.below(5) as usize];
                    game.reply(0, &format!("{verb} {dir}")).unwrap();
                    check_piles(&game);
                }
                Step::Over { .. } => return (lines, game.outcome().unwrap()),
            }
        }
        panic!("no end");
    };
    let a = play(42);
    assert_eq!(a, play(42));
    let distinct: std::collections::BTreeSet<Vec<String>> = (0..8).map(|s| play(s).0).collect();
    assert!(distinct.len() > 4, "different seeds give different games");
}
