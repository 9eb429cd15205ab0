//! Polling the contest's IMAP mailbox: the incoming half of the `imap`
//! transport.
//!
//! [`ImapPoller`] logs in once (plain text, STARTTLS or TLS from the first
//! byte, as configured), then on each [`ImapPoller::fetch_new`] re-selects
//! the mailbox and returns the mails whose UID is above the caller's
//! position, in UID order, with their complete raw bytes (`BODY.PEEK[]`, so
//! fetching marks nothing as seen). Once the caller has stored a mail it
//! calls [`ImapPoller::mark_stored`], which sets `\Seen`. [`read_mailbox`]
//! reads a whole mailbox, for the tests that look into a participant's
//! inbox.
//!
//! A mail the server cannot deliver is [`ImapError::BrokenFetch`], never
//! "no mail", and always the first mail after the caller's position, so the
//! caller can set exactly that one aside. When the connection breaks, the
//! next call logs in again.
//!
//! Blocking, with socket timeouts: the server runs it off the async runtime.
//!
//! Deliberately not here: remembering the position (the caller keeps
//! UIDVALIDITY and the last UID next to the stored mail, in one
//! transaction), deleting or moving mail (the mailbox keeps everything; the
//! server's store is the truth), IDLE, parsing the mails, and retrying
//! beyond fetching a message once more when the server hangs up on it (any
//! other error is returned; the caller polls again later).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use native_tls::{TlsConnector, TlsStream};

use crate::config::{self, ImapConfig, TlsMode};

/// How long to try to reach the server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one read or write on the connection may block.
const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// One mail as it lies in the mailbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The mailbox's UIDVALIDITY when the mail was fetched.
    pub uidvalidity: u32,
    pub uid: u32,
    /// The full RFC 5322 message as the server serves it (CRLF line ends),
    /// including the trace headers the mail system added on delivery.
    pub raw: Vec<u8>,
}

/// What can go wrong talking to the IMAP server. `Connect` and `Protocol`
/// are worth a later retry; `Login` and `Tls` are usually the
/// configuration (the organizer's to fix); `BrokenFetch` stays until the
/// caller sets that mail aside.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImapError {
    /// The server could not be reached, or the connection broke.
    #[error("IMAP connection: {0}")]
    Connect(String),
    /// The server refused the user name or password (or there is none).
    #[error("IMAP login: {0}")]
    Login(String),
    /// The server refused a command or answered something unreadable.
    #[error("IMAP protocol: {0}")]
    Protocol(String),
    /// The server did not deliver the bytes of message `uid`: no data, an
    /// empty message or a refused FETCH. Never taken for "no new mail".
    #[error("IMAP: message UID {uid} could not be fetched: {why}")]
    BrokenFetch {
        /// The mailbox's UIDVALIDITY, so a caller can move past the mail.
        uidvalidity: u32,
        uid: u32,
        why: String,
    },
    /// TLS could not be set up (handshake, certificate, STARTTLS refused).
    #[error("IMAP TLS: {0}")]
    Tls(String),
}

/// A logged-in session, plain or over TLS.
enum Conn {
    Plain(imap::Session<TcpStream>),
    Tls(imap::Session<TlsStream<TcpStream>>),
}

/// Runs `$body` with `$s` bound to the session, whatever its stream.
macro_rules! with_session {
    ($conn:expr, $s:ident => $body:expr) => {
        match $conn {
            Conn::Plain($s) => $body,
            Conn::Tls($s) => $body,
        }
    };
}

/// A logged-in connection to the contest's mailbox. When the connection
/// breaks, the next call logs in again.
pub struct ImapPoller {
    /// `None` after the connection broke.
    conn: Option<Conn>,
    cfg: ImapConfig,
    password: String,
    /// `host:port`, for messages.
    addr: String,
    /// The mailbox is selected (commands on UIDs need that).
    selected: bool,
}

impl std::fmt::Debug for ImapPoller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImapPoller")
            .field("addr", &self.addr)
            .field("user", &self.cfg.user)
            .field("mailbox", &self.cfg.mailbox)
            .field("tls", &self.cfg.tls)
            .field("connected", &self.conn.is_some())
            .finish()
    }
}

/// How fetching one message's bytes went.
enum FetchOne {
    Got(Vec<u8>),
    /// The server answered, without the bytes: why.
    Broken(String),
    /// The connection broke (which some servers do on a message they
    /// cannot read: Dovecot sends `BYE` and hangs up).
    Lost(ImapError),
}

