//! A pool of worker threads that play games. Each worker is pinned to one
//! CPU and plays one game at a time to its end: both strategies run on the
//! worker's thread ([`crate::wasm::seat`]), so a game never waits for
//! another thread and never blocks one that another game needs.
//!
//! The pool plays what it is given and hands back what happened; it never
//! decides what to play next (that is [`super::run`]'s job with the
//! tournament schedule). [`Runner`] is the seam: the local [`Pool`] is one
//! runner; games played on other machines are another.

use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::referee::{GameRecord, GameSeeds, Referee};
use crate::sandbox::{allowed_cpus, pin_current_thread};
use crate::tournament::ScheduledGame;
use crate::wasm::Loaded;

/// A strategy program: its module's bytes and their SHA-256 (by which
/// another machine can fetch and verify it), and the module compiled for
/// this machine's engine (or why it cannot play).
#[derive(Debug)]
pub struct Program {
    pub sha256: String,
    pub wasm: Vec<u8>,
    pub strategy: Loaded,
}

impl Program {
    /// Compiles (or takes from the engine's cache) the module `wasm`.
    pub fn load(wasm: Vec<u8>) -> Result<Program, crate::wasm::WasmError> {
        let sha256 = super::prepare::sha256_hex(&wasm);
        Ok(Program {
            strategy: crate::wasm::load_hashed(&wasm, sha256.clone())?,
            sha256,
            wasm,
        })
    }
}

/// A game to play: what the schedule says, the two programs, and the seeds
/// of the game and of its players' generators (never the tournament's key).
pub struct Job {
    pub game: ScheduledGame,
    pub programs: [Arc<Program>; 2],
    pub seeds: GameSeeds,
}

/// Plays games: takes jobs, hands back what happened, in any order. The
/// engine applies results in schedule order, so a runner's order and
/// timing never change the results.
pub trait Runner {
    /// How many games the engine should keep submitted at once.
    fn capacity(&self) -> usize;
    fn submit(&self, job: Job);
    /// Waits for the next finished game; `None` when the runner stopped.
    fn next_done(&self) -> Option<Done>;
    /// A finished game if one is there, without waiting.
    fn try_next_done(&self) -> Option<Done> {
        None
    }
}

/// What a worker reports for a job.
pub struct Done {
    pub game: ScheduledGame,
    /// `Err` is an infrastructure fault (the game could not be refereed).
    pub result: Result<GameRecord, String>,
}

/// The running workers.
pub struct Pool {
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    n_workers: usize,
}

impl Pool {
    /// Starts `n_workers` workers (at least one, at most
    /// [`crate::wasm::MAX_GAMES_AT_ONCE`]: the engine's pool has two
    /// instances per game), pinned round-robin to the CPUs this process
    /// may use.
    pub fn start(n_workers: usize, referee: Referee) -> Pool {
        let n_workers = n_workers.clamp(1, crate::wasm::MAX_GAMES_AT_ONCE);
        let cpus = allowed_cpus();
        let (job_tx, job_rx) = unbounded::<Job>();
        let (done_tx, done_rx) = unbounded::<Done>();
        let workers = (0..n_workers)
            .map(|i| {
                let rx = job_rx.clone();
                let tx = done_tx.clone();
                let referee = referee.clone();
                let cpu = cpus[i % cpus.len()];
                std::thread::Builder::new()
                    .name(format!("referee-{i}"))
                    .spawn(move || {
                        let _ = pin_current_thread(cpu);
                        for job in rx {
                            let result = referee
                                .play_loaded(
                                    [&job.programs[0].strategy, &job.programs[1].strategy],
                                    job.seeds,
                                )
                                .map_err(|e| e.to_string());
                            if tx
                                .send(Done {
                                    game: job.game,
                                    result,
                                })
                                .is_err()
                            {
                                break;
                            }
                        }
                    })
                    .expect("spawn a referee thread")
            })
            .collect();
        Pool {
            jobs: Some(job_tx),
            done: done_rx,
            workers,
            n_workers,
        }
    }

    pub fn n_workers(&self) -> usize {
        self.n_workers
    }
}

impl Runner for Pool {
    /// Two games per worker: one playing, one waiting.
    fn capacity(&self) -> usize {
        self.n_workers * 2
    }

    fn submit(&self, job: Job) {
        self.jobs
            .as_ref()
            .expect("pool is open")
            .send(job)
            .expect("workers are alive");
    }

    fn next_done(&self) -> Option<Done> {
        self.done.recv().ok()
    }

    fn try_next_done(&self) -> Option<Done> {
        self.done.try_recv().ok()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs.take();
        // Finish what is in flight (at most one game per worker), then stop.
        while self.done.try_recv().is_ok() {}
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
