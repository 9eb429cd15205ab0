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
//! [`Recorded`] game noted them, farewell included. Lines that begin with
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
//! follows from the rules, the setup and the seed. [`expand`] replays
//! the moves through the game's own rules exactly as `lines::game` drove
//! it (a move that breaks a rule is noted, then the farewell; moves that
//! run out before the game is over mean the failed seats forfeit), so
//! `expand(moves(t)) == t` for every transcript the server records; the
//! kit's referees (`referee.py --expand`) do the same at home.
//!
//! What it does not do: play a game with processes (`super::play`), judge
//! or store anything. Parsing is linear and capped by its caller's input.

use crate::discipline::game::Setup;
use crate::game::lines::{Exchange, LineGame, Recorded, Said, Step};

/// The first line of the full form, before the discipline's name.
pub const FULL_MAGIC: &str = "# knobeln transcript 2: ";
/// The first line of the moves form, before the discipline's name.
pub const MOVES_MAGIC: &str = "# knobeln moves 2: ";
/// Format 1's first line of the full form (seats from 0): read, not written.
pub const FULL_MAGIC_1: &str = "# KNOBELN transcript 1: ";
/// Format 1's first line of the moves form (seats from 0): read, not written.
pub const MOVES_MAGIC_1: &str = "# KNOBELN moves 1: ";
/// The first line of a stored moves body (the store keeps no header): it
/// says the body is format 2. A body without it is format 1.
pub const STORED_MOVES_LINE: &str = "# knobeln moves 2";

/// The player a text names for a seat (seats count from 0, players from 1).
pub fn player_number(seat: usize) -> usize {
    seat + 1
}

/// One line a bot printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub seat: usize,
    pub line: String,
}

/// What a kept game is, in the moves form: every line the bots printed and
/// the seats that failed outside the rules.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Moves {
    pub moves: Vec<Move>,
    /// (seat, reason) of every failure outside the game's rules.
    pub forfeits: Vec<(usize, String)>,
    /// After such a failure: how many lines the transcript had in all
    /// (`= N`). A bot that quits while the referee still writes to it is
    /// noticed at that write, before the game asks anything again; the
    /// count says where the game stopped.
    pub ends_after: Option<usize>,
}

/// The header's parameter lines of a setup (without `# `).
fn parameters(setup: &Setup, island_name: &str) -> Vec<String> {
    match setup {
        Setup::Ultimatum(p) => vec![format!("rounds: {}", p.rounds)],
        Setup::Flooding {
            island,
            params,
            seed,
        } => {
            let mut v = vec![
                format!("seed: {seed}"),
                format!("max_rounds: {}", params.max_rounds),
                format!("island: {}", one_line(island_name)),
            ];
            for l in island.to_text().lines() {
                v.push(format!("island-text: {l}"));
            }
            v
        }
        Setup::Footsteps(p) => vec![
            format!("fields: {}", p.fields),
            format!("points: {}", p.points),
        ],
        Setup::Morabaraba => Vec::new(),
    }
}

/// A name on one header line: no line breaks.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn header(magic: &str, setup: &Setup, island_name: &str, names: &[String]) -> String {
    let mut t = format!("{magic}{}\n", setup.discipline().name());
    for p in parameters(setup, island_name) {
        t.push_str(&format!("# {p}\n"));
    }
    for (i, n) in names.iter().enumerate() {
        t.push_str(&format!("# player {}: {}\n", player_number(i), one_line(n)));
    }
    t
}

/// A line as written after `to P: ` or `P: `: control characters (a
/// stray CR, NUL) as `\xNN`, a backslash doubled, so one exchange stays
/// one line and reads back the same.
pub fn quote(line: &str) -> String {
    let mut s = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                s.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => s.push(c),
        }
    }
    s
}

/// The inverse of [`quote`] (a malformed escape is kept as written).
pub fn unquote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            Some('x') => {
                let rest: String = chars.clone().skip(1).take(2).collect();
                match u8::from_str_radix(&rest, 16) {
                    Ok(b) if rest.len() == 2 => {
                        chars.next();
                        chars.next();
                        chars.next();
                        out.push(b as char);
                    }
                    _ => out.push('\\'),
                }
            }
            _ => out.push('\\'),
        }
    }
    out
}

