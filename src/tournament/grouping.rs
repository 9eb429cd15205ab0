//! Group sizes and the random mixing of a round's field into groups.
//!
//! The announcement: "The tournament is performed in successive rounds with
//! randomly mixed groups of 20 to 41 participants." This module decides how
//! many groups a round has and who is in which; it does not decide who
//! advances (that is [`super::ranking`]) nor schedule games
//! ([`super::schedule`]).
//!
//! Choices:
//! - A round uses the *fewest* groups of at most 41 teams, with sizes as equal
//!   as possible (they differ by at most one, larger groups first). With at
//!   least 42 teams this always gives groups of 20..=41.
//! - A field of at most 41 teams is one group, and that round is the final
//!   round. A field smaller than 20 (a small contest) is still played, as one
//!   final group.
//! - Mixing: the field is sorted by [`TeamId`] (so the caller's order does not
//!   matter), shuffled with [`SplitMix64`] seeded with the given seed
//!   (Fisher–Yates), then cut into consecutive groups of [`group_sizes`]; each
//!   group's members are finally sorted by id for stable display. The seed of
//!   round `r` should be [`grouping_seed`]`(tournament_seed, r)`, i.e.
//!   `seed::derive(tournament_seed, &[r])`.
//!
//! **Invariant:** `tournament` never does I/O, never reads a clock, never draws
//! from a global RNG.

use super::units::TeamId;
use crate::seed::{derive, SplitMix64};

/// Smallest group of a non-final round.
pub const MIN_GROUP: usize = 20;
/// Largest group.
pub const MAX_GROUP: usize = 41;

/// The sizes of the groups of a round with `n_teams` teams: the fewest groups
/// of at most [`MAX_GROUP`], as equal as possible, larger groups first.
/// `0` → no group; `1..=41` → one group (the final round).
pub fn group_sizes(n_teams: usize) -> Vec<usize> {
    if n_teams == 0 {
        return Vec::new();
    }
    let groups = n_teams.div_ceil(MAX_GROUP);
    let base = n_teams / groups;
    let extra = n_teams % groups;
    (0..groups)
        .map(|g| if g < extra { base + 1 } else { base })
        .collect()
}

/// Whether a round with `n_teams` teams is the final round (one group, or
/// nothing left to play when `n_teams == 0`).
pub fn is_final(n_teams: usize) -> bool {
    n_teams <= MAX_GROUP
}

/// The seed for mixing the groups of round `round`:
/// `seed::derive(tournament_seed, &[round])`.
pub fn grouping_seed(tournament_seed: u64, round: u32) -> u64 {
    derive(tournament_seed, &[u64::from(round)])
}

/// Randomly mixes `teams` into groups of [`group_sizes`]`(teams.len())`.
/// Same set of teams and same seed → same groups, whatever the order of
/// `teams`. Each group is sorted by id. Duplicate ids are a caller bug.
pub fn draw_groups(teams: &[TeamId], seed: u64) -> Vec<Vec<TeamId>> {
    let mut field = teams.to_vec();
    field.sort_unstable();
    debug_assert!(
        field.windows(2).all(|w| w[0] != w[1]),
        "duplicate team in the field"
    );
    SplitMix64::new(seed).shuffle(&mut field);
    let mut rest = field.as_slice();
    group_sizes(teams.len())
        .into_iter()
        .map(|size| {
            let (group, tail) = rest.split_at(size);
            rest = tail;
            let mut group = group.to_vec();
            group.sort_unstable();
            group
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: u32) -> Vec<TeamId> {
        (1..=n).map(TeamId).collect()
    }

    #[test]
    fn group_sizes_for_every_field_from_1_to_200() {
        assert!(group_sizes(0).is_empty());
        for n in 1..=200usize {
            let sizes = group_sizes(n);
            assert_eq!(sizes.iter().sum::<usize>(), n, "n = {n}");
            if n <= MAX_GROUP {
                assert_eq!(sizes, vec![n], "n = {n}: a small field is one final group");
                assert!(is_final(n));
            } else {
                assert!(!is_final(n));
                assert!(sizes.len() >= 2);
                for &s in &sizes {
                    assert!((MIN_GROUP..=MAX_GROUP).contains(&s), "n = {n}: {sizes:?}");
                }
                // Fewest groups: one group fewer would need a group above 41.
                assert!(n > (sizes.len() - 1) * MAX_GROUP, "n = {n}: {sizes:?}");
            }
            let (max, min) = (sizes[0], *sizes.last().unwrap());
            assert!(max - min <= 1, "n = {n}: {sizes:?}");
            assert!(
                sizes.windows(2).all(|w| w[0] >= w[1]),
                "larger first: {sizes:?}"
            );
        }
        assert_eq!(group_sizes(42), vec![21, 21]);
        assert_eq!(group_sizes(83), vec![28, 28, 27]);
        assert_eq!(group_sizes(12), vec![12]);
    }

    #[test]
    fn draw_is_a_partition_with_group_sizes() {
        let teams = field(100);
        let groups = draw_groups(&teams, 7);
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        assert_eq!(sizes, group_sizes(100));
        let mut all: Vec<TeamId> = groups.concat();
        all.sort();
        assert_eq!(all, teams);
        for g in &groups {
            assert!(g.windows(2).all(|w| w[0] < w[1]), "group sorted by id");
        }
    }

    #[test]
    fn draw_is_deterministic_and_depends_on_the_seed() {
        let teams = field(90);
        let a = draw_groups(&teams, grouping_seed(1994, 1));
        assert_eq!(a, draw_groups(&teams, grouping_seed(1994, 1)));
        let mut reversed = teams.clone();
        reversed.reverse();
        assert_eq!(
            a,
            draw_groups(&reversed, grouping_seed(1994, 1)),
            "input order is irrelevant"
        );
        assert_ne!(a, draw_groups(&teams, grouping_seed(1994, 2)));
        assert_ne!(a, draw_groups(&teams, grouping_seed(1995, 1)));
    }

    #[test]
    fn draw_actually_mixes() {
        // Not simply consecutive ids per group.
        let teams = field(84);
        let groups = draw_groups(&teams, 3);
        assert_ne!(groups[0], (1..=28).map(TeamId).collect::<Vec<_>>());
    }

    #[test]
    fn small_fields() {
        assert!(draw_groups(&[], 1).is_empty());
        assert_eq!(draw_groups(&[TeamId(5)], 1), vec![vec![TeamId(5)]]);
        assert_eq!(draw_groups(&field(41), 9), vec![field(41)]);
    }
}
