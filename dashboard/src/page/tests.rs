//! The page model on hand-made records: what the heat map shades and flags, the charts' series,
//! links relative to the page, and the rendered page's structure.

use super::tables::{HUE_CASES, HUE_CONFIRMED, HUE_LOWERED};
use super::*;
use fuzz::campaign::record::Sample;
use fuzz::campaign::record::ShardStats;
use fuzz::campaign::stats::Agreement;
use fuzz::campaign::stats::Cell;

fn sample(seconds: f64, cases: u64, agree: u64, rate: f64) -> Sample {
    Sample {
        seconds,
        cases,
        cases_per_s: rate,
        outcomes: [
            (fuzz::outcome::Outcome::Agree, agree),
            (fuzz::outcome::Outcome::Rejected, cases - agree),
        ]
        .into_iter()
        .collect(),
        coverage_cells: 3,
        lowered_cells: 2,
        jax_confirmed: 1,
        findings: 0,
    }
}

fn record() -> CampaignRecord {
    let mut r = CampaignRecord::merged(Vec::new(), Vec::new());
    r.seed = Some(7);
    r.seconds = 10.0;
    r.stats.cases = 200;
    r.stats.outcomes = [
        (fuzz::outcome::Outcome::Agree, 150),
        (fuzz::outcome::Outcome::Rejected, 50),
    ]
    .into_iter()
    .collect();
    r.stats.coverage.insert(
        "slice/unroll/tail".into(),
        Cell {
            cases: 100,
            lowered: 80,
            rejected: 20,
            helion_ran: 200,
            helion_reached: 1,
        },
    );
    r.stats.coverage.insert(
        "int/fori_loop/no-tail".into(),
        Cell {
            cases: 50,
            lowered: 50,
            rejected: 0,
            helion_ran: 0,
            helion_reached: 0,
        },
    );
    r.stats.coverage_confirmed.insert(
        "slice/unroll/tail".into(),
        [("pallas-tpu-interpret".parse().expect("an engine"), 40)]
            .into_iter()
            .collect(),
    );
    r.series = vec![sample(5.0, 100, 75, 20.0), sample(10.0, 200, 150, 20.0)];
    r
}

#[test]
fn the_heat_map_shades_each_column_and_flags_gaps() {
    let map = coverage_map(&record().stats);
    assert_eq!(
        map.columns,
        [
            "cases",
            "lowered",
            "rejected",
            "pallas-tpu-interpret confirmed",
            "helion codegen reached / ran"
        ]
    );
    // Rows in key order: int/... before slice/...
    let int = &map.rows[0];
    assert_eq!(int.key, "int/fori_loop/no-tail");
    assert_eq!(int.cells[3].text, "0");
    assert!(int.cells[3].gap, "50 lowered cases, none confirmed");
    assert!(!int.cells[4].gap, "Helion never ran it: no gap");
    let slice = &map.rows[1];
    assert_eq!(
        slice.cells[0].style,
        shade(1.0, HUE_CASES),
        "the largest cell"
    );
    assert_eq!(slice.cells[1].style, shade(0.8, HUE_LOWERED));
    assert_eq!(slice.cells[3].style, shade(0.5, HUE_CONFIRMED), "40 of 80");
    assert_eq!(slice.cells[4].text, "1/200");
    assert!(
        slice.cells[4].gap,
        "under 1% reached Helion's code generation"
    );
    assert_eq!(shade(f64::NAN, 10), shade(0.0, 10));
}

#[test]
fn charts_follow_the_series_and_a_merge_draws_each_shard() {
    let r = record();
    let c = charts("c0", &r);
    let ids: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["c0-outcomes", "c0-rate", "c0-reach"]);
    assert_eq!(c[0].x, vec![5.0, 10.0]);
    let agree = c[0].series.iter().find(|s| s.label == "agree").unwrap();
    assert_eq!(agree.values, vec![Some(75.0), Some(75.0)]);
    assert_eq!(c[1].series.len(), 1);
    let mut first = record();
    first.series.insert(0, sample(0.1, 0, 0, 0.0));
    let agree = &charts("c0", &first)[0].series[0];
    assert_eq!(agree.values[0], None, "no case yet: no share");
    assert!(charts("c0", &CampaignRecord::merged(Vec::new(), Vec::new())).is_empty());
    // A merge: the merged series and each shard's, on the union of their times.
    let mut one = record();
    one.series = vec![sample(2.0, 10, 10, 5.0), sample(4.0, 20, 20, 5.0)];
    let merged = CampaignRecord::merged(
        vec![
            ShardStats {
                id: "seed-0".into(),
                origin: "a".into(),
                record: one,
            },
            ShardStats {
                id: "seed-1".into(),
                origin: "b".into(),
                record: record(),
            },
        ],
        Vec::new(),
    );
    let rate = &charts("m", &merged)[1];
    let labels: Vec<&str> = rate.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["all shards", "seed-0", "seed-1"]);
    assert_eq!(rate.x, vec![2.0, 4.0, 5.0, 10.0]);
    assert_eq!(
        rate.series[1].values,
        vec![Some(5.0), Some(5.0), None, None]
    );
    for s in &rate.series {
        assert_eq!(s.values.len(), rate.x.len());
    }
}

#[test]
fn links_are_relative_to_the_page() {
    assert_eq!(
        link(Path::new("out/pages"), Path::new("findings/0001-x")),
        "../../findings/0001-x"
    );
    assert_eq!(link(Path::new("."), Path::new("f/0001-x")), "f/0001-x");
    assert_eq!(link(Path::new("f"), Path::new("f")), ".");
}

