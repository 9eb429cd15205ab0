//! Where the queue's wall time over the local pool's goes, in points of
//! the local pool's wall: an identity, not an estimate. On `cpus` cores a
//! run's wall time is `cpus × wall` of core time, and that is the CPU of
//! its parts plus the rest (cores idle, or busy with work outside the
//! run). So, per game, the queue's wall over the pool's is the sum of what
//! each part costs more plus what the rest costs more, each over the
//! pool's core time a game. The queue's own threads (the coordinator's
//! NATS thread, the workers' threads besides their games, the NATS server)
//! are the part that no scheduling can remove while they share the games'
//! cores: the floor of the overhead on such a machine.
//!
//! Pure: figures in, figures out. Not here: measuring them (`account.rs`)
//! or printing them (`print` in the parent).

use std::time::Duration;

/// What the runs of one kind (all the local pool's, or all the queue's)
/// took: their games, their wall time added up and the CPU of each part
/// (the local pool has no queue: its coordinator, workers' rest and NATS
/// are zero, and its game threads are the rest of the server's process).
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    pub games: usize,
    pub wall: Duration,
    pub engine: Duration,
    pub game_threads: Duration,
    pub coordinator: Duration,
    pub workers_rest: Duration,
    /// `None`: not measured (a NATS server the bench did not start).
    pub nats: Option<Duration>,
}

impl Spent {
    fn used(&self) -> Duration {
        self.engine
            + self.game_threads
            + self.coordinator
            + self.workers_rest
            + self.nats.unwrap_or_default()
    }
}

/// The queue's wall over the local pool's (summed over every run of each
/// kind, per game), in percent of the pool's, and its parts in points: the
/// parts add up to `overhead`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WallSplit {
    /// `cpus × wall` a game, queue over local pool, in percent.
    pub overhead: f64,
    /// The engine's thread (the server's), queue less pool.
    pub engine: f64,
    /// The game threads (the workers' against the pool's).
    pub game_threads: f64,
    /// The coordinator's NATS thread (none in the pool).
    pub coordinator: f64,
    /// The workers' threads besides their games (none in the pool).
    pub workers_rest: f64,
    /// The NATS server (none in the pool; 0 when not measured, and then
    /// in `rest`).
    pub nats: f64,
    /// The cores' time no part of the run used (idle: waits for games, a
    /// round's end; or work outside the run on a loaded machine), queue
    /// less pool.
    pub rest: f64,
    /// The cores' time no part used, in percent of each kind's core time:
    /// local pool, queue.
    pub rest_share: [f64; 2],
    /// The queue's CPU a game over the pool's, in percent: what the wall
    /// overhead is on a quiet machine whose cores both kinds keep busy
    /// (no part unused), and what a loaded machine does not distort.
    pub cpu_over: f64,
    /// The queue's own threads' CPU a game in percent of the pool's CPU a
    /// game: the same, for the floor.
    pub own_threads_of_cpu: f64,
}

impl WallSplit {
    /// The split of these runs on `cpus` cores; `None` before any game.
    pub fn of(local: &Spent, queue: &Spent, cpus: usize) -> Option<WallSplit> {
        if local.games == 0 || queue.games == 0 || local.wall.is_zero() || queue.wall.is_zero() {
            return None;
        }
        let per_l = |d: Duration| d.as_secs_f64() / local.games as f64;
        let per_q = |d: Duration| d.as_secs_f64() / queue.games as f64;
        let cores = cpus.max(1) as f64;
        let l_core = cores * per_l(local.wall);
        let q_core = cores * per_q(queue.wall);
        let l_rest = l_core - per_l(local.used());
        let q_rest = q_core - per_q(queue.used());
        let points = |q: f64, l: f64| 100.0 * (q - l) / l_core;
        let part = |f: fn(&Spent) -> Duration| points(per_q(f(queue)), per_l(f(local)));
        Some(WallSplit {
            overhead: points(q_core, l_core),
            engine: part(|s| s.engine),
            game_threads: part(|s| s.game_threads),
            coordinator: part(|s| s.coordinator),
            workers_rest: part(|s| s.workers_rest),
            nats: part(|s| s.nats.unwrap_or_default()),
            rest: points(q_rest, l_rest),
            rest_share: [100.0 * l_rest / l_core, 100.0 * q_rest / q_core],
            cpu_over: 100.0 * (per_q(queue.used()) / per_l(local.used()) - 1.0),
            own_threads_of_cpu: 100.0
                * per_q(queue.coordinator + queue.workers_rest + queue.nats.unwrap_or_default())
                / per_l(local.used()),
        })
    }

    /// The queue's own threads, in points: what the queue costs on cores
    /// it shares with the games whatever the scheduling.
    pub fn own_threads(&self) -> f64 {
        self.coordinator + self.workers_rest + self.nats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_parts_add_up_to_the_queues_wall_over_the_pools() {
        // 100 games on 2 cores: the pool 1 s (20 ms of core time a game:
        // engine 1, games 18, idle 1), the queue 1.1 s (22 ms: engine 1,
        // coordinator 1, games 18, workers' rest 0.5, NATS 1, idle 0.5).
        let local = Spent {
            games: 100,
            wall: ms(1000),
            engine: ms(100),
            game_threads: ms(1800),
            ..Spent::default()
        };
        let queue = Spent {
            games: 100,
            wall: ms(1100),
            engine: ms(100),
            coordinator: ms(100),
            game_threads: ms(1800),
            workers_rest: ms(50),
            nats: Some(ms(100)),
        };
        let s = WallSplit::of(&local, &queue, 2).unwrap();
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(s.overhead, 10.0), "{s:?}");
        assert!(near(s.engine, 0.0) && near(s.game_threads, 0.0), "{s:?}");
        assert!(near(s.coordinator, 5.0) && near(s.nats, 5.0), "{s:?}");
        assert!(near(s.workers_rest, 2.5) && near(s.rest, -2.5), "{s:?}");
        assert!(near(s.own_threads(), 12.5), "{s:?}");
        assert!(near(s.rest_share[0], 5.0), "{s:?}");
        assert!(near(s.rest_share[1], 100.0 * 0.5 / 22.0), "{s:?}");
        // CPU alone: 21.5 ms a game against 19 (the idle millisecond of
        // each kind left out), the queue's own threads 2.5 of them.
        assert!(near(s.cpu_over, 100.0 * (21.5 / 19.0 - 1.0)), "{s:?}");
        assert!(near(s.own_threads_of_cpu, 100.0 * 2.5 / 19.0), "{s:?}");
        let sum = s.engine + s.game_threads + s.own_threads() + s.rest;
        assert!(near(sum, s.overhead), "{s:?}");
    }

    #[test]
    fn a_server_not_measured_counts_with_the_rest() {
        let local = Spent {
            games: 10,
            wall: ms(100),
            engine: ms(10),
            game_threads: ms(180),
            ..Spent::default()
        };
        let queue = Spent {
            games: 10,
            wall: ms(110),
            engine: ms(10),
            game_threads: ms(180),
            ..Spent::default()
        };
        let s = WallSplit::of(&local, &queue, 2).unwrap();
        assert_eq!(s.nats, 0.0);
        assert!((s.rest - s.overhead).abs() < 1e-9, "{s:?}");
        assert!(WallSplit::of(&Spent::default(), &queue, 2).is_none());
    }
}
