//! [`SiteObserver`]: the site written while a tournament runs, only the
//! pages an event changed ([`Scope`]), from results kept up to date group
//! by group.
//!
//! Not here: the pages themselves ([`super::generate_from`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::engine::results::ResultsCache;
use crate::engine::run::{Event, Observer};
use crate::store::Store;

use super::{generate_from, Kept, RoundPage, Scope, SiteError, SiteOptions, SiteSummary};

/// Keeps the site up to date while a tournament runs: after every finished
/// group it writes that group's game pages and its members' pages (the
/// index and the round's page at every tenth of the round's groups), after
/// every round the index and the round's page (and its players' pages only
/// if a group's write is missing, or the round was the final), and after
/// the Evolution everything. The results come from a [`ResultsCache`]
/// refreshed for the event alone, so nothing is rebuilt whole while the
/// tournament runs. Game pages of a group are rendered once.
///
/// A failure to write the site is reported on stderr and does not stop the
/// tournament (the next event tries again).
pub struct SiteObserver {
    pub dir: PathBuf,
    pub tournament: i64,
    /// Options for every regeneration (its `skip_game_pages_of` grows as
    /// groups finish).
    pub options: SiteOptions,
    /// The last error, if the last regeneration failed.
    pub last_error: Option<String>,
    cache: Option<ResultsCache>,
    /// Per round: the groups seen finishing, and how many had when its
    /// page was last written.
    finished: BTreeMap<u32, (BTreeSet<u32>, usize)>,
    /// Groups `(round, group)` whose scope was written (without error)
    /// after they finished: their members' pages are up to date.
    written: BTreeSet<(u32, u32)>,
    /// What the writes so far keep for the next (the round pages' parts,
    /// the entries).
    kept: Kept,
}

impl SiteObserver {
    pub fn new(dir: impl Into<PathBuf>, tournament: i64) -> Self {
        SiteObserver {
            dir: dir.into(),
            tournament,
            options: SiteOptions::default(),
            last_error: None,
            cache: None,
            finished: BTreeMap::new(),
            written: BTreeSet::new(),
            kept: Kept::default(),
        }
    }

    /// Writes every page now (also usable after the run, for the final
    /// state).
    pub fn regenerate(&mut self, store: &Store) -> Result<SiteSummary, SiteError> {
        self.write(store, Scope::All)
    }

    /// Writes the pages of `scope`, from the results refreshed for it.
    pub fn write(&mut self, store: &Store, scope: Scope) -> Result<SiteSummary, SiteError> {
        if self.cache.is_none() {
            self.cache = Some(ResultsCache::new(store, self.tournament)?);
        }
        let cache = self.cache.as_mut().expect("the cache was just filled");
        let res = match scope {
            Scope::All => cache.refresh_all(store)?,
            Scope::Group { round, group, .. } => cache.refresh_group(store, round, group)?,
            Scope::Round(round) | Scope::RoundOverview(round) => {
                cache.refresh_round(store, round)?
            }
        };
        let summary = generate_from(
            store,
            self.tournament,
            res,
            &self.dir,
            &self.options,
            scope,
            &mut self.kept,
        )?;
        if !self.options.no_game_pages {
            // Only groups whose pages this write brought up to date.
            self.options.skip_game_pages_of.extend(
                summary
                    .finished_groups
                    .iter()
                    .filter(|(r, g)| scope.game_pages(*r, *g))
                    .copied(),
            );
        }
        Ok(summary)
    }

    /// The scope of a finished round: its players' pages only when a
    /// group's write is missing (the final round's end changes every
    /// page's frame: the cross-table).
    fn round_scope(&self, store: &Store, round: u32) -> Result<Scope, SiteError> {
        let is_final = store
            .round(self.tournament, round)?
            .is_none_or(|r| r.is_final);
        let n_groups = store.group_count(self.tournament, round)?;
        let all_written = (1..=n_groups).all(|g| self.written.contains(&(round, g)));
        Ok(if all_written && !is_final {
            Scope::RoundOverview(round)
        } else {
            Scope::Round(round)
        })
    }

    /// The scope of a finished group: with or without its round's page.
    fn group_scope(&mut self, store: &Store, round: u32, group: u32) -> Result<Scope, SiteError> {
        let n_groups = store.group_count(self.tournament, round)? as usize;
        let (seen, at_last_write) = self.finished.entry(round).or_default();
        seen.insert(group);
        let step = (n_groups / 10).max(1);
        let round_page = if seen.len() >= n_groups || seen.len() >= *at_last_write + step {
            *at_last_write = seen.len();
            RoundPage::Write
        } else {
            RoundPage::Later
        };
        Ok(Scope::Group {
            round,
            group,
            round_page,
        })
    }
}

impl Observer for SiteObserver {
    fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
        let written = match event {
            Event::GroupFinished { round, group } => {
                let written = self
                    .group_scope(store, *round, *group)
                    .and_then(|scope| self.write(store, scope));
                if written.is_ok() {
                    self.written.insert((*round, *group));
                }
                written
            }
            Event::RoundFinished { round, .. } => self
                .round_scope(store, *round)
                .and_then(|scope| self.write(store, scope)),
            Event::EvolutionFinished { .. } => self.write(store, Scope::All),
            _ => return Ok(()),
        };
        match written {
            Ok(_) => self.last_error = None,
            Err(e) => {
                let msg = format!("results site {}: {e}", self.dir.display());
                eprintln!("knobeln: {msg}");
                self.last_error = Some(msg);
            }
        }
        Ok(())
    }
}
