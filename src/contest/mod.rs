//! The contest run by the server: at contest start the compile service
//! closes, the tournament (discipline 1, then the Evolution) runs on every
//! team's latest compiled version, the mails go out by preference as events
//! happen, and the results are published.
//!
//! - [`run`]: starting (idempotent) and running or resuming the contest.
//! - [`mails`]: the mails by preference (LAP, LGP, DGP, GRP, GRG, GRR, RSM),
//!   the disqualification notice and the final results.
//! - [`article`]: the results article for Usenet, 1994 style.
//!
//! The result texts the mails print and the facts mail, article and site
//! share are [`crate::tables`] (below the site, which uses them too).
//! - [`status`]: where the contest stands (for `knobeln status`).
//! - [`lease`]: one process plays the contest at a time.
//! - [`notices`]: the "no strategy yet" reminder and the organizer's list at
//!   the start.

pub mod article;
pub mod bots;
pub mod lease;
pub mod mails;
pub mod notices;
pub mod run;
pub mod status;
