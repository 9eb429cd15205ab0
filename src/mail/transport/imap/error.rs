//! [`ImapError`], what can go wrong talking to the IMAP server, and the
//! general mapping of the client library's errors onto it.
//!
//! Not here: deciding what to do about one (the caller backs off and
//! tries again; the poller drops a broken connection).

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

/// The general mapping of the client library's errors.
pub(super) fn map_err(e: imap::Error, addr: &str) -> ImapError {
    match e {
        imap::Error::Io(e) => ImapError::Connect(format!("{addr}: {e}")),
        imap::Error::ConnectionLost => ImapError::Connect(format!("{addr}: connection lost")),
        imap::Error::TlsHandshake(e) => ImapError::Tls(format!("handshake with {addr}: {e}")),
        imap::Error::Tls(e) => ImapError::Tls(format!("{addr}: {e}")),
        other => ImapError::Protocol(format!("{addr}: {other}")),
    }
}
