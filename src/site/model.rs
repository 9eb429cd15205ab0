//! What the site's pages share: the file names of pages, the options of
//! a write and its errors, the facts read from the store besides the
//! results, whether a game has a page, the Evolution's rows. Rendering
//! pages is `super`'s and `super::views`'; this file writes nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use super::pages::{EvolutionLabels, EvolutionPlacedView, TeamRef};
use crate::engine::results::{GameResult, GameStatus};
use crate::engine::run::TournamentConfig;
use crate::engine::EngineError;
use crate::store::StoreError;
use crate::tables::facts::EvolutionFacts;

/// Why the site could not be written (never a participant's doing).
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("rebuilding the results: {0}")]
    Engine(#[from] EngineError),
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("rendering a page: {0}")]
    Template(#[from] handlebars::RenderError),
    #[error("drawing {what}: {message}")]
    Plot { what: String, message: String },
    #[error("tournament {0}: its stored configuration is unreadable: {1}")]
    Config(i64, String),
}

/// What to write.
#[derive(Debug, Clone)]
pub struct SiteOptions {
    /// The contest's name, shown on every page (default: "KNOBELN contest").
    pub title: Option<String>,
    /// Write no game pages at all (and link to none).
    pub no_game_pages: bool,
    /// The bytes the contest's game pages may take on disk, in 4 KiB
    /// blocks (`[site] game_page_bytes`; see [`group_share`]).
    pub game_page_bytes: u64,
    /// Groups `(round, group)` whose game pages are already written and
    /// final: they are linked but not rendered again.
    pub skip_game_pages_of: BTreeSet<(u32, u32)>,
    /// Of the groups in `skip_game_pages_of`, those whose game pages the
    /// budget cut, and where (what the write that wrote them found).
    pub budget_cuts: BTreeMap<(u32, u32), BudgetCut>,
}

impl Default for SiteOptions {
    fn default() -> Self {
        SiteOptions {
            title: None,
            no_game_pages: false,
            game_page_bytes: DEFAULT_GAME_PAGE_BYTES,
            skip_game_pages_of: BTreeSet::new(),
            budget_cuts: BTreeMap::new(),
        }
    }
}

pub use crate::config::DEFAULT_GAME_PAGE_BYTES;

/// The block the budget counts in: what ext4 allocates a file, so a page
/// of 11.3 kB takes 12 KiB of the budget, as of the disk.
pub const PAGE_BLOCK: u64 = 4096;

/// The bytes of disk a page of `len` bytes takes: whole 4 KiB blocks.
pub fn on_disk(len: usize) -> u64 {
    (len as u64).div_ceil(PAGE_BLOCK) * PAGE_BLOCK
}

/// A group's share of the game-page budget `budget`, from what the round's
/// row holds when the round starts (never from how far others got):
/// the final round has an eighth of the budget (its one group: at most 41
/// teams, 861 games, about 10 MiB of pages); the other rounds share the
/// rest by halves, round `r` having `(budget - budget / 8) / 2^r` (a
/// round's games about halve from one round to the next), shared evenly
/// by its `n_groups` groups. The shares of all rounds add up to less
/// than `budget`, however many rounds there are; no share depends on the
/// order the groups finish in or on the pages other groups wrote.
pub fn group_share(budget: u64, round: u32, stage: Stage, n_groups: u32) -> u64 {
    let final_share = budget / 8;
    let round_share = match stage {
        Stage::Final => final_share,
        Stage::BeforeTheFinal => (budget - final_share).checked_shr(round).unwrap_or(0),
    };
    round_share / u64::from(n_groups.max(1))
}

/// Which part of the tournament a round is, for its share of the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// A round whose better half goes on.
    BeforeTheFinal,
    /// The last round: one group, its order is the result.
    Final,
}

impl Stage {
    /// The stage of a round whose row says `is_final`.
    pub fn of(is_final: bool) -> Stage {
        if is_final {
            Stage::Final
        } else {
            Stage::BeforeTheFinal
        }
    }
}

/// A team's share of its group's share `group_share` of the budget: even
/// by the group's `members` (its teams when it starts). Each game page's
/// blocks are charged to its two teams ([`page_charges`]), so the teams'
/// charges add up to the pages' blocks and never pass the group's share.
pub fn team_share(group_share: u64, members: usize) -> u64 {
    group_share / (members.max(1) as u64)
}

/// What a game page of `len` bytes charges each of its two teams, in
/// bytes of its blocks ([`on_disk`]): each side's own series of the plot
/// (`own`: the numbers it threw, the throws it won) is its own, the rest
/// of the page counts half for each; the page's blocks are shared in
/// that proportion, the two charges adding up to them exactly. A team
/// whose throws make a large plot pays for it; its opponent pays what
/// its own throws and half the rest take.
pub fn page_charges(len: usize, own: [usize; 2]) -> [u64; 2] {
    let blocks = on_disk(len);
    let len = len.max(1) as u128;
    let own = own.map(|o| (o as u128).min(len));
    let shared = len.saturating_sub(own[0] + own[1]);
    let p = (u128::from(blocks) * (2 * own[0] + shared) / (2 * len)) as u64;
    [p.min(blocks), blocks - p.min(blocks)]
}

