//! A [`Runner`] for tests: it answers every game at once, with points drawn
//! from the game's seed, and team 1 crashes in every game it plays first
//! (so it is rescheduled, then disqualified). The engine's and the site's
//! tests play whole seeded contests through it without a module.
//!
//! Not here: real games (`super::pool`); it exists only in test builds.

use std::cell::RefCell;
use std::collections::VecDeque;

use super::pool::{Done, Job, Runner};
use crate::referee::{Failure, FailureKind, GameRecord};
use crate::tournament::TeamId;

/// Answers every game at once (see the module's text); `reason` is the
/// crash's reason as the protocols and pages show it.
pub struct Synthetic {
    done: RefCell<VecDeque<Done>>,
    reason: &'static str,
}

impl Synthetic {
    pub fn new(reason: &'static str) -> Synthetic {
        Synthetic {
            done: RefCell::new(VecDeque::new()),
            reason,
        }
    }
}

impl Runner for Synthetic {
    fn capacity(&self) -> usize {
        64
    }
    fn submit(&self, job: Job) {
        let seed = job.game.seed;
        let failures = if job.game.players[0] == TeamId(1) {
            vec![Failure {
                player: 0,
                throw: 1,
                kind: FailureKind::Crashed {
                    signal: 11,
                    trap: None,
                },
                reason: self.reason.into(),
            }]
        } else {
            Vec::new()
        };
        let record = GameRecord {
            seed,
            points: [seed % 997, (seed >> 20) % 997],
            throws: Vec::new(),
            failures,
        };
        self.done
            .borrow_mut()
            .push_back(Done::played(job.game, record));
    }
    fn next_done(&self) -> Option<Done> {
        self.done.borrow_mut().pop_front()
    }
}
