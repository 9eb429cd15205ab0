//! The static results site: plain HTML, CSS and SVG pages of one
//! tournament, written into a folder that can be published anywhere (no web
//! server logic, no JavaScript): `index.html` (final and Evolution
//! rankings), `round-N.html` (groups, rankings, games, advancing and
//! disqualified teams), `final-crosstable.html` (payoff heat map),
//! `evolution.html` with `evolution.svg`, `team-ID.html` (games, points per
//! opponent, description, failures) and `game-rR-gG-sS.html` (the throws).
//!
//! [`generate`] rebuilds everything from the store (the results through
//! [`crate::engine::results::results`], the throws from the games table,
//! descriptions from the strategy versions);
//! [`SiteObserver`](observer::SiteObserver) writes, while a tournament
//! runs, only the pages an event changed ([`Scope`]), from results kept up
//! to date group by group. Pages come from `pages` (handlebars, escaping
//! on) but the team, round and game pages, written most often, which
//! `direct` writes straight from their views (held by golden files); a
//! game's plot from `game_svg` (compact SVG written directly), the other
//! plots from `plots` (`plotters`, SVG backend).
//! The bigger pages' views are built in `views`, the observer is in
//! `observer`; the site of a bot discipline is `bots`.
//!
//! It deliberately does not delete anything in the folder (a stale file of
//! an earlier tournament stays), does not publish or upload, and shows no
//! clock time but the store's own timestamps, so the same database gives
//! the same files byte for byte. Files are replaced atomically (written
//! beside, then renamed) and only when their content changed; a game's
//! page, written once, is made new whole (an unnamed file of the folder,
//! then named), or compared and replaced as any page if it is there.
//!
//! **Invariant:** the site generator only reads the store; it never writes
//! to it and never decides anything about the contest.

pub mod bots;
mod direct;
mod game_svg;
mod model;
pub mod observer;
pub mod pages;
mod parts;
pub mod plots;
pub mod replay;
mod spare;
mod views;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use crate::engine::replay::Replayer;
use crate::engine::results::{results, Placed, Results};
use crate::engine::run::TournamentConfig;
use crate::game::knobeln::judge;
use crate::game::Player;
use crate::store::{Store, StoreError, StoredGame};

use model::{evolution_rows, group_share, has_page, page_charges, team_share, Facts, Stage};
pub use model::{
    game_page, round_page, team_page, BudgetCut, SiteError, SiteOptions, DEFAULT_GAME_PAGE_BYTES,
};
use pages::*;
use parts::{Counting, Part, RoundPageParts, TeamTails, ViewPrint};
pub use plots::evolution_svg;
use spare::open_spare;
use views::{evolution_view, payoff_table, team_view, TeamPart};

/// Which pages one write brings up to date. While a tournament runs, the
/// observer writes only what an event changed, so a contest of N teams
/// costs a linear number of page writes, not one whole site per group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every page.
    All,
    /// A group finished: the pages of its members, its game pages, and
    /// the index and its round's page if `round_page` says so.
    Group {
        round: u32,
        group: u32,
        round_page: RoundPage,
    },
    /// A round finished: the index, the round's page and the pages of
    /// everyone who played in it.
    Round(u32),
    /// A round that is not the final finished, and every one of its
    /// groups' scopes was written after the group finished: the index and
    /// the round's page only (its players' pages are what their groups'
    /// writes made them: a team's page shows its groups, their games and
    /// disqualifications, all settled when the group finished, and the
    /// rounds that exist, which the round's end does not change).
    RoundOverview(u32),
    /// The index alone: after the tournament was marked finished, when
    /// every other page is already what a whole generation would write
    /// (the index is the only page that shows whether the tournament
    /// runs, and when it finished).
    Index,
}

/// Whether a group's event rewrites the index and its round's page (pages
/// as large as the field and the round: rewritten when the round's
/// finished groups have doubled since the last write, never at its last
/// group: the round's end, the next event, writes both; so about
/// log2(groups) times per round and about twice the round page's final
/// size written in all, the round's end included; between writes they
/// show at least half of the groups finished so far).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundPage {
    Write,
    Later,
}

impl Scope {
    fn round_page(&self, round: u32) -> bool {
        match *self {
            Scope::All => true,
            Scope::Group {
                round: r,
                round_page,
                ..
            } => r == round && round_page == RoundPage::Write,
            Scope::Round(r) | Scope::RoundOverview(r) => r == round,
            Scope::Index => false,
        }
    }

    fn game_pages(&self, round: u32, group: u32) -> bool {
        match *self {
            Scope::All => true,
            Scope::Group {
                round: r, group: g, ..
            } => (r, g) == (round, group),
            Scope::Round(_) | Scope::RoundOverview(_) | Scope::Index => false,
        }
    }

    /// Whether the pages as large as the field (the index, the round's
    /// page) are written.
    fn overview(&self) -> bool {
        match *self {
            Scope::All | Scope::Round(_) | Scope::RoundOverview(_) | Scope::Index => true,
            Scope::Group { round_page, .. } => round_page == RoundPage::Write,
        }
    }

    /// The teams whose pages the scope writes (`None`: every team).
    fn teams<'r>(&self, res: &'r Results) -> Option<HashSet<&'r str>> {
        let members = |r: u32, g: Option<u32>| {
            res.rounds
                .iter()
                .filter(|x| x.number == r)
                .flat_map(|x| &x.groups)
                .filter(|x| g.is_none_or(|g| x.number == g))
                .flat_map(|x| x.members.iter().map(String::as_str))
                .collect()
        };
        match *self {
            Scope::All => None,
            Scope::Group { round, group, .. } => Some(members(round, Some(group))),
            Scope::Round(r) => Some(members(r, None)),
            Scope::RoundOverview(_) | Scope::Index => Some(HashSet::new()),
        }
    }
}

/// What the writes of one tournament's site into one folder keep from one
/// write to the next: the round pages' parts, and the tournament's entries
/// (fixed when the tournament is made: read once, not at every event).
#[derive(Debug, Default)]
pub struct Kept {
    round_pages: RoundPageParts,
    /// The team pages written with every group settled: where their tails
    /// begin, to be copied at the next write.
    team_tails: TeamTails,
    /// The tournament read, its teams, each team's link (made once, not at
    /// every row that names the team), and the index's list of every team
    /// (made once, not at every write of the index).
    teams: Option<(i64, TeamsByName, TeamLinks, String)>,
    /// The finished groups' members and where each plays in the group's
    /// games (settled with the group: indexed once, not scanned again for
    /// every member's page at every write).
    groups: GroupIndexes,
    /// Where each team is a member (extended as rounds are drawn).
    members: views::Memberships,
}

/// `(round, group)` → the group's index.
type GroupIndexes = HashMap<(u32, u32), views::GroupIndex>;

/// A tournament's teams: name → (team id, version id).
type TeamsByName = BTreeMap<String, (u32, i64)>;

/// A tournament's teams: name → the team linked to its page.
type TeamLinks = HashMap<String, TeamRef>;

/// What [`Kept::teams_and_parts`] lends: the teams and their links, the
/// index's list of every team, the round pages' parts and the team pages'
/// tails, the group indexes, the memberships.
type KeptRefs<'k> = (
    (&'k TeamsByName, &'k TeamLinks),
    &'k str,
    (&'k mut RoundPageParts, &'k mut TeamTails),
    &'k mut GroupIndexes,
    &'k mut views::Memberships,
);

impl Kept {
    /// The tournament's teams and their links (read if not kept yet), the
    /// index's list of them, the round pages' parts, the group indexes and
    /// the memberships, borrowed together.
    fn teams_and_parts(
        &mut self,
        store: &Store,
        tournament: i64,
    ) -> Result<KeptRefs<'_>, SiteError> {
        if self.teams.as_ref().is_none_or(|(t, ..)| *t != tournament) {
            self.groups.clear();
            self.members = views::Memberships::default();
            self.team_tails = TeamTails::default();
            let teams: TeamsByName = store
                .entries(tournament)?
                .into_iter()
                .map(|e| (e.name, (e.team.0, e.version.0)))
                .collect();
            let links: TeamLinks = teams
                .iter()
                .map(|(name, (id, _))| {
                    let link = TeamRef {
                        name: name.as_str().into(),
                        href: Some(team_page(*id).into()),
                    };
                    (name.clone(), link)
                })
                .collect();
            let list: Vec<TeamRef> = teams.keys().map(|n| links[n].clone()).collect();
            let index_teams = direct::index_teams_html(&list);
            self.teams = Some((tournament, teams, links, index_teams));
        }
        let (_, teams, links, index_teams) = self.teams.as_ref().expect("just read");
        Ok((
            (teams, links),
            index_teams,
            (&mut self.round_pages, &mut self.team_tails),
            &mut self.groups,
            &mut self.members,
        ))
    }
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteSummary {
    /// Every page and file of the site (including skipped game pages), by
    /// name relative to the folder, sorted.
    pub files: Vec<String>,
    /// How many files were (re)written because their content changed.
    pub written: usize,
    /// How many game pages were rendered this time.
    pub game_pages_rendered: usize,
    /// How many team pages were written with their tails copied from the
    /// page written before (their heads alone rendered).
    pub team_tails_copied: usize,
    /// How many team pages were written with their settled groups' rows
    /// (and the description) copied from the page written before, the
    /// rest rendered.
    pub team_rows_copied: usize,
    /// Finished groups `(round, group)`: their game pages are final.
    pub finished_groups: BTreeSet<(u32, u32)>,
    /// The groups whose game pages this write rendered and the budget cut.
    pub budget_cuts: BudgetCuts,
}

