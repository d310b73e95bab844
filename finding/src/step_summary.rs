//! A campaign's summary as Markdown for a CI job's summary page: GitHub Actions renders what a
//! step appends to the file `$GITHUB_STEP_SUMMARY` names ([`append_if_set`]; nothing happens
//! where the variable is unset, e.g. outside Actions).
//!
//! A campaign's page says, in this order: the verdict (new findings or none, interrupted), the
//! seed that repeats the campaign, the engines (and those that never ran), the rates, the
//! outcome shares, every new finding with its directory, signature and reduction, and the
//! coverage table. A merge's ([`merge_markdown`]) says how many shards and buckets, each shard's
//! seeds, and each bucket with its count and the shards that found it.

use crate::fsio::IoError;
use crate::merge::Merged;
use crate::sink::NewFinding;
use fuzz::campaign::Summary;
use fuzz::engines::EngineId;
use fuzz::outcome::Outcome;
use std::fmt::Write;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The environment variable GitHub Actions sets to the step's summary file.
pub const STEP_SUMMARY_VAR: &str = "GITHUB_STEP_SUMMARY";

/// What a finished campaign reports.
#[derive(Clone, Copy, Debug)]
pub struct Campaign<'a> {
    /// The campaign seed.
    pub seed: u64,
    /// The engines that ran.
    pub engines: &'a [EngineId],
    /// Engines asked for that could not run here, with the reason.
    pub unavailable: &'a [(EngineId, String)],
    /// The counts.
    pub summary: &'a Summary,
    /// The findings written into new directories.
    pub new_findings: &'a [NewFinding],
    /// New in-process findings the JAX engines did not reproduce.
    pub not_reproduced: u64,
    /// Whether it was stopped by Ctrl-C.
    pub interrupted: bool,
    /// The findings directory.
    pub out: &'a Path,
}

/// A table cell: `|` escaped, line breaks as spaces (a cell is one line).
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The Markdown page of a campaign (module docs).
pub fn markdown(c: &Campaign<'_>) -> String {
    let stats = &c.summary.stats;
    let mut s = String::new();
    let verdict = match (c.new_findings.len(), c.interrupted) {
        (0, false) => "no new finding".to_string(),
        (0, true) => "interrupted; no new finding".to_string(),
        (n, false) => format!("{n} new finding(s)"),
        (n, true) => format!("interrupted; {n} new finding(s)"),
    };
    let _ = writeln!(s, "## pallas-diff campaign: {verdict}\n");
    let _ = writeln!(
        s,
        "Seed `{}` (repeat with `--seed {}`), findings in `{}`.\n",
        c.seed,
        c.seed,
        c.out.display()
    );
    let names: Vec<&str> = c.engines.iter().map(|e| e.name()).collect();
    let _ = writeln!(s, "Engines: {}.", cell(&names.join(", ")));
    for (name, why) in c.unavailable {
        let _ = writeln!(s, "Engine `{name}` never ran: {}.", cell(why));
    }
    let secs = c.summary.seconds;
    let _ = writeln!(
        s,
        "\n| cases | seconds | cases/s | findings | duplicates | JAX confirmed | JAX skipped |\n|---:|---:|---:|---:|---:|---:|---:|\n| {} | {:.1} | {:.0} | {} | {} | {} | {} |",
        stats.cases,
        secs,
        stats.cases as f64 / secs.max(1e-9),
        stats.findings,
        stats.duplicates,
        stats.jax_confirmed,
        stats.jax_skipped
    );
    if c.not_reproduced > 0 {
        let _ = writeln!(
            s,
            "\n**{} new in-process finding(s) not reproduced by the JAX engines** (meta.json `cross_check`).",
            c.not_reproduced
        );
    }
    let _ = writeln!(s, "\n| outcome | cases | share |\n|---|---:|---:|");
    for o in Outcome::ALL {
        let n = stats.count(o);
        let _ = writeln!(
            s,
            "| {} | {n} | {:.1}% |",
            o.name(),
            100.0 * n as f64 / stats.cases.max(1) as f64
        );
    }
    for (k, n) in &stats.known_issues {
        let _ = writeln!(s, "\nKnown issue `{k}`: {n} case(s).");
    }
    if !c.new_findings.is_empty() {
        let _ = writeln!(
            s,
            "\n### New findings\n\n| directory | outcome | engine | signature | reduced |\n|---|---|---|---|---|"
        );
        for f in c.new_findings {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | `{}` | {} |",
                cell(&f.dir.display().to_string()),
                cell(f.outcome.name()),
                cell(f.engine.map_or("-", EngineId::name)),
                cell(&f.signature),
                match &f.not_reduced {
                    None => "yes".to_string(),
                    Some(why) => format!("no: {}", cell(why)),
                }
            );
        }
    }
    if !stats.coverage.is_empty() {
        let _ = writeln!(
            s,
            "\n<details><summary>Coverage ({} cells)</summary>\n\n| index form / loop type / tail | cases | lowered | rejected |\n|---|---:|---:|---:|",
            stats.coverage.len()
        );
        for (k, v) in &stats.coverage {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                cell(k),
                v.cases,
                v.lowered,
                v.rejected
            );
        }
        s.push_str("\n</details>\n");
    }
    s
}

