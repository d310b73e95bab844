//! Findings directories without JAX. Replay: which directories replay (a corpus, a findings
//! directory, one finding directory) and which are errors (missing, a file, empty, mixed); a
//! finding that still shows its signature passes, one that no longer does says so. Reports: a
//! finding made with an injected fault says so first, and only one without claims the case
//! script shows it in real Helion.

use compiler::compile::CodegenOptions;
use compiler::faults::{Fault, FaultSet};
use finding::finding::{Finding, FindingProvenance, Versions, write_finding_dir};
use finding::report::{Repro, markdown, repro_of};
use fuzz::check::{Depth, PreparedCase, check_case};
use fuzz::engines::Engine;
use pallas_diff_corpus::entry::default_dir;
use pallas_diff_corpus::expectations::load_spec_kernels;
use pallas_diff_corpus::replay::{Source, SourceError, TrialResult, open_source, replay_finding};
use std::path::Path;
use std::sync::Arc;

fn d12_faulty() -> CodegenOptions {
    CodegenOptions {
        faults: FaultSet::only(Fault::D12TailClampedBeforeMask),
        ..CodegenOptions::default()
    }
}

fn sim() -> Arc<dyn Engine> {
    let mut v = fuzz::engines::build(&[fuzz::engines::EngineId::PallasSim], None).unwrap();
    Arc::from(v.remove(0))
}

/// The d12 spec kernel.
fn d12_case() -> lang::ir::Case {
    load_spec_kernels()
        .unwrap()
        .into_iter()
        .find(|k| k.name() == "d12_tail_run_masked_not_clamped")
        .unwrap()
        .case
}

/// The d12 spec kernel under the d12 fault: a `pallas-sim` mismatch.
fn d12_finding() -> Finding {
    let case = d12_case();
    let engines: Vec<Box<dyn Engine>> =
        fuzz::engines::build(&[fuzz::engines::EngineId::PallasSim], None).unwrap();
    let report = check_case(&case, &engines, &d12_faulty());
    assert_eq!(report.outcome.name(), "mismatch", "{:?}", report.engines);
    Finding::new(
        &case,
        &report,
        &d12_faulty(),
        Versions::this_build(),
        FindingProvenance::default(),
    )
}

fn findings(dir: &Path) -> Vec<pallas_diff_corpus::replay::LoadedFinding> {
    match open_source(dir).unwrap() {
        Source::Findings(f) => f,
        Source::Corpus(c) => panic!("a corpus of {} entries", c.entries.len()),
    }
}

#[test]
fn missing_empty_and_mixed_directories_are_errors() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("nope");
    assert!(matches!(
        open_source(&missing),
        Err(SourceError::Missing(_))
    ));
    let file = t.path().join("file.json");
    std::fs::write(&file, "{}").unwrap();
    assert!(matches!(
        open_source(&file),
        Err(SourceError::NotADirectory(_))
    ));
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = open_source(&empty).unwrap_err();
    assert!(matches!(e, SourceError::Empty(_)), "{e}");
    assert!(e.to_string().contains("nothing to replay"), "{e}");
    // A findings directory whose findings were removed: only the index is left.
    std::fs::write(empty.join("buckets.json"), "{}").unwrap();
    assert!(matches!(open_source(&empty), Err(SourceError::Empty(_))));
    // Entries and findings side by side.
    let mixed = t.path().join("mixed");
    write_finding_dir(&mixed.join("0001-mismatch-pallas-sim"), &d12_finding()).unwrap();
    let stem = "0003-d12-tail-run-masked-not-clamped";
    std::fs::copy(
        default_dir().join(format!("{stem}.json")),
        mixed.join(format!("{stem}.json")),
    )
    .unwrap();
    let e = open_source(&mixed).unwrap_err();
    assert!(matches!(e, SourceError::Mixed { .. }), "{e}");
    assert!(e.to_string().contains("0001-mismatch-pallas-sim"), "{e}");
    // The real corpus is a corpus.
    assert!(matches!(open_source(&default_dir()), Ok(Source::Corpus(c)) if !c.entries.is_empty()));
}

