//! [`RoundPageParts`]: where each group's part of a round's page lies in
//! the file last written, with a fingerprint of the view it was rendered
//! from, so that writing the page again copies the parts whose view did
//! not change instead of rendering them (a round's page is rewritten about
//! ten times while its groups play, and most of its groups are finished
//! and unchanged each time). A settled group's part (see
//! [`Part::settled`]) is copied without even building its view: building
//! and fingerprinting the views of every group was most of the cost of
//! writing the page.
//!
//! Not here: rendering (the caller renders a part whose view changed) and
//! deciding what a part shows. Only positions and fingerprints are kept
//! (a few dozen bytes per group, never the page's bytes); a file that is
//! not the one last written (another length or modification time) is not
//! copied from.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The parts of every round's page as last written by this process.
#[derive(Debug, Default)]
pub struct RoundPageParts {
    rounds: HashMap<u32, WrittenPage>,
}

/// One round's page as written: its stamp (to recognize it) and where
/// each group's part is.
#[derive(Debug)]
struct WrittenPage {
    stamp: Stamp,
    parts: HashMap<u32, Part>,
}

/// What recognizes a file as the one this process wrote: its inode, length,
/// modification time and change time. A page put there by anyone else
/// (renamed over it, even of the same length within one tick of the clock)
/// has another inode; one written over in place, another length or
/// modification time, or, where the writer set the modification time
/// back to ours, another change time (which no one but the kernel sets:
/// every write and every change of the times moves it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    fn of_metadata(m: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            inode: m.ino(),
            len: m.size(),
            modified: (m.mtime(), m.mtime_nsec()),
            changed: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// As `fstat` or `fstatat` gives it.
    fn of_stat(st: &rustix::fs::Stat) -> Stamp {
        Stamp {
            inode: st.st_ino,
            len: st.st_size as u64,
            modified: (st.st_mtime, st.st_mtime_nsec as i64),
            changed: (st.st_ctime, st.st_ctime_nsec as i64),
        }
    }
}

/// A group's part of a page: the fingerprint of its view and its bytes'
/// place in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub view: ViewPrint,
    pub offset: u64,
    pub len: u64,
    /// Rendered from the view of a settled group (finished, its game pages
    /// written or none): a view that cannot change any more, so the part
    /// is copied without building the view again.
    pub settled: bool,
}

/// A 128-bit fingerprint of a view (two SipHashes under different
/// prefixes): equal views give equal prints, and the rendered bytes are a
/// function of the view alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewPrint(u64, u64);

impl ViewPrint {
    pub fn of<T: Hash>(view: &T) -> ViewPrint {
        let half = |salt: u8| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            salt.hash(&mut h);
            view.hash(&mut h);
            h.finish()
        };
        ViewPrint(half(1), half(2))
    }
}

/// The old page of a round, open for copying the parts that did not change.
pub struct OldPage {
    file: std::fs::File,
    parts: HashMap<u32, Part>,
}

impl OldPage {
    /// The bytes of `group`'s part, if it was rendered from a view with
    /// print `view` and can be read back whole.
    pub fn part(&mut self, group: u32, view: ViewPrint) -> Option<Vec<u8>> {
        let part = *self.parts.get(&group).filter(|p| p.view == view)?;
        self.read(part)
    }

    /// The bytes of `group`'s part and its part, if it was rendered from
    /// a settled group's view (see [`Part::settled`]).
    pub fn settled_part(&mut self, group: u32) -> Option<(Vec<u8>, Part)> {
        let part = *self.parts.get(&group).filter(|p| p.settled)?;
        Some((self.read(part)?, part))
    }

    fn read(&mut self, part: Part) -> Option<Vec<u8>> {
        let mut bytes = vec![0u8; usize::try_from(part.len).ok()?];
        self.file.seek(SeekFrom::Start(part.offset)).ok()?;
        self.file.read_exact(&mut bytes).ok()?;
        Some(bytes)
    }
}

impl RoundPageParts {
    /// The page of `round` at `path`, if it is the one last written here
    /// (the same [`Stamp`]).
    pub fn open(&self, round: u32, path: &Path) -> Option<OldPage> {
        let written = self.rounds.get(&round)?;
        let file = std::fs::File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        if Stamp::of_metadata(&meta) != written.stamp {
            return None;
        }
        Some(OldPage {
            file,
            parts: written.parts.clone(),
        })
    }

