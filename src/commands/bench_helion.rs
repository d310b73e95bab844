//! `pallas-diff bench --helion N`: the `helion-pallas` engine beside a plain Python loop calling
//! the same kernels through Helion, on the same N generated cases, in one run.
//!
//! Both sides run one process on one core after their imports (torch, Helion and JAX, ~6 s, not
//! timed): the engine through its persistent worker (a fresh module per case, Helion's caches
//! reset between cases, Helion's generated module returned with every lowered case), the loop
//! as `runpy.run_path` over the case scripts with their inputs spelled out, the way a user runs
//! a case script by hand. The engine must not be slower than Helion itself; the ratio says by
//! how much it is. The engine is timed under each XLA compile option (`--xla-compile`), one
//! after the other on the same cases; the plain loop runs with XLA's defaults.

use super::{CliError, Exit};
use fuzz::campaign::case_seed;
use fuzz::engines::{Engine, EngineStatus, Job, helion::Helion};
use fuzz::generators::{GenConfig, generate_from_seed};
use lang::ir::Case;
use lang::render::{render_case, spell_out_inputs};
use std::sync::Arc;
use std::time::Instant;
use tpu_runner::{Mode, Pool, PoolConfig, Runtime, XlaCompile};

/// The plain loop: imports once, then runs each case script as `__main__`.
const PLAIN_LOOP: &str = r#"
import json, os, runpy, sys, time
os.environ["HELION_BACKEND"] = "pallas"
os.environ["HELION_PALLAS_INTERPRET"] = "1"
import torch, helion, helion.language  # noqa: F401  (the imports are not timed)
ok = failed = 0
start = time.perf_counter()
for path in sys.argv[1:]:
    try:
        runpy.run_path(path, run_name="__main__")
        ok += 1
    except Exception:
        failed += 1
print(json.dumps({"seconds": time.perf_counter() - start, "ok": ok, "failed": failed}))
"#;

/// Runs the comparison on `n` cases of campaign seed `seed`.
pub fn run(n: u64, seed: u64, json: bool) -> Result<Exit, CliError> {
    let python = tpu_runner::helion_python_if_present()
        .map_err(|why| CliError::Input(anyhow::anyhow!("cannot bench Helion: {why}")))?;
    let cfg = GenConfig::default().normalized();
    let cases: Vec<Case> = (0..n)
        .map(|i| generate_from_seed(case_seed(seed, i), &cfg))
        .filter_map(|c| spell_out_inputs(&c).ok())
        .collect();
    let dir = tempfile::tempdir().map_err(anyhow::Error::from)?;
    let mut paths = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let path = dir.path().join(format!("case_{i:05}.py"));
        std::fs::write(&path, render_case(c)).map_err(anyhow::Error::from)?;
        paths.push(path);
    }

    // The engine under each XLA compile option, one fresh worker each, side by side.
    let runs = XlaCompile::ALL
        .into_iter()
        .map(|compile| time_engine(&python, compile, &cases))
        .collect::<Result<Vec<_>, _>>()?;
    // The plain loop, in one process of the same interpreter.
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(PLAIN_LOOP)
        .args(&paths)
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| CliError::Internal(anyhow::anyhow!("cannot run {}: {e}", python.display())))?;
    let plain: serde_json::Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            CliError::Internal(anyhow::anyhow!("the plain Helion loop printed no result"))
        })?;
    let plain_seconds = plain["seconds"].as_f64().unwrap_or(f64::NAN);
    let count = cases.len() as f64;
    let plain_rate = count / plain_seconds.max(1e-9);
    let rate = |r: &EngineRun| count / r.seconds.max(1e-9);
    if json {
        let engines: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "xla_compile": r.compile.name(), "seconds": r.seconds,
                    "cases_per_second": rate(r), "ran": r.ran, "refused": r.refused,
                    "raised": r.raised, "engine_over_plain": rate(r) / plain_rate,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "cases": cases.len(), "seed": seed,
                "engines": engines,
                "plain_loop": {"seconds": plain_seconds, "cases_per_second": plain_rate,
                               "ok": plain["ok"], "failed": plain["failed"]},
            })
        );
    } else {
        println!(
            "helion-pallas on {} generated cases (seed {seed}), one process each, imports not timed",
            cases.len()
        );
        for r in &runs {
            println!(
                "  engine, {:<7} XLA {:>7.1} s  {:>6.2} cases/s  {:.2}x the plain loop  (ran {}, refused {}, raised {})",
                r.compile.name(),
                r.seconds,
                rate(r),
                rate(r) / plain_rate,
                r.ran,
                r.refused,
                r.raised
            );
        }
        println!(
            "  plain loop          {plain_seconds:>7.1} s  {plain_rate:>6.2} cases/s  (ran {}, raised {})",
            plain["ok"], plain["failed"]
        );
    }
    Ok(Exit::Ok)
}

/// One timed pass of the engine over the cases.
struct EngineRun {
    compile: XlaCompile,
    seconds: f64,
    ran: u64,
    refused: u64,
    raised: u64,
}

/// Times `helion-pallas` over `cases` in one fresh worker whose XLA compiles as `compile` (the
/// worker is started, and its imports done, before the clock starts).
fn time_engine(
    python: &std::path::Path,
    compile: XlaCompile,
    cases: &[Case],
) -> Result<EngineRun, CliError> {
    let pool = Pool::new(
        PoolConfig::for_runtime(Runtime::Helion, python)
            .with_workers(1)
            .with_xla_compile(compile),
    )
    .map_err(|e| CliError::Internal(anyhow::anyhow!("the Helion worker does not start: {e}")))?;
    let engine = Helion::new(Mode::HelionPallas, Arc::new(pool));
    let mut run = EngineRun {
        compile,
        seconds: 0.0,
        ran: 0,
        refused: 0,
        raised: 0,
    };
    let start = Instant::now();
    for case in cases {
        let all = case.input_tensors().unwrap_or_default();
        let inputs: Vec<_> = case
            .kernel_arg_positions()
            .into_iter()
            .filter_map(|p| all.get(p).cloned())
            .collect();
        let job = Job {
            case,
            inputs: &inputs,
            emitted: None,
            module: None,
        };
        match engine.run(&job).status {
            EngineStatus::Outputs(_) | EngineStatus::Lowered => run.ran += 1,
            EngineStatus::Refused { .. } => run.refused += 1,
            EngineStatus::KernelError { .. }
            | EngineStatus::Timeout(_)
            | EngineStatus::Crash(_)
            | EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Invalid { .. } => run.raised += 1,
        }
    }
    run.seconds = start.elapsed().as_secs_f64();
    Ok(run)
}
