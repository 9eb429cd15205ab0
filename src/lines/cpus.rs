//! Which CPU a match's bots run on: each match gets the least busy CPU of
//! those the server may use, held until the match ends.
//!
//! With the referee freezing every bot it is not waiting for, at most one
//! bot of a match computes at a time once the kernel reports the others
//! held (past the first 5 ms of a reply, and before that nothing of the
//! reply is counted); pinned to a CPU of its match's own, that bot has the CPU to
//! itself as long as no more matches run than the server has CPUs (the
//! default number of match threads, `jobs = 0`). A bot cannot leave its CPU
//! (`sched_setaffinity` is refused by the sandbox's filter), so a bot that
//! starts dozens of threads competes only with itself.
//!
//! Deliberately no policy beyond "least busy, lowest number": the pool
//! knows neither games nor bots.

use std::sync::{Mutex, OnceLock};

/// The CPUs the server may use, and how many matches each one holds.
#[derive(Debug)]
pub struct CpuSlots {
    busy: OnceLock<Mutex<Vec<(usize, usize)>>>,
}

/// The pool every match of this process leases from.
pub static CPU_SLOTS: CpuSlots = CpuSlots {
    busy: OnceLock::new(),
};

/// One match's CPU; given back on drop.
#[derive(Debug)]
pub struct CpuSlot {
    cpu: Option<usize>,
}

impl CpuSlot {
    /// The CPU to pin the match's bots to (`None`: the server's CPUs could
    /// not be read, the bots are not pinned).
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }
}

impl CpuSlots {
    fn cpus(&self) -> &Mutex<Vec<(usize, usize)>> {
        self.busy.get_or_init(|| {
            Mutex::new(
                crate::sandbox::allowed_cpus()
                    .into_iter()
                    .map(|c| (c, 0))
                    .collect(),
            )
        })
    }

    /// The least busy CPU (the lowest number among equals).
    pub fn lease(&'static self) -> CpuSlot {
        let mut busy = self.cpus().lock().unwrap_or_else(|e| e.into_inner());
        let cpu = least_busy(&busy);
        if let Some(i) = cpu {
            busy[i].1 += 1;
        }
        CpuSlot {
            cpu: cpu.map(|i| busy[i].0),
        }
    }
}

impl Drop for CpuSlot {
    fn drop(&mut self) {
        let Some(cpu) = self.cpu else { return };
        let mut busy = CPU_SLOTS.cpus().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = busy.iter_mut().find(|e| e.0 == cpu) {
            e.1 = e.1.saturating_sub(1);
        }
    }
}

/// The index of the entry with the fewest matches, the first among equals.
fn least_busy(busy: &[(usize, usize)]) -> Option<usize> {
    busy.iter()
        .enumerate()
        .min_by_key(|(i, e)| (e.1, *i))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_match_gets_the_least_busy_cpu() {
        assert_eq!(least_busy(&[(0, 1), (1, 0)]), Some(1));
        assert_eq!(least_busy(&[(0, 1), (1, 1)]), Some(0));
        assert_eq!(least_busy(&[(2, 0), (3, 0)]), Some(0));
        assert_eq!(least_busy(&[]), None);
    }

    #[test]
    fn a_lease_names_a_cpu_the_server_may_use() {
        let allowed = crate::sandbox::allowed_cpus();
        assert!(!allowed.is_empty());
        let slot = CPU_SLOTS.lease();
        assert!(allowed.contains(&slot.cpu().expect("pinned")));
    }
}
