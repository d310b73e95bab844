//! A campaign's summary as Markdown for a CI job's summary page: GitHub Actions renders what a
//! step appends to the file `$GITHUB_STEP_SUMMARY` names ([`append_if_set`]; nothing happens
//! where the variable is unset, e.g. outside Actions).
//!
//! The page says, in this order: the verdict (new findings or none, interrupted), the seed that
//! repeats the campaign, the engines (and those that never ran), the rates, the outcome shares,
//! every new finding with its directory, signature and reduction, and the coverage table.

use crate::fsio::IoError;
use crate::sink::NewFinding;
use fuzz::campaign::Summary;
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
    pub engines: &'a [String],
    /// Engines asked for that could not run here, with the reason.
    pub unavailable: &'a [(String, String)],
    /// The counts.
    pub summary: &'a Summary,
    /// The findings written into new directories.
    pub new_findings: &'a [NewFinding],
    /// New in-process findings the JAX engines did not reproduce.
    pub not_reproduced: usize,
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
    let _ = writeln!(s, "Engines: {}.", cell(&c.engines.join(", ")));
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
                cell(&f.outcome),
                cell(f.engine.as_deref().unwrap_or("-")),
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
    match std::env::var_os(STEP_SUMMARY_VAR) {
        Some(p) if !p.is_empty() => {
            let path = PathBuf::from(p);
            append(&path, &markdown(c))?;
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
        stats.outcomes.insert("agree".into(), 150);
        stats.outcomes.insert("mismatch".into(), 3);
        stats.coverage.insert(
            "tile-index/fori_loop/tail".into(),
            Cell {
                cases: 40,
                lowered: 30,
                rejected: 10,
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
        let engines = ["oracle".to_string(), "pallas-sim".to_string()];
        let unavailable = [("pallas-tpu".to_string(), "no TPU | here".to_string())];
        let found = [NewFinding {
            dir: "findings/0001-mismatch-pallas-sim".into(),
            outcome: "mismatch".into(),
            engine: Some("pallas-sim".into()),
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
