//! KNOBELN games on the queue: [`KnobelnTask`], an engine job as a
//! [`Task`] (its record checked with [`wire::check_record`]), and
//! [`NatsRunner`], the engine's [`Runner`] on a [`NatsQueue`] of them.
//!
//! Not here: the queue's workings (`session.rs`) and deciding anything
//! about the tournament (the engine's).

use std::sync::Arc;

use super::handle::NatsQueue;
use super::task::{Task, Upload};
use crate::distributed::queue::{DistributedError, NatsOptions, QueueSettings};
use crate::distributed::wire::{self, Discipline, GameIdent, Outcome, Play};
use crate::engine::pool::{Done, Job, Runner};
use crate::referee::RefereeConfig;

/// A KNOBELN game of the engine.
pub struct KnobelnTask {
    pub tournament: i64,
    pub referee: RefereeConfig,
    pub job: Job,
}

impl Task for KnobelnTask {
    type Done = Done;

    fn ident(&self) -> GameIdent {
        GameIdent::new(self.tournament, self.job.game.key, self.job.game.attempt)
    }

    fn play(&self) -> Play {
        Play::Knobeln {
            referee: self.referee,
            programs: [
                self.job.programs[0].sha256.clone(),
                self.job.programs[1].sha256.clone(),
            ],
            seeds: self.job.seeds.into(),
        }
    }

    fn programs(&self) -> Vec<Arc<dyn Upload>> {
        self.job
            .programs
            .iter()
            .map(|p| p.clone() as Arc<dyn Upload>)
            .collect()
    }

    fn accept(&self, outcome: Outcome) -> Result<Done, String> {
        match outcome {
            Outcome::Played(record) => {
                let record = wire::check_record(&self.referee, self.job.game.seed, record)?;
                Ok(Done::played(self.job.game.clone(), record))
            }
            _ => Err("the result of another kind of game".into()),
        }
    }

    fn failed(self, error: String) -> Done {
        Done::failed(self.job.game, error)
    }
}

/// Plays a tournament's games on workers through NATS JetStream.
pub struct NatsRunner {
    queue: NatsQueue<KnobelnTask>,
    tournament: i64,
    referee: RefereeConfig,
}

impl NatsRunner {
    /// Connects and starts taking the tournament's jobs ([`NatsQueue::start`]).
    pub fn start(
        options: &NatsOptions,
        settings: &QueueSettings,
        tournament: i64,
        referee: RefereeConfig,
    ) -> Result<NatsRunner, DistributedError> {
        Ok(NatsRunner {
            queue: NatsQueue::start(options, settings, Discipline::Knobeln, tournament)?,
            tournament,
            referee,
        })
    }
}

impl Runner for NatsRunner {
    fn capacity(&self) -> usize {
        self.queue.capacity()
    }

    fn submit(&self, job: Job) {
        self.queue.submit(KnobelnTask {
            tournament: self.tournament,
            referee: self.referee,
            job,
        });
    }

    fn next_done(&self) -> Option<Done> {
        self.queue.next_done()
    }

    /// A job's answer brings many games at once: the engine stores them in
    /// one transaction, as the local pool's (not one commit per game).
    fn try_next_done(&self) -> Option<Done> {
        self.queue.try_next_done()
    }
}
