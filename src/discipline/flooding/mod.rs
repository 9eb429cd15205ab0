//! Everything of flooding that is neither its rules (`crate::game::flooding`) nor its
//! tournament (`crate::tournament::flooding`): the picture of a game for the
//! results site and the kit's referee.

pub mod picture;
