//! Running mutants: each in a one-worker pool forked with the mutant applied, against the
//! cases of each suite that execute its line, cheapest first, to its first kill (the campaign
//! suite within a time box), in `jobs` parallel threads; each result is written to
//! `results/<key>.json` as soon as it is known, so an interrupted run continues where it
//! stopped.

use crate::mutant::{Mutant, SourceFile};
use crate::observe::Observation;
use crate::server::{ForkServer, Overlay};
use crate::suite::{Baseline, SuiteId, observe_case};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tpu_runner::{Mode, RunError};

/// How a mutant ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Some case's observation changed.
    Killed,
    /// Covered, and no covering case noticed.
    Survived,
    /// No case executes its line.
    NotCovered,
    /// Helion does not import with it (the worker's hello failed).
    Invalid,
    /// The harness could not run it (the fork server or a worker failed otherwise).
    Error,
}

impl Status {
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Status::Killed => "killed",
            Status::Survived => "survived",
            Status::NotCovered => "not-covered",
            Status::Invalid => "invalid",
            Status::Error => "error",
        }
    }
}

/// The first kill of a mutant by one suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kill {
    /// The case.
    pub case: String,
    /// What changed (`outcome agree -> mismatch`, `helion ok -> error (trace ...)`).
    pub how: String,
    /// The observation under the mutant.
    pub observed: Observation,
    /// Seconds from the mutant's worker being up to the kill.
    pub seconds: f64,
    /// Cases run before it (it included).
    pub cases_run: usize,
}

/// One suite's attempt on a mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteResult {
    /// Cases of the suite that execute the mutant's line.
    pub covering: usize,
    /// Cases run.
    pub run: usize,
    /// The kill, if any.
    pub kill: Option<Kill>,
    /// Seconds spent.
    pub seconds: f64,
    /// Whether the time box stopped it before every covering case ran.
    pub timed_out: bool,
    /// Whether every case run generated the very module its baseline generated.
    pub same_generated: bool,
}

/// One mutant's result: `results/<key>.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MutantResult {
    /// The mutant.
    pub mutant: Mutant,
    /// Its stable id.
    pub id: String,
    /// Its diff.
    pub diff: String,
    /// How it ended (over every suite run).
    pub status: Status,
    /// Per suite.
    pub suites: BTreeMap<SuiteId, SuiteResult>,
    /// Why it is invalid or an error.
    pub detail: Option<String>,
    /// Seconds the fork server took to start its worker.
    pub start_seconds: f64,
    /// Seconds in all.
    pub seconds: f64,
}

impl MutantResult {
    /// Covered by some case of some suite.
    pub fn covered(&self) -> bool {
        self.suites.values().any(|s| s.covering > 0)
    }

    /// A survivor whose every covering case made the same module as on unmutated Helion:
    /// likely equivalent (shown apart, never dropped).
    pub fn likely_equivalent(&self) -> bool {
        self.status == Status::Survived
            && self.suites.values().filter(|s| s.run > 0).count() > 0
            && self
                .suites
                .values()
                .filter(|s| s.run > 0)
                .all(|s| s.same_generated)
    }
}

/// How mutants run.
pub struct RunOptions<'a> {
    /// The Helion engine.
    pub mode: Mode,
    /// The suites, in the order tried.
    pub suites: Vec<SuiteId>,
    /// Per-case timeout (a mutant that hangs a case is killed by it: `timeout`).
    pub case_timeout: Duration,
    /// Time box of the campaign suite per mutant.
    pub campaign_seconds: f64,
    /// Parallel workers.
    pub jobs: usize,
    /// Where results go (`results/`) and overlays are made.
    pub out: &'a Path,
    /// The files mutated, by id.
    pub files: &'a BTreeMap<String, SourceFile>,
    /// Called with each new result and (done, total).
    pub progress: &'a (dyn Fn(&MutantResult, usize, usize) + Sync),
}

/// The result file of a mutant.
pub fn result_path(out: &Path, mutant: &Mutant) -> PathBuf {
    out.join("results").join(format!("{}.json", mutant.key()))
}

/// Reads a mutant's stored result, if any (an unreadable one is run again).
pub fn stored(out: &Path, mutant: &Mutant) -> Option<MutantResult> {
    let text = std::fs::read_to_string(result_path(out, mutant)).ok()?;
    let r: MutantResult = serde_json::from_str(&text).ok()?;
    (r.mutant == *mutant).then_some(r)
}

/// Runs every mutant without a stored result; returns every mutant's result (stored or new),
/// in the order given.
pub fn run_all(
    server: &ForkServer,
    baseline: &Baseline,
    mutants: &[Mutant],
    options: &RunOptions<'_>,
) -> std::io::Result<Vec<MutantResult>> {
    std::fs::create_dir_all(options.out.join("results"))?;
    let todo: Vec<usize> = (0..mutants.len())
        .filter(|&i| stored(options.out, &mutants[i]).is_none())
        .collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(mutants.len() - todo.len());
    let write_error: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..options.jobs.max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&i) = todo.get(k) else { break };
                    let result = run_one(server, baseline, &mutants[i], options);
                    if let Err(e) = write_atomic(
                        &result_path(options.out, &mutants[i]),
                        &serde_json::to_string_pretty(&result).unwrap_or_default(),
                    ) {
                        *write_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    }
                    let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                    (options.progress)(&result, n, mutants.len());
                }
            });
        }
    });
    if let Some(e) = write_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(mutants
        .iter()
        .filter_map(|m| stored(options.out, m))
        .collect())
}

