//! `pallas-diff check CASE.py [--engines a,b] [--json]`: the whole pipeline on one case.

use super::{CliError, Exit, load_case};
use compiler::compile::CodegenOptions;
use compiler::verdict::Verdict;
use fuzz::check::{CaseReport, check_case};
use fuzz::engines;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case script (or case JSON).
    case: PathBuf,
    /// Engines to compare with the reference (`oracle` is always run).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "oracle,pallas-tpu-interpret,pallas-tpu-lower"
    )]
    engines: Vec<String>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Pad resident inputs with poison and mask with `jnp.where` (see compiler docs).
    #[arg(long)]
    poison_padding: bool,
    /// Inject named faults (historical defects, `all` for every one; see `pallas-diff hunt`).
    #[arg(long, value_parser = compiler::faults::FaultSet::parse, default_value = "")]
    inject: compiler::faults::FaultSet,
    /// Seconds before a JAX engine is declared hung.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

/// Starts a JAX worker pool of `workers` when any engine needs one (provisioning the venv on
/// first use).
pub fn start_pool(
    names: &[String],
    workers: usize,
    timeout: u64,
) -> Result<Option<Arc<tpu_runner::Pool>>, CliError> {
    if !engines::needs_pool(names) {
        return Ok(None);
    }
    let python = tpu_runner::provision()
        .map_err(|e| CliError::Internal(anyhow::anyhow!("cannot provision JAX: {e}")))?;
    let config = tpu_runner::PoolConfig::new(python)
        .with_workers(workers)
        .with_timeout(std::time::Duration::from_secs(timeout));
    let pool = tpu_runner::Pool::new(config)
        .map_err(|e| CliError::Internal(anyhow::anyhow!("cannot start JAX workers: {e}")))?;
    Ok(Some(Arc::new(pool)))
}

/// The JSON form of a report (the `check --json` contract).
pub fn report_json(r: &CaseReport) -> serde_json::Value {
    let verdict = match &r.verdict {
        Some(Verdict::Lowered) => serde_json::json!({"kind": "lowered"}),
        Some(Verdict::Rejected(x)) => serde_json::json!({
            "kind": "rejected", "class": x.class.name(), "rule": x.rule.id(),
            "message": x.message, "line": x.span.line, "col": x.span.col,
        }),
        None => serde_json::Value::Null,
    };
    let mut engines = serde_json::Map::new();
    for e in std::iter::once(&r.reference).chain(&r.engines) {
        engines.insert(
            e.engine.clone(),
            serde_json::json!({
                "status": e.status.name(), "seconds": e.seconds, "error": e.status.detail(),
            }),
        );
    }
    serde_json::json!({
        "outcome": r.outcome.name(),
        "verdict": verdict,
        "engines": engines,
        "mismatch": r.mismatch.as_ref().map(|m| serde_json::json!({
            "engine": m.engine, "output": m.output, "kind": m.kind,
            "max_abs_err": if m.max_abs_err.is_finite() { serde_json::json!(m.max_abs_err) } else { serde_json::json!(null) },
            "max_rel_err": if m.max_rel_err.is_finite() { serde_json::json!(m.max_rel_err) } else { serde_json::json!(null) },
            "first_index": m.first.first().map(|f| f.0.clone()),
            "first": m.first.iter().map(|(i, a, b)| serde_json::json!({"index": i, "engine": a, "reference": b})).collect::<Vec<_>>(),
        })),
        "gap": r.gap,
        "known_issue": r.known_issue,
        "crash": r.crash,
        "compile_seconds": r.compile_seconds,
    })
}

/// Prints a report as a short table.
pub fn print_report(r: &CaseReport) {
    println!("outcome: {}", r.outcome);
    match &r.verdict {
        Some(Verdict::Lowered) => println!("verdict: lowered"),
        Some(Verdict::Rejected(x)) => println!("verdict: rejected: {x}"),
        None => println!("verdict: none (the compiler crashed)"),
    }
    if let Some(g) = &r.gap {
        println!("unsupported: {g}");
    }
    if let Some(k) = r.known_issue {
        println!("known issue: {k} (see fuzz/src/known_issues.rs)");
    }
    println!("{:<22} {:<12} {:>9}  detail", "engine", "status", "seconds");
    for e in std::iter::once(&r.reference).chain(&r.engines) {
        println!(
            "{:<22} {:<12} {:>9.3}  {}",
            e.engine,
            e.status.name(),
            e.seconds,
            e.status.detail().unwrap_or_default()
        );
    }
    if let Some(m) = &r.mismatch {
        println!("mismatch: {m}");
    }
    if let Some(c) = &r.crash {
        println!("compiler crash:\n{c}");
    }
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let case = load_case(&args.case)?;
    let pool = start_pool(&args.engines, 1, args.timeout)?;
    let engines = engines::build(&args.engines, pool).map_err(|e| CliError::Input(e.into()))?;
    let options = CodegenOptions {
        poison_padding: args.poison_padding,
        faults: args.inject,
    };
    let report = check_case(&case, &engines, &options);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report_json(&report)).map_err(anyhow::Error::from)?
        );
    } else {
        print_report(&report);
    }
    Ok(if report.outcome.is_finding() {
        Exit::Finding
    } else {
        Exit::Ok
    })
}
