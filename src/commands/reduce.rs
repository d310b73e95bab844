//! `pallas-diff reduce FINDING_DIR [--time DUR]`: shrink a finding's case while its signature
//! holds, running only the engine that saw it (JAX only for a JAX engine's finding), and write
//! the reduced finding back into the directory (atomically). The findings directory's
//! `buckets.json`, when there is one, follows the finding's (possibly finer) signature.

use super::check::start_pool;
use super::{CliError, Exit};
use anyhow::Context;
use corpus::finding::{Finding, ReductionRecord, Versions, write_finding_dir};
use corpus::minimize::{reduce_finding, shared};
use corpus::reduce::Budget;
use corpus::signature::{BUCKETS_FILE, Buckets, CostRecord};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `reduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The finding directory.
    finding: PathBuf,
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

pub fn run(args: Args) -> Result<Exit, CliError> {
    let dir = &args.finding;
    let finding = Finding::load(dir).map_err(|e| CliError::Input(e.into()))?;
    let sig = finding.meta.signature.clone();
    let names: Vec<String> = sig.engine.iter().cloned().collect();
    let pool = start_pool(&names, args.jobs.clamp(1, 2), args.timeout)?;
    let engines =
        fuzz::engines::build(&names, pool.clone()).map_err(|e| CliError::Input(e.into()))?;
    let codegen = finding
        .meta
        .codegen
        .options()
        .map_err(|e| CliError::Input(anyhow::anyhow!("{}: {e}", dir.display())))?;
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
    .map_err(|e| CliError::Input(anyhow::anyhow!("{}: {e}", dir.display())))?;
    let versions = pool
        .as_ref()
        .map(|p| Versions::from(p.availability()))
        .unwrap_or_else(|| finding.meta.versions.clone());
    let mut reduced = Finding::new(
        &r.case,
        &r.report,
        &codegen,
        versions,
        finding.meta.provenance.clone(),
    );
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
    write_finding_dir(dir, &reduced).map_err(|e| CliError::Internal(e.into()))?;
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
    println!("signature: {}", r.signature.key());
    if let Some(parent) = dir.parent().filter(|p| p.join(BUCKETS_FILE).exists()) {
        let mut buckets = Buckets::load(parent).map_err(|e| CliError::Input(e.into()))?;
        if let Some(done) = buckets.rekey(&sig.key(), &r.signature, CostRecord::of(&r.case)) {
            buckets.save(parent).context("cannot update buckets.json")?;
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