impl ImapPoller {
    /// Connects and logs in. The password comes from the config
    /// (`password`, else the first line of `password_file`; the environment
    /// override is applied when the config is loaded).
    pub fn connect(cfg: &ImapConfig) -> Result<ImapPoller, ImapError> {
        let password = config::secret(&cfg.password, &cfg.password_file)
            .map_err(|e| ImapError::Login(format!("password: {e}")))?
            .ok_or_else(|| {
                ImapError::Login(format!(
                    "no password for {} (set password, password_file or KNOBELN_IMAP_PASSWORD)",
                    cfg.user
                ))
            })?;
        let mut poller = ImapPoller {
            conn: None,
            cfg: cfg.clone(),
            password,
            addr: format!("{}:{}", cfg.host, cfg.port),
            selected: false,
        };
        poller.conn = Some(poller.open()?);
        Ok(poller)
    }

    /// Mails with UID > `after_uid` in the configured mailbox (all of them
    /// when the mailbox's UIDVALIDITY differs from `known_uidvalidity`, or
    /// that is `None`), in UID order, at most `max` per call, each with its
    /// full raw RFC 5322 bytes (`BODY.PEEK[]`: nothing is marked seen by
    /// fetching). Returns the mailbox's current UIDVALIDITY with them.
    ///
    /// A mail the server does not deliver (no data, zero bytes, FETCH
    /// refused, or the server hangs up on it twice in a row while the rest
    /// works) is an error, never "no mail": when it is the first new mail,
    /// the result is [`ImapError::BrokenFetch`] naming its UID; when good
    /// mails come before it, those are returned and the broken one is left
    /// for the next call. So the UID of a `BrokenFetch` is always the first
    /// mail after the caller's position, and every mail before it has been
    /// returned by an earlier call. Likewise, when the connection fails
    /// after some mails were fetched, those are returned and the error
    /// comes with the next call.
    pub fn fetch_new(
        &mut self,
        known_uidvalidity: Option<u32>,
        after_uid: u32,
        max: usize,
    ) -> Result<(u32, Vec<Fetched>), ImapError> {
        let (uidvalidity, exists) = self.select()?;
        let first = if known_uidvalidity == Some(uidvalidity) {
            match after_uid.checked_add(1) {
                Some(u) => u,
                None => return Ok((uidvalidity, Vec::new())),
            }
        } else {
            1
        };
        if exists == 0 || max == 0 {
            return Ok((uidvalidity, Vec::new()));
        }
        let addr = self.addr.clone();
        let mut uids: Vec<u32> = with_session!(self.session()?, s => {
            s.uid_search(format!("UID {first}:*"))
        })
        .map_err(|e| self.failed(e))?
        .into_iter()
        // `n:*` also matches the highest UID when that is below n.
        .filter(|&u| u >= first)
        .collect();
        uids.sort_unstable();
        uids.truncate(max);
        if uids.is_empty() {
            return Ok((uidvalidity, Vec::new()));
        }

        let mut out = Vec::with_capacity(uids.len());
        let fetched = |uid, raw| Fetched {
            uidvalidity,
            uid,
            raw,
        };
        // All at once, as it nearly always goes.
        let set = uids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let batch = with_session!(self.session()?, s => {
            s.uid_fetch(&set, "(UID BODY.PEEK[])").map(|fetches| {
                fetches
                    .iter()
                    .filter_map(|f| Some((f.uid?, f.body()?.to_vec())))
                    .collect::<HashMap<u32, Vec<u8>>>()
            })
        });
        match batch {
            Ok(mut bodies) => {
                for &uid in &uids {
                    match bodies.remove(&uid) {
                        Some(raw) if !raw.is_empty() => out.push(fetched(uid, raw)),
                        Some(_) => {
                            return broken(
                                out,
                                uidvalidity,
                                uid,
                                "the server sent an empty message",
                            )
                        }
                        None => {
                            return broken(out, uidvalidity, uid, "the server sent no message data")
                        }
                    }
                }
                return Ok((uidvalidity, out));
            }
            Err(imap::Error::No(_) | imap::Error::Bad(_) | imap::Error::Parse(_)) => {}
            Err(e) => {
                let e = map_err(e, &addr);
                if !matches!(e, ImapError::Connect(_)) {
                    return Err(e);
                }
                self.drop_connection();
            }
        }
        // Something is wrong with one of them: one by one, to find it.
        for &uid in &uids {
            match self.fetch_one_twice(uid, uidvalidity) {
                Ok(FetchOne::Got(raw)) => out.push(fetched(uid, raw)),
                Ok(FetchOne::Broken(why)) => return broken(out, uidvalidity, uid, &why),
                Ok(FetchOne::Lost(e)) => {
                    let why = format!("the server hangs up whenever it is fetched ({e})");
                    return broken(out, uidvalidity, uid, &why);
                }
                Err(_) if !out.is_empty() => break,
                Err(e) => return Err(e),
            }
        }
        Ok((uidvalidity, out))
    }

