//! Discipline 2, Knobeln Evolution: a population dynamics computed exactly
//! from the final round's results.
//!
//! The participants are the strategies ranked in the final round of
//! Discipline 1 (strategies disqualified there are out of the contest). No
//! game is played here: the result of every virtual game is taken from the
//! final round. This module does not run games, choose the participants, or
//! format the report.
//!
//! **Invariant:** `tournament` never does I/O, never reads a clock, never draws
//! from a global RNG. All arithmetic is exact (integers, `u128`).
//!
//! # The computation
//!
//! - The payoff matrix is in half-points: `payoff[i][j]` is twice what
//!   strategy `i` won in its final-round game against `j`; `payoff[i][i]` is
//!   the self-game's value for the strategy, the mean of its two sides, i.e.
//!   the sum of both sides (see [`payoff_matrix`]).
//! - The population starts with `N` exemplars of each of the `n` strategies
//!   (default 5), `T = N × n` in all; `T` stays constant.
//! - In a virtual round every exemplar plays every other exemplar once (not
//!   itself; two exemplars of the same strategy play the self-game). With
//!   `c_i` exemplars of strategy `i`, its exemplars win together
//!   `P_i = c_i × (Σ_j c_j·payoff[i][j] − payoff[i][i])`.
//! - Its share `F_i = P_i / Σ_k P_k` sets its next count to the rounded value
//!   of `T·F_i`, apportioned by the largest-remainder (Hamilton) method so
//!   that the counts always sum to exactly `T`: everyone gets
//!   `floor(T·P_i / ΣP)`, and the seats left over go one each to the largest
//!   remainders; equal remainders: higher `P_i` first, then lower index.
//!   A strategy with count 0 stays at 0.
//! - If nobody won any points, the counts stay unchanged (a fixed point).
//! - The evolution ends when a count vector repeats: a fixed point, or a
//!   cycle (its length and generations are reported). It also stops at a
//!   generation cap (default 1000 steps), which is reported.
//!
//! # Ranking
//!
//! By the fraction `count / T` a strategy holds at the end, descending; at a
//! fixed point that is the final generation's; in a cycle it is the mean
//! fraction over the generations of the cycle; when the cap was hit, the last
//! generation's. Fraction 0 gets no rank. Equal fractions share a place
//! (listed in the order the strategies were given, which should be the final
//! round's table order).

use super::schedule::CountedGame;
use super::units::TeamId;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Parameters of the Evolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvolutionConfig {
    /// Initial exemplars of each strategy (`N`).
    pub exemplars_per_strategy: u64,
    /// At most this many generations are computed after the initial one.
    pub max_generations: u32,
}

impl Default for EvolutionConfig {
    fn default() -> Self {
        EvolutionConfig {
            exemplars_per_strategy: 5,
            max_generations: 1000,
        }
    }
}

/// How the evolution ended. Generation 0 is the initial population.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EvolutionEnd {
    /// Generation `generation` (the last one kept) reproduces itself.
    FixedPoint { generation: usize },
    /// The kept generations `generations` (consecutive, `length` of them)
    /// repeat forever: the one after the last is the first again.
    Cycle {
        length: usize,
        generations: Vec<usize>,
    },
    /// No repetition within the cap; `generations` steps were computed.
    GenerationCap { generations: usize },
}

/// One strategy's rank in the Evolution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvolutionRank {
    pub team: TeamId,
    /// 1-based, shared for equal fractions.
    pub place: u32,
    /// Its count in the last generation kept.
    pub count: u64,
    /// The fraction it is ranked by (mean over the cycle for a cycle).
    pub fraction: f64,
}

/// The complete course and result of the Evolution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evolution {
    /// Indexes the columns of `generations`.
    pub strategies: Vec<TeamId>,
    pub exemplars_per_strategy: u64,
    /// Population size `T`.
    pub total: u64,
    /// Counts per strategy, generation 0 first; no generation repeats.
    pub generations: Vec<Vec<u64>>,
    pub end: EvolutionEnd,
    /// Strategies with a non-zero fraction, best first.
    pub ranking: Vec<EvolutionRank>,
    /// Strategies with fraction 0 (no rank), in the given order.
    pub unranked: Vec<TeamId>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvolutionError {
    #[error("the payoff matrix must be {0}×{0}")]
    NotSquare(usize),
    #[error("the number of exemplars per strategy must be at least 1")]
    NoExemplars,
    #[error("the numbers are too large for exact arithmetic")]
    Overflow,
    #[error("strategy {0} appears twice")]
    DuplicateStrategy(TeamId),
    #[error("no counted game between {0} and {1}")]
    MissingGame(TeamId, TeamId),
    #[error("two counted games between {0} and {1}")]
    DuplicateGame(TeamId, TeamId),
}

