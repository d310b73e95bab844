//! `pallas-diff reduce FINDING_DIR [--out DIR | --in-place] [--time DUR]`: shrink a finding's
//! case while its signature holds, running only the engine that saw it (JAX only for a JAX
//! engine's finding).
//!
//! The original is never lost: the reduced finding goes to a new directory (`--out`, default
//! `<FINDING_DIR>-reduced`, refused if it exists), or with `--in-place` replaces the directory
//! with the original's files kept in `original/` (the first original, when reduced in place
//! again). Either way it is built in a temporary directory and renamed into place.
//!
//! A finding with a JAX cross-check (`meta.json` `cross_check`) keeps one: it is re-run on the
//! reduced case with the same engines, or, when they cannot run here (or `--no-cross-check`),
//! the original's is kept and marked as the unreduced case's. The findings directory's
//! `buckets.json`, when the result stays in it, follows the finding's (possibly finer)
//! signature and points at the reduced directory.

use super::check::{start_pool, start_pools};
use super::report::load_finding;
use super::{CliError, Exit};
use anyhow::Context;
use finding::finding::{CrossCheckRecord, Finding, ReductionRecord, Versions, write_finding_dir};
use finding::fsio::{read_tree, write_dir_atomic};
use finding::minimize::{reduce_finding, shared};
use finding::signature::{BUCKETS_FILE, Buckets, CostRecord};
use finding::sink::cross_check_case;
use fuzz::engines::EngineId;
use reducer::Budget;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `reduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The finding directory.
    finding: PathBuf,
    /// Where the reduced finding goes (default: `<FINDING>-reduced` next to it).
    #[arg(long, conflicts_with = "in_place")]
    out: Option<PathBuf>,
    /// Replace the finding directory, keeping its files in `<FINDING>/original/`.
    #[arg(long)]
    in_place: bool,
    /// Do not re-run a JAX cross-check on the reduced case: keep the original's, marked as of
    /// the unreduced case (needs no Python).
    #[arg(long)]
    no_cross_check: bool,
    /// Wall-clock budget (`90`, `30s`, `2m`).
    #[arg(long, value_parser = parse_duration, default_value = "60s")]
    time: Duration,
    /// Most predicate calls.
    #[arg(long, default_value_t = 5_000)]
    attempts: usize,
    /// Candidates checked at once (JAX workers).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Seconds before a JAX engine is declared hung.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

/// Parses `90`, `90s`, `500ms`, `2m`, `1h`.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 60s, 2m)"))?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1000.0,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (ms, s, m, h)")),
    };
    Ok(Duration::from_secs_f64(secs))
}

fn input(e: impl Into<anyhow::Error>) -> CliError {
    CliError::Input(e.into())
}

/// `<dir>-reduced`, next to `dir`.
fn default_out(dir: &Path) -> Result<PathBuf, CliError> {
    let named = match dir.file_name() {
        Some(_) => dir.to_path_buf(),
        // `.` or `..`: name it by what it is.
        None => std::fs::canonicalize(dir)
            .with_context(|| format!("cannot resolve '{}'", dir.display()))?,
    };
    let name = named
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            input(anyhow::anyhow!(
                "{}: name an output with --out",
                dir.display()
            ))
        })?;
    Ok(named.with_file_name(format!("{name}-reduced")))
}

/// The findings directory `path` lies in, when it is the one holding `finding`'s directory.
fn same_parent(finding: &Path, path: &Path) -> Option<PathBuf> {
    let canon = |p: &Path| {
        let parent = match p.parent() {
            Some(q) if !q.as_os_str().is_empty() => q.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::canonicalize(parent).ok()
    };
    let a = canon(finding)?;
    (canon(path)? == a).then_some(a)
}

/// The cross-check of the reduced finding: re-run with the original's engines, or the
/// original's kept (marked) with the reason it was not.
fn cross_check(
    args: &Args,
    original: &CrossCheckRecord,
    reduced: &Finding,
    prepared: &fuzz::check::PreparedCase,
    pool: Option<Arc<tpu_runner::Pool>>,
) -> CrossCheckRecord {
    if args.no_cross_check {
        return original.kept_for_reduced("--no-cross-check");
    }
    let outcome = reduced.meta.report.outcome;
    let ids = &original.engines;
    let pool = match pool {
        Some(p) => Some(p),
        None => match start_pool(ids, args.jobs.clamp(1, 2), args.timeout) {
            Ok(p) => p,
            Err(e) => return original.kept_for_reduced(e.to_string()),
        },
    };
    match fuzz::engines::build(ids, pool) {
        Ok(engines) => cross_check_case(prepared, outcome, &shared(engines)),
        Err(e) => original.kept_for_reduced(e.to_string()),
    }
}

fn engine_list(engines: &[fuzz::engines::EngineId]) -> String {
    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    names.join(", ")
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let dir = &args.finding;
    let finding = load_finding(dir)?;
    let dest = if args.in_place {
        dir.clone()
    } else {
        args.out.clone().map_or_else(|| default_out(dir), Ok)?
    };
    if !args.in_place && dest.exists() {
        return Err(input(anyhow::anyhow!(
            "{} exists: remove it, name another directory with --out, or reduce with --in-place",
            dest.display()
        )));
    }
    let sig = finding.meta.signature.clone();
    let ids: Vec<EngineId> = sig.engine.into_iter().collect();
    let pools = start_pools(&ids, args.jobs.clamp(1, 2), args.timeout)?;
    let pool = pools.jax.clone();
    let engines = fuzz::engines::build_with(&ids, &pools).map_err(input)?;
    let codegen = finding
        .meta
        .codegen
        .options()
        .map_err(|e| input(anyhow::anyhow!("{}: {e}", dir.display())))?;
    let budget = Budget {
        attempts: args.attempts,
        time: args.time,
    };
    let r = reduce_finding(
        &finding.case,
        &sig,
        &shared(engines),
        budget,
        args.jobs,
        &codegen,
    )
    .map_err(|e| input(anyhow::anyhow!("{}: {e}", dir.display())))?;
    let helion = pools.helion.as_ref().map(|p| p.availability());
    let versions = match (&pool, helion) {
        (None, None) => finding.meta.versions.clone(),
        (jax, helion) => Versions::from(jax.as_ref().map(|p| p.availability())).with_helion(helion),
    };
    let mut reduced = Finding::new(
        r.case(),
        &r.report,
        &codegen,
        versions,
        finding.meta.provenance.clone(),
    );
    reduced.meta.set_signature(r.signature.clone());
    let (original_key, original_cost, original_body_lines) = match &finding.meta.reduction {
        // Reducing again: keep the first reduction's starting point.
        Some(prev) => (
            prev.original_key.clone(),
            prev.original_cost.clone(),
            prev.original_body_lines,
        ),
        None => (
            sig.key(),
            CostRecord::of(&finding.case),
            r.original_body_lines,
        ),
    };
    reduced.meta.reduction = Some(ReductionRecord {
        original_key,
        original_cost,
        original_body_lines,
        body_lines: r.body_lines,
        attempts: r.attempts,
        steps: r.steps,
        engine_runs: r.engine_runs,
        seconds: r.seconds,
        exhausted: r.exhausted,
    });
    let mut cross_check_line = None;
    if let Some(original) = &finding.meta.cross_check {
        let record = cross_check(&args, original, &reduced, &r.prepared, pool.clone());
        cross_check_line = Some(match &record.of_unreduced_case {
            None => format!(
                "cross-check ({}) of the reduced case: {}: {}",
                engine_list(&record.engines),
                record.outcome,
                record.result.name()
            ),
            Some(why) => format!(
                "cross-check ({}) kept from the unreduced case ({}: {}): not re-run: {why}",
                engine_list(&record.engines),
                record.outcome,
                record.result.name()
            ),
        });
        reduced.log.push_str(&record.log_text());
        reduced.meta.cross_check = Some(record);
    }
    if args.in_place {
        write_in_place(dir, &reduced)?;
    } else {
        write_finding_dir(&dest, &reduced).map_err(|e| CliError::Internal(e.into()))?;
    }
    println!(
        "reduced {}: {} -> {} kernel-body lines in {:.1}s ({} attempts, {} steps, {} engine runs, {} from the memo{})",
        dir.display(),
        r.original_body_lines,
        r.body_lines,
        r.seconds,
        r.attempts,
        r.steps,
        r.engine_runs,
        r.memo_hits,
        if r.exhausted {
            "; budget exhausted"
        } else {
            "; fixpoint"
        }
    );
    if args.in_place {
        println!(
            "written in place; the original's files are in {}",
            dir.join("original").display()
        );
    } else {
        println!(
            "written to {} ({} is unchanged)",
            dest.display(),
            dir.display()
        );
    }
    println!("signature: {}", r.signature.key());
    if !r.signature.ablated.is_empty() {
        let names: Vec<String> = r.signature.ablated.iter().map(|d| d.to_string()).collect();
        println!(
            "not needed (the finding shows with these lowered by their plain path, --plain {}): left out of the key",
            names.join(",")
        );
    }
    if let Some(line) = cross_check_line {
        println!("{line}");
    }
    if let Some(parent) = same_parent(dir, &dest).filter(|p| p.join(BUCKETS_FILE).exists()) {
        let mut buckets = Buckets::load(&parent).map_err(input)?;
        if let Some(done) = buckets.rekey(&sig.key(), &r.signature, CostRecord::of(r.case())) {
            let dest_name = dest
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // The bucket's directory holds its smallest case: the reduced one, when it is.
            if done.smaller
                && let Some(b) = buckets.buckets.get_mut(&r.signature.key())
            {
                b.dir = dest_name;
            }
            buckets
                .save(&parent)
                .context("cannot update buckets.json")?;
            if let Some(away) = done.merged_away {
                println!(
                    "the reduced finding is a known bucket ({}): {} is now a duplicate of it",
                    done.dir,
                    parent.join(away).display()
                );
            }
        }
    }
    Ok(Exit::Ok)
}

/// Replaces `dir` with `reduced`, atomically, keeping the files it held in `dir/original/`
/// (or, when `dir` was reduced in place before, the `original/` it already has: the finding as
/// it was first filed).
fn write_in_place(dir: &Path, reduced: &Finding) -> Result<(), CliError> {
    let old = read_tree(dir).map_err(|e| CliError::Internal(e.into()))?;
    let had_original = old.iter().any(|(p, _)| p.starts_with("original/"));
    let mut files: Vec<(String, Vec<u8>)> = reduced
        .files()
        .into_iter()
        .map(|(n, s)| (n.to_string(), s.into_bytes()))
        .collect();
    for (path, bytes) in old {
        if !had_original {
            files.push((format!("original/{path}"), bytes));
        } else if path.starts_with("original/") {
            files.push((path, bytes));
        }
    }
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    write_dir_atomic(dir, &refs).map_err(|e| CliError::Internal(e.into()))
}
