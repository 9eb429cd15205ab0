//! A bot's working folder kept from one match to its next (the ultimatum
//! game's FAQ, 2011: "a file stays until the bot that created it deletes
//! it", issue 27).
//!
//! A kept folder is a [`FolderImage`]: the regular files (bytes and the
//! executable bit) and folders of the bot's `/work` at the end of a match,
//! read by the server after the bot is gone, through the descriptor it
//! opened before the bot started ([`super::bot::WorkFolder::Returned`]).
//! At the bot's next match the image is written into its new `/work`
//! before its program starts ([`FolderImage::files`], [`FolderImage::dirs`]).
//! The folder is the bot's own tmpfs, so its quota is the tmpfs's size
//! and file count (by construction: a write past it fails with `ENOSPC`),
//! and no other bot ever sees it.
//!
//! An image is measured as the tmpfs it is written into will count it
//! ([`FolderImage::cost`]): every file's data in whole pages (a sparse
//! file's holes and a hard link's second name are written back as pages
//! of their own), an inode per entry and the root, and every byte of every
//! name (names are data a bot can carry too). [`FolderImage::read`] keeps,
//! in path order, what fits a `/work` of the quota by that measure, and
//! [`FolderImage::fitted`] trims an image (stored by an older version, or
//! for a quota lowered since) the same way before it is written: a kept
//! folder always fits where it is written, and what does not fit is the
//! bot's loss, never a fault of the server.
//!
//! What is not kept: symbolic links, FIFOs, sockets (skipped), names that
//! are not UTF-8 (skipped), owners, permissions other than the executable
//! bit, and times (every file is new at each match). What it deliberately
//! doesn't do: decide which match comes next (the contest's order does),
//! or store the image (the caller does, in one transaction with the game).
//!
//! The stored form ([`FolderImage::encode`]) is a small binary format of
//! our own, parsed with size caps in linear time ([`FolderImage::decode`]).

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::bot::BotFile;

/// The bytes of one page, the unit in which a tmpfs counts a file's data.
pub const PAGE_BYTES: u64 = 4096;

/// Inodes of a bot's `/work` tmpfs (its `nr_inodes`).
pub const WORK_INODES: usize = 4096;

/// Most entries (files and folders) an image keeps (the bot's `/work`
/// tmpfs has [`WORK_INODES`] inodes; what a bot makes beyond these is not
/// kept): each costs 13 bytes of the stored form whatever it holds.
pub const MAX_ENTRIES: usize = 1024;

/// The most bytes of names (whole relative paths) an image holds: without
/// a cap, 4000 empty files with long names would carry megabytes past a
/// quota of content.
pub const MAX_NAME_BYTES: usize = 8 << 10;
/// Deepest folder nesting kept.
pub const MAX_DEPTH: usize = 32;
/// Longest relative path kept, in bytes.
pub const MAX_PATH: usize = 1024;

const MAGIC: &[u8] = b"KNOBELN folder 1\n";

/// One entry of a kept folder, by its path relative to `/work`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir(String),
    File {
        path: String,
        bytes: Vec<u8>,
        executable: bool,
    },
}

impl Entry {
    pub fn path(&self) -> &str {
        match self {
            Entry::Dir(p) | Entry::File { path: p, .. } => p,
        }
    }
}

/// The contents of a kept working folder, entries sorted by path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FolderImage {
    entries: Vec<Entry>,
}

/// Why a stored image could not be read back (damaged data).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FolderError {
    #[error("not a kept folder (wrong header)")]
    Header,
    #[error("a kept folder ends in the middle of an entry")]
    Truncated,
    #[error("a kept folder is larger than {0} bytes")]
    TooLarge(u64),
    #[error("a kept folder has more than {MAX_ENTRIES} entries")]
    TooManyEntries,
    #[error("a kept folder has bytes after its last entry")]
    Trailing,
    #[error("a kept folder has an entry of unknown kind {0}")]
    Kind(u8),
    #[error("a kept folder has a bad path {0:?}")]
    Path(String),
}

/// What an image costs the tmpfs it is written into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TmpfsCost {
    /// Pages of file data, each file's rounded up.
    pub pages: u64,
    /// Inodes, the folder's root included.
    pub inodes: usize,
    /// Bytes of all relative paths.
    pub name_bytes: usize,
}

