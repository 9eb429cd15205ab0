//! Tournament planning and scoring, as pure code: data in, data out.
//!
//! This is the core of KNOBELN's two disciplines (announcement of 1994,
//! "Rules of Tournament" and "Disciplines of Contest"):
//! - [`grouping`]: how many groups a round has, and the random mixing of the
//!   field into them.
//! - [`schedule`]: the games of one group within a round, with the failure
//!   rules (one failure per round is forgiven and the game is rescheduled, a
//!   second one disqualifies), as a state machine a parallel executor can
//!   drive and still get exactly the result of a sequential run.
//! - [`ranking`]: the group table, tie-breaks, shared places, who advances,
//!   and the contest's final ranking.
//! - [`evolution`]: Discipline 2, Knobeln Evolution, computed exactly from the
//!   final round's results.
//!
//! What it deliberately does not do: run games, start processes or threads,
//! store anything, format reports, or know the game's rules (that is
//! [`crate::game`] and the referee). The bot disciplines' planners live in
//! their folders (`crate::discipline::NAME::planner`); they share
//! [`TeamId`] from here. Teams are plain [`TeamId`]s; where a
//! tie-break needs a team's name, the caller passes it in.
//!
//! **Invariant:** `tournament` never does I/O, never reads a clock, never draws
//! from a global RNG. Everything random is drawn from [`crate::seed`]
//! generators seeded by the caller, so a tournament replays bit for bit.
//!
//! Points are exact: they are kept as half-points ([`Points`]), because a
//! self-game counts once for its strategy, as the mean of its two sides.

pub mod evolution;
pub mod grouping;
pub mod ranking;
pub mod schedule;
pub mod units;

pub use evolution::{evolve, payoff_matrix, Evolution, EvolutionConfig, EvolutionEnd};
pub use grouping::{draw_groups, group_sizes, grouping_seed, is_final};
pub use ranking::{advancing, final_ranking, rank_group, rank_schedule, GroupRanking, RankEntry};
pub use schedule::{
    AttemptStatus, CountedGame, GameKey, GameOutcome, GroupReport, GroupSchedule, ScheduledGame,
};
pub use units::{Points, TeamId};
