//! Games the queue lost. A NATS server killed and started again may come
//! back without a job it had confirmed, without a result a worker had
//! published, or with a consumer that no longer delivers a job it still
//! stores (its state on disk and its messages disagree after an unclean
//! stop). JetStream then never gives those games to anyone, and a session
//! that only waited would wait for ever.
//!
//! So when no result has come for a while (`QueueSettings::stall_after`) with games in
//! flight, the session asks the queue: if the workers' consumer of its
//! kind has no job waiting and none held by a worker, and no result waits
//! for this session, every game of its published jobs was lost on the
//! way (games held back while enough jobs were out, `publish.rs`, still
//! wait for a job of their own, and count no loss); the
//! tournament's jobs left in the stream (undeliverable) are dropped and the
//! games are published again in new jobs, their programs looked up in the
//! store again. A game played twice is counted once (a result counts only
//! while its game is in flight), so asking too early costs work, never a
//! result; a game lost three times goes back to the engine as an
//! infrastructure fault. Results that wait but do not come twice in a row
//! mean a broken results consumer: it is made again. A consumer the server
//! lost is created again. (Other sessions of the same kind holding jobs
//! delay the check: they are counted by the same consumer.)
//!
//! Not here: ordinary redelivery (a silent worker's job comes back after
//! `ack_wait` by JetStream itself), and the warning for missing workers
//! (`session.rs`'s watchdog).

use std::future::IntoFuture;
use std::time::{Duration, Instant};

use super::session::{create_results_consumer, results_consumer_name, Coordinator};
use super::task::Task;
use crate::distributed::queue::{
    ensure_queue, jobs_subject, workers_consumer, JOBS_STREAM, RESULTS_STREAM,
};

/// What the queue holds for a session, as its consumers count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct QueueState {
    /// Jobs of its kind waiting for a worker.
    pub jobs_waiting: u64,
    /// Jobs of its kind a worker holds (delivered, not acknowledged).
    pub jobs_held: u64,
    /// Results waiting for this session.
    pub results_waiting: u64,
}

impl QueueState {
    /// Whether nothing in the queue can still bring a result: the games in
    /// flight were lost.
    pub fn holds_nothing(self) -> bool {
        self.jobs_waiting == 0 && self.jobs_held == 0 && self.results_waiting == 0
    }
}

/// How often a game may be lost before it goes back to the engine as an
/// infrastructure fault (a job no worker of this version can take is
/// terminated unanswered, every time).
const MAX_LOSSES: u32 = 3;

/// How long a question to the queue may take before the check gives up
/// for this time (the session's loop waits meanwhile).
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

