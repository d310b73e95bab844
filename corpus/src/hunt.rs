//! `pallas-diff hunt`: proves the harness by reintroducing each historical defect
//! ([`compiler::faults`]) and measuring how fast a campaign finds it from scratch.
//!
//! For each fault and each of K seeds: run a campaign with only that fault injected, until the
//! first finding that the fault causes (the same case is *not* a finding without the fault); reduce
//! it while both hold; record cases and seconds to detection, the reduced kernel body's lines and
//! the signature. A fault the generator cannot reach in budget is a generator gap: widen the
//! generator, never weaken the fault.
//!
//! JAX engines (seconds per new kernel) run behind a [`FaultGate`]: only on cases whose module
//! the fault changes, since a case compiled to the same module with and without the fault cannot
//! be a finding the fault causes. That keeps the few JAX workers on the cases that matter, and
//! lets the hunt check "clean without the fault" and reduce with the JAX engines too (reduction
//! candidates the fault does not change are decided in-process, the rest by JAX in parallel).
//!
//! Every reproducer says what it needs: the script opens with comments naming the injected fault
//! and the `pallas-diff check ... --inject <fault>` line that shows it (without the fault the
//! case agrees: it is a defect of pallas-diff's model, not of Helion), and `hunt.json` in the
//! output directory lists every reproducer with that line ([`Reproducer`]).

use compiler::compile::CodegenOptions;
use compiler::faults::{Fault, FaultSet};
use finding::minimize::kernel_body_lines;
use finding::report::engines_to_reproduce;
use finding::signature::signature;
use fuzz::campaign::sink::{Filed, FindingSink};
use fuzz::campaign::{self, CampaignConfig};
use fuzz::check::{CaseReport, Depth, PreparedCase, compile_guarded};
use fuzz::engines::{Engine, EngineId, EngineRun, EngineStatus, Job};
use fuzz::generators::GenConfig;
use lang::ir::Case;
use reducer::{Budget, Screen, reduce_staged};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Builds the engines of one campaign: (in-process, JAX).
pub type EngineFactory = Box<dyn Fn() -> (Vec<Box<dyn Engine>>, Vec<Box<dyn Engine>>) + Sync>;

/// How a hunt runs.
pub struct HuntConfig {
    /// Faults to hunt, one at a time.
    pub faults: Vec<Fault>,
    /// Seeds per fault.
    pub repeat: usize,
    /// Campaign budget per seed.
    pub budget: Duration,
    /// Case budget per seed (deterministic, for CI): detection within the first N cases.
    pub cases: Option<u64>,
    /// Reduction budget per detection.
    pub reduce: Budget,
    /// Builds the engines of one campaign (in-process, then JAX).
    pub engines: EngineFactory,
    /// In-process threads.
    pub jobs: usize,
    /// JAX confirmation threads.
    pub jax_threads: usize,
    /// Generator configuration.
    pub generator: GenConfig,
    /// Where reduced case scripts go (`<fault>-<k>.py`, and `hunt.json`).
    pub out: PathBuf,
    /// Padding policy.
    pub poison_padding: bool,
}

/// One fault's result: a row of `hunt.json` (written by the hunt, read by `dashboard`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HuntRow {
    /// The fault's name.
    pub fault: String,
    /// Seeds that detected it.
    pub detected: usize,
    /// Seeds run.
    pub repeats: usize,
    /// Median cases to detection (over detecting seeds).
    pub median_cases: Option<u64>,
    /// Median seconds to detection.
    pub median_seconds: Option<f64>,
    /// Kernel-body lines of the (largest) reduced reproducer.
    pub reduced_lines: Option<usize>,
    /// Signature of the first detection.
    pub signature: Option<String>,
    /// The first reduced case script.
    pub case: Option<PathBuf>,
    /// How to show the first reproducer ([`Reproducer::reproduce`]).
    pub reproduce: Option<String>,
    /// Every reproducer written, one per detecting seed.
    #[serde(default)]
    pub reproducers: Vec<Reproducer>,
}

