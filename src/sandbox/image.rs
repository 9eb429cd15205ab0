//! The runtime image: the files a bot's runtime reads, served from memory.
//!
//! A bot that saw the host's `/usr` could time its first read of a file
//! and learn whether another program read it lately (the page cache is the
//! machine's): which language its opponent uses, or a bit sent by a
//! colluding bot in another match. And every file of the host it could
//! `statfs` told it the host's disk and its free space. So a match shows
//! bots no file of the host's disks: its `/usr` (and the top-level folders
//! that are folders on the host, the language's extra read-only paths and
//! the four devices) come from one tmpfs, the image, mounted by the server
//! at [`IMAGE_DIR`] and shared by every server of the machine. A tmpfs
//! page is in memory from the moment it is written (the machines this
//! server runs on have no swap; the book (docs/src/participant/bots.md) says what swap would change),
//! so a first read costs what every read costs: there is nothing to warm
//! and nothing to evict. Its figures (`statfs`) are the image's own.
//!
//! What goes in ([`RuntimeImage::ensure`]): the paths a language names
//! (its `run_files`, e.g. the Python standard library or the JVM's `lib`,
//! and its `paths`), the program a run command starts, the interpreter a
//! script names, and for every ELF file among them (a bot's own native
//! program included) the loader and the shared libraries it needs,
//! transitively, found where the bot's loader looks for them. Symbolic
//! links are copied as links, with what they point to. A file changed on
//! the host since it was copied (a package upgrade) is copied again;
//! nothing is ever removed while servers may run bots from it.
//!
//! Only a server running as root can mount it; otherwise bots see the
//! host's `/usr` as before, and the start-up log says so.
//!
//! Deliberately not here: which files a language needs (the language
//! table says so, [`crate::lang`]), and how a bot's root is built
//! ([`super::bot`]).

use std::collections::HashSet;
use std::ffi::CString;
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where the image is mounted.
pub const IMAGE_DIR: &str = "/run/knobeln/runtime";

/// The devices a bot gets, made in the image's `dev` folder.
pub const DEVICES: [&str; 4] = ["null", "zero", "random", "urandom"];

/// The most the image's tmpfs may hold: far above what the built-in
/// languages need (about 250 MB with Java and Python), a bound all the
/// same. Pages are used only as files are written.
const IMAGE_BYTES: u64 = 4 << 30;
const IMAGE_INODES: u64 = 1 << 18;

/// Symbolic links followed in a row at most (the kernel's own limit).
const MAX_LINKS: u32 = 40;

/// Whether this process may add to the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageAccess {
    /// As root: it mounts the image and copies in what is missing.
    Fills,
    /// Not root: it uses an image that root mounted and filled
    /// (`knobeln languages --fill-runtime-image`), and only where it holds
    /// everything a bot needs.
    ReadsOnly,
}

/// The image of this machine, mounted and shared by its servers.
#[derive(Debug)]
pub struct RuntimeImage {
    root: PathBuf,
    access: ImageAccess,
    /// Host paths and library names this process has put in (or found in)
    /// the image already: a later match asks only for what is new.
    known: Mutex<HashSet<PathBuf>>,
}

static IMAGE: OnceLock<Result<RuntimeImage, String>> = OnceLock::new();

/// The runtime image, mounted at the first call; `Err` says why bots see
/// the host's `/usr` instead (logged once).
pub fn runtime_image() -> Result<&'static RuntimeImage, &'static str> {
    IMAGE
        .get_or_init(|| {
            let made = RuntimeImage::mount(Path::new(IMAGE_DIR));
            match &made {
                Ok(i) if i.access == ImageAccess::ReadsOnly => eprintln!(
                    "knobeln: bot sandbox: runtime files served from memory ({IMAGE_DIR}, \
                     filled by root; a bot that needs a file not in it reads the host's /usr)"
                ),
                Ok(_) => eprintln!(
                    "knobeln: bot sandbox: runtime files served from memory ({IMAGE_DIR})"
                ),
                Err(why) => eprintln!(
                    "knobeln: bot sandbox: bots read the host's /usr ({why}): the \
                     timing of a first read tells a bot what other programs read \
                     lately; run the server as root to serve them from memory"
                ),
            }
            made
        })
        .as_ref()
        .map_err(String::as_str)
}

/// Holds an exclusive lock on `IMAGE_DIR.lock` while it lives.
struct ImageLock(fs::File);

