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

/// Any failure of a benchmark (they run whole subsystems).
pub type BenchError = Box<dyn std::error::Error + Send + Sync>;
