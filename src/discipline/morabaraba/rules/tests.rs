//! Unit tests of `rules` (discipline/morabaraba/rules.rs), kept beside it so the
//! module itself stays a size a person can hold.

use super::*;
use crate::game::lines::play_scripted;
use std::collections::BTreeSet;

fn pt(x: u8, y: u8, s: u8) -> Point {
    Point::new(x, y, s).unwrap()
}

fn mv(line: &str) -> Move {
    Move::parse(line).unwrap()
}

/// A moving-phase position with player 0 to move.
fn moving(p0: &[Point], p1: &[Point]) -> Position {
    let cows: Vec<(Point, usize)> = p0
        .iter()
        .map(|&q| (q, 0))
        .chain(p1.iter().map(|&q| (q, 1)))
        .collect();
    Position::from_parts(&cows, [0, 0], 0, PLACING_TURNS)
}

#[test]
fn the_points_are_addressed_as_in_the_seed() {
    assert_eq!(Point::all().count(), 24);
    let all: BTreeSet<(u8, u8, u8)> = Point::all().map(|q| (q.x(), q.y(), q.square())).collect();
    assert_eq!(all.len(), 24);
    for s in 1..=3 {
        assert_eq!(Point::new(2, 2, s), None);
    }
    assert_eq!(Point::new(0, 1, 1), None);
    assert_eq!(Point::new(1, 4, 1), None);
    assert_eq!(Point::new(1, 1, 4), None);
    for q in Point::all() {
        assert_eq!(Point::new(q.x(), q.y(), q.square()), Some(q));
    }
    assert_eq!(pt(2, 3, 1).to_string(), "2 3 1");
}

/// "Jos ohjelma asettaa lehmän uloimman neliön yläreunan keskelle, rivi
/// näyttää tältä: 0 0 0 2 3 1 0 0 0"
#[test]
fn the_seeds_placing_example() {
    let m = mv("0 0 0 2 3 1 0 0 0");
    assert_eq!(
        m,
        Move {
            from: None,
            to: Some(pt(2, 3, 1)),
            shot: None
        }
    );
    assert_eq!(m.to_line(), "0 0 0 2 3 1 0 0 0");
    let mut pos = Position::new();
    pos.play(&m).unwrap();
    assert_eq!(pos.at(pt(2, 3, 1)), Some(0));
    assert_eq!(pos.cows(0), 12);
    assert_eq!(pos.on_board(0), 1);
    assert_eq!(pos.to_move(), 1);
}

/// "Jos ohjelma siirtää lehmän laudan vasemmasta yläkulmasta alareunaan
/// keskelle ja ampuu lehmän sisimmän neliön oikean reunan keskeltä, rivi
/// näyttää tältä: 1 3 1 2 1 1 3 2 3" — a flying move with a shot.
#[test]
fn the_seeds_moving_example() {
    let m = mv("1 3 1 2 1 1 3 2 3");
    assert_eq!(
        m,
        Move {
            from: Some(pt(1, 3, 1)),
            to: Some(pt(2, 1, 1)),
            shot: Some(pt(3, 2, 3))
        }
    );
    assert_eq!(m.to_line(), "1 3 1 2 1 1 3 2 3");
    let mut pos = moving(
        &[pt(1, 3, 1), pt(1, 1, 1), pt(3, 1, 1)],
        &[pt(3, 2, 3), pt(2, 3, 2), pt(1, 2, 2), pt(3, 1, 2)],
    );
    assert!(pos.flying(0));
    let played = pos.play(&m).unwrap();
    assert_eq!(played.formed.count_ones(), 1);
    assert_eq!(pos.at(pt(2, 1, 1)), Some(0));
    assert_eq!(pos.at(pt(1, 3, 1)), None);
    assert_eq!(pos.at(pt(3, 2, 3)), None);
    assert_eq!(pos.cows(1), 3);
}

