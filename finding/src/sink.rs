//! The findings directory of a campaign: deduplication into buckets, optional reduction, and
//! one finding directory per bucket ([`CorpusSink`], the `fuzz` crate's `FindingSink`).
//!
//! Layout of a findings directory:
//! * `buckets.json`: [`Buckets`], rewritten atomically after every finding;
//! * `<NNNN>-<outcome>-<engine>/`: one finding directory per bucket ([`crate::finding`]),
//!   holding the bucket's smallest case;
//! * `shard.json`: the campaigns that wrote it ([`crate::shard`], written by `pallas-diff fuzz`),
//!   or, in the output of `pallas-diff merge`, `merge.json` ([`crate::merge`]).
//!
//! Filing a finding: its signature is computed; a known bucket (by key, or by the raw key of a
//! finding that reduced into it) only has its count raised (and its directory replaced when the
//! new case is smaller), so a known bug adds no directory. A new one is reduced first when
//! reduction is on and the engine that saw it is among [`ReduceOptions::engines`], then filed
//! under its reduced signature, which may turn out to be a known bucket after all, or one whose
//! cause it shows through transparent decisions (`Signature::subsumes`; a new bucket likewise
//! absorbs the buckets it subsumes, their directories removed after `buckets.json` is saved). With
//! cross-check engines ([`CorpusSink::with_cross_check`]: a campaign's JAX engines), a new
//! finding an in-process engine decided is re-run on them before it is written, and `meta.json`
//! and `log.txt` say whether JAX reproduces it.

use crate::finding::{
    CrossCheckRecord, CrossCheckResult, Finding, FindingError, FindingProvenance, ReductionRecord,
    Versions, write_finding_dir,
};
use crate::minimize::{SharedEngine, reduce_finding};
use crate::signature::{Buckets, BucketsError, CostRecord, Recorded, signature};
use compiler::compile::CodegenOptions;
use fuzz::campaign::sink::{Filed, FindingSink};
use fuzz::check::{CaseReport, PreparedCase};
use fuzz::engines::{Engine, EngineId};
use reducer::Budget;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The files of a findings directory that are its indexes, not findings or corpus entries.
pub const INDEX_FILES: [&str; 4] = [
    crate::signature::BUCKETS_FILE,
    crate::shard::SHARD_FILE,
    crate::merge::MERGE_FILE,
    fuzz::campaign::record::STATS_FILE,
];

/// Reduction of new findings.
#[derive(Clone)]
pub struct ReduceOptions {
    /// The budget per new finding.
    pub budget: Budget,
    /// The engines a reduction may run (only the one that saw the finding runs; a finding
    /// whose engine is not here is filed unreduced, for `pallas-diff reduce` later).
    pub engines: Vec<Arc<dyn Engine>>,
    /// Candidates checked at once (the JAX pool's size).
    pub jobs: usize,
}