/// One reduced reproducer of a fault.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Reproducer {
    /// The seed index (`k` of `<fault>-<k>.py`).
    pub seed: usize,
    /// The case script.
    pub path: PathBuf,
    /// The injected fault it needs.
    pub fault: String,
    /// The engine that detected it (none: the compiler).
    pub engine: Option<EngineId>,
    /// Its signature (of the unreduced detection).
    pub signature: String,
    /// Cases to detection.
    pub cases: u64,
    /// Seconds to detection.
    pub seconds: f64,
    /// Kernel-body lines after reduction.
    pub body_lines: usize,
    /// Wall-clock seconds the reduction took (absent in a `hunt.json` written before it was
    /// recorded: 0).
    #[serde(default)]
    pub reduce_seconds: f64,
    /// The command that shows the finding: `pallas-diff check <path> --inject <fault>
    /// --engines oracle,<engine>`.
    pub reproduce: String,
}

/// The `pallas-diff check` command line that shows a reproducer's finding.
pub fn reproduce_command(path: &Path, fault: Fault, engine: Option<EngineId>) -> String {
    format!(
        "pallas-diff check {} --inject {} --engines {}",
        path.display(),
        fault.name(),
        engines_to_reproduce(engine)
    )
}

/// A JAX engine that runs only where the hunted fault changes the emitted module (see the
/// module docs); elsewhere it reports [`EngineStatus::NotRun`], which agrees with everything.
/// It runs only under the faulty options (the campaign's and the reducer's), so a job's module
/// is the faulty one and the clean compile is the gate's only work; a check under the clean
/// options uses the engines ungated.
struct FaultGate {
    inner: Box<dyn Engine>,
    clean: CodegenOptions,
}

impl FaultGate {
    fn wrap(engines: Vec<Box<dyn Engine>>, clean: CodegenOptions) -> Vec<Box<dyn Engine>> {
        engines
            .into_iter()
            .map(|inner| Box::new(FaultGate { inner, clean }) as Box<dyn Engine>)
            .collect()
    }
}

/// Whether `faulty` compiles `case` to another outcome or module than `clean` does.
fn fault_changes(case: &Case, clean: &CodegenOptions, faulty: &CodegenOptions) -> bool {
    match (compile_guarded(case, clean), compile_guarded(case, faulty)) {
        (Ok(a), Ok(b)) => a.source() != b.source() || a.verdict() != b.verdict(),
        // A compiler crash either way is decided without JAX; let the engine see it.
        _ => true,
    }
}

impl Engine for FaultGate {
    fn id(&self) -> fuzz::engines::EngineId {
        self.inner.id()
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let changed = match compile_guarded(job.case, &self.clean) {
            Ok(clean) => clean.source() != job.emitted,
            // A compiler crash either way is decided without JAX; let the engine see it.
            Err(_) => true,
        };
        if changed {
            return self.inner.run(job);
        }
        EngineRun {
            engine: self.inner.id(),
            status: EngineStatus::NotRun("the hunted fault does not change this module".into()),
            seconds: 0.0,
            generated: None,
            input_sets: None,
        }
    }
}

struct HuntSink<'e> {
    /// Every engine, ungated: the check under the clean options.
    engines: &'e [Box<dyn Engine>],
    clean: CodegenOptions,
    stop: Arc<AtomicBool>,
    found: Mutex<Option<(Case, CaseReport)>>,
}

