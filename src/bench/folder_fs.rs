//! Which file system holds a benchmark's folder, and whether making a file
//! there costs a search whose length depends on what was removed nearby
//! before the run ([`FolderFs::of`]): ext4 without a journal does. At each
//! file made it walks past the inodes of the block group freed in the
//! last minute (six while that inode table block is unwritten) that it
//! meets before a usable one (the kernel's `recently_deleted`,
//! `fs/ext4/ialloc.c`); with a journal, or on
//! tmpfs, it makes no such search. `bench scale` (its folder and the
//! module spill's) and `bench bot-site` (its site's) print the verdict
//! with the folder's path beside the site's figures ([`BenchFolder`]), so
//! that two runs are compared knowing it (`docs/src/figures.md`, "A new
//! machine").
//!
//! Deliberately not here: choosing another folder, or waiting for the
//! removals to age (the organizer's `TMPDIR` decides where a bench runs),
//! and any check at a server's start (the deploy guide advises instead).

use std::path::{Path, PathBuf};

/// ext2, ext3 and ext4 share the magic number; the ext4 driver mounts all
/// three, and lists each in `/proc/fs/ext4`.
const EXT_SUPER_MAGIC: u64 = 0xEF53;
const TMPFS_MAGIC: u64 = 0x0102_1994;

/// Whether an ext4 file system keeps a journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Journal {
    /// The kernel runs a journal for it (`/proc/fs/jbd2/<device>-…`).
    Kept,
    /// None: each file made searches past the inodes freed recently.
    Absent,
}

/// The file system of a folder, as far as it matters to the figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderFs {
    Ext4 {
        device: String,
        journal: Journal,
    },
    Tmpfs,
    /// Another file system, by its `statfs` magic number.
    Other {
        magic: u64,
    },
    /// The folder's file system could not be told (what failed, for the
    /// line printed).
    Unknown {
        why: String,
    },
}

impl FolderFs {
    /// The file system of `folder`: `statfs` for its kind, its device's
    /// name from `/sys/dev/block`, and the kernel's lists of mounted ext4
    /// file systems and running journals under `/proc/fs`.
    pub fn of(folder: &Path) -> FolderFs {
        let magic = match rustix::fs::statfs(folder) {
            #[allow(clippy::unnecessary_cast)] // i64 or u32 by the target
            Ok(s) => s.f_type as u64,
            Err(e) => {
                return FolderFs::Unknown {
                    why: format!("statfs: {e}"),
                }
            }
        };
        let device = rustix::fs::stat(folder).ok().and_then(|st| {
            let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
            let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
            Some(link.file_name()?.to_string_lossy().into_owned())
        });
        let names = |dir: &str| -> Vec<String> {
            std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        // The kernel's own word where it gives one: `journal_task` reads
        // `<none>` exactly when the file system runs no journal (the
        // pointer `find_inode_bit` checks); the names in /proc/fs/jbd2
        // are the fallback where it is missing.
        let journal_task = device
            .as_deref()
            .and_then(|d| std::fs::read_to_string(format!("/sys/fs/ext4/{d}/journal_task")).ok());
        classify(
            magic,
            device.as_deref(),
            &names("/proc/fs/ext4"),
            journal_task.as_deref(),
            &names("/proc/fs/jbd2"),
        )
    }

    /// A line's worth for `bench scale`: what the file system is, and
    /// what it means for the figures of the files made there.
    pub fn sentence(&self) -> String {
        match self {
            FolderFs::Ext4 {
                device,
                journal: Journal::Absent,
            } => format!(
                "ext4 without a journal ({device}): each file made there first walks past the \
                 inodes removed nearby in the last minutes, so the figures of what is written \
                 there depend on what was removed before or during this run (with a journal the kernel makes no such search: fs/ext4/ialloc.c, \
                 find_inode_bit; docs/src/figures.md, \"A new machine\")"
            ),
            FolderFs::Ext4 {
                device,
                journal: Journal::Kept,
            } => format!(
                "ext4 with a journal ({device}): files are made without a search past recent \
                 removals"
            ),
            FolderFs::Tmpfs => "tmpfs (memory): files are made without a search past recent \
                                removals, and cost no disk"
                .to_string(),
            FolderFs::Other { magic } => format!(
                "another file system (statfs magic {magic:#x}): its cost of making a file is \
                 not known here"
            ),
            FolderFs::Unknown { why } => format!("not known ({why})"),
        }
    }
}

/// A folder a bench writes in, with its file system: the line it prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchFolder {
    pub path: PathBuf,
    pub fs: FolderFs,
}

