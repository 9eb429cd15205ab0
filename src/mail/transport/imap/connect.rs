//! Reaching the IMAP server: a TCP connection with timeouts and TCP
//! keep-alive (so a server that vanishes is noticed, also in IDLE), TLS,
//! the greeting and the login.
//!
//! Not here: the session's commands (the poller in `imap.rs`) and
//! choosing between plain text, STARTTLS and TLS (also the poller's).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::Duration;

use native_tls::TlsConnector;

use super::error::{map_err, ImapError};

/// How long to try to reach the server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one read or write on the connection may block.
pub(super) const IO_TIMEOUT: Duration = Duration::from_secs(120);
/// TCP keep-alive: first probe after this much silence, then every
/// [`KEEPALIVE_INTERVAL`], giving up after [`KEEPALIVE_PROBES`] unanswered
/// ones (so a vanished server is noticed within two minutes, also in IDLE).
const KEEPALIVE_IDLE: Duration = Duration::from_secs(60);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);
const KEEPALIVE_PROBES: i32 = 4;

/// A TCP connection to the first address of `host` that answers.
pub(super) fn tcp_connect(host: &str, port: u16) -> Result<TcpStream, ImapError> {
    let addr = format!("{host}:{port}");
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|e| ImapError::Connect(format!("cannot resolve {addr}: {e}")))?;
    let mut last = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(tcp) => {
                tcp.set_read_timeout(Some(IO_TIMEOUT))
                    .and_then(|()| tcp.set_write_timeout(Some(IO_TIMEOUT)))
                    .and_then(|()| tcp.set_nodelay(true))
                    .and_then(|()| keepalive(&tcp))
                    .map_err(|e| ImapError::Connect(format!("{addr}: {e}")))?;
                return Ok(tcp);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(ImapError::Connect(match last {
        Some(e) => format!("cannot connect to {addr}: {e}"),
        None => format!("{addr} resolves to no address"),
    }))
}

/// Turns TCP keep-alive on, with Linux's timing options.
fn keepalive(tcp: &TcpStream) -> std::io::Result<()> {
    let fd = tcp.as_raw_fd();
    let set = |level: libc::c_int, name: libc::c_int, value: libc::c_int| {
        // SAFETY: a valid socket descriptor and a c_int option value.
        let r = unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set(
        libc::IPPROTO_TCP,
        libc::TCP_KEEPIDLE,
        KEEPALIVE_IDLE.as_secs() as libc::c_int,
    )?;
    set(
        libc::IPPROTO_TCP,
        libc::TCP_KEEPINTVL,
        KEEPALIVE_INTERVAL.as_secs() as libc::c_int,
    )?;
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, KEEPALIVE_PROBES)
}

pub(super) fn tls_connector() -> Result<TlsConnector, ImapError> {
    TlsConnector::new().map_err(|e| ImapError::Tls(format!("cannot set up TLS: {e}")))
}

/// Reads the server's greeting; a `BYE` (or anything but `OK`) is a refusal.
pub(super) fn greeting<T: Read + Write>(
    client: &mut imap::Client<T>,
    addr: &str,
) -> Result<(), ImapError> {
    let line = client.read_greeting().map_err(|e| map_err(e, addr))?;
    let text = String::from_utf8_lossy(&line);
    if text.starts_with("* OK") || text.starts_with("* PREAUTH") {
        Ok(())
    } else {
        Err(ImapError::Connect(format!(
            "{addr} greets with {:?}",
            text.trim_end()
        )))
    }
}

pub(super) fn login<T: Read + Write>(
    client: imap::Client<T>,
    user: &str,
    password: &str,
    addr: &str,
) -> Result<imap::Session<T>, ImapError> {
    client.login(user, password).map_err(|(e, _)| match e {
        imap::Error::No(m) | imap::Error::Bad(m) => {
            ImapError::Login(format!("{addr} refused user {user:?}: {m}"))
        }
        imap::Error::Validate(v) => ImapError::Login(format!("user or password unusable: {v}")),
        other => map_err(other, addr),
    })
}
