//! IMAP poller (being written).