/// Why the findings directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// `buckets.json` is unreadable.
    #[error(transparent)]
    Buckets(#[from] BucketsError),
    /// A finding directory could not be written.
    #[error(transparent)]
    Finding(#[from] FindingError),
    /// The directory could not be created or listed (the OS message is in `Display`, not
    /// `source()`, so a `{:#}` chain prints it once).
    #[error("{}: {error}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

struct State {
    buckets: Buckets,
    next_dir: u32,
    filed: Vec<NewFinding>,
}

/// A finding this sink wrote into a new directory, as the campaign record lists it.
pub use fuzz::campaign::record::NewFinding;

/// A findings directory that deduplicates, optionally reduces, and writes findings.
pub struct CorpusSink {
    root: PathBuf,
    state: Mutex<State>,
    codegen: CodegenOptions,
    reduce: Option<ReduceOptions>,
    versions: Versions,
    cross_check_engines: Vec<Arc<dyn Engine>>,
    not_reproduced: AtomicU64,
}

/// The number prefix of a finding directory name (`0007-mismatch-...` → 7).
fn dir_number(name: &str) -> Option<u32> {
    name.split('-').next()?.parse().ok()
}

impl CorpusSink {
    /// Opens (creating it if needed) a findings directory. `versions` describes the engines
    /// (`Pool::availability()` preferably; a `jax X jaxlib Y` string is accepted).
    pub fn open(
        root: &Path,
        codegen: CodegenOptions,
        reduce: Option<ReduceOptions>,
        versions: impl Into<Versions>,
    ) -> Result<CorpusSink, SinkError> {
        std::fs::create_dir_all(root).map_err(|error| SinkError::Io {
            path: root.to_path_buf(),
            error,
        })?;
        let buckets = Buckets::load(root)?;
        let mut next_dir = 1;
        let listing = std::fs::read_dir(root).map_err(|error| SinkError::Io {
            path: root.to_path_buf(),
            error,
        })?;
        for item in listing.flatten() {
            if let Some(n) = dir_number(&item.file_name().to_string_lossy()) {
                next_dir = next_dir.max(n + 1);
            }
        }
        Ok(CorpusSink {
            root: root.to_path_buf(),
            state: Mutex::new(State {
                buckets,
                next_dir,
                filed: Vec::new(),
            }),
            codegen,
            reduce,
            versions: versions.into(),
            cross_check_engines: Vec::new(),
            not_reproduced: AtomicU64::new(0),
        })
    }

    /// Re-runs every new in-process finding on `engines` (the campaign's JAX engines) before
    /// it is written, and records whether they reproduce it ([`CrossCheckRecord`]).
    pub fn with_cross_check(mut self, engines: Vec<Arc<dyn Engine>>) -> CorpusSink {
        self.cross_check_engines = engines;
        self
    }

    /// New findings the cross-check engines did not reproduce, so far.
    pub fn not_reproduced(&self) -> u64 {
        self.not_reproduced.load(Ordering::Relaxed)
    }

    /// The cross-check of a finding: only of one an in-process engine decided (a compiler crash
    /// has no engine, and a JAX engine's finding needs no second opinion from JAX), and only
    /// when cross-check engines are set. The JAX run happens under the sink's lock, like a
    /// reduction: one run per new bucket (and per smaller replacement of a bucket's case).
    /// `prepared` is the finding's case as the campaign or the reducer prepared it: its
    /// compile and reference serve the cross-check's engines too.
    fn cross_check(&self, finding: &Finding, prepared: &PreparedCase) -> Option<CrossCheckRecord> {
        let decided = finding.meta.report.decided_by?;
        if self.cross_check_engines.is_empty() || !decided.is_in_process() {
            return None;
        }
        debug_assert!(
            prepared.case() == &finding.case,
            "the finding's own prepared case"
        );
        let original = finding.meta.report.outcome;
        Some(cross_check_case(
            prepared,
            original,
            &self.cross_check_engines,
        ))
    }

    /// Cross-checks `finding` (see [`CorpusSink::cross_check`]) and records the result in its
    /// `meta.json` and `log.txt`; `new` counts a non-reproduced one in [`Self::not_reproduced`].
    fn add_cross_check(&self, finding: &mut Finding, prepared: &PreparedCase, new: bool) {
        if let Some(record) = self.cross_check(finding, prepared) {
            if new && record.result == CrossCheckResult::NotReproduced {
                self.not_reproduced.fetch_add(1, Ordering::Relaxed);
            }
            finding.log.push_str(&record.log_text());
            finding.meta.cross_check = Some(record);
        }
    }

    /// The findings written into new directories by this sink so far, in filing order.
    pub fn new_findings(&self) -> Vec<NewFinding> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .filed
            .clone()
    }

    /// The findings directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A snapshot of the buckets.
    pub fn buckets(&self) -> Buckets {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .buckets
            .clone()
    }

    /// Files one finding (see the module docs); `seed` is the case's generator seed.
    pub fn file_finding(
        &self,
        prepared: &PreparedCase,
        report: &CaseReport,
        seed: Option<u64>,
    ) -> Result<Filed, SinkError> {
        self.file_finding_from(prepared, report, seed, None)
    }

    /// [`CorpusSink::file_finding`] of a mutant of the seed kernel `origin` (`fuzz --seeds`):
    /// its provenance's `source` names the seed ([`seed_source`]).
    pub fn file_finding_from(
        &self,
        prepared: &PreparedCase,
        report: &CaseReport,
        seed: Option<u64>,
        origin: Option<&str>,
    ) -> Result<Filed, SinkError> {
        let case = prepared.case();
        let provenance = FindingProvenance {
            seed,
            generator: seed.map(|_| format!("pallas-diff-fuzz {}", env!("CARGO_PKG_VERSION"))),
            source: origin.map(seed_source),
        };
        let raw = signature(case, report);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let dir_name = format!("{:04}-{}", state.next_dir, raw.slug());
        if state.buckets.find(&raw.key()).is_some() {
            return self.known(&mut state, &raw, prepared, report, provenance);
        }
        // A new bucket: reduce first when possible.
        let mut finding = Finding::new(
            case,
            report,
            &self.codegen,
            self.versions.clone(),
            provenance.clone(),
        );
        let reduction = match &self.reduce {
            None => Err("reduction is off (--no-reduce)".to_string()),
            Some(opts)
                if !raw
                    .engine
                    .is_none_or(|id| opts.engines.iter().any(|e| e.id() == id)) =>
            {
                Err(format!(
                    "the reducer cannot run engine {}",
                    raw.engine.map_or("?", EngineId::name)
                ))
            }
            Some(opts) => reduce_finding(
                case,
                &raw,
                &opts.engines,
                opts.budget,
                opts.jobs,
                &self.codegen,
            )
            .map_err(|e| format!("the reducer gave up: {e}")),
        };
        let mut not_reduced = reduction.as_ref().err().cloned();
        // The case filed, prepared: the reduced one when reduced, else the campaign's.
        let mut reduced_prepared: Option<PreparedCase<'static>> = None;
        if let Ok(r) = reduction {
            let reduced_key = r.signature.key();
            // It converged on a known bucket's cause without its exact key: count it there.
            if let Some(target) = state.buckets.converged(&r.signature)
                && target != reduced_key
                && state.buckets.find(&reduced_key).is_none()
            {
                let b = state.buckets.buckets.get_mut(&target).expect("converged");
                b.count += 1;
                b.aliases.insert(raw.key());
                b.aliases.insert(reduced_key);
                state.buckets.save(&self.root)?;
                return Ok(Filed::Duplicate);
            }
            if reduced_key != raw.key() && state.buckets.find(&reduced_key).is_some() {
                // It reduced into a known bucket: count it there, remember the raw key.
                let filed =
                    self.known(&mut state, &r.signature, &r.prepared, &r.report, provenance)?;
                if let Some(b) = state
                    .buckets
                    .buckets
                    .values_mut()
                    .find(|b| b.key == reduced_key)
                {
                    b.aliases.insert(raw.key());
                }
                state.buckets.save(&self.root)?;
                return Ok(filed);
            }
            let mut reduced = Finding::new(
                r.case(),
                &r.report,
                &self.codegen,
                self.versions.clone(),
                provenance,
            );
            reduced.meta.set_signature(r.signature.clone());
            reduced.meta.reduction = Some(ReductionRecord {
                original_key: raw.key(),
                original_cost: CostRecord::of(case),
                original_body_lines: r.original_body_lines,
                body_lines: r.body_lines,
                attempts: r.attempts,
                steps: r.steps,
                engine_runs: r.engine_runs,
                seconds: r.seconds,
                exhausted: r.exhausted,
            });
            finding = reduced;
            // A reduction that ran but took no step left the case as found: say so, not
            // "reduced" (the summary hid a reducer that rejected every candidate that way).
            not_reduced = (r.steps == 0).then(|| {
                format!(
                    "no smaller candidate kept the signature ({} attempts, {} engine runs)",
                    r.attempts, r.engine_runs
                )
            });
            reduced_prepared = Some(r.prepared);
        }
        let sig = finding.meta.signature.clone();
        let dir_name = if sig.key() == raw.key() {
            dir_name
        } else {
            format!("{:04}-{}", state.next_dir, sig.slug())
        };
        let filed_prepared = match &reduced_prepared {
            Some(p) => p,
            None => prepared,
        };
        self.add_cross_check(&mut finding, filed_prepared, true);
        write_finding_dir(&self.root.join(&dir_name), &finding)?;
        state.next_dir += 1;
        state
            .buckets
            .record(&sig, CostRecord::of(&finding.case), &dir_name);
        if sig.key() != raw.key()
            && let Some(b) = state.buckets.buckets.get_mut(&sig.key())
        {
            b.aliases.insert(raw.key());
        }
        // Buckets filed earlier whose cause this one shows with fewer decisions merge into it.
        let merged = state.buckets.absorb_subsumed(&sig.key());
        state.buckets.save(&self.root)?;
        for dir in &merged {
            let path = self.root.join(dir);
            std::fs::remove_dir_all(&path).map_err(|error| SinkError::Io {
                path: path.clone(),
                error,
            })?;
            state.filed.retain(|f| f.dir != path);
        }
        state.filed.push(NewFinding {
            dir: self.root.join(&dir_name),
            outcome: finding.meta.report.outcome,
            engine: finding.meta.report.decided_by,
            signature: sig.key(),
            not_reduced,
        });
        Ok(Filed::New(self.root.join(dir_name)))
    }

    /// Counts a finding in its known bucket, replacing the bucket's case when this one is
    /// smaller (its provenance says so: [`REPLACED_BY_SMALLER`]).
    fn known(
        &self,
        state: &mut State,
        sig: &crate::signature::Signature,
        prepared: &PreparedCase,
        report: &CaseReport,
        provenance: FindingProvenance,
    ) -> Result<Filed, SinkError> {
        let case = prepared.case();
        let cost = CostRecord::of(case);
        if let Recorded::Known { dir, smaller: true } = state.buckets.record(sig, cost, "") {
            // Said in the directory, since the campaign's summary listed the bucket's first
            // case (and whether it was reduced), and this one is not reduced.
            let provenance = FindingProvenance {
                source: Some(match provenance.source {
                    Some(s) => format!("{s}; {REPLACED_BY_SMALLER}"),
                    None => REPLACED_BY_SMALLER.to_string(),
                }),
                ..provenance
            };
            let mut finding = Finding::new(
                case,
                report,
                &self.codegen,
                self.versions.clone(),
                provenance,
            );
            // The smaller case replaces the bucket's: its own cross-check goes with it.
            self.add_cross_check(&mut finding, prepared, false);
            write_finding_dir(&self.root.join(dir), &finding)?;
        }
        state.buckets.save(&self.root)?;
        Ok(Filed::Duplicate)
    }
}

/// Runs `case` (a finding's, outcome `original`) on the cross-check `engines` and records
/// what they say: the campaign's check of a new in-process finding, and `pallas-diff reduce`'s
/// re-run of it on the reduced case.
pub fn cross_check_case(
    prepared: &PreparedCase,
    original: fuzz::outcome::Outcome,
    engines: &[Arc<dyn Engine>],
) -> CrossCheckRecord {
    let engines: Vec<Box<dyn Engine>> = engines
        .iter()
        .map(|e| Box::new(SharedEngine(e.clone())) as Box<dyn Engine>)
        .collect();
    let report = prepared.check(&engines);
    CrossCheckRecord::of(engines.iter().map(|e| e.id()).collect(), original, &report)
}

/// The provenance note of a finding directory whose case a later, smaller duplicate replaced:
/// the directory holds that duplicate as found, not reduced.
pub const REPLACED_BY_SMALLER: &str = "a later duplicate, smaller than the bucket's earlier case (reduced or not), replaced it; \
     not itself reduced";

/// The provenance `source` of a mutant of seed kernel `name` (`fuzz --seeds`).
pub fn seed_source(name: &str) -> String {
    format!("{SEED_SOURCE_PREFIX}{name}")
}

/// How a provenance `source` that names a seed kernel begins ([`seed_source`]).
pub const SEED_SOURCE_PREFIX: &str = "mutant of seed kernel ";

impl FindingSink for CorpusSink {
    fn file(
        &self,
        prepared: &PreparedCase,
        report: &CaseReport,
        seed: u64,
    ) -> std::io::Result<Filed> {
        self.file_finding(prepared, report, Some(seed))
            .map_err(|e| std::io::Error::other(e.to_string()))
    }

    fn file_from(
        &self,
        prepared: &PreparedCase,
        report: &CaseReport,
        seed: u64,
        origin: Option<&str>,
    ) -> std::io::Result<Filed> {
        self.file_finding_from(prepared, report, Some(seed), origin)
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
}
