//! The contest's IMAP mailbox: the incoming half of the `imap` transport.
//!
//! [`ImapPoller`] logs in once (plain text, STARTTLS or TLS from the first
//! byte, as configured) and keeps that one session: on each
//! [`ImapPoller::fetch_new`] it re-selects the mailbox and returns the
//! mails whose UID is above the caller's position, in UID order, with their
//! complete raw bytes (`BODY.PEEK[]`, so fetching marks nothing as seen).
//! Once the caller has stored a mail it calls [`ImapPoller::mark_stored`],
//! which sets `\Seen`. Between fetches, [`ImapPoller::idle`] waits in IMAP
//! IDLE (RFC 2177) until the mailbox changes or the given time is up (the
//! caller renews it before servers drop an idle client, at 29 minutes);
//! [`ImapPoller::supports_idle`] says whether the server has IDLE at all.
//! [`Stop`] lets another thread end a wait at once (it closes the socket).
//! [`read_mailbox`] reads a whole mailbox, for the tests and the benchmark
//! that look into a participant's inbox.
//!
//! A mail the server cannot deliver is [`ImapError::BrokenFetch`], never
//! "no mail", and always the first mail after the caller's position, so the
//! caller can set exactly that one aside. When the connection breaks, the
//! next call logs in again. The socket has read and write timeouts (also
//! restored after IDLE, whose client library clears them) and TCP
//! keep-alive, so a server that vanishes without closing the connection is
//! noticed within minutes even in IDLE.
//!
//! Blocking: the server runs it on a thread of its own
//! (`crate::mail::intake`).
//!
//! Deliberately not here: remembering the position (the caller keeps
//! UIDVALIDITY and the last UID next to the stored mail, in one
//! transaction), deleting or moving mail (the mailbox keeps everything; the
//! server's store is the truth), parsing the mails, deciding when to wait
//! and for how long, and retrying beyond fetching a message once more when
//! the server hangs up on it (any other error is returned; the caller
//! backs off and tries again).
//!
//! The files: this one is the poller (its session, fetching, IDLE);
//! `connect.rs` reaches the server and logs in; `stop.rs` is [`Stop`];
//! `error.rs` is [`ImapError`].

use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use native_tls::TlsStream;

use crate::config::{self, ImapConfig, TlsMode};

mod connect;
mod error;
mod stop;

use connect::{greeting, login, tcp_connect, tls_connector, IO_TIMEOUT};
use error::map_err;
pub use error::ImapError;
pub use stop::Stop;

/// How a wait in IDLE ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleOutcome {
    /// The server reported a change (new mail, most likely): fetch.
    Changed,
    /// The time given was up without a change (time to renew the IDLE).
    TimedOut,
}

