//! Incoming mail parsing (being written).
