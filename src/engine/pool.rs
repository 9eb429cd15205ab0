//! A pool of worker threads that play games. Each worker is pinned to one
//! CPU and plays one game at a time to its end: both strategies run on the
//! worker's thread ([`crate::wasm::seat`]), so a game never waits for
//! another thread and never blocks one that another game needs.
//!
//! The pool plays what it is given and hands back what happened; it never
//! decides what to play next (that is [`super::run`]'s job with the
//! tournament schedule). [`Runner`] is the seam: the local [`Pool`] is one
//! runner; games played on other machines are another.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::referee::{GameRecord, GameSeeds, Referee};
use crate::sandbox::{allowed_cpus, pin_current_thread};
use crate::store::EncodedThrows;
use crate::tournament::ScheduledGame;
use crate::wasm::Loaded;

/// A strategy program: its module's bytes and their SHA-256 (by which
/// another machine can fetch and verify it), and the module compiled for
/// this machine's engine (or why it cannot play), made ready where it is
/// first played ([`Program::strategy`]).
#[derive(Debug)]
pub struct Program {
    pub sha256: String,
    pub wasm: Vec<u8>,
    strategy: OnceLock<Loaded>,
}

impl Program {
    /// The program `wasm`, its module not made ready yet: the first
    /// [`Program::strategy`] compiles it (or takes it from the engine's
    /// cache or spill). The engine makes a group's programs ready at the
    /// group's start, on its own thread (made ready by the game threads
    /// instead, they cost those threads more than they saved the server's:
    /// `engine::run`'s `Players::load`); a pool's game thread makes ready
    /// any program it is given unready.
    pub fn new(wasm: Vec<u8>) -> Program {
        Program {
            sha256: super::prepare::sha256_hex(&wasm),
            wasm,
            strategy: OnceLock::new(),
        }
    }

    /// [`Program::new`], made ready at once (for a caller that plays it on
    /// its own thread: a replay).
    pub fn load(wasm: Vec<u8>) -> Result<Program, crate::wasm::WasmError> {
        let program = Program::new(wasm);
        program.strategy()?;
        Ok(program)
    }

    /// The module compiled for this machine's engine, or why it cannot
    /// play: made ready at the first call (one caller compiles or loads it,
    /// one that comes meanwhile waits for it), the same afterwards. `Err`:
    /// the engine could not be set up (tried again at the next call).
    pub fn strategy(&self) -> Result<&Loaded, crate::wasm::WasmError> {
        if let Some(loaded) = self.strategy.get() {
            return Ok(loaded);
        }
        let loaded = crate::wasm::load_hashed(&self.wasm, self.sha256.clone())?;
        Ok(self.strategy.get_or_init(|| loaded))
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
    /// A finished game if one comes within `wait`; `None` if none came
    /// (or the runner stopped: [`Runner::next_done`] says which). The
    /// default does not wait: [`Runner::try_next_done`].
    fn next_done_within(&self, _wait: Duration) -> Option<Done> {
        self.try_next_done()
    }
}

/// What a worker reports for a job.
///
/// A played game's record and its throws' encoding for the store can only
/// be changed together: the record is read through [`Done::result`], and
/// [`Done::record_mut`] gives up the encoding, so a stored encoding is
/// always the one of the throws stored beside it.
pub struct Done {
    pub game: ScheduledGame,
    /// `Err` is an infrastructure fault (the game could not be refereed).
    /// With `encoded` there, the record's `throws` are empty: they are in
    /// `encoded` alone ([`Done::played`]).
    result: Result<GameRecord, String>,
    /// The record's throws encoded for the store, where the runner made
    /// them ([`Done::played`]: on the game's own thread); `None`: the
    /// server's thread encodes them (the record's `throws`) when it stores
    /// the game.
    encoded: Option<EncodedThrows>,
}

impl Done {
    /// A game played to its record, its throws encoded for the store here
    /// (a pool's worker calls it: the throws are still in its cache, and
    /// the server's thread, which stores every game, is spared the work).
    /// The record's throws (16 bytes a throw, 16 kB for a game of 1000)
    /// are taken out of it and freed here too, by the thread that made
    /// them: the server's thread needs only their encoding, and freeing
    /// them there was 4 % of its work at 400 real teams (memory of another
    /// thread's arena).
    pub fn played(game: ScheduledGame, mut record: GameRecord) -> Done {
        let throws = std::mem::take(&mut record.throws);
        let encoded = EncodedThrows::of(&throws);
        drop(throws);
        Done {
            game,
            encoded: Some(encoded),
            result: Ok(record),
        }
    }

    /// A game played to `record` whose throws the caller took out and
    /// encoded already (`encoded` must be `EncodedThrows::of` of them, and
    /// `record.throws` empty: debug builds check it where the game is
    /// stored). For runners that copy one canned record.
    pub(crate) fn played_encoded(
        game: ScheduledGame,
        record: GameRecord,
        encoded: EncodedThrows,
    ) -> Done {
        Done {
            game,
            result: Ok(record),
            encoded: Some(encoded),
        }
    }

