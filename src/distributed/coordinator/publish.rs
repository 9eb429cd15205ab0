//! Publishing a session's games: each game waits for company in a job
//! (up to `wire::games_per_job`, at most [`LINGER`]), its programs are put
//! into the object store first (once per session, checked against their
//! hash), and a job the queue did not confirm is published again as it
//! was.
//!
//! Jobs of many games (KNOBELN's) are not all published at once: at most
//! [`games_ahead`] games are in jobs published and unanswered (two full
//! jobs a worker, one playing and one waiting, and one more), the other
//! games wait with the coordinator. While
//! the engine keeps its window full a job carries the most games; once
//! the window drains (a round's last games: the engine has nothing more to
//! hand over until these finish) each new job carries the waiting games
//! over the workers known ([`job_size`]), so a round's last jobs are a few
//! games each and no worker waits long for another's last job (guided
//! self-scheduling).
//!
//! Not here: the session's loop and state (`session.rs`) and what comes
//! back (`results.rs`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream;
use base64::Engine as _;

use super::session::{Coordinator, Pending, Sent, LINGER};
use super::task::{Task, Upload};
use crate::distributed::queue::{job_name, jobs_subject};
use crate::distributed::wire::{self, GameIdent, JobMessage};

/// The digest the object store keeps for bytes with this SHA-256 (hex).
fn object_digest(sha256_hex: &str) -> String {
    let raw: Vec<u8> = (0..sha256_hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(&sha256_hex[2 * i..2 * i + 2], 16).ok())
        .collect();
    format!(
        "SHA-256={}",
        base64::engine::general_purpose::URL_SAFE.encode(raw)
    )
}

impl<T: Task> Coordinator<T> {
    pub(super) fn add(&mut self, task: T) {
        let ident = task.ident();
        if self.in_flight.is_empty() {
            self.last_result = Instant::now();
        }
        let play = task.play();
        self.in_flight.insert(
            ident,
            Pending {
                programs: task.programs(),
                play,
                task,
                job: None,
                faulted_on: BTreeSet::new(),
                lost: 0,
            },
        );
        self.wait_for_job(ident);
    }

    /// The game goes into the next job published.
    pub(super) fn wait_for_job(&mut self, ident: GameIdent) {
        if self.to_publish.is_empty() {
            self.waiting_since = Some(Instant::now());
        }
        self.to_publish.push_back(ident);
    }

    /// The next job's name: the session, the job's number and a random
    /// part ([`job_name`]). Only the worker that took the job knows it, so
    /// an answer naming a job its worker never received (a stolen
    /// credential guessing `<session>-1`, `<session>-2`, …) names none the
    /// coordinator sent, and faults nothing.
    pub(super) fn next_job_name(&mut self) -> String {
        self.next_copy += 1;
        job_name(&self.session, self.next_copy)
    }

    /// Publishes what waits: jobs the queue did not confirm, then the
    /// waiting games in jobs (a full job at once, the rest after
    /// [`LINGER`]); on trouble, tries again a second later.
    pub(super) async fn publish_pending(&mut self) {
        if self.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        self.retry_at = None;
        while let Some(name) = self.republish.pop_front() {
            let Some(payload) = self.jobs.get(&name).and_then(|s| s.payload.clone()) else {
                continue;
            };
            if let Err(e) = self.send(&name, payload).await {
                self.warn(&e);
                self.republish.push_front(name);
                self.retry_at = Some(Instant::now() + Duration::from_secs(1));
                return;
            }
        }
        loop {
            while let Some(front) = self.to_publish.front() {
                if self.in_flight.contains_key(front) {
                    break;
                }
                self.to_publish.pop_front();
            }
            let Some(first) = self.to_publish.front() else {
                self.waiting_since = None;
                self.held_back = false;
                return;
            };
            let most = wire::games_per_job(&self.in_flight[first].play);
            let spread = wire::most_games_per_job(self.kind) > 1;
            let workers = self.workers.len();
            if spread
                && self.games_out() >= games_ahead(workers, wire::most_games_per_job(self.kind))
            {
                // The rest waits here until a job is answered.
                self.held_back = true;
                return;
            }
            self.held_back = false;
            let per_job = if spread {
                job_size(
                    most,
                    Window {
                        in_flight: self.in_flight.len(),
                        capacity: self.settings.in_flight,
                    },
                    self.to_publish.len(),
                    workers,
                )
            } else {
                most
            };
            let lingered = self.waiting_since.is_none_or(|t| t.elapsed() >= LINGER);
            if self.to_publish.len() < per_job && !lingered {
                return;
            }
            let mut games = Vec::with_capacity(per_job);
            while games.len() < per_job {
                let Some(ident) = self.to_publish.pop_front() else {
                    break;
                };
                if self.in_flight.contains_key(&ident) {
                    games.push(ident);
                }
            }
            if let Err(e) = self.publish_job(&games).await {
                self.warn(&e);
                for ident in games.into_iter().rev() {
                    self.to_publish.push_front(ident);
                }
                self.retry_at = Some(Instant::now() + Duration::from_secs(1));
                return;
            }
        }
    }