/// The payoff matrix (half-points) of `strategies` from the final round's
/// counted games: `2 × points` of `i` in its game against `j`, and for the
/// self-game the sum of both sides. Games involving other teams are ignored;
/// every pair (and every self-game) must have exactly one game.
pub fn payoff_matrix(
    strategies: &[TeamId],
    games: &[CountedGame],
) -> Result<Vec<Vec<u64>>, EvolutionError> {
    let mut index = HashMap::new();
    for (k, &t) in strategies.iter().enumerate() {
        if index.insert(t, k).is_some() {
            return Err(EvolutionError::DuplicateStrategy(t));
        }
    }
    let n = strategies.len();
    let mut m: Vec<Vec<Option<u64>>> = vec![vec![None; n]; n];
    for g in games {
        let (Some(&i), Some(&j)) = (index.get(&g.players[0]), index.get(&g.players[1])) else {
            continue;
        };
        if m[i][j].is_some() {
            return Err(EvolutionError::DuplicateGame(g.players[0], g.players[1]));
        }
        if i == j {
            m[i][i] = Some(g.points[0] + g.points[1]);
        } else {
            m[i][j] = Some(2 * g.points[0]);
            m[j][i] = Some(2 * g.points[1]);
        }
    }
    m.into_iter()
        .enumerate()
        .map(|(i, row)| {
            row.into_iter()
                .enumerate()
                .map(|(j, v)| v.ok_or(EvolutionError::MissingGame(strategies[i], strategies[j])))
                .collect()
        })
        .collect()
}

fn check_square(payoff: &[Vec<u64>], n: usize) -> Result<(), EvolutionError> {
    if payoff.len() != n || payoff.iter().any(|r| r.len() != n) {
        return Err(EvolutionError::NotSquare(n));
    }
    Ok(())
}

/// Half-points won by all exemplars of each strategy in one virtual round:
/// `c_i × (Σ_j c_j·payoff[i][j] − payoff[i][i])` (0 when `c_i = 0`).
pub fn virtual_round_points(
    counts: &[u64],
    payoff: &[Vec<u64>],
) -> Result<Vec<u128>, EvolutionError> {
    check_square(payoff, counts.len())?;
    let mut out = Vec::with_capacity(counts.len());
    for (i, &ci) in counts.iter().enumerate() {
        if ci == 0 {
            out.push(0);
            continue;
        }
        let mut sum: u128 = 0;
        for (j, &cj) in counts.iter().enumerate() {
            let term = u128::from(cj)
                .checked_mul(u128::from(payoff[i][j]))
                .ok_or(EvolutionError::Overflow)?;
            sum = sum.checked_add(term).ok_or(EvolutionError::Overflow)?;
        }
        // c_i >= 1, so the sum contains payoff[i][i] at least once.
        let per_exemplar_sum = sum - u128::from(payoff[i][i]);
        out.push(
            u128::from(ci)
                .checked_mul(per_exemplar_sum)
                .ok_or(EvolutionError::Overflow)?,
        );
    }
    Ok(out)
}

/// The next generation's counts (same total), by largest remainder.
pub fn next_generation(counts: &[u64], payoff: &[Vec<u64>]) -> Result<Vec<u64>, EvolutionError> {
    let points = virtual_round_points(counts, payoff)?;
    let total_points = points
        .iter()
        .try_fold(0u128, |a, &p| a.checked_add(p))
        .ok_or(EvolutionError::Overflow)?;
    if total_points == 0 {
        return Ok(counts.to_vec());
    }
    let t = u128::from(counts.iter().sum::<u64>());
    let mut next = Vec::with_capacity(counts.len());
    let mut remainders = Vec::with_capacity(counts.len());
    for &p in &points {
        let quota = t.checked_mul(p).ok_or(EvolutionError::Overflow)?;
        next.push((quota / total_points) as u64);
        remainders.push(quota % total_points);
    }
    let left = (t - next.iter().map(|&c| u128::from(c)).sum::<u128>()) as usize;
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by(|&a, &b| {
        remainders[b]
            .cmp(&remainders[a])
            .then(points[b].cmp(&points[a]))
            .then(a.cmp(&b))
    });
    for &k in order.iter().take(left) {
        next[k] += 1;
    }
    Ok(next)
}

