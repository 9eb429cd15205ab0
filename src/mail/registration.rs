//! Registration form (being written).
