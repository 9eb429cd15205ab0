//! Game rules of the contest's disciplines, as pure code.
//!
//! Each discipline lives in its own module and is nothing but data and pure
//! functions: parameters, the judgement of one move, the legality of a
//! sequence of moves. The referee (process plumbing) and the tournament
//! (scheduling) call into it; it never runs a process, reads a clock or
//! touches storage.
//!
//! **Invariant:** `game` never does I/O and never draws random numbers.
//!
//! Today there is one discipline, [`knobeln`]; later contests of the same
//! family (ultimatum game, flooding island, bidding, Morabaraba) get modules
//! of their own beside it.

pub mod knobeln;

pub use knobeln::{Outcome, Params, Player, RuleBreak, RunRule, Throw};
