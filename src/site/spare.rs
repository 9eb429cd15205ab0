//! A page's spare file (the name a page is written under before it takes
//! the page's place), opened so that whoever else can write the site
//! folder (a shared web root) cannot make the server write elsewhere or
//! wait: never through a symbolic link, never on a FIFO. It does not
//! write, rename or decide names: its callers do (`site::Writer`, the bot
//! contests' pages). The bot contests' folders (`game/`, …) are held open
//! here too ([`HeldFolder`]), so that a link put at a folder's name never
//! leads a page or a removal elsewhere.

use std::path::Path;

/// A page's spare at `path` opened to be written over (made if missing),
/// never through a symbolic link and never waiting on a FIFO: anything but
/// a file at the spare's name (a link planted to make the page's bytes go
/// over a file elsewhere) is removed, and the spare made new.
pub(super) fn open_spare(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = |new: bool| {
        let mut o = std::fs::OpenOptions::new();
        o.write(true);
        if new {
            o.create_new(true);
        } else {
            o.create(true).truncate(false);
        }
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
    };
    match open(false) {
        Ok(f) if f.metadata().is_ok_and(|m| m.is_file()) => Ok(f),
        _ => {
            let _ = std::fs::remove_file(path);
            open(true)
        }
    }
}

/// A page's spare `name` in the folder `dir` held open, opened as
/// [`open_spare`] opens one at a path (never through a symbolic link,
/// never waiting on a FIFO; anything but a file there removed and the
/// spare made new), relative to the folder; with the spare's length
/// before it is written over (from the same `fstat` that saw it is a
/// file).
pub(super) fn open_spare_at(
    dir: &std::os::fd::OwnedFd,
    name: &str,
) -> std::io::Result<(std::fs::File, u64)> {
    use rustix::fs::{fstat, openat, unlinkat, AtFlags, FileType, Mode, OFlags};
    let open = |new: bool| {
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC
            | if new { OFlags::EXCL } else { OFlags::empty() };
        openat(dir, name, flags, Mode::from_raw_mode(0o666))
    };
    if let Ok(fd) = open(false) {
        if let Ok(st) = fstat(&fd) {
            if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile {
                return Ok((std::fs::File::from(fd), st.st_size as u64));
            }
        }
    }
    let _ = unlinkat(dir, name, AtFlags::empty());
    Ok((std::fs::File::from(open(true)?), 0))
}

/// A folder of the site (the bot contests' `game/`, `pairing/`, …) held
/// open for a write of the site: made if missing, opened never through a
/// symbolic link (a link, or anything but a folder, at its name is removed
/// and the folder made), and reached afterwards only through its
/// descriptor ([`HeldFolder::path`], `/proc/self/fd/N`). Whoever else can
/// write the site folder may put a link at the folder's name at any time:
/// the pages written and the files removed stay in the folder held.
pub(super) struct HeldFolder {
    _fd: std::os::fd::OwnedFd,
    path: std::path::PathBuf,
}

impl HeldFolder {
    pub(super) fn open(path: &Path) -> std::io::Result<HeldFolder> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(path)
        };
        let folder = match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => open()?,
            Ok(_) => {
                std::fs::remove_file(path)?;
                std::fs::create_dir(path)?;
                open()?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(path)?;
                open()?
            }
            Err(e) => return Err(e),
        };
        let fd = std::os::fd::OwnedFd::from(folder);
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd()).into();
        Ok(HeldFolder { _fd: fd, path })
    }

    /// The folder held, as paths reach it whatever is at its name now.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}