    /// A game the infrastructure could not referee (`error` says why).
    pub fn failed(game: ScheduledGame, error: String) -> Done {
        Done {
            game,
            result: Err(error),
            encoded: None,
        }
    }

    /// The game's record, or why the infrastructure could not referee it.
    pub fn result(&self) -> &Result<GameRecord, String> {
        &self.result
    }

    /// The record to change (tests' runners do), its throws whole again
    /// (read back from their encoding) and the encoding given up: the
    /// server's thread encodes the changed throws.
    pub fn record_mut(&mut self) -> Option<&mut GameRecord> {
        let record = self.result.as_mut().ok()?;
        if let Some(encoded) = self.encoded.take() {
            record.throws =
                crate::store::decode_throws(encoded.bytes(), crate::store::THROWS_FORMAT)
                    .expect("an encoding made by EncodedThrows::of reads back");
        }
        Some(record)
    }

    /// The game, its record and its throws in their stored form (made here if the
    /// runner did not), for the store; `None` for a failed game.
    pub(crate) fn for_store(&mut self) -> Option<(&ScheduledGame, &GameRecord, EncodedThrows)> {
        let taken = self.encoded.take();
        let record = self.result.as_ref().ok()?;
        let encoded = match taken {
            Some(encoded) => {
                // Its throws are in the encoding alone ([`Done::played`]);
                // changing the record gives the encoding up.
                debug_assert!(record.throws.is_empty());
                encoded
            }
            None => EncodedThrows::of(&record.throws),
        };
        Some((&self.game, record, encoded))
    }
}

/// The running workers.
pub struct Pool {
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    n_workers: usize,
    /// The mean time of a game lately, in nanoseconds (0: none played
    /// yet), by which [`Runner::capacity`] keeps the workers busy.
    game_ns: Arc<AtomicU64>,
    /// Set when the pool is dropped: the jobs still queued are not played.
    closing: Arc<AtomicBool>,
}

/// About how much play each worker is given ahead ([`Runner::capacity`]):
/// enough that the workers keep playing while the engine stores results
/// and the observers write mails and pages, little enough that a stop
/// waits for no more.
const QUEUED_PLAY: Duration = Duration::from_millis(100);

/// The most games queued per worker, however short they are.
const MAX_QUEUED_PER_WORKER: u64 = 256;

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
        let game_ns = Arc::new(AtomicU64::new(0));
        let closing = Arc::new(AtomicBool::new(false));
        let workers = (0..n_workers)
            .map(|i| {
                let rx = job_rx.clone();
                let tx = done_tx.clone();
                let referee = referee.clone();
                let cpu = cpus[i % cpus.len()];
                let game_ns = game_ns.clone();
                let closing = closing.clone();
                std::thread::Builder::new()
                    .name(format!("referee-{i}"))
                    .spawn(move || {
                        let _ = pin_current_thread(cpu);
                        let _count = CountCpu;
                        for job in rx {
                            if closing.load(Ordering::Relaxed) {
                                break;
                            }
                            // The programs made ready here, before the
                            // game's clock (a module the cache dropped is
                            // loaded on this thread, not the server's).
                            let ready = job.programs[0]
                                .strategy()
                                .and_then(|p| Ok([p, job.programs[1].strategy()?]));
                            let done = match ready {
                                Ok(players) => {
                                    let started = Instant::now();
                                    let result = referee.play_loaded(players, job.seeds);
                                    record_game_time(&game_ns, started.elapsed());
                                    match result {
                                        Ok(record) => Done::played(job.game, record),
                                        Err(e) => Done::failed(job.game, e.to_string()),
                                    }
                                }
                                Err(e) => Done::failed(job.game, e.to_string()),
                            };
                            if tx.send(done).is_err() {
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
            game_ns,
            closing,
        }
    }

    pub fn n_workers(&self) -> usize {
        self.n_workers
    }
}

/// CPU time (user and system) of the pools' game threads that have
/// ended, in nanoseconds: each adds its own as it ends ([`CountCpu`]).
static GAME_THREADS_CPU_NS: AtomicU64 = AtomicU64::new(0);

/// The CPU time of every pool's game threads that have ended (a pool's
/// end their join): their own, without the process's other threads (the
/// server's, the watchdog's, the store's checkpoints). For benchmarks,
/// which read it before and after a pool's life.
pub fn game_threads_cpu() -> Duration {
    Duration::from_nanos(GAME_THREADS_CPU_NS.load(Ordering::Relaxed))
}

/// Adds its thread's CPU time to [`GAME_THREADS_CPU_NS`] when dropped (at
/// a game thread's end, however it ends).
struct CountCpu;

impl Drop for CountCpu {
    fn drop(&mut self) {
        // SAFETY: clock_gettime fills a valid struct.
        let t = unsafe {
            let mut t: libc::timespec = std::mem::zeroed();
            libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
            t
        };
        let ns = t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
        GAME_THREADS_CPU_NS.fetch_add(ns, Ordering::Relaxed);
    }
}

/// Folds one game's time into the running mean (an eighth of each new
/// game; the first game sets it).
fn record_game_time(game_ns: &AtomicU64, took: Duration) {
    let took = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1);
    let _ = game_ns.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |mean| {
        Some(if mean == 0 {
            took
        } else {
            mean - mean / 8 + took / 8
        })
    });
}

/// Games to keep submitted per worker for games of `game_ns` each: about
/// [`QUEUED_PLAY`] of play, at least two (one playing, one waiting), at
/// most [`MAX_QUEUED_PER_WORKER`]; two while no game was timed yet.
fn queued_per_worker(game_ns: u64) -> u64 {
    if game_ns == 0 {
        return 2;
    }
    (QUEUED_PLAY.as_nanos() as u64 / game_ns).clamp(2, MAX_QUEUED_PER_WORKER)
}

impl Runner for Pool {
    /// About [`QUEUED_PLAY`] of games per worker (by the mean time of the
    /// games played lately): the workers go on playing while the engine
    /// and its observers work. How many games are in flight never changes
    /// a result (the schedule applies them in slot order).
    fn capacity(&self) -> usize {
        self.n_workers * queued_per_worker(self.game_ns.load(Ordering::Relaxed)) as usize
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

    fn next_done_within(&self, wait: Duration) -> Option<Done> {
        self.done.recv_timeout(wait).ok()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Finish the games being played (one per worker), not those still
        // queued, then stop.
        self.closing.store(true, Ordering::Relaxed);
        self.jobs.take();
        while self.done.try_recv().is_ok() {}
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_worker_is_given_about_a_tenth_of_a_second_of_games() {
        assert_eq!(queued_per_worker(0), 2, "nothing timed yet");
        assert_eq!(queued_per_worker(400_000), 250, "games of 0.4 ms");
        assert_eq!(queued_per_worker(1_000), MAX_QUEUED_PER_WORKER);
        assert_eq!(queued_per_worker(2_000_000_000), 2, "games of 2 s");
    }

    #[test]
    fn the_mean_game_time_follows_the_games() {
        let mean = AtomicU64::new(0);
        record_game_time(&mean, Duration::from_millis(8));
        assert_eq!(mean.load(Ordering::Relaxed), 8_000_000);
        record_game_time(&mean, Duration::from_millis(16));
        assert_eq!(mean.load(Ordering::Relaxed), 9_000_000);
    }

    /// A played game hands over its throws in their encoding alone: the
    /// record keeps its seed, points and failures, its throws are taken
    /// out (freed on the game's thread, not the server's), and the
    /// encoding is the one of the throws it had.
    #[test]
    fn a_played_games_throws_are_in_its_encoding_alone() {
        let throws: Vec<[i64; 2]> = (1..=1000).map(|i| [i, i % 7 + 1]).collect();
        let record = GameRecord {
            seed: 42,
            points: [3, 5],
            throws: throws.clone(),
            failures: Vec::new(),
        };
        let game = ScheduledGame {
            key: crate::tournament::schedule::GameKey {
                round: 1,
                group: 2,
                slot: 3,
            },
            players: [crate::tournament::TeamId(1), crate::tournament::TeamId(2)],
            members: [0, 1],
            attempt: 1,
            seed: 42,
        };
        let d = Done::played(game, record);
        let r = d.result.as_ref().unwrap();
        assert!(r.throws.is_empty());
        assert_eq!((r.seed, r.points), (42, [3, 5]));
        assert_eq!(d.encoded, Some(EncodedThrows::of(&throws)));
    }

    /// A program a pool is given unready (its module compiled, or loaded
    /// back from the module spill, by no one yet) is made ready on the game
    /// thread that plays it, not on the thread that submitted the game.
    #[test]
    fn a_program_given_unready_is_made_ready_on_the_game_thread() {
        use crate::wasm::check::{straight_line_module, StraightLine};
        // Modules of sizes no other test compiles: not in the cache.
        let programs = [3917, 3919].map(|bytes| {
            Arc::new(Program::new(straight_line_module(
                StraightLine::Chain,
                1,
                bytes,
            )))
        });
        let before = crate::wasm::made_ready_here();
        let pool = Pool::start(1, Referee::new(Default::default()));
        let game = ScheduledGame {
            key: crate::tournament::schedule::GameKey {
                round: 1,
                group: 1,
                slot: 0,
            },
            players: [crate::tournament::TeamId(1), crate::tournament::TeamId(2)],
            members: [0, 1],
            attempt: 1,
            seed: 7,
        };
        pool.submit(Job {
            game,
            programs: programs.clone(),
            seeds: GameSeeds::new(&crate::seed::SeedKey::public_from_seed(7), 7),
        });
        let done = pool.next_done().expect("the game comes back");
        assert!(
            done.result().is_ok(),
            "refereed: {:?}",
            done.result().as_ref().err()
        );
        assert_eq!(
            crate::wasm::made_ready_here(),
            before,
            "none on this thread"
        );
        for p in &programs {
            assert!(
                p.strategy.get().is_some(),
                "made ready by the game's thread"
            );
        }
    }
}
