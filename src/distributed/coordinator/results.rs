//! What workers send back to a session: a result counts only while its
//! game is in flight (the first one wins) and after the task's check; a
//! game a job's answer left out, or a worker could not play, goes to
//! another worker, and after [`MAX_FAULTING_WORKERS`] workers back to the
//! engine as an infrastructure fault.
//!
//! Who answered is the subject's last token (`knobeln.results.<session>.
//! <worker>`), never the body's word: the NATS server lets each worker's
//! user publish on its own subject only, so a stolen worker credential can
//! at most make that one worker's faults, and [`MAX_FAULTING_WORKERS`]
//! counts distinct identities the server vouches for. A fault counts only
//! for a game the job its answer names carries now (a late fault from an
//! earlier job of the game, or one for a game of another job, is ignored
//! and counted as stale). Without per-worker users on the server (a NATS
//! server without authorization, as in most tests) the subject is the
//! worker's own choice, and nothing is vouched for.
//!
//! Not here: the session's loop and state (`session.rs`) and publishing
//! (`publish.rs`).

use std::collections::HashSet;
use std::time::Instant;

use async_nats::jetstream;

use super::session::Coordinator;
use super::task::Task;
use crate::distributed::queue::worker_of_subject;
use crate::distributed::wire::{self, GameIdent, Outcome, ResultMessage};

/// A game that this many different workers could not play goes back to
/// the engine as an infrastructure fault.
const MAX_FAULTING_WORKERS: usize = 3;

/// A worker's name as it may appear in our logs.
fn printable_name(name: &str) -> String {
    let n: String = name.chars().filter(|c| !c.is_control()).take(64).collect();
    if n.is_empty() {
        "(unnamed)".into()
    } else {
        n
    }
}

impl<T: Task> Coordinator<T> {
    pub(super) async fn result(
        &mut self,
        msg: jetstream::Message,
        done: &crossbeam_channel::Sender<T::Done>,
    ) {
        // Taken into memory now; should this process die before the engine
        // stores it, the next run plays the game again.
        let _ = msg.ack().await;
        let r = match ResultMessage::decode(&msg.payload) {
            Ok(r) => r,
            Err(e) => {
                self.warn(&format!("a result that cannot be read was ignored: {e}"));
                return;
            }
        };
        if r.session != self.session {
            return;
        }
        // The identity the server vouches for: the subject's, and the body
        // must say the same.
        let Some(worker) = worker_of_subject(msg.subject.as_str(), &self.session) else {
            self.warn(&format!(
                "an answer on subject {} names no worker; ignored",
                printable_name(msg.subject.as_str())
            ));
            return;
        };
        if r.worker != worker {
            self.warn(&format!(
                "an answer on worker {worker}'s subject names worker {}; ignored",
                printable_name(&r.worker)
            ));
            return;
        }
        let worker = worker.to_string();
        self.last_result = Instant::now();
        let mut answered = HashSet::new();
        for wire::GameResult { game, outcome } in r.results {
            if game.tournament != self.scope || !answered.insert(game) {
                continue;
            }
            self.game_result(game, &worker, &r.job, outcome, done);
        }
        // A job is answered as a whole: a game its answer left out goes
        // back to the queue (unless another job carries it by now).
        if let Some(sent) = self.jobs.remove(&r.job) {
            for game in sent.games {
                let carried = self
                    .in_flight
                    .get(&game)
                    .is_some_and(|p| p.job.as_deref() == Some(r.job.as_str()));
                if carried && !answered.contains(&game) {
                    self.fault(
                        game,
                        &worker,
                        "its answer to the job left this game out".into(),
                        done,
                    );
                }
            }
        }
    }

    /// One game's outcome from a worker.
    pub(super) fn game_result(
        &mut self,
        game: GameIdent,
        worker: &str,
        job: &str,
        outcome: Outcome,
        done: &crossbeam_channel::Sender<T::Done>,
    ) {
        let Some(p) = self.in_flight.get(&game) else {
            // Played twice (redelivered after ack_wait, or published again
            // after a fault): the first result counted.
            self.duplicates += 1;
            return;
        };
        // A fault is tied to the job that carries the game now: one from
        // an earlier job of the game (late, or played twice), or naming a
        // job that does not carry it, changes nothing. A played record
        // counts whichever job brought it (it is checked on its own).
        let carried = p.job.as_deref() == Some(job);
        match outcome {
            Outcome::Fault(_) if !carried => self.stale_faults += 1,
            Outcome::Fault(error) => {
                let error: String = error.chars().take(500).collect();
                self.fault(game, worker, error, done)
            }
            played => match p.task.accept(played) {
                Ok(d) => {
                    self.in_flight.remove(&game);
                    self.workers.entry(worker.to_string()).or_default().games += 1;
                    let _ = done.send(d);
                }
                Err(_) if !carried => self.stale_faults += 1,
                Err(why) => self.fault(
                    game,
                    worker,
                    format!("sent a record no referee can have made ({why})"),
                    done,
                ),
            },
        }
    }

    /// A worker could not play a game: report it, and give the game to
    /// another worker (or, after three workers, to the engine as a fault).
    pub(super) fn fault(
        &mut self,
        ident: GameIdent,
        worker: &str,
        error: String,
        done: &crossbeam_channel::Sender<T::Done>,
    ) {
        let stats = self.workers.entry(worker.to_string()).or_default();
        stats.faults += 1;
        stats.last_fault = error.clone();
        let faults = stats.faults;
        eprintln!(
            "knobeln: worker {worker} could not play the game of {ident}: {error} \
             (an infrastructure fault, not the participants'; the game goes back to the queue)"
        );
        if faults == 3 {
            eprintln!(
                "knobeln: worker {worker} keeps failing games for infrastructure reasons \
                 ({faults} so far); other workers play them. Check that machine."
            );
        }
        let Some(p) = self.in_flight.get_mut(&ident) else {
            return;
        };
        p.faulted_on.insert(worker.to_string());
        if p.faulted_on.len() >= MAX_FAULTING_WORKERS {
            let p = self.in_flight.remove(&ident).expect("in flight");
            let why = format!(
                "{} workers could not play it ({}); last: {error}",
                p.faulted_on.len(),
                p.faulted_on.iter().cloned().collect::<Vec<_>>().join(", ")
            );
            let _ = done.send(p.task.failed(why));
            return;
        }
        // Before the game is published again, its programs are looked up
        // in the store again (and put there if missing); a program the
        // worker names in its error (it could not fetch it, or it came with
        // another hash) is put there again in any case, once per worker
        // that names it (its error is its claim: a stolen credential
        // naming the programs in every fault would have them put after
        // every fault). Not every program after every fault: putting one
        // replaces its chunks, which would pull them from under workers
        // that are reading it.
        for prog in &p.programs {
            let sha = prog.sha256();
            self.uploaded.remove(sha);
            if error.contains(sha)
                && self
                    .reupload_asked
                    .insert((sha.to_string(), worker.to_string()))
            {
                self.reupload.insert(sha.to_string());
            }
        }
        p.job = None;
        self.wait_for_job(ident);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_names_in_logs_are_printable_and_short() {
        assert_eq!(printable_name("w1\n\x1b[31m"), "w1[31m");
        assert_eq!(printable_name(&"x".repeat(100)).len(), 64);
        assert_eq!(printable_name(""), "(unnamed)");
    }
}
