//! The page's model: what each section, table and chart of the dashboard shows, computed from
//! the inputs ([`crate::load`]) so that the template only lays it out. This module owns the
//! sections (findings, shards, versions, the hunt); [`mod@tables`] the shaded tables (the coverage
//! heat map, Helion's verdict agreement); [`mod@charts`] the charts, which are data here ([`Chart`]:
//! x values and named series), drawn in the browser by uPlot.

pub mod charts;
pub mod tables;

pub use charts::{Chart, ChartSeries, charts};
pub use tables::{
    AgreementRow, HealthView, HeatCell, HeatMap, HeatRow, HelionView, coverage_map, health_view,
    helion_view, shade,
};

use crate::load::{FindingsDir, HuntDir, Source};
use finding::signature::Bucket;
use fuzz::campaign::record::CampaignRecord;
use fuzz::campaign::stats::Stats;
use serde::Serialize;
use std::path::Path;

/// `n` as a share of `of` (0 of nothing).
fn share(n: u64, of: u64) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

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
    /// One section per mutants run.
    pub mutants: Vec<MutantsView>,
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
    /// What real Helion made of the generated cases, when it ran any.
    pub health: Option<HealthView>,
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
    /// A Helion finding's regression range across Helion builds (`bisect`, or the campaign
    /// that filed it), in one line, when it has one.
    pub regression: Option<String>,
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

/// The outcome table of a summary, largest first.
pub fn outcome_rows(stats: &Stats) -> Vec<OutcomeRow> {
    let mut rows: Vec<OutcomeRow> = stats
        .outcomes
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(o, n)| OutcomeRow {
            outcome: o.name().to_string(),
            cases: *n,
            share: 100.0 * share(*n, stats.cases),
        })
        .collect();
    rows.sort_by(|a, b| b.cases.cmp(&a.cases).then(a.outcome.cmp(&b.outcome)));
    rows
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
    // A report evaluates the reference on the case. The reference refuses a case with an
    // error, never a panic: a panic is a harness bug and stops the page (exit 1), loudly.
    let report = finding::report::markdown(&entry.finding);
    FindingRow {
        anchor: format!("{id}-f{}", i + 1),
        dir: entry.bucket.dir.clone(),
        href: link(page_dir, &entry.dir),
        signature: key.clone(),
        outcome: meta.report.outcome.name().to_string(),
        engine: meta.report.decided_by.map_or("-", |e| e.name()).to_string(),
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
        regression: meta.regression.as_ref().map(|r| r.summary()),
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
        None => record
            .engines
            .iter()
            .map(|e| e.name().to_string())
            .collect(),
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
            .map(|u| (u.engine.name().to_string(), u.reason.clone()))
            .collect(),
        versions: versions(dir),
        shards: shard_rows(dir),
        helion: helion_view(stats),
        health: health_view(stats),
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

/// One mutants run's section: its summary by file, and where its survivors are.
#[derive(Debug, Serialize)]
pub struct MutantsView {
    /// The directory.
    pub name: String,
    /// Rows: each file, then `all`.
    pub rows: Vec<MutantsRow>,
    /// A link to `survivors.md`.
    pub survivors_href: String,
}

/// One row of a mutants section.
#[derive(Debug, Serialize)]
pub struct MutantsRow {
    /// The file (or `all`).
    pub file: String,
    /// Its counts.
    pub counts: mutants::report::Counts,
    /// Kill scores in percent: corpus, campaign, union.
    pub scores: [f64; 3],
}

/// The section of one mutants run.
pub fn mutants_view(dir: &crate::load::MutantsDir, page_dir: &Path) -> MutantsView {
    let row = |file: &str, c: &mutants::report::Counts| MutantsRow {
        file: file.to_owned(),
        counts: c.clone(),
        scores: [
            c.score(c.killed_corpus),
            c.score(c.killed_campaign),
            c.score(c.killed),
        ],
    };
    let mut rows: Vec<MutantsRow> = dir.summary.by_file.iter().map(|(f, c)| row(f, c)).collect();
    rows.push(row("all", &dir.summary.total));
    MutantsView {
        name: dir.path.display().to_string(),
        rows,
        survivors_href: link(page_dir, &dir.path.join("survivors.md")),
    }
}

/// The page of `sources`, written into `page_dir`.
pub fn page(sources: &[Source], page_dir: &Path) -> Page {
    let mut campaigns = Vec::new();
    let mut hunts = Vec::new();
    let mut mutants = Vec::new();
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
            Source::Mutants(m) => {
                inputs.push(m.path.display().to_string());
                mutants.push(mutants_view(m, page_dir));
            }
        }
    }
    Page {
        version: env!("CARGO_PKG_VERSION").to_string(),
        inputs,
        campaigns,
        hunts,
        mutants,
        charts,
    }
}

#[cfg(test)]
mod tests;
