//! A bot contest as stored: what was started (`model.rs`: `BotContest`,
//! its entries and materials, its errors, and the readers of its stored
//! results, each asking the discipline's seam) and its stored games as the
//! site and the mails read them (`games.rs`: `for_each_game`, `StoredGame`,
//! `Tally`), and what their kept moves may hold of a team's lines
//! (`budget.rs`: `TranscriptBudget`, `MovesNotKept`). Below the site and the contest run, which both read them.
//!
//! What it deliberately does not do: start, play or finish a contest
//! (`crate::contest::bots`), or write a page or a mail.

mod budget;
mod games;
mod model;

pub use budget::*;
pub use games::*;
pub use model::*;
