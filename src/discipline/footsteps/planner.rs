//! The FootSteps tournament (2007): which games to play, tie replays, and
//! the result tables.
//!
//! # Games
//!
//! Round 0 is the round robin: every pair of bots plays `games_per_pair`
//! games (300, as the seed's previous contest played). A pair is written in
//! entry order (`pair[0]` entered before `pair[1]`); in its game number `g`
//! (0-based) `pair[0]` is the left player (seat 0) when `g` is even and the
//! right player when `g` is odd, so with an even number of games each bot
//! plays each side equally often. Bots keep no memory between games.
//!
//! # Ranking and tie replays
//!
//! "El que gane más partidos será el vencedor. En caso de empate, se vuelve
//! al punto 1. Los contadores de partidos ganados serán acumulativos." Bots
//! are ranked by the games they won in round 0. Every set of bots with the
//! same number of wins (at any place, not only the first) plays again:
//! round 1 is a round robin of `games_per_pair` games per pair within each
//! tied set (several sets play in the same round, each among itself). The
//! win counters accumulate, but only the bots of a tied set are compared
//! with each other, so a replay never moves a bot past one it was not tied
//! with: the ranking key is the list of wins per round, `[round 0, round 1,
//! …]`, compared lexicographically (equal earlier counts, then the next
//! round's). Sets still tied after round `r` play round `r + 1`, up to
//! `max_tie_rounds` replays.
//!
//! Fallback: bots still tied after the last allowed replay share their
//! place (listed by name, then team id) and are reported as unresolved.
//! Nothing else breaks the tie: a replay already is a head-to-head among
//! exactly the tied bots, and deterministic bots tie the same way every
//! time, which is why the cap exists.
//!
//! # Tables
//!
//! The table has, per bot, the games won in round 0 and their share of all
//! games won in round 0 (the seed's percentage column, whose values add up
//! to 100 %), its draws and losses in round 0, and its wins in each replay
//! it played. The pair table has one line per pair and round: the wins of
//! each and the games nobody won (draws, and games where both bid
//! illegally).
//!
//! # Purity
//!
//! [`plan`] is a function of the entries, the configuration and the games
//! played so far: it returns the games still to play in the current round,
//! or the finished tables. A caller plays the games (in any order, in
//! parallel), stores the results, and calls it again; after a restart it
//! calls it with what is stored. It plays nothing, stores nothing and
//! formats nothing.

use crate::tournament::TeamId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Tournament parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Games each pair plays in a round (300).
    pub games_per_pair: u32,
    /// How many tie replays (rounds after round 0) at most (3).
    pub max_tie_rounds: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            games_per_pair: 300,
            max_tie_rounds: 3,
        }
    }
}

impl Config {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=100_000).contains(&self.games_per_pair) {
            return Err(format!(
                "games per pair must be in 1..=100000 (got {})",
                self.games_per_pair
            ));
        }
        if self.max_tie_rounds > 100 {
            return Err(format!(
                "at most 100 tie replays (got {})",
                self.max_tie_rounds
            ));
        }
        Ok(())
    }
}

/// Which game: the round (0 = the round robin, then the tie replays), the
/// pair (in entry order) and the game's number within the pair's round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GameKey {
    pub round: u32,
    pub pair: [TeamId; 2],
    pub game: u32,
}

impl GameKey {
    /// The bots in seat order: `[left, right]`. `pair[0]` is left in even
    /// games, right in odd ones.
    pub fn seats(&self) -> [TeamId; 2] {
        if self.game.is_multiple_of(2) {
            self.pair
        } else {
            [self.pair[1], self.pair[0]]
        }
    }
}

impl std::fmt::Display for GameKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "round {} game {} of teams {} and {}",
            self.round,
            self.game + 1,
            self.pair[0],
            self.pair[1]
        )
    }
}

/// A game to play: `seats[0]` is the left player (seat 0 of the game).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledGame {
    pub key: GameKey,
    pub seats: [TeamId; 2],
}

