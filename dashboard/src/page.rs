//! The page's model: what each section, table and chart of the dashboard shows, computed from
//! the inputs ([`crate::load`]) so that the template only lays it out. Charts are data here
//! ([`Chart`]: x values and named series), drawn in the browser by uPlot.

use crate::load::{FindingsDir, HuntDir, Source};
use corpus::signature::Bucket;
use fuzz::campaign::record::{CampaignRecord, Sample};
use fuzz::campaign::stats::{Agreement, Stats};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The whole page.
#[derive(Debug, Serialize)]
pub struct Page {
    /// This build of pallas-diff.
    pub version: String,
    /// The inputs, as given.
    pub inputs: Vec<String>,
    /// One section per findings directory.
    pub campaigns: Vec<CampaignView>,
    /// One section per hunt.
    pub hunts: Vec<HuntView>,
    /// Every chart of the page, for the script.
    pub charts: Vec<Chart>,
}

/// One findings directory's section.
#[derive(Debug, Serialize)]
pub struct CampaignView {
    /// Its HTML id prefix (`c0`, `c1`, ...).
    pub id: String,
    /// The directory, as given.
    pub name: String,
    /// `campaign`, `merge of N shards`, or `findings directory` (no record says which).
    pub kind: String,
    /// Whether it is a merge's output.
    pub merged: bool,
    /// What the page cannot show, and why.
    pub warnings: Vec<String>,
    /// Headline numbers: (label, value).
    pub summary: Vec<(String, String)>,
    /// The outcome table.
    pub outcomes: Vec<OutcomeRow>,
    /// The ids of its charts, in order.
    pub charts: Vec<String>,
    /// The coverage heat map.
    pub coverage: HeatMap,
    /// Its findings.
    pub findings: Vec<FindingRow>,
    /// The engines that ran.
    pub engines: Vec<String>,
    /// Engines asked for that never ran: (engine, reason).
    pub unavailable: Vec<(String, String)>,
    /// Versions: (what, version).
    pub versions: Vec<(String, String)>,
    /// The shards of a merge, or the runs of a shard.
    pub shards: Vec<ShardRow>,
    /// Verdict agreement with real Helion, when it showed verdicts.
    pub helion: Option<HelionView>,
}

/// One outcome's count.
#[derive(Debug, Serialize)]
pub struct OutcomeRow {
    /// The outcome name.
    pub outcome: String,
    /// Cases.
    pub cases: u64,
    /// Share of all cases, in percent.
    pub share: f64,
}

/// A table whose cells are shaded by what they say.
#[derive(Debug, Default, Serialize)]
pub struct HeatMap {
    /// Column headings (after the row key).
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<HeatRow>,
}

/// One coverage cell's row.
#[derive(Debug, Serialize)]
pub struct HeatRow {
    /// `form/loop type/tail|no-tail`.
    pub key: String,
    /// One entry per column.
    pub cells: Vec<HeatCell>,
}

/// One shaded cell.
#[derive(Debug, Serialize)]
pub struct HeatCell {
    /// What it shows.
    pub text: String,
    /// Its CSS background and text colour.
    pub style: String,
    /// The tooltip: what the shade means.
    pub title: String,
    /// Whether it is a gap (nothing where something was expected).
    pub gap: bool,
}

/// One finding of a findings directory.
#[derive(Debug, Serialize)]
pub struct FindingRow {
    /// Its HTML id (the report's anchor).
    pub anchor: String,
    /// Its directory name.
    pub dir: String,
    /// The directory relative to the page, for links.
    pub href: String,
    /// The signature key.
    pub signature: String,
    /// The outcome (the finding's kind).
    pub outcome: String,
    /// The engine that decided it.
    pub engine: String,
    /// Findings filed into the bucket.
    pub count: u64,
    /// Kernel statements of the kept case.
    pub statements: usize,
    /// Kernel-body lines before and after reduction, when reduced.
    pub reduced: Option<(usize, usize)>,
    /// The JAX cross-check's result, when there was one.
    pub cross_check: Option<String>,
    /// The shards that found it (merged directories).
    pub found_in: Vec<String>,
    /// The injected faults it needs (a model defect, not Helion's).
    pub faults: Vec<String>,
    /// The Markdown bug report (`pallas-diff report`), or why there is none.
    pub report: String,
}

