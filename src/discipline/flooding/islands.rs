//! The flooding island's contest islands drawn from the contest's seed.
//!
//! The 2012 seed: the kit's islands are test islands "die aber nicht für den
//! späteren Wettbewerb benutzt werden", and after the deadline the bots are
//! set out "auf verschiedenen, bisher noch nicht näher definierten Inseln".
//! When the organizer names no island files (`[flooding] islands`), the
//! server draws the contest's islands here, from the contest seed, at the
//! contest's start: nobody (the organizer included) knows them before, and
//! the same seed draws the same islands on every machine.
//!
//! An island is a connected blob of land grown from its middle, with some
//! fields already flooded and a ring of water around it, between 10×6 and
//! 30×20 fields (within the seed's 1000), the bot starting in the middle.
//! What it does not do: read files, name the islands on the site, or play
//! anything (`crate::contest::bots` fixes a contest's islands and keeps them).

use crate::discipline::flooding::rules::{Field, Island, Tile};
use crate::seed::{derive, SplitMix64};

/// The tag that separates island draws from the contest's other draws.
const ISLAND_TAG: u64 = 0x49_53_4C_41_4E_44;

/// The name of the `k`-th drawn island (from 1), as the site and the
/// results show it: `drawn-K`, which no team's name can be (a team name
/// has no `-`), so a team's island never passes for a drawn one.
pub fn drawn_island_name(k: u32) -> String {
    format!("drawn-{k}")
}

/// The `k`-th island (from 1) of the contest with seed `contest_seed`.
pub fn drawn_island(contest_seed: u64, k: u32) -> Island {
    let mut rng = SplitMix64::new(derive(contest_seed, &[ISLAND_TAG, u64::from(k)]));
    let width = 10 + rng.below(21) as u16; // 10..=30
    let height = 6 + rng.below(15) as u16; // 6..=20
    let (w, h) = (usize::from(width), usize::from(height));
    let mut tiles = vec![Tile::Sunk; w * h];
    let inner = (w - 2) * (h - 2);
    // Between 40 % and 70 % of the fields inside the ring of water are land.
    let land = inner * (40 + rng.below(31) as usize) / 100;
    let start = (w / 2, h / 2);
    tiles[start.1 * w + start.0] = Tile::Dry;
    let mut grown = vec![start];
    while grown.len() < land {
        // Grow from a random field of the blob into a random neighbour:
        // the blob stays connected by construction.
        let (x, y) = grown[rng.below(grown.len() as u64) as usize];
        let (nx, ny) = match rng.below(4) {
            0 => (x, y - 1),
            1 => (x + 1, y),
            2 => (x, y + 1),
            _ => (x - 1, y),
        };
        if nx == 0 || ny == 0 || nx == w - 1 || ny == h - 1 {
            continue;
        }
        if tiles[ny * w + nx] == Tile::Sunk {
            tiles[ny * w + nx] = Tile::Dry;
            grown.push((nx, ny));
        }
    }
    // About one land field in eight starts flooded (never the start).
    for &(x, y) in &grown[1..] {
        if rng.below(8) == 0 {
            tiles[y * w + x] = Tile::Flooded;
        }
    }
    let start = Field {
        x: start.0 as u16 + 1,
        y: start.1 as u16 + 1,
    };
    Island::new(width, height, tiles, Some(start)).expect("a drawn island is valid by construction")
}

/// The contest's drawn islands, named: `count` of them.
pub fn drawn_islands(contest_seed: u64, count: u32) -> Vec<(String, Island)> {
    (1..=count)
        .map(|k| (drawn_island_name(k), drawn_island(contest_seed, k)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::flooding::rules::MAX_FIELDS;

    #[test]
    fn a_drawn_island_is_valid_connected_and_the_same_for_the_same_seed() {
        for seed in 0..200u64 {
            for k in 1..=3 {
                let island = drawn_island(seed, k);
                assert_eq!(island, drawn_island(seed, k));
                let (w, h) = (island.width(), island.height());
                assert!((10..=30).contains(&w) && (6..=20).contains(&h));
                assert!(usize::from(w) * usize::from(h) <= MAX_FIELDS);
                // It reads back from its own text, as the site publishes it.
                assert_eq!(Island::parse(&island.to_text()).unwrap(), island);
                // Every land field is reachable from the start.
                let land = island.n_land();
                let mut seen = vec![island.start()];
                let mut i = 0;
                while i < seen.len() {
                    let f = seen[i];
                    i += 1;
                    for (dx, dy) in [(0i32, -1i32), (1, 0), (0, 1), (-1, 0)] {
                        let n = Field {
                            x: (i32::from(f.x) + dx) as u16,
                            y: (i32::from(f.y) + dy) as u16,
                        };
                        if island.tile(n) != Tile::Sunk && !seen.contains(&n) {
                            seen.push(n);
                        }
                    }
                }
                assert_eq!(seen.len(), land, "seed {seed} island {k}");
                // The border is water.
                for x in 1..=w {
                    assert_eq!(island.tile(Field { x, y: 1 }), Tile::Sunk);
                    assert_eq!(island.tile(Field { x, y: h }), Tile::Sunk);
                }
            }
        }
    }

    #[test]
    fn other_seeds_draw_other_islands() {
        let a: Vec<_> = drawn_islands(1, 3).into_iter().map(|(_, i)| i).collect();
        let b: Vec<_> = drawn_islands(2, 3).into_iter().map(|(_, i)| i).collect();
        assert_ne!(a, b);
        assert_ne!(a[0], a[1]);
        assert_eq!(
            drawn_islands(1, 2)
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>(),
            ["drawn-1", "drawn-2"]
        );
    }
}
