//! Everything of ultimatum that is neither its rules (`crate::game::ultimatum`) nor its
//! tournament (`crate::tournament::ultimatum`): the picture of a game for the
//! results site and the kit's referee.

pub mod picture;
