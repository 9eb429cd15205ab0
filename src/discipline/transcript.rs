//! A bot game's transcript as text, in two forms, and the way from the
//! short one to the long one.
//!
//! The **full** form (the site's download, the kit referee's output):
//!
//! ```text
//! # knobeln transcript 2: ultimatum
//! # rounds: 2500
//! # player 1: alice
//! # player 2: bob
//! to 1: RUNDEN 2500
//! from 1: 500
//! …
//! ```
//!
//! one exchange per line, `to P: LINE` (the referee to player P) or
//! `from P: LINE` (what player P printed), in the order the server's
//! `Recorded` game noted them, farewell included. Lines that begin with
//! `#` are comments: the header (the setup's parameters, the players'
//! names) and, at the end, the failures.
//!
//! **Players are numbered 1 and 2** (the flooding island's one bot is
//! player 1), as the seeds number them and as every text a person reads
//! does; in the code a seat is the index from 0 (`seat + 1` is the
//! player). That is format **2**. Format 1 (`# KNOBELN transcript 1:`,
//! `# KNOBELN moves 1:`, a stored moves body without a version line)
//! numbered seats from 0; [`parse_moves`] still reads it (the moves kept
//! by older contests, the fuzz corpus), and writes only format 2. The first
//! word is the program that wrote the file, `knobeln`, in lower case: the
//! server's name, not the KNOBELN contest's, so a Morabaraba transcript
//! does not read as a KNOBELN game.
//!
//! The **moves** form (stored for every kept game, mailed by preference)
//! keeps only what the bots printed (`P: LINE`) and, after the last move,
//! each failure outside the rules (`! P: reason`) and the number of lines
//! the transcript had (`= N`: a bot that quit is noticed where a write to
//! it fails, which the rules cannot tell): everything the referee said
//! follows from the rules, the setup and the seed. [`expand`](crate::discipline::play::expand) replays
//! the moves through the game's own rules exactly as `lines::game` drove
//! it (a move that breaks a rule is noted, then the farewell; moves that
//! run out before the game is over mean the failed seats forfeit), so
//! `expand(moves(t)) == t` for every transcript the server records; the
//! kit's referees (`referee.py --expand`) do the same at home.
//!
//! The store keeps the moves body packed ([`packed`]: zlib behind a byte
//! that names the packing, or the text where that is no smaller; at most
//! [`MAX_MOVES_BYTES`] unpacked), and reads it back byte for byte.
//!
//! What it does not do: play a game with processes (`super::play`), judge
//! or store anything. Parsing is linear and capped by its caller's input.

pub mod moves;
pub mod packed;

pub use moves::*;
pub use packed::{
    pack_moves, packed_len, stored_moves, unpack_moves, StoredMoves, UnpackError, MAX_MOVES_BYTES,
};

use crate::discipline::game::Setup;
use crate::game::lines::{Exchange, Said};
/// The header's parameter lines of a setup (without `# `): its
/// discipline's ([`super::seam::BotDiscipline::setup_lines`]).
fn parameters(setup: &Setup, subject: &str) -> Vec<String> {
    super::registry::of_setup(setup).setup_lines(setup, subject)
}

fn header(magic: &str, setup: &Setup, subject: &str, names: &[String]) -> String {
    let mut t = format!("{magic}{}\n", setup.discipline().name());
    for p in parameters(setup, subject) {
        t.push_str(&format!("# {p}\n"));
    }
    for (i, n) in names.iter().enumerate() {
        t.push_str(&format!("# player {}: {}\n", player_number(i), one_line(n)));
    }
    t
}

/// The full form of a game: header, exchanges, failures as comments.
pub fn full_text(
    setup: &Setup,
    subject: &str,
    names: &[String],
    transcript: &[Exchange],
    failures: &[String],
) -> String {
    use std::fmt::Write as _;
    let mut t = header(FULL_MAGIC, setup, subject, names);
    t.reserve(full_exchanges_at_least(transcript));
    for e in transcript {
        let dir = match e.said {
            Said::ToBot => "to",
            Said::ByBot => "from",
        };
        let _ = writeln!(t, "{dir} {}: {}", player_number(e.seat), quote(&e.line));
    }
    for f in failures {
        t.push_str(&format!("# failure: {}\n", one_line(f)));
    }
    t
}