/// The Markdown page of a merge into `out` (module docs).
pub fn merge_markdown(m: &Merged, out: &Path) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## pallas-diff merge: {} bucket(s), {} finding(s) from {} shard(s)\n",
        m.buckets.buckets.len(),
        m.buckets.total(),
        m.record.shards.len()
    );
    let _ = writeln!(
        s,
        "Into `{}`{}.\n\n| shard | seeds | from |\n|---|---|---|",
        cell(&out.display().to_string()),
        if m.changed {
            ""
        } else {
            " (unchanged: it already held exactly these shards)"
        }
    );
    for sh in &m.record.shards {
        let seeds: Vec<String> = sh.seeds.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            s,
            "| {} | {} | `{}` |",
            cell(&sh.id),
            cell(&seeds.join(", ")),
            cell(&sh.origin)
        );
    }
    if !m.buckets.buckets.is_empty() {
        let _ = writeln!(
            s,
            "\n| directory | count | shards | signature |\n|---|---:|---|---|"
        );
        for b in m.buckets.buckets.values() {
            let shards = m
                .record
                .found_in
                .get(&b.key)
                .map(|v| v.join(", "))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | `{}` |",
                cell(&b.dir),
                b.count,
                cell(&shards),
                cell(&b.key)
            );
        }
    }
    s
}

/// Appends `text` to the file `path` (created when absent).
pub fn append(path: &Path, text: &str) -> Result<(), IoError> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| IoError::new(path, "open for appending", e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| IoError::new(path, "append", e))
}

/// Appends the campaign's page to `$GITHUB_STEP_SUMMARY` when it is set (and not empty);
/// returns the file written.
pub fn append_if_set(c: &Campaign<'_>) -> Result<Option<PathBuf>, IoError> {
    append_page_if_set(&markdown(c))
}