/// The full form of a game: header, exchanges, failures as comments.
pub fn full_text(
    setup: &Setup,
    island_name: &str,
    names: &[String],
    transcript: &[Exchange],
    failures: &[String],
) -> String {
    let mut t = header(FULL_MAGIC, setup, island_name, names);
    for e in transcript {
        let dir = match e.said {
            Said::ToBot => "to",
            Said::ByBot => "from",
        };
        t.push_str(&format!(
            "{dir} {}: {}\n",
            player_number(e.seat),
            quote(&e.line)
        ));
    }
    for f in failures {
        t.push_str(&format!("# failure: {}\n", one_line(f)));
    }
    t
}

/// The moves of a transcript: what the bots printed, and the failures
/// outside the rules (`(seat, reason)`) with the transcript's length.
pub fn moves_of(transcript: &[Exchange], forfeits: &[(usize, String)]) -> Moves {
    Moves {
        ends_after: (!forfeits.is_empty()).then_some(transcript.len()),
        moves: transcript
            .iter()
            .filter(|e| e.said == Said::ByBot)
            .map(|e| Move {
                seat: e.seat,
                line: e.line.clone(),
            })
            .collect(),
        forfeits: forfeits.to_vec(),
    }
}

/// The moves form as text.
pub fn moves_text(setup: &Setup, island_name: &str, names: &[String], moves: &Moves) -> String {
    let mut t = header(MOVES_MAGIC, setup, island_name, names);
    t.push_str(&moves_lines(moves));
    t
}

/// The moves form without its header (what the store keeps: the setup is
/// the contest's), after the line that says its format
/// ([`STORED_MOVES_LINE`]).
pub fn moves_body(moves: &Moves) -> String {
    format!("{STORED_MOVES_LINE}\n{}", moves_lines(moves))
}

/// The moves' lines in format 2.
fn moves_lines(moves: &Moves) -> String {
    let mut t = String::new();
    for m in &moves.moves {
        t.push_str(&format!("{}: {}\n", player_number(m.seat), quote(&m.line)));
    }
    for (seat, reason) in &moves.forfeits {
        t.push_str(&format!(
            "! {}: {}\n",
            player_number(*seat),
            one_line(reason)
        ));
    }
    if let Some(n) = moves.ends_after {
        t.push_str(&format!("= {n}\n"));
    }
    t
}

/// Why a moves text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct MovesError {
    pub line: usize,
    pub what: String,
}

/// Reads a moves body (or a whole moves text: `#` lines are skipped) in
/// format 2 (its first line [`MOVES_MAGIC`] or [`STORED_MOVES_LINE`]:
/// players from 1) or else format 1 (seats from 0). `n_seats` bounds the
/// numbers.
pub fn parse_moves(text: &str, n_seats: usize) -> Result<Moves, MovesError> {
    let mut m = Moves::default();
    let first = text.lines().next().unwrap_or("");
    let from_one = first.starts_with(MOVES_MAGIC) || first.trim_end() == STORED_MOVES_LINE;
    let (word, lowest) = if from_one { ("player", 1) } else { ("seat", 0) };
    for (i, raw) in text.lines().enumerate() {
        let err = |what: &str| MovesError {
            line: i + 1,
            what: what.to_string(),
        };
        if raw.starts_with('#') || raw.is_empty() {
            continue;
        }
        if let Some(n) = raw.strip_prefix("= ") {
            m.ends_after = Some(n.parse().map_err(|_| err("`= N`: a number of lines"))?);
            continue;
        }
        if m.ends_after.is_some() {
            return Err(err("nothing follows `= N`"));
        }
        let (forfeit, rest) = match raw.strip_prefix("! ") {
            Some(r) => (true, r),
            None => (false, raw),
        };
        let (number, line) = rest
            .split_once(": ")
            .or_else(|| rest.strip_suffix(':').map(|s| (s, "")))
            .ok_or_else(|| err(&format!("expected `{}: LINE`", word.to_uppercase())))?;
        let number: usize = number
            .parse()
            .map_err(|_| err(&format!("a {word} number first")))?;
        let highest = n_seats + lowest - 1;
        if number < lowest || number > highest {
            return Err(err(&format!(
                "{word} {number}, but the {word}s are {lowest} to {highest}"
            )));
        }
        let seat = number - lowest;
        if forfeit {
            m.forfeits.push((seat, line.to_string()));
        } else {
            if !m.forfeits.is_empty() {
                return Err(err("a move after a failure"));
            }
            m.moves.push(Move {
                seat,
                line: unquote(line),
            });
        }
    }
    Ok(m)
}

