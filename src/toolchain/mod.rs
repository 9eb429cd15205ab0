//! The compile service's core: from a participant's C source to a checked
//! WebAssembly module, the one program that plays (what the checks read is
//! what runs: check 6 reads clang's object, the memory limit is the
//! module's).

pub mod builtins;
pub mod compile;
pub mod diagnostic;
pub mod gcc;
pub mod lex;
pub mod memo;
pub mod purec;
pub mod source;
pub mod symbols;
pub mod wasm;
