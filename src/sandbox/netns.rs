//! Network namespaces for bots and compile jails, made by the server and
//! used again.
//!
//! Every bot runs in a network namespace that no other running bot shares:
//! it has no interface that reaches anything (loopback stays down), and its
//! abstract `AF_UNIX` names (the only sockets the seccomp filter lets a bot
//! make) are its own, so two bots cannot meet. Creating a namespace costs
//! about 0.45 ms of a bot's start here (the kernel registers every
//! per-namespace sysctl), and freeing one as much again in a kernel worker.
//! A compile jail ([`super::jail`]) borrows one for its life in the same
//! way: its runs (gcc, clang, wasm-ld, one compile's) enter it instead of
//! each making one.
//!
//! So when the server runs as root it makes the namespaces itself (owned by
//! the initial user namespace: a bot or a jailed tool has no capability in
//! one, it cannot even bring loopback up) and lends each to one bot or
//! jail at a time; the bot's first child, or each jailed run's child,
//! enters it before its exec. A namespace comes back
//! ([`Pool::give_back`]) only after every process of its bot or jail is
//! gone, and only if it then holds no socket at all, read from the
//! namespace's own `/proc/net/unix` and `/proc/net/sockstat` (opened when
//! it was made): no `AF_UNIX` socket listed, and the kernel's count of the
//! namespace's sockets of every family at zero, `TIME_WAIT` included (a
//! jailed tool has no seccomp filter and can make any socket its lack of
//! capabilities allows). A socket kept alive only in flight (a descriptor
//! sent over a socket that nobody will read) is listed and counted until
//! the kernel's collector frees it; such a namespace is dropped, never
//! lent again. Sockets are all a process can
//! leave in one: with no interface up and no capability, nothing else of a
//! network namespace changes.
//!
//! Not root (or a kernel that refuses): [`Pool::take`] gives `None` and
//! each bot's clone (each jailed run's) makes a fresh namespace.
//!
//! This module starts no process and knows nothing of matches: it makes,
//! lends, checks and keeps namespaces.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Idle namespaces kept at most (more are dropped on return).
const KEEP: usize = 64;

/// One network namespace, lent to one bot (or one compile jail) at a time.
#[derive(Debug)]
pub struct Netns {
    ns: OwnedFd,
    /// Its `/proc/net/unix`, bound to it when opened.
    unix: File,
    /// Its `/proc/net/sockstat`: the kernel's count of the sockets of
    /// every family made in it (`sockets: used`) and of its TCP sockets
    /// in `TIME_WAIT` (`tw`). Not `/proc/net/tcp` or `udp`: reading those
    /// walks the machine's whole hash table of connections, milliseconds
    /// a read.
    sockstat: File,
}

/// Idle namespaces.
#[derive(Debug, Default)]
pub struct Pool {
    idle: Mutex<Vec<Netns>>,
}

/// The server's pool.
pub static POOL: Pool = Pool {
    idle: Mutex::new(Vec::new()),
};

static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

impl Pool {
    /// An idle namespace, or a new one; `None` where the server cannot make
    /// them (not root, or the kernel refused once).
    pub fn take(&self) -> Option<Netns> {
        if UNAVAILABLE.load(Ordering::Relaxed) || !super::is_root() {
            return None;
        }
        if let Some(n) = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Some(n);
        }
        match Netns::create() {
            Ok(n) => Some(n),
            Err(e) => {
                if !UNAVAILABLE.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "knobeln: bot sandbox: cannot keep network namespaces ({e}); \
                         each bot makes its own"
                    );
                }
                None
            }
        }
    }

    /// Takes a namespace back after its bot is entirely gone: kept for the
    /// next bot if it holds no socket, dropped otherwise.
    pub fn give_back(&self, n: Netns) {
        if !n.is_empty() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < KEEP {
            idle.push(n);
        }
    }
}

