//! A runner in this process that answers every job at once with the fake
//! worker's canned record: the engine and the store without any queue or
//! game, for the benchmarks' ceilings. Never used by a contest.

use std::cell::RefCell;
use std::collections::VecDeque;

use super::worker::canned_record;
use crate::engine::pool::{Done, Job, Runner};
use crate::referee::{GameRecord, RefereeConfig};
use crate::store::EncodedThrows;

/// A runner in this process that answers every job at once with a canned
/// record: the engine and the store without any queue.
///
/// The canned record is the same for every game but its seed, so it is
/// made once (its throws replayed for the points) and copied per game: the
/// benchmarks measure the engine's work around a game, not the fake game.
/// Its throws' encoding for the store is made once too and copied: a
/// pool's worker encodes a game's throws on its own thread
/// ([`Done::played`]), so that is the game's work, not the server's. As
/// a played game's, the record handed over has no throws of its own (they
/// are in the encoding alone): a pool's worker frees them itself.
pub struct InstantRunner {
    canned: GameRecord,
    encoded: EncodedThrows,
    done: RefCell<VecDeque<Done>>,
}

impl InstantRunner {
    pub fn new(referee: RefereeConfig) -> Self {
        let mut canned = canned_record(&referee, 0);
        let throws = std::mem::take(&mut canned.throws);
        InstantRunner {
            encoded: EncodedThrows::of(&throws),
            canned,
            done: RefCell::new(VecDeque::new()),
        }
    }
}

impl Runner for InstantRunner {
    fn capacity(&self) -> usize {
        512
    }

    fn submit(&self, job: Job) {
        let record = GameRecord {
            seed: job.game.seed,
            ..self.canned.clone()
        };
        self.done.borrow_mut().push_back(Done::played_encoded(
            job.game,
            record,
            self.encoded.clone(),
        ));
    }

    fn next_done(&self) -> Option<Done> {
        self.done.borrow_mut().pop_front()
    }

    /// The games answered are all there: stored in batches as a pool's.
    fn try_next_done(&self) -> Option<Done> {
        self.done.borrow_mut().pop_front()
    }
}
