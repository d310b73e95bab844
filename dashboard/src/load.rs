//! Reading the dashboard's inputs: a findings directory (a campaign's `--out` or a merge's) with
//! its records, buckets and finding directories, or a fault hunt's output directory with its
//! `hunt.json`. Which one a directory is, is decided by the files it holds.
//!
//! Finding directories are read in parallel on the caller's rayon pool (`pallas-diff dashboard
//! --jobs` installs one of that size).

use crate::DashboardError;
use finding::finding::Finding;
use finding::fsio;
use finding::merge::{MERGE_FILE, MergeRecord, load_stats};
use finding::shard::{Contract, SHARD_FILE, SeedRange, ShardRecord};
use finding::signature::{BUCKETS_FILE, Bucket, Buckets};
use fuzz::campaign::record::{CampaignRecord, STATS_FILE};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The file a hunt writes into its output directory ([`corpus::hunt`]).
pub const HUNT_FILE: &str = "hunt.json";

/// One input of the page.
#[derive(Debug)]
pub enum Source {
    /// A findings directory.
    Findings(Box<FindingsDir>),
    /// A hunt's output directory.
    Hunt(HuntDir),
    /// A `pallas-diff mutants` output directory.
    Mutants(MutantsDir),
}

/// A `pallas-diff mutants` output directory, read (its `summary.json`).
#[derive(Debug)]
pub struct MutantsDir {
    /// Where it is.
    pub path: PathBuf,
    /// Its summary.
    pub summary: mutants::report::Summary,
}

/// The file a mutants run writes its summary to ([`mutants::report`]).
pub const MUTANTS_FILE: &str = "summary.json";

/// A findings directory, read.
#[derive(Debug)]
pub struct FindingsDir {
    /// Where it is.
    pub path: PathBuf,
    /// `stats.json`, when there is one.
    pub record: Option<CampaignRecord>,
    /// The contract of its campaigns (`shard.json`'s or `merge.json`'s), when recorded.
    pub contract: Option<Contract>,
    /// The campaigns that wrote it (`shard.json`), when it is a shard.
    pub seeds: Vec<SeedRange>,
    /// `merge.json`, when it is a merge's output.
    pub merge: Option<MergeRecord>,
    /// Its findings, in `buckets.json` key order.
    pub findings: Vec<FindingEntry>,
}

/// One bucket of a findings directory with its finding directory's contents.
#[derive(Debug)]
pub struct FindingEntry {
    /// The bucket (`buckets.json`).
    pub bucket: Bucket,
    /// Its finding directory.
    pub dir: PathBuf,
    /// What the directory holds.
    pub finding: Finding,
}

/// A hunt's output directory, read.
#[derive(Debug)]
pub struct HuntDir {
    /// Where it is.
    pub path: PathBuf,
    /// `hunt.json`: one row per fault.
    pub rows: Vec<HuntRow>,
}

pub use corpus::hunt::HuntRow;

/// Reads one input directory.
pub fn load(dir: &Path) -> Result<Source, DashboardError> {
    if !dir.exists() {
        return Err(DashboardError::Missing(dir.to_path_buf()));
    }
    if !dir.is_dir() {
        return Err(DashboardError::NotADirectory(dir.to_path_buf()));
    }
    if dir.join(HUNT_FILE).is_file() {
        return load_hunt(dir).map(Source::Hunt);
    }
    if dir.join(MUTANTS_FILE).is_file() && dir.join("mutants.json").is_file() {
        return load_mutants(dir).map(Source::Mutants);
    }
    let findings_files = [BUCKETS_FILE, STATS_FILE, SHARD_FILE, MERGE_FILE];
    if !findings_files.iter().any(|f| dir.join(f).is_file()) {
        return Err(DashboardError::NotRecognized(dir.to_path_buf()));
    }
    load_findings(dir).map(|f| Source::Findings(Box::new(f)))
}

