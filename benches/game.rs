//! `cargo bench --bench game`: a 1000-throw game of the WebAssembly engine
//! against the floor of any design with a process per strategy, measured
//! in the same run on the same CPU.
//!
//! The floors are this program's own (no strategy runs as a process in
//! the server any more): the raw round trip of a few bytes between two
//! processes over a pair of pipes, x1000 (one per throw), and a minimal
//! referee exchanging throws with two forked children that behave like
//! locked-down strategies (seccomp strict mode, write a throw, read the
//! answer), all three pinned to one CPU as such a design kept them.
//!
//! Strict mode also takes the time-stamp counter from the children; every
//! switch between a task with and one without it rewrites a control
//! register (a VM exit on virtual machines), so the referee gives it up
//! too while it measures, and reads the clock by system call.

use std::time::Duration;

fn main() {
    let games = std::env::var("KNOBELN_BENCH_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let cpu = *knobeln::sandbox::allowed_cpus().first().unwrap_or(&0);
    let floors = std::thread::spawn(move || -> std::io::Result<(Duration, Duration)> {
        knobeln::sandbox::pin_current_thread(cpu)?;
        Ok((pipe_round_trip(1000, 21)?, three_party_floor(1000, 21)?))
    })
    .join()
    .expect("floor thread");
    let (floor, three_party) = match floors {
        Ok(f) => f,
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    };
    let b = match knobeln::bench::game_bench(games) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "raw pipe round trip x1000 (floor, same CPU):   {:>8.3} ms",
        ms(floor)
    );
    println!(
        "minimal three-process exchange x1000:          {:>8.3} ms ({:.2}x the pipe floor)",
        ms(three_party),
        three_party.as_secs_f64() / floor.as_secs_f64()
    );
    b.print();
    println!(
        "ratio wasm trivial game / three-process floor: {:>8.3}x",
        b.trivial_game().as_secs_f64() / three_party.as_secs_f64()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A forked peer process connected by two pipes.
struct Peer {
    pid: libc::pid_t,
    /// Our write end (the peer's input).
    to: i32,
    /// Our read end (the peer's output).
    from: i32,
}

impl Peer {
    /// Forks a peer that runs `body(its input, its output)` and never returns.
    fn fork(body: fn(i32, i32) -> !) -> std::io::Result<Peer> {
        let mut to_child = [0i32; 2];
        let mut to_parent = [0i32; 2];
        // SAFETY: plain syscalls; the child only makes raw system calls.
        unsafe {
            if libc::pipe(to_child.as_mut_ptr()) != 0 || libc::pipe(to_parent.as_mut_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let pid = libc::fork();
            if pid < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if pid == 0 {
                libc::close(to_child[1]);
                libc::close(to_parent[0]);
                body(to_child[0], to_parent[1]);
            }
            libc::close(to_child[0]);
            libc::close(to_parent[1]);
            Ok(Peer {
                pid,
                to: to_child[1],
                from: to_parent[0],
            })
        }
    }

    fn write(&self, msg: &[u8]) {
        // SAFETY: valid fd and buffer.
        unsafe { libc::write(self.to, msg.as_ptr().cast(), msg.len()) };
    }

    fn read(&self, buf: &mut [u8]) {
        // SAFETY: valid fd and buffer.
        unsafe { libc::read(self.from, buf.as_mut_ptr().cast(), buf.len()) };
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // SAFETY: closing our fds ends the peer; then reap it.
        unsafe {
            libc::close(self.to);
            libc::close(self.from);
            libc::kill(self.pid, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(self.pid, &mut status, 0);
        }
    }
}

/// CLOCK_MONOTONIC read by system call (no TSC in user space).
fn monotonic() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    unsafe {
        libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts);
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The median of `rounds` timings of `n` exchanges.
fn timed(n: usize, rounds: usize, mut exchange: impl FnMut()) -> Duration {
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = monotonic();
        for _ in 0..n {
            exchange();
        }
        times.push(monotonic() - t);
    }
    times.sort();
    times[times.len() / 2]
}

/// Median time of `rounds` x `n` pipe round trips between this process and
/// a forked echo child (the caller pinned to one CPU).
fn pipe_round_trip(n: usize, rounds: usize) -> std::io::Result<Duration> {
    fn echo(input: i32, output: i32) -> ! {
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: raw reads and writes on our pipes.
            unsafe {
                let r = libc::read(input, buf.as_mut_ptr().cast(), buf.len());
                if r <= 0 {
                    libc::_exit(0);
                }
                libc::write(output, buf.as_ptr().cast(), r as usize);
            }
        }
    }
    let peer = Peer::fork(echo)?;
    let mut buf = [0u8; 64];
    Ok(timed(n, rounds, || {
        peer.write(b"1234\n");
        peer.read(&mut buf);
    }))
}

/// Median time of `rounds` x `n` throws between this process (as a minimal
/// referee: blocking reads, no checks) and two forked children that behave
/// like strategies (seccomp strict mode, write a throw, read the answer),
/// all on the caller's CPU: the floor of any design with three processes
/// per game.
fn three_party_floor(n: usize, rounds: usize) -> std::io::Result<Duration> {
    // SAFETY: prctl on the calling thread; undone below.
    let tsc_off = unsafe { libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_SIGSEGV, 0, 0, 0) } == 0;
    fn strategy(input: i32, output: i32) -> ! {
        // SAFETY: raw system calls only, as a locked-down strategy makes.
        unsafe {
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
            libc::prctl(libc::PR_SET_SECCOMP, 1, 0, 0, 0);
            let mut buf = [0u8; 64];
            loop {
                libc::write(output, b"100\n".as_ptr().cast(), 4);
                if libc::read(input, buf.as_mut_ptr().cast(), buf.len()) <= 0 {
                    libc::syscall(libc::SYS_exit, 0);
                }
            }
        }
    }
    let measured = (|| {
        let p = Peer::fork(strategy)?;
        let q = Peer::fork(strategy)?;
        let mut buf = [0u8; 64];
        Ok(timed(n, rounds, || {
            p.read(&mut buf);
            q.read(&mut buf);
            p.write(b"100\n");
            q.write(b"100\n");
        }))
    })();
    if tsc_off {
        // SAFETY: prctl on the calling thread.
        unsafe { libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_ENABLE, 0, 0, 0) };
    }
    measured
}