#[test]
fn outcome_rows_are_largest_first_with_shares() {
    let rows = outcome_rows(&record().stats);
    assert_eq!(rows[0].outcome, "agree");
    assert_eq!((rows[0].cases, rows[0].share), (150, 75.0));
    assert_eq!(rows[1].outcome, "rejected");
}

#[test]
fn the_page_renders_every_section_escaped() {
    let mut r = record();
    r.stats_missing = vec!["seed-9".into()];
    r.stats.helion_verdicts.insert(
        "<lowered>".into(),
        Agreement {
            cases: 4,
            agree: 3,
            messages: 0,
            messages_agree: 0,
        },
    );
    r.stats.helion_health = fuzz::campaign::stats::HelionHealthCounts {
        cases: 10,
        lowered: 5,
        refused: [("InvalidConfig".to_string(), 2)].into_iter().collect(),
        cannot_run: [("TypeError".to_string(), 3)].into_iter().collect(),
    };
    let dir = FindingsDir {
        path: "findings".into(),
        record: Some(r),
        contract: None,
        seeds: Vec::new(),
        merge: None,
        findings: Vec::new(),
    };
    let hunt = HuntDir {
        path: "target/hunt".into(),
        rows: vec![crate::load::HuntRow {
            fault: "d12-tail-clamped-before-mask".into(),
            detected: 1,
            repeats: 1,
            median_cases: Some(12),
            median_seconds: Some(0.25),
            reduced_lines: Some(3),
            signature: Some("mismatch/pallas-sim/values/-/-".into()),
            case: Some("target/hunt/d12-tail-clamped-before-mask-0.py".into()),
            reproduce: Some("pallas-diff check x.py".into()),
            reproducers: Vec::new(),
        }],
    };
    let sources = [Source::Findings(Box::new(dir)), Source::Hunt(hunt)];
    let p = page(&sources, Path::new("."));
    assert_eq!(p.charts.len(), 3);
    let html = crate::render::render(&p).unwrap();
    for id in ["c0-outcomes", "c0-rate", "c0-reach"] {
        assert!(
            html.contains(&format!("<div class=\"chart\" id=\"{id}\">")),
            "{id}"
        );
    }
    assert!(
        html.contains("shards without a campaign record"),
        "the warning"
    );
    assert!(html.contains("&lt;lowered&gt;"), "values are escaped");
    assert!(!html.contains("<lowered>"));
    // minijinja escapes `/` too (`&#x2f;`), which HTML reads back as `/`.
    let unescaped = html.replace("&#x2f;", "/");
    assert!(unescaped.contains("Fault hunt: <code>target/hunt</code>"));
    assert!(unescaped.contains("href=\"target/hunt/d12-tail-clamped-before-mask-0.py\""));
    assert!(html.contains("id=\"dashboard-status\""));
    assert!(html.contains("Real Helion on the generated cases as rendered"));
    assert!(html.contains("more than 2% could not run"), "3 of 10");
    assert!(html.contains("cannot run: TypeError</td><td>3</td>"));
    // Self-contained: no script, style or image is fetched.
    for fetch in ["<script src", "<link", "<img", "@import", "url(http"] {
        assert!(!html.contains(fetch), "{fetch}");
    }
    // The chart data is JSON the script parses, escaped for an HTML script element.
    let start = html.find("type=\"application/json\">").unwrap() + 24;
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    assert_eq!(data["charts"][0]["id"], "c0-outcomes");
}

/// A real Helion finding (seed 31's `helion-crash`, `finding/tests/fixtures/helion-s31`) with the
/// range `bisect` measured for it (1.4.0 refuses its case, 1.5.0 and 1.5.1 crash): its row
/// says so, and the page shows it under the signature.
#[test]
fn a_helion_finding_with_a_regression_range_shows_it() {
    use finding::regression::{Behaviour, RegressionRecord};
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../finding/tests/fixtures/helion-s31/0004-helion-crash-helion-pallas");
    let mut finding = finding::finding::Finding::load(&fixture).expect("the fixture loads");
    let build = |v: &str| {
        serde_json::from_value(serde_json::json!({ "id": v, "version": v })).expect("an identity")
    };
    finding.meta.regression = Some(RegressionRecord::of(vec![
        (build("1.4.0"), Behaviour::Good),
        (build("1.5.0"), Behaviour::Bad),
        (build("1.5.1"), Behaviour::Bad),
    ]));
    let sig = finding.meta.signature.clone();
    let entry = crate::load::FindingEntry {
        bucket: Bucket {
            key: sig.key(),
            signature: sig,
            count: 1,
            dir: "0004-helion-crash-helion-pallas".into(),
            cost: finding::signature::CostRecord::of(&finding.case),
            aliases: Default::default(),
        },
        dir: fixture.clone(),
        finding,
    };
    let dir = FindingsDir {
        path: "findings".into(),
        record: Some(record()),
        contract: None,
        seeds: Vec::new(),
        merge: None,
        findings: vec![entry],
    };
    let expected = "introduced after helion 1.4.0 in helion 1.5.0";
    assert_eq!(
        finding_row("c0", 0, &dir, &dir.findings[0], Path::new("."))
            .regression
            .as_deref(),
        Some(expected)
    );
    let html =
        crate::render::render(&page(&[Source::Findings(Box::new(dir))], Path::new("."))).unwrap();
    assert!(
        html.contains(&format!("regression range: {expected}")),
        "the range is on the page"
    );
}
