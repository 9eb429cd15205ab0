//! The flooding island's tournament (freiesMagazin 2012/13, "Ablauf"): every
//! bot on every island, a number of times each; the score is the mean number
//! of rounds on each island, summed over the islands.
//!
//! "Nach Abgabeschluss werden die Bots nacheinander auf verschiedenen …
//! Inseln ausgesetzt und 1000 Mal ihrem Schicksal überlassen. Aus den 1000
//! Iterationen wird der Mittelwert der überlebten Rundenanzahl bestimmt …
//! Danach wird das gemittelte Rundenergebnis aller Inseln addiert und
//! bildet die Endwertung."
//!
//! - **Runs.** [`FloodingFormat::runs`] games per bot and island (default
//!   1000).
//! - **Seeds.** Run `r` on island `i` is played with the game seed
//!   [`game_seed`]`(tournament_seed, i, r)` =
//!   `seed::derive(tournament_seed, [FLOOD_TAG, i, r])`, *the same for every
//!   bot*: all bots meet the same flood-card sequence (the rounds in which
//!   the level rises) and the same initial field pile in run `r` on island
//!   `i` (see `crate::discipline::flooding::rules` on chance). The seed depends on the
//!   island's id, not on its position in the list, so adding an island does
//!   not change the others' games.
//! - **Score.** A game's score is `FloodOutcome::rounds`. A bot's mean on an
//!   island is its total rounds there divided by the number of its results
//!   there, kept exact to a millionth of a round (rounded half up); its
//!   score is the sum of its means. With complete results every mean has
//!   the same divisor, so the order is that of the total rounds.
//! - **Table.** Highest score first; equal scores share a place (the seed
//!   names no tie-break); within a shared place by name, then id.
//!
//! What it deliberately does not do: run games, check islands, format the
//! table (the report does).
//!
//! **Invariant:** pure: no I/O, no clock, no global RNG.

use crate::seed::derive;
use crate::tournament::TeamId;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The seed's number of games per bot and island.
pub const DEFAULT_RUNS: u32 = 1000;

/// Path tag of the island games' seeds ("FLOOD").
const FLOOD_TAG: u64 = 0x46_4C_4F_4F_44;

/// An island of the contest; the number is the caller's (e.g. the store's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct IslandId(pub u32);

impl fmt::Display for IslandId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The format's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloodingFormat {
    /// Games per bot and island.
    pub runs: u32,
}

impl Default for FloodingFormat {
    fn default() -> Self {
        FloodingFormat { runs: DEFAULT_RUNS }
    }
}

/// The seed of run `run` on `island`: the same for every bot.
pub fn game_seed(tournament_seed: u64, island: IslandId, run: u32) -> u64 {
    derive(
        tournament_seed,
        &[FLOOD_TAG, u64::from(island.0), u64::from(run)],
    )
}

/// One game to play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRun {
    pub team: TeamId,
    pub island: IslandId,
    /// 0-based.
    pub run: u32,
    /// The game's seed, [`game_seed`].
    pub seed: u64,
}

/// Every game of the tournament: island by island, run by run, bot by bot
/// (in the order given).
pub fn plan(
    tournament_seed: u64,
    teams: &[TeamId],
    islands: &[IslandId],
    format: FloodingFormat,
) -> Vec<PlannedRun> {
    let mut games = Vec::with_capacity(teams.len() * islands.len() * format.runs as usize);
    for &island in islands {
        for run in 0..format.runs {
            let seed = game_seed(tournament_seed, island, run);
            for &team in teams {
                games.push(PlannedRun {
                    team,
                    island,
                    run,
                    seed,
                });
            }
        }
    }
    games
}

/// A game's key in a contest's store (its identity, as JSON): the island
/// by number, the run, the bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloodKey {
    pub island: u32,
    pub run: u32,
    pub team: TeamId,
}

/// The result of one game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunResult {
    pub team: TeamId,
    pub island: IslandId,
    pub run: u32,
    /// The game's score (`FloodOutcome::rounds`).
    pub rounds: u32,
}

/// A number of rounds exact to a millionth (a mean, or a sum of means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rounds(u64);

impl Rounds {
    /// `sum / count`, rounded half up to a millionth; 0 when `count` is 0.
    pub fn mean(sum: u64, count: u64) -> Rounds {
        if count == 0 {
            return Rounds(0);
        }
        let m = (u128::from(sum) * 1_000_000 + u128::from(count) / 2) / u128::from(count);
        Rounds(m as u64)
    }

    pub fn from_millionths(m: u64) -> Rounds {
        Rounds(m)
    }

    pub fn millionths(self) -> u64 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

impl fmt::Display for Rounds {
    /// With three decimals, rounded half up (`77.123`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let thousandths = (self.0 + 500) / 1000;
        write!(f, "{}.{:03}", thousandths / 1000, thousandths % 1000)
    }
}

impl Serialize for Rounds {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_f64())
    }
}