impl ImageLock {
    fn take(root: &Path) -> io::Result<ImageLock> {
        let f = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(root.with_extension("lock"))?;
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive)?;
        Ok(ImageLock(f))
    }
}

impl Drop for ImageLock {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(&self.0, rustix::fs::FlockOperation::Unlock);
    }
}

impl RuntimeImage {
    /// Mounts the image at `root` (or finds it mounted by another server)
    /// and makes its devices.
    fn mount(root: &Path) -> Result<RuntimeImage, String> {
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } != 0 {
            return match is_mount_point(root) {
                Ok(true) if root.join("dev/null").exists() => Ok(RuntimeImage {
                    root: root.to_path_buf(),
                    access: ImageAccess::ReadsOnly,
                    known: Mutex::new(HashSet::new()),
                }),
                _ => Err(format!(
                    "the server does not run as root, and root has not filled {} \
                     (knobeln languages --fill-runtime-image)",
                    root.display()
                )),
            };
        }
        let fail = |what: &str, e: io::Error| format!("{what} {}: {e}", root.display());
        fs::create_dir_all(root).map_err(|e| fail("cannot make", e))?;
        // Readable by a server running as its own user whatever the umask
        // of the root process that made them (a unit's `UMask=0027`).
        for dir in [root.parent(), Some(root)].into_iter().flatten() {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o755))
                .map_err(|e| fail("cannot open up", e))?;
        }
        let _lock = ImageLock::take(root).map_err(|e| fail("cannot lock", e))?;
        if !is_mount_point(root).map_err(|e| fail("cannot read", e))? {
            let c = |s: &str| CString::new(s).expect("no NUL");
            let target = CString::new(root.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
            let opts = c(&format!(
                "mode=0755,size={IMAGE_BYTES},nr_inodes={IMAGE_INODES}"
            ));
            // SAFETY: valid C strings.
            let r = unsafe {
                libc::mount(
                    c("knobeln-runtime").as_ptr(),
                    target.as_ptr(),
                    c("tmpfs").as_ptr(),
                    libc::MS_NOSUID,
                    opts.as_ptr().cast(),
                )
            };
            if r != 0 {
                return Err(fail("cannot mount a tmpfs at", io::Error::last_os_error()));
            }
        }
        let dev = root.join("dev");
        fs::create_dir_all(&dev).map_err(|e| fail("cannot make dev in", e))?;
        for name in DEVICES {
            make_device(&Path::new("/dev").join(name), &dev.join(name))
                .map_err(|e| fail(&format!("cannot make dev/{name} in"), e))?;
        }
        Ok(RuntimeImage {
            root: root.to_path_buf(),
            access: ImageAccess::Fills,
            known: Mutex::new(HashSet::new()),
        })
    }

    /// Whether this process fills the image or only reads it.
    pub fn access(&self) -> ImageAccess {
        self.access
    }

    /// The image's folder: what bots see as `/` is taken from here.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where a host path is in the image.
    pub fn path_of(&self, host: &Path) -> PathBuf {
        self.root.join(host.strip_prefix("/").unwrap_or(host))
    }

    /// Makes sure the image holds `paths` (files or whole folders) and the
    /// libraries the native `programs` (a bot's own files) need, each with
    /// its links and libraries. Cheap when nothing is new. An image this
    /// process only reads is checked instead: `NotFound` names the first
    /// file it lacks (or holds in an older version than the host's).
    ///
    /// `paths` are the language table's (the organizer's word); what a
    /// bot's own program names (its loader, its libraries: a participant
    /// can set `.interp` from C) is taken only when it is a regular file
    /// directly in a folder the loader searches ([`admissible_library`]),
    /// so a program naming `/`, `/etc/shadow` or `../..` makes the server
    /// copy nothing, and what bots can add to the image is bounded by the
    /// shared libraries of the machine. Copying one of those may fail
    /// quietly: the loader then says what is missing, the bot's failure.
    pub fn ensure(&self, paths: &[PathBuf], programs: &[&[u8]]) -> io::Result<()> {
        let mut from_programs: Vec<PathBuf> = programs
            .iter()
            .flat_map(|p| program_needs(p, None))
            .collect();
        let mut wanted: Vec<PathBuf> = paths.to_vec();
        {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            wanted.retain(|p| !known.contains(p));
            from_programs.retain(|p| !known.contains(p));
        }
        // Checked only when new: a match of a known program costs no
        // file system look here.
        from_programs.retain(|n| admissible_library(n));
        if wanted.is_empty() && from_programs.is_empty() {
            return Ok(());
        }
        let _lock = match self.access {
            ImageAccess::Fills => Some(ImageLock::take(&self.root)?),
            ImageAccess::ReadsOnly => None,
        };
        let mut copier = Copier {
            image: self,
            seen: HashSet::new(),
        };
        for p in &wanted {
            copier.add(p, 0)?;
        }
        let mut copied = Vec::new();
        for p in from_programs {
            if copier.add(&p, 0).is_ok() {
                copied.push(p);
            }
        }
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.extend(wanted);
        known.extend(copied);
        Ok(())
    }
}

