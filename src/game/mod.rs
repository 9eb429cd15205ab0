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
//! [`knobeln`] is the 1994 discipline (its strategies link the C runtime).
//! The later contests of the same family (ultimatum game, flooding island,
//! FootSteps, Morabaraba) get modules of their own beside it; their players
//! are bots that talk in lines, and each implements [`lines::LineGame`], the
//! one seam between a game and the referee that runs bots.

pub mod knobeln;
pub mod lines;

pub use knobeln::{Outcome, Params, Player, RuleBreak, RunRule, Throw};