impl FindingSink for HuntSink<'_> {
    fn file(
        &self,
        prepared: &PreparedCase,
        report: &CaseReport,
        _seed: u64,
    ) -> std::io::Result<Filed> {
        let case = prepared.case();
        // Caused by the fault only if the same case is clean without it (its inputs and
        // reference are the campaign's).
        if prepared
            .under(&self.clean)
            .check(self.engines)
            .outcome
            .is_finding()
        {
            return Ok(Filed::Duplicate);
        }
        let mut found = self
            .found
            .lock()
            .map_err(|_| std::io::Error::other("hunt lock"))?;
        if found.is_none() {
            *found = Some((case.clone(), clone_report(report)));
            self.stop.store(true, Ordering::Relaxed);
        }
        Ok(Filed::New(PathBuf::new()))
    }
}

fn clone_report(r: &CaseReport) -> CaseReport {
    CaseReport {
        outcome: r.outcome,
        decided_by: r.decided_by,
        verdict: r.verdict.clone(),
        gap: r.gap.clone(),
        crash: r.crash.clone(),
        reference: r.reference.clone(),
        eager_reference: r.eager_reference.clone(),
        engines: r.engines.clone(),
        mismatch: r.mismatch.clone(),
        known_issue: r.known_issue,
        emitted: r.emitted.clone(),
        compile_seconds: r.compile_seconds,
        decisions: r.decisions.clone(),
        values_match: r.values_match.clone(),
    }
}