/// One pass of [`RuntimeImage::ensure`].
struct Copier<'a> {
    image: &'a RuntimeImage,
    seen: HashSet<PathBuf>,
}

impl Copier<'_> {
    /// Puts host path `host` into the image: its folders, the links on the
    /// way (and their targets), and the file, or the whole folder.
    fn add(&mut self, host: &Path, links: u32) -> io::Result<()> {
        if links > MAX_LINKS || !host.is_absolute() || !self.seen.insert(host.to_path_buf()) {
            return Ok(());
        }
        let mut so_far = PathBuf::from("/");
        let comps: Vec<Component> = host.components().skip(1).collect();
        for (i, comp) in comps.iter().enumerate() {
            let Component::Normal(name) = comp else {
                // `..` or `.`: resolved by the kernel on the host instead.
                return match host.canonicalize() {
                    Ok(real) if real != host => self.add(&real, links + 1),
                    _ => Ok(()),
                };
            };
            so_far.push(name);
            let Ok(meta) = fs::symlink_metadata(&so_far) else {
                return Ok(()); // not on the host: nothing to copy
            };
            let last = i + 1 == comps.len();
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&so_far)?;
                self.put_link(&so_far, &target)?;
                let mut resolved = so_far.parent().unwrap_or(Path::new("/")).join(&target);
                for rest in &comps[i + 1..] {
                    resolved.push(rest);
                }
                return self.add(&normalize(&resolved), links + 1);
            }
            if meta.is_dir() {
                self.put_dir(&so_far, &meta)?;
                if last {
                    return self.add_tree(&so_far, links);
                }
            } else if last && meta.is_file() {
                return self.put_file(&so_far, &meta, links);
            }
        }
        Ok(())
    }

    fn add_tree(&mut self, dir: &Path, links: u32) -> io::Result<()> {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            self.add(&e, links)?;
        }
        Ok(())
    }

    /// In an image this process only reads: `NotFound` for `host`.
    fn missing(&self, host: &Path) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} is not in the runtime image", host.display()),
        ))
    }

    fn put_dir(&self, host: &Path, meta: &fs::Metadata) -> io::Result<()> {
        let at = self.image.path_of(host);
        if self.image.access == ImageAccess::ReadsOnly {
            return if at.is_dir() {
                Ok(())
            } else {
                self.missing(host)
            };
        }
        match fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => {
                fs::remove_file(&at)?;
                self.put_dir(host, meta)
            }
            Err(_) => {
                fs::create_dir(&at)?;
                fs::set_permissions(&at, fs::Permissions::from_mode(meta.mode() & 0o755))
            }
        }
    }

    fn put_link(&self, host: &Path, target: &Path) -> io::Result<()> {
        let at = self.image.path_of(host);
        if fs::read_link(&at).is_ok_and(|t| t == target) {
            return Ok(());
        }
        if self.image.access == ImageAccess::ReadsOnly {
            return self.missing(host);
        }
        let tmp = temp_name(&at);
        let _ = fs::remove_file(&tmp);
        std::os::unix::fs::symlink(target, &tmp)?;
        fs::rename(&tmp, &at)
    }

    /// Copies a file unless the image has it with the host's size and
    /// time; then the libraries an ELF file needs, or a script's
    /// interpreter.
    fn put_file(&mut self, host: &Path, meta: &fs::Metadata, links: u32) -> io::Result<()> {
        let at = self.image.path_of(host);
        let same = fs::metadata(&at).is_ok_and(|m| {
            m.len() == meta.len()
                && m.mtime() == meta.mtime()
                && m.mtime_nsec() == meta.mtime_nsec()
        });
        if !same && self.image.access == ImageAccess::ReadsOnly {
            return self.missing(host);
        }
        if !same {
            let tmp = temp_name(&at);
            let copied = (|| {
                fs::copy(host, &tmp)?;
                fs::set_permissions(&tmp, fs::Permissions::from_mode(meta.mode() & 0o755))?;
                let times = fs::FileTimes::new().set_modified(meta.modified()?);
                fs::File::options()
                    .write(true)
                    .open(&tmp)?
                    .set_times(times)?;
                fs::rename(&tmp, &at)
            })();
            if copied.is_err() {
                let _ = fs::remove_file(&tmp);
            }
            copied?;
        }
        let mut head = [0u8; 256];
        let n = fs::File::open(host)?.read(&mut head)?;
        let head = &head[..n];
        if head.starts_with(b"\x7fELF") {
            let bytes = fs::read(host)?;
            for need in program_needs(&bytes, host.parent()) {
                self.add(&need, links + 1)?;
            }
        } else if let Some(interp) = interpreter(head) {
            self.add(&interp, links + 1)?;
        }
        Ok(())
    }
}

