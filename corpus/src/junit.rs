//! JUnit XML, the test-report format CI systems read: a replay's trials
//! (`pallas-diff replay --junit`) and a fault hunt's faults (`pallas-diff hunt --junit`), built
//! with `quick-junit`'s data model and serializer.
//!
//! A replay is one test suite with a test case per trial: the engine is the class name and the
//! entry or finding the name (`pallas-tpu-lower/0003-d12-...` → class `pallas-tpu-lower`, name
//! `0003-d12-...`); an ignored trial is skipped with its reason; a failing one is a failure
//! whose message is the failure's first line and whose text is the whole message. A trial of a
//! Helion bug also says what the bug is on the build that ran (fix verification): a property
//! `fix-state` (`still-present`, `fixed`, `changed`), the build in the suite's `helion-build`
//! property, and both in its output and a failure's message. A hunt is one
//! suite with a test case per injected fault: passed when every repetition detected it, a
//! failure saying how many did not otherwise, the signature and the reproducing command in its
//! output either way.

use crate::hunt::HuntRow;
use crate::replay::TrialResult;
use finding::fsio::{self, IoError};
use finding::regression::FixState;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::path::Path;
use std::time::Duration;

/// A report that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum JunitError {
    /// The XML serializer failed.
    #[error("{}: cannot serialize the JUnit report: {error}", path.display())]
    Serialize {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        error: quick_junit::SerializeError,
    },
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] IoError),
}

/// One finished replay trial.
#[derive(Clone, Debug)]
pub struct Trial<'a> {
    /// Its name, `<engine>/<entry or finding>`.
    pub name: &'a str,
    /// How it ended.
    pub result: &'a TrialResult,
    /// How long it ran.
    pub time: Duration,
    /// For a trial of a Helion bug: what it is on the build that ran.
    pub fix: Option<&'a FixState>,
}

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// The report of a replay of `source` (a corpus or findings directory); `build` names the
/// Helion build its Helion trials ran on.
pub fn replay_report(
    source: &Path,
    trials: &[Trial<'_>],
    time: Duration,
    build: Option<&str>,
) -> Report {
    let name = format!("pallas-diff replay {}", source.display());
    let mut suite = TestSuite::new(name.clone());
    if let Some(b) = build {
        suite.add_property(("helion-build", b));
    }
    let on = build.map(|b| format!(" on {b}")).unwrap_or_default();
    for t in trials {
        let state = t.fix.map(|f| format!("{f}{on}"));
        let status = match t.result {
            TrialResult::Pass => TestCaseStatus::success(),
            TrialResult::Ignored(why) => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(why.clone());
                s
            }
            TrialResult::Fail { message, .. } => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let head = first_line(message);
                s.set_message(match &state {
                    Some(st) => format!("{st}: {head}"),
                    None => head.to_owned(),
                })
                .set_description(message.clone());
                s
            }
        };
        let (class, case) = t.name.split_once('/').unwrap_or(("replay", t.name));
        let mut case = TestCase::new(case, status);
        case.set_classname(class).set_time(t.time);
        if let (Some(fix), Some(st)) = (t.fix, &state) {
            case.add_property(("fix-state", fix.name()));
            case.set_system_out(st.clone());
        }
        suite.add_test_case(case);
    }
    suite.set_time(time);
    let mut report = Report::new(name);
    report.add_test_suite(suite).set_time(time);
    report
}

