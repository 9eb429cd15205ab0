//! [`NatsQueue`], the caller's handle on a coordinator session: tasks go
//! in from the caller's thread, their `Done`s come back in any order, and
//! dropping it ends the session. It owns the small tokio runtime the
//! session runs on.
//!
//! Not here: what the session does with a task (`session.rs`), and any
//! kind of game (the [`Task`] decides).

use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::session::Coordinator;
use super::task::Task;
use crate::distributed::queue::{new_session, DistributedError, NatsOptions, QueueSettings};
use crate::distributed::wire::Discipline;

/// After a stop request, how long `next_done` still waits for the games in
/// flight before it gives up (they are played again on resume).
const STOP_GRACE: Duration = Duration::from_secs(30);

/// Games of one kind played by workers through NATS JetStream: submitted
/// tasks come back as their `Done`s, in any order.
pub struct NatsQueue<T: Task> {
    submit: mpsc::UnboundedSender<T>,
    done: crossbeam_channel::Receiver<T::Done>,
    capacity: usize,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl<T: Task> NatsQueue<T> {
    /// Connects, creates what is missing (streams, consumers, object
    /// store), drops jobs of `kind` a previous run for `scope` (the
    /// tournament or bot contest) left in the queue, and starts taking jobs.
    pub fn start(
        options: &NatsOptions,
        settings: &QueueSettings,
        kind: Discipline,
        scope: i64,
    ) -> Result<NatsQueue<T>, DistributedError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("knobeln-nats")
            .enable_all()
            .build()?;
        let session = new_session();
        let coordinator = runtime.block_on(Coordinator::<T>::connect(
            options, settings, kind, scope, session,
        ))?;
        let (submit_tx, submit_rx) = mpsc::unbounded_channel();
        let (done_tx, done_rx) = crossbeam_channel::unbounded();
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = runtime.spawn(coordinator.run(submit_rx, done_tx, stop_rx));
        Ok(NatsQueue {
            submit: submit_tx,
            done: done_rx,
            capacity: settings.in_flight.max(1),
            stop: Some(stop_tx),
            task: Some(task),
            runtime: Some(runtime),
        })
    }

    /// How many tasks to keep submitted at once.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn submit(&self, task: T) {
        // If the task is gone, `next_done` says so.
        let _ = self.submit.send(task);
    }

    /// A finished task if one is there, without waiting (the engine stores
    /// what came together in one transaction).
    pub fn try_next_done(&self) -> Option<T::Done> {
        self.done.try_recv().ok()
    }

    /// The next finished task; `None` when the queue is gone, or when a
    /// stop was requested and the games in flight did not come back in
    /// time (they are played again on resume).
    pub fn next_done(&self) -> Option<T::Done> {
        let mut stopping_since: Option<Instant> = None;
        loop {
            match self.done.recv_timeout(Duration::from_secs(1)) {
                Ok(d) => return Some(d),
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return None,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    if crate::engine::run::stop_requested() {
                        let since = *stopping_since.get_or_insert_with(Instant::now);
                        if since.elapsed() > STOP_GRACE {
                            eprintln!(
                                "knobeln: stopping without the games still in the queue \
                                 (they are played again when the contest resumes)"
                            );
                            return None;
                        }
                    }
                }
            }
        }
    }
}

impl<T: Task> Drop for NatsQueue<T> {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let (Some(rt), Some(task)) = (self.runtime.take(), self.task.take()) {
            rt.block_on(async {
                let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
            });
            rt.shutdown_timeout(Duration::from_secs(1));
        }
    }
}
