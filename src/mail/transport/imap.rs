//! The contest's IMAP mailbox: the incoming half of the `imap` transport.
//!
//! [`ImapPoller`] logs in once (plain text, STARTTLS or TLS from the first
//! byte, as configured) and keeps that one session: on each
//! [`ImapPoller::fetch_new`] it re-selects the mailbox and returns the
//! mails whose UID is above the caller's position, in UID order, with their
//! complete raw bytes (`BODY.PEEK[]`, so fetching marks nothing as seen).
//! Once the caller has stored a mail it calls [`ImapPoller::mark_stored`],
//! which sets `\Seen`; [`ImapPoller::remove_taken`] removes the mails at or
//! below a committed position that arrived before a day (`\Seen \Deleted`,
//! then `UID EXPUNGE` of exactly those UIDs). Between fetches, [`ImapPoller::idle`] waits in IMAP
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
//! transaction), deciding which mails may go and when (the caller's, once
//! their rows committed, after `imap.keep_days`), parsing the mails, deciding when to wait
//! and for how long, and retrying beyond fetching a message once more when
//! the server hangs up on it (any other error is returned; the caller
//! backs off and tries again).
//!
//! The files: `session.rs` the poller's session (logging in, selecting,
//! IDLE); `fetch.rs` fetching and flagging; `connect.rs` reaching the
//! server; `stop.rs` [`Stop`]; `error.rs` [`ImapError`]. This file only
//! declares and re-exports them.

mod connect;
mod error;
mod fetch;
mod session;
mod stop;

pub use error::ImapError;
pub use fetch::{read_mailbox, Fetched};
pub use session::{IdleOutcome, ImapPoller};
pub use stop::Stop;