/// `(round, group)` → where the budget cut the group's game pages.
pub type BudgetCuts = BTreeMap<(u32, u32), BudgetCut>;

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SiteError + '_ {
    move |source| SiteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn plot_err(what: &str) -> impl FnOnce(String) -> SiteError + '_ {
    move |message| SiteError::Plot {
        what: what.to_string(),
        message,
    }
}

/// Writes files into the site folder: atomically, and only on change.
struct Writer<'a> {
    dir: &'a Path,
    files: Vec<String>,
    written: usize,
    /// The folder held open for the pages made new (`put_new`) and the
    /// pages looked for (`exists`): opened at the first need.
    held: Held,
    /// How pages made new get into the folder ([`NewPages`]).
    new_pages: NewPages,
}

/// Whether the site folder is held open by a [`Writer`].
enum Held {
    /// Not opened yet: nothing needed it so far.
    NotYet,
    /// Open: pages are made in it and looked up relative to it, without
    /// walking the folder's path again.
    Open(OwnedFd),
    /// Opening it failed: pages are written and looked up by their paths
    /// (`put`, `Path::exists`), as without it.
    Unavailable,
}

/// How [`Writer::put_new`] makes a page new: a choice, so that the path
/// taken where unnamed files cannot be had is tested too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NewPages {
    /// An unnamed file of the folder (`O_TMPFILE`), named once whole
    /// (`linkat`).
    Unnamed,
    /// As `put` writes a page (its spare, renamed): where the folder
    /// cannot be held, its file system has no unnamed files, or there is no
    /// `/proc` to name one through. Taken for every later page once one of
    /// these is found, not tried again page by page.
    Spare,
}

impl<'a> Writer<'a> {
    fn new(dir: &'a Path) -> Self {
        Writer {
            dir,
            files: Vec::new(),
            written: 0,
            held: Held::NotYet,
            new_pages: NewPages::Unnamed,
        }
    }

    /// The site folder held open, opened now if nothing opened it before
    /// (`None` where it cannot be opened).
    fn folder(&mut self) -> Option<&OwnedFd> {
        if let Held::NotYet = self.held {
            self.held = match open_folder(self.dir) {
                Ok(fd) => Held::Open(fd),
                Err(_) => Held::Unavailable,
            };
        }
        match &self.held {
            Held::Open(fd) => Some(fd),
            Held::NotYet | Held::Unavailable => None,
        }
    }

    /// Whether a file `name` is in the site folder: looked up relative to
    /// the held folder (`fstatat`, no path walked from the root), or by its
    /// path where the folder could not be held. Like `Path::exists`, a
    /// file that cannot be looked up counts as missing.
    fn exists(&mut self, name: &str) -> bool {
        use rustix::fs::{statat, AtFlags};
        match self.folder() {
            Some(dir) => statat(dir, name, AtFlags::empty()).is_ok(),
            None => self.dir.join(name).exists(),
        }
    }

    /// Writes a page that most likely does not exist yet (a game's page,
    /// written once, after its game is stored) as one new file, whole:
    /// the content goes into an unnamed file of the folder (`O_TMPFILE`),
    /// which then gets its name (`linkat`). So a reader, or a site left by
    /// a killed server, has no page or the page whole, as with `put`; but
    /// the kernel makes one directory entry, not a spare's and then a
    /// rename's, and nothing is looked up first: three calls (open, write,
    /// link) and a close instead of six, with no path walked from the root.
    /// A file by that name already there (a site written before a crash,
    /// a whole write over a finished site), or a file system without
    /// unnamed files or without `/proc`: the page goes through `put`
    /// (compared, replaced only if it differs), so a page cut short by a
    /// crash of an older version or a power loss is replaced by the next
    /// whole write.
    fn put_new(&mut self, name: &str, content: &str) -> Result<(), SiteError> {
        if self.new_pages == NewPages::Spare {
            return self.put(name, content);
        }
        let Some(dir) = self.folder() else {
            self.new_pages = NewPages::Spare;
            return self.put(name, content);
        };
        let named = match write_unnamed(dir, content.as_bytes()) {
            Ok(file) => give_name(&file, dir, name),
            Err(e) => {
                // No unnamed files here (or no room: `put` says so).
                self.new_pages = NewPages::Spare;
                Err(e)
            }
        };
        match named {
            Ok(()) => {
                self.files.push(name.to_string());
                self.written += 1;
                Ok(())
            }
            Err(e) => {
                // A page there already is `put`'s to compare; any other
                // refusal of its name (no `/proc`) holds for every page.
                if e.kind() != std::io::ErrorKind::AlreadyExists {
                    self.new_pages = NewPages::Spare;
                }
                self.put(name, content)
            }
        }
    }
    /// Writes `content` as `name` if it differs from the file there.
    ///
    /// The content goes into the page's spare, `.NAME.tmp` beside it,
    /// which then trades places with the page (`rename` with
    /// `RENAME_EXCHANGE`): a reader opening the page gets the old page or
    /// the new one, whole, and the old page's inode becomes the spare for
    /// the next write. So a page rewritten while a contest runs allocates
    /// no inode and frees none: on ext4, renaming over a file flushes the
    /// new file's data on the spot (`auto_da_alloc`) and a freed inode makes
    /// the next file creation scan the recently freed ones, which together
    /// were about a quarter of the site's CPU at 2000 teams. The spare is
    /// overwritten in place, not truncated to zero (which would flush on
    /// close, as the rename did). The price: a reader that still holds the
    /// page of the write before last open (the spare now) sees it change;
    /// and the folder keeps a hidden spare of every page written twice.
    /// Where the exchange is not supported, the spare is renamed over the
    /// page as before.
    ///
    /// In the folder held open (as `put_new` holds it), every call is
    /// made relative to it (`*at`: no path walked from the root) and the
    /// spare's type and length come from one `fstat`: five calls and a
    /// close for a changed page, not six, and no path walked from the
    /// root (the paths' way, where the folder cannot be held, is
    /// `put_by_path`).
    fn put(&mut self, name: &str, content: &str) -> Result<(), SiteError> {
        self.files.push(name.to_string());
        let dir_path = self.dir;
        let mut new_pages = self.new_pages;
        let held = match self.folder() {
            Some(dir) => put_at(dir, dir_path, name, content, &mut new_pages),
            None => put_by_path(dir_path, name, content),
        };
        self.new_pages = new_pages;
        let changed = match held {
            Ok(changed) => changed,
            // A folder held that refuses the page (not the folder any
            // more, or a fault of the descriptor): by paths from now on,
            // as where it could not be opened, and this page again.
            Err(_) if matches!(self.held, Held::Open(_)) => {
                self.held = Held::Unavailable;
                put_by_path(dir_path, name, content)?
            }
            Err(e) => return Err(e),
        };
        if changed {
            self.written += 1;
        }
        Ok(())
    }

