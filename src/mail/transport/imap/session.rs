//! [`ImapPoller`]'s session on the contest's mailbox: logging in (plain
//! text, STARTTLS or TLS, as configured) and again when the connection
//! broke, selecting the mailbox, waiting in IDLE, logging out.
//!
//! Not here: fetching mails and flagging them (`fetch.rs`), reaching the
//! server (`connect.rs`).

use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use native_tls::TlsStream;

use super::connect::{greeting, login, tcp_connect, tls_connector, IO_TIMEOUT};
use super::error::{map_err, ImapError};
use super::stop::Stop;
use crate::config::{self, ImapConfig, TlsMode};

/// How a wait in IDLE ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleOutcome {
    /// The server reported a change (new mail, most likely): fetch.
    Changed,
    /// The time given was up without a change (time to renew the IDLE).
    TimedOut,
}

/// A logged-in session, plain or over TLS.
pub(super) enum Conn {
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

pub(super) use with_session;

/// A logged-in connection to the contest's mailbox. When the connection
/// breaks, the next call logs in again.
pub struct ImapPoller {
    /// `None` after the connection broke.
    pub(super) conn: Option<Conn>,
    /// A handle on the connection's socket (for its timeouts).
    pub(super) socket: Option<TcpStream>,
    /// Whether the server announced IDLE, asked once per connection.
    pub(super) idle_capability: Option<bool>,
    /// Whether the server announced UIDPLUS (`UID EXPUNGE`), asked once
    /// per connection.
    pub(super) uidplus_capability: Option<bool>,
    pub(super) stop: Stop,
    pub(super) cfg: ImapConfig,
    pub(super) password: String,
    /// `host:port`, for messages.
    pub(super) addr: String,
    /// The mailbox is selected (commands on UIDs need that).
    pub(super) selected: bool,
    /// The UIDVALIDITY and message count the last SELECT gave (what
    /// `selected` refers to while it is true).
    pub(super) selected_as: (u32, u32),
    /// Mails larger than this (by the server's RFC822.SIZE) are fetched
    /// as their header part only ([`ImapPoller::set_size_cap`]).
    pub(super) size_cap: Option<usize>,
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
            uidplus_capability: None,
            stop,
            cfg: cfg.clone(),
            password,
            addr: format!("{}:{}", cfg.host, cfg.port),
            selected: false,
            selected_as: (0, 0),
        };
        poller.session()?;
        Ok(poller)
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
    pub(super) fn session(&mut self) -> Result<&mut Conn, ImapError> {
        if self.conn.is_none() {
            self.selected = false;
            self.idle_capability = None;
            self.uidplus_capability = None;
            if self.stop.is_stopped() {
                return Err(ImapError::Connect(format!("{}: stopped", self.addr)));
            }
            let (conn, socket) = self.open()?;
            self.conn = Some(conn);
            self.socket = Some(socket);
        }
        Ok(self.conn.as_mut().expect("just connected"))
    }

    pub(super) fn drop_connection(&mut self) {
        if let Some(sock) = self.socket.take() {
            let _ = sock.shutdown(Shutdown::Both);
        }
        self.conn = None;
        self.selected = false;
        self.idle_capability = None;
        self.uidplus_capability = None;
    }

    /// Maps a client error; a broken connection is dropped, so that the
    /// next call starts afresh.
    pub(super) fn failed(&mut self, e: imap::Error) -> ImapError {
        let e = map_err(e, &self.addr);
        if matches!(e, ImapError::Connect(_)) {
            self.drop_connection();
        }
        e
    }

    /// Selects the mailbox anew (which also makes the server report mail
    /// that arrived since): its UIDVALIDITY and message count.
    pub(super) fn select(&mut self) -> Result<(u32, u32), ImapError> {
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
        let uidvalidity = mb.uid_validity.ok_or_else(|| {
            ImapError::Protocol(format!("{addr}: mailbox {mailbox:?} has no UIDVALIDITY"))
        })?;
        self.selected = true;
        self.selected_as = (uidvalidity, mb.exists);
        Ok((uidvalidity, mb.exists))
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
