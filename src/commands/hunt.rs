//! `pallas-diff hunt`: is the harness able to find the historical defects? For each injected
//! fault and K seeds, a campaign from an empty corpus until the first finding the fault causes.
//!
//! Exit 0 when every fault was detected in every repetition, 4 ([`Exit::Undetected`]) when one
//! was not (a generator gap: not a finding, which is what 3 means elsewhere). Reproducers go to
//! `--out`, by default `target/pallas-diff-hunt` (a build directory, ignored by git), each with
//! the `--inject` line that shows it; `--junit` writes one JUnit test case per fault.

use super::check::start_pool;
use super::fuzz::parse_duration;
use super::{CliError, Exit};
use anyhow::Context;
use compiler::faults::{Fault, FaultSet};
use corpus::hunt::{HuntConfig, hunt, table};
use fuzz::campaign::assembly;
use fuzz::engines::{self, EngineId};
use fuzz::generators::{GenConfig, GenConfigOverrides};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `hunt`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Faults to hunt: `all` or names (see `compiler/src/faults.rs`).
    #[arg(long, value_parser = FaultSet::parse, default_value = "all")]
    inject: FaultSet,
    /// Campaign budget per fault and seed.
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    budget: Duration,
    /// Case budget per fault and seed (deterministic: detection within the first N cases).
    #[arg(long)]
    cases: Option<u64>,
    /// Engines (in-process ones check every case; JAX ones confirm).
    #[arg(long, value_delimiter = ',', default_value = "oracle,pallas-sim")]
    engines: Vec<EngineId>,
    /// Seeds per fault.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Print a JSON list instead of a table.
    #[arg(long)]
    json: bool,
    /// Where the reduced reproducers and `hunt.json` go (default: `target/pallas-diff-hunt` of
    /// `$CARGO_TARGET_DIR`, else of this workspace when built from it, else of the current
    /// directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Reduction budget per detection.
    #[arg(long, value_parser = parse_duration, default_value = "20s")]
    reduce_time: Duration,
    /// In-process threads (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Pad resident inputs with poison and mask with `jnp.where`.
    #[arg(long)]
    poison_padding: bool,
    /// Also write the results as JUnit XML to this file (one test case per fault: passed when
    /// every repetition detected it).
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Generator knobs.
    #[command(flatten)]
    generator: GenConfigOverrides,
}

/// The default output directory: under a cargo target directory, which git ignores (a hunt's
/// reproducers are build products, not sources).
fn default_out() -> PathBuf {
    const NAME: &str = "pallas-diff-hunt";
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(t).join(NAME);
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    if workspace.is_dir() {
        workspace.join(NAME)
    } else {
        Path::new("target").join(NAME)
    }
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let out = args.out.clone().unwrap_or_else(default_out);
    let faults: Vec<Fault> = args.inject.iter().collect();
    if faults.is_empty() {
        return Err(CliError::Input(anyhow::anyhow!("--inject names no fault")));
    }
    let roles = assembly::Roles::of(&args.engines);
    let (every_case, confirm) = (roles.every_case.clone(), roles.confirm.clone());
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let jax_workers = roles.confirm_threads(cores);
    let pool = start_pool(&confirm, jax_workers.max(1), assembly::WORKER_TIMEOUT_S)?;
    engines::build(&args.engines, pool.clone()).map_err(|e| CliError::Input(e.into()))?;
    let cfg = HuntConfig {
        faults,
        repeat: args.repeat.max(1),
        budget: if args.cases.is_some() {
            Duration::from_secs(3600)
        } else {
            args.budget
        },
        cases: args.cases,
        reduce: reducer::Budget {
            attempts: 2_000,
            time: args.reduce_time,
        },
        engines: Box::new(move || {
            let a = engines::build(&every_case, None).expect("in-process engines build");
            let b = engines::build(&confirm, pool.clone()).expect("JAX engines build");
            (a, b)
        }),
        jobs: args.jobs.unwrap_or(cores),
        jax_threads: jax_workers,
        generator: args.generator.apply(GenConfig::default()),
        out: out.clone(),
        poison_padding: args.poison_padding,
    };
    let start = std::time::Instant::now();
    let rows = hunt(&cfg, &|line| eprintln!("{line}"))
        .map_err(|e| CliError::Internal(anyhow::anyhow!("hunt I/O failed: {e}")))?;
    if let Some(path) = &args.junit {
        let report = corpus::junit::hunt_report(&rows, start.elapsed());
        corpus::junit::write(&report, path).context("cannot write the JUnit report")?;
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(anyhow::Error::from)?
        );
    } else {
        print!("{}", table(&rows));
        for r in &rows {
            if let Some(cmd) = &r.reproduce {
                println!("{}: {cmd}", r.fault);
            }
        }
        if let Some((median, p90, n)) = corpus::hunt::reduction_times(&rows) {
            println!(
                "reduction: median {median:.2} s, p90 {p90:.2} s over {n} reproducer(s) (budget {:?} each)",
                args.reduce_time
            );
        }
        println!(
            "reproducers and hunt.json in {} (each script names the fault it needs)",
            out.display()
        );
    }
    let missed: Vec<String> = rows
        .iter()
        .filter(|r| r.detected < r.repeats)
        .map(|r| format!("{} ({}/{})", r.fault, r.detected, r.repeats))
        .collect();
    if missed.is_empty() {
        Ok(Exit::Ok)
    } else {
        eprintln!("not detected in every repetition: {}", missed.join(", "));
        Ok(Exit::Undetected)
    }
}
