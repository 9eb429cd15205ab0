//! Everything of footsteps that is neither its rules (`crate::game::footsteps`) nor its
//! tournament (`crate::tournament::footsteps`): the picture of a game for the
//! results site and the kit's referee.

pub mod picture;