/// The report of a hunt: one test case per fault.
pub fn hunt_report(rows: &[HuntRow], time: Duration) -> Report {
    let name = "pallas-diff hunt";
    let mut suite = TestSuite::new(name);
    for r in rows {
        let status = if r.detected >= r.repeats {
            TestCaseStatus::success()
        } else {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!(
                "not detected in {} of {} repetition(s): a generator gap (the campaign's budget ran out before a finding the fault causes)",
                r.repeats - r.detected,
                r.repeats
            ));
            s
        };
        let mut case = TestCase::new(r.fault.clone(), status);
        case.set_classname("hunt");
        if let Some(s) = r.median_seconds {
            case.set_time(Duration::from_secs_f64(s.max(0.0)));
        }
        let mut out = format!("detected {}/{}", r.detected, r.repeats);
        if let Some(c) = r.median_cases {
            out.push_str(&format!("; median cases to detection {c}"));
        }
        if let Some(sig) = &r.signature {
            out.push_str(&format!("\nsignature: {sig}"));
        }
        for rep in &r.reproducers {
            out.push_str(&format!("\nreproduce: {}", rep.reproduce));
        }
        case.set_system_out(out);
        suite.add_test_case(case);
    }
    suite.set_time(time);
    let mut report = Report::new(name);
    report.add_test_suite(suite).set_time(time);
    report
}