/// A played game: who won (a bot of the pair), or nobody.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayedGame {
    pub key: GameKey,
    pub winner: Option<TeamId>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Plan {
    /// Play these games (those of round `round` not played yet).
    Play {
        round: u32,
        games: Vec<ScheduledGame>,
    },
    /// The tournament is over.
    Done(Table),
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// 1-based; shared only by bots still tied after the last replay.
    pub place: u32,
    pub team: TeamId,
    pub name: String,
    /// Games won in round 0.
    pub won: u32,
    /// `won` as a share of all games won in round 0, in percent.
    pub percent: f64,
    pub drawn: u32,
    pub lost: u32,
    /// Games won in each tie replay the bot played (round 1, 2, …).
    pub tie_wins: Vec<u32>,
}

/// One pair in one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairRow {
    pub round: u32,
    pub pair: [TeamId; 2],
    /// Games won by `pair[0]` and by `pair[1]`.
    pub wins: [u32; 2],
    /// Games nobody won.
    pub no_winner: u32,
}

/// The tournament's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// In ranking order.
    pub rows: Vec<Row>,
    /// Every pair of every round, in playing order.
    pub pairs: Vec<PairRow>,
    /// Tie replays played.
    pub tie_rounds: u32,
    /// Sets of bots still tied after the last allowed replay (they share
    /// a place).
    pub unresolved: Vec<Vec<TeamId>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("team {0} is entered twice")]
    DuplicateEntry(TeamId),
    #[error("{0} is not a game of this tournament")]
    UnknownGame(GameKey),
    #[error("{0} is reported twice")]
    DuplicateGame(GameKey),
    #[error("{0}: the winner {1} is not one of its bots")]
    WinnerNotInPair(GameKey, TeamId),
}

/// Splits each set into the subsets of equal wins in `round` (keeping
/// entry order) and keeps those of two or more.
fn tied_sets(sets: &[Vec<TeamId>], wins: &BTreeMap<TeamId, Vec<u32>>) -> Vec<Vec<TeamId>> {
    let mut tied = Vec::new();
    for set in sets {
        let mut by_wins: BTreeMap<u32, Vec<TeamId>> = BTreeMap::new();
        for t in set {
            let w = *wins[t].last().expect("played the round");
            by_wins.entry(w).or_default().push(*t);
        }
        // Highest wins first, so that the sets come in ranking order.
        tied.extend(by_wins.into_values().rev().filter(|s| s.len() >= 2));
    }
    tied
}

/// What to play next, or the finished tables. `played` holds every game
/// played so far (in any order); `names` gives a bot's name for the table.
pub fn plan(
    entries: &[TeamId],
    config: &Config,
    played: &[PlayedGame],
    names: &dyn Fn(TeamId) -> String,
) -> Result<Plan, PlanError> {
    let mut tallies = Tallies::new();
    for g in played {
        tallies.add(&g.key, g.winner, config)?;
    }
    Ok(match step(entries, config, &tallies, names)? {
        Step::Play { round, sets } => Plan::Play {
            round,
            games: missing_games(round, &sets, config, &tallies, usize::MAX),
        },
        Step::Done(t) => Plan::Done(t),
    })
}

/// One pair's games in one round as far as they are stored: which (a bit
/// per game number), and what they add up to. What the tournament needs
/// of its games, kept per pair and round instead of per game (the contest
/// run's planner is fed millions of stored games one at a time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairTally {
    /// Bit `g` of word `g / 64`: game `g` is stored.
    stored: Vec<u64>,
    /// Games stored.
    pub games: u32,
    /// Games won by `pair[0]` and by `pair[1]`.
    pub wins: [u32; 2],
    /// Games nobody won.
    pub no_winner: u32,
}

impl PairTally {
    fn has(&self, game: u32) -> bool {
        self.stored
            .get(game as usize / 64)
            .is_some_and(|w| w & (1 << (game % 64)) != 0)
    }
}

/// Every stored game, as [`PairTally`]s by round and pair.
#[derive(Debug, Clone, Default)]
pub struct Tallies {
    by_pair: BTreeMap<(u32, [TeamId; 2]), PairTally>,
    /// Games added.
    games: usize,
}

impl Tallies {
    pub fn new() -> Tallies {
        Tallies::default()
    }

