//! A team's byte budget for its kept transcripts (issue 38, F8): what the
//! kept games' moves may hold of one team's lines, in the store's unit
//! (packed bytes: what the database holds), and the note a game kept
//! without its moves carries, in words for the pairing page and the
//! transcripts mail.
//!
//! The budget, `[site] transcript_bytes_per_team` (64 MiB), is shared out
//! evenly among the kept games a team can be seated in (at most: its
//! discipline's `kept_games_per_team`, from the entries, the materials,
//! `[site] transcripts_per_pairing` and the discipline's section; two
//! seats: a game per ordered pair and kept repetition, 2 × teams × kept
//! repetitions): each kept game may hold at most
//! that share of one team's lines ([`TranscriptBudget::per_game`]). A
//! game's stored bytes are charged to its teams in proportion to what each
//! team's lines alone pack to ([`charges`]), so the charges add up to what
//! the database holds (rounded up by at most a byte a seat). A game whose
//! team is charged more than the share is kept without its moves (result,
//! failures and CPU as always), whichever team's lines they were; the
//! note names that team. The share, not a running total, decides: which
//! games keep their moves depends only on the games themselves, never on
//! the order in which they finish (load, threads, workers), so one seed
//! still makes the same site.
//!
//! What it deliberately does not do: store a game (`crate::contest::bots`
//! asks [`TranscriptBudget::judge`] before it stores the moves) or write a
//! page or a mail (they call [`MovesNotKept::sentence`]).

use serde::{Deserialize, Serialize};

use super::model::{seam_of, BotContest, Result};
use crate::config::Config;
use crate::discipline::transcript::{packed_len, player_number};
use crate::tournament::TeamId;

/// What the kept transcripts of one contest may hold of a team's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TranscriptBudget {
    /// `[site] transcript_bytes_per_team`: packed bytes of a team's lines
    /// in all its kept games.
    pub per_team: u64,
    /// The kept games it is shared by: the most a team can be seated in
    /// (`BotDiscipline::kept_games_per_team`; at least 1).
    pub kept_games: u64,
    /// What one kept game may hold of one team's lines: `per_team /
    /// kept_games`.
    pub per_game: u64,
}

impl TranscriptBudget {
    /// The budget of contest `c` under `config`.
    pub fn of(c: &BotContest, config: &Config) -> Result<TranscriptBudget> {
        let kept_games = seam_of(c)?.kept_games_per_team(
            &config.sections(),
            c.entries.len(),
            c.materials.len(),
            config.site.transcripts_per_pairing,
        );
        Ok(Self::shared(
            config.site.transcript_bytes_per_team,
            kept_games,
        ))
    }

    /// `per_team` shared by `kept_games` (at least one).
    pub fn shared(per_team: u64, kept_games: u64) -> TranscriptBudget {
        let kept_games = kept_games.max(1);
        TranscriptBudget {
            per_team,
            kept_games,
            per_game: per_team / kept_games,
        }
    }

    /// Whether a game's moves (`body`, the moves form the store keeps as
    /// `stored` bytes) may be kept: `None` when no team of `seats` is
    /// charged more than [`Self::per_game`], else the note saying whose
    /// lines were more. A body no larger than the share is kept without
    /// being measured again (no team can be charged more than the whole).
    pub fn judge(&self, body: &str, stored: usize, seats: &[TeamId]) -> Option<MovesNotKept> {
        if stored as u64 <= self.per_game {
            return None;
        }
        let charged = charges(body, stored, seats.len());
        // A team seated twice (a game against itself) is charged both.
        let team_charge = |t: &TeamId| -> u64 {
            seats
                .iter()
                .zip(&charged)
                .filter(|(s, _)| *s == t)
                .map(|(_, c)| *c)
                .sum()
        };
        let over: Vec<usize> = (0..seats.len())
            .filter(|&i| team_charge(&seats[i]) > self.per_game)
            .collect();
        if over.is_empty() {
            return None;
        }
        Some(MovesNotKept {
            over,
            charged,
            per_game: self.per_game,
            per_team: self.per_team,
            kept_games: self.kept_games,
        })
    }
}