    /// Records the page of `round` just written at `path` with its parts
    /// (forgets it if the file cannot be read back).
    pub fn record(&mut self, round: u32, path: &Path, parts: HashMap<u32, Part>) {
        match std::fs::metadata(path) {
            Ok(m) => {
                self.rounds.insert(
                    round,
                    WrittenPage {
                        stamp: Stamp::of_metadata(&m),
                        parts,
                    },
                );
            }
            Err(_) => {
                self.rounds.remove(&round);
            }
        }
    }
}

/// The team pages as last written by this process, each with where the
/// pieces of its tail lie ([`super::direct::team_tail_marked`]: the
/// description, the points per opponent, the failures, the games) and how
/// many of the team's first groups were settled when it was written
/// (finished, their game pages written or none: see [`Part::settled`]).
/// A settled group's rows (its games, its failures) cannot change: they
/// show only its results, its games' pages and its disqualifications, all
/// final; and the version's description does not change in a tournament.
/// So the page's next write copies them from the file: the description's
/// section, and the first settled groups' failures and games, which lead
/// their lists (a team's groups are listed in the order it played them);
/// it renders the rest from a view of the later groups' rows (and the
/// points per opponent and the head, which every group changes). Where
/// every group was settled and the team is in no other group since (the
/// Evolution's write of every team page, above all), the whole tail is
/// copied and the head alone rendered.
///
/// A file is copied from only if it is still the one written (its
/// [`Stamp`]); anything else (changed, replaced or removed behind the
/// server's back) is not read, and the page is rendered whole and
/// written. Only positions are kept (about a hundred bytes a team, never
/// a page's bytes), and only in memory: a process started again (after a
/// `kill -9`, say) knows of no page and renders each whole the first time.
#[derive(Debug, Default)]
pub struct TeamTails {
    pages: HashMap<u32, WrittenTail>,
}

/// A team page as written: its stamp (to recognize it), where its tail
/// and the tail's pieces lie ([`super::direct::TailMarks`], offsets in the
/// file), in how many groups the team was then and how many of the first
/// of them were settled (the rows up to the marks' splits are theirs), and
/// the last of those, as the team's memberships then said (round and
/// group numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenTail {
    stamp: Stamp,
    pub tail_at: u64,
    pub groups: usize,
    pub settled: usize,
    pub last_settled: (u32, u32),
    pub marks: super::direct::TailMarks,
}

/// A team page's place in the folder and what the write knew of it when
/// it was written: what [`TeamTails::record`] keeps.
pub struct TeamPageWritten {
    pub tail_at: usize,
    pub groups: usize,
    pub settled: usize,
    pub last_settled: (u32, u32),
    pub marks: super::direct::TailMarks,
}

impl WrittenTail {
    /// The description's section and the settled groups' rows in `text`,
    /// the page read back ([`TeamTails::read`]), where the marks say;
    /// `None` if they are not where the text can be cut.
    pub fn copied_rows<'t>(&self, text: &'t str) -> Option<super::direct::CopiedRows<'t>> {
        let tail_at = usize::try_from(self.tail_at).ok()?;
        let m = &self.marks;
        Some(super::direct::CopiedRows {
            description: text.get(tail_at..m.description_end)?,
            failures: text.get(m.failures.0..m.failures.1)?,
            games: text.get(m.games.0..m.games.1)?,
        })
    }
}

impl TeamTails {
    /// What this process recorded of team `team`'s page, if it recorded
    /// any (not yet checked against the file: [`TeamTails::read`]).
    pub fn written(&self, team: u32) -> Option<&WrittenTail> {
        self.pages.get(&team)
    }

    /// The page `name` of the folder `dir`, whole, if it is still the one
    /// recorded as `written` (the same [`Stamp`], seen on the descriptor it
    /// is read from: never through a link at the page's name, none of ours
    /// is one) and its text; `None` otherwise (the page is then rendered
    /// whole).
    pub fn read(written: &WrittenTail, dir: &rustix::fd::OwnedFd, name: &str) -> Option<String> {
        use rustix::fs::{fstat, openat, Mode, OFlags};
        let fd = openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .ok()?;
        if Stamp::of_stat(&fstat(&fd).ok()?) != written.stamp {
            return None;
        }
        let mut file = std::fs::File::from(fd);
        let mut bytes = vec![0u8; usize::try_from(written.stamp.len).ok()?];
        file.read_exact(&mut bytes).ok()?;
        String::from_utf8(bytes).ok()
    }