/// `at` with a name beside it for writing before the rename (random: no
/// server's process id shows in a bot's `/usr`).
fn temp_name(at: &Path) -> PathBuf {
    let mut raw = [0u8; 8];
    let _ = getrandom::fill(&mut raw);
    let mut name = at.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".knobeln-{:016x}", u64::from_le_bytes(raw)));
    at.with_file_name(name)
}

/// `.` and `..` resolved by name (after a link's target was joined).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// The interpreter a script's `#!` line names (an absolute path).
fn interpreter(head: &[u8]) -> Option<PathBuf> {
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n')?];
    let text = std::str::from_utf8(line).ok()?;
    let prog = text.split_whitespace().next()?;
    prog.starts_with('/').then(|| PathBuf::from(prog))
}

/// The folders the bot's loader searches (it has no `ld.so.cache`).
fn library_dirs() -> Vec<PathBuf> {
    let triple = format!("{}-linux-gnu", std::env::consts::ARCH);
    [
        format!("/lib/{triple}"),
        format!("/usr/lib/{triple}"),
        "/lib64".into(),
        "/usr/lib64".into(),
        "/lib".into(),
        "/usr/lib".into(),
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// Whether a path a bot's own program names (its `.interp`, a
/// `DT_NEEDED` with a `/`, or a library found by name) may go into the
/// image: an absolute path without `.` or `..` that is, links followed, a
/// regular file directly in one of the loader's folders.
pub fn admissible_library(path: &Path) -> bool {
    if !path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, Component::CurDir | Component::ParentDir))
    {
        return false;
    }
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    if !fs::metadata(&real).is_ok_and(|m| m.is_file()) || !is_shared_object(&real) {
        return false;
    }
    let Some(parent) = real.parent() else {
        return false;
    };
    library_dirs()
        .iter()
        .filter_map(|d| d.canonicalize().ok())
        .any(|d| d == parent)
}

/// Whether the file is a 64-bit ELF shared object (a library, or the
/// loader itself): `ET_DYN` in its header.
fn is_shared_object(path: &Path) -> bool {
    let mut head = [0u8; 18];
    let Ok(mut f) = fs::File::open(path) else {
        return false;
    };
    if f.read_exact(&mut head).is_err() || !head.starts_with(b"\x7fELF\x02") {
        return false;
    }
    let e_type = match head[5] {
        1 => u16::from_le_bytes([head[16], head[17]]),
        _ => u16::from_be_bytes([head[16], head[17]]),
    };
    e_type == object::elf::ET_DYN
}

/// Where the bot's loader finds shared library `name` on this machine.
pub fn find_library(name: &str) -> Option<PathBuf> {
    library_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.exists())
}

/// The host files an ELF file needs to run: its loader and the shared
/// libraries it names, found in its run paths (`$ORIGIN` is `origin`)
/// and then where the loader looks. Not an ELF file, or a damaged one:
/// nothing (the loader will say what is missing).
pub fn program_needs(bytes: &[u8], origin: Option<&Path>) -> Vec<PathBuf> {
    let Some(elf) = ElfNeeds::parse(bytes) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = elf.interp.into_iter().map(PathBuf::from).collect();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for rp in &elf.run_paths {
        for d in rp.split(':').filter(|d| !d.is_empty()) {
            let d = match origin {
                Some(o) => d.replace("$ORIGIN", &o.to_string_lossy()),
                None if d.contains("$ORIGIN") => continue,
                None => d.to_string(),
            };
            dirs.push(normalize(Path::new(&d)));
        }
    }
    dirs.extend(library_dirs());
    for name in &elf.needed {
        if name.contains('/') {
            out.push(PathBuf::from(name));
            continue;
        }
        if let Some(found) = dirs.iter().map(|d| d.join(name)).find(|p| p.exists()) {
            out.push(found);
        }
    }
    out
}

