//! The numbers and sentences that every text about a contest's results
//! shares (the contest mails, the results article, the results site):
//! shares as percentages, points with their halves, and the Knobeln
//! Evolution in one model: how many generations it took, how it ended, and
//! for each strategy its share and its number of exemplars (the mean over
//! the cycle for a cycle, beside the last generation's count, labelled).
//! One place, so that mail, article and site say the same.
//!
//! Pure: takes results and returns text and numbers; it reads no store and
//! writes nothing.

use std::fmt::Write as _;

use crate::decimal::push_unsigned;
use crate::engine::results::EvolutionResult;
use crate::tournament::EvolutionEnd;

/// A share of the population or of the points, as a percentage with two
/// decimals: `12.34 %`.
pub fn share_text(fraction: f64) -> String {
    format!("{:.2} %", 100.0 * fraction)
}

/// Points as people read them: whole points, or one decimal for the half
/// points of self-games (`1234`, `1234.5`).
pub fn points_text(points: f64) -> String {
    let mut out = String::new();
    push_points(&mut out, points);
    out
}

/// [`points_text`] written into `out`: whole halves in integers, not
/// through the formatter's floating point (a GRP table writes one a
/// game for each member; `{:.0}` of a float was most of its cost).
pub fn push_points(out: &mut String, points: f64) {
    let halves = (points * 2.0).round();
    // Integers to 2^53 are exact in a float; beyond, and NaN or an
    // infinity, the formatter says what it says.
    if halves.is_nan() || halves.abs() > 9_007_199_254_740_992.0 {
        if halves.rem_euclid(2.0) == 0.0 {
            let _ = write!(out, "{:.0}", halves / 2.0);
        } else {
            let _ = write!(out, "{:.1}", halves / 2.0);
        }
        return;
    }
    // `-0` for a negative zero, as `{:.0}` writes it.
    if halves.is_sign_negative() {
        out.push('-');
    }
    let magnitude = halves.abs() as u64;
    push_unsigned(out, magnitude / 2);
    if magnitude % 2 == 1 {
        out.push_str(".5");
    }
}

/// Whether points end in a half (a self-game's mean of its two sides).
pub fn has_half(points: f64) -> bool {
    (points * 2.0).round().rem_euclid(2.0) != 0.0
}

/// A number with at most one decimal, without a trailing `.0`: `12`, `12.5`.
fn one_decimal(x: f64) -> String {
    let tenths = (x * 10.0).round();
    if tenths.rem_euclid(10.0) == 0.0 {
        format!("{:.0}", tenths / 10.0)
    } else {
        format!("{:.1}", tenths / 10.0)
    }
}

/// One ranked strategy of the Evolution.
#[derive(Debug, Clone, PartialEq)]
pub struct EvolutionRow {
    pub place: u32,
    pub team: String,
    /// The fraction it is ranked by (the mean over the cycle for a cycle).
    pub fraction: f64,
    /// `fraction` as a percentage ([`share_text`]).
    pub share: String,
    /// Its exemplars in the generations it is ranked by: the mean over the
    /// cycle (one decimal at most), or the count of the last generation.
    pub exemplars: String,
    /// Its exemplars in the last generation computed.
    pub last_exemplars: u64,
}

/// The Evolution as every text tells it.
#[derive(Debug, Clone, PartialEq)]
pub struct EvolutionFacts {
    pub exemplars_per_strategy: u64,
    pub population: u64,
    /// The generations computed after the initial population (generation
    /// 0); the last one kept is generation `computed`. The one number of
    /// generations every text gives.
    pub computed: usize,
    /// How it ended and what the ranking is by, in one or two sentences
    /// (with `computed`).
    pub end: String,
    /// Whether the ranking is by the mean over a cycle: then the texts show
    /// the last generation's counts too, in a column of their own.
    pub is_cycle: bool,
    /// Column labels: the share, the exemplars, the last generation.
    pub share_label: &'static str,
    pub exemplars_label: &'static str,
    pub last_label: String,
    pub rows: Vec<EvolutionRow>,
    /// Strategies with fraction 0 (no rank).
    pub unranked: Vec<String>,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    crate::words::counted(n as u64, one, many)
}