/// A bot's games on one island.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IslandScore {
    pub island: IslandId,
    /// Results counted.
    pub runs: u32,
    /// Their rounds, summed.
    pub rounds: u64,
    pub mean: Rounds,
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FloodingRow {
    /// 1-based; shared by equal scores.
    pub place: u32,
    pub team: TeamId,
    pub name: String,
    /// In the order of the islands given.
    pub islands: Vec<IslandScore>,
    /// The score: the means summed.
    pub score: Rounds,
}

/// The tournament's table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FloodingTable {
    pub islands: Vec<IslandId>,
    pub rows: Vec<FloodingRow>,
    /// Whether every bot has a result for every run on every island.
    pub complete: bool,
}

/// Results that do not fit the tournament: a caller's mistake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FloodingError {
    #[error("a result names team {0}, which is not in the tournament")]
    UnknownTeam(TeamId),
    #[error("a result names island {0}, which is not in the tournament")]
    UnknownIsland(IslandId),
    #[error("a result names run {run}, but the format has {runs} runs (0..{runs})")]
    RunOutOfRange { run: u32, runs: u32 },
    #[error("team {team} has two results for run {run} on island {island}")]
    Duplicate {
        team: TeamId,
        island: IslandId,
        run: u32,
    },
}

/// The table from the results so far (missing games simply do not count;
/// [`FloodingTable::complete`] says whether any are missing). `names` gives
/// a team's name for the listing.
pub fn rank(
    teams: &[TeamId],
    islands: &[IslandId],
    format: FloodingFormat,
    results: &[RunResult],
    names: &dyn Fn(TeamId) -> String,
) -> Result<FloodingTable, FloodingError> {
    let team_set: BTreeSet<TeamId> = teams.iter().copied().collect();
    let island_set: BTreeSet<IslandId> = islands.iter().copied().collect();
    let mut seen = BTreeSet::new();
    // (team, island) → (runs, rounds)
    let mut sums: BTreeMap<(TeamId, IslandId), (u32, u64)> = BTreeMap::new();
    for r in results {
        if !team_set.contains(&r.team) {
            return Err(FloodingError::UnknownTeam(r.team));
        }
        if !island_set.contains(&r.island) {
            return Err(FloodingError::UnknownIsland(r.island));
        }
        if r.run >= format.runs {
            return Err(FloodingError::RunOutOfRange {
                run: r.run,
                runs: format.runs,
            });
        }
        if !seen.insert((r.team, r.island, r.run)) {
            return Err(FloodingError::Duplicate {
                team: r.team,
                island: r.island,
                run: r.run,
            });
        }
        let e = sums.entry((r.team, r.island)).or_default();
        e.0 += 1;
        e.1 += u64::from(r.rounds);
    }
    Ok(table_of_sums(
        teams,
        islands,
        format,
        &sums,
        seen.len() as u64,
        names,
    ))
}