/// Replays `moves` through `game` (each discipline's
/// [`super::seam::BotDiscipline::expand`] calls it with its game).
pub(crate) fn replay_moves<G: LineGame>(game: G, moves: &Moves) -> Vec<Exchange> {
    replay(
        Recorded::new(game, crate::discipline::game::TRANSCRIPT_CAP),
        moves,
    )
}

fn replay<G: LineGame>(mut game: Recorded<G>, moves: &Moves) -> Vec<Exchange> {
    let mut t = replay_to_end(&mut game, moves);
    if let Some(n) = moves.ends_after {
        t.truncate(n);
    }
    t
}

fn replay_to_end<G: LineGame>(game: &mut Recorded<G>, moves: &Moves) -> Vec<Exchange> {
    let mut next = moves.moves.iter();
    // Sends and expects alternate with moves; a send is bounded by the
    // game, so a step cap of a few per line noted is never reached by a
    // game that ends.
    let mut budget = 4 * crate::discipline::game::TRANSCRIPT_CAP;
    while budget > 0 {
        budget -= 1;
        match game.next() {
            Step::Send { .. } => {}
            Step::Expect { seat } => match next.next() {
                Some(m) => {
                    // A recorded move answers the seat asked for; anything
                    // else is a damaged record: stop there.
                    if m.seat != seat {
                        break;
                    }
                    if game.reply(seat, &m.line).is_err() {
                        let _ = game.next();
                        break;
                    }
                }
                None => {
                    for (seat, reason) in &moves.forfeits {
                        game.forfeit(*seat, reason);
                    }
                    break;
                }
            },
            Step::Over { .. } => break,
        }
    }
    std::mem::take(&mut game.transcript)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::footsteps::rules as footsteps;
    use crate::discipline::play::expand;
    use crate::discipline::ultimatum::rules as ultimatum;
    use crate::game::lines::play_scripted;

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

    #[test]
    fn moves_expand_to_the_recorded_transcript_in_every_discipline() {
        let p = ultimatum::Params { rounds: 7 };
        let mut k = 0;
        roundtrip(&Setup::Ultimatum(p), ultimatum::Match::new(p), |_, seen| {
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
        });
        let fp = footsteps::Params::default();
        roundtrip(&Setup::Footsteps(fp), footsteps::Game::new(fp), |_, _| {
            "3".into()
        });
    }

    #[test]
    fn a_rule_break_and_a_forfeit_replay_as_played() {
        // Seat 1 answers garbage: the line is noted, then the farewell.
        let p = ultimatum::Params { rounds: 3 };
        let mut rec = Recorded::new(ultimatum::Match::new(p), 1000);
        assert!(play_scripted(&mut rec, |_, _| "lots".into(), 1000).is_err());
        let _ = rec.next();
        let m = moves_of(&rec.transcript, &[]);
        assert_eq!(expand(&Setup::Ultimatum(p), &m), rec.transcript);
        // Moves that run out: the failed seat forfeits and nothing follows.
        let m = Moves {
            moves: Vec::new(),
            forfeits: vec![(0, "crashed".into())],
            ends_after: None,
        };
        let t = expand(&Setup::Ultimatum(p), &m);
        assert!(!t.is_empty() && t.iter().all(|e| e.said == Said::ToBot));
        // A bot noticed gone at a write: the count says where it stopped.
        let m = Moves {
            ends_after: Some(1),
            ..m
        };
        assert_eq!(expand(&Setup::Ultimatum(p), &m).len(), 1);
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
        let setup = Setup::Ultimatum(p);
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
}
