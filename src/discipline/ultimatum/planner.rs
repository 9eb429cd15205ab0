//! The ultimatum tournament (freiesMagazin 2011): the order of the matches
//! and the result table `Bot Plus Minus Won Draw Lost`.
//!
//! # Matches
//!
//! Every bot plays every other bot in both orders: N·(N−1) matches, which
//! make one *repetition*. The order is the seed's (its `start_contest.sh`):
//! for bots A, B, C it is A-B, A-C, B-A, B-C, C-A, C-B, the first named bot
//! taking seat 0 (the first proposer of every round). A bot never plays
//! itself. The whole round robin is repeated `repetitions` times (100 in
//! the contest), always in the same order ("man trifft im x-ten Match
//! immer auf den gleichen Gegner"). A match is identified by its
//! [`MatchKey`]: the repetition and the *slot* (its place in the order).
//!
//! # Kept working folders: the playing order
//!
//! When a bot's working folder lasts across its matches (the FAQ: "a file
//! stays until the bot that created it deletes it"), what a match does can
//! depend on every earlier match of its two bots, so each bot's matches
//! must be played in one fixed order for a seed to give one tournament.
//! The seed's order is a chain (every match of row A involves A), which
//! would play all N·(N−1)·repetitions matches one after another. The
//! matches are therefore played in *phases* ([`phase`]), a round robin by
//! the circle method: in every phase each bot plays at most one match, so
//! a phase's matches are independent and run in parallel; phases run one
//! after another. Each unordered pair meets once in the first 2·⌈N/2⌉−1
//! phases (lower entry in seat 0) and once, seats swapped, in the next as
//! many; a repetition is 2·(2·⌈N/2⌉−1) phases, every repetition in the same
//! order, so the x-th match of a bot is always against the same opponent,
//! as in the seed. Keys ([`MatchKey`]) stay the seed's slots.
//!
//! # The table
//!
//! For each bot, over all its matches of all repetitions:
//! - **Plus**: the points it scored, **Minus**: the points its opponents
//!   scored against it, both averaged over the repetitions ("aus den
//!   Punkten der Mittelwert gebildet") and shown rounded to the nearest
//!   whole point (halves up). The table keeps the exact totals.
//! - **Won / Draw / Lost**: one per slot, 2·(N−1) in all, as in the seed's
//!   table (each of its three bots has 4). A slot is decided over all its
//!   repetitions: the bot that forfeited more of them (broke the protocol,
//!   or whatever the caller counts as a forfeit) loses it; otherwise the
//!   bot with more points in the slot's matches together wins it, equal
//!   points draw.
//! - **Forfeits**: how many matches the bot forfeited.
//!
//! The points of a match are the points that count
//! ([`crate::discipline::ultimatum::rules::MatchOutcome::scored`]): a bot that forfeits a
//! match scores 0 in it, its opponent keeps what it earned.
//!
//! # Ranking
//!
//! By Plus, descending; equal Plus is decided by Minus, *descending* (the
//! FAQ: a bot that leaves its opponents more has played better for the
//! community). Plus and Minus are compared as exact totals over the
//! repetitions, which orders exactly as the averages do since every bot
//! plays the same number of matches. Bots equal in both share the place;
//! they are listed by name (byte order), then by team id.
//!
//! What it deliberately does not do: play matches, know the game's
//! protocol, store or format anything.

use crate::tournament::TeamId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Tournament parameters (the match length is the game's
/// [`crate::discipline::ultimatum::rules::Params`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// How often the whole round robin is played.
    pub repetitions: u32,
}

impl Default for Config {
    /// The 2011 contest: 100 repetitions.
    fn default() -> Self {
        Config { repetitions: 100 }
    }
}

/// Which match: the repetition (0-based) and the slot in the round robin's
/// order (0-based, `0..n·(n−1)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MatchKey {
    pub repetition: u32,
    pub slot: u32,
}

impl std::fmt::Display for MatchKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "repetition {} match {}",
            self.repetition + 1,
            self.slot + 1
        )
    }
}

/// A match to play: `seats[0]` proposes first in every round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledMatch {
    pub key: MatchKey,
    pub seats: [TeamId; 2],
}