/// Where the budget cut a group's game pages: its games are written in
/// slot order while each page's charges ([`page_charges`]) fit its teams'
/// shares; a team whose charge did not fit has no page from that game on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetCut {
    /// Each cut team (by name) and the first slot from which its games
    /// have no page.
    pub teams: BTreeMap<String, u32>,
    /// A team's share, in bytes of blocks.
    pub share: u64,
    /// The pages the group kept.
    pub kept: u32,
}

impl BudgetCut {
    /// Whether the cut takes the game `g`'s page: one of its teams was cut
    /// at or before its slot.
    pub fn cuts(&self, g: &GameResult) -> bool {
        g.players
            .iter()
            .any(|p| self.teams.get(&**p).is_some_and(|&s| g.slot >= s))
    }

    /// Why some games of a cut group have no page, in words (the round's
    /// page says it above the group's games).
    pub fn words(&self, budget: u64) -> String {
        let teams: Vec<String> = self
            .teams
            .iter()
            .map(|(team, slot)| format!("{team} from game {slot} on"))
            .collect();
        format!(
            "Some games have no page of their own: the game pages of this contest may take {} \
             on disk (the budget the organizer set), shared by the rounds, then evenly by the \
             groups of a round and by the teams of a group; each page counts for each of its \
             two teams by what its own throws take of it and half the rest, and the share of \
             each team ({}) holds its own pages only. This \
             group kept {} pages; the share of these teams was full, and their games have no \
             page: {}. Their results stand as shown.",
            size_text(budget),
            size_text(self.share),
            self.kept,
            teams.join(", ")
        )
    }
}

/// Why a team's games without a link have no page, in words (its page
/// says it above its games when one of them was cut).
pub(super) const TEAM_PAGES_NOTE: &str = "Games without a link have no page of their own: \
     the game pages of this contest may take only so much disk (the budget the organizer set), \
     shared by the rounds, their groups and each group's teams, and the share of one of the \
     game's teams was used by its games before (the page of its round says which). Their \
     results stand as shown.";

/// A size in words: bytes, KiB or MiB.
pub(crate) fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    } else if bytes >= 1 << 10 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

/// The file name of a team's page.
pub fn team_page(team_id: u32) -> String {
    format!("team-{team_id}.html")
}

/// The file name of a round's page.
pub fn round_page(round: u32) -> String {
    format!("round-{round}.html")
}

/// The file name of a game's page.
pub fn game_page(round: u32, group: u32, slot: u32) -> String {
    format!("game-r{round}-g{group}-s{slot}.html")
}

/// The Evolution's ranking rows and column labels, as mail and article
/// have them.
pub(super) fn evolution_rows(
    f: &EvolutionFacts,
    team: &dyn Fn(&str) -> TeamRef,
) -> (Vec<EvolutionPlacedView>, EvolutionLabels) {
    let rows = f
        .rows
        .iter()
        .map(|r| EvolutionPlacedView {
            place: r.place,
            team: team(&r.team),
            share: r.share.clone(),
            exemplars: r.exemplars.clone(),
            last: f.is_cycle.then(|| r.last_exemplars.to_string()),
        })
        .collect();
    let labels = EvolutionLabels {
        share: f.share_label.to_string(),
        exemplars: f.exemplars_label.to_string(),
        last: f.is_cycle.then(|| f.last_label.clone()),
    };
    (rows, labels)
}

/// Everything read from the store besides the results.
pub(super) struct Facts<'t> {
    pub(super) title: String,
    pub(super) seed: u64,
    pub(super) finished: bool,
    pub(super) started_at: Option<String>,
    pub(super) finished_at: Option<String>,
    pub(super) config: TournamentConfig,
    /// name → (team id, version id)
    pub(super) teams: &'t BTreeMap<String, (u32, i64)>,
    /// name → the team linked to its page (every team of `teams`).
    pub(super) links: &'t HashMap<String, TeamRef>,
    /// (round, group) → the slots with a stored game (the throws are read
    /// group by group while game pages are written)
    pub(super) games: BTreeMap<(u32, u32), HashSet<u32>>,
    pub(super) finished_groups: BTreeSet<(u32, u32)>,
    /// The groups whose game pages the budget cut (those of this write
    /// and the skipped ones' from the options).
    pub(super) cuts: BTreeMap<(u32, u32), BudgetCut>,
}

impl Facts<'_> {
    pub(super) fn team(&self, name: &str) -> TeamRef {
        match self.links.get(name) {
            Some(link) => link.clone(),
            None => TeamRef {
                name: name.into(),
                href: None,
            },
        }
    }
}

