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
#[derive(Debug, Clone, Default)]
pub struct SiteOptions {
    /// The contest's name, shown on every page (default: "KNOBELN contest").
    pub title: Option<String>,
    /// Write no game pages at all (and link to none).
    pub no_game_pages: bool,
    /// Groups `(round, group)` whose game pages are already written and
    /// final: they are linked but not rendered again.
    pub skip_game_pages_of: BTreeSet<(u32, u32)>,
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

/// Whether a game has a page: it was played (has a record) and game pages
/// are on.
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
    (opts.skip_game_pages_of.contains(&key) && facts.finished_groups.contains(&key))
        || facts.games.get(&key).is_some_and(|m| m.contains(&g.slot))
}