#[test]
fn a_finding_replays_while_its_signature_holds() {
    let t = tempfile::tempdir().unwrap();
    let f = d12_finding();
    write_finding_dir(&t.path().join("0001-mismatch-pallas-sim"), &f).unwrap();
    // Hidden temporaries of an interrupted write are not findings.
    std::fs::create_dir(t.path().join(".0002-x.tmp-1-1")).unwrap();
    // Nor are the index files (they are JSON, like corpus entries).
    for index in finding::sink::INDEX_FILES {
        std::fs::write(t.path().join(index), "{}").unwrap();
    }
    let all = findings(t.path());
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].trial_name(), "pallas-sim/0001-mismatch-pallas-sim");
    assert_eq!(replay_finding(&all[0], Some(&sim())), TrialResult::Pass);
    // One finding directory replays on its own.
    let one = findings(&t.path().join("0001-mismatch-pallas-sim"));
    assert_eq!(one.len(), 1);

    // Without the fault the same case agrees: the finding no longer reproduces, and says so.
    let mut fixed = f.clone();
    fixed.meta.codegen.faults.clear();
    write_finding_dir(&t.path().join("0002-mismatch-pallas-sim"), &fixed).unwrap();
    let all = findings(t.path());
    assert_eq!(all.len(), 2);
    let TrialResult::Fail { message, .. } = replay_finding(&all[1], Some(&sim())) else {
        panic!("a finding that no longer reproduces passed");
    };
    assert!(
        message.contains("no longer reproduces: pallas-sim now agrees with the reference"),
        "{message}"
    );
    assert!(message.contains(&f.meta.key), "{message}");
}

#[test]
fn a_report_states_its_injected_fault_first() {
    let f = d12_finding();
    let md = markdown(&f);
    let banner = md.lines().nth(2).unwrap_or_default();
    assert!(
        banner.starts_with("> **Injected fault: d12-tail-clamped-before-mask.** This finding is in pallas-diff's model with a reintroduced defect, not in Helion"),
        "{md}"
    );
    assert!(
        banner.contains("`pallas-diff check case.py --inject d12-tail-clamped-before-mask --engines oracle,pallas-sim`"),
        "{banner}"
    );
    assert!(!md.contains("Runs unchanged in real Helion"), "{md}");
    assert!(
        md.contains("injected faults: d12-tail-clamped-before-mask"),
        "{md}"
    );
    let Repro::Script(script) = repro_of(&f) else {
        panic!("no repro");
    };
    assert!(
        script
            .lines()
            .next()
            .unwrap_or_default()
            .contains("with injected fault d12-tail-clamped-before-mask"),
        "{script}"
    );
    // Nothing injected: no banner, and the script is said to run in Helion unchanged.
    let mut clean = f.clone();
    clean.meta.codegen.faults.clear();
    let md = markdown(&clean);
    assert!(!md.contains("Injected fault"), "{md}");
    assert!(md.contains("Runs unchanged in real Helion"), "{md}");
}

