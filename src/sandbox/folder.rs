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

/// Most entries (files and folders) an image holds: the bot's `/work`
/// tmpfs has 4096 inodes, its root one of them.
pub const MAX_ENTRIES: usize = 4096;
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

    /// Reads the folder `dir` (a directory descriptor of a bot that is
    /// gone: nothing changes it while it is read). At most `max_bytes` of
    /// file content (the tmpfs's size bounds it already), [`MAX_ENTRIES`],
    /// [`MAX_DEPTH`] and [`MAX_PATH`]; what lies beyond is not kept.
    pub fn read(dir: &OwnedFd, max_bytes: u64) -> io::Result<FolderImage> {
        let root = format!("/proc/self/fd/{}", dir.as_raw_fd());
        let mut entries = Vec::new();
        let mut budget = max_bytes;
        walk(Path::new(&root), "", 0, &mut entries, &mut budget)?;
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
    budget: &mut u64,
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
            out.push(Entry::Dir(rel.clone()));
            walk(&path, &rel, depth + 1, out, budget)?;
        } else if meta.is_file() && meta.len() <= *budget {
            let bytes = fs::read(&path)?;
            *budget -= bytes.len() as u64;
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
        // A budget smaller than a file leaves that file out.
        let img = FolderImage::read(&fd, 10).unwrap();
        let paths: Vec<&str> = img.entries().iter().map(Entry::path).collect();
        assert_eq!(paths, ["sub", "sub/a.txt", "sub/deeper"]);
    }
}