impl<T: Task> Coordinator<T> {
    /// Publishes the games in flight again when the queue lost them (see
    /// the module's documentation); at most once per `stall_after`.
    pub(super) async fn recover_lost(&mut self, done: &crossbeam_channel::Sender<T::Done>) {
        let quiet = self.last_result.elapsed();
        if self.in_flight.is_empty() || quiet < self.stall_after {
            // Results come: nothing is stuck.
            self.results_were_waiting = false;
            return;
        }
        if self.last_recovery_check.elapsed() < self.stall_after
            // Something of ours is still on its way into the queue (games
            // held back while enough jobs are out are not: those jobs are
            // what is asked about).
            || (!self.to_publish.is_empty() && !self.held_back)
            || !self.republish.is_empty()
            || !self.acks.is_empty()
        {
            return;
        }
        self.last_recovery_check = Instant::now();
        let state = match tokio::time::timeout(ASK_TIMEOUT, self.queue_state()).await {
            Ok(Ok(s)) => s,
            // The server is not back yet, or it lost a consumer: create
            // what is missing (nothing changes where all is there) and ask
            // again next time.
            Ok(Err(e)) => {
                self.warn(&format!("asking the queue what it holds: {e}"));
                self.repair().await;
                return;
            }
            Err(_) => return,
        };
        if state.results_waiting > 0 {
            // Results are there but did not come: read them anew; if they
            // still do not come, the consumer is broken: make it again
            // (the stream keeps the results until they are acknowledged).
            if self.results_were_waiting {
                self.warn("results wait in the queue but do not come: reading them anew");
                let _ = tokio::time::timeout(ASK_TIMEOUT, self.repair()).await;
                self.results_were_waiting = false;
            } else {
                self.results_were_waiting = true;
            }
            self.results = None;
            return;
        }
        self.results_were_waiting = false;
        if !state.holds_nothing() {
            return;
        }
        // Undeliverable leftovers of this tournament's jobs go first, so
        // that only the new jobs carry the games.
        if let Ok(Ok(stream)) =
            tokio::time::timeout(ASK_TIMEOUT, self.js.get_stream(JOBS_STREAM)).await
        {
            let _ = tokio::time::timeout(
                ASK_TIMEOUT,
                stream
                    .purge()
                    .filter(jobs_subject(self.kind, self.scope))
                    .into_future(),
            )
            .await;
        }
        // The games of published jobs; those held back still wait for one.
        let mut lost: Vec<_> = self
            .in_flight
            .iter()
            .filter(|(_, p)| p.job.is_some())
            .map(|(ident, _)| *ident)
            .collect();
        lost.sort_unstable();
        self.jobs.clear();
        self.held_back = false;
        let mut again = 0u64;
        for ident in lost.iter().copied() {
            let Some(p) = self.in_flight.get_mut(&ident) else {
                continue;
            };
            p.lost += 1;
            if p.lost >= MAX_LOSSES {
                let p = self.in_flight.remove(&ident).expect("in flight");
                let _ = done.send(p.task.failed(format!(
                    "the queue lost it {} times (no worker answered it)",
                    p.lost
                )));
                continue;
            }
            p.job = None;
            // Its programs may be lost too: looked up in the store again
            // before the game is published.
            for prog in &p.programs {
                self.uploaded.remove(prog.sha256());
            }
            self.wait_for_job(ident);
            again += 1;
        }
        self.recovered += again;
        self.last_result = Instant::now();
        eprintln!(
            "knobeln: no result for {} s and the queue holds none of the {} games in flight \
             (a NATS server restarted without them?): {again} published again",
            quiet.as_secs(),
            lost.len()
        );
    }

    /// Creates again what the queue may have lost: its streams and the
    /// workers' consumers, and this session's results consumer (each found
    /// as it is when it exists).
    async fn repair(&mut self) {
        if ensure_queue(&self.js, &self.settings).await.is_err() {
            return;
        }
        if let Ok(c) = create_results_consumer(&self.js, &self.session).await {
            self.results_consumer = c;
            self.results = None;
        }
    }

    /// What the workers' consumer of this kind and this session's results
    /// consumer count.
    async fn queue_state(&mut self) -> Result<QueueState, String> {
        let jobs = self
            .js
            .get_stream(JOBS_STREAM)
            .await
            .map_err(|e| e.to_string())?
            .consumer_info(workers_consumer(self.kind))
            .await
            .map_err(|e| e.to_string())?;
        let results = self
            .js
            .get_stream(RESULTS_STREAM)
            .await
            .map_err(|e| e.to_string())?
            .consumer_info(results_consumer_name(&self.session))
            .await
            .map_err(|e| e.to_string())?;
        Ok(QueueState {
            jobs_waiting: jobs.num_pending,
            jobs_held: jobs.num_ack_pending as u64,
            results_waiting: results.num_pending + results.num_ack_pending as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_queue_without_jobs_or_results_lost_the_games() {
        let none = QueueState {
            jobs_waiting: 0,
            jobs_held: 0,
            results_waiting: 0,
        };
        assert!(none.holds_nothing());
        for s in [
            QueueState {
                jobs_waiting: 1,
                ..none
            },
            QueueState {
                jobs_held: 1,
                ..none
            },
            QueueState {
                results_waiting: 1,
                ..none
            },
        ] {
            assert!(!s.holds_nothing(), "{s:?}");
        }
    }
}