    /// Like `put`, with the content written piece by piece by `fill` (a
    /// page too large to hold at once): over the page's spare (as `put`
    /// does: not truncated to zero first, no inode made or freed once the
    /// spare exists), which trades places with the page only if the two
    /// differ (the spare is kept either way).
    fn put_streamed(
        &mut self,
        name: &str,
        fill: impl FnOnce(&mut dyn std::io::Write) -> Result<(), SiteError>,
    ) -> Result<(), SiteError> {
        let path = self.dir.join(name);
        self.files.push(name.to_string());
        let tmp = self.dir.join(format!(".{name}.tmp"));
        {
            let file = open_spare(&tmp).map_err(io_err(&tmp))?;
            let mut out = parts::Counting {
                inner: std::io::BufWriter::new(file),
                written: 0,
            };
            fill(&mut out)?;
            std::io::Write::flush(&mut out).map_err(io_err(&tmp))?;
            let file = out.inner.get_ref();
            if file.metadata().map_err(io_err(&tmp))?.len() > out.written {
                file.set_len(out.written).map_err(io_err(&tmp))?;
            }
        }
        if same_content(&tmp, &path) {
            return Ok(());
        }
        if !path.exists() || !exchange(&tmp, &path) {
            std::fs::rename(&tmp, &path).map_err(io_err(&path))?;
        }
        self.written += 1;
        Ok(())
    }

    /// A file that exists and is kept as it is.
    fn keep(&mut self, name: &str) {
        self.files.push(name.to_string());
    }
}

/// `Writer::put` by paths (where the folder cannot be held open):
/// whether the page was written (it differed).
fn put_by_path(dir: &Path, name: &str, content: &str) -> Result<bool, SiteError> {
    let path = dir.join(name);
    // The old file is read only if its length is the new content's (a
    // page that changed mostly changed its length too: a member's page
    // grows by its group's games).
    let old_len = std::fs::metadata(&path).ok().map(|m| m.len());
    if old_len == Some(content.len() as u64)
        && std::fs::read(&path).is_ok_and(|old| old == content.as_bytes())
    {
        return Ok(false);
    }
    let tmp = dir.join(format!(".{name}.tmp"));
    write_over(&tmp, content.as_bytes()).map_err(io_err(&tmp))?;
    if old_len.is_none() || !exchange(&tmp, &path) {
        std::fs::rename(&tmp, &path).map_err(io_err(&path))?;
    }
    Ok(true)
}

/// `Writer::put` in the folder `dir` held open (`dir_path` only names
/// files in errors): the same steps as [`put_by_path`], each relative to
/// the folder (`fstatat`, `openat`, `renameat2`), the spare opened as
/// [`spare::open_spare_at`] opens it (never through a link, never on a
/// FIFO). A page not there yet (a team's page at its first group, a
/// round's at its first write) is made as `Writer::put_new` makes a game's
/// page where `new_pages` allows it: an unnamed file of the folder, named
/// once whole (`linkat`, which never replaces a file at the name: one
/// made there meanwhile goes the spare's way); no spare made and renamed.
/// Whether the page was written (it differed).
fn put_at(
    dir: &OwnedFd,
    dir_path: &Path,
    name: &str,
    content: &str,
    new_pages: &mut NewPages,
) -> Result<bool, SiteError> {
    use rustix::fs::{renameat, renameat_with, statat, AtFlags, RenameFlags};
    use std::io::Write;
    // As `std::fs::metadata`: through a link at the page's name.
    let old_len = statat(dir, name, AtFlags::empty())
        .ok()
        .map(|st| st.st_size as u64);
    if old_len == Some(content.len() as u64)
        && read_at(dir, name).is_ok_and(|old| old == content.as_bytes())
    {
        return Ok(false);
    }
    if old_len.is_none() && *new_pages == NewPages::Unnamed {
        match write_unnamed(dir, content.as_bytes()).and_then(|f| give_name(&f, dir, name)) {
            Ok(()) => return Ok(true),
            // Made meanwhile (or a link at the name to nothing): the
            // spare's way replaces it.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // No unnamed files here, or no `/proc`: the spare's way for
            // every later page too.
            Err(_) => *new_pages = NewPages::Spare,
        }
    }
    let tmp = format!(".{name}.tmp");
    // The paths are made only for an error.
    let at = |file: &str| {
        let path = dir_path.join(file);
        move |source| SiteError::Io { path, source }
    };
    let (mut spare, spare_len) = spare::open_spare_at(dir, &tmp).map_err(|e| at(&tmp)(e))?;
    spare
        .write_all(content.as_bytes())
        .map_err(|e| at(&tmp)(e))?;
    if spare_len > content.len() as u64 {
        spare
            .set_len(content.len() as u64)
            .map_err(|e| at(&tmp)(e))?;
    }
    drop(spare);
    if old_len.is_none()
        || renameat_with(dir, tmp.as_str(), dir, name, RenameFlags::EXCHANGE).is_err()
    {
        renameat(dir, tmp.as_str(), dir, name).map_err(|e| at(name)(e.into()))?;
    }
    Ok(true)
}

