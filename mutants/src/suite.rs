//! The suites that try to kill mutants, and each case's baseline.
//!
//! Two suites, scored apart and together: the regression corpus (what nightly `replay` runs)
//! and a seeded campaign's first cases (fresh generated cases, the same for every mutant, so a
//! run repeats). Each case is run once on unmutated Helion with coverage.py in the worker
//! ([`baseline`]): its [`Observation`] (what a mutant must change to kill it), its cost in
//! seconds (mutants try covering cases cheapest first), and the Helion lines it executed
//! (a mutant runs only the cases that execute its line). A second run without coverage must
//! observe the same, else the case is *flaky* and left out (a flaky case would report kills
//! no mutant caused).

use crate::observe::{Observation, sha16};
use crate::server::{CoverageSpec, ForkServer, Overlay, ServerError};
use compiler::compile::CodegenOptions;
use fuzz::check::check_case;
use fuzz::engines::{Engine, EngineId};
use lang::ir::Case;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tpu_runner::Mode;

/// A suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteId {
    /// The regression corpus (`corpus/cases`).
    Corpus,
    /// A seeded campaign's cases.
    Campaign,
}

impl SuiteId {
    /// Both suites.
    pub const ALL: [SuiteId; 2] = [SuiteId::Corpus, SuiteId::Campaign];

    /// The name (`corpus`, `campaign`).
    pub fn name(self) -> &'static str {
        match self {
            SuiteId::Corpus => "corpus",
            SuiteId::Campaign => "campaign",
        }
    }
}

impl std::fmt::Display for SuiteId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SuiteId {
    type Err = String;

    fn from_str(s: &str) -> Result<SuiteId, String> {
        SuiteId::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| format!("`{s}` is not a suite (corpus, campaign)"))
    }
}

/// One case to run, before its baseline.
#[derive(Clone, Debug)]
pub struct PlannedCase {
    /// Its suite.
    pub suite: SuiteId,
    /// Its name (a corpus entry's name, `campaign-<seed>-<index>`).
    pub name: String,
    /// The case.
    pub case: Case,
}

/// One case with its baseline.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SuiteCase {
    /// Its suite.
    pub suite: SuiteId,
    /// Its name.
    pub name: String,
    /// The case.
    pub case: Case,
    /// What unmutated Helion shows.
    pub baseline: Observation,
    /// Seconds the baseline run took (without coverage).
    pub seconds: f64,
    /// The Helion lines it executed, by file id (`helion/_compiler/pallas/view_ops.py`).
    pub lines: BTreeMap<String, BTreeSet<u32>>,
}

impl SuiteCase {
    /// Whether the case executes `line` of `file`.
    pub fn covers(&self, file: &str, line: u32) -> bool {
        self.lines.get(file).is_some_and(|l| l.contains(&line))
    }
}

/// What [`baseline`] learnt.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Baseline {
    /// The cases kept, each with its baseline.
    pub cases: Vec<SuiteCase>,
    /// Cases left out because two baseline runs disagreed: (name, first, second).
    pub flaky: Vec<(String, Observation, Observation)>,
    /// Lines Helion's import executed (every case depends on them), by file id.
    pub import_lines: BTreeMap<String, BTreeSet<u32>>,
}

impl Baseline {
    /// The cases of `suite` that execute `line` of `file` (an import-time line: all of
    /// them), cheapest first.
    pub fn covering(&self, suite: SuiteId, file: &str, line: u32) -> Vec<&SuiteCase> {
        let at_import = self
            .import_lines
            .get(file)
            .is_some_and(|l| l.contains(&line));
        let mut out: Vec<&SuiteCase> = self
            .cases
            .iter()
            .filter(|c| c.suite == suite && (at_import || c.covers(file, line)))
            .collect();
        out.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        out
    }

    /// Every file id some case executes a line of.
    pub fn executed_files(&self) -> BTreeSet<String> {
        self.cases
            .iter()
            .flat_map(|c| c.lines.iter().filter(|(_, l)| !l.is_empty()))
            .map(|(f, _)| f.clone())
            .collect()
    }
}

/// The corpus's cases (`corpus/cases`, or `dir`).
pub fn corpus_cases(dir: &Path) -> Result<Vec<PlannedCase>, corpus::entry::CorpusError> {
    let corpus = corpus::entry::Corpus::load(dir)?;
    Ok(corpus
        .entries
        .into_iter()
        .map(|e| PlannedCase {
            suite: SuiteId::Corpus,
            name: e.entry.name(),
            case: e.entry.case,
        })
        .collect())
}

/// The first `n` cases of a campaign seeded `seed` (the campaign's own draw: generator
/// defaults, refusals thinned as a campaign thins them).
pub fn campaign_cases(seed: u64, n: usize) -> Vec<PlannedCase> {
    let generator = fuzz::generators::GenConfig::default();
    let codegen = CodegenOptions::default();
    (0..n as u64)
        .map(|i| {
            let drawn = fuzz::campaign::draw::draw(
                seed,
                i,
                &generator,
                &codegen,
                fuzz::check::Depth::Full,
                None,
            );
            PlannedCase {
                suite: SuiteId::Campaign,
                name: format!("campaign-{seed}-{i}"),
                case: drawn.prepared.case().clone(),
            }
        })
        .collect()
}

