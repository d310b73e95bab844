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
//!
//! It also counts **value checks per CPU second**: a value check is one input set's outputs of
//! a kernel compared with the reference's (the plain loop: one compile and one run per case,
//! each run one value check). The engine is run twice more under the command line's XLA
//! option: with the case's own inputs only, and with the extra input sets
//! ([`fuzz::input_sets`], `--helion-input-sets`, default
//! [`fuzz::input_sets::DEFAULT_EXTRA_SETS`]) that the kernel it compiled once also runs on.
//! CPU seconds are the worker's (all its threads, from `/proc`) plus this process's (the
//! reference judging the sets, the wire), and the plain loop's own `time.process_time()`.

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
cpu = time.process_time()
for path in sys.argv[1:]:
    try:
        runpy.run_path(path, run_name="__main__")
        ok += 1
    except Exception:
        failed += 1
print(json.dumps({"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
                  "ok": ok, "failed": failed}))
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
        .map(|compile| time_engine(&python, compile, &cases, 0))
        .collect::<Result<Vec<_>, _>>()?;
    // Value checks: the engine with the extra input sets, under the command line's option.
    let extra = fuzz::input_sets::extra_sets();
    let multi = time_engine(&python, super::check::xla_compile(), &cases, extra)?;
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
    let plain_cpu = plain["cpu_seconds"].as_f64().unwrap_or(f64::NAN);
    let plain_checks = plain["ok"].as_f64().unwrap_or(0.0);
    let plain_check_rate = plain_checks / plain_cpu.max(1e-9);
    let count = cases.len() as f64;
    let plain_rate = count / plain_seconds.max(1e-9);
    let rate = |r: &EngineRun| count / r.seconds.max(1e-9);
    let check_rate = |r: &EngineRun| r.value_checks as f64 / r.cpu_seconds.max(1e-9);
    let own_only = runs
        .iter()
        .find(|r| r.compile == multi.compile)
        .expect("every XLA option was timed");
    if json {
        let engine = |r: &EngineRun| {
            serde_json::json!({
                "xla_compile": r.compile.name(), "extra_sets": r.extra_sets,
                "seconds": r.seconds, "cpu_seconds": r.cpu_seconds,
                "cases_per_second": rate(r), "ran": r.ran, "refused": r.refused,
                "raised": r.raised, "engine_over_plain": rate(r) / plain_rate,
                "value_checks": r.value_checks, "sets_dropped": r.sets_dropped,
                "value_checks_per_cpu_second": check_rate(r),
                "value_checks_over_plain": check_rate(r) / plain_check_rate,
            })
        };
        println!(
            "{}",
            serde_json::json!({
                "cases": cases.len(), "seed": seed,
                "engines": runs.iter().map(engine).collect::<Vec<_>>(),
                "multi_input": engine(&multi),
                "plain_loop": {"seconds": plain_seconds, "cpu_seconds": plain_cpu,
                               "cases_per_second": plain_rate,
                               "value_checks": plain_checks,
                               "value_checks_per_cpu_second": plain_check_rate,
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
        println!(
            "value checks (one input set's outputs against the reference) per CPU second, {} XLA:",
            multi.compile.name()
        );
        for (label, r) in [
            (format!("engine, {extra} extra sets"), &multi),
            ("engine, own inputs only".to_string(), own_only),
        ] {
            println!(
                "  {label:<26} {:>6} checks  {:>7.1} CPU s  {:>6.2} checks/CPU s  {:.2}x the plain loop  ({} sets dropped by the reference)",
                r.value_checks,
                r.cpu_seconds,
                check_rate(r),
                check_rate(r) / plain_check_rate,
                r.sets_dropped
            );
        }
        println!(
            "  {:<26} {:>6} checks  {plain_cpu:>7.1} CPU s  {plain_check_rate:>6.2} checks/CPU s",
            "plain loop (compile+run)", plain_checks
        );
    }
    Ok(Exit::Ok)
}

/// One timed pass of the engine over the cases.
struct EngineRun {
    compile: XlaCompile,
    extra_sets: usize,
    seconds: f64,
    /// The worker's CPU seconds and this process's.
    cpu_seconds: f64,
    ran: u64,
    refused: u64,
    raised: u64,
    /// Input sets whose outputs were compared with the reference's (own inputs included).
    value_checks: u64,
    /// Extra sets the reference dropped (invalid, overflow, divergence).
    sets_dropped: u64,
}

/// Times `helion-pallas` over `cases` in one fresh worker whose XLA compiles as `compile` (the
/// worker is started, and its imports done, before the clock starts), running `extra_sets`
/// extra input sets per case.
fn time_engine(
    python: &std::path::Path,
    compile: XlaCompile,
    cases: &[Case],
    extra_sets: usize,
) -> Result<EngineRun, CliError> {
    let pool = Pool::new(
        PoolConfig::for_runtime(Runtime::Helion, python)
            .with_workers(1)
            .with_xla_compile(compile),
    )
    .map_err(|e| CliError::Internal(anyhow::anyhow!("the Helion worker does not start: {e}")))?;
    let engine = Helion::with_extra_sets(Mode::HelionPallas, Arc::new(pool), extra_sets);
    let mut run = EngineRun {
        compile,
        extra_sets,
        seconds: 0.0,
        cpu_seconds: 0.0,
        ran: 0,
        refused: 0,
        raised: 0,
        value_checks: 0,
        sets_dropped: 0,
    };
    let cpu_start = cpu::children_and_self();
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
        let r = engine.run(&job);
        if let Some(sets) = &r.input_sets {
            run.value_checks += sets.compared as u64;
            run.sets_dropped +=
                (sets.dropped_invalid + sets.dropped_overflow + sets.dropped_diverges) as u64;
        }
        match r.status {
            EngineStatus::Outputs(_) => {
                run.ran += 1;
                run.value_checks += 1;
            }
            EngineStatus::Lowered => run.ran += 1,
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
    run.cpu_seconds = cpu::children_and_self() - cpu_start;
    Ok(run)
}

/// CPU time from `/proc` (Linux): this process's and its live children's (the worker's).
mod cpu {
    /// CPU seconds (user + system, all threads) of this process and of each live process
    /// whose parent it is.
    pub fn children_and_self() -> f64 {
        let me = std::process::id();
        let mut ticks = own(&format!("/proc/{me}/stat")).map_or(0, |(_, t)| t);
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let name = entry.file_name();
                let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
                    continue;
                };
                if pid == me {
                    continue;
                }
                if let Some((parent, t)) = own(&format!("/proc/{pid}/stat"))
                    && parent == me
                {
                    ticks += t;
                }
            }
        }
        // USER_HZ is 100 on every Linux ABI Rust supports.
        ticks as f64 / 100.0
    }

    /// The parent pid and utime + stime (clock ticks) in a `/proc/PID/stat` file.
    fn own(path: &str) -> Option<(u32, u64)> {
        let text = std::fs::read_to_string(path).ok()?;
        // Fields after the command name, which is in parentheses and may hold spaces.
        let rest = &text[text.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        // rest starts at field 3 (state): ppid is field 4, utime 14, stime 15.
        let parent = f.get(1)?.parse().ok()?;
        let utime: u64 = f.get(11)?.parse().ok()?;
        let stime: u64 = f.get(12)?.parse().ok()?;
        Some((parent, utime + stime))
    }
}