    /// How many games the jobs published and unanswered carry, counting
    /// only jobs that still carry a game in flight (those that carry none
    /// are forgotten: their games were answered by another job, or went
    /// back to the queue).
    pub(super) fn games_out(&mut self) -> usize {
        let in_flight = &self.in_flight;
        self.jobs.retain(|name, sent| {
            sent.games.iter().any(|g| {
                in_flight
                    .get(g)
                    .is_some_and(|p| p.job.as_deref() == Some(name.as_str()))
            })
        });
        self.jobs.values().map(|sent| sent.games.len()).sum()
    }

    /// Makes sure the games' programs are in the store, then publishes the
    /// games as one job.
    pub(super) async fn publish_job(&mut self, games: &[GameIdent]) -> Result<(), String> {
        let mut programs: Vec<Arc<dyn Upload>> = Vec::new();
        for ident in games {
            programs.extend(self.in_flight[ident].programs.iter().cloned());
        }
        for program in &programs {
            self.ensure_uploaded(program.as_ref()).await?;
        }
        let name = self.next_job_name();
        let message = JobMessage {
            format: wire::FORMAT,
            session: self.session.clone(),
            job: name.clone(),
            games: games
                .iter()
                .map(|ident| wire::GameJob {
                    game: *ident,
                    play: self.in_flight[ident].play.clone(),
                })
                .collect(),
        };
        let payload = message.encode();
        self.send(&name, payload.clone()).await?;
        for ident in games {
            if let Some(p) = self.in_flight.get_mut(ident) {
                p.job = Some(name.clone());
            }
        }
        self.jobs.insert(
            name,
            Sent {
                games: games.to_vec(),
                payload: Some(payload),
            },
        );
        Ok(())
    }

    /// Publishes a job's bytes under its name; the queue's confirmation
    /// comes later (`acks`).
    pub(super) async fn send(&mut self, name: &str, payload: Vec<u8>) -> Result<(), String> {
        let publish = jetstream::message::PublishMessage::build()
            .payload(payload.into())
            .message_id(name);
        let ack = self
            .js
            .send_publish(jobs_subject(self.kind, self.scope), publish)
            .await
            .map_err(|e| format!("publishing a job: {e}"))?;
        let name = name.to_string();
        self.acks.push(Box::pin(async move {
            (name, ack.await.map_err(|e| e.to_string()))
        }));
        Ok(())
    }

    /// Puts a program into the object store unless it is there with the
    /// right digest.
    pub(super) async fn ensure_uploaded(&mut self, program: &dyn Upload) -> Result<(), String> {
        let sha = program.sha256().to_string();
        if self.uploaded.contains(&sha) {
            return Ok(());
        }
        let expected = object_digest(&sha);
        let present = if self.reupload.contains(&sha) {
            false
        } else {
            match self.programs.info(&sha).await {
                Ok(info) => !info.deleted && info.digest.as_deref() == Some(expected.as_str()),
                Err(e) if e.kind() == jetstream::object_store::InfoErrorKind::NotFound => false,
                Err(e) => return Err(format!("looking up program {sha}: {e}")),
            }
        };
        if !present {
            let bytes = program
                .bytes()
                .map_err(|e| format!("reading program {sha}: {e}"))?;
            if crate::engine::prepare::sha256_hex(&bytes) != sha {
                return Err(format!(
                    "program {sha} does not have the hash it is stored under"
                ));
            }
            self.programs
                .put(sha.as_str(), &mut bytes.as_slice())
                .await
                .map_err(|e| format!("uploading program {sha}: {e}"))?;
        }
        self.reupload.remove(&sha);
        self.uploaded.insert(sha);
        Ok(())
    }
}