/// What the loader reads of an ELF file.
#[derive(Debug, Default, PartialEq, Eq)]
struct ElfNeeds {
    interp: Option<String>,
    needed: Vec<String>,
    run_paths: Vec<String>,
}

impl ElfNeeds {
    /// Read as the loader reads it: the `PT_INTERP` and `PT_DYNAMIC`
    /// segments, the string table found by `DT_STRTAB`'s address in the
    /// loaded segments (never the section headers, which the loader does
    /// not read and a program can fill with anything).
    fn parse(bytes: &[u8]) -> Option<ElfNeeds> {
        use object::elf::{
            FileHeader64, DT_NEEDED, DT_RPATH, DT_RUNPATH, DT_STRSZ, DT_STRTAB, PT_LOAD,
        };
        use object::read::elf::{Dyn, FileHeader, ProgramHeader};
        let header = FileHeader64::<object::Endianness>::parse(bytes).ok()?;
        let endian = header.endian().ok()?;
        let segments = header.program_headers(endian, bytes).ok()?;
        let mut out = ElfNeeds::default();
        let mut dynamic = None;
        for ph in segments {
            if let Ok(Some(i)) = ph.interpreter(endian, bytes) {
                out.interp = Some(String::from_utf8_lossy(i).into_owned());
            }
            if let Ok(Some(d)) = ph.dynamic(endian, bytes) {
                dynamic.get_or_insert(d);
            }
        }
        let Some(dynamic) = dynamic else {
            return Some(out);
        };
        let value = |tag: u32| -> Option<u64> {
            dynamic
                .iter()
                .find(|d| d.tag32(endian) == Some(tag))
                .map(|d| d.d_val(endian))
        };
        let (Some(strtab), Some(strsz)) = (value(DT_STRTAB), value(DT_STRSZ)) else {
            return Some(out);
        };
        // The string table's place in the file, from the loaded segments.
        let offset = segments.iter().find_map(|ph| {
            let vaddr: u64 = ph.p_vaddr(endian);
            let filesz: u64 = ph.p_filesz(endian);
            (ph.p_type(endian) == PT_LOAD && strtab >= vaddr && strtab - vaddr < filesz)
                .then(|| ph.p_offset(endian) + (strtab - vaddr))
        })?;
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(strsz).ok()?)?;
        let strings = bytes.get(start..end.min(bytes.len()))?;
        for d in dynamic {
            let Some(tag) = d.tag32(endian) else { continue };
            if ![DT_NEEDED, DT_RPATH, DT_RUNPATH].contains(&tag) {
                continue;
            }
            let Some(at) = usize::try_from(d.d_val(endian))
                .ok()
                .and_then(|at| strings.get(at..))
            else {
                continue;
            };
            let s = &at[..at.iter().position(|&b| b == 0).unwrap_or(at.len())];
            let s = String::from_utf8_lossy(s).into_owned();
            if tag == DT_NEEDED {
                out.needed.push(s);
            } else {
                out.run_paths.push(s);
            }
        }
        Some(out)
    }
}

fn is_mount_point(dir: &Path) -> io::Result<bool> {
    let here = fs::metadata(dir)?.dev();
    let parent = fs::metadata(dir.parent().unwrap_or(Path::new("/")))?.dev();
    Ok(here != parent)
}

/// A character device at `at` like the host's `host` (root only).
fn make_device(host: &Path, at: &Path) -> io::Result<()> {
    let meta = fs::metadata(host)?;
    if fs::metadata(at).is_ok_and(|m| m.rdev() == meta.rdev()) {
        return Ok(());
    }
    let _ = fs::remove_file(at);
    let c = CString::new(at.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: valid C string.
    let r = unsafe {
        libc::mknod(
            c.as_ptr(),
            libc::S_IFCHR | 0o666,
            meta.rdev() as libc::dev_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    fs::set_permissions(at, fs::Permissions::from_mode(0o666))
}

#[cfg(test)]
mod tests;
