//! The reports CI systems read, on the built binary: `replay --junit` and `hunt --junit` read
//! back with quick-junit's parser (one test case per trial, a finding that no longer reproduces
//! being a failure with the replay's message; one per injected fault, a fault missed within the
//! budget being a failure), and the campaign summary `fuzz` appends to `$GITHUB_STEP_SUMMARY`.

mod common;
use common::{run_in, run_with};

use quick_junit::{Report, TestCaseStatus};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    common::scratch("ci-reports", name)
}

fn read(path: &Path) -> Report {
    let xml = std::fs::read_to_string(path).unwrap();
    Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"))
}

#[test]
fn replay_writes_one_case_per_trial_with_the_failure_message() {
    let t = scratch("replay");
    let r = run_in(
        &t,
        &[
            "fuzz",
            "--cases",
            "150",
            "--inject",
            "all",
            "--no-reduce",
            "--engines",
            "oracle,pallas-sim",
            "--out",
            "f",
        ],
    );
    assert_eq!(r.code, 3, "{r:?}");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(t.join("f"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("meta.json").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 2, "{dirs:?}");
    // Replayed without the fault, a finding of an injected fault no longer reproduces.
    let meta = dirs[0].join("meta.json");
    let text = std::fs::read_to_string(&meta).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["codegen"]["faults"] = serde_json::json!([]);
    std::fs::write(&meta, serde_json::to_string(&json).unwrap()).unwrap();
    let r = run_in(&t, &["replay", "f", "--junit", "out/replay.xml"]);
    assert_eq!(r.code, 3, "{r:?}");
    let report = read(&t.join("out/replay.xml"));
    let suite = &report.test_suites[0];
    assert_eq!(suite.tests, dirs.len(), "{r:?}");
    assert_eq!(suite.failures, 1, "{r:?}");
    let failed = &suite.test_cases[0];
    let name = dirs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(failed.name.as_str(), name);
    assert_eq!(failed.classname.as_ref().unwrap().as_str(), "pallas-sim");
    match &failed.status {
        TestCaseStatus::NonSuccess { description, .. } => {
            let d = description.as_ref().unwrap().as_str();
            assert!(r.stdout.contains(d.lines().next().unwrap()), "{d}\n{r:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        suite.test_cases[1..]
            .iter()
            .all(|c| matches!(c.status, TestCaseStatus::Success { .. }))
    );
}

#[test]
fn hunt_writes_one_case_per_fault() {
    let t = scratch("hunt");
    // Within 30 cases of seed 0, d1 is found (at case 6) and d8 is not (`ci/test.sh`'s hunt
    // needs thousands): one passing and one failing test case, and exit 4.
    let r = run_in(
        &t,
        &[
            "hunt",
            "--inject",
            "d8-negative-slice-bound,d1-read-after-write",
            "--repeat",
            "1",
            "--cases",
            "30",
            "--reduce-time",
            "2s",
            "--out",
            "h",
            "--junit",
            "hunt.xml",
        ],
    );
    assert_eq!(r.code, 4, "{r:?}");
    let report = read(&t.join("hunt.xml"));
    let suite = &report.test_suites[0];
    let names: Vec<&str> = suite.test_cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["d1-read-after-write", "d8-negative-slice-bound"],
        "{r:?}"
    );
    let found = &suite.test_cases[0];
    assert!(
        matches!(found.status, TestCaseStatus::Success { .. }),
        "{found:?}"
    );
    let out = found.system_out.as_ref().unwrap().as_str();
    assert!(
        out.contains("reproduce: pallas-diff check ")
            && out.contains("--inject d1-read-after-write"),
        "{out}"
    );
    match &suite.test_cases[1].status {
        TestCaseStatus::NonSuccess { message, .. } => assert!(
            message
                .as_ref()
                .unwrap()
                .as_str()
                .starts_with("not detected in 1 of 1"),
            "{message:?}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_campaign_appends_its_summary_to_the_step_summary_file() {
    let t = scratch("step-summary");
    let page = t.join("summary.md");
    std::fs::write(&page, "earlier step\n").unwrap();
    let args = [
        "fuzz",
        "--cases",
        "150",
        "--seed",
        "4",
        "--inject",
        "all",
        "--no-reduce",
        "--engines",
        "oracle,pallas-sim",
        "--out",
        "f",
    ];
    let r = run_with(&t, &args, &[("GITHUB_STEP_SUMMARY", &page)]);
    assert_eq!(r.code, 3, "{r:?}");
    let md = std::fs::read_to_string(&page).unwrap();
    assert!(
        md.starts_with("earlier step\n## pallas-diff campaign: "),
        "{md}"
    );
    assert!(
        md.contains("new finding(s)") && md.contains("`--seed 4`"),
        "{md}"
    );
    // Every finding directory left is listed (a bucket absorbed by a later, more general one
    // has its directory removed, so the numbers need not start at 0001).
    let mut dirs = 0;
    for entry in std::fs::read_dir(t.join("f")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            dirs += 1;
            assert!(
                md.contains(&format!("| `f/{name}` |")),
                "{name} is not listed: {md}"
            );
        }
    }
    assert!(dirs > 0, "no finding directory: {md}");
    // The campaign record: the summary and a time series ending with the final counts.
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.join("f/stats.json")).unwrap()).unwrap();
    assert_eq!(record["cases"], 150, "{record}");
    let series = record["series"].as_array().expect("a series");
    assert_eq!(series.last().unwrap()["cases"], 150, "{record}");
    assert!(
        series.last().unwrap()["findings"].as_u64() > Some(0),
        "{record}"
    );
    // A merge appends its page too (the nightly merge job's).
    let r = run_with(
        &t,
        &["merge", "f", "--out", "m"],
        &[("GITHUB_STEP_SUMMARY", &page)],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let both = std::fs::read_to_string(&page).unwrap();
    let merged = both.strip_prefix(md.as_str()).unwrap();
    assert!(merged.starts_with("## pallas-diff merge: "), "{merged}");
    assert!(
        merged.contains("| seed-4 | seed 4 cases 0..150 | `f` |"),
        "{merged}"
    );
    let md = both;
    // Without the variable, nothing is written anywhere.
    let r = run_in(
        &t,
        &[
            "fuzz",
            "--cases",
            "5",
            "--engines",
            "oracle,pallas-sim",
            "--out",
            "g",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), md);
}