/// The whole file `name` of the folder `dir` (through a link at its name,
/// as `std::fs::read`).
fn read_at(dir: &OwnedFd, name: &str) -> std::io::Result<Vec<u8>> {
    use rustix::fs::{openat, Mode, OFlags};
    use std::io::Read;
    let fd = openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The folder `dir` opened to make files in (`O_TMPFILE`) and name them.
fn open_folder(dir: &Path) -> rustix::io::Result<OwnedFd> {
    use rustix::fs::{open, Mode, OFlags};
    open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// A file of the folder `dir` without a name, holding `content` (as
/// `File::create` makes it: mode 0666 less the umask). Dropped without a
/// name (the process killed before `give_name`), it is gone: the folder
/// never shows it.
fn write_unnamed(dir: &OwnedFd, content: &[u8]) -> std::io::Result<std::fs::File> {
    use rustix::fs::{openat, Mode, OFlags};
    use std::io::Write;
    let fd = openat(
        dir,
        ".",
        OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )?;
    let mut file = std::fs::File::from(fd);
    file.write_all(content)?;
    Ok(file)
}

/// The unnamed file `file` named `name` in the folder `dir` (`linkat`
/// through `/proc/self/fd`, which needs no privilege): fails, and leaves
/// the folder as it was, if a file by that name exists.
fn give_name(file: &std::fs::File, dir: &OwnedFd, name: &str) -> std::io::Result<()> {
    use rustix::fs::{linkat, AtFlags, CWD};
    let fd = format!("/proc/self/fd/{}", file.as_raw_fd());
    linkat(CWD, fd.as_str(), dir, name, AtFlags::SYMLINK_FOLLOW)?;
    Ok(())
}

/// `content` written over the file at `path` (created if missing) from its
/// start, the file cut to its length: never truncated to zero first.
fn write_over(path: &Path, content: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = open_spare(path)?;
    f.write_all(content)?;
    if f.metadata()?.len() > content.len() as u64 {
        f.set_len(content.len() as u64)?;
    }
    Ok(())
}

/// Whether the files at `a` and `b` traded places (`RENAME_EXCHANGE`;
/// false where the file system does not support it, and nothing moved).
fn exchange(a: &Path, b: &Path) -> bool {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok()
}

use crate::tables::facts::{evolution_facts, points_text};
use crate::tables::knobeln::{disqualifications, game_label};

/// Whether two files have the same bytes (read in blocks; a missing file
/// is different).
fn same_content(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(fa), Ok(fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    match (fa.metadata(), fb.metadata()) {
        (Ok(ma), Ok(mb)) if ma.len() == mb.len() => {}
        _ => return false,
    }
    let (mut ra, mut rb) = (std::io::BufReader::new(fa), std::io::BufReader::new(fb));
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = match ra.read(&mut ba) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 {
            return rb.read(&mut bb[..1]).is_ok_and(|m| m == 0);
        }
        if rb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

fn read_facts<'t>(
    store: &Store,
    tournament: i64,
    (teams, links): (&'t TeamsByName, &'t TeamLinks),
    res: &Results,
    opts: &SiteOptions,
    scope: Scope,
) -> Result<Facts<'t>, SiteError> {
    let row = store.tournament(tournament)?;
    let config: TournamentConfig = serde_json::from_str(&row.config)
        .map_err(|e| SiteError::Config(tournament, e.to_string()))?;
    let (started_at, finished_at): (Option<String>, Option<String>) = store
        .conn()
        .query_row(
            "SELECT started_at, finished_at FROM tournaments WHERE id = ?1",
            [tournament],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(StoreError::from)?;
    let mut games = BTreeMap::new();
    let mut finished_groups = BTreeSet::new();
    // One query, not one per group.
    let finished_in_store = store.finished_groups(tournament)?;
    for round in &res.rounds {
        for group in &round.groups {
            let key = (round.number, group.number);
            if finished_in_store.contains(&key) {
                finished_groups.insert(key);
            }
            if opts.no_game_pages
                || !scope.game_pages(round.number, group.number)
                || (opts.skip_game_pages_of.contains(&key) && finished_groups.contains(&key))
            {
                // Only the points are needed, and the results have them.
                games.insert(key, HashSet::new());
                continue;
            }
            let stored = store.game_outcomes(tournament, round.number, group.number)?;
            games.insert(key, stored.into_iter().map(|g| g.key.slot).collect());
        }
    }
    Ok(Facts {
        title: opts
            .title
            .clone()
            .unwrap_or_else(|| "KNOBELN contest".to_string()),
        seed: row.seed,
        finished: row.finished,
        started_at,
        finished_at,
        config,
        teams,
        links,
        games,
        cuts: opts
            .budget_cuts
            .iter()
            .filter(|(key, _)| {
                opts.skip_game_pages_of.contains(key) && finished_groups.contains(key)
            })
            .map(|(key, cut)| (*key, cut.clone()))
            .collect(),
        finished_groups,
    })
}

/// Writes the site of `tournament` into `out_dir` (created if missing).
pub fn generate(
    store: &Store,
    tournament: i64,
    out_dir: &Path,
    opts: &SiteOptions,
) -> Result<SiteSummary, SiteError> {
    let res = results(store, tournament, vec![])?;
    let summary = generate_from(
        store,
        tournament,
        &res,
        out_dir,
        opts,
        Scope::All,
        &mut Kept::default(),
    )?;
    remove_spares(out_dir)?;
    Ok(summary)
}

/// Removes the pages' spares from `dir` (`.NAME.tmp` beside a page `NAME`;
/// see `Writer::put`): once a site is written for good (the contest's end,
/// a whole write by `knobeln site`) nothing rewrites its pages, so the
/// folder is left as it will be published, without hidden copies of older
/// pages. Other hidden files (an organizer's `.htaccess`) are left alone.
/// Returns how many were removed.
pub fn remove_spares(dir: &Path) -> Result<usize, SiteError> {
    let mut removed = 0;
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_err(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io_err(dir))?;
        let name = entry.file_name();
        let Some(page) = name
            .to_str()
            .and_then(|n| n.strip_prefix('.'))
            .and_then(|n| n.strip_suffix(".tmp"))
        else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if page.is_empty() || !is_file || !dir.join(page).is_file() {
            continue;
        }
        let path = entry.path();
        std::fs::remove_file(&path).map_err(io_err(&path))?;
        removed += 1;
    }
    Ok(removed)
}

/// The frame of every page titled `title` of contest `contest`: the
/// rounds to go to, and whether there is a cross-table and an Evolution.
pub(super) fn page_frame(title: String, contest: &str, res: &Results) -> Frame {
    Frame {
        title,
        contest: contest.to_string(),
        rounds: nav_rounds(res, u32::MAX),
        has_crosstable: res.rounds.iter().any(|r| r.is_final) && !res.winners.is_empty(),
        has_evolution: res.evolution.is_some(),
    }
}

/// The frame of a game page of round `round`: the rounds up to its own,
/// no cross-table and no Evolution, whatever the contest has reached
/// since. A game's page is written once, when its group is played, so
/// its navigation is what the contest had then; a whole site written
/// later gives the same bytes.
pub(super) fn game_frame(title: String, contest: &str, res: &Results, round: u32) -> Frame {
    Frame {
        title,
        contest: contest.to_string(),
        rounds: nav_rounds(res, round),
        has_crosstable: false,
        has_evolution: false,
    }
}

/// The navigation's rounds: those of `res` up to round `last`.
fn nav_rounds(res: &Results, last: u32) -> Vec<NavRound> {
    res.rounds
        .iter()
        .filter(|r| r.number <= last)
        .map(|r| NavRound {
            number: r.number,
            href: round_page(r.number),
        })
        .collect()
}

/// Writes the pages of `scope` from results already at hand (those of an
/// observer's [`ResultsCache`](crate::engine::results::ResultsCache), up to date for the scope).
/// `kept` is what the writes before into `out_dir` kept (a round page's
/// group whose view did not change is copied, not rendered).
pub fn generate_from(
    store: &Store,
    tournament: i64,
    res: &Results,
    out_dir: &Path,
    opts: &SiteOptions,
    scope: Scope,
    kept: &mut Kept,
) -> Result<SiteSummary, SiteError> {
    let (teams, index_teams, (parts, tails), indexes, members) =
        kept.teams_and_parts(store, tournament)?;
    let mut facts = read_facts(store, tournament, teams, res, opts, scope)?;
    std::fs::create_dir_all(out_dir).map_err(io_err(out_dir))?;
    let mut w = Writer::new(out_dir);
    // The game pages first: which of them the budget keeps is known only
    // once they are rendered, and the round's and teams' pages link
    // exactly those.
    let (rendered, budget_cuts) =
        write_game_pages(store, tournament, res, opts, scope, &mut facts, &mut w)?;
    let final_round = res.rounds.iter().find(|r| r.is_final);
    let crosstable = final_round.filter(|_| !res.winners.is_empty());
    let frame = |title: String| page_frame(title, &facts.title, res);
    let placed = |p: &Placed| PlacedView {
        place: p.place,
        team: facts.team(&p.team),
        points: points_text(p.points),
    };
    let evo_facts = res.evolution.as_ref().map(evolution_facts);
    let (evo_ranking, evo_labels) = evo_facts
        .as_ref()
        .map(|f| evolution_rows(f, &|t| facts.team(t)))
        .unwrap_or_default();

    if scope == Scope::All || !out_dir.join("style.css").exists() {
        w.put("style.css", STYLE_CSS)?;
    }

    // index.html
    let params = facts.config.referee.params;
    let index = IndexView {
        frame: frame(if facts.finished {
            "Results".to_string()
        } else {
            "Results so far".to_string()
        }),
        seed: facts.seed,
        state: if facts.finished {
            "finished".into()
        } else {
            "running".into()
        },
        started_at: facts.started_at.clone(),
        finished_at: facts.finished_at.clone(),
        n_teams: facts.teams.len(),
        throws: params.l,
        range: format!("{}..{}", params.a, params.b),
        k: params.k,
        final_ranking: res.winners.iter().map(placed).collect(),
        evolution_ranking: evo_ranking,
        evolution_labels: evo_labels,
        evolution_unranked: res
            .evolution
            .as_ref()
            .map(|e| e.unranked.iter().map(|t| facts.team(t)).collect())
            .unwrap_or_default(),
        evolution_end: evo_facts.as_ref().map(|f| f.end.clone()),
        rounds: res
            .rounds
            .iter()
            .map(|r| RoundSummary {
                number: r.number,
                href: round_page(r.number),
                is_final: r.is_final,
                finished: r
                    .groups
                    .iter()
                    .all(|g| facts.finished_groups.contains(&(r.number, g.number)))
                    && (r.is_final && !res.winners.is_empty()
                        || !r.is_final && !r.advanced.is_empty()),
                n_teams: r.groups.iter().map(|g| g.members.len()).sum(),
                n_groups: r.groups.len(),
                n_advanced: r.advanced.len(),
                n_disqualified: r.disqualified.len(),
            })
            .collect(),
        // Every team's link: the list kept, made once for the tournament.
        teams: Vec::new(),
    };
    if scope.overview() {
        w.put("index.html", &direct::index_html_with(&index, index_teams))?;
    }

    // round-N.html
    for r in res.rounds.iter().filter(|r| scope.round_page(r.number)) {
        let view = RoundView {
            frame: frame(format!(
                "Round {}{}",
                r.number,
                if r.is_final { " (final)" } else { "" }
            )),
            number: r.number,
            is_final: r.is_final,
            finished: index
                .rounds
                .iter()
                .any(|s| s.number == r.number && s.finished),
            advanced: r.advanced.iter().map(|t| facts.team(t)).collect(),
            next_round: r.number + 1,
            disqualified: r
                .disqualified
                .iter()
                .map(|d| DisqualifiedView {
                    team: facts.team(&d.team),
                    reason: d.reason.clone(),
                })
                .collect(),
        };
        // One group at a time: a round's page can hold hundreds of
        // thousands of games.
        let group_view = |g: &crate::engine::results::GroupResult| GroupView {
            number: g.number,
            id: format!("group-{}", g.number),
            finished: facts.finished_groups.contains(&(r.number, g.number)),
            members: g.members.iter().map(|m| facts.team(m)).collect(),
            ranking: g.ranking.iter().map(placed).collect(),
            games: {
                let dqs = disqualifications(g, r);
                g.games
                    .iter()
                    .map(|x| GameRow {
                        slot: x.slot,
                        attempt: x.attempt,
                        p: facts.team(&x.players[0]),
                        q: facts.team(&x.players[1]),
                        points_p: x.points[0],
                        points_q: x.points[1],
                        status: x.status.as_str(),
                        label: game_label(x, &g.games, &dqs)
                            .map_or(Cow::Borrowed("counted"), Cow::Owned),
                        href: has_page(&facts, opts, r.number, g.number, x)
                            .then(|| game_page(r.number, g.number, x.slot)),
                        failures: x
                            .failures
                            .iter()
                            .map(|f| format!("{}: {}", ["P", "Q"][f.player.min(1)], f.reason))
                            .collect(),
                    })
                    .collect()
            },
            pages_note: facts
                .cuts
                .get(&(r.number, g.number))
                .map(|c| c.words(opts.game_page_bytes)),
        };
        // A group's part whose view is the one it was last written from
        // is copied from the page written before, not rendered again.
        let name = round_page(r.number);
        let path = out_dir.join(&name);
        let mut old = parts.open(r.number, &path);
        let mut new_parts = HashMap::new();
        w.put_streamed(&name, |out| {
            let mut out = Counting {
                inner: out,
                written: 0,
            };
            let mut html = String::with_capacity(16 * 1024);
            direct::round_head_html(&mut html, &view);
            std::io::Write::write_all(&mut out, html.as_bytes()).map_err(io_err(&path))?;
            for g in &r.groups {
                let offset = out.written;
                // A finished group's results are final, its disqualifications
                // were decided with it, and once its game pages are written
                // (or there are none) its links are too: its view cannot
                // change, and its part is copied without building it.
                let key = (r.number, g.number);
                let settled = facts.finished_groups.contains(&key)
                    && (opts.no_game_pages || opts.skip_game_pages_of.contains(&key));
                let copied = if settled {
                    old.as_mut().and_then(|o| o.settled_part(g.number))
                } else {
                    None
                };
                let print = match copied {
                    Some((bytes, part)) => {
                        std::io::Write::write_all(&mut out, &bytes).map_err(io_err(&path))?;
                        part.view
                    }
                    None => {
                        let group = group_view(g);
                        let print = ViewPrint::of(&group);
                        match old.as_mut().and_then(|o| o.part(g.number, print)) {
                            Some(bytes) => std::io::Write::write_all(&mut out, &bytes)
                                .map_err(io_err(&path))?,
                            None => {
                                html.clear();
                                direct::round_group_html(&mut html, &group);
                                std::io::Write::write_all(&mut out, html.as_bytes())
                                    .map_err(io_err(&path))?
                            }
                        }
                        print
                    }
                };
                new_parts.insert(
                    g.number,
                    Part {
                        view: print,
                        offset,
                        len: out.written - offset,
                        settled,
                    },
                );
            }
            std::io::Write::write_all(&mut out, direct::ROUND_FOOT.as_bytes())
                .map_err(io_err(&path))?;
            Ok(())
        })?;
        parts.record(r.number, &path, new_parts);
    }

    // final-crosstable.html
    if scope == Scope::All {
        let (svg, teams) = match crosstable {
            Some(fr) => {
                let names: Vec<String> = res.winners.iter().map(|p| p.team.clone()).collect();
                let payoff = payoff_table(&names, fr.groups.iter().flat_map(|g| &g.games));
                let svg =
                    plots::crosstable_plot(&names, &payoff).map_err(plot_err("the cross-table"))?;
                (Some(svg), names.iter().map(|n| facts.team(n)).collect())
            }
            None => (None, Vec::new()),
        };
        let view = CrosstableView {
            frame: frame("Cross-table of the final round".into()),
            svg,
            teams,
        };
        w.put("final-crosstable.html", &render("crosstable", &view)?)?;
    }

    // evolution.html and evolution.svg
    if scope == Scope::All {
        let svg = match &res.evolution {
            Some(evo) if !evo.generations.is_empty() => {
                Some(plots::evolution_plot(evo).map_err(plot_err("the Evolution"))?)
            }
            _ => None,
        };
        if let Some(svg) = &svg {
            w.put("evolution.svg", svg)?;
        }
        let view = evolution_view(frame("The Knobeln Evolution".into()), res, &facts, svg);
        w.put("evolution.html", &render("evolution", &view)?)?;
    }

    // team-ID.html
    let scope_teams = scope.teams(res);
    // Where each team plays: kept for finished groups, made for the
    // others that have a member whose page this write writes. A running
    // group without one (while playing, every group of the round but the
    // one that finished) is looked up as the empty index: none of the
    // pages written is in it. It was made anew at every group's write, a
    // map of the field's names each time. The running groups with such a
    // member are found from the members' own groups, not by looking every
    // running group's members up.
    members.update(res);
    let mut running = HashMap::new();
    for r in &res.rounds {
        for g in &r.groups {
            let key = (r.number, g.number);
            if facts.finished_groups.contains(&key) {
                if indexes.get(&key).is_none_or(|i| !i.fits(g)) {
                    indexes.insert(key, views::GroupIndex::of(g, &|t| facts.team(t)));
                }
            } else if scope_teams.is_none() {
                running.insert(key, views::GroupIndex::of(g, &|t| facts.team(t)));
            }
        }
    }
    for name in scope_teams.iter().flatten() {
        for m in members.of(name) {
            let (r, g) = m.of(res);
            let key = (r.number, g.number);
            if !facts.finished_groups.contains(&key) {
                running
                    .entry(key)
                    .or_insert_with(|| views::GroupIndex::of(g, &|t| facts.team(t)));
            }
        }
    }
    let no_page_written_in = views::GroupIndex::empty();
    let index_of = |r: u32, g: u32| {
        Some(
            running
                .get(&(r, g))
                .or_else(|| indexes.get(&(r, g)))
                .unwrap_or(&no_page_written_in),
        )
    };
    // The Evolution's ranking, made once for every team page.
    let evolution_of: HashMap<&str, &EvolutionPlacedView> = index
        .evolution_ranking
        .iter()
        .map(|p| (p.team.name.as_str(), p))
        .collect();
    // The pages of the scope's teams, in the order of their names, without
    // going over the field's.
    let pages: Vec<(&String, &(u32, i64))> = match &scope_teams {
        None => facts.teams.iter().collect(),
        Some(t) => {
            let mut pages: Vec<_> = t
                .iter()
                .filter_map(|n| facts.teams.get_key_value(*n))
                .collect();
            pages.sort_unstable_by(|a, b| a.0.cmp(b.0));
            pages
        }
    };
    // Every page's description read in one read transaction, not in one
    // each (a transaction begun and ended per query); it lasts while the
    // pages are written, so it is the store's reading one: it never holds
    // the write lock from the mail loop and the lease.
    let _reading = if pages.is_empty() {
        None
    } else {
        store.reading_transaction()?
    };
    // A group settled: finished, its game pages written or none (as a
    // round page's settled part).
    let settled = |m: &views::Membership| {
        let (r, g) = m.of(res);
        let key = (r.number, g.number);
        facts.finished_groups.contains(&key)
            && (opts.no_game_pages || opts.skip_game_pages_of.contains(&key))
    };
    let (mut copied_tails, mut copied_rows) = (0, 0);
    for (name, (id, version)) in pages {
        let page = team_page(*id);
        let member_of = members.of(name);
        let view = |part, split| {
            team_view(
                part,
                split,
                frame(name.clone()),
                store,
                name,
                *version,
                res,
                &index_of,
                member_of,
                evolution_of.get(name.as_str()).copied(),
                &facts,
                opts,
            )
        };
        // The team's first groups that are settled now: their rows are
        // kept for the page's next write (see `TeamTails`).
        let settled_now = member_of.iter().take_while(|m| settled(m)).count();
        let numbers = |i: usize| {
            let (r, g) = member_of[i].of(res);
            (r.number, g.number)
        };
        // The page written before, if its settled groups are this
        // team's first groups now (still settled) and it is still the
        // file written.
        let old = tails
            .written(*id)
            .copied()
            .filter(|o| {
                (1..=settled_now).contains(&o.settled) && numbers(o.settled - 1) == o.last_settled
            })
            .and_then(|o| {
                let text = TeamTails::read(&o, w.folder()?, &page)?;
                Some((o, text))
            });
        let (html, tail_at, marks) = match &old {
            // Every group settled then and the team in no group since:
            // the tail copied whole, the head alone rendered.
            Some((o, text)) if o.groups == member_of.len() && o.settled == o.groups => {
                let tail = text.get(usize::try_from(o.tail_at).unwrap_or(usize::MAX)..);
                match tail {
                    Some(tail) => {
                        let (view, _) = view(TeamPart::Head, 0)?;
                        let mut html = String::with_capacity(4096 + tail.len());
                        direct::team_head_html(&mut html, &view);
                        let tail_at = html.len();
                        html.push_str(tail);
                        copied_tails += 1;
                        let marks = o.marks.moved(o.tail_at as usize, tail_at);
                        (html, tail_at, marks)
                    }
                    None => whole_team_page(&view, settled_now)?,
                }
            }
            // The settled groups' rows and the description copied, the
            // rest rendered.
            Some((o, text)) => match o.copied_rows(text) {
                Some(copied) => {
                    let (view, before) = view(TeamPart::After(o.settled), settled_now)?;
                    let mut html = String::with_capacity(4096 + text.len());
                    direct::team_head_html(&mut html, &view);
                    let tail_at = html.len();
                    let marks = direct::team_tail_marked(&mut html, &view, Some(&copied), before);
                    copied_rows += 1;
                    (html, tail_at, marks)
                }
                None => whole_team_page(&view, settled_now)?,
            },
            None => whole_team_page(&view, settled_now)?,
        };
        drop(old);
        // Forgotten first: a write that fails leaves no record of a page
        // it may have changed.
        tails.forget(*id);
        w.put(&page, &html)?;
        if settled_now > 0 {
            if let Some(dir) = w.folder() {
                let written = parts::TeamPageWritten {
                    tail_at,
                    groups: member_of.len(),
                    settled: settled_now,
                    last_settled: numbers(settled_now - 1),
                    marks,
                };
                tails.record(*id, dir, &page, written);
            }
        }
    }

    let mut files = w.files;
    files.sort();
    Ok(SiteSummary {
        files,
        written: w.written,
        game_pages_rendered: rendered,
        team_tails_copied: copied_tails,
        team_rows_copied: copied_rows,
        finished_groups: facts.finished_groups,
        budget_cuts,
    })
}

/// A team's page rendered whole from its whole view (`view`, made with
/// the rows of its first `settled` groups counted apart), where its tail
/// begins and where the tail's pieces lie.
fn whole_team_page(
    view: &dyn Fn(TeamPart, usize) -> Result<(TeamView, views::RowsBefore), SiteError>,
    settled: usize,
) -> Result<(String, usize, direct::TailMarks), SiteError> {
    let (view, before) = view(TeamPart::Whole, settled)?;
    let mut html = String::with_capacity(4096 + 320 * view.games.len());
    direct::team_head_html(&mut html, &view);
    let tail_at = html.len();
    let marks = direct::team_tail_marked(&mut html, &view, None, before);
    Ok((html, tail_at, marks))
}

/// Writes the game pages of `scope`'s groups: each group's in slot order,
/// the blocks each page takes on disk charged to its two teams, each by
/// its own series of the plot and half the rest ([`page_charges`]), while
/// both charges fit their teams' shares ([`team_share`] of the group's
/// [`group_share`]); a team whose charge does not fit has no page from
/// that game on (its cut, recorded in
/// `facts.cuts`, so [`has_page`] says no for its later games), and its
/// opponent is charged nothing for the game. So a team whose throws make
/// large pages uses up its own share, never its opponents'. A group already written (skipped) keeps its
/// pages and its cut from the options. Returns how many pages were
/// rendered and the cuts this write made.
fn write_game_pages(
    store: &Store,
    tournament: i64,
    res: &Results,
    opts: &SiteOptions,
    scope: Scope,
    facts: &mut Facts<'_>,
    w: &mut Writer<'_>,
) -> Result<(usize, BudgetCuts), SiteError> {
    let mut cuts = BTreeMap::new();
    let mut rendered = 0;
    if opts.no_game_pages {
        return Ok((rendered, cuts));
    }
    let mut replayer: Option<Replayer> = None;
    // Every game page is written into this one string in turn.
    let mut page = String::new();
    let params = facts.config.referee.params;
    let (a, b) = (params.a, params.b);
    for r in &res.rounds {
        // The round's groups as its row holds them (the results at hand
        // may not list them all yet).
        let mut n_groups = None;
        for g in r
            .groups
            .iter()
            .filter(|g| scope.game_pages(r.number, g.number))
        {
            let key = (r.number, g.number);
            let skip =
                opts.skip_game_pages_of.contains(&key) && facts.finished_groups.contains(&key);
            let share = if skip {
                u64::MAX
            } else {
                let n = match n_groups {
                    Some(n) => n,
                    None => *n_groups.insert(store.group_count(tournament, r.number)?),
                };
                team_share(
                    group_share(opts.game_page_bytes, r.number, Stage::of(r.is_final), n),
                    g.members.len(),
                )
            };
            // Each team's blocks charged so far (half of each of its pages
            // written), and the slot from which each cut team has none.
            let mut used: HashMap<&str, u64> = HashMap::new();
            let mut team_cuts: BTreeMap<String, u32> = BTreeMap::new();
            let mut kept = 0u32;
            let dqs = disqualifications(g, r);
            // This group's throws, and only while its pages are written.
            let mut stored_games: Option<HashMap<u32, StoredGame>> = None;
            for x in &g.games {
                if !has_page(facts, opts, r.number, g.number, x)
                    || x.players.iter().any(|p| team_cuts.contains_key(&**p))
                {
                    continue;
                }
                let name = game_page(r.number, g.number, x.slot);
                if skip && w.exists(&name) {
                    w.keep(&name);
                    continue;
                }
                if stored_games.is_none() {
                    // Games stored for replay are played again (and
                    // checked) here.
                    if replayer.is_none() {
                        replayer = Some(Replayer::new(store, tournament)?);
                    }
                    let replayer = replayer.as_mut().expect("made above");
                    stored_games = Some(
                        replayer
                            .group_games(store, r.number, g.number)?
                            .into_iter()
                            .map(|s| (s.key.slot, s))
                            .collect(),
                    );
                }
                let Some(stored) = stored_games.as_ref().and_then(|m| m.get(&x.slot)) else {
                    continue;
                };
                let throws = &stored.record.throws;
                let mut wins = [0usize; 2];
                for t in throws {
                    if let Some(w) = judge(t[0], t[1]).winner {
                        wins[if w == Player::P { 0 } else { 1 }] += 1;
                    }
                }
                let view = GameView {
                    frame: game_frame(
                        format!("{} against {}", x.players[0], x.players[1]),
                        &facts.title,
                        res,
                        r.number,
                    ),
                    round: r.number,
                    round_href: round_page(r.number),
                    group: g.number,
                    slot: x.slot,
                    attempt: x.attempt,
                    seed: x.seed,
                    p: facts.team(&x.players[0]),
                    q: facts.team(&x.players[1]),
                    points_p: stored.record.points[0],
                    points_q: stored.record.points[1],
                    status: x.status.to_string(),
                    label: game_label(x, &g.games, &dqs).unwrap_or_else(|| "counted".into()),
                    n_throws: throws.len(),
                    wins_p: wins[0],
                    wins_q: wins[1],
                    failures: stored
                        .record
                        .failures
                        .iter()
                        .map(|f| {
                            format!(
                                "{} ({}): {}",
                                ["P", "Q"][f.player.min(1)],
                                x.players[f.player.min(1)],
                                f.reason
                            )
                        })
                        .collect(),
                };
                let own = direct::write_game_html(&mut page, &view, throws, a, b);
                rendered += 1;
                // The page's blocks charged to its two teams, each by its
                // own series and half the rest: a team whose charge does
                // not fit its share has no page from this game on; the
                // other team is charged nothing for it.
                let charges = page_charges(page.len(), own);
                if !skip {
                    let over: Vec<&str> = x
                        .players
                        .iter()
                        .zip(charges)
                        .filter(|(p, c)| used.get(&***p).copied().unwrap_or(0) + c > share)
                        .map(|(p, _)| &**p)
                        .collect();
                    if !over.is_empty() {
                        for p in over {
                            team_cuts.insert(p.to_string(), x.slot);
                        }
                        continue;
                    }
                    for (p, c) in x.players.iter().zip(charges) {
                        *used.entry(&**p).or_insert(0) += c;
                    }
                }
                kept += 1;
                w.put_new(&name, &page)?;
            }
            if !team_cuts.is_empty() {
                let cut = BudgetCut {
                    teams: team_cuts,
                    share,
                    kept,
                };
                facts.cuts.insert(key, cut.clone());
                cuts.insert(key, cut);
            }
        }
    }
    Ok((rendered, cuts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::fs::PermissionsExt;

    /// A game page's navigation is what the contest had when its group was
    /// played: written during the contest or by a whole site afterwards,
    /// its bytes are the same (F7 saw game pages of round 1 written while
    /// playing lack the later rounds' links a whole site had).
    #[test]
    fn a_game_pages_navigation_ends_at_its_own_round() {
        let round = |number: u32, is_final: bool| crate::engine::results::RoundResult {
            number,
            is_final,
            groups: Vec::new(),
            advanced: Vec::new(),
            disqualified: Vec::new(),
        };
        let finished = Results {
            seed: 1,
            rejected: Vec::new(),
            rounds: vec![round(1, false), round(2, false), round(3, true)],
            winners: vec![crate::engine::results::Placed {
                team: "a".into(),
                points: 1.0,
                place: 1,
            }],
            evolution: None,
        };
        let during_round_1 = Results {
            rounds: vec![round(1, false)],
            winners: Vec::new(),
            ..finished.clone()
        };
        let rounds = |f: &Frame| f.rounds.iter().map(|r| r.number).collect::<Vec<_>>();
        let later = game_frame("g".into(), "c", &finished, 1);
        let then = game_frame("g".into(), "c", &during_round_1, 1);
        assert_eq!(rounds(&later), vec![1]);
        assert_eq!(rounds(&then), vec![1]);
        assert!(!later.has_crosstable && !later.has_evolution);
        let mut a = String::new();
        let mut b = String::new();
        direct::head(&mut a, &later);
        direct::head(&mut b, &then);
        assert_eq!(a, b);
        // A final's game page links every round, and still no table that
        // did not exist while it was played.
        let last = game_frame("g".into(), "c", &finished, 3);
        assert_eq!(rounds(&last), vec![1, 2, 3]);
        assert!(!last.has_crosstable);
        // Other pages keep the whole navigation.
        assert!(page_frame("p".into(), "c", &finished).has_crosstable);
    }

    /// A page made new appears whole under its name and makes no spare;
    /// a file by that name already there (a site written before, a page
    /// cut short by a crash of an older version or a power loss) is
    /// compared and replaced whole only if it differs, as `put` does.
    #[test]
    fn a_new_page_appears_whole_and_one_there_already_is_compared() {
        let dir = tempfile::tempdir().unwrap();
        let put_new = |content: &str| {
            let mut w = Writer::new(dir.path());
            w.put_new("game-r1-g1-s1.html", content).unwrap();
            assert_eq!(w.files, ["game-r1-g1-s1.html"]);
            w.written
        };
        let page = dir.path().join("game-r1-g1-s1.html");
        let names = || -> Vec<String> {
            let mut n: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            n.sort();
            n
        };
        assert_eq!(put_new("<p>the whole page</p>"), 1);
        assert_eq!(
            std::fs::read_to_string(&page).unwrap(),
            "<p>the whole page</p>"
        );
        assert_eq!(names(), ["game-r1-g1-s1.html"], "no spare");
        let mode = std::fs::metadata(&page).unwrap().permissions().mode() & 0o777;
        let made = dir.path().join("made");
        std::fs::write(&made, "x").unwrap();
        let usual = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
        std::fs::remove_file(&made).unwrap();
        assert_eq!(mode, usual, "the mode File::create gives");
        // The same page again: nothing written.
        assert_eq!(put_new("<p>the whole page</p>"), 0);
        // A page cut short (a crash of an older version, a power loss),
        // or empty: replaced by the whole page.
        std::fs::write(&page, "<p>the wh").unwrap();
        assert_eq!(put_new("<p>the whole page</p>"), 1);
        assert_eq!(
            std::fs::read_to_string(&page).unwrap(),
            "<p>the whole page</p>"
        );
        std::fs::write(&page, "").unwrap();
        assert_eq!(put_new("<p>the whole page</p>"), 1);
        assert_eq!(
            std::fs::read_to_string(&page).unwrap(),
            "<p>the whole page</p>"
        );
        assert!(names().contains(&"game-r1-g1-s1.html".to_string()));
    }

    /// The pages in `dir` and their texts, by name; spares (`.NAME.tmp`:
    /// a page cut short leaves its spare, `put` trades places) left out.
    fn pages_in(dir: &Path) -> Vec<(String, String)> {
        let mut pages: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let text = std::fs::read_to_string(e.path()).unwrap();
                (e.file_name().into_string().unwrap(), text)
            })
            .filter(|(name, _)| !name.starts_with('.'))
            .collect();
        pages.sort();
        pages
    }

    /// Where unnamed files cannot be had (the folder not held, a file
    /// system without `O_TMPFILE`: here a held descriptor that is no
    /// folder makes `openat` fail as such a file system does), a page made
    /// new goes the spare's way, whole, and every later page too without
    /// trying again; a page there already is compared, a page cut short
    /// replaced; no spare is left beside a page made new; and the folder
    /// holds the same bytes as by unnamed files.
    #[test]
    fn without_unnamed_files_a_new_page_goes_the_spares_way() {
        let by = |new_pages: NewPages, broken: bool| {
            let dir = tempfile::tempdir().unwrap();
            let mut w = Writer::new(dir.path());
            w.new_pages = new_pages;
            if broken {
                let file = dir.path().join("not-a-folder");
                std::fs::write(&file, "").unwrap();
                let fd = OwnedFd::from(std::fs::File::open(&file).unwrap());
                std::fs::remove_file(&file).unwrap();
                w.held = Held::Open(fd);
            }
            w.put_new("game-r1-g1-s1.html", "<p>one</p>").unwrap();
            assert_eq!(w.new_pages, NewPages::Spare, "{new_pages:?} {broken}");
            std::fs::write(dir.path().join("game-r1-g1-s2.html"), "<p>tw").unwrap();
            w.put_new("game-r1-g1-s2.html", "<p>two</p>").unwrap();
            w.put_new("game-r1-g1-s3.html", "<p>three</p>").unwrap();
            w.put_new("game-r1-g1-s3.html", "<p>three</p>").unwrap();
            assert_eq!(w.written, 3);
            pages_in(dir.path())
        };
        let unnamed = {
            let dir = tempfile::tempdir().unwrap();
            let mut w = Writer::new(dir.path());
            w.put_new("game-r1-g1-s1.html", "<p>one</p>").unwrap();
            std::fs::write(dir.path().join("game-r1-g1-s2.html"), "<p>tw").unwrap();
            w.put_new("game-r1-g1-s2.html", "<p>two</p>").unwrap();
            w.put_new("game-r1-g1-s3.html", "<p>three</p>").unwrap();
            w.put_new("game-r1-g1-s3.html", "<p>three</p>").unwrap();
            assert_eq!(w.new_pages, NewPages::Unnamed, "a page there is no fault");
            pages_in(dir.path())
        };
        let want: Vec<(String, String)> = [
            ("game-r1-g1-s1.html", "<p>one</p>"),
            ("game-r1-g1-s2.html", "<p>two</p>"),
            ("game-r1-g1-s3.html", "<p>three</p>"),
        ]
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .into();
        assert_eq!(by(NewPages::Spare, false), want);
        assert_eq!(by(NewPages::Unnamed, true), want);
        assert_eq!(unnamed, want);
    }

    /// A page `put` makes new (a team's page at its team's first group,
    /// say) is an unnamed file of the folder named once whole: no spare is
    /// made and renamed for it (a FIFO at its spare's name is left alone,
    /// where the spare's way removes it and makes the spare). Written
    /// again, it goes the spare's way as before. Where unnamed files cannot
    /// be had, a new page goes the spare's way too. A link at the page's
    /// name to nothing is replaced by the page (`linkat` refuses the name,
    /// the spare takes it), nothing made where the link points.
    #[test]
    fn a_page_put_new_is_named_whole_without_a_spare() {
        use std::os::unix::fs::FileTypeExt;
        let fifo = |path: &Path| {
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: mkfifo with a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        };
        let is_fifo =
            |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo());
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut w = Writer::new(d);
        fifo(&d.join(".team-1.html.tmp"));
        w.put("team-1.html", "<p>one</p>").unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("team-1.html")).unwrap(),
            "<p>one</p>"
        );
        assert!(is_fifo(&d.join(".team-1.html.tmp")), "no spare made");
        assert_eq!((w.written, w.new_pages), (1, NewPages::Unnamed));
        // Again: the spare's way (the FIFO at its name removed, the spare
        // made and traded with the page).
        w.put("team-1.html", "<p>one, two</p>").unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("team-1.html")).unwrap(),
            "<p>one, two</p>"
        );
        assert!(std::fs::symlink_metadata(d.join(".team-1.html.tmp"))
            .unwrap()
            .is_file());
        // A link at the page's name to nothing.
        let nowhere = d.join("nowhere");
        std::os::unix::fs::symlink(&nowhere, d.join("team-2.html")).unwrap();
        w.put("team-2.html", "<p>two</p>").unwrap();
        let page = std::fs::symlink_metadata(d.join("team-2.html")).unwrap();
        assert!(page.is_file());
        assert_eq!(
            std::fs::read_to_string(d.join("team-2.html")).unwrap(),
            "<p>two</p>"
        );
        assert!(!nowhere.exists());
        assert_eq!((w.written, w.new_pages), (3, NewPages::Unnamed));
        // Without unnamed files: the spare's way (the FIFO removed).
        let mut w = Writer::new(d);
        w.new_pages = NewPages::Spare;
        fifo(&d.join(".team-3.html.tmp"));
        w.put("team-3.html", "<p>three</p>").unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("team-3.html")).unwrap(),
            "<p>three</p>"
        );
        assert!(!d.join(".team-3.html.tmp").exists());
    }

    /// Hostile (f9): a symbolic link planted at a page's spare
    /// (`.NAME.tmp`), or a FIFO there, never makes a write go elsewhere or
    /// wait: the page is written whole, the file the link named is as it
    /// was. (Before, the page's bytes went over the linked file.) Both
    /// ways of `put`: in the folder held open, and by paths where it
    /// cannot be held.
    #[test]
    fn a_link_at_a_pages_spare_never_writes_elsewhere() {
        for way in [PutWay::Held, PutWay::ByPath] {
            let dir = tempfile::tempdir().unwrap();
            let elsewhere = tempfile::tempdir().unwrap();
            let victim = elsewhere.path().join("authorized_keys");
            std::fs::write(&victim, "ssh-ed25519 AAAA the owner's key\n").unwrap();
            let page = dir.path().join("index.html");
            std::fs::write(&page, "old").unwrap();
            std::os::unix::fs::symlink(&victim, dir.path().join(".index.html.tmp")).unwrap();
            std::os::unix::fs::symlink(&victim, dir.path().join(".round-1.html.tmp")).unwrap();
            let fifo = |name: &str| {
                let fifo =
                    std::ffi::CString::new(dir.path().join(name).as_os_str().as_encoded_bytes())
                        .unwrap();
                // SAFETY: mkfifo with a NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
            };
            fifo(".round-2.html.tmp");
            fifo(".team-1.html.tmp");
            std::fs::write(dir.path().join("team-1.html"), "older").unwrap();
            let mut w = way.writer(dir.path());
            w.put("index.html", "<p>the new index</p>").unwrap();
            w.put("team-1.html", "<p>a team</p>").unwrap();
            for name in ["round-1.html", "round-2.html"] {
                w.put_streamed(name, |out| {
                    out.write_all(b"<p>a round</p>").map_err(io_err(dir.path()))
                })
                .unwrap();
            }
            assert_eq!(
                std::fs::read_to_string(&victim).unwrap(),
                "ssh-ed25519 AAAA the owner's key\n",
                "{way:?}"
            );
            assert_eq!(
                std::fs::read_to_string(&page).unwrap(),
                "<p>the new index</p>"
            );
            assert_eq!(
                std::fs::read_to_string(dir.path().join("team-1.html")).unwrap(),
                "<p>a team</p>"
            );
            for name in ["round-1.html", "round-2.html"] {
                assert_eq!(
                    std::fs::read_to_string(dir.path().join(name)).unwrap(),
                    "<p>a round</p>"
                );
            }
        }
    }

    /// How a test's `Writer` writes: in the folder held open (as always
    /// where the folder can be opened), or by paths (where it cannot).
    #[derive(Debug, Clone, Copy)]
    enum PutWay {
        Held,
        ByPath,
    }

    impl PutWay {
        fn writer(self, dir: &Path) -> Writer<'_> {
            let mut w = Writer::new(dir);
            match self {
                PutWay::Held => assert!(w.folder().is_some()),
                PutWay::ByPath => w.held = Held::Unavailable,
            }
            w
        }
    }

    /// A page is written over its spare and trades places with it, in the
    /// folder held and by paths alike: the page is the new content whole
    /// (a shorter one too, a changed one of the same length), an unchanged
    /// page is not written, and once the spare exists no write makes or
    /// frees a file (the page's and the spare's inodes trade places).
    #[test]
    fn a_page_is_written_over_its_spare_and_traded_either_way() {
        use std::os::unix::fs::MetadataExt;
        for way in [PutWay::Held, PutWay::ByPath] {
            let dir = tempfile::tempdir().unwrap();
            let page = dir.path().join("team-7.html");
            let spare = dir.path().join(".team-7.html.tmp");
            let inode = |p: &Path| std::fs::metadata(p).map(|m| m.ino()).ok();
            let put = |content: &str| {
                let mut w = way.writer(dir.path());
                w.put("team-7.html", content).unwrap();
                assert_eq!(w.files, ["team-7.html"]);
                w.written
            };
            assert_eq!(put("<p>the first page, long</p>"), 1, "{way:?}");
            assert_eq!(inode(&spare), None, "a new page has no spare");
            assert_eq!(put("<p>second, longer than the first</p>"), 1);
            let (a, b) = (inode(&page).unwrap(), inode(&spare).unwrap());
            for (content, written) in [
                ("<p>third</p>", 1),
                ("<p>third</p>", 0),
                ("<p>THIRD</p>", 1),
                ("<p>the fourth, the longest of them all</p>", 1),
            ] {
                assert_eq!(put(content), written, "{way:?} {content}");
                assert_eq!(std::fs::read_to_string(&page).unwrap(), content);
                let now = (inode(&page).unwrap(), inode(&spare).unwrap());
                assert!(now == (a, b) || now == (b, a), "{way:?}: a file made");
            }
            assert_eq!(
                std::fs::read_to_string(&spare).unwrap(),
                "<p>THIRD</p>",
                "the spare is the page before"
            );
        }
    }

    /// A server killed while it writes a new page leaves no trace of it:
    /// the content written so far is in a file without a name, gone with
    /// the process (here: dropped before it is named). The folder never
    /// shows a page cut short.
    #[test]
    fn a_new_page_killed_before_its_name_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let held = open_folder(dir.path()).unwrap();
        let half = write_unnamed(&held, b"<!DOCTYPE html>\n<html lang=").unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        drop(half);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // Named, it is there whole; a second name for the same page is
        // refused and leaves the first as it was.
        let whole = write_unnamed(&held, b"whole").unwrap();
        give_name(&whole, &held, "game-r1-g1-s2.html").unwrap();
        let other = write_unnamed(&held, b"other").unwrap();
        let refused = give_name(&other, &held, "game-r1-g1-s2.html").unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::AlreadyExists);
        let page = dir.path().join("game-r1-g1-s2.html");
        assert_eq!(std::fs::read_to_string(page).unwrap(), "whole");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A page written piece by piece goes over its spare and trades places
    /// with it: after the spare exists, no write makes a file, the page is
    /// the new content whole (a shorter one too), and an unchanged page is
    /// left as it is.
    #[test]
    fn a_streamed_page_is_written_over_its_spare_and_traded() {
        let dir = tempfile::tempdir().unwrap();
        let put = |content: &str| {
            let mut w = Writer::new(dir.path());
            w.put_streamed("round-1.html", |out| {
                out.write_all(content.as_bytes())
                    .map_err(io_err(dir.path()))
            })
            .unwrap();
            w.written
        };
        let page = dir.path().join("round-1.html");
        let spare = dir.path().join(".round-1.html.tmp");
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert_eq!(put("the first, long version"), 1);
        assert_eq!(put("second"), 1);
        let (a, b) = (ino(&page), ino(&spare));
        assert_eq!(std::fs::read_to_string(&page).unwrap(), "second");
        assert_eq!(put("third, longer than the second"), 1);
        assert_eq!((ino(&page), ino(&spare)), (b, a), "traded, none made");
        assert_eq!(
            std::fs::read_to_string(&page).unwrap(),
            "third, longer than the second"
        );
        assert_eq!(put("4th"), 1);
        assert_eq!((ino(&page), ino(&spare)), (a, b));
        assert_eq!(std::fs::read_to_string(&page).unwrap(), "4th");
        // The same content: nothing traded, the page as it was.
        assert_eq!(put("4th"), 0);
        assert_eq!(ino(&page), a);
        assert_eq!(std::fs::read_to_string(&page).unwrap(), "4th");
        assert_eq!(remove_spares(dir.path()).unwrap(), 1);
    }
}