/// The table from each bot's runs and rounds summed per island (`sums`,
/// by (team, island); missing: none) and the number of results in all
/// (`results`, for [`FloodingTable::complete`]): what [`rank`] makes of
/// its results, for a caller that keeps only the sums (the contest run's
/// planner, fed one stored run at a time).
pub fn table_of_sums(
    teams: &[TeamId],
    islands: &[IslandId],
    format: FloodingFormat,
    sums: &BTreeMap<(TeamId, IslandId), (u32, u64)>,
    results: u64,
    names: &dyn Fn(TeamId) -> String,
) -> FloodingTable {
    let team_set: BTreeSet<TeamId> = teams.iter().copied().collect();
    let island_set: BTreeSet<IslandId> = islands.iter().copied().collect();
    let complete =
        results == team_set.len() as u64 * island_set.len() as u64 * u64::from(format.runs);

    let mut rows: Vec<FloodingRow> = team_set
        .iter()
        .map(|&team| {
            let scores: Vec<IslandScore> = islands
                .iter()
                .map(|&island| {
                    let (runs, rounds) = sums.get(&(team, island)).copied().unwrap_or_default();
                    IslandScore {
                        island,
                        runs,
                        rounds,
                        mean: Rounds::mean(rounds, u64::from(runs)),
                    }
                })
                .collect();
            let score = Rounds(scores.iter().map(|s| s.mean.0).sum());
            FloodingRow {
                place: 0,
                team,
                name: names(team),
                islands: scores,
                score,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
            .then_with(|| a.team.cmp(&b.team))
    });
    for i in 0..rows.len() {
        rows[i].place = if i > 0 && rows[i].score == rows[i - 1].score {
            rows[i - 1].place
        } else {
            i as u32 + 1
        };
    }
    FloodingTable {
        islands: islands.to_vec(),
        rows,
        complete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(t: TeamId) -> String {
        ["Zed", "Amy", "Bob", "Cid"][t.0 as usize].to_string()
    }

    #[test]
    fn every_bot_meets_the_same_seeds() {
        let teams = [TeamId(0), TeamId(1), TeamId(2)];
        let islands = [IslandId(7), IslandId(9)];
        let games = plan(42, &teams, &islands, FloodingFormat { runs: 5 });
        assert_eq!(games.len(), 3 * 2 * 5);
        for g in &games {
            assert_eq!(g.seed, game_seed(42, g.island, g.run));
        }
        // One seed per (island, run), shared by all bots, distinct otherwise.
        let by_game: BTreeMap<(IslandId, u32), BTreeSet<u64>> =
            games.iter().fold(BTreeMap::new(), |mut m, g| {
                m.entry((g.island, g.run)).or_default().insert(g.seed);
                m
            });
        assert_eq!(by_game.len(), 10);
        assert!(by_game.values().all(|s| s.len() == 1));
        let distinct: BTreeSet<u64> = games.iter().map(|g| g.seed).collect();
        assert_eq!(distinct.len(), 10);
        // The seed follows the island's id, not its place in the list.
        let swapped = plan(
            42,
            &teams,
            &[IslandId(9), IslandId(7)],
            FloodingFormat { runs: 5 },
        );
        assert_eq!(swapped[0].seed, game_seed(42, IslandId(9), 0));
        assert_ne!(game_seed(42, IslandId(7), 0), game_seed(43, IslandId(7), 0));
        assert_eq!(FloodingFormat::default().runs, 1000);
    }

    #[test]
    fn the_score_is_the_sum_of_the_means() {
        let teams = [TeamId(0), TeamId(1), TeamId(2)];
        let islands = [IslandId(1), IslandId(2)];
        let format = FloodingFormat { runs: 3 };
        let mut results = Vec::new();
        let mut add = |team: u32, island: u32, rounds: [u32; 3]| {
            for (run, r) in rounds.into_iter().enumerate() {
                results.push(RunResult {
                    team: TeamId(team),
                    island: IslandId(island),
                    run: run as u32,
                    rounds: r,
                });
            }
        };
        add(0, 1, [10, 20, 31]); // mean 20.333…
        add(0, 2, [5, 5, 5]); // 5
        add(1, 1, [30, 30, 30]); // 30
        add(1, 2, [1, 1, 2]); // 1.333…
        add(2, 1, [10, 20, 30]); // 20
        add(2, 2, [5, 6, 5]); // 5.333…
        let table = rank(&teams, &islands, format, &results, &name).unwrap();
        assert!(table.complete);
        let lines: Vec<(u32, &str, String)> = table
            .rows
            .iter()
            .map(|r| (r.place, r.name.as_str(), r.score.to_string()))
            .collect();
        assert_eq!(
            lines,
            [
                (1, "Amy", "31.333".into()),
                (2, "Bob", "25.333".into()),
                (2, "Zed", "25.333".into()),
            ]
        );
        let zed = &table.rows[2];
        assert_eq!(zed.islands[0].mean, Rounds::from_millionths(20_333_333));
        assert_eq!(zed.islands[0].rounds, 61);
        assert_eq!(zed.islands[0].runs, 3);
        assert_eq!(zed.score.millionths(), 25_333_333);
        assert_eq!(table.rows[1].score.millionths(), 25_333_333);
        // Missing results are allowed and reported.
        let table = rank(&teams, &islands, format, &results[..17], &name).unwrap();
        assert!(!table.complete);
        let bob = table.rows.iter().find(|r| r.team == TeamId(2)).unwrap();
        assert_eq!(bob.islands[1].runs, 2);
        assert_eq!(bob.islands[1].mean, Rounds::mean(11, 2));
    }

    #[test]
    fn results_that_do_not_fit_are_refused() {
        let teams = [TeamId(0)];
        let islands = [IslandId(1)];
        let format = FloodingFormat { runs: 2 };
        let r = |team, island, run| RunResult {
            team: TeamId(team),
            island: IslandId(island),
            run,
            rounds: 1,
        };
        let go = |rs: &[RunResult]| rank(&teams, &islands, format, rs, &name);
        assert_eq!(
            go(&[r(1, 1, 0)]),
            Err(FloodingError::UnknownTeam(TeamId(1)))
        );
        assert_eq!(
            go(&[r(0, 2, 0)]),
            Err(FloodingError::UnknownIsland(IslandId(2)))
        );
        assert_eq!(
            go(&[r(0, 1, 2)]),
            Err(FloodingError::RunOutOfRange { run: 2, runs: 2 })
        );
        assert!(matches!(
            go(&[r(0, 1, 0), r(0, 1, 0)]),
            Err(FloodingError::Duplicate { run: 0, .. })
        ));
    }

    #[test]
    fn means_round_half_up_to_a_millionth() {
        assert_eq!(Rounds::mean(2, 3).millionths(), 666_667);
        assert_eq!(Rounds::mean(1, 3).millionths(), 333_333);
        assert_eq!(Rounds::mean(0, 0).millionths(), 0);
        assert_eq!(
            Rounds::mean(u64::from(u32::MAX) * 1000, 1000).millionths(),
            u64::from(u32::MAX) * 1_000_000
        );
        assert_eq!(Rounds::from_millionths(77_123_500).to_string(), "77.124");
        assert_eq!(Rounds::from_millionths(999_600).to_string(), "1.000");
        assert_eq!(serde_json::to_string(&Rounds::mean(3, 2)).unwrap(), "1.5");
    }
}
