//! The campaign dashboard, `pallas-diff dashboard DIR... -o report.html`: findings directories
//! (a campaign's `--out`, a merge's) and fault hunts' output directories as one self-contained
//! HTML page: no network, the chart library, its styles, the script and every datum inline.
//!
//! This crate owns reading those directories for the page ([`load`]), the page's model
//! ([`page`]: what each table and chart shows, computed here), and rendering it ([`render`]):
//! the minijinja template `templates/dashboard.html` lays the model out, auto-escaped as HTML,
//! and the vendored uPlot (`vendor/uplot`, MIT) draws the charts in the browser from the JSON
//! the page carries. The page reports into its own DOM (`#dashboard-status`) every script error
//! and what each chart drew, which the headless-browser test (`tests/dashboard.rs`) reads.

pub mod load;
pub mod page;
pub mod render;

use finding::finding::FindingError;
use finding::fsio::IoError;
use finding::shard::ShardError;
use finding::signature::BucketsError;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Why no page was written.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// No input.
    #[error("nothing to show: give at least one findings directory or hunt output directory")]
    NoInputs,
    /// An input does not exist.
    #[error("{}: no such directory", .0.display())]
    Missing(PathBuf),
    /// An input is a file.
    #[error("{}: not a directory (give findings directories or hunt output directories)", .0.display())]
    NotADirectory(PathBuf),
    /// An input holds none of the files the page reads.
    #[error(
        "{}: neither a findings directory (buckets.json, stats.json, shard.json or merge.json, written by `pallas-diff fuzz` or `pallas-diff merge`) nor a hunt output directory (hunt.json, written by `pallas-diff hunt`), nor a mutants output directory (summary.json and mutants.json, written by `pallas-diff mutants`)",
        .0.display()
    )]
    NotRecognized(PathBuf),
    /// `stats.json`, `shard.json` or `merge.json` cannot be read.
    #[error(transparent)]
    Record(#[from] ShardError),
    /// `buckets.json` cannot be read.
    #[error(transparent)]
    Buckets(#[from] BucketsError),
    /// A finding directory cannot be read.
    #[error(transparent)]
    Finding(#[from] FindingError),
    /// `buckets.json` names a finding directory that is not there.
    #[error("{}: bucket `{key}` names its finding directory `{dir}`, which is not a directory inside it with a meta.json", path.display())]
    MissingFinding {
        /// The findings directory.
        path: PathBuf,
        /// The bucket.
        key: String,
        /// The directory it names.
        dir: String,
    },
    /// `hunt.json` is not a hunt table.
    #[error("{}:{line}:{column}: not a hunt table: {message}", path.display())]
    Hunt {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A mutants run's `summary.json` is not one.
    #[error("{}:{line}:{column}: not a mutants summary: {message}", path.display())]
    Mutants {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// An input file cannot be read.
    #[error(transparent)]
    Read(IoError),
    /// The template failed (a harness bug).
    #[error("the dashboard template failed: {0:#}")]
    Template(#[from] minijinja::Error),
    /// The page cannot be written.
    #[error(transparent)]
    Write(IoError),
}

/// What a written page shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// Findings directories.
    pub campaigns: usize,
    /// Findings, over every findings directory.
    pub findings: usize,
    /// Hunts.
    pub hunts: usize,
    /// Charts.
    pub charts: usize,
    /// The page's size in bytes.
    pub bytes: usize,
}

/// Reads `dirs` (in parallel, on the caller's rayon pool) and writes their page to `out`
/// atomically (a temporary file renamed into place).
pub fn write(dirs: &[PathBuf], out: &Path) -> Result<Written, DashboardError> {
    if dirs.is_empty() {
        return Err(DashboardError::NoInputs);
    }
    // In parallel on the caller's rayon pool, in the order given; the first bad input in that
    // order is the error.
    let sources = dirs
        .par_iter()
        .map(|d| load::load(d))
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let page_dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let page = page::page(&sources, page_dir);
    let html = render::render(&page)?;
    finding::fsio::write_atomic(out, html.as_bytes()).map_err(DashboardError::Write)?;
    Ok(Written {
        campaigns: page.campaigns.len(),
        findings: page.campaigns.iter().map(|c| c.findings.len()).sum(),
        hunts: page.hunts.len(),
        charts: page.charts.len(),
        bytes: html.len(),
    })
}
