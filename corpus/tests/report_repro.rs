//! Bug reports and standalone reproducers against real JAX, with a real finding made without a
//! real bug: a spec kernel is compiled and its emitted module tampered with (the tile run
//! `pl.ds(offset_2, 2)` made to start at 0, the loop offset dropped), so JAX's TPU interpreter
//! returns something else than the reference. The `repro.py` of the tampered module must fail
//! in the worker's Python, the `repro.py` of the module as emitted must pass; the finding's
//! directory must render as a report; the findings directory must count a known bug again
//! without a second directory, and reduce a new one; and the finding must join the corpus once,
//! replay as expected, and say "fixed?" against the untampered engine. A findings directory
//! with cross-check engines re-runs a new in-process finding on them and records whether they
//! reproduce it.

use compiler::compile::{CodegenOptions, compile};
use finding::finding::{Finding, FindingProvenance, Versions, write_finding_dir};
use finding::minimize::SharedEngine;
use finding::report::{Repro, markdown, reference_outputs, repro_of};
use finding::repro::repro_py;
use finding::sink::{CorpusSink, ReduceOptions};
use fuzz::campaign::sink::Filed;
use fuzz::check::{Depth, PreparedCase, check_case};
use fuzz::engines::jax::Jax;
use fuzz::engines::{Engine, EngineRun, Job};
use lang::ir::Case;
use pallas_diff_corpus::entry::{Added, Corpus, Expected, NewFinding, Provenance};
use pallas_diff_corpus::expectations::load_spec_kernels;
use pallas_diff_corpus::replay::{TrialResult, check_reference, observe, replay_engine};
use reducer::Budget;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

const FROM: &str = "pl.ds(offset_2, 2)";
const TO: &str = "pl.ds(0 * offset_2, 2)";

/// The TPU interpreter running the emitted module with the inner tile run's start dropped.
struct OffsetDropped(Jax);

impl Engine for OffsetDropped {
    fn id(&self) -> fuzz::engines::EngineId {
        self.0.id()
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let tampered = job.emitted.map(|s| s.replace(FROM, TO));
        self.0.run(&Job {
            emitted: tampered.as_deref(),
            ..*job
        })
    }
}

struct Jx {
    python: PathBuf,
    pool: Arc<tpu_runner::Pool>,
}

fn jax() -> &'static Jx {
    static JX: OnceLock<Jx> = OnceLock::new();
    JX.get_or_init(|| {
        let python = tpu_runner::provision().expect("provision JAX");
        let pool = tpu_runner::Pool::new(tpu_runner::PoolConfig::new(&python).with_workers(2))
            .expect("start JAX workers");
        Jx {
            python,
            pool: Arc::new(pool),
        }
    })
}

fn tampering() -> Arc<dyn Engine> {
    Arc::new(OffsetDropped(Jax::new(
        tpu_runner::Mode::PallasTpuInterpret,
        jax().pool.clone(),
    )))
}

fn d12() -> Case {
    load_spec_kernels()
        .unwrap()
        .into_iter()
        .find(|k| k.name() == "d12_tail_run_masked_not_clamped")
        .unwrap()
        .case
}