impl TmpfsCost {
    /// Whether this fits a `/work` of `work_bytes` (and its inodes and the
    /// cap on names).
    pub fn fits(&self, work_bytes: u64) -> bool {
        self.pages <= work_bytes / PAGE_BYTES
            && self.inodes <= MAX_ENTRIES + 1
            && self.name_bytes <= MAX_NAME_BYTES
    }

    /// The cost with `entry` added.
    fn with(mut self, entry_path: &str, len: Option<u64>) -> TmpfsCost {
        self.pages += len.map_or(0, |l| l.div_ceil(PAGE_BYTES));
        self.inodes += 1;
        self.name_bytes += entry_path.len();
        self
    }
}

/// The largest stored form of an image within a quota of `work_bytes`
/// (its content, every name, every entry's kind and lengths, the header).
pub fn encoded_bound(work_bytes: u64) -> u64 {
    let per_entry = 1 + 4 + 8;
    MAGIC.len() as u64 + 4 + work_bytes + MAX_NAME_BYTES as u64 + MAX_ENTRIES as u64 * per_entry
}

impl FolderImage {
    /// An empty folder (a bot's first match).
    pub fn empty() -> FolderImage {
        FolderImage::default()
    }

    /// An image of `entries` (sorted here; paths are checked when the
    /// image is used).
    pub fn new(mut entries: Vec<Entry>) -> FolderImage {
        entries.sort_by(|a, b| a.path().cmp(b.path()));
        FolderImage { entries }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The bytes of all its files.
    pub fn content_bytes(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| match e {
                Entry::File { bytes, .. } => bytes.len() as u64,
                Entry::Dir(_) => 0,
            })
            .sum()
    }

    /// What the image costs the tmpfs it is written into.
    pub fn cost(&self) -> TmpfsCost {
        self.entries.iter().fold(
            TmpfsCost {
                inodes: 1,
                ..TmpfsCost::default()
            },
            |c, e| match e {
                Entry::Dir(p) => c.with(p, None),
                Entry::File { path, bytes, .. } => c.with(path, Some(bytes.len() as u64)),
            },
        )
    }

    /// What of the image fits a `/work` of `work_bytes`: its entries in
    /// path order, each kept while the whole still fits ([`TmpfsCost`]),
    /// and only inside a folder that was kept.
    pub fn fitted(&self, work_bytes: u64) -> FolderImage {
        if self.cost().fits(work_bytes) {
            return self.clone();
        }
        let mut kept: Vec<Entry> = Vec::new();
        let mut cost = TmpfsCost {
            inodes: 1,
            ..TmpfsCost::default()
        };
        let mut kept_dirs: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for e in &self.entries {
            let parent_kept = e
                .path()
                .rsplit_once('/')
                .is_none_or(|(parent, _)| kept_dirs.contains(parent));
            let len = match e {
                Entry::Dir(_) => None,
                Entry::File { bytes, .. } => Some(bytes.len() as u64),
            };
            let next = cost.with(e.path(), len);
            if parent_kept && next.fits(work_bytes) {
                cost = next;
                if let Entry::Dir(p) = e {
                    kept_dirs.insert(p);
                }
                kept.push(e.clone());
            }
        }
        FolderImage { entries: kept }
    }

    /// Reads the folder `dir` (a directory descriptor of a bot that is
    /// gone: nothing changes it while it is read): in path order, what
    /// fits a `/work` of `work_bytes` as the tmpfs counts it
    /// ([`FolderImage::fitted`]), within [`MAX_DEPTH`] and [`MAX_PATH`];
    /// what lies beyond is not kept (and a file that would not fit is
    /// never read).
    pub fn read(dir: &OwnedFd, work_bytes: u64) -> io::Result<FolderImage> {
        let root = format!("/proc/self/fd/{}", dir.as_raw_fd());
        let mut entries = Vec::new();
        let mut cost = TmpfsCost {
            inodes: 1,
            ..TmpfsCost::default()
        };
        walk(Path::new(&root), "", 0, &mut entries, &mut cost, work_bytes)?;
        Ok(FolderImage::new(entries))
    }

