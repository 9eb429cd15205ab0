//! Unit tests of the game protocol: encoding, decoding and the full format,
//! round trips and refusals.

use super::decode::parse_base36;
use super::encode::base36;
use super::*;
use crate::game::knobeln::{Params, Throw};

fn sample() -> GameProtocol {
    GameProtocol {
        version: VERSION,
        players: ["alpha".into(), "beta".into()],
        round: 1,
        group: 2,
        slot: 17,
        attempt: 1,
        seed: 8427345982374,
        params: Params::default(),
        points: [0, 0],
        throws: vec![[100, 12288], [100, 100], [100, 100], [101, 100]],
        failures: vec![ProtocolFailure {
            player: 0,
            throw: 5,
            reason: "throw 5: threw 20000, outside the allowed range 1..12288 (rule 1)".into(),
        }],
    }
}

#[test]
fn base36_round_trips_extremes() {
    for v in [0, 1, -1, 35, 36, 12288, i64::MAX, i64::MIN, i64::MIN + 1] {
        assert_eq!(parse_base36(&base36(v)), Some(v), "{v}");
    }
    assert_eq!(base36(12288), "9hc");
    assert_eq!(base36(100), "2s");
    assert_eq!(parse_base36("1y2p0ij32e8e8"), None);
    assert_eq!(parse_base36("-1y2p0ij32e8e8"), Some(i64::MIN));
    assert_eq!(parse_base36("A"), None);
    assert_eq!(parse_base36("-"), None);
}

#[test]
fn sample_encodes_as_documented() {
    let text = encode(&sample());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "KNOBELN-PROTOCOL 1");
    assert_eq!(lines[1], "team P alpha");
    assert_eq!(lines[3], "round 1 group 2 slot 17 attempt 1");
    assert_eq!(
        lines[7],
        "fail P 5 throw 5: threw 20000, outside the allowed range 1..12288 (rule"
    );
    assert_eq!(lines[8], "+ 1)");
    assert_eq!(lines[9], "throws 4");
    assert_eq!(lines[10], "2s,9hc 2s*2 2t,2s");
    assert!(lines[11].starts_with("KNOBELN-END 4 "));
    assert_eq!(decode(&text).unwrap(), sample());
}

#[test]
fn odd_texts_survive() {
    for s in [
        "",
        " ",
        "  ",
        "a  b ",
        " leading",
        "100% = sure",
        "tab\there\r\nand ümlaut",
        &"x".repeat(200),
        &"word ".repeat(40),
        &"%".repeat(80),
    ] {
        let mut p = sample();
        p.players[1] = s.to_string();
        p.failures[0].reason = s.to_string();
        let text = encode(&p);
        for l in text.lines() {
            assert!(l.len() <= WIDTH, "{l:?}");
            assert!(
                !l.ends_with(' ') && !l.contains('=') && l.is_ascii(),
                "{l:?}"
            );
        }
        assert_eq!(decode(&text).unwrap(), p, "{s:?}\n{text}");
    }
}

/// The example of the module documentation, as `encode` writes it.
#[test]
fn documented_example_is_real() {
    let doc: String = include_str!("../protocol.rs")
        .lines()
        .skip_while(|l| !l.starts_with("//! KNOBELN-PROTOCOL 1"))
        .take_while(|l| !l.starts_with("//! ```"))
        .map(|l| format!("{}\n", &l[4..]))
        .collect();
    let p = decode(&doc).expect("the documented example decodes");
    assert_eq!(encode(&p), doc);
    assert_eq!(p.points, [12, 0]);
    assert_eq!(p.throws.len(), 9);
    assert_eq!(p.throws[0], [100, 12288]);
    assert_eq!(p.failures[0].throw, 10);
}

#[test]
fn crc_reference_value() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
}

