//! `pallas-diff check CASE.py [--engines a,b] [--json]`: the whole pipeline on one case.

use super::{CliError, Exit, load_case};
use compiler::compile::CodegenOptions;
use compiler::verdict::Verdict;
use finding::finding::ReportRecord;
use fuzz::check::{CaseReport, check_case};
use fuzz::engines::{self, EngineId, Pools};
use std::path::PathBuf;
use std::sync::Arc;
use tpu_runner::{Mode, Runtime};

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
    engines: Vec<EngineId>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Pad resident inputs with poison and mask with `jnp.where` (see compiler docs).
    #[arg(long)]
    poison_padding: bool,
    /// Inject named faults (historical defects, `all` for every one; see `pallas-diff hunt`).
    #[arg(long, value_parser = compiler::faults::FaultSet::parse, default_value = "")]
    inject: compiler::faults::FaultSet,
    /// Lower these planner decisions by their plain path: a materialized run read as the whole
    /// Ref and then sliced as a value, a materialized Ref view as a value reshape (for example
    /// `run=tile.mask,ref-view=reshape`). A finding that goes away shows which decisions it needs.
    #[arg(long, value_parser = compiler::decisions::PlainSet::parse, default_value = "")]
    plain: compiler::decisions::PlainSet,
    /// Seconds before a JAX engine is declared hung.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Run without the engines that cannot run here (no JAX, no TPU, no Helion) instead of
    /// failing; the output says which never ran.
    #[arg(long)]
    allow_unavailable: bool,
    /// When the outcome is a finding, file it as a finding directory here (written atomically;
    /// refused if it exists), so `reduce`, `report`, `bisect` and `corpus add` work on a
    /// reproducer a user wrote.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// How [`select_engines`] starts the worker pools.
#[derive(Clone, Copy, Debug)]
pub struct PoolSizes {
    /// JAX workers.
    pub jax: usize,
    /// Helion workers (each ~1 GB; Helion's interpret path is ~0.2 s a case on one core).
    pub helion: usize,
    /// Seconds before a worker is declared hung.
    pub timeout: u64,
}

/// The engines of one run, the pools they share, and the asked-for engines that cannot run
/// here (with `--allow-unavailable`; without it, those are an error).
pub struct Selected {
    /// The engines that will run, in the order asked.
    pub ids: Vec<EngineId>,
    /// Their pools.
    pub pools: Pools,
    /// Each engine that cannot run here, and why.
    pub unavailable: Vec<(EngineId, String)>,
}