    /// The files to place in the bot's new `/work`.
    pub fn files(&self) -> Vec<BotFile> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::File {
                    path,
                    bytes,
                    executable,
                } => Some(BotFile::new(path.clone(), bytes.clone(), *executable)),
                Entry::Dir(_) => None,
            })
            .collect()
    }

    /// The folders to make in the bot's new `/work` (also the empty ones).
    pub fn dirs(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Dir(p) => Some(p.clone()),
                Entry::File { .. } => None,
            })
            .collect()
    }

    /// The stored form: a header line, the number of entries (4 bytes,
    /// big-endian), then per entry a kind byte (`d` folder, `f` file, `x`
    /// executable file), the path's length (4 bytes) and path, and for a
    /// file its length (8 bytes) and bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAGIC.len() + self.content_bytes() as usize + 64);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.entries.len() as u32).to_be_bytes());
        for e in &self.entries {
            match e {
                Entry::Dir(p) => {
                    out.push(b'd');
                    put_path(&mut out, p);
                }
                Entry::File {
                    path,
                    bytes,
                    executable,
                } => {
                    out.push(if *executable { b'x' } else { b'f' });
                    put_path(&mut out, path);
                    out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
                    out.extend_from_slice(bytes);
                }
            }
        }
        out
    }

    /// Reads a stored form back: at most `max_bytes` of file content,
    /// [`MAX_ENTRIES`] entries, paths as [`FolderImage::read`] keeps them;
    /// one pass.
    pub fn decode(data: &[u8], max_bytes: u64) -> Result<FolderImage, FolderError> {
        let rest = data.strip_prefix(MAGIC).ok_or(FolderError::Header)?;
        let (count, mut rest) = take(rest, 4)?;
        let count = u32::from_be_bytes(count.try_into().expect("4 bytes")) as usize;
        if count > MAX_ENTRIES {
            return Err(FolderError::TooManyEntries);
        }
        let mut entries = Vec::with_capacity(count);
        let mut content = 0u64;
        for _ in 0..count {
            let (&kind, tail) = rest.split_first().ok_or(FolderError::Truncated)?;
            let (path, tail) = take_path(tail)?;
            rest = tail;
            match kind {
                b'd' => entries.push(Entry::Dir(path)),
                b'f' | b'x' => {
                    let (len, tail) = take(rest, 8)?;
                    let len = u64::from_be_bytes(len.try_into().expect("8 bytes"));
                    content = content.saturating_add(len);
                    if content > max_bytes {
                        return Err(FolderError::TooLarge(max_bytes));
                    }
                    let (bytes, tail) = take(tail, len as usize)?;
                    rest = tail;
                    entries.push(Entry::File {
                        path,
                        bytes: bytes.to_vec(),
                        executable: kind == b'x',
                    });
                }
                k => return Err(FolderError::Kind(k)),
            }
        }
        if !rest.is_empty() {
            return Err(FolderError::Trailing);
        }
        Ok(FolderImage::new(entries))
    }
}

fn put_path(out: &mut Vec<u8>, p: &str) {
    out.extend_from_slice(&(p.len() as u32).to_be_bytes());
    out.extend_from_slice(p.as_bytes());
}

fn take(data: &[u8], n: usize) -> Result<(&[u8], &[u8]), FolderError> {
    if data.len() < n {
        return Err(FolderError::Truncated);
    }
    Ok(data.split_at(n))
}

fn take_path(data: &[u8]) -> Result<(String, &[u8]), FolderError> {
    let (len, rest) = take(data, 4)?;
    let len = u32::from_be_bytes(len.try_into().expect("4 bytes")) as usize;
    if len > MAX_PATH {
        return Err(FolderError::Path(format!("({len} bytes)")));
    }
    let (p, rest) = take(rest, len)?;
    let p = String::from_utf8(p.to_vec())
        .map_err(|e| FolderError::Path(String::from_utf8_lossy(e.as_bytes()).into_owned()))?;
    if !good_path(&p) {
        return Err(FolderError::Path(p));
    }
    Ok((p, rest))
}