/// A played match, as the caller reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayedMatch {
    pub key: MatchKey,
    /// The points that count for each seat (0 for a seat that forfeited).
    pub points: [u64; 2],
    /// The seat that forfeited the match, if one did.
    pub forfeited_by: Option<usize>,
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// 1-based; shared by bots equal in Plus and Minus.
    pub place: u32,
    pub team: TeamId,
    pub name: String,
    /// Plus and Minus, averaged over the repetitions and rounded.
    pub plus: u64,
    pub minus: u64,
    /// The exact sums over all repetitions.
    pub plus_total: u64,
    pub minus_total: u64,
    pub won: u32,
    pub drawn: u32,
    pub lost: u32,
    pub forfeits: u32,
}

/// The result table, in ranking order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    pub repetitions: u32,
    pub rows: Vec<Row>,
    /// The organizers' prize per place (`[ultimatum] prize`): the first
    /// [`PRIZE_PLACES`] places get P / (20000 · (N − 1)) euros, P their
    /// Plus; empty when the contest has no prize.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prizes: Vec<PrizeRow>,
}

/// A place's prize: the 2011 organizers' Amazon voucher.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrizeRow {
    pub team: TeamId,
    /// In euro cents, rounded half up.
    pub cents: u64,
}

/// The places that win a prize (2011: "die ersten drei Plätze").
pub const PRIZE_PLACES: u32 = 3;

/// The constant of the 2011 prize rule ("weil wir sonst mehrere Millionen
/// an Preisgeld ausgeben müssten").
pub const PRIZE_DIVISOR: u64 = 20_000;

/// The prize of a bot with Plus `plus` among `n_bots`: P / (20000 · (N − 1))
/// euros, in cents rounded half up (integers only: the same on every
/// machine). Zero for a field of one.
pub fn prize_cents(plus: u64, n_bots: usize) -> u64 {
    let d = PRIZE_DIVISOR as u128 * (n_bots as u128).saturating_sub(1);
    if d == 0 {
        return 0;
    }
    ((plus as u128 * 100 * 2 + d) / (2 * d)) as u64
}

impl Table {
    /// The table with the organizers' prizes for the first places.
    pub fn with_prizes(mut self) -> Table {
        let n = self.rows.len();
        self.prizes = self
            .rows
            .iter()
            .filter(|r| r.place <= PRIZE_PLACES)
            .map(|r| PrizeRow {
                team: r.team,
                cents: prize_cents(r.plus, n),
            })
            .collect();
        self
    }

    /// The prize of `team`, if it won one.
    pub fn prize_of(&self, team: TeamId) -> Option<u64> {
        self.prizes.iter().find(|p| p.team == team).map(|p| p.cents)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("team {0} is entered twice")]
    DuplicateEntry(TeamId),
    #[error("{0} is not a match of this tournament")]
    UnknownMatch(MatchKey),
    #[error("{0} is reported twice")]
    DuplicateMatch(MatchKey),
    #[error("{0} names seat {1} as forfeiting; seats are 0 and 1")]
    BadSeat(MatchKey, usize),
    #[error("{missing} matches are not played yet (the first is {first})")]
    NotFinished { missing: u64, first: MatchKey },
}

/// Matches per repetition: n·(n−1).
pub fn n_slots(n_entries: usize) -> u32 {
    (n_entries * n_entries.saturating_sub(1)) as u32
}

/// The bots of a slot: slot `i·(n−1) + k` is entry `i` against the `k`-th
/// other entry (in entry order, skipping `i`). `slot < n_slots(n)`.
pub fn slot_seats(entries: &[TeamId], slot: u32) -> [TeamId; 2] {
    let others = entries.len() - 1;
    let (i, k) = (slot as usize / others, slot as usize % others);
    let j = if k < i { k } else { k + 1 };
    [entries[i], entries[j]]
}

/// Phases per leg of a repetition: `m − 1` for `m` entries rounded up to
/// even (an odd field gets a bye).
fn phases_per_leg(n_entries: usize) -> u64 {
    (n_entries + n_entries % 2).saturating_sub(1) as u64
}

/// Phases per repetition ([`phase`]).
pub fn phases_per_repetition(n_entries: usize) -> u64 {
    2 * phases_per_leg(n_entries)
}