#[test]
fn twenty_lines_and_their_neighbours() {
    assert_eq!(MILLS.len(), 20);
    let distinct: BTreeSet<[Point; 3]> = MILLS.iter().copied().collect();
    assert_eq!(distinct.len(), 20);
    for q in Point::all() {
        let n_lines = MILLS.iter().filter(|l| l.contains(&q)).count();
        let corner = q.x() != 2 && q.y() != 2;
        assert_eq!(n_lines, if corner { 3 } else { 2 }, "{q:?}");
    }
    // Every line is straight: constant in two of (x, y, s), or the
    // corner diagonal (same corner, all three squares).
    for line in MILLS {
        let same = |f: fn(Point) -> u8| line.iter().all(|&q| f(q) == f(line[0]));
        let sorted =
            |f: fn(Point) -> u8| line.iter().map(|&q| f(q)).collect::<Vec<_>>() == [1, 2, 3];
        let side = line.iter().all(|&q| q.square() == line[0].square())
            && ((same(Point::x) && sorted(Point::y)) || (same(Point::y) && sorted(Point::x)));
        let across = same(Point::x) && same(Point::y) && sorted(Point::square);
        assert!(side || across, "{line:?}");
    }
    let nb = |q: Point| q.neighbours().collect::<BTreeSet<_>>();
    assert_eq!(
        nb(pt(1, 1, 1)),
        [pt(2, 1, 1), pt(1, 2, 1), pt(1, 1, 2)].into()
    );
    assert_eq!(
        nb(pt(1, 1, 2)),
        [pt(2, 1, 2), pt(1, 2, 2), pt(1, 1, 1), pt(1, 1, 3)].into()
    );
    assert_eq!(
        nb(pt(2, 1, 2)),
        [pt(1, 1, 2), pt(3, 1, 2), pt(2, 1, 1), pt(2, 1, 3)].into()
    );
    assert_eq!(
        nb(pt(2, 1, 3)),
        [pt(1, 1, 3), pt(3, 1, 3), pt(2, 1, 2)].into()
    );
    assert_eq!(
        nb(pt(3, 2, 1)),
        [pt(3, 1, 1), pt(3, 3, 1), pt(3, 2, 2)].into()
    );
    let mut edges = 0;
    for q in Point::all() {
        for r in q.neighbours() {
            assert!(r.neighbours().any(|s| s == q), "symmetric");
            edges += 1;
        }
    }
    assert_eq!(edges, 2 * 40);
}

/// Each of the 20 lines is a mill when placed, and no other three points
/// are.
#[test]
fn every_line_is_a_mill_and_nothing_else() {
    for line in MILLS {
        let mut pos = Position::new();
        let others: Vec<Point> = Point::all().filter(|q| !line.contains(q)).collect();
        for i in 0..2 {
            pos.play(&Move {
                from: None,
                to: Some(line[i]),
                shot: None,
            })
            .unwrap();
            pos.play(&Move {
                from: None,
                to: Some(others[i]),
                shot: None,
            })
            .unwrap();
        }
        let third = Move {
            from: None,
            to: Some(line[2]),
            shot: None,
        };
        assert_eq!(
            pos.clone().play(&third),
            Err(MoveError::MissingShot),
            "{line:?}"
        );
        let played = pos
            .play(&Move {
                shot: Some(others[0]),
                ..third
            })
            .unwrap();
        assert_eq!(played.formed.count_ones(), 1);
        assert_eq!(pos.cows(1), 11);
        assert_eq!(pos.turns_since_mill(), 0);
    }
    // Any three points of one player that are not a line form no mill.
    let lines: BTreeSet<BTreeSet<Point>> =
        MILLS.iter().map(|l| l.iter().copied().collect()).collect();
    let points: Vec<Point> = Point::all().collect();
    let mut n_mills = 0;
    for a in 0..24 {
        for b in a + 1..24 {
            for c in b + 1..24 {
                let trio = [points[a], points[b], points[c]];
                let pos = Position::from_parts(&trio.map(|q| (q, 0)), [9, 12], 1, 3);
                let is_mill = pos.in_mill(trio[0]);
                assert_eq!(
                    is_mill,
                    lines.contains(&trio.into_iter().collect()),
                    "{trio:?}"
                );
                n_mills += usize::from(is_mill);
            }
        }
    }
    assert_eq!(n_mills, 20);
}