/// The reduction times of a hunt's reproducers: (median, p90, count) in seconds, `None`
/// without reproducers. The median is the hunt table's (the upper one of an even count); the
/// p90 is by nearest rank (of 10 values, the 9th smallest).
pub fn reduction_times(rows: &[HuntRow]) -> Option<(f64, f64, usize)> {
    let mut v: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.reproducers.iter().map(|p| p.reduce_seconds))
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let p90 = v[((0.9 * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    Some((median(v.clone())?, p90, v.len()))
}

fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> Option<T> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().or(None)
}

/// Hunts every configured fault; `progress` gets one line per seed.
pub fn hunt(cfg: &HuntConfig, progress: &(dyn Fn(&str) + Sync)) -> std::io::Result<Vec<HuntRow>> {
    std::fs::create_dir_all(&cfg.out)?;
    let mut rows = Vec::new();
    for (fi, &fault) in cfg.faults.iter().enumerate() {
        #[allow(
            clippy::needless_update,
            reason = "CodegenOptions is growing: the update keeps this compiling"
        )]
        let faulty = CodegenOptions {
            poison_padding: cfg.poison_padding,
            faults: FaultSet::only(fault),
            ..CodegenOptions::default()
        };
        let clean = CodegenOptions {
            faults: FaultSet::NONE,
            ..faulty
        };
        let mut cases = Vec::new();
        let mut seconds = Vec::new();
        let mut lines = Vec::new();
        let mut reproducers: Vec<Reproducer> = Vec::new();
        for k in 0..cfg.repeat {
            let (in_process, jax) = (cfg.engines)();
            let jax = FaultGate::wrap(jax, clean);
            // The reducer checks with the faulty options with every engine, JAX ones gated;
            // the sink and the reducer check the clean options with every engine ungated.
            let (mut check_engines, check_jax) = (cfg.engines)();
            let uses_jax = !check_jax.is_empty();
            check_engines.extend(FaultGate::wrap(check_jax, clean));
            let (mut clean_engines, clean_jax) = (cfg.engines)();
            clean_engines.extend(clean_jax);
            let stop = Arc::new(AtomicBool::new(false));
            let sink = HuntSink {
                engines: &clean_engines,
                clean,
                stop: stop.clone(),
                found: Mutex::new(None),
            };
            let campaign_cfg = CampaignConfig {
                time: Some(cfg.budget),
                cases: cfg.cases,
                jobs: cfg.jobs,
                seed: (fi as u64) << 32 | k as u64,
                in_process,
                jax,
                jax_threads: cfg.jax_threads,
                // Every case goes to the (gated) JAX engines: the gate answers the cases the
                // fault does not change at once, so waiting costs only the ones that matter,
                // and none of those is dropped for a full queue.
                confirmation: campaign::Confirmation::Every,
                generator: cfg.generator.clone(),
                codegen: faulty,
                dump_cases: None,
                digest: None,
                seeds: None,
            };
            let summary = campaign::run(&campaign_cfg, &sink, &stop, &|_, _| {})?;
            let found = sink
                .found
                .into_inner()
                .map_err(|_| std::io::Error::other("hunt lock"))?;
            let Some((case, report)) = found else {
                progress(&format!(
                    "{fault} seed {k}: not detected in {:.1} s ({} cases)",
                    summary.seconds, summary.stats.cases
                ));
                continue;
            };
            cases.push(summary.stats.cases);
            seconds.push(summary.seconds);
            let sig = signature(&case, &report);
            let holds = |c: &Case| {
                let with_fault = PreparedCase::new(Depth::Full, c, &faulty);
                let r = with_fault.check(&check_engines);
                r.outcome.is_finding()
                    && sig.holds_for(&signature(c, &r))
                    && !with_fault
                        .under(&clean)
                        .check(&clean_engines)
                        .outcome
                        .is_finding()
            };
            // With JAX engines, candidates the fault does not change are boring without a JAX
            // run; the others run on the JAX workers in parallel.
            let reduce_once = |c: &Case| {
                reduce_staged(
                    c,
                    cfg.reduce,
                    if uses_jax { cfg.jax_threads.max(1) } else { 1 },
                    |c| match (uses_jax, fault_changes(c, &clean, &faulty)) {
                        (_, false) => Screen::Boring,
                        (true, true) => Screen::Run(c.clone()),
                        (false, true) if holds(c) => Screen::Interesting,
                        (false, true) => Screen::Boring,
                    },
                    |c: Case| holds(&c),
                )
                .case
            };
            let reduce_start = std::time::Instant::now();
            let reduced = reduce_once(&case);
            let reduce_seconds = reduce_start.elapsed().as_secs_f64();
            let body = kernel_body_lines(&reduced);
            lines.push(body);
            let path = cfg.out.join(format!("{}-{k}.py", fault.name()));
            let reproduce = reproduce_command(&path, fault, sig.engine);
            write_script(&path, &reduced, fault, &sig.key(), &reproduce)?;
            progress(&format!(
                "{fault} seed {k}: detected after {} cases in {:.1} s; reduced to {body} body lines ({}): {}",
                summary.stats.cases,
                summary.seconds,
                sig.key(),
                path.display()
            ));
            reproducers.push(Reproducer {
                seed: k,
                path,
                fault: fault.name().to_string(),
                engine: sig.engine,
                signature: sig.key(),
                cases: summary.stats.cases,
                seconds: summary.seconds,
                body_lines: body,
                reduce_seconds,
                reproduce,
            });
        }
        rows.push(HuntRow {
            fault: fault.name().to_string(),
            detected: cases.len(),
            repeats: cfg.repeat,
            median_cases: median(cases),
            median_seconds: median(seconds),
            reduced_lines: lines.iter().copied().max(),
            signature: reproducers.first().map(|r| r.signature.clone()),
            case: reproducers.first().map(|r| r.path.clone()),
            reproduce: reproducers.first().map(|r| r.reproduce.clone()),
            reproducers,
        });
        // After every fault, so an interrupted hunt still leaves the index of what it wrote.
        let index = finding::json::to_string_of(&rows).map_err(std::io::Error::other)?;
        finding::fsio::write_atomic(&cfg.out.join("hunt.json"), index.as_bytes())?;
    }
    Ok(rows)
}

/// The reproducer's header: the script finds nothing without the fault, so it says which one.
fn script_header(fault: Fault, key: &str, reproduce: &str) -> String {
    format!(
        "# pallas-diff hunt: a reproducer of the injected fault `{}`:\n\
         #   {}.\n\
         # It shows `{key}` only with that fault injected into pallas-diff's model of the\n\
         # lowering; real Helion has no such defect and should agree with the reference.\n\
         # reproduce with: {reproduce}\n",
        fault.name(),
        fault.summary()
    )
}