/// Runs `case` with the Helion engine `mode` on `pool` (the reference and our compiler run in
/// process), and observes it.
pub fn observe_case(case: &Case, mode: Mode, pool: Arc<tpu_runner::Pool>) -> (Observation, f64) {
    let engine: Box<dyn Engine> = Box::new(fuzz::engines::helion::Helion::new(mode, pool));
    let start = std::time::Instant::now();
    let report = check_case(
        case,
        std::slice::from_ref(&engine),
        &CodegenOptions::default(),
    );
    let seconds = start.elapsed().as_secs_f64();
    (Observation::of(&report, EngineId::Worker(mode)), seconds)
}

/// How the baseline runs.
pub struct BaselineOptions<'a> {
    /// The Helion engine.
    pub mode: Mode,
    /// Parallel workers.
    pub jobs: usize,
    /// Per-case timeout.
    pub timeout: Duration,
    /// The directory holding the `helion` package (file ids are relative to it).
    pub helion_root: &'a Path,
    /// Where overlays are made.
    pub scratch: &'a Path,
    /// Called after each case with (done, total).
    pub progress: &'a (dyn Fn(usize, usize) + Sync),
}

/// Runs every case twice on unmutated Helion, the first time measuring coverage (see the
/// module docs).
pub fn baseline(
    server: &ForkServer,
    planned: &[PlannedCase],
    options: &BaselineOptions<'_>,
) -> Result<Baseline, ServerError> {
    let include = CoverageSpec {
        include: vec![format!("{}/helion/*", options.helion_root.display())],
    };
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    type Measured = (usize, Observation, Observation, f64, Coverage);
    let results: Vec<Result<Vec<Measured>, ServerError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..options.jobs.max(1))
            .map(|_| {
                s.spawn(|| -> Result<Vec<Measured>, ServerError> {
                    let cov_overlay = Overlay::baseline(server, Some(&include), options.scratch)?;
                    let plain_overlay = Overlay::baseline(server, None, options.scratch)?;
                    let cov_pool = Arc::new(start_pool(&cov_overlay, server, options.timeout)?);
                    let plain_pool = Arc::new(start_pool(&plain_overlay, server, options.timeout)?);
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(p) = planned.get(i) else { break };
                        let (first, _) = observe_case(&p.case, options.mode, cov_pool.clone());
                        let coverage = read_coverage(
                            &cov_overlay.coverage_dir().join("last.json"),
                            &sha16(&lang::render::render_kernel(&p.case)),
                            options.helion_root,
                        );
                        let (second, seconds) =
                            observe_case(&p.case, options.mode, plain_pool.clone());
                        out.push((i, first, second, seconds, coverage));
                        (options.progress)(done.fetch_add(1, Ordering::SeqCst) + 1, planned.len());
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a baseline thread panicked"))
            .collect()
    });
    let mut measured = Vec::new();
    for r in results {
        measured.extend(r?);
    }
    measured.sort_by_key(|m| m.0);
    let mut baseline = Baseline::default();
    for (i, first, second, seconds, coverage) in measured {
        let p = &planned[i];
        if first != second && first.kill_against(&second).is_some() {
            baseline.flaky.push((p.name.clone(), first, second));
            continue;
        }
        baseline.cases.push(SuiteCase {
            suite: p.suite,
            name: p.name.clone(),
            case: p.case.clone(),
            baseline: second,
            seconds,
            lines: coverage.lines,
        });
    }
    // Every worker imported the same Helion: any one's import lines.
    let import = Overlay::baseline(server, Some(&include), options.scratch)?;
    if let Ok(pool) = start_pool(&import, server, options.timeout) {
        drop(pool);
        baseline.import_lines = read_coverage(
            &import.coverage_dir().join("import.json"),
            "",
            options.helion_root,
        )
        .lines;
    }
    Ok(baseline)
}

fn start_pool(
    overlay: &Overlay,
    server: &ForkServer,
    timeout: Duration,
) -> Result<tpu_runner::Pool, ServerError> {
    overlay.pool(server, timeout).map_err(|e| {
        ServerError::Mutant(crate::mutant::MutantError::Enumerator(format!(
            "unmutated Helion did not start in the fork server: {e}"
        )))
    })
}

#[derive(Default)]
struct Coverage {
    lines: BTreeMap<String, BTreeSet<u32>>,
}

#[derive(Deserialize)]
struct CoverageFile {
    #[serde(default)]
    source_sha256_16: String,
    lines: BTreeMap<PathBuf, Vec<u32>>,
}

/// The lines of a coverage file, by file id; empty when it is missing or belongs to another
/// request (`want` is the request source's hash; empty accepts any).
fn read_coverage(path: &Path, want: &str, root: &Path) -> Coverage {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Coverage::default();
    };
    let Ok(file) = serde_json::from_str::<CoverageFile>(&text) else {
        return Coverage::default();
    };
    if !want.is_empty() && file.source_sha256_16 != want {
        return Coverage::default();
    }
    // coverage.py names files by their real path; the venv may be reached through a link.
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let lines = file
        .lines
        .into_iter()
        .filter_map(|(p, l)| {
            let rel = p
                .strip_prefix(root)
                .or_else(|_| p.strip_prefix(&real_root))
                .ok()?
                .to_string_lossy()
                .into_owned();
            Some((rel, l.into_iter().collect()))
        })
        .collect();
    Coverage { lines }
}