    /// After the mail is safely stored: flags it `\Seen` (it stays in the
    /// mailbox; the server's store is the truth).
    pub fn mark_stored(&mut self, uid: u32) -> Result<(), ImapError> {
        if !self.selected || self.conn.is_none() {
            self.select()?;
        }
        let r = with_session!(self.session()?, s => {
            s.uid_store(uid.to_string(), "+FLAGS (\\Seen)").map(drop)
        });
        r.map_err(|e| self.failed(e))
    }

    /// Logs out (best effort: a failing logout is not worth reporting).
    pub fn logout(mut self) {
        if let Some(conn) = self.conn.as_mut() {
            let _ = with_session!(conn, s => s.logout());
        }
    }

    /// The session, logging in again when the connection broke.
    fn session(&mut self) -> Result<&mut Conn, ImapError> {
        if self.conn.is_none() {
            self.selected = false;
            self.conn = Some(self.open()?);
        }
        Ok(self.conn.as_mut().expect("just connected"))
    }

    fn drop_connection(&mut self) {
        self.conn = None;
        self.selected = false;
    }

    /// Maps a client error; a broken connection is dropped, so that the
    /// next call starts afresh.
    fn failed(&mut self, e: imap::Error) -> ImapError {
        let e = map_err(e, &self.addr);
        if matches!(e, ImapError::Connect(_)) {
            self.drop_connection();
        }
        e
    }

    /// Selects the mailbox anew (which also makes the server report mail
    /// that arrived since): its UIDVALIDITY and message count.
    fn select(&mut self) -> Result<(u32, u32), ImapError> {
        let addr = self.addr.clone();
        let mailbox = self.cfg.mailbox.clone();
        let r = with_session!(self.session()?, s => {
            // Unilateral responses pile up in this channel; nobody reads them.
            while s.unsolicited_responses.try_recv().is_ok() {}
            s.select(&mailbox)
        });
        let mb = r.map_err(|e| match e {
            imap::Error::No(m) | imap::Error::Bad(m) => {
                ImapError::Protocol(format!("{addr}: cannot select mailbox {mailbox:?}: {m}"))
            }
            other => self.failed(other),
        })?;
        self.selected = true;
        let uidvalidity = mb.uid_validity.ok_or_else(|| {
            ImapError::Protocol(format!("{addr}: mailbox {mailbox:?} has no UIDVALIDITY"))
        })?;
        Ok((uidvalidity, mb.exists))
    }

    /// One message's bytes; when the connection breaks on it, once more on
    /// a new connection (`Lost` when that breaks too). `Err` when the
    /// connection cannot be set up again or the mailbox changed meanwhile.
    fn fetch_one_twice(&mut self, uid: u32, uidvalidity: u32) -> Result<FetchOne, ImapError> {
        let mut last = None;
        for _ in 0..2 {
            if self.conn.is_none() || !self.selected {
                let (v, _) = self.select()?;
                if v != uidvalidity {
                    return Err(ImapError::Protocol(format!(
                        "{}: the UIDVALIDITY of {:?} changed while fetching",
                        self.addr, self.cfg.mailbox
                    )));
                }
            }
            let r = with_session!(self.session()?, s => {
                s.uid_fetch(uid.to_string(), "(UID BODY.PEEK[])").map(|fetches| {
                    fetches
                        .iter()
                        .find(|f| f.uid == Some(uid) && f.body().is_some())
                        .and_then(|f| f.body())
                        .map(<[u8]>::to_vec)
                })
            });
            match r {
                Ok(Some(raw)) if !raw.is_empty() => return Ok(FetchOne::Got(raw)),
                Ok(Some(_)) => {
                    return Ok(FetchOne::Broken("the server sent an empty message".into()))
                }
                Ok(None) => return Ok(FetchOne::Broken("the server sent no message data".into())),
                Err(e @ (imap::Error::No(_) | imap::Error::Bad(_) | imap::Error::Parse(_))) => {
                    return Ok(FetchOne::Broken(format!("FETCH failed: {e}")))
                }
                Err(e) => {
                    let e = self.failed(e);
                    if !matches!(e, ImapError::Connect(_)) {
                        return Err(e);
                    }
                    last = Some(e);
                }
            }
        }
        Ok(FetchOne::Lost(last.expect("two attempts failed")))
    }