    /// Counts a played game (its key and winner); refused: a winner not
    /// of the pair, a game number outside the format, a game twice.
    pub fn add(
        &mut self,
        key: &GameKey,
        winner: Option<TeamId>,
        config: &Config,
    ) -> Result<(), PlanError> {
        if let Some(w) = winner.filter(|w| !key.pair.contains(w)) {
            return Err(PlanError::WinnerNotInPair(*key, w));
        }
        if key.game >= config.games_per_pair {
            return Err(PlanError::UnknownGame(*key));
        }
        let t = self.by_pair.entry((key.round, key.pair)).or_default();
        let (word, bit) = (key.game as usize / 64, 1u64 << (key.game % 64));
        if t.stored.len() <= word {
            t.stored.resize(word + 1, 0);
        }
        if t.stored[word] & bit != 0 {
            return Err(PlanError::DuplicateGame(*key));
        }
        t.stored[word] |= bit;
        t.games += 1;
        match winner {
            Some(w) => t.wins[usize::from(w == key.pair[1])] += 1,
            None => t.no_winner += 1,
        }
        self.games += 1;
        Ok(())
    }

    /// Whether a game is stored.
    pub fn has(&self, key: &GameKey) -> bool {
        self.by_pair
            .get(&(key.round, key.pair))
            .is_some_and(|t| t.has(key.game))
    }

    /// A pair's games in a round (none stored: empty).
    pub fn pair(&self, round: u32, pair: [TeamId; 2]) -> PairTally {
        self.by_pair
            .get(&(round, pair))
            .cloned()
            .unwrap_or_default()
    }

    fn pair_ref(&self, round: u32, pair: [TeamId; 2]) -> Option<&PairTally> {
        self.by_pair.get(&(round, pair))
    }
}

/// What to do next, by the sets that play it: the games of round `round`
/// not stored yet are every pair's within each set of `sets`
/// (pairs within each set in entry order, then the game numbers), or the tournament is over.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Play { round: u32, sets: Vec<Vec<TeamId>> },
    Done(Table),
}

/// The games of round `round` not in `tallies`, in playing order, at most
/// `limit` (the pairs within each set of `sets`, entry order, then the
/// game numbers).
pub fn missing_games(
    round: u32,
    sets: &[Vec<TeamId>],
    config: &Config,
    tallies: &Tallies,
    limit: usize,
) -> Vec<ScheduledGame> {
    let mut games = Vec::new();
    for set in sets {
        for (i, &a) in set.iter().enumerate() {
            for &b in &set[i + 1..] {
                let t = tallies.pair_ref(round, [a, b]);
                if t.is_some_and(|t| t.games == config.games_per_pair) {
                    continue;
                }
                for game in 0..config.games_per_pair {
                    if games.len() == limit {
                        return games;
                    }
                    if !t.is_some_and(|t| t.has(game)) {
                        let key = GameKey {
                            round,
                            pair: [a, b],
                            game,
                        };
                        games.push(ScheduledGame {
                            key,
                            seats: key.seats(),
                        });
                    }
                }
            }
        }
    }
    games
}

/// What to play next, or the finished tables, from the stored games'
/// tallies ([`plan`] of its played games).
pub fn step(
    entries: &[TeamId],
    config: &Config,
    tallies: &Tallies,
    names: &dyn Fn(TeamId) -> String,
) -> Result<Step, PlanError> {
    config.validate().map_err(PlanError::Config)?;
    let mut seen = BTreeSet::new();
    for &t in entries {
        if !seen.insert(t) {
            return Err(PlanError::DuplicateEntry(t));
        }
    }

    let mut sets: Vec<Vec<TeamId>> = if entries.len() >= 2 {
        vec![entries.to_vec()]
    } else {
        Vec::new()
    };
    let mut wins: BTreeMap<TeamId, Vec<u32>> = entries.iter().map(|&t| (t, Vec::new())).collect();
    let mut round0: BTreeMap<TeamId, (u32, u32)> = BTreeMap::new(); // team -> (drawn, lost)
    let mut pairs = Vec::new();
    // The tied sets of every round so far, to tell a foreign result.
    let mut history: Vec<Vec<Vec<TeamId>>> = Vec::new();
    let mut known = 0usize;
    let mut round = 0;
    loop {
        history.push(sets.clone());
        let round_pairs: Vec<[TeamId; 2]> = sets
            .iter()
            .flat_map(|set| {
                set.iter()
                    .enumerate()
                    .flat_map(move |(i, &a)| set[i + 1..].iter().map(move |&b| [a, b]))
            })
            .collect();
        let mut complete = true;
        for &pair in &round_pairs {
            let stored = tallies.pair_ref(round, pair).map_or(0, |t| t.games);
            known += stored as usize;
            complete &= stored == config.games_per_pair;
        }
        if !complete {
            check_all_known(tallies, known, &history)?;
            return Ok(Step::Play { round, sets });
        }
        // The round is complete: tally it.
        for set in &sets {
            for t in set {
                wins.get_mut(t).expect("entered").push(0);
            }
        }
        for &pair in &round_pairs {
            let t = tallies.pair_ref(round, pair).expect("complete");
            for (team, won) in pair.iter().zip(t.wins) {
                *wins
                    .get_mut(team)
                    .expect("entered")
                    .last_mut()
                    .expect("pushed") += won;
            }
            if round == 0 {
                // A game won by one side is lost by the other; a game
                // nobody won is a draw for both.
                round0.entry(pair[1]).or_insert((0, 0)).1 += t.wins[0];
                round0.entry(pair[0]).or_insert((0, 0)).1 += t.wins[1];
                for side in pair {
                    round0.entry(side).or_insert((0, 0)).0 += t.no_winner;
                }
            }
            pairs.push(PairRow {
                round,
                pair,
                wins: t.wins,
                no_winner: t.no_winner,
            });
        }
        let tied = tied_sets(&sets, &wins);
        if tied.is_empty() || round == config.max_tie_rounds {
            check_all_known(tallies, known, &history)?;
            let unresolved = tied;
            let table = build_table(entries, &wins, &round0, pairs, round, unresolved, names);
            return Ok(Step::Done(table));
        }
        sets = tied;
        round += 1;
    }
}