impl Netns {
    /// Makes a namespace on a thread of its own (a thread may change its
    /// network namespace without touching the rest of the server).
    fn create() -> io::Result<Netns> {
        std::thread::spawn(|| -> io::Result<Netns> {
            // SAFETY: plain syscall; it changes only this thread, which ends here.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            let ns = File::open("/proc/thread-self/ns/net")?;
            let unix = File::open("/proc/thread-self/net/unix")?;
            let sockstat = File::open("/proc/thread-self/net/sockstat")?;
            Ok(Netns {
                ns: ns.into(),
                unix,
                sockstat,
            })
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the namespace thread panicked")))
    }

    /// The descriptor to `setns` into.
    pub fn fd(&self) -> RawFd {
        self.ns.as_raw_fd()
    }

    /// Whether no socket is left in the namespace: none listed in its
    /// `/proc/net/unix`, none of any family counted in its sockstat, and no
    /// TCP socket in `TIME_WAIT`. A socket being freed after the kernel's
    /// grace period still counts: such a namespace is dropped, not lent.
    pub fn is_empty(&self) -> bool {
        // The header line only. A short buffer is enough: a second line
        // (or a read error) means "not empty".
        let mut buf = [0u8; 512];
        let unix_empty = match self.unix.read_at(&mut buf, 0) {
            Ok(n) => n < buf.len() && buf[..n].iter().filter(|&&b| b == b'\n').count() == 1,
            Err(_) => false,
        };
        unix_empty
            && match self.sockstat.read_at(&mut buf, 0) {
                Ok(n) if n < buf.len() => no_sockets_counted(&buf[..n]),
                _ => false,
            }
    }
}

/// Whether a namespace's `/proc/net/sockstat` counts no socket of any
/// family (`sockets: used 0`, per namespace) and no TCP socket in
/// `TIME_WAIT` (`TCP: … tw 0`); anything unreadable is not empty.
fn no_sockets_counted(sockstat: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(sockstat) else {
        return false;
    };
    let mut lines = text.lines();
    if lines.next() != Some("sockets: used 0") {
        return false;
    }
    let Some(tcp) = lines.find(|l| l.starts_with("TCP: ")) else {
        return false;
    };
    let fields: Vec<&str> = tcp.split_whitespace().collect();
    fields.windows(2).any(|w| w[0] == "tw" && w[1] == "0")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::MetadataExt;

    fn id(n: &Netns) -> u64 {
        File::from(n.ns.try_clone().unwrap())
            .metadata()
            .unwrap()
            .ino()
    }

    /// Runs `f` on a thread that has entered `n`, as a bot would be.
    fn inside<T: Send>(n: &Netns, f: impl FnOnce() -> T + Send) -> T {
        let fd = n.fd();
        std::thread::scope(|s| {
            s.spawn(move || {
                // SAFETY: plain syscall on this thread only; `fd` outlives it.
                assert_eq!(unsafe { libc::setns(fd, libc::CLONE_NEWNET) }, 0);
                f()
            })
            .join()
            .unwrap()
        })
    }

    /// An abstract `AF_UNIX` listener in the calling thread's namespace.
    fn abstract_listener(name: &str) -> OwnedFd {
        // SAFETY: plain syscalls on a fresh socket and a zeroed address.
        unsafe {
            let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0);
            let sock = OwnedFd::from_raw_fd(fd);
            let mut addr: libc::sockaddr_un = std::mem::zeroed();
            addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
            for (i, b) in name.bytes().enumerate() {
                addr.sun_path[i + 1] = b as libc::c_char;
            }
            let len = std::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
            let a = (&addr as *const libc::sockaddr_un).cast();
            assert_eq!(libc::bind(fd, a, len as u32), 0);
            assert_eq!(libc::listen(fd, 1), 0);
            sock
        }
    }

    #[test]
    fn a_namespace_is_lent_again_only_without_sockets() {
        let pool = Pool::default();
        if !super::super::is_root() {
            assert!(pool.take().is_none());
            return;
        }
        let n = pool.take().expect("root makes network namespaces");
        let own = std::fs::metadata("/proc/self/ns/net").unwrap().ino();
        assert_ne!(id(&n), own, "not a namespace of its own");
        assert!(n.is_empty());
        // A socket left in it: dropped, not lent again.
        let left = inside(&n, || abstract_listener("knobeln-test-left"));
        assert!(!n.is_empty());
        let first = id(&n);
        pool.give_back(n);
        drop(left);
        assert!(pool.idle.lock().unwrap().is_empty());
        let n = pool.take().unwrap();
        assert_ne!(id(&n), first);
        // Its sockets closed: kept and lent again.
        inside(&n, || drop(abstract_listener("knobeln-test-gone")));
        assert!(n.is_empty());
        let second = id(&n);
        pool.give_back(n);
        assert_eq!(pool.take().map(|m| id(&m)), Some(second));
    }

    /// A compile jail's tool has no seccomp filter: an `AF_INET` or
    /// `AF_INET6` socket left in a namespace (bound with loopback down,
    /// as a tool can) keeps it from being lent again, as an `AF_UNIX` one
    /// does.
    #[test]
    fn a_namespace_holding_an_inet_socket_is_not_lent_again() {
        let pool = Pool::default();
        if !super::super::is_root() {
            return;
        }
        for (domain, kind) in [
            (libc::AF_INET, libc::SOCK_DGRAM),
            (libc::AF_INET6, libc::SOCK_DGRAM),
            (libc::AF_INET, libc::SOCK_STREAM),
        ] {
            let n = pool.take().expect("root makes network namespaces");
            let left = inside(&n, || {
                // SAFETY: plain syscalls on a fresh socket and a zeroed
                // address (the wildcard address, port 4242).
                unsafe {
                    let fd = libc::socket(domain, kind | libc::SOCK_CLOEXEC, 0);
                    assert!(fd >= 0);
                    let sock = OwnedFd::from_raw_fd(fd);
                    let r = if domain == libc::AF_INET {
                        let mut a: libc::sockaddr_in = std::mem::zeroed();
                        a.sin_family = libc::AF_INET as libc::sa_family_t;
                        a.sin_port = 4242u16.to_be();
                        let p = (&a as *const libc::sockaddr_in).cast();
                        libc::bind(fd, p, std::mem::size_of_val(&a) as u32)
                    } else {
                        let mut a: libc::sockaddr_in6 = std::mem::zeroed();
                        a.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                        a.sin6_port = 4242u16.to_be();
                        let p = (&a as *const libc::sockaddr_in6).cast();
                        libc::bind(fd, p, std::mem::size_of_val(&a) as u32)
                    };
                    assert_eq!(r, 0, "{}", io::Error::last_os_error());
                    if kind == libc::SOCK_STREAM {
                        assert_eq!(libc::listen(fd, 1), 0);
                    }
                    sock
                }
            });
            assert!(!n.is_empty(), "{domain} {kind}");
            pool.give_back(n);
            drop(left);
            assert!(pool.idle.lock().unwrap().is_empty(), "{domain} {kind}");
        }
        // Counted whatever its family, bound or not (here a netlink one).
        let n = pool.take().unwrap();
        let left = inside(&n, || {
            // SAFETY: plain syscall on a fresh socket.
            let fd =
                unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
            assert!(fd >= 0);
            // SAFETY: just made, ours.
            unsafe { OwnedFd::from_raw_fd(fd) }
        });
        assert!(!n.is_empty(), "a netlink socket");
        drop(left);
    }

    #[test]
    fn sockstat_counts_read() {
        let empty =
            "sockets: used 0\nTCP: inuse 0 orphan 3 tw 0 alloc 10 mem 35\nUDP: inuse 0 mem 0\n";
        assert!(no_sockets_counted(empty.as_bytes()));
        for full in [
            "sockets: used 1\nTCP: inuse 0 orphan 0 tw 0 alloc 10 mem 35\n",
            "sockets: used 0\nTCP: inuse 0 orphan 0 tw 2 alloc 10 mem 35\n",
            "sockets: used 0\n",
            "",
        ] {
            assert!(!no_sockets_counted(full.as_bytes()), "{full}");
        }
    }
}