/// The checksum by tables (eight bytes a step) is the checksum by its
/// definition (a bit at a time), for every length from 0 to 300 and
/// inputs of random bytes up to 20 kB, at every alignment.
#[test]
fn the_crc_by_tables_is_the_bitwise_crc() {
    use super::model::crc32_bitwise;
    let mut g = crate::seed::SplitMix64::new(32);
    let bytes: Vec<u8> = (0..20_000).map(|_| g.below(256) as u8).collect();
    for len in 0..300 {
        for start in 0..8 {
            let b = &bytes[start..start + len];
            assert_eq!(crc32(b), crc32_bitwise(b), "length {len}, at {start}");
        }
    }
    for _ in 0..50 {
        let start = g.below(1000) as usize;
        let len = g.below(19_000) as usize;
        let b = &bytes[start..start + len];
        assert_eq!(crc32(b), crc32_bitwise(b), "length {len}, at {start}");
    }
}

// ------------------------------------------------------------ properties

use crate::game::knobeln::replay;
use crate::seed::SplitMix64;

fn pick<'a, T>(g: &mut SplitMix64, items: &'a [T]) -> &'a T {
    &items[g.below(items.len() as u64) as usize]
}

/// A random text: plain words, blanks (also several and at the ends),
/// `%`, `=`, control characters, non-ASCII letters.
fn random_text(g: &mut SplitMix64) -> String {
    const PARTS: &[&str] = &[
        "throw",
        "17:",
        " ",
        " ",
        "  ",
        "%",
        "=",
        "\t",
        "\r\n",
        "\u{0}",
        "ü",
        "€",
        "日本",
        "(rule 6)",
        "a_long_identifier_without_any_blanks_in_it_at_all_for_sure",
        "+",
        ">",
        "|",
        "KNOBELN-END",
        "-",
        "\\u{7f}",
        "\"",
    ];
    let n = g.below(40) as usize;
    (0..n).map(|_| *pick(g, PARTS)).collect()
}

/// A random throw: mostly contest-like numbers, sometimes extremes.
fn random_throw(g: &mut SplitMix64) -> Throw {
    match g.below(10) {
        0 => *pick(g, &[i64::MIN, i64::MAX, 0, -1, 1, 35, 36, -36, 1 << 40]),
        1 => g.next_u64() as i64,
        _ => 1 + g.below(12288) as i64,
    }
}

pub(crate) fn random_protocol(g: &mut SplitMix64) -> GameProtocol {
    let len = *pick(g, &[0usize, 1, 2, 7, 100, 1000]);
    let mut throws = Vec::with_capacity(len);
    while throws.len() < len {
        let pair = if g.below(3) == 0 {
            let t = random_throw(g);
            [t, t]
        } else {
            [random_throw(g), random_throw(g)]
        };
        let run = if g.below(2) == 0 {
            1
        } else {
            1 + g.below(20) as usize
        };
        for _ in 0..run.min(len - throws.len()) {
            throws.push(pair);
        }
    }
    let failures = (0..g.below(3))
        .map(|_| ProtocolFailure {
            player: *pick(g, &[0, 0, 1, 1, 2, 7]),
            throw: g.next_u64() as u32,
            reason: random_text(g),
        })
        .collect();
    GameProtocol {
        version: VERSION,
        players: [random_text(g), random_text(g)],
        round: g.next_u64() as u32,
        group: g.below(100) as u32,
        slot: g.below(1000) as u32,
        attempt: 1 + g.below(3) as u32,
        seed: g.next_u64(),
        params: Params {
            a: random_throw(g),
            b: random_throw(g),
            k: g.next_u64() as u32,
            l: g.below(1_000_001) as u32,
        },
        points: [g.next_u64(), g.below(100_000)],
        throws,
        failures,
    }
}

#[test]
fn encode_then_decode_gives_back_every_random_game() {
    let mut g = SplitMix64::new(1994);
    for case in 0..400 {
        let p = random_protocol(&mut g);
        let text = encode(&p);
        for l in text.lines() {
            assert!(
                l.len() <= WIDTH
                    && l.is_ascii()
                    && !l.contains('=')
                    && !l.contains('\t')
                    && !l.ends_with(' '),
                "case {case}: line not mail-safe: {l:?}"
            );
        }
        assert_eq!(decode(&text).as_ref(), Ok(&p), "case {case}:\n{text}");
    }
}

