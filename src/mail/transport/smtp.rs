//! SMTP sender (being written).