#[test]
fn a_mill_shoots_a_cow_outside_mills_first() {
    // Player 1 (0) completes the top of the outer square; player 2 (1)
    // has a mill on the inner square's bottom and a lone cow.
    let mut pos = moving(
        &[pt(1, 3, 1), pt(3, 3, 1), pt(2, 3, 2), pt(1, 2, 2)],
        &[pt(1, 1, 3), pt(2, 1, 3), pt(3, 1, 3), pt(3, 2, 1)],
    );
    let base = "2 3 2 2 3 1";
    assert_eq!(
        pos.clone().play(&mv(&format!("{base} 2 1 3"))),
        Err(MoveError::ShotInMill(pt(2, 1, 3)))
    );
    assert_eq!(
        pos.clone().play(&mv(&format!("{base} 1 3 1"))),
        Err(MoveError::NotOpponentsCow(pt(1, 3, 1)))
    );
    assert_eq!(
        pos.clone().play(&mv(&format!("{base} 1 1 1"))),
        Err(MoveError::NotOpponentsCow(pt(1, 1, 1)))
    );
    let mut ok = pos.clone();
    ok.play(&mv(&format!("{base} 3 2 1"))).unwrap();
    assert_eq!(ok.cows(1), 3);
    // The legal moves offer exactly the lone cow as the shot.
    let shots: BTreeSet<Option<Point>> = pos
        .legal_moves()
        .into_iter()
        .filter(|m| m.from == Some(pt(2, 3, 2)) && m.to == Some(pt(2, 3, 1)))
        .map(|m| m.shot)
        .collect();
    assert_eq!(shots, [Some(pt(3, 2, 1))].into());
    // When every cow of the opponent is in a mill, any may be shot.
    pos.cells[pt(3, 2, 1).index()] = None;
    pos.cells[pt(3, 3, 3).index()] = Some(1);
    pos.cells[pt(3, 2, 3).index()] = Some(1);
    let mut any = pos.clone();
    any.play(&mv(&format!("{base} 2 1 3"))).unwrap();
    assert_eq!(any.at(pt(2, 1, 3)), None);
}

#[test]
fn two_mills_at_once_still_shoot_one_cow() {
    let mut pos = Position::from_parts(
        &[
            (pt(2, 1, 1), 0),
            (pt(3, 1, 1), 0),
            (pt(1, 2, 1), 0),
            (pt(1, 3, 1), 0),
            (pt(1, 1, 3), 1),
            (pt(3, 3, 3), 1),
            (pt(2, 3, 2), 1),
            (pt(3, 2, 2), 1),
        ],
        [8, 8],
        0,
        8,
    );
    let played = pos.play(&mv("0 0 0 1 1 1 2 3 2")).unwrap();
    assert_eq!(played.formed.count_ones(), 2);
    assert_eq!(pos.cows(1), 11);
    assert_eq!(pos.on_board(1), 3);
}

