//! Participant kit (being written).