fn write_script(
    path: &Path,
    case: &Case,
    fault: Fault,
    key: &str,
    reproduce: &str,
) -> std::io::Result<()> {
    let case = lang::render::spell_out_inputs(case).unwrap_or_else(|_| case.clone());
    let text = format!(
        "{}{}",
        script_header(fault, key, reproduce),
        lang::render::render_case(&case)
    );
    finding::fsio::write_atomic(path, text.as_bytes())?;
    Ok(())
}

/// The hunt table.
pub fn table(rows: &[HuntRow]) -> String {
    let mut s = format!(
        "{:<34} {:>8} {:>12} {:>12} {:>8}  signature\n",
        "fault", "detected", "median cases", "median s", "lines"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<34} {:>5}/{:<2} {:>12} {:>12} {:>8}  {}\n",
            r.fault,
            r.detected,
            r.repeats,
            r.median_cases.map_or("-".into(), |c| c.to_string()),
            r.median_seconds.map_or("-".into(), |c| format!("{c:.2}")),
            r.reduced_lines.map_or("-".into(), |c| c.to_string()),
            r.signature.as_deref().unwrap_or("-"),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::frontend::parse_case;
    use lang::render::render_case;

    #[test]
    fn reduction_times_are_the_tables_median_and_a_nearest_rank_p90() {
        let row = |secs: &[f64]| HuntRow {
            fault: "d1-read-after-write".into(),
            detected: secs.len(),
            repeats: secs.len(),
            median_cases: None,
            median_seconds: None,
            reduced_lines: None,
            signature: None,
            case: None,
            reproduce: None,
            reproducers: secs
                .iter()
                .map(|&s| Reproducer {
                    seed: 0,
                    path: "r.py".into(),
                    fault: "d1-read-after-write".into(),
                    engine: None,
                    signature: String::new(),
                    cases: 1,
                    seconds: 0.0,
                    body_lines: 1,
                    reduce_seconds: s,
                    reproduce: String::new(),
                })
                .collect(),
        };
        assert_eq!(reduction_times(&[]), None);
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(
            reduction_times(&[row(&ten[..4]), row(&ten[4..])]),
            Some((6.0, 9.0, 10))
        );
        assert_eq!(reduction_times(&[row(&[3.0])]), Some((3.0, 3.0, 1)));
    }

    #[test]
    fn a_reproducer_names_its_fault_and_still_parses_as_the_case() {
        let case = crate::expectations::load_spec_kernels()
            .unwrap()
            .into_iter()
            .find(|k| k.name() == "d12_tail_run_masked_not_clamped")
            .unwrap()
            .case;
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("d12-tail-clamped-before-mask-0.py");
        let fault = Fault::D12TailClampedBeforeMask;
        let reproduce = reproduce_command(&path, fault, Some(EngineId::PallasSim));
        assert_eq!(
            reproduce,
            format!(
                "pallas-diff check {} --inject d12-tail-clamped-before-mask --engines oracle,pallas-sim",
                path.display()
            )
        );
        write_script(
            &path,
            &case,
            fault,
            "mismatch/pallas-sim/values",
            &reproduce,
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(
                "# pallas-diff hunt: a reproducer of the injected fault `d12-tail-clamped-before-mask`:\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(&format!("# reproduce with: {reproduce}\n")),
            "{text}"
        );
        let back = parse_case(&text, "repro.py").unwrap();
        let spelled = lang::render::spell_out_inputs(&case).unwrap();
        assert_eq!(render_case(&back), render_case(&spelled));
        assert_eq!(
            reproduce_command(&path, fault, None),
            format!(
                "pallas-diff check {} --inject d12-tail-clamped-before-mask --engines oracle",
                path.display()
            )
        );
    }
}