/// Starts the pools the `requested` engines need (provisioning JAX, or Helion, on first use),
/// and finds the engines that cannot run here: a run that was asked to check something it
/// cannot fails (exit 2) unless `allow_unavailable`, and a set with nothing to compare with the
/// reference is refused.
pub fn select_engines(
    requested: &[EngineId],
    sizes: PoolSizes,
    allow_unavailable: bool,
) -> Result<Selected, CliError> {
    let ids = requested.to_vec();
    let comparable = |ids: &[EngineId]| ids.iter().any(|&e| e != EngineId::Reference);
    if !comparable(&ids) {
        return Err(CliError::Input(anyhow::anyhow!(
            "nothing to compare: the reference (`oracle`) needs at least one other engine, e.g. --engines oracle,pallas-sim"
        )));
    }
    let mut pools = Pools::default();
    let mut unavailable: Vec<(EngineId, String)> = Vec::new();
    let down = |runtime: Runtime, why: String, unavailable: &mut Vec<(EngineId, String)>| {
        for &id in ids.iter().filter(|e| e.runtime() == Some(runtime)) {
            unavailable.push((id, why.clone()));
        }
    };
    let needed = engines::runtimes_needed(requested);
    if needed.contains(&Runtime::Jax) {
        match start_runtime(Runtime::Jax, sizes.jax, sizes.timeout) {
            Ok(pool) => {
                if ids.contains(&EngineId::Worker(Mode::PallasTpu)) && !pool.availability().tpu {
                    unavailable.push((
                        EngineId::Worker(Mode::PallasTpu),
                        format!(
                            "no TPU device here (jax.devices(): {:?})",
                            pool.availability().devices
                        ),
                    ));
                }
                pools.jax = Some(pool);
            }
            Err(why) => down(Runtime::Jax, why, &mut unavailable),
        }
    }
    if needed.contains(&Runtime::Helion) {
        match start_runtime(Runtime::Helion, sizes.helion, sizes.timeout) {
            Ok(pool) => {
                // A mode the build cannot run (its worker says why at start).
                for &id in &ids {
                    if let EngineId::Worker(mode) = id
                        && let Some(why) = pool.availability().mode_unavailable(mode)
                    {
                        unavailable
                            .push((id, format!("{why} (helion build {})", build_name(&pool))));
                    }
                }
                pools.helion = Some(pool);
            }
            Err(why) => down(Runtime::Helion, why, &mut unavailable),
        }
    }
    if !unavailable.is_empty() && !allow_unavailable {
        let lines: Vec<String> = unavailable
            .iter()
            .map(|(n, why)| format!("  {n}: {why}"))
            .collect();
        return Err(CliError::Input(anyhow::anyhow!(
            "{} engine(s) cannot run here:\n{}\n--allow-unavailable runs without them; --engines oracle,pallas-sim needs no Python",
            unavailable.len(),
            lines.join("\n")
        )));
    }
    let left: Vec<EngineId> = ids
        .iter()
        .copied()
        .filter(|e| !unavailable.iter().any(|(u, _)| u == e))
        .collect();
    for (n, why) in &unavailable {
        eprintln!("pallas-diff: warning: engine {n} never runs in this run: {why}");
    }
    if !comparable(&left) {
        return Err(CliError::Input(anyhow::anyhow!(
            "nothing to compare: every engine besides the reference is unavailable here"
        )));
    }
    Ok(Selected {
        ids: left,
        pools,
        unavailable,
    })
}

/// How the workers this process starts compile with XLA:CPU (`--xla-compile`, set once by
/// [`super::run`]).
static XLA_COMPILE: std::sync::OnceLock<tpu_runner::XlaCompile> = std::sync::OnceLock::new();

/// Records `--xla-compile` for every pool this process starts (the first call wins: one
/// command line per process).
pub fn set_xla_compile(compile: tpu_runner::XlaCompile) {
    XLA_COMPILE.get_or_init(|| compile);
}

/// The XLA compile option of this process's workers: `--xla-compile`, by default
/// [`tpu_runner::XlaCompile::Fast`] (`bench --jax`: about 2x the distinct kernels per CPU
/// second of XLA's defaults with the campaign's batches; every engine is compared with the
/// reference under `fuzz::compare`'s tolerance, which any float summation order meets).
pub fn xla_compile() -> tpu_runner::XlaCompile {
    XLA_COMPILE
        .get()
        .copied()
        .unwrap_or(tpu_runner::XlaCompile::Fast)
}

/// Provisions `runtime` (on first use) and starts `workers` of it; `Err` is the reason, one
/// line.
fn start_runtime(
    runtime: Runtime,
    workers: usize,
    timeout: u64,
) -> Result<Arc<tpu_runner::Pool>, String> {
    let python = match runtime {
        Runtime::Jax => tpu_runner::provision(),
        Runtime::Helion => tpu_runner::provision_helion(),
    }
    .map_err(|e| e.to_string())?;
    let build = match runtime {
        Runtime::Jax => None,
        Runtime::Helion => Some(super::builds::selected().map_err(|e| e.to_string())?),
    };
    let config = tpu_runner::PoolConfig::for_runtime(runtime, python)
        .with_helion_build(build)
        .with_workers(workers)
        .with_timeout(std::time::Duration::from_secs(timeout))
        .with_xla_compile(xla_compile());
    tpu_runner::Pool::new(config)
        .map(Arc::new)
        .map_err(|e| format!("cannot start the {runtime} workers: {e}"))
}

/// Starts a JAX worker pool of `workers` when any of engines `ids` needs one (provisioning the
/// venv on first use).
pub fn start_pool(
    ids: &[EngineId],
    workers: usize,
    timeout: u64,
) -> Result<Option<Arc<tpu_runner::Pool>>, CliError> {
    if !engines::needs_pool(ids) {
        return Ok(None);
    }
    start_runtime(Runtime::Jax, workers, timeout)
        .map(Some)
        .map_err(|e| CliError::Internal(anyhow::anyhow!(e)))
}