/// The phase a match is played in when working folders are kept (see the
/// module documentation): every bot plays at most one match per phase, and
/// each bot meets its opponents in the same order in every repetition.
/// `key.slot < n_slots(n_entries)`.
pub fn phase(n_entries: usize, key: &MatchKey) -> u64 {
    let others = n_entries - 1;
    let (i, k) = (key.slot as usize / others, key.slot as usize % others);
    let j = if k < i { k } else { k + 1 };
    let legs = phases_per_leg(n_entries);
    let (lo, hi) = (i.min(j) as u64, i.max(j) as u64);
    // The circle method on m = legs + 1 places: the last place is fixed
    // and meets place r in round r; places a, b < m − 1 meet in the round
    // r with a + b ≡ 2r (mod m − 1), i.e. r = (a + b)·(m/2) mod (m − 1).
    let round = if hi == legs {
        lo
    } else {
        ((lo + hi) * legs.div_ceil(2)) % legs
    };
    let leg = u64::from(i > j);
    u64::from(key.repetition) * 2 * legs + leg * legs + round
}

/// Every match of the tournament, in playing order: the round robin, then
/// again, `config.repetitions` times.
pub fn schedule<'a>(
    entries: &'a [TeamId],
    config: &Config,
) -> impl Iterator<Item = ScheduledMatch> + 'a {
    let slots = n_slots(entries.len());
    (0..config.repetitions).flat_map(move |repetition| {
        (0..slots).map(move |slot| ScheduledMatch {
            key: MatchKey { repetition, slot },
            seats: slot_seats(entries, slot),
        })
    })
}

/// The matches of phase `p` ([`phase`]), in slot order, made directly
/// (not by walking the whole schedule: a contest at the seed's size has
/// 3.98 million matches in 39,800 phases). The circle method backwards:
/// in round `r` the place `r` meets the fixed place (an even field) or
/// sits out (an odd one), and places `a`, `b` below it meet where
/// `a + b ≡ 2r` (mod the rounds of a leg).
pub fn phase_matches(entries: &[TeamId], p: u64) -> Vec<ScheduledMatch> {
    let n = entries.len();
    if n < 2 {
        return Vec::new();
    }
    let legs = phases_per_leg(n);
    let repetition = (p / (2 * legs)) as u32;
    let leg = (p / legs) % 2;
    let round = p % legs;
    let mut out = Vec::with_capacity(n / 2);
    for lo in 0..legs.min(n as u64) {
        let hi = if lo == round {
            if n.is_multiple_of(2) {
                legs
            } else {
                continue;
            }
        } else {
            (2 * round + 2 * legs - lo) % legs
        };
        if hi <= lo || hi >= n as u64 {
            continue;
        }
        let (i, j) = if leg == 0 { (lo, hi) } else { (hi, lo) };
        let k = if j < i { j } else { j - 1 };
        let slot = (i * (n as u64 - 1) + k) as u32;
        out.push(ScheduledMatch {
            key: MatchKey { repetition, slot },
            seats: slot_seats(entries, slot),
        });
    }
    out.sort_unstable_by_key(|m| m.key.slot);
    out
}

/// Averaged and rounded (halves up): `total / count`.
fn mean_rounded(total: u64, count: u32) -> u64 {
    if count == 0 {
        return 0;
    }
    let (t, c) = (total as u128, count as u128);
    ((2 * t + c) / (2 * c)) as u64
}

/// A slot decided over all its repetitions, for the side whose points
/// and forfeits come first: the side that forfeited more matches loses;
/// otherwise more points win and equal points draw (`Greater` is won).
pub fn slot_result(points: [u64; 2], forfeits: [u32; 2]) -> std::cmp::Ordering {
    forfeits[1]
        .cmp(&forfeits[0])
        .then(points[0].cmp(&points[1]))
}

/// The result table of a finished tournament. `played` must hold every
/// match of [`schedule`] exactly once (in any order); `names` gives a
/// bot's name for the table and the listing order of shared places.
pub fn table(
    entries: &[TeamId],
    config: &Config,
    played: &[PlayedMatch],
    names: &dyn Fn(TeamId) -> String,
) -> Result<Table, TableError> {
    let mut seen_entries = BTreeSet::new();
    for &t in entries {
        if !seen_entries.insert(t) {
            return Err(TableError::DuplicateEntry(t));
        }
    }
    let slots = n_slots(entries.len());
    let mut by_key: BTreeMap<MatchKey, &PlayedMatch> = BTreeMap::new();
    for m in played {
        if m.key.repetition >= config.repetitions || m.key.slot >= slots {
            return Err(TableError::UnknownMatch(m.key));
        }
        if let Some(seat) = m.forfeited_by.filter(|&s| s > 1) {
            return Err(TableError::BadSeat(m.key, seat));
        }
        if by_key.insert(m.key, m).is_some() {
            return Err(TableError::DuplicateMatch(m.key));
        }
    }
    let expected = slots as u64 * config.repetitions as u64;
    if (by_key.len() as u64) < expected {
        let first = schedule(entries, config)
            .map(|s| s.key)
            .find(|k| !by_key.contains_key(k))
            .expect("a missing match");
        return Err(TableError::NotFinished {
            missing: expected - by_key.len() as u64,
            first,
        });
    }

    let mut sums = vec![SlotSums::default(); slots as usize];
    for m in by_key.values() {
        sums[m.key.slot as usize].add(m);
    }
    Ok(table_of_sums(entries, config, &sums, names))
}

