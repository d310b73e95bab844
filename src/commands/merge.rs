//! `pallas-diff merge DIR... --out DIR`: the findings directories of a sharded campaign merged
//! into one by signature ([`finding::merge`]: the contracts checked, counts summed, the smallest
//! reproducer kept, every source shard recorded; atomic and idempotent), and their campaign
//! records (`stats.json`) with them; a shard without one is warned about on stderr. Where
//! `$GITHUB_STEP_SUMMARY` is set, the merge's page is appended to it. The inputs are read on
//! `--jobs` threads. The output directories of a sharded `mutants` run merge here too
//! ([`super::mutants::merge_dirs`], scored with the pinned review of equivalent mutants).

use super::{CliError, Exit};
use anyhow::Context;
use finding::merge::{MergeError, merge_campaign};
use std::path::PathBuf;

/// Arguments of `merge`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Findings directories: shards (`pallas-diff fuzz --out`) or earlier merges; or the
    /// output directories of a sharded `pallas-diff mutants` run (all of one kind).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// The merged findings directory (new, or an earlier merge, which then takes part).
    #[arg(long)]
    out: PathBuf,
    /// Print the merged buckets and record as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Threads reading the inputs and their finding directories (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    // Before telling the two kinds apart, so a typo is named as one (as `merge_campaign` does).
    if let Some(missing) = args.dirs.iter().find(|d| !d.exists()) {
        return Err(CliError::Input(anyhow::anyhow!(
            "{}: no such directory",
            missing.display()
        )));
    }
    let mutants_dirs = args
        .dirs
        .iter()
        .filter(|d| super::mutants::is_output_dir(d))
        .count();
    if mutants_dirs == args.dirs.len() {
        return super::mutants::merge_dirs(&args.dirs, &args.out, None, &mutants::Review::pinned());
    }
    if mutants_dirs > 0 {
        return Err(CliError::Input(anyhow::anyhow!(
            "{} of the {} directories are `mutants` output and the rest are not: merge campaigns' findings and mutants' shards apart",
            mutants_dirs,
            args.dirs.len()
        )));
    }
    let pool = super::thread_pool(args.jobs.unwrap_or_else(super::cores), "merge")?;
    let merged = pool.install(|| merge_campaign(&args.dirs, &args.out));
    let campaign = merged.map_err(|e| match e {
        // The file system failing is not the user's input being wrong.
        MergeError::Io(_) => CliError::Internal(anyhow::Error::new(e).context("merge failed")),
        MergeError::NoInputs
        | MergeError::Missing(_)
        | MergeError::NotADirectory(_)
        | MergeError::NoContract(_)
        | MergeError::Record(_)
        | MergeError::Buckets(_)
        | MergeError::MissingFinding { .. }
        | MergeError::Inconsistent { .. }
        | MergeError::Incompatible { .. }
        | MergeError::Overlap { .. }
        | MergeError::OutNotMerged(_) => CliError::Input(e.into()),
    })?;
    for w in &campaign.warnings {
        eprintln!("pallas-diff merge: warning: {w}");
    }
    let merged = &campaign.merged;
    // The nightly merge job's summary page (GitHub Actions); losing it is not a failed merge.
    let page = finding::step_summary::merge_markdown(merged, &args.out);
    if let Err(e) = finding::step_summary::append_page_if_set(&page) {
        eprintln!("pallas-diff: cannot write the job summary: {e}");
    }
    if args.json {
        let json = serde_json::json!({
            "out": args.out,
            "changed": merged.changed,
            "findings": merged.buckets.total(),
            "buckets": merged.buckets.buckets,
            "shards": merged.record.shards,
            "found_in": merged.record.found_in,
            "cases": campaign.stats.stats.cases,
            "stats_missing": campaign.stats.stats_missing,
            "warnings": campaign.warnings,
        });
        println!(
            "{}",
            serde_json::to_string(&json).context("cannot print the merge as JSON")?
        );
        return Ok(Exit::Ok);
    }
    println!(
        "{} {} shard(s) into {}: {} bucket(s), {} finding(s){}",
        if merged.changed {
            "merged"
        } else {
            "unchanged:"
        },
        merged.record.shards.len(),
        args.out.display(),
        merged.buckets.buckets.len(),
        merged.buckets.total(),
        if merged.changed {
            ""
        } else {
            " (it already held exactly these shards)"
        }
    );
    println!(
        "  {}: {} case(s) from {} shard record(s){}",
        fuzz::campaign::record::STATS_FILE,
        campaign.stats.stats.cases,
        campaign.stats.shards.len(),
        if campaign.stats.stats_missing.is_empty() {
            String::new()
        } else {
            format!(
                "; without a record: {}",
                campaign.stats.stats_missing.join(", ")
            )
        }
    );
    for s in &merged.record.shards {
        let seeds: Vec<String> = s.seeds.iter().map(ToString::to_string).collect();
        println!("  shard {}  {}  from {}", s.id, seeds.join(", "), s.origin);
    }
    for b in merged.buckets.buckets.values() {
        let shards = merged
            .record
            .found_in
            .get(&b.key)
            .map(|s| s.join(","))
            .unwrap_or_default();
        println!("  {}  x{}  [{}]  {}", b.dir, b.count, shards, b.key);
    }
    Ok(Exit::Ok)
}
