//! The compile service's core: from a participant's C source to a checked,
//! compiled, locked-down strategy binary.

pub mod compile;
pub mod diagnostic;
pub mod gcc;
pub mod lex;
pub mod purec;
pub mod source;
pub mod symbols;
pub mod wasm;
