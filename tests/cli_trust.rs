//! The built `pallas-diff` binary on runs that must not pass silently or mislead, without JAX
//! (`PALLAS_DIFF_PYTHON` points at no interpreter, so nothing can provision one): `replay` of a
//! missing or empty directory, of a selection with no trial, of a findings directory; `hunt`'s
//! exit code and reproducers; `reduce` into a new directory (or in place, keeping the original)
//! with the cross-check kept; `report` of an injected fault; `corpus add`.

mod common;
use common::{Run, run_in, run_with};

use compiler::compile::CodegenOptions;
use compiler::faults::{Fault, FaultSet};
use corpus::expectations::load_spec_kernels;
use finding::finding::{
    CrossCheckRecord, CrossCheckResult, Finding, FindingProvenance, ReportRecord, Versions,
    write_finding_dir,
};
use finding::signature::{Buckets, CostRecord};
use fuzz::check::check_case;
use std::path::{Path, PathBuf};

fn run(args: &[&str]) -> Run {
    run_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-trust", name)
}

fn d12_options() -> CodegenOptions {
    CodegenOptions {
        faults: FaultSet::only(Fault::D12TailClampedBeforeMask),
        ..CodegenOptions::default()
    }
}

/// The d12 spec kernel under the d12 fault, a `pallas-sim` mismatch, as a finding directory.
fn d12_finding(dir: &Path) -> Finding {
    let case = load_spec_kernels()
        .unwrap()
        .into_iter()
        .find(|k| k.name() == "d12_tail_run_masked_not_clamped")
        .unwrap()
        .case;
    let engines = fuzz::engines::build(&[fuzz::engines::EngineId::PallasSim], None).unwrap();
    let report = check_case(&case, &engines, &d12_options());
    assert_eq!(report.outcome.name(), "mismatch", "{:?}", report.engines);
    let f = Finding::new(
        &case,
        &report,
        &d12_options(),
        Versions::this_build(),
        FindingProvenance::default(),
    );
    write_finding_dir(dir, &f).unwrap();
    f
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn replay_of_nothing_is_an_error_saying_which() {
    let t = scratch("replay-nothing");
    let r = run(&["replay", s(&t.join("absent"))]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("absent: no such directory"), "{r:?}");
    let r = run(&["replay", s(&t)]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("nothing to replay"), "{r:?}");
    let r = run(&[
        "replay",
        "--engines",
        "pallas-sim",
        "--filter",
        "no-such-trial",
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("--filter `no-such-trial` matches none of the"),
        "{r:?}"
    );
    let r = run(&["replay", "--engines", "pallas-nope"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("unknown engine `pallas-nope`"), "{r:?}");
}

#[test]
fn eval_names_the_references_refusal_by_its_kind_id_in_text_and_json() {
    let case = "corpus/cases/0015-s1-10-float-index.py";
    let text = run(&["eval", case]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(
        text.stdout
            .starts_with("invalid-case: type-error at 20:33: "),
        "{text:?}"
    );
    let json = run(&["eval", "--json", case]);
    assert_eq!(json.code, 0, "{json:?}");
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("eval --json is JSON");
    assert_eq!(v["invalid"]["kind"], "type-error", "{v}");
    assert_eq!(
        (v["invalid"]["line"].as_u64(), v["invalid"]["col"].as_u64()),
        (Some(20), Some(33))
    );
}

/// `check --json` prints the check fields of `meta.json` ([`ReportRecord`]): it parses back
/// into the record, with the same kebab ids (`invalid-case`, `type-error`, `oracle`).
#[test]
fn check_json_is_the_meta_report_schema() {
    let invalid = run(&[
        "check",
        "corpus/cases/0015-s1-10-float-index.py",
        "--engines",
        "pallas-sim",
        "--json",
    ]);
    assert_eq!(invalid.code, 0, "{invalid:?}");
    let v: serde_json::Value = serde_json::from_str(&invalid.stdout).expect("JSON");
    assert_eq!(v["outcome"], "invalid-case", "{v}");
    assert_eq!(v["engines"][0]["engine"], "oracle", "{v}");
    assert_eq!(v["engines"][0]["invalid"], "type-error", "{v}");
    assert_eq!(v["engines_unavailable"], serde_json::json!([]), "{v}");
    let record: ReportRecord = serde_json::from_value(v).expect("a ReportRecord");
    assert_eq!(record.outcome, fuzz::outcome::Outcome::InvalidCase);
    assert_eq!(record.engines[0].engine, fuzz::engines::EngineId::Reference);

    let agree = run(&[
        "check",
        "corpus/cases/0003-d12-tail-run-masked-not-clamped.py",
        "--engines",
        "pallas-sim",
        "--json",
    ]);
    assert_eq!(agree.code, 0, "{agree:?}");
    let record: ReportRecord = serde_json::from_str(&agree.stdout).expect("a ReportRecord");
    assert_eq!(record.outcome, fuzz::outcome::Outcome::Agree, "{record:?}");
    assert!(record.has_module, "{record:?}");
    let sim = &record.engines[1];
    assert_eq!(sim.engine, fuzz::engines::EngineId::PallasSim);
    assert_eq!(sim.status, fuzz::engines::StatusKind::Ok);
    assert_eq!(
        sim.output_shapes.as_ref().map(Vec::len),
        record.engines[0].output_shapes.as_ref().map(Vec::len),
        "{record:?}"
    );
}

#[test]
fn replay_takes_the_in_process_engine() {
    let r = run(&["replay", "--engines", "pallas-sim", "--filter", "0003-"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("ok       pallas-sim/0003-d12-tail-run-masked-not-clamped"),
        "{r:?}"
    );
    assert!(r.stdout.contains("2 passed, 0 failed, 0 ignored"), "{r:?}");
}

#[test]
fn replay_of_a_findings_directory_checks_each_finding() {
    let t = scratch("replay-findings");
    let f = d12_finding(&t.join("0001-mismatch-pallas-sim"));
    let r = run(&["replay", s(&t)]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("ok       pallas-sim/0001-mismatch-pallas-sim"),
        "{r:?}"
    );
    // Recorded without the fault, the case agrees: the finding no longer reproduces (exit 3).
    let mut fixed = f.clone();
    fixed.meta.codegen.faults.clear();
    write_finding_dir(&t.join("0002-mismatch-pallas-sim"), &fixed).unwrap();
    let r = run(&["replay", s(&t)]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stdout
            .contains("FAILED   pallas-sim/0002-mismatch-pallas-sim"),
        "{r:?}"
    );
    assert!(r.stdout.contains("no longer reproduces"), "{r:?}");
    // Engines that saw none of them leave nothing to replay; bless has nothing to rewrite.
    let r = run(&["replay", s(&t), "--engines", "pallas-interpret"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("was seen by --engines pallas-interpret"),
        "{r:?}"
    );
    let r = run(&["replay", s(&t), "--bless"]);
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn a_missing_file_names_its_os_error_once() {
    let t = scratch("missing-file");
    let r = run(&["report", s(&t.join("absent"))]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("absent does not exist"), "{r:?}");
    // A directory without meta.json: the file is named, with the OS message once.
    let r = run(&["report", s(&t)]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("meta.json: read: "), "{r:?}");
    assert_eq!(r.stderr.matches("(os error").count(), 1, "{r:?}");
}

#[test]
fn hunt_exits_4_when_a_fault_is_not_detected_and_writes_under_target() {
    let t = scratch("hunt");
    let target = t.join("tgt");
    let hunt = |cases: &str| {
        run_with(
            &t,
            &[
                "hunt",
                "--inject",
                "d12",
                "--repeat",
                "1",
                "--cases",
                cases,
                "--reduce-time",
                "3s",
                "--jobs",
                "2",
            ],
            &[("CARGO_TARGET_DIR", &target)],
        )
    };
    // One case is not enough to meet d12: a generator gap, exit 4 (not 3, "finding").
    let r = hunt("1");
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr.contains("not detected in every repetition"),
        "{r:?}"
    );
    // Enough cases: detected, exit 0; the reproducer is under the target dir and names its fault.
    let r = hunt("3000");
    assert_eq!(r.code, 0, "{r:?}");
    let dir = target.join("pallas-diff-hunt");
    let script = std::fs::read_to_string(dir.join("d12-tail-clamped-before-mask-0.py")).unwrap();
    let line = script
        .lines()
        .find_map(|l| l.strip_prefix("# reproduce with: "))
        .unwrap_or_else(|| panic!("no reproduce line:\n{script}"))
        .to_string();
    assert!(
        line.contains("--inject d12-tail-clamped-before-mask --engines oracle,pallas-sim"),
        "{line}"
    );
    assert!(r.stdout.contains(&line), "{r:?}");
    let index = std::fs::read_to_string(dir.join("hunt.json")).unwrap();
    assert!(index.contains(&line), "{index}");
    assert!(!t.join("hunt").exists(), "a ./hunt directory was written");
    // The line it prints shows the finding; without the fault the case agrees.
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    let r = run(&args);
    assert_eq!(r.code, 3, "{r:?}");
    let r = run(&[args[0], args[1], "--engines", "oracle,pallas-sim"]);
    assert!(r.stdout.starts_with("outcome: agree"), "{r:?}");
    // The help says what 4 means.
    let r = run(&["hunt", "--help"]);
    assert!(
        r.stdout
            .contains("4  some fault was not detected in some repetition"),
        "{r:?}"
    );
}

/// A findings directory holding the d12 finding with a cross-check by `engines`, indexed in
/// `buckets.json`; returns the finding's directory.
fn cross_checked_d12(root: &Path, engines: &[&str]) -> PathBuf {
    let dir = root.join("0001-mismatch-pallas-sim");
    let mut f = d12_finding(&dir);
    let record = CrossCheckRecord {
        engines: engines
            .iter()
            .map(|e| e.parse().expect("an engine"))
            .collect(),
        outcome: fuzz::outcome::Outcome::Mismatch,
        result: CrossCheckResult::Reproduced,
        detail: Some("pallas-tpu-interpret: values".into()),
        of_unreduced_case: None,
    };
    f.log.push_str(&record.log_text());
    f.meta.cross_check = Some(record);
    write_finding_dir(&dir, &f).unwrap();
    let mut buckets = Buckets::default();
    buckets.record(
        &f.meta.signature,
        CostRecord::of(&f.case),
        "0001-mismatch-pallas-sim",
    );
    buckets.save(root).unwrap();
    dir
}

#[test]
fn reduce_writes_a_new_directory_and_keeps_the_cross_check() {
    let t = scratch("reduce-new");
    let dir = cross_checked_d12(&t, &["pallas-tpu-interpret"]);
    let before = std::fs::read(dir.join("meta.json")).unwrap();
    let r = run(&["reduce", s(&dir), "--time", "20s"]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = t.join("0001-mismatch-pallas-sim-reduced");
    assert!(
        r.stdout.contains(&format!("written to {}", out.display())),
        "{r:?}"
    );
    assert_eq!(
        std::fs::read(dir.join("meta.json")).unwrap(),
        before,
        "the original changed"
    );
    let reduced = Finding::load(&out).unwrap();
    assert!(reduced.meta.reduction.is_some());
    // JAX cannot start here: the unreduced case's cross-check is kept, and says so.
    let cc = reduced.meta.cross_check.as_ref().expect("cross-check lost");
    assert_eq!(cc.result, CrossCheckResult::Reproduced);
    let why = cc
        .of_unreduced_case
        .as_deref()
        .expect("not marked as the unreduced case's");
    assert!(why.contains("cannot start the jax workers"), "{why}");
    assert!(
        reduced.log.contains("of the unreduced case"),
        "{}",
        reduced.log
    );
    assert!(r.stdout.contains("kept from the unreduced case"), "{r:?}");
    // The bucket now points at the reduced directory.
    let buckets = Buckets::load(&t).unwrap();
    assert_eq!(
        buckets.find(&reduced.meta.key).map(|b| b.dir.as_str()),
        Some("0001-mismatch-pallas-sim-reduced")
    );
    // The report says which case the cross-check was of.
    let r = run(&["report", s(&out)]);
    assert!(r.stdout.contains("of the case before reduction"), "{r:?}");
    assert!(
        r.stdout
            .contains("> **Injected fault: d12-tail-clamped-before-mask.**"),
        "{r:?}"
    );
    // Reducing again into the same place is refused rather than overwriting.
    let r = run(&["reduce", s(&dir), "--time", "5s"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("exists"), "{r:?}");
}

#[test]
fn reduce_in_place_keeps_the_first_original() {
    let t = scratch("reduce-in-place");
    let dir = cross_checked_d12(&t, &["pallas-tpu-interpret"]);
    let first = std::fs::read(dir.join("meta.json")).unwrap();
    let r = run(&[
        "reduce",
        s(&dir),
        "--in-place",
        "--no-cross-check",
        "--time",
        "20s",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        std::fs::read(dir.join("original/meta.json")).unwrap(),
        first
    );
    assert!(Finding::load(&dir.join("original")).is_ok());
    let reduced = Finding::load(&dir).unwrap();
    let cc = reduced.meta.cross_check.as_ref().expect("cross-check lost");
    assert_eq!(cc.of_unreduced_case.as_deref(), Some("--no-cross-check"));
    // Again: `original/` stays the finding as first filed.
    let r = run(&[
        "reduce",
        s(&dir),
        "--in-place",
        "--no-cross-check",
        "--time",
        "5s",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        std::fs::read(dir.join("original/meta.json")).unwrap(),
        first
    );
    assert!(!dir.join("original/original").exists());
}

#[test]
fn reduce_reruns_the_cross_check_on_the_reduced_case() {
    // `pallas-sim` stands in for the JAX engines a campaign cross-checks with (they need
    // Python): the point is that the record is of the reduced case, from the same engines.
    let t = scratch("reduce-rerun");
    let dir = cross_checked_d12(&t, &["pallas-sim"]);
    let out = scratch("reduce-rerun-out").join("0001-reduced");
    let r = run(&["reduce", s(&dir), "--out", s(&out), "--time", "20s"]);
    assert_eq!(r.code, 0, "{r:?}");
    let reduced = Finding::load(&out).unwrap();
    let cc = reduced.meta.cross_check.as_ref().expect("cross-check lost");
    assert_eq!(cc.of_unreduced_case, None, "{cc:?}");
    assert_eq!(cc.engines, [fuzz::engines::EngineId::PallasSim]);
    assert_eq!(cc.result, CrossCheckResult::Reproduced, "{cc:?}");
    assert!(
        reduced
            .log
            .contains("cross-check (pallas-sim): mismatch: reproduced"),
        "{}",
        reduced.log
    );
    // Outside the findings directory: its index still points at the original.
    let buckets = Buckets::load(&t).unwrap();
    assert_eq!(
        buckets.buckets.values().next().map(|b| b.dir.as_str()),
        Some("0001-mismatch-pallas-sim")
    );
}

#[test]
fn corpus_add_promotes_a_finding_and_refuses_an_injected_fault_by_default() {
    let t = scratch("corpus-add");
    let dir = t.join("findings/0001-mismatch-pallas-sim");
    d12_finding(&dir);
    let cases = t.join("cases");
    let r = run(&["corpus", "add", s(&dir), "--corpus", s(&cases)]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("made with injected fault d12-tail-clamped-before-mask"),
        "{r:?}"
    );
    assert!(!cases.exists(), "written although refused");
    let r = run(&[
        "corpus",
        "add",
        s(&dir),
        "--corpus",
        s(&cases),
        "--allow-fault",
        "--name",
        "d12-detected",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let path = cases.join("0001-d12-detected.json");
    assert!(
        r.stdout.starts_with(&format!("added {}\n", path.display())),
        "{r:?}"
    );
    assert!(path.exists() && path.with_extension("py").exists());
    // The new entry replays as recorded.
    let r = run(&["replay", s(&cases), "--engines", "pallas-sim"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("2 passed, 0 failed, 0 ignored"), "{r:?}");
    let r = run(&[
        "corpus",
        "add",
        s(&dir),
        "--corpus",
        s(&cases),
        "--allow-fault",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("already in the corpus: 0001-d12-detected"),
        "{r:?}"
    );
}

#[test]
fn check_out_files_a_hand_written_finding_that_report_reads() {
    let root = scratch("check-out");
    let dir = root.join("d12");
    let case = "corpus/cases/0003-d12-tail-run-masked-not-clamped.py";
    let args = |out: &Path| {
        vec![
            "check".to_owned(),
            case.to_owned(),
            "--engines".into(),
            "pallas-sim".into(),
            "--inject".into(),
            "d12-tail-clamped-before-mask".into(),
            "--out".into(),
            out.to_str().unwrap().to_owned(),
        ]
    };
    let argv = args(&dir);
    let filed = run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(filed.code, 3, "{filed:?}");
    let f = Finding::load(&dir).expect("a finding directory");
    assert_eq!(f.meta.signature.outcome.name(), "mismatch");
    assert_eq!(
        f.meta.provenance.source.as_deref(),
        Some(format!("pallas-diff check {case}").as_str())
    );
    let report = run(&["report", s(&dir)]);
    assert_eq!(report.code, 0, "{report:?}");
    // A second filing into the same directory is refused, the first kept.
    let again = run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again.code, 2, "{again:?}");
    assert!(again.stderr.contains("exists"), "{again:?}");
    // An agreeing case files nothing.
    let quiet = root.join("agree");
    let argv = ["check", case, "--engines", "pallas-sim", "--out", s(&quiet)];
    assert_eq!(run(&argv).code, 0);
    assert!(!quiet.exists());
}
