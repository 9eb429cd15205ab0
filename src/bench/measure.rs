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

/// The machine's CPUs as the kernel counts them (the `cpu` line of
/// Linux's `/proc/stat`, in its ticks; zeros where it cannot be read):
/// over a benchmark's run, what its CPUs did besides its own threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineCpu {
    /// Ticks some process or the kernel ran (user, nice, system, irq,
    /// softirq; a guest's time is inside user).
    pub busy: u64,
    /// Ticks the CPUs had nothing to run (idle, and idle waiting for a
    /// disk: `iowait`).
    pub idle: u64,
    /// Ticks the hypervisor gave this machine's CPUs to another machine
    /// (`steal`): time none of its processes could run.
    pub stolen: u64,
    /// The CPUs counted (the `cpuN` lines).
    pub cpus: u64,
}

/// What a run's CPUs did, in CPUs (each count over the run's wall clock).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineShares {
    pub busy: f64,
    pub idle: f64,
    pub stolen: f64,
}

impl MachineCpu {
    /// The counts so far.
    pub fn now() -> MachineCpu {
        std::fs::read_to_string("/proc/stat")
            .map(|text| MachineCpu::parse(&text))
            .unwrap_or_default()
    }

    /// The counts of a `/proc/stat` text.
    pub fn parse(text: &str) -> MachineCpu {
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("cpu ")) else {
            return MachineCpu::default();
        };
        let n: Vec<u64> = line
            .split_whitespace()
            .map_while(|w| w.parse().ok())
            .collect();
        let at = |i: usize| n.get(i).copied().unwrap_or(0);
        let cpus = text
            .lines()
            .filter(|l| {
                l.strip_prefix("cpu")
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            })
            .count() as u64;
        // user nice system idle iowait irq softirq steal (guest, guest_nice
        // are inside user and nice).
        MachineCpu {
            busy: at(0) + at(1) + at(2) + at(5) + at(6),
            idle: at(3) + at(4),
            stolen: at(7),
            cpus,
        }
    }

    /// The counts since `earlier`.
    pub fn since(self, earlier: MachineCpu) -> MachineCpu {
        MachineCpu {
            busy: self.busy.saturating_sub(earlier.busy),
            idle: self.idle.saturating_sub(earlier.idle),
            stolen: self.stolen.saturating_sub(earlier.stolen),
            cpus: self.cpus,
        }
    }

    /// These counts as shares of the machine's CPUs (each between 0 and
    /// their number, together their number); `None` where nothing was
    /// counted.
    pub fn shares(self) -> Option<MachineShares> {
        let total = self.busy + self.idle + self.stolen;
        if total == 0 || self.cpus == 0 {
            return None;
        }
        let of = |n: u64| n as f64 * self.cpus as f64 / total as f64;
        Some(MachineShares {
            busy: of(self.busy),
            idle: of(self.idle),
            stolen: of(self.stolen),
        })
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

    #[test]
    fn the_machines_cpus_are_busy_idle_or_stolen() {
        let before =
            MachineCpu::parse("cpu  100 10 50 800 40 0 5 20 0 0\ncpu0 50 5 25 400 20 0 2 10 0 0\n");
        assert_eq!(
            before,
            MachineCpu {
                busy: 165,
                idle: 840,
                stolen: 20,
                cpus: 1
            }
        );
        let after = MachineCpu::parse("cpu  250 10 80 830 40 0 5 40 0 0\ncpu0 1\ncpu1 1\nintr 1\n");
        let run = after.since(before);
        assert_eq!(
            run,
            MachineCpu {
                busy: 180,
                idle: 30,
                stolen: 20,
                cpus: 2
            }
        );
        let s = run.shares().unwrap();
        assert!((s.busy + s.idle + s.stolen - 2.0).abs() < 1e-9, "{s:?}");
        assert!((s.stolen - 40.0 / 230.0).abs() < 1e-9, "{s:?}");
        assert_eq!(MachineCpu::parse("no cpu line").shares(), None);
    }
}
