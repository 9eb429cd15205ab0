//! CPU placement: pinning a thread (and what it spawns) to one CPU
//! ([`pin_current_thread`]) and the CPUs it may run on
//! ([`allowed_cpus`]), for the benchmarks and the pools that pin their
//! workers.

use std::io;

/// Pins the calling thread (and the processes it spawns from now on) to one CPU.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu % rustix::thread::CpuSet::MAX_CPU);
    rustix::thread::sched_setaffinity(None, &set)?;
    Ok(())
}

/// The CPUs the calling thread may run on, in order (CPU 0 if they cannot
/// be read).
pub fn allowed_cpus() -> Vec<usize> {
    let cpus: Vec<usize> = match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => Vec::new(),
    };
    if cpus.is_empty() {
        vec![0]
    } else {
        cpus
    }
}