/// Starts the pools (JAX, Helion) that engines `ids` need, `workers` each (provisioning on
/// first use); a failure is an error (exit 1) naming the environment.
pub fn start_pools(ids: &[EngineId], workers: usize, timeout: u64) -> Result<Pools, CliError> {
    let mut pools = Pools {
        jax: start_pool(ids, workers, timeout)?,
        helion: None,
    };
    if engines::runtimes_needed(ids).contains(&Runtime::Helion) {
        pools.helion = Some(
            start_runtime(Runtime::Helion, workers, timeout)
                .map_err(|e| CliError::Internal(anyhow::anyhow!(e)))?,
        );
    }
    Ok(pools)
}

/// The build a Helion pool runs, for messages.
pub fn build_name(pool: &tpu_runner::Pool) -> String {
    pool.availability()
        .helion_build
        .as_ref()
        .map_or_else(|| "?".to_owned(), |b| b.id.clone())
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
    for e in &r.engines {
        if let Some(s) = &e.input_sets {
            println!(
                "{}: {} extra input sets, {} compared with the reference (finite twins included), dropped by it: {} invalid, {} overflowed, {} diverging; {} NaN only from Helion's mask by multiplication",
                e.engine,
                s.derived,
                s.compared,
                s.dropped_invalid,
                s.dropped_overflow,
                s.dropped_diverges,
                s.masked_nonfinite
            );
        }
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
    let selected = select_engines(
        &args.engines,
        PoolSizes {
            jax: 1,
            helion: 1,
            timeout: args.timeout,
        },
        args.allow_unavailable,
    )?;
    let engines = engines::build_with(&selected.ids, &selected.pools)
        .map_err(|e| CliError::Input(e.into()))?;
    let options = CodegenOptions {
        poison_padding: args.poison_padding,
        faults: args.inject,
        plain: args.plain,
    };
    let report = check_case(&case, &engines, &options);
    if args.json {
        // The schema of `meta.json`'s check fields ([`ReportRecord`]), plus the engines that
        // never ran here.
        let mut json = serde_json::to_value(ReportRecord::from(&report))
            .map_err(|e| CliError::Internal(e.into()))?;
        json["engines_unavailable"] = serde_json::json!(
            selected
                .unavailable
                .iter()
                .map(|(n, why)| serde_json::json!({"engine": n, "reason": why}))
                .collect::<Vec<_>>()
        );
        println!(
            "{}",
            serde_json::to_string_pretty(&json).map_err(anyhow::Error::from)?
        );
    } else {
        print_report(&report);
        for (n, why) in &selected.unavailable {
            println!("{n:<22} never ran: {why}");
        }
    }
    if let Some(dir) = &args.out
        && report.outcome.is_finding()
    {
        file_finding(dir, &args.case, &case, &report, &options, &selected)?;
        println!("finding filed in {}", dir.display());
    }
    Ok(if report.outcome.is_finding() {
        Exit::Finding
    } else {
        Exit::Ok
    })
}

/// Writes the finding of a hand-written case as a finding directory, with the versions of the
/// workers that ran (JAX's and the Helion build's) and the script it came from.
fn file_finding(
    dir: &std::path::Path,
    script: &std::path::Path,
    case: &lang::ir::Case,
    report: &CaseReport,
    options: &CodegenOptions,
    selected: &Selected,
) -> Result<(), CliError> {
    if dir.exists() {
        return Err(CliError::Input(anyhow::anyhow!(
            "{} exists: a finding is filed into a new directory",
            dir.display()
        )));
    }
    let versions =
        finding::finding::Versions::from(selected.pools.jax.as_ref().map(|p| p.availability()))
            .with_helion(selected.pools.helion.as_ref().map(|p| p.availability()));
    let provenance = finding::finding::FindingProvenance {
        seed: None,
        generator: None,
        source: Some(format!("pallas-diff check {}", script.display())),
    };
    let filed = finding::finding::Finding::new(case, report, options, versions, provenance);
    finding::finding::write_finding_dir(dir, &filed)
        .map_err(|e| CliError::Internal(anyhow::anyhow!("cannot file the finding: {e}")))
}