    /// Connects and logs in.
    fn open(&self) -> Result<Conn, ImapError> {
        let cfg = &self.cfg;
        let addr = &self.addr;
        let tcp = tcp_connect(&cfg.host, cfg.port)?;
        Ok(match cfg.tls {
            TlsMode::None => {
                let mut client = imap::Client::new(tcp);
                greeting(&mut client, addr)?;
                Conn::Plain(login(client, &cfg.user, &self.password, addr)?)
            }
            TlsMode::Starttls => {
                let mut client = imap::Client::new(tcp);
                greeting(&mut client, addr)?;
                let client = client
                    .secure(&cfg.host, &tls_connector()?)
                    .map_err(|e| match e {
                        imap::Error::No(m) | imap::Error::Bad(m) => {
                            ImapError::Tls(format!("{addr} refused STARTTLS: {m}"))
                        }
                        other => map_err(other, addr),
                    })?;
                Conn::Tls(login(client, &cfg.user, &self.password, addr)?)
            }
            TlsMode::Tls => {
                let stream = tls_connector()?
                    .connect(&cfg.host, tcp)
                    .map_err(|e| ImapError::Tls(format!("handshake with {addr}: {e}")))?;
                let mut client = imap::Client::new(stream);
                greeting(&mut client, addr)?;
                Conn::Tls(login(client, &cfg.user, &self.password, addr)?)
            }
        })
    }
}

/// The mails before a broken one, or the error naming it when it is the
/// first.
fn broken(
    out: Vec<Fetched>,
    uidvalidity: u32,
    uid: u32,
    why: &str,
) -> Result<(u32, Vec<Fetched>), ImapError> {
    match out.first() {
        Some(m) => Ok((m.uidvalidity, out)),
        None => Err(ImapError::BrokenFetch {
            uidvalidity,
            uid,
            why: why.to_string(),
        }),
    }
}

/// Reads every mail of `user`'s INBOX over plain IMAP, in UID order, without
/// marking anything seen: for tests that look into a participant's mailbox
/// (as on the local stack of `deploy/mailstack.sh`).
pub fn read_mailbox(
    host: &str,
    port: u16,
    user: &str,
    password: &str,
) -> Result<Vec<Vec<u8>>, ImapError> {
    let cfg = ImapConfig {
        host: host.to_string(),
        port,
        tls: TlsMode::None,
        user: user.to_string(),
        password: Some(password.to_string()),
        password_file: None,
        mailbox: "INBOX".to_string(),
        poll_secs: 1,
    };
    let mut poller = ImapPoller::connect(&cfg)?;
    let (_, mails) = poller.fetch_new(None, 0, usize::MAX)?;
    poller.logout();
    Ok(mails.into_iter().map(|m| m.raw).collect())
}

/// A TCP connection to the first address of `host` that answers.
fn tcp_connect(host: &str, port: u16) -> Result<TcpStream, ImapError> {
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

fn tls_connector() -> Result<TlsConnector, ImapError> {
    TlsConnector::new().map_err(|e| ImapError::Tls(format!("cannot set up TLS: {e}")))
}

/// Reads the server's greeting; a `BYE` (or anything but `OK`) is a refusal.
fn greeting<T: Read + Write>(client: &mut imap::Client<T>, addr: &str) -> Result<(), ImapError> {
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

fn login<T: Read + Write>(
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

/// The general mapping of the client library's errors.
fn map_err(e: imap::Error, addr: &str) -> ImapError {
    match e {
        imap::Error::Io(e) => ImapError::Connect(format!("{addr}: {e}")),
        imap::Error::ConnectionLost => ImapError::Connect(format!("{addr}: connection lost")),
        imap::Error::TlsHandshake(e) => ImapError::Tls(format!("handshake with {addr}: {e}")),
        imap::Error::Tls(e) => ImapError::Tls(format!("{addr}: {e}")),
        other => ImapError::Protocol(format!("{addr}: {other}")),
    }
}