/// A legal random game under `params` (series of at least k).
fn legal_throws(g: &mut SplitMix64, params: &Params, len: usize) -> Vec<[Throw; 2]> {
    let mut sides = [Vec::new(), Vec::new()];
    for side in sides.iter_mut() {
        while side.len() < len {
            let series = params.k as usize + g.below(10) as usize;
            let mut t = params.a + g.below((params.b - params.a + 1) as u64) as i64;
            for _ in 0..series {
                side.push(t);
                t += g.below((params.b - t + 1).min(500) as u64) as i64;
            }
        }
        side.truncate(len);
    }
    (0..len).map(|i| [sides[0][i], sides[1][i]]).collect()
}

#[test]
fn running_totals_of_the_full_format_are_the_rules() {
    let mut g = SplitMix64::new(7);
    for case in 0..30 {
        let params = Params {
            a: 1 + g.below(5) as i64,
            b: *pick(&mut g, &[12288, 20, 100_000]),
            k: 1 + g.below(10) as u32,
            l: 300,
        };
        let len = 1 + g.below(300) as usize;
        let throws = legal_throws(&mut g, &params, len);
        let points = replay(&params, &throws).expect("legal game");
        let mut p = random_protocol(&mut g);
        p.params = params;
        p.throws = throws.clone();
        p.points = points;
        p.players = ["p".into(), "q".into()];
        p.failures.clear();
        let full = format_full(&p);
        let rows: Vec<Vec<&str>> = full
            .lines()
            .skip_while(|l| !l.starts_with("throw "))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows.len(), throws.len(), "case {case}");
        for (i, row) in rows.iter().enumerate() {
            let want = replay(&params, &throws[..=i]).unwrap();
            assert_eq!(row[0], (i + 1).to_string());
            assert_eq!(row[1], throws[i][0].to_string());
            assert_eq!(row[2], throws[i][1].to_string());
            assert_eq!(
                [
                    row[5].parse::<u64>().unwrap(),
                    row[6].parse::<u64>().unwrap()
                ],
                want,
                "case {case}, throw {}",
                i + 1
            );
        }
        assert!(
            full.contains(&format!("points: P {}, Q {}\n", points[0], points[1])),
            "{full}"
        );
        assert!(!full.contains("but the throws add up"), "{full}");
    }
}

#[test]
fn every_truncation_is_refused() {
    let mut g = SplitMix64::new(3);
    for _ in 0..5 {
        let mut p = random_protocol(&mut g);
        p.throws.truncate(60);
        let text = encode(&p);
        // Only the final newline may go.
        for cut in 0..text.len() - 1 {
            if !text.is_char_boundary(cut) {
                continue;
            }
            let r = decode(&text[..cut]);
            assert!(r.is_err(), "cut at {cut} of {}: {r:?}", text.len());
        }
        assert_eq!(decode(&text[..text.len() - 1]).as_ref(), Ok(&p));
        // Whole lines missing at the end, with mail text after them.
        let lines: Vec<&str> = text.lines().collect();
        for keep in 1..lines.len() {
            let cut = format!("{}\n\n-- \nLutz\n", lines[..keep].join("\n"));
            assert!(decode(&cut).is_err(), "{keep} lines: {cut}");
        }
    }
}

#[test]
fn damage_is_refused() {
    let p = sample();
    let text = encode(&p);
    let damaged = text.replace("2t,2s", "2t,2r");
    assert!(matches!(
        decode(&damaged),
        Err(ProtocolError::Checksum { .. })
    ));
    let damaged = text.replace("team Q beta", "team Q bets");
    assert!(matches!(
        decode(&damaged),
        Err(ProtocolError::Checksum { .. })
    ));
    let damaged = text.replace("throws 4", "throws 5");
    assert!(decode(&damaged).is_err());
    let damaged = text.replace("KNOBELN-PROTOCOL 1", "KNOBELN-PROTOCOL 2");
    assert!(matches!(
        decode(&damaged),
        Err(ProtocolError::Version { version: 2, .. })
    ));
}

