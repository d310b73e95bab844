//! `pallas-diff bench --helion N`: the `helion-pallas` engine beside a plain Python loop calling
//! the same kernels through Helion, on the same N generated cases, in one run.
//!
//! Both sides run one process on one core after their imports (torch, Helion and JAX, ~6 s, not
//! timed): the engine through its persistent worker (a fresh module per case, Helion's caches
//! reset between cases, Helion's generated module returned with every lowered case), the loop
//! as `runpy.run_path` over the case scripts with their inputs spelled out, the way a user runs
//! a case script by hand. The engine must not be slower than Helion itself; the ratio says by
//! how much it is.

use super::{CliError, Exit};
use fuzz::campaign::case_seed;
use fuzz::engines::{Engine, EngineStatus, Job, helion::Helion};
use fuzz::generators::{GenConfig, generate_from_seed};
use lang::ir::Case;
use lang::render::{render_case, spell_out_inputs};
use std::sync::Arc;
use std::time::Instant;
use tpu_runner::{Mode, Pool, PoolConfig, Runtime};

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

    // The engine: one worker, started (and its imports done) before the clock starts.
    let pool = Pool::new(PoolConfig::for_runtime(Runtime::Helion, &python).with_workers(1))
        .map_err(|e| {
            CliError::Internal(anyhow::anyhow!("the Helion worker does not start: {e}"))
        })?;
    let engine = Helion::new(Mode::HelionPallas, Arc::new(pool));
    let (mut ran, mut refused, mut raised) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    for case in &cases {
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
            EngineStatus::Outputs(_) | EngineStatus::Lowered => ran += 1,
            EngineStatus::Refused { .. } => refused += 1,
            EngineStatus::KernelError { .. }
            | EngineStatus::Timeout(_)
            | EngineStatus::Crash(_)
            | EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Invalid { .. } => raised += 1,
        }
    }
    let engine_seconds = start.elapsed().as_secs_f64();

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
    let engine_rate = count / engine_seconds.max(1e-9);
    let plain_rate = count / plain_seconds.max(1e-9);
    if json {
        println!(
            "{}",
            serde_json::json!({
                "cases": cases.len(), "seed": seed,
                "engine": {"seconds": engine_seconds, "cases_per_second": engine_rate,
                           "ran": ran, "refused": refused, "raised": raised},
                "plain_loop": {"seconds": plain_seconds, "cases_per_second": plain_rate,
                               "ok": plain["ok"], "failed": plain["failed"]},
                "engine_over_plain": engine_rate / plain_rate,
            })
        );
    } else {
        println!(
            "helion-pallas on {} generated cases (seed {seed}), one process each, imports not timed",
            cases.len()
        );
        println!(
            "  engine      {engine_seconds:>7.1} s  {engine_rate:>6.2} cases/s  (ran {ran}, refused {refused}, raised {raised})"
        );
        println!(
            "  plain loop  {plain_seconds:>7.1} s  {plain_rate:>6.2} cases/s  (ran {}, raised {})",
            plain["ok"], plain["failed"]
        );
        println!(
            "  engine / plain loop: {:.2}x cases/s",
            engine_rate / plain_rate
        );
    }
    Ok(Exit::Ok)
}