/// One mail as it lies in the mailbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The mailbox's UIDVALIDITY when the mail was fetched.
    pub uidvalidity: u32,
    pub uid: u32,
    /// The full RFC 5322 message as the server serves it (CRLF line ends),
    /// including the trace headers the mail system added on delivery; only
    /// its header part when `full_size` is set.
    pub raw: Vec<u8>,
    /// `Some(size)`: the server said the mail has `size` bytes, more than
    /// the size cap, so only its header part was downloaded.
    pub full_size: Option<u64>,
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
    /// A handle on the connection's socket (for its timeouts).
    socket: Option<TcpStream>,
    /// Whether the server announced IDLE, asked once per connection.
    idle_capability: Option<bool>,
    stop: Stop,
    cfg: ImapConfig,
    password: String,
    /// `host:port`, for messages.
    addr: String,
    /// The mailbox is selected (commands on UIDs need that).
    selected: bool,
    /// Mails larger than this (by the server's RFC822.SIZE) are fetched
    /// as their header part only ([`ImapPoller::set_size_cap`]).
    size_cap: Option<usize>,
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
        ImapPoller::connect_with_stop(cfg, Stop::new())
    }

    /// [`ImapPoller::connect`] with a [`Stop`] that another thread may use
    /// to end this poller's waiting (also during this first connection).
    pub fn connect_with_stop(cfg: &ImapConfig, stop: Stop) -> Result<ImapPoller, ImapError> {
        let password = config::secret(&cfg.password, &cfg.password_file)
            .map_err(|e| ImapError::Login(format!("password: {e}")))?
            .ok_or_else(|| {
                ImapError::Login(format!(
                    "no password for {} (set password, password_file or KNOBELN_IMAP_PASSWORD)",
                    cfg.user
                ))
            })?;
        let mut poller = ImapPoller {
            size_cap: None,
            conn: None,
            socket: None,
            idle_capability: None,
            stop,
            cfg: cfg.clone(),
            password,
            addr: format!("{}:{}", cfg.host, cfg.port),
            selected: false,
        };
        poller.session()?;
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
    /// From now on, a mail the server says is larger than `cap` bytes is
    /// not downloaded: only its header part and its size are fetched.
    pub fn set_size_cap(&mut self, cap: usize) {
        self.size_cap = Some(cap);
    }

    /// The sizes the server gives for `set`, and which of them are over
    /// the cap (none without a cap, or when the server will not say).
    fn oversized(&mut self, set: &str) -> HashMap<u32, u64> {
        let Some(cap) = self.size_cap else {
            return HashMap::new();
        };
        let Ok(session) = self.session() else {
            return HashMap::new();
        };
        let sizes = with_session!(session, s => {
            s.uid_fetch(set, "(UID RFC822.SIZE)").map(|fetches| {
                fetches
                    .iter()
                    .filter_map(|f| Some((f.uid?, u64::from(f.size?))))
                    .filter(|&(_, size)| size > cap as u64)
                    .collect::<HashMap<u32, u64>>()
            })
        });
        sizes.unwrap_or_default()
    }

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
            full_size: None,
        };
        let set_of = |uids: &mut dyn Iterator<Item = &u32>| {
            uids.map(u32::to_string).collect::<Vec<_>>().join(",")
        };
        let set = set_of(&mut uids.iter());
        // A mail over the size cap: its header part only (the size is the
        // server's word; the inbox caps what it stores anyway).
        let oversized = self.oversized(&set);
        if !oversized.is_empty() {
            let large = set_of(&mut uids.iter().filter(|u| oversized.contains_key(u)));
            let heads = with_session!(self.session()?, s => {
                s.uid_fetch(&large, "(UID BODY.PEEK[HEADER])").map(|fetches| {
                    fetches
                        .iter()
                        .filter_map(|f| Some((f.uid?, f.header()?.to_vec())))
                        .collect::<HashMap<u32, Vec<u8>>>()
                })
            })
            .map_err(|e| self.failed(e))?;
            let mut heads = heads;
            for &uid in &uids {
                let Some(&size) = oversized.get(&uid) else {
                    break;
                };
                // Only a leading run of large mails here, so that the
                // order of the batch stays the order of the UIDs.
                out.push(Fetched {
                    uidvalidity,
                    uid,
                    raw: heads.remove(&uid).unwrap_or_default(),
                    full_size: Some(size),
                });
            }
            if !out.is_empty() {
                return Ok((uidvalidity, out));
            }
            // The first mail is small: the batch ends before the first
            // large one.
            let first_large = uids
                .iter()
                .position(|u| oversized.contains_key(u))
                .unwrap_or(uids.len());
            uids.truncate(first_large);
        }
        // All at once, as it nearly always goes.
        let set = set_of(&mut uids.iter());
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

    /// Whether the server announced the IDLE capability (asked once per
    /// connection; a server that does not gets polled).
    pub fn supports_idle(&mut self) -> Result<bool, ImapError> {
        self.session()?;
        if let Some(known) = self.idle_capability {
            return Ok(known);
        }
        let r = with_session!(self.session()?, s => {
            s.capabilities().map(|c| c.has_str("IDLE"))
        });
        let has = r.map_err(|e| self.failed(e))?;
        self.idle_capability = Some(has);
        Ok(has)
    }

    /// Waits in IMAP IDLE (RFC 2177) on the configured mailbox until the
    /// server reports a change or `timeout` is up, then ends the IDLE with
    /// `DONE`. Returns [`IdleOutcome::Changed`] at once when a change was
    /// already reported during earlier commands. Call only when
    /// [`ImapPoller::supports_idle`] said yes. A [`Stop`] ends the wait with
    /// an error (the socket is closed).
    pub fn idle(&mut self, timeout: Duration) -> Result<IdleOutcome, ImapError> {
        if !self.selected || self.conn.is_none() {
            self.select()?;
        }
        let addr = self.addr.clone();
        let pending = with_session!(self.session()?, s => {
            let mut changed = false;
            while let Ok(r) = s.unsolicited_responses.try_recv() {
                changed |= matches!(
                    r,
                    imap::types::UnsolicitedResponse::Exists(_)
                        | imap::types::UnsolicitedResponse::Recent(_)
                );
            }
            changed
        });
        if pending {
            return Ok(IdleOutcome::Changed);
        }
        // The client library panics (`unreachable!`) on a server that
        // answers IDLE with OK at once: that is a protocol error here.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_session!(self.session().expect("connected above"), s => {
                s.idle().and_then(|h| h.wait_with_timeout(timeout.max(Duration::from_secs(1))))
            })
        }));
        // The library clears the read timeout after its wait: set ours again.
        if let Some(sock) = &self.socket {
            let _ = sock.set_read_timeout(Some(IO_TIMEOUT));
        }
        match r {
            Ok(Ok(imap::extensions::idle::WaitOutcome::MailboxChanged)) => Ok(IdleOutcome::Changed),
            Ok(Ok(imap::extensions::idle::WaitOutcome::TimedOut)) => Ok(IdleOutcome::TimedOut),
            Ok(Err(e @ (imap::Error::No(_) | imap::Error::Bad(_)))) => {
                self.drop_connection();
                Err(ImapError::Protocol(format!("{addr} refused IDLE: {e}")))
            }
            Ok(Err(e)) => {
                // Whatever broke, the IDLE state is unknown: start afresh.
                let e = map_err(e, &addr);
                self.drop_connection();
                Err(e)
            }
            Err(_) => {
                self.drop_connection();
                Err(ImapError::Protocol(format!(
                    "{addr} answered IDLE with something other than a continuation"
                )))
            }
        }
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
            self.idle_capability = None;
            if self.stop.is_stopped() {
                return Err(ImapError::Connect(format!("{}: stopped", self.addr)));
            }
            let (conn, socket) = self.open()?;
            self.conn = Some(conn);
            self.socket = Some(socket);
        }
        Ok(self.conn.as_mut().expect("just connected"))
    }

    fn drop_connection(&mut self) {
        if let Some(sock) = self.socket.take() {
            let _ = sock.shutdown(Shutdown::Both);
        }
        self.conn = None;
        self.selected = false;
        self.idle_capability = None;
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

    /// Connects and logs in; returns the session and a handle on its socket.
    fn open(&self) -> Result<(Conn, TcpStream), ImapError> {
        let cfg = &self.cfg;
        let addr = &self.addr;
        let tcp = tcp_connect(&cfg.host, cfg.port)?;
        self.stop.register(&tcp);
        let socket = tcp
            .try_clone()
            .map_err(|e| ImapError::Connect(format!("{addr}: {e}")))?;
        let conn = match cfg.tls {
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
        };
        Ok((conn, socket))
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
        idle: false,
        idle_renew_secs: config::DEFAULT_IDLE_RENEW_SECS,
    };
    let mut poller = ImapPoller::connect(&cfg)?;
    let (_, mails) = poller.fetch_new(None, 0, usize::MAX)?;
    poller.logout();
    Ok(mails.into_iter().map(|m| m.raw).collect())
}
