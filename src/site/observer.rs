//! [`SiteObserver`]: the site written while a tournament runs, only the
//! pages an event changed ([`Scope`]), from results kept up to date group
//! by group.
//!
//! Not here: the pages themselves ([`super::generate_from`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::engine::results::{GroupOutcome, ResultsCache};
use crate::engine::run::{Event, Observer};
use crate::store::Store;

use super::{generate_from, Kept, RoundPage, Scope, SiteError, SiteOptions, SiteSummary};

/// Keeps the site up to date while a tournament runs: after every finished
/// group it writes that group's game pages and its members' pages (the
/// index and the round's page when the round's finished groups have
/// doubled since their last write: after 1, 2, 4, 8, … groups, but not at
/// the round's last group, whose next event, the round's end, writes
/// both), after
/// every round the index and the round's page (and its players' pages only
/// if a group's write is missing, or the round was the final), and after
/// the Evolution everything. Once the tournament is marked finished,
/// [`SiteObserver::finish`] writes the index alone if the Evolution's
/// write was the last and succeeded (nothing else shows that the
/// tournament finished), or everything otherwise. The results come from a [`ResultsCache`]
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
    /// How many team pages this observer wrote with their tails copied
    /// from the page written before (see [`super::SiteSummary`]).
    pub team_tails_copied: usize,
    /// How many team pages this observer wrote with their settled groups'
    /// rows copied from the page written before.
    pub team_rows_copied: usize,
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
    /// Whether the last write was of every page and succeeded: until the
    /// next event, only the index can be behind (the tournament's state).
    all_written_last: bool,
}

impl SiteObserver {
    pub fn new(dir: impl Into<PathBuf>, tournament: i64) -> Self {
        SiteObserver {
            dir: dir.into(),
            tournament,
            options: SiteOptions::default(),
            last_error: None,
            team_tails_copied: 0,
            team_rows_copied: 0,
            cache: None,
            finished: BTreeMap::new(),
            written: BTreeSet::new(),
            kept: Kept::default(),
            all_written_last: false,
        }
    }

    /// Writes every page now (also usable after the run, for the final
    /// state).
    pub fn regenerate(&mut self, store: &Store) -> Result<SiteSummary, SiteError> {
        self.write(store, Scope::All)
    }

    /// Brings the site up to date after the tournament was marked
    /// finished: the index alone if the last write was of every page (the
    /// Evolution's) and succeeded, since the tournament's state and end
    /// are on the index only; every page otherwise.
    pub fn finish(&mut self, store: &Store) -> Result<SiteSummary, SiteError> {
        let scope = if self.all_written_last {
            Scope::Index
        } else {
            Scope::All
        };
        let summary = self.write(store, scope)?;
        // The site is final: no hidden spares of older pages in it.
        super::remove_spares(&self.dir)?;
        Ok(summary)
    }

    /// Writes the pages of `scope`, from the results refreshed for it.
    pub fn write(&mut self, store: &Store, scope: Scope) -> Result<SiteSummary, SiteError> {
        self.write_given(store, scope, None)
    }

