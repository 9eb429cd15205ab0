//! Programs the server executes, held in sealed memory files.
//!
//! A bot's built program (the native executable of a compiled language)
//! is written once into a `memfd`, sealed against any further change, and
//! executed from that file descriptor with `execveat(fd, "",
//! AT_EMPTY_PATH)`. Nothing the server runs lives at a path another local
//! user could create or replace, and what runs is byte for byte what was
//! checked. Where the kernel forbids executing memory files
//! (`vm.memfd_noexec = 2`), the bytes go into a file in a fresh private
//! folder (0700) that is opened and unlinked at once: still nothing at a
//! path, and still only bytes the server wrote itself.
//!
//! This module holds and hands out executables; starting them is the bot
//! sandbox's job ([`super::bot`]).

use std::ffi::CString;
use std::fs;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// `MFD_EXEC` (Linux 6.3): ask for an executable memory file explicitly.
const MFD_EXEC: libc::c_uint = 0x0010;

/// `F_SEAL_EXEC` (Linux 6.3): the execute bits of the mode cannot change.
const F_SEAL_EXEC: libc::c_int = 0x0020;

/// An executable program held by a sealed file descriptor.
#[derive(Debug)]
pub struct Executable {
    fd: OwnedFd,
    name: String,
    len: usize,
}

impl Executable {
    /// Holds `bytes` (an ELF executable) under `name` (shown by the kernel
    /// as `/memfd:NAME` in `/proc/PID/exe`; at most 200 characters).
    pub fn from_bytes(name: &str, bytes: &[u8]) -> io::Result<Executable> {
        let fd = match memfd(name, bytes) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => private_file(bytes)?,
            Err(e) => return Err(e),
        };
        Ok(Executable {
            fd,
            name: name.to_string(),
            len: bytes.len(),
        })
    }

    /// The descriptor to `execveat` (close-on-exec).
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a process of another uid may execute it: a memory file is
    /// `rwxrwxrwx` (sealed against writes); the fallback for
    /// `vm.memfd_noexec = 2`, a private file, is its owner's only.
    pub fn executable_by_others(&self) -> bool {
        // SAFETY: fstat fills a plain struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        unsafe { libc::fstat(self.fd(), &mut st) == 0 && st.st_mode & 0o001 != 0 }
    }

    /// The bytes held (for checks and tests).
    pub fn read_bytes(&self) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; self.len];
        let mut done = 0;
        while done < buf.len() {
            // SAFETY: pread into the unfilled part of a valid buffer.
            let r = unsafe {
                libc::pread(
                    self.fd(),
                    buf[done..].as_mut_ptr().cast(),
                    buf.len() - done,
                    done as libc::off_t,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                break;
            }
            done += r as usize;
        }
        buf.truncate(done);
        Ok(buf)
    }
}

fn memfd(name: &str, bytes: &[u8]) -> io::Result<OwnedFd> {
    let cname: String = name.chars().filter(|&c| c != '\0').take(200).collect();
    let cname = CString::new(cname).expect("no NUL");
    let base = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: memfd_create with a valid name; returns a new fd or -1.
    let mut raw = unsafe { libc::memfd_create(cname.as_ptr(), base | MFD_EXEC) };
    if raw < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // A kernel older than 6.3 knows no MFD_EXEC (and executes memfds).
        // SAFETY: as above.
        raw = unsafe { libc::memfd_create(cname.as_ptr(), base) };
    }
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut file = fs::File::from(fd);
    file.write_all(bytes)?;
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE | libc::F_SEAL_SEAL;
    // With its mode sealed too where the kernel can (6.3): a bot whose uid
    // owns the file (a server that is not root) cannot take its execute
    // bits from the next bot of the same program.
    // SAFETY: fcntl on our descriptor.
    let mut r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals | F_SEAL_EXEC) };
    if r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // SAFETY: as above.
        r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) };
    }
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file.into())
}

/// The fallback: a file in a new private folder, opened read-only and
/// unlinked before anything executes it.
fn private_file(bytes: &[u8]) -> io::Result<OwnedFd> {
    let dir = tempfile::Builder::new().prefix("knobeln-exe-").tempdir()?;
    let path = dir.path().join("program");
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o500)
        .open(&path)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(&path)?;
    fs::remove_file(&path)?;
    Ok(f.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_executable_is_sealed_against_change() {
        let exe = Executable::from_bytes("knobeln-test", b"\x7fELF-not-really").unwrap();
        assert_eq!(exe.read_bytes().unwrap(), b"\x7fELF-not-really");
        assert!(
            exe.executable_by_others(),
            "a bot of another uid may run it"
        );
        // SAFETY: write on our descriptor.
        let r = unsafe { libc::pwrite(exe.fd(), b"X".as_ptr().cast(), 1, 0) };
        assert!(r < 0, "a sealed executable cannot be written");
        let target = fs::read_link(format!("/proc/self/fd/{}", exe.fd())).unwrap();
        assert!(target.to_string_lossy().starts_with("/memfd:knobeln-test"));
    }
}