/// The running mill: a cow that shuttles between two mills may not go
/// straight back.
#[test]
fn a_mill_broken_while_forming_another_may_not_be_formed_on_the_next_turn() {
    // Player 1: the outer bottom mill, and two cows on the middle
    // square's bottom corners. Player 2: five lone cows.
    let mut pos = moving(
        &[
            pt(1, 1, 1),
            pt(2, 1, 1),
            pt(3, 1, 1),
            pt(1, 1, 2),
            pt(3, 1, 2),
        ],
        &[
            pt(1, 3, 1),
            pt(3, 3, 1),
            pt(1, 3, 3),
            pt(3, 3, 3),
            pt(2, 3, 2),
        ],
    );
    // (2,1,1) → (2,1,2): breaks the outer bottom mill, forms the middle one.
    let played = pos.play(&mv("2 1 1 2 1 2 2 3 2")).unwrap();
    assert_eq!(
        (played.broken.count_ones(), played.formed.count_ones()),
        (1, 1)
    );
    pos.play(&mv("1 3 1 1 2 1 0 0 0")).unwrap();
    // Straight back re-forms the outer bottom mill: not on this turn.
    let back = mv("2 1 2 2 1 1 1 2 1");
    let err = pos.clone().play(&back).unwrap_err();
    assert_eq!(
        err,
        MoveError::ForbiddenMill {
            mill: "1 1 1, 2 1 1, 3 1 1".into()
        }
    );
    assert!(err.to_string().contains("1 1 1, 2 1 1, 3 1 1"));
    assert!(!pos
        .legal_moves()
        .iter()
        .any(|m| m.from == Some(pt(2, 1, 2)) && m.to == Some(pt(2, 1, 1))));
    // Another cow may go there, as long as the mill is not formed.
    pos.clone().play(&mv("1 1 1 2 1 1 0 0 0")).unwrap();
    // Another move is fine; (1,1,2) → (1,2,2) breaks the middle mill
    // without forming one.
    pos.play(&mv("1 1 2 1 2 2 0 0 0")).unwrap();
    pos.play(&mv("1 2 1 1 3 1 0 0 0")).unwrap();
    // A turn later, re-forming the outer mill is allowed again.
    let mut later = pos.clone();
    later.play(&mv("2 1 2 2 1 1 1 3 1")).unwrap();
    // Breaking a mill without forming one restricts nothing: it may be
    // formed again on the next turn (and shoots again).
    let mut pos = moving(
        &[pt(1, 1, 1), pt(2, 1, 1), pt(3, 1, 1), pt(1, 3, 2)],
        &[
            pt(1, 3, 1),
            pt(3, 3, 1),
            pt(1, 3, 3),
            pt(3, 3, 3),
            pt(2, 3, 2),
        ],
    );
    pos.play(&mv("2 1 1 2 1 2 0 0 0")).unwrap();
    assert_eq!(pos.forbidden[0], 0);
    pos.play(&mv("1 3 1 1 2 1 0 0 0")).unwrap();
    pos.play(&mv("2 1 2 2 1 1 1 2 1")).unwrap();
}

#[test]
fn three_cows_fly_four_walk() {
    let p1 = [pt(1, 1, 1), pt(3, 3, 1), pt(1, 3, 3)];
    let p2 = [pt(3, 1, 2), pt(1, 3, 2), pt(2, 1, 3), pt(3, 3, 3)];
    let mut pos = moving(&p1, &p2);
    assert!(pos.flying(0) && !pos.flying(1));
    pos.play(&mv("1 1 1 2 3 3 0 0 0")).unwrap();
    assert_eq!(
        Move::parse("3 1 2 2 2 3 0 0 0"),
        Err(MoveError::NoSuchPoint {
            slot: Slot::To,
            numbers: [2, 2, 3]
        })
    );
    assert_eq!(
        pos.clone().play(&mv("3 1 2 1 1 1 0 0 0")),
        Err(MoveError::NotAdjacent {
            from: pt(3, 1, 2),
            to: pt(1, 1, 1)
        })
    );
    pos.play(&mv("3 1 2 3 2 2 0 0 0")).unwrap();
    // No flying while placing, whatever the count.
    let placing = Position::from_parts(&[(pt(1, 1, 1), 0)], [2, 3], 0, 20);
    assert!(!placing.flying(0));
}

/// Plays the first legal move that forms no mill, `n` times.
fn quiet_moves(pos: &mut Position, n: u32) {
    for _ in 0..n {
        assert_eq!(pos.status(), Status::Ongoing);
        let m = pos
            .legal_moves()
            .into_iter()
            .find(|m| m.shot.is_none())
            .expect("a quiet move");
        assert_eq!(pos.play(&m).unwrap().formed, 0);
    }
}

#[test]
fn three_cows_and_ten_turns_without_a_mill_are_a_draw() {
    let mut pos = moving(
        &[pt(1, 1, 1), pt(3, 3, 1), pt(1, 3, 3)],
        &[pt(3, 1, 2), pt(1, 3, 2), pt(2, 1, 3), pt(3, 3, 3)],
    );
    quiet_moves(&mut pos, 9);
    assert_eq!(pos.status(), Status::Ongoing);
    quiet_moves(&mut pos, 1);
    assert_eq!(pos.status(), Status::ThreeCowsNoMill);
    // Without a three-cow player, ten quiet turns are nothing.
    let mut pos = moving(
        &[pt(1, 1, 1), pt(3, 3, 1), pt(1, 3, 3), pt(2, 3, 2)],
        &[pt(3, 1, 2), pt(1, 3, 2), pt(2, 1, 3), pt(3, 3, 3)],
    );
    quiet_moves(&mut pos, 10);
    assert_eq!(pos.status(), Status::Ongoing);
}