/// Appends `page` to `$GITHUB_STEP_SUMMARY` when it is set (and not empty); returns the file
/// written.
pub fn append_page_if_set(page: &str) -> Result<Option<PathBuf>, IoError> {
    match std::env::var_os(STEP_SUMMARY_VAR) {
        Some(p) if !p.is_empty() => {
            let path = PathBuf::from(p);
            append(&path, page)?;
            Ok(Some(path))
        }
        Some(_) | None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuzz::campaign::stats::{Cell, Stats};

    fn summary() -> Summary {
        let mut stats = Stats {
            cases: 200,
            findings: 1,
            duplicates: 2,
            jax_confirmed: 9,
            ..Stats::default()
        };
        stats.outcomes.insert(Outcome::Agree, 150);
        stats.outcomes.insert(Outcome::Mismatch, 3);
        stats.coverage.insert(
            "tile-index/fori_loop/tail".into(),
            Cell {
                cases: 40,
                lowered: 30,
                rejected: 10,
                ..Cell::default()
            },
        );
        Summary {
            stats,
            seconds: 2.0,
        }
    }

    #[test]
    fn the_page_has_the_verdict_rates_outcomes_findings_and_coverage() {
        let summary = summary();
        let engines = [EngineId::Reference, EngineId::PallasSim];
        let unavailable = [(
            EngineId::Worker(tpu_runner::Mode::PallasTpu),
            "no TPU | here".to_string(),
        )];
        let found = [NewFinding {
            dir: "findings/0001-mismatch-pallas-sim".into(),
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("pallas-sim".parse().expect("an engine")),
            signature: "mismatch/pallas-sim/values/unroll/tail".into(),
            not_reduced: None,
        }];
        let c = Campaign {
            seed: 7,
            engines: &engines,
            unavailable: &unavailable,
            summary: &summary,
            new_findings: &found,
            not_reproduced: 1,
            interrupted: false,
            out: Path::new("findings"),
        };
        let md = markdown(&c);
        assert!(
            md.starts_with("## pallas-diff campaign: 1 new finding(s)\n"),
            "{md}"
        );
        assert!(md.contains("`--seed 7`"), "{md}");
        assert!(
            md.contains("Engine `pallas-tpu` never ran: no TPU \\| here."),
            "{md}"
        );
        assert!(md.contains("| 200 | 2.0 | 100 | 1 | 2 | 9 | 0 |"), "{md}");
        assert!(md.contains("| mismatch | 3 | 1.5% |"), "{md}");
        assert!(md.contains("| agree | 150 | 75.0% |"), "{md}");
        assert!(
            md.contains("**1 new in-process finding(s) not reproduced"),
            "{md}"
        );
        assert!(
            md.contains("| `findings/0001-mismatch-pallas-sim` | mismatch | pallas-sim | `mismatch/pallas-sim/values/unroll/tail` | yes |"),
            "{md}"
        );
        assert!(
            md.contains("| tile-index/fori_loop/tail | 40 | 30 | 10 |"),
            "{md}"
        );
        let quiet = markdown(&Campaign {
            new_findings: &[],
            interrupted: true,
            ..c
        });
        assert!(quiet.starts_with("## pallas-diff campaign: interrupted; no new finding\n"));
        assert!(!quiet.contains("### New findings"));
    }

    #[test]
    fn a_merge_page_lists_shards_and_buckets() {
        use crate::merge::{MERGE_FORMAT, MergeRecord, ShardSource};
        use crate::shard::{Contract, SeedRange};
        use crate::signature::{Bucket, Buckets, CostRecord, Signature};
        let sig = Signature {
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("pallas-sim".parse().expect("an engine")),
            cause: Some("values".into()),
            loop_type: None,
            forms: Default::default(),
            decisions: Default::default(),
            ablated: Default::default(),
        };
        let mut buckets = Buckets::default();
        buckets.buckets.insert(
            sig.key(),
            Bucket {
                key: sig.key(),
                signature: sig.clone(),
                count: 5,
                dir: "0001-mismatch-pallas-sim".into(),
                cost: CostRecord {
                    statements: 3,
                    exprs: 9,
                    input_elements: 64,
                    input_complexity: 1,
                    block_sizes: 8,
                    literals: 2,
                    ..Default::default()
                },
                aliases: Default::default(),
            },
        );
        let shard = |seed: u64| ShardSource {
            id: format!("seed-{seed}"),
            origin: format!("shards/findings-shard-{seed}"),
            seeds: vec![SeedRange {
                seed,
                cases: Some(100),
            }],
            buckets: [(sig.key(), 2 + seed)].into_iter().collect(),
        };
        let m = Merged {
            buckets,
            record: MergeRecord {
                format: MERGE_FORMAT,
                contract: Contract::new(
                    &fuzz::generators::GenConfig::default(),
                    &[fuzz::engines::EngineId::Reference],
                    &compiler::compile::CodegenOptions::default(),
                    crate::finding::Versions::this_build(),
                ),
                shards: vec![shard(0), shard(1)],
                found_in: [(sig.key(), vec!["seed-0".into(), "seed-1".into()])]
                    .into_iter()
                    .collect(),
            },
            changed: true,
        };
        let md = merge_markdown(&m, Path::new("findings-merged"));
        assert!(
            md.starts_with("## pallas-diff merge: 1 bucket(s), 5 finding(s) from 2 shard(s)\n"),
            "{md}"
        );
        assert!(
            md.contains("| seed-1 | seed 1 cases 0..100 | `shards/findings-shard-1` |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| `0001-mismatch-pallas-sim` | 5 | seed-0, seed-1 | `emitted/pallas-sim/-` |"
            ),
            "{md}"
        );
        let same = merge_markdown(
            &Merged {
                changed: false,
                ..m
            },
            Path::new("m"),
        );
        assert!(
            same.contains("(unchanged: it already held exactly these shards)"),
            "{same}"
        );
    }

    #[test]
    fn pages_are_appended_not_overwritten() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("summary.md");
        std::fs::write(&path, "earlier step\n").unwrap();
        append(&path, "one\n").unwrap();
        append(&path, "two\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "earlier step\none\ntwo\n"
        );
        let e = append(&t.path().join("no/such/dir/summary.md"), "x").unwrap_err();
        assert!(
            e.to_string().contains("summary.md: open for appending"),
            "{e}"
        );
    }
}
