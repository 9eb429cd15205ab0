//! Reading one incoming mail from a stranger: raw bytes in, plain data out.
//!
//! [`parse`] checks the size cap *before* looking at a single byte, hands
//! the mail to `mail-parser` (MIME, quoted-printable, base64, charsets,
//! RFC 2047 headers), and returns an [`Inbound`]: who wrote it and where a
//! reply goes, the decoded subject, the text body (or the fact that there is
//! only HTML, or nothing), the attachments, and whether the mail was sent by
//! a machine ([`Automatic`]) and so must never be answered (but for a
//! team's program's mail its string proves: [`Automatic::provable`]).
//! [`strategy_source`] then finds the C source of a "please compile" mail.
//!
//! Deliberately not here: deciding what a mail *is* (registration, compile
//! request, ...) or what to answer, any I/O, any clock, and any trust in the
//! sender (a `From` is a claim; the authentication string decides). Bodies
//! are never rendered: HTML is recognised only to tell its sender to send
//! plain text. Nothing in this module panics on any input: a panic inside
//! the MIME parser is caught and reported as [`Unreadable::NotAMail`].
//!
//! The files: `model.rs` the data; `parse.rs` reading a mail, with
//! `headers.rs` (header fields), `automatic.rs` (a machine's mail) and
//! `text.rs` (plain-text helpers); `address.rs` whether a reply can go to
//! an address; `source.rs` the C source. This file only declares and
//! re-exports them.

mod address;
mod automatic;
mod headers;
mod model;
mod parse;
mod source;
mod text;

pub use address::{check_answerable, Unanswerable};
pub use automatic::{
    is_bounce_local_part, is_daemon_local_part, DAEMON_LOCAL_PARTS, DAEMON_LOCAL_PREFIXES,
};
pub use model::{Attachment, Automatic, Body, Inbound, Limits, Mailbox, Unreadable};
pub use parse::{on_a_deep_stack, parse, read, sender_and_subject};
pub use source::{strategy_source, SourceProblem};
pub use text::{cut_signature, unflow};

#[cfg(test)]
mod tests;