#[test]
fn two_hundred_turns_without_a_mill_are_a_draw() {
    let start = moving(
        &[pt(1, 1, 1), pt(3, 3, 1), pt(1, 3, 3), pt(2, 3, 2)],
        &[pt(3, 1, 2), pt(1, 3, 2), pt(2, 1, 3), pt(3, 3, 3)],
    );
    let mut pos = start.clone();
    quiet_moves(&mut pos, 199);
    assert_eq!(pos.status(), Status::Ongoing);
    quiet_moves(&mut pos, 1);
    assert_eq!(pos.status(), Status::NoMillIn200Turns);
    // The same through the protocol: two bots that never form a mill.
    let mut game = MorabarabaGame::new();
    game.position = start.clone();
    let mut mirror = start;
    let mut named = [false; 2];
    let outcome = play_scripted(
        &mut game,
        |seat, _| {
            if !named[seat] {
                named[seat] = true;
                return "Quiet".into();
            }
            let m = mirror
                .legal_moves()
                .into_iter()
                .find(|m| m.shot.is_none())
                .expect("a quiet move");
            mirror.play(&m).unwrap();
            m.to_line()
        },
        10_000,
    )
    .unwrap();
    assert_eq!(outcome.end, MorabarabaEnd::NoMillIn200Turns);
    assert_eq!(outcome.winner, None);
    assert_eq!(outcome.turns, PLACING_TURNS + 200);
    assert_eq!(outcome.cows, [4, 4]);
}

/// 24 points, 24 cows: a placing phase without a mill fills the board,
/// and player 1 cannot move.
#[test]
fn a_placing_phase_without_mills_blocks_player_one() {
    let mut pos = Position::new();
    quiet_moves(&mut pos, PLACING_TURNS);
    assert_eq!(pos.status(), Status::NoLegalMove { loser: 0 });
}

#[test]
fn two_cows_left_lose() {
    let mut pos = moving(
        &[pt(1, 3, 1), pt(3, 3, 1), pt(2, 3, 2), pt(1, 2, 2)],
        &[pt(1, 1, 3), pt(3, 2, 1), pt(3, 1, 3)],
    );
    pos.play(&mv("2 3 2 2 3 1 3 2 1")).unwrap();
    assert_eq!(pos.status(), Status::TwoCowsLeft { loser: 1 });
}

#[test]
fn a_blocked_player_loses() {
    // Player 2's four cows on the outer corners; player 1 fills all
    // their neighbours, the last with its move.
    let corners = [pt(1, 1, 1), pt(1, 3, 1), pt(3, 1, 1), pt(3, 3, 1)];
    let mut pos = moving(
        &[
            pt(2, 1, 1),
            pt(1, 2, 1),
            pt(2, 3, 1),
            pt(3, 2, 1),
            pt(1, 3, 2),
            pt(3, 1, 2),
            pt(3, 3, 2),
            pt(1, 1, 3),
        ],
        &corners,
    );
    assert_eq!(pos.status(), Status::Ongoing);
    let played = pos.play(&mv("1 1 3 1 1 2 0 0 0")).unwrap();
    assert_eq!(played.formed, 0);
    assert!(!pos.has_legal_move());
    assert!(pos.legal_moves().is_empty());
    assert_eq!(pos.status(), Status::NoLegalMove { loser: 1 });
}