#[test]
fn mail_around_the_protocol_is_ignored() {
    let p = sample();
    let text = encode(&p);
    let mail = format!(
        "Return-Path: <knobeln@ira.uka.de>\nFrom: knobeln@ira.uka.de\n\
             Subject: KNOBELN: game protocols of round 1, group 2\n\
             Content-Type: text/plain; charset=us-ascii\n\n\
             Here is the protocol of your game:\n\n{text}\n-- \nThe KNOBELN contest\n"
    );
    assert_eq!(decode(&mail).as_ref(), Ok(&p));
    let crlf = mail.replace('\n', "\r\n");
    assert_eq!(decode(&crlf).as_ref(), Ok(&p));
    let quoted: String = mail.lines().map(|l| format!("> {l}\n")).collect();
    assert_eq!(decode(&quoted).as_ref(), Ok(&p));
    let twice_quoted: String = quoted.lines().map(|l| format!(">{l}  \n")).collect();
    assert_eq!(decode(&twice_quoted).as_ref(), Ok(&p));

    assert_eq!(decode("no protocol here\n"), Err(ProtocolError::NotFound));
    assert_eq!(decode_all("no protocol here\n"), Ok(vec![]));
    let mut q = sample();
    q.players.swap(0, 1);
    let two = format!("{mail}\nand another one:\n{}", encode(&q));
    assert_eq!(decode_all(&two), Ok(vec![p.clone(), q]));
    assert_eq!(decode(&two), Err(ProtocolError::Several(2)));
    // Mentioning the marker in prose does not start a protocol.
    let prose = format!("see the KNOBELN-PROTOCOL 1 lines below\n{text}");
    assert_eq!(decode(&prose).as_ref(), Ok(&p));
}

/// A protocol written from runs of its throws ([`encode_runs`]: the
/// contest's DGP mails write them from the stored bytes) is the one
/// written from the throws, however the runs are cut (pieces of a run
/// apart, empty ones) and from the store's format 1 bytes
/// (`store::packed_runs`); a fault of the runs ends it.
#[test]
fn the_protocol_from_runs_is_the_protocol_from_throws() {
    let mut g = SplitMix64::new(38);
    for case in 0..500 {
        let p = random_protocol(&mut g);
        let want = encode(&p);
        let mut without = p.clone();
        without.throws.clear();
        // Cut at random: a throw at a time, or several, or none.
        let mut pieces: Vec<([Throw; 2], usize)> = Vec::new();
        let mut i = 0;
        while i < p.throws.len() {
            let n = (g.below(4) as usize).min(p.throws.len() - i);
            let n = if p.throws[i..i + n].iter().all(|&t| t == p.throws[i]) {
                n
            } else {
                1
            };
            pieces.push((p.throws[i], n));
            i += n;
        }
        let got = encode_runs(
            &without,
            p.throws.len(),
            pieces.iter().map(|&r| Ok::<_, ()>(r)),
        );
        assert_eq!(got.as_deref(), Ok(want.as_str()), "case {case}");
        let bytes = crate::store::encode_throws(&p.throws);
        let (count, runs) = crate::store::packed_runs(&bytes).unwrap();
        assert_eq!(count, p.throws.len());
        assert_eq!(
            encode_runs(&without, count, runs).unwrap(),
            want,
            "case {case}"
        );
    }
    let p = random_protocol(&mut g);
    let runs = [Ok(([1, 2], 3)), Err("corrupt"), Ok(([3, 4], 1))];
    assert_eq!(encode_runs(&p, 4, runs.into_iter()), Err("corrupt"));
}