/// One shard of a merge (or run of a shard).
#[derive(Debug, Serialize)]
pub struct ShardRow {
    /// Its id.
    pub id: String,
    /// Its seed ranges.
    pub seeds: String,
    /// Where it was merged from.
    pub origin: String,
    /// Cases, from its record.
    pub cases: Option<u64>,
    /// Seconds, from its record.
    pub seconds: Option<f64>,
    /// Whether it has a record.
    pub recorded: bool,
}

/// Verdict agreement with Helion.
#[derive(Debug, Serialize)]
pub struct HelionView {
    /// Over every case.
    pub total: AgreementRow,
    /// By our verdict.
    pub by_verdict: Vec<AgreementRow>,
    /// By index form.
    pub by_form: Vec<AgreementRow>,
}

/// One row of an agreement table.
#[derive(Debug, Serialize)]
pub struct AgreementRow {
    /// Our verdict or the index form.
    pub key: String,
    /// Cases where Helion showed its verdict.
    pub cases: u64,
    /// Of those, agreeing.
    pub agree: u64,
    /// The agreeing share in percent.
    pub share: f64,
    /// Refused by both with one class.
    pub messages: u64,
    /// Of those, with our rule's message.
    pub messages_agree: u64,
    /// The shade of the share.
    pub style: String,
}

/// One hunt's section.
#[derive(Debug, Serialize)]
pub struct HuntView {
    /// The directory, as given.
    pub name: String,
    /// One row per fault.
    pub rows: Vec<HuntViewRow>,
    /// Faults detected in every repetition, and all faults.
    pub detected: (usize, usize),
}

/// One fault of a hunt.
#[derive(Debug, Serialize)]
pub struct HuntViewRow {
    /// The fault.
    pub fault: String,
    /// `detected/repeats`.
    pub detected: String,
    /// Whether every repetition detected it.
    pub every: bool,
    /// Median cases to detection.
    pub median_cases: Option<u64>,
    /// Median seconds to detection.
    pub median_seconds: Option<f64>,
    /// Reduced kernel-body lines.
    pub reduced_lines: Option<usize>,
    /// The signature.
    pub signature: String,
    /// The first reproducer relative to the page, when there is one.
    pub href: Option<String>,
    /// Its file name.
    pub case: Option<String>,
    /// The command that shows it.
    pub reproduce: String,
}

/// One chart: series over a shared x axis (seconds), drawn by the page's script.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// The HTML id of its container.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The y axis' label.
    pub y_label: String,
    /// Seconds since the campaign started.
    pub x: Vec<f64>,
    /// Named series, one value (or gap) per x.
    pub series: Vec<ChartSeries>,
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChartSeries {
    /// Its legend.
    pub label: String,
    /// One value per x of the chart; `None` where it has no sample.
    pub values: Vec<Option<f64>>,
}

/// A share in 0..=1 as a background of hue `hue` (pale at 0, saturated at 1) with a legible
/// text colour.
pub fn shade(share: f64, hue: u16) -> String {
    let share = if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let lightness = 97.0 - 52.0 * share;
    let text = if lightness < 62.0 { "#fff" } else { "#111" };
    format!("background:hsl({hue},65%,{lightness:.0}%);color:{text}")
}

/// The shade of a gap: nothing where the row shows something was expected.
const GAP: &str = "background:hsl(0,75%,88%);color:#700";

const HUE_CASES: u16 = 215;
const HUE_LOWERED: u16 = 140;
const HUE_REJECTED: u16 = 30;
const HUE_CONFIRMED: u16 = 275;
const HUE_HELION: u16 = 190;

fn share(n: u64, of: u64) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