/// A relative path of plain components (what a folder walk yields).
fn good_path(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= MAX_PATH
        && !p.starts_with('/')
        && !p.contains('\0')
        && p.split('/').count() <= MAX_DEPTH
        && p.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<Entry>,
    cost: &mut TmpfsCost,
    work_bytes: u64,
) -> io::Result<()> {
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    let mut names: Vec<String> = fs::read_dir(dir)?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    // The same folder gives the same image, whatever order the kernel lists.
    names.sort();
    for name in names {
        if out.len() >= MAX_ENTRIES {
            return Ok(());
        }
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if !good_path(&rel) {
            continue;
        }
        let path = dir.join(&name);
        // Not followed: a link the bot made points nowhere of ours.
        let meta = fs::symlink_metadata(&path)?;
        if meta.is_dir() {
            let next = cost.with(&rel, None);
            if next.fits(work_bytes) {
                *cost = next;
                out.push(Entry::Dir(rel.clone()));
                walk(&path, &rel, depth + 1, out, cost, work_bytes)?;
            }
        } else if meta.is_file() {
            // Measured as it will be written back: dense, a copy per name.
            let next = cost.with(&rel, Some(meta.len()));
            if !next.fits(work_bytes) {
                continue;
            }
            let mut bytes = Vec::new();
            // At most what was measured (the bot is gone; the cap is only
            // a guard).
            io::Read::read_to_end(
                &mut io::Read::take(fs::File::open(&path)?, meta.len()),
                &mut bytes,
            )?;
            *cost = cost.with(&rel, Some(bytes.len() as u64));
            out.push(Entry::File {
                path: rel,
                bytes,
                executable: meta.permissions().mode() & 0o100 != 0,
            });
        }
    }
    Ok(())
}

/// On the wire and in records: the stored form, in base64.
impl Serialize for FolderImage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(self.encode()))
    }
}

impl<'de> Deserialize<'de> for FolderImage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FolderImage, D::Error> {
        let s = String::deserialize(d)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s.as_bytes())
            .map_err(serde::de::Error::custom)?;
        FolderImage::decode(&bytes, WIRE_MAX_BYTES).map_err(serde::de::Error::custom)
    }
}