/// Runs the Evolution of `strategies` (in the final round's table order)
/// with the half-point `payoff` matrix.
pub fn evolve(
    strategies: &[TeamId],
    payoff: &[Vec<u64>],
    config: &EvolutionConfig,
) -> Result<Evolution, EvolutionError> {
    let n = strategies.len();
    check_square(payoff, n)?;
    if config.exemplars_per_strategy == 0 {
        return Err(EvolutionError::NoExemplars);
    }
    let total = config
        .exemplars_per_strategy
        .checked_mul(n as u64)
        .ok_or(EvolutionError::Overflow)?;
    let mut generations = vec![vec![config.exemplars_per_strategy; n]];
    let mut seen: HashMap<Vec<u64>, usize> = HashMap::from([(generations[0].clone(), 0)]);
    let mut end = EvolutionEnd::GenerationCap {
        generations: config.max_generations as usize,
    };
    for _ in 0..config.max_generations {
        let next = next_generation(generations.last().expect("generation 0"), payoff)?;
        if let Some(&first) = seen.get(&next) {
            let last = generations.len() - 1;
            end = if first == last {
                EvolutionEnd::FixedPoint { generation: last }
            } else {
                EvolutionEnd::Cycle {
                    length: last - first + 1,
                    generations: (first..=last).collect(),
                }
            };
            break;
        }
        seen.insert(next.clone(), generations.len());
        generations.push(next);
    }

    // Score: sum of counts over the ranking generations (`len` of them).
    let ranking_gens: Vec<usize> = match &end {
        EvolutionEnd::Cycle { generations, .. } => generations.clone(),
        _ => vec![generations.len() - 1],
    };
    let last = generations.last().expect("generation 0");
    let score: Vec<u64> = (0..n)
        .map(|i| ranking_gens.iter().map(|&g| generations[g][i]).sum())
        .collect();
    let denominator = (ranking_gens.len() as u64 * total) as f64;
    let mut order: Vec<usize> = (0..n).filter(|&i| score[i] > 0).collect();
    order.sort_by(|&a, &b| score[b].cmp(&score[a]).then(a.cmp(&b)));
    let mut ranking: Vec<EvolutionRank> = Vec::with_capacity(order.len());
    for (k, &i) in order.iter().enumerate() {
        let place = match ranking.last() {
            Some(prev) if score[order[k - 1]] == score[i] => prev.place,
            _ => k as u32 + 1,
        };
        ranking.push(EvolutionRank {
            team: strategies[i],
            place,
            count: last[i],
            fraction: score[i] as f64 / denominator,
        });
    }
    let unranked = (0..n)
        .filter(|&i| score[i] == 0)
        .map(|i| strategies[i])
        .collect();
    Ok(Evolution {
        strategies: strategies.to_vec(),
        exemplars_per_strategy: config.exemplars_per_strategy,
        total,
        generations,
        end,
        ranking,
        unranked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::SplitMix64;
    use crate::tournament::schedule::GameKey;

    fn ids(n: u32) -> Vec<TeamId> {
        (1..=n).map(TeamId).collect()
    }

    fn places(e: &Evolution) -> Vec<(u32, u32)> {
        e.ranking.iter().map(|r| (r.team.0, r.place)).collect()
    }

    #[test]
    fn two_strategies_reach_a_hand_computed_fixed_point() {
        // N = 5, T = 10, payoff [[2, 6], [2, 2]] (half-points).
        // (5,5): P = 5·(10+30−2) = 190, 5·(10+10−2) = 90; ΣP = 280;
        //        10·190/280 = 6 r 220, 10·90/280 = 3 r 60 → one seat left → (7,3)
        // (7,3): P = 7·(14+18−2) = 210, 3·(14+6−2) = 54; ΣP = 264;
        //        2100/264 = 7 r 252, 540/264 = 2 r 12 → (8,2)
        // (8,2): P = 8·26 = 208, 2·18 = 36; ΣP = 244;
        //        2080/244 = 8 r 128, 360/244 = 1 r 116 → (9,1)
        // (9,1): P = 9·22 = 198, 1·18 = 18; ΣP = 216;
        //        1980/216 = 9 r 36, 180/216 = 0 r 180 → (9,1): fixed point.
        let payoff = vec![vec![2, 6], vec![2, 2]];
        let e = evolve(&ids(2), &payoff, &EvolutionConfig::default()).unwrap();
        assert_eq!(e.total, 10);
        assert_eq!(
            e.generations,
            vec![vec![5, 5], vec![7, 3], vec![8, 2], vec![9, 1]]
        );
        assert_eq!(e.end, EvolutionEnd::FixedPoint { generation: 3 });
        assert_eq!(places(&e), vec![(1, 1), (2, 2)]);
        assert_eq!(e.ranking[0].fraction, 0.9);
        assert_eq!(e.ranking[1].count, 1);
        assert!(e.unranked.is_empty());
        assert_eq!(
            virtual_round_points(&[5, 5], &payoff).unwrap(),
            vec![190, 90]
        );
    }

    #[test]
    fn rock_paper_scissors_cycles_from_the_start() {
        // A beats B, B beats C, C beats A; N = 2, T = 6.
        // (2,2,2): P = 4, 8, 8; ΣP = 20; floors 1, 2, 2, remainders 4, 8, 8:
        //          B and C tie in remainder and points, the lower index (B)
        //          gets the seat → (1,3,2)
        // (1,3,2): P = 3, 12, 4; ΣP = 19 → 0 r18, 3 r15, 1 r5 → (1,4,1)
        // (1,4,1): P = 4, 8, 2; ΣP = 14 → 1 r10, 3 r6, 0 r12 → (2,3,1)
        // (2,3,1): P = 6, 6, 4; ΣP = 16 → 2 r4, 2 r4, 1 r8 → (2,2,2) again.
        let payoff = vec![vec![0, 1, 0], vec![0, 0, 2], vec![2, 0, 0]];
        let config = EvolutionConfig {
            exemplars_per_strategy: 2,
            ..Default::default()
        };
        let e = evolve(&ids(3), &payoff, &config).unwrap();
        assert_eq!(
            e.generations,
            vec![vec![2, 2, 2], vec![1, 3, 2], vec![1, 4, 1], vec![2, 3, 1]]
        );
        assert_eq!(
            e.end,
            EvolutionEnd::Cycle {
                length: 4,
                generations: vec![0, 1, 2, 3]
            }
        );
        // Mean over the cycle: A 6/24, B 12/24, C 6/24.
        assert_eq!(places(&e), vec![(2, 1), (1, 2), (3, 2)]);
        assert_eq!(e.ranking[0].fraction, 0.5);
        assert_eq!(e.ranking[1].fraction, 0.25);
        assert_eq!(e.ranking[1].count, 2, "count in the last generation kept");
    }

    #[test]
    fn a_cycle_after_a_transient_reports_its_generations() {
        // Generations checked against an independent reference implementation.
        let payoff = vec![vec![0, 2, 0], vec![0, 0, 5], vec![4, 0, 0]];
        let e = evolve(&ids(3), &payoff, &EvolutionConfig::default()).unwrap();
        assert_eq!(
            e.generations,
            vec![
                vec![5, 5, 5],
                vec![3, 7, 5],
                vec![2, 10, 3],
                vec![3, 10, 2],
                vec![5, 8, 2],
                vec![6, 6, 3],
                vec![5, 6, 4],
            ]
        );
        assert_eq!(
            e.end,
            EvolutionEnd::Cycle {
                length: 6,
                generations: (1..=6).collect()
            }
        );
        assert_eq!(
            next_generation(&e.generations[6], &payoff).unwrap(),
            e.generations[1]
        );
        // Sums over the cycle: A 24, B 47, C 19 (of 90).
        assert_eq!(places(&e), vec![(2, 1), (1, 2), (3, 3)]);
        assert_eq!(e.ranking[0].fraction, 47.0 / 90.0);
    }

    #[test]
    fn all_zero_payoffs_keep_the_population_and_share_first_place() {
        let payoff = vec![vec![0; 4]; 4];
        let e = evolve(&ids(4), &payoff, &EvolutionConfig::default()).unwrap();
        assert_eq!(e.generations, vec![vec![5; 4]]);
        assert_eq!(e.end, EvolutionEnd::FixedPoint { generation: 0 });
        assert_eq!(places(&e), vec![(1, 1), (2, 1), (3, 1), (4, 1)]);
        assert!(e.ranking.iter().all(|r| r.fraction == 0.25));
    }

    #[test]
    fn extinct_strategies_get_no_rank() {
        // B never wins anything: it dies out in one generation.
        let payoff = vec![vec![2, 2, 2], vec![0, 0, 0], vec![2, 2, 2]];
        let e = evolve(&ids(3), &payoff, &EvolutionConfig::default()).unwrap();
        assert_eq!(e.generations[1][1], 0);
        assert_eq!(e.unranked, vec![TeamId(2)]);
        assert_eq!(places(&e), vec![(1, 1), (3, 2)]);
        assert_eq!(e.end, EvolutionEnd::FixedPoint { generation: 1 });
        assert_eq!(e.generations[1], vec![8, 0, 7], "seat to the lower index");
    }

    #[test]
    fn largest_remainder_always_keeps_the_total_exactly() {
        let mut rng = SplitMix64::new(1994);
        for _ in 0..300 {
            let n = 1 + rng.below(12) as usize;
            let per = 1 + rng.below(9);
            let payoff: Vec<Vec<u64>> = (0..n)
                .map(|_| {
                    (0..n)
                        .map(|_| {
                            if rng.below(4) == 0 {
                                0
                            } else {
                                rng.below(26_000)
                            }
                        })
                        .collect()
                })
                .collect();
            let config = EvolutionConfig {
                exemplars_per_strategy: per,
                max_generations: 50,
            };
            let e = evolve(&ids(n as u32), &payoff, &config).unwrap();
            for g in &e.generations {
                assert_eq!(g.iter().sum::<u64>(), per * n as u64);
            }
            // Each next count is the rounded share: within 1 of T·F.
            let g = &e.generations[0];
            let p = virtual_round_points(g, &payoff).unwrap();
            let sum: u128 = p.iter().sum();
            if sum > 0 {
                let next = next_generation(g, &payoff).unwrap();
                for i in 0..n {
                    let exact = (per * n as u64) as f64 * p[i] as f64 / sum as f64;
                    assert!((next[i] as f64 - exact).abs() < 1.0);
                }
            }
            let ranked: usize = e.ranking.len() + e.unranked.len();
            assert_eq!(ranked, n);
        }
    }

    #[test]
    fn the_generation_cap_is_reported() {
        let payoff = vec![vec![0, 2, 0], vec![0, 0, 5], vec![4, 0, 0]];
        let config = EvolutionConfig {
            max_generations: 3,
            ..Default::default()
        };
        let e = evolve(&ids(3), &payoff, &config).unwrap();
        assert_eq!(e.end, EvolutionEnd::GenerationCap { generations: 3 });
        assert_eq!(e.generations.len(), 4);
        // Ranked by the last generation, (3, 10, 2).
        assert_eq!(places(&e), vec![(2, 1), (1, 2), (3, 3)]);
    }

    #[test]
    fn payoff_matrix_from_final_round_games() {
        let g = |p: u32, q: u32, points: [u64; 2]| CountedGame {
            key: GameKey {
                round: 3,
                group: 0,
                slot: 0,
            },
            players: [TeamId(p), TeamId(q)],
            points,
        };
        let games = vec![
            g(1, 1, [3, 4]),
            g(1, 2, [10, 2]),
            g(2, 2, [5, 5]),
            g(2, 9, [1, 1]), // not a participant: ignored
        ];
        let m = payoff_matrix(&ids(2), &games).unwrap();
        assert_eq!(m, vec![vec![7, 20], vec![4, 10]]);
        assert_eq!(
            payoff_matrix(&ids(2), &games[..2]),
            Err(EvolutionError::MissingGame(TeamId(2), TeamId(2)))
        );
        let mut twice = games.clone();
        twice.push(g(2, 1, [0, 0]));
        assert!(matches!(
            payoff_matrix(&ids(2), &twice),
            Err(EvolutionError::DuplicateGame(..))
        ));
    }

    #[test]
    fn bad_input_is_rejected() {
        assert_eq!(
            evolve(&ids(2), &[vec![0, 0]], &EvolutionConfig::default()),
            Err(EvolutionError::NotSquare(2))
        );
        let zero = EvolutionConfig {
            exemplars_per_strategy: 0,
            ..Default::default()
        };
        assert_eq!(
            evolve(&ids(1), &[vec![1]], &zero),
            Err(EvolutionError::NoExemplars)
        );
        let big = vec![vec![u64::MAX; 2]; 2];
        let many = EvolutionConfig {
            exemplars_per_strategy: u64::MAX / 2,
            ..Default::default()
        };
        assert_eq!(evolve(&ids(2), &big, &many), Err(EvolutionError::Overflow));
    }

    #[test]
    fn result_serializes() {
        let e = evolve(
            &ids(2),
            &[vec![2, 6], vec![2, 2]],
            &EvolutionConfig::default(),
        )
        .unwrap();
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["end"]["kind"], "fixed_point");
        assert_eq!(json["generations"][3][0], 9);
    }
}