/// One slot's matches summed over its repetitions: the points and the
/// forfeits of each seat (what decides the slot, [`slot_result`], and the
/// bots' Plus and Minus).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlotSums {
    pub points: [u64; 2],
    pub forfeits: [u32; 2],
}

impl SlotSums {
    /// Counts a played match of the slot.
    pub fn add(&mut self, m: &PlayedMatch) {
        self.points[0] += m.points[0];
        self.points[1] += m.points[1];
        if let Some(seat) = m.forfeited_by {
            self.forfeits[seat] += 1;
        }
    }
}

/// The result table from every slot's sums (`sums[slot]`, each over all
/// its repetitions): what [`table`] makes of the played matches, for a
/// caller that keeps only the sums (the contest run's planner, fed one
/// stored match at a time). `entries` without duplicates; every match
/// counted (the caller checks, as [`table`] does).
pub fn table_of_sums(
    entries: &[TeamId],
    config: &Config,
    sums: &[SlotSums],
    names: &dyn Fn(TeamId) -> String,
) -> Table {
    #[derive(Default)]
    struct Tally {
        plus: u64,
        minus: u64,
        won: u32,
        drawn: u32,
        lost: u32,
        forfeits: u32,
    }
    let mut tally: BTreeMap<TeamId, Tally> =
        entries.iter().map(|&t| (t, Tally::default())).collect();
    for (slot, sum) in (0..).zip(sums) {
        let seats = slot_seats(entries, slot);
        let SlotSums { points, forfeits } = *sum;
        for side in 0..2 {
            let t = tally.get_mut(&seats[side]).expect("entered");
            t.plus += points[side];
            t.minus += points[1 - side];
            t.forfeits += forfeits[side];
            let mine = slot_result(
                [points[side], points[1 - side]],
                [forfeits[side], forfeits[1 - side]],
            );
            match mine {
                std::cmp::Ordering::Greater => t.won += 1,
                std::cmp::Ordering::Equal => t.drawn += 1,
                std::cmp::Ordering::Less => t.lost += 1,
            }
        }
    }

    let mut rows: Vec<Row> = tally
        .into_iter()
        .map(|(team, t)| Row {
            place: 0,
            team,
            name: names(team),
            plus: mean_rounded(t.plus, config.repetitions),
            minus: mean_rounded(t.minus, config.repetitions),
            plus_total: t.plus,
            minus_total: t.minus,
            won: t.won,
            drawn: t.drawn,
            lost: t.lost,
            forfeits: t.forfeits,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.plus_total
            .cmp(&a.plus_total)
            .then(b.minus_total.cmp(&a.minus_total))
            .then_with(|| a.name.cmp(&b.name))
            .then(a.team.cmp(&b.team))
    });
    for k in 0..rows.len() {
        rows[k].place = if k > 0
            && rows[k].plus_total == rows[k - 1].plus_total
            && rows[k].minus_total == rows[k - 1].minus_total
        {
            rows[k - 1].place
        } else {
            k as u32 + 1
        };
    }
    Table {
        repetitions: config.repetitions,
        rows,
        prizes: Vec::new(),
    }
}

#[cfg(test)]
mod prize_tests {
    use super::*;

    #[test]
    fn the_prize_is_the_2011_rule_in_cents() {
        // The seed's example table: simple 6682555 Plus among 3 bots.
        assert_eq!(prize_cents(6_682_555, 3), 16_706); // 167.06 EUR
        assert_eq!(prize_cents(1, 2), 0);
        assert_eq!(prize_cents(100, 2), 1); // 0.005 EUR rounds up
        assert_eq!(prize_cents(5_000_000, 1), 0);
    }
}

#[cfg(test)]
mod tests;
