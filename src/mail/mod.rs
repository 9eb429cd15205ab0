//! The mail front end: participants talk to the server only by email.
//!
//! - [`message`]: parsing an incoming mail (MIME, charsets, attachments,
//!   automatic-mail detection), with size caps.
//! - [`registration`]: the registration form of 1994, parsed and validated.
//! - [`transport`]: the spool folders, IMAP and SMTP.
//! - [`intake`]: the IMAP take-in on its own thread (IDLE or polling).
//! - [`admission`]: the strangers' daily budget, judged at intake.
//! - [`outage`]: a transport side's backoff and its log lines.
//! - [`probe`]: a large mail read first in a process of its own, under a
//!   CPU budget.

pub mod admission;
pub mod commands;
pub mod compile_queue;
pub mod delivery;
pub mod digest;
pub mod inbox;
pub mod intake;
pub mod message;
pub mod outage;
pub mod probe;
pub mod process;
pub mod registration;
pub mod secrets;
pub mod sender;
pub mod texts;
pub mod transport;