    /// Records team `team`'s page, the file `name` of `dir` just written,
    /// as `page` says it was written (forgets it if the file cannot be
    /// looked up, or no group of the team was settled).
    pub fn record(
        &mut self,
        team: u32,
        dir: &rustix::fd::OwnedFd,
        name: &str,
        page: TeamPageWritten,
    ) {
        use rustix::fs::{statat, AtFlags};
        if page.settled == 0 {
            self.forget(team);
            return;
        }
        match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => {
                self.pages.insert(
                    team,
                    WrittenTail {
                        stamp: Stamp::of_stat(&st),
                        tail_at: page.tail_at as u64,
                        groups: page.groups,
                        settled: page.settled,
                        last_settled: page.last_settled,
                        marks: page.marks,
                    },
                );
            }
            Err(_) => self.forget(team),
        }
    }

    /// Forgets team `team`'s page (about to be written, or not written).
    pub fn forget(&mut self, team: u32) {
        self.pages.remove(&team);
    }
}

/// A writer that counts the bytes written through it.
pub struct Counting<W> {
    pub inner: W,
    pub written: u64,
}

impl<W: std::io::Write> std::io::Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_copied_only_from_the_page_last_written_and_for_the_same_view() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("round-1.html");
        std::fs::write(&path, "head[group one][group two]foot").unwrap();
        let (one, two) = (ViewPrint::of(&"one"), ViewPrint::of(&"two"));
        assert_ne!(one, two);
        let mut parts = RoundPageParts::default();
        let at = |view, offset, len| Part {
            view,
            offset,
            len,
            settled: offset == 4,
        };
        parts.record(
            1,
            &path,
            HashMap::from([(1, at(one, 4, 11)), (2, at(two, 15, 11))]),
        );
        let mut old = parts.open(1, &path).unwrap();
        assert_eq!(old.part(1, one).unwrap(), b"[group one]");
        assert_eq!(old.part(2, two).unwrap(), b"[group two]");
        // Another view, another group or another round: nothing to copy.
        assert_eq!(old.part(1, two), None);
        assert_eq!(old.part(3, one), None);
        assert!(parts.open(2, &path).is_none());
        // A settled part is copied without its view's print.
        assert_eq!(old.settled_part(1).unwrap().0, b"[group one]");
        assert_eq!(old.settled_part(2), None);
        // The file changed behind our back (another length): not copied.
        std::fs::write(&path, "head[group one][group 2]foot").unwrap();
        assert!(parts.open(1, &path).is_none());
    }

    /// A page put in the place of the one written (renamed over it), of
    /// the same length and with the same modification time to the
    /// nanosecond, as a second write within one tick of the clock leaves
    /// it: not the page written, nothing copied from it (red team E14's
    /// open case; before, length and time alone took it for ours).
    #[test]
    fn a_page_renamed_over_ours_with_our_length_and_time_is_not_ours() {
        use rustix::fs::{open, Mode, OFlags};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("round-1.html");
        std::fs::write(&path, "head[group one]foot").unwrap();
        let one = ViewPrint::of(&"one");
        let mut parts = RoundPageParts::default();
        let part = Part {
            view: one,
            offset: 4,
            len: 11,
            settled: true,
        };
        parts.record(1, &path, HashMap::from([(1, part)]));
        let folder = open(
            dir.path(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
        let mut tails = TeamTails::default();
        let marks = super::super::direct::TailMarks {
            description_end: 4,
            failures: (4, 4),
            games: (4, 15),
        };
        let written = |settled| TeamPageWritten {
            tail_at: 4,
            groups: 1,
            settled,
            last_settled: (1, 1),
            marks,
        };
        // A page without a settled group is not recorded.
        tails.record(7, &folder, "round-1.html", written(0));
        assert!(tails.written(7).is_none());
        tails.record(7, &folder, "round-1.html", written(1));
        assert!(parts.open(1, &path).is_some());
        let read = |tails: &TeamTails| TeamTails::read(tails.written(7)?, &folder, "round-1.html");
        let text = read(&tails).unwrap();
        assert_eq!(text, "head[group one]foot");
        let rows = tails.written(7).unwrap().copied_rows(&text).unwrap();
        assert_eq!(
            (rows.description, rows.failures, rows.games),
            ("", "", "[group one]")
        );
        // Another file of the same length, given the same time, renamed
        // over the page.
        let other = dir.path().join("other.html");
        std::fs::write(&other, "head[group 1!!]foot").unwrap();
        let times = std::fs::File::open(&path).unwrap().metadata().unwrap();
        std::fs::File::options()
            .write(true)
            .open(&other)
            .unwrap()
            .set_modified(times.modified().unwrap())
            .unwrap();
        std::fs::rename(&other, &path).unwrap();
        let now = std::fs::metadata(&path).unwrap();
        assert_eq!(
            (now.len(), now.modified().unwrap()),
            (times.len(), times.modified().unwrap())
        );
        assert!(parts.open(1, &path).is_none());
        assert_eq!(read(&tails), None);
    }
}