/// Runs a script in the worker's Python: (success, stdout + stderr).
fn run_python(python: &Path, script: &str) -> (bool, String) {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("repro.py");
    std::fs::write(&path, script).unwrap();
    let out = Command::new(python)
        .arg(&path)
        .current_dir(t.path())
        .output()
        .expect("run python");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A findings directory in `dir` (no reduction) with the JAX workers' versions.
fn jax_sink(dir: &Path, codegen: CodegenOptions) -> CorpusSink {
    CorpusSink::open(dir, codegen, None, jax().pool.availability()).unwrap()
}

/// The check of `case` by the tampering engine alone.
fn tampered_report(case: &Case) -> fuzz::check::CaseReport {
    let engines: Vec<Box<dyn Engine>> = vec![Box::new(SharedEngine(tampering()))];
    check_case(case, &engines, &CodegenOptions::default())
}

fn finding_of(case: &Case) -> Finding {
    let report = tampered_report(case);
    assert_eq!(report.outcome.name(), "mismatch", "{:?}", report.engines);
    Finding::new(
        case,
        &report,
        &CodegenOptions::default(),
        Versions::from(jax().pool.availability()),
        FindingProvenance::default(),
    )
}

#[test]
fn repro_py_fails_for_the_finding_and_passes_after_the_fix() {
    let case = d12();
    let emitted = compile(&case, &CodegenOptions::default())
        .source()
        .expect("d12 lowers")
        .to_string();
    assert!(emitted.contains(FROM), "{emitted}");
    let tampered = emitted.replace(FROM, TO);
    let expected = match reference_outputs(&finding_of(&case)) {
        Ok(e) => e,
        Err(e) => panic!("{e}"),
    };
    let mode = tpu_runner::Mode::PallasTpuInterpret;
    let bad = repro_py(&case, &tampered, mode, &expected, "tampered").unwrap();
    let good = repro_py(&case, &emitted, mode, &expected, "as emitted").unwrap();
    let (ok, out) = run_python(&jax().python, &bad);
    assert!(!ok, "the repro of the tampered module passed:\n{out}");
    assert!(out.contains("disagrees with the eager reference"), "{out}");
    assert!(out.contains("Mismatched elements"), "{out}");
    let (ok, out) = run_python(&jax().python, &good);
    assert!(ok, "the repro of the module as emitted failed:\n{out}");
    assert!(out.contains("OK: every output matches"), "{out}");
    // The lowering check as a reproducer too.
    let lower = repro_py(
        &case,
        &emitted,
        tpu_runner::Mode::PallasTpuLower,
        &expected,
        "lower",
    )
    .unwrap();
    let (ok, out) = run_python(&jax().python, &lower);
    assert!(ok, "{out}");
}

#[test]
fn a_finding_directory_renders_as_a_report_with_a_failing_repro() {
    let f = finding_of(&d12());
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("0001-mismatch-pallas-tpu-interpret");
    write_finding_dir(&dir, &f).unwrap();
    let back = Finding::load(&dir).unwrap();
    let md = markdown(&back);
    for section in [
        "# mismatch in `pallas-tpu-interpret`: kernel `tail_run` (decisions loop=fori_loop, resident-load, run=tile.mask, materialize)",
        "## Case script (Helion)",
        "## Emitted Pallas module",
        "## Reference vs engine",
        "| [0, 0, 0] | 4 | 7 |",
        "## Verdict",
        "lowered",
        "## Engines and versions",
        "jax 0.",
        "## Standalone reproducer (`repro.py`)",
        "np.testing.assert_allclose",
    ] {
        assert!(md.contains(section), "`{section}` missing from:\n{md}");
    }
    // The report's reproducer is of the module the engine ran: the emitted one. The engine
    // tampered with it on the way, so the emitted module itself agrees: the repro passes,
    // which is what a report of a *tampered engine* must say (the bug is not in the module).
    let Repro::Script(script) = repro_of(&back) else {
        panic!("no repro");
    };
    let (ok, out) = run_python(&jax().python, &script);
    assert!(ok, "{out}");
    // With the tampered module in the finding (as a compiler bug would have emitted it), the
    // report's reproducer fails.
    let mut buggy = back.clone();
    buggy.emitted = buggy.emitted.map(|s| s.replace(FROM, TO));
    let Repro::Script(script) = repro_of(&buggy) else {
        panic!("no repro");
    };
    let (ok, out) = run_python(&jax().python, &script);
    assert!(!ok, "{out}");
}

#[test]
fn the_findings_directory_counts_a_known_bug_and_reduces_a_new_one() {
    let case = d12();
    let f = finding_of(&case);
    let report = tampered_report(&case);
    // Without reduction: one directory, a count of two.
    let t = tempfile::tempdir().unwrap();
    let sink = jax_sink(t.path(), CodegenOptions::default());
    let first = sink
        .file_finding(
            &PreparedCase::new(Depth::Full, &case, &CodegenOptions::default()),
            &report,
            Some(1),
        )
        .unwrap();
    let Filed::New(dir) = first else {
        panic!("{first:?}")
    };
    assert_eq!(
        sink.file_finding(
            &PreparedCase::new(Depth::Full, &case, &CodegenOptions::default()),
            &report,
            Some(2)
        )
        .unwrap(),
        Filed::Duplicate
    );
    let buckets = sink.buckets();
    assert_eq!(buckets.buckets.len(), 1);
    assert_eq!(buckets.total(), 2);
    assert_eq!(Finding::load(&dir).unwrap().meta.key, f.meta.key);
    let dirs = std::fs::read_dir(t.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(dirs, 1);
    // Reopened, the index is on disk.
    let again =
        CorpusSink::open(t.path(), CodegenOptions::default(), None, None::<String>).unwrap();
    assert_eq!(again.buckets(), buckets);
    // With reduction: the finding is filed reduced, and the raw finding is then known.
    let t = tempfile::tempdir().unwrap();
    let sink = CorpusSink::open(
        t.path(),
        CodegenOptions::default(),
        Some(ReduceOptions {
            budget: Budget {
                attempts: 5_000,
                time: Duration::from_secs(30),
            },
            engines: vec![tampering()],
            jobs: 2,
        }),
        jax().pool.availability(),
    )
    .unwrap();
    let Filed::New(dir) = sink
        .file_finding(
            &PreparedCase::new(Depth::Full, &case, &CodegenOptions::default()),
            &report,
            Some(1),
        )
        .unwrap()
    else {
        panic!("not new");
    };
    let reduced = Finding::load(&dir).unwrap();
    let r = reduced.meta.reduction.as_ref().expect("reduced");
    println!(
        "reduced d12 {} -> {} lines in {:.1}s ({} engine runs)",
        r.original_body_lines, r.body_lines, r.seconds, r.engine_runs
    );
    assert!(r.body_lines <= r.original_body_lines);
    assert_eq!(
        sink.file_finding(
            &PreparedCase::new(Depth::Full, &case, &CodegenOptions::default()),
            &report,
            Some(2)
        )
        .unwrap(),
        Filed::Duplicate
    );
    assert_eq!(sink.buckets().total(), 2);
}

#[test]
fn a_reduced_finding_joins_the_corpus_once_and_replays_as_expected() {
    let case = d12();
    let engine = tampering();
    let codegen = CodegenOptions::default();
    let reports = observe(&case, std::slice::from_ref(&engine), &codegen);
    let reports_ref: Vec<(fuzz::engines::EngineId, &fuzz::check::CaseReport)> =
        reports.iter().map(|(n, r)| (*n, r)).collect();
    let t = tempfile::tempdir().unwrap();
    let mut corpus = Corpus::load(t.path()).unwrap();
    let new = || NewFinding {
        case: &case,
        title: "tile run read at offset 0",
        provenance: Provenance {
            source: "test: a tampered module".into(),
            ..Provenance::default()
        },
        link: Some("https://github.com/pytorch/helion/issues/0"),
        codegen,
        distinct: false,
    };
    let Added::New(path) = corpus.add_finding(new(), &reports_ref).unwrap() else {
        panic!("not added");
    };
    assert_eq!(
        corpus.add_finding(new(), &reports_ref).unwrap(),
        Added::Existing("0001-tail-run-tile-run-read-at-offset-0".into())
    );
    // A distinct finding is still the existing entry when its kernel is the same.
    let again = NewFinding {
        distinct: true,
        ..new()
    };
    assert_eq!(
        corpus.add_finding(again, &reports_ref).unwrap(),
        Added::Existing("0001-tail-run-tile-run-read-at-offset-0".into())
    );
    let corpus = Corpus::load(t.path()).unwrap();
    assert_eq!(corpus.entries.len(), 1);
    let e = &corpus.entries[0];
    assert_eq!(e.path, path);
    assert_eq!(
        e.entry
            .expected(
                "pallas-tpu-interpret"
                    .parse::<fuzz::engines::EngineId>()
                    .unwrap()
            )
            .unwrap()
            .to_string(),
        "finding:mismatch/pallas-tpu-interpret/values/loop=fori_loop+resident-load+run=tile.mask+materialize"
    );
    assert_eq!(
        e.entry.expected(
            "pallas-interpret"
                .parse::<fuzz::engines::EngineId>()
                .unwrap()
        ),
        Some(&Expected::Agree)
    );
    assert!(
        e.entry
            .links
            .contains_key(&"pallas-tpu-interpret".parse().unwrap())
    );
    assert_eq!(check_reference(e), TrialResult::Pass);
    // Replayed with the (still tampering) engine, the finding is as expected.
    assert_eq!(replay_engine(&e.entry, &engine), TrialResult::Pass);
    // Replayed with the real TPU interpreter, it now agrees: "fixed?".
    let fixed: Arc<dyn Engine> = Arc::new(Jax::new(
        tpu_runner::Mode::PallasTpuInterpret,
        jax().pool.clone(),
    ));
    let TrialResult::Fail { message, .. } = replay_engine(&e.entry, &fixed) else {
        panic!("a fixed finding passed");
    };
    assert!(message.contains("fixed? update the entry"), "{message}");
    // Another kernel with the same finding key joins only as a distinct finding.
    let mut other = case.clone();
    other.kernel.name = "other_kernel".into();
    let other_reports = observe(&other, std::slice::from_ref(&engine), &codegen);
    let other_ref: Vec<(fuzz::engines::EngineId, &fuzz::check::CaseReport)> =
        other_reports.iter().map(|(n, r)| (*n, r)).collect();
    let mut corpus = Corpus::load(t.path()).unwrap();
    let finding = |distinct| NewFinding {
        case: &other,
        distinct,
        ..new()
    };
    assert_eq!(
        corpus.add_finding(finding(false), &other_ref).unwrap(),
        Added::Existing("0001-tail-run-tile-run-read-at-offset-0".into())
    );
    let Added::New(path) = corpus.add_finding(finding(true), &other_ref).unwrap() else {
        panic!("a distinct kernel was not added");
    };
    assert!(
        path.ends_with("0002-other-kernel-tile-run-read-at-offset-0.json"),
        "{path:?}"
    );
}

/// A campaign naming JAX engines re-runs each new in-process finding on them before filing it.
/// A pallas-sim finding from a real (injected) miscompile is reproduced by the TPU interpreter;
/// a finding a JAX engine decided is not re-run; JAX agreeing with the reference (here: the
/// same case without the fault) reads as "not reproduced"; and a `meta.json` written before
/// cross-checks existed still loads.
#[test]
fn new_in_process_findings_are_cross_checked_on_the_jax_engines() {
    use compiler::faults::{Fault, FaultSet};
    use finding::finding::{CrossCheckRecord, CrossCheckResult, FindingMeta};
    use fuzz::outcome::Outcome;
    let case = d12();
    let faulty = CodegenOptions {
        faults: FaultSet::only(Fault::D12TailClampedBeforeMask),
        ..CodegenOptions::default()
    };
    let sim = fuzz::engines::build(&[fuzz::engines::EngineId::PallasSim], None).unwrap();
    let report = check_case(&case, &sim, &faulty);
    assert_eq!(report.outcome, Outcome::Mismatch);
    assert_eq!(report.decided_by, Some(fuzz::engines::EngineId::PallasSim));
    let interpret: Arc<dyn Engine> = Arc::new(Jax::new(
        tpu_runner::Mode::PallasTpuInterpret,
        jax().pool.clone(),
    ));
    let t = tempfile::tempdir().unwrap();
    let sink = jax_sink(t.path(), faulty).with_cross_check(vec![interpret.clone()]);
    let Filed::New(dir) = sink
        .file_finding(
            &PreparedCase::new(Depth::Full, &case, &faulty),
            &report,
            Some(1),
        )
        .unwrap()
    else {
        panic!("not new");
    };
    let f = Finding::load(&dir).unwrap();
    let cc = f.meta.cross_check.as_ref().expect("cross-checked");
    assert_eq!(cc.result, CrossCheckResult::Reproduced, "{cc:?}");
    assert_eq!(
        cc.engines,
        ["pallas-tpu-interpret"
            .parse::<fuzz::engines::EngineId>()
            .unwrap()]
    );
    assert!(
        f.log
            .contains("cross-check (pallas-tpu-interpret): mismatch: reproduced"),
        "{}",
        f.log
    );
    assert_eq!(sink.not_reproduced(), 0);

    // Without the fault, JAX agrees with the reference: what a pallas-sim bug looks like.
    let engines: Vec<Box<dyn Engine>> = vec![Box::new(SharedEngine(interpret.clone()))];
    let clean = check_case(&case, &engines, &CodegenOptions::default());
    let record = CrossCheckRecord::of(
        vec!["pallas-tpu-interpret".parse().expect("an engine")],
        Outcome::Mismatch,
        &clean,
    );
    assert_eq!(record.result, CrossCheckResult::NotReproduced, "{record:?}");
    assert!(record.log_text().contains("not reproduced"));

    // A JAX engine's own finding gets no JAX cross-check.
    let report = tampered_report(&case);
    let t = tempfile::tempdir().unwrap();
    let sink = jax_sink(t.path(), CodegenOptions::default()).with_cross_check(vec![interpret]);
    let Filed::New(dir) = sink
        .file_finding(
            &PreparedCase::new(Depth::Full, &case, &CodegenOptions::default()),
            &report,
            Some(1),
        )
        .unwrap()
    else {
        panic!("not new");
    };
    let meta = Finding::load(&dir).unwrap().meta;
    assert_eq!(meta.cross_check, None);

    // meta.json from before cross-checks (no `cross_check` key) loads.
    let mut json = serde_json::to_value(&meta).unwrap();
    json.as_object_mut().unwrap().remove("cross_check");
    let old: FindingMeta = serde_json::from_value(json).unwrap();
    assert_eq!(old, meta);
}