/// The Evolution of `e` as every text tells it.
pub fn evolution_facts(e: &EvolutionResult) -> EvolutionFacts {
    let computed = e.generations.len().saturating_sub(1);
    let computed_words = format!(
        "{} computed after the initial population",
        plural(computed, "generation", "generations")
    );
    let (end, is_cycle) = match &e.end {
        EvolutionEnd::FixedPoint { generation } => (
            format!(
                "The population reached a fixed point: generation {generation} \
                 reproduces itself ({computed_words}). The ranking is by the \
                 shares of that generation."
            ),
            false,
        ),
        EvolutionEnd::Cycle {
            length,
            generations,
        } => {
            let span = match (generations.first(), generations.last()) {
                (Some(a), Some(b)) if a != b => format!("generations {a} to {b}"),
                (Some(a), _) => format!("generation {a}"),
                _ => "the last generations".to_string(),
            };
            (
                format!(
                    "The population ended in a cycle of {} ({span} repeat \
                     forever; {computed_words}). The ranking is by the mean \
                     share over the cycle.",
                    plural(*length, "generation", "generations")
                ),
                true,
            )
        }
        EvolutionEnd::GenerationCap { generations } => (
            format!(
                "The population did not repeat within the cap of {} \
                 ({computed_words}). The ranking is by the last generation.",
                plural(*generations, "generation", "generations")
            ),
            false,
        ),
    };
    let last = e.generations.last();
    let rows = e
        .ranking
        .iter()
        .map(|p| {
            let last_exemplars = last
                .and_then(|g| g.counts.get(&p.team).copied())
                .unwrap_or(p.count);
            let exemplars = if is_cycle {
                one_decimal(p.fraction * e.population as f64)
            } else {
                last_exemplars.to_string()
            };
            EvolutionRow {
                place: p.place,
                team: p.team.clone(),
                fraction: p.fraction,
                share: share_text(p.fraction),
                exemplars,
                last_exemplars,
            }
        })
        .collect();
    EvolutionFacts {
        exemplars_per_strategy: e.exemplars_per_strategy,
        population: e.population,
        computed,
        end,
        is_cycle,
        share_label: if is_cycle { "Mean share" } else { "Share" },
        exemplars_label: if is_cycle {
            "Mean exemplars"
        } else {
            "Exemplars"
        },
        last_label: format!("Gen. {computed}"),
        rows,
        unranked: e.unranked.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::results::{EvolutionPlaced, Generation};

    fn gen(c: [u64; 2]) -> Generation {
        Generation {
            counts: ["a", "b"]
                .iter()
                .map(|s| s.to_string())
                .zip(c)
                .collect::<BTreeMap<_, _>>(),
        }
    }

    /// Points are written as the formatter wrote them before (`{:.0}` of
    /// whole points, `{:.1}` of halves), at every kind of value: halves,
    /// quarters rounded, a negative zero, the edge of exact integers,
    /// beyond it, NaN and the infinities.
    #[test]
    fn points_read_as_the_formatter_wrote_them() {
        let before = |points: f64| {
            let halves = (points * 2.0).round();
            if halves.rem_euclid(2.0) == 0.0 {
                format!("{:.0}", halves / 2.0)
            } else {
                format!("{:.1}", halves / 2.0)
            }
        };
        let mut values = vec![
            0.0,
            -0.0,
            -0.1,
            0.25,
            0.75,
            -0.75,
            1.5,
            1234.5,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740992.0,
            1e300,
            -1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        values.extend((0..4000).map(|q| f64::from(q) * 0.25 - 500.0));
        for v in values {
            assert_eq!(points_text(v), before(v), "{v:?}");
        }
    }

    #[test]
    fn a_cycle_shows_the_means_and_the_last_generation_labelled() {
        // Generations 0..=3, generations 2 and 3 repeat: 3 computed.
        let e = EvolutionResult {
            population: 10,
            exemplars_per_strategy: 5,
            generations: vec![gen([5, 5]), gen([6, 4]), gen([8, 2]), gen([7, 3])],
            end: EvolutionEnd::Cycle {
                length: 2,
                generations: vec![2, 3],
            },
            ranking: vec![
                EvolutionPlaced {
                    team: "a".into(),
                    fraction: 0.75,
                    count: 7,
                    place: 1,
                },
                EvolutionPlaced {
                    team: "b".into(),
                    fraction: 0.25,
                    count: 3,
                    place: 2,
                },
            ],
            unranked: vec![],
        };
        let f = evolution_facts(&e);
        assert_eq!(f.computed, 3);
        assert!(f.is_cycle);
        assert!(f
            .end
            .contains("generations 2 to 3 repeat forever; 3 generations computed"));
        assert_eq!(f.rows[0].share, "75.00 %");
        assert_eq!(f.rows[0].exemplars, "7.5");
        assert_eq!(f.rows[0].last_exemplars, 7);
        assert_eq!(f.rows[1].exemplars, "2.5");
        assert_eq!(f.last_label, "Gen. 3");
        assert_eq!(
            (f.share_label, f.exemplars_label),
            ("Mean share", "Mean exemplars")
        );
    }

    #[test]
    fn points_and_shares() {
        assert_eq!(points_text(12.0), "12");
        assert_eq!(points_text(12.5), "12.5");
        assert!(has_half(0.5) && !has_half(3.0));
        assert_eq!(share_text(0.5), "50.00 %");
        assert_eq!(one_decimal(3.04), "3");
        assert_eq!(one_decimal(3.25), "3.3");
    }
}
