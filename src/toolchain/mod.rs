//! The compile service's core: from a participant's C source to a checked,
//! compiled, locked-down strategy binary.

pub mod diagnostic;
pub mod lex;
pub mod source;
pub mod compile;
pub mod gcc;
pub mod symbols;
