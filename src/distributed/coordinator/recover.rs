//! Games the queue lost. A NATS server killed and started again may come
//! back without a job it had confirmed, without a result a worker had
//! published, or with a consumer that no longer delivers a job it still
//! stores (its state on disk and its messages disagree after an unclean
//! stop). JetStream then never gives those games to anyone, and a session
//! that only waited would wait for ever.
//!
//! So when no result has come for a while (`QueueSettings::stall_after`) with games in
//! flight, the session asks the queue: if the workers' consumer has no job
//! waiting and none held by a worker, and no result waits for this
//! session, every game in flight was lost on the way; its session's jobs
//! left in the stream (undeliverable) are dropped and the games are
//! published again in new jobs. A game played twice is counted once (a
//! result counts only while its game is in flight), so asking too early
//! costs work, never a result.
//!
//! Not here: ordinary redelivery (a silent worker's job comes back after
//! `ack_wait` by JetStream itself), and the warning for missing workers
//! (`session.rs`'s watchdog).

use std::time::Instant;

use super::session::{results_consumer_name, Coordinator};
use super::task::Task;
use crate::distributed::queue::{jobs_subject, workers_consumer, JOBS_STREAM, RESULTS_STREAM};

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

impl<T: Task> Coordinator<T> {
    /// Publishes the games in flight again when the queue lost them (see
    /// the module's documentation); at most once per `stall_after`.
    pub(super) async fn recover_lost(&mut self) {
        let quiet = self.last_result.elapsed();
        if self.in_flight.is_empty()
            || quiet < self.stall_after
            || self.last_recovery_check.elapsed() < self.stall_after
            // Something of ours is still on its way into the queue.
            || !self.to_publish.is_empty()
            || !self.republish.is_empty()
            || !self.acks.is_empty()
        {
            return;
        }
        self.last_recovery_check = Instant::now();
        let state = match self.queue_state().await {
            Ok(s) => s,
            // The server is not back yet: ask again later.
            Err(e) => {
                self.warn(&format!("asking the queue what it holds: {e}"));
                return;
            }
        };
        if state.results_waiting > 0 {
            // Results are there but do not come: read them anew.
            self.results = None;
            return;
        }
        if !state.holds_nothing() {
            return;
        }
        // Undeliverable leftovers of this session's jobs go first, so that
        // only the new jobs carry the games.
        if let Ok(stream) = self.js.get_stream(JOBS_STREAM).await {
            let _ = stream
                .purge()
                .filter(jobs_subject(self.kind, self.scope))
                .await;
        }
        let lost: Vec<_> = self.in_flight.keys().copied().collect();
        self.jobs.clear();
        for ident in &lost {
            if let Some(p) = self.in_flight.get_mut(ident) {
                p.job = None;
            }
        }
        let mut lost = lost;
        lost.sort_unstable();
        for ident in lost.iter().copied() {
            self.wait_for_job(ident);
        }
        self.recovered += lost.len() as u64;
        self.last_result = Instant::now();
        eprintln!(
            "knobeln: no result for {} s and the queue holds none of the {} games in flight \
             (a NATS server restarted without them?): published again",
            quiet.as_secs(),
            lost.len()
        );
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