/// The largest image a message may carry (the config's quota is capped
/// below it).
pub const WIRE_MAX_BYTES: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> FolderImage {
        FolderImage::new(vec![
            Entry::File {
                path: "b/notes.txt".into(),
                bytes: b"seen 3\n".to_vec(),
                executable: false,
            },
            Entry::Dir("b".into()),
            Entry::Dir("empty".into()),
            Entry::File {
                path: "run.sh".into(),
                bytes: vec![0, 255, 10],
                executable: true,
            },
        ])
    }

    #[test]
    fn an_image_survives_its_stored_form_and_json() {
        let img = sample();
        assert_eq!(img.entries()[0].path(), "b", "sorted by path");
        let back = FolderImage::decode(&img.encode(), 1 << 20).unwrap();
        assert_eq!(back, img);
        let json = serde_json::to_string(&img).unwrap();
        assert_eq!(serde_json::from_str::<FolderImage>(&json).unwrap(), img);
        assert_eq!(img.dirs(), vec!["b".to_string(), "empty".to_string()]);
        assert_eq!(img.files().len(), 2);
        assert_eq!(img.content_bytes(), 10);
    }

    #[test]
    fn a_damaged_or_hostile_stored_form_is_refused_not_trusted() {
        let good = sample().encode();
        assert_eq!(FolderImage::decode(b"tar\n", 100), Err(FolderError::Header));
        for cut in MAGIC.len() + 1..good.len() {
            assert!(FolderImage::decode(&good[..cut], 1 << 20).is_err(), "{cut}");
        }
        assert_eq!(FolderImage::decode(&good, 5), Err(FolderError::TooLarge(5)));
        let mut longer = good.clone();
        longer.push(b'd');
        assert_eq!(
            FolderImage::decode(&longer, 1 << 20),
            Err(FolderError::Trailing)
        );
        // A length far beyond the data is caught, not allocated.
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&1u32.to_be_bytes());
        huge.push(b'f');
        put_path(&mut huge, "a");
        huge.extend_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(
            FolderImage::decode(&huge, u64::MAX),
            Err(FolderError::Truncated)
        );
        for bad in ["../x", "/etc/passwd", "a//b", "a/./b", ""] {
            let mut v = MAGIC.to_vec();
            v.extend_from_slice(&1u32.to_be_bytes());
            v.push(b'd');
            put_path(&mut v, bad);
            assert!(
                matches!(FolderImage::decode(&v, 100), Err(FolderError::Path(_))),
                "{bad:?}"
            );
        }
    }

    /// Sparse files, hard links and long names are measured as the tmpfs
    /// will hold them when written back: what is kept always fits.
    #[test]
    fn a_folder_is_kept_as_the_tmpfs_will_count_it() {
        let quota = 64 << 10; // 16 pages
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        for i in 0..200 {
            let f = fs::File::create(d.join(format!("sparse{i:03}"))).unwrap();
            f.set_len(1 << 20).unwrap(); // 1 MiB of holes: no page on disk
        }
        fs::write(d.join("one"), "x").unwrap();
        for i in 0..200 {
            fs::hard_link(d.join("one"), d.join(format!("link{i:03}"))).unwrap();
        }
        let fd: OwnedFd = fs::File::open(d).unwrap().into();
        let img = FolderImage::read(&fd, quota).unwrap();
        let cost = img.cost();
        assert!(cost.fits(quota), "{cost:?}");
        // Every hard link is a page of its own once written back.
        assert_eq!(cost.pages, 16, "{cost:?}");
        assert!(img.entries().iter().all(|e| e.path().starts_with("link")));

        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        for i in 0..300 {
            fs::write(d.join(format!("{i:03}{}", "n".repeat(240))), "").unwrap();
        }
        let fd: OwnedFd = fs::File::open(d).unwrap().into();
        let img = FolderImage::read(&fd, quota).unwrap();
        assert!(img.cost().name_bytes <= MAX_NAME_BYTES);
        assert_eq!(img.entries().len(), MAX_NAME_BYTES / 243);
        assert!((img.encode().len() as u64) <= encoded_bound(quota));
    }

    /// An image stored before (or for a larger quota) is trimmed to what
    /// fits, folders before what they hold; one that fits is unchanged.
    #[test]
    fn an_image_is_trimmed_to_what_fits_where_it_is_written() {
        let mut entries = vec![Entry::Dir("d".into())];
        for i in 0..10 {
            entries.push(Entry::File {
                path: format!("d/f{i}"),
                bytes: vec![1; 5000], // two pages each
                executable: false,
            });
        }
        let img = FolderImage::new(entries);
        assert_eq!(img.cost().pages, 20);
        assert_eq!(img.fitted(20 * PAGE_BYTES), img);
        let small = img.fitted(7 * PAGE_BYTES);
        assert_eq!(small.cost().pages, 6);
        assert_eq!(small.entries().len(), 4);
        assert!(small.cost().fits(7 * PAGE_BYTES));
        // Too many entries or names: what is over is left out.
        let many = FolderImage::new(
            (0..MAX_ENTRIES + 10)
                .map(|i| Entry::Dir(format!("{i:05}")))
                .collect(),
        );
        assert_eq!(many.fitted(1 << 20).entries().len(), MAX_ENTRIES);
    }

    /// The stored form of anything within a quota stays within
    /// [`encoded_bound`]: two folders at the workers' quota travel in one
    /// message of the transport.
    #[test]
    fn the_stored_form_has_a_bound_and_two_travel_in_a_message() {
        let q = crate::discipline::MAX_FOLDER_KB_WITH_WORKERS << 10;
        let base64 = |n: u64| n.div_ceil(3) * 4;
        assert!(
            2 * base64(encoded_bound(q)) + (160 << 10)
                <= crate::distributed::wire::MAX_MESSAGE_BYTES as u64,
            "two folders leave less than 160 kB of a message for the rest"
        );
        let worst = FolderImage::new(
            (0..MAX_ENTRIES)
                .map(|i| Entry::File {
                    path: format!("{i:07}"),
                    bytes: vec![],
                    executable: false,
                })
                .collect(),
        )
        .fitted(q);
        assert!((worst.encode().len() as u64) <= encoded_bound(q));
    }

    #[test]
    fn reading_a_folder_keeps_files_and_folders_and_skips_links() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::create_dir_all(d.join("sub/deeper")).unwrap();
        fs::write(d.join("sub/a.txt"), "A").unwrap();
        fs::write(d.join("big"), vec![7u8; 100]).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.join("link")).unwrap();
        let fd: OwnedFd = fs::File::open(d).unwrap().into();
        let img = FolderImage::read(&fd, 1 << 20).unwrap();
        let paths: Vec<&str> = img.entries().iter().map(Entry::path).collect();
        assert_eq!(paths, ["big", "sub", "sub/a.txt", "sub/deeper"]);
        // A quota of one page: `big` and `sub/a.txt` need one each, the
        // first in path order is kept.
        let img = FolderImage::read(&fd, PAGE_BYTES).unwrap();
        let paths: Vec<&str> = img.entries().iter().map(Entry::path).collect();
        assert_eq!(paths, ["big", "sub", "sub/deeper"]);
    }
}