/// The `stored` bytes of a moves body split among its `seats` in
/// proportion to what each seat's lines (`P: LINE`) pack to where they
/// stand in the body, each share rounded up; the header, a forfeit's
/// reason and the line count (the referee's words) are nobody's. A body
/// without a bot's line charges nobody.
///
/// Where they stand, not put together: the packer (zlib) finds a repeat
/// only within 32 KiB before it, so a team's lines that repeat within that
/// window alone are apart by more with the other team's lines between
/// them, and then pack to as much as they hold. Measured put together
/// they would look small and the other team would be charged the game
/// (red team, F9:
/// `a_team_is_not_charged_for_lines_that_pack_well_only_without_its_opponents`).
/// So a seat's measure is [`packed_len`] of the body with every byte that
/// is not its lines' a space (line ends kept: the same distances), less
/// what the same text packs to with the seat's lines made spaces too (what
/// the spaces and line ends cost, which are nobody's), at least a byte.
///
/// The other lines between two of the seat's lines stand for at most
/// [`GAP_BYTES`] (1 KiB) there: distance another team makes by printing
/// more is that team's doing, not the seat's. Without the cap a team could
/// print 33 kB of lines that pack to nothing (one letter) after each of
/// its opponent's lines, so that the opponent's same honest line each turn
/// was more than the window from the one before and charged whole every
/// time: 152 times what it packs to without the padding, and named (red
/// team, F10:
/// `a_team_is_not_charged_for_its_opponents_padding_between_its_lines`).
/// A gap of 1 KiB keeps the distances of a turn's line or a few of an
/// honest opponent as they are, and a repeat of the seat's own further
/// back than the window still costs the seat.
pub fn charges(body: &str, stored: usize, seats: usize) -> Vec<u64> {
    let seat_of = |l: &str| -> Option<usize> {
        let (player, _) = l.split_once(": ")?;
        (0..seats).find(|&s| player == player_number(s).to_string())
    };
    let owners: Vec<(&str, Option<usize>)> = body
        .split_inclusive('\n')
        .map(|l| (l, seat_of(l.trim_end_matches(['\n', '\r']))))
        .collect();
    // The body with only `seat`'s lines as they are and the other lines
    // as spaces, at most GAP_BYTES of them between two of the seat's
    // lines; the same with the seat's lines spaces too (what the spaces
    // and line ends cost, which are nobody's); and whether a gap was cut.
    let only = |seat: usize| -> (String, String, bool) {
        let mut text = String::with_capacity(body.len());
        let mut blank = String::with_capacity(body.len());
        let (mut gap_start, mut full, mut cut) = (0, false, false);
        let spaces = |out: &mut String, l: &str| {
            let end = l.len() - usize::from(l.ends_with('\n'));
            out.extend(std::iter::repeat_n(' ', end));
            out.push_str(&l[end..]);
        };
        for &(l, owner) in &owners {
            if owner == Some(seat) {
                text.push_str(l);
                spaces(&mut blank, l);
                gap_start = text.len();
                full = false;
            } else if !full {
                spaces(&mut text, l);
                spaces(&mut blank, l);
                if text.len() - gap_start > GAP_BYTES {
                    // Spaces only since gap_start: any byte is a boundary.
                    for t in [&mut text, &mut blank] {
                        t.truncate(gap_start + GAP_BYTES - 1);
                        t.push('\n');
                    }
                    (full, cut) = (true, true);
                }
            }
        }
        (text, blank, cut)
    };
    let speaking: Vec<bool> = (0..seats)
        .map(|seat| owners.iter().any(|&(_, o)| o == Some(seat)))
        .collect();
    // One seat's lines (the flooding island's only seat): all its, unmeasured.
    let single = speaking.iter().filter(|&&s| s).count() == 1;
    let mut blank: Option<usize> = None;
    let alone: Vec<u64> = (0..seats)
        .map(|seat| {
            if !speaking[seat] {
                return 0;
            }
            if single {
                return 1;
            }
            let (text, spaces, cut) = only(seat);
            // No gap cut: the spaces are every seat's (packed once).
            let blank = if cut {
                packed_len(&spaces)
            } else {
                *blank.get_or_insert_with(|| packed_len(&spaces))
            };
            packed_len(&text).saturating_sub(blank).max(1) as u64
        })
        .collect();
    let all: u128 = alone.iter().map(|&a| u128::from(a)).sum();
    alone
        .iter()
        .map(|&a| {
            if all == 0 {
                0
            } else {
                (stored as u128 * u128::from(a)).div_ceil(all) as u64
            }
        })
        .collect()
}

/// The most bytes of other lines [`charges`] lets stand between two of a
/// seat's lines: a turn's line or a few of an honest opponent (a line is
/// kept up to 256 bytes, up to four times that as the body writes its
/// escapes), 32 times less than the packer's window.
pub const GAP_BYTES: usize = 1 << 10;

/// Why a game that keeps its transcript was stored without its moves:
/// kept in the game's record (`moves_not_kept` beside what was played).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovesNotKept {
    /// The seats whose team was charged more than a kept game may hold.
    pub over: Vec<usize>,
    /// Each seat's charge ([`charges`]), packed bytes.
    pub charged: Vec<u64>,
    /// What a kept game could hold of one team's lines.
    pub per_game: u64,
    /// The team's budget, and the kept games it was shared by.
    pub per_team: u64,
    pub kept_games: u64,
}

