//! The campaign's time series: a [`Sample`] of the running counts every few seconds, written
//! with the summary into the findings directory's `stats.json` so that nightly runs can be
//! plotted over time (outcome shares, cases/s, coverage reached, JAX confirmations, findings).

use super::stats::Stats;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The file name of the campaign record in a findings directory.
pub const STATS_FILE: &str = "stats.json";

/// The version of the `stats.json` layout.
pub const STATS_FORMAT: u32 = 1;

/// Seconds between samples: a 2-minute default campaign gives 24, a 1 h nightly shard 720
/// (~150 KB of JSON).
pub const SAMPLE_EVERY_S: f64 = 5.0;

/// The running counts at one moment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// Since the campaign started.
    pub seconds: f64,
    /// Cases checked.
    pub cases: u64,
    /// Cases per second since the previous sample (since the start for the first).
    pub cases_per_s: f64,
    /// Outcome name → count.
    pub outcomes: BTreeMap<String, u64>,
    /// Coverage cells with at least one case.
    pub coverage_cells: usize,
    /// Coverage cells with at least one lowered case.
    pub lowered_cells: usize,
    /// JAX confirmations (one case through one engine).
    pub jax_confirmed: u64,
    /// Findings kept.
    pub findings: u64,
}

/// Samples taken so far (module docs); `observe` is called by the progress callback.
#[derive(Debug, Default)]
pub struct Series {
    samples: Mutex<Vec<Sample>>,
}

impl Series {
    /// Records `stats` after `seconds` when [`SAMPLE_EVERY_S`] passed since the last sample
    /// (always for the first).
    pub fn observe(&self, stats: &Stats, seconds: f64) {
        let mut samples = self.samples.lock().expect("series lock");
        if samples
            .last()
            .is_some_and(|s| seconds - s.seconds < SAMPLE_EVERY_S)
        {
            return;
        }
        let next = sample(samples.last(), stats, seconds);
        samples.push(next);
    }

    /// Every sample, with a last one of the final counts.
    pub fn finish(&self, stats: &Stats, seconds: f64) -> Vec<Sample> {
        let mut samples = self.samples.lock().expect("series lock");
        if samples.last().is_none_or(|s| s.seconds < seconds) {
            let last = sample(samples.last(), stats, seconds);
            samples.push(last);
        }
        samples.clone()
    }
}

fn sample(previous: Option<&Sample>, stats: &Stats, seconds: f64) -> Sample {
    let (s0, c0) = previous.map_or((0.0, 0), |p| (p.seconds, p.cases));
    let dt = seconds - s0;
    Sample {
        seconds,
        cases: stats.cases,
        cases_per_s: if dt > 0.0 {
            stats.cases.saturating_sub(c0) as f64 / dt
        } else {
            0.0
        },
        outcomes: stats.outcomes.clone(),
        coverage_cells: stats.coverage.values().filter(|c| c.cases > 0).count(),
        lowered_cells: stats.coverage.values().filter(|c| c.lowered > 0).count(),
        jax_confirmed: stats.jax_confirmed,
        findings: stats.findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_spaced_and_end_with_the_final_counts() {
        let series = Series::default();
        let mut st = Stats::default();
        for (t, cases) in [(0.25, 10), (2.0, 80), (5.5, 200), (6.0, 210), (11.0, 400)] {
            st.cases = cases;
            series.observe(&st, t);
        }
        st.cases = 450;
        let samples = series.finish(&st, 12.0);
        let at: Vec<f64> = samples.iter().map(|s| s.seconds).collect();
        assert_eq!(at, vec![0.25, 5.5, 11.0, 12.0]);
        // 200 - 10 cases in 5.25 s.
        assert!((samples[1].cases_per_s - 190.0 / 5.25).abs() < 1e-9);
        assert_eq!(samples[3].cases, 450);
    }
}
