//! What every benchmark of this module shares: the median of timed runs,
//! durations in milliseconds, and [`BenchError`].
//!
//! Not here: any benchmark.

use std::time::Duration;

pub(super) fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Whose CPU time [`cpu_time`] reads.
pub enum CpuOf {
    Thread,
    Process,
}

/// The CPU time (user and system) used so far by the calling thread or
/// by the whole process.
pub fn cpu_time(of: CpuOf) -> Duration {
    let who = match of {
        CpuOf::Thread => libc::RUSAGE_THREAD,
        CpuOf::Process => libc::RUSAGE_SELF,
    };
    // SAFETY: getrusage fills a valid struct.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Any failure of a benchmark (they run whole subsystems).
pub type BenchError = Box<dyn std::error::Error + Send + Sync>;

/// The interrupts of the kinds that one CPU sends another, summed over
/// the CPUs (Linux's `/proc/interrupts`; zeros where it cannot be read):
/// what a benchmark's threads cost each other beside their own work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CrossCpu {
    /// `TLB`: a CPU told to drop cached translations of an address space
    /// after another CPU changed its mappings (`madvise`, `munmap`,
    /// `mprotect`).
    pub tlb_shootdowns: u64,
    /// `CAL`: function calls run on another CPU (TLB shootdowns among them).
    pub function_calls: u64,
    /// `RES`: a CPU told to reschedule (a thread woken on another CPU).
    pub reschedules: u64,
}

impl CrossCpu {
    /// The counts so far.
    pub fn now() -> CrossCpu {
        std::fs::read_to_string("/proc/interrupts")
            .map(|text| CrossCpu::parse(&text))
            .unwrap_or_default()
    }

    /// The counts of a `/proc/interrupts` text.
    pub fn parse(text: &str) -> CrossCpu {
        let sum = |name: &str| -> u64 {
            text.lines()
                .find_map(|line| {
                    let rest = line.trim_start().strip_prefix(name)?.strip_prefix(':')?;
                    Some(
                        rest.split_whitespace()
                            .map_while(|w| w.parse::<u64>().ok())
                            .sum(),
                    )
                })
                .unwrap_or(0)
        };
        CrossCpu {
            tlb_shootdowns: sum("TLB"),
            function_calls: sum("CAL"),
            reschedules: sum("RES"),
        }
    }

    /// The counts since `earlier`.
    pub fn since(self, earlier: CrossCpu) -> CrossCpu {
        CrossCpu {
            tlb_shootdowns: self.tlb_shootdowns.saturating_sub(earlier.tlb_shootdowns),
            function_calls: self.function_calls.saturating_sub(earlier.function_calls),
            reschedules: self.reschedules.saturating_sub(earlier.reschedules),
        }
    }
}

/// The files under `dir` (in every folder below it) and their bytes.
pub fn dir_size(dir: &std::path::Path) -> (u64, u64) {
    let (mut files, mut bytes) = (0, 0);
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                let (f, b) = dir_size(&p);
                files += f;
                bytes += b;
            } else {
                files += 1;
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    (files, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_cpu_interrupts_are_summed_over_the_cpus() {
        let text = "           CPU0       CPU1\n  \
                    0:         44          0   IO-APIC    2-edge      timer\n\
                    RES:       8266       6269   Rescheduling interrupts\n\
                    CAL:      32307      21021   Function call interrupts\n\
                    TLB:       3831       3691   TLB shootdowns\n";
        let c = CrossCpu::parse(text);
        assert_eq!(
            c,
            CrossCpu {
                tlb_shootdowns: 7522,
                function_calls: 53328,
                reschedules: 14535
            }
        );
        assert_eq!(c.since(c), CrossCpu::default());
    }
}