    /// Writes the pages of `scope`; a group's from its outcome as the
    /// engine computed it, if given (its games not read again).
    fn write_given(
        &mut self,
        store: &Store,
        scope: Scope,
        outcome: Option<&GroupOutcome>,
    ) -> Result<SiteSummary, SiteError> {
        if self.cache.is_none() {
            self.cache = Some(ResultsCache::new(store, self.tournament)?);
        }
        self.all_written_last = false;
        let cache = self.cache.as_mut().expect("the cache was just filled");
        let res = match scope {
            // Settled groups are not computed again: cheap once all are.
            Scope::All | Scope::Index => cache.refresh_all(store)?,
            Scope::Group { round, group, .. } => match outcome {
                Some(outcome) => cache.refresh_finished_group(store, round, group, outcome)?,
                None => cache.refresh_group(store, round, group)?,
            },
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
            // Only groups whose pages this write brought up to date, with
            // where the budget cut their pages.
            for key in summary
                .finished_groups
                .iter()
                .filter(|(r, g)| scope.game_pages(*r, *g))
            {
                if self.options.skip_game_pages_of.insert(*key) {
                    if let Some(cut) = summary.budget_cuts.get(key) {
                        self.options.budget_cuts.insert(*key, cut.clone());
                    }
                }
            }
        }
        self.all_written_last = matches!(scope, Scope::All | Scope::Index);
        self.team_tails_copied += summary.team_tails_copied;
        self.team_rows_copied += summary.team_rows_copied;
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
        let round_page = if round_page_due(seen.len(), *at_last_write, n_groups) {
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

/// Whether the index and a round's page are written when `finished` of
/// its `n_groups` groups have finished and `at_last_write` had at their
/// last write: when the finished groups have doubled (after 1, 2, 4, 8,
/// … groups), but never at the round's last group: the engine's next
/// event is the round's end (also when a resumed server plays the round
/// again), which writes both with the round's advancement, so a write at
/// its last group would be replaced at once (the round's page whole, as
/// large as the round: a sixth of the site's bytes while playing at 2000
/// teams). So they are written about log2(groups) times a round and at its
/// end, cost about twice their final size over the round (a round's page
/// grows with its finished groups), and show at least half of the groups
/// finished so far.
fn round_page_due(finished: usize, at_last_write: usize, n_groups: usize) -> bool {
    finished < n_groups && finished >= 2 * at_last_write
}

impl Observer for SiteObserver {
    fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
        let written = match event {
            Event::GroupFinished {
                round,
                group,
                outcome,
            } => {
                let written = self
                    .group_scope(store, *round, *group)
                    .and_then(|scope| self.write_given(store, scope, outcome.as_deref()));
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

#[cfg(test)]
mod tests {
    //! The harness of the observer's promise: a seeded contest of several
    //! rounds and groups played with the observer, every page an event
    //! wrote compared with the same page of a whole site generated at that
    //! moment, and at the end every file of the observer's site with the
    //! whole site's.

    use std::collections::BTreeMap;
    use std::path::Path;

    use super::*;
    use crate::engine::pool::Runner;
    use crate::engine::run::run_tournament_with;
    use crate::engine::synthetic::Synthetic;
    use crate::engine::EngineError;
    use crate::referee::RefereeConfig;

    /// The groups after which a round's page is written, as the observer
    /// counts them.
    fn round_page_writes(n_groups: usize) -> Vec<usize> {
        let mut at_last = 0;
        (1..=n_groups)
            .filter(|&seen| {
                let due = round_page_due(seen, at_last, n_groups);
                if due {
                    at_last = seen;
                }
                due
            })
            .collect()
    }

    #[test]
    fn a_rounds_page_is_written_when_its_finished_groups_have_doubled_not_at_its_last() {
        // The round's end writes it (not counted here): a round of one
        // group has no write at a group.
        assert_eq!(round_page_writes(1), Vec::<usize>::new());
        assert_eq!(round_page_writes(4), [1, 2]);
        assert_eq!(round_page_writes(5), [1, 2, 4]);
        // 2000 teams: 49 groups of 40 or 41 in the first round (6
        // writes and the round's end; at every tenth there were 13, at
        // the last group too 7).
        assert_eq!(round_page_writes(49), [1, 2, 4, 8, 16, 32]);
        // 10,000 teams: 244 groups, 8 writes and the round's end (9 and
        // the round's end with the last group's).
        assert_eq!(round_page_writes(244), [1, 2, 4, 8, 16, 32, 64, 128]);
    }

    /// Every file of a folder (but the writer's temporary ones) and its bytes.
    fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| e.file_name().into_string().unwrap())
            .filter(|n| !n.starts_with('.'))
            .map(|n| {
                let bytes = std::fs::read(dir.join(&n)).unwrap();
                (n, bytes)
            })
            .collect()
    }

    /// The observer, and after each of its writes the pages it changed
    /// compared with a whole site generated at that moment.
    struct Checked {
        site: SiteObserver,
        options: SiteOptions,
        whole: tempfile::TempDir,
        events_checked: usize,
        pages_checked: usize,
        /// Every event that changed a page, with the pages it changed
        /// (their bytes: a page is written only when they change).
        changes: Vec<(Changed, Vec<String>)>,
    }

    /// The event after which [`Checked::changes`] saw pages changed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Changed {
        Group { round: u32, group: u32 },
        Round(u32),
        Evolution,
    }

    impl Observer for Checked {
        fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
            let before = files(&self.site.dir);
            self.site.event(store, event)?;
            assert!(self.site.last_error.is_none(), "{:?}", self.site.last_error);
            let after = files(&self.site.dir);
            let changed: Vec<&String> = after
                .iter()
                .filter(|(n, b)| before.get(*n) != Some(*b))
                .map(|(n, _)| n)
                .collect();
            if changed.is_empty() {
                return Ok(());
            }
            let at = match event {
                Event::GroupFinished { round, group, .. } => Changed::Group {
                    round: *round,
                    group: *group,
                },
                Event::RoundFinished { round, .. } => Changed::Round(*round),
                _ => Changed::Evolution,
            };
            self.changes
                .push((at, changed.iter().map(|n| n.to_string()).collect()));
            super::super::generate(
                store,
                self.site.tournament,
                self.whole.path(),
                &self.options,
            )
            .map_err(|e| e.to_string())?;
            let whole = files(self.whole.path());
            for name in changed {
                assert!(
                    whole.get(name) == after.get(name),
                    "{event:?}: {name} differs from the whole site's"
                );
                self.pages_checked += 1;
            }
            self.events_checked += 1;
            Ok(())
        }
    }

    #[test]
    fn only_the_spare_of_a_page_is_removed_from_a_finished_site() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for name in [
            "index.html",
            ".index.html.tmp",
            ".htaccess",
            ".gone.html.tmp",
        ] {
            std::fs::write(d.join(name), name).unwrap();
        }
        std::fs::create_dir(d.join(".team.html.tmp")).unwrap();
        std::fs::write(d.join("team.html"), "t").unwrap();
        assert_eq!(super::super::remove_spares(d).unwrap(), 1);
        let mut left: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        // A spare whose page is gone, and anything not a file, is not ours
        // to judge: left alone.
        assert_eq!(
            left,
            [
                ".gone.html.tmp",
                ".htaccess",
                ".team.html.tmp",
                "index.html",
                "team.html"
            ]
        );
        assert_eq!(super::super::remove_spares(&d.join("missing")).unwrap(), 0);
    }

    /// What happens to the observer's site just before the Evolution's
    /// event is handed to it (after every round's writes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum BeforeEvolution {
        /// Nothing.
        Nothing,
        /// The server killed (`kill -9`) after its last round's writes and
        /// started again: a new observer on the same folder, with nothing
        /// of the old one's memory (the pages on disk as they were left).
        Restart,
        /// Every team page rewritten behind the observer's back: the same
        /// length, another description's bytes, another modification
        /// time.
        PagesChanged,
    }