/// The coverage heat map of a summary: cases (shaded by the largest cell), lowered and rejected
/// (by their share of the cell's cases), each JAX engine's confirmations (by their share of the
/// lowered cases; none of a lowered cell is a gap) and, when Helion ran, its reach (cases that
/// got to its code generation of those it ran; under 1% is a gap, as in the campaign's table).
pub fn coverage_map(stats: &Stats) -> HeatMap {
    let engines: BTreeSet<&String> = stats
        .coverage_confirmed
        .values()
        .flat_map(|m| m.keys())
        .chain(stats.jax_confirmed_by.keys())
        .collect();
    let helion = stats.coverage.values().any(|c| c.helion_ran > 0);
    let mut columns: Vec<String> = ["cases", "lowered", "rejected"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    columns.extend(engines.iter().map(|e| format!("{e} confirmed")));
    if helion {
        columns.push("helion codegen reached / ran".into());
    }
    let most = stats.coverage.values().map(|c| c.cases).max().unwrap_or(0);
    let rows = stats
        .coverage
        .iter()
        .map(|(key, c)| {
            let mut cells = vec![
                HeatCell {
                    text: c.cases.to_string(),
                    style: shade(share(c.cases, most), HUE_CASES),
                    title: format!("{} cases; the most in one cell: {most}", c.cases),
                    gap: false,
                },
                HeatCell {
                    text: c.lowered.to_string(),
                    style: shade(share(c.lowered, c.cases), HUE_LOWERED),
                    title: format!(
                        "{:.0}% of the cell's cases lowered",
                        100.0 * share(c.lowered, c.cases)
                    ),
                    gap: false,
                },
                HeatCell {
                    text: c.rejected.to_string(),
                    style: shade(share(c.rejected, c.cases), HUE_REJECTED),
                    title: format!(
                        "{:.0}% of the cell's cases rejected",
                        100.0 * share(c.rejected, c.cases)
                    ),
                    gap: false,
                },
            ];
            for e in &engines {
                let n = stats
                    .coverage_confirmed
                    .get(key)
                    .and_then(|m| m.get(*e))
                    .copied()
                    .unwrap_or(0);
                let gap = n == 0 && c.lowered > 0;
                cells.push(HeatCell {
                    text: n.to_string(),
                    style: if gap {
                        GAP.to_string()
                    } else {
                        shade(share(n, c.lowered), HUE_CONFIRMED)
                    },
                    title: if gap {
                        format!("{e} confirmed none of the {} lowered cases", c.lowered)
                    } else {
                        format!("{e} confirmed {n} of {} lowered cases", c.lowered)
                    },
                    gap,
                });
            }
            if helion {
                let gap = c.helion_ran > 0 && c.helion_reached * 100 < c.helion_ran;
                cells.push(HeatCell {
                    text: format!("{}/{}", c.helion_reached, c.helion_ran),
                    style: if gap {
                        GAP.to_string()
                    } else {
                        shade(share(c.helion_reached, c.helion_ran), HUE_HELION)
                    },
                    title: if gap {
                        "under 1% reached Helion's code generation: a generator gap".into()
                    } else {
                        format!(
                            "{} of {} cases Helion ran reached its code generation",
                            c.helion_reached, c.helion_ran
                        )
                    },
                    gap,
                });
            }
            HeatRow {
                key: key.clone(),
                cells,
            }
        })
        .collect();
    HeatMap { columns, rows }
}

/// The outcome table of a summary, largest first.
pub fn outcome_rows(stats: &Stats) -> Vec<OutcomeRow> {
    let mut rows: Vec<OutcomeRow> = stats
        .outcomes
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(o, n)| OutcomeRow {
            outcome: o.clone(),
            cases: *n,
            share: 100.0 * share(*n, stats.cases),
        })
        .collect();
    rows.sort_by(|a, b| b.cases.cmp(&a.cases).then(a.outcome.cmp(&b.outcome)));
    rows
}

fn agreement_row(key: &str, a: &Agreement) -> AgreementRow {
    AgreementRow {
        key: key.to_string(),
        cases: a.cases,
        agree: a.agree,
        share: a.percent(),
        messages: a.messages,
        messages_agree: a.messages_agree,
        style: shade(share(a.agree, a.cases), HUE_LOWERED),
    }
}