/// Writes `text` to `path` by rename (a reader never sees half a file).
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Runs one mutant (see the module docs).
pub fn run_one(
    server: &ForkServer,
    baseline: &Baseline,
    mutant: &Mutant,
    options: &RunOptions<'_>,
) -> MutantResult {
    let start = Instant::now();
    let diff = options
        .files
        .get(&mutant.file)
        .and_then(|f| std::fs::read_to_string(&f.path).ok())
        .and_then(|t| mutant.diff(&t).ok())
        .unwrap_or_default();
    let mut result = MutantResult {
        mutant: mutant.clone(),
        id: mutant.id(),
        diff,
        status: Status::NotCovered,
        suites: BTreeMap::new(),
        detail: None,
        start_seconds: 0.0,
        seconds: 0.0,
    };
    let covering: Vec<(SuiteId, Vec<&crate::suite::SuiteCase>)> = options
        .suites
        .iter()
        .map(|&s| (s, baseline.covering(s, &mutant.file, mutant.line)))
        .collect();
    for (s, cases) in &covering {
        result.suites.insert(
            *s,
            SuiteResult {
                covering: cases.len(),
                run: 0,
                kill: None,
                seconds: 0.0,
                timed_out: false,
                same_generated: true,
            },
        );
    }
    if covering.iter().all(|(_, c)| c.is_empty()) {
        result.seconds = start.elapsed().as_secs_f64();
        return result;
    }
    let Some(file) = options.files.get(&mutant.file) else {
        result.status = Status::Error;
        result.detail = Some(format!("{} is not one of the files mutated", mutant.file));
        return result;
    };
    let overlay = match Overlay::of_mutant(server, file, mutant, &options.out.join("overlays")) {
        Ok(o) => o,
        Err(e) => {
            result.status = Status::Error;
            result.detail = Some(e.to_string());
            return result;
        }
    };
    let pool = match overlay.pool(server, options.case_timeout) {
        Ok(p) => Arc::new(p),
        Err(RunError::JaxUnavailable { kind, message, .. }) => {
            result.status = Status::Invalid;
            result.detail = Some(format!(
                "{kind}: {}",
                message.lines().next().unwrap_or_default()
            ));
            result.seconds = start.elapsed().as_secs_f64();
            return result;
        }
        Err(e) => {
            result.status = Status::Error;
            result.detail = Some(e.to_string());
            result.seconds = start.elapsed().as_secs_f64();
            return result;
        }
    };
    result.start_seconds = start.elapsed().as_secs_f64();
    let up = Instant::now();
    for (suite, cases) in covering {
        let suite_start = Instant::now();
        let entry = result.suites.get_mut(&suite).expect("inserted above");
        for case in cases {
            if suite == SuiteId::Campaign
                && suite_start.elapsed().as_secs_f64() >= options.campaign_seconds
            {
                entry.timed_out = true;
                break;
            }
            let (observed, _) = observe_case(&case.case, options.mode, pool.clone());
            entry.run += 1;
            if observed.generated != case.baseline.generated {
                entry.same_generated = false;
            }
            if let Some(how) = observed.kill_against(&case.baseline) {
                entry.kill = Some(Kill {
                    case: case.name.clone(),
                    how,
                    observed,
                    seconds: up.elapsed().as_secs_f64(),
                    cases_run: entry.run,
                });
                break;
            }
        }
        entry.seconds = suite_start.elapsed().as_secs_f64();
    }
    result.status = if result.suites.values().any(|s| s.kill.is_some()) {
        Status::Killed
    } else {
        Status::Survived
    };
    result.seconds = start.elapsed().as_secs_f64();
    result
}

/// The mutants of shard `index` of `count` (every `count`-th, from `index`).
pub fn shard(mutants: Vec<Mutant>, index: usize, count: usize) -> Vec<Mutant> {
    mutants
        .into_iter()
        .enumerate()
        .filter(|(i, _)| count <= 1 || i % count == index)
        .map(|(_, m)| m)
        .collect()
}

/// Parses `--shard i/n` (0-based `i`).
pub fn parse_shard(spec: &str) -> Result<(usize, usize), String> {
    let (i, n) = spec
        .split_once('/')
        .ok_or_else(|| format!("`{spec}` is not a shard (i/n, e.g. 0/4)"))?;
    let i: usize = i
        .parse()
        .map_err(|_| format!("`{spec}`: `{i}` is not a number"))?;
    let n: usize = n
        .parse()
        .map_err(|_| format!("`{spec}`: `{n}` is not a number"))?;
    if n == 0 || i >= n {
        return Err(format!("`{spec}`: the shard index must be below the count"));
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_mutants() {
        assert_eq!(parse_shard("1/3"), Ok((1, 3)));
        assert!(parse_shard("3/3").is_err());
        assert!(parse_shard("x").is_err());
        let all: Vec<Mutant> = (1..=10)
            .map(|line| Mutant {
                file: "m.py".into(),
                line,
                column: 0,
                end_line: line,
                operator: "number".into(),
                occurrence: 0,
                start: 0,
                end: 1,
                original: "1".into(),
                replacement: "2".into(),
                in_message: false,
            })
            .collect();
        let mut seen: Vec<u32> = (0..3)
            .flat_map(|i| shard(all.clone(), i, 3))
            .map(|m| m.line)
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (1..=10).collect::<Vec<u32>>());
        assert_eq!(shard(all.clone(), 0, 1).len(), 10);
    }
}