/// Whether a game has a page: it was played (has a record), game pages
/// are on, and the budget did not cut either of its teams' pages at or
/// before its slot.
pub(super) fn has_page(
    facts: &Facts<'_>,
    opts: &SiteOptions,
    round: u32,
    group: u32,
    g: &GameResult,
) -> bool {
    if opts.no_game_pages || g.status == GameStatus::Cancelled {
        return false;
    }
    let key = (round, group);
    if facts.cuts.get(&key).is_some_and(|c| c.cuts(g)) {
        return false;
    }
    (opts.skip_game_pages_of.contains(&key) && facts.finished_groups.contains(&key))
        || facts.games.get(&key).is_some_and(|m| m.contains(&g.slot))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::grouping::{group_sizes, is_final};

    /// The rounds' fields of a contest of `teams` teams where half of
    /// each field advances (rounded up, as ties at the cut do at least),
    /// and each round's group sizes.
    fn rounds_of(teams: usize) -> Vec<(u32, bool, Vec<usize>)> {
        let mut field = teams;
        let mut rounds = Vec::new();
        for round in 1.. {
            let fin = is_final(field);
            rounds.push((round, fin, group_sizes(field)));
            if fin {
                break;
            }
            field = field.div_ceil(2);
        }
        rounds
    }

    /// The pages of a group of `n` teams: every pair and every self-game
    /// (n(n+1)/2), each page of `page` bytes.
    fn group_pages(n: usize, page: usize) -> u64 {
        (n * (n + 1) / 2) as u64 * on_disk(page)
    }

    #[test]
    fn a_page_counts_the_4_kib_blocks_it_takes() {
        assert_eq!(on_disk(1), 4096);
        assert_eq!(on_disk(4096), 4096);
        assert_eq!(on_disk(4097), 8192);
        assert_eq!(on_disk(11_300), 12 * 1024);
    }

    /// The shares of all groups of all rounds add up to less than the
    /// budget, however many rounds a contest plays; the final has an
    /// eighth of it.
    #[test]
    fn the_shares_of_every_round_stay_within_the_budget() {
        for budget in [0, 1, 4096, 2 << 20, DEFAULT_GAME_PAGE_BYTES, u64::MAX] {
            for n_rounds in 1..=70u32 {
                let mut total: u128 = 0;
                for round in 1..=n_rounds {
                    let fin = round == n_rounds;
                    let n_groups = 1 + round % 7;
                    let share = group_share(budget, round, Stage::of(fin), n_groups);
                    total += u128::from(share) * u128::from(n_groups);
                }
                assert!(total <= u128::from(budget), "{budget} {n_rounds}: {total}");
            }
        }
        assert_eq!(group_share(8 << 20, 3, Stage::Final, 1), 1 << 20);
        assert_eq!(
            group_share(8 << 20, 1, Stage::BeforeTheFinal, 7),
            (7 << 20) / 2 / 7
        );
        assert_eq!(group_share(8 << 20, 64, Stage::BeforeTheFinal, 1), 0);
    }

    /// The default keeps every game's page of a contest of 400 teams at
    /// the largest pages measured (33 kB) and up to 1800 teams at the
    /// usual 11.3 kB, and holds 10,000 teams' pages to 1 GiB, about 150
    /// in each group of every round before the final and all of the
    /// final's.
    #[test]
    fn the_default_budget_keeps_every_page_at_400_teams_and_bounds_10000() {
        let fits = |teams: usize, page: usize| {
            rounds_of(teams).iter().all(|(round, fin, sizes)| {
                let share = group_share(
                    DEFAULT_GAME_PAGE_BYTES,
                    *round,
                    Stage::of(*fin),
                    sizes.len() as u32,
                );
                sizes.iter().all(|&n| group_pages(n, page) <= share)
            })
        };
        for teams in [2, 41, 42, 100, 400, 500, 900, 1800] {
            assert!(fits(teams, 11_300), "{teams} teams");
        }
        for teams in [2, 41, 42, 100, 400] {
            assert!(fits(teams, 33_000), "{teams} teams, large pages");
        }
        assert!(!fits(10_000, 11_300));
        let rounds = rounds_of(10_000);
        let mut total = 0;
        for (round, fin, sizes) in &rounds {
            let share = group_share(
                DEFAULT_GAME_PAGE_BYTES,
                *round,
                Stage::of(*fin),
                sizes.len() as u32,
            );
            let pages = |n: usize| ((n * (n + 1) / 2) as u64).min(share / on_disk(11_300));
            if *fin {
                assert_eq!(pages(sizes[0]), (sizes[0] * (sizes[0] + 1) / 2) as u64);
            } else {
                assert!(
                    (140..=160).contains(&pages(sizes[0])),
                    "{round}: {}",
                    pages(sizes[0])
                );
            }
            println!(
                "round {round}: {} groups of {}, {} pages a group",
                sizes.len(),
                sizes[0],
                pages(sizes[0])
            );
            total += sizes
                .iter()
                .map(|&n| pages(n) * on_disk(11_300))
                .sum::<u64>();
        }
        println!("10,000 teams: {total} bytes of game pages");
        assert!(total <= DEFAULT_GAME_PAGE_BYTES);
        assert!(total > DEFAULT_GAME_PAGE_BYTES / 2, "{total}");
    }
}