/// Writes `report` to `path` atomically.
pub fn write(report: &Report, path: &Path) -> Result<(), JunitError> {
    let xml = report.to_string().map_err(|error| JunitError::Serialize {
        path: path.to_path_buf(),
        error,
    })?;
    fsio::write_atomic(path, xml.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hunt::Reproducer;
    use quick_junit::TestCaseStatus as S;

    fn read_back(report: &Report) -> Report {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("junit.xml");
        write(report, &path).unwrap();
        let xml = std::fs::read_to_string(&path).unwrap();
        Report::deserialize_from_str(&xml).unwrap()
    }

    #[test]
    fn a_replay_has_one_case_per_trial_with_skips_and_failures() {
        let ignored = TrialResult::Ignored("no TPU here (jax.devices() = [\"cpu\"])".into());
        let failed = TrialResult::Fail {
            message: "\nexpected mismatch, got agree <&>\n  detail line".into(),
            updates: vec![],
        };
        let trials = [
            Trial {
                name: "oracle/0001-a",
                result: &TrialResult::Pass,
                time: Duration::from_millis(5),
                fix: None,
            },
            Trial {
                name: "pallas-tpu/0001-a",
                result: &ignored,
                time: Duration::ZERO,
                fix: None,
            },
            Trial {
                name: "pallas-sim/0002-b",
                result: &failed,
                time: Duration::from_millis(7),
                fix: None,
            },
        ];
        let back = read_back(&replay_report(
            Path::new("corpus/cases"),
            &trials,
            Duration::from_secs(1),
            None,
        ));
        let suite = &back.test_suites[0];
        assert_eq!(suite.name.as_str(), "pallas-diff replay corpus/cases");
        assert_eq!((suite.tests, suite.failures, suite.skipped), (3, 1, 1));
        let cases = &suite.test_cases;
        assert_eq!(cases[0].classname.as_ref().unwrap().as_str(), "oracle");
        assert_eq!(cases[0].name.as_str(), "0001-a");
        assert!(matches!(cases[0].status, S::Success { .. }));
        match &cases[1].status {
            S::Skipped { message, .. } => {
                assert_eq!(
                    message.as_ref().unwrap().as_str(),
                    "no TPU here (jax.devices() = [\"cpu\"])"
                )
            }
            other => panic!("{other:?}"),
        }
        match &cases[2].status {
            S::NonSuccess {
                kind: NonSuccessKind::Failure,
                message,
                description,
                ..
            } => {
                assert_eq!(
                    message.as_ref().unwrap().as_str(),
                    "expected mismatch, got agree <&>"
                );
                assert!(
                    description
                        .as_ref()
                        .unwrap()
                        .as_str()
                        .contains("detail line")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_helion_trial_shows_what_its_bug_is_on_the_build_that_ran() {
        let fixed = TrialResult::Fail {
            message: "0007-x: no longer reproduces: helion-pallas now agrees".into(),
            updates: vec![],
        };
        let states = [
            FixState::StillPresent,
            FixState::Fixed,
            FixState::Changed("helion-crash/helion-pallas/run:TypeError: x @ ?/-/-".into()),
        ];
        let trials = [
            Trial {
                name: "helion-pallas/a",
                result: &TrialResult::Pass,
                time: Duration::ZERO,
                fix: Some(&states[0]),
            },
            Trial {
                name: "helion-pallas/b",
                result: &fixed,
                time: Duration::ZERO,
                fix: Some(&states[1]),
            },
            Trial {
                name: "helion-eager/c",
                result: &fixed,
                time: Duration::ZERO,
                fix: Some(&states[2]),
            },
        ];
        let back = read_back(&replay_report(
            Path::new("findings"),
            &trials,
            Duration::from_secs(1),
            Some("helion 1.4.0"),
        ));
        let suite = &back.test_suites[0];
        assert_eq!(suite.properties[0].value.as_str(), "helion 1.4.0");
        let cases = &suite.test_cases;
        let state = |i: usize| cases[i].properties[0].value.as_str().to_owned();
        assert_eq!(
            (state(0), state(1), state(2)),
            ("still-present".into(), "fixed".into(), "changed".into())
        );
        assert!(matches!(cases[0].status, S::Success { .. }));
        assert_eq!(
            cases[0].system_out.as_ref().unwrap().as_str(),
            "still-present on helion 1.4.0"
        );
        match &cases[1].status {
            S::NonSuccess { message, .. } => assert!(
                message
                    .as_ref()
                    .unwrap()
                    .as_str()
                    .starts_with("fixed on helion 1.4.0: 0007-x"),
                "{message:?}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(
            cases[2]
                .system_out
                .as_ref()
                .unwrap()
                .as_str()
                .starts_with("changed (now helion-crash/")
        );
    }

    fn row(fault: &str, detected: usize, repeats: usize) -> HuntRow {
        HuntRow {
            fault: fault.into(),
            detected,
            repeats,
            median_cases: (detected > 0).then_some(120),
            median_seconds: (detected > 0).then_some(0.5),
            reduced_lines: None,
            signature: (detected > 0).then(|| "mismatch/pallas-sim/values/-/-".to_string()),
            case: None,
            reproduce: None,
            reproducers: (0..detected)
                .map(|k| Reproducer {
                    seed: k,
                    path: format!("{fault}-{k}.py").into(),
                    fault: fault.into(),
                    engine: Some("pallas-sim".parse().expect("an engine")),
                    signature: "mismatch/pallas-sim/values/-/-".into(),
                    cases: 120,
                    seconds: 0.5,
                    body_lines: 4,
                    reduce_seconds: 1.0 + k as f64,
                    reproduce: format!("pallas-diff check {fault}-{k}.py --inject {fault}"),
                })
                .collect(),
        }
    }

    #[test]
    fn a_hunt_has_one_case_per_fault_failing_when_a_repetition_missed_it() {
        let rows = [row("d1-x", 2, 2), row("d2-y", 1, 3), row("d3-z", 0, 1)];
        let back = read_back(&hunt_report(&rows, Duration::from_secs(3)));
        let suite = &back.test_suites[0];
        assert_eq!((suite.tests, suite.failures), (3, 2));
        let cases = &suite.test_cases;
        assert!(matches!(cases[0].status, S::Success { .. }));
        let out = cases[0].system_out.as_ref().unwrap().as_str();
        assert!(
            out.contains("signature: mismatch/pallas-sim/values/-/-"),
            "{out}"
        );
        assert!(
            out.contains("reproduce: pallas-diff check d1-x-1.py --inject d1-x"),
            "{out}"
        );
        match &cases[1].status {
            S::NonSuccess { message, .. } => assert!(
                message
                    .as_ref()
                    .unwrap()
                    .as_str()
                    .starts_with("not detected in 2 of 3"),
                "{message:?}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(cases[2].status, S::NonSuccess { .. }));
    }
}
