//! Unit tests of `rules` (discipline/ultimatum/rules.rs), kept beside it so the
//! module itself stays a size a person can hold.

use super::sample_bots::{play, Strategy};
use super::*;
use crate::game::lines::play_scripted;
use crate::seed::SplitMix64;

/// Plays a match with per-seat closures over the last line seen,
/// recording every line each seat receives (farewell included).
fn transcript(
    rounds: u32,
    mut answer: impl FnMut(usize, &str) -> String,
) -> (Result<MatchOutcome, Violation>, [Vec<String>; 2]) {
    let mut game = Match::new(Params { rounds });
    let mut seen: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..100_000 {
        match game.next() {
            Step::Send { seat, lines } => seen[seat].extend(lines),
            Step::Expect { seat } => {
                let line = answer(seat, seen[seat].last().unwrap());
                if let Err(v) = game.reply(seat, &line) {
                    let Step::Over { farewell } = game.next() else {
                        panic!("a violation ends the match")
                    };
                    for (s, lines) in farewell {
                        seen[s].extend(lines);
                    }
                    return (Err(v), seen);
                }
            }
            Step::Over { farewell } => {
                for (s, lines) in farewell {
                    seen[s].extend(lines);
                }
                return (Ok(game.outcome().unwrap()), seen);
            }
        }
    }
    panic!("no end");
}