fn load_mutants(dir: &Path) -> Result<MutantsDir, DashboardError> {
    let path = dir.join(MUTANTS_FILE);
    let text = fsio::read_to_string(&path).map_err(DashboardError::Read)?;
    let summary = serde_json::from_str(&text).map_err(|e| DashboardError::Mutants {
        path: path.clone(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    Ok(MutantsDir {
        path: dir.to_path_buf(),
        summary,
    })
}

fn load_hunt(dir: &Path) -> Result<HuntDir, DashboardError> {
    let path = dir.join(HUNT_FILE);
    let text = fsio::read_to_string(&path).map_err(DashboardError::Read)?;
    let rows: Vec<HuntRow> = serde_json::from_str(&text).map_err(|e| DashboardError::Hunt {
        path: path.clone(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    Ok(HuntDir {
        path: dir.to_path_buf(),
        rows,
    })
}

fn load_findings(dir: &Path) -> Result<FindingsDir, DashboardError> {
    let record = load_stats(dir)?;
    let merge = MergeRecord::load(dir)?;
    let (contract, seeds) = match (&merge, ShardRecord::load(dir)?) {
        (Some(m), _) => (Some(m.contract.clone()), Vec::new()),
        (None, Some(shard)) => (Some(shard.contract(dir)?.clone()), shard.seeds()),
        (None, None) => (None, Vec::new()),
    };
    let buckets = Buckets::load(dir)?;
    // The finding directories in parallel, collected in `buckets.json` order: the page and the
    // error reported for several bad directories do not depend on which read finished first.
    let findings = buckets
        .buckets
        .into_values()
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|bucket| load_finding(dir, bucket))
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FindingsDir {
        path: dir.to_path_buf(),
        record,
        contract,
        seeds,
        merge,
        findings,
    })
}

/// One bucket's finding directory inside the findings directory `dir`.
fn load_finding(dir: &Path, bucket: Bucket) -> Result<FindingEntry, DashboardError> {
    // A bucket's directory is one name inside the findings directory (as `merge` checks).
    let mut parts = Path::new(&bucket.dir).components();
    let one_name = matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    );
    let finding_dir = dir.join(&bucket.dir);
    if !one_name || !finding_dir.join("meta.json").is_file() {
        return Err(DashboardError::MissingFinding {
            path: dir.to_path_buf(),
            key: bucket.key,
            dir: bucket.dir,
        });
    }
    let finding = Finding::load(&finding_dir)?;
    Ok(FindingEntry {
        bucket,
        dir: finding_dir,
        finding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hunt_row_reads_what_the_hunt_writes() {
        let row = corpus::hunt::HuntRow {
            fault: "d12-tail-clamped-before-mask".into(),
            detected: 1,
            repeats: 2,
            median_cases: Some(40),
            median_seconds: Some(0.5),
            reduced_lines: Some(3),
            signature: Some("mismatch/pallas-sim/values/-/-".into()),
            case: Some("target/h/d12-tail-clamped-before-mask-0.py".into()),
            reproduce: Some("pallas-diff check x.py --inject d12".into()),
            reproducers: Vec::new(),
        };
        let text = serde_json::to_string(&[row]).unwrap();
        let back: Vec<HuntRow> = serde_json::from_str(&text).unwrap();
        assert_eq!(back[0].fault, "d12-tail-clamped-before-mask");
        assert_eq!((back[0].detected, back[0].repeats), (1, 2));
        assert_eq!(back[0].median_cases, Some(40));
        assert_eq!(
            back[0].case.as_deref(),
            Some(Path::new("target/h/d12-tail-clamped-before-mask-0.py"))
        );
    }

    #[test]
    fn directories_that_are_neither_are_named() {
        let t = tempfile::tempdir().unwrap();
        let missing = t.path().join("missing");
        let e = load(&missing).unwrap_err().to_string();
        assert!(e.contains("missing: no such directory"), "{e}");
        let plain = t.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        let e = load(&plain).unwrap_err().to_string();
        assert!(e.contains("neither a findings directory"), "{e}");
        let hunt = t.path().join("hunt");
        std::fs::create_dir(&hunt).unwrap();
        std::fs::write(hunt.join(HUNT_FILE), "[{\"fault\": 3}]").unwrap();
        let e = load(&hunt).unwrap_err().to_string();
        assert!(
            e.contains(&hunt.join(HUNT_FILE).display().to_string()) && e.contains("hunt table"),
            "{e}"
        );
        let f = t.path().join("f");
        std::fs::create_dir(&f).unwrap();
        std::fs::write(f.join(STATS_FILE), "{\"format\":1,\"cases\":-1}").unwrap();
        let e = load(&f).unwrap_err().to_string();
        assert!(
            e.contains(&f.join(STATS_FILE).display().to_string())
                && e.contains("not a campaign record"),
            "{e}"
        );
    }
}
