//! Unit tests of the result texts (GRP, GRG, GRR, RSM, disqualification).

use super::*;
use crate::engine::results::{DisqualifiedTeam, GameFailure, GameStatus};

fn game(
    slot: u32,
    p: &str,
    q: &str,
    points: [u64; 2],
    attempt: u32,
    status: GameStatus,
) -> GameResult {
    GameResult {
        slot,
        players: [p.into(), q.into()],
        points,
        seed: 0,
        attempt,
        failures: Default::default(),
        status,
    }
}

fn fail(mut g: GameResult, player: usize, reason: &str) -> GameResult {
    let mut failures = g.failures.to_vec();
    failures.push(GameFailure {
        player,
        reason: reason.into(),
    });
    g.failures = failures.into();
    g
}

/// a, b, c and crasher: crasher fails against a (slot 1), is
/// disqualified against b (slot 3); the replay of slot 1 is cancelled,
/// its game with c never played; a's self-game has halves.
fn group() -> (GroupResult, RoundResult) {
    let games = vec![
        game(0, "a", "a", [10, 11], 1, GameStatus::Counted),
        fail(
            game(1, "a", "crasher", [5, 0], 1, GameStatus::Discarded),
            1,
            "throw 6: crashed",
        ),
        game(2, "a", "b", [30, 20], 1, GameStatus::Counted),
        fail(
            game(3, "b", "crasher", [5, 0], 1, GameStatus::Void),
            1,
            "throw 6: crashed",
        ),
        game(4, "c", "crasher", [0, 0], 1, GameStatus::Cancelled),
        game(5, "b", "b", [8, 8], 1, GameStatus::Counted),
        game(6, "a", "c", [7, 9], 1, GameStatus::Counted),
        game(7, "b", "c", [4, 4], 1, GameStatus::Counted),
        game(8, "c", "c", [2, 2], 1, GameStatus::Counted),
        game(9, "a", "crasher", [0, 0], 2, GameStatus::Cancelled),
    ];
    let ranking = vec![
        Placed {
            team: "a".into(),
            points: 47.5,
            place: 1,
        },
        Placed {
            team: "b".into(),
            points: 32.0,
            place: 2,
        },
        Placed {
            team: "c".into(),
            points: 15.0,
            place: 3,
        },
    ];
    let gr = GroupResult {
        number: 1,
        members: ["a", "b", "c", "crasher"].map(String::from).to_vec(),
        ranking,
        games,
    };
    let rr = RoundResult {
        number: 1,
        is_final: false,
        groups: vec![gr.clone()],
        advanced: vec![],
        disqualified: vec![DisqualifiedTeam {
            team: "crasher".into(),
            reason: "throw 6: crashed".into(),
        }],
    };
    (gr, rr)
}

/// The text with every run of blanks and line breaks as one blank.
fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn grp_totals_equal_the_ranking_and_labels_say_what_happened() {
    let (gr, rr) = group();
    let totals = totals_from_games(&gr);
    for p in &gr.ranking {
        assert_eq!(totals[&p.team], p.points, "{}", p.team);
    }
    let (t, note) = team_games(&gr, &rr, "a");
    assert!(
        t.contains("itself (both sides)     10     11     10.5"),
        "{t}"
    );
    assert!(
        flat(&t)
            .contains("failed: crasher (throw 6: crashed); replay cancelled (disqualification)"),
        "{t}"
    );
    assert!(
        t.contains("not played: crasher disqualified in game 3"),
        "{t}"
    );
    assert!(t.lines().last().unwrap().ends_with(" 47.5"), "{t}");
    assert_eq!(note.as_deref(), Some(HALF_POINTS_NOTE));
    assert!(t.lines().all(|l| l == l.trim_end() && l.len() <= 72), "{t}");
    let (t, _) = team_games(&gr, &rr, "b");
    assert!(flat(&t).contains("failed: crasher (throw 6: crashed): the second failure, crasher disqualified; its games are not counted"), "{t}");
    let (t, note) = team_games(&gr, &rr, "crasher");
    assert!(
        flat(&t).contains("total: none; your team was disqualified in game 3"),
        "{t}"
    );
    assert!(note.is_none());
}

#[test]
fn grr_marks_who_advances_and_names_the_disqualified() {
    let (gr, rr) = group();
    let t = group_ranking(&gr, &rr);
    let line = |team: &str| {
        t.lines()
            .find(|l| l.contains(&format!(" {team} ")))
            .unwrap()
            .to_string()
    };
    assert!(line("a").ends_with("advances"), "{t}");
    assert!(line("b").ends_with("advances"), "{t}");
    assert!(!line("c").ends_with("advances"), "{t}");
    assert!(
        t.contains("crasher disqualified in game 3: throw 6: crashed"),
        "{t}"
    );
    let (g, note) = group_games(&gr, &rr);
    assert!(g.contains("self-game: counts 10.5 for a"), "{g}");
    assert!(note.is_some());
    assert!(g.lines().all(|l| l == l.trim_end()), "{g}");
}

