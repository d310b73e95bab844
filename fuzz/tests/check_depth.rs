//! `Depth::FindingsOnly` (what the `cargo fuzz` targets run) finds exactly what `Depth::Full`
//! finds: the same outcome on every case it runs the reference for, and the same finding on
//! every case, with every historical fault injected in turn so that there are findings to lose.

use compiler::compile::CodegenOptions;
use compiler::faults::{Fault, FaultSet};
use pallas_diff_fuzz::campaign::case_seed;
use pallas_diff_fuzz::check::{Depth, check_case_to};
use pallas_diff_fuzz::engines::{self, EngineStatus};
use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed};
use pallas_diff_fuzz::outcome::Outcome;

#[test]
fn findings_only_loses_no_finding() {
    let engines = engines::build(&engines::IN_PROCESS, None).expect("in-process engines");
    let cfg = GenConfig::default();
    let cases: Vec<_> = (0..300)
        .map(|i| generate_from_seed(case_seed(11, i), &cfg))
        .collect();
    let mut option_sets = vec![CodegenOptions::default()];
    option_sets.extend(Fault::ALL.iter().map(|&f| CodegenOptions {
        faults: FaultSet::only(f),
        ..CodegenOptions::default()
    }));
    let (mut findings, mut skipped) = (0, 0);
    for options in &option_sets {
        for case in &cases {
            let full = check_case_to(Depth::Full, case, &engines, options);
            let quick = check_case_to(Depth::FindingsOnly, case, &engines, options);
            assert_eq!(
                full.outcome.is_finding(),
                quick.outcome.is_finding(),
                "{:?}: full {} vs findings-only {}\n{}",
                options.faults,
                full.outcome,
                quick.outcome,
                lang::render::render_case(case)
            );
            if matches!(quick.reference.status, EngineStatus::NotRun(_)) {
                // Skipped only where the compiler did not lower: then neither is a finding.
                skipped += 1;
                assert!(matches!(
                    quick.outcome,
                    Outcome::Rejected | Outcome::Unsupported
                ));
                assert!(matches!(
                    full.outcome,
                    Outcome::Rejected | Outcome::Unsupported | Outcome::InvalidCase
                ));
                assert_eq!(quick.emitted, None);
            } else {
                assert_eq!(full.outcome, quick.outcome);
                assert_eq!(full.decided_by, quick.decided_by);
                if quick.outcome.is_finding() {
                    findings += 1;
                    // A finding's report keeps the emitted module, as the full check's does.
                    assert_eq!(full.emitted, quick.emitted);
                }
            }
        }
    }
    // The comparison is only worth something if both kinds of case occurred.
    assert!(findings > 0, "no fault was detected on these cases");
    assert!(skipped > 0, "no case was rejected");
}

/// A prepared case recompiled under other options (`PreparedCase::under`, the hunt's check with
/// and without its fault) gives the report a fresh check under those options gives: the
/// reference it reuses does not depend on them.
#[test]
fn a_prepared_case_under_other_options_checks_as_a_fresh_one() {
    let engines = engines::build(&engines::IN_PROCESS, None).expect("in-process engines");
    let cfg = GenConfig::default();
    let clean = CodegenOptions::default();
    for i in 0..200 {
        let case = generate_from_seed(case_seed(13, i), &cfg);
        let prepared = pallas_diff_fuzz::check::PreparedCase::new(Depth::Full, &case, &clean);
        let first = prepared.check(&engines);
        assert_eq!(
            first.outcome,
            check_case_to(Depth::Full, &case, &engines, &clean).outcome
        );
        for &f in Fault::ALL {
            let faulty = CodegenOptions {
                faults: FaultSet::only(f),
                ..clean
            };
            let again = prepared.under(&faulty).check(&engines);
            let fresh = check_case_to(Depth::Full, &case, &engines, &faulty);
            assert_eq!(
                again.outcome,
                fresh.outcome,
                "{f:?}\n{}",
                lang::render::render_case(&case)
            );
            assert_eq!(again.reference.status, fresh.reference.status);
            assert_eq!(again.emitted, fresh.emitted);
        }
    }
}