    /// How a team page is changed behind the observer's back.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Tamper {
        /// Left as written.
        Untouched,
        /// Removed.
        Removed,
        /// Written over in place with other bytes of the same length (in
        /// the description and in a game's row of its first group), its
        /// modification time set back to the one written (as `touch -r`
        /// or `rsync --inplace --times` leave it): only its change time
        /// tells.
        InPlace,
        /// Another file of the same length and modification time renamed
        /// over it.
        RenamedOver,
    }

    /// The observer, its checks after each event, and what happens before
    /// the Evolution's event.
    struct Interrupted {
        checked: Checked,
        before_evolution: BeforeEvolution,
        /// The team pages' tails copied by the observer that wrote the
        /// Evolution's pages, at that write.
        copied_at_evolution: usize,
        /// The round before whose first group's event every team page is
        /// changed behind the observer's back (by its name's place, in
        /// turn: untouched, removed, in place, renamed over), if any.
        tamper_before: Option<u32>,
        /// The pages so changed, and how.
        tampered: BTreeMap<String, Tamper>,
        /// At that event: the team pages it wrote, and how many of them
        /// had their rows copied.
        at_tamper: Option<(Vec<String>, usize)>,
    }

    /// `text` with other bytes of the same length in the description and
    /// in the first game's row.
    fn changed_page(text: &str) -> String {
        let changed = text.replacen("Team", "Mean", 1).replacen(
            "<tr class=\"status-",
            "<tr class=\"xtatus-",
            1,
        );
        assert_eq!(changed.len(), text.len());
        assert_ne!(changed, text);
        changed
    }

    /// Changes the team pages of `dir` behind the observer's back, each
    /// as its name's place says; returns how.
    fn tamper_with_team_pages(dir: &Path) -> BTreeMap<String, Tamper> {
        use std::os::unix::fs::MetadataExt;
        let ways = [
            Tamper::Untouched,
            Tamper::Removed,
            Tamper::InPlace,
            Tamper::RenamedOver,
        ];
        let mut tampered = BTreeMap::new();
        let pages = files(dir)
            .into_iter()
            .filter(|(n, _)| n.starts_with("team-"));
        for (i, (name, bytes)) in pages.enumerate() {
            let path = dir.join(&name);
            let way = ways[i % ways.len()];
            let text = String::from_utf8(bytes).unwrap();
            let before = std::fs::metadata(&path).unwrap();
            let set_time = |p: &Path| {
                std::fs::File::options()
                    .write(true)
                    .open(p)
                    .unwrap()
                    .set_modified(before.modified().unwrap())
                    .unwrap();
            };
            match way {
                Tamper::Untouched => {}
                Tamper::Removed => std::fs::remove_file(&path).unwrap(),
                Tamper::InPlace => {
                    use std::io::Write;
                    let changed = changed_page(&text);
                    // Until the clock's tick is past the page's write:
                    // its change time then differs, as a later change's.
                    loop {
                        let mut f = std::fs::File::options().write(true).open(&path).unwrap();
                        f.write_all(changed.as_bytes()).unwrap();
                        drop(f);
                        set_time(&path);
                        let now = std::fs::metadata(&path).unwrap();
                        if (now.ctime(), now.ctime_nsec()) != (before.ctime(), before.ctime_nsec())
                        {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    let now = std::fs::metadata(&path).unwrap();
                    assert_eq!(
                        (now.ino(), now.len(), now.modified().unwrap()),
                        (before.ino(), before.len(), before.modified().unwrap())
                    );
                }
                Tamper::RenamedOver => {
                    let other = dir.join("other.html");
                    std::fs::write(&other, changed_page(&text)).unwrap();
                    set_time(&other);
                    std::fs::rename(&other, &path).unwrap();
                }
            }
            tampered.insert(name, way);
        }
        tampered
    }

    impl Observer for Interrupted {
        fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
            let evolution = matches!(event, Event::EvolutionFinished { .. });
            if evolution {
                let site = &mut self.checked.site;
                match self.before_evolution {
                    BeforeEvolution::Nothing => {}
                    BeforeEvolution::Restart => {
                        let mut again = SiteObserver::new(site.dir.clone(), site.tournament);
                        again.options = self.checked.options.clone();
                        *site = again;
                    }
                    BeforeEvolution::PagesChanged => {
                        for (name, bytes) in files(&site.dir) {
                            if !name.starts_with("team-") {
                                continue;
                            }
                            let text = String::from_utf8(bytes).unwrap();
                            let at = text.find("<h2>Description</h2>").unwrap();
                            let (head, tail) = text.split_at(at);
                            // The same length: a tail whose bytes differ.
                            let changed = format!("{head}{}", tail.replace("Team", "Mean"));
                            assert_eq!(changed.len(), text.len());
                            let path = site.dir.join(&name);
                            std::fs::write(&path, changed).unwrap();
                            std::fs::File::options()
                                .write(true)
                                .open(&path)
                                .unwrap()
                                .set_modified(std::time::UNIX_EPOCH)
                                .unwrap();
                        }
                    }
                }
            }
            let tamper = match event {
                Event::GroupFinished { round, .. } => {
                    Some(*round) == self.tamper_before && self.tampered.is_empty()
                }
                _ => false,
            };
            if tamper {
                self.tampered = tamper_with_team_pages(&self.checked.site.dir);
            }
            let before = self.checked.site.team_tails_copied;
            let rows_before = self.checked.site.team_rows_copied;
            let changes_before = self.checked.changes.len();
            self.checked.event(store, event)?;
            if evolution {
                self.copied_at_evolution = self.checked.site.team_tails_copied - before;
            }
            if tamper {
                let written = self.checked.changes[changes_before..]
                    .iter()
                    .flat_map(|(_, names)| names)
                    .filter(|n| n.starts_with("team-"))
                    .cloned()
                    .collect();
                let copied = self.checked.site.team_rows_copied - rows_before;
                self.at_tamper = Some((written, copied));
            }
            Ok(())
        }
    }

    /// A contest of three rounds (four groups, two, the final) and the
    /// Evolution, played with the observer (every page it wrote compared
    /// with a whole site's at that moment); `before_evolution` happens
    /// before the Evolution's event. The store, the tournament, the
    /// observer's folder and the harness.
    fn played_checked(
        before_evolution: BeforeEvolution,
    ) -> (Store, i64, tempfile::TempDir, Interrupted, SiteOptions) {
        played_checked_tampered(before_evolution, None)
    }

    /// [`played_checked`], the team pages changed behind the observer's
    /// back before round `tamper_before`'s first group's event, if given.
    fn played_checked_tampered(
        before_evolution: BeforeEvolution,
        tamper_before: Option<u32>,
    ) -> (Store, i64, tempfile::TempDir, Interrupted, SiteOptions) {
        let mut store = Store::open_in_memory().unwrap();
        // Three rounds: four groups, two, the final.
        let tid = crate::engine::results::stand_in_tournament_of(
            &mut store,
            11,
            (0..130).map(|t| {
                (
                    format!("team{t:03}"),
                    (t % 3 != 0).then(|| format!("Team {t}'s <strategy> & more\n")),
                    (t % 2 == 0).then_some(t as u64),
                )
            }),
        );
        let factory = |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
            Ok(Box::new(Synthetic::new("crashed in throw 1 <&>")))
        };
        // Game pages need games stored for replay: these have no throws.
        let options = SiteOptions {
            no_game_pages: true,
            ..SiteOptions::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let mut site = SiteObserver::new(dir.path(), tid);
        site.options = options.clone();
        let mut checked = Interrupted {
            checked: Checked {
                site,
                options: options.clone(),
                whole: tempfile::tempdir().unwrap(),
                events_checked: 0,
                pages_checked: 0,
                changes: Vec::new(),
            },
            before_evolution,
            copied_at_evolution: 0,
            tamper_before,
            tampered: BTreeMap::new(),
            at_tamper: None,
        };
        run_tournament_with(
            &mut store,
            tid,
            &factory,
            &crate::engine::SystemClock,
            &mut checked,
        )
        .unwrap();
        (store, tid, dir, checked, options)
    }

    /// Team pages changed behind the observer's back after their last
    /// write (removed; written over in place with the same length and
    /// modification time; another file renamed over them) are not copied
    /// from at their team's next group: each is written again whole, and
    /// is the whole site's (as every page written at each event, and the
    /// whole folder at the end, after the Evolution's write of every
    /// page); the pages left alone have their first group's rows copied.
    /// Before the change time was part of a page's stamp, a page written
    /// over in place with its modification time set back was taken for
    /// the one written: its tail was copied at the Evolution.
    #[test]
    fn team_pages_changed_or_removed_behind_the_observer_are_written_again_whole() {
        let (store, tid, dir, checked, options) =
            played_checked_tampered(BeforeEvolution::Nothing, Some(2));
        let (written, copied) = checked.at_tamper.clone().expect("round 2 was played");
        let how = |way: Tamper| {
            written
                .iter()
                .filter(|n| checked.tampered.get(*n) == Some(&way))
                .count()
        };
        // Round 2's first group has pages of every kind.
        for way in [
            Tamper::Untouched,
            Tamper::Removed,
            Tamper::InPlace,
            Tamper::RenamedOver,
        ] {
            assert!(how(way) > 0, "{way:?}: {written:?}");
        }
        // Only the pages left alone had their rows copied.
        assert_eq!(copied, how(Tamper::Untouched));
        assert!(checked.checked.pages_checked > 130);
        assert_whole_after_finish(&store, tid, dir.path(), checked.checked, &options);
    }

    #[test]
    fn the_site_written_event_by_event_is_the_whole_site_byte_for_byte() {
        let (store, tid, dir, checked, options) = played_checked(BeforeEvolution::Nothing);
        // The Evolution's write copied the tails of the team pages (every
        // team's groups were settled at its last write before), rendering
        // their heads alone: and each page is the whole site's.
        assert_eq!(checked.copied_at_evolution, 130);
        // The writes at the groups of rounds 2 and 3 copied the rows of
        // their members' earlier groups: one copy for each member of
        // round 2 (every team of it played round 1) and of the final.
        let res = crate::engine::results::results(&store, tid, vec![]).unwrap();
        let later_members: usize = res.rounds[1..]
            .iter()
            .flat_map(|r| &r.groups)
            .map(|g| g.members.len())
            .sum();
        assert_eq!(checked.checked.site.team_rows_copied, later_members);
        let mut checked = checked.checked;
        let res = crate::engine::results::results(&store, tid, vec![]).unwrap();
        assert_eq!(res.rounds.len(), 3, "three rounds");
        assert_eq!(res.rounds[0].groups.len(), 4, "four groups in the first");
        assert!(res.evolution.is_some());
        assert!(checked.events_checked >= 4 + 2 + 1 + 3);
        assert!(checked.pages_checked > 130);
        // At the end, every file: after the last event only the index
        // is behind (the tournament is marked finished after the
        // Evolution's event), and the contest's final write brings it up
        // to date.
        let whole = tempfile::tempdir().unwrap();
        super::super::generate(&store, tid, whole.path(), &options).unwrap();
        let theirs = files(whole.path());
        let differ = |ours: &BTreeMap<String, Vec<u8>>| -> Vec<String> {
            assert_eq!(
                ours.keys().collect::<Vec<_>>(),
                theirs.keys().collect::<Vec<_>>()
            );
            ours.iter()
                .filter(|(n, b)| theirs.get(*n) != Some(*b))
                .map(|(n, _)| n.clone())
                .collect()
        };
        assert_eq!(differ(&files(dir.path())), ["index.html"]);
        // The contest's final write: the index alone, and then the
        // whole site byte for byte.
        let hidden = |d: &Path| -> Vec<String> {
            std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.starts_with('.'))
                .collect()
        };
        // Pages rewritten while playing keep a spare beside them.
        assert!(!hidden(dir.path()).is_empty());
        let before = files(dir.path());
        let summary = checked.site.finish(&store).unwrap();
        assert_eq!(summary.written, 1);
        assert_eq!(summary.files, ["index.html"]);
        let ours = files(dir.path());
        let changed: Vec<&String> = ours
            .iter()
            .filter(|(n, b)| before.get(*n) != Some(*b))
            .map(|(n, _)| n)
            .collect();
        assert_eq!(changed, ["index.html"]);
        assert_eq!(differ(&ours), Vec::<String>::new());
        assert!(ours.len() > 130 + 3);
        // The pages rewritten while playing had spares; the final site
        // has none (an organizer's own hidden file stays).
        assert_eq!(hidden(dir.path()), Vec::<String>::new());
        // A second finish, or a regeneration, changes nothing.
        std::fs::write(dir.path().join(".htaccess"), "Options -Indexes\n").unwrap();
        assert_eq!(checked.site.finish(&store).unwrap().written, 0);
        assert_eq!(hidden(dir.path()), [".htaccess"]);
        assert_eq!(checked.site.regenerate(&store).unwrap().written, 0);
        assert_eq!(differ(&files(dir.path())), Vec::<String>::new());
    }

    /// A round's page and the index are written at a group only when the
    /// round's finished groups have doubled, never at its last group: the
    /// round's end, the next event, writes both (a write there would be
    /// replaced at once: the round's page is as large as the round). Each
    /// round page is changed exactly at its doublings, its end (the index
    /// with it) and perhaps the Evolution's write; the round's end changes
    /// neither page that the event before it changed too (counted from the
    /// pages' bytes: the
    /// observer writes a page only when they change). Before, the last
    /// group wrote both too.
    #[test]
    fn a_rounds_last_group_leaves_its_page_and_the_index_to_its_end() {
        let (_store, _tid, _dir, checked, _options) = played_checked(BeforeEvolution::Nothing);
        let changes = &checked.checked.changes;
        let overview = |names: &[String], round: u32| {
            (
                names.contains(&super::super::round_page(round)),
                names.iter().any(|n| n == "index.html"),
            )
        };
        // Three rounds: four groups, two, the final.
        for (round, n_groups) in [(1, 4), (2, 2), (3, 1)] {
            let at: Vec<(Changed, (bool, bool))> = changes
                .iter()
                .map(|(at, names)| (*at, overview(names, round)))
                .filter(|(_, (page, _))| *page)
                .collect();
            let groups_seen: Vec<u32> = changes
                .iter()
                .filter_map(|(at, _)| match at {
                    Changed::Group { round: r, group } if *r == round => Some(*group),
                    _ => None,
                })
                .collect();
            assert_eq!(groups_seen.len(), n_groups, "round {round}: {changes:?}");
            let at_groups = round_page_writes(n_groups).len();
            // Its doublings, its end, and the Evolution's write if that
            // changed it.
            assert_eq!(at[at_groups], (Changed::Round(round), (true, true)));
            assert!(at[at_groups + 1..]
                .iter()
                .all(|(e, _)| *e == Changed::Evolution));
            assert!(at.len() <= at_groups + 2, "round {round}: {at:?}");
            for (i, (seen, _)) in at[..at_groups].iter().enumerate() {
                let Changed::Group { group, .. } = seen else {
                    panic!("round {round}: {at:?}")
                };
                // The (i + 1)-th write at the 2^i-th group to finish, never
                // the last.
                let nth = groups_seen.iter().position(|g| g == group).unwrap();
                assert_eq!(nth + 1, 1 << i, "round {round}: {at:?}");
                assert!(nth + 1 < n_groups);
            }
        }
        // The round's end changes no overview page its last group's write
        // changed.
        for pair in changes.windows(2) {
            let ((_, a), (b_at, b)) = (&pair[0], &pair[1]);
            if let Changed::Round(_) = b_at {
                for name in b
                    .iter()
                    .filter(|n| n.starts_with("round-") || *n == "index.html")
                {
                    assert!(!a.contains(name), "{name} changed twice in a row: {pair:?}");
                }
            }
        }
    }

    /// Every file of the observer's folder after its last write (the
    /// Evolution's) and the contest's final one is the whole site's.
    fn assert_whole_after_finish(
        store: &Store,
        tid: i64,
        dir: &Path,
        mut checked: Checked,
        options: &SiteOptions,
    ) {
        checked.site.finish(store).unwrap();
        let whole = tempfile::tempdir().unwrap();
        super::super::generate(store, tid, whole.path(), options).unwrap();
        assert!(files(dir) == files(whole.path()), "not the whole site");
    }

    /// A server killed (`kill -9`) between a team's last group's write and
    /// the Evolution's, and started again, knows of no page's tail: its
    /// first write renders every team page whole, and each is the whole
    /// site's (compared as the Evolution's write made it, and at the end).
    #[test]
    fn after_a_restart_the_evolutions_team_pages_are_rendered_whole_and_the_same() {
        let (store, tid, dir, checked, options) = played_checked(BeforeEvolution::Restart);
        assert_eq!(checked.copied_at_evolution, 0);
        assert!(checked.checked.pages_checked > 130);
        assert_whole_after_finish(&store, tid, dir.path(), checked.checked, &options);
    }

    /// A team page changed behind the observer's back between its last
    /// write and the Evolution's (here: the same length, other bytes in
    /// its tail, another modification time) is not copied from: every
    /// page is rendered whole, and is the whole site's.
    #[test]
    fn a_team_page_changed_since_its_write_is_not_copied_from() {
        let (store, tid, dir, checked, options) = played_checked(BeforeEvolution::PagesChanged);
        assert_eq!(checked.copied_at_evolution, 0);
        assert_whole_after_finish(&store, tid, dir.path(), checked.checked, &options);
    }

    /// Every file of the whole site of a small field (three rounds, the
    /// Evolution, failures, hostile names and descriptions), a digest
    /// each, is its golden file's (`tests/data/snapshots/site/
    /// whole-site.txt`), which was written by the site's code before the
    /// index was written directly and a team's link shared by its rows
    /// (branch `site-cost2`): the cuts of the site's CPU change no byte.
    /// The site written while playing is this whole site's (the test
    /// above).
    #[test]
    fn the_whole_site_of_a_small_field_is_its_golden_digests() {
        use sha2::{Digest, Sha256};
        let mut store = Store::open_in_memory().unwrap();
        let tid = crate::engine::results::stand_in_tournament_of(
            &mut store,
            13,
            (0..90).map(|t| {
                (
                    format!("team{t:03}{}", ["", " <b>&'\"", " ü —"][t % 3]),
                    (t % 4 != 0).then(|| format!("Team {t}'s <strategy> & more\n")),
                    (t % 2 == 0).then_some(t as u64),
                )
            }),
        );
        let factory = |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
            Ok(Box::new(Synthetic::new("crashed in throw 1 <&>")))
        };
        run_tournament_with(
            &mut store,
            tid,
            &factory,
            &crate::engine::SystemClock,
            &mut crate::engine::run::Quiet,
        )
        .unwrap();
        // The index shows when the tournament started and finished: the
        // same times in every run.
        store
            .conn()
            .execute(
                "UPDATE tournaments SET started_at = '2026-11-30 09:00:00', \
                 finished_at = '2026-11-30 10:00:00' WHERE id = ?1",
                [tid],
            )
            .unwrap();
        let options = SiteOptions {
            no_game_pages: true,
            title: Some("The <b>organizer's</b> contest".into()),
            ..SiteOptions::default()
        };
        let dir = tempfile::tempdir().unwrap();
        super::super::generate(&store, tid, dir.path(), &options).unwrap();
        let mut listing = String::new();
        for (name, bytes) in files(dir.path()) {
            let digest: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            listing.push_str(&format!("{name} {} {digest}\n", bytes.len()));
        }
        assert!(listing.lines().count() > 90 + 3, "{listing}");
        crate::testing::assert_golden("site", "whole-site.txt", &listing, "the whole site");
    }

    /// Text a participant (or a careless organizer) controls reaches the
    /// pages escaped: every team page of a played contest with hostile
    /// names (beyond what registration accepts: an older database's, or
    /// one edited by hand), descriptions, failure reasons and contest
    /// title is the page of its view built as a whole site builds it
    /// (the observer's index of the groups gives the same rows as a scan),
    /// and no page of the site carries the raw markup.
    #[test]
    fn hostile_texts_are_escaped_on_the_team_pages_as_the_template_did() {
        use super::super::direct::{team_head_html, team_html};
        use super::super::views::TeamPart;
        use super::super::{page_frame, read_facts, team_page, Kept};
        let mut store = Store::open_in_memory().unwrap();
        let hostile = [
            "<script>alert(1)</script>",
            "a&b\"c'd`e=f",
            "{{name}}</h1><h1>",
            "x&amp;y&#x27;",
            "ü —<",
        ];
        let tid = crate::engine::results::stand_in_tournament_of(
            &mut store,
            12,
            (0..24).map(|t| {
                (
                    format!("{}{t}", hostile[t % hostile.len()]),
                    Some(format!(
                        "</pre><img src=x onerror=alert({t})> & \"quoted\" 'single' `tick` a=b\n{}\n",
                        hostile[(t + 1) % hostile.len()]
                    )),
                    Some(t as u64),
                )
            }),
        );
        let factory = |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
            Ok(Box::new(Synthetic::new("crashed in throw 1 <&>")))
        };
        let dir = tempfile::tempdir().unwrap();
        let mut site = SiteObserver::new(dir.path(), tid);
        site.options = SiteOptions {
            no_game_pages: true,
            title: Some("The <b>organizer's</b> \"contest\" & co".into()),
            ..SiteOptions::default()
        };
        let options = site.options.clone();
        run_tournament_with(
            &mut store,
            tid,
            &factory,
            &crate::engine::SystemClock,
            &mut site,
        )
        .unwrap();
        site.regenerate(&store).unwrap();
        let written = files(dir.path());

        // The views of the team pages, built as the site builds them.
        let res = crate::engine::results::results(&store, tid, vec![]).unwrap();
        let mut kept = Kept::default();
        let (teams, _, _, _, _) = kept.teams_and_parts(&store, tid).unwrap();
        let mut members = super::super::views::Memberships::default();
        members.update(&res);
        let facts = read_facts(&store, tid, teams, &res, &options, Scope::All).unwrap();
        let (mut compared, mut with_rows) = (0, 0);
        let evolution = res.evolution.as_ref().map(|e| {
            let f = crate::tables::facts::evolution_facts(e);
            super::super::model::evolution_rows(&f, &|t| facts.team(t)).0
        });
        for (name, (id, version)) in facts.teams {
            let evolution_row = evolution
                .iter()
                .flatten()
                .find(|p| p.team.name == name.as_str());
            let frame = page_frame(name.clone(), &facts.title, &res);
            let view = |part| {
                super::super::views::team_view(
                    part,
                    0,
                    frame.clone(),
                    &store,
                    name,
                    *version,
                    &res,
                    &|_, _| None,
                    members.of(name),
                    evolution_row,
                    &facts,
                    &options,
                )
                .unwrap()
            };
            let (head, view) = (view(TeamPart::Head).0, view(TeamPart::Whole).0);
            let template = team_html(&view);
            // The head of a page whose tail is copied, rendered from the
            // view's head alone, is the whole view's.
            let (mut ours, mut whole) = (String::new(), String::new());
            team_head_html(&mut ours, &head);
            team_head_html(&mut whole, &view);
            assert!(
                ours == whole && template.starts_with(&whole),
                "{name}: another head"
            );
            let page = String::from_utf8(written[&team_page(*id)].clone()).unwrap();
            assert!(
                page == template,
                "{name}: the page is not the template's\n--- template\n{template}\n--- page\n{page}"
            );
            with_rows += usize::from(!view.games.is_empty() && !view.opponents.is_empty());
            compared += 1;
        }
        assert_eq!(compared, 24);
        assert!(with_rows >= 20, "{with_rows} pages with games");
        // No page anywhere shows a participant's markup raw.
        for (file, bytes) in &written {
            let text = String::from_utf8_lossy(bytes);
            for raw in [
                "<script",
                "<img",
                "</pre><",
                "<b>organizer",
                "{{name}}</h1>",
            ] {
                assert!(!text.contains(raw), "{file} shows {raw} raw");
            }
        }
    }
}