#[test]
fn illegal_moves_of_every_kind() {
    use MoveError::*;
    for bad in [
        "",
        "0 0 0 2 3 1 0 0",
        "0 0 0 2 3 1 0 0 0 0",
        "0 0 0 2 3 1 0 0 4",
        "0 0 0 2 3 1 0 0 -1",
        "0 0 0 2 3 1 0 0 01",
        "0,0,0,2,3,1,0,0,0",
        "a b c d e f g h i",
    ] {
        assert_eq!(Move::parse(bad), Err(Syntax), "{bad:?}");
    }
    assert_eq!(
        Move::parse(" 0 0 0\t2 3 1 0 0 0\r"),
        Ok(mv("0 0 0 2 3 1 0 0 0"))
    );
    assert_eq!(
        Move::parse("0 0 0 2 2 1 0 0 0"),
        Err(NoSuchPoint {
            slot: Slot::To,
            numbers: [2, 2, 1]
        })
    );
    assert_eq!(
        Move::parse("0 1 0 2 3 1 0 0 0"),
        Err(NoSuchPoint {
            slot: Slot::From,
            numbers: [0, 1, 0]
        })
    );
    let placing = Position::from_parts(&[(pt(1, 1, 1), 0), (pt(3, 3, 3), 1)], [11, 11], 0, 2);
    let judge = |pos: &Position, line: &str| pos.clone().play(&mv(line));
    assert_eq!(judge(&placing, "1 1 1 2 1 1 0 0 0"), Err(FromWhilePlacing));
    assert_eq!(
        judge(&placing, "0 0 0 3 3 3 0 0 0"),
        Err(Occupied(pt(3, 3, 3)))
    );
    assert_eq!(judge(&placing, "0 0 0 0 0 0 0 0 0"), Err(NoTo));
    assert_eq!(judge(&placing, "0 0 0 2 1 1 3 3 3"), Err(ShotWithoutMill));
    let walking = moving(
        &[pt(1, 1, 1), pt(2, 1, 1), pt(3, 2, 1), pt(1, 1, 2)],
        &[pt(3, 3, 1), pt(3, 3, 3), pt(1, 2, 3), pt(2, 3, 2)],
    );
    assert_eq!(judge(&walking, "0 0 0 2 3 1 0 0 0"), Err(NoFrom));
    assert_eq!(
        judge(&walking, "3 3 1 2 3 1 0 0 0"),
        Err(NotYourCow(pt(3, 3, 1)))
    );
    assert_eq!(
        judge(&walking, "1 3 1 2 3 1 0 0 0"),
        Err(NotYourCow(pt(1, 3, 1)))
    );
    assert_eq!(judge(&walking, "1 1 1 0 0 0 0 0 0"), Err(NoTo));
    assert_eq!(
        judge(&walking, "1 1 1 2 1 1 0 0 0"),
        Err(Occupied(pt(2, 1, 1)))
    );
    assert_eq!(
        judge(&walking, "1 1 1 1 3 1 0 0 0"),
        Err(NotAdjacent {
            from: pt(1, 1, 1),
            to: pt(1, 3, 1)
        })
    );
    // (3,2,1) → (3,1,1) completes the outer bottom line.
    assert_eq!(judge(&walking, "3 2 1 3 1 1 0 0 0"), Err(MissingShot));
    assert_eq!(
        judge(&walking, "3 2 1 3 1 1 1 1 1"),
        Err(NotOpponentsCow(pt(1, 1, 1)))
    );
    assert_eq!(
        judge(&walking, "3 2 1 3 1 1 2 3 1"),
        Err(NotOpponentsCow(pt(2, 3, 1)))
    );
    assert!(judge(&walking, "3 2 1 3 1 1 3 3 1").is_ok());
    assert_eq!(judge(&walking, "1 1 1 1 2 1 3 3 1"), Err(ShotWithoutMill));
    // An illegal move changes nothing.
    let mut same = walking.clone();
    assert!(same.play(&mv("3 2 1 3 1 1 0 0 0")).is_err());
    assert_eq!(same, walking);
    // Every message names the rule.
    for e in [
        Syntax,
        FromWhilePlacing,
        NoFrom,
        MissingShot,
        ShotWithoutMill,
    ] {
        assert!(e.to_string().len() > 30, "{e}");
    }
}

