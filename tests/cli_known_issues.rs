//! `pallas-diff known-issues` end to end on real Helion: on the pinned release every row of the
//! known-issue table that has a reproducer is still that known issue (a row whose reproducer
//! drifted is a table to fix, not a passing nightly). Skipped with the reason when the Helion
//! environment is absent.

mod common;

#[test]
fn every_reproducer_still_matches_its_row_on_the_pinned_helion() {
    let python = match tpu_runner::helion_python_if_present() {
        Ok(python) => python,
        Err(why) => {
            eprintln!("skipped: needs the Helion environment: {why}");
            return;
        }
    };
    let dir = common::scratch("cli-known-issues", "pinned");
    let r = common::run_with(
        &dir,
        &["known-issues", "--json"],
        &[("PALLAS_DIFF_HELION_PYTHON", python.as_path())],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let json: serde_json::Value = serde_json::from_str(r.stdout.trim()).expect("one JSON object");
    let rows = json["rows"].as_array().expect("rows");
    let with_reproducer = fuzz::known_issues::KNOWN_ISSUES
        .iter()
        .filter(|k| k.reproducer.is_some())
        .count();
    let matching: Vec<&str> = rows
        .iter()
        .filter(|row| row["state"] == "still-matching")
        .filter_map(|row| row["id"].as_str())
        .collect();
    assert_eq!(matching.len(), with_reproducer, "{r:?}");
    assert!(
        matching.contains(&"helion-pipeline-inval-discharged"),
        "{r:?}"
    );
    assert!(json["helion_build"].to_string().contains("1.5.1"), "{r:?}");
}