#[test]
fn a_finding_joins_the_corpus_only_as_it_replays() {
    use pallas_diff_corpus::entry::Corpus;
    use pallas_diff_corpus::promote::{PromoteError, Promoted, Promotion, promote};
    use pallas_diff_corpus::replay::{LoadedFinding, check_reference, replay_engine};
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("findings/0001-mismatch-pallas-sim");
    let f = d12_finding();
    write_finding_dir(&dir, &f).unwrap();
    let loaded = LoadedFinding {
        dir: dir.clone(),
        finding: f.clone(),
    };
    let cases = t.path().join("cases");
    let mut corpus = Corpus::load(&cases).unwrap();
    let engines = [sim()];
    // An injected fault is refused unless allowed.
    let e = promote(&mut corpus, &loaded, &engines, &Promotion::default()).unwrap_err();
    assert!(matches!(e, PromoteError::InjectedFault { .. }), "{e}");
    assert!(e.to_string().contains("--allow-fault"), "{e}");
    // A name must be a slug.
    let bad = Promotion {
        name: Some("Not A Slug"),
        allow_fault: true,
        ..Promotion::default()
    };
    let e = promote(&mut corpus, &loaded, &engines, &bad).unwrap_err();
    assert!(matches!(e, PromoteError::BadName(..)), "{e}");
    // Allowed: the entry replays under the fault, and its note says what it pins.
    let how = Promotion {
        name: Some("d12-detected"),
        allow_fault: true,
        ..Promotion::default()
    };
    let Promoted::New { path, entry } = promote(&mut corpus, &loaded, &engines, &how).unwrap()
    else {
        panic!("not added");
    };
    assert_eq!(path, cases.join("0001-d12-detected.json"));
    assert_eq!(entry.codegen.faults, ["d12-tail-clamped-before-mask"]);
    assert!(
        entry.notes.iter().any(|n| n.contains("not a Helion bug")),
        "{:?}",
        entry.notes
    );
    assert_eq!(
        entry
            .expected("pallas-sim".parse::<fuzz::engines::EngineId>().unwrap())
            .map(|e| e.to_string()),
        Some(format!("finding:{}", f.meta.signature.symptom_key()))
    );
    let back = Corpus::load(&cases).unwrap();
    assert_eq!(back.entries.len(), 1);
    assert_eq!(check_reference(&back.entries[0]), TrialResult::Pass);
    assert_eq!(
        replay_engine(&back.entries[0].entry, &sim()),
        TrialResult::Pass
    );
    // Twice: the entry that expects it is named, nothing is added.
    assert_eq!(
        promote(&mut corpus, &loaded, &engines, &how).unwrap(),
        Promoted::Existing("0001-d12-detected".into())
    );
    // A finding that no longer reproduces has nothing to pin.
    let mut gone = loaded.clone();
    gone.finding.meta.codegen.faults.clear();
    let e = promote(&mut corpus, &gone, &engines, &Promotion::default()).unwrap_err();
    assert!(matches!(e, PromoteError::NotReproduced { .. }), "{e}");
    assert!(e.to_string().contains("gives `agree"), "{e}");
}

#[test]
fn a_smaller_duplicate_that_replaces_a_buckets_case_says_so() {
    use fuzz::campaign::sink::{Filed, FindingSink};
    use lang::ir::{Expr, ExprKind, Span, Stmt, StmtKind};
    let small = d12_case();
    // The same bug with an unused host int in front: a larger case of the same signature.
    let mut large = small.clone();
    large.kernel.body.insert(
        0,
        Stmt {
            kind: StmtKind::Assign {
                target: "unused".into(),
                value: Expr {
                    kind: ExprKind::Int(5),
                    span: Span::default(),
                },
            },
            span: Span::default(),
        },
    );
    let engines: Vec<Box<dyn Engine>> =
        fuzz::engines::build(&[fuzz::engines::EngineId::PallasSim], None).unwrap();
    let report = |case| check_case(case, &engines, &d12_faulty());
    let dir = tempfile::tempdir().unwrap();
    let sink =
        finding::sink::CorpusSink::open(dir.path(), d12_faulty(), None, Versions::this_build())
            .unwrap();
    let (large_report, small_report) = (report(&large), report(&small));
    let codegen = d12_faulty();
    let prepared = |case| PreparedCase::new(Depth::Full, case, &codegen);
    let Filed::New(first) = sink.file(&prepared(&large), &large_report, 1).unwrap() else {
        panic!("the first is new")
    };
    assert!(
        Finding::load(&first)
            .unwrap()
            .meta
            .provenance
            .source
            .is_none(),
        "a new finding"
    );
    assert!(matches!(
        sink.file(&prepared(&small), &small_report, 2).unwrap(),
        Filed::Duplicate
    ));
    let replaced = Finding::load(&first).unwrap();
    assert_eq!(
        replaced.meta.provenance.seed,
        Some(2),
        "the smaller case is kept"
    );
    assert_eq!(
        replaced.meta.provenance.source.as_deref(),
        Some(finding::sink::REPLACED_BY_SMALLER)
    );
}