fn lines(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

#[test]
fn exact_line_order_of_a_two_round_match() {
    // Seat 0 offers 300 and accepts everything; seat 1 offers 600 and
    // accepts only offers of at least 400.
    let (outcome, seen) = transcript(2, |seat, last| match (seat, last) {
        (0, "START") => "300".into(),
        (1, "START") => "600".into(),
        (0, _) => "JA".into(),
        (1, l) => {
            let x: u32 = l.strip_prefix("ANGEBOT ").unwrap().parse().unwrap();
            if x >= 400 { "JA" } else { "NEIN" }.into()
        }
        _ => unreachable!(),
    });
    let outcome = outcome.unwrap();
    assert_eq!(
        seen[0],
        lines(&[
            "RUNDEN 2",
            "RUNDE 1",
            "START",
            "NEIN",
            "PUNKTE 0",
            "ANGEBOT 600",
            "PUNKTE 600",
            "RUNDE 2",
            "START",
            "NEIN",
            "PUNKTE 0",
            "ANGEBOT 600",
            "PUNKTE 600",
            "ENDE",
        ])
    );
    assert_eq!(
        seen[1],
        lines(&[
            "RUNDEN 2",
            "RUNDE 1",
            "ANGEBOT 300",
            "PUNKTE 0",
            "START",
            "JA",
            "PUNKTE 400",
            "RUNDE 2",
            "ANGEBOT 300",
            "PUNKTE 0",
            "START",
            "JA",
            "PUNKTE 400",
            "ENDE",
        ])
    );
    assert_eq!(outcome.points, [1200, 800]);
    assert_eq!(outcome.accepted_offers, [0, 2]);
    assert_eq!(outcome.rounds_completed, 2);
    assert_eq!(outcome.forfeited_by, None);
    assert_eq!(outcome.result_for(0), MatchResult::Won);
    assert_eq!(outcome.result_for(1), MatchResult::Lost);
}

#[test]
fn steps_group_lines_per_seat_and_expect_is_repeated_until_answered() {
    let mut g = Match::new(Params { rounds: 3 });
    assert_eq!(
        g.next(),
        Step::Send {
            seat: 0,
            lines: lines(&["RUNDEN 3"])
        }
    );
    assert_eq!(
        g.next(),
        Step::Send {
            seat: 1,
            lines: lines(&["RUNDEN 3", "RUNDE 1"])
        }
    );
    assert_eq!(
        g.next(),
        Step::Send {
            seat: 0,
            lines: lines(&["RUNDE 1", "START"])
        }
    );
    assert_eq!(g.next(), Step::Expect { seat: 0 });
    assert_eq!(g.next(), Step::Expect { seat: 0 });
    assert_eq!(g.turn(), 1);
    assert!(g.outcome().is_none());
    // The other seat may not speak now: speaking out of turn forfeits.
    let v = g.reply(1, "JA").unwrap_err();
    assert_eq!(v.seat, 1);
    assert!(v.rule.contains("not its turn"));
    assert_eq!(g.outcome().unwrap().forfeited_by, Some(1));
    assert_eq!(
        g.next(),
        Step::Over {
            farewell: vec![(0, lines(&["ENDE"])), (1, lines(&["ENDE"]))]
        }
    );
}

#[test]
fn accept_and_reject_arithmetic_and_punkte_values() {
    for (offer, accepted, proposer_gets, responder_gets) in [
        (0, true, 1000, 0),
        (1000, true, 0, 1000),
        (400, true, 600, 400),
        (400, false, 0, 0),
        (1000, false, 0, 0),
    ] {
        let h = HalfRound {
            round: 1,
            proposer: 1,
            offer,
            accepted,
        };
        assert_eq!(h.points(), [responder_gets, proposer_gets]);
        // And the PUNKTE lines say the same: seat 0 proposes first,
        // seat 1 answers as `accepted` says.
        let (_, seen) = transcript(1, |seat, last| match last {
            "START" => offer.to_string(),
            _ if seat == 1 && !accepted => "NEIN".into(),
            _ => "JA".into(),
        });
        let answer = if accepted { "JA" } else { "NEIN" };
        assert_eq!(seen[0][3], answer);
        assert_eq!(
            seen[0][4],
            format!("PUNKTE {proposer_gets}"),
            "offer {offer}"
        );
        assert_eq!(seen[1][2], format!("ANGEBOT {offer}"));
        assert_eq!(
            seen[1][3],
            format!("PUNKTE {responder_gets}"),
            "offer {offer}"
        );
    }
}

#[test]
fn a_2500_round_match_shares_at_most_five_million_points() {
    assert_eq!(Params::default().rounds, 2500);
    assert_eq!(Params::default().max_total_points(), 5_000_000);
    // Everybody accepts: the whole 5,000,000 is shared ("im Bestfall").
    let all = play(2500, [Strategy::Simple, Strategy::Simple], [1, 2]);
    assert_eq!(all.points, [2_500_000, 2_500_000]);
    assert_eq!(all.points[0] + all.points[1], 5_000_000);
    assert_eq!(all.result_for(0), MatchResult::Draw);
    // One seat may take all of it: it offers 0, its opponent offers 1000,
    // both accept.
    let (o, _) = transcript(2500, |seat, last| match last {
        "START" => if seat == 0 { "0" } else { "1000" }.into(),
        _ => "JA".into(),
    });
    assert_eq!(o.unwrap().points, [5_000_000, 0]);
}

#[test]
fn strict_offer_parsing() {
    assert_eq!(parse_offer("0"), Ok(0));
    assert_eq!(parse_offer("1000"), Ok(1000));
    assert_eq!(parse_offer("0500"), Ok(500));
    assert_eq!(parse_offer("499\r"), Ok(499));
    assert_eq!(parse_offer("000000000000000000000007"), Ok(7));
    for bad in [
        "",
        "+5",
        "5 5",
        "\r",
        "-0",
        "-1",
        "5.0",
        "1001",
        "99999999999999999999",
        "ANGEBOT 5",
        "٣",
        "JA",
    ] {
        assert!(parse_offer(bad).is_err(), "{bad:?} accepted");
    }
    assert!(parse_offer("1001").unwrap_err().contains("from 0 to 1000"));
}

#[test]
fn strict_answer_parsing() {
    assert_eq!(parse_answer("JA"), Ok(true));
    assert_eq!(parse_answer("NEIN"), Ok(false));
    assert_eq!(parse_answer("NEIN\r"), Ok(false));
    for bad in ["ja", "Ja", "nein", "J A", "J", "YES", "1", "", "JA NEIN"] {
        assert!(parse_answer(bad).is_err(), "{bad:?} accepted");
    }
    // Blanks around, and CRs at the end, as a stream reader skips them.
    for good in [" JA", "JA ", "\tJA\r", "JA\r\r"] {
        assert_eq!(parse_answer(good), Ok(true), "{good:?}");
    }
    assert_eq!(parse_offer("500 "), Ok(500));
    assert_eq!(parse_offer(" 0042\t\r"), Ok(42));
    assert!(parse_offer("5 00").is_err());
}

#[test]
fn a_violation_forfeits_the_match() {
    // Seat 1 answers "ja" in round 3, after both proposed twice
    // (seat 0 offers 100, seat 1 offers 200, both accept).
    let mut answers = 0;
    let (res, seen) = transcript(10, |seat, last| match last {
        "START" => if seat == 0 { "100" } else { "200" }.into(),
        _ if seat == 1 => {
            answers += 1;
            if answers == 3 { "ja" } else { "JA" }.into()
        }
        _ => "JA".into(),
    });
    let v = res.unwrap_err();
    assert_eq!(v.seat, 1);
    assert_eq!(v.line, "ja");
    assert!(v.rule.contains("JA (accept) or NEIN"));
    assert_eq!(seen[0].last().unwrap(), "ENDE");
    assert_eq!(seen[1].last().unwrap(), "ENDE");

    let mut g = Match::new(Params { rounds: 10 });
    let mut answers = 0;
    let err = play_scripted(
        &mut g,
        |seat, seen| match seen.last().unwrap().as_str() {
            "START" => if seat == 0 { "100" } else { "200" }.into(),
            _ if seat == 1 => {
                answers += 1;
                if answers == 3 { "ja" } else { "JA" }.into()
            }
            _ => "JA".into(),
        },
        1000,
    )
    .unwrap_err();
    assert_eq!(err.seat, 1);
    let o = g.outcome().expect("an outcome after a violation");
    assert_eq!(o.forfeited_by, Some(1));
    assert_eq!(o.rounds_completed, 2);
    // Earned in rounds 1-2: seat 0 gets 900 + 200 per round, seat 1 100 + 800.
    assert_eq!(o.points, [2200, 1800]);
    assert_eq!(o.scored(), [2200, 0]);
    assert_eq!(o.result_for(0), MatchResult::Won);
    assert_eq!(o.result_for(1), MatchResult::Lost);
    assert_eq!(g.turn(), 3);
    // Over for good; further lines are refused.
    assert!(matches!(g.next(), Step::Over { .. }));
    assert!(g.reply(0, "5").is_err());
    assert_eq!(g.outcome().unwrap(), o);
}

#[test]
fn an_offer_out_of_range_forfeits_the_match() {
    let mut g = Match::new(Params { rounds: 5 });
    let v = play_scripted(
        &mut g,
        |seat, seen| match (seat, seen.last().unwrap().as_str()) {
            (0, "START") => "1001".into(),
            _ => "JA".into(),
        },
        100,
    )
    .unwrap_err();
    assert_eq!((v.seat, v.line.as_str()), (0, "1001"));
    let o = g.outcome().unwrap();
    assert_eq!((o.points, o.rounds_completed), ([0, 0], 0));
    assert_eq!(o.result_for(1), MatchResult::Won);
    assert_eq!(o.result_for(0), MatchResult::Lost);
}

#[test]
fn long_offending_lines_are_quoted_short() {
    let long = "9".repeat(10_000);
    let mut g = Match::new(Params { rounds: 1 });
    let v = play_scripted(&mut g, |_, _| long.clone(), 10).unwrap_err();
    assert!(v.line.len() <= MAX_QUOTED + 3);
    assert!(v.rule.contains("from 0 to 1000"));
}

#[test]
fn sample_bots_behave_as_the_seed_says() {
    // more "kann rein taktisch kein Spiel verlieren": it wins every match.
    for other in [Strategy::Simple, Strategy::Random, Strategy::SemiRandom] {
        for seed in 0..3 {
            let o = play(500, [Strategy::More, other], [seed, seed + 100]);
            assert_eq!(o.result_for(0), MatchResult::Won, "more vs {other:?}");
            let o = play(500, [other, Strategy::More], [seed, seed + 100]);
            assert_eq!(o.result_for(1), MatchResult::Won, "{other:?} vs more");
        }
    }
    // more against itself: it never accepts 499, nobody earns anything.
    let o = play(100, [Strategy::More, Strategy::More], [0, 0]);
    assert_eq!(o.points, [0, 0]);
    // The answers line by line.
    let mut rng = SplitMix64::new(3);
    let mut ask = |bot: Strategy, line: &str| bot.answer(&mut rng, line);
    assert_eq!(ask(Strategy::More, "START"), "499");
    assert_eq!(ask(Strategy::More, "ANGEBOT 500"), "NEIN");
    assert_eq!(ask(Strategy::More, "ANGEBOT 501"), "JA");
    assert_eq!(ask(Strategy::Simple, "START"), "250");
    assert_eq!(ask(Strategy::Simple, "ANGEBOT 249"), "NEIN");
    assert_eq!(ask(Strategy::Simple, "ANGEBOT 250"), "JA");
    // semirandom: offers 0..=500, accepts everything >= 500, below that
    // at random.
    let mut offers = std::collections::BTreeSet::new();
    let mut answers_499 = std::collections::BTreeSet::new();
    for _ in 0..2000 {
        offers.insert(ask(Strategy::SemiRandom, "START").parse::<u32>().unwrap());
        assert_eq!(ask(Strategy::SemiRandom, "ANGEBOT 500"), "JA");
        assert_eq!(ask(Strategy::SemiRandom, "ANGEBOT 1000"), "JA");
        answers_499.insert(ask(Strategy::SemiRandom, "ANGEBOT 499"));
    }
    assert!(*offers.last().unwrap() == 500 && *offers.first().unwrap() == 0);
    assert!(offers.len() > 400);
    assert_eq!(answers_499.len(), 2);
}

/// Hand-written property test: random play, with the odd broken line,
/// never panics and always ends, with consistent bookkeeping.
#[test]
fn random_play_always_ends_consistently() {
    let mut rng = SplitMix64::new(0x5EED);
    for case in 0..300 {
        let rounds = 1 + rng.below(40) as u32;
        let break_rate = [0, 50, 500][case % 3];
        let mut game = Match::new(Params { rounds });
        let mut r = SplitMix64::new(rng.next_u64());
        let result = play_scripted(
            &mut game,
            |_, seen| {
                let last = seen.last().unwrap();
                if break_rate > 0 && r.below(break_rate) == 0 {
                    return ["", "JA", "1", "1001", "ja", "NEIN", "-3", "x"][r.below(8) as usize]
                        .to_string();
                }
                if last == "START" {
                    r.below(1001).to_string()
                } else {
                    ["JA", "NEIN"][r.below(2) as usize].to_string()
                }
            },
            20 * rounds as usize + 10,
        );
        let o = game.outcome().expect("over");
        assert!(matches!(game.next(), Step::Over { .. }));
        let from_history = game.half_rounds().iter().fold([0, 0], |acc, h| {
            let p = h.points();
            [acc[0] + p[0], acc[1] + p[1]]
        });
        assert_eq!(o.points, from_history);
        assert!(o.points[0] + o.points[1] <= 2000 * rounds as u64);
        match result {
            Ok(ok) => {
                assert_eq!(ok, o);
                assert_eq!(o.rounds_completed, rounds);
                assert_eq!(game.half_rounds().len(), 2 * rounds as usize);
                assert_eq!(o.forfeited_by, None);
            }
            Err(v) => {
                assert_eq!(o.forfeited_by, Some(v.seat));
                assert!(o.rounds_completed < rounds);
            }
        }
    }
}