/// Verdict agreement with Helion, when it showed any verdict.
pub fn helion_view(stats: &Stats) -> Option<HelionView> {
    let total = stats.helion_agreement();
    (total.cases > 0).then(|| HelionView {
        total: agreement_row("all cases", &total),
        by_verdict: stats
            .helion_verdicts
            .iter()
            .map(|(k, a)| agreement_row(k, a))
            .collect(),
        by_form: stats
            .helion_verdicts_by_form
            .iter()
            .map(|(k, a)| agreement_row(k, a))
            .collect(),
    })
}

/// The charts of a record: outcome shares, cases/s (the whole and, for a merge, each shard) and
/// coverage, confirmations and findings, over time. None without samples.
pub fn charts(id: &str, record: &CampaignRecord) -> Vec<Chart> {
    let series = &record.series;
    if series.is_empty() {
        return Vec::new();
    }
    let x: Vec<f64> = series.iter().map(|s| s.seconds).collect();
    let outcomes: BTreeSet<&String> = series.iter().flat_map(|s| s.outcomes.keys()).collect();
    let shares = Chart {
        id: format!("{id}-outcomes"),
        title: "outcome shares over time".into(),
        y_label: "% of cases".into(),
        x: x.clone(),
        series: outcomes
            .iter()
            .map(|o| ChartSeries {
                label: o.to_string(),
                values: series
                    .iter()
                    .map(|s| {
                        // No case yet: no share (a gap), not 0%.
                        let n = s.outcomes.get(*o).copied().unwrap_or(0);
                        (s.cases > 0).then(|| 100.0 * share(n, s.cases))
                    })
                    .collect(),
            })
            .collect(),
    };
    let rate = rate_chart(id, record);
    let line = |label: &str, f: &dyn Fn(&Sample) -> f64| ChartSeries {
        label: label.into(),
        values: series.iter().map(|s| Some(f(s))).collect(),
    };
    let reach = Chart {
        id: format!("{id}-reach"),
        title: "coverage, JAX confirmations and findings over time".into(),
        y_label: "count".into(),
        x,
        series: vec![
            line("coverage cells reached", &|s| s.coverage_cells as f64),
            line("cells with a lowered case", &|s| s.lowered_cells as f64),
            line("JAX-confirmed", &|s| s.jax_confirmed as f64),
            line("findings", &|s| s.findings as f64),
        ],
    };
    vec![shares, rate, reach]
}

/// Cases/s over time: the record's series, and each shard's own when it is a merge (on the
/// union of their sample times, gaps where a series has no sample).
fn rate_chart(id: &str, record: &CampaignRecord) -> Chart {
    let mut lines: Vec<(String, &[Sample])> = vec![(
        if record.shards.is_empty() {
            "cases/s".into()
        } else {
            "all shards".into()
        },
        &record.series,
    )];
    for s in &record.shards {
        lines.push((s.id.clone(), &s.record.series));
    }
    // f64 seconds as exact bit patterns: the union of sample times, in order.
    let times: BTreeSet<u64> = lines
        .iter()
        .flat_map(|(_, ss)| ss.iter().map(|s| s.seconds.to_bits()))
        .collect();
    let mut x: Vec<f64> = times.into_iter().map(f64::from_bits).collect();
    x.sort_by(f64::total_cmp);
    let series = lines
        .into_iter()
        .map(|(label, ss)| {
            let at: BTreeMap<u64, f64> = ss
                .iter()
                .map(|s| (s.seconds.to_bits(), s.cases_per_s))
                .collect();
            ChartSeries {
                label,
                values: x.iter().map(|t| at.get(&t.to_bits()).copied()).collect(),
            }
        })
        .collect();
    Chart {
        id: format!("{id}-rate"),
        title: "cases/s over time".into(),
        y_label: "cases/s".into(),
        x,
        series,
    }
}

