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

use super::TeamId;
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

/// The games of one round: every pair within each set, in entry order.
fn round_games(round: u32, sets: &[Vec<TeamId>], games_per_pair: u32) -> Vec<ScheduledGame> {
    let mut games = Vec::new();
    for set in sets {
        for (i, &a) in set.iter().enumerate() {
            for &b in &set[i + 1..] {
                for game in 0..games_per_pair {
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
    games
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
    config.validate().map_err(PlanError::Config)?;
    let mut seen = BTreeSet::new();
    for &t in entries {
        if !seen.insert(t) {
            return Err(PlanError::DuplicateEntry(t));
        }
    }
    let mut results: BTreeMap<GameKey, Option<TeamId>> = BTreeMap::new();
    for g in played {
        if let Some(w) = g.winner.filter(|w| !g.key.pair.contains(w)) {
            return Err(PlanError::WinnerNotInPair(g.key, w));
        }
        if results.insert(g.key, g.winner).is_some() {
            return Err(PlanError::DuplicateGame(g.key));
        }
    }

    let mut sets: Vec<Vec<TeamId>> = if entries.len() >= 2 {
        vec![entries.to_vec()]
    } else {
        Vec::new()
    };
    let mut wins: BTreeMap<TeamId, Vec<u32>> = entries.iter().map(|&t| (t, Vec::new())).collect();
    let mut round0 = BTreeMap::new(); // team -> (drawn, lost)
    let mut pairs = Vec::new();
    // The tied sets of every round so far, to tell a foreign result.
    let mut history: Vec<Vec<Vec<TeamId>>> = Vec::new();
    let mut known = 0usize;
    let mut round = 0;
    loop {
        history.push(sets.clone());
        let games = round_games(round, &sets, config.games_per_pair);
        known += games
            .iter()
            .filter(|g| results.contains_key(&g.key))
            .count();
        let missing: Vec<ScheduledGame> = games
            .iter()
            .filter(|g| !results.contains_key(&g.key))
            .copied()
            .collect();
        if !missing.is_empty() {
            check_all_known(&results, known, &history, config)?;
            return Ok(Plan::Play {
                round,
                games: missing,
            });
        }
        // The round is complete: tally it.
        for set in &sets {
            for t in set {
                wins.get_mut(t).expect("entered").push(0);
            }
        }
        let mut pair_rows: BTreeMap<[TeamId; 2], PairRow> = BTreeMap::new();
        let mut pair_order = Vec::new();
        for g in &games {
            let row = pair_rows.entry(g.key.pair).or_insert_with(|| {
                pair_order.push(g.key.pair);
                PairRow {
                    round,
                    pair: g.key.pair,
                    wins: [0, 0],
                    no_winner: 0,
                }
            });
            match results[&g.key] {
                Some(w) => {
                    *wins
                        .get_mut(&w)
                        .expect("entered")
                        .last_mut()
                        .expect("pushed") += 1;
                    row.wins[usize::from(w == g.key.pair[1])] += 1;
                    if round == 0 {
                        let loser = g.key.pair[usize::from(w == g.key.pair[0])];
                        round0.entry(loser).or_insert((0u32, 0u32)).1 += 1;
                    }
                }
                None => {
                    row.no_winner += 1;
                    if round == 0 {
                        for t in g.key.pair {
                            round0.entry(t).or_insert((0, 0)).0 += 1;
                        }
                    }
                }
            }
        }
        pairs.extend(pair_order.iter().map(|p| pair_rows[p]));
        let tied = tied_sets(&sets, &wins);
        if tied.is_empty() || round == config.max_tie_rounds {
            check_all_known(&results, known, &history, config)?;
            let unresolved = tied;
            let table = build_table(entries, &wins, &round0, pairs, round, unresolved, names);
            return Ok(Plan::Done(table));
        }
        sets = tied;
        round += 1;
    }
}

/// Every reported game must be one of the plan's rounds so far
/// (`history[r]` = the sets of round `r`); `known` of them were found.
fn check_all_known(
    results: &BTreeMap<GameKey, Option<TeamId>>,
    known: usize,
    history: &[Vec<Vec<TeamId>>],
    config: &Config,
) -> Result<(), PlanError> {
    if known == results.len() {
        return Ok(());
    }
    let scheduled = |k: &GameKey| {
        k.game < config.games_per_pair
            && history.get(k.round as usize).is_some_and(|sets| {
                sets.iter().any(|set| {
                    let at = |t| set.iter().position(|&x| x == t);
                    matches!((at(k.pair[0]), at(k.pair[1])), (Some(i), Some(j)) if i < j)
                })
            })
    };
    match results.keys().find(|k| !scheduled(k)) {
        Some(foreign) => Err(PlanError::UnknownGame(*foreign)),
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
mod tests {
    use super::*;
    use crate::game::footsteps::{Game, Params};
    use crate::game::lines::play_scripted;
    use crate::seed::{derive, SplitMix64};

    fn teams(n: u32) -> Vec<TeamId> {
        (1..=n).map(TeamId).collect()
    }

    fn name(t: TeamId) -> String {
        ["?", "A", "B", "C", "D", "E", "F"][t.0 as usize].to_string()
    }

    /// Plays every game a plan asks for with `decide(key) -> winner`, until
    /// done; returns the table and every game played.
    fn run(
        entries: &[TeamId],
        config: &Config,
        mut decide: impl FnMut(&ScheduledGame) -> Option<TeamId>,
    ) -> (Table, Vec<PlayedGame>) {
        let mut played = Vec::new();
        for _ in 0..200 {
            match plan(entries, config, &played, &name).unwrap() {
                Plan::Play { games, .. } => {
                    assert!(!games.is_empty());
                    for g in games {
                        played.push(PlayedGame {
                            key: g.key,
                            winner: decide(&g),
                        });
                    }
                }
                Plan::Done(table) => return (table, played),
            }
        }
        panic!("the plan never finished");
    }

    #[test]
    fn round_zero_is_every_pair_with_alternating_sides() {
        let entries = teams(3);
        let config = Config {
            games_per_pair: 4,
            max_tie_rounds: 3,
        };
        let Plan::Play { round, games } = plan(&entries, &config, &[], &name).unwrap() else {
            panic!("nothing to play")
        };
        assert_eq!(round, 0);
        assert_eq!(games.len(), 3 * 4);
        let seats: Vec<String> = games
            .iter()
            .map(|g| format!("{}{}", name(g.seats[0]), name(g.seats[1])))
            .collect();
        assert_eq!(
            seats,
            ["AB", "BA", "AB", "BA", "AC", "CA", "AC", "CA", "BC", "CB", "BC", "CB"]
        );
        // 300 games per pair by default, each side 150 times.
        let Plan::Play { games, .. } = plan(&entries, &Config::default(), &[], &name).unwrap()
        else {
            panic!()
        };
        assert_eq!(games.len(), 900);
        let a_left = games
            .iter()
            .filter(|g| g.key.pair == [TeamId(1), TeamId(2)] && g.seats[0] == TeamId(1))
            .count();
        assert_eq!(a_left, 150);
        // Only the games not played yet are asked for.
        let some: Vec<PlayedGame> = games[..10]
            .iter()
            .map(|g| PlayedGame {
                key: g.key,
                winner: None,
            })
            .collect();
        let Plan::Play { games: rest, .. } =
            plan(&entries, &Config::default(), &some, &name).unwrap()
        else {
            panic!()
        };
        assert_eq!(rest.len(), 890);
        assert_eq!(rest[0], games[10]);
    }

    #[test]
    fn the_table_ranks_by_games_won_with_the_seeds_percentage() {
        // A beats everybody 3:1, B beats C 2:1 with one draw.
        let entries = teams(3);
        let config = Config {
            games_per_pair: 4,
            max_tie_rounds: 3,
        };
        let (table, _) = run(&entries, &config, |g| {
            let [a, b] = g.key.pair;
            match (a.0, b.0, g.key.game) {
                (1, _, 3) => Some(b),
                (1, _, _) => Some(a),
                (2, 3, 0) => None,
                (2, 3, 1) => Some(b),
                (2, 3, _) => Some(a),
                _ => unreachable!(),
            }
        });
        let rows: Vec<(u32, &str, u32, u32, u32)> = table
            .rows
            .iter()
            .map(|r| (r.place, r.name.as_str(), r.won, r.drawn, r.lost))
            .collect();
        assert_eq!(
            rows,
            [(1, "A", 6, 0, 2), (2, "B", 3, 1, 4), (3, "C", 2, 1, 5)]
        );
        let pct: Vec<f64> = table.rows.iter().map(|r| r.percent).collect();
        assert_eq!(
            pct,
            [6.0 * 100.0 / 11.0, 3.0 * 100.0 / 11.0, 2.0 * 100.0 / 11.0]
        );
        assert_eq!(table.tie_rounds, 0);
        assert!(table.unresolved.is_empty());
        assert_eq!(
            table.pairs,
            [
                PairRow {
                    round: 0,
                    pair: [TeamId(1), TeamId(2)],
                    wins: [3, 1],
                    no_winner: 0
                },
                PairRow {
                    round: 0,
                    pair: [TeamId(1), TeamId(3)],
                    wins: [3, 1],
                    no_winner: 0
                },
                PairRow {
                    round: 0,
                    pair: [TeamId(2), TeamId(3)],
                    wins: [2, 1],
                    no_winner: 1
                },
            ]
        );
        // The seed's own figure: Fixed won 2896 of the 28232 games won.
        assert_eq!(format!("{:.3}", percent(2896, 28232)), "10.258");
    }

    #[test]
    fn tied_bots_play_again_and_wins_accumulate_only_among_them() {
        // Round 0: A 5, B 1, C 1, D 5 wins (A and D tied, B and C tied).
        // Replays: D beats A; B and C tie again in round 1, then C wins.
        let entries = teams(4);
        let config = Config {
            games_per_pair: 2,
            max_tie_rounds: 3,
        };
        let (table, played) = run(&entries, &config, |g| {
            let [a, b] = g.key.pair;
            match (g.key.round, a.0, b.0) {
                (0, 1, 4) => Some(if g.key.game == 0 { a } else { b }),
                (0, 1, _) => Some(a),
                (0, 2, 3) => Some(if g.key.game == 0 { a } else { b }),
                (0, _, 4) => Some(b),
                (1, 1, 4) => Some(b),
                (1, 2, 3) => Some(if g.key.game == 0 { a } else { b }),
                (2, 2, 3) => Some(b),
                k => panic!("unexpected game {k:?}"),
            }
        });
        let rows: Vec<(u32, &str, u32, Vec<u32>)> = table
            .rows
            .iter()
            .map(|r| (r.place, r.name.as_str(), r.won, r.tie_wins.clone()))
            .collect();
        assert_eq!(
            rows,
            [
                (1, "D", 5, vec![2]),
                (2, "A", 5, vec![0]),
                (3, "C", 1, vec![1, 2]),
                (4, "B", 1, vec![1, 0]),
            ]
        );
        assert_eq!(table.tie_rounds, 2);
        assert!(table.unresolved.is_empty());
        // Round 1 had both tied sets, round 2 only B and C.
        let rounds: Vec<(u32, [TeamId; 2])> =
            table.pairs.iter().map(|p| (p.round, p.pair)).collect();
        assert_eq!(
            rounds[6..],
            [
                (1, [TeamId(1), TeamId(4)]),
                (1, [TeamId(2), TeamId(3)]),
                (2, [TeamId(2), TeamId(3)])
            ]
        );
        assert_eq!(played.len(), 12 + 4 + 2);
    }

    #[test]
    fn replays_never_move_a_bot_past_one_it_was_not_tied_with() {
        // Round 0: A beats B and C once each, all other games are draws:
        // A 2, B 0, C 0. B wins its replay with C 4:0, so its cumulative
        // count (4) passes A's (2); A stays first all the same.
        let entries = teams(3);
        let config = Config {
            games_per_pair: 4,
            max_tie_rounds: 3,
        };
        let (table, _) = run(&entries, &config, |g| {
            let [a, b] = g.key.pair;
            match (g.key.round, a.0, b.0) {
                (0, 1, _) => (g.key.game == 0).then_some(a),
                (0, 2, 3) => None,
                (1, 2, 3) => Some(a),
                k => panic!("unexpected game {k:?}"),
            }
        });
        let order: Vec<(u32, &str, u32, Vec<u32>)> = table
            .rows
            .iter()
            .map(|r| (r.place, r.name.as_str(), r.won, r.tie_wins.clone()))
            .collect();
        assert_eq!(
            order,
            [
                (1, "A", 2, vec![]),
                (2, "B", 0, vec![4]),
                (3, "C", 0, vec![0])
            ]
        );
    }

    #[test]
    fn a_tie_that_persists_is_shared_after_the_cap() {
        // Everything is a draw, forever: three replays, then a shared place.
        let entries = teams(3);
        let config = Config {
            games_per_pair: 2,
            max_tie_rounds: 3,
        };
        let (table, played) = run(&entries, &config, |_| None);
        assert_eq!(table.tie_rounds, 3);
        assert_eq!(table.unresolved, vec![entries.clone()]);
        assert!(table.rows.iter().all(|r| r.place == 1));
        assert!(table.rows.iter().all(|r| r.tie_wins == [0, 0, 0]));
        assert!(table.rows.iter().all(|r| r.percent == 0.0));
        assert_eq!(played.len(), 4 * 6);
        // No replays allowed: shared at once.
        let (table, played) = run(
            &entries,
            &Config {
                games_per_pair: 2,
                max_tie_rounds: 0,
            },
            |_| None,
        );
        assert_eq!((table.tie_rounds, played.len()), (0, 6));
        assert_eq!(table.unresolved.len(), 1);
    }

    #[test]
    fn foreign_duplicate_and_impossible_results_are_refused() {
        let entries = teams(3);
        let config = Config {
            games_per_pair: 2,
            max_tie_rounds: 1,
        };
        let key = |round, a, b, game| GameKey {
            round,
            pair: [TeamId(a), TeamId(b)],
            game,
        };
        let g = |k: GameKey, w: Option<u32>| PlayedGame {
            key: k,
            winner: w.map(TeamId),
        };
        assert_eq!(
            plan(&entries, &config, &[g(key(0, 1, 2, 0), Some(3))], &name),
            Err(PlanError::WinnerNotInPair(key(0, 1, 2, 0), TeamId(3)))
        );
        assert_eq!(
            plan(
                &entries,
                &config,
                &[g(key(0, 1, 2, 0), None), g(key(0, 1, 2, 0), Some(1))],
                &name
            ),
            Err(PlanError::DuplicateGame(key(0, 1, 2, 0)))
        );
        // Wrong pair order, game number out of range, a replay before its time.
        for k in [
            key(0, 2, 1, 0),
            key(0, 1, 2, 2),
            key(1, 1, 2, 0),
            key(0, 1, 9, 0),
        ] {
            assert_eq!(
                plan(&entries, &config, &[g(k, None)], &name),
                Err(PlanError::UnknownGame(k)),
                "{k}"
            );
        }
        // A replay that the finished round 0 did not call for.
        let (_, mut played) = run(&entries, &config, |g| Some(g.key.pair[0]));
        played.push(g(key(1, 1, 2, 0), None));
        assert_eq!(
            plan(&entries, &config, &played, &name),
            Err(PlanError::UnknownGame(key(1, 1, 2, 0)))
        );
        assert_eq!(
            plan(&[TeamId(1), TeamId(1)], &config, &[], &name),
            Err(PlanError::DuplicateEntry(TeamId(1)))
        );
        assert!(matches!(
            plan(
                &entries,
                &Config {
                    games_per_pair: 0,
                    max_tie_rounds: 1
                },
                &[],
                &name
            ),
            Err(PlanError::Config(_))
        ));
        // One bot or none: nothing to play.
        let Plan::Done(t) = plan(&teams(1), &config, &[], &name).unwrap() else {
            panic!()
        };
        assert_eq!((t.rows.len(), t.rows[0].place, t.rows[0].won), (1, 1, 0));
        assert!(matches!(plan(&[], &config, &[], &name), Ok(Plan::Done(_))));
    }

    /// A whole tournament of real games between scripted bidders: the
    /// planner, the game and the seat assignment together.
    #[test]
    fn a_tournament_of_scripted_bots() {
        // A: always 1; B: 2 until out; C: random legal; D: all in at once.
        let entries = teams(4);
        let config = Config {
            games_per_pair: 30,
            max_tie_rounds: 2,
        };
        let bid = |team: TeamId, has: u32, rng: &mut SplitMix64| -> u32 {
            if has == 0 {
                return 0;
            }
            match team.0 {
                1 => 1,
                2 => has.min(2),
                3 => 1 + rng.below(has.min(10) as u64) as u32,
                _ => has,
            }
        };
        let (table, played) = run(&entries, &config, |g| {
            let mut game = Game::new(Params::default());
            let mut rng = SplitMix64::new(derive(7, &[g.key.round as u64, g.key.game as u64]));
            let mut purse = [50u32; 2];
            let o = play_scripted(
                &mut game,
                |seat, _| {
                    let b = bid(g.seats[seat], purse[seat], &mut rng);
                    purse[seat] -= b;
                    b.to_string()
                },
                1000,
            )
            .unwrap();
            o.winner.map(|s| g.seats[s])
        });
        assert_eq!(played.iter().filter(|p| p.key.round == 0).count(), 6 * 30);
        let sum: f64 = table.rows.iter().map(|r| r.percent).sum();
        assert!((sum - 100.0).abs() < 1e-9);
        for r in &table.rows {
            assert_eq!(r.won + r.drawn + r.lost, 3 * 30);
        }
        // Deterministic bots playing both sides equally: A (always 1) against
        // D (all in) — D wins its first bid, then A walks home from 2 with
        // D bidding 0: A wins every game.
        let ad = table
            .pairs
            .iter()
            .find(|p| p.round == 0 && p.pair == [TeamId(1), TeamId(4)])
            .unwrap();
        assert_eq!((ad.wins, ad.no_winner), ([30, 0], 0));
        // Ranks are strictly increasing unless a tie is unresolved.
        if table.unresolved.is_empty() {
            let places: Vec<u32> = table.rows.iter().map(|r| r.place).collect();
            assert_eq!(places, [1, 2, 3, 4]);
        }
    }
}