/// How many games may be in jobs published and unanswered at once, with
/// `workers` workers known (those that answered in this session) and jobs
/// of at most `full` games (`wire::most_games_per_job`): two full jobs a
/// worker (a worker holds the job it plays and takes the next when one
/// game of it is left) and one more, for a worker that has not answered
/// yet. Before any answer it counts one worker: a second one waits for
/// its first job until the first answer comes (once a session). Counted in
/// games, not jobs: under rules whose long records make jobs of a game or
/// a few (`wire::games_per_job`), a worker of many threads still gets as
/// many games as it has places for.
pub(super) fn games_ahead(workers: usize, full: usize) -> usize {
    (2 * workers.max(1) + 1) * full.max(1)
}

/// The engine's window of games: how many the session holds, and how many
/// the engine keeps handed over while it has more (`QueueSettings::
/// in_flight`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub(super) in_flight: usize,
    pub(super) capacity: usize,
}

/// The fewest games a job of a draining window carries (unless fewer
/// wait): a KNOBELN game of modules takes a quarter of a millisecond, so a
/// round's last job of 8 keeps another worker waiting about 2 ms, while a
/// job of its own costs about as much on the server, the coordinator and
/// the worker. (A fault's games also go back to the queue together, as
/// before: three faulting workers still meet each game.)
pub(super) const TAIL_GAMES: usize = 8;

/// How many games the next job carries (at most `most`). While the engine
/// keeps its window full (fewer than two full jobs missing: it hands over
/// a game for each one answered) the most; once the window drains, the
/// `waiting` games (those not in a job yet) over the workers known, but
/// not fewer than [`TAIL_GAMES`], so the jobs shrink as the round's work
/// does and its last ones are a few games (guided self-scheduling). The
/// caller takes fewer when fewer wait.
pub(super) fn job_size(most: usize, window: Window, waiting: usize, workers: usize) -> usize {
    let most = most.max(1);
    if window.in_flight + 2 * most > window.capacity {
        return most;
    }
    waiting
        .div_ceil(workers.max(1))
        .clamp(TAIL_GAMES.min(most), most)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_shrink_as_the_engines_window_drains_and_not_before() {
        let full = Window {
            in_flight: 1024,
            capacity: 1024,
        };
        // The window full, or one or two jobs' games short of it (answered,
        // not yet replaced): the most games a job.
        for in_flight in [1024, 1000, 897] {
            let w = Window { in_flight, ..full };
            assert_eq!(job_size(128, w, 384, 2), 128, "{in_flight}");
            assert_eq!(job_size(128, w, 3, 2), 128, "{in_flight}");
        }
        // Drained: the waiting games over the workers, at most the most.
        let drained = |in_flight| Window { in_flight, ..full };
        assert_eq!(job_size(128, drained(768), 384, 2), 128);
        assert_eq!(job_size(128, drained(640), 128, 2), 64);
        assert_eq!(job_size(128, drained(100), 40, 2), 20);
        // Not fewer than TAIL_GAMES (the caller takes what waits).
        assert_eq!(job_size(128, drained(100), 10, 2), TAIL_GAMES);
        assert_eq!(job_size(128, drained(3), 3, 2), TAIL_GAMES);
        // No worker known yet counts as one.
        assert_eq!(job_size(128, drained(36), 36, 0), 36);
        // Fewer games a job under rules with long records.
        assert_eq!(job_size(8, drained(100), 100, 2), 8);
        assert_eq!(job_size(1, drained(100), 100, 2), 1);
        // A window smaller than two jobs: always the most (as before).
        let small = Window {
            in_flight: 10,
            capacity: 100,
        };
        assert_eq!(job_size(128, small, 10, 2), 128);
    }

    #[test]
    fn a_round_ends_in_jobs_of_a_few_games() {
        // Two workers, the engine's window of 1024 drained (a round's
        // last games): five jobs of 128 are out, 384 games wait. Each
        // answer lets one job out; the jobs published after the drain,
        // in order.
        let (workers, capacity) = (2, 1024);
        let (mut waiting, mut out) = (384usize, 5 * 128usize);
        let mut sizes = Vec::new();
        while waiting > 0 {
            out -= 128.min(out); // an answer
            let window = Window {
                in_flight: waiting + out,
                capacity,
            };
            let n = job_size(128, window, waiting, workers).min(waiting);
            sizes.push(n);
            waiting -= n;
            out += n;
        }
        assert_eq!(sizes, [128, 128, 64, 32, 16, 8, 8]);
        assert_eq!(games_ahead(0, 128), 3 * 128);
        assert_eq!(games_ahead(2, 128), 5 * 128);
    }

    #[test]
    fn the_object_digest_is_the_stores_form_of_the_hash() {
        // SHA-256 of the empty string.
        let hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(
            object_digest(hex),
            "SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }
}
