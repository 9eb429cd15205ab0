//! Everything of morabaraba that is neither its rules (`crate::game::morabaraba`) nor its
//! tournament (`crate::tournament::morabaraba`): the picture of a game for the
//! results site and the kit's referee.

pub mod picture;