#[test]
fn names_are_three_to_nine_letters_or_digits() {
    for good in ["abc", "Abc123456", "XYZ", "007"] {
        assert!(valid_name(good), "{good}");
    }
    for bad in ["ab", "abcdefghij", "ab-c", "äbc", "a b c", ""] {
        assert!(!valid_name(bad), "{bad}");
    }
    let mut game = MorabarabaGame::new();
    assert_eq!(
        game.next(),
        Step::Send {
            seat: 0,
            lines: vec!["1".into()]
        }
    );
    assert_eq!(
        game.next(),
        Step::Send {
            seat: 1,
            lines: vec!["2".into()]
        }
    );
    assert_eq!(game.next(), Step::Expect { seat: 0 });
    game.reply(0, "Alpha\r").unwrap();
    assert_eq!(game.next(), Step::Expect { seat: 1 });
    let v = game.reply(1, "B").unwrap_err();
    assert_eq!(v.seat, 1);
    assert!(v.rule.contains("3 to 9"), "{}", v.rule);
    let outcome = game.outcome().unwrap();
    assert_eq!(outcome.winner, Some(0));
    assert!(matches!(
        outcome.end,
        MorabarabaEnd::IllegalMove { loser: 1, .. }
    ));
    assert_eq!(outcome.names, [Some("Alpha".into()), None]);
    assert_eq!(
        game.next(),
        Step::Over {
            farewell: vec![
                (0, vec![GAME_OVER_LINE.to_string()]),
                (1, vec![GAME_OVER_LINE.to_string()])
            ]
        }
    );
}

#[test]
fn moves_are_relayed_and_an_illegal_one_loses() {
    let mut game = MorabarabaGame::new();
    game.next();
    game.next();
    game.reply(0, "Alpha").unwrap();
    game.reply(1, "Beta").unwrap();
    assert_eq!(game.next(), Step::Expect { seat: 0 });
    game.reply(0, "0  0 0 2 3 1 0 0   0").unwrap();
    assert_eq!(
        game.next(),
        Step::Send {
            seat: 1,
            lines: vec!["0 0 0 2 3 1 0 0 0".into()]
        }
    );
    assert_eq!(game.next(), Step::Expect { seat: 1 });
    assert_eq!(game.turn(), 2);
    let v = game.reply(1, "0 0 0 2 3 1 0 0 0").unwrap_err();
    assert_eq!(v.seat, 1);
    assert_eq!(v.line, "0 0 0 2 3 1 0 0 0");
    assert!(
        v.rule.contains("turn 2") && v.rule.contains("2 3 1 is not free"),
        "{}",
        v.rule
    );
    let outcome = game.outcome().unwrap();
    assert_eq!(outcome.winner, Some(0));
    assert_eq!(outcome.turns, 1);
    assert_eq!(outcome.names, [Some("Alpha".into()), Some("Beta".into())]);
    assert!(matches!(game.next(), Step::Over { .. }));
    // A line out of turn is refused too.
    assert!(game.reply(0, "0 0 0 1 1 1 0 0 0").is_err());
    assert!(game.reply(2, "0 0 0 1 1 1 0 0 0").is_err());
    assert_eq!(game.outcome().unwrap().winner, Some(0));
}

#[test]
fn a_forfeit_loses() {
    let mut game = MorabarabaGame::new();
    game.forfeit(0, "more than 120 s of CPU");
    let outcome = game.outcome().unwrap();
    assert_eq!(outcome.winner, Some(1));
    assert_eq!(
        outcome.end,
        MorabarabaEnd::Forfeit {
            loser: 0,
            reason: "more than 120 s of CPU".into()
        }
    );
    assert!(matches!(game.next(), Step::Over { .. }));
}

/// Whole games between two greedy bots (a mill when they can, else the
/// n-th legal move) always end, by a rule.
#[test]
fn whole_games_end_by_a_rule() {
    let mut ends = BTreeSet::new();
    for variant in 0..12usize {
        let mut game = MorabarabaGame::new();
        let mut mirror = Position::new();
        let mut named = [false; 2];
        let outcome = play_scripted(
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
            10_000,
        )
        .unwrap();
        assert_eq!(outcome.turns, mirror.turns());
        match outcome.end {
            MorabarabaEnd::TwoCowsLeft { loser } => {
                assert_eq!(outcome.cows[loser], 2);
                assert_eq!(outcome.winner, Some(1 - loser));
            }
            MorabarabaEnd::NoLegalMove { loser } => assert_eq!(outcome.winner, Some(1 - loser)),
            MorabarabaEnd::ThreeCowsNoMill | MorabarabaEnd::NoMillIn200Turns => {
                assert_eq!(outcome.winner, None)
            }
            ref e => panic!("unexpected end {e:?}"),
        }
        ends.insert(format!("{:?}", std::mem::discriminant(&outcome.end)));
    }
    assert!(!ends.is_empty());
}