impl BenchFolder {
    /// `path` and its file system ([`FolderFs::of`]).
    pub fn of(path: &Path) -> BenchFolder {
        BenchFolder {
            path: path.to_path_buf(),
            fs: FolderFs::of(path),
        }
    }

    /// The line a bench prints of it: `the file system of <what> (<path>):
    /// <sentence>`.
    pub fn line(&self, what: &str) -> String {
        format!(
            "the file system of {what} ({}): {}",
            self.path.display(),
            self.fs.sentence()
        )
    }
}

/// The verdict from what the kernel said: the folder's `statfs` magic, its
/// device's name, the names in `/proc/fs/ext4` (one a mounted ext2/3/4
/// device), its `/sys/fs/ext4/<device>/journal_task` where the kernel
/// has it (`<none>` without a journal, else the journal thread's id), and
/// else the names in `/proc/fs/jbd2` (one a running journal: named
/// `<device>-<inode>` when it is a file of the file system on `<device>`,
/// by its own device's name alone when it is on another device).
fn classify(
    magic: u64,
    device: Option<&str>,
    ext4_devices: &[String],
    journal_task: Option<&str>,
    journals: &[String],
) -> FolderFs {
    match magic {
        TMPFS_MAGIC => FolderFs::Tmpfs,
        EXT_SUPER_MAGIC => match device {
            Some(device) if ext4_devices.iter().any(|d| d == device) && journal_task.is_some() => {
                let journal = match journal_task.map(str::trim) {
                    Some("<none>") => Journal::Absent,
                    _ => Journal::Kept,
                };
                FolderFs::Ext4 {
                    device: device.to_string(),
                    journal,
                }
            }
            Some(device) if ext4_devices.iter().any(|d| d == device) => {
                // A journal in the file system is listed as
                // `<device>-<its inode>`; one on a device of its own by
                // that device's name alone, which does not say whose it is.
                let journal_of = |j: &str, d: &str| {
                    j.strip_prefix(d)
                        .and_then(|rest| rest.strip_prefix('-'))
                        .is_some_and(|ino| {
                            !ino.is_empty() && ino.bytes().all(|b| b.is_ascii_digit())
                        })
                };
                let own = |j: &String| journal_of(j, device);
                // Not `<an ext4 device>-<inode>`: a journal device's name
                // (`dm-3` has a dash and a number too).
                let external = |j: &String| !ext4_devices.iter().any(|d| journal_of(j, d));
                if journals.iter().any(own) {
                    FolderFs::Ext4 {
                        device: device.to_string(),
                        journal: Journal::Kept,
                    }
                } else if let Some(j) = journals.iter().find(|j| external(j)) {
                    FolderFs::Unknown {
                        why: format!(
                            "ext4 on {device}, whose journal, if any, is on another device \
                             ({j} keeps one whose file system /proc/fs/jbd2 does not name)"
                        ),
                    }
                } else {
                    FolderFs::Ext4 {
                        device: device.to_string(),
                        journal: Journal::Absent,
                    }
                }
            }
            Some(device) => FolderFs::Unknown {
                why: format!("an ext file system on {device}, not listed in /proc/fs/ext4"),
            },
            None => FolderFs::Unknown {
                why: "an ext file system whose device has no name in /sys/dev/block".to_string(),
            },
        },
        magic => FolderFs::Other { magic },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_ext4_device_without_a_running_journal_is_told_apart_from_one_with() {
        let ext4 = names(&["vda", "vdb", "vda1"]);
        // vdb's journal is running; a journal named for a device whose
        // name only begins like vda's ("vda1-8") is not vda's.
        let journals = names(&["vdb-8", "vda1-8"]);
        assert_eq!(
            classify(EXT_SUPER_MAGIC, Some("vda"), &ext4, None, &journals),
            FolderFs::Ext4 {
                device: "vda".into(),
                journal: Journal::Absent
            }
        );
        assert_eq!(
            classify(EXT_SUPER_MAGIC, Some("vdb"), &ext4, None, &journals),
            FolderFs::Ext4 {
                device: "vdb".into(),
                journal: Journal::Kept
            }
        );
        // A journal on a device of its own is listed by that device's
        // name alone: it may be vda's, so vda's journal is not told.
        assert!(matches!(
            classify(
                EXT_SUPER_MAGIC,
                Some("vda"),
                &ext4,
                None,
                &names(&["vdb-8", "sdc1"])
            ),
            FolderFs::Unknown { .. }
        ));
        // A device mapper's name has a dash and a number, and is no inode.
        assert!(matches!(
            classify(EXT_SUPER_MAGIC, Some("vda"), &ext4, None, &names(&["dm-3"])),
            FolderFs::Unknown { .. }
        ));
        // vdb's own journal is told whatever else runs.
        assert_eq!(
            classify(
                EXT_SUPER_MAGIC,
                Some("vdb"),
                &ext4,
                None,
                &names(&["sdc1", "vdb-8"])
            ),
            FolderFs::Ext4 {
                device: "vdb".into(),
                journal: Journal::Kept
            }
        );
    }

    #[test]
    fn where_the_kernel_says_it_journal_task_decides() {
        let ext4 = names(&["vda"]);
        assert_eq!(
            classify(
                EXT_SUPER_MAGIC,
                Some("vda"),
                &ext4,
                Some("<none>\n"),
                &names(&["dm-3"])
            ),
            FolderFs::Ext4 {
                device: "vda".into(),
                journal: Journal::Absent
            }
        );
        assert_eq!(
            classify(EXT_SUPER_MAGIC, Some("vda"), &ext4, Some("812\n"), &[]),
            FolderFs::Ext4 {
                device: "vda".into(),
                journal: Journal::Kept
            }
        );
    }

    #[test]
    fn what_the_kernel_does_not_say_is_not_guessed() {
        let ext4 = names(&["vda"]);
        assert_eq!(
            classify(TMPFS_MAGIC, None, &ext4, None, &[]),
            FolderFs::Tmpfs
        );
        assert_eq!(
            classify(0x9123_683e, Some("vda"), &ext4, None, &[]),
            FolderFs::Other { magic: 0x9123_683e }
        );
        assert!(matches!(
            classify(EXT_SUPER_MAGIC, Some("sdz"), &ext4, None, &[]),
            FolderFs::Unknown { .. }
        ));
        assert!(matches!(
            classify(EXT_SUPER_MAGIC, None, &ext4, None, &[]),
            FolderFs::Unknown { .. }
        ));
    }

    #[test]
    fn a_folder_in_shared_memory_is_tmpfs_and_each_verdict_reads_as_a_sentence() {
        // /dev/shm is tmpfs on every machine of this kind (the test
        // command's machine included); the verdict comes from the kernel.
        assert_eq!(FolderFs::of(Path::new("/dev/shm")), FolderFs::Tmpfs);
        let missing = FolderFs::of(Path::new("/no/such/folder/here"));
        assert!(matches!(missing, FolderFs::Unknown { .. }), "{missing:?}");
        for fs in [
            FolderFs::Ext4 {
                device: "vda".into(),
                journal: Journal::Absent,
            },
            FolderFs::Ext4 {
                device: "vda".into(),
                journal: Journal::Kept,
            },
            FolderFs::Tmpfs,
            FolderFs::Other { magic: 1 },
            missing,
        ] {
            let s = fs.sentence();
            assert!(!s.is_empty() && !s.ends_with('.'), "{s}");
        }
        assert!(FolderFs::Ext4 {
            device: "vda".into(),
            journal: Journal::Absent
        }
        .sentence()
        .contains("without a journal (vda)"));
    }
}
