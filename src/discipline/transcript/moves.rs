//! The moves form of a bot game's transcript and the way back to the full
//! transcript: [`Moves`] (what the bots printed, the failures outside the
//! rules, where the game stopped), reading and writing its body, and
//! [`replay_moves`], which replays moves through a game's own rules. See
//! the parent module for both forms.
//!
//! What it deliberately does not do: know which discipline a game is of
//! (each discipline's seam replays its own game) or write the headers
//! (the parent module, which asks the discipline for its setup's lines).

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

/// A name on one header line: no line breaks (control characters as
/// blanks), a bidi mark, override or isolate as `\u{202e}` (as
/// [`quote`] writes it).
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.push(' ');
        } else if crate::draw::hides(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A line as written after `to P: ` or `P: `: control characters (a
/// stray CR, NUL, DEL, C1) as `\xNN`, a bidi mark, override or isolate
/// (the others [`crate::draw::hides`] names) as `\u{202e}`, a backslash
/// doubled, so one exchange stays one line, reads back the same and hides
/// or reorders nothing where the file is read.
pub fn quote(line: &str) -> String {
    let mut s = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32)) => {
                s.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if crate::draw::hides(c) => s.push_str(&format!("\\u{{{:x}}}", c as u32)),
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
                // Hex digits only: `from_str_radix` would take a sign.
                let hex = rest.len() == 2 && rest.bytes().all(|b| b.is_ascii_hexdigit());
                match u8::from_str_radix(&rest, 16) {
                    Ok(b) if hex => {
                        chars.next();
                        chars.next();
                        chars.next();
                        out.push(b as char);
                    }
                    _ => out.push('\\'),
                }
            }
            Some('u') => {
                // `\u{XXXX}`: a character [`quote`] wrote by its number.
                let rest: String = chars.clone().skip(1).take(8).collect();
                let read = rest
                    .strip_prefix('{')
                    .and_then(|r| r.split_once('}'))
                    .filter(|(hex, _)| {
                        (1..=6).contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit())
                    })
                    .and_then(|(hex, _)| {
                        let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                        Some((c, hex.len()))
                    });
                match read {
                    Some((c, digits)) => {
                        // `u`, `{`, the digits and `}`.
                        for _ in 0..digits + 3 {
                            chars.next();
                        }
                        out.push(c);
                    }
                    None => out.push('\\'),
                }
            }
            _ => out.push('\\'),
        }
    }
    out
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

/// The moves form without its header (what the store keeps: the setup is
/// the contest's), after the line that says its format
/// ([`STORED_MOVES_LINE`]).
pub fn moves_body(moves: &Moves) -> String {
    format!("{STORED_MOVES_LINE}\n{}", moves_lines(moves))
}

/// The moves' lines in format 2.
pub(super) fn moves_lines(moves: &Moves) -> String {
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
/// [`BotDiscipline::expand`](crate::discipline::seam::BotDiscipline::expand) calls it with its game).
pub fn replay_moves<G: LineGame>(game: G, moves: &Moves) -> Vec<Exchange> {
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