/// The path of `target` relative to the directory the page is written in, `/`-separated (a
/// link); the absolute path when there is no relative one.
pub fn link(page_dir: &Path, target: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (base, to) = (abs(page_dir), abs(target));
    let rel = pathdiff::diff_paths(&to, &base).unwrap_or(to);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

fn finding_row(
    id: &str,
    i: usize,
    dir: &FindingsDir,
    entry: &crate::load::FindingEntry,
    page_dir: &Path,
) -> FindingRow {
    let Bucket {
        key, count, cost, ..
    } = &entry.bucket;
    let meta = &entry.finding.meta;
    // A report evaluates the reference on the case; a case that breaks it must not take the
    // whole page down, only its own report.
    let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        corpus::report::markdown(&entry.finding)
    }))
    .unwrap_or_else(|_| {
        "(the report could not be made: `pallas-diff report` on the directory says why)".into()
    });
    FindingRow {
        anchor: format!("{id}-f{}", i + 1),
        dir: entry.bucket.dir.clone(),
        href: link(page_dir, &entry.dir),
        signature: key.clone(),
        outcome: meta.outcome.clone(),
        engine: meta.decided_by.clone().unwrap_or_else(|| "-".into()),
        count: *count,
        statements: cost.statements,
        reduced: meta
            .reduction
            .as_ref()
            .map(|r| (r.original_body_lines, r.body_lines)),
        cross_check: meta
            .cross_check
            .as_ref()
            .map(|c| c.result.name().to_string()),
        found_in: dir
            .merge
            .as_ref()
            .and_then(|m| m.found_in.get(key))
            .cloned()
            .unwrap_or_default(),
        faults: meta.codegen.faults.clone(),
        report,
    }
}

fn versions(dir: &FindingsDir) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(c) = &dir.contract {
        let v = &c.versions;
        let mut put = |what: &str, value: Option<&String>| {
            if let Some(value) = value {
                out.push((what.to_string(), value.clone()));
            }
        };
        put("pallas-diff", Some(&v.pallas_diff));
        put("model's Helion release", v.model_helion.as_ref());
        put("python", v.python.as_ref());
        put("jax", v.jax.as_ref());
        put("jaxlib", v.jaxlib.as_ref());
        put("TPU kind", v.tpu_kind.as_ref());
        put("helion", v.helion.as_ref());
        put("torch", v.torch.as_ref());
        put("Helion environment's jax", v.helion_jax.as_ref());
        if !v.devices.is_empty() {
            out.push(("devices".into(), v.devices.join(", ")));
        }
        out.push(("case format".into(), v.case_format.to_string()));
    }
    out
}

fn shard_rows(dir: &FindingsDir) -> Vec<ShardRow> {
    let record_of = |id: &str| {
        dir.record
            .as_ref()
            .and_then(|r| r.shards.iter().find(|s| s.id == id))
            .map(|s| &s.record)
    };
    match &dir.merge {
        Some(m) => m
            .shards
            .iter()
            .map(|s| {
                let r = record_of(&s.id);
                ShardRow {
                    id: s.id.clone(),
                    seeds: s
                        .seeds
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    origin: s.origin.clone(),
                    cases: r.map(|r| r.stats.cases),
                    seconds: r.map(|r| r.seconds),
                    recorded: r.is_some(),
                }
            })
            .collect(),
        None => dir
            .seeds
            .iter()
            .map(|s| ShardRow {
                id: format!("seed-{}", s.seed),
                seeds: s.to_string(),
                origin: dir.path.display().to_string(),
                cases: s.cases,
                seconds: None,
                recorded: true,
            })
            .collect(),
    }
}

