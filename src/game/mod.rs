//! Game rules shared by the contest's disciplines, as pure code, and
//! KNOBELN's own.
//!
//! [`knobeln`] is the 1994 discipline (its strategies link the C runtime):
//! parameters, the judgement of one throw, the run rule, the replay of a
//! list of throws. [`lines`] is the one seam between a game and the
//! referee that runs bots ([`lines::LineGame`]), with the transcript every
//! bot game keeps. The bot disciplines' rules are not here: each lives in
//! its own folder, `crate::discipline::NAME::rules`.
//!
//! What it deliberately does not do: run a process, read a clock or touch
//! storage; the referee (process plumbing) and the tournament (scheduling)
//! call into it.
//!
//! **Invariant:** `game` never does I/O and never draws random numbers.

pub mod knobeln;
pub mod lines;

pub use knobeln::{Outcome, Params, Player, RuleBreak, RunRule, Throw};
