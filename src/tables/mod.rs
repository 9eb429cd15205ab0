//! The contest's results as text and numbers for people: the tables the
//! mails print, the facts every text about the results shares. Pure
//! functions of the engine's results; one place, so that the mails, the
//! article and the results site say the same.
//!
//! Below the site and the contest run (both use it), above the engine's
//! results and the mail texts' wrapping (which it uses). It reads no store,
//! sends nothing and writes no file.
//!
//! - [`facts`]: shares, points with halves, the Evolution's model.
//! - [`knobeln`]: KNOBELN's GRP, GRG, GRR, RSM and final tables.

pub mod facts;
pub mod knobeln;