/// A lower bound on the bytes of [`full_text`]'s exchanges: each is at
/// least `to N: `, its line (quoting never shortens one) and a newline.
/// Who must not write a full text beyond a size asks this first (a
/// 2500-round ultimatum match is 560 kB in full).
pub fn full_exchanges_at_least(transcript: &[Exchange]) -> usize {
    transcript.iter().map(|e| e.line.len() + 7).sum()
}

/// The moves form as text.
pub fn moves_text(setup: &Setup, subject: &str, names: &[String], moves: &Moves) -> String {
    let mut t = header(MOVES_MAGIC, setup, subject, names);
    t.push_str(&moves_lines(moves));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::footsteps::rules as footsteps;
    use crate::discipline::play::expand;
    use crate::discipline::ultimatum::rules as ultimatum;
    use crate::game::lines::play_scripted;
    use crate::game::lines::{LineGame, Recorded};

    fn roundtrip<G: LineGame + Clone>(
        setup: &Setup,
        game: G,
        answer: impl FnMut(usize, &[String]) -> String,
    ) {
        let mut rec = Recorded::new(game, 1_000_000);
        // As the referee drives it: after a broken rule, the farewell.
        if play_scripted(&mut rec, answer, 1_000_000).is_err() {
            let _ = rec.next();
        }
        let m = moves_of(&rec.transcript, &[]);
        let text = moves_text(setup, "here", &["a".into(), "b".into()], &m);
        let back = parse_moves(&text, 2).unwrap();
        assert_eq!(back, m);
        assert_eq!(expand(setup, &back), rec.transcript);
    }

    /// What the site asks before it makes a full text is a lower bound
    /// of that text's exchanges, whatever the lines (quoted ones grow).
    #[test]
    fn the_exchanges_bound_is_below_the_full_text() {
        let setup = crate::discipline::ultimatum::setup(ultimatum::Params { rounds: 3 });
        let ex = |seat, said, line: &str| Exchange {
            seat,
            said,
            line: line.into(),
        };
        let t = vec![
            ex(0, Said::ToBot, "RUNDE 1"),
            ex(0, Said::ByBot, "a\\b\x01\u{7f}ö"),
            ex(1, Said::ByBot, ""),
            ex(9, Said::ToBot, "x"),
        ];
        let head = header(FULL_MAGIC, &setup, "", &[]).len();
        let full = full_text(&setup, "", &[], &t, &[]).len();
        assert!(head + full_exchanges_at_least(&t) <= full);
        assert_eq!(full_exchanges_at_least(&[]), 0);
    }

    #[test]
    fn moves_expand_to_the_recorded_transcript_in_every_discipline() {
        let p = ultimatum::Params { rounds: 7 };
        let mut k = 0;
        roundtrip(
            &crate::discipline::ultimatum::setup(p),
            ultimatum::Match::new(p),
            |_, seen| {
                k += 1;
                let last = seen.last().map(String::as_str).unwrap_or("");
                if last.starts_with("ANGEBOT") {
                    if k % 3 == 0 {
                        "NEIN".into()
                    } else {
                        "JA\r".into()
                    }
                } else {
                    format!("{}", (k * 37) % 1001)
                }
            },
        );
        let fp = footsteps::Params::default();
        roundtrip(
            &crate::discipline::footsteps::setup(fp),
            footsteps::Game::new(fp),
            |_, _| "3".into(),
        );
    }

    #[test]
    fn a_rule_break_and_a_forfeit_replay_as_played() {
        // Seat 1 answers garbage: the line is noted, then the farewell.
        let p = ultimatum::Params { rounds: 3 };
        let mut rec = Recorded::new(ultimatum::Match::new(p), 1000);
        assert!(play_scripted(&mut rec, |_, _| "lots".into(), 1000).is_err());
        let _ = rec.next();
        let m = moves_of(&rec.transcript, &[]);
        assert_eq!(
            expand(&crate::discipline::ultimatum::setup(p), &m),
            rec.transcript
        );
        // Moves that run out: the failed seat forfeits and nothing follows.
        let m = Moves {
            moves: Vec::new(),
            forfeits: vec![(0, "crashed".into())],
            ends_after: None,
        };
        let t = expand(&crate::discipline::ultimatum::setup(p), &m);
        assert!(!t.is_empty() && t.iter().all(|e| e.said == Said::ToBot));
        // A bot noticed gone at a write: the count says where it stopped.
        let m = Moves {
            ends_after: Some(1),
            ..m
        };
        assert_eq!(expand(&crate::discipline::ultimatum::setup(p), &m).len(), 1);
        let text = moves_body(&m);
        assert!(text.ends_with("! 1: crashed\n= 1\n"), "{text}");
        assert_eq!(parse_moves(&text, 2).unwrap(), m);
    }

    #[test]
    fn hostile_lines_stay_one_line_and_read_back() {
        let line = "a\r\x00b\\x41\\";
        let m = Moves {
            moves: vec![Move {
                seat: 1,
                line: line.into(),
            }],
            forfeits: vec![(0, "bad\nreason".into())],
            ends_after: Some(3),
        };
        let body = moves_body(&m);
        assert_eq!(body.lines().count(), 4, "the format line and three");
        let back = parse_moves(&body, 2).unwrap();
        assert_eq!(back.moves[0].line, line);
        assert_eq!(back.forfeits[0].1, "bad reason");
        // Hostile review (issue 38's leftovers): a bidi override, C1 or
        // an ANSI escape is written by its number (the file hides and
        // reorders nothing where it is read) and reads back the same.
        let hidden = "ok\u{202e}txt\u{2066}\u{85}\u{1b}[2J \\u{41} é";
        let m = Moves {
            moves: vec![Move {
                seat: 0,
                line: hidden.into(),
            }],
            forfeits: vec![(0, "it printed \u{202e}x".into())],
            ends_after: Some(1),
        };
        let body = moves_body(&m);
        assert!(
            body.contains("1: ok\\u{202e}txt\\u{2066}\\x85\\x1b[2J \\\\u{41} é\n"),
            "{body}"
        );
        assert!(body.contains("! 1: it printed \\u{202e}x\n"), "{body}");
        assert_eq!(crate::draw::visible(&body), body.as_str());
        let back = parse_moves(&body, 2).unwrap();
        assert_eq!(back.moves[0].line, hidden);
        assert!(parse_moves("7: x\n", 2).is_err());
        assert!(parse_moves("! 0: x\n0: y\n", 2).is_err());
        // Format 2 has no player 0.
        let e = parse_moves(&format!("{STORED_MOVES_LINE}\n0: x\n"), 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: player 0, but the players are 1 to 2"
        );
    }

    #[test]
    fn players_are_written_from_1_and_format_1_still_reads_from_0() {
        let p = ultimatum::Params { rounds: 2 };
        let setup = crate::discipline::ultimatum::setup(p);
        let mut rec = Recorded::new(ultimatum::Match::new(p), 1000);
        let mut k = 0;
        play_scripted(
            &mut rec,
            |_, seen| {
                k += 1;
                let last = seen.last().map(String::as_str).unwrap_or("");
                if last.starts_with("ANGEBOT") {
                    "JA".into()
                } else {
                    format!("{}", 100 * k)
                }
            },
            1000,
        )
        .unwrap();
        let m = moves_of(&rec.transcript, &[]);
        let names = ["alice".to_string(), "bob".to_string()];
        let full = full_text(&setup, "", &names, &rec.transcript, &[]);
        assert!(
            full.starts_with(
                "# knobeln transcript 2: ultimatum\n# rounds: 2\n\
                 # player 1: alice\n# player 2: bob\nto 1: RUNDEN 2\nto 2: RUNDEN 2\n"
            ),
            "{full}"
        );
        assert!(full.contains("\nfrom 1: 100\n") && full.contains("\nfrom 2: JA\n"));
        assert!(!full.contains("seat") && !full.contains(" 0: "), "{full}");
        let text = moves_text(&setup, "", &names, &m);
        assert!(text.starts_with("# knobeln moves 2: ultimatum\n"), "{text}");
        assert!(text.contains("\n1: 100\n2: JA\n"), "{text}");
        assert_eq!(parse_moves(&text, 2).unwrap(), m);
        let body = moves_body(&m);
        assert!(body.starts_with("# knobeln moves 2\n1: 100\n"), "{body}");
        assert_eq!(parse_moves(&body, 2).unwrap(), m);
        // A format-1 text (seats from 0, as older contests stored their
        // moves, with or without its header) reads as the same game and
        // expands to the same transcript.
        let old_body: String = m
            .moves
            .iter()
            .map(|x| format!("{}: {}\n", x.seat, x.line))
            .collect();
        assert!(old_body.starts_with("0: 100\n1: JA\n1: 300\n0: JA\n"));
        let one = format!(
            "# KNOBELN moves 1: ultimatum\n# rounds: 2\n# seat 0: alice\n\
             # seat 1: bob\n{old_body}"
        );
        for old in [&one, &old_body] {
            let back = parse_moves(old, 2).unwrap();
            assert_eq!(back, m, "{old}");
            assert_eq!(expand(&setup, &back), rec.transcript);
        }
    }

    /// Hostile review (F5): an escape with a sign (`\x+a`, `\u{+41}`) is
    /// no escape `quote` writes: read as written, as the kit's referee
    /// (`home_referee/shared.py`, `unquote`) reads it, never as a line
    /// feed or a letter (Rust's `from_str_radix` takes a leading `+`).
    #[test]
    fn an_escape_with_a_sign_is_kept_as_written_as_the_kits_referee_keeps_it() {
        for s in ["\\x+a", "\\u{+41}", "\\x-1", "\\u{-41}", "\\u{ 41}"] {
            assert_eq!(unquote(s), s);
        }
        assert_eq!(unquote("\\x0a\\u{41}"), "\nA");
    }

    /// Hostile review (F5): the kit's referee (`home_referee/shared.py`)
    /// writes and reads a line as the server does, character for
    /// character: controls, bidi marks, zero-width characters, line and
    /// paragraph separators, escapes typed literally, escapes with a sign.
    #[test]
    fn the_kits_referee_quotes_and_reads_lines_as_the_server_does() {
        let lines = [
            crate::draw::tests::HIDING.replace('\n', " "),
            "a\u{200b}b\u{2028}c\u{2029}d\u{2060}e\u{feff}f".into(),
            "keep \u{200d} and \u{200c}: \u{1f469}\u{200d}\u{1f4bb}".into(),
            "typed \\u{202e} and \\x1b and \\".into(),
            "\\x+a \\u{+41} \\u{110000} \\u{d800} \\u{41".into(),
        ];
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/discipline/home_referee");
        let script = "import json, sys\nfrom shared import quote, unquote\n\
                      ls = json.load(sys.stdin)\n\
                      json.dump([[quote(l), unquote(quote(l)), unquote(l)] for l in ls], sys.stdout)\n";
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3");
        std::io::Write::write_all(
            child.stdin.as_mut().unwrap(),
            serde_json::to_string(&lines).unwrap().as_bytes(),
        )
        .unwrap();
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let python: Vec<[String; 3]> = serde_json::from_slice(&out.stdout).unwrap();
        for (l, p) in lines.iter().zip(&python) {
            let rust = [quote(l), unquote(&quote(l)), unquote(l)];
            assert_eq!(&rust, p, "{l:?}");
            assert_eq!(rust[1], *l);
        }
    }
}
