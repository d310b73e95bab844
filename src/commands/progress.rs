//! The campaign's progress display: elapsed and remaining time of the campaign's budget
//! (`--time`, `--cases`, or both: whichever ends first), with the running counts.
//!
//! On a terminal it is an `indicatif` bar redrawn in place; elsewhere (CI logs, pipes) a plain
//! line every ten seconds, so a log holds a time series rather than thousands of redraws.

use fuzz::campaign::stats::Stats;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;
use std::time::Duration;

/// Positions of the bar: per-mille of the budget.
const STEPS: u64 = 1000;
/// Seconds between plain lines when stderr is not a terminal.
const PLAIN_EVERY_S: f64 = 10.0;

/// What the campaign may spend.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// `--time`.
    pub time: Option<Duration>,
    /// `--cases`.
    pub cases: Option<u64>,
}

impl Budget {
    /// The share of the budget spent after `cases` cases in `seconds` (the larger of the two
    /// shares when both are set: the campaign stops at the first).
    pub fn spent(&self, cases: u64, seconds: f64) -> f64 {
        let by_time = self.time.map(|t| seconds / t.as_secs_f64().max(1e-9));
        let by_cases = self.cases.map(|c| cases as f64 / (c.max(1) as f64));
        by_time
            .into_iter()
            .chain(by_cases)
            .fold(0.0, f64::max)
            .min(1.0)
    }

    /// Seconds left: of the time budget, or of the cases at the rate so far; the smaller when
    /// both are set. `None` before a rate is known.
    pub fn remaining(&self, cases: u64, seconds: f64) -> Option<f64> {
        let by_time = self.time.map(|t| (t.as_secs_f64() - seconds).max(0.0));
        let by_cases = self.cases.and_then(|c| {
            (cases > 0 && seconds > 0.0)
                .then(|| c.saturating_sub(cases) as f64 * seconds / cases as f64)
        });
        by_time.into_iter().chain(by_cases).reduce(f64::min)
    }
}

/// `1h02m`, `3m05s`, `42s`.
pub fn human_seconds(s: f64) -> String {
    let s = s.round() as u64;
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

/// The display (module docs).
pub struct Progress {
    budget: Budget,
    bar: Option<ProgressBar>,
    last_plain: Mutex<f64>,
}

impl Progress {
    /// A bar on a terminal, plain lines elsewhere.
    pub fn new(budget: Budget, terminal: bool) -> Progress {
        let bar = terminal.then(|| {
            let bar = ProgressBar::with_draw_target(Some(STEPS), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:24}] {percent:>3}% {msg}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            bar
        });
        Progress {
            budget,
            bar,
            last_plain: Mutex::new(f64::NEG_INFINITY),
        }
    }

    /// The line for `stats` after `seconds`: remaining time, then the counts.
    pub fn line(&self, stats: &Stats, seconds: f64) -> String {
        let left = match self.budget.remaining(stats.cases, seconds) {
            Some(s) => format!("~{} left", human_seconds(s)),
            None => "? left".to_string(),
        };
        format!("{left} {}", stats.progress_line(seconds).trim_start())
    }

    /// Shows `stats` after `seconds`.
    pub fn update(&self, stats: &Stats, seconds: f64) {
        let line = self.line(stats, seconds);
        match &self.bar {
            Some(bar) => {
                bar.set_position((self.budget.spent(stats.cases, seconds) * STEPS as f64) as u64);
                bar.set_message(line);
            }
            None => {
                let mut last = self.last_plain.lock().expect("progress lock");
                if seconds - *last >= PLAIN_EVERY_S {
                    *last = seconds;
                    eprintln!("[{}] {line}", human_seconds(seconds));
                }
            }
        }
    }

    /// Leaves the last state on screen.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_that_ends_first_decides() {
        let both = Budget {
            time: Some(Duration::from_secs(100)),
            cases: Some(1000),
        };
        // 10 s, 500 cases: half the cases, a tenth of the time; 10 s more at 50 cases/s.
        assert!((both.spent(500, 10.0) - 0.5).abs() < 1e-9);
        assert!((both.remaining(500, 10.0).unwrap() - 10.0).abs() < 1e-9);
        let time = Budget {
            time: Some(Duration::from_secs(60)),
            cases: None,
        };
        assert!((time.remaining(0, 15.0).unwrap() - 45.0).abs() < 1e-9);
        assert_eq!(time.spent(0, 90.0), 1.0);
        let cases = Budget {
            time: None,
            cases: Some(10),
        };
        assert_eq!(cases.remaining(0, 0.0), None);
    }

    #[test]
    fn seconds_read_as_durations() {
        assert_eq!(human_seconds(42.2), "42s");
        assert_eq!(human_seconds(185.0), "3m05s");
        assert_eq!(human_seconds(3720.0), "1h02m");
    }
}