/// The section of one findings directory, and its charts.
pub fn campaign_view(id: &str, dir: &FindingsDir, page_dir: &Path) -> (CampaignView, Vec<Chart>) {
    let mut warnings = Vec::new();
    let empty = CampaignRecord::merged(Vec::new(), Vec::new());
    let record = match &dir.record {
        Some(r) => r,
        None => {
            warnings.push(format!(
                "no {}: this directory has no campaign record (written by `pallas-diff fuzz` and `pallas-diff merge` since the record exists), so no summary, coverage or charts",
                fuzz::campaign::record::STATS_FILE
            ));
            &empty
        }
    };
    if !record.stats_missing.is_empty() {
        warnings.push(format!(
            "shards without a campaign record, not counted in the summary and charts: {}",
            record.stats_missing.join(", ")
        ));
    }
    if record.interrupted {
        warnings.push("interrupted (Ctrl-C) before its budget".into());
    }
    let kind = match (&dir.merge, &dir.record) {
        (Some(m), _) => format!("merge of {} shard(s)", m.shards.len()),
        (None, Some(_)) => "campaign".to_string(),
        (None, None) => "findings directory".to_string(),
    };
    let stats = &record.stats;
    let findings_kept: u64 = dir.findings.iter().map(|f| f.bucket.count).sum();
    let mut summary = vec![
        ("cases".to_string(), stats.cases.to_string()),
        ("seconds".to_string(), format!("{:.1}", record.seconds)),
        (
            "cases/s".to_string(),
            format!("{:.0}", stats.cases as f64 / record.seconds.max(1e-9)),
        ),
        ("buckets".to_string(), dir.findings.len().to_string()),
        ("findings filed".to_string(), findings_kept.to_string()),
        (
            "JAX confirmations".to_string(),
            stats.jax_confirmed.to_string(),
        ),
        (
            "coverage cells".to_string(),
            stats.coverage.len().to_string(),
        ),
    ];
    if let Some(seed) = record.seed {
        summary.insert(0, ("seed".to_string(), seed.to_string()));
    }
    for (k, n) in &stats.known_issues {
        summary.push((format!("known issue {k}"), n.to_string()));
    }
    let charts = charts(id, record);
    let engines = match &dir.contract {
        Some(c) => c.engines.iter().map(|e| e.name().to_string()).collect(),
        None => record.engines.clone(),
    };
    let view = CampaignView {
        id: id.to_string(),
        name: dir.path.display().to_string(),
        kind,
        merged: dir.merge.is_some(),
        warnings,
        summary,
        outcomes: outcome_rows(stats),
        charts: charts.iter().map(|c| c.id.clone()).collect(),
        coverage: coverage_map(stats),
        findings: dir
            .findings
            .iter()
            .enumerate()
            .map(|(i, f)| finding_row(id, i, dir, f, page_dir))
            .collect(),
        engines,
        unavailable: record
            .engines_unavailable
            .iter()
            .map(|u| (u.engine.clone(), u.reason.clone()))
            .collect(),
        versions: versions(dir),
        shards: shard_rows(dir),
        helion: helion_view(stats),
    };
    (view, charts)
}

/// The section of one hunt.
pub fn hunt_view(hunt: &HuntDir, page_dir: &Path) -> HuntView {
    let rows: Vec<HuntViewRow> = hunt
        .rows
        .iter()
        .map(|r| {
            // The hunt wrote the path as it was given `--out`; the file is in its directory.
            let file = r
                .case
                .as_ref()
                .and_then(|c| c.file_name())
                .map(|n| n.to_owned());
            HuntViewRow {
                fault: r.fault.clone(),
                detected: format!("{}/{}", r.detected, r.repeats),
                every: r.detected >= r.repeats,
                median_cases: r.median_cases,
                median_seconds: r.median_seconds,
                reduced_lines: r.reduced_lines,
                signature: r.signature.clone().unwrap_or_else(|| "-".into()),
                href: file.as_ref().map(|f| link(page_dir, &hunt.path.join(f))),
                case: file.map(|f| f.to_string_lossy().into_owned()),
                reproduce: r.reproduce.clone().unwrap_or_default(),
            }
        })
        .collect();
    HuntView {
        name: hunt.path.display().to_string(),
        detected: (rows.iter().filter(|r| r.every).count(), rows.len()),
        rows,
    }
}

/// The page of `sources`, written into `page_dir`.
pub fn page(sources: &[Source], page_dir: &Path) -> Page {
    let mut campaigns = Vec::new();
    let mut hunts = Vec::new();
    let mut charts = Vec::new();
    let mut inputs = Vec::new();
    for s in sources {
        match s {
            Source::Findings(dir) => {
                inputs.push(dir.path.display().to_string());
                let (view, c) = campaign_view(&format!("c{}", campaigns.len()), dir, page_dir);
                campaigns.push(view);
                charts.extend(c);
            }
            Source::Hunt(h) => {
                inputs.push(h.path.display().to_string());
                hunts.push(hunt_view(h, page_dir));
            }
        }
    }
    Page {
        version: env!("CARGO_PKG_VERSION").to_string(),
        inputs,
        campaigns,
        hunts,
        charts,
    }
}

#[cfg(test)]
mod tests;
