//! Mail transports: how raw mails come in and go out.

pub mod imap;
pub mod smtp;
pub mod spool;
