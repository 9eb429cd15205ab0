//! A page's spare file (the name a page is written under before it takes
//! the page's place), opened so that whoever else can write the site
//! folder (a shared web root) cannot make the server write elsewhere or
//! wait: never through a symbolic link, never on a FIFO. It does not
//! write, rename or decide names: its callers do (`site::Writer`, the bot
//! contests' pages).

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