#[test]
fn a_self_game_disqualification_says_against_itself() {
    let games = vec![
        fail(
            fail(
                game(0, "n", "n", [0, 0], 1, GameStatus::Discarded),
                0,
                "throw 9: out of range",
            ),
            1,
            "throw 9: out of range",
        ),
        game(1, "n", "m", [3, 4], 1, GameStatus::Void),
        fail(
            game(2, "n", "n", [0, 0], 2, GameStatus::Void),
            0,
            "throw 9: out of range",
        ),
    ];
    let gr = GroupResult {
        number: 1,
        members: vec!["m".into(), "n".into()],
        ranking: vec![Placed {
            team: "m".into(),
            points: 0.0,
            place: 1,
        }],
        games,
    };
    let rr = RoundResult {
        number: 1,
        is_final: true,
        groups: vec![gr.clone()],
        advanced: vec![],
        disqualified: vec![DisqualifiedTeam {
            team: "n".into(),
            reason: "throw 9: out of range".into(),
        }],
    };
    let (t, _) = team_games(&gr, &rr, "m");
    assert!(
        flat(&t)
            .contains("void: n disqualified in game 2 (against itself); its games are not counted"),
        "{t}"
    );
    let (t, _) = team_games(&gr, &rr, "n");
    assert!(
        flat(&t).contains("failed: n against itself (throw 9: out of range); replayed as game 2"),
        "{t}"
    );
    let (first, second) = failure_items(&gr, &rr, "n");
    assert!(
        first.contains("game 0 (attempt 1) against itself: throw 9"),
        "{first}"
    );
    assert!(
        second.contains("game 2 (attempt 2) against itself: throw 9"),
        "{second}"
    );
}

/// A GRP table's game lines, written without the formatter, are the lines
/// `write!` wrote before (the old code, kept here as the reference), and
/// so are the GRG table's of the same group (once a group), for
/// every member of a group with every status, halves, a self-game, and
/// names of more bytes than characters and wider than the column.
#[test]
fn grp_game_lines_are_the_formatters() {
    let (gr, rr) = group();
    let mut renamed = gr.clone();
    let long = "Ölgötzen-und-Knobelfreunde-aus-Karlsruhe";
    for g in &mut renamed.games {
        for p in g.players.iter_mut() {
            if **p == *"c" {
                *p = long.into();
            } else if **p == *"b" {
                *p = "日本".into();
            }
        }
    }
    renamed.members = ["a", "日本", long, "crasher"].map(String::from).to_vec();
    for (gr, rr) in [(gr, rr.clone()), (renamed, rr)] {
        let dqs = disqualifications(&gr, &rr);
        for team in &gr.members {
            let (table, _) = team_games_with(&gr, &dqs, team);
            if team == &gr.members[0] {
                grg_game_lines_are_the_formatters(&gr, &rr);
            }
            let mine: Vec<&GameResult> = gr
                .games
                .iter()
                .filter(|g| g.players.iter().any(|p| **p == **team))
                .collect();
            let w = name_width(mine.iter().map(|g| opponent_of(g, team)), "opponent".len());
            // Each game's line, in the games' order.
            let lines: Vec<&str> = table.lines().collect();
            let mut after = 0;
            for g in &mine {
                let side = g.players.iter().position(|p| **p == **team).unwrap_or(0);
                let mut line = String::new();
                let _ = write!(line, "  {:>4}  {:<w$}  ", g.slot, opponent_of(g, team));
                let _ = if played(g) {
                    write!(line, "{:>5}  {:>5}", g.points[side], g.points[1 - side])
                } else {
                    write!(line, "{:>5}  {:>5}", "-", "-")
                };
                let _ = match counted_for(g, team) {
                    Some(c) => write!(line, "  {:>7}", points_text(c)),
                    None => write!(line, "  {:>7}", "-"),
                };
                let line = line.trim_end();
                let at = lines[after..].iter().position(|l| *l == line);
                let Some(at) = at else {
                    panic!("{team}, game {}: {line:?} not next in\n{table}", g.slot);
                };
                after += at + 1;
            }
        }
    }
}

/// [`grp_game_lines_are_the_formatters`] for the GRG table's game lines.
fn grg_game_lines_are_the_formatters(gr: &GroupResult, rr: &RoundResult) {
    let (table, _) = group_games(gr, rr);
    let w = name_width(gr.members.iter().map(String::as_str), "P".len());
    // Each game's line, in the games' order.
    let lines: Vec<&str> = table.lines().collect();
    let mut after = 0;
    for g in &gr.games {
        let (p, q) = if played(g) {
            (g.points[0].to_string(), g.points[1].to_string())
        } else {
            ("-".to_string(), "-".to_string())
        };
        let q_name = if is_self_game(g) {
            "itself".to_string()
        } else {
            g.players[1].to_string()
        };
        let line = format!(
            "  {:>4}  {:<w$}  {:>5} : {:<5}  {q_name}",
            g.slot, g.players[0], p, q
        );
        let line = line.trim_end();
        let Some(at) = lines[after..].iter().position(|l| *l == line) else {
            panic!("game {}: {line:?} not next in\n{table}", g.slot);
        };
        after += at + 1;
    }
}