/// Every reported game must be one of the plan's rounds so far
/// (`history[r]` = the sets of round `r`); `known` of them were found.
fn check_all_known(
    tallies: &Tallies,
    known: usize,
    history: &[Vec<Vec<TeamId>>],
) -> Result<(), PlanError> {
    if known == tallies.games {
        return Ok(());
    }
    let scheduled = |round: u32, pair: [TeamId; 2]| {
        history.get(round as usize).is_some_and(|sets| {
            sets.iter().any(|set| {
                let at = |t| set.iter().position(|&x| x == t);
                matches!((at(pair[0]), at(pair[1])), (Some(i), Some(j)) if i < j)
            })
        })
    };
    let foreign = tallies
        .by_pair
        .iter()
        .find(|((round, pair), t)| t.games > 0 && !scheduled(*round, *pair));
    match foreign {
        Some(((round, pair), t)) => Err(PlanError::UnknownGame(GameKey {
            round: *round,
            pair: *pair,
            game: (0..).find(|&g| t.has(g)).expect("a stored game"),
        })),
        None => Ok(()),
    }
}

fn build_table(
    entries: &[TeamId],
    wins: &BTreeMap<TeamId, Vec<u32>>,
    round0: &BTreeMap<TeamId, (u32, u32)>,
    pairs: Vec<PairRow>,
    last_round: u32,
    unresolved: Vec<Vec<TeamId>>,
    names: &dyn Fn(TeamId) -> String,
) -> Table {
    let won = |t: &TeamId| wins[t].first().copied().unwrap_or(0);
    let total: u64 = entries.iter().map(|t| won(t) as u64).sum();
    let mut rows: Vec<(Vec<u32>, Row)> = entries
        .iter()
        .map(|t| {
            let (drawn, lost) = round0.get(t).copied().unwrap_or((0, 0));
            let key = wins[t].clone();
            let row = Row {
                place: 0,
                team: *t,
                name: names(*t),
                won: won(t),
                percent: percent(won(t), total),
                drawn,
                lost,
                tie_wins: key.iter().skip(1).copied().collect(),
            };
            (key, row)
        })
        .collect();
    rows.sort_by(|(ka, a), (kb, b)| {
        kb.cmp(ka)
            .then_with(|| a.name.cmp(&b.name))
            .then(a.team.cmp(&b.team))
    });
    for k in 0..rows.len() {
        rows[k].1.place = if k > 0 && rows[k].0 == rows[k - 1].0 {
            rows[k - 1].1.place
        } else {
            k as u32 + 1
        };
    }
    Table {
        rows: rows.into_iter().map(|(_, r)| r).collect(),
        pairs,
        tie_rounds: last_round,
        unresolved,
    }
}

/// `won` as a percentage of `total` (0 when nobody won anything).
pub fn percent(won: u32, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        won as f64 * 100.0 / total as f64
    }
}

#[cfg(test)]
mod tests;