impl MovesNotKept {
    /// In words, for people (`names`: the seats' teams): "this game's moves
    /// were not kept: …".
    pub fn sentence(&self, names: &[String]) -> String {
        let mut whose: Vec<String> = Vec::new();
        for &seat in &self.over {
            let name = names.get(seat).cloned().unwrap_or_else(|| "?".into());
            let line = format!(
                "team {name}'s lines take {} packed",
                size(self.charged.get(seat).copied().unwrap_or(0))
            );
            if !whose.contains(&line) {
                whose.push(line);
            }
        }
        format!(
            "this game's moves were not kept: {}, more than the {} a kept game holds \
             of one team's lines (the {} kept per team of this contest, shared by its {} \
             kept games); the result stands",
            whose.join(" and "),
            size(self.per_game),
            size(self.per_team),
            self.kept_games
        )
    }
}

/// Bytes for people: "812 bytes", "164.0 KiB", "64.0 MiB".
pub fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    if bytes >= KIB * KIB {
        format!("{:.1} MiB", bytes as f64 / (KIB * KIB) as f64)
    } else if bytes >= KIB {
        format!("{:.1} KiB", bytes as f64 / KIB as f64)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A team's lines are charged by what they alone pack to: random
    /// lines (which do not pack) take almost all of a game's bytes beside
    /// a few short ones, and the charges add up to the stored bytes.
    #[test]
    fn a_games_bytes_are_charged_to_the_team_whose_lines_they_are() {
        let mut body = String::from("# knobeln moves 2\n");
        let mut x: u64 = 7;
        for i in 0..2000 {
            let junk: String = (0..100)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    char::from(b'!' + (x >> 58) as u8)
                })
                .collect();
            body.push_str(&format!("1: {junk}\n2: {}\n", i % 3));
        }
        body.push_str("! 2: gave up\n= 4000\n");
        let stored = crate::discipline::transcript::pack_moves(&body)
            .unwrap()
            .len();
        let c = charges(&body, stored, 2);
        assert!(c[0] + c[1] >= stored as u64 && c[0] + c[1] <= stored as u64 + 2);
        assert!(c[1] * 50 < c[0], "{c:?}");
        let budget = TranscriptBudget::shared(stored as u64 * 10, 20);
        let note = budget
            .judge(&body, stored, &[TeamId(1), TeamId(2)])
            .unwrap();
        assert_eq!(note.over, vec![0]);
        let words = note.sentence(&["Loud".into(), "Quiet".into()]);
        assert!(words.starts_with("this game's moves were not kept: team Loud's lines take"));
        assert!(!words.contains("Quiet"), "{words}");
        // Within the share: kept, nothing measured.
        assert_eq!(
            TranscriptBudget::shared(stored as u64, 1).judge(
                &body,
                stored,
                &[TeamId(1), TeamId(2)]
            ),
            None
        );
        // A team against itself is charged both seats: more than either.
        let half = TranscriptBudget::shared(c[0].max(c[1]) + 1, 1);
        assert!(half.per_game < stored as u64);
        assert_eq!(half.judge(&body, stored, &[TeamId(3), TeamId(4)]), None);
        assert_eq!(
            half.judge(&body, stored, &[TeamId(3), TeamId(3)])
                .unwrap()
                .over,
            vec![0, 1]
        );
    }
    /// Red team (F9): a team whose lines repeat a block just inside the
    /// packer's 32 KiB window packs well alone, but with its opponent's
    /// lines between them the repeats fall outside the window and the
    /// stored game is as large as the block times its repetitions. Those
    /// bytes are the repeating team's: the opponent, whose own lines are a
    /// few kB, must not be charged them (before, the charge followed what
    /// each team's lines pack to when put together without the other's,
    /// and the opponent was charged most of the game and named).
    #[test]
    fn a_team_is_not_charged_for_lines_that_pack_well_only_without_its_opponents() {
        use crate::discipline::transcript::{pack_moves, packed_len, STORED_MOVES_LINE};
        let mut x: u64 = 11;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 58
        };
        // 100 lines of 300 bytes: a block of 30,000 bytes, within the window.
        let block: Vec<String> = (0..100)
            .map(|_| (0..296).map(|_| char::from(b'!' + next() as u8)).collect())
            .collect();
        let mut body = format!("{STORED_MOVES_LINE}\n");
        let mut theirs = String::new();
        for _ in 0..30 {
            for line in &block {
                body.push_str(&format!("1: {line}\n"));
                // The opponent's honest move: 36 digits, 40 bytes a line.
                let mv: String = (0..36)
                    .map(|_| char::from(b'0' + (next() % 10) as u8))
                    .collect();
                body.push_str(&format!("2: {mv}\n"));
                theirs.push_str(&format!("2: {mv}\n"));
            }
        }
        body.push_str("= 6000\n");
        let stored = pack_moves(&body).unwrap().len();
        let honest = packed_len(&theirs) as u64;
        let c = charges(&body, stored, 2);
        assert!(c[0] + c[1] >= stored as u64 && c[0] + c[1] <= stored as u64 + 2);
        assert!(
            stored as u64 > 10 * honest,
            "the attack makes the game large: {stored} against {honest}"
        );
        assert!(
            c[1] <= 2 * honest,
            "the opponent is charged {} for lines that pack to {honest} (stored {stored}, {c:?})",
            c[1]
        );
        // A share the repeating team's lines exceed and the opponent's
        // do not: only the repeating team is named.
        let budget = TranscriptBudget::shared(4 * honest, 1);
        let note = budget
            .judge(&body, stored, &[TeamId(1), TeamId(2)])
            .unwrap();
        assert_eq!(note.over, vec![0], "{c:?}");
        // Both teams printing the same lines are charged alike.
        let same: String = block.iter().map(|l| format!("1: {l}\n2: {l}\n")).collect();
        let same = format!("{STORED_MOVES_LINE}\n{same}= 200\n");
        let stored = pack_moves(&same).unwrap().len();
        let c = charges(&same, stored, 2);
        assert!(
            c[0].abs_diff(c[1]) * 20 < stored as u64,
            "{c:?} of {stored}"
        );
        // A seat alone (the flooding island) is charged the game, unmeasured.
        assert_eq!(charges("1: a\n= 1\n", 9, 1), vec![9]);
    }

    /// Red team (F10): the mirror of F9's attack. A team pads the game with
    /// lines that pack to almost nothing alone (a run of one letter) but
    /// stand between its opponent's lines, 33 kB of them after each, so
    /// every one of the opponent's lines is more than the packer's 32 KiB
    /// window from the one before. The opponent prints the same honest line
    /// every turn: alone it packs to a few hundred bytes, where it stands it
    /// costs its whole length each turn. The stored game's bytes are there
    /// because of the padding, so the padding team caused them; the
    /// opponent must not be charged far more than its lines pack to in a
    /// game without the padding, nor named.
    #[test]
    fn a_team_is_not_charged_for_its_opponents_padding_between_its_lines() {
        use crate::discipline::transcript::{
            pack_moves, packed_len, MAX_MOVES_BYTES, STORED_MOVES_LINE,
        };
        let mut x: u64 = 13;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 58
        };
        // The honest team's line: the same 250 bytes every turn (its view
        // of a board, say), as a bot of the seeds' disciplines may print.
        let honest_line: String = (0..250).map(|_| char::from(b'!' + next() as u8)).collect();
        let pad = "x".repeat(250);
        let mut body = format!("{STORED_MOVES_LINE}\n");
        let mut quiet = format!("{STORED_MOVES_LINE}\n");
        let turns = 240;
        for _ in 0..turns {
            for _ in 0..130 {
                body.push_str(&format!("1: {pad}\n"));
            }
            body.push_str(&format!("2: {honest_line}\n"));
            // The same game with the padding team printing one short line.
            quiet.push_str(&format!("1: x\n2: {honest_line}\n"));
        }
        body.push_str("= 240\n");
        quiet.push_str("= 240\n");
        assert!(
            body.len() <= MAX_MOVES_BYTES,
            "{} bytes: a kept body",
            body.len()
        );
        let stored = pack_moves(&body).unwrap().len();
        let quiet_stored = pack_moves(&quiet).unwrap().len();
        let c = charges(&body, stored, 2);
        let without = charges(&quiet, quiet_stored, 2);
        let padding_alone = packed_len(&body.replace(&format!("2: {honest_line}\n"), "")) as u64;
        // Before: the honest team 83,664 bytes of 94,976 (152 times its 552
        // without the padding), the padding team 11,313.
        assert!(
            c[1] * 16 <= stored as u64 && c[0] * 16 >= 15 * stored as u64,
            "the honest team is charged {} where it is charged {} without the padding; \
             the padding team {} (its lines alone pack to {padding_alone}); stored {stored} \
             against {quiet_stored} without the padding",
            c[1],
            without[1],
            c[0]
        );
        // A share the game's bytes exceed, which the honest lines where
        // they stand fit: only the padding team is named.
        let budget = TranscriptBudget::shared(stored as u64 / 4, 1);
        let note = budget
            .judge(&body, stored, &[TeamId(1), TeamId(2)])
            .unwrap();
        assert_eq!(note.over, vec![0], "named {:?}, charged {c:?}", note.over);
    }
}
